"""nvJitLink from Python, as the JIT stacks call it: prints what each link returns (sizes, a SHA-256 of
every output, the logs) so runs under the shim can be compared with runs without it.

    python link_stacks.py core      cuda.core: Program(..., "c++") -> LTO-IR, Linker(...).link("cubin")
    python link_stacks.py bindings  cuda.bindings.nvjitlink: create / add_data / complete / every getter
    python link_stacks.py pipeline  all three compilers in one process: NVRTC (C++ to LTO-IR), nvJitLink
                                    (LTO-IR to CUBIN) and libNVVM (NVVM IR to PTX), through cuda.core
"""
import hashlib
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nvvm_stacks  # noqa: E402  the NVVM IR module

CALLER = "extern __device__ float scale(float);\n__global__ void apply(float* x) { x[threadIdx.x] = scale(x[threadIdx.x]); }\n"
CALLEE = "__device__ float scale(float v) { return v * v + 1.0f; }\n"


def digest(data):
    return f"{len(data)} {hashlib.sha256(bytes(data)).hexdigest()}"


def ltoir(source):
    from cuda.core import Program, ProgramOptions

    options = ProgramOptions(arch="sm_90", relocatable_device_code=True, link_time_optimization=True)
    return Program(source, "c++", options).compile("ltoir")


def run_core():
    from cuda.core import Linker, LinkerOptions

    for target in ("cubin", "ptx"):
        linker = Linker(ltoir(CALLER), ltoir(CALLEE), options=LinkerOptions(arch="sm_90", link_time_optimization=True,
                                                                           ptx=target == "ptx"))
        print(target, digest(linker.link(target).code))
        print("error log", repr(linker.get_error_log()))
        print("info log", repr(linker.get_info_log()))


def run_bindings():
    from cuda.bindings import nvjitlink

    handle = nvjitlink.create(2, ["-arch=sm_90", "-lto"])
    for name, source in (("caller", CALLER), ("callee", CALLEE)):
        code = bytes(ltoir(source).code)
        nvjitlink.add_data(handle, nvjitlink.InputType.LTOIR, code, len(code), name)
    nvjitlink.complete(handle)
    size = nvjitlink.get_linked_cubin_size(handle)
    cubin = bytearray(size)
    nvjitlink.get_linked_cubin(handle, cubin)
    print("cubin", digest(cubin))
    for what in ("error_log", "info_log"):
        size = getattr(nvjitlink, f"get_{what}_size")(handle)
        log = bytearray(size)
        getattr(nvjitlink, f"get_{what}")(handle, log)
        print(what, size, bytes(log))
    try:
        nvjitlink.get_linked_ptx_size(handle)
    except nvjitlink.nvJitLinkError as e:
        print("ptx size", e)
    nvjitlink.destroy(handle)




def run_pipeline():
    from cuda.core import Linker, LinkerOptions, Program, ProgramOptions

    linker = Linker(ltoir(CALLER), ltoir(CALLEE), options=LinkerOptions(arch="sm_90", link_time_optimization=True))
    print("cubin", digest(linker.link("cubin").code))
    print("ptx", digest(Program(nvvm_stacks.IR, "nvvm", ProgramOptions(arch="sm_90")).compile("ptx").code))


if __name__ == "__main__":
    {"core": run_core, "bindings": run_bindings, "pipeline": run_pipeline}[sys.argv[1]]()
