// `nvrtc-cache replay`'s links and NVVM compiles (tools/replay/replay.h): each recorded call is made again,
// as recorded and once per architecture, through the library it names (checked on disk before it is
// loaded, tools/doctor/nvrtc_library_check.h) with the shim preloaded, so the shim keys and stores it as the
// app's own call would be. A link's inputs for another architecture come from the compiles replayed
// before it (tools/replay/retarget.h); an NVVM compile's result is left there for the links.
#define NVJITLINK_NO_INLINE
#include <dlfcn.h>
#include <nvJitLink.h>
#include <nvvm.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>

#include <fmt/format.h>

#include "tools/replay/arch_options.h"
#include "tools/doctor/nvrtc_library_check.h"
#include "tools/replay/replay.h"

namespace nvrtc_cache::tools {
namespace {

// nvJitLink's functions by their plain names (nvJitLink.h declares them inline over versioned ones).
struct LinkApi {
  nvJitLinkResult (*create)(nvJitLinkHandle*, std::uint32_t, const char**) = nullptr;
  nvJitLinkResult (*destroy)(nvJitLinkHandle*) = nullptr;
  nvJitLinkResult (*add_data)(nvJitLinkHandle, nvJitLinkInputType, const void*, std::size_t, const char*) = nullptr;
  nvJitLinkResult (*add_file)(nvJitLinkHandle, nvJitLinkInputType, const char*) = nullptr;
  nvJitLinkResult (*complete)(nvJitLinkHandle) = nullptr;
  std::string problem;
};

struct NvvmApi {
  decltype(&::nvvmCreateProgram) create = nullptr;
  decltype(&::nvvmDestroyProgram) destroy = nullptr;
  decltype(&::nvvmAddModuleToProgram) add = nullptr;
  decltype(&::nvvmLazyAddModuleToProgram) lazy_add = nullptr;
  decltype(&::nvvmVerifyProgram) verify = nullptr;
  decltype(&::nvvmCompileProgram) compile = nullptr;
  decltype(&::nvvmGetCompiledResultSize) result_size = nullptr;
  decltype(&::nvvmGetCompiledResult) result = nullptr;
  std::string problem;
};

bool resolve_link(void* handle, LinkApi& api) {
  look_up(handle, "nvJitLinkCreate", api.create);
  look_up(handle, "nvJitLinkDestroy", api.destroy);
  look_up(handle, "nvJitLinkAddData", api.add_data);
  look_up(handle, "nvJitLinkAddFile", api.add_file);
  look_up(handle, "nvJitLinkComplete", api.complete);
  return api.create && api.destroy && api.add_data && api.add_file && api.complete;
}

bool resolve_nvvm(void* handle, NvvmApi& api) {
  look_up(handle, "nvvmCreateProgram", api.create);
  look_up(handle, "nvvmDestroyProgram", api.destroy);
  look_up(handle, "nvvmAddModuleToProgram", api.add);
  look_up(handle, "nvvmLazyAddModuleToProgram", api.lazy_add);
  look_up(handle, "nvvmVerifyProgram", api.verify);
  look_up(handle, "nvvmCompileProgram", api.compile);
  look_up(handle, "nvvmGetCompiledResultSize", api.result_size);
  look_up(handle, "nvvmGetCompiledResult", api.result);
  return api.create && api.destroy && api.add && api.lazy_add && api.verify && api.compile && api.result_size &&
         api.result;
}

// Each library checked and loaded once per path and identity; dlsym goes through the shim's hook, so
// every call is cached.
const LinkApi& link_api_for(const core::HandleCallRecord& record) {
  return load_checked_api(record.library_path, record.inputs.library, JitApi::nvjitlink, resolve_link);
}

const NvvmApi& nvvm_api_for(const core::HandleCallRecord& record) {
  return load_checked_api(record.library_path, record.inputs.library, JitApi::nvvm, resolve_nvvm);
}

// A verification's options: each followed by a NUL (libraries/nvvm/hooks.cc).
std::vector<std::string> split_verification(const std::string& joined) {
  std::vector<std::string> options;
  for (std::size_t start = 0; start < joined.size();) {
    const std::size_t end = joined.find('\0', start);
    if (end == std::string::npos) break;
    options.push_back(joined.substr(start, end - start));
    start = end + 1;
  }
  return options;
}

std::string join_verification(const std::vector<std::string>& options) {
  std::string joined;
  for (const std::string& o : options) joined.append(o).push_back('\0');
  return joined;
}

// An NVVM compile's inputs for `arch`: a verification's options rewritten as the compile's are.
std::vector<keying::HandleInput> nvvm_inputs_for_arch(const std::vector<keying::HandleInput>& recorded,
                                                      const std::string& arch) {
  std::vector<keying::HandleInput> inputs = recorded;
  if (arch.empty()) return inputs;
  for (keying::HandleInput& input : inputs) {
    if (input.type != core::kNvvmVerification) continue;
    if (auto options = options_for_arch(split_verification(input.bytes), arch))
      input.bytes = join_verification(*options);
  }
  return inputs;
}

// Why an NVVM program cannot be replayed for another architecture, or "": numba-cuda's mangled names
// carry an ABI tag ("_ZN8__main__3addB2v1B92cw51cXTLSUw…") that encodes its target options, the
// compute capability among them, so its IR for another GPU is another program: an entry compiled
// from the recorded IR for that GPU would never be looked up.
std::string target_in_names(const std::vector<keying::HandleInput>& inputs) {
  static constexpr std::string_view kTargetTag = "cw51cXTLSUw";  // the tag's encoded start
  for (const keying::HandleInput& input : inputs) {
    if (input.type == core::kNvvmVerification) continue;
    const std::string_view bytes = input.bytes;
    for (std::size_t at = bytes.find(kTargetTag); at != std::string_view::npos; at = bytes.find(kTargetTag, at + 1)) {
      std::size_t digits = at;
      while (digits > 0 && bytes[digits - 1] >= '0' && bytes[digits - 1] <= '9') --digits;
      if (digits < at && digits > 0 && bytes[digits - 1] == 'B')
        return "its IR names its target (numba-cuda's mangled names encode the compute capability), so an entry "
               "for another architecture would never be looked up: record on that GPU instead";
    }
  }
  return {};
}

std::vector<const char*> c_strings(const std::vector<std::string>& list) {
  std::vector<const char*> out;
  for (const std::string& s : list) out.push_back(s.c_str());
  return out;
}

const char* input_name_of(const keying::HandleInput& input) { return input.name ? input.name->c_str() : nullptr; }

ReplayOutcome link_variant(const LinkApi& api, const std::vector<std::string>& options,
                           const std::vector<keying::HandleInput>& inputs, LogTail& log) {
  (void)log.next();  // anything logged before this link is not its outcome
  std::vector<const char*> option_pointers = c_strings(options);
  nvJitLinkHandle handle = nullptr;
  nvJitLinkResult rc = api.create(&handle, static_cast<std::uint32_t>(option_pointers.size()), option_pointers.data());
  ReplayOutcome out;
  if (rc != NVJITLINK_SUCCESS) {
    out.status = "failed";
    out.detail = fmt::format("nvJitLinkCreate returned {}", static_cast<int>(rc));
    return out;
  }
  for (const keying::HandleInput& input : inputs) {
    const auto type = static_cast<nvJitLinkInputType>(input.type);
    rc = input.from_file ? api.add_file(handle, type, input_name_of(input))
                         : api.add_data(handle, type, input.bytes.data(), input.bytes.size(), input_name_of(input));
    if (rc != NVJITLINK_SUCCESS) break;
  }
  if (rc == NVJITLINK_SUCCESS) rc = api.complete(handle);
  api.destroy(&handle);
  const std::string rc_text =
      rc == NVJITLINK_SUCCESS ? "" : fmt::format(" (nvJitLink returned {})", static_cast<int>(rc));
  return outcome_from_log(log.next(), rc_text);
}

ReplayOutcome nvvm_variant(const NvvmApi& api, const std::vector<std::string>& options,
                           const std::vector<keying::HandleInput>& inputs, LogTail& log, std::string* result) {
  (void)log.next();
  nvvmProgram program = nullptr;
  nvvmResult rc = api.create(&program);
  ReplayOutcome out;
  if (rc != NVVM_SUCCESS) {
    out.status = "failed";
    out.detail = fmt::format("nvvmCreateProgram returned {}", static_cast<int>(rc));
    return out;
  }
  for (const keying::HandleInput& input : inputs) {
    if (input.type == core::kNvvmVerification) {
      const std::vector<std::string> verification = split_verification(input.bytes);
      std::vector<const char*> pointers = c_strings(verification);
      (void)api.verify(program, static_cast<int>(pointers.size()), pointers.data());  // keyed with its result
      continue;
    }
    const auto add = input.type == core::kNvvmLazyModule ? api.lazy_add : api.add;
    rc = add(program, input.bytes.data(), input.bytes.size(), input_name_of(input));
    if (rc != NVVM_SUCCESS) break;
  }
  if (rc == NVVM_SUCCESS) {
    std::vector<const char*> pointers = c_strings(options);
    rc = api.compile(program, static_cast<int>(pointers.size()), pointers.data());
  }
  std::size_t size = 0;
  if (rc == NVVM_SUCCESS && result != nullptr && api.result_size(program, &size) == NVVM_SUCCESS && size > 0) {
    result->assign(size, '\0');
    if (api.result(program, result->data()) != NVVM_SUCCESS) result->clear();
  }
  api.destroy(&program);
  const std::string rc_text = rc == NVVM_SUCCESS ? "" : fmt::format(" (libNVVM returned {})", static_cast<int>(rc));
  return outcome_from_log(log.next(), rc_text);
}

std::optional<std::string> read_file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Enters the recorded working directory (a file added by a relative name is found from there) and
// checks that each file added by path holds the recorded bytes here; "" or why the link is skipped.
std::string prepare_files(const core::HandleCallRecord& record) {
  struct stat st;
  const std::string& directory = record.working_directory;
  const bool directory_here = !directory.empty() && directory.front() == '/' && ::stat(directory.c_str(), &st) == 0 &&
                              S_ISDIR(st.st_mode) && ::chdir(directory.c_str()) == 0;
  for (const keying::HandleInput& input : record.inputs.inputs) {
    if (!input.from_file) continue;
    const std::string name = input.name.value_or("");
    if (name.empty() || (name.front() != '/' && !directory_here)) {
      return fmt::format("the file {} is named relative to {}, which does not exist here", name, directory);
    }
    const std::optional<std::string> bytes = read_file_bytes(name);
    if (!bytes || *bytes != input.bytes)
      return fmt::format("the file {} (an input added by path) is missing or differs here", name);
  }
  return {};
}

}  // namespace

void replay_handle_calls(const std::vector<core::HandleCallRecord>& calls, std::size_t first_index,
                         const std::vector<std::string>& archs, LogTail& log, RetargetDirectory* outputs) {
  const RetargetLookup lookup = outputs ? outputs->lookup() : RetargetLookup{};
  for (std::size_t c = 0; c < calls.size(); ++c) {
    const core::HandleCallRecord& record = calls[c];
    const bool link = record.library == core::JitLibrary::nvjitlink;
    const std::vector<ReplayVariant> variants = replay_variants(record.inputs.options, archs);
    std::string why_refused = handle_replay_refusal(record);
    const LinkApi* link_api = nullptr;
    const NvvmApi* nvvm_api = nullptr;
    if (why_refused.empty() && link) {
      link_api = &link_api_for(record);
      why_refused = link_api->problem;
    } else if (why_refused.empty()) {
      nvvm_api = &nvvm_api_for(record);
      why_refused = nvvm_api->problem;
    }
    const std::string why_skipped = why_refused.empty() && link ? prepare_files(record) : "";
    std::string as_recorded_result;
    report_variants(first_index + c, variants.size(), why_refused, why_skipped, [&](std::size_t v) {
      const ReplayVariant& variant = variants[v];
      ReplayOutcome outcome;
      if (link) {
        RetargetedInputs inputs{record.inputs.inputs, 0, ""};
        if (!variant.arch.empty()) inputs = link_inputs_for_arch(record.inputs.inputs, variant.arch, lookup);
        if (!inputs.skipped.empty()) {
          outcome.status = "skipped";
          outcome.detail = inputs.skipped;
          return outcome;
        }
        return link_variant(*link_api, variant.options, inputs.inputs, log);
      }
      if (std::string target = variant.arch.empty() ? "" : target_in_names(record.inputs.inputs); !target.empty()) {
        outcome.status = "skipped";
        outcome.detail = std::move(target);
        return outcome;
      }
      std::string result;
      outcome = nvvm_variant(*nvvm_api, variant.options, nvvm_inputs_for_arch(record.inputs.inputs, variant.arch), log,
                             outputs ? &result : nullptr);
      if (outputs && variant.arch.empty() && !result.empty()) {
        as_recorded_result = result;
        outputs->add_producer(result, "the " + handle_call_label(record));
        for (const std::string& arch : archs) {  // an architecture the recorded options already name
          if (options_for_arch(record.inputs.options, arch) == record.inputs.options)
            outputs->add_output(result, arch, result);
        }
      } else if (outputs && !as_recorded_result.empty() && !result.empty()) {
        outputs->add_output(as_recorded_result, variant.arch, result);
      }
      return outcome;
    });
  }
}

}  // namespace nvrtc_cache::tools
