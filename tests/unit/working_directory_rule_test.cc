// The working-directory rule against the measured table (NVRTC 13.0, the same program compiled from
// two directories): which option spellings keep the directory in the key.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "keying/working_directory_rule.h"

namespace nvrtc_cache::keying {
namespace {

using Use = WorkingDirectoryUse;

Use use_of(std::vector<std::string> options, std::optional<std::string> name = "k.cu",
           std::optional<std::string_view> append = std::nullopt) {
  return working_directory_use(options, name, append);
}

TEST(WorkingDirectoryRule, MeasuredNeutralOptionsLeaveTheDirectoryOut) {
  const std::vector<std::vector<std::string>> neutral = {
      {},
      {"-arch=sm_80"},
      {"-arch", "sm_90", "--gpu-architecture=compute_90", "--gpu-architecture", "sm_90"},
      {"-std=c++17", "--std", "c++20"},
      {"-DA=1", "-D", "B=2", "-UA", "--define-macro=C", "--undefine-macro", "C", "-DPATH=\"x\""},
      {"-Iinc", "-I", "sub", "--include-path=../inc", "-I.", "-include", "pre.h", "--pre-include=pre.h"},
      {"-rdc=true", "--relocatable-device-code=false", "-dc", "--device-c", "-ewp", "--extensible-whole-program"},
      {"-dopt=on", "--dopt", "off", "--use_fast_math", "-ftz=true", "-prec-div=false", "-prec-sqrt=false",
       "-fmad=false"},
      {"-maxrregcount=32", "--maxrregcount", "40", "-split-compile=2", "--fdevice-syntax-only", "-default-device"},
      {"--device-as-default-execution-space", "-minimal", "--restrict", "--extra-device-vectorization"},
      {"--device-int128", "-w", "--disable-warnings", "--diag-suppress=177", "-diag-error", "20",
       "--display-error-number"},
      {"-Xptxas", "-v", "-Xptxas=-O1", "--ptxas-options=-g", "--ptxas-options", "-lineinfo"},
  };
  for (const auto& options : neutral) {
    EXPECT_EQ(use_of(options), Use::kNone) << ::testing::PrintToString(options);
    EXPECT_EQ(use_of(options, std::nullopt), Use::kNone) << ::testing::PrintToString(options);
  }
}

TEST(WorkingDirectoryRule, DebugInfoLtoAndOptixIrEmbedTheDirectory) {
  for (const char* option : {"-G", "--device-debug", "-dlto", "--dlink-time-opt", "--optix-ir"}) {
    EXPECT_EQ(use_of({"-arch=sm_80", option}), Use::kAlways) << option;
    EXPECT_EQ(use_of({"-arch=sm_80", option}, "/abs/k.cu"), Use::kAlways) << option;
  }
  EXPECT_EQ(use_of({"-G", "-dopt=on"}, "/abs/k.cu"), Use::kAlways);  // kept simple: measured only for -G
}

TEST(WorkingDirectoryRule, LineInfoDependsOnTheProgramName) {
  for (const char* option : {"-lineinfo", "--generate-line-info"}) {
    EXPECT_EQ(use_of({option}, "k.cu"), Use::kAlways);
    EXPECT_EQ(use_of({option}, "./k.cu"), Use::kAlways);
    EXPECT_EQ(use_of({option}, ""), Use::kAlways);
    EXPECT_EQ(use_of({option}, std::nullopt), Use::kAlways);  // "default_program"
    EXPECT_EQ(use_of({option}, "/abs/k.cu"), Use::kThroughFoundRelativePaths);
    EXPECT_EQ(use_of({option, "-G"}, "/abs/k.cu"), Use::kAlways);
  }
}

TEST(WorkingDirectoryRule, UnknownOrMalformedOptionsKeepTheDirectory) {
  const std::vector<std::vector<std::string>> unknown = {
      {"--definitely-not-an-option"},
      {"-Wno-deprecated-gpu-targets"},
      {"-gen-lto"},
      {"stray-value"},
      {"-"},
      {"--"},
      {"-arch"},              // its value missing
      {"-lineinfo=true"},     // a flag given a value
      {"-Xptxas", "-O3,-v"},  // a ptxas option not measured
      {"-Xptxas", "--compile-as-tools-patch"},
      {"-I"},  // its value missing
  };
  for (const auto& options : unknown) EXPECT_EQ(use_of(options), Use::kAlways) << ::testing::PrintToString(options);
}

TEST(WorkingDirectoryRule, AppendFlagsCountLikeTheProgramsOptions) {
  EXPECT_EQ(use_of({"-arch=sm_80"}, "k.cu", ""), Use::kNone);
  EXPECT_EQ(use_of({"-arch=sm_80"}, "k.cu", "  -DX=1\t-std=c++17 "), Use::kNone);
  EXPECT_EQ(use_of({"-arch=sm_80"}, "k.cu", "-G"), Use::kAlways);
  EXPECT_EQ(use_of({"-arch=sm_80"}, "/abs/k.cu", "-lineinfo"), Use::kThroughFoundRelativePaths);
  EXPECT_EQ(use_of({"-arch=sm_80"}, "k.cu", "-lineinfo"), Use::kAlways);
  EXPECT_EQ(use_of({"-arch=sm_80"}, "k.cu", "--bogus"), Use::kAlways);
  EXPECT_EQ(use_of({"-arch=sm_80"}, "k.cu", "-DX=\"a b\""), Use::kAlways);  // quoting: not measured
  EXPECT_EQ(use_of({"-arch"}, "k.cu", "sm_80"), Use::kAlways);              // read on their own: not measured
  EXPECT_EQ(use_of({"-I", "-lineinfo"}, "k.cu"), Use::kNone);               // measured: NVRTC takes it as -I's value
}

}  // namespace
}  // namespace nvrtc_cache::keying
