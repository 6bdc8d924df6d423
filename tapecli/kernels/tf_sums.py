"""TensorFlow's float32, float64 and float16 sums and means on the CPU, bit for bit.

TensorFlow's Sum and Mean kernels (tensorflow/core/kernels/reduction_ops_common.h) first simplify the
reduction: dimensions of size 1 are dropped and neighbouring dimensions that are both reduced (or both kept)
are merged, so every reduction is one of

* a full reduction (one dimension, reduced): Eigen's ``FullReducer``;
* the inner dimension of a matrix (``[rows, n]`` over ``n``), or more than three merged dimensions after a
  transpose that puts the reduced ones last: Eigen's ``InnerMostDimReducer`` on each row;
* the outer dimension of a matrix (``[n, columns]`` over ``n``), or the middle one of ``[a, n, c]``:
  Eigen's ``InnerMostDimPreserver`` on packets of 8 outputs, each output outside them one at a time;
* the first and last of three (``[a, b, c]`` over ``a`` and ``c``): one output at a time.

and Mean is that sum divided by the count in the tensor's dtype (``functor::MeanReducer``: a SumReducer, then
``/ static_cast<T>(in.size() / out.size())``). The wheel's Eigen is built for AVX: packets of 8 floats or 4
doubles (``PACKETS``; below, "8" is a float32 packet's size: a float64 packet holds 4).

``InnerMostDimReducer`` of n values at ``first`` (a row's first element in the whole tensor) is a tree:
above 8 * 1024 values it splits at the packet boundary ``8 * ceil((first + ceil(n / 2)) / 8)`` and adds the
halves' sums; a leaf of at most 8192 values keeps four packet accumulators over blocks of 32 values (from
32 values on), adds accumulators 1, 2 and 3 into 0, adds the leaf's remaining whole packets to it, sums the
last ``n % 8`` values one by one from 0, and adds that to the packet's horizontal sum
``((p0 + p4) + (p2 + p6)) + ((p1 + p5) + (p3 + p7))`` (a float64 packet's ``(p0 + p2) + (p1 + p3)``). A float16
packet of 8 adds lane by lane in float32 and rounds each sum to float16, as Eigen's half packets do, its horizontal
sum is float32's rounded once, the scalar path rounds each sum, and a leaf holds at most 200 packets (Eigen's
LeafSize of half): tests/kernels/test_tf_half.py.
``InnerMostDimPreserver`` adds the reduced rows one by one from 0, with four accumulators (rows 4k, 4k+1,
4k+2, 4k+3, then the rest into the first) where 16 rows or more are reduced; an output outside a whole
packet of the output's row takes Eigen's scalar path,
the rows one by one.

A full reduction of ``FULL_THREADED`` values or more is split across TensorFlow's intra-op threads (Eigen's
cost model: ``(1.9375 n - 100000) / 100000 + 0.9`` threads, at most the pool's), whose number depends on the
machine: :func:`reduce_sum` gives None there, and the caller keeps NumPy's sum. (The other reductions split
their outputs between threads, each output computed whole: the same bits on any number of threads.)
A bias's gradient is BiasAddGrad's own kernel (:func:`bias_add_grad`), whose large ones TensorFlow splits by
its pool's threads: there tapecli follows the machine's CPUs as TensorFlow does on it. (AddN's order of its inputs:
numpy_kernels.add_n_order.)
"""
from __future__ import annotations


import os

import numpy as np

_HALF = np.dtype(np.float16)
# values in one of Eigen's AVX packets (a float16 packet of 8 adds in float32 and rounds, lane by lane)
PACKETS = {np.dtype(np.float32): 8, np.dtype(np.float64): 4, _HALF: 8}
# a leaf of InnerMostDimReducer: at most this many packets' values (Eigen's LeafSize: 200 for float16)
LEAF_PACKETS = {np.dtype(np.float32): 1024, np.dtype(np.float64): 1024, _HALF: 200}
# The smallest full reduction that Eigen's cost model gives two threads: 210,000 cycles, at 1.9375 cycles a
# float32 value (4 bytes loaded at 11/64 cycles a byte; the reducer's default functor cost, 10, over a packet
# of 8) and 3.875 a float64 one (measured: TensorFlow 2.21 sums 108,387 float32 values on one thread and
# 108,388 on two)
FULL_THREADED = {np.dtype(np.float32): 108_388, np.dtype(np.float64): 54_194, _HALF: 108_388}
# The most values reduced in TensorFlow's order: above, NumPy's, 2 to 9 times faster there (a large tensor's
# sums are a training step's, not what a program prints: its losses and metrics reduce a batch's values). A
# float32 or float64 reduction over the outer dimension of a matrix or the middle one of three
# (BatchNormalization's moments over [batch, height, width]) keeps TensorFlow's order at any size: NumPy adds
# those rows in order too, at the same cost, and a batch's moments reach what a program prints.
EXACT_MOST = 16_384
# TensorFlow's intra-op threads: by default as many as the CPUs the process may run on
POOL_THREADS = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)



# ------------------------------------------------------------------ InnerMostDimReducer on rows

def _leaf(x):
    """Eigen's leaf of the tree on each row of ``x`` ([rows, n], n at most a leaf): the rows' sums. (NumPy's
    reduction over an axis that is not the last adds slice after slice, and over fewer than 8 values along
    the last adds them one by one: Eigen's orders, checked against TensorFlow's bits.)"""
    rows, n = x.shape
    packet, zero = PACKETS[x.dtype], x.dtype.type(0)
    if n < packet:
        return _in_order(x, zero)
    whole = n - n % packet
    blocks = n - n % (4 * packet)
    if blocks:
        # four packet accumulators over blocks of 32 values, each from 0; then accumulators 1, 2, 3 and the
        # remaining whole packets added into accumulator 0 in order
        p = np.add.reduce(np.add.reduce(x[:, :blocks].reshape(rows, -1, 4, packet), axis=1, initial=zero), axis=1)
        for j in range(blocks, whole, packet):
            p += x[:, j:j + packet]
    else:
        p = np.add.reduce(x[:, :whole].reshape(rows, -1, packet), axis=1, initial=zero)
    total = _predux(p)
    if whole == n:
        return zero + total
    return _in_order(x[:, whole:], zero) + total


def _full(x):
    """_leaf of one row, on the 1-d ``x`` (a packet <= x.size <= a leaf): a scalar of its dtype."""
    return _full_of(x.shape[0], x.dtype)(x)


def _full_of(n, dtype):
    """:func:`_full`'s function of 1-d arrays of ``n`` values of ``dtype`` (its blocks worked out once)."""
    packet, zero = PACKETS[dtype], dtype.type(0)
    whole = n - n % packet
    blocks = n - n % (4 * packet)

    def full(x):
        if blocks:
            p = np.add.reduce(np.add.reduce(x[:blocks].reshape(-1, 4, packet), axis=0, initial=zero), axis=0)
            for j in range(blocks, whole, packet):
                p += x[j:j + packet]
        else:
            p = np.add.reduce(x[:whole].reshape(-1, packet), axis=0, initial=zero)
        total = _predux(p[None])[0]
        if whole == n:
            return zero + total
        return _in_order(x[None, whole:], zero)[0] + total
    return full


def _predux(p):
    """The horizontal sums of packets ``p`` [rows, packet] (Eigen's predux: halves added; a float16 packet's in
    float32, rounded once)."""
    q = p.astype(np.float32) if p.dtype == _HALF else p
    while q.shape[1] > 1:
        q = q[:, :q.shape[1] // 2] + q[:, q.shape[1] // 2:]
    return q[:, 0].astype(p.dtype, copy=False)


def _in_order(x, zero):
    """The rows of ``x`` [rows, n] summed one value after another from ``zero`` (NumPy's reduction along the last
    axis adds float16 values in float32: Eigen's scalar path rounds each sum to float16)."""
    if x.dtype != _HALF:
        return np.add.reduce(x, axis=1, initial=zero)
    acc = np.full(x.shape[0], zero)
    for j in range(x.shape[1]):
        acc = acc + x[:, j]
    return acc


def _split(first, n, leaves, packet, leaf):
    """The tree of InnerMostDimReducer over ``n`` values from ``first``: a leaf's (first, n), or a node's
    (left, right or None); each leaf also listed in ``leaves``."""
    if n <= packet * leaf:
        leaves.append((first, n))
        return first, n
    split = packet * -(-(first + -(-n // 2)) // packet)
    left = min(split - first, n)
    return (_split(first, left, leaves, packet, leaf),
            _split(split, n - left, leaves, packet, leaf) if left < n else None)


def _tree(x, first):
    """InnerMostDimReducer on each row of ``x`` ([rows, n]), the rows starting at ``first`` (mod a packet) in
    the tensor Eigen reads: the rows' sums. The leaves of one length are summed together."""
    rows, n = x.shape
    packet, zero = PACKETS[x.dtype], x.dtype.type(0)
    if n <= packet * LEAF_PACKETS[x.dtype]:
        return _leaf(x)
    leaves: list = []
    root = _split(first, n, leaves, packet, LEAF_PACKETS[x.dtype])
    by_length: dict = {}
    for start, length in leaves:
        by_length.setdefault(length, []).append(start)
    sums = {}
    for length, starts in by_length.items():
        part = np.stack([x[:, s - first:s - first + length] for s in starts], axis=1)      # [rows, k, length]
        got = _leaf(part.reshape(-1, length)).reshape(rows, len(starts))
        for k, s in enumerate(starts):
            sums[s] = got[0, k] if rows == 1 else got[:, k]

    def node(t):
        if isinstance(t[0], tuple):
            out = zero + node(t[0])
            return out if t[1] is None else out + node(t[1])
        return sums[t[0]]
    return np.asarray(node(root), x.dtype).reshape(rows)


def _row_sums(x):
    """Sums of the rows of a C-contiguous [rows, n] array as Eigen's InnerMostDimReducer gives them."""
    rows, n = x.shape
    packet = PACKETS[x.dtype]
    if n <= packet * LEAF_PACKETS[x.dtype] or n % packet == 0:
        return _tree(x, 0)
    # a row's splits depend on where it starts modulo a packet: rows grouped by that
    out = np.empty(rows, x.dtype)
    starts = (np.arange(rows) * n) % packet
    for first in np.unique(starts).tolist():
        which = starts == first
        out[which] = _tree(x[which], first)
    return out


# ------------------------------------------------------------------ InnerMostDimPreserver and the scalar path

def _four_accumulators(x):
    """x [n, ...] (n >= 16) summed over its first axis as InnerMostDimPreserver does: rows 4j + k into
    accumulator k from 0, then accumulators 1, 2, 3 and the last ``n % 4`` rows into accumulator 0 in order."""
    n = x.shape[0]
    unrolled = n - n % 4
    acc = np.add.reduce(x[:unrolled].reshape((-1, 4) + x.shape[1:]), axis=0, initial=x.dtype.type(0))
    if unrolled < n:
        acc = np.concatenate((acc, x[unrolled:]))
    return np.add.reduce(acc, axis=0)


def _columns(x):
    """x [n, c] summed over its first axis as Eigen does: the outputs of whole packets (the first
    ``c - c % 8``) by InnerMostDimPreserver, the others by the scalar path (rows in order from 0)."""
    n, c = x.shape
    packet, zero = PACKETS[x.dtype], x.dtype.type(0)
    if n < 16 or c < packet:
        return np.add.reduce(x, axis=0, initial=zero)
    out = _four_accumulators(x)
    if c % packet == 1:
        # (NumPy sums a single column pairwise: its running sum is in order. Eigen's sums from 0 are never
        # -0, the running sum's only while all values are: the same after adding 0)
        out[-1] = zero + np.add.accumulate(x[:, -1])[-1]
    elif c % packet:
        out[c - c % packet:] = np.add.reduce(x[:, c - c % packet:], axis=0, initial=zero)
    return out


def _middle(x):
    """x [a, n, c] summed over its middle axis as Eigen does: [a, c]. A packet of 8 outputs of the flat
    output takes InnerMostDimPreserver where it lies in one of its rows, the others the scalar path."""
    a, n, c = x.shape
    packet = PACKETS[x.dtype]
    rows = np.moveaxis(x, 1, 0)                                       # [n, a, c]
    seq = np.add.reduce(rows, axis=0, initial=x.dtype.type(0))
    if n < 16 or c < packet:
        return seq
    flat = np.arange(a * c)
    start = flat - flat % packet
    packed = (start + packet <= a * c - (a * c) % packet) & (start % c + packet <= c)
    return np.where(packed.reshape(a, c), _four_accumulators(rows), seq)


# ------------------------------------------------------------------ the reduction, simplified as TensorFlow does

def _simplified(shape, axes):
    """TensorFlow's ReductionHelper::Simplify: (the merged shape, whether its first dimension is reduced)."""
    dims = [(n, i in axes) for i, n in enumerate(shape)]
    while dims and dims[0][0] == 1:
        dims.pop(0)
    if not dims:
        return [], True
    merged = [list(dims[0])]
    for n, reduced in dims[1:]:
        if n == 1:
            reduced = merged[-1][1]
        if reduced == merged[-1][1]:
            merged[-1][0] *= n
        else:
            merged.append([n, reduced])
    return [n for n, _ in merged], merged[0][1]


def full_sum_for_plan(x, mean=False):
    """:func:`reduce_sum`'s function of arrays laid out as ``x`` summed whole (no axis, no kept dimensions) where
    it sums them as one leaf (its common case: a loss's sum or mean), else None."""
    if x.__class__ is not np.ndarray or x.dtype not in PACKETS:
        return None
    size, packet = x.size, PACKETS[x.dtype]
    if not packet <= size <= min(EXACT_MOST, packet * LEAF_PACKETS[x.dtype]) or size >= FULL_THREADED[x.dtype]:
        return None
    full, count = _full_of(size, x.dtype), x.dtype.type(size)
    if mean:
        return lambda x: np.asarray(full(x.reshape(-1)) / count)
    return lambda x: np.asarray(full(x.reshape(-1)))


def reduce_sum(x, axis=None, keepdims=False, mean=False, most=EXACT_MOST):
    """TensorFlow's Sum (Mean with ``mean``) of a float32 or float64 array over ``axis`` (None, an int or a
    tuple), or None where this module does not follow it (another dtype, no elements, more than ``most``
    elements, a full reduction of ``FULL_THREADED`` or more, which TensorFlow splits across threads)."""
    if x.__class__ is not np.ndarray or x.dtype not in PACKETS:
        return None
    size = x.size
    if not 0 < size or axis is None and (size > most or size >= FULL_THREADED[x.dtype]):
        return None
    ndim = x.ndim
    if axis is None:
        packet = PACKETS[x.dtype]
        if size <= packet * LEAF_PACKETS[x.dtype] and not keepdims:
            # (the common case first: a loss's mean)
            if size >= packet:
                out = _full(x.reshape(-1))
            elif size > 1:
                out = _in_order(x.reshape(1, -1), x.dtype.type(0))[0]
            else:
                return x.reshape(()).copy()
            return np.asarray(out / x.dtype.type(size) if mean else out)
        axes = range(ndim)
    else:
        given = [int(a) for a in axis] if axis.__class__ is tuple or axis.__class__ is list else [int(axis)]
        if not all(-ndim <= a < ndim for a in given) or len(set(a % ndim for a in given)) < len(given):
            return None                 # (NumPy's error)
        axes = {a % ndim for a in given}
    out_shape = tuple(1 if i in axes else n for i, n in enumerate(x.shape)) if keepdims \
        else tuple(n for i, n in enumerate(x.shape) if i not in axes)
    if len(axes) == ndim:
        shape, first_reduced = ([size], True) if size > 1 else ([], True)
    else:
        shape, first_reduced = _simplified(x.shape, axes)
    if not shape or (len(shape) == 1 and not first_reduced):
        return x.reshape(out_shape).copy()                # nothing reduced: TensorFlow copies
    if size > most and (x.dtype == _HALF or not (len(shape) == 2 and first_reduced
                                                 or len(shape) == 3 and not first_reduced)):
        return None                 # (NumPy's order: see EXACT_MOST)
    x = np.ascontiguousarray(x).reshape(shape)
    if len(shape) == 1:
        out = _row_sums(x.reshape(1, -1))
    elif len(shape) == 2:
        out = _columns(x) if first_reduced else _row_sums(x)
    elif len(shape) == 3 and first_reduced:
        # [a, b, c] over a and c: each output alone, c outer and a inner, in order
        out = np.add.reduce(x.transpose(2, 0, 1).reshape(-1, shape[1]), axis=0, initial=x.dtype.type(0))
    elif len(shape) == 3:
        out = _middle(x)
    else:
        # more than three: the reduced dimensions moved last (a transpose), then rows
        kept = [i for i in range(len(shape)) if (i % 2 == 0) != first_reduced]
        gone = [i for i in range(len(shape)) if (i % 2 == 0) == first_reduced]
        moved = np.ascontiguousarray(x.transpose(kept + gone))
        out = _row_sums(moved.reshape(int(np.prod([shape[i] for i in kept])), -1))
    if mean:
        out = out / x.dtype.type(size // out.size)
    elif out.base is not None:
        out = out.copy()
    out.shape = out_shape           # (the result its own array, not a view: what kernel traces follow)
    return out


# ------------------------------------------------------------------ BiasAddGrad

def bias_add_grad(g, threads=POOL_THREADS):
    """TensorFlow's BiasAddGrad on the CPU (NHWC): ``g`` [..., c] summed over all but its last axis, as
    ``functor::ReduceOuterDimensions`` (tensorflow/core/kernels/redux_functor.h) sums the rows of ``g`` as
    [rows, c]: each column from 0, the rows in order, in blocks of rows where Eigen's cost model splits the
    work across ``threads`` (:func:`row_ranges`); the blocks' sums then added in order. Float16 and bfloat16
    add in float32 (their AccumulatorType)."""
    c = g.shape[-1]
    rows = np.ascontiguousarray(g).reshape(-1, c)
    if rows.shape[0] == 1:
        return rows[0].copy()
    accumulated = np.float32 if g.dtype.itemsize == 2 else g.dtype        # (float16, bfloat16: float32)
    if rows.shape[0] == 0:
        return np.zeros(c, g.dtype)
    ranges = row_ranges(rows.shape[0], c, np.dtype(g.dtype).itemsize, threads)
    out = _rows_in_order(rows[ranges[0][0]:ranges[0][1]], accumulated)
    for start, stop in ranges[1:]:
        out = out + _rows_in_order(rows[start:stop], accumulated)
    return out.astype(g.dtype, copy=False)


def _bias_add_grad_for_plan(g, threads=POOL_THREADS):
    """bias_add_grad's function for gradients laid out as ``g`` (kernels.for_plan): where it sums the rows of a
    C-contiguous ``g`` of a dtype it adds in, in one range, as :func:`_rows_in_order` sums two or more columns; else
    None."""
    if g.__class__ is not np.ndarray or g.ndim < 2 or not g.flags.c_contiguous or g.dtype.itemsize == 2:
        return None
    c = g.shape[-1]
    rows = g.size // c if c else 0
    if rows < 2 or c < 2 or len(row_ranges(rows, c, g.dtype.itemsize, threads)) != 1:
        return None
    dtype, zero = g.dtype, g.dtype.type(0)
    return lambda g: np.add.reduce(g.reshape(-1, c), axis=0, dtype=dtype, initial=zero)


bias_add_grad.for_plan = _bias_add_grad_for_plan


def _rows_in_order(rows, dtype):
    """The rows' sum from 0, one row after another (NumPy's reduction over the leading axis of a C-contiguous
    array; of a single column, which NumPy would sum pairwise, the running sum)."""
    zero = np.dtype(dtype).type(0)
    if rows.shape[1] == 1:
        return zero + np.add.accumulate(rows[:, 0], dtype=dtype)[-1:]     # (0 + -0 is +0, as TensorFlow's from 0)
    return np.add.reduce(rows, axis=0, dtype=dtype, initial=zero)


def row_ranges(outer, inner, itemsize, threads):
    """The ranges of rows ReduceOuterDimensions sums apart: one, unless Eigen's cost model gives its
    ``parallelFor`` more than a thread over the blocks of rows (columns spread over the threads instead, above
    32 a thread, keep every column's rows in order)."""
    if threads == 1 or inner > threads * 32:
        return [(0, outer)]
    min_block_rows = -(-2000 // inner)
    blocks = min(outer, -(-(outer * inner) // min_block_rows), threads)
    block_rows = -(-outer // blocks)
    block_cost = block_rows * inner * (itemsize * 11 / 64 + 1)      # bytes loaded at 11/64 cycles, one add each
    if blocks <= 1 or min(threads, max(1, int((blocks * block_cost - 100_000) / 100_000 + 0.9))) == 1:
        return [(0, outer)]
    step = parallel_for_block(blocks, block_cost, threads)
    return [(b * block_rows, min(outer, (b + step) * block_rows)) for b in range(0, blocks, step)]


def parallel_for_block(n, cost, threads):
    """Eigen's ThreadPoolDevice::CalculateParallelForBlock: the blocks of ``n`` one task takes."""
    size = min(n, max(-(-n // (4 * threads)), int(40_000 / cost)))
    largest = min(n, 2 * size)
    count = -(-n // size)
    efficiency = count / (-(-count // threads) * threads)
    previous = count
    while efficiency < 1.0 and previous > 1:
        coarser = -(-n // (previous - 1))
        if coarser > largest:
            break
        previous = -(-n // coarser)
        coarser_efficiency = previous / (-(-previous // threads) * threads)
        if coarser_efficiency + 0.01 >= efficiency:
            size = coarser
            efficiency = max(efficiency, coarser_efficiency)
    return size

