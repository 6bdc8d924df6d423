"""tf_conv's chain of fused multiply-adds compiled (Numba): the same bits as its NumPy loop, for products too
large to take a NumPy step per tap. Importing this module imports numba (``numba_support``)."""
from __future__ import annotations

import numpy as np

from .numba_support import _jit, _launch

_LOW_BITS = np.uint64((1 << 29) - 1)        # the float64 fraction bits below float32's
_HALFWAY = np.uint64(1 << 28)
_TINY = float(np.finfo(np.float32).tiny)


@_jit
def _fma_at_halfway(x, y, c, total):
    """A fused multiply-add whose float64 sum ``total`` fell on a float32 halfway point: the rounding error says
    which way the exact sum lies (tf_matmul.fma)."""
    product = np.float64(x) * np.float64(y)
    carried = total - product
    error = (product - (total - carried)) + (np.float64(c) - carried)
    if error > 0:
        return np.float32(np.nextafter(total, np.inf))
    if error < 0:
        return np.float32(np.nextafter(total, -np.inf))
    return np.float32(total)


@_jit
def _chain(rows, kernel, order, out):
    """out[m] (zeros) = the chain of fused multiply-adds of rows[m, p] * kernel[p] over p in ``order``: each step
    a loop without branches over the filters (vectorized), then the rare sums that float64 rounded onto a
    float32 halfway point done again."""
    filters = kernel.shape[1]
    wide = np.empty(filters, np.float64)
    bits = wide.view(np.uint64)
    before = np.empty(filters, np.float32)
    for m in range(rows.shape[0]):
        total = out[m]
        for p in order:
            _fma_step(rows[m, p], kernel[p], total, before, wide, bits)


@_jit(inline="always")     # (a call per step, not inlined, took twice the time of the loop written in place)
def _fma_step(x, weights, total, before, wide, bits):
    """total[f] = fma(x, weights[f], total[f]) for every filter f: a loop without branches (vectorized), then the
    rare sums that float64 rounded onto a float32 halfway point done again."""
    wide_x = np.float64(x)
    halfway = False
    for f in range(total.shape[0]):
        before[f] = total[f]
        wide[f] = wide_x * np.float64(weights[f]) + np.float64(total[f])
        total[f] = np.float32(wide[f])
        halfway |= bits[f] & _LOW_BITS == _HALFWAY
    if halfway:
        for f in range(total.shape[0]):
            if bits[f] & _LOW_BITS == _HALFWAY:
                total[f] = _fma_at_halfway(x, weights[f], before[f], wide[f])


def chain(rows, kernel, order) -> np.ndarray:
    """[outputs, filters]: each a chain of fused multiply-adds from zero over ``order`` (indices into the
    windows' row and the kernel's rows)."""
    out = np.zeros((rows.shape[0], kernel.shape[1]), np.float32)
    _launch(_chain, np.ascontiguousarray(rows), np.ascontiguousarray(kernel), np.asarray(order, np.int64), out)
    return out


@_jit
def _blocked_chains(rows, g, blocks, firsts, out):
    """out (zeros) = the threads' parts added in order, each part its chains over ``blocks`` of windows (from
    zero: rows[m, k] * g[m] over m in the block) added in turn."""
    depth, filters = rows.shape[1], g.shape[1]
    part = np.empty((depth, filters), np.float32)
    chain = np.empty((depth, filters), np.float32)
    wide = np.empty(filters, np.float64)
    bits = wide.view(np.uint64)
    before = np.empty(filters, np.float32)
    for thread in range(len(firsts) - 1):
        part[:] = 0
        for block in range(firsts[thread], firsts[thread + 1]):
            chain[:] = 0
            for m in range(blocks[block, 0], blocks[block, 1]):
                for k in range(depth):
                    _fma_step(rows[m, k], g[m], chain[k], before, wide, bits)
            part += chain
        out += part


def blocked_chains(rows, g, blocks, firsts) -> np.ndarray:
    """[taps * channels, filters]: tf_conv.filter_grad's sums (``blocks``: the (start, stop) of each chain over
    the windows; ``firsts``: the index of each thread's first chain, then the number of chains)."""
    out = np.zeros((rows.shape[1], g.shape[1]), np.float32)
    _launch(_blocked_chains, np.ascontiguousarray(rows), np.ascontiguousarray(g), blocks, firsts, out)
    return out


@_jit
def _smallest_magnitude(x):
    """The smallest nonzero |x| of a flat float32 array (inf where there is none), in one pass."""
    smallest = np.inf
    for v in x:
        a = abs(np.float64(v))
        if 0 < a < smallest:
            smallest = a
    return smallest


def may_underflow(a, b) -> bool:
    """tf_matmul.may_underflow in one compiled pass over each array (NumPy's takes three and a copy: as long as the
    product itself on a convolution's windows)."""
    return _smallest_magnitude(np.ascontiguousarray(a).reshape(-1)) * _smallest_magnitude(
        np.ascontiguousarray(b).reshape(-1)) < _TINY
