"""Where tapecli keeps its caches: compiled kernels and the command line's compiled modules.

``$TAPECLI_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/tapecli`` (``~/.cache/tapecli``),
then a folder per tapecli version (and per numba version for kernels), so an upgrade
never reads a stale entry.
"""
from __future__ import annotations

import os

from tapecli.version import __version__

TYPE_CHECKING = False       # (typing.TYPE_CHECKING without importing typing before the code cache is in place)
if TYPE_CHECKING:
    from pathlib import Path


def versioned_root() -> str:
    """This version's folder of caches (not created here). Without pathlib: the command line's code cache
    (cli/code_cache.py) reads it before pathlib is imported, so that pathlib loads from that cache too."""
    base = os.environ.get("TAPECLI_CACHE_DIR")
    if not base:
        home = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        base = os.path.join(home, "tapecli")
    return os.path.join(base, f"tapecli-{__version__}")


def cache_dir(*parts: str) -> Path | None:
    """A versioned cache folder, created on demand; None where it cannot be written."""
    from pathlib import Path
    path = Path(versioned_root(), *parts)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return path


def numba_version() -> str:
    """The installed numba's version (kernel caches are kept per version); importlib.metadata is
    imported here, only by code that is about to compile."""
    import importlib.metadata
    try:
        return importlib.metadata.version("numba")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"
