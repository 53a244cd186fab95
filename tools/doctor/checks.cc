// The checks both systems' doctors make (tools/doctor/doctor.h).
#include <cstdlib>

#include <fmt/format.h>

#include "core/settings.h"
#include "direct/manifest.h"
#include "store/store.h"
#include "tools/commands.h"
#include "tools/doctor/doctor.h"
#include "tools/cache/open_cache.h"

namespace nvrtc_cache::tools {

void DoctorReport::add(Severity severity, const std::string& topic, const std::string& text) {
  static constexpr const char* kLabels[] = {"ok  ", "note", "WARN", "FAIL"};
  fmt::print("{}  {:<16} {}\n", kLabels[static_cast<int>(severity)], topic, text);
  failures_ += severity == Severity::kFail;
  warnings_ += severity == Severity::kWarn;
}

std::string mib_text(std::uint64_t bytes) { return fmt::format("{:.0f} MiB", static_cast<double>(bytes) / 1048576.0); }

void check_configuration(DoctorReport& report, const core::Config& config) {
  report.add(Severity::kNote, "version", fmt::format("nvrtc-cache {}", kVersion));
  bool configuration_ok = config.problems.empty();
  for (const auto& problem : config.problems) report.add(Severity::kWarn, "configuration", problem);
  for (const UnknownVariable& variable : unknown_variables()) {
    // A likely misspelling is a warning (its setting is not applied); any other NVRTC_CACHE_*
    // variable may be another tool's.
    configuration_ok = configuration_ok && variable.suggestion.empty();
    report.add(variable.suggestion.empty() ? Severity::kNote : Severity::kWarn, "configuration",
               unknown_variable_message(variable));
  }
  if (config.disabled) {
    configuration_ok = false;
    report.add(Severity::kFail, "configuration",
               "caching is disabled (disable = 1, from " +
                   config.origins[core::setting_index(*core::find_setting("disable"))] + ")");
  }
  if (configuration_ok) report.add(Severity::kOk, "configuration", "no bad values (`nvrtc-cache config` lists them)");
}

void check_opened_cache(DoctorReport& report, const core::Config& config, const store::OpenedCache& opened,
                        const std::string& described, std::optional<SpaceOnDisk> space, std::uint64_t data_file_bytes) {
  for (const auto& message : opened.messages) report.add(Severity::kWarn, "cache directory", message);
  if (!opened.store) {
    report.add(Severity::kFail, "cache directory",
               fmt::format("cannot be used: {}. Every compile goes to NVRTC uncached. Fix the directory, choose "
                           "another (cache_dir / NVRTC_CACHE_DIR), or share it on purpose (shared = 1): {}",
                           opened.status.message(), described));
    return;
  }
  if (opened.read_only) {
    report.add(
        Severity::kFail, "cache directory",
        "is read-only: hits are served but nothing new is stored. Make it writable or choose another: " + described);
  } else {
    report.add(Severity::kOk, "cache directory", described);
  }
  if (space && space->free_bytes < kFullDiskBytes) {
    report.add(Severity::kFail, "free space",
               fmt::format("no space left on the filesystem holding {}: {} free{}. Hits are served, but no new "
                           "result can be stored: free space there or choose another cache_dir",
                           opened.directory, mib_text(space->free_bytes),
                           space->total_bytes ? " of " + mib_text(space->total_bytes) : std::string()));
  } else if (space) {
    const std::uint64_t used = data_file_bytes;
    const std::uint64_t room = config.max_size_bytes > used ? config.max_size_bytes - used : 0;
    report.add(space->free_bytes >= room ? Severity::kOk : Severity::kWarn, "free space",
               fmt::format("{} free; the store uses {} of its {} cap{}", mib_text(space->free_bytes), mib_text(used),
                           mib_text(config.max_size_bytes),
                           space->free_bytes >= room ? "" : " (the disk fills before the cap: lower max_size)"));
  }
  // Counted as `stats` and `ls` count: results (the rows of `ls`), the index (manifests and
  // working-directory markers) apart.
  std::uint64_t results = 0, manifests = 0, api_entries = 0, damaged = 0;
  const store::Status walked =
      opened.store->for_each([&](std::string_view key, std::optional<std::string_view> payload) {
        const bool result = key.starts_with(direct::kResultPrefix) || key.starts_with(direct::kHandleResultPrefix);
        (result ? results : key.starts_with(direct::kApiEntryPrefix) ? api_entries : manifests) += 1;
        damaged += !payload.has_value();
      });
  if (!walked) {
    report.add(Severity::kFail, "store",
               "cannot be read to the end: " + walked.message() + " (`nvrtc-cache clear` starts afresh)");
  } else {
    report.add(damaged ? Severity::kWarn : Severity::kOk, "store",
               fmt::format("{} results and {} index entries (manifests, directory markers){}, {} damaged{}", results,
                           manifests, api_entries ? fmt::format(", {} C API entries", api_entries) : std::string(),
                           damaged, damaged ? " (damaged entries are misses; `nvrtc-cache verify` says more)" : ""));
  }
}

void report_sample_compile(DoctorReport& report, const SampleCompileRuns& runs, const std::string& scratch_cache,
                           const SampleCompileWords& words) {
  std::int64_t hits = 0, stores = 0, side_effect = 0, unknown_option = 0, uncacheable = 0;
  {
    core::Config scratch_config;
    scratch_config.cache_dir = scratch_cache;
    scratch_config.max_size_bytes = 64ull << 20;
    store::OpenedCache opened = store::open_cache(core::cache_policy(scratch_config));
    if (opened.store) {
      const store::Counters counters = opened.store->counters();
      const auto counter = [&counters](const char* name) {
        const auto it = counters.find(name);
        return it != counters.end() ? it->second : std::int64_t{0};
      };
      hits = counter("hits");
      stores = counter("stores");
      uncacheable = counter("uncacheable");
      side_effect = counter("uncacheable.side_effect_option");
      unknown_option = counter("uncacheable.unknown_option");
    }
  }
  const SampleRun& direct = runs.direct;
  // NVRTC appends NVRTC_APPEND_FLAGS to every compile: an option there that NVRTC rejects, or that the
  // cache may not cache (a side effect, an option it does not know), stops all caching by itself.
  const char* appended = std::getenv("NVRTC_APPEND_FLAGS");
  const std::string append_flags = appended != nullptr ? appended : "";
  const std::string direct_error = direct.first_error_line;
  if (!append_flags.empty() && (direct.exit_code != 0 || (stores < 1 && (side_effect > 0 || unknown_option > 0)))) {
    report.add(Severity::kFail, "sample compile",
               fmt::format("NVRTC_APPEND_FLAGS=\"{}\" {}: NVRTC adds it to every compile, so no compile is cached. "
                           "Unset NVRTC_APPEND_FLAGS, or remove that option from it",
                           append_flags,
                           direct.exit_code != 0 ? "makes NVRTC itself fail the sample" +
                                                       (direct_error.empty() ? "" : " (" + direct_error + ")")
                           : side_effect > 0 ? std::string("adds an option with side effects (it writes files)")
                                             : std::string("adds an option this build does not know")));
  } else if (direct.exit_code != 0) {
    // Nothing can be cached when NVRTC itself does not compile.
    report.add(Severity::kFail, "sample compile",
               fmt::format("NVRTC itself could not compile the sample ({}{}). {}", runs.library,
                           direct_error.empty() ? "" : ": " + direct_error, words.nvrtc_fix));
  } else if (runs.cold.exit_code != 0 || runs.warm.exit_code != 0) {
    report.add(Severity::kFail, "sample compile",
               "failed under " + words.interceptor + " (it should behave exactly like NVRTC)");
  } else if (stores < 1 && uncacheable > 0) {
    report.add(
        Severity::kFail, "sample compile",
        "intercepted, but not cacheable here (`NVRTC_CACHE_LOG=info " + words.run_command + " -- CMD` says why)");
  } else if (stores < 1) {
    report.add(Severity::kFail, "sample compile",
               "not intercepted: " + words.interceptor + " stored nothing (is " + words.interceptor +
                   " loadable? NVRTC_CACHE_LOG=debug says more)");
  } else if (hits < 1) {
    report.add(Severity::kFail, "sample compile", "stored but not served from the cache on the second run");
  } else if (runs.cold.out != direct.out || runs.warm.out != direct.out) {
    report.add(Severity::kFail, "sample compile", "results differ from NVRTC's");
  } else {
    report.add(Severity::kOk, "sample compile",
               "intercepted, stored, then served from the cache, byte-identical to NVRTC (" +
                   direct.out.substr(0, direct.out.find_first_of("\r\n")) + ")");
  }
}

int doctor_verdict(const DoctorReport& report) {
  if (report.failures() > 0) {
    fmt::print("verdict: {} problem(s) above block caching\n", report.failures());
    return 1;
  }
  fmt::print("verdict: caching works{}\n", report.warnings() ? " (see the warnings above)" : "");
  return 0;
}

}  // namespace nvrtc_cache::tools
