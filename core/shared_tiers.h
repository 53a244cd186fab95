// The local store wrapped in the shared tiers a configuration names (`remote`, `remote_secret_file`:
// store/remote/tier_set.h), as the Linux shim and the Windows proxy both open their store.
// Contract: called once per store open; every warning and problem of the tier list is logged once
// (core/log.h) and an unusable tier is left out (fail open: no tier at all gives `local` back as it
// is); never throws except std::bad_alloc; opens no connection itself (the tiers connect lazily).
#pragma once

#include <memory>

#include "core/config.h"
#include "store/remote/tiered_store.h"
#include "store/store.h"

namespace nvrtc_cache::core {

// `local` behind the configured tiers; *tiered is the wrapper (nullptr, untouched, when there are none).
std::unique_ptr<store::Store> with_shared_tiers(std::unique_ptr<store::Store> local, const Config& config,
                                                store::remote::TieredStore** tiered);

}  // namespace nvrtc_cache::core
