/* Forced into LMDB's mdb.c in the Windows build (windows/CMakeLists.txt), which routes two of its calls
 * through functions of lock_file_information_windows.cc:
 * - its GetFileInformationByHandle call, made once on lock.mdb to name the lock file's mutexes, goes to
 *   nvrtc_cache_lock_file_information (store/lmdb/lock_file_volume.h says why and what it answers);
 * - its OpenMutexA calls, by which every process but the lock file's first opens those mutexes by the
 *   names the lock file holds, go to nvrtc_cache_open_lock_mutex: OpenMutexA, or, where no mutex of
 *   that name exists, the mutex created under it, as the first process made it. A named mutex lives
 *   only while a handle on it is open, and LMDB's close closes its mutex handles before it releases
 *   its lock on lock.mdb: a process that opens the environment while the last other user is closing
 *   it finds the lock file in use (no initialisation: it opens by name) and the mutexes gone, and
 *   LMDB's own open fails with ERROR_FILE_NOT_FOUND (a third or more of the opens of two processes
 *   opening and closing one environment in a loop under Wine; a replay worker that then finds "the
 *   cache unavailable"). Creating it is safe: every process that uses the environment holds a handle on
 *   both mutexes from its open to its close, so a name without a mutex means that no process holds
 *   or waits for it, and an unowned mutex under that name is the state it had; every later opener,
 *   by name, finds the one that exists.
 * windows.h is included first, so its own declarations are untouched; LMDB's later include of it adds
 * nothing. C, for mdb.c. */
#ifndef NVRTC_CACHE_LOCK_FILE_INFORMATION_WINDOWS_H
#define NVRTC_CACHE_LOCK_FILE_INFORMATION_WINDOWS_H

#include <windows.h>

#ifdef __cplusplus
extern "C" {
#endif
BOOL WINAPI nvrtc_cache_lock_file_information(HANDLE file, LPBY_HANDLE_FILE_INFORMATION out);
HANDLE WINAPI nvrtc_cache_open_lock_mutex(DWORD access, BOOL inherit, LPCSTR name);
#ifdef __cplusplus
}
#endif

#ifndef NVRTC_CACHE_LOCK_FILE_INFORMATION_DEFINITION
#define GetFileInformationByHandle nvrtc_cache_lock_file_information
#define OpenMutexA nvrtc_cache_open_lock_mutex
#endif

#endif
