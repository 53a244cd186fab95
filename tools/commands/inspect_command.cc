// nvrtc-cache inspect KEY-PREFIX|NAME [--json]: everything an entry records (an NVRTC compile's, a link's or
// an NVVM compile's), its dependency set, and
// whether a lookup would be served from it now (direct/ validation, run here).
#include <memory>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/config.h"
#include "direct/dependencies.h"
#include "tools/commands.h"
#include "tools/cache/entries.h"
#include "tools/cache/open_cache.h"

namespace nvrtc_cache::tools {
namespace {

// "would hit" or why a lookup from this directory, with this environment, would miss now.
std::string verdict(const EntryInfo& e) {
  if (e.damaged()) return "miss: the entry is damaged (it will be dropped and recompiled)";
  if (!e.dependencies) return "miss: no manifest names this result any more (it is evicted with time)";
  direct::DependencySet copy = *e.dependencies;
  const direct::Validation v = direct::validate_dependencies(copy);
  if (!v.matches) return "miss: " + v.mismatch;
  return "hit: every dependency holds (for the same program inputs and NVRTC library; relative paths checked "
         "from this directory)";
}

std::string dependency_line(const direct::PathDependency& p) {
  if (p.must_be_absent) return fmt::format("absent   {}", p.path);
  std::string kind = p.content ? "read    " : "exists  ";
  std::string line = kind + " " + p.path;
  if (p.realpath_target) line += " -> realpath " + *p.realpath_target;
  if (p.readlink_target) line += " -> link " + *p.readlink_target;
  return line;
}

void print_output(const char* label, const core::RecordedOutput& o) {
  if (o.data_rc == NVRTC_SUCCESS)
    fmt::print("  {:<8} {} bytes\n", label, o.bytes.size());
  else
    fmt::print("  {:<8} none (NVRTC returned {})\n", label, o.data_rc);
}

// A link (nvJitLink) or an NVVM compile (libNVVM): its inputs, options, return code and outputs.
void print_handle_entry(const core::HandleEntry& h) {
  const char* library = core::library_name(h.library);
  std::string inputs;
  for (const std::string& name : h.description.input_names) {
    inputs += (inputs.empty() ? "" : ", ") + (name.empty() ? std::string("(unnamed)") : name);
  }
  std::string options;
  for (const auto& o : h.description.options) options += (options.empty() ? "" : " ") + o;
  fmt::print("{:<15}{} input(s), {} bytes: {}\n", h.library == core::JitLibrary::nvvm ? "modules" : "inputs",
             h.description.input_names.size(), h.description.input_bytes, inputs);
  fmt::print("options        {}\n", options);
  fmt::print("{:<15}{} returned {} in {}\n", h.library == core::JitLibrary::nvvm ? "compile" : "link", library, h.rc,
             human_duration(h.nanos));
  fmt::print("outputs\n");
  const auto specs = core::outputs_of(h.library);
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const core::RecordedOutput& o = h.outputs[i];
    if (!o.available) continue;
    if (o.data_rc == 0)
      fmt::print("  {:<9} {} bytes\n", specs[i].name, o.bytes.size());
    else
      fmt::print("  {:<9} none ({} returned {})\n", specs[i].name, library, o.data_rc);
  }
}

int inspect(const CLI::App& command, const std::string& prefix, bool json) {
  const core::Config config = load_settings();
  store::OpenedCache opened = open_cache_reporting(config);
  if (!opened.store) return 1;
  std::string problem;
  const std::optional<EntryInfo> found = find_entry(read_entries(*opened.store), prefix, &problem);
  if (!found) return usage_error(command, problem);
  const EntryInfo& e = *found;
  const std::string now = verdict(e);
  if (json) {
    nlohmann::ordered_json j;
    j["schema_version"] = 1;
    j["key"] = e.key_hex;
    j["manifest"] = e.manifest_hex;
    j["kind"] = e.kind();
    j["damaged"] = e.damaged();
    j["library_version"] = library_json(e);  // "library" (a link's or NVVM compile's) predates it
    if (e.handle) {
      const core::HandleEntry& h = *e.handle;
      j["library"] = core::library_name(h.library);
      j["options"] = h.description.options;
      j["architecture"] = architecture_of(h.description.options);
      j["inputs"] = h.description.input_names;
      j["input_bytes"] = h.description.input_bytes;
      j["rc"] = h.rc;
      j["seconds"] = static_cast<double>(h.nanos) / 1e9;
      const auto specs = core::outputs_of(h.library);
      for (std::size_t i = 0; i < specs.size(); ++i) {
        const core::RecordedOutput& o = h.outputs[i];
        if (o.available) j["outputs"][specs[i].name] = {{"rc", o.data_rc}, {"bytes", o.bytes.size()}};
      }
    }
    if (e.entry) {
      const core::CompileEntry& c = *e.entry;
      if (c.description) {
        j["program_name"] = c.description->program_name;
        j["label"] = program_label(e);
        j["options"] = c.description->options;
        j["architecture"] = architecture_of(c.description->options);
        j["headers"] = c.description->header_names;
        j["source_bytes"] = c.description->source_bytes;
      }
      j["compile_rc"] = c.compile_rc;
      j["compile_seconds"] = static_cast<double>(c.compile_nanos) / 1e9;
      for (const core::OutputKind kind : core::kOutputKinds) {
        const core::RecordedOutput& o = c.output(kind);
        if (o.available) j["outputs"][core::output_name(kind)] = {{"rc", o.data_rc}, {"bytes", o.bytes.size()}};
      }
      j["lowered_names"] = nlohmann::ordered_json::array();
      for (const auto& n : c.lowered_names) {
        j["lowered_names"].push_back({{"expression", n.expression}, {"rc", n.rc}, {"lowered", n.lowered}});
      }
    }
    j["created"] = e.access ? e.access->created : 0;
    j["last_use"] = e.access ? e.access->last_access : 0;
    if (e.dependencies) {
      j["dependencies"]["paths"] = nlohmann::ordered_json::array();
      for (const auto& p : e.dependencies->paths) j["dependencies"]["paths"].push_back(dependency_line(p));
      j["dependencies"]["environment"] = nlohmann::ordered_json::object();
      for (const auto& v : e.dependencies->env) {
        j["dependencies"]["environment"][v.name] = v.present ? nlohmann::ordered_json(v.value) : nullptr;
      }
      j["dependencies"]["date"] = e.dependencies->date;
    }
    j["now"] = now;
    fmt::print("{}\n", j.dump(2));
    return 0;
  }
  fmt::print("key            {}\n", e.key_hex);
  fmt::print("manifest       {}\n", e.manifest_hex.empty() ? "(none names it)" : e.manifest_hex);
  if (!e.damaged()) {
    const std::optional<core::LibraryVersion> library = e.library();
    const std::string build = core::build_id_hex(library);
    fmt::print("library        {} {}{}\n", e.library_name(), core::version_text(library),
               library ? (build.empty() ? std::string(" (no build-id)") : " (build-id " + build + ")")
                       : std::string(" (made before entries recorded it)"));
  }
  if (e.damaged()) {
    fmt::print("entry          DAMAGED\n");
  } else if (e.handle) {
    print_handle_entry(*e.handle);
  } else {
    const core::CompileEntry& c = *e.entry;
    if (c.description) {
      const auto& d = *c.description;
      const std::string label = program_label(e);  // what ls and stats call it
      const std::string given = d.program_name.empty() ? "(unnamed)" : d.program_name;
      fmt::print("program        {}\n", label == given ? given : label + " (named " + given + ")");
      std::string options;
      for (const auto& o : d.options) options += (options.empty() ? "" : " ") + o;
      fmt::print("options        {}\n", options);
      fmt::print("architecture   {}\n",
                 architecture_of(d.options).empty() ? "(NVRTC's default)" : architecture_of(d.options));
      fmt::print("source         {} bytes, {} in-memory headers\n", d.source_bytes, d.header_names.size());
      for (const auto& h : d.header_names) fmt::print("  header       {}\n", h);
    } else {
      fmt::print("program        (recorded before program names were kept)\n");
    }
    fmt::print("compile        NVRTC returned {} in {}\n", c.compile_rc, human_duration(c.compile_nanos));
    fmt::print("outputs\n");
    for (const core::OutputKind kind : core::kOutputKinds) {
      if (c.output(kind).available) print_output(core::output_name(kind), c.output(kind));
    }
    for (const auto& n : c.lowered_names) fmt::print("  lowered  {} -> {}\n", n.expression, n.lowered);
  }
  fmt::print("created        {}\n", human_time(e.access ? e.access->created : 0));
  fmt::print("last use       {}\n", human_time(e.access ? e.access->last_access : 0));
  if (e.dependencies) {
    const auto& d = *e.dependencies;
    fmt::print("dependencies   {} paths, {} environment variables{}\n", d.paths.size(), d.env.size(),
               d.date.empty() ? "" : ", the date " + d.date);
    for (const auto& p : d.paths) fmt::print("  {}\n", dependency_line(p));
    for (const auto& v : d.env) {
      fmt::print("  env      {}{}\n", v.name, v.present ? "=" + v.value : " (unset)");
    }
  }
  fmt::print("now            {}\n", now);
  return 0;
}

struct InspectArguments {
  std::string prefix;
  bool json = false;
};

}  // namespace

void add_inspect_command(CLI::App& app, Outcome& outcome) {
  CLI::App* command = app.add_subcommand(
      "inspect",
      "Show an entry and whether a lookup would hit it now: everything it records (program, options, outputs, "
      "lowered names, timings, the dependency set), and why a lookup would miss.");
  auto arguments = std::make_shared<InspectArguments>();
  command
      ->add_option("KEY-OR-NAME", arguments->prefix,
                   "the start of the key `nvrtc-cache ls` shows, or the program's name as it shows it")
      ->required();
  command->add_flag("--json", arguments->json, "machine-readable output (schema_version 1)");
  command->callback(
      [&outcome, command, arguments] { outcome.exit_code = inspect(*command, arguments->prefix, arguments->json); });
}

}  // namespace nvrtc_cache::tools
