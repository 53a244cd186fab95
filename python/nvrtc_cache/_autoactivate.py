"""Imported at interpreter start by the nvrtc_cache-activate.pth that `python -m nvrtc_cache.environment
enable` writes (and by nothing else): activate() unless NVRTC_CACHE_ACTIVATE=0. Never stops the
interpreter from starting: anything that goes wrong is one line on stderr."""

import os

if os.environ.get("NVRTC_CACHE_ACTIVATE", "1") != "0":
    try:
        from .activation import activate

        activate()
    except Exception as error:  # noqa: BLE001 - a .pth must never break the interpreter
        import sys

        print(f"nvrtc-cache: not activated at start: {error}", file=sys.stderr)
