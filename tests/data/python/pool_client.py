"""Compiles N kernels in worker processes that leave the way Python's process pools and forked
children leave: a fork Pool, a spawn Pool, a ProcessPoolExecutor (workers end through os._exit or
SIGTERM), a forked child ending with os._exit right after its compile, and one killed with SIGKILL.
The parent compiles nothing. Prints each kernel's results (return codes and a digest of its PTX),
in kernel order, for comparison with a run without the cache."""
import concurrent.futures
import ctypes
import hashlib
import multiprocessing
import os
import signal
import sys

N = 4
SRC = "__global__ void pool_kernel_{n}(float* x) {{ x[threadIdx.x] += {n}.0f; }}\n"


def compile_one(n):
    nvrtc = ctypes.CDLL("libnvrtc.so.13")
    prog = ctypes.c_void_p()
    created = nvrtc.nvrtcCreateProgram(ctypes.byref(prog), SRC.format(n=n).encode(), b"pool.cu", 0, None, None)
    options = (ctypes.c_char_p * 1)(b"-arch=sm_80")
    compiled = nvrtc.nvrtcCompileProgram(prog, 1, options)
    size = ctypes.c_size_t()
    sized = nvrtc.nvrtcGetPTXSize(prog, ctypes.byref(size))
    ptx = ctypes.create_string_buffer(size.value)
    got = nvrtc.nvrtcGetPTX(prog, ptx)
    nvrtc.nvrtcDestroyProgram(ctypes.byref(prog))
    return f"kernel {n}: rc {created} {compiled} {sized} {got} ptx {hashlib.sha256(ptx.raw).hexdigest()}"


def in_forked_children(ending):
    results = []
    for n in range(N):
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read_end)
            os.write(write_end, compile_one(n).encode())
            if ending == "sigkill":
                os.kill(os.getpid(), signal.SIGKILL)
            os._exit(0)
        os.close(write_end)
        chunks = []
        while chunk := os.read(read_end, 65536):
            chunks.append(chunk)
        os.close(read_end)
        os.waitpid(pid, 0)
        results.append(b"".join(chunks).decode())
    return results


def main(mode):
    if mode in ("fork", "spawn"):
        with multiprocessing.get_context(mode).Pool(2) as pool:
            return pool.map(compile_one, range(N))
    if mode == "executor":
        context = multiprocessing.get_context("spawn")
        with concurrent.futures.ProcessPoolExecutor(2, mp_context=context) as pool:
            return list(pool.map(compile_one, range(N)))
    if mode in ("os_exit", "sigkill"):
        return in_forked_children(mode)
    raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    print("\n".join(main(sys.argv[1])))
    sys.stdout.flush()
