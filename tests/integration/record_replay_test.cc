// Record (NVRTC_CACHE_RECORD, `nvrtc-cache run --record`) and `nvrtc-cache replay` with the real
// NVRTC in real processes: records from many processes at once are all whole; a replay for another
// architecture, in each spelling of the option, stores exactly what a later client on that GPU looks
// up (it hits, with NVRTC's bytes); a dependency changed since the recording is reported, not
// stored; another NVRTC build is refused; a damaged recording is reported without a crash. A crafted
// recording is trusted with nothing: a library it names runs no code unless the file passes the
// checks (tests/clients/hostile_library.cc leaves a marker when loaded), --nvrtc is held to the same checks,
// and a program whose options would write files is refused, in the command and in a worker.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <glob.h>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "core/compile_record.h"
#include "tests/support/cli_testing.h"
#include "tests/support/harness.h"
#include "util/elf_identity.h"

namespace nvrtc_cache {
namespace {

using namespace testing;
namespace fs = std::filesystem;

constexpr const char* kSource =
    "#include \"probe_dep.h\"\nextern \"C\" __global__ void k(int* x) { x[0] = PROBE_VALUE; }\n";

// A program with a header on disk (in its own include directory), compiled by the probe's
// source_file scenario with PROBE_ARCH's architecture option.
struct Program {
  TempDir dir;
  std::string source = dir.path() + "/kernel.cu";
  std::string include = dir.path() + "/include";
  Program() {
    write_file(source, kSource);
    fs::create_directory(include);
    fs::copy_file(kIncludeDir + "/probe_dep.h", include + "/probe_dep.h");
  }
  EnvVars env(const std::string& arch) const {
    return {{"PROBE_SOURCE_FILE", source}, {"PROBE_INCLUDE_DIR", include}, {"PROBE_ARCH", arch}};
  }
};

EnvVars merged(EnvVars a, const EnvVars& b) {
  for (const auto& [k, v] : b) a[k] = v;
  return a;
}

nlohmann::json replay(const std::string& record, const std::string& cache_dir, const std::vector<std::string>& extra,
                      int expected_exit = 0) {
  std::vector<std::string> args = {"replay", record, "--json", "--jobs", "2"};
  args.insert(args.end(), extra.begin(), extra.end());
  const ProcessResult r = cli(args, {{"NVRTC_CACHE_DIR", cache_dir}});
  EXPECT_EQ(r.exit_code, expected_exit) << r.out << r.err;
  try {
    return nlohmann::json::parse(r.out);
  } catch (...) {
    ADD_FAILURE() << "not JSON: " << r.out << r.err;
    return {};
  }
}

TEST(Record, EightProcessesAtOnceAppendWholeRecords) {
  TempDir dir;
  const std::string record = dir.path() + "/compiles.rec";
  const std::vector<std::string> scenarios = {"trivial", "ptx", "template", "headers"};
  std::vector<ProcessResult> results(8);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < results.size(); ++i) {
    threads.emplace_back([&, i] {
      results[i] = probe(scenarios, merged(shim_env(dir.path() + "/cache"), {{"NVRTC_CACHE_RECORD", record}}));
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& r : results) ASSERT_EQ(r.exit_code, 0) << r.err;
  const core::RecordScan scan = core::scan_records(read_file(record));
  EXPECT_TRUE(scan.damage.empty()) << scan.damage.front().what << " at " << scan.damage.front().offset;
  ASSERT_EQ(scan.records.size(), 8 * scenarios.size());  // hits and misses alike
  std::map<std::string, int> per_name;
  for (const auto& r : scan.records) {
    ++per_name[r.inputs.name.value_or("")];
    EXPECT_EQ(r.library_path.front(), '/');
    EXPECT_FALSE(r.inputs.library.build_id.empty());
    EXPECT_EQ(r.inputs.library.major, 13);
    EXPECT_FALSE(r.inputs.source.empty());
    EXPECT_FALSE(r.dependencies.paths.empty()) << "NVRTC probes paths in every compile";
  }
  EXPECT_EQ(per_name.size(), scenarios.size());
  for (const auto& [name, n] : per_name) EXPECT_EQ(n, 8) << name;
  // The counters confirm both kinds were recorded: the 8 processes shared one cache.
  EXPECT_GT(get(counters_of(dir.path() + "/cache"), "hits"), 0);
}

TEST(Record, RunRecordSetsTheFileAndRecordsHeadersAndNameExpressions) {
  TempDir dir;
  const std::string record = dir.path() + "/r.rec";
  const ProcessResult r = cli({"run", "--record", "r.rec", "--", NVRTC_PROBE_PATH, "template", "headers"},
                              {{"NVRTC_CACHE_DIR", dir.path() + "/cache"}}, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const core::RecordScan scan = core::scan_records(read_file(record));
  ASSERT_TRUE(scan.damage.empty());
  ASSERT_EQ(scan.records.size(), 2u);
  bool names = false, headers = false;
  for (const auto& rec : scan.records) {
    names = names || !rec.inputs.name_expressions.empty();
    headers = headers || !rec.inputs.headers.empty();
    EXPECT_EQ(rec.inputs.working_directory, fs::canonical(dir.path()).string());
  }
  EXPECT_TRUE(names && headers);
}

// For each spelling of the architecture option: record on one GPU, replay for others into an empty
// cache, and a client on each other GPU, from another directory, is served NVRTC's exact bytes.
TEST(Replay, EachArchitectureSpellingGivesTheKeyTheAppComputes) {
  struct Case {
    std::string recorded;
    std::vector<std::string> requested;
    std::vector<std::string> client;  // what the app passes on those GPUs
  };
  const std::vector<Case> cases = {
      {"-arch=sm_80", {"sm_90", "sm_100"}, {"-arch=sm_90", "-arch=sm_100"}},
      {"-arch sm_80", {"sm_90a"}, {"-arch sm_90a"}},
      {"--gpu-architecture=compute_80",
       {"sm_90", "sm_120"},
       {"--gpu-architecture=compute_90", "--gpu-architecture=compute_120"}},
      {"--gpu-architecture compute_80", {"compute_100f"}, {"--gpu-architecture compute_100f"}},
  };
  Program program;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.recorded);
    TempDir dir;
    const std::string record = dir.path() + "/compiles.rec";
    const std::string prewarmed = dir.path() + "/prewarmed";
    ASSERT_EQ(probe({"source_file"}, merged(merged(shim_env(dir.path() + "/recording-cache"), program.env(c.recorded)),
                                            {{"NVRTC_CACHE_RECORD", record}}))
                  .exit_code,
              0);
    std::string archs;
    for (const auto& a : c.requested) archs += (archs.empty() ? "" : ",") + a;
    const nlohmann::json report = replay(record, prewarmed, {"--arch", archs});
    EXPECT_EQ(report.value("compiled", 0), static_cast<int>(1 + c.requested.size())) << report.dump(1);
    EXPECT_EQ(report.value("failed", -1), 0);
    for (const std::string& arch : c.client) {
      SCOPED_TRACE(arch);
      const ProcessResult direct = probe({"source_file"}, program.env(arch));
      ASSERT_EQ(direct.exit_code, 0) << direct.err;
      ASSERT_NE(direct.out.find("compile rc=0"), std::string::npos) << direct.out;  // NVRTC accepts it
      const store::Counters before = counters_of(prewarmed);
      TempDir elsewhere;
      const ProcessResult served =
          probe({"source_file"}, merged(shim_env(prewarmed), program.env(arch)), elsewhere.path());
      ASSERT_EQ(served.exit_code, 0) << served.err;
      const store::Counters after = counters_of(prewarmed);
      EXPECT_EQ(get(after, "hits") - get(before, "hits"), 1);
      EXPECT_EQ(get(after, "misses") - get(before, "misses"), 0);
      EXPECT_TRUE(served.out == direct.out) << "served bytes differ from NVRTC's";
    }
  }
}

TEST(Replay, ADependencyChangedSinceTheRecordingIsReportedNotStored) {
  Program program;
  TempDir dir;
  const std::string record = dir.path() + "/compiles.rec";
  ASSERT_EQ(probe({"source_file"}, merged(merged(shim_env(dir.path() + "/a"), program.env("-arch=sm_80")),
                                          {{"NVRTC_CACHE_RECORD", record}}))
                .exit_code,
            0);
  write_file(program.include + "/probe_dep.h", "#pragma once\n#define PROBE_VALUE 43\n");
  const nlohmann::json report = replay(record, dir.path() + "/b", {"--arch", "sm_90"});
  EXPECT_EQ(report.value("compiled", -1), 0);
  EXPECT_EQ(report.value("skipped", 0), 2);
  ASSERT_FALSE(report["compiles"].empty());
  EXPECT_NE(report["compiles"][0].value("detail", "").find("probe_dep.h"), std::string::npos) << report.dump(1);
  EXPECT_EQ(get(counters_of(dir.path() + "/b"), "stores"), 0);
}

std::string cu13_wheel_nvrtc() {
  glob_t found{};
  const std::string pattern =
      std::string(NVRTC_CACHE_SOURCE_DIR) + "/.venv/lib/python3*/site-packages/nvidia/cu13/lib/libnvrtc.so.13";
  std::string path;
  if (glob(pattern.c_str(), 0, nullptr, &found) == 0 && found.gl_pathc > 0) path = found.gl_pathv[0];
  globfree(&found);
  return path;
}

TEST(Replay, AnotherNvrtcBuildIsRefused) {
  const std::string other = cu13_wheel_nvrtc();
  if (other.empty()) NVRTC_CACHE_SKIP_WITHOUT_PYPI("the nvidia-cuda-nvrtc 13 wheel is not installed");
  TempDir dir;
  const std::string record = dir.path() + "/compiles.rec";
  ASSERT_EQ(probe({"ptx"}, merged(shim_env(dir.path() + "/a"), {{"NVRTC_CACHE_RECORD", record}})).exit_code, 0);
  core::RecordScan scan = core::scan_records(read_file(record));
  ASSERT_EQ(scan.records.size(), 1u);
  // The recording names a path where another build of NVRTC 13 now is (a machine with the wheel's).
  scan.records[0].library_path = other;
  write_file(record, core::encode_record(scan.records[0]));
  const ProcessResult r = cli({"replay", record, "--arch", "sm_90"}, {{"NVRTC_CACHE_DIR", dir.path() + "/b"}});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("build-id"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("refusing"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("2 refused"), std::string::npos) << r.out;
  EXPECT_EQ(get(counters_of(dir.path() + "/b"), "stores"), 0);
}

TEST(Replay, ADamagedRecordingIsReportedWithoutACrash) {
  TempDir dir;
  const std::string record = dir.path() + "/compiles.rec";
  ASSERT_EQ(probe({"trivial", "ptx", "template"}, merged(shim_env(dir.path() + "/a"), {{"NVRTC_CACHE_RECORD", record}}))
                .exit_code,
            0);
  const std::string bytes = read_file(record);
  const core::RecordScan intact = core::scan_records(bytes);
  ASSERT_EQ(intact.records.size(), 3u);
  const std::size_t first = core::encode_record(intact.records[0]).size();

  std::string flipped = bytes;
  flipped[first + 40] = static_cast<char>(flipped[first + 40] ^ 0x10);  // inside the second record
  write_file(dir.path() + "/flipped.rec", flipped);
  nlohmann::json report = replay(dir.path() + "/flipped.rec", dir.path() + "/b", {}, 1);
  EXPECT_EQ(report.value("records", 0), 2);
  EXPECT_EQ(report["damaged"].size(), 1u);
  EXPECT_EQ(report.value("compiled", 0), 2);

  write_file(dir.path() + "/truncated.rec", bytes.substr(0, bytes.size() - 7));
  report = replay(dir.path() + "/truncated.rec", dir.path() + "/c", {}, 1);
  EXPECT_EQ(report.value("records", 0), 2);
  EXPECT_EQ(report["damaged"].size(), 1u);

  write_file(dir.path() + "/garbage.rec", std::string(1000, '\x5a') + "NVRR" + std::string(30, '\xff'));
  report = replay(dir.path() + "/garbage.rec", dir.path() + "/d", {}, 1);
  EXPECT_EQ(report.value("records", -1), 0);
  EXPECT_FALSE(report["damaged"].empty());
}

// tests/clients/hostile_library.cc copied into a directory of its own, standing for a library another user
// planted: its constructor creates `marker` when it is loaded, in any process given the environment.
struct PlantedLibrary {
  TempDir dir;
  std::string lib_dir = dir.path() + "/lib";
  std::string library = lib_dir + "/libnvrtc.so.13";
  std::string marker = dir.path() + "/loaded";
  PlantedLibrary() {
    fs::create_directory(lib_dir);
    ::chmod(lib_dir.c_str(), 0755);
    fs::copy_file(HOSTILE_NVRTC_PATH, library);
    ::chmod(library.c_str(), 0755);
  }
  std::string build_id() const {
    std::string why;
    const std::optional<util::ElfIdentity> id = util::read_elf_identity(read_file(library), why);
    EXPECT_TRUE(id) << why;
    return id ? id->build_id : "";
  }
  EnvVars env(const std::string& cache_dir) const {
    return {{"NVRTC_CACHE_DIR", cache_dir}, {"NVRTC_CACHE_TEST_MARKER", marker}};
  }
  bool loaded() const { return fs::exists(marker); }
};

// One real compile recorded (the probe's "ptx" program), to be edited into a crafted recording.
core::CompileRecord recorded_compile(const std::string& dir) {
  const std::string record = dir + "/genuine.rec";
  EXPECT_EQ(probe({"ptx"}, merged(shim_env(dir + "/recording-cache"), {{"NVRTC_CACHE_RECORD", record}})).exit_code, 0);
  core::RecordScan scan = core::scan_records(read_file(record));
  EXPECT_EQ(scan.records.size(), 1u);
  return scan.records.empty() ? core::CompileRecord{} : scan.records[0];
}

TEST(ReplayUntrusted, ALibraryARecordingNamesRunsNoCodeUnlessItPassesTheChecks) {
  PlantedLibrary planted;
  // The library does run code when loaded: a plain dlopen (the unlinked probe's PROBE_LOAD=path:).
  (void)run_process({NVRTC_PROBE_UNLINKED_PATH, "trivial"},
                    {{"PROBE_LOAD", "path:" + planted.library}, {"NVRTC_CACHE_TEST_MARKER", planted.marker}});
  ASSERT_TRUE(planted.loaded()) << "the stand-in library must leave its marker when loaded";
  fs::remove(planted.marker);

  TempDir dir;
  core::CompileRecord crafted = recorded_compile(dir.path());
  crafted.library_path = planted.library;
  const std::string record = dir.path() + "/crafted.rec";
  struct Case {
    const char* what;
    std::string build_id;  // the recording's claim
    std::function<void()> arrange;
    std::string says;
  };
  const std::vector<Case> cases = {
      {"the genuine NVRTC's build-id", crafted.inputs.library.build_id, [] {}, "build-id"},
      {"its own build-id, the file writable by others", planted.build_id(),
       [&] { ::chmod(planted.library.c_str(), 0757); }, planted.library + " is writable by every user"},
      {"its own build-id, its directory writable by others", planted.build_id(),
       [&] { ::chmod(planted.lib_dir.c_str(), 0777); }, planted.lib_dir + " is writable by every user"},
      {"its own build-id, owned by another user", planted.build_id(),
       [&] { ASSERT_EQ(::chown(planted.library.c_str(), 65534, 65534), 0); }, "is owned by"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    if (std::string(c.what).find("another user") != std::string::npos && geteuid() != 0) continue;  // needs root
    c.arrange();
    crafted.inputs.library.build_id = c.build_id;
    write_file(record, core::encode_record(crafted));
    const ProcessResult r = cli({"replay", record}, planted.env(dir.path() + "/cache"));
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("refusing"), std::string::npos) << r.err;
    EXPECT_NE(r.out.find("1 refused"), std::string::npos) << r.out;
    EXPECT_FALSE(planted.loaded()) << "replay ran the library's code";
    ::chmod(planted.lib_dir.c_str(), 0755);
    ::chmod(planted.library.c_str(), 0755);
    if (geteuid() == 0) {
      ASSERT_EQ(::chown(planted.library.c_str(), 0, 0), 0);
    }
  }

  // The control: the caller's own file, writable by no one else, with the build-id claimed, is
  // trusted as the caller is: loaded (and then refused for lacking NVRTC's functions).
  crafted.inputs.library.build_id = planted.build_id();
  write_file(record, core::encode_record(crafted));
  const ProcessResult r = cli({"replay", record}, planted.env(dir.path() + "/cache"));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(planted.loaded()) << "the checks, not a failure to load, kept it out above: " << r.err;
}

TEST(ReplayUntrusted, NvrtcFlagNamesTheLibraryUnderTheSameChecks) {
  TempDir dir;
  core::CompileRecord moved = recorded_compile(dir.path());
  moved.library_path = "/opt/elsewhere/lib/libnvrtc.so.13";  // the recording machine's layout
  const core::CompileRecord as_recorded = moved;
  const std::string record = dir.path() + "/moved.rec";
  write_file(record, core::encode_record(moved));
  // Gone from there: the same build found where the stack would find it (the toolkit here) is used,
  // and said so.
  const ProcessResult found = cli({"replay", record, "--json"}, {{"NVRTC_CACHE_DIR", dir.path() + "/a"}});
  EXPECT_EQ(found.exit_code, 0) << found.out << found.err;
  EXPECT_NE(found.err.find("/opt/elsewhere/lib/libnvrtc.so.13 is gone; using "), std::string::npos) << found.err;
  EXPECT_NE(found.err.find("the same build"), std::string::npos) << found.err;
  nlohmann::json report = nlohmann::json::parse(found.out, nullptr, false);
  EXPECT_EQ(report.value("compiled", 0), 1) << found.out;
  // Gone, and no library of that build anywhere: refused.
  moved.inputs.library.build_id = std::string(20, '\x5a');
  write_file(record, core::encode_record(moved));
  report = replay(record, dir.path() + "/a2", {}, 1);
  EXPECT_EQ(report.value("refused", 0), 1) << report.dump(1);
  moved = as_recorded;
  write_file(record, core::encode_record(moved));

  // A symlink to the toolkit's NVRTC (as libnvrtc.so.13 -> libnvrtc.so.13.0.88 is): resolved, accepted.
  const std::string link = dir.path() + "/libnvrtc.so.13";
  fs::create_symlink(std::string(CUDA_NVRTC_LIBRARY_DIR) + "/libnvrtc.so.13", link);
  report = replay(record, dir.path() + "/b", {"--nvrtc", link});
  EXPECT_EQ(report.value("compiled", 0), 1) << report.dump(1);

  PlantedLibrary planted;
  moved.inputs.library.build_id = planted.build_id();
  write_file(record, core::encode_record(moved));
  ::chmod(planted.library.c_str(), 0757);
  const ProcessResult r = cli({"replay", record, "--nvrtc", planted.library}, planted.env(dir.path() + "/c"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("writable by every user"), std::string::npos) << r.err;
  EXPECT_FALSE(planted.loaded()) << "replay ran the library's code";
}

constexpr const char* kPrecious = "the user's own bytes\n";

// NVRTC itself does write the files these options name (so the refusals below are what keeps them).
TEST(ReplayUntrusted, NvrtcWritesTheFilesTheseOptionsName) {
  Program program;
  TempDir dir;
  for (const std::string option : {"--create-pch=", "--time=", "-Xcudafe --list="}) {
    SCOPED_TRACE(option);
    const std::string victim = dir.path() + "/victim" + std::to_string(option.size());
    write_file(victim, kPrecious);
    const ProcessResult r =
        probe({"source_file"}, merged(program.env("-arch=sm_80"), {{"PROBE_OPTIONS", option + victim}}));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(read_file(victim), kPrecious);
  }
}

TEST(ReplayUntrusted, AProgramWithOptionsACompileCannotHoldIsRefusedAndTheOthersReplayed) {
  TempDir dir;
  const std::string genuine = dir.path() + "/genuine.rec";
  ASSERT_EQ(probe({"trivial", "ptx", "template"},
                  merged(shim_env(dir.path() + "/recording-cache"), {{"NVRTC_CACHE_RECORD", genuine}}))
                .exit_code,
            0);
  const core::RecordScan scan = core::scan_records(read_file(genuine));
  ASSERT_EQ(scan.records.size(), 3u);
  const std::string pch_victim = dir.path() + "/precious.pch";
  const std::string time_victim = dir.path() + "/precious.csv";
  write_file(pch_victim, kPrecious);
  write_file(time_victim, kPrecious);
  const std::string list_victim = dir.path() + "/precious.lst";
  write_file(list_victim, kPrecious);
  const std::map<std::string, std::string> crafted_options = {{"pch.cu", "--create-pch=" + pch_victim},
                                                              {"time.cu", "--time=" + time_victim},
                                                              {"unknown.cu", "--no-such-option"},
                                                              {"cudafe.cu", "-Xcudafe --list=" + list_victim}};
  std::string bytes = read_file(genuine);
  for (const auto& [name, option] : crafted_options) {
    core::CompileRecord crafted = scan.records[1];
    crafted.inputs.name = name;
    for (std::size_t at = 0; at < option.size();) {  // "-Xcudafe --list=F": two options
      const std::size_t space = std::min(option.find(' ', at), option.size());
      crafted.inputs.options.push_back(option.substr(at, space - at));
      at = space + 1;
    }
    bytes += core::encode_record(crafted);
  }
  const std::string record = dir.path() + "/crafted.rec";
  write_file(record, bytes);

  const nlohmann::json report = replay(record, dir.path() + "/cache", {}, 1);
  EXPECT_EQ(report.value("programs", 0), 7);
  EXPECT_EQ(report.value("compiled", 0), 3) << report.dump(1);
  EXPECT_EQ(report.value("refused", 0), 4) << report.dump(1);
  for (const auto& compile : report["compiles"]) {
    const std::string name = compile.value("program", "");
    const auto crafted = crafted_options.find(name);
    if (crafted == crafted_options.end()) {
      EXPECT_EQ(compile.value("status", ""), "stored") << compile.dump();
      continue;
    }
    EXPECT_EQ(compile.value("status", ""), "refused") << compile.dump();
    const std::string detail = compile.value("detail", "");
    EXPECT_NE(detail.find(crafted->second), std::string::npos) << detail;
    const std::string why = name == "unknown.cu"  ? "is unknown for NVRTC 13."
                            : name == "cudafe.cu" ? "internal tools"
                                                  : "has side effects";
    EXPECT_NE(detail.find(why), std::string::npos) << detail;
  }
  EXPECT_EQ(read_file(pch_victim), kPrecious);
  EXPECT_EQ(read_file(time_victim), kPrecious);
  EXPECT_EQ(read_file(list_victim), kPrecious);
  EXPECT_EQ(get(counters_of(dir.path() + "/cache"), "stores"), 3);
}

// A worker checks its task file again (a task file is only ever written by the command, which
// already refused these): options, then the library, before anything is loaded or compiled.
TEST(ReplayUntrusted, AWorkerRefusesWhatTheCommandWouldHave) {
  TempDir dir;
  const core::CompileRecord genuine = recorded_compile(dir.path());
  const std::string victim = dir.path() + "/precious.pch";
  write_file(victim, kPrecious);
  core::CompileRecord pch = genuine;
  pch.inputs.options.push_back("--create-pch=" + victim);
  PlantedLibrary planted;
  core::CompileRecord hostile = genuine;
  hostile.library_path = planted.library;
  const std::string tasks = dir.path() + "/tasks";
  write_file(tasks, core::encode_record(pch) + core::encode_record(hostile));
  const ProcessResult r = run_process({NVRTC_CACHE_CLI_PATH, "__replay-worker", tasks, "--log", dir.path() + "/log"},
                                      merged(shim_env(dir.path() + "/cache"), planted.env(dir.path() + "/cache")));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("0\t0\trefused\toption --create-pch="), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1\t0\trefused\t" + planted.library + " is a library with build-id"), std::string::npos)
      << r.out;
  EXPECT_EQ(read_file(victim), kPrecious);
  EXPECT_FALSE(planted.loaded());
}

}  // namespace
}  // namespace nvrtc_cache
