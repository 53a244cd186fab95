"""nvrtc_cache.ProgramCache: a cuda.core program cache (``cuda.core.utils.ProgramCacheResource``)
kept in nvrtc-cache's store, through its C API (``include/nvrtc_cache.h``, ``libnvrtc-cache-api.so.1``
in the install prefix's ``lib/``, loaded with ctypes: nothing is compiled against this Python).

    from cuda.core import Program, ProgramOptions
    import nvrtc_cache

    with nvrtc_cache.ProgramCache() as cache:
        obj = Program(source, "c++", options=ProgramOptions(arch="sm_90")).compile("cubin", cache=cache)

Entries live in the same crash-safe, multi-process LMDB store as the shim's (the cache directory of
the configuration: NVRTC_CACHE_DIR, nvrtc-cache.conf), in a namespace of their own, with the same
shared tiers behind it (``remote``: Redis, ``file://`` directories) and the same statistics, export and
import. Keys are ``bytes`` or ``str`` (UTF-8 encoded, so ``"k"`` and ``b"k"`` are one entry), of any
length, matched exactly; values are bytes in, bytes out.

Without cuda.core the class is a plain mapping-like object with the same methods.
"""

from __future__ import annotations

import collections.abc
import ctypes
import operator
import os
import re
import threading
from pathlib import Path

try:  # cuda.core >= 1.0 (cuda-core on PyPI)
    from cuda.core.utils import ProgramCacheResource as _Base

    try:
        from cuda.core import ObjectCode as _ObjectCode
    except ImportError:  # pragma: no cover
        _ObjectCode = None
except ImportError:  # no cuda.core: the same methods on a plain base
    _ObjectCode = None

    class _Base:  # type: ignore[no-redef]
        """The methods cuda.core's ProgramCacheResource provides, for a Python without cuda.core."""

        def get(self, key, default=None):
            try:
                return self[key]
            except KeyError:
                return default

        def update(self, items, /):
            if isinstance(items, collections.abc.Mapping):
                items = items.items()
            for key, value in items:
                self[key] = value

        def close(self):
            pass

        def __enter__(self):
            return self

        def __exit__(self, exc_type, exc_value, traceback):
            self.close()


__all__ = ["ProgramCache", "CacheError", "InvalidArgumentError", "api_library_path"]

# nvrtc_cache_status (include/nvrtc_cache.h)
_OK, _NOT_FOUND, _INVALID_ARGUMENT = 0, 1, 2
_OPEN_DEFAULTS = 0x1


class CacheError(OSError):
    """A failure the C API reported (``status``: its nvrtc_cache_status name)."""

    def __init__(self, status: str, message: str):
        super().__init__(f"{status}: {message}" if message else status)
        self.status = status


class InvalidArgumentError(CacheError, ValueError):
    """NVRTC_CACHE_INVALID_ARGUMENT: an argument the C API refused, above all a setting it does not
    take (an unknown or shim-only key, a bad value, a malformed shared tier URL or secret file). Both a
    CacheError and a ValueError; its message names the setting and its line (``settings:N``)."""


class _Options(ctypes.Structure):
    _fields_ = [
        ("size", ctypes.c_size_t),
        ("flags", ctypes.c_uint),
        ("directory", ctypes.c_char_p),
        ("settings", ctypes.c_char_p),
        ("max_size_bytes", ctypes.c_uint64),
    ]


_STAT_FIELDS = ("hits", "misses", "puts", "put_failures", "erases", "evictions", "rejected", "shared_tiers",
                "store_entries", "store_bytes")


class _Stats(ctypes.Structure):
    _fields_ = [("size", ctypes.c_size_t)] + [(name, ctypes.c_uint64) for name in _STAT_FIELDS]


def api_library_path() -> str:
    """The C API library this package loads: $NVRTC_CACHE_API_LIBRARY if set (a build tree's), else
    the one the wheel installed (<prefix>/lib/libnvrtc-cache-api.so.1)."""
    override = os.environ.get("NVRTC_CACHE_API_LIBRARY")
    if override:
        return override
    from ._install import api_library_path as installed

    return installed()


_library = None
_library_lock = threading.Lock()


def _api():
    global _library
    with _library_lock:
        if _library is None:
            lib = ctypes.CDLL(api_library_path())
            handle = ctypes.c_void_p
            size = ctypes.c_size_t
            lib.nvrtc_cache_version.restype = ctypes.c_uint
            lib.nvrtc_cache_version.argtypes = []
            lib.nvrtc_cache_status_name.restype = ctypes.c_char_p
            lib.nvrtc_cache_status_name.argtypes = [ctypes.c_int]
            lib.nvrtc_cache_error_message.restype = ctypes.c_char_p
            lib.nvrtc_cache_error_message.argtypes = []
            lib.nvrtc_cache_open.restype = ctypes.c_int
            lib.nvrtc_cache_open.argtypes = [ctypes.POINTER(_Options), ctypes.POINTER(handle)]
            lib.nvrtc_cache_directory.restype = ctypes.c_char_p
            lib.nvrtc_cache_directory.argtypes = [handle]
            lib.nvrtc_cache_get.restype = ctypes.c_int
            lib.nvrtc_cache_get.argtypes = [handle, ctypes.c_char_p, size, ctypes.POINTER(ctypes.c_void_p),
                                            ctypes.POINTER(size)]
            lib.nvrtc_cache_free.restype = None
            lib.nvrtc_cache_free.argtypes = [ctypes.c_void_p]
            lib.nvrtc_cache_put.restype = ctypes.c_int
            lib.nvrtc_cache_put.argtypes = [handle, ctypes.c_char_p, size, ctypes.c_char_p, size]
            lib.nvrtc_cache_erase.restype = ctypes.c_int
            lib.nvrtc_cache_erase.argtypes = [handle, ctypes.c_char_p, size]
            lib.nvrtc_cache_clear.restype = ctypes.c_int
            lib.nvrtc_cache_clear.argtypes = [handle]
            for name in ("nvrtc_cache_count", "nvrtc_cache_size"):
                getattr(lib, name).restype = ctypes.c_int
                getattr(lib, name).argtypes = [handle, ctypes.POINTER(ctypes.c_uint64)]
            lib.nvrtc_cache_stats_get.restype = ctypes.c_int
            lib.nvrtc_cache_stats_get.argtypes = [handle, ctypes.POINTER(_Stats)]
            lib.nvrtc_cache_flush.restype = ctypes.c_int
            lib.nvrtc_cache_flush.argtypes = [handle, ctypes.c_uint]
            lib.nvrtc_cache_close.restype = None
            lib.nvrtc_cache_close.argtypes = [handle]
            major = lib.nvrtc_cache_version() >> 16
            if major != 1:
                raise ImportError(f"{api_library_path()} is version {major} of the C API; this package needs 1")
            _library = lib
        return _library


def _error(lib, status: int) -> CacheError:
    kind = InvalidArgumentError if status == _INVALID_ARGUMENT else CacheError
    return kind(lib.nvrtc_cache_status_name(status).decode(),
                lib.nvrtc_cache_error_message().decode("utf-8", "replace"))


def _as_key_bytes(key: object) -> bytes:
    if isinstance(key, (bytes, bytearray)):
        return bytes(key)
    if isinstance(key, str):
        return key.encode("utf-8")
    raise TypeError(f"cache keys must be bytes or str, got {type(key).__name__}")


def _extract_bytes(value: object) -> bytes:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if _ObjectCode is not None and isinstance(value, _ObjectCode):
        code = value.code
        if isinstance(code, str):  # a path-backed ObjectCode: its file's bytes, read now
            try:
                return Path(code).read_bytes()
            except FileNotFoundError:
                raise FileNotFoundError(
                    f"cannot store path-backed ObjectCode in cache: {code} no longer exists") from None
        return bytes(code)
    raise TypeError(f"cache values must be bytes-like or ObjectCode, got {type(value).__name__}")


_SETTING_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _setting_value(key: str, value) -> str:
    """One value of a settings mapping as its nvrtc-cache.conf line holds it."""
    if isinstance(value, bool):  # before int: True is an int
        return "1" if value else "0"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, os.PathLike):
        value = os.fsdecode(os.fspath(value))
    if not isinstance(value, str):
        raise TypeError(f"setting {key!r}: values must be str, int, float, bool or path-like, "
                        f"got {type(value).__name__}")
    if any(c in value for c in "\n\r\0"):
        raise ValueError(f"setting {key!r}: a value is one line, without NUL")
    if not value.strip():
        raise ValueError(f"setting {key!r} has no value")
    return value


def _settings_text(settings) -> str | None:
    if settings is None:
        return None
    if isinstance(settings, str):
        if "\0" in settings:
            raise ValueError("settings: embedded null byte")
        return settings
    if isinstance(settings, collections.abc.Mapping):
        lines = []
        for key, value in settings.items():
            if not isinstance(key, str):
                raise TypeError(f"setting keys must be str, got {type(key).__name__}")
            if not _SETTING_KEY.fullmatch(key):
                raise ValueError(f"{key!r} is not a setting's name (nvrtc-cache.conf keys: remote, max_size, ...)")
            lines.append(f"{key} = {_setting_value(key, value)}\n")
        return "".join(lines)
    raise TypeError("settings must be a mapping of nvrtc-cache.conf keys to values, or their lines as a str")


class ProgramCache(_Base):
    """A program cache in nvrtc-cache's store (see the module's documentation).

    Parameters
    ----------
    path:
        The cache directory (its store is ``<path>/store``). ``None``: the directory of the
        configuration, the one the shim uses (NVRTC_CACHE_DIR, nvrtc-cache.conf, else
        ``~/.cache/nvrtc-cache``).
    max_size_bytes:
        Optional cap on the bytes this cache's entries occupy (keys and values). After a write
        leaves them above it, the least recently used entries are removed until they fit (a value
        larger than the cap does not survive its own write), as cuda.core's backends do. ``None``:
        no cap of its own (the store's ``max_size`` still bounds the whole store, LRU).
    settings:
        nvrtc-cache.conf settings over the configuration, as a mapping (``{"remote":
        "redis://cache:6379"}``; values ``str``, ``int``, ``float``, ``bool`` or path-like) or as lines:
        ``remote``, ``remote_secret_file``, ``shared``, ``max_size``, ``cache_dir``. Any other key,
        a bad value, a malformed tier URL or an unusable secret file raises
        ``InvalidArgumentError`` (a ``ValueError``) here, naming it; a tier that cannot be reached
        does not (it is skipped until it answers).
    use_configuration:
        ``True`` (the default): start from the configuration the shim would use (environment and
        configuration files), so that the same shared tiers serve both. ``False``: from the
        defaults only.

    Writes fail open: a value the store cannot take (full, read-only, an I/O error) is dropped, as a
    miss would be, and counted (``stats()["put_failures"]``). ``__delitem__`` and ``clear`` act on
    this node's store; shared tiers never delete (a value a tier holds is found again).

    Thread safety: every method may be called from any thread; ``close`` waits for calls in flight.
    Processes: any number may use one directory at once (LMDB); a forked child may go on using a
    cache opened before the fork.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, *, max_size_bytes: int | None = None,
                 settings=None, use_configuration: bool = True) -> None:
        if max_size_bytes is not None:
            if isinstance(max_size_bytes, bool):
                raise TypeError("max_size_bytes must be an int or None")
            max_size_bytes = operator.index(max_size_bytes)  # TypeError for a float or a str
            if max_size_bytes <= 0:
                raise ValueError("max_size_bytes must be positive or None (0 would evict every write)")
            if max_size_bytes >= 1 << 64:
                raise ValueError("max_size_bytes must be below 2**64")
        self._lib = _api()
        self._lock = threading.Condition()
        self._calls = 0
        self._handle = None
        self._max_size_bytes = max_size_bytes
        options = _Options()
        options.size = ctypes.sizeof(_Options)
        options.flags = 0 if use_configuration else _OPEN_DEFAULTS
        directory = os.fsencode(path) if path is not None else None
        if directory is not None and (not directory or b"\0" in directory):
            raise ValueError("path contains a NUL byte" if directory else "path is empty")
        options.directory = directory
        text = _settings_text(settings)
        options.settings = text.encode("utf-8") if text is not None else None
        options.max_size_bytes = max_size_bytes or 0
        handle = ctypes.c_void_p()
        status = self._lib.nvrtc_cache_open(ctypes.byref(options), ctypes.byref(handle))
        if status != _OK:
            raise _error(self._lib, status)
        self._handle = handle

    # -- calls in flight ----------------------------------------------------------------------
    def _enter(self):
        with self._lock:
            if self._handle is None:
                raise ValueError("operation on a closed ProgramCache")
            self._calls += 1
            return self._handle

    def _leave(self):
        with self._lock:
            self._calls -= 1
            if self._calls == 0:
                self._lock.notify_all()

    # -- the mapping --------------------------------------------------------------------------
    def __getitem__(self, key: bytes | str) -> bytes:
        k = _as_key_bytes(key)
        value = ctypes.c_void_p()
        size = ctypes.c_size_t()
        handle = self._enter()
        try:
            status = self._lib.nvrtc_cache_get(handle, k, len(k), ctypes.byref(value), ctypes.byref(size))
        finally:
            self._leave()
        if status != _OK:
            if status == _INVALID_ARGUMENT:
                raise _error(self._lib, status)
            raise KeyError(key)  # absent, evicted, damaged or unreadable: a miss
        try:
            return ctypes.string_at(value, size.value)
        finally:
            self._lib.nvrtc_cache_free(value)

    def __setitem__(self, key: bytes | str, value) -> None:
        data = _extract_bytes(value)
        k = _as_key_bytes(key)
        handle = self._enter()
        try:
            status = self._lib.nvrtc_cache_put(handle, k, len(k), data, len(data))
        finally:
            self._leave()
        if status == _INVALID_ARGUMENT:
            raise _error(self._lib, status)
        # Any other failure is a dropped write (counted in stats()["put_failures"]).

    def __delitem__(self, key: bytes | str) -> None:
        k = _as_key_bytes(key)
        handle = self._enter()
        try:
            status = self._lib.nvrtc_cache_erase(handle, k, len(k))
        finally:
            self._leave()
        if status == _NOT_FOUND:
            raise KeyError(key)
        if status != _OK:
            raise _error(self._lib, status)

    def __len__(self) -> int:
        return self._count("nvrtc_cache_count")

    def size_bytes(self) -> int:
        """The bytes this cache's entries occupy (keys and values), as ``max_size_bytes`` counts them."""
        return self._count("nvrtc_cache_size")

    def _count(self, function: str) -> int:
        out = ctypes.c_uint64()
        handle = self._enter()
        try:
            status = getattr(self._lib, function)(handle, ctypes.byref(out))
        finally:
            self._leave()
        if status != _OK:
            raise _error(self._lib, status)
        return out.value

    def clear(self) -> None:
        handle = self._enter()
        try:
            status = self._lib.nvrtc_cache_clear(handle)
        finally:
            self._leave()
        if status != _OK:
            raise _error(self._lib, status)

    # -- the rest -----------------------------------------------------------------------------
    @property
    def path(self) -> Path:
        """The cache directory in use."""
        handle = self._enter()
        try:
            return Path(os.fsdecode(self._lib.nvrtc_cache_directory(handle)))
        finally:
            self._leave()

    @property
    def max_size_bytes(self) -> int | None:
        return self._max_size_bytes

    def stats(self) -> dict:
        """This cache's counts since it was opened (hits, misses, puts, put_failures, erases,
        evictions, rejected), the shared tiers behind it, and the whole store's entries and bytes."""
        stats = _Stats()
        stats.size = ctypes.sizeof(_Stats)
        handle = self._enter()
        try:
            status = self._lib.nvrtc_cache_stats_get(handle, ctypes.byref(stats))
        finally:
            self._leave()
        if status != _OK:
            raise _error(self._lib, status)
        return {name: getattr(stats, name) for name in _STAT_FIELDS}

    def flush(self, timeout: float = 1.0) -> bool:
        """Waits at most ``timeout`` seconds for the writes queued for the shared tiers."""
        handle = self._enter()
        try:
            return self._lib.nvrtc_cache_flush(handle, int(max(0.0, timeout) * 1000)) == _OK
        finally:
            self._leave()

    def close(self) -> None:
        """Writes what is queued for the shared tiers (at most 1 s) and releases the store; later
        calls raise ValueError. Closing twice is harmless."""
        with self._lock:
            handle, self._handle = self._handle, None
            while self._calls:
                self._lock.wait()
        if handle is not None:
            self._lib.nvrtc_cache_close(handle)

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self) -> str:
        state = "closed" if self._handle is None else str(self.path)
        return f"ProgramCache({state!r}, max_size_bytes={self._max_size_bytes})"
