#include "platform/process.h"

#include <windows.h>

#include <cwchar>
#include <random>

#include "platform/windows/command_line.h"
#include "platform/windows/wide.h"

namespace nvrtc_cache::platform {
namespace {

std::string error_text(const char* what, DWORD error) {
  return std::string(what) + " (error " + std::to_string(error) + ")";
}

class WindowsChild final : public ChildProcess {
 public:
  WindowsChild(HANDLE process, HANDLE out) : process_(process), out_(out) {}
  ~WindowsChild() override {
    CloseHandle(out_);
    (void)wait();
    CloseHandle(process_);
  }
  std::size_t read(char* buffer, std::size_t size) override {
    DWORD n = 0;
    const DWORD asked = static_cast<DWORD>(size < 0x10000000 ? size : 0x10000000);
    if (!ReadFile(out_, buffer, asked, &n, nullptr)) return 0;  // ERROR_BROKEN_PIPE: its end
    return n;
  }
  int wait() override {
    WaitForSingleObject(process_, INFINITE);
    DWORD code = 1;
    if (!GetExitCodeProcess(process_, &code)) return -1;
    return static_cast<int>(code);
  }

 private:
  HANDLE process_;
  HANDLE out_;
};

// This process's environment block with `changes` made (names without case, as Windows compares them).
std::wstring environment_block(const std::vector<EnvironmentChange>& changes) {
  std::vector<std::wstring> changed_names;
  for (const auto& change : changes) changed_names.push_back(windows::to_wide(change.first));
  std::wstring block;
  if (wchar_t* strings = GetEnvironmentStringsW(); strings != nullptr) {
    for (const wchar_t* entry = strings; *entry != L'\0'; entry += std::wcslen(entry) + 1) {
      const std::wstring_view text(entry);
      const std::size_t equals = text.find(L'=', 1);  // "=C:=C:\x": a drive's directory, name "=C:"
      const std::wstring_view name = text.substr(0, equals);
      bool changed = false;
      for (const std::wstring& changed_name : changed_names) {
        changed = changed || (changed_name.size() == name.size() &&
                              _wcsnicmp(changed_name.c_str(), name.data(), name.size()) == 0);
      }
      if (!changed) block.append(text).push_back(L'\0');
    }
    FreeEnvironmentStringsW(strings);
  }
  for (const auto& [name, value] : changes) {
    if (value) block.append(windows::to_wide(name + "=" + *value)).push_back(L'\0');
  }
  block.push_back(L'\0');
  return block;
}

}  // namespace

std::unique_ptr<ChildProcess> ChildProcess::start(const std::vector<std::string>& argv,
                                                  const std::vector<EnvironmentChange>& environment,
                                                  std::string* error) {
  if (argv.empty()) {
    *error = "no program to start";
    return nullptr;
  }
  std::wstring command_line;
  for (const std::string& a : argv) windows::append_quoted_argument(command_line, windows::to_wide(a));
  std::wstring block = environment_block(environment);
  SECURITY_ATTRIBUTES inherited{sizeof(SECURITY_ATTRIBUTES), nullptr, TRUE};
  HANDLE read_end = nullptr, write_end = nullptr;
  if (!CreatePipe(&read_end, &write_end, &inherited, 0)) {
    *error = error_text("cannot make a pipe", GetLastError());
    return nullptr;
  }
  SetHandleInformation(read_end, HANDLE_FLAG_INHERIT, 0);  // the child's is the write end only
  windows::make_standard_handle_inheritable(STD_INPUT_HANDLE);
  windows::make_standard_handle_inheritable(STD_ERROR_HANDLE);
  STARTUPINFOW startup{};
  startup.cb = sizeof startup;
  startup.dwFlags = STARTF_USESTDHANDLES;
  startup.hStdInput = GetStdHandle(STD_INPUT_HANDLE);
  startup.hStdOutput = write_end;
  startup.hStdError = GetStdHandle(STD_ERROR_HANDLE);
  PROCESS_INFORMATION process{};
  const std::wstring program = windows::to_wide(argv.front());
  const BOOL started = CreateProcessW(program.c_str(), command_line.data(), nullptr, nullptr, TRUE,
                                      CREATE_UNICODE_ENVIRONMENT, block.data(), nullptr, &startup, &process);
  const DWORD create_error = GetLastError();
  CloseHandle(write_end);  // the child's copy is its own: the pipe ends when the child's does
  if (!started) {
    CloseHandle(read_end);
    *error = error_text(("cannot start " + argv.front()).c_str(), create_error);
    return nullptr;
  }
  CloseHandle(process.hThread);
  return std::make_unique<WindowsChild>(process.hProcess, read_end);
}

std::string make_temporary_directory(const std::string& prefix, std::string* error) {
  wchar_t temp[MAX_PATH + 2];
  const DWORD n = GetTempPathW(MAX_PATH + 1, temp);
  if (n == 0 || n > MAX_PATH + 1) {
    *error = error_text("cannot find the temporary directory", GetLastError());
    return {};
  }
  std::random_device random;
  for (int attempt = 0; attempt < 16; ++attempt) {
    wchar_t suffix[9];
    swprintf(suffix, 9, L"%08x", static_cast<unsigned>(random()));
    const std::wstring path = std::wstring(temp, n) + windows::to_wide(prefix) + suffix;
    if (CreateDirectoryW(path.c_str(), nullptr)) return windows::to_utf8(path);
    if (GetLastError() != ERROR_ALREADY_EXISTS) break;
  }
  *error = error_text("cannot create a temporary directory", GetLastError());
  return {};
}

std::string change_directory(const std::string& path) {
  if (SetCurrentDirectoryW(windows::to_wide(path).c_str())) return {};
  return error_text(("cannot enter " + path).c_str(), GetLastError());
}

}  // namespace nvrtc_cache::platform
