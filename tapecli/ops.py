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
import sys

import numpy as np

from . import kernels
from .errors import ShapeError, TdfTypeError
from .numerics import NUMERICS
from .provenance import PROVENANCE
from .runtime import STATE
from .tape import ACTIVE, STUB_BYTES, Record, Stub, stub
from .values import Tensor, Variable, _ids, convert_weak, dtype_name, is_float, literal_array

_Tensor = Tensor
_new = Tensor.__new__


_run_kernel = kernels.run
_THRESHOLD = kernels.THRESHOLD
_numba_forced = kernels.numba_forced


def _tensor(value, weak=False) -> Tensor:
    """``Tensor(value, weak)`` without the keyword handling: ops make one per application."""
    t = _new(_Tensor)
    t.value = value
    t.weak = weak
    t.id = next(_ids)
    return t


class Op:
    __slots__ = ("name", "kernel", "vjp", "jvp", "differentiable", "weak_arith", "unify", "float_only", "saves",
                 "grads", "batchable", "vjp_needs", "kept_extra", "release_extra", "_idx", "_save_in", "_save_out",
                 "_keeps_inputs", "_unifies", "_rules")

    def __init__(self, name, *, kernel=None, vjp=None, jvp=None, differentiable=True, weak_arith=False,
                 unify="all", float_only=False, saves="all", grads=None, batchable=False):
        self.name = name
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
        if saves == "all":
            self._save_in, self._save_out = None, True
        else:
            self._save_in = frozenset(i for i in saves if isinstance(i, int))
            self._save_out = "out" in saves
        self._keeps_inputs = False        # set by register(): every input is kept (no stubs to make)

    def can_batch(self, rec) -> bool:
        b = self.batchable
        return b(rec) if callable(b) else bool(b)

    def __repr__(self):
        return f"Op({self.name})"


def _arg_count(f) -> int:
    code = getattr(f, "__code__", None)
    return code.co_argcount if code is not None else 2


OPS: dict[str, Op] = {}


def register(name, **kw) -> Op:
    kw.setdefault("batchable", True)
    op = Op(name, **kw)
    # a binary op keeping both inputs (mul, matmul, maximum): no stub to make for them
    op._keeps_inputs = op._save_in is not None and {0, 1} <= op._save_in
    OPS[name] = op
    return op


# ------------------------------------------------------------------- applying

def to_tensor(x) -> Tensor:
    """A program value as an op input: variables are read, numbers become literals."""
    if isinstance(x, Tensor):
        return x
    if isinstance(x, Variable):
        for tape in ACTIVE:
            if tape.watch_accessed_variables and x.trainable and tape.recording:
                tape.watch_variable(x, "accessed", STATE.line)
        if PROVENANCE.enabled and ACTIVE:
            PROVENANCE.read(x, ACTIVE, STATE.line)
        return x.read()
    if isinstance(x, (bool, int, float, np.ndarray, np.generic)):
        return Tensor(literal_array(x), weak=not isinstance(x, (np.ndarray, np.generic)))
    raise TdfTypeError(f"expected a tensor, got {_word(x)}")


def _word(x) -> str:
    from .tape import type_word
    return type_word(x)


def default_dtype(value: np.ndarray) -> np.dtype:
    """The dtype a literal takes on its own: float32 (or --dtype), int32, bool."""
    if value.dtype.kind == "f":
        return STATE.float_dtype
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
            arr = np.asarray(convert_weak(v, dt))
            arr.flags.writeable = False
            if len(_WEAK_CACHE) > 4096:
                _WEAK_CACHE.clear()
            # a constant: one tensor serves every use (nothing watches or records it as a source)
            _WEAK_CACHE[key] = entry = (v, arr, _tensor(arr))
        return entry[2]
    return Tensor(convert_weak(v, dt))


def _unify(op: Op, tensors: list[Tensor]) -> list[Tensor]:
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
        dtype = strong[0].dtype
        for t in strong[1:]:
            if t.dtype != dtype:
                a, b = dtype_name(dtype), dtype_name(t.dtype)
                raise TdfTypeError(f"{op.name} got tensors of different dtypes: {a} and {b}",
                                   hint=f"convert one with cast(x, {a}) or cast(x, {b})")
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
                    tensors[i] = materialize(t, STATE.float_dtype)
                else:
                    raise TdfTypeError(f"{op.name} needs a float tensor, got {dtype_name(t.dtype)}",
                                       hint=f"use cast(x, {dtype_name(STATE.float_dtype)})")
    return tensors


def apply(op: Op, inputs, **attrs) -> Tensor:
    tensors = [x if x.__class__ is _Tensor else to_tensor(x) for x in inputs]
    if op._unifies:
        if len(tensors) == 1:
            t = tensors[0]
            if t.weak or (op.float_only and t.value.dtype.kind != "f"):
                tensors = _unify(op, tensors)
        else:
            tensors = _unify(op, tensors)
    try:
        out = _run_kernel(op.kernel, [t.value for t in tensors], attrs)
    except MemoryError:
        from .errors import LimitError
        raise LimitError(f"{op.name} ran out of memory", hint="use smaller tensors") from None
    except TypeError:           # NumPy refuses the dtypes, e.g. -True
        kinds = " and ".join(dtype_name(t.dtype) for t in tensors)
        raise TdfTypeError(f"{op.name} does not take {kinds} tensors", hint="cast(x, float32) first") from None
    except ValueError as e:
        shapes = " and ".join(str(list(t.shape)) for t in tensors)
        if "zero-size" in str(e) or "empty" in str(e):
            raise ShapeError(f"{op.name} of an empty tensor (shape {shapes})") from None
        raise ShapeError(f"{op.name}: incompatible shapes {shapes}", hint=_shape_hint(op, str(e))) from None
    if out.size > STATE.max_elements:
        from .errors import LimitError
        raise LimitError(f"{op.name} would make a tensor of {out.size:,} elements, over the limit of "
                         f"{STATE.max_elements:,}", hint="raise it with --max-elements N")
    weak = False
    if op.weak_arith:
        weak = True
        for t in tensors:
            if not t.weak:
                weak = False
                break
    result = _tensor(out, weak)
    if ACTIVE:
        tapes = record(op, tensors, result, attrs) if op.differentiable else ()
        if PROVENANCE.enabled:
            PROVENANCE.op(op.name, tensors, result, STATE.line, op.differentiable, out.dtype.kind == "f", tapes)
    elif PROVENANCE.enabled:
        PROVENANCE.op(op.name, tensors, result, STATE.line, op.differentiable, out.dtype.kind == "f", ())
    if NUMERICS.enabled:
        NUMERICS.forward(op, tensors, result, STATE.line)
        if op is WHERE:
            NUMERICS.where(tensors, result, STATE.line)
    return result


def emit(op: Op, inputs: list[Tensor], output: Tensor, attrs: dict) -> list:
    """Record an applied op on the tapes that watch an input, and in the provenance log if kept."""
    tapes = record(op, inputs, output, attrs) if op.differentiable and ACTIVE else ()
    if PROVENANCE.enabled:
        PROVENANCE.op(op.name, inputs, output, STATE.line, op.differentiable, is_float(output.dtype), tapes)
    return tapes


def _kept(op: Op, inputs: list, output):
    """What a record of ``op`` keeps: the tensors its rules read, stubs for the others. (``inputs`` is
    the list apply made; the record may keep it.)"""
    keep = op._save_in
    if keep is None or NUMERICS.enabled:     # --check-numerics reports every input's values
        return inputs, output
    if not (op._keeps_inputs and len(inputs) == 2):
        i = 0
        for t in inputs:
            if t.value.nbytes >= STUB_BYTES and i not in keep:
                inputs = [t if i in keep else stub(t) for i, t in enumerate(inputs)]
                break
            i += 1
    if op._save_out or output.value.nbytes < STUB_BYTES:
        return inputs, output
    return inputs, Stub(output)


def record(op: Op, inputs: list[Tensor], output: Tensor, attrs: dict) -> list:
    """Record on every open, recording tape that watches an input (LANGUAGE.md §4.1); returns those tapes."""
    if output.value.dtype.kind != "f":
        return []
    rec = None
    tapes = []
    for tape in ACTIVE:
        if not tape.open or tape.paused:
            continue
        ids = tape.watched_ids
        for t in inputs:
            if t.id in ids:
                break
        else:
            continue
        if rec is None:
            kept_inputs, kept_output = _kept(op, inputs, output)
            rec = Record(op, kept_inputs, kept_output, attrs, STATE.line)
        rec.holders += 1
        tape.records.append(rec)
        ids.add(output.id)
        tapes.append(tape)
    return tapes


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
        g = reduce_sum(g, axis=axes, keepdims=True)
    return reshape(g, full) if g.shape != full else g


def _pad(t: Tensor, lead: int, shape: tuple, rank: int) -> Tensor:
    """A batched tangent ``t`` (``lead`` batch dims, then ``shape``) with 1s inserted after the batch
    dims up to ``rank`` per-example dims, so that it broadcasts against unbatched operands."""
    if not lead or len(shape) >= rank:
        return t
    return reshape(t, t.shape[:lead] + (1,) * (rank - len(shape)) + tuple(shape))


# ------------------------------------------------- elementwise rules, generic

def recording_watches(tensors) -> bool:
    """Whether an open, recording tape watches one of ``tensors``: ops on them would be recorded."""
    for tape in ACTIVE:
        if tape.open and not tape.paused:
            ids = tape.watched_ids
            for t in tensors:
                if t.id in ids:
                    return True
    return False


def unrecorded(g, rec) -> bool:
    """Whether a gradient rule may run on plain arrays: nothing it computes from ``g`` and the
    record's tensors would be recorded or logged (no tape watches them, no --explain log, no
    --check-numerics)."""
    if PROVENANCE.enabled or NUMERICS.enabled:
        return False
    return not ACTIVE or not recording_watches((g, rec.output, *rec.inputs))


def _ew_vjp(r, g, needs=None):
    """Gradient rule of an elementwise op from its ``grads`` formulas."""
    ins = r.inputs
    y = r.output
    if not PROVENANCE.enabled and not NUMERICS.enabled and (not ACTIVE or not recording_watches((g, y, *ins))):
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
    small = gv.size < _THRESHOLD and not _numba_forced()
    if small:
        rules = op._rules if not attrs else None
        if not rules:
            rules = [_small_rule(op, i, attrs) for i in range(len(op.grads))]
            if not attrs:
                # every formula compiled: the backward sweep may call them directly (tape.py)
                op._rules = rules if all(r is not None or f is None for r, f in zip(rules, op.grads)) else False
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


def _small_vjp(rec, gv, rules, reach, grads, add):
    """The backward sweep's step for a small elementwise record when nothing records the pass: each
    input in ``reach`` gets its compiled rule's gradient, accumulated into ``grads`` (tape.py)."""
    inputs = rec.inputs
    y = rec.output
    yv = y if y.__class__ is Stub else y.value
    if len(inputs) == 1:
        x = inputs[0]
        key = x.id
        if key not in reach:
            return
        xv = x if x.__class__ is Stub else x.value
        gi = rules[0](gv, xv, yv)
        if gi.__class__ is not np.ndarray:
            gi = np.asarray(gi)
        if gi.shape != x.shape:
            gi = _raw_unbroadcast(gi, x.shape, gv.ndim - len(y.shape))
        prev = grads.get(key)
        grads[key] = _tensor(gi) if prev is None else add(prev, _tensor(gi))
        return
    vals = [t if t.__class__ is Stub else t.value for t in inputs]
    vals.append(yv)
    i = 0
    for inp in inputs:
        key = inp.id
        rule = rules[i]
        i += 1
        if rule is None or key not in reach:
            continue
        gi = rule(gv, *vals)
        if gi.__class__ is not np.ndarray:
            gi = np.asarray(gi)
        shape = inp.shape
        if gi.shape != shape:
            gi = _raw_unbroadcast(gi, shape, gv.ndim - len(y.shape))
        prev = grads.get(key)
        grads[key] = _tensor(gi) if prev is None else add(prev, _tensor(gi))


def _raw_unbroadcast(a: np.ndarray, shape, lead=0) -> np.ndarray:
    """:func:`unbroadcast` on a plain array (the same kernels)."""
    full, axes = _unbroadcast_axes(a.shape, shape, lead)
    if a.shape == full:
        return a
    if axes:
        a = kernels.call("sum", a, axis=axes, keepdims=True)
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
    def reciprocal(x):
        return kernels.call("div", 1, x)

    @staticmethod
    def zeros_like(x):
        return np.zeros(x.shape, dtype=x.dtype)

    @staticmethod
    def ones_like(x):
        return np.ones(x.shape, dtype=x.dtype)


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
            extra = "".join(f", {k}={v!r}" for k, v in attrs.items())
            self.lines.append(f"t{self.n} = K[{kernel!r}]({', '.join(self._arg(a) for a in args)}{extra})")
            return f"t{self.n}"
        return emit

    def reciprocal(self, x):
        return self.div(1, x)

    def zeros_like(self, x):
        self.n += 1
        self.lines.append(f"t{self.n} = np.zeros(np.shape({x}), dtype={x}.dtype)")
        return f"t{self.n}"

    def ones_like(self, x):
        self.n += 1
        self.lines.append(f"t{self.n} = np.ones(np.shape({x}), dtype={x}.dtype)")
        return f"t{self.n}"


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
        namespace = {"K": kernels.RAW_NUMPY_KERNELS, "np": np}
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
        c = broadcast_to(c, t.shape[:lead] + y.shape)
        total = c if total is None else add(total, c)
    return total


def _elementwise(name, grads, saves, **kw):
    return register(name, grads=grads, saves=saves, vjp=_ew_vjp, jvp=_ew_jvp, **kw)


def _unary(name, deriv=None, saves=(0,), **kw):
    """A unary elementwise op whose gradient and tangent are ``upstream * deriv(m, x, y, attrs)``."""
    if deriv is not None:
        kw["grads"] = (lambda m, g, x, y, at: m.mul(g, deriv(m, x, y, at)),)
        kw.setdefault("vjp", _ew_vjp)
        kw.setdefault("jvp", _ew_jvp)
    return register(name, float_only=True, saves=saves, **kw)


# ------------------------------------------------------------ elementwise ops

def _g(m, g, a, b, y, at):
    return g


NEG = _elementwise("neg", (lambda m, g, x, y, at: m.neg(g),), (), weak_arith=True)
ADD = _elementwise("add", (_g, _g), (), weak_arith=True)
SUB = _elementwise("sub", (_g, lambda m, g, a, b, y, at: m.neg(g)), (), weak_arith=True)
MUL = _elementwise("mul", (lambda m, g, a, b, y, at: m.mul(g, b), lambda m, g, a, b, y, at: m.mul(g, a)), (0, 1),
                   weak_arith=True)
DIV = _elementwise("div", (lambda m, g, a, b, y, at: m.div(g, b),
                           lambda m, g, a, b, y, at: m.neg(m.div(m.mul(g, y), b))), (1, "out"), weak_arith=True)
FLOORDIV = register("floordiv", weak_arith=True, differentiable=False)
# floor-mod with TensorFlow's gradient: d/da = 1, d/db = -floor(a / b)
MOD = _elementwise("mod", (_g, lambda m, g, a, b, y, at: m.mul(g, m.neg(m.floor(m.div(a, b))))), (0, 1),
                   weak_arith=True)


def _pow_grad_exponent(m, g, a, b, y, at):
    positive = m.greater(a, 0)
    safe_log = m.log(m.where(positive, a, m.ones_like(a)))
    return m.mul(g, m.mul(y, m.where(positive, safe_log, m.zeros_like(safe_log))))


POW = _elementwise("pow", (lambda m, g, a, b, y, at: m.mul(g, m.mul(b, m.pow_(a, m.sub(b, 1)))), _pow_grad_exponent),
                   (0, 1, "out"), weak_arith=True)
MAXIMUM = _elementwise("maximum", (lambda m, g, a, b, y, at: m.where(m.greater_equal(a, b), g, m.zeros_like(g)),
                                   lambda m, g, a, b, y, at: m.where(m.greater_equal(a, b), m.zeros_like(g), g)),
                       (0, 1))
MINIMUM = _elementwise("minimum", (lambda m, g, a, b, y, at: m.where(m.less_equal(a, b), g, m.zeros_like(g)),
                                   lambda m, g, a, b, y, at: m.where(m.less_equal(a, b), m.zeros_like(g), g)),
                       (0, 1))

for _name in ("less", "less_equal", "greater", "greater_equal", "equal", "not_equal"):
    register(_name, weak_arith=True, differentiable=False)
for _name in ("logical_and", "logical_or"):
    register(_name, weak_arith=True, differentiable=False)
register("logical_not", weak_arith=True, differentiable=False)
for _name in ("round", "floor", "ceil"):
    register(_name, differentiable=False)
register("sign", differentiable=False)


_SQRT_PI = math.sqrt(math.pi)
_SQRT_2PI = math.sqrt(2 * math.pi)

SIN = _unary("sin", lambda m, x, y, at: m.cos(x))
COS = _unary("cos", lambda m, x, y, at: m.neg(m.sin(x)))
TAN = _unary("tan", lambda m, x, y, at: m.add(1, m.square(y)), saves=("out",))
EXP = _unary("exp", lambda m, x, y, at: y, saves=("out",))
LOG = _unary("log", lambda m, x, y, at: m.reciprocal(x))
LOG1P = _unary("log1p", lambda m, x, y, at: m.reciprocal(m.add(x, 1)))
SQRT = _unary("sqrt", lambda m, x, y, at: m.div(0.5, y), saves=("out",))
RSQRT = _unary("rsqrt", lambda m, x, y, at: m.mul(-0.5, m.mul(y, m.square(y))), saves=("out",))
SQUARE = _unary("square", lambda m, x, y, at: m.mul(2, x))
TANH = _unary("tanh", lambda m, x, y, at: m.sub(1, m.square(y)), saves=("out",))
SIGMOID = _unary("sigmoid", lambda m, x, y, at: m.mul(y, m.sub(1, y)), saves=("out",))
SOFTPLUS = _unary("softplus", lambda m, x, y, at: m.sigmoid(x))
ELU = _unary("elu", lambda m, x, y, at: m.where(m.greater(x, 0), m.ones_like(y), m.add(y, at["alpha"])),
             saves=(0, "out"))
ERF = _unary("erf", lambda m, x, y, at: m.mul(2 / _SQRT_PI, m.exp(m.neg(m.square(x)))))


def _gelu_deriv(m, x, y, at):
    if at["approximate"]:
        c = math.sqrt(2 / math.pi)
        inner = m.mul(c, m.add(x, m.mul(0.044715, m.pow_(x, 3))))
        th = m.tanh(inner)
        dinner = m.mul(c, m.add(1, m.mul(3 * 0.044715, m.square(x))))
        return m.add(m.mul(0.5, m.add(1, th)), m.mul(m.mul(0.5, x), m.mul(m.sub(1, m.square(th)), dinner)))
    cdf = m.mul(0.5, m.add(1, m.erf(m.mul(1 / math.sqrt(2), x))))
    pdf = m.div(m.exp(m.mul(-0.5, m.square(x))), _SQRT_2PI)
    return m.add(cdf, m.mul(x, pdf))


GELU = _unary("gelu", _gelu_deriv)

# relu, abs and leaky_relu route their gradient through masked_grad, whose own
# gradient w.r.t. x is zeros: their second derivative is zeros, not None (TensorFlow).
# relu reads its output (y > 0 exactly where x > 0), so a record keeps y, not x.
MASKED_GRAD = _elementwise("masked_grad", (lambda m, g, gi, x, y, at: m.masked_grad(g, x, **at),
                                           lambda m, g, gi, x, y, at: m.zeros_like(g)), (1,), unify=(0,))


def _masked(kind, saves):
    src = (lambda x, y: y) if kind == "relu" else (lambda x, y: x)
    return dict(grads=(lambda m, g, x, y, at: m.masked_grad(g, src(x, y), kind=kind, alpha=at.get("alpha", 0.2)),),
                saves=saves, vjp=_ew_vjp, jvp=_ew_jvp)


RELU = register("relu", **_masked("relu", ("out",)))
ABS = register("abs", **_masked("abs", (0,)))
LEAKY_RELU = register("leaky_relu", float_only=True, **_masked("leaky_relu", (0,)))

WHERE = _elementwise("where", (None, lambda m, g, c, a, b, y, at: m.where(c, g, m.zeros_like(g)),
                               lambda m, g, c, a, b, y, at: m.where(c, m.zeros_like(g), g)), (0,), unify=(1, 2))
CLIP = _elementwise("clip", (
    lambda m, g, x, lo, hi, y, at: m.where(m.logical_and(m.greater_equal(x, lo), m.less_equal(x, hi)), g,
                                           m.zeros_like(g)),
    lambda m, g, x, lo, hi, y, at: m.where(m.less(x, lo), g, m.zeros_like(g)),
    lambda m, g, x, lo, hi, y, at: m.where(m.greater(x, hi), g, m.zeros_like(g))), (0, 1, 2))


def _cast_vjp(r, g):
    return (cast(g, r.inputs[0].dtype),) if is_float(r.inputs[0].dtype) else (None,)


# No forward-mode rule: a jacobian through a cast is taken in reverse mode.
CAST = register("cast", unify=(), vjp=_cast_vjp, saves=())
CAST_TO_INT = register("cast_to_int", kernel="cast", unify=(), differentiable=False)

# --------------------------------------------------------------- reductions


def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, tuple) else (axis,)
    return tuple(sorted(a % ndim if ndim else a for a in axes))


def _keep_shape(shape, axis):
    """The shape of a reduction over ``axis`` with keepdims."""
    axes = _axes(axis, len(shape))
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


def _batch_axis(axis, ndim, lead):
    """A reduction's ``axis`` (of a tensor of ``ndim`` dims) for the same tensor behind ``lead`` batch dims."""
    if not lead:
        return axis
    return tuple(lead + a for a in _axes(axis, ndim))


def _expand_reduced(g, r):
    """A reduction's upstream gradient, reshaped to keep the reduced dims and broadcast."""
    x = r.inputs[0]
    lead = g.ndim - r.output.ndim
    batch = g.shape[:lead]
    if not r.attrs.get("keepdims"):
        g = reshape(g, batch + _keep_shape(x.shape, r.attrs.get("axis")))
    return broadcast_to(g, batch + x.shape)


def _count(r):
    x = r.inputs[0]
    return int(np.prod([x.shape[a] for a in _axes(r.attrs.get("axis"), x.ndim)])) if x.shape else 1


def _reduce_tangent(r, t, weights=None):
    """The tangent of a sum-like reduction: sum(t * weights) over the record's axes."""
    x = r.inputs[0]
    lead = t.ndim - x.ndim
    if weights is not None:
        t = mul(t, weights)
    return reduce_sum(t, axis=_batch_axis(r.attrs.get("axis"), x.ndim, lead), keepdims=r.attrs.get("keepdims", False))


def _extreme_share(r):
    x = r.inputs[0]
    y = r.output if r.attrs.get("keepdims") else reshape(r.output, _keep_shape(x.shape, r.attrs.get("axis")))
    hit = cast(equal(x, y), x.dtype)
    ties = reduce_sum(hit, axis=r.attrs.get("axis"), keepdims=True)
    return div(hit, ties)


def _extreme_vjp(r, g):
    return (mul(_expand_reduced(g, r), _extreme_share(r)),)


def _prod_others(r):
    """d prod / d x_i = the product of the others, written as (the product of the other
    nonzero entries) * (the product of the other zero entries) so that it stays
    differentiable where x has zeros. The second factor is exact as a function for slices
    with at most two zeros; with three or more it is the constant 0, whose value and first
    derivative are right, so prod's value, gradient and Hessian are exact everywhere."""
    x = r.inputs[0]
    axis = r.attrs.get("axis")
    is_zero = equal(x, 0)
    nonzero = where(is_zero, ones_like(x), x)
    others = div(broadcast_to(reduce_prod(nonzero, axis=axis, keepdims=True), x.shape), nonzero)
    zeros = reduce_sum(cast(is_zero, x.dtype), axis=axis, keepdims=True)
    if np.any(zeros.value > 0):
        zero_part = where(is_zero, x, ones_like(x))      # the zero entries (value 0), 1 elsewhere
        # for a nonzero entry: the product of all the zero entries (a recorded prod)
        all_zeros = broadcast_to(reduce_prod(zero_part, axis=axis, keepdims=True), x.shape)
        # for a zero entry: the product of the other zero entries; with two zeros, the other one
        zero_sum = reduce_sum(where(is_zero, x, zeros_like(x)), axis=axis, keepdims=True)
        other_zero = sub(broadcast_to(zero_sum, x.shape), x)
        one = broadcast_to(equal(zeros, 1), x.shape)
        two = broadcast_to(equal(zeros, 2), x.shape)
        at_zero = where(one, ones_like(x), where(two, other_zero, zeros_like(x)))
        others = mul(others, where(is_zero, at_zero, all_zeros))
    return others


def _prod_vjp(r, g):
    return (mul(_expand_reduced(g, r), _prod_others(r)),)


def _logsumexp_share(r):
    x = r.inputs[0]
    y = r.output if r.attrs.get("keepdims") else reshape(r.output, _keep_shape(x.shape, r.attrs.get("axis")))
    return exp(sub(x, y))


def _logsumexp_vjp(r, g):
    return (mul(_expand_reduced(g, r), _logsumexp_share(r)),)


SUM = register("sum", vjp=lambda r, g: (_expand_reduced(g, r),), jvp=lambda r, ts: _reduce_tangent(r, ts[0]),
               saves=())
MEAN = register("mean", vjp=lambda r, g: (div(_expand_reduced(g, r), _count(r)),),
                jvp=lambda r, ts: reduce_mean(ts[0], axis=_batch_axis(r.attrs.get("axis"), r.inputs[0].ndim,
                                                                       ts[0].ndim - r.inputs[0].ndim),
                                              keepdims=r.attrs.get("keepdims", False)), saves=())
MAX = register("max", vjp=_extreme_vjp, jvp=lambda r, ts: _reduce_tangent(r, ts[0], _extreme_share(r)),
               saves=(0, "out"))
MIN = register("min", vjp=_extreme_vjp, jvp=lambda r, ts: _reduce_tangent(r, ts[0], _extreme_share(r)),
               saves=(0, "out"))
PROD = register("prod", vjp=_prod_vjp, jvp=lambda r, ts: _reduce_tangent(r, ts[0], _prod_others(r)), saves=(0,))
LOGSUMEXP = register("logsumexp", float_only=True, vjp=_logsumexp_vjp,
                     jvp=lambda r, ts: _reduce_tangent(r, ts[0], _logsumexp_share(r)), saves=(0, "out"))
ARGMAX = register("argmax", differentiable=False)
ARGMIN = register("argmin", differentiable=False)


def _softmax_axis(r, g):
    axis = r.attrs["axis"]
    lead = g.ndim - r.output.ndim
    return axis + lead if axis >= 0 else axis


def _softmax_vjp(r, g):
    y = r.output
    return (mul(y, sub(g, reduce_sum(mul(g, y), axis=_softmax_axis(r, g), keepdims=True))),)


def _log_softmax_vjp(r, g):
    y = r.output
    return (sub(g, mul(exp(y), reduce_sum(g, axis=_softmax_axis(r, g), keepdims=True))),)


def _log_softmax_jvp(r, ts):
    t, y = ts[0], r.output
    return sub(t, reduce_sum(mul(exp(y), t), axis=_softmax_axis(r, t), keepdims=True))


SOFTMAX = register("softmax", float_only=True, vjp=_softmax_vjp, jvp=lambda r, ts: _softmax_vjp(r, ts[0])[0],
                   saves=("out",))
LOG_SOFTMAX = register("log_softmax", float_only=True, vjp=_log_softmax_vjp, jvp=_log_softmax_jvp, saves=("out",))

# ------------------------------------------------------- shapes and matmul

# Ids of tangents (forward mode) and cotangents (reverse mode) that are a batch of one-hot
# rows, i.e. an identity matrix: the matmul rules skip the product with them.
IDENTITY: set[int] = set()


def _swap_last(t):
    perm = list(range(t.ndim))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return transpose(t, perm)


def _matmul_vjp(r, g, needs=None):
    a, b = r.inputs
    lead = g.ndim - r.output.ndim
    need_a = needs is None or needs[0]
    need_b = needs is None or needs[1]
    if lead and a.ndim <= 2 and b.ndim <= 2:
        return _matmul_vjp_batched(a, b, g, lead, need_a, need_b)
    batch = g.shape[:lead]
    a2 = a if a.ndim > 1 else reshape(a, (1,) + a.shape)
    b2 = b if b.ndim > 1 else reshape(b, b.shape + (1,))
    out_shape = np.broadcast_shapes(a2.shape[:-2], b2.shape[:-2]) + (a2.shape[-2], b2.shape[-1])
    g2 = reshape(g, batch + out_shape)
    ga = reshape(unbroadcast(matmul(g2, _swap_last(b2)), a2.shape, lead), batch + a.shape) if need_a else None
    gb = reshape(unbroadcast(matmul(_swap_last(a2), g2), b2.shape, lead), batch + b.shape) if need_b else None
    return ga, gb


def _matmul_vjp_batched(a, b, g, lead, need_a, need_b):
    """matmul's gradient for a batch of cotangents, each product one matrix product over the batch."""
    batch = g.shape[:lead]
    n_batch = int(np.prod(batch))
    ga = gb = None
    if a.ndim == 2 and b.ndim == 2:
        (m, k), n = a.shape, b.shape[1]
        if need_a:
            ga = reshape(matmul(reshape(g, (n_batch * m, n)), transpose(b)), batch + (m, k))
        if need_b:
            gm = reshape(transpose(reshape(g, (n_batch, m, n)), (1, 0, 2)), (m, n_batch * n))
            gb = reshape(transpose(reshape(matmul(transpose(a), gm), (k, n_batch, n)), (1, 0, 2)), batch + (k, n))
    elif a.ndim == 2:                   # [m, k] @ [k]: g is batch + [m]
        (m, k) = a.shape
        if need_a:
            ga = mul(reshape(g, batch + (m, 1)), b)
        if need_b:
            gb = a if g.id in IDENTITY else matmul(reshape(g, (n_batch, m)), a)
            gb = reshape(gb, batch + (k,))
    elif b.ndim == 2:                   # [k] @ [k, n]: g is batch + [n]
        k, n = b.shape
        if need_a:
            ga = transpose(b) if g.id in IDENTITY else matmul(reshape(g, (n_batch, n)), transpose(b))
            ga = reshape(ga, batch + (k,))
        if need_b:
            gb = mul(reshape(a, (k, 1)), reshape(g, batch + (1, n)))
    else:                               # [k] @ [k]: g is batch + []
        if need_a:
            ga = mul(reshape(g, batch + (1,)), b)
        if need_b:
            gb = mul(reshape(g, batch + (1,)), a)
    return ga, gb


def _matmul_jvp(r, ts):
    a, b = r.inputs
    y = r.output
    parts = []
    a2 = a.shape if a.ndim > 1 else (1,) + a.shape
    b2 = b.shape if b.ndim > 1 else b.shape + (1,)
    bshape = np.broadcast_shapes(a2[:-2], b2[:-2])
    if ts[0] is not None:
        t = ts[0]
        lead = t.ndim - a.ndim
        batch = t.shape[:lead]
        if not lead:
            parts.append(matmul(t, b))
        elif t.id in IDENTITY and a.ndim == 1 and b.ndim == 2:
            parts.append(b)                       # e_i @ b = b[i]
        elif a.ndim <= 2 and b.ndim == 2:
            rows = int(np.prod(batch)) * (a.shape[0] if a.ndim == 2 else 1)
            parts.append(reshape(matmul(reshape(t, (rows, a.shape[-1])), b), batch + y.shape))
        else:
            t2 = reshape(t, batch + (1,) * (len(bshape) - len(a2[:-2])) + a2)
            bb = b if b.ndim > 1 else reshape(b, b2)
            parts.append(reshape(matmul(t2, bb), batch + y.shape))
    if ts[1] is not None:
        t = ts[1]
        lead = t.ndim - b.ndim
        batch = t.shape[:lead]
        if not lead:
            parts.append(matmul(a, t))
        elif t.id in IDENTITY and b.ndim == 1 and a.ndim == 2:
            parts.append(transpose(a))            # a @ e_i = a[:, i]
        elif b.ndim == 1 and a.ndim <= 2:
            # a @ t_i for every row t_i: one product t @ a^T
            parts.append(reshape(matmul(reshape(t, (int(np.prod(batch)), b.shape[0])),
                                        _swap_last(a) if a.ndim == 2 else a), batch + y.shape))
        else:
            t2 = reshape(t, batch + (1,) * (len(bshape) - len(b2[:-2])) + b2)
            aa = a if a.ndim > 1 else reshape(a, a2)
            parts.append(reshape(matmul(aa, t2), batch + y.shape))
    total = None
    for p in parts:
        total = p if total is None else add(total, p)
    return total


MATMUL = register("matmul", vjp=_matmul_vjp, jvp=_matmul_jvp, saves=(0, 1))


def _reshape_vjp(r, g):
    lead = g.ndim - r.output.ndim
    return (reshape(g, g.shape[:lead] + r.inputs[0].shape),)


def _reshape_jvp(r, ts):
    t = ts[0]
    lead = t.ndim - r.inputs[0].ndim
    return reshape(t, t.shape[:lead] + r.attrs["shape"])


def _batch_perm(perm, lead):
    return tuple(range(lead)) + tuple(lead + p for p in perm)


RESHAPE = register("reshape", unify=(), vjp=_reshape_vjp, jvp=_reshape_jvp, saves=())
TRANSPOSE = register("transpose", unify=(), saves=(),
                     vjp=lambda r, g: (transpose(g, _batch_perm(np.argsort(r.attrs["perm"]), g.ndim - r.output.ndim)),),
                     jvp=lambda r, ts: transpose(ts[0], _batch_perm(r.attrs["perm"], ts[0].ndim - r.inputs[0].ndim)))


def _broadcast_to_jvp(r, ts):
    t = ts[0]
    x = r.inputs[0]
    lead = t.ndim - x.ndim
    shape = r.attrs["shape"]
    return broadcast_to(_pad(t, lead, x.shape, len(shape)), t.shape[:lead] + tuple(shape))


BROADCAST_TO = register("broadcast_to", unify=(), saves=(), jvp=_broadcast_to_jvp,
                        vjp=lambda r, g: (unbroadcast(g, r.inputs[0].shape, g.ndim - r.output.ndim),))


def _concat_vjp(r, g, needs=None):
    lead = g.ndim - r.output.ndim
    axis = r.attrs["axis"] % r.output.ndim + lead
    out, start = [], 0
    for i, x in enumerate(r.inputs):
        if needs is None or needs[i]:
            index = [slice(None)] * g.ndim
            index[axis] = slice(start, start + x.shape[axis - lead])
            out.append(getitem(g, tuple(index)))
        else:
            out.append(None)
        start += x.shape[axis - lead]
    return tuple(out)


def _present_tangents(r, ts):
    """Each input's tangent, zeros where it has none (a batch of them, as the present ones)."""
    lead = next(t.ndim - x.ndim for t, x in zip(ts, r.inputs) if t is not None)
    batch = next(t.shape[:lead] for t in ts if t is not None)
    full = [t if t is not None else Tensor(np.zeros(batch + x.shape, dtype=x.dtype)) for t, x in zip(ts, r.inputs)]
    return full, lead


def _concat_jvp(r, ts):
    full, lead = _present_tangents(r, ts)
    return concat(full, axis=r.attrs["axis"] % r.output.ndim + lead)


def _stack_vjp(r, g, needs=None):
    lead = g.ndim - r.output.ndim
    axis = r.attrs["axis"] % r.output.ndim + lead      # stack(xs, axis=-1): count from the output's end
    return tuple(getitem(g, (slice(None),) * axis + (i,)) if needs is None or needs[i] else None
                 for i in range(len(r.inputs)))


def _stack_jvp(r, ts):
    full, lead = _present_tangents(r, ts)
    return stack(full, axis=r.attrs["axis"] % r.output.ndim + lead)


CONCAT = register("concat", vjp=_concat_vjp, jvp=_concat_jvp, saves=())
STACK = register("stack", vjp=_stack_vjp, jvp=_stack_jvp, saves=())


def _index_tuple(index):
    return index if isinstance(index, tuple) else (index,)


def index_batchable(index) -> bool:
    """Whether ``(slice(None),) + index`` indexes each batch element as ``index`` does: NumPy moves
    the dimensions of advanced indices to the front when they are not next to each other."""
    items = _index_tuple(index)
    advanced = [i for i, it in enumerate(items) if isinstance(it, (np.ndarray, list))]
    if not advanced:
        return True
    positions = sorted(advanced + [i for i, it in enumerate(items)
                                   if isinstance(it, (int, np.integer)) and not isinstance(it, bool)])
    return positions == list(range(positions[0], positions[-1] + 1)) and \
        not any(it is None or it is Ellipsis for it in items[positions[0]:positions[-1] + 1])


def _batch_index(index, lead):
    return (slice(None),) * lead + _index_tuple(index) if lead else index


def _index_ok(r):
    return index_batchable(r.attrs["index"])


GETITEM = register("getitem", unify=(), saves=(), batchable=_index_ok,
                   vjp=lambda r, g: (index_grad(g, g.shape[:g.ndim - r.output.ndim] + r.inputs[0].shape,
                                                _batch_index(r.attrs["index"], g.ndim - r.output.ndim)),),
                   jvp=lambda r, ts: getitem(ts[0], _batch_index(r.attrs["index"], ts[0].ndim - r.inputs[0].ndim)))
INDEX_GRAD = register("index_grad", unify=(), saves=(), batchable=_index_ok,
                      vjp=lambda r, g: (getitem(g, _batch_index(r.attrs["index"], g.ndim - r.output.ndim)),),
                      jvp=lambda r, ts: index_grad(ts[0], ts[0].shape[:ts[0].ndim - r.inputs[0].ndim] +
                                                   r.attrs["shape"],
                                                   _batch_index(r.attrs["index"], ts[0].ndim - r.inputs[0].ndim)))


# ------------------------------------------------------- the public functions

def neg(x): return apply(NEG, (x,))
def add(a, b): return apply(ADD, (a, b))
def sub(a, b): return apply(SUB, (a, b))
def mul(a, b): return apply(MUL, (a, b))
def div(a, b): return apply(DIV, (a, b))
def floordiv(a, b): return apply(FLOORDIV, (a, b))
def mod(a, b): return apply(MOD, (a, b))
def pow_(a, b): return apply(POW, (a, b))
def maximum(a, b): return apply(MAXIMUM, (a, b))
def minimum(a, b): return apply(MINIMUM, (a, b))
def less(a, b): return apply(OPS["less"], (a, b))
def less_equal(a, b): return apply(OPS["less_equal"], (a, b))
def greater(a, b): return apply(OPS["greater"], (a, b))
def greater_equal(a, b): return apply(OPS["greater_equal"], (a, b))
def equal(a, b): return apply(OPS["equal"], (a, b))
def not_equal(a, b): return apply(OPS["not_equal"], (a, b))
def logical_and(a, b): return apply(OPS["logical_and"], (a, b))
def logical_or(a, b): return apply(OPS["logical_or"], (a, b))
def logical_not(a): return apply(OPS["logical_not"], (a,))
def sin(x): return apply(SIN, (x,))
def cos(x): return apply(COS, (x,))
def tan(x): return apply(TAN, (x,))
def exp(x): return apply(EXP, (x,))
def log(x): return apply(LOG, (x,))
def log1p(x): return apply(LOG1P, (x,))
def sqrt(x): return apply(SQRT, (x,))
def rsqrt(x): return apply(RSQRT, (x,))
def square(x): return apply(SQUARE, (x,))
def tanh(x): return apply(TANH, (x,))
def sigmoid(x): return apply(SIGMOID, (x,))
def softplus(x): return apply(SOFTPLUS, (x,))
def relu(x): return apply(RELU, (x,))
def abs_(x): return apply(ABS, (x,))
def sign(x): return apply(OPS["sign"], (x,))
def erf(x): return apply(ERF, (x,))
def round_(x): return apply(OPS["round"], (x,))
def floor(x): return apply(OPS["floor"], (x,))
def ceil(x): return apply(OPS["ceil"], (x,))
def elu(x, alpha=1.0): return apply(ELU, (x,), alpha=float(alpha))
def leaky_relu(x, alpha=0.2): return apply(LEAKY_RELU, (x,), alpha=float(alpha))
def gelu(x, approximate=False): return apply(GELU, (x,), approximate=bool(approximate))
def masked_grad(g, x, kind, alpha=0.2): return apply(MASKED_GRAD, (g, x), kind=kind, alpha=alpha)
def where(c, a, b): return apply(WHERE, (c, a, b))
def clip(x, lo, hi): return apply(CLIP, (x, lo, hi))
def matmul(a, b): return apply(MATMUL, (a, b))
def reciprocal(x): return div(1, x)


def _check_axis(x: Tensor, axis):
    if axis is None:
        return None
    axes = axis if isinstance(axis, tuple) else (axis,)
    for a in axes:
        if not -max(x.ndim, 1) <= a < max(x.ndim, 1):
            raise ShapeError(f"axis {a} is out of range for a tensor of shape {list(x.shape)}")
    return axis


def _reduction(op):
    def run(x, axis=None, keepdims=False):
        x = to_tensor(x)
        return apply(op, (x,), axis=_check_axis(x, axis), keepdims=bool(keepdims))
    return run


reduce_sum = _reduction(SUM)
reduce_mean = _reduction(MEAN)
reduce_max = _reduction(MAX)
reduce_min = _reduction(MIN)
reduce_prod = _reduction(PROD)
reduce_logsumexp = _reduction(LOGSUMEXP)


def argmax(x, axis=0): return apply(ARGMAX, (x,), axis=axis)
def argmin(x, axis=0): return apply(ARGMIN, (x,), axis=axis)
def softmax(x, axis=-1): return apply(SOFTMAX, (x,), axis=axis)
def log_softmax(x, axis=-1): return apply(LOG_SOFTMAX, (x,), axis=axis)


def cast(x, dtype) -> Tensor:
    x = to_tensor(x)
    dtype = np.dtype(dtype)
    if x.weak:
        x = Tensor(x.value)  # a literal is cast from its exact value
    if x.dtype == dtype:
        return x
    return apply(CAST if is_float(dtype) else CAST_TO_INT, (x,), dtype=dtype)


def reshape(x, shape) -> Tensor:
    x = to_tensor(x)
    shape = tuple(int(n) for n in shape)
    if x.shape == shape:
        return x
    return apply(RESHAPE, (x,), shape=shape)


def transpose(x, perm=None) -> Tensor:
    x = to_tensor(x)
    perm = tuple(range(x.ndim))[::-1] if perm is None else tuple(int(p) for p in perm)
    if sorted(perm) != list(range(x.ndim)):
        raise ShapeError(f"perm {list(perm)} is not a permutation of the {x.ndim} axes of shape {list(x.shape)}")
    return apply(TRANSPOSE, (x,), perm=perm)


def broadcast_to(x, shape) -> Tensor:
    x = to_tensor(x)
    shape = tuple(shape)
    return x if x.shape == shape else apply(BROADCAST_TO, (x,), shape=shape)


def concat(xs, axis=0) -> Tensor:
    return apply(CONCAT, tuple(xs), axis=int(axis))


def stack(xs, axis=0) -> Tensor:
    return apply(STACK, tuple(xs), axis=int(axis))


def getitem(x, index) -> Tensor:
    return apply(GETITEM, (x,), index=index)


def index_grad(g, shape, index) -> Tensor:
    return apply(INDEX_GRAD, (g,), shape=tuple(shape), index=index)


def _shape_dtype(x):
    if x.__class__ is not Tensor and x.__class__ is not Stub:
        x = to_tensor(x)
    return x.shape, x.dtype


def zeros_like(x) -> Tensor:
    shape, dtype = _shape_dtype(x)
    return Tensor(np.zeros(shape, dtype=dtype))


def ones_like(x) -> Tensor:
    shape, dtype = _shape_dtype(x)
    return Tensor(np.ones(shape, dtype=dtype))


def stop_gradient(x) -> Tensor:
    return Tensor(to_tensor(x).value)


# The namespace the ``grads`` formulas run in to build recordable ops: this module.
_E = sys.modules[__name__]
