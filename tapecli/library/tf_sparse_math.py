"""Arithmetic on tf.sparse.SparseTensor (tf_sparse.py): sums, products with dense matrices, reductions, softmax,
map_values, segment sums over gathered rows, bincount, and tf.nn's embedding lookups of sparse ids, each as
TensorFlow computes it. Where TensorFlow's op has a gradient (SparseAdd, SparseTensorDenseMatMul, SparseReduceSum,
SparseSoftmax, SparseSegmentSum...) the values are composed with differentiable ops (gather, unsorted_segment_sum,
scatter_nd), their positions found by NumPy; the ops it gives none (SparseReduceMax, SparseSparseMaximum, the
sparse outputs of the reductions, bincount) take the values' numbers."""
from __future__ import annotations

import numpy as np

from tapecli import ops
from tapecli.errors import KernelValueError, TdfAssertionError, TdfTypeError, TdfValueError
from tapecli.interpreter.conversions import to_int, truth, type_word
from tapecli.interpreter.printing import python_str
from tapecli.interpreter.registry import builtin
from tapecli.library.core import clip_by_norm, kernel_name, same_dtype, swapped_values, to_axis, to_dtype
from tapecli.library.tf_indexed_slices import IndexedSlices
from tapecli.library.tf_math import convert_to_tensor
from tapecli.library.tf_sparse import (SparseTensor, check_indices, fill_empty_rows, index_text, lex_order, linear, made,
                                       reshape, retain, scalar_of, sparse_input, sparse_tensor, taken)
from tapecli.runtime.limits import admit_result
from tapecli.runtime.values import DType, PythonTuple, Tensor, dtype_name

_FLOATS = ("half", "float", "double")


def grouped(indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of ``indices`` in row-major order, and each row's place among them."""
    order = lex_order(indices)
    ordered = indices[order]
    starts = np.ones(len(indices), dtype=bool)
    starts[1:] = (ordered[1:] != ordered[:-1]).any(axis=1)
    place = np.empty(len(indices), dtype=np.int64)
    place[order] = np.cumsum(starts) - 1
    return ordered[starts], place


def _reduced(ufunc, values: np.ndarray, place: np.ndarray, count: int) -> np.ndarray:
    """``ufunc`` folded over the values of each place (every place has one)."""
    if not count:
        return values[:0]
    order = np.argsort(place, kind="stable")
    return ufunc.reduceat(values[order], np.searchsorted(place[order], np.arange(count)), dtype=values.dtype)


def _numbers(values: Tensor, op: str, allowed: tuple | None = None) -> Tensor:
    """``values``, of a dtype the kernel ``op`` takes (numbers; of ``allowed`` where given)."""
    name = kernel_name(values.dtype)
    if name in ("string", "bool") or allowed is not None and name not in allowed:
        kinds = ", ".join(allowed) if allowed else "numeric types"
        raise KernelValueError(f"Value for attr 'T' of {name} is not in the list of allowed values: {kinds} ({op})")
    return values


def _merged(a: SparseTensor, b: SparseTensor, op: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The union of two sparse tensors' indices (of one dense shape) in row-major order, and the place in it of each
    of a's entries and of b's."""
    same_dtype(b.values, a.values.dtype, op, 4)
    if len(a.dims) != len(b.dims):
        raise KernelValueError(f"Operands do not have the same ranks; got shapes: {index_text(a.dims)} and "
                               f"{index_text(b.dims)}")
    for d, (m, n) in enumerate(zip(a.dims, b.dims)):
        if m != n:
            raise KernelValueError(f"Operands' shapes do not match: got {m} and {n} for dimension {d}")
    indices, place = grouped(np.concatenate([a.index_array, b.index_array]))
    return indices, place[:len(a.index_array)], place[len(a.index_array):]


@builtin("sparse.add")
def add(a, b, threshold=0):
    """Sparse + sparse: a SparseTensor of the union of their entries, a coinciding pair's sum dropped where its
    magnitude is below ``threshold``; sparse + dense: the dense tensor with the values added at their indices."""
    if not (isinstance(a, SparseTensor) or isinstance(b, SparseTensor)):
        raise TdfTypeError("At least one input should be SparseTensor; do you mean to use tf.add()?")
    if isinstance(a, SparseTensor) and isinstance(b, SparseTensor):
        indices, in_a, in_b = _merged(a, b, "SparseAdd")
        _numbers(a.values, "SparseAdd")
        least = float(scalar_of(threshold, a.values.dtype).value)
        place = np.concatenate([in_a, in_b])
        sums = ops.unsorted_segment_sum(ops.concat([a.values, b.values]), Tensor(place), len(indices))
        kept = np.flatnonzero((np.bincount(place, minlength=len(indices)) == 1) | (np.abs(sums.value) >= least))
        return made(indices[kept], taken(sums, kept), a.dims)
    st, dense = (a, b) if isinstance(a, SparseTensor) else (b, a)
    dense = same_dtype(convert_to_tensor(dense), st.values.dtype, "SparseTensorDenseAdd", 3)
    if len(st.dims) != dense.ndim:
        raise KernelValueError(f"Two operands have different ranks; received: {len(st.dims)} and {dense.ndim}")
    for d, (m, n) in enumerate(zip(st.dims, dense.shape)):
        if m != n:
            raise KernelValueError(f"Dimension {d} does not equal (no broadcasting is supported): sparse side {m} "
                                   f"vs dense side {n}")
    idx = st.index_array
    outside = (idx < 0) | (idx >= np.asarray(dense.shape, dtype=np.int64))
    if outside.any():
        i, d = np.unravel_index(int(outside.argmax()), outside.shape)
        raise KernelValueError(f"Sparse tensor has an invalid index on dimension {d}: a_indices({i},{d}) = "
                               f"{idx[i, d]}, dense tensor shape: {dense.shape[d]}")
    return ops.tensor_scatter_nd_add(dense, Tensor(idx), st.values)


@builtin("sparse.sparse_dense_matmul")
def sparse_dense_matmul(sp_a, b, adjoint_a=False, adjoint_b=False, name=None):
    """A sparse matrix times a dense one (either may be the sparse one): each value times its column's row of b,
    summed into its row."""
    adjoint_a, adjoint_b = truth(adjoint_a), truth(adjoint_b)
    if isinstance(b, SparseTensor):         # (a b)' = b' a', as TensorFlow computes it
        flip = adjoint_a == adjoint_b
        return ops.transpose(sparse_dense_matmul(b, sp_a, adjoint_a != flip, adjoint_b != flip))
    st = sparse_input(sp_a)
    b = same_dtype(convert_to_tensor(b), st.values.dtype, "SparseTensorDenseMatMul", 3)
    if b.ndim != 2:
        raise KernelValueError("Tensor 'b' is not a matrix")
    if len(st.dims) != 2:
        raise KernelValueError("Tensor 'a_shape' must have 2 elements")
    row_at, inner_at = (1, 0) if adjoint_a else (0, 1)
    rows, inner = st.dims[row_at], st.dims[inner_at]
    right = ops.transpose(b) if adjoint_b else b
    if right.shape[0] != inner:
        raise KernelValueError(f"Cannot multiply A and B because inner dimension does not match: {inner} vs. "
                               f"{right.shape[0]}.  Did you forget a transpose?  Dimensions of A: [{st.dims[0]}, "
                               f"{st.dims[1]}).  Dimensions of B: {index_text(b.shape)}")   # (TensorFlow's text)
    m, k = st.index_array[:, row_at], st.index_array[:, inner_at]
    bad_k, bad_m = (k < 0) | (k >= inner), (m < 0) | (m >= rows)
    if (bad_k | bad_m).any():
        i = int((bad_k | bad_m).argmax())
        raise KernelValueError(f"k ({k[i]}) from index[{i},{inner_at}] out of bounds (>={inner})" if bad_k[i] else
                               f"m ({m[i]}) from index[{i},{row_at}] out of bounds (>={rows})")
    admit_result((rows, right.shape[1]), b.dtype, "tf.sparse.sparse_dense_matmul's result")
    # (a gather of a copy: SparseTensorDenseMatMul's gradient for b is dense, never tf.gather's IndexedSlices)
    products = ops.mul(ops.gather(ops.identity(right), Tensor(k)), ops.reshape(st.values, (-1, 1)))
    return ops.unsorted_segment_sum(products, Tensor(m), rows)


# ------------------------------------------------------------------ reductions

def _reduction(st: SparseTensor, axis, keepdims) -> tuple[np.ndarray, list]:
    """Each entry's coordinates in the reduced tensor (the reduced dimensions dropped, or 0 with ``keepdims``), and
    its shape."""
    rank = len(st.dims)
    axes = to_axis(axis)
    axes = range(rank) if axes is None else [axes] if isinstance(axes, int) else axes
    for a in axes:
        if not -rank <= a < rank:
            raise KernelValueError(f"Invalid reduction dimension {a}, for input with {rank} dimensions.")
    reduced = {a % rank for a in axes}
    if keepdims:
        coords = st.index_array.copy()
        coords[:, sorted(reduced)] = 0
        return coords, [1 if d in reduced else n for d, n in enumerate(st.dims)]
    kept = [d for d in range(rank) if d not in reduced]
    return st.index_array[:, kept], [st.dims[d] for d in kept]


def _sparse_result(coords: np.ndarray, values: np.ndarray, dims, ufunc) -> SparseTensor:
    """A reduction's SparseTensor: one entry a group of coordinates, ``ufunc`` of its values."""
    groups, place = grouped(coords)
    return made(groups, Tensor(_reduced(ufunc, values, place, len(groups))), dims)


@builtin("sparse.reduce_sum")
def reduce_sum(sp_input, axis=None, keepdims=None, output_is_sparse=False, name=None):
    """The sum over ``axis`` (every one by default) of the dense tensor: a dense tensor (differentiable, as a
    scatter of the values), or with ``output_is_sparse`` the sums of the groups that have entries."""
    st = sparse_input(sp_input)
    values = _numbers(st.values, "SparseReduceSum")
    coords, dims = _reduction(st, axis, truth(keepdims))
    if truth(output_is_sparse):
        return _sparse_result(coords, values.value, dims, np.add)
    if not dims:
        return ops.reduce_sum(values)
    admit_result(dims, values.dtype, "tf.sparse.reduce_sum's result")
    return ops.scatter_nd(Tensor(coords), values, dims)


@builtin("sparse.reduce_max")
def reduce_max(sp_input, axis=None, keepdims=None, output_is_sparse=False, name=None):
    """The largest value of each group of entries along ``axis`` (the implicit zeros not counted; a group without
    entries 0), as SparseReduceMax: TensorFlow gives it no gradient."""
    st = sparse_input(sp_input)
    values = _numbers(st.values, "SparseReduceMax").value
    check_indices(st, ordered=False)
    coords, dims = _reduction(st, axis, truth(keepdims))
    result = _sparse_result(coords, values, dims, np.maximum)
    if truth(output_is_sparse):
        return result
    admit_result(dims, values.dtype, "tf.sparse.reduce_max's result")
    out = np.zeros(dims, dtype=values.dtype)
    out.flat[linear(result.index_array, dims)] = result.values.value
    return Tensor(out)


def _extreme(ufunc, op: str):
    def run(sp_a, sp_b, name=None):
        """The elementwise extreme of two sparse tensors of one dense shape, an absent entry being zero, at the union
        of their indices (TensorFlow gives it no gradient)."""
        a, b = sparse_input(sp_a), sparse_input(sp_b)
        indices, in_a, in_b = _merged(a, b, op)
        both = np.zeros((2, len(indices)), dtype=_numbers(a.values, op).dtype)
        both[0, in_a], both[1, in_b] = a.values.value, b.values.value
        return made(indices, Tensor(ufunc(both[0], both[1])), a.dims)
    run.__name__ = ufunc.__name__
    return run


maximum = builtin("sparse.maximum")(_extreme(np.maximum, "SparseSparseMaximum"))
minimum = builtin("sparse.minimum")(_extreme(np.minimum, "SparseSparseMinimum"))


@builtin("sparse.softmax")
def softmax(sp_input, name=None):
    """The softmax of each innermost row's values, its absent entries left out, as the kernel computes it: the
    values less their row's largest, exponentiated, over their row's sum (differentiable, as SparseSoftmax is)."""
    st = sparse_input(sp_input)
    values = _numbers(st.values, "SparseSoftmax", _FLOATS)
    if len(st.dims) < 2:
        raise KernelValueError(f"Input should have rank >= 2, but received shape: {' '.join(map(str, st.dims))}")
    groups, place = grouped(st.index_array[:, :-1])
    peaks = _reduced(np.maximum, values.value, place, len(groups))
    exps = ops.exp(ops.sub(values, Tensor(peaks[place])))
    sums = ops.unsorted_segment_sum(exps, Tensor(place), len(groups))
    return made(st.index_array, ops.div(exps, taken(sums, place)), st.dims)


@builtin("sparse.map_values", interp=True)
def map_values(interp, op, *args, **kwargs):
    """``op`` of the arguments, each SparseTensor among them (all of one indices and dense shape) replaced by its
    values: a SparseTensor of the result."""
    args, kwargs, found = swapped_values(args, kwargs, SparseTensor, lambda v: v.values)
    if not found:
        raise TdfValueError("No SparseTensor in argument list of map_values")
    first = found[0]
    for st in found[1:]:
        for what, mine, theirs in (("shapes", first.dense_shape, st.dense_shape), ("indices", first.indices,
                                                                                   st.indices)):
            if mine.shape != theirs.shape or np.any(mine.value != theirs.value):
                raise TdfAssertionError(f"Mismatched {what}!\nCondition x == y did not hold.")
    return sparse_tensor(first.indices, interp.call_value(op, args, kwargs), first.dense_shape)


# ------------------------------------------------------------------ segments of gathered rows

def _segments(data: Tensor, indices, segment_ids, num_segments, kind: str) -> Tensor:
    """The rows of ``data`` at ``indices`` summed by their sorted segment ids; ``kind`` "mean" or "sqrt_n" divides
    each segment by its count (or the count's root), as TensorFlow's SparseSegment ops (a gather and a segment sum:
    their gradients)."""
    op = {"sum": "SparseSegmentSum", "mean": "SparseSegmentMean", "sqrt_n": "SparseSegmentSqrtN"}[kind]
    if kind != "sum":
        _numbers(data, op, _FLOATS)
    idx, ids = ops.int_indices(indices, op), ops.int_indices(segment_ids, op)
    if idx.shape != ids.shape:
        raise KernelValueError("segment_ids and indices should have same size.")
    count = (int(ids[-1]) + 1 if len(ids) else 0) if num_segments is None else to_int(num_segments, "num_segments")
    if num_segments is not None and len(ids) and ids.max() >= count:
        raise KernelValueError("segment ids must be < num_segments")
    if np.any(np.diff(ids) < 0):
        raise KernelValueError("segment ids are not increasing")
    if len(ids) and ids[0] < 0:
        raise KernelValueError(f"Segment id {ids[0]} out of range [0, {count}), possibly because 'segment_ids' input "
                               f"is not sorted.")
    outside = (idx < 0) | (idx >= data.shape[0])
    if outside.any():
        i = int(outside.argmax())
        raise KernelValueError(f"Bad: indices[{i}] == {idx[i]} out of range [0, {data.shape[0]})")
    sums = ops.unsorted_segment_sum(ops.gather(data, Tensor(idx)), Tensor(ids), count)
    if kind == "sum":
        return sums
    sizes = np.maximum(np.bincount(ids, minlength=count), 1).astype(data.dtype)
    scale = 1 / (sizes if kind == "mean" else np.sqrt(sizes))      # (the kernel multiplies by its reciprocal)
    return ops.mul(sums, Tensor(scale.reshape((-1,) + (1,) * (data.ndim - 1))))


def _segment_builtin(kind: str):
    def run(data, indices, segment_ids, num_segments=None, name=None, sparse_gradient=False):
        return _segments(convert_to_tensor(data), indices, segment_ids, num_segments, kind)
    run.__name__ = f"segment_{kind}"
    return builtin(f"sparse.segment_{kind}")(run)


segment_sum, segment_mean, segment_sqrt_n = (_segment_builtin(kind) for kind in ("sum", "mean", "sqrt_n"))


@builtin("sparse.bincount")
def bincount(values, weights=None, axis=0, minlength=None, maxlength=None, binary_output=False, name=None):
    """The count (or the weights' sum) of each value, of all the values (``axis`` 0) or of each row (-1), as a
    SparseTensor of the values counted; ``maxlength`` > 0 is the output's length, else the largest value plus one,
    at least ``minlength``."""
    if weights is not None and truth(binary_output):
        raise TdfValueError("Arguments `binary_output` and `weights` are mutually exclusive. Please specify only one.")
    axis = 0 if axis is None else to_int(axis, "axis")
    if axis not in (0, -1):
        raise TdfValueError(f"Unsupported value for argument axis={axis}. Only 0 and -1 are currently supported.")
    if isinstance(values, SparseTensor):
        ids, dims = values.values, values.dims
        rows = values.index_array[:, 0] if len(dims) == 2 else None
        weights = None if weights is None else sparse_input(weights).values
    else:
        t = convert_to_tensor(values)
        ids, dims = ops.reshape(t, (-1,)), t.shape
        rows = np.repeat(np.arange(dims[0]), dims[1]) if len(dims) == 2 else None
        weights = None if weights is None else ops.reshape(convert_to_tensor(weights), (-1,))
    if axis == 0:
        rows = None
    elif len(dims) > 2:
        raise KernelValueError(f"Input must be a 1 or 2-dimensional tensor. Got: {index_text(dims)}")
    _numbers(ids, "DenseCountSparseOutput", ("int32", "int64"))
    counted = ids.value.astype(np.int64)
    if (counted < 0).any():
        raise KernelValueError("Input values must all be non-negative")
    longest = -1 if maxlength is None else to_int(maxlength, "maxlength")
    keep = counted < longest if longest > 0 else np.ones(len(counted), dtype=bool)
    size = longest if longest > 0 else max(int(counted.max(initial=0)) + 1, -1 if minlength is None else
                                           to_int(minlength, "minlength"))
    weight = np.ones(len(counted), dtype=ids.dtype) if weights is None else weights.value
    keys = counted[keep, None] if rows is None else np.stack([rows[keep], counted[keep]], axis=1)
    result = _sparse_result(keys, weight[keep], [size] if rows is None else [dims[0], size], np.add)
    return made(result.index_array, Tensor(np.ones_like(result.values.value)), result.dims) if truth(binary_output) \
        else result


@builtin("sparse.mask")
def mask(a, mask_indices, name=None):
    """The rows of a tf.IndexedSlices whose indices are not in ``mask_indices`` (a gather of its values)."""
    if not getattr(a, "is_indexed_slices", False):
        raise TdfTypeError(f"tf.sparse.mask takes a tf.IndexedSlices, got {type_word(a)}")
    kept = np.flatnonzero(~np.isin(a.indices.value, ops.int_indices(mask_indices, "tf.sparse.mask")))
    return IndexedSlices(ops.gather(a.values, Tensor(kept)), Tensor(a.indices.value[kept]), a.dense_shape)


@builtin("sparse.sampled_addmm")
def sampled_addmm(indices, values, dense_shape, mat1, mat2, beta=1.0, alpha=1.0, output_type=None):
    """mat1 @ mat2 at ``indices`` only (batched over their leading dimensions), times alpha, plus values times beta:
    TensorFlow's composition of gathers and a sum, and so its gradients."""
    dtype = DType("float32" if output_type is None else dtype_name(to_dtype(output_type)))
    indices = convert_to_tensor(indices)
    values, mat1, mat2 = (convert_to_tensor(x, dtype=dtype) for x in (values, mat1, mat2))
    dense_shape = convert_to_tensor(dense_shape, dtype=DType("int32"))
    wanted = Tensor(np.array([mat1.shape[-2], mat2.shape[-1]], dtype=np.int32))
    if dense_shape.shape != wanted.shape or np.any(dense_shape.value != wanted.value):
        raise TdfValueError(f"Dense shape: {python_str(dense_shape)} does not match output shape: "
                            f"{python_str(wanted)}")
    idx = indices.value
    batch = mat1.ndim - 2
    rows = ops.gather_nd(mat1, Tensor(idx[..., :-1]), batch_dims=batch)
    swapped = ops.transpose(mat2, [*range(batch), batch + 1, batch])
    columns = ops.gather_nd(swapped, Tensor(np.concatenate([idx[..., :-2], idx[..., -1:]], axis=-1)),
                            batch_dims=batch)
    dot = ops.reduce_sum(ops.mul(rows, columns), axis=-1)
    return PythonTuple([indices, ops.add(ops.mul(dot, alpha), ops.mul(values, beta)), dense_shape])


# ------------------------------------------------------------------ embedding lookups of sparse ids

_COMBINERS = ("mean", "sqrtn", "sum")


@builtin("embedding_lookup_sparse")
def embedding_lookup_sparse(params, sp_ids, sp_weights, combiner=None, max_norm=None, name=None,
                            allow_fast_lookup=False):
    """Each row (first coordinate) of ``sp_ids`` combined from the rows of ``params`` its ids name, weighted by
    ``sp_weights``: their sum, mean (over the weights' sum) or sum over the root of the weights' squares; a row
    for each first coordinate up to the largest present, as TensorFlow's segment sums."""
    combiner = "mean" if combiner is None else combiner
    if combiner not in _COMBINERS:
        raise TdfValueError(f"combiner must be one of 'mean', 'sqrtn' or 'sum', got {combiner}")
    if not isinstance(sp_ids, SparseTensor):
        raise TdfTypeError(f"sp_ids must be SparseTensor, got {type_word(sp_ids)}")
    if sp_weights is not None and not isinstance(sp_weights, SparseTensor):
        raise TdfTypeError(f"sp_weights must be either None or SparseTensor,got {type_word(sp_weights)}")
    table = ops.concat(params) if isinstance(params, list) else convert_to_tensor(params)   # ("div" partitions)
    segment_ids = sp_ids.index_array[:, 0]
    ids = ops.int_indices(sp_ids.values, "embedding_lookup_sparse")
    if max_norm is None and sp_weights is None:
        return _segments(table, ids, segment_ids, None, {"sqrtn": "sqrt_n"}.get(combiner, combiner))
    rows = ops.gather(table, Tensor(ids))
    if max_norm is not None:
        rows = clip_by_norm(rows, max_norm, axes=list(range(1, rows.ndim)))
    if sp_weights is None:
        return _segments(rows, np.arange(len(ids)), segment_ids, None, {"sqrtn": "sqrt_n"}.get(combiner, combiner))
    count = int(segment_ids[-1]) + 1 if len(segment_ids) else 0
    weights = ops.reshape(ops.cast(sp_weights.values, rows.dtype), (-1,) + (1,) * (rows.ndim - 1))
    sums = ops.unsorted_segment_sum(ops.mul(rows, weights), Tensor(segment_ids), count)
    if combiner == "sum":
        return sums
    weights = weights if combiner == "mean" else ops.square(weights)
    total = ops.unsorted_segment_sum(weights, Tensor(segment_ids), count)
    return ops.divide_no_nan(sums, total if combiner == "mean" else ops.sqrt(total))


@builtin("safe_embedding_lookup_sparse")
def safe_embedding_lookup_sparse(embedding_weights, sparse_ids, sparse_weights=None, combiner="mean",
                                 default_id=None, max_norm=None, name=None, allow_fast_lookup=False):
    """embedding_lookup_sparse over the last dimension of ``sparse_ids`` (the others flattened into rows, restored
    after), its negative ids (and, but for "sum", non-positive weights) left out, a row without ids ``default_id``'s
    embedding or zeros."""
    if embedding_weights is None:
        raise TdfValueError(f"Missing embedding_weights {embedding_weights}.")
    dims = sparse_input(sparse_ids).dims
    ids = reshape(sparse_ids, [int(np.prod(dims[:-1], dtype=np.int64)), dims[-1]])
    weights = None if sparse_weights is None else sparse_tensor(ids.indices, sparse_input(sparse_weights).values,
                                                                ids.dense_shape)
    valid = ids.values.value >= 0
    if weights is not None and combiner != "sum":
        valid &= weights.values.value > 0
    ids, empty = fill_empty_rows(retain(ids, valid), 0 if default_id is None else default_id)
    if weights is not None:
        weights = fill_empty_rows(retain(weights, valid), 1.0)[0]
    result = embedding_lookup_sparse(embedding_weights, ids, weights, combiner, max_norm)
    if default_id is None:
        blank = np.broadcast_to(empty.value.reshape((-1,) + (1,) * (result.ndim - 1)), result.shape)
        result = ops.where(Tensor(blank), ops.zeros_like(result), result)
    return ops.reshape(result, (*dims[:-1], *result.shape[1:]))
