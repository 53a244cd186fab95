#include "shim/windows/real_dll_candidates.h"

#include <windows.h>

namespace nvrtc_cache::shim::windows {
namespace {

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

bool is_directory(const std::wstring& path) {
  const DWORD attributes = GetFileAttributesW(path.c_str());
  return attributes != INVALID_FILE_ATTRIBUTES && (attributes & FILE_ATTRIBUTE_DIRECTORY) != 0;
}

}  // namespace

bool is_absolute_windows_path(const std::wstring& path) {
  return (path.size() > 2 && path[1] == L':' && (path[2] == L'\\' || path[2] == L'/')) ||
         (path.size() > 1 && (path[0] == L'\\' || path[0] == L'/') && (path[1] == L'\\' || path[1] == L'/'));
}

bool is_existing_file(const std::wstring& path) {
  const DWORD attributes = GetFileAttributesW(path.c_str());
  return attributes != INVALID_FILE_ATTRIBUTES && (attributes & FILE_ATTRIBUTE_DIRECTORY) == 0;
}

std::vector<std::wstring> real_nvrtc_candidates() {
  return real_dll_candidates(L"NVRTC_CACHE_REAL_NVRTC", kRealNvrtcDllName);
}

std::vector<std::wstring> real_dll_candidates(const wchar_t* variable, const wchar_t* dll_name) {
  std::vector<std::wstring> out;
  if (std::wstring named = environment_variable(variable); !named.empty()) {
    out.push_back(is_directory(named) ? join(named, dll_name) : named);
  }
  if (std::wstring cuda = environment_variable(L"CUDA_PATH"); !cuda.empty()) {
    out.push_back(join(join(cuda, L"bin\\x64"), dll_name));
    out.push_back(join(join(cuda, L"bin"), dll_name));
  }
  const std::wstring path = environment_variable(L"PATH");
  for (std::size_t start = 0; start <= path.size();) {
    std::size_t end = path.find(L';', start);
    if (end == std::wstring::npos) end = path.size();
    const std::wstring dir = path.substr(start, end - start);
    start = end + 1;
    if (dir.empty() || !is_existing_file(join(dir, L"python.exe"))) continue;
    for (const wchar_t* root : {L"", L"..\\"}) {
      const std::wstring nvidia = join(dir, root) + L"Lib\\site-packages\\nvidia\\cu13\\bin";
      out.push_back(join(join(nvidia, L"x86_64"), dll_name));
      out.push_back(join(nvidia, dll_name));
    }
  }
  return out;
}

}  // namespace nvrtc_cache::shim::windows
