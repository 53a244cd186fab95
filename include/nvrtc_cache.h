/* nvrtc_cache.h: the public C interface of nvrtc-cache (libnvrtc-cache-api.so.1).
 *
 * A cache of opaque values under caller keys, kept in the same crash-safe, multi-process LMDB store
 * the shim uses (and, behind it, the same shared tiers: Redis, file:// directories), in a namespace of
 * its own: an entry stored here can never be served as, or confused with, one of the shim's. It is
 * what the Python backend nvrtc_cache.ProgramCache (cuda.core's ProgramCacheResource) binds to, and
 * any program may use it to cache what it compiles itself.
 *
 * Keys are any bytes, of any length (empty included); two keys name the same entry only when their
 * bytes are equal. Values are any bytes, returned exactly as stored or not at all: a value that fails
 * its checks (the store's checksum, a shared tier's MAC, the entry's own key) is a miss.
 *
 * ABI: C only, stable within a major version (the library's soname: libnvrtc-cache-api.so.1). Every
 * struct passed in begins with its own size, so that a later minor version may grow it; a caller sets
 * it with sizeof. Only nvrtc_cache_* symbols are exported.
 *
 * Status codes: every function that can fail returns an nvrtc_cache_status; on failure
 * nvrtc_cache_error_message() says why, for the calling thread. No function throws, prints, aborts or
 * changes errno; the library fails open (a store it cannot use is an error or a miss, never a crash).
 *
 * Threads: a handle may be used by any number of threads at once, except nvrtc_cache_close(), which
 * must be the last call on the handle (no other thread inside or after it).
 *
 * Processes: any number of processes (and of handles in one process) may open the same directory at
 * once; writers serialise on the store's lock, readers never wait. After fork() the child may go on
 * using a handle opened before the fork: it opens the store afresh on its first call (it never
 * touches the parent's LMDB environment); do not fork while another thread is inside a call.
 *
 * One process, two copies: in a process the shim (libnvrtc-cache.so, or its proxy libnvrtc.so.13) is
 * loaded into, LMDB forbids a second environment on the shim's own store directory, so
 * nvrtc_cache_open() refuses that directory with NVRTC_CACHE_IN_USE (open another one).
 */
#ifndef NVRTC_CACHE_H_
#define NVRTC_CACHE_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NVRTC_CACHE_VERSION_MAJOR 1
#define NVRTC_CACHE_VERSION_MINOR 0
#define NVRTC_CACHE_VERSION_PATCH 0
/* The version this header describes, (major << 16) | (minor << 8) | patch. */
#define NVRTC_CACHE_VERSION \
  ((NVRTC_CACHE_VERSION_MAJOR << 16) | (NVRTC_CACHE_VERSION_MINOR << 8) | NVRTC_CACHE_VERSION_PATCH)

#if defined(__GNUC__)
#define NVRTC_CACHE_EXPORT __attribute__((visibility("default")))
#else
#define NVRTC_CACHE_EXPORT
#endif

typedef enum nvrtc_cache_status {
  NVRTC_CACHE_OK = 0,
  NVRTC_CACHE_NOT_FOUND = 1,        /* no such entry (get, erase) */
  NVRTC_CACHE_INVALID_ARGUMENT = 2, /* a NULL where a pointer is needed, a struct size too small, a bad setting */
  NVRTC_CACHE_IO_ERROR = 3,         /* the store could not be opened, read or written */
  NVRTC_CACHE_FULL = 4,             /* the value does not fit in the store (more than half its map size) */
  NVRTC_CACHE_READ_ONLY = 5,        /* the store was opened read-only (its files are not writable) */
  NVRTC_CACHE_CORRUPTION = 6,       /* the store is damaged (it is moved aside and recreated on the next open) */
  NVRTC_CACHE_NO_MEMORY = 7,        /* an allocation failed */
  NVRTC_CACHE_IN_USE = 8            /* the shim in this process uses this store directory (see above) */
} nvrtc_cache_status;

/* An open cache. */
typedef struct nvrtc_cache_s nvrtc_cache_t;

/* nvrtc_cache_options.flags */
/* Start from the defaults only: neither the environment (NVRTC_CACHE_*) nor the configuration files
 * are read. Without it, a cache starts from the configuration the shim would use (defaults < system
 * file < user file < environment), so that it shares the shim's directory and shared tiers. */
#define NVRTC_CACHE_OPEN_DEFAULTS 0x1u

typedef struct nvrtc_cache_options {
  size_t size;           /* sizeof(nvrtc_cache_options) */
  unsigned flags;        /* NVRTC_CACHE_OPEN_* */
  const char* directory; /* the cache directory (the store is <directory>/store); NULL: the configured one */
  /* Settings over the configuration, as lines of nvrtc-cache.conf ("remote = redis://host:6379\n"):
   * cache_dir, max_size (the store's map size, shared with the shim), shared, remote,
   * remote_secret_file. NULL or "": none. The open fails with NVRTC_CACHE_INVALID_ARGUMENT, its
   * message naming the line ("settings:2: ..."), for a line that is not `key = value`, an unknown
   * key, one of the shim's own settings (log, disable, compression, ...: the C API would not use
   * them), a key without a value, a bad value, a shared tier URL that does not parse, or a
   * remote_secret_file that cannot be used. */
  const char* settings;
  /* A cap on this namespace: after a put leaves the bytes of its entries (keys and values) above it,
   * its least recently used entries are erased until they fit (a value larger than the cap does not
   * survive its own put). 0: no cap of its own (the store's map size still bounds everything). */
  uint64_t max_size_bytes;
} nvrtc_cache_options;

typedef struct nvrtc_cache_stats {
  size_t size;            /* sizeof(nvrtc_cache_stats), set by the caller */
  uint64_t hits;          /* gets answered through this handle (from the store or a shared tier) */
  uint64_t misses;        /* gets not answered */
  uint64_t puts;          /* values stored */
  uint64_t put_failures;  /* puts that failed */
  uint64_t erases;        /* entries erased by erase (not clear, not eviction) */
  uint64_t evictions;     /* entries erased to keep the namespace under max_size_bytes */
  uint64_t rejected;      /* values found but refused: stored under another key, or malformed */
  uint64_t shared_tiers;  /* shared tiers behind the store */
  uint64_t store_entries; /* entries in the whole store (the shim's included) */
  uint64_t store_bytes;   /* their payload bytes */
} nvrtc_cache_stats;

/* The library's version, as NVRTC_CACHE_VERSION. Compare its major with NVRTC_CACHE_VERSION_MAJOR. */
NVRTC_CACHE_EXPORT unsigned nvrtc_cache_version(void);

/* A constant name of `status` ("NVRTC_CACHE_NOT_FOUND"); "unknown status" for any other value. */
NVRTC_CACHE_EXPORT const char* nvrtc_cache_status_name(int status);

/* The calling thread's message about its last failed call: one line, valid until this thread's next
 * call into the library; "" when the last call succeeded. */
NVRTC_CACHE_EXPORT const char* nvrtc_cache_error_message(void);

/* Opens (creating it if missing) the cache `options` describes (NULL: all defaults of the
 * configuration) and stores its handle in *cache.
 * Errors: INVALID_ARGUMENT (cache NULL, options->size too small, a setting refused: see
 * options->settings; without NVRTC_CACHE_OPEN_DEFAULTS also a malformed NVRTC_CACHE_REMOTE or unusable
 * NVRTC_CACHE_REMOTE_SECRET_FILE of the configuration), IO_ERROR (the directory cannot be created or
 * is unsafe: owned by another user or writable by others, unless `shared = 1`), IN_USE, NO_MEMORY.
 * A shared tier that cannot be reached is not an error (it is skipped until it answers: fail-open);
 * one whose URL is malformed is. The shim's own settings in the environment or the configuration
 * files (NVRTC_CACHE_LOG, ...) are the shim's: they are neither used nor refused. */
NVRTC_CACHE_EXPORT int nvrtc_cache_open(const nvrtc_cache_options* options, nvrtc_cache_t** cache);

/* The cache directory in use (a network filesystem is replaced by a node-local fallback); valid until
 * nvrtc_cache_close(). NULL for a NULL handle. */
NVRTC_CACHE_EXPORT const char* nvrtc_cache_directory(const nvrtc_cache_t* cache);

/* Looks `key` up: on a hit *value is a copy of the value, allocated by the library (free it with
 * nvrtc_cache_free(); a non-NULL pointer also for an empty value), and *value_size its size. On a
 * miss in the store the shared tiers are asked, in order, and a good value is copied into the store.
 * Errors: NOT_FOUND (absent, evicted, or refused as damaged), INVALID_ARGUMENT, NO_MEMORY. */
NVRTC_CACHE_EXPORT int nvrtc_cache_get(nvrtc_cache_t* cache, const void* key, size_t key_size, void** value,
                                       size_t* value_size);

/* Frees a value nvrtc_cache_get() returned; NULL is ignored. */
NVRTC_CACHE_EXPORT void nvrtc_cache_free(void* value);

/* Stores `value` under `key`, replacing any value it had; then sends it to each writable shared tier
 * in the background (nvrtc_cache_flush() waits for that). A `value` of size 0 may be NULL.
 * Errors: INVALID_ARGUMENT, FULL, READ_ONLY, IO_ERROR, NO_MEMORY. */
NVRTC_CACHE_EXPORT int nvrtc_cache_put(nvrtc_cache_t* cache, const void* key, size_t key_size, const void* value,
                                       size_t value_size);

/* Removes the entry under `key` from this node's store. Shared tiers never delete: a value a shared
 * tier still holds is found again by a later get.
 * Errors: NOT_FOUND (no such entry), INVALID_ARGUMENT, READ_ONLY, IO_ERROR. */
NVRTC_CACHE_EXPORT int nvrtc_cache_erase(nvrtc_cache_t* cache, const void* key, size_t key_size);

/* Removes every entry of this namespace from this node's store (the shim's entries stay; shared
 * tiers are not cleared). Errors: INVALID_ARGUMENT, READ_ONLY, IO_ERROR. */
NVRTC_CACHE_EXPORT int nvrtc_cache_clear(nvrtc_cache_t* cache);

/* The number of entries of this namespace in this node's store (exact, across processes).
 * Errors: INVALID_ARGUMENT, IO_ERROR. */
NVRTC_CACHE_EXPORT int nvrtc_cache_count(nvrtc_cache_t* cache, uint64_t* count);

/* The bytes those entries occupy (each entry's key and value, as max_size_bytes counts them).
 * Errors: INVALID_ARGUMENT, IO_ERROR. */
NVRTC_CACHE_EXPORT int nvrtc_cache_size(nvrtc_cache_t* cache, uint64_t* bytes);

/* This handle's statistics; `stats->size` must be set. Errors: INVALID_ARGUMENT. */
NVRTC_CACHE_EXPORT int nvrtc_cache_stats_get(nvrtc_cache_t* cache, nvrtc_cache_stats* stats);

/* Waits at most `timeout_ms` for the values queued for the shared tiers. Errors: INVALID_ARGUMENT,
 * IO_ERROR (some were not written in time; they still may be). OK at once without shared tiers. */
NVRTC_CACHE_EXPORT int nvrtc_cache_flush(nvrtc_cache_t* cache, unsigned timeout_ms);

/* Waits up to 1 s for the values queued for the shared tiers, then releases the handle. NULL is
 * ignored. Must be the last call on the handle. */
NVRTC_CACHE_EXPORT void nvrtc_cache_close(nvrtc_cache_t* cache);

#ifdef __cplusplus
}
#endif

#endif /* NVRTC_CACHE_H_ */
