"""Activation for a whole Python environment, on request only:

    python -m nvrtc_cache.environment enable     # every interpreter of this environment activates
    python -m nvrtc_cache.environment status
    python -m nvrtc_cache.environment disable

`enable` writes nvrtc_cache-activate.pth into the environment's site-packages (the running
interpreter's purelib; --user: the user site-packages). Python runs a .pth file's import line at every
start of that environment's interpreters, before any user code, so each then calls
nvrtc_cache.activate() (python/nvrtc_cache/activation.py) before anything can load NVRTC: Jupyter
kernels, scripts, test runners, worker processes. Nothing is ever written unless asked: the wheel ships
no .pth (a .pth with an import line runs at every start and is how unwanted code persists, so it is
never installed by default), and `disable` removes the file. NVRTC_CACHE_ACTIVATE=0 in the environment
of a process turns it off for that process (and its children).

Cost: an interpreter of the environment starts about 80 ms later (the package is imported, and the
proxies, with the real nvJitLink and libNVVM they forward to, are loaded at start; docs/python.md).
Contract: writes or removes one file; prints what it did; exit status 0, or 1 with a message.
"""

from __future__ import annotations

import argparse
import os
import site
import sys
import sysconfig
from pathlib import Path

PTH_NAME = "nvrtc_cache-activate.pth"
# One line (a .pth runs the lines that start with "import"): nothing more than a look at the environment
# under NVRTC_CACHE_ACTIVATE=0, and nothing at all once nvrtc_cache is uninstalled.
PTH_LINE = ('import os; exec("try: import nvrtc_cache._autoactivate\\nexcept ImportError: pass") '
            'if os.environ.get("NVRTC_CACHE_ACTIVATE") != "0" else None\n')


def pth_path(user: bool = False) -> Path:
    """Where `enable` writes the file: the running interpreter's site-packages (or the user's)."""
    directory = site.getusersitepackages() if user else sysconfig.get_paths()["purelib"]
    return Path(directory) / PTH_NAME


def enable(user: bool = False) -> Path:
    path = pth_path(user)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{PTH_NAME}.{os.getpid()}")
    temporary.write_text(PTH_LINE)
    os.replace(temporary, path)
    return path


def disable(user: bool = False) -> bool:
    try:
        pth_path(user).unlink()
        return True
    except FileNotFoundError:
        return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m nvrtc_cache.environment",
                                     description="Activate nvrtc-cache in every interpreter of this Python "
                                                 "environment (opt-in: writes a .pth file), or stop doing so.")
    parser.add_argument("action", choices=("enable", "disable", "status"))
    parser.add_argument("--user", action="store_true", help="the user site-packages instead of the environment's")
    args = parser.parse_args(argv)
    path = pth_path(args.user)
    try:
        if args.action == "enable":
            print(f"nvrtc-cache: every interpreter of {sys.prefix} now activates the cache ({enable(args.user)}); "
                  "NVRTC_CACHE_ACTIVATE=0 turns it off for one process")
        elif args.action == "disable":
            removed = disable(args.user)
            print(f"nvrtc-cache: {'removed' if removed else 'there was no'} {path}")
        else:
            enabled = path.is_file()
            print(f"nvrtc-cache: environment-wide activation is {'on' if enabled else 'off'} ({path})")
            if enabled and os.environ.get("NVRTC_CACHE_ACTIVATE") == "0":
                print("nvrtc-cache: NVRTC_CACHE_ACTIVATE=0 turns it off for this shell's processes")
    except OSError as error:
        print(f"nvrtc-cache: cannot {args.action} {path}: {error.strerror or error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
