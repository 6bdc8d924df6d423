"""Numba plumbing shared by the kernels and fused kernels: the cache folder, jit with caching, the
compile lock, launching, and operand checks. Importing it imports numba."""
from __future__ import annotations

import contextlib
import glob
import os
import time
from pathlib import Path

import numpy as np

from tapecli.cache import cache_dir, numba_version
from tapecli.environment import setting
from tapecli.runtime.context import current


# The cache goes under the user's cache folder, one per numba version; never next to the
# installed sources (numba's default). Set before numba is imported: it reads it then.
_CACHE_FOLDER = cache_dir("numba-" + numba_version())
if not os.environ.get("NUMBA_CACHE_DIR") and _CACHE_FOLDER is not None:
    os.environ["NUMBA_CACHE_DIR"] = str(_CACHE_FOLDER)

# Fused kernels run on all the CPUs this process may use (numba's default counts the machine's, an
# affinity mask or a container's CPU set aside), on a threading layer that takes launches from
# several threads at once (runs in threads): OpenMP or TBB. Without either, fused kernels are serial
# (``kernel_threads``); numba's own workqueue layer would abort the process.
# OpenMP's threads sleep as soon as a kernel ends instead of spinning for the next: on a machine whose
# cores are busy with other work, a spinning thread took the CPU that the run itself needed (a fused
# 1e7-element kernel: 32 ms, against 20 ms passive, with the load average at 4 on 2 cores).
if not os.environ.get("NUMBA_NUM_THREADS") and hasattr(os, "sched_getaffinity"):
    os.environ["NUMBA_NUM_THREADS"] = str(max(1, len(os.sched_getaffinity(0))))
os.environ.setdefault("NUMBA_THREADING_LAYER", "threadsafe")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from numba import njit, types  # noqa: E402
from numba.core import config as _numba_config  # noqa: E402
from numba.extending import overload  # noqa: E402

# numba imported earlier (by the host program) read its config before we set the variable.
_CACHE_DIR = _numba_config.CACHE_DIR or (str(_CACHE_FOLDER) if _CACHE_FOLDER is not None else "")
_CACHING = bool(_CACHE_DIR)  # with no writable cache folder, compile in memory only

_forked = False


def _after_fork_in_child() -> None:
    global _forked
    _forked = True


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


_layer_loads: bool | None = None     # whether a thread-safe threading layer loaded (tried once)


def kernel_threads() -> int:
    """The threads a parallel kernel may use: numba's count, but 1 (a serial kernel) where no thread-safe
    threading layer loads (numba without OpenMP or TBB), and in a process forked from one that had numba
    loaded: GNU OpenMP aborts a forked child that starts threads again (a process pool of sweeps or
    checks after a run in the parent)."""
    global _layer_loads
    threads = _numba_config.NUMBA_NUM_THREADS
    if _forked or threads == 1:
        return 1
    if _layer_loads is None:
        from numba.np.ufunc.parallel import _launch_threads
        try:
            _launch_threads()
            _layer_loads = True
        except ValueError:      # "No threading layer could be loaded"
            _layer_loads = False
    return threads if _layer_loads else 1


def _jit(fn=None, **options):
    """``njit(cache=True)`` with IEEE division (inf/nan, not ZeroDivisionError), caching into
    our folder even where numba was imported (and configured) before this module, with a cache
    that heals (``_HealingCache``)."""
    def wrap(f):
        saved = _numba_config.CACHE_DIR
        _numba_config.CACHE_DIR = _CACHE_DIR
        try:
            dispatcher = njit(cache=_CACHING, error_model="numpy", **options)(f)
        finally:
            _numba_config.CACHE_DIR = saved
        if _CACHING:
            dispatcher._cache = _HealingCache(dispatcher._cache)
        return dispatcher
    return wrap(fn) if fn is not None else wrap


class _HealingCache:
    """numba's on-disk cache of one function, where an entry that cannot be read (an empty or truncated
    .nbi index or .nbc data file: a full disk, a killed process, a bad copy) is discarded and the
    function recompiled, instead of every later run failing on it. numba's cache raises whatever
    unpickling the damaged bytes raises, so any failure to load or save counts."""

    def __init__(self, cache):
        self._cache = cache

    def load_overload(self, sig, target_context):
        try:
            return self._cache.load_overload(sig, target_context)
        except Exception:
            self.discard()
            return None             # a cache miss: numba compiles, then saves a fresh entry

    def save_overload(self, sig, data):
        try:
            self._cache.save_overload(sig, data)
        except Exception:           # the compiled code is in memory; a later process compiles again
            self.discard()

    def discard(self) -> None:
        """Remove this function's index and data files (their names start with the index's stem)."""
        index = self._cache._cache_file._index_path
        stem = index[:-len(".nbi")]
        for path in glob.glob(glob.escape(stem) + ".*"):
            if path == index or path.endswith(".nbc"):
                with contextlib.suppress(OSError):
                    os.unlink(path)

    def __getattr__(self, name):
        return getattr(self._cache, name)


# ------------------------------------------------------------- compiling safely

# numba's cache index is read, extended and rewritten without a lock, and each new
# signature takes the first free data-file number. Two processes compiling different
# signatures of one kernel at once can both take number 1, and a later process then loads
# the float64 machine code for a float32 call. So the first call of each kernel signature
# in a process (which loads or compiles, then saves) holds an exclusive lock on a file in
# the cache folder; later calls go straight to the compiled code.
_READY: set = set()


@contextlib.contextmanager
def _cache_lock():
    """Hold the compile lock; yields False where it could not be had within the timeout (another
    tapecli process holds it, perhaps suspended with Ctrl-Z)."""
    if not _CACHING:
        yield True
        return
    try:
        os.makedirs(_CACHE_DIR, exist_ok=True)
        fd = os.open(os.path.join(_CACHE_DIR, "tapecli-compile.lock"), os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        yield True
        return
    try:
        yield _lock(fd, setting("TAPECLI_COMPILE_LOCK_TIMEOUT", LOCK_TIMEOUT_S))
    finally:
        os.close(fd)  # closing the descriptor releases the lock


# A holder that keeps the lock this long without handing it on is taken to be stuck (suspended with Ctrl-Z,
# hung): one kernel signature compiles in seconds, and a queue of processes hands the lock on in turn.
LOCK_TIMEOUT_S = 20.0
_POLL_S = 0.05


def _lock(fd: int, timeout: float) -> bool:
    """Wait for an exclusive lock on ``fd`` while its holders change; False once one holder has kept it
    for ``timeout`` seconds. Each holder writes a token of its own into the file, so waiting behind a
    queue of busy processes never times out. Where the file system has no locks, go on without one
    (numba's own behaviour): True."""
    try:
        import fcntl
    except ImportError:  # Windows
        import msvcrt

        def try_lock():
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        busy: tuple = (OSError,)
    else:
        def try_lock():
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        busy = (BlockingIOError,)
    holder, deadline = None, time.monotonic() + timeout
    while True:
        try:
            try_lock()
        except busy:
            token = _holder_token(fd)
            if token != holder:
                holder, deadline = token, time.monotonic() + timeout
            elif time.monotonic() >= deadline:
                return False
            time.sleep(_POLL_S)
            continue
        except OSError:
            return True
        with contextlib.suppress(OSError, AttributeError):      # no pwrite (Windows): a plain timeout
            os.pwrite(fd, f"{os.getpid()} {time.monotonic_ns()}".ljust(64).encode(), 0)
        return True


def _holder_token(fd: int) -> bytes | None:
    try:
        return os.pread(fd, 64, 0)
    except (OSError, AttributeError):
        return None


@contextlib.contextmanager
def _private(kernel):
    """Compile ``kernel`` in memory only, leaving the shared cache (whose lock another process holds) alone."""
    from numba.core.caching import NullCache
    shared = kernel._cache
    kernel._cache = NullCache()
    try:
        yield
    finally:
        kernel._cache = shared


def _signature(a):
    return (a.dtype.char, a.ndim) if isinstance(a, np.ndarray) else type(a)


def _launch(kernel, *args):
    """``kernel(*args)`` (what it returns), its first call of these argument types under the compile lock."""
    key = (kernel, tuple(_signature(a) for a in args))
    if key in _READY:
        return kernel(*args)
    with _cache_lock() as locked:
        if locked:
            result = kernel(*args)
        else:
            current().settings.warn("another tapecli process holds the kernel compile lock; compiled this "
                                    "kernel without the cache (slower start, same results)")
            with _private(kernel):
                result = kernel(*args)
    _READY.add(key)
    return result


# ------------------------------------------------------------------ operands

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _float_dtype(*arrays):
    """The one float dtype all ``arrays`` share, else None (the NumPy kernel handles it)."""
    dtype = arrays[0].dtype
    if dtype not in _FLOATS or any(a.dtype != dtype for a in arrays[1:]):
        return None
    return dtype


def _contiguous(a: np.ndarray) -> np.ndarray:
    # Aligned, C-ordered and writable: one numba signature per dtype and rank (numba types
    # read-only arrays apart), so a read-only input is copied (rare: broadcast views).
    # (An array that is all three, the usual one, as it is: np.require took as long as a small kernel.)
    flags = a.flags
    return a if flags.c_contiguous and flags.aligned and flags.writeable else np.require(a, requirements="CAW")


def _operands(*arrays):
    """The broadcast shape and, per operand, a flat array of that shape or a scalar.

    An operand of the full shape and C order is used in place; a one-element operand becomes a
    NumPy scalar (the kernels take either, see ``_at``). (None, None) where the shapes do not
    broadcast, or where an operand would have to be copied first (a broadcast row, a transposed
    view): NumPy's loops read those in place, and a 1000 x 1000 copy cost 10 times the product
    (the jacobian's tangents are such views).
    """
    shape = arrays[0].shape
    if any(a.shape != shape for a in arrays[1:]):
        try:
            shape = np.broadcast_shapes(*(a.shape for a in arrays))
        except ValueError:
            return None, None
    flat = []
    for a in arrays:
        if a.shape == shape and a.flags.c_contiguous:
            flat.append(_contiguous(a).reshape(-1))
        elif a.size == 1:
            flat.append(a.reshape(-1)[0])
        else:
            return None, None
    return shape, flat


def _at(a, i):
    """Element ``i`` of a flat operand, or the operand itself where it is a scalar."""
    return a[i] if isinstance(a, np.ndarray) else a


@overload(_at, inline="always")
def _at_overload(a, i):
    if isinstance(a, types.Array):
        return lambda a, i: a[i]
    return lambda a, i: a


# ------------------------------------------------------------ generated modules

_FOLDERS: dict = {}


def _generated_folder(kind: str):
    folder = _FOLDERS.get(kind)
    if folder is None:
        import tempfile
        folder = _FOLDERS[kind] = cache_dir(f"{kind}-numba-" + numba_version()) or \
            Path(tempfile.mkdtemp(prefix=f"tapecli-{kind}-"))
    return folder


def load_source(kind: str, source: str, name: str | None = None, may_write=None):
    """Generated Numba source as a module, from a file of the cache folder for ``kind`` (written first where
    it is missing or differs), so that its ``_jit`` functions cache their machine code as the hand-written
    kernels do. ``name`` defaults to a hash of the source and of the scalar functions it may inline;
    ``may_write()`` (where given) is asked before a file is written: False gives None."""
    if name is None:
        import hashlib
        inlined = (Path(__file__).parent / "fusion_math.py").read_bytes()
        name = f"tapecli_{kind}_" + hashlib.sha1(source.encode() + b"\0" + inlined).hexdigest()[:20]
    path = _generated_folder(kind) / f"{name}.py"
    if not path.exists() or path.read_text() != source:
        if may_write is not None and not may_write():
            return None
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(source)
        os.replace(tmp, path)
    import importlib.util
    import sys
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
