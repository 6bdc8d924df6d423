"""The op table: each op's forward kernel, gradient rule and forward-mode rule, side by side.

Gradient rules (``vjp``) and forward-mode rules (``jvp``) are written with the public
op functions below, so the backward pass is itself recorded on any tape that
watches what it touches. ``vjp=None`` on a differentiable op means "no gradient
registered" (a GradientError at backward time); ``differentiable=False`` means the
op cuts the path: its output is never recorded.

Beside each rule the table says:

* ``saves``: which inputs (by index) and whether the output (``"out"``) its rules read;
  a record keeps only those (relu keeps its output, add nothing). Default: everything.
* ``grads`` (elementwise ops): one formula per input, ``f(m, g, *inputs, y, attrs)``, the
  input's gradient before broadcasting is undone, written against a namespace ``m`` of
  math functions. With ``m`` this module it runs as recordable ops (the op's vjp and, with
  a tangent for ``g``, its jvp); ``tapecli.fusion`` passes a namespace that writes Numba
  source instead, so a fused kernel differentiates with the same formulas.
* ``batchable``: the rules keep leading batch dimensions of the upstream gradient (or
  tangent): a jacobian is one backward pass over a batch of one-hot cotangents. The rules
  read the batch rank as ``g.ndim - output.ndim``.
* A vjp taking a third argument gets ``needs``, one bool per input: gradients nobody
  asked for are not computed (a constant's side of a matmul).
"""
from __future__ import annotations


import math

import numpy as np

from tapecli import kernels
from tapecli.kernels.numpy_kernels import add_n_order
from tapecli.errors import DtypeMismatch, KernelValueError, ShapeError, TdfTypeError, TdfValueError
from tapecli.lazymodule import LazyModule
from tapecli.runtime.context import current
from tapecli.runtime.limits import admit, admit_result
from tapecli.ops.scalar import (FLOAT_SCALARS, python_result, recorded_scalar, same_float_scalars, scalar_kernel,
                               unwatched_scalar)
from tapecli.runtime.tape import STUB_BYTES, Stub, record_on, stub
from tapecli.runtime.values import (NumpyArray, PythonBool, Tensor, Variable, convert_weak, dtype_name, is_float,
                                    literal_array, make_tensor, MAX_LITERAL_DIMS, text_array)
from tapecli.runtime import spelling

_Tensor = Tensor
cost = LazyModule("tapecli.ops.cost", globals())     # (by the ops ``weighed``: their families load on first use)


_run_kernel = kernels.run
_run_host = kernels.run_on_host
_THRESHOLD = kernels.THRESHOLD
_numba_forced = kernels.numba_forced
_recording = kernels.recording
_tensor = make_tensor


class Op:
    __slots__ = ("name", "kernel", "vjp", "jvp", "differentiable", "weak_arith", "unify", "float_only", "saves",
                 "grads", "batchable", "vjp_needs", "kept_extra", "release_extra", "_idx", "_save_in", "_save_out",
                 "_keeps_inputs", "_unifies", "_rules", "program", "public_name", "fusion", "_scalar_operator", "flops",
                 "strings", "python")

    def __init__(self, name, *, kernel=None, vjp=None, jvp=None, differentiable=True, weak_arith=False,
                 unify="all", float_only=False, saves="all", grads=None, batchable=False, program=(),
                 public_name=None, fusion=None, strings=False, scalar_operator=None, python=None, weighed=False):
        self.name = name
        self.strings = strings            # TensorFlow's kernel takes string tensors too (its other inputs' dtypes)
        self.program = tuple(program)     # the builtin names a program calls it by (derived wrappers)
        self.public_name = public_name or name   # its function in ``tapecli.ops``
        self.fusion = fusion              # elementwise: Numba source template of one element, "{0}" the input
        self.kernel = kernel or name
        self.vjp = vjp
        self.jvp = jvp
        self.differentiable = differentiable
        self.weak_arith = weak_arith      # all-literal inputs give a literal (Python arithmetic)
        self.unify = unify                # indices of inputs that must share one dtype
        self.float_only = float_only
        self.saves = saves                # "all", or input indices and "out": what the rules read
        self.grads = grads                # elementwise: per-input gradient formulas (see the module doc)
        self.batchable = batchable        # True, False, or a function of the record
        self.vjp_needs = vjp is not None and _arg_count(vjp) >= 3
        self.kept_extra = None            # record -> extra tensors it keeps (fused ops)
        self.release_extra = None         # record -> None: drop them
        self._idx = None if unify == "all" else tuple(unify)
        self._unifies = self._idx != ()
        self._rules = None                # compiled small-array gradient rules (see _small_rule)
        # Python's operator on two NumPy float scalars of one dtype: the ufunc's IEEE arithmetic, bit for bit, at a
        # fraction of its time (ops/scalar.py's short path)
        self._scalar_operator = scalar_operator
        # Python's operator on Python's numbers: the op of number literals alone (the interpreter's Python ints,
        # 64-bit, and floats) as Python computes it (ops/scalar.python_result)
        self.python = python
        if saves == "all":
            self._save_in, self._save_out = None, True
        else:
            self._save_in = frozenset(i for i in saves if isinstance(i, int))
            self._save_out = "out" in saves
        self._keeps_inputs = False        # set by register(): every input is kept (no stubs to make)
        # its kernel's FLOPs and their rate, weighed against a time limit (ops/cost.py's FLOPS, where ``weighed``)
        self.flops = cost.FLOPS[name] if weighed else None

    def can_batch(self, rec) -> bool:
        b = self.batchable
        return b(rec) if callable(b) else bool(b)

    def __repr__(self):
        return f"Op({self.name})"


def _arg_count(f) -> int:
    code = getattr(f, "__code__", None)
    return code.co_argcount if code is not None else 2


OPS: dict[str, Op] = {}


def register(name, *, numpy=None, numba=None, paired=None, **kw) -> Op:
    """Add an op to the table. ``numpy``: its NumPy kernel (arrays in, array out), registered into the
    kernels room under the op's kernel name; ``numba``: how large tensors are served: ``True``,
    ``kernels/numba_kernels.py`` implements that kernel by hand; ``"exact"``, by hand with the NumPy kernel's
    bits (served from fewer elements once Numba has started: ``kernels.STARTED_THRESHOLD``); ``"formula"``,
    Numba's kernel is made from the op's ``fusion`` formula (where it gives the NumPy kernel's bits: one IEEE
    operation a element);
    otherwise the NumPy kernel serves them too (the set of Numba kernels is derived from these);
    ``paired``: {another kernel: a NumPy function giving both kernels' results from the same arguments}
    (``kernels.PAIRED``). An elementwise op with a ``fusion`` formula and no kernel written by hand (none
    given, none of that name in the kernels room) has every backend's kernel generated from its formula
    (``kernels/formulas.py``)."""
    kw.setdefault("batchable", True)
    op = Op(name, **kw)
    generated = numpy is None and not numba and op.kernel not in kernels.NUMPY_KERNELS
    if op.fusion is not None and (generated or numba == "formula"):
        kernels.register(op.kernel, numpy, formula=op.fusion, arity=len(op.grads) if op.grads else 1, paired=paired)
    elif numpy is not None or numba:
        kernels.register(op.kernel, numpy, numba=numba, paired=paired)
    # a binary op keeping both inputs (mul, matmul, maximum): no stub to make for them
    op._keeps_inputs = op._save_in is not None and {0, 1} <= op._save_in
    OPS[name] = op
    return op


# ------------------------------------------------------------------- applying

_MAX_PACKED_DEPTH = 32
_TEXT = np.dtype(object)        # a string tensor's (runtime.values.text_array)


def _holds_tensor(x) -> bool:
    """Whether a (nested) list holds a tensor: walked once each, so a list that holds itself ends."""
    seen, stack = {id(x)}, [x]
    while stack:
        for v in stack.pop():
            if isinstance(v, (Tensor, Variable)):
                return True
            if isinstance(v, (list, tuple)) and id(v) not in seen:
                seen.add(id(v))
                stack.append(v)
    return False


def _packed(x, depth: int = 0) -> Tensor:
    """A (nested) list holding tensors as TensorFlow packs it for an op: literals stay literals, the rest is the
    stack of its items (its gradient flows to each)."""
    if depth > _MAX_PACKED_DEPTH:          # (deeper than any tensor's rank: a list that holds itself)
        raise TdfValueError(f"a list nested more than {_MAX_PACKED_DEPTH} deep cannot be a tensor")
    items = [_packed(v, depth + 1) if isinstance(v, (list, tuple)) else to_tensor(v) for v in x]
    if len({t.shape for t in items}) > 1:
        raise TdfValueError("Can't convert non-rectangular Python sequence to Tensor.")     # TensorFlow's words
    if all(t.__class__ is Tensor and t.weak for t in items):
        return Tensor(literal_array([t.value for t in items]), weak=True)
    return _E.stack(items, 0)


def to_tensor(x) -> Tensor:
    """A program value as an op input: variables are read, numbers become literals."""
    ctx = current()
    if isinstance(x, Tensor):       # (the hot path: one class test before a NumPy array's strings are looked at)
        if x.__class__ is NumpyArray:
            if x.value.dtype.kind in "SUO":
                return Tensor(text_array(x.value))       # NumPy's strings (or objects): TensorFlow's string tensor
            # a copy, as TensorFlow converts one: the program's later writes to its array leave the op's alone
            return NumpyArray(x.value.copy(), weak=x.weak) if x.value.ndim else x
        return x
    if isinstance(x, Variable):
        for tape in ctx.tapes:
            if tape.watch_accessed_variables and x.trainable and tape.recording:
                tape.watch_variable(x, "accessed", ctx.settings.line)
        if ctx.observers and ctx.tapes:
            for observer in ctx.observers:
                observer.read(x, ctx.tapes, ctx.settings.line)
        return x.read()
    if isinstance(x, (bool, int, float, np.ndarray, np.generic)):
        if isinstance(x, (np.ndarray, np.generic)) and x.dtype.kind in "SUO":       # NumPy's strings (or objects)
            return Tensor(text_array(x))
        return Tensor(literal_array(x), weak=not isinstance(x, (np.ndarray, np.generic)))
    if isinstance(x, (list, tuple)) and not x:
        return Tensor(np.zeros(0), weak=True)       # (TensorFlow's [] is an empty float32 tensor)
    if isinstance(x, (list, tuple)) and all(v.__class__ is Tensor and v.weak for v in x) \
            and len({v.shape for v in x}) == 1:
        return Tensor(literal_array([v.value for v in x]), weak=True)    # a tuple of literals: (2, 3, 4)
    if isinstance(x, (list, tuple)) and _holds_tensor(x):
        return _packed(x)
    dense = getattr(x, "as_dense_tensor", None)         # (tf.IndexedSlices: its dense tensor, as TensorFlow converts it)
    if dense is not None:
        return dense()
    if text_leaf(x):
        return Tensor(text_array(x))
    raise TdfTypeError(f"expected a tensor, got {_word(x)}")


def numeric(t: Tensor, what: str) -> Tensor:
    """``t``, which an op without a kernel for strings takes: a string tensor is TensorFlow's error."""
    if t.value.dtype is _TEXT:
        raise KernelValueError(f"Value for attr 'T' of string is not in the list of allowed values: {what} takes "
                               f"numeric tensors")       # (TensorFlow's words first)
    return t


def text_leaf(x) -> bool:
    """A string (or bytes), a NumPy array of them, or a (nested) list whose first leaf is one: what TensorFlow
    makes a string tensor of. (At most as deep as a literal may nest: a list that holds itself has no leaf.)"""
    if isinstance(x, np.ndarray):
        return x.dtype.kind in "SU"
    for _ in range(MAX_LITERAL_DIMS + 1):
        if not (isinstance(x, (list, tuple)) and x):
            return isinstance(x, (str, bytes))
        x = x[0]
    return False


def _word(x) -> str:
    from tapecli.runtime.tape import type_word
    return type_word(x)


def default_dtype(value: np.ndarray) -> np.dtype:
    """The dtype a literal takes on its own: float32 (or --dtype), int32, bool."""
    if value.dtype.kind == "f":
        return current().settings.float_dtype
    if value.dtype.kind in "iu":
        # like TensorFlow's conversion of a Python int: int32, or int64 when it does not fit
        fits = value.size == 0 or (value.min() >= -2**31 and value.max() < 2**31)
        return np.dtype(np.int32 if fits else np.int64)
    return value.dtype


# Literal scalars meet tensors over and over (``y * 1.01`` in a loop): their converted
# values are kept, read-only, by (dtype, bytes, target dtype).
_WEAK_CACHE: dict = {}


def materialize(t: Tensor, dtype=None) -> Tensor:
    """A literal as a tensor of ``dtype`` (its default dtype if None)."""
    if not t.weak:
        return t
    v = t.value
    dt = dtype if isinstance(dtype, np.dtype) else np.dtype(dtype) if dtype is not None else default_dtype(v)
    if dt.kind == "f" and v.dtype.kind in "iuf" and kernels.traced(v):    # a traced value: a kernel converts it
        return _tensor(_run_kernel("cast", [v], {"dtype": dt}))           # (convert_weak's bits), written down
    if v.ndim == 0:
        # a literal array the interpreter keeps (read-only) is known by identity, others by value
        key = (id(v), dt.char)
        entry = _WEAK_CACHE.get(key)
        if entry is not None and entry[0] is v:
            return entry[2]
        if v.flags.writeable:
            key = (v.dtype.char, v.tobytes(), dt.char)
            entry = _WEAK_CACHE.get(key)
        if entry is None or entry[0] is not v and key[0].__class__ is int:
            arr = convert_weak(v, dt)[()]     # a NumPy scalar: kernels on scalars are fastest
            if len(_WEAK_CACHE) > 4096:
                _WEAK_CACHE.clear()
            # a constant: one tensor serves every use (nothing watches or records it as a source)
            _WEAK_CACHE[key] = entry = (v, arr, _tensor(arr))
        return entry[2]
    return Tensor(convert_weak(v, dt))


_HOST_VALUES = (NumpyArray, PythonBool)      # values a program holds that TensorFlow converts at an op's input


def _common_dtype(op: Op, strong: list, idx, tensors: list) -> np.dtype:
    """The dtype an op's inputs of different dtypes meet in: its first TensorFlow tensor's, which NumPy arrays
    and Python bools take (TensorFlow's conversion of an op's inputs); among NumPy arrays alone, NumPy's
    promotion. Two TensorFlow tensors of different dtypes are an error, as in TensorFlow."""
    tf_tensors = [t for t in strong if not isinstance(t, _HOST_VALUES)]
    if not tf_tensors:
        return np.result_type(*(t.dtype for t in strong))
    dtype = tf_tensors[0].dtype
    for t in tf_tensors[1:]:
        if t.dtype != dtype:
            a, b = dtype_name(dtype), dtype_name(t.dtype)
            first = next(i for i in idx if tensors[i] is tf_tensors[0])
            later = next(i for i in idx if tensors[i] is t and i > first)
            # the operand to convert: an integer (or bool) one to the float one's dtype, else the later one
            convert = 0 if dtype.kind != "f" and t.dtype.kind == "f" else 1
            raise DtypeMismatch(f"{op.name} got tensors of different dtypes: {a} and {b}", dtypes=[a, b],
                                convert=convert, inputs=[first, later], spell_cast=spelling.fixed_cast())
    return dtype


def _unify(op: Op, tensors: list[Tensor]) -> list[Tensor]:
    ctx = current()
    idx = range(len(tensors)) if op._idx is None else op._idx
    # The common cases: strong tensors of one dtype (a float one where the op wants it), and
    # literals beside them, which take that dtype.
    dtype = None
    weak = False
    for i in idx:
        t = tensors[i]
        if t.weak:
            weak = True
            continue
        d = t.value.dtype
        if dtype is None:
            dtype = d
        elif d is not dtype and d != dtype:
            dtype = None
            break
    else:
        if dtype is not None and (not op.float_only or dtype.kind == "f"):
            if weak:
                for i in idx:
                    if tensors[i].weak:
                        tensors[i] = materialize(tensors[i], dtype)
            return tensors
    group = [tensors[i] for i in idx]
    strong = [t for t in group if not t.weak]
    if strong:
        dtype = _common_dtype(op, strong, idx, tensors)
        for i in idx:
            t = tensors[i]
            if not t.weak and t.dtype != dtype:
                # a NumPy array or a Python bool is converted to the dtype of the op's TensorFlow tensor, as
                # TensorFlow converts an op's inputs that are not tensors (a float array into ints truncates)
                tensors[i] = Tensor(t.value.astype(dtype))
        for i in idx:
            if tensors[i].weak:
                tensors[i] = materialize(tensors[i], dtype)
    elif group and not op.weak_arith:
        for i in idx:
            tensors[i] = materialize(tensors[i])
    if op.float_only:
        for i in idx:
            t = tensors[i]
            if not is_float(t.dtype):
                if t.weak:
                    tensors[i] = materialize(t, ctx.settings.float_dtype)
                else:
                    raise TdfTypeError(f"{op.name} needs a float tensor, got {dtype_name(t.dtype)}",
                                       hint=f"use {spelling.cast('x', dtype_name(ctx.settings.float_dtype))}")
    return tensors


def _admit_broadcast(op: Op, tensors) -> None:
    """An elementwise result larger than every input (ones([20000, 1]) * ones([1, 20000])) is weighed
    before the kernel allocates it."""
    first = tensors[0].value.shape
    for t in tensors:
        if t.value.shape != first:
            break
    else:
        return
    if len(tensors) == 2:       # one shape the other's trailing dimensions (a bias): the result is the larger
        a, b = first, tensors[1].value.shape
        if len(a) < len(b):
            a, b = b, a
        if not b or a[len(a) - len(b):] == b:
            return
    try:
        shape = np.broadcast_shapes(*(t.value.shape for t in tensors))
    except ValueError:
        return                      # the kernel names the shapes
    if math.prod(shape) > max(t.value.size for t in tensors):
        admit_result(shape, max((t.value.dtype for t in tensors), key=lambda d: d.itemsize), f"the result of {op.name}")


# The ops that take bfloat16 tensors (ml_dtypes' type, NumPy's kind "V"): those tests/kernels/test_tf_half.py
# finds TensorFlow's bits for (float32's of the operands, rounded; sums and means added in float32), and those
# that move, compare or convert values. Any other refuses them rather than give other bits than TensorFlow's.
BFLOAT16_OPS = frozenset(
    "cast matmul add sub mul div neg abs sign maximum minimum square sqrt exp log tanh sigmoid relu sigmoid_grad tanh_grad "
    "sum mean max min argmax argmin equal not_equal greater greater_equal less less_equal where reshape transpose "
    "cast_to_int getitem concat stack broadcast_to identity index_grad masked_grad bias_add bias_add_grad".split())


def _refuse_bfloat16(op: Op):
    raise TdfTypeError(f"{op.public_name} of a bfloat16 tensor is not in tapecli: its bfloat16 ops are those whose "
                       "bits it checks against TensorFlow's (docs/tf-surface.md, Dtypes)",
                       hint=f"{spelling.cast('x', 'float32')} first")


# The TensorFlow kernels of the binary elementwise ops, which name them in an InvalidArgumentError of shapes that do
# not broadcast ("Incompatible shapes: [2,3] vs. [4] [Op:AddV2] name: ").
_BROADCASTING_KERNELS = {"add": "AddV2", "sub": "Sub", "mul": "Mul", "div": "RealDiv", "maximum": "Maximum",
                         "minimum": "Minimum", "pow": "Pow", "mod": "FloorMod"}


def apply(op: Op, inputs, **attrs) -> Tensor:
    ctx = current()
    if not attrs and ctx.mode.plain_ops:
        result = recorded_scalar(op, inputs, ctx) if ctx.tapes else unwatched_scalar(op, inputs)
        if result is not None:
            return result
    tensors = [x if x.__class__ is _Tensor else to_tensor(x) for x in inputs]
    if not op.strings:
        for t in tensors:
            if t.value.dtype is _TEXT:
                numeric(t, op.public_name)
            elif t.value.dtype.kind == "V" and op.name not in BFLOAT16_OPS:
                _refuse_bfloat16(op)
    if len(tensors) > 1 and (op.grads is not None or op.weak_arith):
        _admit_broadcast(op, tensors)
    if op._unifies:
        if len(tensors) == 1:
            t = tensors[0]
            if t.weak or (op.float_only and t.value.dtype.kind != "f"):
                tensors = _unify(op, tensors)
        elif not same_float_scalars(tensors):
            tensors = _unify(op, tensors)
    if op.flops is not None and ctx.settings.deadline is not None and ctx.device is None:
        cost.weigh(op.name, op.flops, [t.value for t in tensors], attrs, ctx.settings)
    # literals in, a literal out: its value is a Python number's, on the host (on a device too)
    weak = False
    for t in tensors:
        if not t.weak:
            break
    else:
        weak = bool(tensors)
    try:
        out = scalar_kernel(op, tensors) if not attrs else None
        # (not while a plan traces: a value computed outside the kernels would be a constant of the plan)
        if out is None and weak and op.python is not None and not _recording():
            out = python_result(op, [t.value for t in tensors])
        if out is None:
            out = (_run_host if weak else _run_kernel)(op.kernel, [t.value for t in tensors], attrs)
    except MemoryError:
        from tapecli.errors import LimitError
        raise LimitError(f"{op.name} ran out of memory", hint="use smaller tensors") from None
    except TypeError as e:      # NumPy refuses the dtypes, e.g. -True; or the call's arguments do not bind
        if not tensors:
            raise TdfTypeError(f"{op.name}() takes its input tensors by position") from None
        if "keyword argument" in str(e):
            raise TdfTypeError(f"{op.name}() got an {str(e).split('got an ', 1)[-1]}") from None
        kinds = " and ".join(dtype_name(t.dtype) for t in tensors)
        raise TdfTypeError(f"{op.name} does not take {kinds} tensors", hint=f"{spelling.cast('x', 'float32')} first") from None
    except ValueError as e:
        shapes = " and ".join(str(list(t.shape)) for t in tensors)
        if _empty_input(tensors):
            raise ShapeError(f"{op.name} of an empty tensor (shape {shapes})") from None
        if (op.grads is not None or op.weak_arith) and _broadcasts(tensors):
            # an elementwise op whose shapes fit: the values are refused (an integer division by zero, integers to
            # negative powers): TensorFlow's kernel refuses them, an InvalidArgumentError
            raise KernelValueError(f"{op.name}: {e}") from None
        if op.name == "matmul" and len(tensors) == 2:      # (TensorFlow's words, which programs look for)
            shapes = ", ".join(f"In[{i}]: [{','.join(map(str, t.shape))}]" for i, t in enumerate(tensors))
            kernel = " 0 0 [Op:BatchMatMulV2]" if max(t.ndim for t in tensors) > 2 else " [Op:MatMul]"
            raise ShapeError(f"Matrix size-incompatible: {shapes}{kernel} name: ", hint=_shape_hint(op, str(e))) \
                from None
        if op.name in _BROADCASTING_KERNELS and len(tensors) == 2:     # (TensorFlow's eager words: its kernel's name)
            a, b = ("[" + ",".join(map(str, t.shape)) + "]" for t in tensors)
            raise ShapeError(f"Incompatible shapes: {a} vs. {b} [Op:{_BROADCASTING_KERNELS[op.name]}] name: ",
                             hint=_shape_hint(op, str(e))) from None
        raise ShapeError(f"{op.name}: incompatible shapes {shapes}", hint=_shape_hint(op, str(e))) from None
    if out.size > 1:                # (a scalar is always within the limits)
        admit(out.size, out.itemsize, f"the result of {op.name}", allocated=True)
    result = _tensor(out, weak and op.weak_arith)
    tapes = record(op, tensors, result, attrs) if ctx.tapes and op.differentiable else ()
    if ctx.observers:
        for observer in ctx.observers:
            observer.applied(op, tensors, result, ctx.settings.line, tapes)
    return result


def emit(op: Op, inputs: list[Tensor], output: Tensor, attrs: dict) -> list:
    """Record an op whose output was made another way on the tapes that watch an input, and tell the run's
    observers."""
    ctx = current()
    tapes = record(op, inputs, output, attrs) if op.differentiable and ctx.tapes else ()
    for observer in ctx.observers:
        observer.emitted(op.name, inputs, output, ctx.settings.line, op.differentiable, tapes)
    return tapes


def _kept(op: Op, inputs: list, output):
    """What a record of ``op`` keeps: the tensors its rules read, stubs for the others. (``inputs`` is
    the list apply made; the record may keep it.)"""
    for t in inputs:
        if t.__class__ is NumpyArray:
            inputs = _as_converted(inputs)
            break
    keep = op._save_in
    if keep is None:
        return inputs, output
    kept = inputs
    if not (op._keeps_inputs and len(inputs) == 2):
        i = 0
        for t in inputs:
            if t.value.nbytes >= STUB_BYTES and i not in keep:
                kept = [t if i in keep else stub(t) for i, t in enumerate(inputs)]
                break
            i += 1
    stub_output = not op._save_out and output.value.nbytes >= STUB_BYTES
    if (kept is inputs and not stub_output) or current().numerics.enabled:
        return inputs, output           # (--check-numerics reports every input's values)
    return kept, Stub(output) if stub_output else output


def _as_converted(inputs: list) -> list:
    """The inputs as the op took them: a NumPy array as the TensorFlow tensor it was converted to (to_tensor's
    copy, which the record keeps), so that its gradient rules read that copy and do not copy it again (a
    backward plan would see each new copy as a constant)."""
    return [Tensor(t.value, t.weak, t.id) if t.__class__ is NumpyArray else t for t in inputs]


def record(op: Op, inputs: list[Tensor], output: Tensor, attrs: dict) -> list:
    """Record on every open, recording tape that watches an input (docs/spec/LANGUAGE.md §4.1); returns those tapes."""
    value = output.value
    if value.__class__ not in FLOAT_SCALARS and value.dtype.kind != "f" and not is_float(value.dtype):   # (bfloat16)
        return []
    ctx = current()
    return record_on(ctx.tapes, op, inputs, output, attrs, ctx.settings.line, _kept)


def _broadcasts(tensors) -> bool:
    try:
        np.broadcast_shapes(*(t.shape for t in tensors))
    except ValueError:
        return False
    return True


def _empty_input(tensors) -> bool:
    """A kernel's ValueError is about an empty input (a max of nothing) when an input is empty and the
    shapes themselves fit together (they broadcast); otherwise it is about the shapes."""
    return any(t.value.size == 0 for t in tensors) and _broadcasts(tensors)


def _shape_hint(op: Op, detail: str) -> str | None:
    if op.name == "matmul":
        return "the inner dimensions must agree: [n, k] @ [k, m]"
    if "broadcast" in detail:
        return "shapes broadcast when each trailing dimension is equal or 1"
    return None


# ------------------------------------------------------- broadcasting helpers

def _unbroadcast_axes(gshape: tuple, shape, lead: int) -> tuple[tuple, tuple]:
    """(the shape to end with, the axes to sum): the one rule of broadcasting's reduction."""
    shape = tuple(shape)
    full = gshape[:lead] + shape if lead else shape
    if gshape == full:
        return full, ()
    extra = len(gshape) - lead - len(shape)
    axes = tuple(range(lead, lead + extra)) + tuple(
        lead + extra + i for i, n in enumerate(shape) if n == 1 and gshape[lead + extra + i] != 1)
    return full, axes


def unbroadcast(g: Tensor, shape: tuple, lead: int = 0) -> Tensor:
    """Sum a gradient back down to ``shape``: the one reduction for NumPy broadcasting. The first
    ``lead`` dimensions of ``g`` are batch dimensions, kept as they are."""
    full, axes = _unbroadcast_axes(g.shape, shape, lead)
    if g.shape == full:
        return g
    if axes:
        g = _E.reduce_sum(g, axis=axes, keepdims=True)
    return _E.reshape(g, full) if g.shape != full else g


def _pad(t: Tensor, lead: int, shape: tuple, rank: int) -> Tensor:
    """A batched tangent ``t`` (``lead`` batch dims, then ``shape``) with 1s inserted after the batch
    dims up to ``rank`` per-example dims, so that it broadcasts against unbatched operands."""
    if not lead or len(shape) >= rank:
        return t
    return _E.reshape(t, t.shape[:lead] + (1,) * (rank - len(shape)) + tuple(shape))


# ------------------------------------------------- elementwise rules, generic

def recording_watches(tensors) -> bool:
    """Whether an open, recording tape watches one of ``tensors``: ops on them would be recorded."""
    for tape in current().tapes:
        if tape.open and not tape.paused:
            ids = tape.watched_ids
            for t in tensors:
                if t.id in ids:
                    return True
    return False


def _ew_vjp(r, g, needs=None):
    """Gradient rule of an elementwise op from its ``grads`` formulas."""
    ctx = current()
    ins = r.inputs
    y = r.output
    if ctx.mode.plain_ops and (not ctx.tapes or not recording_watches((g, y, *ins))):
        return _ew_vjp_raw(r, g, needs, ins, y)
    lead = g.ndim - y.ndim
    out = []
    for i, f in enumerate(r.op.grads):
        if f is None or (needs is not None and not needs[i]):
            out.append(None)
            continue
        gi = f(_E, g, *ins, y, r.attrs)
        out.append(None if gi is None else unbroadcast(gi, ins[i].shape, lead))
    return tuple(out)


def _ew_vjp_raw(r, g, needs, ins, y):
    """Nothing records the backward pass here: the same formulas on plain arrays; for small ones,
    compiled once per op to straight NumPy calls (the kernels the ops would pick)."""
    gv = g.value
    vals = [t if t.__class__ is Stub else t.value for t in ins]
    vals.append(y if y.__class__ is Stub else y.value)
    op = r.op
    attrs = r.attrs
    small = gv.size < _THRESHOLD and not _numba_forced() and not _recording()
    if small:
        rules = small_rules(op) if not attrs else None
        if not rules:
            rules = [_small_rule(op, i, attrs) for i in range(len(op.grads))]
    out = []
    i = 0
    for f in op.grads:
        if f is None or (needs is not None and not needs[i]):
            out.append(None)
        else:
            if small and rules[i] is not None:
                gi = rules[i](gv, *vals)
                if gi.__class__ is not np.ndarray:
                    gi = np.asarray(gi)
            else:
                gi = f(RAW, gv, *vals, attrs)
            shape = ins[i].shape
            if gi.shape != shape:
                gi = _raw_unbroadcast(gi, shape, gv.ndim - len(y.shape))
            out.append(_tensor(gi))
        i += 1
    return out


def small_rules(op):
    """An elementwise op's compiled rules (:func:`_small_rule`) where every formula compiled, which the backward
    sweep may call directly (:func:`_small_vjp`); else False, or None for an op of another gradient. Made at the
    first ask, so that a process's first backward pass takes the path its later ones take."""
    rules = op._rules
    if rules is None and op.vjp is _ew_vjp:
        rules = [_small_rule(op, i, {}) for i in range(len(op.grads))]
        rules = op._rules = rules if all(r is not None or f is None for r, f in zip(rules, op.grads)) else False
    return rules


def _small_vjp(rec, gv, rules, reach, grads, add) -> bool:
    """The backward sweep's step for a small elementwise record when nothing records the pass: each
    input in ``reach`` gets its compiled rule's gradient, accumulated into ``grads`` (see :func:`_put`). True
    when the record keeps NumPy scalars only (its output is one, so its inputs are too): nothing to release."""
    inputs = rec.inputs
    y = rec.output
    yv = y if y.__class__ is Stub else y.value
    scalars = yv.__class__ is not np.ndarray and y.__class__ is not Stub
    if len(inputs) == 1:
        x = inputs[0]
        if x.id in reach:
            xv = x if x.__class__ is Stub else x.value
            _put(grads, x, rules[0](gv, xv, yv), xv, gv, y, add)
        return scalars
    vals = [t if t.__class__ is Stub else t.value for t in inputs]
    vals.append(yv)
    i = 0
    for inp in inputs:
        rule = rules[i]
        i += 1
        if rule is not None and inp.id in reach:
            _put(grads, inp, rule(gv, *vals), vals[i - 1], gv, y, add)
    return scalars


def _put(grads, inp, gi, value, gv, y, add) -> None:
    """Accumulate the raw gradient ``gi`` of ``inp`` (whose value is ``value``) into ``grads``. A scalar's
    gradient that is a float scalar of its dtype stays raw, without a tensor (see :func:`gradient_tensor`),
    and two such add with Python's operator (the ufunc's bits, as ``add`` would on them); anything else is
    an array of the input's shape, as a tensor."""
    key = inp.id
    cls = gi.__class__
    if cls is not np.ndarray:
        if cls is not value.__class__:
            gi = np.asarray(gi)
        elif cls in FLOAT_SCALARS:
            grads[key] = gathered(grads.get(key), gi)
            return
    if gi.__class__ is np.ndarray and gi.shape != inp.shape:
        gi = _raw_unbroadcast(gi, inp.shape, gv.ndim - len(y.shape))
    grads[key] = gathered(grads.get(key), _tensor(gi))


def gradient_tensor(g) -> Tensor:
    """A gradient from the backward sweep's map as a tensor: :func:`_put` leaves a float scalar's raw."""
    return g if g.__class__ is _Tensor else _tensor(g)


class Contributions(list):
    """The gradients one tensor's consumers gave it, in the order the backward sweep came to them, until the
    sweep reads their sum (:func:`summed`): TensorFlow's tape keeps them so, and sums them then with one AddN."""
    __slots__ = ()


def gathered(prev, g):
    """The backward map's entry ``prev`` (None, one gradient, or Contributions) with the gradient ``g`` more."""
    if prev is None:
        return g
    if prev.__class__ is Contributions:
        prev.append(g)
        return prev
    return Contributions((prev, g))


def summed(g, add):
    """An entry of the backward map as one gradient: Contributions summed in AddN's order (numpy_kernels.add_n_order).
    Two raw float scalars of one class add with Python's operator (the ufunc's bits, as ``add`` would on them)."""
    if g.__class__ is not Contributions:
        return g

    def plus(a, b):
        if a.__class__ is b.__class__ and a.__class__ in FLOAT_SCALARS:
            return a + b
        return add(gradient_tensor(a), gradient_tensor(b))
    if current().functions > 0 and len(g) > 10:
        g = [g[i] for i in sorted(range(len(g)), key=_graph_name_suffix)]
    return add_n_order(g, plus)


def _graph_name_suffix(i: int) -> str:
    """Inside a tf.function TensorFlow's AddN takes the gradients in the order of their ops' names, as strings:
    the consumers of one tensor, made one after another, are named ``Op``, ``Op_1``, ``Op_2``, ... so that
    ``Op_10`` comes before ``Op_2`` (measured: a weight read in 20 steps, a TimeDistributed layer's)."""
    return f"_{i}" if i else ""


def _raw_unbroadcast(a: np.ndarray, shape, lead=0) -> np.ndarray:
    """:func:`unbroadcast` on a plain array (the same kernels)."""
    full, axes = _unbroadcast_axes(a.shape, shape, lead)
    if a.shape == full:
        return a
    if axes:        # (the sum op's kernel: reading the op imports its family, which a small run may not have)
        a = _run_kernel(_E.SUM.kernel, (a,), {"axis": axes, "keepdims": True})
    return a.reshape(full) if a.shape != full else a


class _Raw:
    """The ``grads`` formulas' namespace on plain arrays: the ops' kernels, nothing recorded.
    Python numbers stay Python numbers, so NumPy gives them the array's dtype, as a literal
    takes its tensor's dtype."""

    def __getattr__(self, name):
        kernel = {"pow_": "pow", "abs_": "abs", "round_": "round"}.get(name, name)
        if kernel not in kernels.NUMPY_KERNELS:
            raise AttributeError(name)

        def run(*args, **attrs):
            return _run_kernel(kernel, args, attrs)
        run.__name__ = name
        setattr(self, name, run)      # found once
        return run

    @staticmethod
    def zeros_like(x):
        return kernels.zeros(x.shape, x.dtype)      # where the run's arrays live

    @staticmethod
    def ones_like(x):
        return kernels.ones(x.shape, x.dtype)


RAW = _Raw()


class _NumpySource:
    """The ``grads`` formulas' namespace writing Python source of NumPy kernel calls (see _small_rule)."""

    def __init__(self):
        self.lines = []
        self.n = 0

    def _arg(self, x):
        return x if isinstance(x, str) else repr(x)

    def __getattr__(self, name):
        kernel = {"pow_": "pow", "abs_": "abs", "round_": "round"}.get(name, name)
        if kernel not in kernels.NUMPY_KERNELS:
            raise AttributeError(name)

        def emit(*args, **attrs):
            self.n += 1
            operator = _OPERATORS.get(kernel)
            if operator and len(args) == 2 and not attrs and any(isinstance(a, str) for a in args):
                # a local always holds a NumPy value: its operator is the ufunc, bit for bit, without a call's cost
                self.lines.append(f"t{self.n} = {self._arg(args[0])} {operator} {self._arg(args[1])}")
                return f"t{self.n}"
            extra = "".join(f", {k}={v!r}" for k, v in attrs.items())
            self.lines.append(f"t{self.n} = K[{kernel!r}]({', '.join(self._arg(a) for a in args)}{extra})")
            return f"t{self.n}"
        return emit

    def zeros_like(self, x):
        self.n += 1
        self.lines.append(f"t{self.n} = np.zeros(np.shape({x}), dtype={x}.dtype)")
        return f"t{self.n}"

    def ones_like(self, x):
        self.n += 1
        self.lines.append(f"t{self.n} = np.ones(np.shape({x}), dtype={x}.dtype)")
        return f"t{self.n}"


_OPERATORS = {"add": "+", "sub": "-", "mul": "*", "div": "/"}
_SMALL_RULES: dict = {}
_MISS = object()


def _small_rule(op, i, attrs):
    """Formula ``i`` of an elementwise op as a plain function ``(g, *inputs, y)`` of NumPy calls,
    compiled once per op, input and attributes: the backward pass of small tensors runs each
    rule without the namespace's layers."""
    try:
        key = (op, i, tuple(sorted(attrs.items()))) if attrs else (op, i)
        return _SMALL_RULES[key]
    except KeyError:
        pass
    except TypeError:           # attributes that do not hash
        return None
    src = _NumpySource()
    args = [f"a{k}" for k in range(len(op.grads))]
    try:
        result = op.grads[i](src, "g", *args, "y", attrs)
        code = (f"def rule(g, {', '.join(args)}, y):\n" + "".join(f"    {line}\n" for line in src.lines)
                + f"    return {result}\n")
        namespace = {"K": kernels.RAW_NUMPY_KERNELS, "np": np, "inf": np.inf, "nan": np.nan}   # repr of an overflowed literal
        exec(compile(code, f"<rule {op.name}[{i}]>", "exec"), namespace)
        rule = namespace["rule"]
    except Exception:           # a formula this namespace cannot write: the generic path
        rule = None
    _SMALL_RULES[key] = rule
    return rule


def _ew_jvp(r, ts):
    """Forward-mode rule of an elementwise op: the same formulas with a tangent for ``g``."""
    ins = r.inputs
    y = r.output
    total = None
    for i, (f, t) in enumerate(zip(r.op.grads, ts)):
        if t is None or f is None:
            continue
        lead = t.ndim - ins[i].ndim
        c = f(_E, _pad(t, lead, ins[i].shape, y.ndim), *ins, y, r.attrs)
        if c is None:
            continue
        c = _E.broadcast_to(c, t.shape[:lead] + y.shape)
        total = c if total is None else _E.add(total, c)
    return total


def _elementwise(name, grads, saves, **kw):
    return register(name, grads=grads, saves=saves, vjp=_ew_vjp, jvp=_ew_jvp, **kw)


def _unary(name, deriv=None, saves=(0,), program=None, **kw):
    """A unary elementwise op whose gradient and tangent are ``upstream * deriv(m, x, y, attrs)`` (or its
    ``grads`` formula); a program calls it by its name unless ``program`` says otherwise (then its builtin
    is written by hand)."""
    if deriv is not None:
        kw["grads"] = (lambda m, g, x, y, at: m.mul(g, deriv(m, x, y, at)),)
    if "grads" in kw:
        kw.setdefault("vjp", _ew_vjp)
        kw.setdefault("jvp", _ew_jvp)
    kw.setdefault("float_only", True)
    return register(name, saves=saves, program=(name,) if program is None else program, **kw)


def publish(namespace: dict) -> None:
    """Give every op of the table that has a builtin name and no public function of its own a plain
    one, ``name(x)`` or ``name(x, y)``, in ``namespace`` (the ``tapecli.ops`` package's)."""
    for op in list(OPS.values()):
        if op.program and op.public_name not in namespace:
            # exact positional parameters: a surplus argument must be a program error, never reach the NumPy
            # kernel (np.arctan2's third positional argument is ``out``)
            if op.grads is not None and len(op.grads) == 2:
                def f(x, y, *, _op=op):
                    return apply(_op, (x, y))
            else:
                def f(x, *, _op=op):
                    return apply(_op, (x,))
            f.__name__ = f.__qualname__ = op.public_name
            namespace[op.public_name] = f


# The namespace the ``grads`` formulas run in to build recordable ops: the ``tapecli.ops`` package,
# set by its ``__init__`` once every family is registered (a module cannot import its own package
# without a cycle).
_E = None
