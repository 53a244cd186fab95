// nvrtc-cache verify: reads every entry of the store, checks its envelope and its format (manifests
// and compile results), and that every result a manifest names is present. Changes nothing.
#include "core/config.h"
#include "store/cache_directory.h"
#include "tools/commands.h"
#include "tools/cache/open_cache.h"
#include "tools/cache/progress.h"
#include "tools/cache/store_audit.h"

namespace nvrtc_cache::tools {

namespace {

int verify() {
  const core::Config config = load_settings();
  store::OpenedCache opened = open_cache_reporting(config);
  if (!opened.store) return 1;
  Progress progress("verifying", opened.store->entry_count());
  const StoreAudit audit = audit_store(*opened.store, [&](std::uint64_t entries) { progress.update(entries); });
  progress.finish();
  return print_audit(opened.directory, audit);
}

}  // namespace

void add_verify_command(CLI::App& app, Outcome& outcome) {
  CLI::App* verify_app = app.add_subcommand(
      "verify",
      "Check every entry for damage: its envelope, its format (manifests, compile results) and that the results "
      "manifests name are present. Changes nothing; exit status 1 if anything is damaged. Shows a progress bar "
      "on a terminal.");
  verify_app->callback([&outcome] { outcome.exit_code = verify(); });
}

}  // namespace nvrtc_cache::tools
