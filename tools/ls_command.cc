// nvrtc-cache ls [--sort FIELD] [--reverse] [--json]: one line per compile result the cache holds.
#include <algorithm>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/config.h"
#include "tools/commands.h"
#include "tools/entries.h"
#include "tools/open_cache.h"

namespace nvrtc_cache::tools {
namespace {

constexpr int kLsSchemaVersion = 1;

std::string options_of(const EntryInfo& e) {
  if (!e.entry || !e.entry->description) return "";
  std::string joined;
  for (const auto& o : e.entry->description->options) joined += (joined.empty() ? "" : " ") + o;
  return joined;
}

std::string name_of(const EntryInfo& e) {
  if (!e.entry) return "(damaged)";
  if (!e.entry->description) return "(unrecorded)";
  return e.entry->description->program_name.empty() ? "(unnamed)" : e.entry->description->program_name;
}

std::uint64_t output_bytes(const EntryInfo& e) { return e.entry ? e.entry->payload_bytes() : 0; }
std::uint64_t compile_nanos(const EntryInfo& e) { return e.entry ? e.entry->compile_nanos : 0; }
std::int64_t last_use(const EntryInfo& e) { return e.access ? e.access->last_access : 0; }
std::size_t dependency_count(const EntryInfo& e) {
  return e.dependencies ? e.dependencies->paths.size() + e.dependencies->env.size() : 0;
}

nlohmann::ordered_json to_json(const EntryInfo& e) {
  nlohmann::ordered_json j;
  j["key"] = e.key_hex;
  j["program_name"] = name_of(e);
  j["options"] = e.entry && e.entry->description ? e.entry->description->options : std::vector<std::string>{};
  j["architecture"] = e.entry && e.entry->description ? architecture_of(e.entry->description->options) : "";
  j["compile_rc"] = e.entry ? e.entry->compile_rc : -1;
  j["sizes"] = {{"log", e.entry ? e.entry->log.bytes.size() : 0},
                {"ptx", e.entry ? e.entry->ptx.bytes.size() : 0},
                {"cubin", e.entry ? e.entry->cubin.bytes.size() : 0},
                {"ltoir", e.entry ? e.entry->ltoir.bytes.size() : 0},
                {"optixir", e.entry ? e.entry->optixir.bytes.size() : 0},
                {"tileir", e.entry ? e.entry->tileir.bytes.size() : 0},
                {"nvvm", e.entry ? e.entry->nvvm.bytes.size() : 0},
                {"stored", e.stored_bytes}};
  j["compile_seconds"] = static_cast<double>(compile_nanos(e)) / 1e9;
  j["created"] = e.access ? e.access->created : 0;
  j["last_use"] = last_use(e);
  j["dependencies"] = dependency_count(e);
  return j;
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
  if (arguments.sort == "name") by(name_of, true);
  else if (arguments.sort == "size") by(output_bytes, false);
  else if (arguments.sort == "time") by(compile_nanos, false);
  else if (arguments.sort == "deps") by(dependency_count, false);
  else by(last_use, false);
  if (arguments.reverse) std::reverse(entries.begin(), entries.end());
  if (arguments.json) {
    nlohmann::ordered_json j;
    j["schema_version"] = kLsSchemaVersion;
    j["directory"] = opened.directory;
    j["entries"] = nlohmann::ordered_json::array();
    for (const EntryInfo& e : entries) j["entries"].push_back(to_json(e));
    fmt::print("{}\n", j.dump(2));
  } else {
    fmt::print("{:<16}  {:<24} {:<8} {:>10} {:>10} {:>16} {:>5}  {}\n", "key", "program", "arch", "output",
               "compile", "last use", "deps", "options");
    for (const EntryInfo& e : entries) {
      const std::string arch = e.entry && e.entry->description ? architecture_of(e.entry->description->options) : "";
      fmt::print("{:<16}  {:<24} {:<8} {:>10} {:>10} {:>16} {:>5}  {}\n", e.key_hex.substr(0, 16), name_of(e),
                 arch.empty() ? "-" : arch, human_bytes(output_bytes(e)), human_duration(compile_nanos(e)),
                 human_time(last_use(e)), dependency_count(e), options_of(e));
    }
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
      "List the compile results the cache holds: key, program name, architecture, output size, compile time, "
      "last use, dependency count and options.");
  auto arguments = std::make_shared<LsArguments>();
  command->add_option("--sort", arguments->sort, "used (default), name, size, time (compile time) or deps")
      ->check(CLI::IsMember({"used", "name", "size", "time", "deps"}));
  command->add_flag("-r,--reverse", arguments->reverse, "reverse the order");
  command->add_flag("--json", arguments->json, "machine-readable output (schema_version 1)");
  command->callback([&outcome, arguments] { outcome.exit_code = ls(*arguments); });
}

}  // namespace nvrtc_cache::tools
