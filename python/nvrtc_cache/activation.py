"""nvrtc_cache.activate(): the cache for the running interpreter, without LD_PRELOAD or a restart
(a notebook's first cell, a test suite's conftest.py, a library's __init__).

    import nvrtc_cache
    nvrtc_cache.activate()      # before the first compile
    ...                         # cuda.core, CuPy, numba-cuda, PyTorch: served from the cache

How: the package's proxy libraries (lib/nvrtc-cache/proxy/: libnvrtc.so.13, libnvJitLink.so.13,
libnvvm.so.4, or libnvrtc.so.12 and libnvJitLink.so.12 where the library found is 12.x: the same files `nvrtc-cache run
--proxy` uses) are loaded by absolute path with
RTLD_GLOBAL. A loaded library answers to its soname, so every later load by soname finds the proxy
instead of the real library: cuda.pathfinder's first step (dlopen(soname, RTLD_NOLOAD), which
cuda.bindings, cuda.core, CuPy 14 and numba-cuda go through), ctypes.CDLL("libnvrtc.so.13"),
dlopen("libnvrtc.so.13") from C (PyTorch, jitify), an extension module linked against it. Each proxy
forwards to the real library the stack would have loaded itself, found here in cuda.pathfinder's order
(find_real_library) and named to the proxy through NVRTC_CACHE_REAL_NVRTC / _NVJITLINK / _NVVM, which
activate() sets (children inherit them) unless they are set already.

Not reached: a library that is already loaded (activate() then warns, naming it, and changes
nothing: the stacks hold its function pointers), a load of the real file by its absolute path that
skips the soname check, an NVRTC or nvJitLink 12.x beside the 13.x one the stacks pick (the stand-ins
libnvrtc.so.12 and libnvJitLink.so.12 are loaded only where the library found is 12.x), statically
linked NVRTC. libNVVM's soname libnvvm.so.4 is CUDA 12's and 13's alike. `nvrtc-cache run`
(LD_PRELOAD) reaches all but the last.

Contract: thread-safe (one lock); idempotent (a second call returns the first's result); never
raises for what it finds in the process (it warns, ActivationWarning, and returns an Activation that
says so); changes nothing where one of the three was loaded before it. A proxy that cannot be
loaded is warned about and left out (its variable unset again). Linux only.
"""

from __future__ import annotations

import collections
import ctypes
import os
import re
import site
import struct
import sys
import threading
import warnings
from pathlib import Path

__all__ = ["activate", "Activation", "ActivationWarning", "find_real_library", "LIBRARIES"]


class ActivationWarning(RuntimeWarning):
    """activate() could not put the cache in front of a library: it was loaded already, or the
    package's proxy libraries are missing. The message says what is and is not reached."""


# One library the cache stands in for, as cuda.pathfinder 1.9 describes it (descriptor_catalog.py):
#   name          "NVRTC", for messages
#   variable      the proxy's override of the real library, NVRTC_CACHE_REAL_NVRTC
#   proxy         the proxy's file name and soname in lib/nvrtc-cache/proxy/
#   sonames       what cuda.pathfinder looks for, in its order
#   wheel_dirs    where the NVIDIA wheels put it under site-packages
#   toolkit_dirs  where a toolkit root (conda, CUDA_HOME) holds it
#   loaded        a loaded object's file name that is this library (torch's copies too)
# (Plain tuples and classes: dataclasses would add 15 ms to an interpreter's start, which an
# environment-wide activation pays every time.)
Library = collections.namedtuple("Library", "name variable proxy sonames wheel_dirs toolkit_dirs loaded")


LIBRARIES = (
    Library("NVRTC", "NVRTC_CACHE_REAL_NVRTC", "libnvrtc.so.13", ("libnvrtc.so.13", "libnvrtc.so.12"),
            ("nvidia/cu13/lib", "nvidia/cuda_nvrtc/lib"), ("lib64", "lib"),
            re.compile(r"^libnvrtc(?!-builtins)[^/]*\.so")),
    Library("nvJitLink", "NVRTC_CACHE_REAL_NVJITLINK", "libnvJitLink.so.13",
            ("libnvJitLink.so.13", "libnvJitLink.so.12"), ("nvidia/cu13/lib", "nvidia/nvjitlink/lib"),
            ("lib64", "lib"), re.compile(r"^libnvJitLink[^/]*\.so")),
    Library("libNVVM", "NVRTC_CACHE_REAL_NVVM", "libnvvm.so.4", ("libnvvm.so.4", "libnvvm.so"),
            ("nvidia/cu13/lib", "nvidia/cuda_nvcc/nvvm/lib64"), ("nvvm/lib64",), re.compile(r"^libnvvm[^/]*\.so")),
)


# The proxies loaded where the library found is 12.x, by library name: for NVRTC the core (which
# cuda.pathfinder finds first, as libnvrtc.so.13, and which forwards to that 12.x) and the stand-in
# libnvrtc.so.12 (for the clients of that soname: CuPy for CUDA 12, a dlopen); for nvJitLink the stand-in
# libnvJitLink.so.12 in place of libnvJitLink.so.13.
PROXIES_FOR_12 = {"NVRTC": ("libnvrtc.so.13", "libnvrtc.so.12"), "nvJitLink": ("libnvJitLink.so.12",)}


class Activation:
    """What activate() did. `reached`: library name -> the real library its proxy forwards to (or,
    under `nvrtc-cache run`, what the preloaded shim reaches); `not_reached`: library name -> why not.
    `active`: the cache is in front of at least one library in this process. `mode`: "proxy" (this
    call or an earlier one, or `nvrtc-cache run --proxy`), "preload" (the shim, LD_PRELOAD), "none"."""

    def __init__(self, active=False, mode="none", reached=None, not_reached=None):
        self.active = active
        self.mode = mode
        self.reached: dict[str, str] = reached or {}
        self.not_reached: dict[str, str] = not_reached or {}

    def __repr__(self) -> str:
        return (f"Activation(active={self.active!r}, mode={self.mode!r}, reached={self.reached!r}, "
                f"not_reached={self.not_reached!r})")

    def __str__(self) -> str:
        if self.mode == "preload":
            head = "nvrtc-cache: active (the shim was preloaded: nvrtc-cache run / LD_PRELOAD)"
        elif self.active:
            head = "nvrtc-cache: active in this interpreter"
        else:
            head = "nvrtc-cache: not active in this interpreter"
        lines = [head]
        lines += [f"  {name}: cached, real library {real}" for name, real in self.reached.items()]
        lines += [f"  {name}: not reached: {why}" for name, why in self.not_reached.items()]
        return "\n".join(lines)

    def _repr_pretty_(self, printer, cycle):  # IPython's display
        printer.text(str(self))


# ---------------------------------------------------------------------------------------------
# What is loaded in this process


class _PhdrInfo(ctypes.Structure):  # the leading members of struct dl_phdr_info (link.h)
    _fields_ = [("dlpi_addr", ctypes.c_void_p), ("dlpi_name", ctypes.c_char_p)]


_PHDR_CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(_PhdrInfo), ctypes.c_size_t, ctypes.c_void_p)


def loaded_objects() -> list[str]:
    """The file names of the objects loaded in this process, in load order (dl_iterate_phdr)."""
    names: list[str] = []

    def visit(info, _size, _data):
        name = info.contents.dlpi_name
        if name:
            names.append(os.fsdecode(name))
        return 0

    libc = ctypes.CDLL(None)
    libc.dl_iterate_phdr.argtypes = [_PHDR_CALLBACK, ctypes.c_void_p]
    libc.dl_iterate_phdr.restype = ctypes.c_int
    libc.dl_iterate_phdr(_PHDR_CALLBACK(visit), None)
    return names


def _is_ours(path: str) -> bool:
    return Path(path).parent.match("nvrtc-cache/proxy")


def _is_preloaded_shim(path: str) -> bool:
    return os.path.basename(path) == "libnvrtc-cache.so"


# ---------------------------------------------------------------------------------------------
# Where the real libraries are: cuda.pathfinder 1.9's order (load_nvidia_dynamic_lib): the NVIDIA
# wheels in site-packages, $CONDA_PREFIX, the system loader's search (LD_LIBRARY_PATH, ld.so.cache,
# the default directories), $CUDA_PATH / $CUDA_HOME; then, for libNVVM, the toolkit root of a
# system-found NVRTC (pathfinder's canary) and /usr/local/cuda.


def _site_packages() -> list[str]:
    """site.getsitepackages() as cuda.pathfinder will see it, the user site inserted as it inserts it."""
    prefixes, user_site = list(site.PREFIXES), site.ENABLE_USER_SITE
    if sys.prefix not in prefixes:
        # Called from a .pth of a venv (python -m nvrtc_cache.environment): site.venv() sets PREFIXES and
        # ENABLE_USER_SITE only after it has run the venv's .pth files; what they will be, from pyvenv.cfg.
        system_site = False
        try:
            for line in (Path(sys.prefix) / "pyvenv.cfg").read_text().splitlines():
                key, _, value = line.partition("=")
                if key.strip().lower() == "include-system-site-packages":
                    system_site = value.strip().lower() == "true"
        except OSError:
            pass
        prefixes = [sys.prefix] + (prefixes if system_site else [])
        user_site = user_site and system_site
    parents = list(site.getsitepackages(prefixes))
    if user_site:
        user = site.getusersitepackages()
        if user:
            parents.insert(1 if sys.prefix != sys.base_prefix else 0, user)
    return parents


def _in_dir(directory: str, library: Library) -> str | None:
    for soname in library.sonames:
        path = os.path.join(directory, soname)
        # A proxy directory on LD_LIBRARY_PATH (`run --proxy`) holds stand-ins, never the real one.
        if os.path.isfile(path) and not _is_ours(os.path.realpath(path)):
            return path
    return None


def _ld_cache_paths(soname: str) -> list[str]:
    """The paths /etc/ld.so.cache gives `soname` for this machine's word size, in its order."""
    try:
        data = Path("/etc/ld.so.cache").read_bytes()
    except OSError:
        return []
    magic = b"glibc-ld.so.cache1.1"
    start = data.find(magic)
    if start < 0:
        return []
    count = struct.unpack_from("<I", data, start + 20)[0]
    wanted = {"x86_64": 0x0300, "aarch64": 0x0A00}.get(os.uname().machine)
    out = []
    for n in range(count):
        flags, key, value = struct.unpack_from("<iII", data, start + 48 + 24 * n)
        if wanted is not None and (flags & 0xFF00) != wanted:
            continue

        def text(offset):
            return data[start + offset:data.index(b"\0", start + offset)].decode(errors="surrogateescape")

        if text(key) == soname:
            out.append(text(value))
    return out


def _system_search(library: Library) -> str | None:
    for directory in filter(None, os.environ.get("LD_LIBRARY_PATH", "").split(":")):
        if found := _in_dir(directory, library):
            return found
    for soname in library.sonames:
        for path in _ld_cache_paths(soname):
            if os.path.isfile(path):
                return path
    for directory in ("/lib64", "/usr/lib64", "/lib", "/usr/lib"):
        if found := _in_dir(directory, library):
            return found
    return None


def _under_root(root: str, library: Library) -> str | None:
    for rel in library.toolkit_dirs:
        if found := _in_dir(os.path.join(root, rel), library):
            return found
    return None


def find_real_library(library: Library) -> tuple[str, str] | None:
    """(path, how it was found) of the real library the program's stack would load, or None.
    The proxy's override variable, when set, wins (`how`: its name)."""
    configured = os.environ.get(library.variable)
    if configured:
        return configured, library.variable
    for rel in library.wheel_dirs:
        for parent in _site_packages():
            if found := _in_dir(os.path.join(parent, *rel.split("/")), library):
                return found, "site-packages"
    if conda := os.environ.get("CONDA_PREFIX"):
        if found := _under_root(conda, library):
            return found, "conda"
    if found := _system_search(library):
        return found, "system search"
    for variable in ("CUDA_PATH", "CUDA_HOME"):
        if (root := os.environ.get(variable)) and (found := _under_root(root, library)):
            return found, variable
    if library.name == "libNVVM":
        nvrtc = _system_search(LIBRARIES[0])
        lib_dir = os.path.dirname(nvrtc) if nvrtc else ""
        if os.path.basename(lib_dir) in ("lib64", "lib"):
            root = os.path.dirname(lib_dir)
            if os.path.basename(os.path.dirname(root)) == "targets":
                root = os.path.dirname(os.path.dirname(root))
            if found := _under_root(root, library):
                return found, "toolkit root"
    if found := _under_root("/usr/local/cuda", library):
        return found, "/usr/local/cuda"
    return None


def _major(path: str) -> str:
    """The major version in a library's file name (libnvJitLink.so.12.9.86 -> "12"), or ""."""
    suffix = os.path.basename(os.path.realpath(path)).partition(".so.")[2]
    return suffix.split(".")[0] if suffix[:1].isdigit() else ""


def _nvrtc_builtins(path: str, found_via: str) -> str | None:
    """The libnvrtc-builtins cuda.pathfinder 1.9 preloads beside the NVRTC it loads by path (toolkit
    installs; the 13.0 wheel), which the proxy's real NVRTC then finds loaded; None where it preloads
    none."""
    if found_via == "conda":
        return None
    real = os.path.realpath(path)
    version = os.path.basename(real).removeprefix("libnvrtc.so.").split(".")
    if found_via == "site-packages":
        if version[0] != "13":
            return None
        major, minor = "13", "0"
    elif len(version) >= 2 and version[0].isdigit() and version[1].isdigit():
        major, minor = version[0], version[1]
    else:
        return None
    sibling = os.path.join(os.path.dirname(real), f"libnvrtc-builtins.so.{major}.{minor}")
    return sibling if os.path.isfile(sibling) else None


# ---------------------------------------------------------------------------------------------

_lock = threading.Lock()
_done: Activation | None = None
_handles: list[ctypes.CDLL] = []  # never closed: the stacks hold their functions


def _proxy_dir() -> Path:
    from . import proxy_dir

    return Path(proxy_dir())


def _warn(message: str) -> None:
    warnings.warn(message, ActivationWarning, stacklevel=4)  # activate()'s caller


def activate() -> Activation:
    """Puts nvrtc-cache in front of NVRTC, nvJitLink and libNVVM for the rest of this process.

    Call it before the first compile. Where none of the three is loaded yet, loads the package's
    proxies (RTLD_GLOBAL), so every later load by soname, cuda.pathfinder's included, reaches the
    cache. Where one is loaded already, changes nothing and warns (ActivationWarning) naming it.
    Under `nvrtc-cache run` (the shim preloaded) there is nothing to do. Returns what it did."""
    global _done
    with _lock:
        if _done is not None:
            return _done
        result = _activate()
        if result.active:
            _done = result
        return result


def _activate() -> Activation:
    objects = loaded_objects()
    if any(_is_preloaded_shim(path) for path in objects):
        return Activation(True, "preload", {lib.name: "the one the program loads" for lib in LIBRARIES})
    ours = [path for path in objects if _is_ours(path)]
    if ours:  # started under `nvrtc-cache run --proxy`, or a copy of this package activated already
        return Activation(True, "proxy", {lib.name: f"through {path}" for path in ours for lib in LIBRARIES
                                          if os.path.basename(path) == lib.proxy})
    early = {lib.name: path for lib in LIBRARIES for path in objects
             if lib.loaded.match(os.path.basename(path))}
    if early:
        loaded = ", ".join(f"{name} ({path})" for name, path in early.items())
        result = Activation(not_reached={lib.name: "loaded before activate()" if lib.name in early
                                         else "nothing changed, as another library was loaded first"
                                         for lib in LIBRARIES})
        _warn(f"nvrtc_cache.activate(): {loaded} was loaded before it, so this process's compiles are not "
              "cached and nothing was changed (nvJitLink and libNVVM are not reached either). Call "
              "activate() before the first compile (the notebook's first cell, before any cuda.core, CuPy, "
              "numba-cuda or PyTorch compile), or start the program with `nvrtc-cache run`.")
        return result

    try:
        proxy = _proxy_dir()
        missing = [lib.proxy for lib in LIBRARIES if not (proxy / lib.proxy).is_file()]
        if missing:
            raise FileNotFoundError(f"{', '.join(missing)} missing from {proxy}")
    except OSError as error:  # not installed from the wheel, or a damaged install
        _warn(f"nvrtc_cache.activate(): the proxy libraries cannot be found ({error}); nothing was changed")
        return Activation(not_reached={lib.name: "no proxy library" for lib in LIBRARIES})

    plan: list[tuple[Library, str, str]] = []
    result = Activation(mode="proxy")
    for lib in LIBRARIES:
        found = find_real_library(lib)
        if found is None:
            result.not_reached[lib.name] = "not installed (none found where the stacks look)"
        elif _major(found[0]) not in ("", "13", "12") and lib.name != "libNVVM":
            # The proxies stand in for NVRTC and nvJitLink 13 and 12 (as their own search does).
            result.not_reached[lib.name] = (f"{found[0]} is {lib.name} {_major(found[0])}.x, for which the proxy "
                                            "does not stand in (nvrtc-cache run reaches it)")
        else:
            plan.append((lib, *found))
    if not plan:
        result.mode = "none"
        return result

    mode = os.RTLD_NOW | os.RTLD_GLOBAL
    # The core (libnvrtc.so.13) first: the stand-ins find it loaded and hold no runtime of their own.
    for lib, path, found_via in sorted(plan, key=lambda entry: entry[0] is not LIBRARIES[0]):
        added = lib.variable not in os.environ
        if added:
            os.environ[lib.variable] = path
        try:
            if lib is LIBRARIES[0] and (builtins := _nvrtc_builtins(path, found_via)):
                _handles.append(ctypes.CDLL(builtins, mode))
            names = PROXIES_FOR_12.get(lib.name, (lib.proxy,)) if _major(path) == "12" else (lib.proxy,)
            for name in names:
                _handles.append(ctypes.CDLL(str(proxy / name), mode))
        except OSError as error:
            if added:
                del os.environ[lib.variable]
            _warn(f"nvrtc_cache.activate(): cannot load the proxy for {lib.name}: {error}")
            result.not_reached[lib.name] = f"its proxy could not be loaded: {error}"
            continue
        result.reached[lib.name] = f"{path} ({found_via})"
    result.active = bool(result.reached)
    if not result.active:
        result.mode = "none"
    return result
