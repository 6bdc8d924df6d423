"""Numba plumbing shared by the kernels and fused kernels: the cache folder, jit with caching, the
compile lock, launching, and operand checks. Importing it imports numba."""
from __future__ import annotations

import contextlib
import os

import numpy as np

from tapecli.cache import cache_dir, numba_version


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
    our folder even where numba was imported (and configured) before this module."""
    def wrap(f):
        saved = _numba_config.CACHE_DIR
        _numba_config.CACHE_DIR = _CACHE_DIR
        try:
            return njit(cache=_CACHING, error_model="numpy", **options)(f)
        finally:
            _numba_config.CACHE_DIR = saved
    return wrap(fn) if fn is not None else wrap


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
    if not _CACHING:
        yield
        return
    try:
        os.makedirs(_CACHE_DIR, exist_ok=True)
        fd = os.open(os.path.join(_CACHE_DIR, "tapecli-compile.lock"), os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        yield
        return
    try:
        _lock(fd)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def _lock(fd: int) -> None:
    """Wait for an exclusive lock on ``fd``; where the file system has no locks, go on
    without one (numba's own behaviour)."""
    try:
        import fcntl
    except ImportError:  # Windows
        import msvcrt
        for _ in range(60):
            try:
                msvcrt.locking(fd, msvcrt.LK_LOCK, 1)  # retries for ~10 s, then raises
                return
            except OSError:
                continue
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
    except OSError:
        pass


def _signature(a):
    return (a.dtype.char, a.ndim) if isinstance(a, np.ndarray) else type(a)


def _launch(kernel, *args) -> None:
    key = (kernel, tuple(_signature(a) for a in args))
    if key in _READY:
        kernel(*args)
        return
    with _cache_lock():
        kernel(*args)
    _READY.add(key)


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
    return np.require(a, requirements="CAW")


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
