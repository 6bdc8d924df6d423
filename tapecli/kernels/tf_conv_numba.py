"""tf_conv's chains of fused multiply-adds compiled (Numba): the same bits as its NumPy loops, for products too
large to take a NumPy step per tap. Each step is the CPU's fused multiply-add (``fused_multiply_add``) over a row
of filters. TensorFlow flushes results below float32's smallest normal number to zero, which these chains do not:
each returns None where a product of its operands could fall there (tf_matmul.may_underflow's test). Importing
this module imports numba (``numba_support``)."""
from __future__ import annotations

import numpy as np

from .numba_support import _jit, _launch, fused_multiply_add

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
    """out[m] (zeros) = the chain of fused multiply-adds of rows[m, p] * kernel[p] over p in ``order``, a tap at a
    time over every output."""
    for p in order:
        weights = kernel[p]
        for m in range(rows.shape[0]):
            x = rows[m, p]
            total = out[m]
            for f in range(weights.shape[0]):
                total[f] = fused_multiply_add(x, weights[f], total[f])


def chains(rows, kernel, orders) -> np.ndarray | None:
    """[outputs, filters]: the sum, in turn, of a chain of fused multiply-adds from zero over each of ``orders``
    (indices into the windows' row and the kernel's rows), or None where a product could underflow."""
    if _underflows(rows, kernel):
        return None
    rows, kernel, total = np.ascontiguousarray(rows), np.ascontiguousarray(kernel), None
    for order in orders:
        part = np.zeros((rows.shape[0], kernel.shape[1]), np.float32)
        _launch(_chain, rows, kernel, np.asarray(order, np.int64), part)
        total = part if total is None else total + part
    return total


@_jit
def _blocked_chains(rows, g, blocks, firsts, out):
    """out (zeros) = the threads' parts added in order, each part its chains over ``blocks`` of windows (from
    zero: rows[m, k] * g[m] over m in the block) added in turn."""
    depth, filters = rows.shape[1], g.shape[1]
    part = np.empty((depth, filters), np.float32)
    chain = np.empty((depth, filters), np.float32)
    for thread in range(len(firsts) - 1):
        part[:] = 0
        for block in range(firsts[thread], firsts[thread + 1]):
            chain[:] = 0
            for m in range(blocks[block, 0], blocks[block, 1]):
                grads = g[m]
                for k in range(depth):
                    x = rows[m, k]
                    total = chain[k]
                    for f in range(filters):
                        total[f] = fused_multiply_add(x, grads[f], total[f])
            part += chain
        out += part


def blocked_chains(rows, g, blocks, firsts) -> np.ndarray | None:
    """[taps * channels, filters]: tf_conv.filter_grad's sums (``blocks``: the (start, stop) of each chain over
    the windows; ``firsts``: the index of each thread's first chain, then the number of chains), or None where a
    product could underflow."""
    if _underflows(rows, g):
        return None
    out = np.zeros((rows.shape[1], g.shape[1]), np.float32)
    _launch(_blocked_chains, np.ascontiguousarray(rows), np.ascontiguousarray(g), blocks, firsts, out)
    return out
