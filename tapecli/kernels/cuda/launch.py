"""numba.cuda kernels, generated and cached per shape of call: elementwise (one per formula of
``device_math``, inputs read whole or as a broadcast scalar), gather/scatter by an index map (the
shape ops, indexing, broadcasting), a segmented sum (the gradient of indexing, no atomics), and a
tree reduction per block (reproducible: the order of the additions depends only on the shape).

Every kernel covers the elements (rows, for a reduction) ``base`` to ``end`` in a grid-stride loop and
is started by :func:`over` or :func:`over_rows`, which look at the run's deadline (TAPECLI_MAX_SECONDS)
before each launch. On a GPU one launch covers the whole array, a thread per element (row). numba's CUDA
simulator runs each thread of a block as a Python thread, ~0.5 ms apiece, where a turn of a thread's loop
costs ~10 µs: there a launch is one block whose threads loop over at most ``STEP`` elements (``ROW_STEP``
rows), so that a large tensor takes seconds, not minutes, and a long kernel still ends at the deadline.
"""
from __future__ import annotations

import warnings

import numba
import numpy as np
from numba import cuda

from tapecli.runtime.limits import check_deadline

from . import device_math

SIMULATED = device_math.SIMULATED
# threads per block; the simulator runs each thread as a Python thread, so it gets few
BLOCK = 32 if SIMULATED else 256
MAX_BLOCKS = 1 if SIMULATED else 2**31 - 1     # blocks per launch
STEP = 4096 if SIMULATED else None             # elements per launch (None: all of them)
ROW_STEP = 64 if SIMULATED else None           # rows per launch of a reduction
_KERNELS: dict = {}


def over(kernel, n: int, *args) -> None:
    """``kernel(base, end, *args)`` on the elements ``0 .. n - 1``: one launch on a GPU, launches of ``STEP``
    elements under the simulator; the run's deadline is checked before each."""
    step = STEP or n
    for base in range(0, n, step):
        end = min(n, base + step)
        _start(kernel, (end - base + BLOCK - 1) // BLOCK, base, end, args)


def over_rows(kernel, rows: int, *args) -> None:
    """``kernel(base, end, *args)``, a block per row of ``0 .. rows - 1``: one launch on a GPU, launches of
    ``ROW_STEP`` rows under the simulator; the run's deadline is checked before each."""
    step = ROW_STEP or rows
    for base in range(0, rows, step):
        end = min(rows, base + step)
        _start(kernel, end - base, base, end, args)


def _start(kernel, blocks: int, base: int, end: int, args) -> None:
    check_deadline()
    if not SIMULATED:
        kernel[min(MAX_BLOCKS, blocks), BLOCK](base, end, *args)
        return
    # the simulator's threads compute with NumPy scalars outside the run's np.errstate (it is per thread):
    # inf and nan are values here, not warnings on stderr
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        kernel[min(MAX_BLOCKS, blocks), BLOCK](base, end, *args)


def elementwise(formula: str, modes: str, n_attrs: int):
    """Kernel ``k(base, end, *inputs, *attrs, out)``: ``out[i] = f(inputs[i]...)``; ``modes`` has one letter
    per input: ``a`` read at ``i``, ``s`` read at 0 (a scalar broadcast)."""
    key = ("ew", formula, modes, n_attrs)
    k = _KERNELS.get(key)
    if k is None:
        ins = [f"x{j}" for j in range(len(modes))]
        attrs = [f"c{j}" for j in range(n_attrs)]
        reads = [f"x{j}[i]" if m == "a" else f"x{j}[0]" for j, m in enumerate(modes)]
        src = (f"def k(base, end, {', '.join(ins + attrs)}, out):\n"
               f"    i = base + cuda.grid(1)\n"
               f"    stride = cuda.gridsize(1)\n"
               f"    while i < end:\n"
               f"        out[i] = f({', '.join(reads + attrs)})\n"
               f"        i += stride\n")
        ns = {"cuda": cuda, "f": device_math.DEVICE[formula]}
        exec(compile(src, f"<cuda {formula}>", "exec"), ns)
        k = _KERNELS[key] = cuda.jit(ns["k"])
    return k


def _gather(base, end, x, idx, out):
    i = base + cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < end:
        out[i] = x[idx[i]]
        i += stride


def _scatter(base, end, x, idx, out):
    i = base + cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < end:
        out[idx[i]] = x[i]
        i += stride


def _segment_sum(base, end, g, order, starts, out):
    # out[j] = the sum of g over the positions whose index is j, in their order: no atomics
    j = base + cuda.grid(1)
    stride = cuda.gridsize(1)
    while j < end:
        acc = out[j]
        for k in range(starts[j], starts[j + 1]):
            acc += g[order[k]]
        out[j] = acc
        j += stride


def _fill(base, end, value, out):
    i = base + cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < end:
        out[i] = value
        i += stride


def _matmul(base, end, a, b, ia, ib, n, k, m, zero, out):
    # out[p, r, c] = sum_j a[ia[p] + r*k + j] * b[ib[p] + j*m + c], one thread per output element
    t = base + cuda.grid(1)
    stride = cuda.gridsize(1)
    while t < end:
        c = t % m
        r = (t // m) % n
        p = t // (n * m)
        acc = zero
        for j in range(k):
            acc += a[ia[p] + r * k + j] * b[ib[p] + j * m + c]
        out[t] = acc
        t += stride


gather = cuda.jit(_gather)
scatter = cuda.jit(_scatter)
segment_sum = cuda.jit(_segment_sum)
fill = cuda.jit(_fill)
matmul = cuda.jit(_matmul)

_COMBINE = {"sum": "a + b", "prod": "a * b",
            "max": "a if (a > b or a != a) else b", "min": "a if (a < b or a != a) else b"}
_INIT = {"sum": "ident", "prod": "ident", "max": "x[row]", "min": "x[row]"}     # (x * 0 is nan at inf)


def reduction(kind: str, dtype: np.dtype):
    """Kernel ``k(base, end, x, cols, ident, out)``: ``out[r]`` combines ``x[r*cols:(r+1)*cols]`` for the rows
    ``base`` to ``end``, a block per row: each thread combines a strided slice in order (from ``ident``, the
    sum's 0 or the product's 1), then the block combines its threads as a binary tree."""
    key = ("reduce", kind, dtype.char)
    k = _KERNELS.get(key)
    if k is None:
        src = f"""
def combine(a, b):
    return {_COMBINE[kind]}

def k(base, end, x, cols, ident, out):
    r = base + cuda.blockIdx.x
    t = cuda.threadIdx.x
    buf = cuda.shared.array(BLOCK, DT)
    while r < end:
        row = r * cols
        acc = {_INIT[kind]}
        j = t
        while j < cols:
            acc = combine(acc, x[row + j])
            j += BLOCK
        buf[t] = acc
        cuda.syncthreads()
        s = BLOCK // 2
        while s > 0:
            if t < s:
                buf[t] = combine(buf[t], buf[t + s])
            cuda.syncthreads()
            s //= 2
        if t == 0:
            out[r] = buf[0]
        cuda.syncthreads()
        r += cuda.gridDim.x
"""
        ns = {"cuda": cuda, "BLOCK": BLOCK, "DT": numba.from_dtype(dtype)}
        exec(compile(src, f"<cuda reduce {kind}>", "exec"), ns)
        ns["combine"] = cuda.jit(device=True)(ns["combine"])
        k = _KERNELS[key] = cuda.jit(ns["k"])     # its globals are ns: combine is the device function
    return k
