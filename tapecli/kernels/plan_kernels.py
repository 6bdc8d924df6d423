"""Compiled kernels for a loop plan's small tensors: the same bits as the ordinary path, fewer calls.

A planned training iteration (``interpreter/loop_plans.py``) on a small model spends as much time calling NumPy
as computing: Adam's step is a dozen NumPy calls over a few thousand values, a bias's gradient (a column sum in
TensorFlow's order) eight, relu's gradient three. A loop plan whose known remaining iterations pay for Numba's
import and these kernels' load (``loop_plans.compiles``) makes each of those calls one compiled loop, and a bias
added then relu one loop for the two. (A bias added alone is as fast in NumPy's loop over wide rows.)
Every kernel here computes each element in the ordinary path's order, in the arrays' dtype, without fastmath
(no reassociation, no fused multiply-add): the same bits as the NumPy kernels it stands for, which
``tests/kernels/test_plan_kernels.py`` compares. ``TAPECLI_PLAN_KERNELS=0`` leaves the plans to NumPy alone.

Importing this module imports numba (``numba_support``); each kernel is compiled once per machine and cached.
"""
from __future__ import annotations

import numpy as np

from . import tf_sums, tf_xent
from .numba_support import _jit, _launch

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_BITS = {np.dtype(np.float32): np.dtype(np.uint32), np.dtype(np.float64): np.dtype(np.uint64)}
_LAUNCHED: set = set()      # (kernel, dtype) launched in this process: its later calls need no compile lock


def _run(kernel, dtype, *args):
    """``kernel(*args)``: its first call for ``dtype`` by numba_support._launch (the compile lock, the cache), the
    later ones straight (each kernel here takes the same argument types for one dtype: a plan calls them at every
    iteration, and _launch's key of every argument's type cost more than the smaller kernels)."""
    key = (kernel, dtype)
    if key in _LAUNCHED:
        return kernel(*args)
    result = _launch(kernel, *args)
    _LAUNCHED.add(key)
    return result


# ------------------------------------------------------------------ Adam's step

@_jit
def _adam(g, value, m, v, rate_1, rate_2, alpha, epsilon, out):
    # Keras's update_step, element by element: m += (g - m) * (1 - beta_1); v += (g * g - v) * (1 - beta_2);
    # value - (m * alpha) / (sqrt(v) + epsilon)
    for i in range(g.shape[0]):
        gi = g[i]
        mi = m[i] + (gi - m[i]) * rate_1
        vi = v[i] + (gi * gi - v[i]) * rate_2
        m[i] = mi
        v[i] = vi
        out[i] = value[i] - (mi * alpha) / (np.sqrt(vi) + epsilon)


def adam(g, value, m, v, rate_1, rate_2, alpha, epsilon):
    """Adam's new values (a new array) from the flat gradient ``g``, the values and the slots ``m`` and ``v``
    (written in place), with the update's scalars in the arrays' dtype; None where the kernel does not take
    these arrays (another dtype, not flat and contiguous)."""
    dtype = g.dtype
    if dtype not in _FLOATS or g.ndim != 1 or not value.dtype == m.dtype == v.dtype == dtype \
            or not value.shape == m.shape == v.shape == g.shape or not m.flags.writeable or not v.flags.writeable \
            or not (g.flags.c_contiguous and value.flags.c_contiguous and m.flags.c_contiguous and v.flags.c_contiguous):
        return None
    out = np.empty_like(value)
    _run(_adam, g.dtype, g, value, m, v, rate_1, rate_2, alpha, epsilon, out)
    return out


# ------------------------------------------------------------------ relu's gradient

@_jit
def _relu_grad(g_bits, x, out_bits):
    # g's bits times 1 where x > 0, times 0 elsewhere (NaN too): every bit of g or +0.0, as masked_grad gives them
    for i in range(x.shape[0]):
        out_bits[i] = g_bits[i] * (x[i] > 0)


@_jit
def _relu_grad_in_place(g_bits, x):
    # (into g itself: a loop of its own, which LLVM vectorizes; one whose output might be its input it does not)
    for i in range(x.shape[0]):
        g_bits[i] *= x[i] > 0


def relu_grad(g, x, kind="relu", alpha=0.2, out=None):
    """``numpy_kernels.masked_grad`` of relu: g where x > 0, else +0.0 (NaN in x too), into ``out`` where given."""
    bits = _BITS[g.dtype]
    if out is g:
        _run(_relu_grad_in_place, g.dtype, g.reshape(-1).view(bits), x.reshape(-1))
        return out
    if out is None:
        out = np.empty(g.shape, g.dtype)
    _run(_relu_grad, g.dtype, g.reshape(-1).view(bits), x.reshape(-1), out.reshape(-1).view(bits))
    return out


def _relu_grad_for(args, attrs):
    g, x = args
    return relu_grad if attrs.get("kind", "relu") == "relu" and _same_floats(g, x) else None


# ------------------------------------------------------------------ a bias's gradient: column sums

@_jit
def _tf_columns(x, packet, zero, out):
    # tf_sums._columns: the outputs of whole packets with four accumulators over the rows (rows 4k + j into
    # accumulator j, from 0; then accumulators 1, 2, 3 and the remaining rows into accumulator 0 in order),
    # the others the rows in order from 0
    n, c = x.shape
    packed = c - c % packet
    unrolled = n - n % 4
    acc = np.empty((4, c), x.dtype)
    acc[:] = zero
    for i in range(0, unrolled, 4):
        for k in range(4):
            for j in range(packed):
                acc[k, j] += x[i + k, j]
    for j in range(packed):
        s = acc[0, j] + acc[1, j]
        s = s + acc[2, j]
        s = s + acc[3, j]
        for i in range(unrolled, n):
            s = s + x[i, j]
        out[j] = s
    for j in range(packed, c):
        s = zero
        for i in range(n):
            s = s + x[i, j]
        out[j] = s


@_jit
def _block_columns(x, block, zero, out):
    # numpy_kernels._column_sums: the rows i = k mod block summed in order from 0 (NumPy's reduction starts from
    # its identity), then the blocks' sums added in order
    n, c = x.shape
    acc = np.empty((block, c), x.dtype)
    acc[:] = zero
    for i in range(0, n, block):
        for k in range(block):
            for j in range(c):
                acc[k, j] += x[i + k, j]
    for j in range(c):
        s = acc[0, j]
        for k in range(1, block):
            s = s + acc[k, j]
        out[j] = s


def column_sums(x, axis=None, keepdims=False):
    """The ``sum`` kernel of a [n, c] float array over its first axis, as ``numpy_kernels.reduce`` computes it
    (where ``_column_sums_take``): TensorFlow's order (tf_sums._columns, at any size): four accumulators from 16
    rows on, else the rows in order (a block of one)."""
    n, c = x.shape
    out = np.empty(c, x.dtype)
    if n >= 16:
        _run(_tf_columns, x.dtype, x, tf_sums.PACKETS[x.dtype], x.dtype.type(0), out)
    else:
        _run(_block_columns, x.dtype, x, 1, x.dtype.type(0), out)
    return out.reshape(1, c) if keepdims else out


@_jit
def _tf_full(x, packet, zero):
    # tf_sums._full (a leaf of InnerMostDimReducer): four packet accumulators over blocks of four packets, from 0;
    # accumulators 1, 2, 3 and the remaining whole packets added into accumulator 0; its lanes summed by halves;
    # the values after the last whole packet summed in order from 0, and the lanes' sum added to that
    n = x.shape[0]
    whole = n - n % packet
    blocks = n - n % (4 * packet)
    p = np.empty(packet, x.dtype)
    if blocks:
        acc = np.empty((4, packet), x.dtype)
        acc[:] = zero
        for b in range(0, blocks, 4 * packet):
            for k in range(4):
                for lane in range(packet):
                    acc[k, lane] += x[b + k * packet + lane]
        for lane in range(packet):
            p[lane] = ((acc[0, lane] + acc[1, lane]) + acc[2, lane]) + acc[3, lane]
        for j in range(blocks, whole, packet):
            for lane in range(packet):
                p[lane] += x[j + lane]
    else:
        p[:] = zero
        for j in range(0, whole, packet):
            for lane in range(packet):
                p[lane] += x[j + lane]
    half = packet // 2
    while half:
        for lane in range(half):
            p[lane] = p[lane] + p[lane + half]
        half //= 2
    tail = zero
    for i in range(whole, n):
        tail = tail + x[i]
    return tail + p[0]


def full_sum(x, axis=None, keepdims=False):
    """The ``sum`` kernel of all of a float array's values (``_sum_for``: TensorFlow's order, one leaf), a 0-d array."""
    return np.array(_run(_tf_full, x.dtype, x.reshape(-1), tf_sums.PACKETS[x.dtype], x.dtype.type(0)), x.dtype)


def _sum_for(args, attrs):
    """The compiled kernel giving this ``sum`` call's bits, or None: ``column_sums`` of a C-contiguous float [n, c]
    over axis 0, where the ordinary path takes tf_sums._columns' InnerMostDimPreserver (16 rows or more, a whole
    packet of columns) or has more than ``tf_sums.EXACT_MOST`` values; ``full_sum`` of all the values, where
    tf_sums._full adds them (a packet to a leaf of them)."""
    (x,) = args
    axis = attrs.get("axis")
    if x.__class__ is not np.ndarray or x.dtype not in _FLOATS or not x.flags.c_contiguous or x.size == 0:
        return None
    packet = tf_sums.PACKETS[x.dtype]
    if axis is None:
        return full_sum if not attrs.get("keepdims") and packet <= x.size <= packet * tf_sums.LEAF_PACKETS[x.dtype] \
            and x.size < tf_sums.FULL_THREADED[x.dtype] else None
    if x.ndim != 2 or axis not in (0, (0,), [0], -2, (-2,)):
        return None
    n, c = x.shape
    taken = x.size > tf_sums.EXACT_MOST and c >= 2 or n >= 16 and c >= packet
    return column_sums if taken else None


# ------------------------------------------------------------------ a bias added, then relu

@_jit
def _bias_relu(a, b, zero, out):
    # relu as numpy_kernels.relu gives it (np.maximum(0, x): -0.0 and NaN stay), of the sum as add gives it
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            s = a[i, j] + b[j]
            out[i, j] = zero if s < zero else s


@_jit
def _bias_relu_in_place(a, b, zero):
    # (into a itself: see _relu_grad_in_place)
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            s = a[i, j] + b[j]
            a[i, j] = zero if s < zero else s


def bias_relu(a, b, out=None):
    """``relu(add(a, b))`` of a bias ``b`` along ``a``'s last axis (``bias_takes``), into ``out`` where given."""
    columns, zero = a.shape[-1], a.dtype.type(0)
    if out is a:
        _run(_bias_relu_in_place, a.dtype, a.reshape(-1, columns), b, zero)
        return out
    if out is None:
        out = np.empty(a.shape, a.dtype)
    _run(_bias_relu, a.dtype, a.reshape(-1, columns), b, zero, out.reshape(-1, columns))
    return out


def bias_takes(a, b) -> bool:
    """Whether ``a`` and ``b`` are what ``bias_relu`` takes: a C-contiguous float ``a`` (2-d or
    more), and ``b`` a contiguous vector of its dtype along its last axis."""
    return a.__class__ is np.ndarray and b.__class__ is np.ndarray and a.dtype in _FLOATS and b.dtype == a.dtype \
        and a.ndim >= 2 and a.size and a.flags.c_contiguous and b.ndim == 1 and b.shape[0] == a.shape[-1] \
        and b.flags.c_contiguous


# ------------------------------------------------------------------ the sparse cross-entropy and its backprop

@_jit
def _xent_shifted(shifted, top, labels, picked):
    # shifted -= top (each row's maximum, NumPy's); picked = shifted[label, row]; False (nothing done) for a label
    # out of range, which NumPy's indexing would wrap or refuse
    n, rows = shifted.shape
    for r in range(rows):
        if labels[r] < 0 or labels[r] >= n:
            return False
    for k in range(n):
        for r in range(rows):
            shifted[k, r] = shifted[k, r] - top[r]
    for r in range(rows):
        picked[r] = shifted[labels[r], r]
    return True


@_jit
def _xent_backprop(e, labels, zero, one, total, backprop):
    # total = the classes' exponentials added in order from 0 (NumPy's reduction over the leading axis);
    # backprop = e / total, minus 1 at the label, laid out row by row
    n, rows = e.shape
    for r in range(rows):
        total[r] = zero
    for k in range(n):
        for r in range(rows):
            total[r] += e[k, r]
    for k in range(n):
        for r in range(rows):
            backprop[r, k] = e[k, r] / total[r]
    for r in range(rows):
        backprop[r, labels[r]] -= one


def _xent_pair_for(args, fallback):
    """The sparse cross-entropy's loss and backprop (``ops/nn._sparse_xent_with_backprop``'s class-major path, its
    bits: NumPy's maximum, exponentials and logarithms, the rest compiled) for rows of few classes, ``fallback``
    itself for labels out of range; None where that path is not the ordinary one."""
    logits, labels = args
    if logits.__class__ is not np.ndarray or logits.dtype not in _FLOATS or logits.ndim != 2 \
            or labels.__class__ is not np.ndarray or labels.dtype.kind not in "iu" or labels.shape != logits.shape[:1]:
        return None
    rows, n = logits.shape
    if not 0 < n <= tf_xent.FEW_CLASSES or rows <= tf_xent.FEW_CLASSES or tf_xent.applies(logits):
        return None
    dtype, one = logits.dtype, logits.dtype.type(1)
    key = (dtype, labels.dtype)

    def pair(logits, labels):
        labels = np.ascontiguousarray(labels)       # (one layout: one signature of the kernels)
        shifted = np.ascontiguousarray(logits.T)
        top = np.maximum.reduce(shifted, axis=0)
        picked = np.empty(rows, dtype)
        if not _run(_xent_shifted, key, shifted, top, labels, picked):
            return fallback(logits, labels)
        np.exp(shifted, out=shifted)
        total, backprop = np.empty(rows, dtype), np.empty((rows, n), dtype)
        _run(_xent_backprop, key, shifted, labels, dtype.type(0), one, total, backprop)
        loss = np.log(total)
        loss -= picked
        return loss, backprop
    return pair


PAIRS = {("sparse_softmax_xent", "sparse_softmax_xent_backprop"): _xent_pair_for}


def for_pair(names, args, fallback):
    """The compiled function giving the results of ``kernels.PAIRED[names]`` (``fallback``) on these arguments, with
    their bits, or None."""
    chooser = PAIRS.get(names)
    return None if chooser is None else chooser(args, fallback)


# ------------------------------------------------------------------ the table

def _same_floats(*arrays) -> bool:
    """Float arrays of one dtype and one shape (not 0-d), laid out in C order."""
    first = arrays[0]
    return all(a.__class__ is np.ndarray and a.dtype == first.dtype and a.shape == first.shape and a.ndim
               and a.flags.c_contiguous for a in arrays) and first.dtype in _FLOATS


# kernel name: the function of a call's arguments and attributes giving the compiled kernel that gives its bits
# (called as the NumPy kernel is, ``out=`` where that one takes it), or None
KERNELS = {"masked_grad": _relu_grad_for, "sum": _sum_for}


def for_call(name: str, args, attrs: dict):
    """The compiled kernel that gives kernel ``name``'s bits on these arguments, or None."""
    chooser = KERNELS.get(name)
    return None if chooser is None else chooser(args, attrs)
