// Records and `nvrtc-cache replay` of a whole JIT pipeline with the real libraries, each step in its
// own process: a process compiles CUDA C++ with NVRTC -dlto and links the LTO-IR with nvJitLink -lto
// (tests/clients/link_client.cc), and compiles NVVM IR (tests/clients/nvvm_client.cc), all for
// sm_90, under the shim with NVRTC_CACHE_RECORD set; the recording is replayed for sm_80 and sm_86
// into an empty cache; then the same pipeline for sm_80 (and sm_86) is served entirely from it (no
// compile, link or NVVM compile misses) with the bytes of an uncached run. A link whose inputs no
// recorded compile produced is skipped for other architectures, with its reason; a damaged recording
// is reported, never a crash.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "core/compile_record.h"
#include "tests/support/cli_testing.h"
#include "tests/support/harness.h"
#include "tests/support/process.h"

namespace nvrtc_cache::testing {
namespace {

// The pipeline's two clients, for architecture `arch` ("90").
std::vector<std::vector<std::string>> pipeline() {
  return {{LINK_CLIENT_PATH, "lto"}, {NVVM_CLIENT_PATH, "ptx", "verified", "gen_lto"}};
}

EnvVars arch_env(const std::string& arch) { return {{"LINK_ARCH", arch}, {"NVVM_ARCH", arch}}; }

EnvVars with(EnvVars env, const EnvVars& more) {
  for (const auto& [k, v] : more) env[k] = v;
  return env;
}

// Every client's stdout, run with `env`.
std::vector<std::string> run_pipeline(const EnvVars& env) {
  std::vector<std::string> outputs;
  for (const auto& argv : pipeline()) {
    const ProcessResult r = run_process(argv, env);
    EXPECT_EQ(r.exit_code, 0) << argv.front() << ": " << r.err;
    outputs.push_back(r.out);
  }
  return outputs;
}

nlohmann::json replay_json(const std::string& record, const std::string& cache, const std::vector<std::string>& archs,
                           int expected_exit = 0) {
  std::vector<std::string> args = {"replay", record, "--json", "--jobs", "2"};
  for (const std::string& a : archs) args.insert(args.end(), {"--arch", a});
  const ProcessResult r = cli(args, {{"NVRTC_CACHE_DIR", cache}});
  EXPECT_EQ(r.exit_code, expected_exit) << r.out << r.err;
  try {
    return nlohmann::json::parse(r.out);
  } catch (...) {
    ADD_FAILURE() << "not JSON: " << r.out << r.err;
    return {};
  }
}

// Records the sm_90 pipeline into `record` (its own cache in `dir`).
void record_pipeline(const TempDir& dir, const std::string& record) {
  (void)run_pipeline(with(shim_env(dir.path() + "/recording-cache"), {{"NVRTC_CACHE_RECORD", record}}));
}

TEST(JitReplay, RecordsHoldTheLinkAndTheNvvmCompilesWithEveryInput) {
  TempDir dir;
  const std::string record = dir.path() + "/pipeline.rec";
  record_pipeline(dir, record);
  const core::RecordScan scan = core::scan_records(read_file(record));
  EXPECT_TRUE(scan.damage.empty());
  EXPECT_EQ(scan.records.size(), 2u);  // the caller and the callee, -dlto
  ASSERT_EQ(scan.handle_records.size(), 4u);
  std::size_t links = 0, nvvm = 0;
  for (const core::HandleCallRecord& r : scan.handle_records) {
    EXPECT_EQ(r.library_path.front(), '/');
    EXPECT_FALSE(r.inputs.library.build_id.empty());
    EXPECT_FALSE(r.working_directory.empty());
    if (r.library == core::JitLibrary::nvjitlink) {
      ++links;
      EXPECT_EQ(r.inputs.options, (std::vector<std::string>{"-arch=sm_90", "-lto"}));
      ASSERT_EQ(r.inputs.inputs.size(), 2u);
      EXPECT_EQ(r.inputs.inputs[0].name, "input0");
      EXPECT_EQ(r.inputs.inputs[1].name, "input1");
      EXPECT_FALSE(r.inputs.inputs[0].bytes.empty());
    } else {
      ++nvvm;
      EXPECT_EQ(r.inputs.options.front(), "-arch=compute_90");
      EXPECT_GE(r.inputs.inputs.size(), 2u);
    }
  }
  EXPECT_EQ(links, 1u);
  EXPECT_EQ(nvvm, 3u);
}

TEST(JitReplay, APipelineRecordedForSm90IsServedOnOtherArchitecturesAfterReplay) {
  TempDir dir;
  const std::string record = dir.path() + "/pipeline.rec";
  record_pipeline(dir, record);

  const std::string cache = dir.path() + "/replayed-cache";
  const nlohmann::json report = replay_json(record, cache, {"sm_80", "sm_86"});
  EXPECT_EQ(report["compiled"], 6) << report.dump(2);  // 2 programs x (as recorded, sm_80, sm_86)
  EXPECT_EQ(report["link_totals"]["stored"], 3) << report.dump(2);
  EXPECT_EQ(report["link_totals"]["skipped"], 0) << report.dump(2);
  EXPECT_EQ(report["nvvm_totals"]["stored"], 9) << report.dump(2);
  EXPECT_EQ(report["nvvm_totals"]["failed"], 0) << report.dump(2);

  for (const std::string arch : {"80", "86"}) {
    SCOPED_TRACE("sm_" + arch);
    const store::Counters before = counters_of(cache);
    const std::vector<std::string> uncached = run_pipeline(arch_env(arch));
    const std::vector<std::string> served = run_pipeline(with(shim_env(cache), arch_env(arch)));
    ASSERT_EQ(served.size(), uncached.size());
    for (std::size_t i = 0; i < served.size(); ++i) EXPECT_EQ(served[i], uncached[i]) << pipeline()[i].front();
    EXPECT_NE(uncached[0].find("complete=0"), std::string::npos) << uncached[0];
    const store::Counters after = counters_of(cache);
    EXPECT_EQ(get(after, "hits") - get(before, "hits"), 2);
    EXPECT_EQ(get(after, "link_hits") - get(before, "link_hits"), 1);
    EXPECT_EQ(get(after, "nvvm_hits") - get(before, "nvvm_hits"), 3);
    // The replay's own compiles were misses; the clients made none.
    for (const char* misses :
         {"misses", "link_misses", "nvvm_misses", "uncacheable", "link_uncacheable", "nvvm_uncacheable"}) {
      EXPECT_EQ(get(after, misses) - get(before, misses), 0) << misses;
    }
  }
}

// Without the compiles that produced its LTO-IR, a link can only be replayed as recorded: for any
// other architecture it is skipped, saying why, and nothing is stored for it.
TEST(JitReplay, ALinkWhoseInputsNoRecordedCompileProducedIsSkippedForOtherArchitectures) {
  TempDir dir;
  const std::string record = dir.path() + "/pipeline.rec";
  record_pipeline(dir, record);
  const core::RecordScan scan = core::scan_records(read_file(record));
  std::string links_only;
  for (const core::HandleCallRecord& r : scan.handle_records) {
    if (r.library == core::JitLibrary::nvjitlink) links_only += core::encode_handle_record(r);
  }
  const std::string link_record = dir.path() + "/links.rec";
  write_file(link_record, links_only);
  const nlohmann::json report = replay_json(link_record, dir.path() + "/cache", {"sm_80"});
  EXPECT_EQ(report["link_totals"]["stored"], 1) << report.dump(2);  // as recorded
  EXPECT_EQ(report["link_totals"]["skipped"], 1) << report.dump(2);
  ASSERT_EQ(report["links"].size(), 2u);
  EXPECT_EQ(report["links"][1]["variant"], "sm_80");
  EXPECT_NE(report["links"][1]["detail"].get<std::string>().find("no recorded compile produced"), std::string::npos)
      << report.dump(2);
}

// numba-cuda's IR names its target (its mangled names' ABI tag encodes the compute capability): an
// NVVM program whose IR has such a name is replayed as recorded only, and skipped for every other
// architecture, saying why, instead of storing entries that would never be looked up.
TEST(JitReplay, AnNvvmProgramWhoseNamesEncodeItsTargetIsSkippedForOtherArchitectures) {
  TempDir dir;
  const std::string record = dir.path() + "/pipeline.rec";
  record_pipeline(dir, record);
  const core::RecordScan scan = core::scan_records(read_file(record));
  const std::string numba_name = "_ZN8__main__5applyB2v1B92cw51cXTLSUwv1sDUaKthoaNgo";
  std::string numba_like;
  std::size_t renamed = 0;
  for (core::HandleCallRecord r : scan.handle_records) {
    if (r.library != core::JitLibrary::nvvm) continue;
    for (keying::HandleInput& input : r.inputs.inputs) {
      for (std::size_t at = input.bytes.find("@apply"); at != std::string::npos; at = input.bytes.find("@apply", at)) {
        input.bytes.replace(at + 1, 5, numba_name);
        at += numba_name.size();
        ++renamed;
      }
    }
    numba_like += core::encode_handle_record(r);
    break;  // one NVVM program
  }
  ASSERT_GT(renamed, 0u) << "no NVVM module defines @apply";
  const std::string numba_record = dir.path() + "/numba.rec";
  write_file(numba_record, numba_like);
  const nlohmann::json report = replay_json(numba_record, dir.path() + "/cache", {"sm_80"});
  EXPECT_EQ(report["nvvm_totals"]["stored"], 1) << "as recorded: " << report.dump(2);
  EXPECT_EQ(report["nvvm_totals"]["skipped"], 1) << report.dump(2);
  ASSERT_EQ(report["nvvm_compiles"].size(), 2u) << report.dump(2);
  EXPECT_EQ(report["nvvm_compiles"][1]["status"], "skipped");
  EXPECT_NE(report["nvvm_compiles"][1]["detail"].get<std::string>().find("numba-cuda"), std::string::npos)
      << report.dump(2);
}

TEST(JitReplay, ADamagedOrTruncatedRecordingIsReportedNotACrash) {
  TempDir dir;
  const std::string record = dir.path() + "/pipeline.rec";
  record_pipeline(dir, record);
  const std::string bytes = read_file(record);
  const std::size_t last_frame = bytes.rfind("NVRH");
  ASSERT_NE(last_frame, std::string::npos);

  const std::string truncated = dir.path() + "/truncated.rec";
  write_file(truncated, bytes.substr(0, last_frame + 40));
  nlohmann::json report = replay_json(truncated, dir.path() + "/cache-1", {}, 1);
  ASSERT_EQ(report["damaged"].size(), 1u) << report.dump(2);
  EXPECT_EQ(report["damaged"][0]["what"], "a truncated record");
  EXPECT_EQ(report["link_and_nvvm_records"], 3);

  std::string flipped = bytes;
  flipped[last_frame + 30] = static_cast<char>(flipped[last_frame + 30] ^ 0x40);
  const std::string damaged = dir.path() + "/damaged.rec";
  write_file(damaged, flipped);
  report = replay_json(damaged, dir.path() + "/cache-2", {}, 1);
  ASSERT_EQ(report["damaged"].size(), 1u) << report.dump(2);
  EXPECT_EQ(report["damaged"][0]["what"], "checksum mismatch");
  EXPECT_EQ(report["link_and_nvvm_records"], 3);
}

}  // namespace
}  // namespace nvrtc_cache::testing
