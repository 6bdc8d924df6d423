"""The interpreter's values beside tensors: scopes, functions, tapes as values, bound methods,
gradient requests."""
from __future__ import annotations


import numpy as np

from tapecli.frontend import ast
from tapecli import ops
from tapecli.errors import (TdfTypeError)
from tapecli.runtime.tape import Tape, as_tensor
from tapecli.runtime.context import current
from tapecli.runtime.values import Tensor, Variable



def _list_as_tensor(value):
    """A list compared with a tensor: its elements stacked (an empty list is an empty tensor)."""
    if not isinstance(value, list):
        return value
    return ops.stack(value) if value else Tensor(np.zeros(0, dtype=np.int64), weak=True)



_MISSING = object()
_PYFUNCTION = type(lambda: None)
_FUSABLE = (ast.BinOp, ast.Call, ast.UnaryOp)       # expressions fusion may take (tapecli/fusion.py)

class Scope:
    __slots__ = ("vars", "parent", "consts")

    def __init__(self, parent: "Scope | None" = None):
        self.vars: dict = {}
        self.parent = parent
        self.consts: set[str] = set()

    def get(self, name: str, default=None):
        """The value bound to ``name`` here or in an enclosing scope, else ``default``."""
        scope = self
        while scope is not None:
            value = scope.vars.get(name, _MISSING)
            if value is not _MISSING:
                return value
            scope = scope.parent
        return default

    def lookup(self, name: str):
        value = self.get(name, _MISSING)
        if value is _MISSING:
            raise KeyError(name)
        return value

    def names(self) -> set[str]:
        out, scope = set(), self
        while scope is not None:
            out.update(scope.vars)
            scope = scope.parent
        return out


class _Return(Exception):
    def __init__(self, value):
        self.value = value


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


class Function:
    kind_word = "a function"

    def __init__(self, node: ast.FuncDef, closure: Scope, interp: object):
        self.node = node
        self.name = node.name
        self.closure = closure
        self.interp = interp

    def __call__(self, args, kwargs=None, node=None):
        return self.interp.call_function(self, args, kwargs or {}, node)


class CustomGradientFunction(Function):
    """@custom_gradient: the body runs unrecorded; one op with the user's backward is recorded."""

    def __call__(self, args, kwargs=None, node=None):
        ctx = current()
        interp = self.interp
        saved = [t.paused for t in ctx.tapes]
        for t in ctx.tapes:
            t.paused = True
        try:
            result = interp.call_function(self, args, kwargs or {}, node)
        finally:
            for t, p in zip(ctx.tapes, saved):
                t.paused = p
        if not (isinstance(result, (list, tuple)) and len(result) == 2 and isinstance(result[1], Function)):
            raise TdfTypeError(f"@custom_gradient function {self.name} must return (value, backward)",
                               hint="end it with: return y, backward")
        value, backward = result
        inputs = [ops.to_tensor(a) for a in args if isinstance(a, (Tensor, Variable))]
        output = Tensor(ops.to_tensor(value).value)
        ops.emit(CUSTOM_GRADIENT, inputs, output, {"backward": backward, "name": self.name})
        return output


def _custom_vjp(record, g):
    backward = record.attrs["backward"]
    grads = backward([g])
    grads = list(grads) if isinstance(grads, (list, tuple)) else [grads]
    if len(grads) != len(record.inputs):
        raise TdfTypeError(f"the backward function of {record.attrs['name']} returned {len(grads)} gradient(s) "
                           f"for {len(record.inputs)} input(s)")
    out = []
    for inp, gr in zip(record.inputs, grads):
        if gr is None:
            out.append(None)
            continue
        gr = ops.to_tensor(gr)
        out.append(ops.materialize(gr, inp.dtype) if gr.weak else gr)
    return tuple(out)


CUSTOM_GRADIENT = ops.Op("custom_gradient", vjp=_custom_vjp)


class TapeObject:
    """The program-visible tape: its methods are the gradient requests."""

    kind_word = "a tape"

    def __init__(self, tape: Tape, interp: object):
        self.tape = tape
        self.interp = interp


class PausedTape:
    """What ``tape.stop_recording()`` gives: a `with` statement runs its block with the tape paused."""

    kind_word = "a paused tape"

    def __init__(self, tape: Tape):
        self.tape = tape


class ProgramObject:
    """A program value implemented in Python (a layer, an optimizer, a loss, an instance of a program's
    class): the interpreter reads its attributes, assigns them and calls it through these three methods,
    so a new kind of object needs no change to the interpreter. ``kind_word`` names it in messages."""

    kind_word = "an object"

    def get_attribute(self, interp, attr: str, node):
        raise TdfTypeError(f"{self.kind_word} has no attribute {attr}")

    def set_attribute(self, interp, attr: str, value, node) -> None:
        raise TdfTypeError(f"cannot set attribute {attr} of {self.kind_word}")

    def call(self, interp, args: list, kwargs: dict, node):
        raise TdfTypeError(f"{self.kind_word} is not callable")

    def owned_variables(self) -> list:
        """The variables this object holds, trainable or not, in its framework's order: what a
        ``tf.Module`` or Keras model that holds it collects into ``variables``."""
        return []


class BoundMethod:
    kind_word = "a method"

    def __init__(self, name, fn):
        self.name = name
        self.fn = fn


class Request:
    """One gradient/jacobian call, for `grad --json` and `jacobian --json`."""

    def __init__(self, kind, line, tape, target_text, labels, values, result, why, leaves=None, objective=None,
                 targets=None, tape_obj=None):
        self.kind = kind              # "gradient" | "jacobian" | "batch_jacobian"
        self.line = line
        self.tape = tape
        self.target_text = target_text
        self.labels = labels          # one per source leaf
        self.values = values          # one Tensor | None per source leaf
        self.why = why                # one str | None per source leaf
        self.result = result          # the structure returned to the program
        self.names: list | None = None
        self.leaves = leaves or []    # the source tensors/variables, for finite-difference checks
        self.versions = [leaf.version if isinstance(leaf, Variable) else None for leaf in self.leaves]
        self.snapshots = [as_tensor(leaf).value for leaf in self.leaves]     # source values when asked
        self._objective = objective   # () -> sum(target * seed) as asked (autodiff.gradients.objective)
        self.targets = targets        # the target tensors, kept for `explain`
        self.tape_obj = tape_obj      # the Tape itself, kept for `explain`

    @property
    def objective(self) -> float | None:
        """sum(target * seed) of a gradient request, for finite-difference checks (None for others)."""
        if callable(self._objective):
            self._objective = self._objective()
        return self._objective
