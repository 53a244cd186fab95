// nvrtc-cache replay FILE [--arch sm_80,sm_90,...] [--jobs N] [--json]: compiles every distinct
// program of a recording (NVRTC_CACHE_RECORD, `nvrtc-cache run --record`) as recorded and once per
// requested architecture, into this machine's cache, and then makes its NVVM compiles and links again
// the same way (a link's inputs that recorded compiles produced are that compile's output for the
// architecture: tools/replay/retarget.h). The compiles run in worker processes with the cache in
// them (`__replay-worker`, tools/replay/worker.cc; the shim preloaded on Linux, the proxy on Windows:
// tools/replay/host.h), so each result is stored under exactly the key the app computes. The
// recording is untrusted (tools/replay/replay.h): a library is judged on disk before it is loaded
// (replay_host.h), and a program whose options could do more than compile is refused before any
// worker starts.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/compile_record.h"
#include "tools/replay/arch_options.h"
#include "tools/commands.h"
#include "platform/process.h"
#include "tools/cache/progress.h"
#include "tools/replay/replay.h"
#include "tools/replay/host.h"

namespace nvrtc_cache::tools {
namespace {

struct ReplayOptions {
  std::string file;
  std::vector<std::string> archs;  // as given
  unsigned jobs = 0;
  bool json = false;
  std::string nvrtc;  // --nvrtc: the library to compile with instead of each recorded one
};

// A distinct NVRTC program, or (handle) a distinct link or NVVM compile.
struct Program {
  bool handle = false;
  core::CompileRecord record;
  core::HandleCallRecord call;
  std::vector<ReplayVariant> variants;
  std::string refused;  // why it is not compiled: its library's refusal, or its options'

  bool is_link() const { return handle && call.library == core::JitLibrary::nvjitlink; }
  std::string name() const { return handle ? handle_call_label(call) : record.inputs.name.value_or("(null name)"); }
};

struct Worker {
  std::unique_ptr<platform::ChildProcess> process;
  std::vector<std::size_t> programs;  // its task file's programs, as indices into the program list
};

bool write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return static_cast<bool>(out);
}

std::unique_ptr<platform::ChildProcess> start_worker(const std::string& task_file, const std::string& log_file,
                                                     const std::string& archs, const std::string& outputs_dir,
                                                     std::string* error) {
  const std::string self = replay_worker_program();
  return platform::ChildProcess::start(
      {self, "__replay-worker", task_file, "--arch", archs, "--log", log_file, "--outputs", outputs_dir},
      replay_worker_environment(log_file), error);
}

// The requested architectures, normalised; nullopt (after saying which) when one is not one.
std::optional<std::vector<std::string>> requested_archs(const std::vector<std::string>& requested) {
  std::vector<std::string> archs;
  for (const std::string& r : requested) {
    std::optional<std::string> arch = parse_arch_request(r);
    if (!arch) {
      fmt::print(stderr, "nvrtc-cache replay: {} is not an architecture (e.g. sm_90, sm_100a, compute_80)\n", r);
      return std::nullopt;
    }
    archs.push_back(*arch);
  }
  return archs;
}

// Distinct programs, in order of first appearance; the latest record of each (its newest
// dependencies); then the distinct links and NVVM compiles.
std::vector<Program> distinct_programs(core::RecordScan& scan) {
  std::vector<Program> programs;
  std::map<std::string, std::size_t> by_identity;
  for (core::CompileRecord& record : scan.records) {
    auto [it, inserted] = by_identity.try_emplace(core::program_identity(record), programs.size());
    if (inserted) programs.push_back({});
    programs[it->second].record = std::move(record);
  }
  std::set<std::string> calls;
  for (core::HandleCallRecord& call : scan.handle_records) {
    if (!calls.insert(core::handle_call_identity(call)).second) continue;
    Program& p = programs.emplace_back();
    p.handle = true;
    p.call = std::move(call);
  }
  return programs;
}

// A link's or NVVM compile's library judged on disk and its options; pointed at the file checked.
std::size_t check_call(Program& p, const std::vector<std::string>& archs) {
  p.variants = replay_variants(p.call.inputs.options, archs);
  p.refused = handle_replay_refusal(p.call);
  if (p.refused.empty()) {
    p.refused = judge_recorded_handle_library(p.call);
  }
  if (!p.refused.empty()) {
    fmt::print(stderr, "nvrtc-cache replay: refusing {}: {}\n", p.name(), p.refused);
    return 0;
  }
  return p.variants.size();
}

// Judges each program's library (on disk, before anything loads it) and its options per variant;
// a program that passes is pointed at the exact file checked. Returns the number of compiles to run.
std::size_t check_programs(std::vector<Program>& programs, const std::vector<std::string>& archs,
                           const std::string& nvrtc) {
  std::string nvrtc_override;
  if (!nvrtc.empty()) {
    std::error_code error;
    nvrtc_override = std::filesystem::absolute(nvrtc, error).string();
    if (error) nvrtc_override = nvrtc;
  }
  struct Library {
    std::string resolved;
    std::string refused;
  };
  std::map<std::string, Library> libraries;                      // path + identity -> the checked library
  std::string only_library;                                      // kReplayUsesOneNvrtc: the first one accepted
  const char* append_flags = std::getenv("NVRTC_APPEND_FLAGS");  // NVRTC appends them in the workers too
  std::size_t tasks = 0;
  for (Program& p : programs) {
    if (p.handle) {
      tasks += check_call(p, archs);
      continue;
    }
    const keying::LibraryIdentity& id = p.record.inputs.library;
    const std::string& path = nvrtc_override.empty() ? p.record.library_path : nvrtc_override;
    const std::string key =
        path + '\0' + std::to_string(id.major) + "." + std::to_string(id.minor) + '\0' + id.build_id;
    auto [it, inserted] = libraries.try_emplace(key);
    if (inserted) {
      JudgedLibrary judged = judge_recorded_nvrtc(path, id);
      if (judged.refused.empty() && kReplayUsesOneNvrtc) {
        if (only_library.empty()) only_library = judged.resolved;
        if (judged.resolved != only_library) {
          judged.refused = fmt::format(
              "{} is a second NVRTC library in this recording (the first: {}); one replay compiles with one "
              "here: replay again with --nvrtc {}",
              path, only_library, path);
        }
      }
      it->second = {std::move(judged.resolved), std::move(judged.refused)};
      if (!it->second.refused.empty()) fmt::print(stderr, "nvrtc-cache replay: {}\n", it->second.refused);
    }
    p.variants = replay_variants(p.record.inputs.options, archs);
    p.refused = it->second.refused;
    for (std::size_t v = 0; v < p.variants.size() && p.refused.empty(); ++v) {
      p.refused = replay_option_refusal(p.variants[v].options, id, append_flags);
      if (!p.refused.empty()) {
        fmt::print(stderr, "nvrtc-cache replay: refusing program {}: {}\n",
                   p.record.inputs.name.value_or("(null name)"), p.refused);
      }
    }
    if (!p.refused.empty()) continue;
    p.record.library_path = it->second.resolved;  // the workers load exactly the file checked here
    tasks += p.variants.size();
  }
  return tasks;
}

// Distributes the programs of this phase (links: the second; the rest: the first) that passed over
// `jobs` workers, round-robin, each with its task file in `work_dir`; false (said) when a file or a
// worker could not be made.
bool start_workers(const std::vector<Program>& programs, bool links, const std::vector<std::string>& archs,
                   unsigned jobs, const std::string& work_dir, std::vector<Worker>& workers) {
  std::vector<std::string> task_bytes(jobs);
  std::vector<std::vector<std::size_t>> assigned(jobs);
  std::size_t next = 0;
  for (std::size_t i = 0; i < programs.size(); ++i) {  // NVRTC's first: a worker reads them first
    const Program& p = programs[i];
    if (!p.refused.empty() || p.is_link() != links) continue;
    task_bytes[next % jobs] += p.handle ? core::encode_handle_record(p.call) : core::encode_record(p.record);
    assigned[next % jobs].push_back(i);
    ++next;
  }
  std::string arch_list;
  for (const std::string& a : archs) arch_list += (arch_list.empty() ? "" : ",") + a;
  for (unsigned j = 0; j < jobs; ++j) {
    if (assigned[j].empty()) continue;
    const std::string task_file = fmt::format("{}/tasks-{}-{}", work_dir, links ? "links" : "compiles", j);
    if (!write_file(task_file, task_bytes[j])) {
      fmt::print(stderr, "nvrtc-cache replay: cannot write {}\n", task_file);
      return false;
    }
    Worker w;
    std::string error;
    w.process = start_worker(task_file, fmt::format("{}/log-{}-{}", work_dir, links ? "links" : "compiles", j),
                             arch_list, work_dir + "/outputs", &error);
    if (w.process == nullptr) {
      fmt::print(stderr, "nvrtc-cache replay: cannot start a worker: {}\n", error);
      return false;
    }
    w.programs = std::move(assigned[j]);
    workers.push_back(std::move(w));
  }
  return true;
}

using Outcomes = std::map<std::pair<std::size_t, std::size_t>, ReplayOutcome>;  // (program, variant)

// Reads the workers' outcome lines (a thread per worker) until every worker's output ends, then
// waits for them; returns how many workers failed.
int collect_outcomes(std::vector<Worker>& workers, std::size_t tasks, Outcomes& outcomes) {
  Progress progress("replaying", tasks);
  std::mutex mutex;
  std::condition_variable changed;
  std::size_t running = workers.size();
  std::vector<std::thread> readers;
  for (Worker& w : workers) {
    readers.emplace_back([&, worker = &w] {
      std::string pending;
      char buffer[4096];
      for (std::size_t n; (n = worker->process->read(buffer, sizeof buffer)) > 0;) {
        pending.append(buffer, n);
        std::lock_guard<std::mutex> lock(mutex);
        for (std::size_t eol; (eol = pending.find('\n')) != std::string::npos;) {
          ReplayOutcome o;
          if (parse_outcome(std::string_view(pending).substr(0, eol), o) && o.program < worker->programs.size()) {
            o.program = worker->programs[o.program];
            outcomes[{o.program, o.variant}] = o;
          }
          pending.erase(0, eol + 1);
        }
        changed.notify_one();
      }
      std::lock_guard<std::mutex> lock(mutex);
      --running;
      changed.notify_one();
    });
  }
  {
    std::unique_lock<std::mutex> lock(mutex);
    for (;;) {
      progress.update(outcomes.size());
      if (running == 0) break;
      changed.wait(lock);
    }
  }
  for (std::thread& t : readers) t.join();
  progress.finish();
  int worker_failures = 0;
  for (Worker& w : workers) {
    if (w.process->wait() != 0) ++worker_failures;
  }
  return worker_failures;
}

// The outcomes of one kind of call (NVRTC's compiles, links, NVVM compiles) and their totals.
struct KindReport {
  std::map<std::string, std::size_t> totals = {
      {"stored", 0}, {"cached", 0}, {"failed", 0}, {"skipped", 0}, {"refused", 0}};
  nlohmann::json list = nlohmann::json::array();
  std::size_t distinct = 0;

  nlohmann::json totals_json() const {
    return {{"distinct", distinct},           {"calls", list.size()},
            {"stored", totals.at("stored")},  {"already_cached", totals.at("cached")},
            {"failed", totals.at("failed")},  {"skipped", totals.at("skipped")},
            {"refused", totals.at("refused")}};
  }
  std::string text(const char* what, const char* done) const {
    return fmt::format("{} {} ({} distinct): {} {}, {} already cached, {} failed, {} skipped, {} refused", list.size(),
                       what, distinct, totals.at("stored"), done, totals.at("cached"), totals.at("failed"),
                       totals.at("skipped"), totals.at("refused"));
  }
};

// Prints the outcome of every call (failures and skips on stderr) and the totals of each kind, as
// text or JSON; true when nothing failed, was refused or was damaged.
bool report(const ReplayOptions& options, const core::RecordScan& scan, const std::vector<Program>& programs,
            const Outcomes& outcomes, double seconds) {
  KindReport compiles, links, nvvm;
  std::size_t nvrtc_programs = 0;
  for (std::size_t i = 0; i < programs.size(); ++i) {
    const Program& p = programs[i];
    KindReport& kind = !p.handle ? compiles : p.is_link() ? links : nvvm;
    ++kind.distinct;
    if (!p.handle) ++nvrtc_programs;
    for (std::size_t v = 0; v < p.variants.size(); ++v) {
      ReplayOutcome o;
      if (!p.refused.empty()) {
        o.status = "refused";
        o.detail = p.refused;
      } else if (auto it = outcomes.find({i, v}); it != outcomes.end()) {
        o = it->second;
      } else {
        o.status = "failed";
        o.detail = "the worker reported nothing (it crashed or was killed)";
      }
      ++kind.totals[o.status];
      const std::string name = p.name();
      kind.list.push_back({{p.handle ? "call" : "program", name},
                           {"variant", p.variants[v].label},
                           {"status", o.status},
                           {"detail", o.detail}});
      if (!options.json &&
          (o.status == "failed" || o.status == "skipped" || (o.status == "refused" && p.refused.empty()))) {
        fmt::print(stderr, "{} {} [{}]: {}\n", o.status, name, p.variants[v].label, o.detail);
      }
    }
  }
  auto& totals = compiles.totals;
  const std::size_t compiled = totals["stored"];
  if (options.json) {
    nlohmann::json out = {{"file", options.file},
                          {"records", scan.records.size()},
                          {"link_and_nvvm_records", scan.handle_records.size()},
                          {"damaged", nlohmann::json::array()},
                          {"programs", nvrtc_programs},
                          {"compiles", compiles.list},
                          {"compiled", compiled},
                          {"already_cached", totals["cached"]},
                          {"failed", totals["failed"]},
                          {"skipped", totals["skipped"]},
                          {"refused", totals["refused"]},
                          {"links", links.list},
                          {"link_totals", links.totals_json()},
                          {"nvvm_compiles", nvvm.list},
                          {"nvvm_totals", nvvm.totals_json()},
                          {"seconds", seconds},
                          {"programs_per_second", seconds > 0 ? static_cast<double>(nvrtc_programs) / seconds : 0.0}};
    for (const core::RecordDamage& d : scan.damage) {
      out["damaged"].push_back({{"offset", d.offset}, {"length", d.length}, {"what", d.what}});
    }
    fmt::print("{}\n", out.dump(2));
  } else {
    fmt::print(
        "{} records, {} programs, {} compiles: {} compiled, {} already cached, {} failed, {} skipped, "
        "{} refused; {:.1f} s ({:.2f} programs/s){}\n",
        scan.records.size(), nvrtc_programs, compiles.list.size(), compiled, totals["cached"], totals["failed"],
        totals["skipped"], totals["refused"], seconds,
        seconds > 0 ? static_cast<double>(nvrtc_programs) / seconds : 0.0,
        scan.damage.empty() ? "" : fmt::format("; {} damaged stretches skipped", scan.damage.size()));
    if (!scan.handle_records.empty()) {
      fmt::print("{} link and NVVM records: {}; {}\n", scan.handle_records.size(), links.text("links", "linked"),
                 nvvm.text("NVVM compiles", "compiled"));
    }
  }
  std::size_t failed = 0;
  for (const KindReport* kind : {&compiles, &links, &nvvm})
    failed += kind->totals.at("failed") + kind->totals.at("refused");
  return failed == 0 && scan.damage.empty();
}

int replay(const ReplayOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  const std::optional<std::vector<std::string>> archs = requested_archs(options.archs);
  if (!archs) return 2;
  std::ifstream in(options.file, std::ios::binary);
  if (!in) {
    fmt::print(stderr, "nvrtc-cache replay: cannot read {}: {}\n", options.file, std::strerror(errno));
    return 1;
  }
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  core::RecordScan scan = core::scan_records(bytes);
  for (const core::RecordDamage& d : scan.damage) {
    fmt::print(stderr, "nvrtc-cache replay: {}: {} bytes at offset {} skipped: {}\n", options.file, d.length, d.offset,
               d.what);
  }
  std::vector<Program> programs = distinct_programs(scan);
  const std::size_t tasks = check_programs(programs, *archs, options.nvrtc);

  const unsigned jobs = std::max(1u, options.jobs ? options.jobs : std::thread::hardware_concurrency());
  std::string error;
  const std::string work_dir = platform::make_temporary_directory("nvrtc-cache-replay-", &error);
  if (work_dir.empty()) {
    fmt::print(stderr, "nvrtc-cache replay: {}\n", error);
    return 1;
  }
  // The compiles first (their outputs, left in work_dir/outputs, are the links' inputs), then the links.
  std::filesystem::create_directory(work_dir + "/outputs");
  Outcomes outcomes;
  int worker_failures = 0;
  for (const bool links : {false, true}) {
    std::vector<Worker> workers;
    if (!start_workers(programs, links, *archs, jobs, work_dir, workers)) return 1;
    if (workers.empty()) continue;
    worker_failures += collect_outcomes(workers, tasks, outcomes);
  }
  std::filesystem::remove_all(work_dir);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const bool clean = report(options, scan, programs, outcomes, seconds);
  return clean && worker_failures == 0 ? 0 : 1;
}

}  // namespace

void add_replay_command(CLI::App& app, Outcome& outcome) {
  CLI::App* command = app.add_subcommand(
      "replay",
      std::string("Compile every program of a recording (`nvrtc-cache run --record FILE`, NVRTC_CACHE_RECORD) into "
                  "this machine's cache: once as recorded and once per architecture of --arch, with the architecture "
                  "option rewritten in the spelling the program used, each stored under exactly the key the program "
                  "computes on that GPU. ") +
          kReplayHelp.links +
          "Programs whose dependencies (headers, environment) differ here are reported and skipped. The recording "
          "is untrusted: " +
          kReplayHelp.trust +
          "; a program with an option that has side effects or is unknown is refused. Exit code 1 when anything "
          "failed, was refused or the recording was damaged.");
  auto options = std::make_shared<ReplayOptions>();
  command->add_option("FILE", options->file, "the recording")->required();
  command->add_option("--arch", options->archs, "architectures to compile for as well (sm_80,sm_90,sm_100a,...)")
      ->delimiter(',');
  command->add_option("--jobs,-j", options->jobs, "worker processes (default: the number of CPUs)");
  command->add_flag("--json", options->json, "print the report as JSON");
  command->add_option("--nvrtc", options->nvrtc, kReplayHelp.nvrtc_option);
  command->callback([&outcome, options] { outcome.exit_code = replay(*options); });

  CLI::App* worker = app.add_subcommand("__replay-worker", "one of replay's worker processes");
  worker->group("");  // hidden
  auto task_file = std::make_shared<std::string>();
  auto archs = std::make_shared<std::string>();
  auto log_file = std::make_shared<std::string>();
  auto outputs_dir = std::make_shared<std::string>();
  worker->add_option("TASKS", *task_file)->required();
  worker->add_option("--arch", *archs);
  worker->add_option("--log", *log_file);
  worker->add_option("--outputs", *outputs_dir);
  worker->callback([&outcome, task_file, archs, log_file, outputs_dir] {
    std::vector<std::string> list;
    for (std::size_t start = 0; start < archs->size();) {
      const std::size_t end = std::min(archs->find(',', start), archs->size());
      if (end > start) list.push_back(archs->substr(start, end - start));
      start = end + 1;
    }
    outcome.exit_code = run_replay_worker(*task_file, list, *log_file, *outputs_dir);
  });
}

}  // namespace nvrtc_cache::tools
