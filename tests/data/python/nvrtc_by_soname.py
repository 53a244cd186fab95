# Loads NVRTC by soname (ctypes.CDLL("libnvrtc.so.13"), as a program reached by `run --proxy` does),
# compiles one kernel to PTX and prints "nvrtc MAJOR.MINOR", the library's path as the loader has it,
# and "ptx SHA256". Exit status 1 when a call fails.
import ctypes
import hashlib
import sys

nvrtc = ctypes.CDLL("libnvrtc.so.13")
major, minor = ctypes.c_int(), ctypes.c_int()
if nvrtc.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor)) != 0:
    sys.exit(1)
program = ctypes.c_void_p()
source = b'extern "C" __global__ void scale(float* x, float a) { x[threadIdx.x] *= a; }'
if nvrtc.nvrtcCreateProgram(ctypes.byref(program), source, b"scale.cu", 0, None, None) != 0:
    sys.exit(1)
options = (ctypes.c_char_p * 1)(b"-arch=compute_80")
if nvrtc.nvrtcCompileProgram(program, 1, options) != 0:
    sys.exit(1)
size = ctypes.c_size_t()
nvrtc.nvrtcGetPTXSize(program, ctypes.byref(size))
ptx = ctypes.create_string_buffer(size.value)
nvrtc.nvrtcGetPTX(program, ptx)
nvrtc.nvrtcDestroyProgram(ctypes.byref(program))
print(f"nvrtc {major.value}.{minor.value}")
print("ptx", hashlib.sha256(ptx.raw).hexdigest())
