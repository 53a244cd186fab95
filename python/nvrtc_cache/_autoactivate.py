"""Imported at interpreter start by the nvrtc_cache-activate.pth that `python -m nvrtc_cache.environment
enable` writes (and by nothing else; the .pth skips it under NVRTC_CACHE_ACTIVATE=0): activate().
Never stops the interpreter from starting: anything that goes wrong is one line on stderr."""

try:
    from .activation import activate

    activate()
except Exception as error:  # noqa: BLE001 - a .pth must never break the interpreter
    import sys

    print(f"nvrtc-cache: not activated at start: {error}", file=sys.stderr)
