#include "core/program_label.h"

#include <cxxabi.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace nvrtc_cache::core {

bool name_says_nothing(std::string_view name) {
  return name.empty() || name == "default_program" || name.find('/') != std::string_view::npos ||
         name.find('\\') != std::string_view::npos;
}

std::string first_ptx_kernel(std::string_view ptx) {
  for (std::size_t at = ptx.find(".entry "); at != std::string_view::npos; at = ptx.find(".entry ", at + 1)) {
    std::size_t start = at + 7;
    while (start < ptx.size() && (ptx[start] == ' ' || ptx[start] == '\t')) ++start;
    std::size_t end = start;
    while (end < ptx.size() &&
           (std::isalnum(static_cast<unsigned char>(ptx[end])) || ptx[end] == '_' || ptx[end] == '$')) {
      ++end;
    }
    if (end == start) continue;
    const std::string name(ptx.substr(start, end - start));
    int status = 0;
    char* demangled = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
    std::string out = status == 0 && demangled ? demangled : name;
    std::free(demangled);
    // The kernel's name: "void scale<float, 2>(float*)" -> "scale<float, 2>".
    int depth = 0;
    for (std::size_t i = 0; i < out.size(); ++i) {
      if (out[i] == '<')
        ++depth;
      else if (out[i] == '>')
        --depth;
      else if (out[i] == '(' && depth == 0) {
        out.resize(i);
        break;
      }
    }
    if (out.starts_with("void ")) out.erase(0, 5);
    return out;
  }
  return "";
}

namespace {

// The first name expression that is not empty, or "".
std::string_view first_expression(std::span<const std::string> name_expressions) {
  for (const std::string& expression : name_expressions) {
    if (!expression.empty()) return expression;
  }
  return {};
}

}  // namespace

bool nvrtc_label_needs_ptx(std::string_view name, std::span<const std::string> name_expressions) {
  return name_says_nothing(name) && first_expression(name_expressions).empty();
}

std::string nvrtc_program_label(std::string_view name, std::span<const std::string> name_expressions,
                                std::string_view ptx, std::span<const std::string> options) {
  if (!name_says_nothing(name)) return std::string(name);
  std::string better(first_expression(name_expressions));
  if (better.empty()) better = first_ptx_kernel(ptx);
  if (better.empty() && !name.empty() && name != "default_program") {
    better = name.substr(name.find_last_of("/\\") + 1);  // a path's file name
  }
  if (better.empty()) {
    for (const std::string& o : options) better += (better.empty() ? "" : " ") + o;
  }
  if (!better.empty()) return better;
  return name.empty() ? "(unnamed)" : std::string(name);
}

bool handle_label_needs_ptx(std::span<const std::string> input_names, bool is_nvvm) {
  return is_nvvm && std::all_of(input_names.begin(), input_names.end(), [](const std::string& n) { return n.empty(); });
}

std::string handle_label(std::string_view kind, std::span<const std::string> input_names, bool is_nvvm,
                         std::string_view ptx) {
  std::string inputs;
  for (const std::string& name : input_names) {
    inputs += (inputs.empty() ? "" : ", ") + (name.empty() ? std::string("(unnamed)") : name);
  }
  // libNVVM's modules are rarely named (numba names none): the kernel its PTX defines says more.
  if (handle_label_needs_ptx(input_names, is_nvvm)) {
    if (std::string kernel = first_ptx_kernel(ptx); !kernel.empty()) inputs = std::move(kernel);
  }
  return std::string(kind) + ": " + (inputs.empty() ? "(no inputs)" : inputs);
}

}  // namespace nvrtc_cache::core
