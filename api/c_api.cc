// The C API's entry points (include/nvrtc_cache.h): argument checks, the status codes and the
// calling thread's message, around api::Cache. Nothing thrown crosses them: std::bad_alloc is
// NVRTC_CACHE_NO_MEMORY, anything else NVRTC_CACHE_IO_ERROR; errno is preserved.
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>

#include "api/cache.h"
#include "include/nvrtc_cache.h"

struct nvrtc_cache_s {
  std::unique_ptr<nvrtc_cache::api::Cache> cache;
};

namespace {

thread_local std::string t_message;

// Runs `body` (returning a status) with errno preserved and every exception turned into a status.
template <typename Body>
int guarded(Body&& body) {
  const int saved_errno = errno;
  int status = NVRTC_CACHE_IO_ERROR;
  try {
    t_message.clear();
    status = body();
  } catch (const std::bad_alloc&) {
    t_message = "out of memory";
    status = NVRTC_CACHE_NO_MEMORY;
  } catch (...) {
    t_message = "unexpected failure";
    status = NVRTC_CACHE_IO_ERROR;
  }
  errno = saved_errno;
  return status;
}

int fail(int status, const char* message) {
  t_message = message;
  return status;
}

int report(const std::optional<nvrtc_cache::api::Failure>& failure) {
  if (!failure) return NVRTC_CACHE_OK;
  t_message = failure->message;
  return failure->code;
}

bool usable(const nvrtc_cache_t* cache) { return cache != nullptr && cache->cache != nullptr; }

}  // namespace

extern "C" {

unsigned nvrtc_cache_version(void) { return NVRTC_CACHE_VERSION; }

const char* nvrtc_cache_status_name(int status) {
  switch (status) {
    case NVRTC_CACHE_OK:
      return "NVRTC_CACHE_OK";
    case NVRTC_CACHE_NOT_FOUND:
      return "NVRTC_CACHE_NOT_FOUND";
    case NVRTC_CACHE_INVALID_ARGUMENT:
      return "NVRTC_CACHE_INVALID_ARGUMENT";
    case NVRTC_CACHE_IO_ERROR:
      return "NVRTC_CACHE_IO_ERROR";
    case NVRTC_CACHE_FULL:
      return "NVRTC_CACHE_FULL";
    case NVRTC_CACHE_READ_ONLY:
      return "NVRTC_CACHE_READ_ONLY";
    case NVRTC_CACHE_CORRUPTION:
      return "NVRTC_CACHE_CORRUPTION";
    case NVRTC_CACHE_NO_MEMORY:
      return "NVRTC_CACHE_NO_MEMORY";
    case NVRTC_CACHE_IN_USE:
      return "NVRTC_CACHE_IN_USE";
    default:
      return "unknown status";
  }
}

const char* nvrtc_cache_error_message(void) { return t_message.c_str(); }

int nvrtc_cache_open(const nvrtc_cache_options* options, nvrtc_cache_t** cache) {
  return guarded([&] {
    if (cache == nullptr) return fail(NVRTC_CACHE_INVALID_ARGUMENT, "cache is NULL");
    *cache = nullptr;
    nvrtc_cache::api::OpenRequest request;
    if (options != nullptr) {
      // The fields up to max_size_bytes are version 1.0's: a caller must pass at least those.
      if (options->size < offsetof(nvrtc_cache_options, max_size_bytes) + sizeof(options->max_size_bytes))
        return fail(NVRTC_CACHE_INVALID_ARGUMENT, "options->size is smaller than version 1.0's options");
      if ((options->flags & ~NVRTC_CACHE_OPEN_DEFAULTS) != 0)
        return fail(NVRTC_CACHE_INVALID_ARGUMENT, "options->flags has unknown bits");
      request.from_defaults = (options->flags & NVRTC_CACHE_OPEN_DEFAULTS) != 0;
      if (options->directory != nullptr) {
        if (options->directory[0] == '\0') return fail(NVRTC_CACHE_INVALID_ARGUMENT, "options->directory is empty");
        request.directory = options->directory;
      }
      if (options->settings != nullptr) request.settings = options->settings;
      request.max_size_bytes = options->max_size_bytes;
    }
    nvrtc_cache::api::Failure failure;
    auto opened = nvrtc_cache::api::Cache::open(request, &failure);
    if (!opened) return report(failure);
    auto handle = std::make_unique<nvrtc_cache_s>();
    handle->cache = std::move(opened);
    *cache = handle.release();
    return static_cast<int>(NVRTC_CACHE_OK);
  });
}

const char* nvrtc_cache_directory(const nvrtc_cache_t* cache) {
  return usable(cache) ? cache->cache->directory().c_str() : nullptr;
}

int nvrtc_cache_get(nvrtc_cache_t* cache, const void* key, size_t key_size, void** value, size_t* value_size) {
  return guarded([&] {
    if (value != nullptr) *value = nullptr;
    if (value_size != nullptr) *value_size = 0;
    if (!usable(cache) || (key == nullptr && key_size != 0) || value == nullptr || value_size == nullptr)
      return fail(NVRTC_CACHE_INVALID_ARGUMENT, "a NULL handle, key, value or value_size");
    const std::optional<std::string> found =
        cache->cache->get(std::string_view(static_cast<const char*>(key), key_size));
    if (!found) return fail(NVRTC_CACHE_NOT_FOUND, "no entry under this key");
    void* copy = std::malloc(found->empty() ? 1 : found->size());
    if (copy == nullptr) return fail(NVRTC_CACHE_NO_MEMORY, "out of memory");
    if (!found->empty()) std::memcpy(copy, found->data(), found->size());
    *value = copy;
    *value_size = found->size();
    return static_cast<int>(NVRTC_CACHE_OK);
  });
}

void nvrtc_cache_free(void* value) { std::free(value); }

int nvrtc_cache_put(nvrtc_cache_t* cache, const void* key, size_t key_size, const void* value, size_t value_size) {
  return guarded([&] {
    if (!usable(cache) || (key == nullptr && key_size != 0) || (value == nullptr && value_size != 0))
      return fail(NVRTC_CACHE_INVALID_ARGUMENT, "a NULL handle, key or value");
    return report(cache->cache->put(std::string_view(static_cast<const char*>(key), key_size),
                                    std::string_view(static_cast<const char*>(value), value_size)));
  });
}

int nvrtc_cache_erase(nvrtc_cache_t* cache, const void* key, size_t key_size) {
  return guarded([&] {
    if (!usable(cache) || (key == nullptr && key_size != 0))
      return fail(NVRTC_CACHE_INVALID_ARGUMENT, "a NULL handle or key");
    return report(cache->cache->erase(std::string_view(static_cast<const char*>(key), key_size)));
  });
}

int nvrtc_cache_clear(nvrtc_cache_t* cache) {
  return guarded([&] {
    if (!usable(cache)) return fail(NVRTC_CACHE_INVALID_ARGUMENT, "a NULL handle");
    return report(cache->cache->clear());
  });
}

int nvrtc_cache_count(nvrtc_cache_t* cache, uint64_t* count) {
  return guarded([&] {
    if (!usable(cache) || count == nullptr) return fail(NVRTC_CACHE_INVALID_ARGUMENT, "a NULL handle or count");
    std::uint64_t n = 0;
    const int status = report(cache->cache->count(&n));
    if (status == NVRTC_CACHE_OK) *count = n;
    return status;
  });
}

int nvrtc_cache_size(nvrtc_cache_t* cache, uint64_t* bytes) {
  return guarded([&] {
    if (!usable(cache) || bytes == nullptr) return fail(NVRTC_CACHE_INVALID_ARGUMENT, "a NULL handle or bytes");
    std::uint64_t n = 0;
    const int status = report(cache->cache->size(&n));
    if (status == NVRTC_CACHE_OK) *bytes = n;
    return status;
  });
}

int nvrtc_cache_stats_get(nvrtc_cache_t* cache, nvrtc_cache_stats* stats) {
  return guarded([&] {
    if (!usable(cache) || stats == nullptr) return fail(NVRTC_CACHE_INVALID_ARGUMENT, "a NULL handle or stats");
    if (stats->size < sizeof(nvrtc_cache_stats))
      return fail(NVRTC_CACHE_INVALID_ARGUMENT, "stats->size is smaller than version 1.0's statistics");
    const nvrtc_cache::api::Stats s = cache->cache->stats();
    stats->hits = s.hits;
    stats->misses = s.misses;
    stats->puts = s.puts;
    stats->put_failures = s.put_failures;
    stats->erases = s.erases;
    stats->evictions = s.evictions;
    stats->rejected = s.rejected;
    stats->shared_tiers = s.shared_tiers;
    stats->store_entries = s.store_entries;
    stats->store_bytes = s.store_bytes;
    return static_cast<int>(NVRTC_CACHE_OK);
  });
}

int nvrtc_cache_flush(nvrtc_cache_t* cache, unsigned timeout_ms) {
  return guarded([&] {
    if (!usable(cache)) return fail(NVRTC_CACHE_INVALID_ARGUMENT, "a NULL handle");
    if (!cache->cache->flush(std::chrono::milliseconds(timeout_ms)))
      return fail(NVRTC_CACHE_IO_ERROR, "some values were not written to the shared tiers in time");
    return static_cast<int>(NVRTC_CACHE_OK);
  });
}

void nvrtc_cache_close(nvrtc_cache_t* cache) {
  (void)guarded([&] {
    if (cache == nullptr) return static_cast<int>(NVRTC_CACHE_OK);
    std::unique_ptr<nvrtc_cache_s> owned(cache);
    if (owned->cache) owned->cache->close();
    return static_cast<int>(NVRTC_CACHE_OK);
  });
}

}  // extern "C"
