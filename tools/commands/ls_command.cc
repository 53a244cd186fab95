// nvrtc-cache ls [--sort FIELD] [--reverse] [--json]: one line per result the cache holds (NVRTC
// compiles, nvJitLink links, libNVVM compiles),
// fitted to the terminal's width ($COLUMNS, else the terminal's, else 80), with each compile's status
// (a cached failure is listed as the failure it was) and a label better than "default_program".
#include <algorithm>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/config.h"
#include "platform/terminal.h"
#include "tools/commands.h"
#include "tools/cache/entries.h"
#include "tools/cache/open_cache.h"

namespace nvrtc_cache::tools {
namespace {

constexpr int kLsSchemaVersion = 1;

std::string options_of(const EntryInfo& e) {
  std::string joined;
  for (const auto& o : e.options()) joined += (joined.empty() ? "" : " ") + o;
  return joined;
}

std::string name_of(const EntryInfo& e) {
  if (e.damaged()) return "(damaged)";
  if (e.handle) return program_label(e);
  if (!e.entry->description) return "(unrecorded)";
  return e.entry->description->program_name.empty() ? "(unnamed)" : e.entry->description->program_name;
}

std::uint64_t output_bytes(const EntryInfo& e) { return e.output_bytes(); }
std::uint64_t compile_nanos(const EntryInfo& e) { return e.nanos(); }
std::int64_t last_use(const EntryInfo& e) { return e.access ? e.access->last_access : 0; }
std::size_t dependency_count(const EntryInfo& e) {
  return e.dependencies ? e.dependencies->paths.size() + e.dependencies->env.size() : 0;
}

nlohmann::ordered_json to_json(const EntryInfo& e) {
  nlohmann::ordered_json j;
  j["key"] = e.key_hex;
  j["kind"] = e.kind();
  j["program_name"] = name_of(e);
  j["label"] = program_label(e);
  j["status"] = compile_status(e);
  j["options"] = e.options();
  j["architecture"] = architecture_of(e.options());
  j["library"] = library_json(e);
  j["compile_rc"] = e.entry ? e.entry->compile_rc : e.handle ? e.handle->rc : -1;
  if (e.prefix == 'L') {  // a link's or an NVVM compile's outputs, by the library's names
    j["sizes"] = nlohmann::ordered_json::object();
    if (e.handle) {
      const auto specs = core::outputs_of(e.handle->library);
      for (std::size_t i = 0; i < specs.size(); ++i) j["sizes"][specs[i].name] = e.handle->outputs[i].bytes.size();
    }
    j["sizes"]["stored"] = e.stored_bytes;
  } else {
    j["sizes"] = {{"log", e.entry ? e.entry->log.bytes.size() : 0},
                  {"ptx", e.entry ? e.entry->ptx.bytes.size() : 0},
                  {"cubin", e.entry ? e.entry->cubin.bytes.size() : 0},
                  {"ltoir", e.entry ? e.entry->ltoir.bytes.size() : 0},
                  {"optixir", e.entry ? e.entry->optixir.bytes.size() : 0},
                  {"tileir", e.entry ? e.entry->tileir.bytes.size() : 0},
                  {"nvvm", e.entry ? e.entry->nvvm.bytes.size() : 0},
                  {"stored", e.stored_bytes}};
  }
  j["compile_seconds"] = static_cast<double>(compile_nanos(e)) / 1e9;
  j["created"] = e.access ? e.access->created : 0;
  j["last_use"] = last_use(e);
  j["dependencies"] = dependency_count(e);
  return j;
}

// The width to fit: $COLUMNS, else the terminal's (stdout), else 80.
std::size_t terminal_columns() {
  if (const char* columns = std::getenv("COLUMNS"); columns && *columns) {
    char* end = nullptr;
    const long n = std::strtol(columns, &end, 10);
    if (*end == '\0' && n >= 20 && n <= 10000) return static_cast<std::size_t>(n);
  }
  if (const std::size_t columns = platform::terminal_columns(stdout); columns >= 20) return columns;
  return 80;
}

// `text` cut to `width` characters, "..." marking the cut.
std::string cut(const std::string& text, std::size_t width) {
  if (text.size() <= width) return text;
  if (width <= 3) return text.substr(0, width);
  return text.substr(0, width - 3) + "...";
}

struct Column {
  const char* title;
  std::size_t width;  // 0: elastic (program, options)
  bool right;         // aligned right
  std::function<std::string(const EntryInfo&)> cell;
};

// One line per entry, fitted to `columns`: the key, the program and the status always; the other
// columns, least useful first, are left out until the line fits with the program's name (up to 24
// characters of it); the program's name and the options share what is left (the options only when at
// least 12 columns remain).
void print_table(const std::vector<EntryInfo>& entries, std::size_t columns) {
  const Column key{"key", 16, false, [](const EntryInfo& e) { return e.key_hex.substr(0, 16); }};
  const Column program{"program", 0, false, program_label};
  const Column status{"status", 13, false, compile_status};
  std::vector<Column> optional = {
      {"version", 7, false, [](const EntryInfo& e) { return core::version_text(e.library()); }},
      // The outputs as the library returns them, then what the entry takes in the store (compressed,
      // with its metadata): the second is what `stats` and the cap count.
      {"output", 9, true, [](const EntryInfo& e) { return human_bytes(output_bytes(e)); }},
      {"stored", 9, true, [](const EntryInfo& e) { return human_bytes(e.stored_bytes); }},
      {"arch", 11, false,
       [](const EntryInfo& e) {
         const std::string arch = architecture_of(e.options());
         return arch.empty() ? std::string("-") : arch;
       }},
      {"compile", 9, true, [](const EntryInfo& e) { return human_duration(compile_nanos(e)); }},
      {"last use", 16, false, [](const EntryInfo& e) { return human_time(last_use(e)); }},
      {"deps", 4, true, [](const EntryInfo& e) { return std::to_string(dependency_count(e)); }},
  };
  constexpr std::size_t kMinProgram = 12, kMinOptions = 12, kMaxProgram = 40, kWantedProgram = 24;
  std::size_t widest_program = std::string_view(program.title).size();
  for (const EntryInfo& e : entries) widest_program = std::max(widest_program, program_label(e).size());
  auto fixed_width = [&] {
    std::size_t w = key.width + 2 + status.width;  // "key  program status ..."
    for (const Column& c : optional) w += 1 + c.width;
    return w + 1;  // the space after the program
  };
  // The program's name matters more than the last optional columns: up to kWantedProgram of it.
  while (!optional.empty() && fixed_width() + std::min(widest_program, kWantedProgram) > columns) optional.pop_back();
  std::size_t room = columns > fixed_width() ? columns - fixed_width() : kMinProgram;
  const std::size_t program_width = std::max(kMinProgram, std::min({widest_program, kMaxProgram, room}));
  room = room > program_width ? room - program_width : 0;
  const bool show_options = room >= kMinOptions + 1;
  std::string header = fmt::format("{:<16}  {:<{}} {:<13}", key.title, program.title, program_width, status.title);
  for (const Column& c : optional) {
    header += c.right ? fmt::format(" {:>{}}", c.title, c.width) : fmt::format(" {:<{}}", c.title, c.width);
  }
  if (show_options) header += " options";
  while (!header.empty() && header.back() == ' ') header.pop_back();
  fmt::print("{}\n", header);
  for (const EntryInfo& e : entries) {
    std::string out = fmt::format("{:<16}  {:<{}} {:<13}", key.cell(e), cut(program.cell(e), program_width),
                                  program_width, status.cell(e));
    for (const Column& c : optional) {
      out += c.right ? fmt::format(" {:>{}}", cut(c.cell(e), c.width), c.width)
                     : fmt::format(" {:<{}}", cut(c.cell(e), c.width), c.width);
    }
    if (show_options) out += " " + cut(options_of(e), room - 1);
    while (!out.empty() && out.back() == ' ') out.pop_back();
    fmt::print("{}\n", out);
  }
}

struct LsArguments {
  std::string sort = "used";
  bool reverse = false;
  bool json = false;
};

int ls(const LsArguments& arguments) {
  const core::Config config = load_settings();
  store::OpenedCache opened = open_cache_reporting(config);
  if (!opened.store) return 1;
  store::Status walked;
  std::vector<EntryInfo> entries = read_entries(*opened.store, &walked);
  // Largest, slowest, most recent, most dependencies first; names alphabetically.
  auto by = [&](auto field, bool ascending) {
    std::stable_sort(entries.begin(), entries.end(), [&](const EntryInfo& a, const EntryInfo& b) {
      return ascending ? field(a) < field(b) : field(a) > field(b);
    });
  };
  if (arguments.sort == "name")
    by(name_of, true);
  else if (arguments.sort == "size")
    by(output_bytes, false);
  else if (arguments.sort == "time")
    by(compile_nanos, false);
  else if (arguments.sort == "deps")
    by(dependency_count, false);
  else
    by(last_use, false);
  if (arguments.reverse) std::reverse(entries.begin(), entries.end());
  if (arguments.json) {
    nlohmann::ordered_json j;
    j["schema_version"] = kLsSchemaVersion;
    j["directory"] = opened.directory;
    j["entries"] = nlohmann::ordered_json::array();
    for (const EntryInfo& e : entries) j["entries"].push_back(to_json(e));
    fmt::print("{}\n", j.dump(2));
  } else {
    print_table(entries, terminal_columns());
  }
  if (!walked) {
    fmt::print(stderr, "nvrtc-cache: the store could not be read to the end: {}\n", walked.message());
    return 1;
  }
  return 0;
}

}  // namespace

void add_ls_command(CLI::App& app, Outcome& outcome) {
  CLI::App* command = app.add_subcommand(
      "ls",
      "List the results the cache holds (compiles, nvJitLink links as 'link: INPUTS', libNVVM compiles as "
      "'nvvm: MODULES'): key, program, status (ok, compile error, bad option), the version of the library "
      "that made it, output size, architecture, compile time, last use, dependency count and options, as many as fit "
      "the width "
      "($COLUMNS, else the terminal's, else 80). A program named default_program is shown by its first name "
      "expression or kernel.");
  auto arguments = std::make_shared<LsArguments>();
  command->add_option("--sort", arguments->sort, "used (default), name, size, time (compile time) or deps")
      ->check(CLI::IsMember({"used", "name", "size", "time", "deps"}));
  command->add_flag("-r,--reverse", arguments->reverse, "reverse the order");
  command->add_flag("--json", arguments->json, "machine-readable output (schema_version 1)");
  command->callback([&outcome, arguments] { outcome.exit_code = ls(*arguments); });
}

}  // namespace nvrtc_cache::tools
