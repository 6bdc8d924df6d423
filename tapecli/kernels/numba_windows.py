"""The windows' gradient, max pooling and its gradient compiled (Numba): the bits of ops/nn.py's NumPy kernels,
in one pass over the windows where NumPy takes a copy of them and a call per tap.

Each element of a windows' gradient is the chain of the gradients of the windows it is in, added to zero from
the last tap to the first (TensorFlow's order). The windows holding one element meet it at taps that fall as the
windows go in order (a later window, on a later row or to the right, meets it at an earlier tap), so the chain is
the windows in order: these kernels add the windows' gradients as the windows are laid out, each window's taps in
turn. Max pooling's first maximum is TensorFlow's loop: the window's first element of the input, replaced by each
later one greater than the one kept (a NaN kept stays; padding is never in a window). Each kernel takes a vector of
channels at a time (``numba_lanes``: LLVM's vectorizer leaves loops over a few channels scalar). No fastmath: each
float operation is the NumPy kernel's, so a program gives the same bits whichever backend serves it
(tests/kernels/test_numba_windows.py compares them; of a NaN made by inf - inf and met by another in a sum, NumPy's
own sign depends on where the element falls in its SIMD loop). Importing this module imports numba
(``numba_support``).
"""
from __future__ import annotations

import numpy as np

from . import numba_lanes as lanes
from .numba_support import _contiguous, _float_dtype, _jit, _launch


@_jit
def _windows_grad(g, sh, sw, dh, dw, out):
    # out (zeros) += each window's gradient where it was taken, the windows in order, a vector of channels at a time
    n, oh, ow, kh, kw, c = g.shape
    step = lanes.width(g)
    for b in range(n):
        for y in range(oh):
            for x in range(ow):
                for i in range(kh):
                    r = y * sh + i * dh
                    for j in range(kw):
                        target, gradient = out[b, r, x * sw + j * dw], g[b, y, x, i, j]
                        for ch in range(0, c, step):
                            k = min(step, c - ch)
                            lanes.store(target, ch, k, lanes.add(lanes.load(target, ch, k),
                                                                 lanes.load(gradient, ch, k)))


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
    # each window's maximum from the lowest float up, an element taken where it is greater (its taps in order, those
    # in the padding left out), a vector of channels at a time
    n, oh, ow, c = out.shape
    h, w = x.shape[1], x.shape[2]
    step = lanes.width(x)
    for b in range(n):
        for y in range(oh):
            r = y * sh - top
            for xo in range(ow):
                col = xo * sw - left
                for ch in range(0, c, step):
                    k = min(step, c - ch)
                    kept = lanes.fill(lowest)
                    for i in range(max(0, -r), min(kh, h - r)):
                        for j in range(max(0, -col), min(kw, w - col)):
                            v = lanes.load(x[b, r + i, col + j], ch, k)
                            kept = lanes.where_greater(v, kept, v, kept)
                    lanes.store(out[b, y, xo], ch, k, kept)


def max_pool(x, size, strides, pads, out):
    """ops/nn.py's ``max_pool`` kernel of a float32/float64 input (else NotImplemented)."""
    dtype = _float_dtype(x)
    if dtype is None:
        return NotImplemented
    result = np.empty((x.shape[0], *out, x.shape[3]), dtype)
    _launch(_max_pool, _contiguous(x), *size, *strides, pads[0], pads[2], dtype.type(np.finfo(dtype).min), result)
    return result


@_jit
def _max_pool_grad(x, g, kh, kw, sh, sw, top, left, zero, disjoint, out):
    # out (zeros) += each window's gradient at its first maximum and +0.0 at its other elements (as the NumPy
    # kernel adds them), the windows in order, a vector of channels at a time: the window's first maxima (its first
    # element, replaced by each later one greater) and their taps (as floats), then its sums (``disjoint``: no element
    # in two windows, so 0 + each one's gradient is written, out's zeros not read; where the windows tile the input,
    # out need not be zeros)
    n, oh, ow, c = g.shape
    h, w = x.shape[1], x.shape[2]
    step = lanes.width(x)
    for b in range(n):
        for y in range(oh):
            r = y * sh - top
            i0, i1 = max(0, -r), min(kh, h - r)
            for xo in range(ow):
                col = xo * sw - left
                j0, j1 = max(0, -col), min(kw, w - col)
                for ch in range(0, c, step):
                    k = min(step, c - ch)
                    first = lanes.load(x[b, r + i0, col + j0], ch, k)
                    taps = lanes.add(lanes.fill(zero), i0 * kw + j0)
                    for i in range(i0, i1):
                        for j in range(j0, j1):
                            v = lanes.load(x[b, r + i, col + j], ch, k)
                            taps = lanes.where_greater(v, first, i * kw + j, taps)
                            first = lanes.where_greater(v, first, v, first)
                    gradient = lanes.load(g[b, y, xo], ch, k)
                    for i in range(i0, i1):
                        for j in range(j0, j1):
                            target = out[b, r + i, col + j]
                            before = lanes.fill(zero) if disjoint else lanes.load(target, ch, k)
                            lanes.store(target, ch, k, lanes.add(before, lanes.where_equal(taps, i * kw + j,
                                                                                           gradient, zero)))


def max_pool_grad(x, g, size, strides, pads, out):
    """ops/nn.py's ``max_pool_grad`` kernel of float32/float64 arrays (else NotImplemented)."""
    dtype = _float_dtype(x, g)
    if dtype is None:
        return NotImplemented
    top, bottom, left, right = pads
    disjoint = all(s >= k for s, k in zip(strides, size))
    # windows side by side that cover the (padded) input: every element is written, none need be zero
    tiled = tuple(strides) == tuple(size) and (x.shape[1] + top + bottom, x.shape[2] + left + right) == (
        out[0] * size[0], out[1] * size[1])
    grad = np.empty(x.shape, dtype) if tiled else np.zeros(x.shape, dtype)
    _launch(_max_pool_grad, _contiguous(x), _contiguous(g), *size, *strides, top, left, dtype.type(0), disjoint, grad)
    return grad
