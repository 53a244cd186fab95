// The shim's dynamic exports: the JIT libraries' functions under their version nodes and the libc
// entry points the file watch observes, nothing else (so the preloaded shim brings no symbols into
// the host). In shim_tests and in the emulated aarch64 subset (shim_smoke_tests).
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <string>

namespace nvrtc_cache {
namespace {

TEST(Shim, ExportsOnlyTheJitLibrariesAndTheObservedLibcEntryPoints) {
  FILE* pipe = popen(("nm -D --defined-only " + std::string(NVRTC_CACHE_SHIM_PATH)).c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  // The watched libc functions (shim/watch/watched_libc.def), each under its glibc version, and dlsym.
  std::set<std::string> libc = {"dlsym"};
  std::set<std::string> nodes = {"libnvrtc.so.11.2",   "libnvrtc.so.12",     "libnvrtc.so.13", "libnvJitLink.so.12",
                                 "libnvJitLink.so.13", "libnvvm.so.4",       "GLIBC_2.34"};
#define NVRTC_CACHE_WATCHED(name, version) \
  libc.insert(#name);                      \
  nodes.insert(#version);
#include "shim/watch/watched_libc.def"
#undef NVRTC_CACHE_WATCHED
  char line[512];
  std::map<std::string, std::set<std::string>> nvrtc;  // name -> versions
  std::map<std::string, std::set<std::string>> nvjitlink;  // name -> versions
  std::map<std::string, std::string> nvvm;                  // name -> version
  while (fgets(line, sizeof line, pipe)) {
    std::istringstream fields(line);
    std::string address, type, symbol;
    fields >> address >> type >> symbol;
    if (symbol.empty() || nodes.count(symbol)) continue;
    const auto at = symbol.find('@');
    const std::string name = symbol.substr(0, at);
    const std::string version = at == std::string::npos ? "" : symbol.substr(at);
    if (name.rfind("nvrtc", 0) == 0 || name == "__nvrtcCPEx") {
      nvrtc[name].insert(version);
      continue;
    }
    if (name.rfind("nvJitLink", 0) == 0 || name.rfind("__nvJitLink", 0) == 0) {
      nvjitlink[name].insert(version);
      continue;
    }
    if (name.rfind("nvvm", 0) == 0) {
      nvvm[name] = version;
      continue;
    }
    EXPECT_TRUE(libc.count(name)) << "unexpected export " << symbol;
  }
  pclose(pipe);
  // Every function of every 12.x/13.x nvrtc.h (the 24 of 13.0, 12.x's 2 NVVM getters, 13.5's 5) and
  // __nvrtcCPEx; the private __nvrtcNvvmHandle only in proxy mode.
  EXPECT_EQ(nvrtc.size(), 32u);
  EXPECT_EQ(nvrtc.count("__nvrtcNvvmHandle"), 0u);
  const std::set<std::string> all_majors = {"@@libnvrtc.so.13", "@libnvrtc.so.12", "@libnvrtc.so.11.2"};
  EXPECT_EQ(nvrtc["nvrtcCompileProgram"], all_majors);
  // nvJitLink 13's 15 hooked functions under their plain names and the release suffixes of 13.0 to
  // 13.5, in its default node; nvJitLink 12's 13 (all but 13.1's LTO-IR getters) under their plain
  // names (beside 13's) and the suffixes of 12.0 to 12.9, as non-default versions in 12's node; never
  // nvJitLinkVersion or the private __nvJitLinkAPI.
  EXPECT_EQ(nvjitlink.size(), 15u * 7u + 13u * 10u);
  const std::set<std::string> both_majors = {"@@libnvJitLink.so.13", "@libnvJitLink.so.12"};
  for (const auto& [name, versions] : nvjitlink) {
    const bool lto_ir_getter = name.find("LTOIR") != std::string::npos;
    if (name.find("_12_") != std::string::npos) {
      EXPECT_EQ(versions, std::set<std::string>{"@libnvJitLink.so.12"}) << name;
      EXPECT_FALSE(lto_ir_getter) << name;
    } else if (name.rfind("nvJitLink", 0) == 0 && !lto_ir_getter) {
      EXPECT_EQ(versions, both_majors) << name;
    } else {
      EXPECT_EQ(versions, std::set<std::string>{"@@libnvJitLink.so.13"}) << name;
    }
  }
  EXPECT_EQ(nvjitlink.count("__nvJitLinkCreate_13_5"), 1u);
  EXPECT_EQ(nvjitlink.count("__nvJitLinkCreate_12_0"), 1u);
  EXPECT_EQ(nvjitlink.count("__nvJitLinkGetInfoLog_12_9"), 1u);
  EXPECT_EQ(nvjitlink.count("__nvJitLinkGetLinkedLTOIR_12_9"), 0u);
  EXPECT_EQ(nvjitlink.count("nvJitLinkVersion"), 0u);
  EXPECT_EQ(nvjitlink.count("__nvJitLinkAPI"), 0u);
  // libNVVM's 10 program functions; never nvvmVersion, nvvmIRVersion or nvvmGetErrorString.
  EXPECT_EQ(nvvm.size(), 10u);
  for (const auto& [name, version] : nvvm) EXPECT_EQ(version, "@@libnvvm.so.4") << name;
  EXPECT_EQ(nvvm.count("nvvmVersion"), 0u);
}

}  // namespace
}  // namespace nvrtc_cache
