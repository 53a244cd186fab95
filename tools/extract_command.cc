// nvrtc-cache extract KEY-PREFIX --cubin|--ptx|--ltoir|--optixir|--tileir|--nvvm|--log -o FILE: writes one output of
// an entry, byte for byte what NVRTC's data getter returned (PTX and the log end in NVRTC's NUL).
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "core/config.h"
#include "tools/commands.h"
#include "tools/entries.h"
#include "tools/open_cache.h"

namespace nvrtc_cache::tools {
namespace {

struct ExtractArguments {
  std::string prefix, output;
  bool cubin = false, ptx = false, ltoir = false, optixir = false, tileir = false, nvvm = false, log = false;
};

int extract(const CLI::App& command, const ExtractArguments& a) {
  if (a.cubin + a.ptx + a.ltoir + a.optixir + a.tileir + a.nvvm + a.log != 1) {
    return usage_error(command, "give exactly one of --cubin, --ptx, --ltoir, --optixir, --tileir, --nvvm, --log");
  }
  const char* kind = a.cubin     ? "CUBIN"
                     : a.ptx     ? "PTX"
                     : a.ltoir   ? "LTO-IR"
                     : a.optixir ? "OptiX-IR"
                     : a.tileir  ? "Tile IR"
                     : a.nvvm    ? "NVVM IR"
                                 : "log";
  const core::Config config = load_settings();
  store::OpenedCache opened = open_cache_reporting(config);
  if (!opened.store) return 1;
  std::string problem;
  const std::optional<EntryInfo> found = find_entry(read_entries(*opened.store), a.prefix, &problem);
  if (!found) return usage_error(command, problem);
  if (!found->entry) {
    fmt::print(stderr, "nvrtc-cache: entry {} is damaged\n", found->key_hex);
    return 1;
  }
  const core::CompileEntry& c = *found->entry;
  const core::RecordedOutput& o = a.cubin     ? c.cubin
                                  : a.ptx     ? c.ptx
                                  : a.ltoir   ? c.ltoir
                                  : a.optixir ? c.optixir
                                  : a.tileir  ? c.tileir
                                  : a.nvvm    ? c.nvvm
                                              : c.log;
  if (o.data_rc != NVRTC_SUCCESS || o.bytes.empty()) {
    fmt::print(stderr, "nvrtc-cache: entry {} has no {} (NVRTC returned {}, {} bytes)\n", found->key_hex, kind,
               o.data_rc, o.bytes.size());
    return 1;
  }
  std::FILE* out = a.output == "-" ? stdout : std::fopen(a.output.c_str(), "wb");
  if (out == nullptr) {
    fmt::print(stderr, "nvrtc-cache: cannot write {}\n", a.output);
    return 1;
  }
  const bool written = std::fwrite(o.bytes.data(), 1, o.bytes.size(), out) == o.bytes.size();
  const bool closed = out == stdout ? std::fflush(out) == 0 : std::fclose(out) == 0;
  if (!written || !closed) {
    fmt::print(stderr, "nvrtc-cache: cannot write {}\n", a.output);
    return 1;
  }
  if (a.output != "-") fmt::print(stderr, "wrote {} bytes of {} to {}\n", o.bytes.size(), kind, a.output);
  return 0;
}

}  // namespace

void add_extract_command(CLI::App& app, Outcome& outcome) {
  CLI::App* command = app.add_subcommand(
      "extract",
      "Write one output of an entry to FILE: byte for byte what NVRTC returned (PTX and the log include "
      "NVRTC's terminating NUL).");
  auto a = std::make_shared<ExtractArguments>();
  command->add_option("KEY-PREFIX", a->prefix, "the start of the key `nvrtc-cache ls` shows")->required();
  command->add_flag("--cubin", a->cubin, "the CUBIN");
  command->add_flag("--ptx", a->ptx, "the PTX");
  command->add_flag("--ltoir", a->ltoir, "the LTO-IR");
  command->add_flag("--optixir", a->optixir, "the OptiX-IR");
  command->add_flag("--tileir", a->tileir, "the cuda_tile IR (NVRTC 13.5 on, Tile programs)");
  command->add_flag("--nvvm", a->nvvm, "the NVVM IR of NVRTC 12.x's nvrtcGetNVVM");
  command->add_flag("--log", a->log, "the program log");
  command->add_option("-o,--output", a->output, "the file to write (- for stdout)")->required();
  command->callback([&outcome, command, a] { outcome.exit_code = extract(*command, *a); });
}

}  // namespace nvrtc_cache::tools
