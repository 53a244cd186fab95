"""Where the wheel put the command, the shim and the proxy, and `python -m nvrtc_cache`'s launcher.

The wheel carries them in its data scheme, so pip installs them under the install prefix (the venv,
~/.local for --user, /usr/local, a conda env), in the layout of `cmake --install` and the Debian
package: <prefix>/bin/nvrtc-cache (the native command itself, on PATH: no Python starts for a call),
<prefix>/lib/libnvrtc-cache.so, <prefix>/lib/nvrtc-cache/proxy/, <prefix>/share/man/man1/nvrtc-cache.1,
<prefix>/share/bash-completion/completions/nvrtc-cache. The command finds the shim relative to itself.

This module finds that prefix: beside the package's own site-packages for the usual schemes (the
package is <prefix>/lib/pythonX.Y/site-packages/nvrtc_cache), else from the files the distribution's
RECORD lists (an editable install). pip install --target is not supported: pip drops a wheel's lib/
data there. Only the standard library; no state but a memo.
"""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent
_COMMAND = Path("bin") / "nvrtc-cache"


@functools.lru_cache(maxsize=None)
def prefix() -> Path:
    """The install prefix holding bin/nvrtc-cache and lib/ for this package (where pip put the wheel's
    data); FileNotFoundError when this package was not installed from the wheel (e.g. a source
    checkout on PYTHONPATH)."""
    usual = _PACKAGE.parents[3] if len(_PACKAGE.parents) > 3 else None
    if usual is not None and (usual / _COMMAND).is_file() and _PACKAGE.parent.parent.name.startswith("python"):
        return usual
    recorded = _recorded_prefix()
    if recorded is not None:
        return recorded
    raise FileNotFoundError(
        f"nvrtc-cache: {_PACKAGE} has no installed command beside it (install the package with pip; a source "
        "checkout has its command in the CMake build tree)")


def _recorded_prefix() -> Path | None:
    """The prefix of the files the distribution that installed this very package lists."""
    try:
        from importlib import metadata

        files = metadata.distribution("nvrtc-cache").files or []
    except Exception:  # no metadata: not installed by a package installer
        return None
    mine = command = None
    for entry in files:
        name = entry.as_posix()
        if name.endswith("nvrtc_cache/_install.py"):
            mine = Path(entry.locate()).resolve()
        elif name.endswith("bin/nvrtc-cache"):
            command = Path(entry.locate()).resolve()
    # Another installation's record (this package imported from elsewhere) does not count; an editable
    # install's lists no _install.py.
    if (mine is not None and mine != Path(__file__).resolve()) or command is None or not command.is_file():
        return None
    return command.parent.parent


def cli_path() -> str:
    """The nvrtc-cache executable the wheel installed (<prefix>/bin/nvrtc-cache)."""
    return str(prefix() / _COMMAND)


def shim_path() -> str:
    """The preloadable shim, <prefix>/lib/libnvrtc-cache.so."""
    return str(prefix() / "lib" / "libnvrtc-cache.so")


def proxy_dir() -> str:
    """The directory holding the proxy libnvrtc.so.13 and its stand-ins libnvrtc.so.12, libnvJitLink.so.13
    and libnvvm.so.4."""
    return str(prefix() / "lib" / "nvrtc-cache" / "proxy")


def api_library_path() -> str:
    """The C API library the wheel installed, <prefix>/lib/libnvrtc-cache-api.so.1."""
    return str(prefix() / "lib" / "libnvrtc-cache-api.so.1")


def main() -> None:
    """`python -m nvrtc_cache ARGS...`: replaces this process with the command (the same as `nvrtc-cache
    ARGS...`, one interpreter start more)."""
    try:
        cli = cli_path()
        os.execv(cli, ["nvrtc-cache", *sys.argv[1:]])
    except OSError as error:
        sys.exit(f"nvrtc-cache: cannot run the command: {error.strerror or error}")
