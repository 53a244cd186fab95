"""nvrtc-cache: a drop-in cache for NVIDIA's runtime compiler (NVRTC).

The wheel installs the `nvrtc-cache` command (the native executable, on PATH), the shim it preloads
and the proxy library under the environment's prefix (bin/, lib/); `python -m nvrtc_cache` runs the
same command:

    $ nvrtc-cache run -- python train.py
    $ nvrtc-cache stats

shim_path() is the library to put in LD_PRELOAD yourself; proxy_dir() the directory whose
libnvrtc.so.13 (and .so.12), libnvJitLink.so.13 and libnvvm.so.4 stand in for NVRTC's, nvJitLink's and libNVVM's
(put it first on LD_LIBRARY_PATH).

activate() puts the cache in front of the running interpreter's NVRTC, nvJitLink and libNVVM (call
it before the first compile; `%load_ext nvrtc_cache` in Jupyter does the same):

    import nvrtc_cache
    nvrtc_cache.activate()

ProgramCache is a cuda.core program cache (cuda.core.utils.ProgramCacheResource) in the same store,
for programs that pass cache= to Program.compile rather than preload the shim:

    with nvrtc_cache.ProgramCache() as cache:
        program.compile("cubin", cache=cache)
"""

from pathlib import Path

# Where pip put the command, the shim and the proxy (the wheel's data, under the install prefix), and
# `python -m nvrtc_cache`'s launcher.
from ._install import cli_path, main, proxy_dir, shim_path

_ROOT = Path(__file__).resolve().parent

__all__ = ["ProgramCache", "CacheError", "InvalidArgumentError", "cli_path", "shim_path", "proxy_dir",
           "api_library_path", "main", "activate", "Activation", "ActivationWarning", "load_ipython_extension",
           "unload_ipython_extension"]


def __getattr__(name):
    # The backend is imported on first use: `python -m nvrtc_cache` never loads ctypes, cuda.core or
    # the C API library.
    if name in ("ProgramCache", "CacheError", "InvalidArgumentError", "api_library_path"):
        from . import program_cache

        return getattr(program_cache, name)
    if name in ("activate", "Activation", "ActivationWarning"):
        from . import activation

        return getattr(activation, name)
    raise AttributeError(f"module 'nvrtc_cache' has no attribute {name!r}")


def load_ipython_extension(ipython) -> None:
    """`%load_ext nvrtc_cache` (IPython, Jupyter): activate() for the kernel, and say what it reached."""
    from .activation import activate

    print(activate())


def unload_ipython_extension(ipython) -> None:
    """`%unload_ext nvrtc_cache`: the proxies stay loaded (the stacks hold their functions)."""
    print("nvrtc-cache: stays active until the kernel restarts (the loaded libraries cannot be unloaded)")
