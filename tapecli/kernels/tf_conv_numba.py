"""tf_conv's chains of fused multiply-adds compiled (Numba): the same bits as its NumPy loops, for products too
large to take a NumPy step per tap. Each step is the CPU's fused multiply-add over a vector of filters
(``numba_lanes``), each output's chain in its own order. TensorFlow flushes results below float32's smallest normal
number to zero, which these chains do not: each returns None where a product of its operands could fall there
(tf_matmul.may_underflow's test). Importing this module imports numba (``numba_support``)."""
from __future__ import annotations

import numpy as np

from . import numba_lanes as lanes
from .numba_support import _jit, _launch

_TINY = float(np.finfo(np.float32).tiny)


@_jit
def _smallest_magnitude_bits(bits):
    """The bits, less one, of the smallest nonzero |x| of a flat float32 array seen as uint32 (those of inf less
    one where there is none): an integer minimum, which vectorizes (a float one would not, for NaN), of the
    magnitudes' bits less one, so that zero's wrap to the largest and NaN's exceed inf's."""
    smallest, one, magnitude = np.uint32(0x7F7FFFFF), np.uint32(1), np.uint32(0x7FFFFFFF)
    for i in range(bits.shape[0]):
        smallest = min(smallest, (bits[i] & magnitude) - one)
    return smallest


def _underflows(a, b) -> bool:
    """tf_matmul.may_underflow in one compiled pass over each array."""
    smallest = [(np.uint32(_launch(_smallest_magnitude_bits, np.ascontiguousarray(x).reshape(-1).view(np.uint32)))
                 + np.uint32(1)).view(np.float32) for x in (a, b)]
    return float(smallest[0]) * float(smallest[1]) < _TINY


@_jit
def _chain(rows, kernel, order, out):
    """out[m] = the chain of fused multiply-adds from zero of rows[m, p] * kernel[p] over p in ``order``: a vector
    of filters at a time, four outputs at once (independent chains, so that they overlap: one waits on its own
    previous step), a group that runs past the last output taking the last again."""
    count, filters, step = rows.shape[0], kernel.shape[1], lanes.width(kernel)
    last, zero = count - 1, lanes.fill(np.float32(0))
    for f in range(0, filters, step):
        n = min(step, filters - f)
        for m in range(0, count, 4):
            m1, m2, m3 = min(m + 1, last), min(m + 2, last), min(m + 3, last)
            t0 = t1 = t2 = t3 = zero
            for p in order:
                w = lanes.load(kernel[p], f, n)
                t0 = lanes.fused_multiply_add(rows[m, p], w, t0)
                t1 = lanes.fused_multiply_add(rows[m1, p], w, t1)
                t2 = lanes.fused_multiply_add(rows[m2, p], w, t2)
                t3 = lanes.fused_multiply_add(rows[m3, p], w, t3)
            lanes.store(out[m], f, n, t0)
            lanes.store(out[m1], f, n, t1)
            lanes.store(out[m2], f, n, t2)
            lanes.store(out[m3], f, n, t3)


def chains(rows, kernel, orders) -> np.ndarray | None:
    """[outputs, filters]: the sum, in turn, of a chain of fused multiply-adds from zero over each of ``orders``
    (indices into the windows' row and the kernel's rows), or None where a product could underflow."""
    if _underflows(rows, kernel):
        return None
    rows, kernel, total = np.ascontiguousarray(rows), np.ascontiguousarray(kernel), None
    for order in orders:
        part = np.empty((rows.shape[0], kernel.shape[1]), np.float32)
        # (unsigned taps: a signed index may be negative, which the kernel would test at every step: 10% of it)
        _launch(_chain, rows, kernel, np.asarray(order, np.uint64), part)
        total = part if total is None else total + part
    return total


@_jit
def _blocked_chains(rows, g, blocks, firsts, out):
    """out = the threads' parts added in order to zeros, each part its chains over ``blocks`` of windows (from
    zero: rows[m, k] * g[m] over m in the block) added in turn to zeros: a vector of filters at a time, four rows
    k at once (as _chain's outputs)."""
    depth, filters, step = rows.shape[1], g.shape[1], lanes.width(g)
    last, zero = depth - 1, lanes.fill(np.float32(0))
    for f in range(0, filters, step):
        n = min(step, filters - f)
        for k in range(0, depth, 4):
            k1, k2, k3 = min(k + 1, last), min(k + 2, last), min(k + 3, last)
            o0 = o1 = o2 = o3 = zero
            for thread in range(len(firsts) - 1):
                p0 = p1 = p2 = p3 = zero
                for block in range(firsts[thread], firsts[thread + 1]):
                    c0 = c1 = c2 = c3 = zero
                    for m in range(blocks[block, 0], blocks[block, 1]):
                        grads = lanes.load(g[m], f, n)
                        c0 = lanes.fused_multiply_add(rows[m, k], grads, c0)
                        c1 = lanes.fused_multiply_add(rows[m, k1], grads, c1)
                        c2 = lanes.fused_multiply_add(rows[m, k2], grads, c2)
                        c3 = lanes.fused_multiply_add(rows[m, k3], grads, c3)
                    p0, p1, p2, p3 = lanes.add(p0, c0), lanes.add(p1, c1), lanes.add(p2, c2), lanes.add(p3, c3)
                o0, o1, o2, o3 = lanes.add(o0, p0), lanes.add(o1, p1), lanes.add(o2, p2), lanes.add(o3, p3)
            lanes.store(out[k], f, n, o0)
            lanes.store(out[k1], f, n, o1)
            lanes.store(out[k2], f, n, o2)
            lanes.store(out[k3], f, n, o3)


def blocked_chains(rows, g, blocks, firsts) -> np.ndarray | None:
    """[taps * channels, filters]: tf_conv.filter_grad's sums (``blocks``: the (start, stop) of each chain over
    the windows; ``firsts``: the index of each thread's first chain, then the number of chains), or None where a
    product could underflow."""
    if _underflows(rows, g):
        return None
    out = np.empty((rows.shape[1], g.shape[1]), np.float32)
    _launch(_blocked_chains, np.ascontiguousarray(rows), np.ascontiguousarray(g), blocks, firsts, out)
    return out
