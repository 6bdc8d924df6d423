"""Matrix products on OpenBLAS's threads where they pay: a product too small to gain from them runs on one.

OpenBLAS splits a product over all its threads from about a quarter of a million multiply-adds. Where its
threads sleep between the products of a training step (tapecli/__init__.py: on a machine with no core to
spare), waking them costs more than they save on products of a few million flops: a Keras MLP's loop
(256 x 64 by 64 x 128 and smaller) ran 15% slower on two threads than on one, and 37 times slower with
other processes on both cores, where a CNN's loop (3872 x 144 by 144 x 32, and 21632 x 9 by 9 x 16 and
9 x 21632 by 21632 x 16, 6.2 million flops each) gained. With its threads spinning the MLP's products gain
too, but a product's bits depend on how many threads compute it, and which threads spin depends on the load
when tapecli starts: so the threshold is the same either way, and a program's products give the same bits
on an idle machine and on a busy one. A product of fewer than ``THREADED_FROM`` flops runs on one thread,
and the threads OpenBLAS chose come back right after it (other code in the process finds them as it left
them). Where the user chose the threads (``OPENBLAS_NUM_THREADS``, ``GOTO_NUM_THREADS``,
``OMP_NUM_THREADS``), NumPy is not on OpenBLAS, or OpenBLAS runs one thread, products are NumPy's as they
are. The library is found at the first product large enough for OpenBLAS to split.
"""
from __future__ import annotations

import os

import numpy as np

THREADED_FROM = 5_000_000           # flops (2 m n k) of a product that runs on OpenBLAS's threads
_SPLIT_FROM = 2 * 65536 * 4         # flops below which OpenBLAS runs one thread anyway (its GEMM threshold)
_USER_SETTINGS = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")
_unknown = object()
_openblas = _unknown                # (set_num_threads, its threads), or None; found once per process


def matmul(a, b):
    """``np.matmul(a, b)``, on one thread where it is smaller than ``THREADED_FROM`` flops."""
    return for_shapes(a, b)(a, b)


def for_shapes(a, b):
    """The function :func:`matmul` computes a product of operands of these shapes by: ``np.matmul``, or
    :func:`_on_one_thread`."""
    if a.ndim < 2 or b.ndim < 2:
        return np.matmul
    flops = 2 * a.shape[-2] * a.shape[-1] * b.shape[-1]
    if flops < _SPLIT_FROM or flops >= THREADED_FROM or _found() is None:
        return np.matmul
    return _on_one_thread


def _on_one_thread(a, b):
    """``np.matmul(a, b)`` on one of OpenBLAS's threads, its threads back after it."""
    set_threads, threads = _openblas
    set_threads(1)
    try:
        return np.matmul(a, b)
    finally:
        set_threads(threads)


def _found():
    global _openblas
    if _openblas is _unknown:
        _openblas = None if any(os.environ.get(name) for name in _USER_SETTINGS) else _find_openblas()
    return _openblas


def _find_openblas():
    """(set_num_threads, its threads) of the OpenBLAS this process loaded (NumPy's), or None."""
    import ctypes
    try:
        with open("/proc/self/maps") as maps:
            paths = {line.split()[-1] for line in maps if "openblas" in line.rsplit("/", 1)[-1].lower()}
    except OSError:             # (not Linux: NumPy's BLAS as it is)
        return None
    for path in sorted(paths, key=lambda path: ("numpy" not in path, path)):       # NumPy's own first (numpy.libs)
        try:
            library = ctypes.CDLL(path)
        except OSError:
            continue
        for prefix, suffix in (("scipy_openblas", "64_"), ("scipy_openblas", ""), ("openblas", ""),
                               ("openblas", "64_")):
            set_threads = getattr(library, f"{prefix}_set_num_threads{suffix}", None)
            get_threads = getattr(library, f"{prefix}_get_num_threads{suffix}", None)
            if set_threads is None or get_threads is None:
                continue
            set_threads.argtypes, set_threads.restype, get_threads.restype = [ctypes.c_int], None, ctypes.c_int
            threads = get_threads()
            return (set_threads, threads) if threads > 1 else None
    return None
