#include "platform/file_mapping.h"

namespace nvrtc_cache::platform {

bool mapping_sizes_the_file() { return true; }

}  // namespace nvrtc_cache::platform
