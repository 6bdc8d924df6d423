"""Tapes: what is recorded, what is watched, and the backward pass.

The rule (docs/spec/LANGUAGE.md §4): an op is recorded on every open, recording tape on which
at least one input is watched, and its output is then watched there. The backward
pass calls the ops' gradient rules, which are ops themselves, so a gradient computed
while another tape records is recorded on it: that is how nested tapes give
higher derivatives.

A record keeps only the tensors its op's gradient and tangent rules read (``Op.saves``
in the op table: relu its output, add nothing but shapes); the others become a
:class:`Stub` with the tensor's id, shape and dtype. A tape that is not persistent
releases what each record kept once the backward pass has used it, unless another tape
still holds the record.
"""
from __future__ import annotations

import contextlib
import enum
import weakref

from tapecli.errors import TapeError, TdfTypeError, TdfValueError
from tapecli.runtime.context import current
from tapecli.runtime.values import PythonTuple, Tensor, Variable, dtype_name, is_float
from tapecli.runtime import spelling


# Tensors smaller than this are kept whole even where a rule does not read them: a stub
# costs more than they do.
STUB_BYTES = 1024


class Stub:
    """What a record keeps of a tensor its rules do not read: identity, shape and dtype.
    ``value`` is still there while something else keeps the array alive (a weak reference)."""

    __slots__ = ("id", "shape", "dtype", "_ref")
    weak = False

    def __init__(self, tensor):
        self.id = tensor.id
        v = tensor.value
        self.shape = v.shape
        self.dtype = v.dtype
        try:
            self._ref = weakref.ref(v)
        except TypeError:      # a NumPy scalar
            self._ref = None

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def value(self):
        v = self._ref() if self._ref is not None else None
        if v is None:
            raise AttributeError("the tape did not keep this tensor's value (see Op.saves)")
        return v

    @property
    def alive(self) -> bool:
        return self._ref is not None and self._ref() is not None

    def __repr__(self):
        return f"Stub(id={self.id}, shape={self.shape}, dtype={self.dtype})"


def stub(t):
    """``t`` as a record keeps a tensor it does not need: a Stub, unless it is tiny."""
    if t.__class__ is Stub:
        return t
    v = t.value
    if v.nbytes < STUB_BYTES:
        return t
    return Stub(t)


class Record:
    """One recorded op: what the backward pass needs to apply its gradient rule.

    ``inputs`` and ``output`` hold the tensors the op's rules read, and :class:`Stub`s
    for the others. ``holders`` counts the tapes that hold the record."""

    __slots__ = ("op", "inputs", "output", "attrs", "line", "holders")

    def __init__(self, op, inputs, output, attrs, line):
        self.op = op
        self.inputs = inputs
        self.output = output
        self.attrs = attrs
        self.line = line
        self.holders = 0

    def release(self) -> None:
        """Drop every kept tensor (the backward pass of a non-persistent tape is done with it)."""
        for t in self.inputs:
            if t.__class__ is not Stub and t.value.nbytes >= STUB_BYTES:
                self.inputs = tuple(stub(t) for t in self.inputs)
                break
        out = self.output
        if out.__class__ is not Stub and out.value.nbytes >= STUB_BYTES:
            self.output = Stub(out)
        extra = self.op.release_extra
        if extra is not None:
            extra(self)

    def kept(self) -> list:
        """The tensors (not stubs) this record keeps alive, each once."""
        seen, out = set(), []
        for t in (*self.inputs, self.output):
            if t.__class__ is not Stub and t.id not in seen:
                seen.add(t.id)
                out.append(t)
        extra = getattr(self.op, "kept_extra", None)
        if extra is not None:
            out.extend(extra(self))
        return out

    def saved_bytes(self) -> int:
        """Bytes of the arrays this record keeps alive."""
        return sum(int(t.value.nbytes) for t in self.kept())

    def op_records(self, reach=None, tapes=()) -> list:
        """The records of one op each that this record stands for: itself (a statement's record, several:
        ops/statement.py)."""
        return [self]


NO_ATTRS: dict = {}     # never written: the attributes of every record of an op without any


def record_on(tapes, op, inputs, output, attrs, line, keep=None, record=Record) -> list:
    """Record ``op`` on every open, recording tape of ``tapes`` that watches one of ``inputs``
    (docs/spec/LANGUAGE.md §4.1), and watch its output there; returns those tapes. ``keep(op, inputs,
    output)`` gives what the record keeps (asked once, when a tape records); without it, the record keeps
    the tensors whole (scalars: smaller than stubs) and ``inputs`` is a tuple. ``record``: the record's class."""
    rec = None
    recorded = []
    for tape in tapes:
        if not tape.open or tape.paused:
            continue
        ids = tape.watched_ids
        for t in inputs:
            if t.id in ids:
                break
        else:
            continue
        if rec is None:
            # a tuple, and one shared empty dict: a long loop's records are many and small
            if keep is None:
                rec = record(op, inputs, output, attrs or NO_ATTRS, line)
            else:
                kept_inputs, kept_output = keep(op, inputs, output)
                rec = record(op, tuple(kept_inputs), kept_output, attrs or NO_ATTRS, line)
        rec.holders += 1
        tape.records.append(rec)
        ids.add(output.id)
        recorded.append(tape)
    return recorded


class Watched:
    __slots__ = ("name", "kind", "how", "line", "obj")

    def __init__(self, name, kind, how, line, obj):
        self.name, self.kind, self.how, self.line, self.obj = name, kind, how, line, obj


class Tape:
    def __init__(self, name: str, persistent: bool = False, watch_accessed_variables: bool = True,
                 line: int | None = None):
        self.name = name
        self.persistent = persistent
        self.watch_accessed_variables = watch_accessed_variables
        self.line = line
        self.records: list[Record] = []
        self.watched_ids: set[int] = set()
        self.watched_variables_list: list[Watched] = []
        self.watched_tensors: list[Watched] = []
        self.open = False
        self.paused = False
        self.used_at: int | None = None      # line of the first gradient call (non-persistent)
        self.released = False                # a backward pass let go of what the records kept
        self.split_upto = 0                  # records[:split_upto] are of one op each (split_records)
        self.left_at: list = []              # (line, what, input ids): NumPy computed on its values (leave_tapes)
        self.graph = False                   # a tf.function's tape of its body (execution/tf_calls.py)

    @property
    def recording(self) -> bool:
        return self.open and not self.paused

    def left_reason(self, leaf_id: int, label: str) -> str | None:
        """Why ``leaf_id`` has no gradient if a NumPy computation took a value on a path from it: where
        that path left this tape (as in TensorFlow, NumPy is not recorded); None if none did."""
        if not self.left_at:
            return None
        _, reach = self.path([leaf_id])
        exits = [f"{what} at line {line}" for line, what, ids in self.left_at if reach & ids]
        if not exits:
            return None
        where = exits[0] if len(exits) == 1 else f"one of {', '.join(exits[:3])}{', ...' if len(exits) > 3 else ''}"
        numpy_method = all(what.endswith(".numpy()") for line, what, ids in self.left_at if reach & ids)
        return (f"the path from {label} leaves tape {self.name} through NumPy ({where}), which no tape records "
                "(as in TensorFlow): " + ("compute with the tensor itself, not its .numpy() values" if numpy_method
                                          else "use the tf. op instead"))

    # ---------------------------------------------------------------- watching
    def watch_variable(self, var: Variable, how: str, line: int | None) -> None:
        if var.id in self.watched_ids:
            return
        if not is_float(var.dtype):
            return
        self.watched_ids.add(var.id)
        self.watched_variables_list.append(Watched(var.name, "variable", how, line, var))

    def watch_tensor(self, tensor: Tensor, name: str | None, line: int | None) -> bool:
        """Watch a tensor; False (and nothing watched) for a non-float one."""
        if not is_float(tensor.dtype):
            return False
        if tensor.id not in self.watched_ids:
            self.watched_ids.add(tensor.id)
            self.watched_tensors.append(Watched(name, "tensor", "watch", line, tensor))
        return True

    def watched_variables(self) -> list[Variable]:
        return [w.obj for w in sorted(self.watched_variables_list, key=lambda w: w.obj.order)]

    def reset(self) -> None:
        if not self.released:
            for rec in self.records:
                rec.holders -= 1
        self.released = False
        self.split_upto = 0
        self.records.clear()
        self.watched_ids.clear()
        self.watched_variables_list.clear()
        self.watched_tensors.clear()

    # ------------------------------------------------------------ backward pass
    def begin_request(self, line: int | None) -> None:
        """Apply the one-shot rule and the in-scope rule before a gradient/jacobian call."""
        ctx = current()
        if not self.persistent:
            if self.used_at is not None:
                # (TensorFlow's message where a program is spelled as TensorFlow's, which may print it)
                raise TapeError(spelling.either(f"tape {self.name} is not persistent and already computed gradients "
                                                f"at line {self.used_at}", "A non-persistent GradientTape can only "
                                                "be used to compute one set of gradients (or jacobians)"),
                                hint=spelling.either(f"declare it with tape {self.name}(persistent=True):",
                                                     f"tape {self.name} computed them at line {self.used_at}: open it "
                                                     f"with `with tf.GradientTape(persistent=True) as {self.name}:`"))
            self.used_at = line
            if self.open:
                # As in TensorFlow: a non-persistent tape stops recording once asked.
                self.paused = True
                if ctx.provenance.enabled:
                    ctx.provenance.tape(self).stopped = (ctx.provenance.now, line)

    def saved_bytes(self) -> int:
        """Bytes of the arrays this tape's records keep alive (each array once)."""
        seen, total = set(), 0
        for rec in self.records:
            for t in rec.kept():
                if id(t.value) not in seen:
                    seen.add(id(t.value))
                    total += int(t.value.nbytes)
        return total

    def op_records(self, tapes=()):
        """The records of one op each, in execution order (a statement's record gives its ops'; see
        ``StatementRecord.op_records`` for ``tapes``). The records as they were when asked: giving a statement's
        ops may split this tape's records (a recording tape, before rules on them run)."""
        for rec in tuple(self.records):
            yield from rec.op_records(None, tapes)

    def split_records(self) -> None:
        """Replace each record standing for several ops (a statement's: ops/statement.py) by their records,
        their outputs watched, as if each op had been recorded: before this tape records gradient rules
        that read the values between those ops. The records split once stay split."""
        records = self.records
        ids = self.watched_ids
        holders = 0 if self.released else 1
        split = records[:self.split_upto]
        for rec in records[self.split_upto:]:
            ops = rec.op_records()
            if ops[0] is not rec:
                rec.holders -= holders
                for op_rec in ops:
                    op_rec.holders = holders
                    ids.add(op_rec.output.id)
            split += ops
        records[:] = split
        self.split_upto = len(records)

    def path(self, source_ids, per_op=False) -> tuple[list, set]:
        """The records on a path from a watched source in ``source_ids``, in execution order, and the
        ids they reach. An unwatched source gets no gradient even where a record reads it (TensorFlow).
        ``per_op``: records of one op each (see :meth:`op_records`)."""
        reach = set(source_ids) & self.watched_ids
        path = []
        for rec in self.op_records(current().tapes) if per_op else self.records:
            for inp in rec.inputs:
                if inp.id in reach:
                    reach.add(rec.output.id)
                    path.append(rec)
                    break
        return path, reach

    def release_rest(self, done) -> None:
        """After a releasing backward pass: let go of the records it did not walk through. ``done`` is a
        :meth:`path`, so its records come in the tape's order: one walk along both, no set of them."""
        walked = iter(done)
        following = next(walked, None)
        for rec in self.records:
            if rec is following:
                following = next(walked, None)
                continue
            rec.holders -= 1
            if rec.holders <= 0:
                rec.release()
        self.released = True

    def __repr__(self):
        return f"Tape({self.name})"


@contextlib.contextmanager
def recording(tape: Tape, *, noted: bool = False, alone: bool = False):
    """The block records on ``tape``: the one way a tape opens. A closed tape is opened and pushed on the run's
    tapes (innermost last; an open one, as a hessian's backward pass records on its tape, stays where it is);
    either way it is not paused while the block runs. ``noted``: a program's own tape (a TDF tape block,
    tf.GradientTape, the implicit tape), whose block the provenance log notes for ``explain``; ``alone``: the
    other open tapes paused meanwhile (custom_gradient's body, which only its own op records). After the block,
    even one that raised, all is as it was: the tape closed and popped again if it was closed, and every pause
    (a non-persistent tape's gradient pauses it) as it was before."""
    ctx = current()
    with none_recording(ctx.tapes) if alone else contextlib.nullcontext():
        was_paused, opens = tape.paused, not tape.open
        if opens:
            tape.open = True
            ctx.tapes.append(tape)
        tape.paused = False
        history = ctx.provenance.tape(tape) if noted and opens and ctx.provenance.enabled else None
        if history is not None:
            history.opened = ctx.provenance.now
        try:
            yield tape
        finally:
            if opens:
                ctx.tapes.remove(tape)
                tape.open = False
            tape.paused = was_paused
            if history is not None:
                history.closed = ctx.provenance.now


@contextlib.contextmanager
def none_recording(tapes):
    """The block with none of ``tapes`` recording: those that were are paused, and record again after it
    (tf.init_scope, what runs off the tape, custom_gradient's body beside its own tape)."""
    stopped = [t for t in tapes if t.recording]
    for t in stopped:
        t.paused = True
    try:
        yield
    finally:
        for t in stopped:
            t.paused = False


@contextlib.contextmanager
def paused(tape: Tape, line):
    """``stop_recording t:`` and ``with t.stop_recording():``: ``tape`` not recording while the block runs."""
    ctx = current()
    if not tape.recording:
        raise TapeError(f"tape {tape.name} is not recording here",
                        hint="stop_recording belongs inside the tape's own block")
    tape.paused = True
    pause = [ctx.provenance.now, None, line]
    if ctx.provenance.enabled:
        ctx.provenance.tape(tape).pauses.append(pause)
    try:
        yield
    finally:
        tape.paused = False
        pause[1] = ctx.provenance.now


def leave_tapes(tapes, what: str, line, inputs) -> None:
    """Note on each recording tape that ``what`` (NumPy) computed on ``inputs`` outside it. A trainable
    variable among them is watched, as TensorFlow's ``__array__`` and ``numpy()`` read it (the tape watches
    what it reads), though no path goes on from it: the `why` of its None names ``what``."""
    ids = {t.id for t in inputs if isinstance(t, (Tensor, Variable))}
    for tape in tapes:
        if tape.recording and ids:
            tape.left_at.append((line, what, ids))
            for v in inputs:
                if isinstance(v, Variable) and v.trainable and tape.watch_accessed_variables:
                    tape.watch_variable(v, "accessed", line)


def flatten(structure, what: str) -> list:
    """Leaves of a tensor/variable/list/dict structure, in order."""
    if isinstance(structure, (list, tuple)):
        out = []
        for item in structure:
            out.extend(flatten(item, what))
        return out
    if isinstance(structure, dict):
        out = []
        for item in structure.values():
            out.extend(flatten(item, what))
        return out
    if isinstance(structure, (Tensor, Variable)):
        return [structure]
    if structure is None:
        raise TdfTypeError(f"{what} is None", hint="a gradient needs tensors or variables here")
    raise TdfTypeError(f"{what} must be a tensor, a variable, or a list or dict of them; got {type_word(structure)}")


def unflatten(structure, leaves: list):
    it = iter(leaves)

    def build(s):
        if isinstance(s, (list, tuple)):
            return [build(x) for x in s]
        if isinstance(s, dict):
            return {k: build(v) for k, v in s.items()}
        return next(it)
    return build(structure)


def type_word(value) -> str:
    if isinstance(value, Tensor):
        return f"a {dtype_name(value.dtype)} tensor"
    if isinstance(value, Variable):
        return "a variable"
    if isinstance(value, list):
        return "a tuple" if value.__class__ is PythonTuple else "a list"
    if isinstance(value, dict):
        return "a dict"
    if value is None:
        return "None"
    return getattr(value, "kind_word", type(value).__name__)


def as_tensor(x) -> Tensor:
    return x.read() if isinstance(x, Variable) else x


def _unconnected_gradients() -> type:
    """``tf.UnconnectedGradients`` as TensorFlow's enum, where CPython runs a program (the interpreter gives its
    members as the strings they stand for); made on first use (``__getattr__``): an enum's class takes ~0.15 ms,
    which a run that never names it need not spend at start-up."""
    cls = globals().get("UnconnectedGradients")
    if cls is None:
        cls = globals()["UnconnectedGradients"] = enum.Enum("UnconnectedGradients", {"NONE": "none", "ZERO": "zero"},
                                                             module="tensorflow", qualname="UnconnectedGradients")
    return cls


def __getattr__(name: str):
    if name == "UnconnectedGradients":
        return _unconnected_gradients()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def check_unconnected(value) -> str:
    if value.__class__ is not str and isinstance(value, _unconnected_gradients()):
        return value.value
    if value not in ("none", "zero"):
        raise TdfValueError(spelling.either(f'unconnected_gradients must be "none" or "zero", got "{value}"',
                                            f"Unknown value for unconnected_gradients: {value!r}"))
    return value
