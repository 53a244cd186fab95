"""nvrtc-cache run --proxy's start-up hook for Python programs (installed as
share/nvrtc-cache/python/sitecustomize.py; the command puts that directory first on PYTHONPATH).

cuda.pathfinder (cuda.core, cuda.bindings, CuPy 14, numba-cuda) loads NVRTC, nvJitLink and libNVVM by
absolute path from the wheels in site-packages, so the proxies on LD_LIBRARY_PATH are never asked. At
the interpreter's start, before any user code, this calls nvrtc_cache.activate() (activation.py),
which loads the same proxies (<prefix>/lib/nvrtc-cache/proxy/, or the directory of $NVRTC_CACHE_SHIM,
as the command finds them) by path with RTLD_GLOBAL; pathfinder's dlopen(soname, RTLD_NOLOAD) then
finds them. The activation is the interpreter's own nvrtc_cache package where it imports, else the
copy installed beside this file (nvrtc_cache_activation.py: the Debian package and a build tree have no
Python package). NVRTC_CACHE_ACTIVATE=0 turns it off.

Contract: never raises and prints nothing (any failure: nothing is activated; `run --proxy` says at
the end when nothing reached the cache); then removes its own directory from sys.path and itself from
sys.modules and imports the next sitecustomize on sys.path, so a user's own still runs.
"""


def _activate():
    import os
    import sys
    import warnings
    from pathlib import Path

    if os.environ.get("NVRTC_CACHE_ACTIVATE") == "0":
        return
    here = Path(__file__).resolve().parent
    shim = os.environ.get("NVRTC_CACHE_SHIM")
    proxy = Path(shim).parent if shim else here.parent.parent.parent / "lib" / "nvrtc-cache" / "proxy"
    try:
        from nvrtc_cache import activation
    except Exception:
        import importlib.util

        spec = importlib.util.spec_from_file_location("nvrtc_cache_activation", here / "nvrtc_cache_activation.py")
        activation = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = activation
        spec.loader.exec_module(activation)
    activation._proxy_dir = lambda: proxy  # the proxies this run put on LD_LIBRARY_PATH
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        activation.activate()


def _chain():
    import importlib
    import os
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [entry for entry in sys.path if os.path.abspath(entry or os.curdir) != here]
    me = sys.modules.pop(__name__)
    try:
        importlib.import_module("sitecustomize")  # the next one on sys.path, if any
    except ImportError as error:
        if error.name != "sitecustomize":
            raise  # the next one's own failure, which site reports as it would without this one
        sys.modules[__name__] = me  # none further: the import that ran this one ends with it


try:
    _activate()
except BaseException:  # noqa: BLE001 - a start-up hook must not stop the program
    pass
_chain()
