"""The windows' gradient, max pooling and its gradient compiled (Numba): the bits of ops/nn.py's NumPy kernels,
in one pass over the windows where NumPy takes a copy of them and a call per tap.

Each element of a windows' gradient is the chain of the gradients of the windows it is in, added to zero from
the last tap to the first (TensorFlow's order). The windows holding one element meet it at taps that fall as the
windows go in order (a later window, on a later row or to the right, meets it at an earlier tap), so the chain is
the windows in order: these kernels add the windows' gradients as the windows are laid out, each window's taps in
turn. Max pooling's first maximum is TensorFlow's loop: the window's first element of the input, replaced by each
later one greater than the one kept (a NaN kept stays; padding is never in a window). No fastmath: each float
operation is the NumPy kernel's, so a program gives the same bits whichever backend serves it
(tests/kernels/test_numba_windows.py compares them; of a NaN made by inf - inf and met by another in a sum, NumPy's
own sign depends on where the element falls in its SIMD loop). Importing this module imports numba
(``numba_support``).
"""
from __future__ import annotations

import numpy as np

from .numba_support import _contiguous, _float_dtype, _jit, _launch


@_jit
def _windows_grad(g, sh, sw, dh, dw, out):
    # out (zeros) += each window's gradient where it was taken, the windows in order
    n, oh, ow, kh, kw, c = g.shape
    for b in range(n):
        for y in range(oh):
            for x in range(ow):
                for i in range(kh):
                    r = y * sh + i * dh
                    for j in range(kw):
                        col = x * sw + j * dw
                        for ch in range(c):
                            out[b, r, col, ch] += g[b, y, x, i, j, ch]


def windows_grad(g, shape, size, strides, dilations):
    """ops/nn.py's ``windows_grad`` kernel: zeros of ``shape`` with every window's gradient added where it was
    taken; NotImplemented for other than float32/float64."""
    if _float_dtype(g) is None:
        return NotImplemented
    out = np.zeros(shape, g.dtype)
    _launch(_windows_grad, _contiguous(g), *strides, *dilations, out)
    return out


@_jit
def _max_pool(x, kh, kw, sh, sw, top, left, lowest, out):
    # each window's maximum from the lowest float up, an element taken where it is greater; a row of windows at a
    # time, a tap at a time over the row (each window's taps in order: several times faster than window by window)
    n, oh, ow, c = out.shape
    h, w = x.shape[1], x.shape[2]
    for b in range(n):
        for y in range(oh):
            maxima = out[b, y]
            maxima[:] = lowest
            for i in range(kh):
                r = y * sh - top + i
                if r < 0 or r >= h:
                    continue
                row = x[b, r]
                for j in range(kw):
                    for xo in range(ow):
                        col = xo * sw - left + j
                        if col < 0 or col >= w:
                            continue
                        v, kept = row[col], maxima[xo]
                        for ch in range(c):
                            kept[ch] = v[ch] if v[ch] > kept[ch] else kept[ch]


def max_pool(x, size, strides, pads, out):
    """ops/nn.py's ``max_pool`` kernel of a float32/float64 input (else NotImplemented)."""
    dtype = _float_dtype(x)
    if dtype is None:
        return NotImplemented
    result = np.empty((x.shape[0], *out, x.shape[3]), dtype)
    _launch(_max_pool, _contiguous(x), *size, *strides, pads[0], pads[2], dtype.type(np.finfo(dtype).min), result)
    return result


@_jit
def _max_pool_grad(x, g, kh, kw, sh, sw, top, left, zero, kept, which, out):
    # out (zeros) += each window's gradient at its first maximum and +0.0 at its other elements (as the NumPy
    # kernel adds them), the windows in order; a row of windows at a time: kept and which, [windows, channels],
    # their first maxima so far (found a tap at a time over the row, as _max_pool) and those maxima's taps
    n, oh, ow, c = g.shape
    h, w = x.shape[1], x.shape[2]
    for b in range(n):
        for y in range(oh):
            which[:] = -1
            for i in range(kh):
                r = y * sh - top + i
                if r < 0 or r >= h:
                    continue
                row = x[b, r]
                for j in range(kw):
                    tap = i * kw + j
                    for xo in range(ow):
                        col = xo * sw - left + j
                        if col < 0 or col >= w:
                            continue
                        v, first, taps = row[col], kept[xo], which[xo]
                        for ch in range(c):
                            if taps[ch] < 0 or first[ch] < v[ch]:
                                first[ch] = v[ch]
                                taps[ch] = tap
            gradients = g[b, y]
            for i in range(kh):
                r = y * sh - top + i
                if r < 0 or r >= h:
                    continue
                row = out[b, r]
                for xo in range(ow):
                    gradient, taps = gradients[xo], which[xo]
                    for j in range(kw):
                        col = xo * sw - left + j
                        if col < 0 or col >= w:
                            continue
                        target, tap = row[col], i * kw + j
                        for ch in range(c):
                            target[ch] += gradient[ch] if taps[ch] == tap else zero


def max_pool_grad(x, g, size, strides, pads, out):
    """ops/nn.py's ``max_pool_grad`` kernel of float32/float64 arrays (else NotImplemented)."""
    dtype = _float_dtype(x, g)
    if dtype is None:
        return NotImplemented
    grad = np.zeros(x.shape, dtype)
    windows = g.shape[2:]       # (scratch made here: a kernel that allocates takes longer to load from the cache)
    _launch(_max_pool_grad, _contiguous(x), _contiguous(g), *size, *strides, pads[0], pads[2], dtype.type(0),
            np.empty(windows, dtype), np.empty(windows, np.int64), grad)
    return grad
