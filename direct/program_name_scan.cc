#include "direct/program_name_scan.h"

#include <array>
#include <deque>

namespace nvrtc_cache::direct {
namespace {

bool identifier_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool identifier_char(char c) { return identifier_start(c) || (c >= '0' && c <= '9'); }
bool digit(char c) { return c >= '0' && c <= '9'; }

// The text as the preprocessor tokenizes it, reduced to what the scan needs: line splices removed,
// comments and string and character literals replaced by a space, numbers by "0"; newlines kept.
std::string without_comments_and_literals(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  const auto spliced = [&](std::size_t at) {  // backslash-newline at `at`: its length, else 0
    if (at < text.size() && text[at] == '\\') {
      if (at + 1 < text.size() && text[at + 1] == '\n') return std::size_t{2};
      if (at + 2 < text.size() && text[at + 1] == '\r' && text[at + 2] == '\n') return std::size_t{3};
    }
    return std::size_t{0};
  };
  while (i < text.size()) {
    if (const std::size_t n = spliced(i)) {
      i += n;
      continue;
    }
    const char c = text[i];
    const char next = i + 1 < text.size() ? text[i + 1] : '\0';
    if (c == '/' && next == '/') {
      while (i < text.size() && text[i] != '\n') i += spliced(i) ? spliced(i) : 1;
      out.push_back(' ');
    } else if (c == '/' && next == '*') {
      const std::size_t end = text.find("*/", i + 2);
      i = end == std::string_view::npos ? text.size() : end + 2;
      out.push_back(' ');
    } else if (c == '"' && !out.empty() && out.back() == 'R') {  // a raw string R"delim( ... )delim"
      const std::size_t open = text.find('(', i + 1);
      std::string closing;  // )delim"
      if (open != std::string_view::npos) {
        closing.push_back(')');
        closing.append(text.substr(i + 1, open - i - 1));
        closing.push_back('"');
      }
      const std::size_t end = open == std::string_view::npos ? std::string_view::npos : text.find(closing, open);
      i = end == std::string_view::npos ? text.size() : end + closing.size();
      out.push_back(' ');
    } else if (c == '"' || c == '\'') {
      ++i;
      while (i < text.size() && text[i] != c && text[i] != '\n') i += text[i] == '\\' ? 2 : 1;
      if (i < text.size() && text[i] == c) ++i;
      out.push_back(' ');
    } else if (identifier_start(c)) {
      while (i < text.size() && (identifier_char(text[i]) || spliced(i))) {
        if (const std::size_t n = spliced(i)) {
          i += n;
        } else {
          out.push_back(text[i++]);
        }
      }
    } else if (digit(c) || (c == '.' && digit(next))) {  // a pp-number: 1'000, 0x1p-3, 1.5e+3f
      ++i;
      while (i < text.size()) {
        const char d = text[i];
        if ((d == '+' || d == '-') &&
            (text[i - 1] == 'e' || text[i - 1] == 'E' || text[i - 1] == 'p' || text[i - 1] == 'P')) {
          ++i;
        } else if (identifier_char(d) || d == '.' ||
                   (d == '\'' && i + 1 < text.size() && identifier_char(text[i + 1]))) {
          ++i;
        } else {
          break;
        }
      }
      out.push_back('0');
    } else {
      out.push_back(c);
      ++i;
    }
  }
  return out;
}

template <typename Each>
void for_each_identifier(std::string_view code, Each&& each) {
  std::size_t i = 0;
  while (i < code.size()) {
    if (!identifier_start(code[i])) {
      ++i;
      continue;
    }
    const std::size_t start = i;
    while (i < code.size() && identifier_char(code[i])) ++i;
    each(code.substr(start, i - start));
  }
}

std::string_view trimmed_front(std::string_view s) {
  while (!s.empty() &&
         (s.front() == ' ' || s.front() == '\t' || s.front() == '\r' || s.front() == '\f' || s.front() == '\v')) {
    s.remove_prefix(1);
  }
  return s;
}

// The directive's name ("define", "if", ...) and what follows it.
std::pair<std::string_view, std::string_view> split_directive(std::string_view after_hash) {
  after_hash = trimmed_front(after_hash);
  std::size_t end = 0;
  while (end < after_hash.size() && identifier_char(after_hash[end])) ++end;
  return {after_hash.substr(0, end), after_hash.substr(end)};
}

// What expands to the program's name in the source: the name macros, NVRTC's builtin assert (the
// one builtin macro that uses __FILE__), and what evaluates to the caller's file.
constexpr std::array<std::string_view, 5> kNameInSource = {"__FILE__", "__BASE_FILE__", "assert", "__builtin_FILE",
                                                           "__builtin_source_location"};
// What names the file of the call it is evaluated for (a default argument's: the caller's).
constexpr std::array<std::string_view, 2> kNameAtCallSite = {"__builtin_FILE", "__builtin_source_location"};
// What gives the program's name from anywhere (a header's code included).
constexpr std::array<std::string_view, 1> kBaseFile = {"__BASE_FILE__"};

}  // namespace

void ProgramNameScan::add_source(std::string_view text) { add_text(text, true); }
void ProgramNameScan::add_header(std::string_view text) { add_text(text, false); }

void ProgramNameScan::add_command_line_macro(std::string_view definition) {
  const std::size_t eq = definition.find('=');
  if (eq == std::string_view::npos) return;  // -DNAME: defined as 1
  define(std::string(definition.substr(0, eq)) + " " + without_comments_and_literals(definition.substr(eq + 1)));
}

void ProgramNameScan::define(std::string_view directive_body) {
  std::string_view name;
  std::vector<std::string>* body = nullptr;
  for_each_identifier(directive_body, [&](std::string_view id) {
    if (body == nullptr) {
      name = id;
      body = &macro_bodies_[std::string(name)];
    } else {
      body->emplace_back(id);
    }
  });
}

void ProgramNameScan::add_text(std::string_view text, bool is_source) {
  const std::string code = without_comments_and_literals(text);
  std::string_view rest = code;
  std::string header_code;  // a header's code, its directive lines left out
  while (!rest.empty()) {
    const std::size_t newline = rest.find('\n');
    const std::string_view line = rest.substr(0, newline);
    rest = newline == std::string_view::npos ? std::string_view() : rest.substr(newline + 1);
    const std::string_view start = trimmed_front(line);
    if (!start.empty() && start.front() == '#') {
      const auto [directive, body] = split_directive(start.substr(1));
      if (directive == "define") define(body);
      if (is_source) for_each_identifier(body, [&](std::string_view id) { source_identifiers_.emplace(id); });
      continue;
    }
    if (is_source) {
      for_each_identifier(line, [&](std::string_view id) { source_identifiers_.emplace(id); });
    } else {
      header_code.append(line);
      header_code.push_back('\n');
    }
  }
  if (!is_source) add_header_code(header_code);
}

// Every identifier of a header's code, and where one is the value after a lone `=`: a default argument
// of the function whose parameter list is open there (named by the identifier before its `(`), else
// another initializer (a template parameter's or a member's default, a variable's).
void ProgramNameScan::add_header_code(std::string_view code) {
  std::vector<std::string_view> open_calls;  // the identifier before each open '(' ("" for none)
  std::string_view last_identifier;
  bool after_identifier = false;
  // In a value after a lone `=`: a default argument of `default_of` (open_calls.size() == value_depth),
  // or, with no function named, another initializer. Ends at a `,` or `;` at its depth, or a `)`, `{`
  // or `}` that closes it.
  bool in_value = false;
  std::string_view default_of;
  std::size_t value_depth = 0;
  for (std::size_t i = 0; i < code.size();) {
    const char c = code[i];
    if (identifier_start(c)) {
      const std::size_t begin = i;
      while (i < code.size() && identifier_char(code[i])) ++i;
      const std::string_view id = code.substr(begin, i - begin);
      header_code_identifiers_.emplace(id);
      if (in_value) {  // "name(" where it is called
        std::size_t after = i;
        while (after < code.size() && (code[after] == ' ' || code[after] == '\t' || code[after] == '\n')) ++after;
        std::string use(id);
        if (after < code.size() && code[after] == '(') use.push_back('(');
        if (!default_of.empty()) {
          default_argument_of_[use].emplace(default_of);
        } else {
          initializer_identifiers_.emplace(std::move(use));
        }
      }
      last_identifier = id;
      after_identifier = true;
      continue;
    }
    ++i;
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
    if (c == '(') {
      open_calls.push_back(after_identifier ? last_identifier : std::string_view());
    } else if (c == ')' && !open_calls.empty()) {
      open_calls.pop_back();
      if (in_value && open_calls.size() < value_depth) in_value = false;
    }
    if (in_value && (c == '{' || c == '}' || ((c == ',' || c == ';') && open_calls.size() == value_depth))) {
      in_value = false;
    }
    const char before = i >= 2 ? code[i - 2] : ' ';
    const char next = i < code.size() ? code[i] : ' ';
    if (!in_value && c == '=' && next != '=' &&
        std::string_view("=<>!+-*/%&|^").find(before) == std::string_view::npos) {
      in_value = true;
      value_depth = open_calls.size();
      default_of = open_calls.empty() ? std::string_view() : open_calls.back();
    }
    after_identifier = false;
  }
}

bool ProgramNameScan::reveals_program_name() const {
  // Macros whose definitions mention each identifier, for a walk from the seeds to every macro that
  // reaches them.
  std::unordered_map<std::string_view, std::vector<std::string_view>> used_by;
  for (const auto& [name, body] : macro_bodies_) {
    for (const std::string& id : body) used_by[id].push_back(name);
  }
  const auto reaching = [&](auto seeds) {
    std::unordered_set<std::string_view> reached(seeds.begin(), seeds.end());
    std::deque<std::string_view> queue(seeds.begin(), seeds.end());
    while (!queue.empty()) {
      const std::string_view id = queue.front();
      queue.pop_front();
      if (const auto users = used_by.find(id); users != used_by.end()) {
        for (std::string_view macro : users->second) {
          if (reached.insert(macro).second) queue.push_back(macro);
        }
      }
    }
    return reached;
  };
  // __builtin_FILE() and __builtin_source_location() name the file where they are evaluated: as the
  // default argument of a function, where the function is called. So a function whose default
  // argument reaches them reveals the name where the source calls it; as another initializer (a
  // template parameter's or a member's default) they may be evaluated anywhere: conservatively, it does.
  // Functions whose default arguments reach them (through macros, or a call of such a function).
  std::unordered_set<std::string_view> functions;
  std::unordered_set<std::string_view> at_call_site;
  // A use ("name", or "name(" where called) that reaches them: a macro or builtin that does, or a call
  // of such a function (a variable or member of the same name is not one).
  const auto counts = [&](std::string_view use) {
    const bool called = use.ends_with('(');
    const std::string_view name = called ? use.substr(0, use.size() - 1) : use;
    return at_call_site.contains(name) && (called || !functions.contains(name));
  };
  for (bool grew = true; grew;) {
    std::vector<std::string_view> seeds(kNameAtCallSite.begin(), kNameAtCallSite.end());
    seeds.insert(seeds.end(), functions.begin(), functions.end());
    at_call_site = reaching(seeds);
    grew = false;
    for (const auto& [use, of] : default_argument_of_) {
      if (!counts(use)) continue;
      for (const std::string& function : of) grew = functions.insert(function).second || grew;
    }
  }
  for (const std::string& use : initializer_identifiers_) {
    if (counts(use)) return true;
  }
  std::vector<std::string_view> in_source_seeds(kNameInSource.begin(), kNameInSource.end());
  in_source_seeds.insert(in_source_seeds.end(), functions.begin(), functions.end());
  const auto in_source = reaching(in_source_seeds);
  for (const std::string& id : source_identifiers_) {
    if (in_source.contains(id)) return true;
  }
  const auto base_file = reaching(kBaseFile);
  for (const std::string& id : header_code_identifiers_) {
    if (base_file.contains(id)) return true;
  }
  return false;
}

}  // namespace nvrtc_cache::direct
