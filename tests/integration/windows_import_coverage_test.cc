// Pins the watched KERNEL32 set (shim/windows/watched_kernel32.def) to what the Windows NVRTC
// imports, like tests/integration/libc_coverage_test.cc does for libc: reads the PE import directory of
// nvrtc64_130_0.dll and of its builtins DLL (from scripts/windows-nvrtc.sh's DIR) directly, and fails
// if one imports a KERNEL32 function that opens, stats, lists or resolves a path, reads the
// environment, changes directory or starts a program, unless it is watched; a KERNEL32 import whose
// name says it touches files, paths, directories, drives, volumes, the environment, the command line
// or libraries and that is in neither list below also fails (a new NVRTC must be classified first).
// Every watched function must be imported by nvrtc64_130_0.dll (a hook for nothing is a stale table).
// Also pins shim/windows/crt_environment.def (the variables the proxy records when NVRTC's C runtime
// reads the environment block) to the NVRTC_* names in the DLL.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/support/harness.h"

namespace nvrtc_cache {
namespace {

// The watched functions, from the table itself.
const std::set<std::string>& watched() {
  static const std::set<std::string> names = {
#define NVRTC_CACHE_KERNEL32(name, kind) #name,
#include "shim/windows/watched_kernel32.def"
#undef NVRTC_CACHE_KERNEL32
  };
  return names;
}

// KERNEL32 functions in the path/environment class: each one NVRTC imports must be watched.
const std::set<std::string> kMustBeWatched = {
    "CreateFileA",
    "CreateFileW",
    "CreateFile2",
    "OpenFile",
    "_lopen",
    "ReOpenFile",
    "GetFileAttributesA",
    "GetFileAttributesW",
    "GetFileAttributesExA",
    "GetFileAttributesExW",
    "GetDriveTypeA",
    "GetDriveTypeW",
    "GetDiskFreeSpaceA",
    "GetDiskFreeSpaceW",
    "GetDiskFreeSpaceExW",
    "GetCompressedFileSizeW",
    "FindFirstFileA",
    "FindFirstFileW",
    "FindFirstFileExA",
    "FindFirstFileExW",
    "GetFullPathNameA",
    "GetFullPathNameW",
    "GetLongPathNameA",
    "GetLongPathNameW",
    "GetShortPathNameW",
    "GetVolumePathNameA",
    "GetVolumePathNameW",
    "SearchPathA",
    "SearchPathW",
    "GetTempPathA",
    "GetTempPathW",
    "GetTempPath2A",
    "GetTempPath2W",
    "GetEnvironmentVariableA",
    "GetEnvironmentVariableW",
    "GetEnvironmentStrings",
    "GetEnvironmentStringsA",
    "GetEnvironmentStringsW",
    "ExpandEnvironmentStringsA",
    "ExpandEnvironmentStringsW",
    "SetCurrentDirectoryA",
    "SetCurrentDirectoryW",
    "CreateProcessA",
    "CreateProcessW",
    "WinExec",
};

// Path-, environment- and library-touching imports that need no hook, and why.
const std::map<std::string, std::string> kNeedNoHook = {
    {"FindNextFileW", "continues a listing only a watched FindFirstFileExW began (listing taints the compile)"},
    {"FindClose", "ends a listing"},
    {"ReadFile", "reads a handle a watched CreateFile opened"},
    {"GetFileInformationByHandle", "stats a handle a watched CreateFile opened"},
    {"GetFileSizeEx", "stats a handle a watched CreateFile opened"},
    {"GetFileType", "stats a handle a watched CreateFile opened"},
    {"SetFilePointerEx", "seeks a handle a watched CreateFile opened"},
    {"CreateFileMappingA", "maps a handle a watched CreateFile opened"},
    {"CreateFileMappingW", "maps a handle a watched CreateFile opened"},
    {"MapViewOfFile", "maps a mapping of a watched handle"},
    {"MapViewOfFileEx", "maps a mapping of a watched handle"},
    {"UnmapViewOfFile", "unmaps"},
    {"GetFinalPathNameByHandleW",
     "names a handle a watched CreateFile opened by a path the record holds (symbolic-link targets: left open)"},
    {"LockFileEx", "locks a handle"},
    {"UnlockFileEx", "unlocks a handle"},
    {"WriteFile", "writes; reads nothing"},
    {"FlushFileBuffers", "writes; reads nothing"},
    {"SetEndOfFile", "writes; reads nothing"},
    {"SetFileTime", "writes; reads nothing"},
    {"SetFileInformationByHandle", "writes (rename, delete-on-close); reads nothing"},
    {"CreateDirectoryA", "creates; reads nothing"},
    {"CreateDirectoryW", "creates; reads nothing"},
    {"RemoveDirectoryA", "removes; reads nothing"},
    {"RemoveDirectoryW", "removes; reads nothing"},
    {"DeleteFileW", "removes; reads nothing"},
    {"GetTempFileNameA", "creates a new uniquely named file in a directory a watched GetTempPathA gave"},
    {"SetEnvironmentVariableW", "writes the environment; later reads are watched"},
    {"FreeEnvironmentStringsW", "frees a block a watched GetEnvironmentStringsW returned"},
    {"GetCurrentDirectoryW",
     "the working directory is keyed where the outputs depend on it "
     "(keying/working_directory_rule.h)"},
    {"GetCommandLineA", "the host's command line: the C runtime's startup, not a compile input"},
    {"GetCommandLineW", "the host's command line: the C runtime's startup, not a compile input"},
    {"GetModuleFileNameW", "NVRTC's own location: identified by the key's library identity"},
    {"LoadLibraryA", "loads code: NVRTC's builtins DLL, identified by the key's library identity"},
    {"LoadLibraryW", "loads code"},
    {"LoadLibraryExA", "loads code"},
    {"LoadLibraryExW", "loads code"},
    {"FileTimeToSystemTime", "converts a time; touches no file"},
    {"SystemTimeToFileTime", "converts a time; touches no file"},
    {"GetSystemTimeAsFileTime", "reads the clock (__DATE__/__TIME__ are keyed by the source, as on Linux)"},
    {"RtlPcToFileHeader", "finds the module of an address; touches no file"},
};

const std::regex kPathOrEnvironmentName(
    "File|Path|Directory|Environment|Drive|Volume|LoadLibrary|CreateProcess|WinExec|CommandLine|Disk");

// The import table of a PE32+ file: DLL name (upper case) -> the functions imported by name.
class PeImports {
 public:
  explicit PeImports(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    bytes_.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (bytes_.size() < 0x40 || u16(0) != 0x5a4d) throw std::runtime_error("not an MZ file: " + path);
    const std::uint32_t pe = u32(0x3c);
    if (u32(pe) != 0x00004550) throw std::runtime_error("no PE signature: " + path);
    const std::uint16_t sections = u16(pe + 4 + 2);
    const std::uint16_t optional_size = u16(pe + 4 + 16);
    const std::uint32_t optional = pe + 24;
    if (u16(optional) != 0x20b) throw std::runtime_error("not PE32+: " + path);
    for (std::uint32_t s = optional + optional_size, i = 0; i < sections; ++i, s += 40) {
      sections_.push_back({u32(s + 12), std::max(u32(s + 8), u32(s + 16)), u32(s + 20)});
    }
    const std::uint32_t import_rva = u32(optional + 112 + 8);  // DataDirectory[IMAGE_DIRECTORY_ENTRY_IMPORT]
    for (std::uint32_t d = offset(import_rva);; d += 20) {
      const std::uint32_t lookup = u32(d), name = u32(d + 12), iat = u32(d + 16);
      if (name == 0) break;
      std::string dll = string_at(offset(name));
      for (char& c : dll) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      auto& functions = by_dll_[dll];
      for (std::uint32_t t = offset(lookup != 0 ? lookup : iat);; t += 8) {
        const std::uint64_t thunk = u64(t);
        if (thunk == 0) break;
        if ((thunk >> 63) != 0) continue;  // by ordinal
        functions.insert(string_at(offset(static_cast<std::uint32_t>(thunk)) + 2));
      }
    }
  }
  const std::set<std::string>& of(const std::string& dll) const {
    static const std::set<std::string> none;
    auto it = by_dll_.find(dll);
    return it == by_dll_.end() ? none : it->second;
  }

 private:
  struct Section {
    std::uint32_t rva, size, file_offset;
  };
  std::uint64_t read(std::size_t at, std::size_t n) const {
    if (at + n > bytes_.size()) throw std::runtime_error("truncated PE file");
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < n; ++i) v |= std::uint64_t{static_cast<unsigned char>(bytes_[at + i])} << (8 * i);
    return v;
  }
  std::uint16_t u16(std::size_t at) const { return static_cast<std::uint16_t>(read(at, 2)); }
  std::uint32_t u32(std::size_t at) const { return static_cast<std::uint32_t>(read(at, 4)); }
  std::uint64_t u64(std::size_t at) const { return read(at, 8); }
  std::uint32_t offset(std::uint32_t rva) const {
    for (const Section& s : sections_) {
      if (rva >= s.rva && rva < s.rva + s.size) return rva - s.rva + s.file_offset;
    }
    throw std::runtime_error("RVA outside every section");
  }
  std::string string_at(std::size_t at) const {
    std::string s;
    for (; read(at, 1) != 0; ++at) s.push_back(bytes_[at]);
    return s;
  }
  std::vector<char> bytes_;
  std::vector<Section> sections_;
  std::map<std::string, std::set<std::string>> by_dll_;
};

std::string windows_nvrtc_dir() {
  const char* dir = std::getenv("NVRTC_CACHE_WINE_NVRTC_DIR");
  return dir ? dir : "";
}

TEST(WindowsImportCoverage, WatchedTableMatchesTheHooksClass) {
  for (const std::string& name : watched()) {
    EXPECT_TRUE(kMustBeWatched.count(name)) << name << " is watched but not in the path/environment class";
  }
}

TEST(WindowsImportCoverage, EveryPathOrEnvironmentImportIsWatchedOrClassified) {
  const std::string dir = windows_nvrtc_dir();
  if (dir.empty()) {
    NVRTC_CACHE_SKIP_WITHOUT_PYPI("the Windows NVRTC is not prepared (eval \"$(scripts/windows-nvrtc.sh DIR)\")");
  }
  const PeImports nvrtc(dir + "/nvrtc64_130_0.dll");
  const PeImports builtins(dir + "/nvrtc-builtins64_130.dll");
  ASSERT_GT(nvrtc.of("KERNEL32.DLL").size(), 100u) << "the import table was not read";
  ASSERT_FALSE(builtins.of("KERNEL32.DLL").empty());
  int classified = 0;
  for (const PeImports* dll : {&nvrtc, &builtins}) {
    for (const std::string& name : dll->of("KERNEL32.DLL")) {
      if (kMustBeWatched.count(name)) {
        EXPECT_TRUE(watched().count(name)) << name << " is imported and reads a path or the environment: watch it";
        ++classified;
      } else if (std::regex_search(name, kPathOrEnvironmentName)) {
        EXPECT_TRUE(kNeedNoHook.count(name)) << name << " is imported and unclassified: watch it or say why not";
        ++classified;
      }
    }
  }
  EXPECT_GT(classified, 20);
  for (const std::string& name : watched()) {
    EXPECT_TRUE(nvrtc.of("KERNEL32.DLL").count(name)) << name << " is watched but nvrtc64_130_0.dll does not import it";
  }
}

// Every NVRTC_* string of the DLL (a NUL-terminated run of [A-Z0-9_]) that is not a result code is
// a variable its getenv may read: the proxy's list must be exactly those.
TEST(WindowsImportCoverage, CrtEnvironmentVariablesAreTheDllsNames) {
  const std::string dir = windows_nvrtc_dir();
  if (dir.empty()) {
    NVRTC_CACHE_SKIP_WITHOUT_PYPI("the Windows NVRTC is not prepared (eval \"$(scripts/windows-nvrtc.sh DIR)\")");
  }
  std::ifstream in(dir + "/nvrtc64_130_0.dll", std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(bytes.size(), 1000000u);
  std::set<std::string> in_dll;
  for (std::size_t at = bytes.find("NVRTC_"); at != std::string::npos; at = bytes.find("NVRTC_", at + 1)) {
    if (at > 0 && bytes[at - 1] != '\0') continue;
    std::size_t end = at;
    while (end < bytes.size() && (std::isupper(static_cast<unsigned char>(bytes[end])) ||
                                  std::isdigit(static_cast<unsigned char>(bytes[end])) || bytes[end] == '_')) {
      ++end;
    }
    if (end == bytes.size() || bytes[end] != '\0') continue;
    const std::string name = bytes.substr(at, end - at);
    if (name.starts_with("NVRTC_ERROR_") || name == "NVRTC_SUCCESS") continue;
    in_dll.insert(name);
  }
  const std::set<std::string> listed = {
#define NVRTC_CACHE_CRT_VARIABLE(name) #name,
#include "shim/windows/crt_environment.def"
#undef NVRTC_CACHE_CRT_VARIABLE
  };
  EXPECT_EQ(in_dll, listed);
}

}  // namespace
}  // namespace nvrtc_cache
