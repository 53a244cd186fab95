/* Forced into LMDB's mdb.c in the Windows build (windows/CMakeLists.txt): its GetFileInformationByHandle
 * call, made once on lock.mdb to name the lock file's mutexes, goes to nvrtc_cache_lock_file_information
 * (store/lmdb/lock_file_volume.h says why and what it answers). windows.h is included first, so its own
 * declaration is untouched; LMDB's later include of it adds nothing. C, for mdb.c. */
#ifndef NVRTC_CACHE_LOCK_FILE_INFORMATION_WINDOWS_H
#define NVRTC_CACHE_LOCK_FILE_INFORMATION_WINDOWS_H

#include <windows.h>

#ifdef __cplusplus
extern "C" {
#endif
BOOL WINAPI nvrtc_cache_lock_file_information(HANDLE file, LPBY_HANDLE_FILE_INFORMATION out);
#ifdef __cplusplus
}
#endif

#ifndef NVRTC_CACHE_LOCK_FILE_INFORMATION_DEFINITION
#define GetFileInformationByHandle nvrtc_cache_lock_file_information
#endif

#endif
