#include "shim/windows/real_dll.h"

#include <string>
#include <vector>

#include "platform/windows/last_error.h"
#include "platform/windows/wide.h"

namespace nvrtc_cache::shim::windows {
namespace {

constexpr const wchar_t* kDllName = L"nvrtc64_130_0.dll";

std::wstring environment_variable(const wchar_t* name) {
  std::wstring value(256, L'\0');
  for (;;) {
    const DWORD n = GetEnvironmentVariableW(name, value.data(), static_cast<DWORD>(value.size()));
    if (n == 0) return {};
    if (n < value.size()) {
      value.resize(n);
      return value;
    }
    value.resize(n);
  }
}

std::wstring join(std::wstring dir, const wchar_t* tail) {
  if (!dir.empty() && dir.back() != L'\\' && dir.back() != L'/') dir.push_back(L'\\');
  return dir + tail;
}

bool is_absolute(const std::wstring& path) {
  return (path.size() > 2 && path[1] == L':' && (path[2] == L'\\' || path[2] == L'/')) ||
         (path.size() > 1 && (path[0] == L'\\' || path[0] == L'/') && (path[1] == L'\\' || path[1] == L'/'));
}

bool is_file(const std::wstring& path) {
  const DWORD attributes = GetFileAttributesW(path.c_str());
  return attributes != INVALID_FILE_ATTRIBUTES && (attributes & FILE_ATTRIBUTE_DIRECTORY) == 0;
}

bool is_directory(const std::wstring& path) {
  const DWORD attributes = GetFileAttributesW(path.c_str());
  return attributes != INVALID_FILE_ATTRIBUTES && (attributes & FILE_ATTRIBUTE_DIRECTORY) != 0;
}

HMODULE own_module() {
  HMODULE self = nullptr;
  GetModuleHandleExW(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
                     reinterpret_cast<LPCWSTR>(&own_module), &self);
  return self;
}

// The identity of a file (volume and index), to tell the proxy's own file from the real one.
bool same_file(const std::wstring& a, const std::wstring& b) {
  auto identity = [](const std::wstring& path, BY_HANDLE_FILE_INFORMATION& info) {
    const HANDLE h = CreateFileW(path.c_str(), 0, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr,
                                 OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS, nullptr);
    if (h == INVALID_HANDLE_VALUE) return false;
    const bool ok = GetFileInformationByHandle(h, &info) != FALSE;
    CloseHandle(h);
    return ok;
  };
  BY_HANDLE_FILE_INFORMATION x{}, y{};
  if (!identity(a, x) || !identity(b, y)) return _wcsicmp(a.c_str(), b.c_str()) == 0;
  return x.dwVolumeSerialNumber == y.dwVolumeSerialNumber && x.nFileIndexHigh == y.nFileIndexHigh &&
         x.nFileIndexLow == y.nFileIndexLow;
}

std::wstring module_path(HMODULE module) {
  std::wstring path(MAX_PATH, L'\0');
  for (;;) {
    const DWORD n = GetModuleFileNameW(module, path.data(), static_cast<DWORD>(path.size()));
    if (n == 0) return {};
    if (n < path.size()) {
      path.resize(n);
      return path;
    }
    path.resize(path.size() * 2);
  }
}

std::wstring own_path() { return module_path(own_module()); }

// The candidates, in order (absolute paths only).
std::vector<std::wstring> candidates() {
  std::vector<std::wstring> out;
  if (std::wstring named = environment_variable(L"NVRTC_CACHE_REAL_NVRTC"); !named.empty()) {
    out.push_back(is_directory(named) ? join(named, kDllName) : named);
  }
  if (std::wstring cuda = environment_variable(L"CUDA_PATH"); !cuda.empty()) {
    out.push_back(join(join(cuda, L"bin\\x64"), kDllName));
    out.push_back(join(join(cuda, L"bin"), kDllName));
  }
  const std::wstring path = environment_variable(L"PATH");
  for (std::size_t start = 0; start <= path.size();) {
    std::size_t end = path.find(L';', start);
    if (end == std::wstring::npos) end = path.size();
    const std::wstring dir = path.substr(start, end - start);
    start = end + 1;
    if (dir.empty() || !is_file(join(dir, L"python.exe"))) continue;
    for (const wchar_t* root : {L"", L"..\\"}) {
      const std::wstring nvidia = join(dir, root) + L"Lib\\site-packages\\nvidia\\cu13\\bin";
      out.push_back(join(join(nvidia, L"x86_64"), kDllName));
      out.push_back(join(nvidia, kDllName));
    }
  }
  return out;
}

// NVRTC loads its builtins DLL by name at its first compile, which the DLL search order finds only
// where the real DLL's directory is on PATH; loaded here by absolute path from beside the real DLL,
// the by-name load finds the module already loaded.
void preload_builtins(const std::wstring& real_path) {
  const std::size_t slash = real_path.find_last_of(L"\\/");
  if (slash == std::wstring::npos) return;
  const std::wstring dir = real_path.substr(0, slash + 1);
  WIN32_FIND_DATAW found;
  const HANDLE search = FindFirstFileW((dir + L"nvrtc-builtins64_*.dll").c_str(), &found);
  if (search == INVALID_HANDLE_VALUE) return;
  do {
    if (GetModuleHandleW(found.cFileName) == nullptr) {
      LoadLibraryExW((dir + found.cFileName).c_str(), nullptr, LOAD_WITH_ALTERED_SEARCH_PATH);
    }
  } while (FindNextFileW(search, &found));
  FindClose(search);
}

HMODULE load_real() {
  const std::wstring self = own_path();
  const HMODULE self_module = own_module();
  for (const std::wstring& candidate : candidates()) {
    if (!is_absolute(candidate) || !is_file(candidate)) continue;
    if (!self.empty() && same_file(candidate, self)) continue;
    // Its own dependencies are looked for beside it first.
    const HMODULE module = LoadLibraryExW(candidate.c_str(), nullptr, LOAD_WITH_ALTERED_SEARCH_PATH);
    if (module == nullptr) continue;
    if (module == self_module) {
      FreeLibrary(module);
      continue;
    }
    preload_builtins(candidate);
    return module;
  }
  return nullptr;
}

struct Loaded {
  HMODULE module = nullptr;
  interpose::RealNvrtc functions;
};

const Loaded& loaded() {
  static const Loaded instance = [] {
    const DWORD last_error = GetLastError();
    Loaded out;
    try {
      out.module = load_real();
    } catch (...) {
      out.module = nullptr;
    }
    if (out.module != nullptr) {
#define NVRTC_API(kind, ret, name, params, args) \
  out.functions.name = reinterpret_cast<ret(*) params>(reinterpret_cast<void*>(GetProcAddress(out.module, #name)));
#include "shim/interpose/nvrtc_api.def"
#undef NVRTC_API
      out.functions.private_functions[0] = reinterpret_cast<void*>(GetProcAddress(out.module, "__nvrtcCPEx"));
    }
    SetLastError(last_error);
    return out;
  }();
  return instance;
}

}  // namespace

const interpose::RealNvrtc* real_nvrtc_dll() {
  const Loaded& l = loaded();
  return l.module != nullptr ? &l.functions : nullptr;
}

HMODULE real_nvrtc_module() { return loaded().module; }

const std::string& real_nvrtc_path() {
  static const std::string path = [] {
    const platform::windows::LastErrorKept last_error;
    try {
      const HMODULE module = real_nvrtc_module();
      return module != nullptr ? platform::windows::to_utf8(module_path(module)) : std::string();
    } catch (...) {
      return std::string();
    }
  }();
  return path;
}

}  // namespace nvrtc_cache::shim::windows
