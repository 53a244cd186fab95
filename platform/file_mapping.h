// File mapping: what mapping a file costs on disk. POSIX: a mapping larger than the file costs
// nothing (LMDB's data file grows only by the pages written; the rest of the map is not in the file).
// Windows: mapping a file sets its end to the mapping's size (LMDB 0.9 extends data.mdb to the full
// map size when it maps it), and NTFS allocates that space; so a store there starts its map small and
// grows it as it fills (store/lmdb/map_growth.h).
// Contract: a pure function (no filesystem access); thread-safe; fork-safe; never throws.
// Implementations, chosen by the build: file_mapping_posix.cc and file_mapping_windows.cc.
#pragma once

namespace nvrtc_cache::platform {

// Whether a mapped file is made as large as its mapping.
bool mapping_sizes_the_file();

}  // namespace nvrtc_cache::platform
