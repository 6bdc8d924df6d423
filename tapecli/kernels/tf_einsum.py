"""TensorFlow's Einsum on the CPU, step by step (tensorflow/core/kernels/linalg/einsum_op_impl.h; float32's
_MklEinsum is the same but for its product, oneDNN's matmul primitive), and opt_einsum's greedy contraction
order, which tf.einsum follows for three operands or more (a chain of two-operand Einsums).

An Einsum of one or two operands sorts each label into a type: broadcasting (the axes ``...`` stands for), batch
(in both operands and the output), free (in one operand and the output), contract (in both, not the output) or
reduce (in one operand only). Each operand is transposed to [broadcasting, batch, free, contract, reduce], the
labels of one type in the order they first appear in the equation, unless it already lies as [broadcasting,
batch, contract, free, reduce] (then it is handed to the product transposed instead); its reduce axes are summed
as the rows of a matrix (Eigen's InnerMostDimReducer: tf_sums.row_sums). The two are then one batched product
([batch, free, contract] times the other's transpose), reshaped and transposed to the output's order."""
from __future__ import annotations

import heapq
import itertools
import math

import numpy as np

BROADCAST, BATCH, FREE, CONTRACT, REDUCE = range(5)
# the order in which an operand may already lie to go to the product transposed: contract before free
_SWAPPED = {BROADCAST: 0, BATCH: 1, CONTRACT: 2, FREE: 3, REDUCE: 4}
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
# the most batches times depth of float64 matrix-vector products taken one batch at a time (Eigen's gemv, a
# Python loop over k in each: about a quarter of a second at this size); beyond it NumPy's batched product, not
# TensorFlow's bits
_LOOPED_PRODUCTS_LIMIT = 1 << 17


def einsum(*xs, ins, out, spread=""):
    """The Einsum ``ins -> out`` of one or two arrays without repeated labels; ``spread``: the labels an
    ellipsis stands for, in its axes' order."""
    if not all(x.dtype in _FLOATS for x in xs) or any(x.size == 0 for x in xs):
        return np.asarray(np.einsum(",".join(ins) + "->" + out, *xs))
    number = {c: k for k, c in enumerate(dict.fromkeys("".join(ins) + out))}
    for k, c in enumerate(spread):
        number[c] = len(number) + k
    types = {c: _label_type(c, ins, out, spread) for c in number}
    parts = [_reduced(x, spec, types, number) for x, spec in zip(xs, ins)]
    if len(parts) == 1:
        y, labels, _ = parts[0]
    else:
        (a, a_labels, a_swapped), (b, b_labels, b_swapped) = parts
        y = _product(a.swapaxes(-1, -2) if a_swapped else a, b if b_swapped else b.swapaxes(-1, -2))
        shared = [c for c in sorted(number, key=number.get) if types[c] in (BROADCAST, BATCH)
                  and (c in a_labels or c in b_labels)]
        labels = shared + [c for c in a_labels + b_labels if types[c] == FREE]
    sizes = {c: n for x, spec in zip(xs, ins) for c, n in zip(spec, x.shape)}
    y = y.reshape(y.shape[:-2] + tuple(sizes[c] for c in labels if types[c] == FREE))
    perm = [labels.index(c) for c in out]
    return np.transpose(y, perm).copy() if perm != sorted(perm) else y


def _label_type(c, ins, out, spread):
    if c in spread and c in out:
        return BROADCAST
    unique = len(ins) == 1 or c not in ins[0] or c not in ins[1]
    if c in out:
        return FREE if unique else BATCH
    return REDUCE if unique else CONTRACT


def _reduced(x, spec, types, number):
    """One operand as [broadcasting and batch axes..., free, contract] (or [..., contract, free] where it lay
    so: the flag), its reduce axes summed; and its labels in that order."""
    swapped = all((_SWAPPED[types[a]], number[a]) <= (_SWAPPED[types[b]], number[b]) for a, b in zip(spec, spec[1:]))
    labels = list(spec)
    if not swapped:
        perm = sorted(range(len(spec)), key=lambda i: (types[spec[i]], number[spec[i]]))
        labels = [spec[i] for i in perm]
        if perm != sorted(perm):
            x = np.transpose(x, perm).copy()            # (TensorFlow's Transpose: a copy)
    size = {t: math.prod(n for c, n in zip(labels, x.shape) if types[c] == t) for t in (FREE, CONTRACT, REDUCE)}
    batch = tuple(n for c, n in zip(labels, x.shape) if types[c] in (BROADCAST, BATCH))
    matrix = (size[CONTRACT], size[FREE]) if swapped else (size[FREE], size[CONTRACT])
    if size[REDUCE] > 1:
        x = _in_order(np.ascontiguousarray(x).reshape(-1, size[REDUCE]))
    return x.reshape(batch + matrix), [c for c in labels if types[c] != REDUCE], swapped


def _in_order(rows):
    """The sums of the rows of ``rows``, each value added in turn from zero (the Einsum's reduction is Eigen's scalar
    path: measured, unlike Sum's packets)."""
    zero = rows.dtype.type(0)
    if rows.shape[0] == 1:          # (NumPy sums one row pairwise: its running sum is in order)
        return zero + np.add.accumulate(rows[0])[-1:]
    return np.add.reduce(np.ascontiguousarray(rows.T), axis=0, initial=zero)


def _product(a, b):
    """The batched product of TensorFlow's Einsum: float32's oneDNN matmul primitive (BatchMatMul's, on any rank),
    float64's Eigen product of each batch's matrices."""
    from tapecli.kernels import blas, numpy_kernels, tf_matmul     # (imported on first use, as numpy_kernels does)
    if a.dtype == np.float32:
        lead = 1 if a.ndim == 2 and b.ndim == 2 else 0
        y = numpy_kernels.matmul(a.reshape((1,) * lead + a.shape), b.reshape((1,) * lead + b.shape))
        return y.reshape(y.shape[lead:])
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a, b = np.broadcast_to(a, batch + a.shape[-2:]), np.broadcast_to(b, batch + b.shape[-2:])
    if not batch:
        return numpy_kernels.matmul(a, b)
    (m, k), n = a.shape[-2:], b.shape[-1]
    if not tf_matmul.takes_double(a[(0,) * len(batch)], b[(0,) * len(batch)]):
        return blas.matmul(a, b)                    # (each batch's product NumPy's, as a 2-D one's)
    if tf_matmul.in_order_double(m, n, k):
        return tf_matmul.in_order_products(a, b)
    if math.prod(batch) * k > _LOOPED_PRODUCTS_LIMIT:
        return blas.matmul(a, b)
    return np.stack([tf_matmul.matmul_double(a[i], b[i]) for i in np.ndindex(batch)]).reshape(batch + (m, n))


# ------------------------------------------------------------------ opt_einsum's greedy order

def contraction_order(ins, out, sizes):
    """opt_einsum's ``contract_path(optimize="greedy")`` as tf.einsum takes it: for each step, the positions
    of the operands taken (popped from the list in that order, the result appended) and the step's
    (subscripts, output)."""
    path = _linear(_greedy([frozenset(s) for s in ins], frozenset(out), sizes))
    sets, terms, steps = [set(s) for s in ins], list(ins), []
    for n, taken in enumerate(path):
        taken = tuple(sorted(taken, reverse=True))
        kept = set(out).union(*(s for k, s in enumerate(sets) if k not in taken))
        result = kept & set().union(*(sets[k] for k in taken))
        step_ins = [terms.pop(k) for k in taken]
        for k in taken:
            sets.pop(k)
        if n == len(path) - 1:
            step_out = out
        else:                                # (tensordot's order: fewer transposes)
            joined = "".join(step_ins)
            step_out = "".join(sorted(result, key=joined.find))
        sets.append(set(step_out))
        terms.append(step_out)
        steps.append((taken, step_ins, step_out))
    return steps


def _size(labels, sizes):
    return math.prod(sizes[c] for c in labels)


def _greedy(inputs, output, sizes):
    """opt_einsum's ssa_greedy_optimize with its default cost (the memory removed): pairs of identical label sets
    first, then the cheapest contraction of two operands sharing a label, then outer products, smallest first."""
    output = output | frozenset.intersection(*inputs)
    remaining, ssa_ids, ssa_path = {}, itertools.count(len(inputs)), []
    for ssa_id, key in enumerate(inputs):
        if key in remaining:
            ssa_path.append((remaining[key], ssa_id))
            remaining[key] = next(ssa_ids)
        else:
            remaining[key] = ssa_id
    dim_to_keys: dict = {}
    for key in remaining:
        for dim in key - output:
            dim_to_keys.setdefault(dim, set()).add(key)
    shared = {count: {d for d, keys in dim_to_keys.items() if len(keys) >= count} - output for count in (2, 3)}
    footprints = {key: _size(key, sizes) for key in remaining}

    def candidate(k1, k2):
        either, two = k1 | k2, k1 & k2
        k12 = (either & output) | (two & shared[3]) | ((either - two) & shared[2])
        cost = _size(k12, sizes) - footprints[k1] - footprints[k2]
        id1, id2 = remaining[k1], remaining[k2]
        if id1 > id2:
            k1, id1, k2, id2 = k2, id2, k1, id1
        return (cost, id2, id1), k1, k2, k12

    queue: list = []
    for keys in dim_to_keys.values():
        ordered = sorted(keys, key=remaining.__getitem__)
        for i, k1 in enumerate(ordered[:-1]):
            heapq.heappush(queue, min(candidate(k1, k2) for k2 in ordered[i + 1:]))
    while queue:
        _, k1, k2, k12 = heapq.heappop(queue)
        if k1 not in remaining or k2 not in remaining:
            continue
        ssa_path.append((remaining.pop(k1), remaining.pop(k2)))
        for key in (k1, k2):
            for dim in key - output:
                dim_to_keys[dim].remove(key)
        if k12 in remaining:
            ssa_path.append((remaining[k12], next(ssa_ids)))
        else:
            for dim in k12 - output:
                dim_to_keys[dim].add(k12)
        remaining[k12] = next(ssa_ids)
        for dim in k1 | k2 - output:
            count = len(dim_to_keys.get(dim, ()))
            (shared[2].add if count >= 2 else shared[2].discard)(dim)
            (shared[3].add if count >= 3 else shared[3].discard)(dim)
        footprints[k12] = _size(k12, sizes)
        others = {k for dim in k12 for k in dim_to_keys.get(dim, ())} - {k12}
        if others:
            heapq.heappush(queue, min(candidate(k12, k2) for k2 in others))
    final = [(_size(key & output, sizes), ssa_id, key) for key, ssa_id in remaining.items()]
    heapq.heapify(final)
    _, id1, k1 = heapq.heappop(final)
    while final:
        _, id2, k2 = heapq.heappop(final)
        ssa_path.append((min(id1, id2), max(id1, id2)))
        k12 = (k1 | k2) & output
        _, id1, k1 = heapq.heappushpop(final, (_size(k12, sizes), next(ssa_ids), k12))
    return ssa_path


def _linear(ssa_path):
    """opt_einsum's ssa_to_linear: each step's operands as positions in the list that steps pop and append to."""
    ids = list(range(1 + max(map(max, ssa_path))))
    path = []
    for step in ssa_path:
        path.append(tuple(ids[k] for k in step))
        for k in step:
            ids[k:] = [i - 1 for i in ids[k:]]
    return path
