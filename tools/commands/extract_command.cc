// nvrtc-cache extract KEY-PREFIX --cubin|--ptx|--ltoir|--optixir|--tileir|--nvvm|--log|--info-log -o FILE: writes
// one output of an entry, byte for byte what the library's data getter returned (PTX and the log end in
// NVRTC's NUL); of a link (nvJitLink) or an NVVM compile (libNVVM, whose result is PTX) too.
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "core/config.h"
#include "platform/terminal.h"
#include "tools/commands.h"
#include "tools/cache/entries.h"
#include "tools/cache/open_cache.h"

namespace nvrtc_cache::tools {
namespace {

struct ExtractArguments {
  std::string prefix, output;
  bool cubin = false, ptx = false, ltoir = false, optixir = false, tileir = false, nvvm = false, log = false,
       info_log = false;
};

// Writes `bytes` to `output` ("-": stdout), saying on stderr what was written where.
int write_output(const std::string& bytes, const std::string& output, const char* kind) {
  if (output == "-") platform::use_binary_mode(stdout);
  std::FILE* out = output == "-" ? stdout : std::fopen(output.c_str(), "wb");
  if (out == nullptr) {
    fmt::print(stderr, "nvrtc-cache: cannot write {}\n", output);
    return 1;
  }
  const bool written = std::fwrite(bytes.data(), 1, bytes.size(), out) == bytes.size();
  const bool closed = out == stdout ? std::fflush(out) == 0 : std::fclose(out) == 0;
  if (!written || !closed) {
    fmt::print(stderr, "nvrtc-cache: cannot write {}\n", output);
    return 1;
  }
  if (output != "-") fmt::print(stderr, "wrote {} bytes of {} to {}\n", bytes.size(), kind, output);
  return 0;
}

// A link's or NVVM compile's output: --cubin, --ptx (NVVM: its result), --ltoir, --log (a link's
// error log), --info-log (a link's).
int extract_handle_output(const EntryInfo& found, const ExtractArguments& a, const char* kind) {
  const core::HandleEntry& h = *found.handle;
  const bool nvvm = h.library == core::JitLibrary::nvvm;
  const char* wanted = a.cubin      ? (nvvm ? nullptr : "cubin")
                       : a.ptx      ? (nvvm ? "result" : "ptx")
                       : a.ltoir    ? (nvvm ? nullptr : "ltoir")
                       : a.log      ? (nvvm ? "log" : "error_log")
                       : a.info_log ? (nvvm ? nullptr : "info_log")
                                    : nullptr;
  const auto specs = core::outputs_of(h.library);
  for (std::size_t i = 0; wanted != nullptr && i < specs.size(); ++i) {
    if (std::string_view(specs[i].name) != wanted) continue;
    const core::RecordedOutput& o = h.outputs[i];
    if (!o.available || o.data_rc != 0 || o.bytes.empty()) {
      fmt::print(stderr, "nvrtc-cache: entry {} has no {} ({} returned {}, {} bytes)\n", found.key_hex, kind,
                 core::library_name(h.library), o.data_rc, o.bytes.size());
      return 1;
    }
    return write_output(o.bytes, a.output, kind);
  }
  fmt::print(stderr, "nvrtc-cache: entry {} is {} result, which has no {}\n", found.key_hex,
             nvvm ? "a libNVVM" : "an nvJitLink", kind);
  return 1;
}

int extract(const CLI::App& command, const ExtractArguments& a) {
  if (a.cubin + a.ptx + a.ltoir + a.optixir + a.tileir + a.nvvm + a.log + a.info_log != 1) {
    return usage_error(command,
                       "give exactly one of --cubin, --ptx, --ltoir, --optixir, --tileir, --nvvm, --log, --info-log");
  }
  const char* kind = a.cubin      ? "CUBIN"
                     : a.ptx      ? "PTX"
                     : a.ltoir    ? "LTO-IR"
                     : a.optixir  ? "OptiX-IR"
                     : a.tileir   ? "Tile IR"
                     : a.nvvm     ? "NVVM IR"
                     : a.info_log ? "info log"
                                  : "log";
  const core::Config config = load_settings();
  store::OpenedCache opened = open_cache_reporting(config);
  if (!opened.store) return 1;
  std::string problem;
  const std::optional<EntryInfo> found = find_entry(read_entries(*opened.store), a.prefix, &problem);
  if (!found) return usage_error(command, problem);
  if (found->damaged()) {
    fmt::print(stderr, "nvrtc-cache: entry {} is damaged\n", found->key_hex);
    return 1;
  }
  if (found->handle) return extract_handle_output(*found, a, kind);
  if (a.info_log) return usage_error(command, "--info-log is a link's: this entry is an NVRTC compile's");
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
  return write_output(o.bytes, a.output, kind);
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
  command->add_flag("--log", a->log, "the program log (a link's error log)");
  command->add_flag("--info-log", a->info_log, "a link's info log");
  command->add_option("-o,--output", a->output, "the file to write (- for stdout)")->required();
  command->callback([&outcome, command, a] { outcome.exit_code = extract(*command, *a); });
}

}  // namespace nvrtc_cache::tools
