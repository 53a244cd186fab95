// LinkTable: the side table from a real nvJitLink handle to what the shim recorded about it (its
// options and inputs, and the cache entry that answers its getters once a link was served).
// Contract: thread-safe (one shared mutex); records are shared_ptr so a concurrent destroy never
// frees one in use. Like nvJitLink, concurrent calls on the SAME handle are the host's
// responsibility. Fork: the mutex is platform::ForkRank::kLinkTable; a child keeps the parent's records.
#pragma once

#define NVJITLINK_NO_INLINE
#include <nvJitLink.h>

#include <memory>
#include <shared_mutex>
#include <unordered_map>

#include "core/link_entry.h"
#include "keying/link_inputs.h"

namespace nvrtc_cache::shim {

struct LinkRecord {
  keying::LinkInputs inputs;
  bool capturable = true;  // false: an input could not be captured or an Add call failed
  std::string why_not;     // why not capturable, for the log
  bool completed = false;  // nvJitLinkComplete was called (served or not): a later one goes to nvJitLink
  std::shared_ptr<const core::LinkEntry> served;  // set while the last nvJitLinkComplete was served
};

class LinkTable {
 public:
  void insert(nvJitLinkHandle handle, std::shared_ptr<LinkRecord> record);
  std::shared_ptr<LinkRecord> find(nvJitLinkHandle handle) const;
  void erase(nvJitLinkHandle handle);

  void lock_for_fork() { mu_.lock(); }
  void unlock_in_parent() { mu_.unlock(); }
  void renew_in_child();

 private:
  mutable std::shared_mutex mu_;
  std::unordered_map<nvJitLinkHandle, std::shared_ptr<LinkRecord>> records_;
};

LinkTable& link_table();

}  // namespace nvrtc_cache::shim
