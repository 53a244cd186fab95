"""libNVVM from Python, as the JIT stacks call it: prints the size and SHA-256 of each PTX so runs under
the shim can be compared with runs without it.

    python nvvm_stacks.py numba   numba-cuda: cuda.compile_ptx of two kernels (the @cuda.jit path), sm_90
    python nvvm_stacks.py core    cuda.core: Program(NVVM IR, "nvvm").compile("ptx")
"""
import hashlib
import sys

IR = """target datalayout = "e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-i128:128:128-f32:32:32-f64:64:64-v16:16:16-v32:32:32-v64:64:64-v128:128:128-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

define void @scale(float* %a) {
entry:
  %v = load float, float* %a
  %m = fmul float %v, 2.0
  store float %m, float* %a
  ret void
}

!nvvm.annotations = !{!0}
!0 = !{void (float*)* @scale, !"kernel", i32 1}
!nvvmir.version = !{!1}
!1 = !{i32 2, i32 0, i32 3, i32 2}
"""


def digest(data):
    data = data.encode() if isinstance(data, str) else bytes(data)
    return f"{len(data)} {hashlib.sha256(data).hexdigest()}"


def run_numba():
    from numba import cuda

    def double(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] = a[i] * 2.0

    def axpy(out, x, y, alpha):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = alpha * x[i] + y[i]

    for fn, signature in ((double, "void(float32[:])"), (axpy, "void(float64[:], float64[:], float64[:], float64)")):
        ptx, _ = cuda.compile_ptx(fn, signature, cc=(9, 0))
        print("ptx", digest(ptx))


def run_core():
    from cuda.core import Program, ProgramOptions

    for arch in ("sm_90", "sm_80"):
        print("ptx", digest(Program(IR, "nvvm", ProgramOptions(arch=arch)).compile("ptx").code))


if __name__ == "__main__":
    {"numba": run_numba, "core": run_core}[sys.argv[1]]()
