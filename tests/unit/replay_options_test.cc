// Which recorded option lists `nvrtc-cache replay` refuses (tools/replay/replay.h, replay_option_refusal):
// options with side effects in every spelling, unknown ones per NVRTC version, NUL bytes, the same
// in NVRTC_APPEND_FLAGS, and the values NVRTC passes to its internal tools (-Xcudafe beyond its
// diagnostic controls, -Xnvvm); for links and NVVM compiles, which options are refused and how a link's
// inputs are retargeted to another architecture (tools/replay/retarget.h).
#include <gtest/gtest.h>

#include "tools/replay/replay.h"

namespace nvrtc_cache {
namespace {

const keying::LibraryIdentity k130{13, 0, "id"};

std::string refusal(const std::vector<std::string>& options, const char* append_flags = nullptr,
                    const keying::LibraryIdentity& library = k130) {
  return tools::replay_option_refusal(options, library, append_flags);
}

TEST(ReplayOptions, WhatACacheableCompileHoldsIsReplayed) {
  EXPECT_EQ(refusal({"-arch=sm_80", "-I/inc", "-DX=1", "--std=c++17", "-lineinfo", "-dlto"}), "");
  EXPECT_EQ(refusal({"-arch", "sm_90"}), "");
  EXPECT_EQ(refusal({"-Xcudafe", "--diag_suppress=177,550"}), "");
  EXPECT_EQ(refusal({"-Xcudafe=--diag_suppress=set_but_not_used"}), "");
  EXPECT_EQ(refusal({"-arch=sm_80"}, "-DY=2 -Xcudafe --display_error_number"), "");
}

TEST(ReplayOptions, SideEffectsAreRefusedInEverySpelling) {
  for (const std::vector<std::string>& options : std::vector<std::vector<std::string>>{{"--create-pch=/home/u/.bashrc"},
                                                                                       {"--time", "/home/u/.bashrc"},
                                                                                       {"-arch", "--time=/x"},
                                                                                       {"--pch"},
                                                                                       {"--use-pch=/x"},
                                                                                       {"--fdevice-time-trace=/x"}}) {
    const std::string why = refusal(options);
    EXPECT_NE(why.find("has side effects"), std::string::npos) << options[0] << ": " << why;
  }
  const std::string why = refusal({"-arch=sm_80"}, "--time=/x");
  EXPECT_NE(why.find("NVRTC_APPEND_FLAGS' option --time=/x has side effects"), std::string::npos) << why;
}

// The bundled headers' install writes where the record says; --pch-dir alone writes nothing (measured).
TEST(ReplayOptions, BundledHeadersAreRefusedAndAPchDirectoryAloneIsReplayed) {
  const std::string why = refusal({"-arch=sm_80", "--use-bundled-headers=/home/u/x"}, nullptr, {13, 5, "id"});
  EXPECT_NE(why.find("--use-bundled-headers=/home/u/x installs headers"), std::string::npos) << why;
  EXPECT_EQ(refusal({"-arch=sm_80", "--pch-dir=/x", "--pch-messages=false"}), "");
}

TEST(ReplayOptions, UnknownOptionsAreRefusedPerNvrtcVersion) {
  EXPECT_NE(refusal({"--no-such-option"}).find("option --no-such-option is unknown for NVRTC 13.0"), std::string::npos);
  EXPECT_NE(refusal({"-arch=sm_80"}, "\"quoted\"").find("unknown"), std::string::npos);
  EXPECT_NE(refusal({"--enable-tile"}).find("unknown for NVRTC 13.0"), std::string::npos);  // 13.5's
  EXPECT_EQ(refusal({"--enable-tile"}, nullptr, {13, 5, "id"}), "");
}

TEST(ReplayOptions, ANulByteIsRefused) {
  EXPECT_NE(refusal({std::string("-arch=sm_80\0--create-pch=/x", 27)}).find("NUL"), std::string::npos);
}

TEST(ReplayOptions, ValuesForNvrtcsInternalToolsAreRefused) {
  for (const std::vector<std::string>& options :
       std::vector<std::vector<std::string>>{{"-Xcudafe", "--list=/x"},
                                             {"-Xcudafe=--xref=/x"},
                                             {"-Xcudafe", "--error_output=/x"},
                                             {"-Xcudafe", "--diag_suppress=1 --list=/x"},
                                             {"-Xcudafe"},
                                             {"-Xnvvm", "-opt=3"},
                                             {"-D", "-Xnvvm"}}) {
    const std::string why = refusal(options);
    EXPECT_NE(why.find("internal tools"), std::string::npos) << options[0] << ": " << why;
  }
  EXPECT_NE(refusal({"-arch=sm_80"}, "-Xcudafe --xref=/x").find("NVRTC_APPEND_FLAGS'"), std::string::npos);
}

core::HandleCallRecord link_record(std::vector<std::string> options) {
  core::HandleCallRecord r;
  r.library = core::JitLibrary::nvjitlink;
  r.inputs.library = {13, 0, "id"};
  r.inputs.options = std::move(options);
  return r;
}

TEST(ReplayOptions, LinksWithOptionsForInternalToolsOrUnknownOnesAreRefused) {
  EXPECT_EQ(tools::handle_replay_refusal(link_record({"-arch=sm_90", "-lto", "-Xptxas=-v", "-Xptxas=-O2"})), "");
  EXPECT_NE(tools::handle_replay_refusal(link_record({"-arch=sm_90", "-Xptxas=--output-file=/tmp/x"})), "");
  EXPECT_NE(tools::handle_replay_refusal(link_record({"-arch=sm_90", "-Xnvvm=-opt=3"})), "");
  EXPECT_NE(tools::handle_replay_refusal(link_record({"-arch=sm_90", "-no-such-option"})), "");
  EXPECT_NE(tools::handle_replay_refusal(link_record({std::string("-arch=sm_90\0x", 13)})), "");
}

TEST(ReplayOptions, ALinkIsReplayedAsRecordedAndPerArchitecture) {
  const std::vector<tools::ReplayVariant> v =
      tools::replay_variants(link_record({"-arch=sm_90", "-lto"}).inputs.options, {"80", "90", "86"});
  ASSERT_EQ(v.size(), 3u);  // sm_90 is the recorded variant
  EXPECT_EQ(v[1].label, "sm_80");
  EXPECT_EQ(v[1].arch, "80");
  EXPECT_EQ(v[2].options, (std::vector<std::string>{"-arch=sm_86", "-lto"}));
}

TEST(ReplayRetarget, RecordedOutputsAreReplacedAndOthersSkipOrPass) {
  const std::string caller = "caller LTO-IR for sm_90", callee = "callee LTO-IR for sm_90";
  tools::RetargetLookup lookup;
  lookup.producer = [&](const std::string& digest) -> std::optional<std::string> {
    if (digest == tools::output_digest(caller) || digest == tools::output_digest(callee)) return "a compile";
    return std::nullopt;
  };
  lookup.retargeted = [&](const std::string& digest, const std::string& arch) -> std::optional<std::string> {
    if (digest == tools::output_digest(caller) && arch == "80") return "caller LTO-IR for sm_80";
    if (digest == tools::output_digest(callee) && arch == "80") return "callee LTO-IR for sm_80";
    return std::nullopt;
  };
  const int kCubin = 1, kLtoir = 3, kFatbin = 4;
  std::vector<keying::HandleInput> inputs = {{kLtoir, false, "a", caller}, {kLtoir, false, "b", callee}};
  tools::RetargetedInputs out = tools::link_inputs_for_arch(inputs, "80", lookup);
  EXPECT_EQ(out.skipped, "");
  EXPECT_EQ(out.replaced, 2u);
  EXPECT_EQ(out.inputs[0].bytes, "caller LTO-IR for sm_80");
  EXPECT_EQ(out.inputs[1].name, "b");

  out = tools::link_inputs_for_arch(inputs, "86", lookup);  // the producer has no sm_86 output
  EXPECT_NE(out.skipped.find("has no output for 86"), std::string::npos) << out.skipped;

  inputs.push_back({kFatbin, false, "libprebuilt.fatbin", "fatbin"});  // a container: passed as recorded
  out = tools::link_inputs_for_arch(inputs, "80", lookup);
  EXPECT_EQ(out.skipped, "");
  EXPECT_EQ(out.inputs[2].bytes, "fatbin");

  inputs.push_back({kCubin, false, "prebuilt.cubin", "a CUBIN for sm_90"});
  out = tools::link_inputs_for_arch(inputs, "80", lookup);
  EXPECT_NE(out.skipped.find("input 3 (CUBIN 'prebuilt.cubin')"), std::string::npos) << out.skipped;
  EXPECT_NE(out.skipped.find("no recorded compile produced"), std::string::npos) << out.skipped;

  // A file added by path whose retargeted content would differ: its path is keyed; skipped.
  std::vector<keying::HandleInput> file = {{kLtoir, true, "caller.ltoir", caller}};
  out = tools::link_inputs_for_arch(file, "80", lookup);
  EXPECT_NE(out.skipped.find("is a file"), std::string::npos) << out.skipped;
}

}  // namespace
}  // namespace nvrtc_cache
