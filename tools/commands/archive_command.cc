// nvrtc-cache export FILE [--from URL] [--older-than AGE] [--newer-than AGE] [--match GLOB]
// nvrtc-cache import FILE [--to URL]
// nvrtc-cache copy FROM TO
// Export writes the local store (or any tier) to one zstd-compressed, checksummed archive
// (store/archive/archive_format.h); import merges an archive into the local store (or any tier);
// copy does both without the file. FILE "-" is stdout/stdin, so `export - | import -` copies too
// (export's report then goes to stderr).
// Selection: a result is exported when its program name matches GLOB (fnmatch(3), e.g.
// 'cudf_*.cu'; on Windows `*` and `?`, case-insensitive: platform/stream_file.h), and its last use (its creation time,
// or a file tier's write time, when it has no access record) is at least / at most AGE ago; a manifest goes with the
// results it names. Secrets: with NVRTC_CACHE_REMOTE_SECRET_FILE set, export signs every record and import refuses an
// unsigned archive and skips records signed with another key.
// Exit status: 0; 1 when the archive is incomplete or a record was skipped (damage, MAC, size,
// malformed) or could not be written; 2 on usage errors.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/config.h"
#include "direct/manifest.h"
#include "platform/paths.h"
#include "platform/stream_file.h"
#include "store/archive/archive_reader.h"
#include "store/archive/archive_writer.h"
#include "store/remote/secret.h"
#include "tools/commands.h"
#include "tools/cache/entries.h"
#include "tools/cache/open_cache.h"
#include "tools/cache/progress.h"
#include "tools/cache/transfer.h"

namespace nvrtc_cache::tools {
namespace {

using store::archive::ArchiveReader;
using store::archive::ArchiveRecord;
using store::archive::ArchiveWriter;
using store::archive::RecordKind;
using store::archive::SkipReason;

struct Arguments {
  std::string file, from, to, older_than, newer_than, match;
  bool json = false;
};

std::int64_t now_seconds() { return static_cast<std::int64_t>(std::time(nullptr)); }
std::uint64_t now_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

// The secret of NVRTC_CACHE_REMOTE_SECRET_FILE; false (reported) when it is set and unreadable.
bool load_secret(std::optional<store::remote::Secret>* secret) {
  const core::Config config = load_settings();
  if (config.remote_secret_file.empty()) return true;
  std::string problem, warning;
  *secret = store::remote::read_secret_file(config.remote_secret_file, &problem, &warning);
  if (!warning.empty()) fmt::print(stderr, "nvrtc-cache: {}\n", warning);
  if (!*secret) fmt::print(stderr, "nvrtc-cache: {}\n", problem);
  return secret->has_value();
}

struct Selection {
  std::optional<std::int64_t> older_than, newer_than;  // seconds
  std::string match;
  std::int64_t now = now_seconds();
  bool any() const { return older_than || newer_than || !match.empty(); }
  // `names`: those the program answers to (tools/cache/transfer.h program_names_of); one matching is enough.
  bool selects(std::int64_t used, const std::vector<std::string>& names) const {
    if (!match.empty() && std::none_of(names.begin(), names.end(),
                                       [&](const std::string& n) { return platform::glob_matches(match, n); }))
      return false;
    if ((older_than || newer_than) && used <= 0) return false;  // no time known: not selected by age
    if (older_than && now - used < *older_than) return false;
    if (newer_than && now - used > *newer_than) return false;
    return true;
  }
};

struct Report {
  std::uint64_t records = 0, manifests = 0, results = 0;
  std::uint64_t added = 0, merged = 0, present = 0, failed = 0;
  std::uint64_t skipped[static_cast<std::size_t>(SkipReason::kCount)] = {};
  std::uint64_t source_damaged = 0, source_mac_rejected = 0;
  std::uint64_t payload_bytes = 0, archive_bytes = 0, uncompressed_bytes = 0;
  std::uint64_t nanos = 0;
  bool complete = true;
  std::string problem;

  std::uint64_t skipped_total() const {
    std::uint64_t n = 0;
    for (std::uint64_t s : skipped) n += s;
    return n;
  }
  bool ok() const { return complete && skipped_total() == 0 && failed == 0 && problem.empty(); }
};

double ratio(const Report& r) {
  return r.archive_bytes == 0 ? 0.0 : static_cast<double>(r.uncompressed_bytes) / static_cast<double>(r.archive_bytes);
}

// To stdout, or to stderr when stdout carries the archive.
void print_report(const std::string& verb, const Report& r, bool json, std::FILE* out_file = stdout) {
  const double seconds = static_cast<double>(r.nanos) / 1e9;
  if (json) {
    nlohmann::json out{{"operation", verb},
                       {"records", r.records},
                       {"manifests", r.manifests},
                       {"results", r.results},
                       {"payload_bytes", r.payload_bytes},
                       {"archive_bytes", r.archive_bytes},
                       {"uncompressed_bytes", r.uncompressed_bytes},
                       {"ratio", ratio(r)},
                       {"seconds", seconds},
                       {"complete", r.complete},
                       {"ok", r.ok()}};
    if (verb != "export") {
      out["added"] = r.added;
      out["merged"] = r.merged;
      out["present"] = r.present;
      out["failed"] = r.failed;
      nlohmann::json skipped = nlohmann::json::object();
      for (std::size_t i = 0; i < std::size(r.skipped); ++i)
        skipped[std::string(store::archive::kSkipReasonNames[i])] = r.skipped[i];
      out["skipped"] = skipped;
    }
    out["source_damaged"] = r.source_damaged;
    out["source_mac_rejected"] = r.source_mac_rejected;
    if (!r.problem.empty()) out["problem"] = r.problem;
    fmt::print(out_file, "{}\n", out.dump(2));
    return;
  }
  fmt::print(out_file, "{}: {} records ({} results, {} manifests), {} of entries", verb, r.records, r.results,
             r.manifests, human_bytes(r.payload_bytes));
  if (r.archive_bytes > 0) fmt::print(out_file, ", archive {} (ratio {:.2f})", human_bytes(r.archive_bytes), ratio(r));
  fmt::print(out_file, ", {}", human_duration(r.nanos));
  if (seconds > 0) {
    fmt::print(out_file, " ({:.0f} entries/s, {:.1f} MB/s)", static_cast<double>(r.records) / seconds,
               static_cast<double>(r.payload_bytes) / 1e6 / seconds);
  }
  fmt::print(out_file, "\n");
  if (verb != "export") {
    fmt::print(out_file, "  added {}, manifests merged {}, already present {}, failed to write {}\n", r.added, r.merged,
               r.present, r.failed);
    if (r.skipped_total() > 0) {
      fmt::print(out_file, "  skipped {}:", r.skipped_total());
      for (std::size_t i = 0; i < std::size(r.skipped); ++i) {
        if (r.skipped[i] > 0) fmt::print(out_file, " {} {}", store::archive::kSkipReasonNames[i], r.skipped[i]);
      }
      fmt::print(out_file, "\n");
    }
  }
  if (r.source_damaged > 0 || r.source_mac_rejected > 0) {
    fmt::print(out_file, "  left out of the source: {} damaged, {} not signed with the secret\n", r.source_damaged,
               r.source_mac_rejected);
  }
  if (!r.complete)
    fmt::print(stderr, "nvrtc-cache {}: the archive is incomplete: {}\n", verb, r.problem);
  else if (!r.problem.empty())
    fmt::print(stderr, "nvrtc-cache {}: {}\n", verb, r.problem);
}

// Walks `source`, choosing what `selection` selects, and hands each chosen entry to `emit`.
bool walk_selected(Endpoint& source, const Selection& selection, Report& report,
                   const std::function<bool(const ArchiveRecord&)>& emit) {
  Progress progress("exporting", source.expected_entries() * (selection.any() ? 2 : 1));
  std::uint64_t done = 0;
  std::set<std::string, std::less<>> chosen;  // selected result keys (only with a selection)
  std::map<std::string, std::string, std::less<>> names;
  WalkCounts counts;
  std::string problem;
  if (selection.any()) {
    if (!source.walk(
            [&](const WalkedEntry& e) {
              progress.update(++done);
              if (e.key[0] != 'R') return;
              std::vector<std::string> answers_to = program_names_of(e.payload);
              if (selection.selects(e.last_used > 0 ? e.last_used : e.created, answers_to)) {
                chosen.emplace(e.key);
                names.emplace(std::string(e.key), std::move(answers_to.front()));
              }
            },
            &counts, &problem)) {
      report.problem = problem;
      return false;
    }
    counts = {};
  }
  bool writing = true;
  const bool walked = source.walk(
      [&](const WalkedEntry& e) {
        progress.update(++done);
        if (!writing) return;
        ArchiveRecord record;
        record.key.assign(e.key);
        record.created = e.created;
        record.last_used = e.last_used;
        if (e.key[0] == 'L') {  // a link's or libNVVM compile's result: exported whole (a selection names compiles)
          if (selection.any()) return;
          record.kind = RecordKind::kHandleResult;
          ++report.results;
        } else if (e.key[0] == 'A') {  // a C API entry (api/api_entry.h): exported whole, as 'L'
          if (selection.any()) return;
          record.kind = RecordKind::kApiEntry;
          ++report.results;
        } else if (e.key[0] == direct::kWorkingDirectoryMarkerPrefix) {
          return;  // a hint of this store (direct/manifest.h): never exported
        } else if (e.key[0] == 'R') {
          if (selection.any()) {
            const auto it = names.find(e.key);
            if (it == names.end()) return;
            record.program_name = it->second;
          } else {
            record.program_name = program_names_of(e.payload).front();
          }
          record.kind = RecordKind::kResult;
          ++report.results;
        } else {
          const auto manifest = direct::decode_manifest(e.payload);
          if (!manifest) {
            ++report.source_damaged;
            return;
          }
          bool wanted = !selection.any();
          for (const auto& r : manifest->results) {
            const auto it = names.find(direct::result_store_key(r.result_key));
            if (it != names.end()) {
              wanted = true;
              record.program_name = it->second;
              break;
            }
          }
          if (!wanted) return;
          record.kind = RecordKind::kManifest;
          ++report.manifests;
        }
        record.payload.assign(e.payload);
        ++report.records;
        report.payload_bytes += e.payload.size();
        writing = emit(record);
      },
      &counts, &problem);
  progress.finish();
  report.source_damaged += counts.damaged;
  report.source_mac_rejected += counts.mac_rejected;
  if (!walked) report.problem = problem;
  return walked && writing;
}

void count_merge(MergeOutcome outcome, const std::string& problem, Report& report) {
  switch (outcome) {
    case MergeOutcome::kAdded:
      ++report.added;
      break;
    case MergeOutcome::kMerged:
      ++report.merged;
      break;
    case MergeOutcome::kPresent:
      ++report.present;
      break;
    case MergeOutcome::kMalformed:
      ++report.skipped[static_cast<std::size_t>(SkipReason::kMalformed)];
      break;
    case MergeOutcome::kFailed:
      ++report.failed;
      if (report.problem.empty()) report.problem = "cannot write an entry: " + problem;
      break;
  }
}

int run_export(const Arguments& a, const CLI::App& command) {
  Selection selection;
  selection.match = a.match;
  if (!a.older_than.empty() && !(selection.older_than = parse_duration(a.older_than))) {
    return usage_error(command, "'" + a.older_than + "' is not an age: a number and its unit (" + kAgeUnits + ")");
  }
  if (!a.newer_than.empty() && !(selection.newer_than = parse_duration(a.newer_than))) {
    return usage_error(command, "'" + a.newer_than + "' is not an age: a number and its unit (" + kAgeUnits + ")");
  }
  std::optional<store::remote::Secret> secret;
  if (!load_secret(&secret)) return 1;
  std::string problem;
  auto source = Endpoint::open(a.from, secret ? &*secret : nullptr, &problem);
  if (!source) {
    fmt::print(stderr, "nvrtc-cache export: {}\n", problem);
    return 1;
  }
  const bool to_stdout = a.file == "-";
  const std::string temporary = a.file + ".partial-" + std::to_string(::getpid());
  platform::StreamFile file = platform::standard_output_stream();
  if (const int error = to_stdout ? 0 : platform::create_stream_file(temporary, &file); error != 0) {
    fmt::print(stderr, "nvrtc-cache export: cannot create {}: {}\n", temporary, std::strerror(error));
    return 1;
  }
  const std::uint64_t start = now_ns();
  ArchiveWriter writer(
      [file](std::string_view bytes) { return platform::write_stream(file, bytes.data(), bytes.size()) == 0; },
      secret ? &*secret : nullptr);
  Report report;
  bool ok = walk_selected(*source, selection, report, [&](const ArchiveRecord& r) { return writer.add(r); });
  ok = ok && writer.finish();
  if (!writer.problem().empty()) report.problem = writer.problem();
  if (!to_stdout) {
    ok = platform::sync_stream(file) == 0 && ok;
    ok = platform::close_stream(file) == 0 && ok;
    if (const int error = ok ? platform::replace_file(temporary, a.file) : 0; error != 0) {
      report.problem = "cannot rename the archive into place: " + std::string(std::strerror(error));
      ok = false;
    }
    if (!ok) (void)platform::remove_file(temporary);
  }
  report.nanos = now_ns() - start;
  report.archive_bytes = writer.compressed_bytes();
  report.uncompressed_bytes = writer.uncompressed_bytes();
  report.complete = ok;
  if (!ok && report.problem.empty()) report.problem = "the export failed";
  print_report("export", report, a.json, to_stdout ? stderr : stdout);
  return ok && report.ok() ? 0 : 1;
}

// A file:// destination's directory, made where missing (mkdir -p): mode 0700, or 02770 for a cache
// shared on purpose (shared = 1), whatever the umask. Other URLs are left alone. False (reported)
// when it cannot be made.
bool make_file_tier_directory(const std::string& verb, const std::string& url) {
  if (!url.starts_with("file://")) return true;
  std::string problem;
  const auto parsed = store::remote::parse_tier_url(url, &problem);
  if (!parsed || parsed->path.empty()) return true;  // Endpoint::open says what is wrong
  std::string failed;                                // the path as the file tier opens it (on Windows "/C:/x" is C:\x)
  if (const int error = platform::make_directories(platform::path_of_file_url(parsed->path),
                                                   load_settings().shared ? 02770 : 0700, &failed);
      error != 0) {
    fmt::print(stderr, "nvrtc-cache {}: cannot create {}: {}\n", verb, failed, std::strerror(error));
    return false;
  }
  return true;
}

int run_import(const Arguments& a) {
  std::optional<store::remote::Secret> secret;
  if (!load_secret(&secret)) return 1;
  if (!make_file_tier_directory("import", a.to)) return 1;
  std::string problem;
  auto destination = Endpoint::open(a.to, secret ? &*secret : nullptr, &problem);
  if (!destination) {
    fmt::print(stderr, "nvrtc-cache import: {}\n", problem);
    return 1;
  }
  const bool from_stdin = a.file == "-";
  platform::StreamFile file = platform::standard_input_stream();
  if (const int error = from_stdin ? 0 : platform::open_stream_for_reading(a.file, &file); error != 0) {
    fmt::print(stderr, "nvrtc-cache import: cannot open {}: {}\n", a.file, std::strerror(error));
    return 1;
  }
  const std::uint64_t file_size = from_stdin ? 0 : platform::stream_size(file);
  const std::uint64_t start = now_ns();
  ArchiveReader reader(
      [file](char* buffer, std::size_t size) -> std::ptrdiff_t {
        std::size_t got = 0;
        return platform::read_stream(file, buffer, size, &got) == 0 ? static_cast<std::ptrdiff_t>(got) : -1;
      },
      secret ? &*secret : nullptr);
  Progress progress("importing", file_size);
  Report report;
  ArchiveRecord record;
  SkipReason reason{};
  for (;;) {
    const ArchiveReader::Step step = reader.next(&record, &reason);
    progress.update(reader.compressed_bytes());
    if (step == ArchiveReader::Step::kEnd) break;
    if (step == ArchiveReader::Step::kFailed) {
      report.complete = false;
      report.problem = reader.problem();
      break;
    }
    if (step == ArchiveReader::Step::kSkipped) {
      ++report.skipped[static_cast<std::size_t>(reason)];
      continue;
    }
    ++report.records;
    ++(record.kind == RecordKind::kManifest ? report.manifests : report.results);
    report.payload_bytes += record.payload.size();
    std::string why;
    count_merge(destination->merge(record.key, record.payload, &why), why, report);
  }
  progress.finish();
  (void)platform::close_stream(file);
  report.nanos = now_ns() - start;
  report.archive_bytes = reader.compressed_bytes();
  report.uncompressed_bytes = reader.uncompressed_bytes();
  if (!a.json && report.records == 0 && report.problem.starts_with("not an nvrtc-cache archive")) {
    fmt::print(stderr, "nvrtc-cache import: {} is {}\n", from_stdin ? "stdin" : a.file, report.problem);
    return 1;
  }
  print_report("import", report, a.json);
  return report.ok() ? 0 : 1;
}

int run_copy(const Arguments& a) {
  std::optional<store::remote::Secret> secret;
  if (!load_secret(&secret)) return 1;
  const std::string from = a.from == "local" ? "" : a.from, to = a.to == "local" ? "" : a.to;
  if (!make_file_tier_directory("copy", to)) return 1;
  std::string problem;
  auto source = Endpoint::open(from, secret ? &*secret : nullptr, &problem);
  auto destination = source ? Endpoint::open(to, secret ? &*secret : nullptr, &problem) : nullptr;
  if (!destination) {
    fmt::print(stderr, "nvrtc-cache copy: {}\n", problem);
    return 1;
  }
  const std::uint64_t start = now_ns();
  Report report;
  walk_selected(*source, Selection{}, report, [&](const ArchiveRecord& r) {
    std::string why;
    count_merge(destination->merge(r.key, r.payload, &why), why, report);
    return true;
  });
  report.nanos = now_ns() - start;
  print_report("copy", report, a.json);
  return report.ok() ? 0 : 1;
}

}  // namespace

void add_archive_commands(CLI::App& app, Outcome& outcome) {
  auto args = std::make_shared<Arguments>();
  CLI::App* exp =
      app.add_subcommand("export",
                         "Write the cache to an archive FILE ('-': stdout), compressed and checksummed; --match, "
                         "--older-than and --newer-than select a part of it.");
  exp->add_option("FILE", args->file, "the archive to write (replaced atomically when complete)")->required();
  exp->add_option("--from", args->from, "read this tier URL (file:///DIR, redis://...) instead of the local store");
  exp->add_option("--older-than", args->older_than, "only entries last used at least AGE ago (30d, 12h, 90m, 3600s)");
  exp->add_option("--newer-than", args->newer_than, "only entries last used within AGE");
  exp->add_option("--match", args->match, "only programs whose name matches this glob (fnmatch, e.g. 'cudf_*')");
  exp->add_flag("--json", args->json, "print the report as JSON");
  exp->callback([&outcome, exp, args] { outcome.exit_code = run_export(*args, *exp); });

  CLI::App* imp = app.add_subcommand(
      "import",
      "Merge an archive FILE ('-': stdin) into the cache: entries already present are kept, damaged or "
      "unsigned ones are skipped and reported.");
  imp->add_option("FILE", args->file, "the archive to read")->required();
  imp->add_option("--to", args->to,
                  "write into this tier URL (file:///DIR, made if missing; redis://...) instead of the local store");
  imp->add_flag("--json", args->json, "print the report as JSON");
  imp->callback([&outcome, args] { outcome.exit_code = run_import(*args); });

  CLI::App* copy = app.add_subcommand(
      "copy", "Copy every entry from one tier to another (the same merge as import); 'local' is the local store.");
  copy->add_option("FROM", args->from, "'local' or a tier URL")->required();
  copy->add_option("TO", args->to, "'local' or a tier URL")->required();
  copy->add_flag("--json", args->json, "print the report as JSON");
  copy->callback([&outcome, args] { outcome.exit_code = run_copy(*args); });
}

}  // namespace nvrtc_cache::tools
