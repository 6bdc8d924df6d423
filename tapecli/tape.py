"""Tapes: what is recorded, what is watched, and the backward pass.

The rule (LANGUAGE.md §4): an op is recorded on every open, recording tape on which
at least one input is watched, and its output is then watched there. The backward
pass calls the ops' gradient rules, which are ops themselves, so a gradient computed
while another tape records is recorded on it: that is how nested tapes give
higher derivatives.
"""
from __future__ import annotations


from .errors import TapeError, TdfTypeError, TdfValueError
from .numerics import NUMERICS
from .provenance import PROVENANCE
from .values import Tensor, Variable, dtype_name, is_float

# Open tapes, outermost first. Ops consult it to decide where to record.
ACTIVE: list["Tape"] = []


class Record:
    """One recorded op: what the backward pass needs to apply its gradient rule."""

    __slots__ = ("op", "inputs", "output", "attrs", "line")

    def __init__(self, op, inputs, output, attrs, line):
        self.op = op
        self.inputs = inputs
        self.output = output
        self.attrs = attrs
        self.line = line


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

    @property
    def recording(self) -> bool:
        return self.open and not self.paused

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
        self.records.clear()
        self.watched_ids.clear()
        self.watched_variables_list.clear()
        self.watched_tensors.clear()

    # ------------------------------------------------------------ backward pass
    def begin_request(self, line: int | None) -> None:
        """Apply the one-shot rule and the in-scope rule before a gradient/jacobian call."""
        if not self.persistent:
            if self.used_at is not None:
                raise TapeError(f"tape {self.name} is not persistent and already computed gradients "
                                f"at line {self.used_at}",
                                hint=f"declare it with tape {self.name}(persistent=True):")
            self.used_at = line
            if self.open:
                # As in TensorFlow: a non-persistent tape stops recording once asked.
                self.paused = True
                if PROVENANCE.enabled:
                    PROVENANCE.tape(self).stopped = (PROVENANCE.now, line)

    def backward(self, targets: list[Tensor], seeds: list[Tensor], source_ids: list[int]) -> dict[int, Tensor]:
        """Accumulated gradients of sum(seed * target) for every source id with a path."""
        from . import ops  # the gradient rules are ops; imported here to keep the rooms one-way

        wanted = set(source_ids)
        # Forward sweep: records on a path from a watched source, in execution order.
        # An unwatched source gets no gradient even where a record reads it (TensorFlow).
        reach = wanted & self.watched_ids
        path = []
        for rec in self.records:
            for inp in rec.inputs:
                if inp.id in reach:
                    reach.add(rec.output.id)
                    path.append(rec)
                    break
        grads: dict[int, Tensor] = {}
        for target, seed in zip(targets, seeds):
            if target.id in reach or target.id in wanted:
                _accumulate(grads, target.id, seed, ops)
        for rec in reversed(path):
            g = grads.get(rec.output.id)
            if g is None:
                continue
            if rec.output.id not in wanted:
                del grads[rec.output.id]        # consumed: free it early
            input_grads = rec.op.vjp(rec, g)
            if NUMERICS.enabled:
                NUMERICS.backward(rec, g, input_grads)
            for inp, ig in zip(rec.inputs, input_grads):
                if ig is not None and inp.id in reach:
                    _accumulate(grads, inp.id, ig, ops)
        return {sid: grads[sid] for sid in wanted if sid in grads}

    def __repr__(self):
        return f"Tape({self.name})"


def _accumulate(grads, key, value, ops):
    prev = grads.get(key)
    grads[key] = value if prev is None else ops.add(prev, value)


# ------------------------------------------------------------------ structures

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
        return "a list"
    if isinstance(value, dict):
        return "a dict"
    if value is None:
        return "None"
    return getattr(value, "kind_word", type(value).__name__)


def as_tensor(x) -> Tensor:
    return x.read() if isinstance(x, Variable) else x


def check_unconnected(value: str) -> str:
    if value not in ("none", "zero"):
        raise TdfValueError(f'unconnected_gradients must be "none" or "zero", got "{value}"')
    return value
