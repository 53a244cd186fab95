#include "tools/doctor/real_libraries.h"

#include <unistd.h>

#include <cstdlib>
#include <string>

#include "tools/install_paths.h"

namespace nvrtc_cache::tools {

using shim::interpose::FoundLibrary;
using shim::interpose::RealLibrary;

shim::interpose::SearchRoots cli_search_roots() {
  std::vector<std::string> own;
  const std::string installed = prefix();
  if (const auto slash = installed.find_last_of('/');
      slash != std::string::npos && installed.substr(slash + 1) == "nvrtc_cache") {
    own.push_back(installed.substr(0, slash));                            // <site-packages>/nvrtc_cache/bin/nvrtc-cache
  } else if (::access((installed + "/pyvenv.cfg").c_str(), F_OK) == 0) {  // <venv>/bin/nvrtc-cache
    const char* home = std::getenv("HOME");
    own = shim::interpose::interpreter_site_packages(installed + "/bin/python", home ? home : "");
  }
  return shim::interpose::roots_of_this_process(own, /*virtual_env=*/true);
}

std::vector<FoundLibrary> real_library_candidates(RealLibrary library) {
  std::vector<FoundLibrary> found;
  const char* variable = shim::interpose::override_variable(library);
  if (const char* configured = std::getenv(variable); configured && *configured)
    found.push_back({configured, variable});
  for (FoundLibrary& candidate :
       shim::interpose::search_library(shim::interpose::spec_of(library), cli_search_roots())) {
    found.push_back(std::move(candidate));
  }
  return found;
}

std::optional<FoundLibrary> real_library(RealLibrary library) {
  std::vector<FoundLibrary> found = real_library_candidates(library);
  if (found.empty()) return std::nullopt;
  return std::move(found.front());
}

}  // namespace nvrtc_cache::tools
