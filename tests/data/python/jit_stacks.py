"""Real Python JIT stacks compiling through NVRTC, printing every result so that runs with and without
the shim can be compared byte for byte.

usage: jit_stacks.py bindings|core|cupy|cupy_kernels|numba
  bindings  cuda.bindings.nvrtc, the raw API (cuda.pathfinder loads NVRTC: the nvidia-cuda-nvrtc
            wheel by absolute path if installed, else the system one)
  core      cuda.core Program(...).compile() to CUBIN and LTO-IR, with name expressions
  cupy      CuPy's NVRTC program (the path RawModule/RawKernel compile through), to CUBIN with
            name expressions
  cupy_kernels  the path CuPy's RawKernel and elementwise kernels compile through
            (compile_using_nvrtc): each program named by a fresh temporary directory, CuPy's own options,
            its headers; only the GPU's architecture is given instead of asked of the driver
  numba     numba-cuda's NVRTC compile of CUDA C++ for linking into Python kernels (LTO-IR; its
            PTX path asks the GPU driver for its version)
"""
import sys

SOURCE = (
    "template <typename T> __global__ void scale(T* x, T a) { x[threadIdx.x] *= a; }\n"
    "extern \"C\" __global__ void axpy(float a, const float* x, float* y) {\n"
    "  y[threadIdx.x] = a * x[threadIdx.x] + y[threadIdx.x]; }\n"
)
NAMES = ["scale<float>", "scale<double>"]


def run_bindings():
    from cuda.bindings import nvrtc

    def ok(result, what):
        err = result[0]
        print(f"{what}: {err}")
        return result[1:] if len(result) > 1 else None

    prog = ok(nvrtc.nvrtcCreateProgram(SOURCE.encode(), b"bindings.cu", 0, [], []), "create")[0]
    for name in NAMES:
        ok(nvrtc.nvrtcAddNameExpression(prog, name.encode()), f"add {name}")
    ok(nvrtc.nvrtcCompileProgram(prog, 2, [b"-arch=sm_80", b"-lineinfo"]), "compile")
    for kind in ("ProgramLog", "PTX", "CUBIN"):
        size = ok(getattr(nvrtc, f"nvrtcGet{kind}Size")(prog), f"{kind} size")[0]
        buf = b" " * size
        ok(getattr(nvrtc, f"nvrtcGet{kind}")(prog, buf), f"{kind} data")
        print(f"{kind} {size} {buf.hex()}")
    for name in NAMES:
        lowered = ok(nvrtc.nvrtcGetLoweredName(prog, name.encode()), f"lowered {name}")[0]
        print(f"lowered {name} = {lowered}")
    ok(nvrtc.nvrtcDestroyProgram(prog), "destroy")


def run_core():
    from cuda.core import Program, ProgramOptions

    # (PTX output asks the CUDA driver whether it can load it: not possible without a GPU driver.)
    for target, extra in (("cubin", {}), ("ltoir", {"link_time_optimization": True})):
        program = Program(SOURCE, "c++", options=ProgramOptions(arch="sm_80", **extra))
        code = program.compile(target, name_expressions=NAMES)
        print(f"{target} {len(code.code)} {bytes(code.code).hex()}")
        for name in NAMES:
            print(f"{target} symbol {name} = {code.symbol_mapping.get(name)}")
        program.close()


def run_cupy():
    from cupy.cuda import compiler

    program = compiler._NVRTCProgram(SOURCE, "cupy.cu", name_expressions=NAMES, method="cubin")
    code, mapping = program.compile(("-arch=sm_80", "-std=c++17"))
    print(f"cubin {len(code)} {bytes(code).hex()}")
    for name in NAMES:
        print(f"lowered {name} = {mapping[name]}")


def run_cupy_kernels():
    import os

    import cupy
    from cupy.cuda import compiler

    # The one step that asks the GPU (for its architecture), answered as CuPy does for an sm_90 GPU.
    compiler._get_arch_for_options_for_nvrtc = lambda arch: (f"-arch=sm_{arch}", "cubin")
    include = "-I" + os.path.join(os.path.dirname(cupy.__file__), "_core", "include")
    kernels = (
        ("raw", 'extern "C" __global__ void negate(float* v, int n) {'
                " int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) v[i] = -v[i]; }", (), None),
        ("carray", "#include <cupy/carray.cuh>\n"
                   'extern "C" __global__ void scale(CArray<float, 1> x, float a) { x[threadIdx.x] *= a; }\n',
         (include, "-std=c++17"), None),
        ("template", SOURCE, ("-std=c++17",), NAMES),
        # A CUB block reduction, as CuPy's reductions include it (libcu++'s headers come with it).
        ("cub", "#include <cupy/carray.cuh>\n#include <cub/block/block_reduce.cuh>\n"
                'extern "C" __global__ void total(const float* x, float* out) {\n'
                "  using R = cub::BlockReduce<float, 128>; __shared__ typename R::TempStorage t;\n"
                "  float s = R(t).Sum(x[threadIdx.x]); if (threadIdx.x == 0) *out = s; }\n",
         tuple("-I" + os.path.join(include[2:], "cupy", "_cccl", d) for d in ("cub", "thrust", "libcudacxx"))
         + (include, "--std=c++17", "-ftz=true"), None),
    )
    for label, source, options, names in kernels:
        code, mapping = compiler.compile_using_nvrtc(source, options, arch="90", name_expressions=names)
        print(f"{label} cubin {len(code)} {bytes(code).hex()}")
        for name in names or ():
            print(f"{label} lowered {name} = {mapping[name]}")


def run_numba():
    from numba.cuda.cudadrv import nvrtc

    device_source = 'extern "C" __device__ int twice(int* out, int x) { *out = 2 * x; return 0; }\n'
    code, log = nvrtc.compile(device_source, "numba.cu", (8, 0), ltoir=True)
    print(f"ltoir {len(code.code)} {bytes(code.code).hex()} log={log!r}")


if __name__ == "__main__":
    {"bindings": run_bindings, "core": run_core, "cupy": run_cupy, "cupy_kernels": run_cupy_kernels,
     "numba": run_numba}[sys.argv[1]]()
