// replay_option_refusal and handle_replay_refusal (tools/replay/replay.h): the option tables' verdicts on a
// recorded option list, and replay's own on the options passed through to internal tools; and how a
// link or NVVM compile is named in the report.
#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "libraries/nvjitlink/options.h"
#include "libraries/nvvm/options.h"
#include "libraries/nvrtc/options.h"
#include "tools/replay/replay.h"

namespace nvrtc_cache::tools {
namespace {

// Why `scan` refuses, each option named as `origin` says where it comes from; "" when it does not.
std::string verdict(const keying::OptionScan& scan, std::string_view origin, const keying::LibraryIdentity& library) {
  if (scan.side_effect) {
    return fmt::format("{} {} has side effects (it reads or writes files beyond the compile's); replay never runs it",
                       origin, *scan.side_effect);
  }
  if (!scan.bundled_headers.empty()) {  // a record (which may be hostile) would name where to write
    return fmt::format("{} --use-bundled-headers={} installs headers into that directory; replay never runs it", origin,
                       scan.bundled_headers.front());
  }
  if (scan.unknown) {
    return fmt::format("{} {} is unknown for NVRTC {}.{}; replay compiles only what the cache can hold", origin,
                       *scan.unknown, library.major, library.minor);
  }
  return {};
}

// -Xcudafe hands its value to NVRTC's front end, which can write files: measured with NVRTC 13.0,
// "-Xcudafe --list=FILE", "--xref=FILE" and "--error_output=FILE" (and "-Xcudafe=--list=FILE")
// overwrite FILE. The option table takes -Xcudafe for a plain option, so replay admits only the
// diagnostic controls apps pass it ("-Xcudafe --diag_suppress=177,550"); -Xnvvm, whose values go
// to libNVVM, not at all.
bool diagnostic_control(std::string_view value) {
  if (value == "--display_error_number" || value == "--no_display_error_number") return true;
  constexpr std::array<std::string_view, 4> kControls = {
      "--diag_suppress=", "--diag_warning=", "--diag_error=", "--diag_remark="};
  for (std::string_view control : kControls) {
    if (!value.starts_with(control) || value.size() == control.size()) continue;
    return std::all_of(value.begin() + static_cast<std::ptrdiff_t>(control.size()), value.end(), [](char c) {
      return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ',';
    });
  }
  return false;
}

// Why an option of `options` passes a value to NVRTC's internal tools that replay does not run, or "".
// Every element is looked at, wherever it stands (even as another option's value).
template <typename Strings>
std::string pass_through_refusal(const Strings& options, std::string_view origin) {
  for (std::size_t i = 0; i < options.size(); ++i) {
    const std::string_view option = options[i];
    if (!option.starts_with('-')) continue;
    const std::string_view body = option.substr(option.starts_with("--") ? 2 : 1);
    const std::size_t equals = body.find('=');
    const std::string_view name = body.substr(0, equals);
    if (name != "Xcudafe" && name != "Xnvvm") continue;
    const std::string_view value = equals != std::string_view::npos ? body.substr(equals + 1)
                                   : i + 1 < options.size()         ? std::string_view(options[i + 1])
                                                                    : std::string_view();
    if (name == "Xcudafe" && diagnostic_control(value)) continue;
    const std::string shown =
        equals != std::string_view::npos ? std::string(option) : fmt::format("{} {}", option, value);
    return fmt::format("{} {} hands NVRTC's internal tools an option that may write files; replay never runs it",
                       origin, shown);
  }
  return {};
}

}  // namespace

std::string replay_option_refusal(const std::vector<std::string>& options, const keying::LibraryIdentity& library,
                                  const char* append_flags) {
  for (const std::string& option : options) {
    if (option.find('\0') != std::string::npos) return "an option holds a NUL byte; replay never runs it";
  }
  const keying::NvrtcVersion version{library.major, library.minor};
  const std::vector<std::string_view> given(options.begin(), options.end());
  std::string why = verdict(keying::scan_compile_options(given, std::nullopt, version), "option", library);
  if (why.empty()) why = pass_through_refusal(options, "option");
  if (why.empty() && append_flags != nullptr) {
    why = verdict(keying::scan_compile_options(given, std::string_view(append_flags), version),
                  "NVRTC_APPEND_FLAGS' option", library);
    const std::optional<std::vector<std::string_view>> appended = keying::split_append_flags(append_flags);
    if (why.empty() && appended) why = pass_through_refusal(*appended, "NVRTC_APPEND_FLAGS' option");
  }
  return why;
}

namespace {
bool has_nul(std::string_view s) { return s.find('\0') != std::string_view::npos; }
}  // namespace

std::string handle_replay_refusal(const core::HandleCallRecord& record) {
  const std::vector<std::string>& options = record.inputs.options;
  for (const std::string& o : options) {
    if (has_nul(o)) return "an option holds a NUL byte";
    if (o.starts_with("-Xnvvm"))
      return fmt::format("the option {} hands its value to an internal tool; replay never runs it", o);
    if (o.starts_with("-Xptxas") && o != "-Xptxas=-v" &&
        !(o.size() == 11 && o.starts_with("-Xptxas=-O") && o[10] >= '0' && o[10] <= '3')) {
      return fmt::format("the option {} hands its value to ptxas; replay admits only -Xptxas=-v and -Xptxas=-O<n>", o);
    }
  }
  for (const keying::HandleInput& input : record.inputs.inputs) {
    if (input.name && has_nul(*input.name)) return "an input's name holds a NUL byte";
  }
  const std::optional<keying::OptionRefusal> unknown =
      record.library == core::JitLibrary::nvjitlink
          ? keying::link_options_not_cacheable(options, record.inputs.library.major, record.inputs.library.minor)
          : keying::nvvm_options_not_cacheable(options);
  if (unknown)
    return fmt::format("its options are not cached ({}); replay runs only what the cache can hold", unknown->why);
  return {};
}

std::string handle_call_label(const core::HandleCallRecord& record) {
  const bool link = record.library == core::JitLibrary::nvjitlink;
  std::size_t count = 0;
  std::string first;
  for (const keying::HandleInput& input : record.inputs.inputs) {
    if (!link && input.type == core::kNvvmVerification) continue;
    if (count++ == 0) first = input.name.value_or("(no name)");
  }
  return fmt::format("{} of {} {}{}", link ? "link" : "NVVM compile", count, link ? "inputs" : "modules",
                     count == 0 ? "" : fmt::format(" ('{}'{})", first, count > 1 ? ", ..." : ""));
}

}  // namespace nvrtc_cache::tools
