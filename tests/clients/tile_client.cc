// tile_client: a program linked against an NVRTC that has Tile IR (13.5's nvrtcGetTileIR[Size]: here
// linked against the proxy libnvrtc.so.13, which exports every 12.x/13.x function). It compiles a Tile
// program and prints every result, Tile IR included. Run against NVRTC 13.0, which lacks those
// functions, the dynamic loader ends it at the first call (lazy binding), as it does any program
// calling a function its library lacks.
#include <nvrtc.h>

#include <cstdio>
#include <string>
#include <vector>

extern "C" nvrtcResult nvrtcGetTileIRSize(nvrtcProgram prog, size_t* size);
extern "C" nvrtcResult nvrtcGetTileIR(nvrtcProgram prog, char* tile_ir);

namespace {

// The bytes as lowercase hex digits.
std::string hex(const std::vector<char>& bytes) {
  std::string out(bytes.size() * 2, '0');
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    std::snprintf(&out[2 * i], 3, "%02x", static_cast<unsigned>(static_cast<unsigned char>(bytes[i])));
  }
  return out;
}

void dump(const char* label, nvrtcProgram p, nvrtcResult (*size_fn)(nvrtcProgram, size_t*),
          nvrtcResult (*data_fn)(nvrtcProgram, char*)) {
  size_t size = 0;
  const nvrtcResult size_rc = size_fn(p, &size);
  std::vector<char> bytes(size_rc == NVRTC_SUCCESS ? size : 0);
  const nvrtcResult data_rc = bytes.empty() ? size_rc : data_fn(p, bytes.data());
  std::printf("%s size_rc=%d size=%zu data_rc=%d bytes=%s\n", label, size_rc, size, data_rc, hex(bytes).c_str());
}

}  // namespace

int main() {
  nvrtcProgram p = nullptr;
  const char* src = "__tile_global__ void tk(int* x) { }\n__global__ void g(int* x) { x[0] = 1; }\n";
  std::printf("create rc=%d\n", nvrtcCreateProgram(&p, src, "tile_client.cu", 0, nullptr, nullptr));
  const char* options[] = {"--enable-tile", "-arch=sm_100"};
  std::printf("compile rc=%d\n", nvrtcCompileProgram(p, 2, options));
  std::fflush(stdout);
  dump("log", p, nvrtcGetProgramLogSize, nvrtcGetProgramLog);
  dump("cubin", p, nvrtcGetCUBINSize, nvrtcGetCUBIN);
  std::fflush(stdout);
  // Called, not taken by address: a lazily bound call (an address would be bound at startup).
  size_t size = 0;
  const nvrtcResult size_rc = nvrtcGetTileIRSize(p, &size);
  std::vector<char> tile_ir(size_rc == NVRTC_SUCCESS ? size : 0);
  const nvrtcResult data_rc = nvrtcGetTileIR(p, tile_ir.data());
  std::printf("tileir size_rc=%d size=%zu data_rc=%d bytes=%s\n", size_rc, size, data_rc, hex(tile_ir).c_str());
  std::printf("destroy rc=%d\n", nvrtcDestroyProgram(&p));
  return 0;
}
