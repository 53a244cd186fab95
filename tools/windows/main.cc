// nvrtc-cache.exe: the command line of the Windows port (tools/windows/commands.h).
#include <CLI/CLI.hpp>

#include <cstdio>

#include "shim/windows/settings.h"
#include "tools/windows/commands.h"

namespace nvrtc_cache::tools::windows {

std::unique_ptr<store::WindowsLmdbStore> open_store(bool write, std::string* directory) {
  *directory = shim::windows::cache_directory_setting();
  if (directory->empty()) {
    std::fprintf(stderr, "nvrtc-cache: no cache directory (set NVRTC_CACHE_DIR or LOCALAPPDATA)\n");
    return nullptr;
  }
  store::Status status;
  auto opened = store::WindowsLmdbStore::open({*directory, shim::windows::map_size_setting(), !write}, &status);
  if (!opened && !write) {
    // A store not created yet reads as empty: create it (as the proxy would).
    opened = store::WindowsLmdbStore::open({*directory, shim::windows::map_size_setting(), false}, &status);
  }
  if (!opened) std::fprintf(stderr, "nvrtc-cache: %s\n", status.message().c_str());
  return opened;
}

}  // namespace nvrtc_cache::tools::windows

int main(int argc, char** argv) {
  namespace cli = nvrtc_cache::tools::windows;
  CLI::App app{"nvrtc-cache: the NVRTC compile cache's command line (Windows)"};
  app.require_subcommand(1);
  int exit_code = 0;
  bool json = false;
  CLI::App* stats = app.add_subcommand("stats", "the counters every process merged into the cache");
  stats->add_flag("--json", json, "as JSON");
  stats->callback([&] { exit_code = cli::stats(json); });
  app.add_subcommand("clear", "removes every entry and resets the counters")->callback([&] { exit_code = cli::clear(); });
  app.add_subcommand("verify", "reads every entry and checks its envelope and format")->callback([&] {
    exit_code = cli::verify();
  });
  CLI11_PARSE(app, argc, argv);
  return exit_code;
}
