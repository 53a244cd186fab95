// nvrtc-cache __replay-worker: one of `nvrtc-cache replay`'s worker processes (tools/replay/replay.h). Its
// task file comes from the command, which checked every library and option list already; the worker
// checks them again before it loads or compiles anything.
#include <sys/stat.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "direct/dependencies.h"
#include "tools/replay/arch_options.h"
#include "platform/env.h"
#include "platform/paths.h"
#include "platform/process.h"
#include "tools/replay/replay.h"
#include "tools/replay/host.h"

namespace nvrtc_cache::tools {
namespace {

std::string without_tabs(std::string text) {
  for (char& c : text) {
    if (c == '\t' || c == '\n') c = ' ';
  }
  return text;
}

// The text after `marker` on its line, or "".
std::string after(const std::string& log, std::string_view marker) {
  const std::size_t at = log.find(marker);
  if (at == std::string::npos) return {};
  const std::size_t start = at + marker.size();
  return log.substr(start, log.find('\n', start) - start);
}

// Where the program is compiled: the recorded directory, or (when the key leaves the directory out
// and it does not exist here) an empty one. "" and `why` when it cannot be.
std::string directory_for(const core::CompileRecord& record, std::string& why) {
  struct stat st;
  const std::string& recorded = record.inputs.working_directory;
  if (platform::is_absolute_path(recorded) && platform::Env::system()->stat(recorded, &st) == 0 &&
      S_ISDIR(st.st_mode)) {
    return recorded;
  }
  if (record.inputs.working_directory_use == keying::WorkingDirectoryUse::kAlways) {
    why = "its working directory " + recorded + " (part of its key) does not exist here";
    return {};
  }
  static std::string empty_directory;
  if (empty_directory.empty()) {
    std::string error;
    empty_directory = platform::make_temporary_directory("nvrtc-cache-replay-", &error);
    if (empty_directory.empty()) {
      why = "cannot create a working directory: " + error;
      return {};
    }
  }
  return empty_directory;
}

// A compile's outputs a link may take: PTX, CUBIN and LTO-IR ("" where absent).
using ProgramOutputs = std::array<std::string, 3>;

template <typename SizeFn, typename DataFn>
std::string program_output(nvrtcProgram program, SizeFn size_fn, DataFn data_fn) {
  std::size_t size = 0;
  if (size_fn == nullptr || data_fn == nullptr || size_fn(program, &size) != NVRTC_SUCCESS || size == 0) return {};
  std::string bytes(size, '\0');
  if (data_fn(program, bytes.data()) != NVRTC_SUCCESS) return {};
  return bytes;
}

ReplayOutcome compile_variant(const ReplayNvrtc& api, const core::CompileRecord& record, const ReplayVariant& variant,
                              LogTail& log, ProgramOutputs* outputs) {
  ReplayOutcome out;
  const keying::ProgramInputs& in = record.inputs;
  std::vector<const char*> header_texts, header_names, options;
  for (const auto& h : in.headers) {
    header_texts.push_back(h.content.c_str());
    header_names.push_back(h.include_name.c_str());
  }
  for (const auto& o : variant.options) options.push_back(o.c_str());
  (void)log.next();  // anything logged before this compile is not its outcome
  nvrtcProgram program = nullptr;
  nvrtcResult rc = api.create(&program, in.source.c_str(), in.name ? in.name->c_str() : nullptr,
                              static_cast<int>(in.headers.size()), header_texts.data(), header_names.data());
  if (rc != NVRTC_SUCCESS) {
    out.status = "failed";
    out.detail = fmt::format("nvrtcCreateProgram returned {}", static_cast<int>(rc));
    return out;
  }
  for (const auto& expression : in.name_expressions) (void)api.add_name_expression(program, expression.c_str());
  rc = api.compile(program, static_cast<int>(options.size()), options.data());
  if (outputs != nullptr && rc == NVRTC_SUCCESS) {
    *outputs = {program_output(program, api.ptx_size, api.ptx), program_output(program, api.cubin_size, api.cubin),
                program_output(program, api.ltoir_size, api.ltoir)};
  }
  api.destroy(&program);
  const std::string logged = log.next();
  const std::string rc_text = rc == NVRTC_SUCCESS ? "" : fmt::format(" (NVRTC returned {})", static_cast<int>(rc));
  return outcome_from_log(logged, rc_text);
}

// Leaves the outputs of `record`'s compiles for the links: each output as recorded, named by its
// producer, and its counterpart for every requested architecture whose variant compiled.
void keep_outputs(const core::CompileRecord& record, const std::vector<std::string>& archs,
                  const std::vector<ReplayVariant>& variants, const std::vector<ProgramOutputs>& outputs,
                  RetargetDirectory& directory) {
  const std::string producer = "the NVRTC compile of " + record.inputs.name.value_or("(null name)");
  for (std::size_t kind = 0; kind < outputs.front().size(); ++kind) {
    const std::string& as_recorded = outputs.front()[kind];
    if (as_recorded.empty()) continue;
    directory.add_producer(as_recorded, producer);
    for (std::size_t v = 0; v < variants.size(); ++v) {
      if (!outputs[v][kind].empty() && !variants[v].arch.empty())
        directory.add_output(as_recorded, variants[v].arch, outputs[v][kind]);
    }
    // A requested architecture the recorded options already name is the recorded variant itself.
    for (const std::string& arch : archs) {
      if (options_for_arch(record.inputs.options, arch) == record.inputs.options)
        directory.add_output(as_recorded, arch, as_recorded);
    }
  }
}

}  // namespace

std::vector<ReplayVariant> replay_variants(const std::vector<std::string>& recorded_options,
                                           const std::vector<std::string>& archs) {
  std::vector<ReplayVariant> variants = {{"as recorded", recorded_options, ""}};
  for (const std::string& arch : archs) {
    std::optional<std::vector<std::string>> options = options_for_arch(recorded_options, arch);
    if (!options) continue;
    bool seen = false;
    for (const ReplayVariant& v : variants) seen = seen || v.options == *options;
    if (seen) continue;
    std::string label = arch;
    for (const std::string& o : *options) {  // the value as written: "compute_90"
      if (o.ends_with("_" + arch)) label = o.substr(o.find('=') == std::string::npos ? 0 : o.find('=') + 1);
    }
    variants.push_back({label, std::move(*options), arch});
  }
  return variants;
}

std::string LogTail::next() {
  std::ifstream in(path_, std::ios::binary);
  if (!in) return {};
  in.seekg(static_cast<std::streamoff>(offset_));
  std::stringstream text;
  text << in.rdbuf();
  std::string out = text.str();
  offset_ += out.size();
  return out;
}

ReplayOutcome outcome_from_log(const std::string& logged, const std::string& rc_text) {
  ReplayOutcome out;
  if (logged.find("debug: hit ") != std::string::npos) {
    out.status = "cached";
    out.detail = rc_text;
  } else if (logged.find("debug: stored ") != std::string::npos) {
    out.status = "stored";
    out.detail = rc_text;
  } else {
    out.status = "failed";
    std::string why = after(logged, "uncacheable compile: ");
    if (why.empty()) why = after(logged, "not cached: ");
    if (why.empty()) why = after(logged, "warn: ");
    if (why.empty()) why = after(logged, "miss ");
    out.detail = "not stored" + rc_text + (why.empty() ? "" : ": " + why);
  }
  return out;
}

void report_variants(std::size_t index, std::size_t variants, const std::string& why_refused,
                     const std::string& why_skipped, const std::function<ReplayOutcome(std::size_t variant)>& replay) {
  for (std::size_t v = 0; v < variants; ++v) {
    ReplayOutcome outcome;
    if (!why_refused.empty()) {
      outcome.status = "refused";
      outcome.detail = why_refused;
    } else if (!why_skipped.empty()) {
      outcome.status = "skipped";
      outcome.detail = why_skipped;
    } else {
      outcome = replay(v);
    }
    outcome.program = index;
    outcome.variant = v;
    fmt::print("{}", format_outcome(outcome));
    std::fflush(stdout);
  }
}

std::string format_outcome(const ReplayOutcome& o) {
  return fmt::format("{}\t{}\t{}\t{}\n", o.program, o.variant, o.status, without_tabs(o.detail));
}

bool parse_outcome(std::string_view line, ReplayOutcome& o) {
  if (line.ends_with('\r')) line.remove_suffix(1);  // a Windows worker's text-mode stdout
  std::vector<std::string> fields;
  std::size_t start = 0;
  for (int i = 0; i < 3; ++i) {
    const std::size_t tab = line.find('\t', start);
    if (tab == std::string_view::npos) return false;
    fields.emplace_back(line.substr(start, tab - start));
    start = tab + 1;
  }
  try {
    o.program = std::stoul(fields[0]);
    o.variant = std::stoul(fields[1]);
  } catch (...) {
    return false;
  }
  o.status = fields[2];
  o.detail = std::string(line.substr(start));
  return true;
}

int run_replay_worker(const std::string& task_file, const std::vector<std::string>& archs, const std::string& log_file,
                      const std::string& outputs_dir) {
  std::optional<RetargetDirectory> outputs;
  if (!outputs_dir.empty()) outputs.emplace(outputs_dir);
  std::ifstream in(task_file, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const core::RecordScan tasks = core::scan_records(bytes);
  LogTail log(log_file);
  for (std::size_t p = 0; p < tasks.records.size(); ++p) {
    const core::CompileRecord& record = tasks.records[p];
    const std::vector<ReplayVariant> variants = replay_variants(record.inputs.options, archs);
    // Refused before anything is loaded or compiled: its options, then its library.
    std::string why_refused;
    const char* append_flags = std::getenv("NVRTC_APPEND_FLAGS");
    for (std::size_t v = 0; v < variants.size() && why_refused.empty(); ++v) {
      why_refused = replay_option_refusal(variants[v].options, record.inputs.library, append_flags);
    }
    const ReplayNvrtc* api = nullptr;
    if (why_refused.empty()) {
      api = &replay_nvrtc(record.library_path, record.inputs.library);
      why_refused = api->problem;
    }
    std::string why_skipped;
    const std::string directory = why_refused.empty() ? directory_for(record, why_skipped) : "";
    if (why_refused.empty() && why_skipped.empty()) why_skipped = enter_program_directory(directory, record);
    if (why_refused.empty() && why_skipped.empty()) {
      direct::DependencySet dependencies = record.dependencies;
      const direct::Validation valid = direct::validate_dependencies(dependencies);
      if (!valid.matches) why_skipped = "its dependencies differ here: " + valid.mismatch;
    }
    std::vector<ProgramOutputs> outputs_of(variants.size());
    report_variants(p, variants.size(), why_refused, why_skipped, [&](std::size_t v) {
      return compile_variant(*api, record, variants[v], log, outputs ? &outputs_of[v] : nullptr);
    });
    if (outputs && why_refused.empty() && why_skipped.empty())
      keep_outputs(record, archs, variants, outputs_of, *outputs);
  }
  replay_handle_calls(tasks.handle_records, tasks.records.size(), archs, log, outputs ? &*outputs : nullptr);
  return 0;
}

}  // namespace nvrtc_cache::tools
