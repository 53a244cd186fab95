// Pins the watched libc set to what NVRTC can reach: reads the dynamic imports (undefined dynamic
// symbols) of every NVRTC library the tests can load — the toolkit's, and the 13.x and 12.x wheels
// of the Python environment — and fails if one imports a libc function that opens, stats, lists or
// resolves a path, reads the environment or the user database, or starts a program, unless the
// shim watches it (shim/watch/watched_libc.def) and exports it under the very version NVRTC references
// (otherwise NVRTC's reference would bind past the shim to libc). A function with such a name that
// is in neither list below also fails: a new NVRTC must be classified before it is trusted.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "shim/watch/libc_symbols.h"

namespace nvrtc_cache {
namespace {

namespace fs = std::filesystem;

// Path-, environment-, user-database- and program-touching libc functions: each must be watched.
const std::set<std::string> kMustBeWatched = {
    "open",
    "open64",
    "__open_2",
    "__open64_2",
    "openat",
    "openat64",
    "__openat_2",
    "__openat64_2",
    "openat2",
    "creat",
    "creat64",
    "fopen",
    "fopen64",
    "freopen",
    "freopen64",
    "__fopen_internal",
    "_IO_fopen",
    "stat",
    "stat64",
    "lstat",
    "lstat64",
    "fstatat",
    "fstatat64",
    "newfstatat",
    "statx",
    "__xstat",
    "__xstat64",
    "__lxstat",
    "__lxstat64",
    "__fxstatat",
    "__fxstatat64",
    "statfs",
    "statfs64",
    "statvfs",
    "statvfs64",
    "access",
    "faccessat",
    "faccessat2",
    "euidaccess",
    "eaccess",
    "realpath",
    "__realpath_chk",
    "canonicalize_file_name",
    "readlink",
    "__readlink_chk",
    "readlinkat",
    "__readlinkat_chk",
    "opendir",
    "fdopendir",
    "scandir",
    "scandir64",
    "scandirat",
    "scandirat64",
    "glob",
    "glob64",
    "nftw",
    "nftw64",
    "ftw",
    "ftw64",
    "fts_open",
    "fts64_open",
    "getdents",
    "getdents64",
    "getdirentries",
    "getdirentries64",
    "name_to_handle_at",
    "open_by_handle_at",
    "chdir",
    "fchdir",
    "chroot",
    "getenv",
    "secure_getenv",
    "__secure_getenv",
    "__libc_secure_getenv",
    "environ",
    "__environ",
    "_environ",
    "getpwnam",
    "getpwuid",
    "getpwnam_r",
    "getpwuid_r",
    "getpwent",
    "getpwent_r",
    "fork",
    "_Fork",
    "vfork",
    "clone",
    "clone3",
    "system",
    "popen",
    "posix_spawn",
    "posix_spawnp",
};

// Path-touching functions that need no hook, and why.
const std::map<std::string, std::string> kNeedNoHook = {
    {"readdir", "reads a DIR* only a watched opendir/fdopendir made (listing taints the compile)"},
    {"readdir64", "reads a DIR* only a watched opendir/fdopendir made"},
    {"readdir_r", "reads a DIR* only a watched opendir/fdopendir made"},
    {"closedir", "closes a DIR*"},
    {"getcwd", "the working directory is keyed where the outputs depend on it (keying/working_directory_rule.h)"},
    {"__getcwd_chk", "as getcwd"},
    {"get_current_dir_name", "as getcwd"},
    {"execv", "replaces the process, or runs in a child a watched fork/posix_spawn/system/popen started"},
    {"execve", "replaces the process, or runs in a child a watched fork/posix_spawn/system/popen started"},
    {"execvp", "replaces the process, or runs in a child a watched fork/posix_spawn/system/popen started"},
    {"execvpe", "replaces the process, or runs in a child a watched fork/posix_spawn/system/popen started"},
    {"execl", "replaces the process, or runs in a child a watched fork started"},
    {"execlp", "replaces the process, or runs in a child a watched fork started"},
    {"execle", "replaces the process, or runs in a child a watched fork started"},
    {"dlopen", "loads code: NVRTC's libraries, identified by the key's NVRTC build id"},
    {"dlmopen", "loads code"},
    {"mkdir", "creates; reads nothing"},
    {"rmdir", "removes; reads nothing"},
    {"unlink", "removes; reads nothing"},
    {"remove", "removes; reads nothing"},
    {"rename", "moves; reads nothing"},
    {"mkstemp", "creates a new uniquely named file; reads nothing that existed (reading it back is watched)"},
    {"mkstemp64", "creates a new uniquely named file"},
    {"mkostemp", "creates a new uniquely named file"},
    {"mkdtemp", "creates a new uniquely named directory"},
    {"tmpfile", "creates an anonymous file"},
    {"tmpfile64", "creates an anonymous file"},
    {"setenv", "writes the environment; later reads are watched"},
    {"unsetenv", "writes the environment; later reads are watched"},
    {"putenv", "writes the environment; later reads are watched"},
    {"fdopen", "wraps a descriptor a watched open made"},
    {"__fxstat", "stats a descriptor a watched open made"},
    {"__fxstat64", "stats a descriptor a watched open made"},
    {"fstat", "stats a descriptor a watched open made"},
    {"fstat64", "stats a descriptor a watched open made"},
    {"fstatfs", "stats a descriptor a watched open made"},
    {"dladdr", "names the object at an address"},
    {"dl_iterate_phdr", "lists loaded objects"},
    {"dlclose", "unloads code"},
    {"dlerror", "reads the loader's error"},
    {"dlsym", "looks a symbol up (the shim's dlsym hook routes NVRTC lookups)"},
    {"dlvsym", "looks a symbol up"},
    {"fegetenv", "the floating-point environment, not the process's"},
    {"fesetenv", "the floating-point environment, not the process's"},
    {"pthread_attr_setdetachstate", "a thread attribute"},
    {"iconv_open",
     "libc loads its charset converters itself (not interposable); the conversion is named by the "
     "arguments"},
};

// Names that suggest a path or the environment: an import matching this must be classified above.
const std::regex kSuspicious(
    "(open|stat|access|path|link|dir|env|glob|ftw|fts_|spawn|exec|fork|system|getpw|chdir|cwd|handle_at|tmp|dents)");

struct Import {
  std::string name, version;  // version "" when unversioned
};

std::vector<std::string> lines_of(const std::string& command) {
  std::vector<std::string> lines;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return lines;
  char line[1024];
  while (fgets(line, sizeof line, pipe)) lines.emplace_back(line);
  pclose(pipe);
  return lines;
}

// "name@version" (or "name@@version", "name") from the last field of an nm line.
Import parse_symbol(const std::string& line) {
  const auto last = line.find_last_of(' ');
  std::string symbol = line.substr(last == std::string::npos ? 0 : last + 1);
  while (!symbol.empty() && (symbol.back() == '\n' || symbol.back() == '\r')) symbol.pop_back();
  const auto at = symbol.find('@');
  if (at == std::string::npos) return {symbol, ""};
  return {symbol.substr(0, at), symbol.substr(symbol.find_first_not_of('@', at))};
}

std::vector<Import> undefined_symbols(const std::string& library) {
  std::vector<Import> out;
  for (const std::string& line : lines_of("nm -D --undefined-only '" + library + "' 2>/dev/null")) {
    out.push_back(parse_symbol(line));
  }
  return out;
}

std::set<std::string> defined_symbols(const std::string& library) {
  std::set<std::string> out;
  for (const std::string& line : lines_of("nm -D --defined-only '" + library + "' 2>/dev/null")) {
    const Import s = parse_symbol(line);
    out.insert(s.version.empty() ? s.name : s.name + "@" + s.version);
  }
  return out;
}

std::set<std::string> watched_table() {
  std::set<std::string> out;
#define NVRTC_CACHE_WATCHED(name, version) out.insert(#name "@" #version);
#include "shim/watch/watched_libc.def"
#undef NVRTC_CACHE_WATCHED
  return out;
}

bool watched_name(const std::set<std::string>& table, const std::string& name) {
  for (const std::string& entry : table) {
    if (entry.substr(0, entry.find('@')) == name) return true;
  }
  return false;
}

// Every NVRTC library (and builtins library) in a directory.
std::vector<std::string> nvrtc_libraries_in(const fs::path& directory) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(directory, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("libnvrtc", 0) == 0 && name.find(".so.") != std::string::npos && !entry.is_symlink()) {
      out.push_back(entry.path().string());
    }
  }
  return out;
}

// Checks one library's imports; returns the watched imports found (for the report).
std::set<std::string> check_imports(const std::string& library) {
  static const std::set<std::string> table = watched_table();
  static const std::set<std::string> shim = defined_symbols(NVRTC_CACHE_SHIM_PATH);
  static const std::set<std::string> proxy = defined_symbols(NVRTC_CACHE_PROXY_PATH);
  std::set<std::string> watched, exempt;
  const std::vector<Import> imports = undefined_symbols(library);
  EXPECT_FALSE(imports.empty()) << "no imports read from " << library;
  for (const Import& i : imports) {
    const std::string versioned = i.version.empty() ? i.name : i.name + "@" + i.version;
    if (kMustBeWatched.count(i.name)) {
      EXPECT_TRUE(watched_name(table, i.name))
          << library << " imports " << versioned << ", which the shim does not watch";
      if (!i.version.empty()) {
        EXPECT_TRUE(table.count(versioned))
            << library << " imports " << versioned << ": shim/watch/watched_libc.def must name that version";
        EXPECT_TRUE(shim.count(versioned))
            << "the shim does not export " << versioned << " (imported by " << library << ")";
        EXPECT_TRUE(proxy.count(versioned))
            << "the proxy does not export " << versioned << " (imported by " << library << ")";
      }
      watched.insert(versioned);
    } else if (kNeedNoHook.count(i.name)) {
      exempt.insert(i.name);
    } else {
      EXPECT_FALSE(std::regex_search(i.name, kSuspicious))
          << library << " imports " << versioned << ": classify it in tests/integration/libc_coverage_test.cc";
    }
  }
  std::cout << "[ imports ] " << library << "\n  watched:";
  for (const auto& w : watched) std::cout << ' ' << w;
  std::cout << "\n  need no hook:";
  for (const auto& e : exempt) std::cout << ' ' << e;
  std::cout << "\n";
  return watched;
}

TEST(LibcCoverage, TheWatchedTableIsWhatTheShimAndTheProxyExport) {
  const std::set<std::string> shim = defined_symbols(NVRTC_CACHE_SHIM_PATH);
  const std::set<std::string> proxy = defined_symbols(NVRTC_CACHE_PROXY_PATH);
  for (const std::string& entry : watched_table()) {
    EXPECT_TRUE(shim.count(entry)) << "the shim does not export " << entry;
    EXPECT_TRUE(proxy.count(entry)) << "the proxy does not export " << entry;
    EXPECT_TRUE(kMustBeWatched.count(entry.substr(0, entry.find('@')))) << entry << " is watched but unclassified";
  }
}

TEST(LibcCoverage, ToolkitNvrtcReadsOnlyThroughWatchedFunctions) {
  const std::vector<std::string> libraries = nvrtc_libraries_in(CUDA_NVRTC_LIBRARY_DIR);
  ASSERT_FALSE(libraries.empty()) << "no NVRTC in " << CUDA_NVRTC_LIBRARY_DIR;
  bool saw_nvrtc = false;
  for (const std::string& library : libraries) {
    const std::set<std::string> watched = check_imports(library);
    if (library.find("libnvrtc.so.") != std::string::npos) {
      saw_nvrtc = true;
      EXPECT_TRUE(watched.count(std::string("open@") + shim::watch::kGlibcBaseline))
          << "the reader found no open in " << library;
    }
  }
  EXPECT_TRUE(saw_nvrtc);
}

TEST(LibcCoverage, WheelNvrtcsReadOnlyThroughWatchedFunctions) {
  const char* python = std::getenv("NVRTC_CACHE_TEST_PYTHON");
  const char* nvrtc12 = std::getenv("NVRTC_CACHE_TEST_NVRTC12");
  if (python == nullptr || nvrtc12 == nullptr) {
    GTEST_SKIP() << "set NVRTC_CACHE_TEST_PYTHON and NVRTC_CACHE_TEST_NVRTC12 (scripts/python_env.sh does)";
  }
  std::set<std::string> libraries;
  for (const std::string& l : nvrtc_libraries_in(fs::path(nvrtc12).parent_path())) {
    libraries.insert(fs::canonical(l).string());
  }
  const fs::path venv = fs::path(python).parent_path().parent_path();
  std::error_code ec;
  for (const auto& lib : fs::directory_iterator(venv / "lib", ec)) {
    for (const char* wheel : {"cu13", "cuda_nvrtc"}) {
      for (const std::string& l : nvrtc_libraries_in(lib.path() / "site-packages" / "nvidia" / wheel / "lib")) {
        libraries.insert(fs::canonical(l).string());
      }
    }
  }
  bool saw13 = false, saw12 = false;
  for (const std::string& library : libraries) {
    saw13 = saw13 || library.find("libnvrtc.so.13") != std::string::npos;
    saw12 = saw12 || library.find("libnvrtc.so.12") != std::string::npos;
    check_imports(library);
  }
  EXPECT_TRUE(saw13) << "no NVRTC 13 wheel under " << venv;
  EXPECT_TRUE(saw12) << "no NVRTC 12 wheel at " << nvrtc12;
}

}  // namespace
}  // namespace nvrtc_cache
