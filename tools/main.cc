// nvrtc-cache: run programs with the cache, and inspect or clear it.
#include <cstdio>
#include <cstring>
#include <string_view>

#include "tools/commands.h"

namespace {

void usage(std::FILE* out) {
  std::fputs(
      "usage: nvrtc-cache <command> [args]\n"
      "  run [--] CMD [ARGS...]   run CMD with NVRTC calls served from the cache (LD_PRELOAD)\n"
      "  run --proxy [--] CMD     the same through a stand-in libnvrtc.so.13 on LD_LIBRARY_PATH,\n"
      "                           for environments where preloading is not possible\n"
      "  stats [--json]           show hits, misses and size of the cache, across all processes\n"
      "  clear                    remove every entry and reset the statistics\n"
      "  verify                   check every entry (envelope, format, references) and report\n"
      "  evict [--max-size S] [--older-than D]\n"
      "                           remove least recently used entries until the payload is at most S\n"
      "                           (e.g. 2G), and those unused for D (30d, 12h, 90m, 3600s); with\n"
      "                           neither, trim to 60% of NVRTC_CACHE_MAX_SIZE if above 75%\n"
      "The cache lives in $NVRTC_CACHE_DIR (default $XDG_CACHE_HOME/nvrtc-cache or ~/.cache/nvrtc-cache).\n",
      out);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  const std::string_view command = argv[1];
  if (command == "run") return nvrtc_cache::tools::run_command(argc - 2, argv + 2);
  if (command == "stats") return nvrtc_cache::tools::stats_command(argc - 2, argv + 2);
  if (command == "clear") return nvrtc_cache::tools::clear_command(argc - 2, argv + 2);
  if (command == "verify") return nvrtc_cache::tools::verify_command(argc - 2, argv + 2);
  if (command == "evict") return nvrtc_cache::tools::evict_command(argc - 2, argv + 2);
  if (command == "-h" || command == "--help" || command == "help") {
    usage(stdout);
    return 0;
  }
  std::fprintf(stderr, "nvrtc-cache: unknown command '%s'\n", argv[1]);
  usage(stderr);
  return 2;
}
