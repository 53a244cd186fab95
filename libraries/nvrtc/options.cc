#include "libraries/nvrtc/options.h"

#include <algorithm>
#include <array>

namespace nvrtc_cache::keying {
namespace {

using enum OptionEffect;
using enum OptionValue;

constexpr NvrtcVersion k12{12, 0};   // documented by 12.9's and 13.0's nvrtc.h (the same 57 options)
constexpr NvrtcVersion k135{13, 5};  // added by 13.5's nvrtc.h

constexpr std::array kOptions = {
    KnownOption{"gpu-architecture", "arch", kRequired, kPlain, k12},
    KnownOption{"device-c", "dc", kNone, kPlain, k12},
    KnownOption{"device-w", "dw", kNone, kPlain, k12},
    KnownOption{"relocatable-device-code", "rdc", kRequired, kPlain, k12},
    KnownOption{"extensible-whole-program", "ewp", kNone, kPlain, k12},
    KnownOption{"tile-preview", "", kRequired, kExtraOutput, k135},
    KnownOption{"enable-tile", "", kNone, kExtraOutput, k135},
    KnownOption{"tile-only", "", kNone, kExtraOutput, k135},
    KnownOption{"simt-only", "", kNone, kPlain, k135},
    KnownOption{"default-tile", "", kNone, kExtraOutput, k135},
    KnownOption{"diagnose-implicit-tile-var", "", kNone, kPlain, k135},
    KnownOption{"device-debug", "G", kNone, kPaths, k12},
    KnownOption{"generate-line-info", "lineinfo", kNone, kPaths, k12},
    KnownOption{"dopt", "", kRequired, kPlain, k12},
    KnownOption{"Ofast-compile", "Ofc", kRequired, kPlain, k12},
    KnownOption{"ptxas-options", "Xptxas", kRequired, kPlain, k12},
    KnownOption{"maxrregcount", "", kRequired, kPlain, k12},
    KnownOption{"ftz", "", kRequired, kPlain, k12},
    KnownOption{"prec-sqrt", "", kRequired, kPlain, k12},
    KnownOption{"prec-div", "", kRequired, kPlain, k12},
    KnownOption{"fmad", "", kRequired, kPlain, k12},
    KnownOption{"fno-signed-zeros", "", kNone, kPlain, k135},
    KnownOption{"ffinite-math-only", "", kNone, kPlain, k135},
    KnownOption{"use_fast_math", "", kNone, kPlain, k12},
    KnownOption{"extra-device-vectorization", "", kNone, kPlain, k12},
    KnownOption{"modify-stack-limit", "", kRequired, kPlain, k12},
    KnownOption{"dlink-time-opt", "dlto", kNone, kExtraOutput, k12},
    KnownOption{"gen-opt-lto", "", kNone, kPlain, k12},
    KnownOption{"optix-ir", "", kNone, kExtraOutput, k12},
    KnownOption{"jump-table-density", "jtd", kRequired, kPlain, k12},
    KnownOption{"device-stack-protector", "", kRequired, kPlain, k12},
    KnownOption{"no-cache", "", kNone, kPlain, k12},
    KnownOption{"frandom-seed", "", kRequired, kPlain, k12},
    KnownOption{"define-macro", "D", kAttached, kPlain, k12},
    KnownOption{"undefine-macro", "U", kAttached, kPlain, k12},
    KnownOption{"include-path", "I", kAttached, kPlain, k12},  // the files read are dependencies
    // Installs the bundled headers into its directory unless NVRTC's version marker there says they
    // are (then adds -I<dir> -I<dir>/cccl): the shim does the install itself, the headers read are
    // dependencies (libraries/nvrtc/bundled_headers.h).
    KnownOption{"use-bundled-headers", "", kEquals, kBundledHeaders, k135},
    KnownOption{"pre-include", "include", kRequired, kPlain, k12},
    KnownOption{"no-source-include", "", kNone, kPlain, k12},
    KnownOption{"std", "", kRequired, kPlain, k12},
    KnownOption{"builtin-move-forward", "", kRequired, kPlain, k12},
    KnownOption{"builtin-initializer-list", "", kRequired, kPlain, k12},
    // PCH, measured with 13.5 (docs/nvrtc-versions.md): -pch lists the PCH directory and writes (then
    // removes) a PCH file there; --create-pch writes its file; --use-pch reads its file and creates a
    // temporary file, and a PCH made by another process (another heap address) is refused with a
    // warning: each has side effects. --pch-dir, --pch-verbose and --pch-messages alone change
    // nothing (the same outputs, no file written); with -pch they come with a side effect anyway.
    KnownOption{"pch", "", kNone, kSideEffect, k12},
    KnownOption{"create-pch", "", kRequired, kSideEffect, k12},
    KnownOption{"use-pch", "", kRequired, kSideEffect, k12},
    KnownOption{"pch-dir", "", kRequired, kPlain, k12},
    KnownOption{"pch-verbose", "", kRequired, kPlain, k12},
    KnownOption{"pch-messages", "", kRequired, kPlain, k12},
    KnownOption{"instantiate-templates-in-pch", "", kRequired, kPlain, k12},
    KnownOption{"disable-warnings", "w", kNone, kPlain, k12},
    KnownOption{"Wreorder", "", kNone, kPlain, k135},
    KnownOption{"Wconversion", "", kNone, kPlain, k135},
    KnownOption{"warning-as-error", "Werror", kRequired, kPlain, k135},
    KnownOption{"fmax-errors", "", kRequired, kPlain, k135},
    KnownOption{"restrict", "", kNone, kPlain, k12},
    KnownOption{"device-as-default-execution-space", "default-device", kNone, kPlain, k12},
    KnownOption{"device-int128", "", kNone, kPlain, k12},
    KnownOption{"device-float128", "", kNone, kPlain, k12},
    KnownOption{"optimization-info", "opt-info", kRequired, kPlain, k12},
    KnownOption{"display-error-number", "err-no", kNone, kPlain, k12},
    KnownOption{"no-display-error-number", "no-err-no", kNone, kPlain, k12},
    KnownOption{"diag-error", "", kRequired, kPlain, k12},
    KnownOption{"diag-suppress", "", kRequired, kPlain, k12},
    KnownOption{"diag-warn", "", kRequired, kPlain, k12},
    KnownOption{"brief-diagnostics", "brief-diag", kRequired, kPlain, k12},
    KnownOption{"time", "", kRequired, kSideEffect, k12},
    KnownOption{"split-compile", "", kRequired, kPlain, k12},
    KnownOption{"fdevice-syntax-only", "", kNone, kPlain, k12},
    KnownOption{"minimal", "", kNone, kPlain, k12},
    KnownOption{"fdevice-time-trace", "", kRequired, kSideEffect, k12},
    KnownOption{"utf-8", "", kNone, kPlain, k135},
    // Accepted by 12.9, 13.0 and 13.5 though nvrtc.h does not document them (measured; jitify-style
    // stacks pass -Xcudafe): each passes its value to an internal stage. A file one makes that stage
    // write makes the compile uncacheable through the watch, like any write.
    KnownOption{"Xcudafe", "", kRequired, kPlain, k12},
    KnownOption{"Xnvvm", "", kRequired, kPlain, k12},
};

// One option as written: its name (dashes removed), and its value if attached ("=value", or the rest
// of a one-letter attached short name).
struct Parsed {
  const KnownOption* known = nullptr;
  bool value_attached = false;
};

Parsed parse(std::string_view option, NvrtcVersion version) {
  if (!option.starts_with('-')) return {};
  std::string_view body = option.substr(option.starts_with("--") ? 2 : 1);
  const std::size_t equals = body.find('=');
  const std::string_view name = body.substr(0, equals);
  for (const KnownOption& known : kOptions) {
    if (!(known.since <= version)) continue;
    if (name == known.long_name || (!known.short_name.empty() && name == known.short_name)) {
      const bool attached = equals != std::string_view::npos;
      if (known.value == kNone && attached) return {};  // "--restrict=1": not an option NVRTC documents
      if (known.value == kEquals && (!attached || !option.starts_with("--") || equals + 1 == body.size())) return {};
      return {&known, attached};
    }
  }
  // One-letter short names take their value attached: -DNAME, -UNAME, -I/dir.
  if (option.starts_with('-') && !option.starts_with("--") && body.size() > 1) {
    for (const KnownOption& known : kOptions) {
      if (known.value == kAttached && known.since <= version && known.short_name.size() == 1 &&
          body.starts_with(known.short_name)) {
        return {&known, true};
      }
    }
  }
  return {};
}

void scan_into(OptionScan& scan, std::span<const std::string_view> options, NvrtcVersion version) {
  for (std::size_t i = 0; i < options.size(); ++i) {
    const Parsed parsed = parse(options[i], version);
    if (parsed.known == nullptr) {
      if (!scan.unknown) scan.unknown = std::string(options[i]);
      continue;
    }
    if (parsed.known->effect == kSideEffect && !scan.side_effect) scan.side_effect = std::string(options[i]);
    if (parsed.known->effect == kExtraOutput) scan.extra_output = true;
    if (parsed.known->effect == kBundledHeaders) {
      scan.bundled_headers.emplace_back(options[i].substr(options[i].find('=') + 1));
    }
    if (parsed.known->value != kNone && !parsed.value_attached && i + 1 < options.size()) {
      // The next option is this one's value ("-arch sm_80", "-Xptxas -v"), unless it is itself an
      // option with a side effect: then it counts as one (the cache never guesses which NVRTC took).
      const Parsed next = parse(options[i + 1], version);
      if (next.known != nullptr && next.known->effect == kSideEffect && !scan.side_effect) {
        scan.side_effect = std::string(options[i + 1]);
      }
      ++i;
    }
  }
}

}  // namespace

std::span<const KnownOption> known_options() { return kOptions; }

std::size_t known_option_count(NvrtcVersion version) {
  return static_cast<std::size_t>(
      std::count_if(kOptions.begin(), kOptions.end(), [&](const KnownOption& o) { return o.since <= version; }));
}

OptionScan scan_options(std::span<const std::string_view> options, NvrtcVersion version) {
  OptionScan scan;
  scan_into(scan, options, version);
  return scan;
}

OptionScan scan_compile_options(std::span<const std::string_view> options,
                                const std::optional<std::string_view>& append_flags, NvrtcVersion version) {
  OptionScan scan = scan_options(options, version);
  if (append_flags) {
    std::optional<std::vector<std::string_view>> appended = split_append_flags(*append_flags);
    if (!appended) {
      if (!scan.unknown) scan.unknown = "NVRTC_APPEND_FLAGS=" + std::string(*append_flags);
    } else {
      scan_into(scan, *appended, version);
    }
  }
  return scan;
}

std::optional<std::vector<std::string_view>> split_append_flags(std::string_view flags) {
  if (flags.find_first_of("\"'\\") != std::string_view::npos) return std::nullopt;
  std::vector<std::string_view> out;
  constexpr std::string_view kSpace = " \t\n\r\f\v";
  for (std::size_t at = flags.find_first_not_of(kSpace); at != std::string_view::npos;
       at = flags.find_first_not_of(kSpace, at)) {
    const std::size_t end = std::min(flags.find_first_of(kSpace, at), flags.size());
    out.push_back(flags.substr(at, end - at));
    at = end;
  }
  return out;
}

}  // namespace nvrtc_cache::keying
