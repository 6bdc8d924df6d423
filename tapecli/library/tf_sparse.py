"""``tf.sparse.SparseTensor`` and the tf.sparse functions that move its entries (to and from dense tensors,
reorder, reshape, transpose, slice, split, concat, retain, fill_empty_rows...), each as TensorFlow's kernel
computes it. Its indices (int64 ``[N, rank]``) and dense shape (int64 ``[rank]``) are NumPy's, computed here; its
values stay a tensor on the tapes: an op that moves them gathers them by the positions NumPy found, so its
gradient is gather's, as TensorFlow's registered gradients are (SparseReorder, SparseSlice, SparseToDense...). The
ops TensorFlow gives no gradient (SparseConcat) take the values' numbers alone. The arithmetic on sparse tensors is
tf_sparse_math.py, tf.sets tf_sets.py."""
from __future__ import annotations

import numpy as np

from tapecli import ops
from tapecli.errors import KernelValueError, NoAttribute, TdfError, TdfTypeError, TdfValueError
from tapecli.interpreter.conversions import to_int, truth, type_word
from tapecli.interpreter.objects import BoundMethod, ProgramObject
from tapecli.interpreter.printing import python_str
from tapecli.interpreter.registry import builtin
from tapecli.library.core import same_dtype, to_dtype, to_shape
from tapecli.library.tf_math import convert_to_tensor
from tapecli.runtime.limits import admit_result
from tapecli.runtime.values import DType, PythonTuple, Tensor, TensorShape, Variable, dtype_name

INT64 = DType("int64")
_ORDER_HINT = ("is out of order. Many sparse ops require sorted indices.\n    Use `tf.sparse.reorder` to create a "
               "correctly ordered copy.\n\n")


class SparseTensor(ProgramObject):
    kind_word = "a tf.SparseTensor"

    def __init__(self, indices: Tensor, values: Tensor, dense_shape: Tensor):
        self.indices, self.values, self.dense_shape = indices, values, dense_shape

    @property
    def index_array(self) -> np.ndarray:
        return self.indices.value

    @property
    def dims(self) -> tuple[int, ...]:
        return tuple(int(d) for d in self.dense_shape.value)

    def tf_print_tensors(self) -> tuple[Tensor, Tensor, Tensor]:
        """The tensors tf.print writes of it, in its ``SparseTensor(indices=..., values=..., shape=...)``."""
        return self.indices, self.values, self.dense_shape

    def get_attribute(self, interp, attr, node):
        if attr in ("indices", "values", "dense_shape"):
            return getattr(self, attr)
        if attr == "dtype":
            return DType(dtype_name(self.values.dtype))
        if attr == "shape":
            return self.static_shape()
        if attr == "get_shape":
            return BoundMethod(attr, lambda call_node: self.static_shape())
        if attr == "with_values":
            return BoundMethod(attr, lambda call_node, new_values: sparse_tensor(self.indices, new_values,
                                                                               self.dense_shape))
        raise NoAttribute(f"'SparseTensor' object has no attribute '{attr}'",
                           hint="it has indices, values, dense_shape, dtype, shape, get_shape() and with_values()")

    @property
    def shape(self) -> tuple[int, ...]:
        return self.dims

    def static_shape(self) -> TensorShape:
        return TensorShape(np.asarray(self.dims, dtype=np.int64), weak=True)

    def row(self, i: int) -> "SparseTensor":
        """The entries of row ``i`` of the first dimension, that dimension dropped (tf.map_fn's element)."""
        start, size = np.zeros(len(self.dims), dtype=np.int64), np.asarray(self.dims, dtype=np.int64)
        start[0], size[0] = i, 1
        part = _part(self, start, size)
        return made(part.index_array[:, 1:], part.values, self.dims[1:])

    def operator(self, op: str, other, reflected: bool) -> "SparseTensor":
        """``st * y`` and ``st / y`` (SparseDenseCwiseMul/Div: ``y`` converted to the values' dtype and broadcast
        to the sparse tensor's shape, read at its entries) and ``dense * st`` (a tensor's ``*`` dispatches so);
        TensorFlow defines no other operator of a SparseTensor (interpreter/objects.py's object_operator)."""
        dense_left = reflected and op == "*" and isinstance(other, (Tensor, Variable)) and not other.weak
        if op not in ("*", "/") or reflected and not dense_left:
            names = ("'SparseTensor'", _python_class_name(other))
            left, right = names[::-1] if reflected else names
            raise TdfTypeError(f"unsupported operand type(s) for {op}: {left} and {right}")
        y = convert_to_tensor(other, dtype=self.values.dtype if not dense_left else None)
        if y.dtype != self.values.dtype:
            raise TdfTypeError(f"`x` and `y` must have the same dtype, got {self.dtype!r} != {DType(dtype_name(y.dtype))!r}.")
        values = self.values
        if op == "/" and values.dtype.kind in "iu":       # (__truediv__'s table: narrow ints to float32, wide to 64)
            wide = np.dtype(np.float64 if values.dtype.itemsize >= 4 else np.float32)
            values, y = ops.cast(values, wide), ops.cast(y, wide)
        try:
            at_entries = ops.gather_nd(ops.broadcast_to(y, self.dims), self.indices)
        except TdfError:
            raise TdfValueError(f"Dense shape {list(y.shape)} cannot be broadcast to the sparse tensor's shape "
                                f"{list(self.dims)}") from None
        return SparseTensor(self.indices, (ops.mul if op == "*" else ops.div)(values, at_entries), self.dense_shape)

    def python_text(self) -> str:
        """``print(st)``: TensorFlow's repr, its three tensors as they print."""
        return (f"SparseTensor(indices={python_str(self.indices)}, values={python_str(self.values)}, "
                f"dense_shape={python_str(self.dense_shape)})")

    def python_class(self) -> str:
        return "tensorflow.python.framework.sparse_tensor.SparseTensor"


def _python_class_name(value) -> str:
    """The operand's class as Python's TypeError names it."""
    if isinstance(value, SparseTensor):
        return "'SparseTensor'"
    if isinstance(value, Tensor) and value.weak and value.ndim == 0:        # (a Python number)
        return repr({"b": "bool", "i": "int", "u": "int"}.get(value.dtype.kind, "float"))
    return "'EagerTensor'" if isinstance(value, (Tensor, Variable)) else repr(type_word(value))


@builtin("SparseTensor")
def sparse_tensor(indices, values, dense_shape):
    """``tf.SparseTensor(indices, values, dense_shape)``: indices and dense_shape converted to int64, values as
    tf.convert_to_tensor makes them (a variable read where tapes see it), their shapes checked as TensorFlow's."""
    indices, dense_shape = (convert_to_tensor(x, dtype=INT64) for x in (indices, dense_shape))
    values = convert_to_tensor(values)
    for t, rank in ((indices, 2), (values, 1), (dense_shape, 1)):
        if t.ndim != rank:
            raise TdfValueError(f"Shape {tuple(t.shape)} must have rank {rank}")
    for a, b in ((indices.shape[0], values.shape[0]), (indices.shape[1], dense_shape.shape[0])):
        if a != b:
            raise TdfValueError(f"Dimensions {a} and {b} are not compatible")
    return SparseTensor(indices, values, dense_shape)


sparse_tensor.makes = SparseTensor          # (isinstance(x, tf.SparseTensor): classes.is_instance)
sparse_tensor.literals = "indices are converted to int64"     # (interpreter/registry.py: call_builtin)


def sparse_input(x) -> SparseTensor:
    if not isinstance(x, SparseTensor):
        raise TdfTypeError("Input must be a SparseTensor.", hint=f"got {type_word(x)}")
    return x


def made(indices: np.ndarray, values: Tensor, dims) -> SparseTensor:
    """A SparseTensor of entries this module computed (its values already a tensor of theirs)."""
    return SparseTensor(Tensor(np.asarray(indices, dtype=np.int64).reshape(len(indices), len(dims))), values,
                        Tensor(np.asarray(dims, dtype=np.int64)))


def taken(values: Tensor, positions: np.ndarray) -> Tensor:
    """The values at ``positions``, moved as TensorFlow's sparse kernels move them: a gather of a copy, whose
    gradient is a dense tensor as theirs is (a gather of a variable's own values is tf.gather's, whose gradient is
    IndexedSlices: retain)."""
    return ops.gather(ops.identity(values), Tensor(np.asarray(positions, dtype=np.int64)))


def lex_order(indices: np.ndarray) -> np.ndarray:
    """The positions of ``indices`` in row-major order (stable: equal indices keep their order)."""
    if indices.shape[1] == 0:
        return np.arange(len(indices))
    return np.lexsort(indices.T[::-1])


def index_text(row) -> str:
    return "[" + ",".join(str(int(v)) for v in row) + "]"


def check_indices(st: SparseTensor, ordered: bool = True, outside: str | None = None) -> None:
    """TensorFlow's check of a sparse tensor's indices: each within the dense shape and, ``ordered``, after the one
    before it (row-major, none repeated). ``outside``: the message an op without that check gives for an index
    outside (SparseToDense's, unvalidated)."""
    idx, dims = st.index_array, np.asarray(st.dims, dtype=np.int64)
    beyond = ((idx < 0) | (idx >= dims)).any(axis=1)
    if outside is not None and beyond.any():
        raise KernelValueError(outside)
    step = np.ones(len(idx), dtype=np.int64)         # (each index against the one before: 1 after, 0 equal, -1 before)
    if ordered and len(idx) > 1 and idx.shape[1]:
        diffs = idx[1:] - idx[:-1]
        step[1:] = np.sign(diffs[np.arange(len(diffs)), (diffs != 0).argmax(axis=1)])
    bad = beyond | (step <= 0)
    if not bad.any():
        return
    i = int(bad.argmax())
    shown = f"indices[{i}] = {index_text(idx[i])}"
    if beyond[i]:
        raise KernelValueError(f"{shown} is out of bounds: need 0 <= index < {index_text(dims)}")
    raise KernelValueError(f"{shown} {_ORDER_HINT}" if step[i] < 0 else f"{shown} is repeated")


def scalar_of(value, dtype) -> Tensor:
    """A scalar argument (a default value) converted to the values' dtype, as tf.convert_to_tensor converts it."""
    t = convert_to_tensor(value, dtype=DType(dtype_name(dtype)))
    if t.ndim:
        raise TdfValueError(f"Shape {tuple(t.shape)} must have rank 0")
    return t


# ------------------------------------------------------------------ to and from dense tensors

@builtin("sparse.to_dense")
def to_dense(sp_input, default_value=None, validate_indices=True, name=None):
    """The dense tensor: each value at its index, ``default_value`` (zero) elsewhere; a repeated index's last value,
    as the kernel writes them. A gather of the values and the default by position: their gradients are
    SparseToDense's (the default's, the sum over the positions no index names)."""
    st, validate = sparse_input(sp_input), truth(validate_indices)
    dims = st.dims
    check_indices(st, ordered=validate,
                  outside=None if validate else f"Indices are not valid (out of bounds).  Shape: {index_text(dims)}")
    values = st.values
    default = Tensor(np.zeros((), dtype=values.dtype) if not values.dtype.hasobject else np.array(b"", dtype=object)) \
        if default_value is None else scalar_of(default_value, values.dtype)
    admit_result(dims, values.dtype, "tf.sparse.to_dense's result")
    admit_result(dims, np.int64, "tf.sparse.to_dense's positions")
    positions = np.full(dims, len(st.index_array), dtype=np.int64)
    positions.flat[linear(st.index_array, dims)] = np.arange(len(st.index_array))
    return taken(ops.concat([values, ops.reshape(default, (1,))]), positions)


@builtin("sparse.from_dense")
def from_dense(tensor, name=None):
    """The entries of ``tensor`` that are not zero (not empty strings), in row-major order; their values a gather
    of the tensor (differentiable, as TensorFlow's gather_nd)."""
    t = convert_to_tensor(tensor)
    zero = b"" if t.dtype.hasobject else 0
    found = np.flatnonzero(t.value.reshape(-1) != zero)
    indices = np.stack(np.unravel_index(found, t.shape), axis=1) if t.ndim else np.zeros((len(found), 0))
    return made(indices, taken(ops.reshape(t, (-1,)), found), t.shape)


@builtin("sparse.to_indicator")
def to_indicator(sp_input, vocab_size, name=None):
    """A bool tensor of dense_shape[:-1] + [vocab_size]: True at each row's values."""
    st = sparse_input(sp_input)
    if st.values.dtype.kind not in "iuf":
        raise TdfTypeError(f"tf.sparse.to_indicator takes integer ids, got {dtype_name(st.values.dtype)}")
    dims = (*st.dims[:-1], to_int(vocab_size, "vocab_size"))
    ids = st.values.value.astype(np.int64)
    at = np.concatenate([st.index_array[:, :-1], ids[:, None]], axis=1)
    if ((at < 0) | (at >= np.asarray(dims))).any():
        raise KernelValueError(f"Indices are not valid (out of bounds).  Shape: {index_text(dims)}")
    admit_result(dims, np.bool_, "tf.sparse.to_indicator's result")
    out = np.zeros(dims, dtype=bool)
    out[tuple(at.T)] = True
    return Tensor(out)


@builtin("sparse.eye")
def eye(num_rows, num_columns=None, dtype=None, name=None):
    rows = _count(num_rows, "num_rows")
    columns = rows if num_columns is None else _count(num_columns, "num_columns")
    size = min(rows, columns)
    if size < 0:
        raise KernelValueError(f"Requires start <= limit when delta > 0: 0/{size}")
    dtype = np.dtype(np.float32) if dtype is None else to_dtype(dtype)
    admit_result((size, 2), np.int64, "tf.sparse.eye's indices")
    diagonal = np.arange(size)
    return made(np.stack([diagonal, diagonal], axis=1), Tensor(np.ones(size, dtype=dtype)), (rows, columns))


def _count(value, what: str) -> int:
    if not (isinstance(value, Tensor) and value.dtype.kind in "iu"):
        raise TdfTypeError(f"{what} must be an integer value")
    return to_int(value, what)


# ------------------------------------------------------------------ order and shape

@builtin("sparse.reorder")
def reorder(sp_input, name=None):
    st = sparse_input(sp_input)
    order = lex_order(st.index_array)
    return made(st.index_array[order], taken(st.values, order), st.dims)


@builtin("sparse.reshape")
def reshape(sp_input, shape, name=None):
    """The same entries in a dense shape of as many elements (one dimension may be -1), row-major."""
    st = sparse_input(sp_input)
    dims, wanted = st.dims, list(to_shape(shape, negative=True))
    total = int(np.prod(dims, dtype=np.int64))
    unknown = [d for d, n in enumerate(wanted) if n == -1]
    if len(unknown) > 1:
        raise KernelValueError(f"only one output dimension may be -1, not both {unknown[0]} and {unknown[1]}")
    for d, n in enumerate(wanted):
        if n < -1:
            raise KernelValueError(f"size {d} must be non-negative, not {n}")
    known = int(np.prod([n for n in wanted if n != -1], dtype=np.int64))
    if unknown:
        wanted[unknown[0]] = total // known if known else 0
        if known == 0 or total % known:
            raise KernelValueError(f"Input to reshape is a SparseTensor with {total} dense values, but the requested "
                                   f"shape requires a multiple of {known}. input_shape={index_text(dims)} "
                                   f"output_shape={index_text(wanted)}")
    elif known != total:
        raise KernelValueError(f"Input to reshape is a tensor with {total} dense values, but the requested shape has "
                               f"{known}. input_shape={index_text(dims)} output_shape={index_text(wanted)}")
    check_indices(st, ordered=False)
    flat = linear(st.index_array, dims)
    indices = np.stack(np.unravel_index(flat, wanted), axis=1) if wanted else np.zeros((len(flat), 0))
    return made(indices, st.values, wanted)


def linear(indices: np.ndarray, dims) -> np.ndarray:
    """Each index's position in the row-major order of ``dims``."""
    strides = np.cumprod((*dims[1:], 1)[::-1], dtype=np.int64)[::-1]
    return indices @ strides if len(dims) else np.zeros(len(indices), dtype=np.int64)


@builtin("sparse.transpose")
def transpose(sp_input, perm=None, name=None):
    st = sparse_input(sp_input)
    rank = len(st.dims)
    perm = list(range(rank))[::-1] if perm is None else list(to_shape(perm, negative=True))
    for i, p in enumerate(perm):
        if not 0 <= p < rank:
            raise KernelValueError(f"indices[{i}] = {p} is not in [0, {rank})")
    if sorted(perm) != list(range(rank)):
        raise TdfValueError(f"perm {perm} is not a permutation of the {rank} dimensions of the sparse tensor")
    return reorder(made(st.index_array[:, perm], st.values, [st.dims[p] for p in perm]))


@builtin("sparse.expand_dims")
def expand_dims(sp_input, axis=None, name=None):
    """A dimension of 1 inserted at ``axis`` (-1 by default), as list.insert; the values unchanged."""
    st = sparse_input(sp_input)
    rank = len(st.dims)
    if axis is not None and not (isinstance(axis, Tensor) and axis.dtype.kind in "iu"):
        raise TdfTypeError("axis must be an integer value in range [-rank(sp_input) - 1, rank(sp_input)]")
    at = -1 if axis is None else to_int(axis, "axis")
    at = at if at >= 0 else at + rank + 1
    if at > rank:           # (TensorFlow's words: its slices of the indices fail)
        raise KernelValueError(f"Expected size[1] in [0, {rank}], but got {at}")
    if at < 0:
        raise KernelValueError(f"Expected begin[1] in [0, {rank}], but got {at}")
    indices = np.insert(st.index_array, at, 0, axis=1)
    return made(indices, st.values, (*st.dims[:at], 1, *st.dims[at:]))


@builtin("sparse.reset_shape")
def reset_shape(sp_input, new_shape=None):
    """The same entries in a dense shape at least as large: ``new_shape``, or the tightest (each index's largest
    coordinate plus one)."""
    st = sparse_input(sp_input)
    if new_shape is None:
        dims = st.index_array.max(axis=0) + 1 if len(st.index_array) else np.zeros(len(st.dims), dtype=np.int64)
        return made(st.index_array, st.values, np.maximum(dims, 0))
    dims = np.asarray(to_shape(new_shape), dtype=np.int64)
    if len(dims) != len(st.dims):
        raise TdfValueError(f"Dimensions {len(dims)} and {len(st.dims)} are not compatible")
    if not np.all(np.asarray(st.dims) <= dims):
        raise TdfValueError(f"Requested new_shape should have dimension sizes >= sp_input.shape.  Found new_shape "
                            f"({np.asarray(st.dims)}), sp_input.shape ({dims}).")   # (TensorFlow's names, swapped)
    return made(st.index_array, st.values, dims)


# ------------------------------------------------------------------ parts and wholes

@builtin("sparse.slice")
def slice_(sp_input, start, size, name=None):
    """The entries within [start, start + size), moved to start at zero; each dimension of the result as long as the
    part of the slice inside the dense shape."""
    st = sparse_input(sp_input)
    rank = len(st.dims)
    start, size = (np.asarray(to_shape(v, negative=True), dtype=np.int64) for v in (start, size))
    for what, v in (("start", start), ("size", size)):
        if len(v) != rank:
            raise KernelValueError(f"Expected {what} to be a vector of length {rank} but got length {len(v)}")
    if (size < 0).any():
        raise KernelValueError(f"Expected a non-negative size, got {int(size[size < 0][0])}")
    return _part(st, start, size)


def _part(st: SparseTensor, start: np.ndarray, size: np.ndarray) -> SparseTensor:
    dims = np.asarray(st.dims, dtype=np.int64)
    idx = st.index_array
    inside = np.flatnonzero(((idx >= start) & (idx < start + size)).all(axis=1))
    out_dims = np.maximum(np.where(start + size < dims, size, dims - start), 0)
    return made(idx[inside] - start, taken(st.values, inside), out_dims)


@builtin("sparse.split")
def split(sp_input=None, num_split=None, axis=None, name=None):
    """``num_split`` slices along ``axis``; the first (size % num_split) one longer."""
    for value, what in ((sp_input, "sp_input"), (num_split, "num_split"), (axis, "axis")):
        if value is None:
            raise TdfValueError(f"{what} is required")
    st = sparse_input(sp_input)
    rank, count = len(st.dims), to_int(num_split, "num_split")
    at = to_int(axis, "axis")
    if not -rank <= at < rank:
        raise KernelValueError(f"Input axis should be in range [{-rank}, {rank}), got {at}")
    at %= rank
    length = st.dims[at]
    if count < 1:
        raise KernelValueError(f"Value for attr 'num_split' of {count} must be at least minimum 1")
    if count > length:
        raise KernelValueError(f"Input num_split should be between 1 and the splitting dimension size ({length}), "
                               f"got {count}")
    pieces, begin = [], 0
    for i in range(count):
        piece = length // count + (i < length % count)
        start, size = np.zeros(rank, dtype=np.int64), np.asarray(st.dims, dtype=np.int64)
        start[at], size[at] = begin, piece
        pieces.append(_part(st, start, size))
        begin += piece
    return pieces


@builtin("sparse.concat")
def concat(axis, sp_inputs, expand_nonconcat_dims=False, name=None):
    """The inputs joined along ``axis``, their entries in row-major order; with ``expand_nonconcat_dims`` each other
    dimension the largest of theirs. TensorFlow gives SparseConcat no gradient: the values are numbers."""
    if not isinstance(sp_inputs, (list, tuple)):
        raise TdfTypeError("Inputs must be a list or tuple.")
    inputs = [sparse_input(x) for x in sp_inputs]
    if len(inputs) == 1:
        return inputs[0]
    rank = len(inputs[0].dims)
    at = to_int(axis, "axis")
    for i, st in enumerate(inputs):
        if len(st.dims) != rank:
            raise KernelValueError(f"Ranks of all input tensors must match: expected {rank} but got {len(st.dims)} "
                                   f"at position {i}")
        same_dtype(st.values, inputs[0].values.dtype, "SparseConcat", len(inputs) + i)
    if not -rank <= at < rank:
        raise KernelValueError(f"Concat dimension must be in range [{-rank}, {rank}), got {at}")
    at %= rank
    dims = [list(st.dims) for st in inputs]
    if truth(expand_nonconcat_dims):
        widest = np.max(dims, axis=0)
        dims = [[*widest[:at], d[at], *widest[at + 1:]] for d in dims]
    for i, d in enumerate(dims):
        for j in range(rank):
            if j != at and d[j] != dims[0][j]:
                raise KernelValueError(f"Input shapes must match: expected {dims[0][j]} for dimension {j} but got "
                                       f"{d[j]} at position {i}")
    offsets = np.cumsum([0] + [d[at] for d in dims])
    indices = np.concatenate([st.index_array + np.eye(rank, dtype=np.int64)[at] * offset
                              for st, offset in zip(inputs, offsets)])
    values = np.concatenate([st.values.value for st in inputs])
    order = lex_order(indices)
    return made(indices[order], Tensor(values[order]), [*dims[0][:at], int(offsets[-1]), *dims[0][at + 1:]])


@builtin("sparse.retain")
def retain(sp_input, to_retain):
    st = sparse_input(sp_input)
    keep = convert_to_tensor(to_retain)
    if keep.ndim != 1:
        raise TdfValueError(f"Shape {tuple(keep.shape)} must have rank 1")
    if len(keep.value) != len(st.index_array):
        raise TdfValueError(f"Dimensions {len(st.index_array)} and {len(keep.value)} are not compatible")
    kept = np.flatnonzero(keep.value)           # (TensorFlow's tf.gather of the values)
    return made(st.index_array[kept], ops.gather(st.values, Tensor(kept)), st.dims)


@builtin("sparse.fill_empty_rows")
def fill_empty_rows(sp_input, default_value, name=None):
    """Each empty row (first coordinate) given one entry, at [row, 0, ...] with ``default_value``; the entries
    grouped by row, in their order within it. Returns the sparse tensor and the rows that were empty."""
    st = sparse_input(sp_input)
    default = scalar_of(default_value, st.values.dtype)
    check_indices(st, ordered=False)
    idx, rows = st.index_array, st.dims[0]
    empty = np.ones(rows, dtype=bool)
    empty[idx[:, 0]] = False
    filled = np.zeros((int(empty.sum()), idx.shape[1]), dtype=np.int64)
    filled[:, 0] = np.flatnonzero(empty)
    indices = np.concatenate([idx, filled])
    positions = np.concatenate([np.arange(len(idx)), np.full(len(filled), len(idx))])
    order = np.argsort(indices[:, 0], kind="stable")
    values = taken(ops.concat([st.values, ops.reshape(default, (1,))]), positions[order])
    return PythonTuple([made(indices[order], values, st.dims), Tensor(empty)])
