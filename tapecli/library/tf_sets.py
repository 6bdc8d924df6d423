"""tf.sets: the union, intersection, difference and size of sets held in the last dimension of dense tensors or
tf.sparse.SparseTensors (tf_sparse.py), as TensorFlow's set kernels compute them: a SparseTensor whose last
dimension holds each result set, sorted, as long as the largest. And tf.edit_distance, of the sequences held so in
two SparseTensors. TensorFlow gives them no gradient."""
from __future__ import annotations

import numpy as np

from tapecli.errors import KernelValueError, TdfTypeError, TdfValueError
from tapecli.interpreter import conversions
from tapecli.interpreter.printing import python_str
from tapecli.interpreter.registry import builtin
from tapecli.library.core import same_dtype
from tapecli.library.tf_math import convert_to_tensor
from tapecli.library.tf_sparse import SparseTensor, check_indices, index_text, linear, made
from tapecli.runtime.values import Tensor, dtype_name

_SET_DTYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "string")
_SUPPORTED = "`frozenset({tf.int32, tf.uint8, tf.int16, tf.int8, tf.string, tf.int64, tf.uint16})`"   # (as TF prints)


def _operand(x):
    return x if isinstance(x, SparseTensor) else convert_to_tensor(x)


def _dtype(x) -> np.dtype:
    return x.values.dtype if isinstance(x, SparseTensor) else x.dtype


def _members(x, validate_indices: bool) -> tuple[tuple, np.ndarray, np.ndarray]:
    """A set operand's group shape (all but its last dimension), and each member's group (row-major) and value."""
    if isinstance(x, SparseTensor):
        if len(x.dims) < 2:
            raise KernelValueError(f"Invalid rank {len(x.dims)}.")
        check_indices(x, ordered=validate_indices)
        groups = x.dims[:-1]
        return groups, linear(x.index_array[:, :-1], groups), x.values.value
    if x.ndim < 2:
        raise KernelValueError(f"Shape {index_text(x.shape)} has rank {x.ndim} < 2")
    groups = x.shape[:-1]
    return groups, np.repeat(np.arange(int(np.prod(groups))), x.shape[-1]), x.value.reshape(-1)


def _keys(groups: np.ndarray, values: np.ndarray, codes: np.ndarray, width: int) -> np.ndarray:
    """Each distinct (group, value) of an operand as one sortable number: its group, then its value's rank."""
    return np.unique(groups * width + codes) if len(values) else np.zeros(0, dtype=np.int64)


def _set_operation(a, b, operation: str, validate_indices) -> SparseTensor:
    if isinstance(a, SparseTensor) and not isinstance(b, SparseTensor):
        raise TdfValueError("Sparse,Dense is not supported, but Dense,Sparse is. Please flip the order of your inputs.")
    shape_a, groups_a, values_a = _members(a, conversions.truth(validate_indices))
    shape_b, groups_b, values_b = _members(b, conversions.truth(validate_indices))
    if shape_a != shape_b:
        raise KernelValueError(f"Mismatched shapes {index_text(shape_a)} vs {index_text(shape_b)}")
    distinct, codes = np.unique(np.concatenate([values_a, values_b]), return_inverse=True)
    width = max(len(distinct), 1)
    keys_a = _keys(groups_a, values_a, codes[:len(values_a)], width)
    keys_b = _keys(groups_b, values_b, codes[len(values_a):], width)
    keys = {"union": np.union1d, "intersection": np.intersect1d}.get(operation, np.setdiff1d)(
        *((keys_b, keys_a) if operation == "b-a" else (keys_a, keys_b)))
    groups = keys // width
    firsts = np.searchsorted(groups, groups)
    position = np.arange(len(keys)) - firsts
    where = np.stack(np.unravel_index(groups, shape_a), axis=1) if len(keys) else np.zeros((0, len(shape_a)))
    indices = np.concatenate([where, position[:, None]], axis=1)
    longest = int(position.max()) + 1 if len(keys) else 0
    return made(indices, Tensor(distinct[keys % width].astype(_dtype(a))), (*shape_a, longest))


def _pair(a, b):
    """The operands converted and checked, dense first (and whether they were swapped)."""
    a, b = _operand(a), _operand(b)
    if dtype_name(_dtype(a)) not in _SET_DTYPES:
        raise TdfTypeError(f"'a' has invalid dtype `<dtype: '{dtype_name(_dtype(a))}'>` not in supported dtypes: "
                           f"{_SUPPORTED}.")
    if _dtype(b) != _dtype(a):
        raise TdfTypeError(f"Types don't match, <dtype: '{dtype_name(_dtype(a))}'> vs "
                           f"<dtype: '{dtype_name(_dtype(b))}'>.")
    if isinstance(a, SparseTensor) and not isinstance(b, SparseTensor):
        return b, a, True
    return a, b, False


@builtin("sets.union")
def union(a, b, validate_indices=True):
    a, b, _ = _pair(a, b)
    return _set_operation(a, b, "union", validate_indices)


@builtin("sets.intersection")
def intersection(a, b, validate_indices=True):
    a, b, _ = _pair(a, b)
    return _set_operation(a, b, "intersection", validate_indices)


@builtin("sets.difference")
def difference(a, b, aminusb=True, validate_indices=True):
    """The members of a not in b (``aminusb``) or of b not in a."""
    a, b, swapped = _pair(a, b)
    return _set_operation(a, b, "a-b" if conversions.truth(aminusb) != swapped else "b-a", validate_indices)


@builtin("sets.size")
def size(a, validate_indices=True):
    """The number of distinct values in each set of a SparseTensor: an int32 tensor of its group shape."""
    a = _operand(a)
    if not isinstance(a, SparseTensor):
        raise TdfTypeError(f"Expected `SparseTensor`, got {python_str(a)}.")
    if dtype_name(_dtype(a)) not in _SET_DTYPES:
        raise TdfTypeError(f"Invalid dtype `<dtype: '{dtype_name(_dtype(a))}'>` not in supported dtypes: {_SUPPORTED}.")
    shape, groups, values = _members(a, conversions.truth(validate_indices))
    distinct, codes = np.unique(values, return_inverse=True)
    keys = _keys(groups, values, codes, max(len(distinct), 1))
    counts = np.bincount(keys // max(len(distinct), 1), minlength=int(np.prod(shape)))
    return Tensor(counts.astype(np.int32).reshape(shape))


@builtin("edit_distance")
def edit_distance(hypothesis, truth, normalize=True, name="edit_distance"):
    """The Levenshtein distance of each sequence of ``hypothesis`` (its values in the last dimension, in their order)
    to the one at the same place in ``truth``, over the truth's length with ``normalize`` (inf for an empty truth);
    a float32 tensor of the larger of their shapes but the last dimension, 0 where neither has a sequence."""
    for value, what in ((hypothesis, "Hypothesis"), (truth, "Truth")):
        if not isinstance(value, SparseTensor):
            raise TdfTypeError(f"{what} must be a SparseTensor.")
    same_dtype(truth.values, hypothesis.values.dtype, "EditDistance", 4)
    if len(truth.dims) != len(hypothesis.dims):
        raise KernelValueError(f"Expected truth and hypothesis to have matching ranks, but their shapes are: "
                               f"[{len(truth.dims)}] and [{len(hypothesis.dims)}]")
    for st in (hypothesis, truth):
        check_indices(st, ordered=False)
    normalize = conversions.truth(normalize)
    shape = tuple(max(h, t) for h, t in zip(hypothesis.dims[:-1], truth.dims[:-1]))
    sequences = [_sequences(st, shape) for st in (hypothesis, truth)]
    out = np.zeros(shape, dtype=np.float32)
    for group in set(sequences[0]) | set(sequences[1]):
        said, meant = (found.get(group, []) for found in sequences)
        distance = _levenshtein(said, meant)
        out.flat[group] = distance / len(meant) if normalize and meant else np.inf if normalize else distance
    return Tensor(out)


def _sequences(st: SparseTensor, shape: tuple) -> dict[int, list]:
    """Each group's values (by its row-major place in ``shape``), in their order."""
    found: dict[int, list] = {}
    for group, value in zip(linear(st.index_array[:, :-1], shape).tolist(), st.values.value.tolist()):
        found.setdefault(group, []).append(value)
    return found


def _levenshtein(a: list, b: list) -> int:
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        previous, row[0] = row[0], i
        for j, y in enumerate(b, 1):
            previous, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, previous + (x != y))
    return row[-1]
