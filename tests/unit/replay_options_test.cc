// Which recorded option lists `nvrtc-cache replay` refuses (tools/replay.h, replay_option_refusal):
// options with side effects in every spelling, unknown ones per NVRTC version, NUL bytes, the same
// in NVRTC_APPEND_FLAGS, and the values NVRTC passes to its internal tools (-Xcudafe beyond its
// diagnostic controls, -Xnvvm).
#include <gtest/gtest.h>

#include "tools/replay.h"

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
                                                                                       {"--pch-dir=/x"},
                                                                                       {"--fdevice-time-trace=/x"}}) {
    const std::string why = refusal(options);
    EXPECT_NE(why.find("has side effects"), std::string::npos) << options[0] << ": " << why;
  }
  const std::string why = refusal({"-arch=sm_80"}, "--time=/x");
  EXPECT_NE(why.find("NVRTC_APPEND_FLAGS' option --time=/x has side effects"), std::string::npos) << why;
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

}  // namespace
}  // namespace nvrtc_cache
