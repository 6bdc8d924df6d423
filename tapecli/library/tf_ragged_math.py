"""TensorFlow's functions that take a tf.RaggedTensor (tf_ragged.py) in place of a tensor, as its dispatch_for_api
handlers compute them: elementwise ops on the flat values (a dense operand broadcast to them), reductions
(ragged_math_ops.ragged_reduce_aggregate: a ragged dimension reduced by an unsorted segment op), concat, stack,
gather, tile, size, rank, where and expand_dims. Each is registered in registry.DISPATCH for the builtins it
stands in for, which the registry asks before calling one; every op here is composed of ops whose gradients
reach the flat values."""
from __future__ import annotations

import numpy as np

from tapecli import ops
from tapecli.errors import KernelValueError, TdfValueError
from tapecli.interpreter.conversions import to_int, truth
from tapecli.interpreter.registry import BUILTINS, DISPATCH, after_load, call_builtin, signature
from tapecli.library import tf_nn, tf_segments
from tapecli.library.core import to_axis, to_dtype, to_shape
from tapecli.library.tf_math import convert_to_tensor
from tapecli.library.tf_ragged import (RaggedTensor, aligned, from_row_splits, from_tensor, lengths_of, merge_dims,
                                       rowids_of, spans, splits_of, take)
from tapecli.runtime.values import PythonTuple, Tensor

INT64 = np.dtype(np.int64)


def _arguments(f, args, kwargs) -> dict:
    """The call's arguments by parameter name (the builtin's own signature, without the interpreter)."""
    names = [n for n in signature(f).parameters][1 if f.wants_interp else 0:]
    found = dict(zip(names, args))
    found.update(kwargs)
    return found


def _any_ragged(values) -> bool:
    return any(isinstance(v, RaggedTensor) for v in values)


# ------------------------------------------------------------------ elementwise

def _unary(f, interp, node, args, kwargs):
    """An op of one tensor (and attributes: a dtype, a position): the op of the flat values, the same partition."""
    bound = _arguments(f, args, kwargs)
    first = next(iter(bound), None)
    rt = bound.get(first)
    if not isinstance(rt, RaggedTensor) or _any_ragged(v for k, v in bound.items() if k != first):
        return NotImplemented
    bound[first] = rt.flat_values
    return rt.with_flat_values(call_builtin(f, interp, node, [], bound))


def _binary(f, interp, node, args, kwargs):
    """An op of two tensors, one of them ragged: the op of the flat operands (tf_ragged.aligned)."""
    bound = _arguments(f, args, kwargs)
    names = list(bound)[:2]
    if len(names) < 2 or not _any_ragged(bound[n] for n in names):
        return NotImplemented
    rt, bound[names[0]], bound[names[1]] = aligned(bound[names[0]], bound[names[1]])
    return rt.with_flat_values(call_builtin(f, interp, node, [], bound))


def _n_ary(f, interp, node, args, kwargs):
    """An op of a list of tensors (tf.strings.join's), some ragged (of one partition): the op of their flat values,
    the dense ones broadcast to them."""
    bound = _arguments(f, args, kwargs)
    first = next(iter(bound), None)
    items = bound.get(first)
    if not isinstance(items, (list, tuple)) or not _any_ragged(items):
        return NotImplemented
    rt = next(v for v in items if isinstance(v, RaggedTensor))
    bound[first] = [aligned(rt, v)[2] for v in items]
    return rt.with_flat_values(call_builtin(f, interp, node, [], bound))


def _lookup(f, interp, node, args, kwargs):
    """tf.nn.embedding_lookup of ragged ids: the rows of the flat ids, under their partition."""
    bound = _arguments(f, args, kwargs)
    ids = bound.get("ids")
    if not isinstance(ids, RaggedTensor) or isinstance(bound.get("params"), RaggedTensor):
        return NotImplemented
    bound["ids"] = ids.flat_values
    return ids.with_flat_values(call_builtin(f, interp, node, [], bound))


_UNARY = ("abs", "negative", "square", "sqrt", "rsqrt", "exp", "expm1", "log", "log1p", "sin", "cos", "tan", "asin",
          "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "sigmoid", "sign", "floor", "ceil", "rint",
          "reciprocal", "reciprocal_no_nan", "erf", "erfc", "lgamma", "digamma", "softplus", "softsign", "relu",
          "relu6", "elu", "selu", "gelu", "leaky_relu", "silu", "swish", "log_sigmoid", "is_nan", "is_inf",
          "is_finite", "logical_not", "cast", "saturate_cast", "identity", "zeros_like", "ones_like", "stop_gradient",
          "clip_by_value", "bitwise.invert", "strings.length", "strings.lower", "strings.upper", "strings.strip",
          "strings.substr", "strings.regex_replace", "strings.regex_full_match", "strings.to_number", "as_string",
          "strings.as_string", "strings.to_hash_bucket_fast", "strings.to_hash_bucket", "strings.to_hash_bucket_strong",
          "strings.unicode_transcode")
_BINARY = ("add", "subtract", "multiply", "divide", "truediv", "floordiv", "floormod", "mod", "pow", "maximum",
           "minimum", "squared_difference", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
           "logical_and", "logical_or", "logical_xor", "atan2", "divide_no_nan", "xdivy", "xlogy",
           "bitwise.bitwise_and", "bitwise.bitwise_or", "bitwise.bitwise_xor", "bitwise.left_shift",
           "bitwise.right_shift")


# ------------------------------------------------------------------ reductions

def _dense(f):
    return lambda x, axis, keepdims: f(x, axis=axis, keepdims=keepdims)


# Each reduction's dense op (the flat values' inner dimensions, every axis) and its unsorted segment op, which
# reduces a ragged dimension (ragged_math_ops.py's pairs); tf_strings.py adds reduce_join's (reductions()).
KINDS = {"reduce_sum": (_dense(ops.reduce_sum), tf_nn.unsorted_segment_sum),
         "reduce_prod": (_dense(ops.reduce_prod), tf_segments.unsorted_segment_prod),
         "reduce_min": (_dense(ops.reduce_min), tf_segments.unsorted_segment_min),
         "reduce_max": (_dense(ops.reduce_max), tf_segments.unsorted_segment_max)}


def reductions(name: str, dense, segment) -> None:
    """Registers a reduction of another family (its dense op and its segment op) for ragged tensors."""
    KINDS[name] = (dense, segment)


def _reduction(name: str):
    def handler(f, interp, node, args, kwargs):
        bound = _arguments(f, args, kwargs)
        rt = bound.get(next(iter(signature(f).parameters)))
        if not isinstance(rt, RaggedTensor):
            return NotImplemented
        extra = {"separator": bound["separator"]} if "separator" in bound else {}
        return reduced(name, rt, to_axis(bound.get("axis")), truth(bound.get("keepdims", False)), extra)
    return handler


def reduced(name: str, rt, axis, keepdims: bool, extra: dict):
    """ragged_math_ops.py's reduce_* of ``rt`` along ``axis``: a mean the sum over the count (an integer one's
    float64, as truediv's), a variance and deviation of means, any and all of integer sums and products."""
    if name == "reduce_mean":
        total = reduced("reduce_sum", rt, axis, keepdims, {})
        count = reduced("reduce_sum", rt.with_flat_values(ops.ones_like(rt.flat_values)), axis, keepdims, {})
        return _flat(ops.div, total, count)
    if name in ("reduce_variance", "reduce_std"):
        mean = reduced("reduce_mean", rt, axis, keepdims, {})
        squares = reduced("reduce_mean", rt.with_flat_values(ops.square(rt.flat_values)), axis, keepdims, {})
        variance = _flat(lambda a, b: ops.maximum(ops.sub(a, ops.square(b)), ops.zeros_like(a)), squares, mean)
        return variance if name == "reduce_variance" else _flat(lambda v, _: ops.sqrt(v), variance, variance)
    if name in ("reduce_any", "reduce_all"):
        ints = rt.with_flat_values(ops.cast(rt.flat_values, np.int32))
        counted = reduced("reduce_sum" if name == "reduce_any" else "reduce_prod", ints, axis, keepdims, {})
        return _flat(lambda a, _: ops.cast(a, np.bool_), counted, counted)
    return _aggregate(KINDS[name], rt, axis, keepdims, extra)


def _flat(fn, a, b):
    """``fn`` of two results of one partition (their flat values, if ragged), as a result of that partition."""
    if isinstance(a, RaggedTensor):
        return a.with_flat_values(fn(a.flat_values, b.flat_values))
    return fn(a, b)


def _aggregate(kind, rt, axis, keepdims, extra):
    dense, _ = kind
    if not isinstance(rt, RaggedTensor):
        return dense(rt, axis, keepdims, **extra)
    if axis is None:
        result = dense(rt.flat_values, None, keepdims, **extra)
        return ops.reshape(result, (1,) * rt.rank) if keepdims else result
    if isinstance(axis, tuple):
        for a in sorted((a + rt.rank if a < 0 else a for a in axis), reverse=True):
            rt = _aggregate(kind, rt, a, keepdims, extra)
        return rt
    at = axis + rt.rank if axis < 0 else axis
    if not 0 <= at < rt.rank:
        raise TdfValueError(f"axis={axis} out of bounds: expected {-rt.rank}<=axis<{rt.rank}")
    if at > 1:
        return rt.with_values(_aggregate(kind, rt.values, at - 1, keepdims, extra))
    s = rt.splits[0]
    if at == 0:
        lengths = lengths_of(s)
        ids, count = spans(np.zeros_like(lengths), lengths), int(lengths.max()) if len(lengths) else 0
    else:
        ids, count = rowids_of(s), rt.nrows
    result = _segment(kind, rt.values, ids, count, extra)
    if keepdims:
        if isinstance(result, RaggedTensor):
            raise TdfValueError("tapecli keeps the reduced dimension of a dense result only (keepdims=True)")
        result = ops.reshape(result, (*result.shape[:at], 1, *result.shape[at:]))
    return result


def _segment(kind, data, ids: np.ndarray, count: int, extra: dict):
    """ragged_math_ops._ragged_segment_aggregate: the rows of ``data`` combined by segment; a ragged row's values
    combined position by position (its segment as long as its longest row)."""
    if not isinstance(data, RaggedTensor):
        return kind[1](data, Tensor(ids), Tensor(np.array(count)), **extra)
    lengths = lengths_of(data.splits[0])
    longest = np.zeros(count, dtype=INT64)
    np.maximum.at(longest, ids, lengths)
    splits = splits_of(longest)
    starts = splits[ids]
    values = _segment(kind, data.values, spans(starts, starts + lengths), int(splits[-1]), extra)
    return from_row_splits(values, splits, "RaggedSegment")


# ------------------------------------------------------------------ joining and gathering

def _ragged_of(value, rank: int) -> RaggedTensor:
    """An input of concat or stack as a ragged tensor of ``rank`` ragged dimensions (a dense one's uniform)."""
    if isinstance(value, RaggedTensor):
        if value.ragged_rank != rank:
            raise TdfValueError(f"tapecli joins ragged tensors of one ragged rank, got {value.ragged_rank} and {rank}")
        return value
    return from_tensor(value, ragged_rank=rank)


def _inputs(values) -> list:
    return [v if isinstance(v, RaggedTensor) else convert_to_tensor(v) for v in values]


def _rank(v) -> int:
    return v.rank if isinstance(v, RaggedTensor) else v.ndim


def rows_joined(values: list) -> RaggedTensor:
    """The rows of ragged tensors of one ragged rank one after the other (concat along axis 0)."""
    levels = []
    for level in range(values[0].ragged_rank):
        offset, parts = 0, []
        for i, v in enumerate(values):
            parts.append(v.splits[level][1 if i else 0:] + offset)
            offset += int(v.splits[level][-1])
        levels.append(np.concatenate(parts))
    uniform = [values[0].uniform[k] if k and all(v.uniform[k] == values[0].uniform[k] for v in values) else None
               for k in range(values[0].ragged_rank)]
    return RaggedTensor(ops.concat([v.flat_values for v in values], 0), levels, uniform)


def concatenated(values: list, axis: int):
    """tf.concat of ragged tensors (ragged_concat_ops.concat): rows after rows (axis 0), each row's values after
    its values (axis 1), or the values joined deeper."""
    values = _inputs(values)
    rank = _rank(values[0])
    if any(_rank(v) != rank for v in values):
        raise TdfValueError("Rank mismatch: all inputs of tf.concat must have one rank")
    at = axis + rank if axis < 0 else axis
    if not 0 <= at < rank:
        raise TdfValueError(f"axis={axis} out of bounds: expected {-rank}<=axis<{rank}")
    if len(values) == 1:
        return values[0]
    ragged = max(v.ragged_rank for v in values if isinstance(v, RaggedTensor))
    values = [_ragged_of(v, ragged) for v in values]
    if at == 0:
        return rows_joined(values)
    if at == 1:
        return merge_dims(stacked(values, 1), 1, 2)
    _same_rows(values)
    return values[0].with_values(concatenated([v.values for v in values], at - 1))


def _same_rows(values: list) -> None:
    if any(not np.array_equal(v.splits[0], values[0].splits[0]) for v in values):
        raise KernelValueError("Input tensors at index 0 (=x) and 1 (=y) have incompatible shapes.\n"
                               "Condition x == y did not hold.")


def stacked(values: list, axis: int):
    """tf.stack / tf.ragged.stack (ragged_concat_ops.stack): each input a row (axis 0), the inputs' rows side by
    side (axis 1), or the values stacked deeper. Dense inputs alone make one ragged dimension of their rows."""
    values = _inputs(values)
    rank = _rank(values[0])
    if any(_rank(v) != rank for v in values):
        raise TdfValueError("Rank mismatch: all inputs of tf.ragged.stack must have one rank")
    at = axis + rank + 1 if axis < 0 else axis
    if not 0 <= at <= rank:
        raise TdfValueError(f"axis={axis} out of bounds: expected {-rank - 1}<=axis<{rank + 1}")
    ragged = max((v.ragged_rank for v in values if isinstance(v, RaggedTensor)), default=0)
    if ragged == 0:             # dense rows: each input a row of its first dimension's length
        joined = ops.concat(values, 0) if at == 0 else None
        if at == 0:
            return from_row_splits(joined, splits_of([v.shape[0] for v in values]), "stack")
        values = [_ragged_of(v, 1) for v in values] if rank > 1 else values
    else:
        values = [_ragged_of(v, ragged) for v in values]
    if at == 0:
        joined = rows_joined(values)
        return from_row_splits(joined, splits_of([v.nrows for v in values]), "stack")
    count = values[0].nrows if isinstance(values[0], RaggedTensor) else values[0].shape[0]
    if at == 1:
        if any((v.nrows if isinstance(v, RaggedTensor) else v.shape[0]) != count for v in values):
            raise KernelValueError("Input tensors have incompatible shapes: their first dimensions differ")
        joined = rows_joined(values) if isinstance(values[0], RaggedTensor) else ops.concat(values, 0)
        order = (np.arange(len(values), dtype=INT64) * count + np.arange(count, dtype=INT64)[:, None]).reshape(-1)
        return from_row_splits(take(joined, order), np.arange(count + 1, dtype=INT64) * len(values), "stack")
    _same_rows(values)
    return values[0].with_values(stacked([v.values for v in values], at - 1))


def _joining(join):
    """tf.concat's or tf.stack's handler: ``join`` of a list holding a ragged tensor."""
    def handler(f, interp, node, args, kwargs):
        bound = _arguments(f, args, kwargs)
        items = next(iter(bound.values()), None)
        if not isinstance(items, (list, tuple)) or not _any_ragged(items):
            return NotImplemented
        return join(list(items), to_int(bound.get("axis", 0), "axis"))
    return handler


def _gather(f, interp, node, args, kwargs):
    """tf.gather of a ragged tensor's rows (indices of any shape: its dimensions become ragged ones), or of a
    tensor by ragged indices (their partition)."""
    bound = _arguments(f, args, kwargs)
    params, indices = bound.get("params"), bound.get("indices")
    if not _any_ragged((params, indices)):
        return NotImplemented
    if bound.get("axis") not in (None, 0) and to_int(bound["axis"], "axis") != 0 or \
            to_int(bound.get("batch_dims", 0), "batch_dims"):
        raise TdfValueError("tapecli gathers the rows of a ragged tensor (axis=0, batch_dims=0)")
    if isinstance(indices, RaggedTensor):
        return indices.with_flat_values(_gathered(params, indices.flat_values))
    return _gathered(params, indices)


def _gathered(params, indices):
    if not isinstance(params, RaggedTensor):
        return tf_nn.gather(params, indices)
    idx = ops.int_indices(indices, "gather")
    if ((idx < -params.nrows) | (idx >= params.nrows)).any():
        raise KernelValueError(f"indices = {idx.reshape(-1).tolist()} is not in [0, {params.nrows})")
    result = params.take_rows(idx.reshape(-1) % max(params.nrows, 1))
    for width in reversed(idx.shape[1:]):
        result = from_row_splits(result, np.arange(result.nrows // width + 1, dtype=INT64) * width, "gather")
    return result


def _tile(f, interp, node, args, kwargs):
    """tf.tile of a ragged tensor of ragged rank 1: each row repeated within itself, then the rows repeated."""
    bound = _arguments(f, args, kwargs)
    rt = bound.get("input")
    if not isinstance(rt, RaggedTensor):
        return NotImplemented
    multiples = to_shape(bound["multiples"])
    if len(multiples) != rt.rank:
        raise KernelValueError(f"Expected multiples argument to be a vector of length {rt.rank} but got length "
                               f"{len(multiples)}")
    if rt.ragged_rank != 1:
        raise TdfValueError("tapecli tiles ragged tensors of ragged rank 1")
    s, across, inner = rt.splits[0], multiples[1], multiples[2:]
    rows = np.repeat(np.arange(rt.nrows, dtype=INT64), across)
    values = take(rt.flat_values, spans(s[rows], s[rows + 1]))
    if any(m != 1 for m in inner):
        values = ops.tile(values, [1, *inner])
    within = from_row_splits(values, splits_of(lengths_of(s) * across), "tile")
    return within.take_rows(np.tile(np.arange(rt.nrows, dtype=INT64), multiples[0]))


def _size(f, interp, node, args, kwargs):
    bound = _arguments(f, args, kwargs)
    rt = next(iter(bound.values()), None)
    if not isinstance(rt, RaggedTensor):
        return NotImplemented
    if f is BUILTINS.get("rank"):
        return Tensor(np.array(rt.rank, dtype=np.int32))
    out_type = bound.get("out_type")
    return Tensor(np.array(int(np.prod(rt.flat_values.shape)), dtype=np.int32 if out_type is None else to_dtype(out_type)))


def _where(f, interp, node, args, kwargs):
    """tf.where(condition, x, y) with a ragged operand (ragged_where_op): the flat values' where, under the
    partition they share, a dense operand broadcast to it. tf.where of a ragged condition alone is left out."""
    bound = _arguments(f, args, kwargs)
    names = ("condition", "x", "y")
    if any(bound.get(n) is None for n in names) or not _any_ragged(bound[n] for n in names):
        return NotImplemented
    rt = next(bound[n] for n in names if isinstance(bound[n], RaggedTensor))
    for n in names:
        rt, _, bound[n] = aligned(rt, bound[n])
    return rt.with_flat_values(call_builtin(f, interp, node, [], bound))


def _expand_dims(f, interp, node, args, kwargs):
    """tf.expand_dims of a ragged tensor (RaggedTensor's): a new outer dimension (one row of its rows), a uniform
    dimension of length 1 before a ragged one (each item at that level a row of one), or an inner one of its flat
    values."""
    bound = _arguments(f, args, kwargs)
    key = next(iter(bound), None)
    rt = bound.get(key)
    if not isinstance(rt, RaggedTensor):
        return NotImplemented
    axis = to_int(bound["axis"], "axis")
    if not -rt.rank - 1 <= axis <= rt.rank:
        raise TdfValueError(f"axis={axis} out of bounds: expected {-rt.rank - 1}<=axis<={rt.rank}")
    axis %= rt.rank + 1
    if axis > rt.ragged_rank:
        bound[key], bound["axis"] = rt.flat_values, Tensor(np.array(axis - rt.ragged_rank), weak=True)
        return rt.with_flat_values(call_builtin(f, interp, node, [], bound))
    items = rt.nrows if axis <= 1 else int(rt.splits[axis - 2][-1])     # (the items at the level it comes before)
    if axis == 0:
        new, length = np.array([0, items], dtype=INT64), items
    else:
        new, length = np.arange(items + 1, dtype=INT64), 1
    at = max(axis - 1, 0)
    return RaggedTensor(rt.flat_values, (*rt.splits[:at], new, *rt.splits[at:]),
                        (*rt.uniform[:at], length, *rt.uniform[at:]))


_HANDLERS = {**{name: _unary for name in _UNARY}, **{name: _binary for name in _BINARY},
             **{name: _reduction(name) for name in ("reduce_sum", "reduce_prod", "reduce_min", "reduce_max",
                                                   "reduce_mean", "reduce_variance", "reduce_std", "reduce_any",
                                                   "reduce_all", "strings.reduce_join")},
             "strings.join": _n_ary, "add_n": _n_ary, "embedding_lookup": _lookup,
             "concat": _joining(concatenated), "stack": _joining(stacked), "gather": _gather, "tile": _tile,
             "size": _size, "rank": _size, "where": _where, "expand_dims": _expand_dims}


def _guarded(handler):
    """``handler``, asked only where an argument (or an item of a list argument) is a ragged tensor: a call of
    tensors alone costs one look at each argument's class."""
    def guarded(f, interp, node, args, kwargs):
        for value in (*args, *kwargs.values()):
            if value.__class__ is RaggedTensor or value.__class__ in _LISTS and any(
                    v.__class__ is RaggedTensor for v in value):
                return handler(f, interp, node, args, kwargs)
        return NotImplemented
    return guarded


_LISTS = (list, tuple, PythonTuple)


@after_load
def _install() -> None:
    """Registers the handlers of the builtins loaded so far (again after each family loads: tf.strings')."""
    for name, handler in _HANDLERS.items():
        found = BUILTINS.get(name)
        if found is not None:
            DISPATCH[id(found)] = _guarded(handler)
