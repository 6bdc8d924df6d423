"""keras.ops called on Keras tensors: a node of a functional model's graph, as Keras 3 makes an op an Operation
when its arguments are symbolic (``ops.cast(inputs["age"], "float32")``). Its output's Keras tensor has the
op's shape and dtype on probes (ones, every unknown dimension 1, then 2: a dimension that follows is unknown), and
the model's call runs the op on its values. Keras lists no such node in ``model.layers``."""
from __future__ import annotations

import functools
import inspect

import numpy as np

from tapecli.interpreter.registry import builtin_function
from tapecli.library.keras.layers import Layer, _bind, _leaves
from tapecli.library.keras.keras_tensor import KerasTensor
from tapecli.runtime.values import Tensor


def keras_op(fn):
    """The builtin ``fn`` as keras.ops gives it: on Keras tensors (anywhere in its arguments), a graph node's
    output; else ``fn`` itself. One wrapper per builtin (the program's function stays the same object)."""
    found = fn.__dict__.get("keras_op")
    if found is not None and found.__wrapped__ is fn:      # (not one functools.wraps copied from another builtin)
        return found
    own_interp = fn.wants_interp

    @functools.wraps(fn, updated=())
    def op(interp, *args, **kwargs):
        if any(isinstance(t, KerasTensor) for t in _leaves([args, kwargs])):
            return Operation(interp, fn, own_interp).symbolic(list(args), kwargs)
        return fn(interp, *args, **kwargs) if own_interp else fn(*args, **kwargs)
    signature = inspect.signature(fn)
    if not own_interp:
        signature = signature.replace(parameters=[inspect.Parameter("interp", inspect.Parameter.POSITIONAL_ONLY),
                                                  *signature.parameters.values()])
    op.__signature__ = signature
    # (what the builtin says of its arguments, not what is the builtin's own: its signature kept, its loop plan)
    op.__dict__.update({k: v for k, v in fn.__dict__.items() if k not in _OWN})
    builtin_function(op, interp=True)
    fn.keras_op = op
    return op


# What a builtin keeps of its own, which its keras.ops wrapper does not take over
_OWN = frozenset({"keras_op", "_signature", "positional", "wants_interp", "replay", "replay_data", "replay_lists"})


def _probe(t: KerasTensor, unknown: int) -> Tensor:
    return Tensor(np.ones([unknown if d is None else d for d in t.shape], dtype=t.dtype))


class Operation(Layer):
    """One call of an op on Keras tensors: ``run`` calls the op on its arguments (the Keras tensors bound to the
    model's values); named as Keras names an Operation, after the op (``cast``, ``cast_1``)."""

    is_operation = True

    def __init__(self, interp, fn, own_interp: bool):
        self.prefix = fn.__name__.rstrip("_")
        super().__init__(interp)
        self.fn, self.own_interp = fn, own_interp
        self.built = True

    def run(self, interp, args, kwargs):
        return self.fn(self.interp, *args, **kwargs) if self.own_interp else self.fn(*args, **kwargs)

    def symbolic(self, args: list, kwargs: dict):
        arguments = {"args": args, "kwargs": kwargs}
        inputs = [t for t in _leaves([args, kwargs]) if isinstance(t, KerasTensor)]
        small, large = (self.run(self.interp, **_bind(arguments, lambda t, n=n: _probe(t, n))) for n in (1, 2))
        many = isinstance(small, (list, tuple))
        outs = tuple(KerasTensor(tuple(a if a == b else None for a, b in zip(s.shape, g.shape)), s.dtype, self,
                                 inputs)
                     for s, g in zip(small if many else [small], large if many else [large]))
        for i, o in enumerate(outs):
            o.arguments = arguments
            if many:
                o.index, o.siblings = i, outs
        self.symbolic = (inputs, outs if many else outs[0])
        return list(outs) if isinstance(small, list) else outs if many else outs[0]
