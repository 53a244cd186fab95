// Where the real NVRTC, nvJitLink and libNVVM are found at run time (shim/interpose/library_search.h),
// over fake directory trees: cuda.pathfinder's order (a wheel directory in every site-packages before
// the next wheel directory, 13 before 12; conda; the loader's directories; CUDA_PATH before
// CUDA_HOME; /usr/local/cuda last), the proxy's own directory skipped, one file found once, the
// site-packages of a venv's interpreter (with and without the system's packages) and of a plain one,
// and /etc/ld.so.conf's includes.
#include <gtest/gtest.h>

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "shim/interpose/library_search.h"

namespace nvrtc_cache {
namespace {

namespace fs = std::filesystem;
using shim::interpose::find_library;
using shim::interpose::FoundLibrary;
using shim::interpose::interpreter_site_packages;
using shim::interpose::ld_so_conf_dirs;
using shim::interpose::RealLibrary;
using shim::interpose::search_library;
using shim::interpose::SearchRoots;
using shim::interpose::spec_of;

class LibrarySearch : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern =
        (std::getenv("TMPDIR") ? std::string(std::getenv("TMPDIR")) : "/tmp") + "/nvrtc-search-XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(root_, ignored);
  }
  // A file at root/relative (its directories made); returns its path.
  std::string file(const std::string& relative, const std::string& text = "") {
    const fs::path path = fs::path(root_) / relative;
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
    return path.string();
  }
  std::string dir(const std::string& relative) {
    const fs::path path = fs::path(root_) / relative;
    fs::create_directories(path);
    return path.string();
  }
  std::string at(const std::string& relative) const { return (fs::path(root_) / relative).string(); }
  SearchRoots no_roots() const {
    SearchRoots roots;
    roots.toolkit_roots = {at("usr/local/cuda")};
    return roots;
  }
  static std::vector<std::string> paths(const std::vector<FoundLibrary>& found) {
    std::vector<std::string> out;
    for (const FoundLibrary& each : found) out.push_back(each.path);
    return out;
  }

  std::string root_;
};

TEST_F(LibrarySearch, FollowsPathfindersOrderAcrossEveryPlace) {
  SearchRoots roots = no_roots();
  roots.site_packages = {at("venv/site"), at("user/site")};
  roots.conda_prefix = at("conda");
  roots.loader_dirs = {at("ld_path"), at("conf_dir")};
  roots.cuda_path = at("cuda_path");
  roots.cuda_path_variable = "CUDA_HOME";
  const std::vector<std::string> expected = {
      file("user/site/nvidia/cu13/lib/libnvrtc.so.13"),        // cu13 in every site first
      file("venv/site/nvidia/cuda_nvrtc/lib/libnvrtc.so.12"),  // then the 12.x wheel
      file("conda/lib/libnvrtc.so.13"),
      file("ld_path/libnvrtc.so.13"),
      file("conf_dir/libnvrtc.so.12"),
      file("cuda_path/lib64/libnvrtc.so.13"),
      file("cuda_path/lib64/libnvrtc.so.12"),  // in one directory, 13 before 12
      file("usr/local/cuda/lib64/libnvrtc.so.13"),
  };
  const std::vector<FoundLibrary> found = search_library(spec_of(RealLibrary::kNvrtc), roots);
  EXPECT_EQ(paths(found), expected);
  ASSERT_EQ(found.size(), expected.size());
  EXPECT_EQ(found[0].found_via, "site-packages");
  EXPECT_EQ(found[2].found_via, "conda");
  EXPECT_EQ(found[3].found_via, "system");
  EXPECT_EQ(found[5].found_via, "CUDA_HOME");
  EXPECT_EQ(found[7].found_via, at("usr/local/cuda"));
  EXPECT_EQ(find_library(spec_of(RealLibrary::kNvrtc), roots)->path, expected[0]);
}

TEST_F(LibrarySearch, TheVenvsWheelWinsOverTheToolkit) {
  SearchRoots roots = no_roots();
  roots.site_packages = {at("venv/lib/python3.11/site-packages")};
  file("usr/local/cuda/lib64/libnvrtc.so.13");
  roots.loader_dirs = {at("usr/local/cuda/lib64")};
  const std::string wheel = file("venv/lib/python3.11/site-packages/nvidia/cu13/lib/libnvrtc.so.13");
  EXPECT_EQ(find_library(spec_of(RealLibrary::kNvrtc), roots)->path, wheel);
  fs::remove(wheel);
  EXPECT_EQ(find_library(spec_of(RealLibrary::kNvrtc), roots)->path, at("usr/local/cuda/lib64/libnvrtc.so.13"));
  EXPECT_EQ(find_library(spec_of(RealLibrary::kNvrtc), roots)->found_via, "system");
}

TEST_F(LibrarySearch, EachLibraryHasItsWheelAndToolkitDirectories) {
  SearchRoots roots = no_roots();
  roots.site_packages = {at("site")};
  const std::string jitlink12 = file("site/nvidia/nvjitlink/lib/libnvJitLink.so.12");
  const std::string nvvm12 = file("site/nvidia/cuda_nvcc/nvvm/lib64/libnvvm.so");
  const std::string nvvm_toolkit = file("usr/local/cuda/nvvm/lib64/libnvvm.so.4");
  EXPECT_EQ(paths(search_library(spec_of(RealLibrary::kNvJitLink), roots)), std::vector<std::string>{jitlink12});
  EXPECT_EQ(paths(search_library(spec_of(RealLibrary::kNvvm), roots)),
            (std::vector<std::string>{nvvm12, nvvm_toolkit}));
  EXPECT_TRUE(search_library(spec_of(RealLibrary::kNvrtc), roots).empty());
  EXPECT_FALSE(find_library(spec_of(RealLibrary::kNvrtc), roots).has_value());
}

TEST_F(LibrarySearch, SkipsTheProxysOwnDirectoryAndFindsAFileOnce) {
  SearchRoots roots = no_roots();
  const std::string proxy = file("proxy/libnvrtc.so.13");
  const std::string real = file("real/libnvrtc.so.13");
  ASSERT_EQ(::symlink(at("real").c_str(), at("real_link").c_str()), 0);
  roots.loader_dirs = {at("proxy"), at("real_link"), at("real"), ""};
  roots.skip_dirs = {at("proxy")};
  EXPECT_EQ(paths(search_library(spec_of(RealLibrary::kNvrtc), roots)),
            std::vector<std::string>{at("real_link") + "/libnvrtc.so.13"});
  roots.skip_dirs.clear();
  EXPECT_EQ(find_library(spec_of(RealLibrary::kNvrtc), roots)->path, proxy);
  dir("dir_named_like/libnvrtc.so.13");  // a directory of that name is no library
  roots.loader_dirs = {at("dir_named_like")};
  EXPECT_TRUE(search_library(spec_of(RealLibrary::kNvrtc), roots).empty());
}

TEST_F(LibrarySearch, AVenvsInterpreterSearchesItsOwnSitePackages) {
  const std::string base = file("base/bin/python3.11");
  const std::string site = dir("venv/lib/python3.11/site-packages");
  dir("base/lib/python3.11/site-packages");
  dir("home/.local/lib/python3.11/site-packages");
  dir("venv/bin");
  ASSERT_EQ(::symlink(base.c_str(), at("venv/bin/python").c_str()), 0);
  file("venv/pyvenv.cfg", "home = " + at("base/bin") + "\ninclude-system-site-packages = false\nversion = 3.11.2\n");
  EXPECT_EQ(interpreter_site_packages(at("venv/bin/python"), at("home")), std::vector<std::string>{site});

  file("venv/pyvenv.cfg", "home = " + at("base/bin") + "\ninclude-system-site-packages = true\nversion = 3.11.2\n");
  EXPECT_EQ(interpreter_site_packages(at("venv/bin/python"), at("home")),
            (std::vector<std::string>{site, at("home/.local/lib/python3.11/site-packages"),
                                      at("base/lib/python3.11/site-packages")}));
}

TEST_F(LibrarySearch, APlainInterpreterSearchesTheUsersSiteFirst) {
  const std::string python = file("prefix/bin/python3.12");
  const std::string site = dir("prefix/lib/python3.12/site-packages");
  const std::string user = dir("home/.local/lib/python3.12/site-packages");
  EXPECT_EQ(interpreter_site_packages(python, at("home")), (std::vector<std::string>{user, site}));
  EXPECT_EQ(interpreter_site_packages(python, ""), std::vector<std::string>{site});
  EXPECT_TRUE(interpreter_site_packages("", at("home")).empty());
}

TEST_F(LibrarySearch, ReadsLdSoConfAndItsIncludes) {
  file("etc/ld.so.conf.d/b.conf", "# a comment\n/opt/b\n");
  file("etc/ld.so.conf.d/a.conf", "/opt/a  # trailing\n\n/opt/a\n");
  file("etc/ld.so.conf", "/opt/first\ninclude " + at("etc/ld.so.conf.d/*.conf") + "\ninclude ld.so.conf.d/*.conf\n");
  EXPECT_EQ(ld_so_conf_dirs(at("etc/ld.so.conf")), (std::vector<std::string>{"/opt/first", "/opt/a", "/opt/b"}));
  EXPECT_TRUE(ld_so_conf_dirs(at("etc/missing.conf")).empty());
}

}  // namespace
}  // namespace nvrtc_cache
