"""The wheel's build backend (pyproject.toml's build-backend): scikit-build-core's, whose wheel is then
audited by auditwheel and tagged with the manylinux policy its binaries meet.

scikit-build-core tags a Linux wheel `linux_<arch>`: it cannot know which glibc and libstdc++ its
binaries need. auditwheel reads every ELF file in the wheel (DT_NEEDED, versioned symbols, ISA
extensions) and names the most compatible manylinux policy they satisfy; `repair --patcher none`
writes the wheel again with that tag and fails rather than change a binary (no library is grafted in,
no RPATH set: the shim is loaded into other programs and must need only the C and C++ runtimes). So
`pip install .` and `pip wheel .` make a `manylinux_2_<N>_<arch>` wheel by themselves.

Where auditwheel is unavailable (a Python older than it supports) or finds no manylinux policy met,
the wheel keeps its `linux_<arch>` tag, with the reason on stderr: still installable here, where it
was built. Every other hook is scikit-build-core's.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from scikit_build_core.build import *  # noqa: F401,F403 (the other PEP 517 hooks, unchanged)
from scikit_build_core.build import build_wheel as _build_linux_wheel
from scikit_build_core.build import get_requires_for_build_wheel as _skbuild_requires

# What the audit needs, added to scikit-build-core's own build requirements (auditwheel 6.8 has
# `--patcher none`; it supports Python 3.10 and newer).
_AUDIT_REQUIRES = ["auditwheel>=6.8; python_version >= '3.10' and sys_platform == 'linux'"]


def get_requires_for_build_wheel(config_settings=None):
    return [*_skbuild_requires(config_settings), *_AUDIT_REQUIRES]


def _note(message: str) -> None:
    print(f"nvrtc-cache wheel: {message}", file=sys.stderr, flush=True)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    if not sys.platform.startswith("linux"):
        return _build_linux_wheel(wheel_directory, config_settings, metadata_directory)
    with tempfile.TemporaryDirectory(prefix="nvrtc-cache-wheel-") as staging:
        name = _build_linux_wheel(staging, config_settings, metadata_directory)
        built = Path(staging) / name
        audited = Path(staging) / "audited"
        try:
            import auditwheel  # noqa: F401
        except ImportError:
            _note(f"auditwheel is not available for Python {sys.version_info[0]}.{sys.version_info[1]}; "
                  f"{name} keeps its linux tag")
            return _keep(built, wheel_directory)
        result = subprocess.run(
            [sys.executable, "-m", "auditwheel", "repair", "--patcher", "none", "--wheel-dir", str(audited),
             str(built)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False)
        wheels = list(audited.glob("*.whl")) if audited.is_dir() else []
        if result.returncode != 0 or len(wheels) != 1:
            _note(f"auditwheel found no manylinux policy this build meets; {name} keeps its linux tag:\n"
                  f"{result.stdout.strip()}")
            return _keep(built, wheel_directory)
        _note(f"auditwheel: {wheels[0].name}")
        return _keep(wheels[0], wheel_directory)


def _keep(wheel: Path, wheel_directory) -> str:
    shutil.move(str(wheel), str(Path(wheel_directory) / wheel.name))
    return wheel.name
