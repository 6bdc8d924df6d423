"""The names of ragged tensors a program calls: ``tf.RaggedTensor`` (its factory class methods, isinstance),
``tf.RaggedTensorSpec``, ``tf.ragged.constant`` and the rest of ``tf.ragged``, each as TensorFlow computes it
(ragged_tensor.py, ragged_factory_ops.py, ragged_array_ops.py...). Every family that makes a ragged tensor imports
this one, so the ops that take them (tf_ragged_math.py, which it imports) are there whenever one exists."""
from __future__ import annotations

import numpy as np

from tapecli import ops
from tapecli.errors import KernelValueError, TdfValueError
from tapecli.interpreter.conversions import to_int
from tapecli.interpreter.registry import builtin
from tapecli.library import tf_ragged_math
from tapecli.library.core import swapped_values, to_dtype
from tapecli.library.tf_math import convert_to_tensor
from tapecli.library.tf_ragged import (RaggedTensor, check_splits, from_row_splits, from_tensor,
                                       from_uniform_row_length, int64_splits, int_vector, lengths_of, rowids_of,
                                       splits_of, take, values_of)
from tapecli.runtime.specs import RaggedTensorSpec, Shape
from tapecli.runtime.values import DType, PythonTuple, Tensor, dtype_name, literal_array, text_array

INT64 = np.dtype(np.int64)


# ------------------------------------------------------------------ the class and its factories

@builtin("RaggedTensor")
def ragged_tensor(values=None, row_partition=None, internal=False):
    """``tf.RaggedTensor(...)``: TensorFlow's constructor is private (its factory class methods make them)."""
    raise TdfValueError("RaggedTensor constructor is private; please use one of the factory methods instead "
                        "(e.g., RaggedTensor.from_row_lengths())")


ragged_tensor.makes = RaggedTensor          # (isinstance(x, tf.RaggedTensor): classes.is_instance)


def from_row_lengths(values, row_lengths, name=None, validate=True):
    lengths = int_vector(row_lengths, "row_lengths")
    if (lengths < 0).any():
        raise KernelValueError("Arguments to from_row_lengths do not form a valid RaggedTensor:negative lengths")
    return from_row_splits(values, splits_of(lengths), "from_row_lengths")


def from_value_rowids(values, value_rowids, nrows=None, name=None, validate=True):
    ids = int_vector(value_rowids, "value_rowids")
    if (np.diff(ids) < 0).any() or (ids < 0).any():
        raise KernelValueError("Arguments to from_value_rowids do not form a valid RaggedTensor:monotonic\n"
                               "Condition x >= 0 did not hold element-wise.")
    n = (int(ids.max()) + 1 if ids.size else 0) if nrows is None else to_int(nrows, "nrows")
    if ids.size and ids.max() >= n:
        raise KernelValueError("Arguments to from_value_rowids do not form a valid RaggedTensor:bound\n"
                               "Condition x < y did not hold element-wise.")
    return from_row_splits(values, splits_of(np.bincount(ids, minlength=n)), "from_value_rowids")


def from_row_starts(values, row_starts, name=None, validate=True):
    values = values_of(values)
    count = values.nrows if isinstance(values, RaggedTensor) else values.shape[0]
    return from_row_splits(values, np.concatenate([int_vector(row_starts, "row_starts"), [count]]).astype(INT64),
                           "from_row_starts")


def from_row_limits(values, row_limits, name=None, validate=True):
    return from_row_splits(values, np.concatenate([[0], int_vector(row_limits, "row_limits")]).astype(INT64),
                           "from_row_limits")


def from_nested_row_splits(flat_values, nested_row_splits, name=None, validate=True):
    result = values_of(flat_values)
    for splits in reversed(list(nested_row_splits)):
        result = from_row_splits(result, splits, "from_nested_row_splits")
    return result


def from_nested_row_lengths(flat_values, nested_row_lengths, name=None, validate=True):
    result = values_of(flat_values)
    for lengths in reversed(list(nested_row_lengths)):
        result = from_row_lengths(result, lengths)
    return result


def from_nested_value_rowids(flat_values, nested_value_rowids, nested_nrows=None, name=None, validate=True):
    result = values_of(flat_values)
    nrows = [None] * len(nested_value_rowids) if nested_nrows is None else list(nested_nrows)
    for ids, n in reversed(list(zip(nested_value_rowids, nrows))):
        result = from_value_rowids(result, ids, n)
    return result


_FACTORIES = {"from_row_splits": lambda values, row_splits, name=None, validate=True:
              from_row_splits(values, row_splits),
              "from_row_lengths": from_row_lengths, "from_value_rowids": from_value_rowids,
              "from_row_starts": from_row_starts, "from_row_limits": from_row_limits,
              "from_uniform_row_length": from_uniform_row_length, "from_tensor": from_tensor,
              "from_nested_row_splits": from_nested_row_splits, "from_nested_row_lengths": from_nested_row_lengths,
              "from_nested_value_rowids": from_nested_value_rowids}
# (library/core.py's attribute hook: RaggedTensor.from_row_splits(...) calls one with the interpreter first)
ragged_tensor.class_methods = {name: (lambda f: lambda interp, *args, **kwargs: f(*args, **kwargs))(f)
                               for name, f in _FACTORIES.items()}


@builtin("RaggedTensorSpec")
def ragged_tensor_spec(shape=None, dtype=None, ragged_rank=None, row_splits_dtype=None, flat_values_spec=None):
    int64_splits(row_splits_dtype)
    spec_shape = Shape(None if shape is None else _spec_dims(shape))
    rank = None if ragged_rank is None else to_int(ragged_rank, "ragged_rank")
    return RaggedTensorSpec(spec_shape, DType("float32") if dtype is None else DType(dtype_name(to_dtype(dtype))),
                            rank)


def _spec_dims(shape) -> list:
    if isinstance(shape, Tensor):
        return [int(d) for d in np.asarray(shape.value).reshape(-1)]
    return [None if d is None else to_int(d, "a dimension") for d in shape]


ragged_tensor_spec.makes = RaggedTensorSpec


# ------------------------------------------------------------------ tf.ragged.constant

@builtin("ragged.constant")
def constant(pylist, dtype=None, ragged_rank=None, inner_shape=None, name=None, row_splits_dtype=None):
    """A ragged tensor of a nested Python list, as ragged_factory_ops.constant reads it: its scalars' depth gives
    the ragged rank (one less), its innermost lists of one length may be an inner shape."""
    int64_splits(row_splits_dtype)
    value = _python(pylist)
    rank = None if ragged_rank is None else to_int(ragged_rank, "ragged_rank")
    inner = None if inner_shape is None else tuple(to_int(d, "inner_shape") for d in inner_shape)
    if not isinstance(value, list):
        if rank:
            raise TdfValueError(f"Invalid pylist={value!r}: incompatible with ragged_rank={rank}")
        return _dense(value, dtype, ())
    if rank is not None and rank < 0:
        raise TdfValueError(f"Invalid ragged_rank={rank}: must be nonnegative")
    scalar_depth, max_depth = _depths(value)
    if scalar_depth is not None:
        if max_depth > scalar_depth:
            raise TdfValueError(f"Invalid pylist={value!r}: empty list nesting is greater than scalar value nesting")
        if rank is not None and max_depth < rank:
            raise TdfValueError(f"Invalid pylist={value!r}: max depth smaller than ragged_rank={rank}")
    if rank == 0 or rank is None and (max_depth < 2 or inner is not None and max_depth - len(inner) < 2):
        return _dense(value, dtype, inner)
    if inner is None:
        inner = () if rank is None else _inner_shape(value, rank)
    if rank is None:
        rank = max(1, (max_depth if scalar_depth is None else scalar_depth - len(inner)) - 1)
    nested, values = [], value
    for _ in range(rank):
        if not all(isinstance(row, list) for row in values):
            raise TdfValueError(f"pylist has scalar values depth {len(nested) + 1}, but ragged_rank={rank} requires "
                                f"scalar value depth greater than {rank}")
        nested.append(splits_of([len(row) for row in values]))
        values = [v for row in values for v in row]
    result = _dense(values, dtype, (len(values), *inner))
    for splits in reversed(nested):
        result = from_row_splits(result, splits, "constant")
    return result


def _python(value):
    """A program's nested list as Python's values (the interpreter holds a row of numbers as a literal tensor)."""
    if isinstance(value, (list, PythonTuple, tuple)):
        return [_python(v) for v in value]
    if isinstance(value, Tensor):
        return value.value.tolist()
    return value


def _depths(value) -> tuple[int | None, int]:
    """(the depth of the scalars, None without any; the deepest nesting, empty lists counted)."""
    if not isinstance(value, list):
        return 0, 0
    scalar, deepest = None, 1
    for child in value:
        child_scalar, child_max = _depths(child)
        if child_scalar is not None:
            if scalar is not None and scalar != child_scalar + 1:
                raise TdfValueError("all scalar values must have the same nesting depth")
            scalar = child_scalar + 1
        deepest = max(deepest, child_max + 1)
    return scalar, deepest


def _inner_shape(value: list, rank: int) -> tuple:
    flat = value
    for _ in range(rank):
        flat = [v for row in flat for v in row]
    shape = np.shape(np.array(flat, dtype=object)) if flat else (0,)
    return tuple(shape[1:])


def _leaves(value):
    if isinstance(value, list):
        for v in value:
            yield from _leaves(v)
    else:
        yield value


def _dense(values, dtype, shape) -> Tensor:
    """tf.constant of the flat values: strings, bools or numbers (int32 and float32, an empty list float32)."""
    leaves = list(_leaves(values))
    if any(isinstance(v, (str, bytes)) for v in leaves):
        t = Tensor(text_array(values))
    elif len(leaves) and all(isinstance(v, bool) for v in leaves):
        t = Tensor(np.array(values, dtype=bool))
    else:
        t = convert_to_tensor(Tensor(literal_array(values), weak=True) if len(leaves) else
                              Tensor(np.zeros(0, dtype=np.float32)), dtype=dtype)
        dtype = None
    if dtype is not None:
        t = convert_to_tensor(t, dtype=dtype)
    return ops.reshape(t, shape) if shape else t


# ------------------------------------------------------------------ tf.ragged

@builtin("ragged.map_flat_values", interp=True)
def map_flat_values(interp, op, *args, **kwargs):
    """``op`` of the arguments, each RaggedTensor among them (of one partition) replaced by its flat values: a
    RaggedTensor of the result over that partition."""
    args, kwargs, found = swapped_values(args, kwargs, RaggedTensor, lambda v: v.flat_values)
    if not found:
        return interp.call_value(op, args, kwargs)
    sizes = {rt.flat_values.shape[0] for rt in found}
    if len(sizes) > 1:
        raise TdfValueError("Input RaggedTensors' flat_values must all have the same outer-dimension size.  Got "
                            f"sizes: {sizes}")
    for rt in found[1:]:
        if len(rt.splits) != len(found[0].splits) or any(
                not np.array_equal(a, b) for a, b in zip(rt.splits, found[0].splits)):
            raise KernelValueError("Inputs must have identical ragged splits.\nCondition x == y did not hold.")
    result = interp.call_value(op, args, kwargs)
    t = result if isinstance(result, Tensor) else convert_to_tensor(result)
    if t.ndim == 0 or t.shape[0] != found[0].flat_values.shape[0]:
        raise TdfValueError("tf.ragged.map_flat_values: the function changed the number of flat values "
                            f"({found[0].flat_values.shape[0]} to {t.shape[0] if t.ndim else 'a scalar'})")
    return found[0].with_flat_values(t)


@builtin("ragged.boolean_mask")
def boolean_mask(data, mask, name=None):
    """The values where ``mask`` (a prefix of data's shape, dense or ragged) is True; each masked dimension ragged
    but the outermost, which keeps the rows the mask's first dimension keeps (ragged_array_ops.boolean_mask)."""
    if isinstance(mask, RaggedTensor) and mask.dtype != np.bool_ or \
            not isinstance(mask, RaggedTensor) and convert_to_tensor(mask).dtype != np.bool_:
        raise TdfValueError("mask must have dtype bool")
    return _masked(data if isinstance(data, RaggedTensor) else convert_to_tensor(data),
                   mask if isinstance(mask, RaggedTensor) else convert_to_tensor(mask))


def _masked(data, mask):
    mask_rank = mask.rank if isinstance(mask, RaggedTensor) else mask.ndim
    if mask_rank == 1:
        kept = np.flatnonzero(mask.value)
        return take(data, kept)
    data = data if isinstance(data, RaggedTensor) else from_tensor(data, lengths=[data.shape[1]] * data.shape[0])
    mask = mask if isinstance(mask, RaggedTensor) else from_tensor(mask, lengths=[mask.shape[1]] * mask.shape[0])
    if not np.array_equal(data.splits[0], mask.splits[0]):
        raise KernelValueError("The mask's shape must be a prefix of the data's.\nCondition x == y did not hold.")
    inner = _masked(data.values, mask.values)
    if mask_rank > 2:
        return data.with_values(inner)
    counts = np.add.reduceat(np.append(mask.values.value.astype(INT64), 0), mask.splits[0][:-1]) \
        if mask.nrows else np.zeros(0, dtype=INT64)
    counts[lengths_of(mask.splits[0]) == 0] = 0
    return from_row_splits(inner, splits_of(counts), "boolean_mask")


@builtin("ragged.stack")
def stack(values, axis=0, name=None):
    return tf_ragged_math.stacked(list(values), to_int(axis, "axis"))


@builtin("ragged.range")
def range_(starts, limits=None, deltas=1, dtype=None, name=None, row_splits_dtype=None):
    """Row i is range(starts[i], limits[i], deltas[i]) (scalars broadcast; one argument: the limits)."""
    int64_splits(row_splits_dtype)
    if limits is None:
        starts, limits = 0, starts
    parts = [convert_to_tensor(v) if not isinstance(v, Tensor) or v.weak else v for v in (starts, limits, deltas)]
    kind = np.result_type(*(p.dtype for p in parts)) if dtype is None else to_dtype(dtype)
    start, limit, delta = np.broadcast_arrays(*(np.atleast_1d(p.value).astype(kind) for p in parts))
    if (delta == 0).any():
        raise KernelValueError("Requires delta != 0")
    counts = np.maximum(np.ceil((limit - start) / delta), 0).astype(INT64)
    values = np.concatenate([np.arange(n, dtype=INT64) for n in counts]) if counts.size else np.zeros(0, INT64)
    rows = rowids_of(splits_of(counts))
    flat = (start[rows] + values * delta[rows]).astype(kind)
    return RaggedTensor(Tensor(flat), (splits_of(counts),))


range_.literals = "the widest of its arguments' dtypes"        # (registry.call_builtin)


@builtin("ragged.row_splits_to_segment_ids")
def row_splits_to_segment_ids(splits, name=None, out_type=None):
    s = int_vector(splits, "splits")
    check_splits(s, int(s[-1]) if len(s) else 0, "row_splits_to_segment_ids")
    return Tensor(rowids_of(s).astype(INT64 if out_type is None else to_dtype(out_type)))


@builtin("ragged.segment_ids_to_row_splits")
def segment_ids_to_row_splits(segment_ids, num_segments=None, out_type=None, name=None):
    ids = int_vector(segment_ids, "segment_ids")
    n = None if num_segments is None else to_int(num_segments, "num_segments")
    counts = np.bincount(ids, minlength=n or 0) if ids.size else np.zeros(n or 0, dtype=INT64)
    return Tensor(splits_of(counts[:n] if n is not None else counts).astype(INT64 if out_type is None
                                                                                  else to_dtype(out_type)))


def rows_of(results: list, signature_dtype=None) -> RaggedTensor:
    """tf.map_fn's results as the rows of a ragged tensor (its fn_output_signature a RaggedTensorSpec, or its elems
    ragged): each a tensor or a ragged tensor, of one dtype."""
    rows = [r if isinstance(r, RaggedTensor) else convert_to_tensor(r) if signature_dtype is None
            else ops.cast(convert_to_tensor(r), signature_dtype) for r in results]
    return tf_ragged_math.stacked(rows, 0)
