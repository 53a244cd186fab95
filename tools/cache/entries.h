// Entries: the results a cache holds — NVRTC compiles, nvJitLink links and libNVVM compiles — decoded
// for people (`ls`, `inspect`, `extract`, `stats`). Contract: reads the store only (one read transaction per walk);
// single-threaded.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/compile_entry.h"
#include "core/handle_entry.h"
#include "direct/dependencies.h"
#include "store/lmdb/lmdb_store.h"

namespace nvrtc_cache::tools {

// A store key of an entry: a prefix byte ('M' manifest, 'R' NVRTC result, 'L' link or NVVM result)
// and a 32-byte key.
inline constexpr std::size_t kStoreKeySize = 33;

struct EntryInfo {
  char prefix = 'R';                                  // 'R' an NVRTC compile; 'L' a link or an NVVM compile
  std::string key_hex;                                // the result key, 64 hex digits
  std::string manifest_hex;                           // the direct key of a manifest naming it ("" if none)
  std::optional<core::CompileEntry> entry;            // 'R': nullopt when damaged
  std::optional<core::HandleEntry> handle;            // 'L': nullopt when damaged
  std::optional<direct::DependencySet> dependencies;  // from the manifest naming it
  std::optional<store::AccessRecord> access;
  std::uint64_t stored_bytes = 0;  // the value's size in the store

  bool damaged() const { return prefix == 'L' ? !handle : !entry; }
  // "compile" (NVRTC), "link" (nvJitLink), "nvvm" (libNVVM).
  const char* kind() const;
  // The real call's time (what a hit saves), the outputs' bytes and the options; 0 / empty when damaged
  // or not recorded.
  std::uint64_t nanos() const;
  std::uint64_t output_bytes() const;
  std::vector<std::string> options() const;
  // The identity of the library that made it; nullopt when damaged or made before entries recorded it.
  std::optional<core::LibraryVersion> library() const;
  // "NVRTC", "nvJitLink", "libNVVM".
  const char* library_name() const;
};

// Every result in the store, in key order; `*walked` (optional) gets the walk's status.
std::vector<EntryInfo> read_entries(store::LmdbStore& store, store::Status* walked = nullptr);

// The cached call's result as people say it: "ok", "compile error", "bad option", "error N"
// (another nvrtcResult, or a link's or NVVM compile's non-zero code), "damaged" (the entry does not
// decode). A cached failure is served as the failure it was.
std::string compile_status(const EntryInfo& e);
// What to call the program in a listing: its name, unless the name says nothing (empty, the
// "default_program" cuda.core and others give every program, or a path: CuPy's temporary files):
// then its first name expression ("scale<float, 2>"), else the first kernel its PTX defines
// (demangled, without its parameters), else a path's file name, else its options. A link or NVVM
// compile: "link: " or "nvvm: " and its inputs' names (an NVVM compile of unnamed modules: the first
// kernel of its PTX).
std::string program_label(const EntryInfo& e);

// The library that made the entry, for --json: {"name", "version" ("13.0", or "unknown" for an entry made
// before entries recorded it), "major", "minor" (null when unknown), "build_id" (hex, "" when unknown)}.
nlohmann::ordered_json library_json(const EntryInfo& e);

// "sm_80" from -arch=sm_80 / --gpu-architecture sm_80 / -arch compute_90; "" when not given.
std::string architecture_of(const std::vector<std::string>& options);
// "30d", "12h", "90m", "3600s", "2w" -> seconds; nullopt when malformed or without a unit (a bare
// "30" is ambiguous: kAgeUnits says which units there are).
std::optional<std::int64_t> parse_duration(const std::string& text);
inline constexpr const char* kAgeUnits = "s, m, h, d or w: 30d, 12h, 90m, 3600s, 2w";
// "1.23 s", "45.6 ms"; "317 KiB", "10.0 GiB" (binary units, three significant digits).
std::string human_duration(std::uint64_t nanos);
std::string human_bytes(std::uint64_t bytes);
// Local time of a Unix time, "2026-11-22 05:40"; "-" for 0.
std::string human_time(std::int64_t unix_seconds);

// The single entry whose key starts with `prefix` (hex, at least 4 digits), else the single entry
// named `prefix` (find_entry_named); else nullopt, with *problem saying none or which ones.
std::optional<EntryInfo> find_entry(std::vector<EntryInfo> entries, const std::string& prefix, std::string* problem);
// The single entry whose program is called `name`: the name it was given, or its program_label().
std::optional<EntryInfo> find_entry_named(std::vector<EntryInfo> entries, const std::string& name,
                                          std::string* problem);

}  // namespace nvrtc_cache::tools
