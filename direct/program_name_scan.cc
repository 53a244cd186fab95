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
      std::string closing;  // ")delim\"" (appended, not `")" + ...`: GCC 12 -O3 misreports -Wrestrict there)
      if (open != std::string_view::npos) closing.append(")").append(text.substr(i + 1, open - i - 1)).append("\"");
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
// What gives the program's name from anywhere (a header's code included).
constexpr std::array<std::string_view, 3> kNameAnywhere = {"__BASE_FILE__", "__builtin_FILE",
                                                           "__builtin_source_location"};

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
    auto& into = is_source ? source_identifiers_ : header_code_identifiers_;
    for_each_identifier(line, [&](std::string_view id) { into.emplace(id); });
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
  const auto in_source = reaching(kNameInSource);
  for (const std::string& id : source_identifiers_) {
    if (in_source.contains(id)) return true;
  }
  const auto anywhere = reaching(kNameAnywhere);
  for (const std::string& id : header_code_identifiers_) {
    if (anywhere.contains(id)) return true;
  }
  return false;
}

}  // namespace nvrtc_cache::direct
