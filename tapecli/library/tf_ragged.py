"""``tf.RaggedTensor``: rows of different lengths, as TensorFlow holds them: a tensor of flat values and, for each
ragged dimension, its row splits (int64, NumPy's here, computed as TensorFlow's RowPartition computes them). The flat
values stay a tensor on the tapes; what moves them (a row, a slice of each row, a gather of rows, the padded dense
tensor) gathers them by the positions NumPy found, so their gradients are gather's, as TensorFlow's ragged ops'
registered gradients are. Printing, ``numpy()`` and ``to_list()`` follow ragged_tensor.py's own Python. The
factories the other families use are here; the names a program calls are tf_ragged_ops.py, the ops that take
ragged tensors tf_ragged_math.py."""
from __future__ import annotations

import functools

import numpy as np

from tapecli import ops
from tapecli.errors import KernelValueError, NoAttribute, ShapeError, TdfTypeError, TdfValueError
from tapecli.interpreter.conversions import to_int, type_word
from tapecli.interpreter.objects import BoundMethod, ProgramObject
from tapecli.library.core import to_dtype
from tapecli.library.tf_math import convert_to_tensor
from tapecli.runtime.limits import admit_result
from tapecli.runtime.specs import Shape
from tapecli.runtime.values import DType, NumpyArray, PythonBool, PythonTuple, Tensor, dtype_name

INT64 = np.dtype(np.int64)


def lengths_of(splits: np.ndarray) -> np.ndarray:
    return np.diff(splits)


def rowids_of(splits: np.ndarray) -> np.ndarray:
    """Each value's row (value_rowids)."""
    return np.repeat(np.arange(len(splits) - 1, dtype=np.int64), lengths_of(splits))


def splits_of(lengths) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(np.asarray(lengths, dtype=np.int64))]).astype(np.int64)


def spans(starts: np.ndarray, limits: np.ndarray) -> np.ndarray:
    """The positions start..limit-1 of each pair, one after the other (tf.ragged.range's values)."""
    counts = np.maximum(limits - starts, 0)
    if not counts.sum():
        return np.zeros(0, dtype=np.int64)
    return np.repeat(starts - np.cumsum(counts) + counts, counts) + np.arange(counts.sum(), dtype=np.int64)


def take(values, positions: np.ndarray):
    """The rows of ``values`` (a tensor or a ragged tensor) at ``positions``: a gather, whose gradient reaches them."""
    if isinstance(values, RaggedTensor):
        return values.take_rows(positions)
    return ops.gather(values, Tensor(np.asarray(positions, dtype=np.int64)))


class RaggedTensor(ProgramObject):
    """A ragged tensor of ``flat_values`` partitioned by ``splits`` (the outermost first); ``uniform`` names, per
    partition, its uniform row length where it has one (from_uniform_row_length, from_tensor's outer dimensions:
    its static shape says so), else None."""

    kind_word = "a tf.RaggedTensor"
    is_ragged = True            # (control.py and data.py ask this of a value, without importing the class)

    def __init__(self, flat_values: Tensor, splits, uniform=None):
        self.flat_values = flat_values
        self.splits = tuple(np.asarray(s, dtype=np.int64) for s in splits)
        self.uniform = tuple(uniform) if uniform is not None else (None,) * len(self.splits)

    # ------------------------------------------------------------ structure
    @property
    def ragged_rank(self) -> int:
        return len(self.splits)

    @property
    def nrows(self) -> int:
        return len(self.splits[0]) - 1

    @property
    def dtype(self) -> np.dtype:
        return self.flat_values.dtype

    @property
    def values(self):
        if self.ragged_rank == 1:
            return self.flat_values
        return RaggedTensor(self.flat_values, self.splits[1:], self.uniform[1:])

    @property
    def shape(self) -> Shape:
        """The static shape: None for each ragged dimension, a uniform one's length."""
        return Shape([self.nrows, *self.uniform, *self.flat_values.shape[1:]])

    @property
    def rank(self) -> int:
        return 1 + self.ragged_rank + self.flat_values.ndim - 1

    ndim = rank

    def with_values(self, values) -> "RaggedTensor":
        """The same outer partition over other values (a tensor, or a ragged tensor: its partitions inside)."""
        if isinstance(values, RaggedTensor):
            return RaggedTensor(values.flat_values, (self.splits[0], *values.splits),
                                (self.uniform[0], *values.uniform))
        return RaggedTensor(values, self.splits[:1], self.uniform[:1])

    def with_flat_values(self, flat_values) -> "RaggedTensor":
        """The same partitions over other flat values, as many rows as these (TensorFlow's check)."""
        if isinstance(flat_values, RaggedTensor):
            return RaggedTensor(flat_values.flat_values, self.splits + flat_values.splits,
                                self.uniform + flat_values.uniform)
        t = flat_values if isinstance(flat_values, Tensor) else convert_to_tensor(flat_values)
        if t.ndim == 0 or t.shape[0] != self.flat_values.shape[0]:
            raise TdfValueError(f"flat_values has {t.shape[0] if t.ndim else 'no'} rows; the ragged tensor's "
                                f"partitions need {self.flat_values.shape[0]}")
        return RaggedTensor(t, self.splits, self.uniform)

    def bounding(self) -> list[int]:
        """The bounding shape's dimensions: the rows, each ragged dimension's longest row, the inner dimensions."""
        return [self.nrows, *(int(lengths_of(s).max()) if len(s) > 1 else 0 for s in self.splits),
                *self.flat_values.shape[1:]]

    def coordinates(self) -> np.ndarray:
        """Each flat value's position in the bounding shape's ragged dimensions ([N, 1 + ragged_rank])."""
        position = np.arange(len(rowids_of(self.splits[-1])), dtype=np.int64)
        columns = []
        for s in reversed(self.splits):
            rows = rowids_of(s)[position]
            columns.append(position - s[rows])
            position = rows
        return np.stack([position, *reversed(columns)], axis=1)

    def outer_rows(self) -> np.ndarray:
        """Each flat value's row of the outermost dimension."""
        position = np.arange(self.flat_values.shape[0], dtype=np.int64)
        for s in reversed(self.splits):
            position = rowids_of(s)[position]
        return position

    # ------------------------------------------------------------ rows
    def row(self, i: int):
        """Row ``i``: a tensor for a ragged rank of 1, else a ragged tensor (tf.map_fn's element, ``rt[i]``)."""
        start, limit = int(self.splits[0][i]), int(self.splits[0][i + 1])
        return take(self.values, np.arange(start, limit, dtype=np.int64))

    def take_rows(self, rows: np.ndarray) -> "RaggedTensor":
        """The rows at ``rows`` (tf.gather's), their values gathered."""
        rows = np.asarray(rows, dtype=np.int64)
        s = self.splits[0]
        starts, limits = s[rows], s[rows + 1]
        return self.with_values(take(self.values, spans(starts, limits))).with_outer(splits_of(limits - starts))

    def with_outer(self, splits: np.ndarray, uniform=None) -> "RaggedTensor":
        """These values under another outermost partition."""
        return RaggedTensor(self.flat_values, (splits, *self.splits[1:]), (uniform, *self.uniform[1:]))

    def items(self):
        return [self.row(i) for i in range(self.nrows)]

    def innermost_rows(self) -> list[Tensor]:
        """The rows of the innermost ragged dimension, their values' numbers (what string ops read)."""
        s, values = self.splits[-1], self.flat_values.value
        return [Tensor(values[s[i]:s[i + 1]]) for i in range(len(s) - 1)]

    def with_innermost(self, values):
        """Each row of the innermost ragged dimension replaced by one row of ``values`` (a tensor of one value a
        row: that dimension gone; a ragged tensor: its rows)."""
        if isinstance(values, RaggedTensor):
            return RaggedTensor(values.flat_values, self.splits[:-1] + values.splits, self.uniform[:-1] + values.uniform)
        return RaggedTensor(values, self.splits[:-1], self.uniform[:-1]) if self.ragged_rank > 1 else values

    # ------------------------------------------------------------ conversions
    def to_tensor(self, default_value=None, shape=None) -> Tensor:
        """The dense tensor of the bounding shape (or ``shape``, None where the bounding one's), each value at its
        position and ``default_value`` (zero, b"") elsewhere: a gather of the values and the default, as
        TensorFlow's RaggedTensorToTensor (its gradient reaches the values)."""
        bound = self.bounding()
        outer = 1 + self.ragged_rank
        wanted = bound if shape is None else _dims(shape)
        if len(wanted) != len(bound):           # (TensorFlow's kernel's words)
            raise KernelValueError(f"rt_input.shape and shape={_text(wanted)} are incompatible: rt_input.rank = "
                                   f"{len(bound)} but shape.rank = {len(wanted)}")
        dims = [b if d is None or d == -1 else d for b, d in zip(bound, wanted)]
        inner = tuple(self.flat_values.shape[1:])
        if tuple(dims[outer:]) != inner:
            raise KernelValueError(f"rt_input.shape and shape={_text(wanted)} are incompatible: tapecli pads and "
                                   f"truncates the ragged dimensions only (the inner ones are {list(inner)})")
        admit_result(dims, self.dtype, "RaggedTensor.to_tensor's result")
        values = self.flat_values
        count = values.shape[0]
        coords = self.coordinates()
        keep = np.all(coords < np.asarray(dims[:outer]), axis=1) if count else np.zeros(0, dtype=bool)
        positions = np.full(dims[:outer], count, dtype=np.int64)
        positions[tuple(coords[keep].T)] = np.arange(count, dtype=np.int64)[keep]
        if default_value is None:
            default = Tensor(np.array(b"", dtype=object) if self.dtype.hasobject else np.zeros((), self.dtype))
        else:
            default = convert_to_tensor(default_value, dtype=DType(dtype_name(self.dtype)))
        default = ops.reshape(ops.broadcast_to(default, inner), (1, *inner))
        return ops.gather(ops.concat([values, default], 0), Tensor(positions))

    def numpy(self) -> np.ndarray:
        """ragged_tensor.py's numpy(): rows of different lengths an object array of rows, of one length an array."""
        values = self.values.numpy() if isinstance(self.values, RaggedTensor) else self.flat_values.value
        s = self.splits[0]
        rows = [values[s[i]:s[i + 1]] for i in range(len(s) - 1)]
        if not rows:
            return np.zeros((0, 0) + values.shape[1:], dtype=values.dtype)
        ragged = any(len(row) != len(rows[0]) for row in rows)
        return np.array(rows, dtype=object if ragged else None)

    def to_list(self) -> list:
        """Nested Python lists of Python values (bytes for strings), as ragged_tensor.py's to_list()."""
        return _python(self.numpy_list())

    def numpy_list(self) -> list:
        values = self.values.numpy_list() if isinstance(self.values, RaggedTensor) else self.flat_values.value.tolist()
        s = self.splits[0].tolist()
        return [values[s[i]:s[i + 1]] for i in range(len(s) - 1)]

    def python_text(self) -> str:
        """``print(rt)`` and its repr: ``<tf.RaggedTensor [[...], ...]>``, NumPy's text of numpy() with commas."""
        with np.printoptions(formatter={"all": _formatter}):
            text = _formatter(self.numpy())
        return f"<tf.RaggedTensor {text}>"

    def tf_print_text(self, summarize: int) -> str:
        """tf.print's text (ragged_string_ops.ragged_tensor_to_string): each value as tf.strings.as_string
        writes it (a string quoted), rows in brackets, past ``summarize`` rows a dimension ``...``."""
        texts = np.array([_printed_value(v) for v in self.flat_values.value.reshape(-1)], dtype=object)
        rows = RaggedTensor(Tensor(texts.reshape(self.flat_values.shape)), self.splits).numpy_list()
        return _printed_rows(rows, summarize)

    def python_class(self) -> str:
        return "tensorflow.python.ops.ragged.ragged_tensor.RaggedTensor"

    # ------------------------------------------------------------ attributes
    def get_attribute(self, interp, attr, node):
        simple = _ATTRIBUTES.get(attr)
        if simple is not None:
            return simple(self)
        method = _METHODS.get(attr)
        if method is not None:
            return BoundMethod(attr, lambda call_node, *args, **kwargs: method(self, *args, **kwargs))
        raise NoAttribute(f"'RaggedTensor' object has no attribute '{attr}'")

    def negated(self) -> "RaggedTensor":
        return self.with_flat_values(ops.neg(self.flat_values))

    def operator(self, op: str, other, reflected: bool) -> "RaggedTensor":
        """``rt + 1``, ``rt * dense``, ``rt == other``...: the op of the flat values, the other operand aligned
        with them (interpreter/objects.py's object_operator, the bridge's LibraryObject)."""
        f = _OPERATORS.get(op)
        if f is None:
            raise TdfTypeError(f"unsupported operand type(s) for {op}: 'RaggedTensor'")
        x, y = (other, self) if reflected else (self, other)
        rt, fx, fy = aligned(x, y)
        return rt.with_flat_values(f(fx, fy))

    def getitem(self, key: tuple):
        """``rt[i]``, ``rt[i, j]``, ``rt[1:3]``, ``rt[:, :2]``: ragged_getitem.py's rules (an integer index into a
        ragged dimension after the first is TensorFlow's ValueError)."""
        return _indexed(self, tuple(_index_part(k) for k in key))


def _index_part(k):
    """An index item as Python's: an int, a slice of ints or None, Ellipsis, None (tf.newaxis)."""
    if isinstance(k, slice):
        return slice(*(None if p is None else to_int(p, "a slice bound") for p in (k.start, k.stop, k.step)))
    if k is None or k is Ellipsis:
        return k
    return to_int(k, "an index")


def _indexed(rt: RaggedTensor, key: tuple):
    if not key:
        return rt
    first, rest = key[0], key[1:]
    if first is Ellipsis or first is None:
        raise TdfValueError("tapecli indexes a RaggedTensor with integers and slices (no Ellipsis, no tf.newaxis)")
    if isinstance(first, int):
        n = rt.nrows
        if not -n <= first < n:
            raise IndexError(f"Row key {first} out of bounds")
        return _dense_rest(rt.row(first % n), rest)
    rows = np.arange(rt.nrows, dtype=np.int64)[first]
    picked = rt.take_rows(rows) if first != slice(None) else rt
    return _each_row(picked, rest) if rest else picked


def _dense_rest(value, rest: tuple):
    """A row indexed by the rest of the key: a tensor as tensors are, a ragged tensor as one."""
    if not rest:
        return value
    if isinstance(value, RaggedTensor):
        return _indexed(value, rest)
    try:
        value.value[rest]
    except IndexError as e:
        raise ShapeError(f"index out of range for shape {list(value.shape)}: {e}") from None
    return ops.getitem(value, rest)


def _each_row(rt: RaggedTensor, key: tuple):
    """``key`` applied within each row of ``rt`` (its dimensions after the first)."""
    first, rest = key[0], key[1:]
    if not isinstance(first, slice):
        raise TdfValueError("Cannot index into an inner ragged dimension.")
    s = rt.splits[0]
    lengths = lengths_of(s)
    if first.step is None or first.step == 1:
        begin = np.clip(np.where(np.asarray(first.start or 0) < 0, lengths + (first.start or 0), first.start or 0),
                        0, lengths)
        stop = lengths if first.stop is None else np.clip(
            np.where(first.stop < 0, lengths + first.stop, first.stop), 0, lengths)
        stop = np.maximum(stop, begin)
        positions, counts = spans(s[:-1] + begin, s[:-1] + stop), stop - begin
    else:
        picked = [np.arange(a, b, dtype=np.int64)[first] for a, b in zip(s[:-1], s[1:])]
        positions = np.concatenate(picked) if picked else np.zeros(0, dtype=np.int64)
        counts = np.array([len(p) for p in picked], dtype=np.int64)
    values = take(rt.values, positions)
    if rest:
        values = _each_row(values, rest) if isinstance(values, RaggedTensor) else \
            _dense_rest(values, (slice(None), *rest))
    return rt.with_values(values).with_outer(splits_of(counts))


def aligned(x, y):
    """Two operands of an elementwise op, one of them ragged: (the ragged tensor whose partition the result takes,
    x's flat operand, y's). Two ragged tensors must have one partition; a dense one broadcasts as TensorFlow
    broadcasts it (its outer dimension gathered by each value's row, its ragged dimensions of length 1)."""
    if isinstance(x, RaggedTensor) and isinstance(y, RaggedTensor):
        if len(x.splits) != len(y.splits) or any(not np.array_equal(a, b) for a, b in zip(x.splits, y.splits)):
            raise KernelValueError("Inputs must have identical ragged splits.\nCondition x == y did not hold.")
        return x, x.flat_values, y.flat_values
    if isinstance(x, RaggedTensor):
        return x, x.flat_values, dense_operand(x, y)
    return y, dense_operand(y, x), y.flat_values


def dense_operand(rt: RaggedTensor, value) -> Tensor:
    """A dense operand of an op with ``rt``, shaped to broadcast against its flat values."""
    t = ops.to_tensor(value)
    inner = rt.flat_values.ndim - 1
    if t.ndim <= inner:
        return t
    if t.weak:          # (a literal list takes the ragged tensor's dtype, as convert_to_tensor's preferred one)
        fits = {"b": "b", "i": "iuf", "u": "iuf", "f": "f"}.get(t.dtype.kind, "")
        t = ops.materialize(t, rt.dtype if rt.dtype.kind in fits else None)
    if t.ndim > rt.rank:
        raise ShapeError(f"a tensor of rank {t.ndim} does not broadcast against a RaggedTensor of rank {rt.rank}")
    shape = (1,) * (rt.rank - t.ndim) + tuple(t.shape)
    ragged, rest = shape[1:1 + rt.ragged_rank], shape[1 + rt.ragged_rank:]
    if None not in rt.uniform and any(n != 1 for n in ragged):       # (a uniform tensor: a dense one's rules)
        full = ops.broadcast_to(ops.reshape(t, shape), (rt.nrows, *rt.uniform, *rest))
        return ops.reshape(full, (-1, *rest))
    if any(n != 1 for n in ragged):
        raise KernelValueError(f"Unable to broadcast: a dense tensor of shape {list(t.shape)} against a "
                               f"RaggedTensor of shape {rt.shape}: its ragged dimensions must be 1")
    t = ops.reshape(t, (shape[0], *rest))
    if shape[0] == 1:
        return t
    if shape[0] != rt.nrows:
        raise KernelValueError(f"Unable to broadcast: dimension 0 of a dense tensor of shape {list(shape)} does not "
                               f"match the RaggedTensor's {rt.nrows} rows")
    return ops.gather(t, Tensor(rt.outer_rows()))


_OPERATORS = {"+": ops.add, "-": ops.sub, "*": ops.mul, "/": ops.div, "//": ops.floordiv, "%": ops.mod,
              "**": ops.pow_, "==": ops.equal, "!=": ops.not_equal, "<": ops.less, "<=": ops.less_equal,
              ">": ops.greater, ">=": ops.greater_equal,
              **{symbol: functools.partial(ops.bitwise_operator, symbol) for symbol in "&|^"}}


def _printed_value(v) -> str:
    if isinstance(v, bytes):
        return "'" + v.decode("utf-8", "replace").replace("\\", "\\\\").replace("'", "\\'") + "'"
    if isinstance(v, (bool, np.bool_)):
        return "true" if v else "false"
    if isinstance(v, (float, np.floating)):
        return "%f" % v
    return str(v)


def _printed_rows(rows, summarize: int) -> str:
    if not isinstance(rows, list):
        return rows
    pieces = [_printed_rows(r, summarize) for r in rows]
    if summarize >= 0 and len(pieces) > 2 * summarize:
        pieces = [*pieces[:summarize], "...", *pieces[len(pieces) - summarize:]]
    return "[" + ", ".join(pieces) + "]"


def _formatter(x) -> str:
    """ragged_tensor.py's _formatter: NumPy's text of an array with ", " between its elements."""
    if isinstance(x, np.ndarray):
        return np.array2string(x, separator=", ") if x.size else repr(x.tolist())
    return str(x)


def _python(value):
    """A to_list() value as the program holds it: numbers as Python's (literals), bools, bytes."""
    if isinstance(value, list):
        return [_python(v) for v in value]
    if isinstance(value, bool):
        return PythonBool(np.array(value))
    if isinstance(value, (int, float)):
        return Tensor(np.asarray(value)[()], weak=True)
    return value


def _text(dims) -> str:
    return "[" + ",".join("-1" if d is None else str(d) for d in dims) + "]"


def _dims(shape) -> list:
    """A shape argument whose dimensions may be None (to_tensor's ``shape=[None, 2]``)."""
    if isinstance(shape, Tensor):
        return [int(d) for d in np.asarray(shape.value).reshape(-1)]
    return [None if d is None else to_int(d, "a dimension") for d in shape]


def int64_splits(row_splits_dtype) -> None:
    """tapecli's row splits are int64 (TensorFlow's default); int32 ones are refused, not made silently."""
    if row_splits_dtype is not None and to_dtype(row_splits_dtype) != np.int64:
        raise TdfValueError("tapecli's ragged tensors have int64 row splits (row_splits_dtype=tf.int64)")


def ragged_input(value, what: str = "the input") -> RaggedTensor:
    if not isinstance(value, RaggedTensor):
        raise TdfTypeError(f"{what} must be a RaggedTensor, got {type_word(value)}")
    return value


def is_ragged(value) -> bool:
    return isinstance(value, RaggedTensor)


def check_splits(splits: np.ndarray, count: int, what: str) -> None:
    """TensorFlow's checks of row splits: a vector starting at zero, never decreasing, ending at the values' count."""
    if splits.ndim != 1 or not len(splits):
        raise ShapeError(f"Arguments to {what} do not form a valid RaggedTensor: row_splits must be a non-empty "
                         "vector")
    if splits[0] != 0:
        raise KernelValueError(f"Arguments to {what} do not form a valid RaggedTensor:zero\nCondition x == y did "
                               "not hold.")
    if (np.diff(splits) < 0).any():
        raise KernelValueError(f"Arguments to {what} do not form a valid RaggedTensor:monotonic\nCondition x >= 0 "
                               "did not hold element-wise.")
    if splits[-1] != count:
        raise KernelValueError(f"Arguments to {what} do not form a valid RaggedTensor:nvals\nCondition x == y did "
                               f"not hold. ({int(splits[-1])} != {count})")


def int_vector(value, what: str) -> np.ndarray:
    """A partition argument (row splits, lengths, ids) as int64 NumPy: a list or an integer tensor."""
    if isinstance(value, (list, PythonTuple)) and not value:
        return np.zeros(0, dtype=np.int64)
    t = value if isinstance(value, Tensor) else convert_to_tensor(value, dtype=DType("int64"))
    if t.dtype.kind not in "iu":
        raise TdfTypeError(f"{what} must be an integer tensor, got {dtype_name(t.dtype)}")
    return np.asarray(t.value, dtype=np.int64)


def values_of(values):
    """A constructor's values: a ragged tensor as it is, anything else as tf.convert_to_tensor converts it."""
    if isinstance(values, RaggedTensor):
        return values
    t = convert_to_tensor(values)
    if t.ndim == 0:
        raise TdfValueError("values must have rank at least 1")
    return t


def from_row_splits(values, row_splits, what: str = "from_row_splits", uniform=None) -> RaggedTensor:
    values = values_of(values)
    splits = row_splits if isinstance(row_splits, np.ndarray) else int_vector(row_splits, "row_splits")
    count = values.nrows if isinstance(values, RaggedTensor) else values.shape[0]
    check_splits(splits, count, what)
    if isinstance(values, RaggedTensor):
        return RaggedTensor(values.flat_values, (splits, *values.splits), (uniform, *values.uniform))
    return RaggedTensor(values, (splits,), (uniform,))


def from_uniform_row_length(values, uniform_row_length, nrows=None, validate=True, name=None):
    values = values_of(values)
    count = values.nrows if isinstance(values, RaggedTensor) else values.shape[0]
    length = to_int(uniform_row_length, "uniform_row_length")
    rows = (count // length if length else 0) if nrows is None else to_int(nrows, "nrows")
    if rows * length != count:
        raise KernelValueError("Arguments to from_uniform_row_length do not form a valid RaggedTensor:nvals\n"
                               "Condition x == y did not hold.")
    return from_row_splits(values, np.arange(rows + 1, dtype=INT64) * length, "from_uniform_row_length", length)


def from_tensor(tensor, lengths=None, padding=None, ragged_rank=1, name=None, row_splits_dtype=None):
    """The rows of a dense tensor: each as long as ``lengths`` says, or ending before its trailing ``padding``, or
    whole (a uniform row length then); ``ragged_rank`` > 1 merges the outer dimensions first, as TensorFlow does."""
    int64_splits(row_splits_dtype)
    t = convert_to_tensor(tensor)
    rank = to_int(ragged_rank, "ragged_rank")
    if lengths is not None and padding is not None:
        raise TdfValueError("Specify argument `lengths` or `padding`, but not both.")
    if not 0 < rank < t.ndim:
        raise TdfValueError(f"ragged_rank must be greater than 0 and less than the rank of the tensor ({t.ndim}); "
                            f"got {rank}")
    if rank > 1:
        dims = list(t.shape)
        sizes = np.cumprod(dims)
        result = from_tensor(ops.reshape(t, (int(sizes[rank - 1]), *dims[rank:])), lengths, padding)
        for axis in range(rank - 1, 0, -1):
            result = from_uniform_row_length(result, dims[axis], int(sizes[axis - 1]))
        return result
    rows, width = t.shape[0], t.shape[1]
    flat = ops.reshape(t, (rows * width, *t.shape[2:]))
    if lengths is None and padding is None:
        return from_uniform_row_length(flat, width, rows)
    if padding is not None:
        pad = convert_to_tensor(padding, dtype=DType(dtype_name(t.dtype)))
        same = np.equal(t.value, pad.value)
        same = same.reshape(rows, width, -1).all(axis=2) if t.ndim > 2 else same
        kept = np.where(~same, np.arange(1, width + 1), 0).max(axis=1) if width else np.zeros(rows, dtype=INT64)
    else:
        kept = np.minimum(int_vector(lengths, "lengths"), width)
        if len(kept) != rows:
            raise KernelValueError(f"lengths has {len(kept)} rows; the tensor has {rows}")
    starts = np.arange(rows, dtype=INT64) * width
    return from_row_splits(take(flat, spans(starts, starts + kept)), splits_of(kept), "from_tensor")


def ragged_rows(flat_values: Tensor, counts, outer_shape) -> RaggedTensor:
    """Rows of ``counts`` values each, under the uniform dimensions of a batch of ``outer_shape`` (its last the
    rows'): what tf.strings.split makes of a batch of strings of that shape."""
    result = from_row_splits(flat_values, splits_of(counts), "from_row_lengths")
    rows = len(counts)
    for width in reversed(tuple(outer_shape)[1:]):
        rows = rows // width if width else 0
        result = from_uniform_row_length(result, width, rows)
    return result


def row_lengths(rt: RaggedTensor, axis=1) -> Tensor | RaggedTensor:
    axis = to_int(axis, "axis")
    axis = axis + rt.rank if axis < 0 else axis
    if axis == 0:
        raise TdfValueError("axis=0 is not a ragged dimension: use nrows()")
    if axis == 1:
        return Tensor(lengths_of(rt.splits[0]))
    if axis - 1 < rt.ragged_rank:
        inner = rt.values
        return rt.with_values(row_lengths(inner, axis - 1))
    raise TdfValueError(f"axis={axis} is not a ragged dimension")


def merge_dims(rt: RaggedTensor, outer_axis, inner_axis):
    """Dimensions outer_axis..inner_axis merged into one, a pair of neighbours at a time (0 and 1: the rows'
    values one after the other)."""
    outer, inner = to_int(outer_axis, "outer_axis"), to_int(inner_axis, "inner_axis")
    outer, inner = (a + rt.rank if a < 0 else a for a in (outer, inner))
    if not 0 <= outer <= inner < rt.rank:
        raise TdfValueError(f"Expected outer_axis ({outer}) to be less than or equal to inner_axis ({inner}), both "
                            f"in [0, {rt.rank})")
    result = rt
    for _ in range(inner - outer):
        result = _merge_pair(result, outer)
    return result


def _merge_pair(x, axis: int):
    """Dimensions ``axis`` and ``axis + 1`` of ``x`` merged."""
    if not isinstance(x, RaggedTensor):
        shape = list(x.shape)
        return ops.reshape(x, (*shape[:axis], -1, *shape[axis + 2:]))
    if axis == 0:
        return x.values
    if axis > 1:
        return x.with_values(_merge_pair(x.values, axis - 1))
    values = x.values           # (each row's sub-rows become their contents: the row splits compose)
    inner = values.splits[0] if isinstance(values, RaggedTensor) else \
        np.arange(values.shape[0] + 1, dtype=np.int64) * values.shape[1]
    return RaggedTensor(x.flat_values, (inner[x.splits[0]], *x.splits[2:]), (None, *x.uniform[2:])) \
        if isinstance(values, RaggedTensor) else RaggedTensor(_merge_pair(values, 0), (inner[x.splits[0]],))


def nrows_of(rt: RaggedTensor, out_type=None) -> Tensor:
    return Tensor(np.array(rt.nrows, dtype=INT64 if out_type is None else to_dtype(out_type)))


def bounding_shape(rt: RaggedTensor, axis=None, out_type=None) -> Tensor:
    shape = np.asarray(rt.bounding(), dtype=INT64 if out_type is None else to_dtype(out_type))
    return Tensor(shape if axis is None else shape[to_int(axis, "axis")])


_ATTRIBUTES = {
    "ragged_rank": lambda rt: Tensor(np.array(rt.ragged_rank), weak=True),
    "dtype": lambda rt: DType(dtype_name(rt.dtype)),
    "shape": lambda rt: rt.shape,
    "flat_values": lambda rt: rt.flat_values,
    "values": lambda rt: rt.values,
    "row_splits": lambda rt: Tensor(rt.splits[0]),
    "nested_row_splits": lambda rt: PythonTuple(Tensor(s) for s in rt.splits),
    "uniform_row_length": lambda rt: None if rt.uniform[0] is None else Tensor(np.array(rt.uniform[0], INT64)),
    "row_splits_dtype": lambda rt: DType("int64"),
}
def to_sparse(rt: RaggedTensor):
    """RaggedTensor.to_sparse: each flat value's position in the bounding shape (an inner dimension's too), the
    values in that order (their gradient reaches the flat values) and the bounding shape."""
    from tapecli.library.tf_sparse import made         # (tf.sparse: where a program asks for one)
    inner = rt.flat_values.shape[1:]
    coords = rt.coordinates()
    if inner:
        within = np.indices(inner).reshape(len(inner), -1).T
        coords = np.concatenate([np.repeat(coords, len(within), axis=0), np.tile(within, (len(coords), 1))], axis=1)
    return made(coords, ops.reshape(rt.flat_values, (-1,)), rt.bounding())


_METHODS = {
    "numpy": lambda rt: NumpyArray(rt.numpy()),
    "to_list": lambda rt: rt.to_list(),
    "to_tensor": lambda rt, default_value=None, name=None, shape=None: rt.to_tensor(default_value, shape),
    "row_lengths": lambda rt, axis=1, name=None: row_lengths(rt, axis),
    "value_rowids": lambda rt, name=None: Tensor(rowids_of(rt.splits[0])),
    "nrows": lambda rt, out_type=None, name=None: nrows_of(rt, out_type),
    "row_starts": lambda rt, name=None: Tensor(rt.splits[0][:-1]),
    "row_limits": lambda rt, name=None: Tensor(rt.splits[0][1:]),
    "nested_row_lengths": lambda rt, name=None: PythonTuple(Tensor(lengths_of(s)) for s in rt.splits),
    "nested_value_rowids": lambda rt, name=None: PythonTuple(Tensor(rowids_of(s)) for s in rt.splits),
    "bounding_shape": lambda rt, axis=None, name=None, out_type=None: bounding_shape(rt, axis, out_type),
    "merge_dims": merge_dims,
    "with_values": lambda rt, new_values: rt.with_values(values_of(new_values)),
    "with_flat_values": lambda rt, new_values: rt.with_flat_values(new_values),
    "get_shape": lambda rt: rt.shape,
    "to_sparse": lambda rt, name=None: to_sparse(rt),
}
