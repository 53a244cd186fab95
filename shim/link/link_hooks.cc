// The Linux shim's nvJitLink hooks: record what a link is made of (nvJitLinkCreate's options, each
// nvJitLinkAddData / nvJitLinkAddFile input), then at nvJitLinkComplete key it, look it up (the
// direct-mode manifest of shim/manifest_lookup.h), and serve the stored result, or (after waiting
// for another link of the same inputs: shim/single_flight.h) link for real under the watch, read
// every output back and store it. The getters of a served handle answer from the entry. Create,
// Add* and Destroy always reach the real nvJitLink, so a handle is always a real one: a call the
// entry cannot answer (a second Complete, an Add after a served Complete, a NULL argument to a
// getter) first runs the real nvJitLinkComplete the cache skipped, then goes to nvJitLink. A link is
// cached at its first Complete only.
#include "shim/link/link_hooks.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "core/link_entry.h"
#include "core/log.h"
#include "core/stats.h"
#include "direct/dependencies.h"
#include "direct/manifest.h"
#include "keying/link_inputs.h"
#include "keying/link_options.h"
#include "platform/errno_guard.h"
#include "shim/compile_steps.h"
#include "shim/link/link_table.h"
#include "shim/manifest_lookup.h"
#include "shim/runtime.h"
#include "shim/single_flight.h"
#include "shim/watch/file_watch.h"
#include "shim/watch/observations.h"
#include "util/clock.h"

namespace nvrtc_cache::shim::hooks {
namespace {

using platform::ErrnoGuard;
using Clock = std::chrono::steady_clock;
using interpose::RealNvJitLink;

std::int64_t nanos_since(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
}

// The most bytes a file added with nvJitLinkAddFile, or an output read back, may hold to be cached.
constexpr std::uint64_t kMaxCapturedBytes = std::uint64_t{1} << 31;

// The content of the regular file at `path`, or nullopt.
std::optional<std::string> read_regular_file(const char* path) {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::optional<std::string> content;
  struct stat st{};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && static_cast<std::uint64_t>(st.st_size) <= kMaxCapturedBytes) {
    std::string bytes;
    char buffer[1 << 16];
    for (;;) {
      const ssize_t n = ::read(fd, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 || bytes.size() + static_cast<std::size_t>(n) > kMaxCapturedBytes) break;
      if (n == 0) {
        content = std::move(bytes);
        break;
      }
      bytes.append(buffer, static_cast<std::size_t>(n));
    }
  }
  ::close(fd);
  return content;
}

std::string current_working_directory() {
  std::string dir(256, '\0');
  while (getcwd(dir.data(), dir.size()) == nullptr) {
    if (errno != ERANGE) return {};
    dir.resize(dir.size() * 2);
  }
  dir.resize(std::strlen(dir.c_str()));
  return dir;
}

// How a log line names a link: its first input's name, and the key `nvrtc-cache inspect` takes.
std::string link_label(const LinkRecord& record, const keying::CacheKey* key) {
  std::string label = "link of " + std::to_string(record.inputs.inputs.size()) + " inputs";
  if (!record.inputs.inputs.empty()) label += " ('" + record.inputs.inputs.front().name.value_or("(no name)") + "', ...)";
  if (key != nullptr) label += " (key " + keying::to_hex(*key) + ")";
  return label;
}

template <typename MakeMessage>
void log_info(MakeMessage&& make_message) {
  if (core::log_enabled(core::LogLevel::kInfo)) core::log_line(core::LogLevel::kInfo, make_message());
}

// Return codes of nvJitLinkComplete worth keeping: success and the errors its inputs and options
// decide. An internal or thread-pool error may not happen again.
bool link_result_is_cacheable(nvJitLinkResult rc) {
  return core::is_known_nvjitlink_result(rc) && rc != NVJITLINK_ERROR_INTERNAL && rc != NVJITLINK_ERROR_THREADPOOL;
}

// What a data getter writes into a buffer of `size` bytes followed by a guard filled with `fill`:
// the bytes up to the last one it wrote (at least `size`: nvJitLink writes a NUL past an empty
// log's size of 0). Its return code goes to `rc`.
template <typename Data>
std::string written_by(nvJitLinkHandle handle, nvJitLinkResult (*data_getter)(nvJitLinkHandle, Data*),
                       std::size_t size, char fill, std::int32_t* rc) {
  std::string bytes(size + core::kMaxLinkBytesPastSize, fill);
  *rc = data_getter(handle, reinterpret_cast<Data*>(bytes.data()));
  std::size_t end = bytes.size();
  while (end > size && bytes[end - 1] == fill) --end;
  bytes.resize(end);
  return bytes;
}

// One output as its size and data getters answer it now, or nullopt when it cannot be replayed
// exactly (a getter wrote where it failed, wrote past the guard, or answered twice differently).
template <typename Data>
std::optional<core::RecordedOutput> read_back(nvJitLinkHandle handle, nvJitLinkResult (*size_getter)(nvJitLinkHandle, size_t*),
                                              nvJitLinkResult (*data_getter)(nvJitLinkHandle, Data*)) {
  if (size_getter == nullptr || data_getter == nullptr) return std::nullopt;
  constexpr char kFill = static_cast<char>(0xa5);
  core::RecordedOutput o;
  std::size_t size = SIZE_MAX;
  o.size_rc = size_getter(handle, &size);
  if (o.size_rc == NVJITLINK_SUCCESS) {
    if (size == SIZE_MAX || size > kMaxCapturedBytes) return std::nullopt;
    o.size_written = true;
    o.size = size;
    // Twice, over guards of two fills, so that a byte written past the size equal to one fill is seen.
    std::int32_t other_rc = 0;
    std::string bytes = written_by(handle, data_getter, size, kFill, &o.data_rc);
    const std::string again = written_by(handle, data_getter, size, static_cast<char>(~kFill), &other_rc);
    if (o.data_rc != other_rc) return std::nullopt;
    if (o.data_rc == NVJITLINK_SUCCESS) {
      const bool first_longer = bytes.size() >= again.size();
      const std::string& longer = first_longer ? bytes : again;
      const std::string& shorter = first_longer ? again : bytes;
      if (longer.compare(0, shorter.size(), shorter) != 0 || longer.size() >= size + core::kMaxLinkBytesPastSize) {
        return std::nullopt;
      }
      o.bytes = longer;
    } else if (bytes.find_first_not_of(kFill) != std::string::npos) {
      return std::nullopt;
    }
  } else {
    if (size != SIZE_MAX) return std::nullopt;
    // Without a size there is nothing to write: nvJitLink answers the data getter with an error and
    // writes nothing (checked here on a scratch buffer, as a host that ignored the size might pass).
    std::string scratch(std::size_t{1} << 16, kFill);
    o.data_rc = data_getter(handle, reinterpret_cast<Data*>(scratch.data()));
    if (o.data_rc == NVJITLINK_SUCCESS || scratch.find_first_not_of(kFill) != std::string::npos) return std::nullopt;
  }
  return o;
}

std::optional<core::LinkEntry> entry_of_link(const RealNvJitLink& real, nvJitLinkHandle handle, nvJitLinkResult rc,
                                             std::int64_t link_nanos, const LinkRecord& record) {
  core::LinkEntry entry;
  entry.complete_rc = rc;
  auto cubin = read_back(handle, real.nvJitLinkGetLinkedCubinSize, real.nvJitLinkGetLinkedCubin);
  auto ptx = read_back(handle, real.nvJitLinkGetLinkedPtxSize, real.nvJitLinkGetLinkedPtx);
  auto ltoir = real.nvJitLinkGetLinkedLTOIRSize && real.nvJitLinkGetLinkedLTOIR
                   ? read_back(handle, real.nvJitLinkGetLinkedLTOIRSize, real.nvJitLinkGetLinkedLTOIR)
                   : std::optional<core::RecordedOutput>(core::unavailable_output());
  auto error_log = read_back(handle, real.nvJitLinkGetErrorLogSize, real.nvJitLinkGetErrorLog);
  auto info_log = read_back(handle, real.nvJitLinkGetInfoLogSize, real.nvJitLinkGetInfoLog);
  if (!cubin || !ptx || !ltoir || !error_log || !info_log) return std::nullopt;
  entry.ltoir = std::move(*ltoir);
  entry.cubin = std::move(*cubin);
  entry.ptx = std::move(*ptx);
  entry.error_log = std::move(*error_log);
  entry.info_log = std::move(*info_log);
  entry.link_nanos = static_cast<std::uint64_t>(link_nanos);
  entry.description.options = record.inputs.options;
  for (const auto& input : record.inputs.inputs) {
    entry.description.input_names.push_back(input.name.value_or(""));
    entry.description.input_bytes += input.bytes.size();
  }
  if (!core::is_well_formed(entry)) return std::nullopt;
  return entry;
}

// Runs the real nvJitLinkComplete the cache skipped for a served handle, so that nvJitLink holds
// the state it would hold without the cache; the handle is no longer served.
void materialize(const RealNvJitLink& real, nvJitLinkHandle handle, LinkRecord& record) {
  if (!record.served) return;
  record.served.reset();
  ErrnoGuard guard;
  (void)real.nvJitLinkComplete(handle);
}

std::shared_ptr<LinkRecord> record_of(nvJitLinkHandle handle) {
  return Runtime::instance().enabled() ? link_table().find(handle) : nullptr;
}

void not_capturable(LinkRecord& record, std::string why) {
  if (record.capturable) record.why_not = std::move(why);
  record.capturable = false;
}

LookupOf<core::LinkEntry> look_up_link(store::Store& store, const keying::CacheKey& key, core::StatsDeltas& stats) {
  return look_up_manifest<core::LinkEntry>(
      store, key, stats, [](const keying::CacheKey& k) { return direct::link_result_store_key(k); },
      [](std::string_view bytes) { return core::decode_link_entry(bytes); },
      [](const core::LinkEntry&) -> std::optional<Unusable> { return std::nullopt; });
}

// After a miss: what the link depended on, and the entry to store; counts and logs the outcome.
void keep_link(Runtime& runtime, store::Store* store, const RealNvJitLink& real, nvJitLinkHandle handle,
               const LinkRecord& record, const keying::CacheKey& key, nvJitLinkResult rc, std::int64_t nanos,
               const watch::CompileWatch& watch, std::int64_t start_realtime_ns) {
  core::StatsDeltas& stats = runtime.stats();
  const auto uncacheable = [&](const std::string& why) {
    stats.add(core::Counter::link_uncacheable);
    log_info([&] { return "not cached: " + link_label(record, &key) + ": " + why; });
  };
  if (!link_result_is_cacheable(rc)) return uncacheable("nvJitLink returned " + std::to_string(rc));
  if (watch.tainted()) return uncacheable(watch.why_tainted());
  direct::RecordedDependencies dependencies =
      direct::record_dependencies(watch::observations_of(watch), current_working_directory(), start_realtime_ns,
                                  direct::TimeMacros{}, {}, keying::WorkingDirectoryUse::kNone);
  if (!dependencies.set) return uncacheable(dependencies.why_not);
  std::optional<core::LinkEntry> entry = entry_of_link(real, handle, rc, nanos, record);
  if (!entry) return uncacheable("an output could not be read back exactly");
  if (store == nullptr) {
    stats.add(core::Counter::errors);
    return;
  }
  stats.add(core::Counter::link_misses);
  stats.add(core::Counter::link_ns, nanos);
  if (runtime.store_read_only()) return;
  const keying::CacheKey result = direct::result_key(key, *dependencies.set);
  store::Status status = store->put(direct::link_result_store_key(result), core::encode_link_entry(*entry));
  if (status) {
    status = add_to_manifest(*store, key, result, std::move(*dependencies.set), nullptr, &direct::link_result_store_key);
  }
  if (status) {
    stats.add(core::Counter::stores);
    core::log_debug([&] { return "stored " + link_label(record, &key); });
  } else {
    stats.add(core::Counter::errors);
    core::log_once(core::LogLevel::kWarn, "store-put",
                   "could not write to the cache (" + status.message() + "); linking without storing");
  }
}

nvJitLinkResult complete_through_cache(Runtime& runtime, const RealNvJitLink& real, LinkRecord& record,
                                       nvJitLinkHandle handle, int* error_after) {
  core::StatsDeltas& stats = runtime.stats();
  const auto started = Clock::now();
  const keying::CacheKey key = keying::compute_link_key(record.inputs);
  store::Store* store = runtime.store();
  LookupOf<core::LinkEntry> found;
  std::optional<ClaimAttempt> claim;  // held while this link runs and stores: others wait for it
  if (store) {
    found = look_up_link(*store, key, stats);
    if (!found.entry && !runtime.store_read_only()) {
      claim.emplace(claim_or_wait(key, [&] { return (found = look_up_link(*store, key, stats)).entry.has_value(); }));
    }
    if (found.entry) {
      const auto rc = static_cast<nvJitLinkResult>(found.entry->complete_rc);
      stats.add(core::Counter::link_hits);
      stats.add(core::Counter::link_saved_ns,
                std::max<std::int64_t>(0, static_cast<std::int64_t>(found.entry->link_nanos) - nanos_since(started)));
      record.served = std::make_shared<const core::LinkEntry>(std::move(*found.entry));
      core::log_debug([&] { return "hit " + link_label(record, &key); });
      runtime.flush_stats(false);
      return rc;
    }
  }
  log_info([&] {
    return "miss " + link_label(record, &key) + ": " + (store ? found.miss_reason : "the cache is unavailable");
  });
  watch::CompileWatch watch(reinterpret_cast<const void*>(real.nvJitLinkComplete));
  const std::int64_t start_realtime_ns = util::realtime_ns();
  const auto start = Clock::now();
  const nvJitLinkResult rc = real.nvJitLinkComplete(handle);
  const std::int64_t nanos = nanos_since(start);
  watch.stop();
  *error_after = errno;
  try {  // the real link stands: from here on only the caching can fail
    keep_link(runtime, store, real, handle, record, key, rc, nanos, watch, start_realtime_ns);
  } catch (...) {
    stats.add(core::Counter::errors);
    core::log_once(core::LogLevel::kError, "link-store-exception", "internal error while storing a link; not cached");
  }
  runtime.flush_stats(true);
  return rc;
}

std::optional<std::string> reason_not_cacheable(const RealNvJitLink& real, const LinkRecord& record) {
  if (!record.capturable) return record.why_not;
  if (!real.unknown_functions.empty()) {
    std::string names;
    for (const std::string& name : real.unknown_functions) names += (names.empty() ? "" : ", ") + name;
    core::log_once(core::LogLevel::kWarn, "unknown-nvjitlink-functions:" + real.identity.build_id,
                   "nvJitLink " + std::to_string(real.identity.major) + "." + std::to_string(real.identity.minor) +
                       " exports functions this build does not know (" + names + "); its links are passed through uncached");
    return "nvJitLink exports functions this build does not know";
  }
  return keying::link_options_not_cacheable(record.inputs.options);
}

// A served handle's getter: `output` as recorded, or (a NULL argument) the real answer.
template <typename Real>
nvJitLinkResult replay_size(const RealNvJitLink& real, Real real_fn, nvJitLinkHandle handle, LinkRecord& record,
                            core::LinkOutputKind kind, size_t* size) {
  const core::RecordedOutput& o = record.served->output(kind);
  if (size == nullptr || !o.available) {
    materialize(real, handle, record);
    return real_fn(handle, size);
  }
  if (o.size_written) *size = static_cast<size_t>(o.size);
  return static_cast<nvJitLinkResult>(o.size_rc);
}

template <typename Data, typename Real>
nvJitLinkResult replay_data(const RealNvJitLink& real, Real real_fn, nvJitLinkHandle handle, LinkRecord& record,
                            core::LinkOutputKind kind, Data* out) {
  const core::RecordedOutput& o = record.served->output(kind);
  if (out == nullptr || !o.available) {
    materialize(real, handle, record);
    return real_fn(handle, out);
  }
  if (o.data_rc == NVJITLINK_SUCCESS && !o.bytes.empty()) std::memcpy(out, o.bytes.data(), o.bytes.size());
  return static_cast<nvJitLinkResult>(o.data_rc);
}

}  // namespace

nvJitLinkResult nvJitLinkCreate(const RealNvJitLink& real, nvJitLinkHandle* handle, uint32_t num_options,
                                const char* const* options) {
  const nvJitLinkResult rc = real.nvJitLinkCreate(handle, num_options, options);
  if (rc != NVJITLINK_SUCCESS || handle == nullptr || *handle == nullptr || !Runtime::instance().enabled()) return rc;
  ErrnoGuard guard;
  try {
    auto record = std::make_shared<LinkRecord>();
    record->inputs.library = real.identity;
    if (num_options > 0 && options == nullptr) not_capturable(*record, "the options were NULL");
    for (uint32_t i = 0; record->capturable && i < num_options; ++i) {
      if (options[i] == nullptr) {
        not_capturable(*record, "an option was NULL");
      } else {
        record->inputs.options.emplace_back(options[i]);
      }
    }
    link_table().insert(*handle, std::move(record));
  } catch (...) {
    link_table().erase(*handle);  // an unrecorded link simply passes through
  }
  return rc;
}

nvJitLinkResult nvJitLinkDestroy(const RealNvJitLink& real, nvJitLinkHandle* handle) {
  if (handle != nullptr && *handle != nullptr) {
    ErrnoGuard guard;
    link_table().erase(*handle);
  }
  return real.nvJitLinkDestroy(handle);
}

nvJitLinkResult nvJitLinkAddData(const RealNvJitLink& real, nvJitLinkHandle handle, nvJitLinkInputType type,
                                 const void* data, size_t size, const char* name) {
  std::shared_ptr<LinkRecord> record = record_of(handle);
  if (!record) return real.nvJitLinkAddData(handle, type, data, size, name);
  materialize(real, handle, *record);
  const nvJitLinkResult rc = real.nvJitLinkAddData(handle, type, data, size, name);
  ErrnoGuard guard;
  try {
    if (rc != NVJITLINK_SUCCESS) {
      not_capturable(*record, "nvJitLinkAddData returned " + std::to_string(rc));
    } else if (data == nullptr && size > 0) {
      not_capturable(*record, "an input's data was NULL");
    } else if (record->capturable) {
      keying::LinkInput& input = record->inputs.inputs.emplace_back();
      input.type = type;
      if (name) input.name = name;
      if (size > 0) input.bytes.assign(static_cast<const char*>(data), size);
    }
  } catch (...) {
    not_capturable(*record, "an input could not be recorded");
  }
  return rc;
}

nvJitLinkResult nvJitLinkAddFile(const RealNvJitLink& real, nvJitLinkHandle handle, nvJitLinkInputType type,
                                 const char* file_name) {
  std::shared_ptr<LinkRecord> record = record_of(handle);
  if (!record) return real.nvJitLinkAddFile(handle, type, file_name);
  materialize(real, handle, *record);
  std::optional<std::string> before;
  {
    ErrnoGuard guard;
    try {
      if (record->capturable && file_name != nullptr) before = read_regular_file(file_name);
    } catch (...) {
      before.reset();
    }
  }
  const nvJitLinkResult rc = real.nvJitLinkAddFile(handle, type, file_name);
  ErrnoGuard guard;
  try {
    if (rc != NVJITLINK_SUCCESS) {
      not_capturable(*record, "nvJitLinkAddFile returned " + std::to_string(rc));
    } else if (record->capturable) {
      // The file as nvJitLink read it: the same bytes before and after its read, or not cached.
      std::optional<std::string> after = file_name ? read_regular_file(file_name) : std::nullopt;
      if (!before || !after || *before != *after) {
        not_capturable(*record, std::string("the file ") + (file_name ? file_name : "(null)") +
                                    " could not be read, or changed while nvJitLink read it");
      } else {
        keying::LinkInput& input = record->inputs.inputs.emplace_back();
        input.type = type;
        input.from_file = true;
        input.name = file_name;
        input.bytes = std::move(*after);
      }
    }
  } catch (...) {
    not_capturable(*record, "an input file could not be recorded");
  }
  return rc;
}

nvJitLinkResult nvJitLinkComplete(const RealNvJitLink& real, nvJitLinkHandle handle) {
  std::shared_ptr<LinkRecord> record = record_of(handle);
  if (!record) return real.nvJitLinkComplete(handle);
  if (record->completed) {  // a second Complete (nvJitLink answers it with an error): nvJitLink's answer
    materialize(real, handle, *record);
    return real.nvJitLinkComplete(handle);
  }
  record->completed = true;
  Runtime& runtime = Runtime::instance();
  ErrnoGuard guard;
  int error_after = errno;
  try {
    if (std::optional<std::string> why = reason_not_cacheable(real, *record)) {
      runtime.stats().add(core::Counter::link_uncacheable);
      log_info([&] { return "not cached: " + link_label(*record, nullptr) + ": " + *why; });
      const nvJitLinkResult rc = real.nvJitLinkComplete(handle);
      guard.set(errno);
      runtime.flush_stats(false);
      return rc;
    }
    const nvJitLinkResult rc = complete_through_cache(runtime, real, *record, handle, &error_after);
    guard.set(error_after);
    return rc;
  } catch (...) {
    // Fail open: reached only before the real link ran (complete_through_cache catches what follows it).
    runtime.stats().add(core::Counter::errors);
    core::log_once(core::LogLevel::kError, "link-exception", "internal error; linking without the cache");
    record->served.reset();
    const nvJitLinkResult rc = real.nvJitLinkComplete(handle);
    guard.set(errno);
    return rc;
  }
}

#define NVRTC_CACHE_LINK_GETTERS(X)                                                                     \
  X(nvJitLinkGetLinkedCubinSize, nvJitLinkGetLinkedCubin, void, core::LinkOutputKind::cubin)           \
  X(nvJitLinkGetLinkedPtxSize, nvJitLinkGetLinkedPtx, char, core::LinkOutputKind::ptx)                 \
  X(nvJitLinkGetLinkedLTOIRSize, nvJitLinkGetLinkedLTOIR, char, core::LinkOutputKind::ltoir)           \
  X(nvJitLinkGetErrorLogSize, nvJitLinkGetErrorLog, char, core::LinkOutputKind::error_log)             \
  X(nvJitLinkGetInfoLogSize, nvJitLinkGetInfoLog, char, core::LinkOutputKind::info_log)

#define NVRTC_CACHE_DEFINE_GETTERS(size_name, data_name, Data, kind)                                    \
  nvJitLinkResult size_name(const RealNvJitLink& real, nvJitLinkHandle handle, size_t* size) {          \
    std::shared_ptr<LinkRecord> record = record_of(handle);                                             \
    if (!record || !record->served) return real.size_name(handle, size);                               \
    return replay_size(real, real.size_name, handle, *record, kind, size);                      \
  }                                                                                                     \
  nvJitLinkResult data_name(const RealNvJitLink& real, nvJitLinkHandle handle, Data* out) {             \
    std::shared_ptr<LinkRecord> record = record_of(handle);                                             \
    if (!record || !record->served) return real.data_name(handle, out);                                \
    return replay_data<Data>(real, real.data_name, handle, *record, kind, out);                         \
  }
NVRTC_CACHE_LINK_GETTERS(NVRTC_CACHE_DEFINE_GETTERS)
#undef NVRTC_CACHE_DEFINE_GETTERS
#undef NVRTC_CACHE_LINK_GETTERS

}  // namespace nvrtc_cache::shim::hooks
