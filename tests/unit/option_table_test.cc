// The option table (libraries/nvrtc/options.h): which options are known for which NVRTC, their effects,
// and values given in the next option.
#include "libraries/nvrtc/options.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace nvrtc_cache::keying {
namespace {

constexpr NvrtcVersion k120{12, 0}, k129{12, 9}, k130{13, 0}, k135{13, 5}, k139{13, 9};

OptionScan scan(const std::vector<std::string>& options, NvrtcVersion version,
                const std::optional<std::string_view>& append = std::nullopt) {
  const std::vector<std::string_view> given(options.begin(), options.end());
  return scan_compile_options(given, append, version);
}

// nvrtc.h lists 60 option entries from 12.9 through 13.0 (57 options: --dopt, --ptxas-options and
// --device-stack-protector are listed twice, once per spelling) and 74 in 13.5 (71 options); the
// table adds the two every one of them accepts undocumented (-Xcudafe, -Xnvvm). A newer NVRTC keeps
// them.
TEST(OptionTable, KnowsEachNvrtcsDocumentedOptions) {
  EXPECT_EQ(known_option_count(k120), 59u);
  EXPECT_EQ(known_option_count(k129), 59u);
  EXPECT_EQ(known_option_count(k130), 59u);
  EXPECT_EQ(known_option_count(k135), 73u);
  EXPECT_EQ(known_option_count(k139), 73u);
  EXPECT_EQ(known_option_count({11, 8}), 0u);
}

TEST(OptionTable, CommonSpellingsAreKnown) {
  for (const std::vector<std::string>& options :
       std::vector<std::vector<std::string>>{{"-arch=sm_80"},
                                             {"-arch", "sm_80"},
                                             {"--gpu-architecture=compute_90"},
                                             {"--gpu-architecture", "sm_90"},
                                             {"-std=c++17"},
                                             {"--std=c++20"},
                                             {"-DNAME"},
                                             {"-DNAME=1"},
                                             {"-D", "NAME"},
                                             {"--define-macro=A=B"},
                                             {"-I/usr/include"},
                                             {"-I", "rel/dir"},
                                             {"--include-path=/x"},
                                             {"-include", "h.h"},
                                             {"--pre-include=h.h"},
                                             {"-Xptxas", "-v"},
                                             {"-Xptxas=-O1"},
                                             {"--ptxas-options=-v"},
                                             {"-G"},
                                             {"-lineinfo"},
                                             {"-dopt", "on"},
                                             {"-dopt=on"},
                                             {"-rdc=true"},
                                             {"-rdc", "true"},
                                             {"-dlto"},
                                             {"--optix-ir"},
                                             {"-default-device"},
                                             {"--device-as-default-execution-space"},
                                             {"-w"},
                                             {"-use_fast_math"},
                                             {"--fmad=false"},
                                             {"-ftz=true"},
                                             {"-maxrregcount=32"},
                                             {"--split-compile=0"},
                                             {"-diag-suppress=177"},
                                             {"--no-cache"},
                                             {"-U", "X"},
                                             {"-ewp"},
                                             {"-restrict"},
                                             {"-minimal"},
                                             {"-fdevice-syntax-only"},
                                             {"-frandom-seed=3"},
                                             {"-Xcudafe", "--diag_suppress=177"},
                                             {"-Xcudafe=--diag_suppress=177"},
                                             {"-Xnvvm", "-opt=3"}}) {
    const OptionScan s = scan(options, k130);
    EXPECT_FALSE(s.unknown) << options[0] << ": " << *s.unknown;
    EXPECT_FALSE(s.side_effect) << options[0];
  }
}

TEST(OptionTable, AnOptionIsUnknownBeforeTheNvrtcThatDocumentsIt) {
  for (const char* tile : {"--enable-tile", "-tile-only", "-default-tile", "--tile-preview=SIMT",
                           "-Werror=all-warnings", "--fmax-errors=3", "-utf-8"}) {
    EXPECT_EQ(scan({"-arch=sm_100", tile}, k130).unknown, std::optional<std::string>(tile));
    EXPECT_FALSE(scan({"-arch=sm_100", tile}, k135).unknown) << tile;
    EXPECT_FALSE(scan({"-arch=sm_100", tile}, k139).unknown) << tile;
  }
  EXPECT_TRUE(scan({"--enable-tile"}, k135).extra_output);
  EXPECT_TRUE(scan({"-dlto"}, k130).extra_output);
  EXPECT_FALSE(scan({"-arch=sm_80"}, k130).extra_output);
}

TEST(OptionTable, UnknownOptionsAndMalformedFlags) {
  EXPECT_EQ(scan({"--definitely-not-an-option"}, k135).unknown,
            std::optional<std::string>("--definitely-not-an-option"));
  EXPECT_EQ(scan({"-arch=sm_80", "extra"}, k130).unknown, std::optional<std::string>("extra"));
  EXPECT_EQ(scan({"--restrict=1"}, k130).unknown, std::optional<std::string>("--restrict=1"));  // a flag takes no value
  EXPECT_EQ(scan({"-O3"}, k130).unknown, std::optional<std::string>("-O3"));
  EXPECT_EQ(scan({"-arch sm_80"}, k130).unknown, std::optional<std::string>("-arch sm_80"));  // one option with a space
}

TEST(OptionTable, SideEffectsAreFoundAlsoWhereTheyCouldBeAValue) {
  for (const std::vector<std::string>& options : std::vector<std::vector<std::string>>{{"--create-pch=a.pch"},
                                                                                       {"-use-pch", "a.pch"},
                                                                                       {"-pch"},
                                                                                       {"--time=t.csv"},
                                                                                       {"-fdevice-time-trace=t.json"},
                                                                                       {"-arch", "--time=t.csv"},
                                                                                       {"-Xptxas", "-pch"}}) {
    EXPECT_TRUE(scan(options, k130).side_effect) << options[0];
  }
}

// PCH options measured to change nothing on their own (docs/nvrtc-versions.md) are keyed like any.
TEST(OptionTable, PchDirectoryAndMessagesAloneAreKeyed) {
  for (const std::vector<std::string>& options : std::vector<std::vector<std::string>>{
           {"--pch-dir=/tmp"}, {"-pch-dir", "/tmp"}, {"--pch-verbose=true"}, {"--pch-messages=false"}}) {
    const OptionScan s = scan(options, k130);
    EXPECT_FALSE(s.side_effect) << options[0];
    EXPECT_FALSE(s.unknown) << options[0];
  }
}

// --use-bundled-headers=DIR is keyed, its directories named in order; NVRTC 13.5 accepts no other
// spelling (measured: "--use-bundled-headers", "--use-bundled-headers DIR" and a single dash are
// "unrecognized option").
TEST(OptionTable, BundledHeadersNameTheirDirectories) {
  const OptionScan s = scan({"--use-bundled-headers=/tmp/h", "-arch=sm_80"}, k135, "--use-bundled-headers=rel/");
  EXPECT_FALSE(s.side_effect);
  EXPECT_FALSE(s.unknown);
  EXPECT_EQ(s.bundled_headers, (std::vector<std::string>{"/tmp/h", "rel/"}));
  EXPECT_TRUE(scan({"--use-bundled-headers=/tmp/h"}, k130).unknown);
  for (const std::vector<std::string>& options :
       std::vector<std::vector<std::string>>{{"--use-bundled-headers"},
                                             {"--use-bundled-headers", "/tmp/h"},
                                             {"-use-bundled-headers=/tmp/h"},
                                             {"--use-bundled-headers="}}) {
    EXPECT_TRUE(scan(options, k135).unknown) << options[0];
  }
}

// NVRTC_APPEND_FLAGS is scanned like the options: NVRTC appends it.
TEST(OptionTable, AppendFlagsAreScannedToo) {
  EXPECT_FALSE(scan({"-arch=sm_80"}, k130, "-lineinfo -DX=1").unknown);
  EXPECT_EQ(scan({"-arch=sm_80"}, k130, " --bogus ").unknown, std::optional<std::string>("--bogus"));
  EXPECT_TRUE(scan({"-arch=sm_80"}, k130, "--create-pch=x").side_effect);
  EXPECT_TRUE(scan({"-arch=sm_80"}, k130, "-DX=\"a b\"").unknown) << "quotes: how NVRTC splits them is not known";
}

}  // namespace
}  // namespace nvrtc_cache::keying
