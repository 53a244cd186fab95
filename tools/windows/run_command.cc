// run [--record FILE] [--] CMD [ARGS...]: runs CMD with the cache loaded into it before its code runs,
// whichever way it loads NVRTC (shim/windows/loader_redirect.h); --record sets NVRTC_CACHE_RECORD
// (made absolute) for CMD and its children, as on Linux. CMD is created suspended, the proxy injected as
// shim/windows/process_injection.h says (its copy kInjectedProxyName beside this .exe), then
// resumed; its exit code is run's. Fail open: when the injection fails, CMD runs uncached and this
// is said once on stderr. CMD inherits this console, the standard handles and the environment.
#include <windows.h>
#include <shellapi.h>

#include <cstdio>
#include <cwchar>
#include <string>
#include <string_view>

#include "platform/windows/command_line.h"
#include "platform/windows/wide.h"
#include "shim/windows/module_path.h"
#include "shim/windows/process_injection.h"
#include "tools/windows/run_command.h"

namespace nvrtc_cache::tools::windows {
namespace {

std::wstring own_directory() {
  const std::wstring path = shim::windows::module_path(nullptr);
  const std::size_t slash = path.find_last_of(L"\\/");
  return slash == std::wstring::npos ? std::wstring() : path.substr(0, slash + 1);
}

}  // namespace

int run_command() {
  int count = 0;
  LPWSTR* const arguments = CommandLineToArgvW(GetCommandLineW(), &count);
  if (arguments == nullptr) return 2;
  constexpr const char* kUsage = "usage: nvrtc-cache run [--record FILE] [--] CMD [ARGS...]\n";
  int first = 2;  // after the program's name and "run"
  std::wstring record_file;
  bool usage_error = false;
  while (first < count) {
    const std::wstring_view argument = arguments[first];
    if (argument == L"--record") {
      if (first + 1 >= count) {
        usage_error = true;
        break;
      }
      record_file = arguments[first + 1];
      first += 2;
    } else if (argument.starts_with(L"--record=")) {
      record_file = argument.substr(9);
      ++first;
    } else {
      break;
    }
    if (record_file.empty()) {
      usage_error = true;
      break;
    }
  }
  if (!usage_error && first < count && std::wcscmp(arguments[first], L"--") == 0) ++first;
  if (usage_error || first >= count) {
    std::fputs(kUsage, stderr);
    LocalFree(arguments);
    return 2;
  }
  if (!record_file.empty()) {
    // Absolute, so that CMD and its children append to one file wherever they run; they inherit it.
    wchar_t full[MAX_PATH * 4];
    const DWORD n = GetFullPathNameW(record_file.c_str(), MAX_PATH * 4, full, nullptr);
    if (n == 0 || n >= MAX_PATH * 4) {
      std::fprintf(stderr, "nvrtc-cache: cannot resolve %s (error %lu)\n",
                   platform::windows::to_utf8(record_file).c_str(), GetLastError());
      LocalFree(arguments);
      return 2;
    }
    SetEnvironmentVariableW(L"NVRTC_CACHE_RECORD", full);
  }
  std::wstring command_line;
  for (int i = first; i < count; ++i) platform::windows::append_quoted_argument(command_line, arguments[i]);
  const std::string program = platform::windows::to_utf8(arguments[first]);
  LocalFree(arguments);

  STARTUPINFOW startup{};
  GetStartupInfoW(&startup);
  startup.cb = sizeof startup;
  startup.lpReserved = nullptr;
  startup.cbReserved2 = 0;
  startup.lpReserved2 = nullptr;
  startup.dwFlags |= STARTF_USESTDHANDLES;
  for (DWORD which : {STD_INPUT_HANDLE, STD_OUTPUT_HANDLE, STD_ERROR_HANDLE})
    platform::windows::make_standard_handle_inheritable(which);
  startup.hStdInput = GetStdHandle(STD_INPUT_HANDLE);
  startup.hStdOutput = GetStdHandle(STD_OUTPUT_HANDLE);
  startup.hStdError = GetStdHandle(STD_ERROR_HANDLE);
  PROCESS_INFORMATION process{};
  if (!CreateProcessW(nullptr, command_line.data(), nullptr, nullptr, TRUE, CREATE_SUSPENDED, nullptr, nullptr,
                      &startup, &process)) {
    const DWORD error = GetLastError();
    std::fprintf(stderr, "nvrtc-cache: cannot run %s (error %lu)\n", program.c_str(), error);
    return error == ERROR_FILE_NOT_FOUND || error == ERROR_PATH_NOT_FOUND ? 127 : 126;
  }
  std::string why;
  if (!shim::windows::inject_dll(process.hProcess, own_directory() + shim::windows::kInjectedProxyName, &why)) {
    std::fprintf(stderr, "nvrtc-cache: cannot load the cache into %s (%s); it runs uncached\n", program.c_str(),
                 why.c_str());
  }
  // Ctrl-C reaches the program through the console; this process waits for it to end.
  SetConsoleCtrlHandler(nullptr, TRUE);
  ResumeThread(process.hThread);
  CloseHandle(process.hThread);
  WaitForSingleObject(process.hProcess, INFINITE);
  DWORD exit_code = 1;
  GetExitCodeProcess(process.hProcess, &exit_code);
  CloseHandle(process.hProcess);
  return static_cast<int>(exit_code);
}

}  // namespace nvrtc_cache::tools::windows
