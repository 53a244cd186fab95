// The recording's format (core/compile_record.h, core/handle_record.h) and replay's architecture
// rewriting (tools/replay/arch_options.h): round trips, damaged files, hostile counts, and every spelling of
// the option.
#include <gtest/gtest.h>

#include "core/compile_record.h"
#include "core/handle_record.h"
#include "util/binary_io.h"
#include "tools/replay/arch_options.h"

namespace nvrtc_cache {
namespace {

core::CompileRecord sample(const std::string& source) {
  core::CompileRecord r;
  r.library_path = "/usr/local/cuda/lib64/libnvrtc.so.13";
  r.inputs.library = {13, 0, std::string("\x65\xbe\x0d\xb3", 4)};
  r.inputs.name = "k.cu";
  r.inputs.source = source;
  r.inputs.headers = {{"a.h", "#define A 1\n"}};
  r.inputs.options = {"-arch=sm_80", "-I/inc"};
  r.inputs.name_expressions = {"k<int>"};
  r.inputs.working_directory = "/work";
  r.inputs.working_directory_use = keying::WorkingDirectoryUse::kNone;
  direct::PathDependency p;
  p.path = "/inc/a.h";
  p.must_exist = true;
  r.dependencies.paths.push_back(p);
  r.dependencies.env.push_back({"NVRTC_APPEND_FLAGS", false, ""});
  return r;
}

TEST(CompileRecord, RoundTrips) {
  const core::CompileRecord r = sample("__global__ void k() {}");
  const std::string frame = core::encode_record(r);
  const std::optional<core::CompileRecord> back = core::decode_record(frame);
  ASSERT_TRUE(back);
  EXPECT_EQ(core::encode_record(*back), frame);
  EXPECT_EQ(back->inputs.name, r.inputs.name);
  EXPECT_EQ(back->inputs.options, r.inputs.options);
  EXPECT_EQ(back->dependencies.paths.size(), 1u);
  EXPECT_EQ(core::program_identity(*back), core::program_identity(r));
  EXPECT_FALSE(core::decode_record(frame + "x"));
  EXPECT_FALSE(core::decode_record(frame.substr(0, frame.size() - 1)));
}

TEST(CompileRecord, ScanReportsEveryDamagedStretchAndKeepsTheRest) {
  const std::string a = core::encode_record(sample("a")), b = core::encode_record(sample("b")),
                    c = core::encode_record(sample("c"));
  core::RecordScan scan = core::scan_records(a + b + c);
  EXPECT_EQ(scan.records.size(), 3u);
  EXPECT_TRUE(scan.damage.empty());

  std::string flipped = a + b + c;
  flipped[a.size() + b.size() / 2] ^= 0x01;
  scan = core::scan_records(flipped);
  ASSERT_EQ(scan.records.size(), 2u);
  EXPECT_EQ(scan.records[1].inputs.source, "c");
  ASSERT_EQ(scan.damage.size(), 1u);
  EXPECT_EQ(scan.damage[0].offset, a.size());
  EXPECT_EQ(scan.damage[0].length, b.size());

  for (std::size_t cut = 1; cut < c.size(); cut += 7) {  // a torn tail, at every length
    scan = core::scan_records(a + b + c.substr(0, cut));
    EXPECT_EQ(scan.records.size(), 2u);
    ASSERT_EQ(scan.damage.size(), 1u);
    EXPECT_EQ(scan.damage[0].what, "a truncated record") << cut;
  }
  scan = core::scan_records("garbage" + a);
  EXPECT_EQ(scan.records.size(), 1u);
  EXPECT_EQ(scan.damage.size(), 1u);
  // A frame of a later version is skipped whole.
  std::string later = a;
  later[4] = 2;
  scan = core::scan_records(later + b);
  EXPECT_EQ(scan.records.size(), 1u);
  ASSERT_EQ(scan.damage.size(), 1u);
}

core::HandleCallRecord link_sample() {
  core::HandleCallRecord r;
  r.library = core::JitLibrary::nvjitlink;
  r.library_path = "/usr/local/cuda/lib64/libnvJitLink.so.13";
  r.working_directory = "/work";
  r.inputs.library = {13, 0, std::string("\x01\x02", 2)};
  r.inputs.options = {"-arch=sm_90", "-lto"};
  r.inputs.inputs = {{3, false, "input0", "LTO-IR bytes"}, {2, true, "callee.ptx", ".version 9.0"}, {4, false, {}, ""}};
  return r;
}

TEST(HandleRecord, RoundTripsAndSitsBesideCompileRecords) {
  const core::HandleCallRecord r = link_sample();
  const std::string frame = core::encode_handle_record(r);
  const std::optional<core::HandleCallRecord> back = core::decode_handle_record(frame);
  ASSERT_TRUE(back);
  EXPECT_EQ(core::encode_handle_record(*back), frame);
  EXPECT_EQ(back->inputs.inputs.size(), 3u);
  EXPECT_FALSE(back->inputs.inputs[2].name);  // NULL stays NULL
  EXPECT_TRUE(back->inputs.inputs[1].from_file);
  EXPECT_EQ(core::handle_call_identity(*back), core::handle_call_identity(r));
  EXPECT_FALSE(core::decode_handle_record(frame + "x"));
  EXPECT_FALSE(core::decode_record(frame));  // never taken for an NVRTC compile's

  core::HandleCallRecord nvvm = r;
  nvvm.library = core::JitLibrary::nvvm;
  const std::string compile = core::encode_record(sample("k"));
  const core::RecordScan scan = core::scan_records(compile + frame + core::encode_handle_record(nvvm) + compile);
  EXPECT_TRUE(scan.damage.empty());
  EXPECT_EQ(scan.records.size(), 2u);
  ASSERT_EQ(scan.handle_records.size(), 2u);
  EXPECT_EQ(scan.handle_records[1].library, core::JitLibrary::nvvm);
}

TEST(HandleRecord, ATruncatedOrFlippedFrameIsReportedAndTheRestKept) {
  const std::string compile = core::encode_record(sample("k"));
  const std::string frame = core::encode_handle_record(link_sample());
  for (std::size_t cut = 1; cut < frame.size(); cut += 5) {
    const core::RecordScan scan = core::scan_records(compile + frame.substr(0, cut));
    EXPECT_EQ(scan.records.size(), 1u);
    EXPECT_TRUE(scan.handle_records.empty());
    ASSERT_EQ(scan.damage.size(), 1u) << cut;
    EXPECT_EQ(scan.damage[0].what, "a truncated record") << cut;
    EXPECT_FALSE(core::decode_handle_record(frame.substr(0, cut)));
  }
  std::string flipped = frame;
  flipped[frame.size() / 2] ^= 0x10;
  const core::RecordScan scan = core::scan_records(flipped + compile);
  EXPECT_EQ(scan.records.size(), 1u);
  ASSERT_EQ(scan.damage.size(), 1u);
  EXPECT_EQ(scan.damage[0].what, "checksum mismatch");
}

// A body with a checksum a writer could compute, claiming more inputs than its bytes can hold, or an
// unknown library: rejected before anything is allocated for it.
TEST(HandleRecord, HostileCountsAndKindsAreRejected) {
  const auto framed = [](const std::string& body) {
    util::ByteWriter w;
    util::begin_frame(w, core::kHandleRecordMagic, core::kHandleRecordFormatVersion);
    w.bytes(body);
    util::append_checksum(w);
    return w.str();
  };
  const auto body = [](std::uint8_t library, std::uint64_t options, std::uint64_t inputs) {
    util::ByteWriter w;
    w.u8(library);
    w.bytes("/lib/libnvJitLink.so.13");
    w.i32(13);
    w.i32(0);
    w.bytes("id");
    w.bytes("/work");
    w.u64(options);
    w.u64(inputs);
    return w.str();
  };
  EXPECT_TRUE(core::decode_handle_record(framed(body(1, 0, 0))));
  EXPECT_FALSE(core::decode_handle_record(framed(body(3, 0, 0))));  // no such library
  EXPECT_FALSE(core::decode_handle_record(framed(body(1, 0, std::uint64_t{1} << 60))));
  EXPECT_FALSE(core::decode_handle_record(framed(body(1, ~std::uint64_t{0}, 0))));
  EXPECT_FALSE(core::decode_handle_record(framed(body(1, 0, 0) + "x")));  // trailing bytes
}

TEST(ArchOptions, RequestsAreNumbersWithAnOptionalSuffix) {
  EXPECT_EQ(tools::parse_arch_request("sm_90"), "90");
  EXPECT_EQ(tools::parse_arch_request("sm_90a"), "90a");
  EXPECT_EQ(tools::parse_arch_request("compute_100f"), "100f");
  EXPECT_EQ(tools::parse_arch_request("120"), "120");
  EXPECT_FALSE(tools::parse_arch_request("sm_"));
  EXPECT_FALSE(tools::parse_arch_request("sm_90x"));
  EXPECT_FALSE(tools::parse_arch_request("native"));
}

TEST(ArchOptions, EverySpellingKeepsItsFormAndKind) {
  using V = std::vector<std::string>;
  EXPECT_EQ(tools::options_for_arch({"-arch=sm_80", "-lineinfo"}, "90"), (V{"-arch=sm_90", "-lineinfo"}));
  EXPECT_EQ(tools::options_for_arch({"-lineinfo", "-arch", "sm_80"}, "100a"), (V{"-lineinfo", "-arch", "sm_100a"}));
  EXPECT_EQ(tools::options_for_arch({"--gpu-architecture=compute_80"}, "90"), (V{"--gpu-architecture=compute_90"}));
  EXPECT_EQ(tools::options_for_arch({"--gpu-architecture", "compute_90a"}, "100f"),
            (V{"--gpu-architecture", "compute_100f"}));
  EXPECT_EQ(tools::options_for_arch({"-arch=lto_80"}, "90"), (V{"-arch=lto_90"}));
  EXPECT_FALSE(tools::options_for_arch({"-lineinfo"}, "90"));            // no architecture: as recorded only
  EXPECT_FALSE(tools::options_for_arch({"-arch=native"}, "90"));         // not rewritable
  EXPECT_FALSE(tools::options_for_arch({"-arch"}, "90"));                // a dangling option
  EXPECT_FALSE(tools::options_for_arch({"-architecture=sm_80"}, "90"));  // not NVRTC's
}

}  // namespace
}  // namespace nvrtc_cache
