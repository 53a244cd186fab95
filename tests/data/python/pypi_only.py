"""A cuda.core program as a user with only PyPI's CUDA wheels writes it (scripts/pypi_only_test.sh runs
it with the toolkit hidden, plain and through each way into the cache, and compares the outputs):

    python pypi_only.py [--activate]

  1. C++ to CUBIN with name expressions (a template's instantiations, their lowered names printed);
  2. two C++ programs to LTO-IR, linked to CUBIN by cuda.core's Linker (nvJitLink);
  3. a kernel including cuda_fp16.h, which no toolkit provides here: NVRTC's bundled headers
     (ProgramOptions(use_bundled_headers=True), installed by NVRTC under $XDG_CACHE_HOME).

No GPU and no driver are needed: every ProgramOptions names its architecture (cuda.core asks the driver
for the device's otherwise) and the outputs are CUBIN and LTO-IR (a PTX output asks the driver whether
it can load it). --activate: nvrtc_cache.activate() first, in this plain interpreter. Prints a SHA-256
of every output and the lowered names; the compiles' own time (from after the import) goes to stderr ("compile seconds S").
"""
import hashlib
import sys
import time

SOURCE = (
    "template <typename T> __global__ void scale(T* x, T a) { x[threadIdx.x] *= a; }\n"
    'extern "C" __global__ void axpy(float a, const float* x, float* y) {\n'
    "  y[threadIdx.x] = a * x[threadIdx.x] + y[threadIdx.x]; }\n"
)
NAMES = ["scale<float>", "scale<double>"]
CALLER = "extern __device__ float square(float);\n__global__ void apply(float* x) { x[threadIdx.x] = square(x[threadIdx.x]); }\n"
CALLEE = "__device__ float square(float v) { return v * v + 1.0f; }\n"
HALF = (
    "#include <cuda_fp16.h>\n"
    'extern "C" __global__ void half_axpy(__half a, const __half* x, __half* y) {\n'
    "  y[threadIdx.x] = __hfma(a, x[threadIdx.x], y[threadIdx.x]); }\n"
)


def digest(data):
    return f"{len(data)} {hashlib.sha256(bytes(data)).hexdigest()}"


def main():
    if sys.argv[1:] == ["--activate"]:
        import nvrtc_cache

        state = nvrtc_cache.activate()
        if not state.active or "NVRTC" not in state.reached or "nvJitLink" not in state.reached:
            sys.exit(f"pypi_only.py: activate() did not reach NVRTC and nvJitLink:\n{state}")
    from cuda.core import Linker, LinkerOptions, Program, ProgramOptions

    start = time.perf_counter()

    code = Program(SOURCE, "c++", ProgramOptions(arch="sm_80")).compile("cubin", name_expressions=NAMES)
    print("cubin", digest(code.code))
    for name in NAMES:
        print("lowered", name, code.symbol_mapping[name])

    lto = ProgramOptions(arch="sm_90", relocatable_device_code=True, link_time_optimization=True)
    objects = [Program(source, "c++", lto).compile("ltoir") for source in (CALLER, CALLEE)]
    for obj in objects:
        print("ltoir", digest(obj.code))
    linker = Linker(*objects, options=LinkerOptions(arch="sm_90", link_time_optimization=True))
    print("linked cubin", digest(linker.link("cubin").code))

    half = Program(HALF, "c++", ProgramOptions(arch="sm_90", use_bundled_headers=True)).compile("cubin")
    print("fp16 cubin", digest(half.code))
    print(f"compile seconds {time.perf_counter() - start:.4f}", file=sys.stderr)


if __name__ == "__main__":
    main()
