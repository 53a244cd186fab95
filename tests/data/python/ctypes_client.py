"""A client that loads NVRTC with ctypes.CDLL("libnvrtc.so.13") (dlopen by soname + dlsym), as CuPy 13
does, compiles a template kernel with name expressions and prints every result. `python ctypes_client.py
SONAME` loads that soname instead; run(library) does the same with a library loaded already."""
import ctypes
import sys

SRC = b"template <typename T> __global__ void scale(T* x) { x[threadIdx.x] *= 2; }\n"


def check(rc, what):
    print(f"{what} rc={rc}")


def run(nvrtc):
    prog = ctypes.c_void_p()
    check(nvrtc.nvrtcCreateProgram(ctypes.byref(prog), SRC, b"ctypes.cu", 0, None, None), "create")
    check(nvrtc.nvrtcAddNameExpression(prog, b"scale<float>"), "add_name")
    opts = (ctypes.c_char_p * 1)(b"-arch=sm_80")
    check(nvrtc.nvrtcCompileProgram(prog, 1, opts), "compile")
    for kind in ("ProgramLog", "PTX", "CUBIN", "LTOIR"):
        size = ctypes.c_size_t()
        check(getattr(nvrtc, f"nvrtcGet{kind}Size")(prog, ctypes.byref(size)), f"{kind} size={size.value}")
        buf = ctypes.create_string_buffer(size.value)
        check(getattr(nvrtc, f"nvrtcGet{kind}")(prog, buf), f"{kind} bytes={buf.raw.hex()}")
    lowered = ctypes.c_char_p()
    check(nvrtc.nvrtcGetLoweredName(prog, b"scale<float>", ctypes.byref(lowered)), f"lowered={lowered.value}")
    check(nvrtc.nvrtcDestroyProgram(ctypes.byref(prog)), "destroy")
    sys.stdout.flush()


if __name__ == "__main__":
    run(ctypes.CDLL(sys.argv[1] if len(sys.argv) > 1 else "libnvrtc.so.13"))
