// File mapping: what mapping a file costs on disk. POSIX: a mapping larger than the file costs
// nothing (LMDB's data file grows only by the pages written; the rest of the map is not in the file).
// Windows: mapping a file sets its end to the mapping's size (LMDB 0.9 extends data.mdb to the full
// map size when it maps it), and NTFS allocates that space; so a store there starts its map small and
// grows it as it fills (store/lmdb/map_growth.h). A file sized with ftruncate is sparse on POSIX: the
// first write to each page of a shared mapping of it needs a block, and on a full filesystem that
// write faults (SIGBUS); reserve_mapped_space holds real blocks for such a file.
// Contract: thread-safe; fork-safe; never throws; mapping_sizes_the_file is pure, reserve_mapped_space
// touches only the descriptor it is given and keeps errno.
// Implementations, chosen by the build: file_mapping_posix.cc and file_mapping_windows.cc.
#pragma once

namespace nvrtc_cache::platform {

// Whether a mapped file is made as large as its mapping.
bool mapping_sizes_the_file();

// Has the filesystem hold real space for the first `bytes` bytes of the open file `fd` (fallocate;
// with `keep_size` the file's size is left as it is: FALLOC_FL_KEEP_SIZE). 0 when reserved, and where
// the filesystem cannot reserve (some network and FUSE ones: nothing reserved, nothing refused);
// otherwise the error (ENOSPC or EDQUOT: the space cannot be had). Windows: 0 (an extended file is
// not sparse there).
int reserve_mapped_space(int fd, long long bytes, bool keep_size);

}  // namespace nvrtc_cache::platform
