// verify: reads every entry of the store, checks its envelope and its format (manifests, compile
// results) and that the results manifests name are present, as the Linux `nvrtc-cache verify`.
#include <string>

#include "tools/store_audit.h"
#include "tools/windows/commands.h"

namespace nvrtc_cache::tools::windows {

int verify() {
  std::string directory;
  auto s = open_store(&directory);
  if (!s) return 1;
  return print_audit(directory, audit_store(*s));
}

}  // namespace nvrtc_cache::tools::windows
