// The lifecycle of a handle-based JIT library — create a handle, add inputs, one completing call,
// then getters — written once for every such library: nvJitLink (libraries/nvjitlink/: nvJitLinkComplete) and
// libNVVM (libraries/nvvm/: nvvmCompileProgram). Each is a description D (below); this is the rest:
// record inputs (the hooks of D's table call the helpers here); at the completing call, the one flow
// every cached call takes (shim/lifecycle/through_cache.h) with a HandleCall<D>: key the inputs,
// look the key up in the direct-mode manifest (shim/lifecycle/manifest_lookup.h, shared with NVRTC's
// compiles) and serve the stored HandleEntry, or (after waiting for another call with the same
// inputs) run the real call under the host's watch, read every output back and store it.
// Create, add and destroy calls always reach the real library, so a handle is always a real one; a
// call a served entry cannot answer (a NULL argument, a second completing call, an add after a
// served one) first runs the skipped call on the real handle (materialize), then goes to the library.
//
// A description D provides:
//   using Real; using Handle; using Result;       the library's function table, handle and return type
//   static constexpr core::JitLibrary kLibrary;  static constexpr std::string_view kSchema;
//   static constexpr const char* kWhat;  ("link")  (its counters: core::counters_of(kLibrary))
//   static bool cacheable(Result rc);             return codes worth keeping
//   static std::optional<keying::OptionRefusal> options_not_cacheable(const HandleRecord&);  options it refuses
// (Real has `identity` and `unknown_functions`: a library exporting a function the build does not know
// is not cached, said once.)
//   static const void* code(const Real&);         an address inside the library, for the watch
//   static std::optional<std::vector<core::RecordedOutput>> read_outputs(const Real&, Handle);
//   static Result run_recorded(const Real&, Handle, const HandleRecord&);   the completing call again
// Contract: thread-safe for distinct handles; never throws (fail open: an internal error before the
// real call runs it uncached, after it the real result stands); preserves the error state except where the
// library set it; the host may merge the statistics once per completing call (and at once after a
// store); logs through core/log.
#pragma once

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/entry_compression.h"
#include "core/handle_entry.h"
#include "core/log.h"
#include "core/stats.h"
#include "direct/dependencies.h"
#include "direct/manifest.h"
#include "keying/handle_inputs.h"
#include "keying/option_refusal.h"
#include "libraries/nvrtc/compile_steps.h"
#include "platform/env.h"
#include "platform/error_state.h"
#include "shim/lifecycle/handle_table.h"
#include "shim/lifecycle/jit_host.h"
#include "shim/lifecycle/manifest_lookup.h"
#include "shim/lifecycle/through_cache.h"
#include "shim/lifecycle/working_directory_markers.h"

namespace nvrtc_cache::shim {

namespace handle_lifecycle {

// The most bytes an output read back (or a file added by path) may hold to be cached.
inline constexpr std::uint64_t kMaxCapturedBytes = std::uint64_t{1} << 31;

// What the log calls `record`'s call: as `ls` does (core/program_label.h: "link: a.ltoir, b.ltoir";
// `ptx` is a libNVVM compile's output where known), and its key: "link: a, b (key ...)".
std::string label(const HandleRecord& record, const keying::CacheKey* key, std::string_view ptx = {});
// Whether `record`'s label comes from its output's kernels (libNVVM modules without names).
bool labelled_by_ptx(const HandleRecord& record);
using core::log_info;
// The record of `handle`, or nullptr (not recorded, or the cache is disabled).
std::shared_ptr<HandleRecord> record_of(JitHost& host, const void* handle);
// Why `record` of a library with these `unknown_functions` may not be cached: not captured, or the
// library exports functions this build does not know (said once per library at warn); nullopt when
// neither. `what` names its calls in the log ("link"). The reason is NVRTC's row (core::reason_of).
std::optional<NotCacheable> reason_not_captured(core::JitLibrary library, const keying::LibraryIdentity& identity,
                                                const std::vector<std::string>& unknown_functions,
                                                const HandleRecord& record, const char* what);
// `library`'s row of NVRTC's reason `reason`, counted with its `uncacheable` total; logs why at info.
void count_uncacheable(core::StatsDeltas& stats, core::JitLibrary library, const NotCacheable& why,
                       const std::string& label);
// Appends the call of `record` to NVRTC_CACHE_RECORD's file (shim/record_writer.h), when one is set:
// its library (`link_map`, `code` an address inside it), its inputs as keyed and the working directory.
void record_call(JitHost& host, core::JitLibrary library, const void* link_map, const void* code,
                 const HandleRecord& record);
// The content of the regular file at `path` (at most kMaxCapturedBytes), or nullopt.
std::optional<std::string> read_regular_file(const char* path);

// What a data getter writes into a buffer of `size` bytes followed by a guard filled with `fill`:
// the bytes up to the last one it wrote (at least `size`: nvJitLink writes a NUL past an empty
// log's size of 0). Its return code goes to `rc`.
template <typename Handle, typename DataFn>
std::string written_by(Handle handle, DataFn data_getter, std::size_t size, char fill, std::int32_t* rc) {
  std::string bytes(size + core::kMaxBytesPastSize, fill);
  *rc = static_cast<std::int32_t>(data_getter(handle, bytes.data()));
  std::size_t end = bytes.size();
  while (end > size && bytes[end - 1] == fill) --end;
  bytes.resize(end);
  return bytes;
}

// One output as its size and data getters answer it now, or nullopt when it cannot be replayed
// exactly (a getter wrote where it failed, wrote past the guard, or answered twice differently).
// Each data getter is called twice, over guards of two fills, so that what it writes past the size is seen.
template <typename Handle, typename SizeFn, typename DataFn>
std::optional<core::RecordedOutput> read_back(Handle handle, SizeFn size_getter, DataFn data_getter) {
  if (size_getter == nullptr || data_getter == nullptr) return std::nullopt;
  constexpr char kFill = static_cast<char>(0xa5);
  core::RecordedOutput o;
  std::size_t size = SIZE_MAX;
  o.size_rc = static_cast<std::int32_t>(size_getter(handle, &size));
  if (o.size_rc == 0) {
    if (size == SIZE_MAX || size > kMaxCapturedBytes) return std::nullopt;
    o.size_written = true;
    o.size = size;
    std::int32_t other_rc = 0;
    std::string bytes = written_by(handle, data_getter, size, kFill, &o.data_rc);
    const std::string again = written_by(handle, data_getter, size, static_cast<char>(~kFill), &other_rc);
    if (o.data_rc != other_rc) return std::nullopt;
    if (o.data_rc == 0) {
      const bool first_longer = bytes.size() >= again.size();
      const std::string& longer = first_longer ? bytes : again;
      const std::string& shorter = first_longer ? again : bytes;
      if (longer.compare(0, shorter.size(), shorter) != 0 || longer.size() >= size + core::kMaxBytesPastSize) {
        return std::nullopt;
      }
      o.bytes = longer;
    } else if (bytes.find_first_not_of(kFill) != std::string::npos) {
      return std::nullopt;
    }
  } else {
    if (size != SIZE_MAX) return std::nullopt;
    // Without a size there is nothing to write: the library answers the data getter with an error and
    // writes nothing (checked on a scratch buffer, as a host that ignored the size might pass).
    std::string scratch(std::size_t{1} << 16, kFill);
    o.data_rc = static_cast<std::int32_t>(data_getter(handle, scratch.data()));
    if (o.data_rc == 0 || scratch.find_first_not_of(kFill) != std::string::npos) return std::nullopt;
  }
  return o;
}

template <typename D>
void materialize(const typename D::Real& real, typename D::Handle handle, HandleRecord& record) {
  if (!record.served) return;
  record.served.reset();
  const platform::ErrorStateKept kept;
  (void)D::run_recorded(real, handle, record);
}

template <typename D>
LookupOf<core::HandleEntry> look_up(store::Store& store, const keying::CacheKey& key, core::StatsDeltas& stats) {
  return look_up_manifest<core::HandleEntry>(
      store, key, stats, [](const keying::CacheKey& k) { return direct::handle_result_store_key(k); },
      [](std::string_view bytes) {
        std::optional<core::HandleEntry> entry = core::decode_handle_entry(bytes);
        if (entry && entry->library != D::kLibrary) entry.reset();  // another library's: never under this key
        return entry;
      },
      [](const core::HandleEntry&) -> std::optional<Unusable> { return std::nullopt; });
}

// After a miss: what the call depended on, and the entry to store; counts and logs the outcome.
template <typename D>
void keep(JitHost& host, store::Store* store, const typename D::Real& real, typename D::Handle handle,
          const HandleRecord& record, const keying::CacheKey& key, typename D::Result rc, WatchedCall& call,
          core::Counter miss_reason, const std::optional<InputsInAnyDirectory>& any_directory) {
  constexpr core::LibraryCounters kCounters = core::counters_of(D::kLibrary);
  core::StatsDeltas& stats = host.stats();
  direct::RecordedDependencies& dependencies = call.dependencies;
  const auto uncacheable = [&](std::string why, core::Counter reason) {
    count_uncacheable(stats, D::kLibrary, NotCacheable{std::move(why), reason}, label(record, &key));
  };
  if (!D::cacheable(rc)) {
    return uncacheable(std::string(core::library_name(D::kLibrary)) + " returned " + std::to_string(rc),
                       core::Counter::uncacheable_library_error);
  }
  if (!dependencies.set) return uncacheable(dependencies.why_not, uncacheable_counter(dependencies.reason));
  std::optional<std::vector<core::RecordedOutput>> outputs = D::read_outputs(real, handle);
  core::HandleEntry entry;
  entry.library = D::kLibrary;
  entry.rc = static_cast<std::int32_t>(rc);
  entry.nanos = static_cast<std::uint64_t>(call.nanos);
  entry.description.options = record.inputs.options;
  for (const auto& input : record.inputs.inputs) {
    entry.description.input_names.push_back(input.name.value_or(""));
    entry.description.input_bytes += input.bytes.size();
  }
  entry.description.library =
      core::LibraryVersion{record.inputs.library.major, record.inputs.library.minor, record.inputs.library.build_id};
  if (outputs) entry.outputs = std::move(*outputs);
  if (!outputs || !core::is_well_formed(entry)) {
    return uncacheable("an output could not be read back exactly", core::Counter::uncacheable_output);
  }
  if (store == nullptr) {
    stats.add(core::Counter::errors);
    return;
  }
  stats.add(kCounters.misses);
  stats.add(core::reason_of(D::kLibrary, miss_reason));
  stats.add(kCounters.ns, call.nanos);
  if (host.store_read_only()) return;
  const keying::CacheKey result = direct::result_key(key, *dependencies.set);
  store::Status status = store->put(direct::handle_result_store_key(result),
                                    core::compress_entry(core::encode_handle_entry(entry), host.compression_level()));
  if (status) {
    status =
        add_to_manifest(*store, key, result, std::move(*dependencies.set), nullptr, &direct::handle_result_store_key);
  }
  if (status) {
    stats.add(core::Counter::stores);
    if (any_directory) mark_link_directory(*store, *any_directory);
    core::log_debug([&] {
      const bool by_ptx = labelled_by_ptx(record) && !entry.outputs.empty();
      return "stored " + label(record, &key, by_ptx ? std::string_view(entry.outputs.front().bytes) : "");
    });
  } else {
    stats.add(core::Counter::errors);
    core::log_once(core::LogLevel::kWarn, "store-put",
                   "could not write to the cache (" + status.message() + "); running without storing");
  }
}

// One completing call of a handle through the cache (shim/lifecycle/through_cache.h's Call).
template <typename D, typename RunReal>
class HandleCall {
 public:
  using Result = typename D::Result;
  HandleCall(const typename D::Real& real, HandleRecord& record, typename D::Handle handle, RunReal& run_real)
      : real_(real), record_(record), handle_(handle), run_real_(run_real) {}

  core::JitLibrary library() const { return D::kLibrary; }
  const keying::CacheKey& key() const { return key_; }
  void prepare(JitHost&) { key_ = keying::compute_handle_key(record_.inputs, D::kSchema); }

  bool look_up(store::Store& store, core::StatsDeltas& stats, std::int64_t* validate_ns) {
    found_ = handle_lifecycle::look_up<D>(store, key_, stats);
    *validate_ns = found_.validate_ns;
    return found_.entry.has_value();
  }

  Result serve(JitHost& host, const HitTimes& times) {
    const auto rc = static_cast<Result>(found_.entry->rc);
    count_hit(host.stats(), D::kLibrary, times, static_cast<std::int64_t>(found_.entry->nanos));
    record_.served = std::make_shared<const core::HandleEntry>(std::move(*found_.entry));
    core::log_debug([&] {
      const bool by_ptx = labelled_by_ptx(record_) && !record_.served->outputs.empty();
      return "hit " + label(record_, &key_, by_ptx ? std::string_view(record_.served->outputs.front().bytes) : "");
    });
    record_call(host, D::kLibrary, real_.link_map, D::code(real_), record_);
    return rc;
  }

  // Inputs NVRTC compiled in a working directory it embeds (-dlto...): a first call with them that
  // was made before with inputs compiled elsewhere says so (shim/lifecycle/working_directory_markers.h).
  Miss miss(store::Store& store) {
    Miss miss{std::move(found_.miss_reason), found_.miss};
    any_directory_ = inputs_in_any_directory(store, record_.inputs, D::kSchema);
    if (any_directory_ && miss.counter == core::Counter::miss_new) {
      if (std::optional<std::string> there = linked_from_another_directory(store, *any_directory_)) {
        miss.counter = core::Counter::miss_working_directory;
        miss.reason = std::string("a ") + D::kWhat + " of these inputs compiled in " + *there +
                      " was stored before, and NVRTC embeds the working directory in them (these were compiled "
                      "in " +
                      any_directory_->directory +
                      "); compile them in one directory to share the result (docs/limits.md)";
      }
    }
    return miss;
  }

  WatchedCall run_real(JitHost& host, Result* rc) {
    return host.run_watched(
        {D::kLibrary, D::code(real_), false}, [&] { *rc = run_real_(); },
        [](std::vector<direct::Observation> observations, std::int64_t start_realtime_ns,
           const std::vector<std::string>&) {
          return direct::record_dependencies(observations, platform::Env::system()->current_directory().value_or(""),
                                             start_realtime_ns, direct::TimeMacros{}, {},
                                             keying::WorkingDirectoryUse::kNone);
        });
  }

  // Once the library returned: by then a libNVVM module without a name is named by its kernel.
  std::string label_after_call() {
    std::string ptx;
    if (labelled_by_ptx(record_)) {
      const platform::ErrorStateKept kept;
      if (auto outputs = D::read_outputs(real_, handle_); outputs && !outputs->empty()) ptx = outputs->front().bytes;
    }
    return label(record_, &key_, ptx);
  }

  void keep(JitHost& host, store::Store* store, Result rc, WatchedCall& call, const Miss& miss) {
    handle_lifecycle::keep<D>(host, store, real_, handle_, record_, key_, rc, call, miss.counter, any_directory_);
  }

  void finish(JitHost& host) {
    record_call(host, D::kLibrary, real_.link_map, D::code(real_), record_);
    host.flush_stats(true);
  }

 private:
  const typename D::Real& real_;
  HandleRecord& record_;
  typename D::Handle handle_;
  RunReal& run_real_;
  keying::CacheKey key_{};
  LookupOf<core::HandleEntry> found_;
  std::optional<InputsInAnyDirectory> any_directory_;
};

// The completing call of `record` through the cache, or uncached where it may not be cached; sets
// `*error_after` to the error state the caller must see.
template <typename D, typename RunReal>
typename D::Result cached_or_uncached(JitHost& host, const typename D::Real& real, HandleRecord& record,
                                      typename D::Handle handle, RunReal& run_real, int* error_after) {
  try {
    std::optional<NotCacheable> why =
        reason_not_captured(D::kLibrary, real.identity, real.unknown_functions, record, D::kWhat);
    if (!why) {
      if (std::optional<keying::OptionRefusal> refused = D::options_not_cacheable(record)) {
        why = NotCacheable{std::move(refused->why), refused->side_effect ? core::Counter::uncacheable_side_effect_option
                                                                         : core::Counter::uncacheable_unknown_option};
      }
    }
    if (why) {
      count_uncacheable(host.stats(), D::kLibrary, *why, label(record, nullptr));
      const typename D::Result rc = run_real();
      *error_after = platform::error_state();
      return rc;
    }
    HandleCall<D, RunReal> call(real, record, handle, run_real);
    return through_cache(host, call, error_after);
  } catch (...) {
    // Fail open: reached only before the real call ran (through_cache catches what follows it).
    host.stats().add(core::Counter::errors);
    core::log_once(core::LogLevel::kError, "handle-exception", "internal error; running without the cache");
    record.served.reset();
    const typename D::Result rc = run_real();
    *error_after = platform::error_state();
    return rc;
  }
}

// The completing call of `handle` (its record, if any, already found): served, or run through the
// cache, or (not recorded, not cacheable, a second call) passed to the library. `run_real()` makes
// the real call.
template <typename D, typename RunReal>
typename D::Result complete(JitHost& host, const typename D::Real& real, typename D::Handle handle,
                            RunReal&& run_real) {
  host.note_call(D::kLibrary, real.link_map, nullptr, real.identity);
  std::shared_ptr<HandleRecord> record = record_of(host, handle);
  if (!record) return run_real();
  if (record->completed) {  // a second call (nvJitLink answers it with an error): the library's answer
    materialize<D>(real, handle, *record);
    return run_real();
  }
  record->completed = true;
  platform::ErrorStateKept guard;
  int error_after = platform::error_state();
  const typename D::Result rc = cached_or_uncached<D>(host, real, *record, handle, run_real, &error_after);
  guard.set(error_after);
  // Once per completing call, whatever path it took (served, stored, refused, failed).
  try {
    host.flush_stats(false);
  } catch (...) {
  }
  return rc;
}

// A getter of output `index`: from the served entry, or (not served, a NULL argument, an output the
// entry lacks) the library's answer.
template <typename D, typename Fn>
typename D::Result size_getter(const typename D::Real& real, Fn real_fn, typename D::Handle handle, std::size_t index,
                               size_t* size) {
  std::shared_ptr<HandleRecord> record = handle_table().find(handle);
  if (!record || !record->served) return real_fn(handle, size);
  const core::RecordedOutput& o = record->served->outputs[index];
  if (size == nullptr || !o.available) {
    materialize<D>(real, handle, *record);
    return real_fn(handle, size);
  }
  if (o.size_written) *size = static_cast<size_t>(o.size);
  return static_cast<typename D::Result>(o.size_rc);
}

template <typename D, typename Fn, typename Data>
typename D::Result data_getter(const typename D::Real& real, Fn real_fn, typename D::Handle handle, std::size_t index,
                               Data* out) {
  std::shared_ptr<HandleRecord> record = handle_table().find(handle);
  if (!record || !record->served) return real_fn(handle, out);
  const core::RecordedOutput& o = record->served->outputs[index];
  if (out == nullptr || !o.available) {
    materialize<D>(real, handle, *record);
    return real_fn(handle, out);
  }
  if (o.data_rc == 0 && !o.bytes.empty()) std::memcpy(out, o.bytes.data(), o.bytes.size());
  return static_cast<typename D::Result>(o.data_rc);
}

// Records a handle the library has just created (`rc` success): its library and identity; where it is
// not `capturable`, why (`why_not_reason`: NVRTC's row of it).
void record_created(const void* handle, core::JitLibrary library, const keying::LibraryIdentity& identity,
                    const std::vector<std::string>& options, bool capturable, const std::string& why_not,
                    core::Counter why_not_reason = core::Counter::uncacheable_inputs);
// Records an input added to `handle` (its record, if any): its type, name and bytes, or (the call
// failed, a NULL buffer) that the handle is no longer cacheable. Before the call: materialize<D>.
void record_input(HandleRecord& record, int rc, std::int32_t type, const void* data, std::size_t size, const char* name,
                  bool from_file);

}  // namespace handle_lifecycle
}  // namespace nvrtc_cache::shim
