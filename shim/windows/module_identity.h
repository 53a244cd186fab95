// What the Windows port reads of a loaded module or a file: the module containing an address, a
// PE image's build identity, the names it exports, and whether two paths are one file. Windows only.
// Contract: thread-safe; reads only headers of modules already loaded (never loads one); never
// throws except std::bad_alloc; the thread's last-error value may change (callers keep it).
#pragma once

#include <windows.h>

#include <string>
#include <string_view>
#include <vector>

namespace nvrtc_cache::shim::windows {

// The module holding `address` (nullptr when none).
HMODULE module_containing(const void* address);
// "pe:" and the image's link stamp, image size and checksum: what tells one build of a DLL from another.
std::string pe_build_id(HMODULE module);
// The names `module` exports that start with `prefix`.
std::vector<std::string> exported_names(HMODULE module, std::string_view prefix);
// Whether `a` and `b` are the same file (volume and file index; the names, case-blind, when either
// cannot be opened).
bool same_file(const std::wstring& a, const std::wstring& b);

}  // namespace nvrtc_cache::shim::windows
