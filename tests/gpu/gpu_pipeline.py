"""Kernels compiled by NVRTC, linked by nvJitLink and compiled by libNVVM, then loaded and launched on
the GPU, as the Python JIT stacks do it. Needs an NVIDIA GPU, cuda.core, CuPy and numba-cuda.

    python gpu_pipeline.py

Prints one line per step: the size and SHA-256 of what the compiler returned (so runs without the
cache, cold and warm can be compared byte for byte) and whether the kernel built from it computed the
right numbers on the GPU. Exits 1 if any kernel computed a wrong result.
"""
import hashlib
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "python"))
from link_stacks import CALLEE, CALLER  # noqa: E402  apply(x): x[t] = x[t] * x[t] + 1 (extern scale)
from nvvm_stacks import IR as NVVM_IR  # noqa: E402  scale(a): *a = *a * 2

SAXPY = (
    "template <typename T> __global__ void saxpy(T a, const T* x, T* y, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = a * x[i] + y[i]; }\n"
)
N = 1000
failures = []


def digest(data):
    data = data.encode() if isinstance(data, str) else bytes(data)
    return f"{len(data)} {hashlib.sha256(data).hexdigest()[:16]}"


def report(step, artifact, ok):
    print(f"{step}: {artifact} {'computed right' if ok else 'COMPUTED WRONG'}", flush=True)
    if not ok:
        failures.append(step)


def load(cupy, code, suffix):
    """A CuPy module over CODE (cubin or PTX bytes), loaded by the CUDA driver from a file."""
    path = os.path.join(tempfile.mkdtemp(), "module" + suffix)
    with open(path, "wb") as f:
        f.write(bytes(code))
    return cupy.RawModule(path=path)


def main():
    import cupy
    from cuda.core import Device, Linker, LinkerOptions, Program, ProgramOptions

    device = Device()
    device.set_current()
    major, minor = device.compute_capability
    arch = f"sm_{major}{minor}"
    print(f"device: {device.name} {arch}", flush=True)
    x = cupy.arange(N, dtype=cupy.float32)
    grid, block = ((N + 127) // 128,), (128,)

    # 1. NVRTC through cuda.core: CUBIN with name expressions, loaded and launched.
    program = Program(SAXPY, "c++", ProgramOptions(arch=arch, std="c++17"))
    code = program.compile("cubin", name_expressions=["saxpy<float>"])
    lowered = code.symbol_mapping["saxpy<float>"]
    kernel = load(cupy, code.code, ".cubin").get_function(lowered.decode() if isinstance(lowered, bytes) else lowered)
    y = cupy.ones(N, dtype=cupy.float32)
    kernel(grid, block, (np.float32(2.0), x, y, np.int32(N)))
    report("nvrtc cubin (cuda.core)", digest(code.code), bool(cupy.allclose(y, 2.0 * x + 1.0)))

    # 2. NVRTC -dlto to LTO-IR, nvJitLink -lto to CUBIN (cuda.core Linker), loaded and launched.
    lto = ProgramOptions(arch=arch, relocatable_device_code=True, link_time_optimization=True)
    pieces = [Program(src, "c++", lto).compile("ltoir") for src in (CALLER, CALLEE)]
    linked = Linker(*pieces, options=LinkerOptions(arch=arch, link_time_optimization=True)).link("cubin")
    v = x.copy()
    load(cupy, linked.code, ".cubin").get_function("_Z5applyPf")((1,), (N,), (v,))  # apply(float*), one block: it has no bound
    report("nvjitlink lto cubin (cuda.core Linker)", digest(linked.code), bool(cupy.allclose(v, x * x + 1.0)))

    # 3. libNVVM through cuda.core: NVVM IR to PTX, which the driver compiles when it loads it.
    ptx = Program(NVVM_IR, "nvvm", ProgramOptions(arch=arch)).compile("ptx")
    one = cupy.full(1, 21.0, dtype=cupy.float32)
    load(cupy, ptx.code, ".ptx").get_function("scale")((1,), (1,), (one,))
    report("nvvm ptx (cuda.core)", digest(ptx.code), float(one[0]) == 42.0)

    # 4. CuPy's own NVRTC path (RawKernel and an elementwise kernel), its on-disk cache left empty.
    raw = cupy.RawKernel('extern "C" __global__ void negate(float* v, int n) {'
                         " int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) v[i] = -v[i]; }", "negate")
    w = x.copy()
    raw(grid, block, (w, np.int32(N)))
    report("nvrtc (cupy RawKernel)", "-", bool(cupy.array_equal(w, -x)))
    hypot = cupy.ElementwiseKernel("float32 a, float32 b", "float32 c", "c = sqrtf(a * a + b * b)", "gpu_hypot")
    report("nvrtc (cupy ElementwiseKernel)", "-", bool(cupy.allclose(hypot(x, x), x * np.sqrt(2.0))))

    # 5. numba-cuda @cuda.jit: libNVVM to PTX, then numba's linker, launched.
    if not hasattr(np, "row_stack"):  # numba-cuda 0.30 still names it; NumPy 2.4 removed it
        np.row_stack = np.vstack
    from numba import cuda

    @cuda.jit
    def axpy(out, a, xs, ys):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = a * xs[i] + ys[i]

    xs = np.arange(N, dtype=np.float64)
    out = cuda.device_array(N, dtype=np.float64)
    axpy[(N + 127) // 128, 128](out, 3.0, cuda.to_device(xs), cuda.to_device(xs))
    report("nvvm (numba-cuda @cuda.jit)", "-", bool(np.allclose(out.copy_to_host(), 4.0 * xs)))

    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
