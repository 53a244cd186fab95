// import_patch: points one loaded library's own imports of the watched libc functions (its GOT
// slots: JUMP_SLOT and GLOB_DAT relocations naming a function of shim/watch/watched_libc.def) at
// the shim's hooks, so that its calls are observed whatever scope it was loaded in — RTLD_LOCAL
// beside a proxy that is itself RTLD_LOCAL, RTLD_DEEPBIND, a namespace the shim's exports do not
// reach. The Linux counterpart of patching an import table.
// A slot is redirected only when the function it holds (or, not yet bound lazily, the one libc
// defines for the version it names) is the very function the hook forwards to; one that already
// holds the hook is left as it is, and one bound to anything else (another interposer, another
// version) is left alone and counted. Slots in RELRO are made writable for the write and
// read-only again.
// Contract: the caller serialises calls (shim/watch/file_watch.cc: under the NVRTC code registry's
// lock, inside dl_iterate_phdr); allocates nothing; never calls dlsym; preserves errno; idempotent.
// Other threads may be calling through the slots meanwhile: each slot is one aligned pointer
// store, and the old and the new function forward to the same libc function.
#pragma once

#include <link.h>

namespace nvrtc_cache::shim::watch {

struct ImportPatch {
  int redirected = 0;  // slots now holding a hook
  int already = 0;     // slots that held the hook already (the shim's exports interpose there)
  int left = 0;        // watched imports bound to something else, left alone
};

ImportPatch redirect_watched_imports(const dl_phdr_info& object);

}  // namespace nvrtc_cache::shim::watch
