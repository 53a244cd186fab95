"""nvrtc_cache.activate() in a plain interpreter, with the real stacks from PyPI (tests/integration/
python_activate_test.cc runs each scenario in a fresh process and compares their outputs).

    python activate.py plain      the stacks, no cache: the reference output
    python activate.py activated  activate(), check that cuda.pathfinder, ctypes and dlopen by soname now
                                  find the proxies, then the same stacks (same output expected)
    python activate.py core       cuda.core's compiles alone, no cache: the reference for late and ipython
    python activate.py late       NVRTC loaded first (cuda.bindings), then activate(): one
                                  ActivationWarning naming it, nothing changed, then cuda.core's compiles
    python activate.py where      the real libraries activate() would forward to, one per line
    python activate.py pathfinder the libraries cuda.pathfinder loads without the cache, one per line
    python activate.py ipython    a real IPython shell: %load_ext nvrtc_cache, then cells that compile
    python activate.py nvrtc12    NVRTC_CACHE_REAL_NVRTC names a 12.x NVRTC (as the stacks find one where only
                                  the CUDA 12 wheel is installed): activate(), then ctypes clients of
                                  libnvrtc.so.12 and of cuda.pathfinder's NVRTC
    python activate.py nvrtc12-plain  the same clients of that 12.x NVRTC, no cache: the reference
    python activate.py started    (python -m nvrtc_cache.environment enable): the proxies were loaded at
                                  the interpreter's start, before this script; then cuda.core's compiles
    python activate.py unstarted  the same, where nothing was loaded at start (NVRTC_CACHE_ACTIVATE=0)

The stacks: cuda.core (C++ to CUBIN and LTO-IR with name expressions; LTO-IR linked by cuda.core's
Linker through nvJitLink; NVVM IR to PTX through libNVVM), CuPy's compile_using_nvrtc (cupy-cuda13x)
and numba-cuda (an NVRTC LTO-IR compile and cuda.compile_ptx, which goes through libNVVM). Nothing
here needs a GPU.
"""
import ctypes
import os
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jit_stacks  # noqa: E402
import link_stacks  # noqa: E402
import nvvm_stacks  # noqa: E402

LIBNAMES = ("nvrtc", "nvJitLink", "nvvm")  # cuda.pathfinder's names


def stacks():
    jit_stacks.run_core()
    link_stacks.run_pipeline()
    jit_stacks.run_cupy_kernels()
    jit_stacks.run_numba()
    nvvm_stacks.run_numba()
    sys.stdout.flush()


def fail(message):
    sys.exit(f"activate.py: {message}")


def run_activated():
    import nvrtc_cache
    from cuda.pathfinder import load_nvidia_dynamic_lib

    state = nvrtc_cache.activate()
    print(state, file=sys.stderr)
    if not state.active or sorted(state.reached) != ["NVRTC", "libNVVM", "nvJitLink"]:
        fail(f"not everything reached:\n{state}")
    if nvrtc_cache.activate() is not state:
        fail("a second activate() did not return the first one's result")
    proxy = os.path.realpath(nvrtc_cache.proxy_dir())
    for libname in LIBNAMES:
        loaded = load_nvidia_dynamic_lib(libname)
        if os.path.dirname(os.path.realpath(loaded.abs_path)) != proxy:
            fail(f"cuda.pathfinder loaded {libname} from {loaded.abs_path} ({loaded.found_via}), not the proxy")
    # By soname, as CuPy 13, PyTorch and jitify load it: the proxy core (it has the stand-ins' table).
    if not hasattr(ctypes.CDLL("libnvrtc.so.13"), "nvrtc_cache_proxy_entries"):
        fail("ctypes.CDLL('libnvrtc.so.13') is not the proxy")
    stacks()


def run_late():
    from cuda.bindings import nvrtc

    err, major, minor = nvrtc.nvrtcVersion()  # cuda.pathfinder loads the real NVRTC here
    import nvrtc_cache
    from nvrtc_cache.activation import ActivationWarning, loaded_objects

    before_env = dict(os.environ)
    before_objects = loaded_objects()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        state = nvrtc_cache.activate()
    said = [str(w.message) for w in caught if issubclass(w.category, ActivationWarning)]
    if len(said) != 1 or "NVRTC (" not in said[0] or "not cached" not in said[0] or "nothing was changed" not in said[0]:
        fail(f"expected one warning naming NVRTC, got {said}")
    if state.active or state.reached:
        fail(f"activate() after NVRTC was loaded claims to be active:\n{state}")
    if dict(os.environ) != before_env or loaded_objects() != before_objects:
        fail("activate() after NVRTC was loaded changed the environment or loaded something")
    print(said[0], file=sys.stderr)
    jit_stacks.run_core()


def run_where():
    from nvrtc_cache.activation import LIBRARIES, find_real_library

    for library in LIBRARIES:
        found = find_real_library(library)
        print(os.path.realpath(found[0]) if found else "none")


def run_pathfinder():
    from cuda.pathfinder import load_nvidia_dynamic_lib

    for libname in LIBNAMES:
        print(os.path.realpath(load_nvidia_dynamic_lib(libname).abs_path))


def run_ipython():
    # A real IPython shell (the kernel a notebook runs): the line magic as a user types it, then the
    # compiles as cells. IPython's own output (the extension's report) goes to the shell's stdout.
    import io
    from contextlib import redirect_stdout

    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    shown = io.StringIO()
    with redirect_stdout(shown):
        shell.run_line_magic("load_ext", "nvrtc_cache")
    if "active in this interpreter" not in shown.getvalue():
        fail(f"%load_ext nvrtc_cache said: {shown.getvalue()}")
    import nvrtc_cache.activation as activation
    if not any(activation._is_ours(path) for path in activation.loaded_objects()):
        fail("%load_ext nvrtc_cache loaded no proxy")
    shell.run_cell("import jit_stacks", store_history=False).raise_error()
    shell.run_cell("jit_stacks.run_core()", store_history=False).raise_error()


def proxies_loaded_at_start():
    from nvrtc_cache.activation import _is_ours, loaded_objects

    return sorted(os.path.basename(path) for path in loaded_objects() if _is_ours(path))


def run_nvrtc12(activated=True):
    import ctypes_client

    real = os.environ["NVRTC_CACHE_REAL_NVRTC"]
    nvjitlink12 = os.environ.get("NVRTC_CACHE_REAL_NVJITLINK")  # (activate() sets it where it is not)
    if activated:
        import nvrtc_cache
        from nvrtc_cache.activation import _is_ours, loaded_objects

        state = nvrtc_cache.activate()
        if not state.reached.get("NVRTC", "").startswith(real):
            fail(f"NVRTC 12.x not reached:\n{state}")
        if "libnvrtc.so.12" not in [os.path.basename(path) for path in loaded_objects() if _is_ours(path)]:
            fail("the stand-in libnvrtc.so.12 was not loaded")
        if nvjitlink12:  # a 12.x nvJitLink named too: its stand-in
            ours = [os.path.basename(path) for path in loaded_objects() if _is_ours(path)]
            if "libnvJitLink.so.12" not in ours or "libnvJitLink.so.13" in ours:
                fail(f"for nvJitLink 12.x, the stand-ins loaded are {ours}")
            nvjitlink = ctypes.CDLL("libnvJitLink.so.12")
            major, minor = ctypes.c_uint(), ctypes.c_uint()
            if nvjitlink.nvJitLinkVersion(ctypes.byref(major), ctypes.byref(minor)) != 0 or major.value != 12:
                fail(f"libnvJitLink.so.12 by soname answers version {major.value}")
            if hasattr(nvjitlink, "nvJitLinkGetLinkedLTOIR"):  # 13.1's, which 12.x lacks
                fail("libnvJitLink.so.12 by soname has a function nvJitLink 12 lacks")
        by_soname = ctypes.CDLL("libnvrtc.so.12")
        if not hasattr(by_soname, "nvrtcCompileProgram") or hasattr(by_soname, "nvrtcGetTileIR"):
            fail("libnvrtc.so.12 by soname does not answer as NVRTC 12 does")
        from cuda.pathfinder import load_nvidia_dynamic_lib

        through_pathfinder = ctypes.CDLL(load_nvidia_dynamic_lib("nvrtc").abs_path)
    else:
        by_soname = through_pathfinder = ctypes.CDLL(real)
    for library in (by_soname, through_pathfinder):
        major, minor = ctypes.c_int(), ctypes.c_int()
        library.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
        print(f"NVRTC {major.value}")
        ctypes_client.run(library)


def run_started():
    loaded = proxies_loaded_at_start()
    if loaded != ["libnvJitLink.so.13", "libnvrtc.so.13", "libnvvm.so.4"]:
        fail(f"the proxies loaded at start: {loaded}")
    jit_stacks.run_core()


def run_unstarted():
    if loaded := proxies_loaded_at_start():
        fail(f"NVRTC_CACHE_ACTIVATE=0, yet {loaded} were loaded at start")
    jit_stacks.run_core()


if __name__ == "__main__":
    {"plain": stacks, "core": jit_stacks.run_core, "activated": run_activated, "late": run_late, "where": run_where,
     "pathfinder": run_pathfinder, "ipython": run_ipython,
     "nvrtc12": run_nvrtc12, "nvrtc12-plain": lambda: run_nvrtc12(False), "started": run_started, "unstarted": run_unstarted}[sys.argv[1]]()
