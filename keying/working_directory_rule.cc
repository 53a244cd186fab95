#include "keying/working_directory_rule.h"

#include <algorithm>
#include <vector>

#include "libraries/nvrtc/options.h"

namespace nvrtc_cache::keying {
namespace {

// What an option does to the directory's part in the outputs (measured; see the header).
enum class Effect : std::uint8_t {
  kNone,         // the outputs are identical from any directory
  kEmbeds,       // debug info, LTO IR, OptiX IR: the directory is in the outputs
  kLineInfo,     // line info: paths are in the outputs, relative ones resolved against the directory
  kPtxasOption,  // passes its value to ptxas: known only if the value is one of kNeutralPtxasOptions
};

struct OptionFamily {
  std::string_view name;  // as NVRTC spells it, without its dashes
  bool takes_value;       // "-name=value", or "-name value" (the value in the next option)
  Effect effect;
};

// Each measured from two directories with a relative, an absolute and a NULL program name.
constexpr OptionFamily kKnownOptions[] = {
    {"arch", true, Effect::kNone},
    {"gpu-architecture", true, Effect::kNone},
    {"std", true, Effect::kNone},
    {"D", true, Effect::kNone},
    {"define-macro", true, Effect::kNone},
    {"U", true, Effect::kNone},
    {"undefine-macro", true, Effect::kNone},
    // Paths: relative ones are recorded relative and validated where the result is looked up; only
    // line info embeds them (kLineInfo).
    {"I", true, Effect::kNone},
    {"include-path", true, Effect::kNone},
    {"include", true, Effect::kNone},
    {"pre-include", true, Effect::kNone},
    {"use-bundled-headers", true, Effect::kNone},  // -I<dir> -I<dir>/cccl, the headers installed there
    {"rdc", true, Effect::kNone},
    {"relocatable-device-code", true, Effect::kNone},
    {"dc", false, Effect::kNone},
    {"device-c", false, Effect::kNone},
    {"ewp", false, Effect::kNone},
    {"extensible-whole-program", false, Effect::kNone},
    {"dopt", true, Effect::kNone},
    {"use_fast_math", false, Effect::kNone},
    {"ftz", true, Effect::kNone},
    {"prec-div", true, Effect::kNone},
    {"prec-sqrt", true, Effect::kNone},
    {"fmad", true, Effect::kNone},
    {"maxrregcount", true, Effect::kNone},
    {"split-compile", true, Effect::kNone},
    {"fdevice-syntax-only", false, Effect::kNone},
    {"default-device", false, Effect::kNone},
    {"device-as-default-execution-space", false, Effect::kNone},
    {"minimal", false, Effect::kNone},
    {"restrict", false, Effect::kNone},
    {"extra-device-vectorization", false, Effect::kNone},
    {"device-int128", false, Effect::kNone},
    {"w", false, Effect::kNone},
    {"disable-warnings", false, Effect::kNone},
    {"diag-suppress", true, Effect::kNone},
    {"diag-error", true, Effect::kNone},
    {"diag-warn", true, Effect::kNone},
    {"display-error-number", false, Effect::kNone},
    {"G", false, Effect::kEmbeds},  // with -dopt=on only line info (measured), kept simple
    {"device-debug", false, Effect::kEmbeds},
    {"dlto", false, Effect::kEmbeds},
    {"dlink-time-opt", false, Effect::kEmbeds},
    {"optix-ir", false, Effect::kEmbeds},
    {"lineinfo", false, Effect::kLineInfo},
    {"generate-line-info", false, Effect::kLineInfo},
    {"Xptxas", true, Effect::kPtxasOption},
    {"ptxas-options", true, Effect::kPtxasOption},
};

// ptxas options measured not to bring the directory in (ptxas -v's log varies only by its timings).
constexpr std::string_view kNeutralPtxasOptions[] = {"-v", "-O0", "-O1", "-O2", "-O3", "-g", "-lineinfo"};

const OptionFamily* family_named(std::string_view name) {
  const auto* found = std::find_if(std::begin(kKnownOptions), std::end(kKnownOptions),
                                   [&](const OptionFamily& f) { return f.name == name; });
  return found == std::end(kKnownOptions) ? nullptr : found;
}

// Reads options in order: each is "-name", "-name=value", "-name value" or, for -D, -U and -I,
// "-Nvalue"; one or two dashes. Anything else, or an unknown name, is unknown.
class OptionReader {
 public:
  explicit OptionReader(std::vector<std::string_view> options) : options_(std::move(options)) {}

  // Accumulates every option's effect; false if one is not known.
  bool read_all(bool& embeds, bool& line_info) {
    for (std::size_t i = 0; i < options_.size(); ++i) {
      std::string_view body = options_[i];
      if (body.starts_with("--"))
        body.remove_prefix(2);
      else if (body.starts_with("-"))
        body.remove_prefix(1);
      else
        return false;
      std::string_view name = body;
      std::optional<std::string_view> value;
      if (const std::size_t eq = body.find('='); eq != std::string_view::npos) {
        name = body.substr(0, eq);
        value = body.substr(eq + 1);
      }
      const OptionFamily* family = family_named(name);
      if (family == nullptr && body.size() > 1 && (body[0] == 'D' || body[0] == 'U' || body[0] == 'I')) {
        family = family_named(body.substr(0, 1));
        value = body.substr(1);
      }
      if (family == nullptr) return false;
      if (family->takes_value && !value) {
        if (++i == options_.size()) return false;
        value = options_[i];
      }
      if (!family->takes_value && value) return false;
      switch (family->effect) {
        case Effect::kNone:
          break;
        case Effect::kEmbeds:
          embeds = true;
          break;
        case Effect::kLineInfo:
          line_info = true;
          break;
        case Effect::kPtxasOption:
          if (std::find(std::begin(kNeutralPtxasOptions), std::end(kNeutralPtxasOptions), *value) ==
              std::end(kNeutralPtxasOptions)) {
            return false;
          }
          break;
      }
    }
    return true;
  }

 private:
  std::vector<std::string_view> options_;
};

}  // namespace

WorkingDirectoryUse working_directory_use(std::span<const std::string> options,
                                          const std::optional<std::string>& program_name,
                                          const std::optional<std::string_view>& append_flags) {
  bool embeds = false, line_info = false;
  if (!OptionReader({options.begin(), options.end()}).read_all(embeds, line_info)) return WorkingDirectoryUse::kAlways;
  if (append_flags) {  // read on their own: a value the program's options leave out is not taken from them
    std::optional<std::vector<std::string_view>> appended = split_append_flags(*append_flags);
    if (!appended || !OptionReader(std::move(*appended)).read_all(embeds, line_info)) {
      return WorkingDirectoryUse::kAlways;
    }
  }
  if (embeds) return WorkingDirectoryUse::kAlways;
  if (!line_info) return WorkingDirectoryUse::kNone;
  // A NULL name is "default_program": relative, like an empty one.
  const bool absolute_name = program_name && program_name->starts_with('/');
  return absolute_name ? WorkingDirectoryUse::kThroughFoundRelativePaths : WorkingDirectoryUse::kAlways;
}

}  // namespace nvrtc_cache::keying
