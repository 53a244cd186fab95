// nvrtc-cache.exe doctor: the Windows doctor. The checks both systems make (tools/doctor/doctor.h: the
// configuration, the cache and its store, the shared tiers, the sample compile's verdict) and the
// Windows ones: the proxy DLLs beside nvrtc-cache.exe, the real nvrtc64_130_0.dll the proxy would
// load (shim/windows/real_dll_candidates.h: the first that loads and answers nvrtcVersion, never a
// proxy), the disk's free space, and the sample compile run through the proxy: nvrtc-cache.exe
// __sample-compile loads the real DLL directly, then the proxy twice in a scratch cache, each a child
// process of its own. Exit status 1 when something blocks caching.
#include <windows.h>

#include <nvrtc.h>

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "platform/windows/wide.h"
#include "shim/windows/module_path.h"
#include "shim/windows/real_dll_candidates.h"
#include "tools/commands.h"
#include "tools/doctor/doctor.h"

namespace nvrtc_cache::tools {
namespace {

namespace win = platform::windows;

// nvrtc-cache.exe's own path and directory.
std::wstring own_path() { return shim::windows::module_path(nullptr); }
std::wstring own_directory() {
  const std::wstring path = own_path();
  return path.substr(0, path.find_last_of(L"\\/") + 1);
}

struct RealNvrtc {
  std::wstring path;
  int major = 0, minor = 0;
};

// The real DLL the proxy would load: the first candidate that loads, is no proxy (it exports
// nvrtc_cache_proxy) and answers nvrtcVersion.
std::optional<RealNvrtc> find_real_nvrtc(std::vector<std::string>* refused) {
  for (const std::wstring& candidate : shim::windows::real_nvrtc_candidates()) {
    if (!shim::windows::is_absolute_windows_path(candidate) || !shim::windows::is_existing_file(candidate)) continue;
    const HMODULE module = LoadLibraryExW(candidate.c_str(), nullptr, LOAD_WITH_ALTERED_SEARCH_PATH);
    if (module == nullptr) {
      refused->push_back(win::to_utf8(candidate) + " does not load (error " + std::to_string(GetLastError()) + ")");
      continue;
    }
    if (GetProcAddress(module, "nvrtc_cache_proxy") != nullptr) {
      refused->push_back(win::to_utf8(candidate) + " is nvrtc-cache's proxy, not NVRTC");
      continue;
    }
    const auto version =
        reinterpret_cast<decltype(&nvrtcVersion)>(reinterpret_cast<void*>(GetProcAddress(module, "nvrtcVersion")));
    RealNvrtc found{candidate};
    if (version == nullptr || version(&found.major, &found.minor) != NVRTC_SUCCESS) {
      refused->push_back(win::to_utf8(candidate) + " is not a working NVRTC (nvrtcVersion)");
      continue;
    }
    return found;
  }
  return std::nullopt;
}

// This process's environment without NVRTC_CACHE_* and PATH, plus `set` (a CreateProcessW block).
std::wstring environment_block(const std::map<std::wstring, std::wstring>& set) {
  std::wstring block;
  if (wchar_t* strings = GetEnvironmentStringsW()) {
    for (const wchar_t* entry = strings; *entry != 0; entry += wcslen(entry) + 1) {
      const std::wstring_view text = entry;
      if (text.starts_with(L"NVRTC_CACHE_") || _wcsnicmp(entry, L"PATH=", 5) == 0) continue;
      block.append(text).push_back(L'\0');
    }
    FreeEnvironmentStringsW(strings);
  }
  for (const auto& [name, value] : set) block.append(name + L"=" + value).push_back(L'\0');
  block.push_back(L'\0');
  return block;
}

// Runs nvrtc-cache.exe __sample-compile LIBRARY with `environment`; stdout captured, stderr's first
// line kept (from a file in `scratch`).
SampleRun run_sample(const std::wstring& library, const std::wstring& environment, const std::wstring& scratch,
                     const wchar_t* label) {
  SampleRun run;
  SECURITY_ATTRIBUTES inherit{sizeof(SECURITY_ATTRIBUTES), nullptr, TRUE};
  HANDLE read_end = nullptr, write_end = nullptr;
  if (!CreatePipe(&read_end, &write_end, &inherit, 0)) return run;
  SetHandleInformation(read_end, HANDLE_FLAG_INHERIT, 0);
  const std::wstring error_path = scratch + L"\\" + label + L".err";
  const HANDLE error_file = CreateFileW(error_path.c_str(), GENERIC_WRITE, FILE_SHARE_READ, &inherit, CREATE_ALWAYS,
                                        FILE_ATTRIBUTE_NORMAL, nullptr);
  STARTUPINFOW startup{};
  startup.cb = sizeof startup;
  startup.dwFlags = STARTF_USESTDHANDLES;
  startup.hStdInput = GetStdHandle(STD_INPUT_HANDLE);
  startup.hStdOutput = write_end;
  startup.hStdError = error_file != INVALID_HANDLE_VALUE ? error_file : write_end;
  std::wstring command = L"\"" + own_path() + L"\" __sample-compile \"" + library + L"\"";
  PROCESS_INFORMATION process{};
  std::wstring env = environment;
  const BOOL started = CreateProcessW(nullptr, command.data(), nullptr, nullptr, TRUE, CREATE_UNICODE_ENVIRONMENT,
                                      env.data(), nullptr, &startup, &process);
  CloseHandle(write_end);
  if (error_file != INVALID_HANDLE_VALUE) CloseHandle(error_file);
  if (started) {
    char buffer[4096];
    DWORD n = 0;
    while (ReadFile(read_end, buffer, sizeof buffer, &n, nullptr) && n > 0) run.out.append(buffer, n);
    WaitForSingleObject(process.hProcess, INFINITE);
    DWORD code = 0;
    if (GetExitCodeProcess(process.hProcess, &code)) run.exit_code = static_cast<int>(code);
    CloseHandle(process.hThread);
    CloseHandle(process.hProcess);
  }
  CloseHandle(read_end);
  std::string err;
  if (const HANDLE file =
          CreateFileW(error_path.c_str(), GENERIC_READ, FILE_SHARE_READ, nullptr, OPEN_EXISTING, 0, nullptr);
      file != INVALID_HANDLE_VALUE) {
    char buffer[256];
    DWORD n = 0;
    if (ReadFile(file, buffer, sizeof buffer, &n, nullptr)) err.assign(buffer, n);
    CloseHandle(file);
  }
  run.first_error_line = err.substr(0, err.find_first_of("\r\n"));
  return run;
}

void check_sample_compile(DoctorReport& report, const std::wstring& proxy, const RealNvrtc& real) {
  wchar_t temp[MAX_PATH + 1];
  const DWORD n = GetTempPathW(MAX_PATH + 1, temp);
  const std::wstring scratch = std::wstring(temp, n) + L"nvrtc-cache-doctor-" + std::to_wstring(GetCurrentProcessId()) +
                               L"-" + std::to_wstring(GetTickCount64());
  if (n == 0 || !CreateDirectoryW(scratch.c_str(), nullptr)) {
    report.add(Severity::kWarn, "sample compile", "cannot make a scratch directory in the temporary folder; not run");
    return;
  }
  const std::wstring real_directory = real.path.substr(0, real.path.find_last_of(L"\\/"));
  std::wstring path = real_directory;  // NVRTC finds its builtins DLL beside it
  if (wchar_t value[32768]; GetEnvironmentVariableW(L"PATH", value, 32768) > 0) path += L";" + std::wstring(value);
  SampleCompileRuns runs;
  runs.library = win::to_utf8(real.path);
  runs.direct = run_sample(real.path, environment_block({{L"PATH", path}}), scratch, L"direct");
  const std::wstring through_proxy = environment_block(
      {{L"PATH", path}, {L"NVRTC_CACHE_REAL_NVRTC", real.path}, {L"NVRTC_CACHE_DIR", scratch + L"\\cache"}});
  runs.cold = run_sample(proxy, through_proxy, scratch, L"cold");
  runs.warm = run_sample(proxy, through_proxy, scratch, L"warm");
  report_sample_compile(report, runs, win::to_utf8(scratch + L"\\cache"),
                        {"the proxy", "nvrtc-cache.exe run",
                         "Set NVRTC_CACHE_REAL_NVRTC to a working nvrtc64_130_0.dll (or install the CUDA toolkit, "
                         "%CUDA_PATH%, or the nvidia-cuda-nvrtc wheel in a Python on PATH)"});
  std::error_code ignored;
  std::filesystem::remove_all(std::filesystem::path(scratch), ignored);
}

int doctor(bool skip_sample) {
  DoctorReport report;
  const core::Config config = core::config_from_process_environment();
  check_configuration(report, config);
  const std::wstring directory = own_directory();
  const std::wstring proxy = directory + L"nvrtc64_130_0.dll";
  const bool proxy_found = shim::windows::is_existing_file(proxy);
  report.add(proxy_found ? Severity::kOk : Severity::kFail, "proxy",
             proxy_found ? win::to_utf8(proxy)
                         : win::to_utf8(proxy) + " is missing: nothing can reach the cache (reinstall nvrtc-cache)");
  const std::wstring injected = directory + L"nvrtc-cache-inject64.dll";
  if (shim::windows::is_existing_file(injected)) {
    report.add(Severity::kOk, "proxy", win::to_utf8(injected) + " (what `nvrtc-cache.exe run` injects)");
  } else {
    report.add(Severity::kWarn, "proxy",
               win::to_utf8(injected) + " is missing: `nvrtc-cache.exe run` cannot inject the proxy");
  }
  std::vector<std::string> refused;
  const std::optional<RealNvrtc> real = find_real_nvrtc(&refused);
  for (const std::string& why : refused) report.add(Severity::kWarn, "NVRTC", why);
  if (real) {
    report.add(
        Severity::kOk, "NVRTC",
        fmt::format("nvrtc64_130_0.dll -> {} (NVRTC {}.{})", win::to_utf8(real->path), real->major, real->minor));
  } else {
    report.add(Severity::kFail, "NVRTC",
               "no real nvrtc64_130_0.dll found: set NVRTC_CACHE_REAL_NVRTC to its path (or install the CUDA toolkit, "
               "%CUDA_PATH%, or the nvidia-cuda-nvrtc wheel in a Python on PATH); under `nvrtc-cache.exe run` the "
               "one the program loads is used");
  }
  const store::OpenedCache opened = store::open_cache(core::cache_policy(config));
  std::optional<SpaceOnDisk> space;
  if (ULARGE_INTEGER available{}, total{};
      GetDiskFreeSpaceExW(win::to_wide(opened.directory).c_str(), &available, &total, nullptr)) {
    space = SpaceOnDisk{available.QuadPart, total.QuadPart};
  }
  std::uint64_t data_bytes = 0;
  if (WIN32_FILE_ATTRIBUTE_DATA data{}; GetFileAttributesExW(
          win::to_wide(opened.directory + "\\store\\data.mdb").c_str(), GetFileExInfoStandard, &data)) {
    data_bytes = static_cast<std::uint64_t>(data.nFileSizeHigh) << 32 | data.nFileSizeLow;
  }
  check_opened_cache(report, config, opened, opened.directory, space, data_bytes);
  check_tiers(config, report);
  if (skip_sample) {
    report.add(Severity::kNote, "sample compile", "skipped (--no-compile)");
  } else if (!proxy_found) {
    report.add(Severity::kNote, "sample compile", "not run: no proxy");
  } else if (!real) {
    report.add(Severity::kNote, "sample compile", "not run: no NVRTC that loads");
  } else {
    check_sample_compile(report, proxy, *real);
  }
  return doctor_verdict(report);
}

}  // namespace

void add_doctor_command(CLI::App& app, Outcome& outcome) {
  CLI::App* command = app.add_subcommand(
      "doctor",
      "Check everything caching needs and explain what is wrong: configuration, the proxy DLLs, the real NVRTC DLL "
      "the proxy loads, the cache directory and free space, the store, shared tiers, and a sample compile run twice "
      "through the proxy. Exit status 1 when something blocks caching.");
  auto skip_sample = std::make_shared<bool>(false);
  command->add_flag("--no-compile", *skip_sample, "skip the sample compile");
  command->callback([&outcome, skip_sample] { outcome.exit_code = doctor(*skip_sample); });
}

}  // namespace nvrtc_cache::tools
