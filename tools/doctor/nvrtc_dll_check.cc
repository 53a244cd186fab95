#include "tools/doctor/nvrtc_dll_check.h"

#include <windows.h>
#include <aclapi.h>
#include <sddl.h>

#include <cwchar>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "platform/paths.h"
#include "platform/windows/wide.h"
#include "shim/windows/real_dll_candidates.h"
#include "util/pe_identity.h"
#include "util/binary_io.h"

namespace nvrtc_cache::tools::windows {
namespace {

using platform::windows::to_utf8;
using platform::windows::to_wide;

// Rights that let their holder change what the path names.
constexpr ACCESS_MASK kChangesFile =
    FILE_WRITE_DATA | FILE_APPEND_DATA | DELETE | WRITE_DAC | WRITE_OWNER | GENERIC_WRITE | GENERIC_ALL;
constexpr ACCESS_MASK kChangesOwnDirectory = FILE_ADD_FILE | FILE_ADD_SUBDIRECTORY | FILE_DELETE_CHILD | DELETE |
                                             WRITE_DAC | WRITE_OWNER | GENERIC_WRITE | GENERIC_ALL;
constexpr ACCESS_MASK kChangesDirectoryAbove = FILE_DELETE_CHILD | DELETE | WRITE_DAC | WRITE_OWNER | GENERIC_ALL;

std::string sid_text(PSID sid) {
  LPWSTR text = nullptr;
  if (!ConvertSidToStringSidW(sid, &text)) return "an unknown account";
  std::string out = to_utf8(text);
  LocalFree(text);
  wchar_t name[256], domain[256];
  DWORD name_size = 256, domain_size = 256;
  SID_NAME_USE use;
  if (LookupAccountSidW(nullptr, sid, name, &name_size, domain, &domain_size, &use))
    out = (domain_size > 0 ? to_utf8(domain) + "\\" : "") + to_utf8(name) + " (" + out + ")";
  return out;
}

// The accounts trusted with the file: this process's user, SYSTEM, Administrators, TrustedInstaller,
// and CREATOR OWNER (an ACE of its own grants nothing but what it gives those who create entries).
class TrustedAccounts {
 public:
  TrustedAccounts() {
    HANDLE token = nullptr;
    if (OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &token)) {
      DWORD size = 0;
      GetTokenInformation(token, TokenUser, nullptr, 0, &size);
      user_.resize(size);
      if (size == 0 || !GetTokenInformation(token, TokenUser, user_.data(), size, &size)) user_.clear();
      CloseHandle(token);
    }
    for (const WELL_KNOWN_SID_TYPE type : {WinLocalSystemSid, WinBuiltinAdministratorsSid, WinCreatorOwnerSid}) {
      std::vector<BYTE>& sid = well_known_.emplace_back(SECURITY_MAX_SID_SIZE);
      DWORD size = SECURITY_MAX_SID_SIZE;
      if (!CreateWellKnownSid(type, nullptr, sid.data(), &size)) well_known_.pop_back();
    }
    PSID installer = nullptr;
    if (ConvertStringSidToSidW(L"S-1-5-80-956008885-3425912167-2254193297-3226106007-2631002958", &installer)) {
      const auto* bytes = static_cast<const BYTE*>(installer);
      well_known_.emplace_back(bytes, bytes + GetLengthSid(installer));
      LocalFree(installer);
    }
  }
  bool trusts(PSID sid) const {
    if (!user_.empty() && EqualSid(sid, reinterpret_cast<const TOKEN_USER*>(user_.data())->User.Sid)) return true;
    for (const std::vector<BYTE>& w : well_known_) {
      if (EqualSid(sid, const_cast<BYTE*>(w.data()))) return true;
    }
    return false;
  }

 private:
  std::vector<BYTE> user_;
  std::vector<std::vector<BYTE>> well_known_;
};

// Why someone else can change `shown` (its owner, then its ACL's allow entries against `dangerous`),
// or "".
std::string others_can_change(const std::string& shown, PSID owner, PACL dacl, ACCESS_MASK dangerous,
                              const TrustedAccounts& trusted) {
  if (owner == nullptr || !trusted.trusts(owner)) {
    return fmt::format("{} is owned by {}", shown, owner ? sid_text(owner) : std::string("no one"));
  }
  if (dacl == nullptr) return shown + " has no access control list (anyone may change it)";
  for (DWORD i = 0; i < dacl->AceCount; ++i) {
    void* ace = nullptr;
    if (!GetAce(dacl, i, &ace)) return shown + " has an unreadable access control list";
    const auto* header = static_cast<const ACE_HEADER*>(ace);
    if (header->AceFlags & INHERIT_ONLY_ACE) continue;         // for entries created later, not this one
    if (header->AceType != ACCESS_ALLOWED_ACE_TYPE) continue;  // denials only take rights away
    const auto* allowed = static_cast<const ACCESS_ALLOWED_ACE*>(ace);
    PSID sid = const_cast<DWORD*>(&allowed->SidStart);
    if ((allowed->Mask & dangerous) != 0 && !trusted.trusts(sid)) {
      return fmt::format("{} can be changed by {}", shown, sid_text(sid));
    }
  }
  return {};
}

// The path GetFinalPathNameByHandleW gives, without its "\\?\" (or "\\?\UNC\" as "\\").
std::string final_path(HANDLE file) {
  std::wstring path(512, L'\0');
  for (;;) {
    const DWORD n = GetFinalPathNameByHandleW(file, path.data(), static_cast<DWORD>(path.size()), FILE_NAME_NORMALIZED);
    if (n == 0) return {};
    if (n < path.size()) {
      path.resize(n);
      break;
    }
    path.resize(n + 1);
  }
  if (path.starts_with(L"\\\\?\\UNC\\")) return "\\\\" + to_utf8(path.substr(8));
  if (path.starts_with(L"\\\\?\\")) return to_utf8(path.substr(4));
  return to_utf8(path);
}

std::string directories_above(const std::string& resolved, const TrustedAccounts& trusted) {
  std::string directory = resolved;
  bool own = true;
  const std::string root = platform::root_of(resolved);
  for (;;) {
    const std::size_t slash = directory.find_last_of("\\/");
    if (slash == std::string::npos || directory.size() <= root.size()) return {};
    directory.resize(std::max(slash, root.size()));  // "C:\x" -> "C:\" keeps the root's separator
    if (directory.size() > root.size() && platform::is_path_separator(directory.back())) directory.pop_back();
    PSID owner = nullptr;
    PACL dacl = nullptr;
    PSECURITY_DESCRIPTOR descriptor = nullptr;
    const DWORD error = GetNamedSecurityInfoW(to_wide(directory).c_str(), SE_FILE_OBJECT,
                                              OWNER_SECURITY_INFORMATION | DACL_SECURITY_INFORMATION, &owner, nullptr,
                                              &dacl, nullptr, &descriptor);
    if (error != ERROR_SUCCESS) return fmt::format("cannot read who may change {} (error {})", directory, error);
    const std::string why = others_can_change("the directory " + directory, owner, dacl,
                                              own ? kChangesOwnDirectory : kChangesDirectoryAbove, trusted);
    LocalFree(descriptor);
    if (!why.empty()) return why;
    own = false;
    if (directory.size() <= root.size()) return {};
  }
}

std::string refusal(const std::string& path, const std::string& why) {
  return fmt::format("refusing to load the NVRTC {}: {}", path, why);
}

}  // namespace

std::string describe_pe_build_id(const std::string& build_id) {
  if (build_id.size() != 15 || !build_id.starts_with("pe:")) return "an unknown identity";
  const auto field = [&](std::size_t i) { return util::load_le(build_id.data() + 3 + 4 * i, 4); };
  return fmt::format("time stamp {:08x}, image size {:08x}, checksum {:08x}", field(0), field(1), field(2));
}

DllCheck check_nvrtc_dll(const std::string& path, const keying::LibraryIdentity& recorded) {
  DllCheck out;
  if (!platform::is_absolute_path(path)) {
    out.refused = refusal(path, "it is not an absolute path");
    return out;
  }
  if (!recorded.build_id.starts_with("pe:")) {
    out.refused = refusal(path, "the recording names no Windows DLL identity for it, so it cannot be matched");
    return out;
  }
  const HANDLE file = CreateFileW(to_wide(path).c_str(), GENERIC_READ | READ_CONTROL, FILE_SHARE_READ, nullptr,
                                  OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, nullptr);
  if (file == INVALID_HANDLE_VALUE) {
    out.refused = refusal(path, fmt::format("cannot open it (error {})", GetLastError()));
    return out;
  }
  struct Closer {
    HANDLE h;
    ~Closer() { CloseHandle(h); }
  } closer{file};
  BY_HANDLE_FILE_INFORMATION information{};
  if (!GetFileInformationByHandle(file, &information) ||
      (information.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) != 0 || GetFileType(file) != FILE_TYPE_DISK) {
    out.refused = refusal(path, "it is not a regular file");
    return out;
  }
  const std::string resolved = final_path(file);
  if (resolved.empty()) {
    out.refused = refusal(path, fmt::format("cannot resolve it (error {})", GetLastError()));
    return out;
  }
  const std::string shown = resolved == path ? path : fmt::format("{} (resolved from {})", resolved, path);
  const TrustedAccounts trusted;
  PSID owner = nullptr;
  PACL dacl = nullptr;
  PSECURITY_DESCRIPTOR descriptor = nullptr;
  const DWORD error = GetSecurityInfo(file, SE_FILE_OBJECT, OWNER_SECURITY_INFORMATION | DACL_SECURITY_INFORMATION,
                                      &owner, nullptr, &dacl, nullptr, &descriptor);
  if (error != ERROR_SUCCESS) {
    out.refused = refusal(path, fmt::format("cannot read who may change it (error {})", error));
    return out;
  }
  std::string why = others_can_change(shown, owner, dacl, kChangesFile, trusted);
  LocalFree(descriptor);
  if (why.empty()) why = directories_above(resolved, trusted);
  if (!why.empty()) {
    out.refused = refusal(path, why + " (a DLL someone else can change would run their code as you)");
    return out;
  }

  const std::uint64_t size = (std::uint64_t{information.nFileSizeHigh} << 32) | information.nFileSizeLow;
  std::string malformed;
  const std::optional<util::PeIdentity> pe = util::read_pe_identity(
      size,
      [file](std::uint64_t offset, std::size_t n, char* into) {
        OVERLAPPED at{};
        at.Offset = static_cast<DWORD>(offset);
        at.OffsetHigh = static_cast<DWORD>(offset >> 32);
        DWORD got = 0;
        return n <= 0xffffffffu && ReadFile(file, into, static_cast<DWORD>(n), &got, &at) && got == n;
      },
      malformed);
  if (!pe) {
    out.refused = refusal(path, fmt::format("{} is not a DLL: {}", shown, malformed));
    return out;
  }
  if (!pe->dll || pe->machine != util::kPeMachineAmd64) {
    out.refused = refusal(path, fmt::format("{} is not a 64-bit DLL", shown));
    return out;
  }
  if (!pe->export_name || _wcsicmp(to_wide(*pe->export_name).c_str(), shim::windows::kRealNvrtcDllName) != 0) {
    out.refused = refusal(path, fmt::format("{} is not NVRTC 13's DLL (it names itself {})", shown,
                                            pe->export_name ? "\"" + *pe->export_name + "\"" : "nothing"));
    return out;
  }
  if (pe->build_id != recorded.build_id) {
    out.refused = fmt::format(
        "{} is a DLL with {}, but the recording's programs were compiled by NVRTC {}.{} with {}: their results "
        "would not be this DLL's; refusing to replay them",
        shown, describe_pe_build_id(pe->build_id), recorded.major, recorded.minor,
        describe_pe_build_id(recorded.build_id));
    return out;
  }
  out.resolved = resolved;
  return out;
}

}  // namespace nvrtc_cache::tools::windows
