// Which NVRTC DLL `nvrtc-cache.exe replay` may load for a recording's programs (the Windows
// counterpart of tools/doctor/nvrtc_library_check.h). The path comes from the recording (or --nvrtc) and
// loading a DLL runs its code, so the file is judged on disk before anything loads it:
// - the path is absolute and opens as a regular file; every link and reparse point is resolved
//   (GetFinalPathNameByHandleW) and the checks below apply to that path;
// - the file and every directory above it are owned by the caller, SYSTEM, Administrators or
//   TrustedInstaller, and their access control lists let no one else change them: no write, delete
//   or change of permissions or owner on the file; on its directory no adding, deleting or renaming
//   of entries (a DLL planted beside it would be loaded with it); on the directories above, no
//   deleting or renaming of entries (adding one, as C:\ lets every user, cannot replace an existing
//   name). A missing access control list (everyone may do anything) is refused;
// - it is a 64-bit DLL whose export directory names it nvrtc64_130_0.dll (the proxy's real DLL),
//   with the recording's identity (util/pe_identity.h: the headers' time stamp, image size and
//   checksum, what the proxy recorded).
// The identity names a build; it does not authenticate one: the ownership checks are what keep
// another user's code from being run. The worker checks the loaded image again
// (tools/replay/host_windows.cc). Under Wine the access control lists are those Wine makes
// from the POSIX owner and mode bits (others' write bits grant Everyone write, delete and delete-child).
// Contract: thread-safe; reads the file system and this process's token; loads nothing; never
// throws except std::bad_alloc; a refusal is one sentence naming the path and saying why.
#pragma once

#include <string>

#include "keying/program_inputs.h"

namespace nvrtc_cache::tools::windows {

struct DllCheck {
  std::string resolved;  // the path to load, links resolved; "" when refused
  std::string refused;   // why the DLL must not be loaded; "" when it may be
};
DllCheck check_nvrtc_dll(const std::string& path, const keying::LibraryIdentity& recorded);

// The identity shown in messages: "time stamp 6866a639, image size 059e5000, checksum 056c90".
std::string describe_pe_build_id(const std::string& build_id);

}  // namespace nvrtc_cache::tools::windows
