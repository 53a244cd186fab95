// Working-directory markers: why a compile or a link from another working directory misses. NVRTC
// embeds the working directory in some outputs (-dlto's LTO-IR, -G, OptiX IR, ...), so the same
// program compiled in two directories has two keys, and a link of those outputs two inputs. Each such
// stored compile leaves, in this node's store only (never a shared tier: Store::put_local):
//   - a directory marker: its inputs' key in any directory -> the directory it was stored from;
//   - an output marker per output (LTO-IR, cubin, PTX): the output's digest -> that key and directory.
// A stored link of such outputs leaves a link marker: its key with each marked input stood in for
// by its directory-free key -> the directory those inputs were compiled in. A first call (a
// new_program miss) that finds a marker naming another directory is miss.working_directory.
// Keys: direct::kWorkingDirectoryMarkerPrefix + 32 bytes (direct/manifest.h).
// Contract: thread-safe as the store is; never throws on a store failure (a marker is a hint: a failed
// put or get changes no result); values read back are validated (size, directory length).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "keying/cache_key.h"
#include "keying/handle_inputs.h"
#include "keying/program_inputs.h"
#include "store/store.h"

namespace nvrtc_cache::shim {

// ---- NVRTC compiles ----
// Marks a stored compile whose output embeds the working directory (inputs.working_directory_use is
// kAlways), with the outputs it produced (empty views: none of that kind).
void mark_compile_directory(store::Store& store, const keying::ProgramInputs& inputs, std::string_view lto_ir,
                            std::string_view cubin, std::string_view ptx);
// The directory these inputs were compiled and stored in, when that is not this one; nullopt otherwise.
std::optional<std::string> compiled_in_another_directory(store::Store& store, const keying::ProgramInputs& inputs);

// ---- Links (any handle library: its inputs may be NVRTC's outputs) ----
struct InputsInAnyDirectory {
  keying::CacheKey key;   // the link's key with each marked input stood in for
  std::string directory;  // where those inputs were compiled
};
// The directory-free key of a link whose inputs include marked outputs; nullopt when none is marked.
std::optional<InputsInAnyDirectory> inputs_in_any_directory(store::Store& store, const keying::HandleInputs& inputs,
                                                            std::string_view schema);
void mark_link_directory(store::Store& store, const InputsInAnyDirectory& link);
// The directory the inputs of an earlier stored link of these inputs were compiled in, when that is
// not where these were; nullopt otherwise.
std::optional<std::string> linked_from_another_directory(store::Store& store, const InputsInAnyDirectory& link);

}  // namespace nvrtc_cache::shim
