"""Keras 3's ``CompileLoss`` for a model of several outputs (keras/src/trainers/compile_utils.py): one loss
per output, given as a list (by position, ``None`` for an output without one), a dict (by the outputs'
names: the names of the layers that made them) or one loss for every output; ``loss_weights`` the same way.
The compiled loss is the sum of each output's loss times its weight; with more than one loss, each output's
unweighted loss is also tracked by a ``Mean`` named ``"<output>_loss"``, updated with the batch size as its
weight, which fit's logs report, in the order of the outputs (a dict of losses names each output)."""
from __future__ import annotations

import numpy as np

from tapecli import ops
from tapecli.errors import TdfTypeError, TdfValueError
from tapecli.library.keras import metrics as metrics_mod
from tapecli.library.keras.common import num, tensor
from tapecli.runtime.values import Tensor


def output_names(model) -> list | None:
    """The names of a functional model's outputs when it has several (None otherwise)."""
    if not getattr(model, "many_out", False):
        return None
    return getattr(model, "output_keys", None) or [t.layer.given or t.layer.auto for t in model.outputs]


def _per_output(value, names, what):
    """A list with one entry per output from a list, a dict by name, or one value for all."""
    if isinstance(value, Tensor) and value.ndim == 1:       # loss_weights=[1.0, 0.2]: a list of numbers
        value = [float(v) for v in value.value]
    if isinstance(value, dict):
        if what == "loss" and set(value) != set(names):
            raise TdfValueError(f"Expected keys {names} in loss dict, but found loss.keys()={list(value)}")
        unknown = sorted(set(value) - set(names), key=str)
        if unknown:
            raise TdfValueError(f"compile: {what} names {unknown}, which are not outputs of the model: {names}")
        return [value.get(name) for name in names]
    if isinstance(value, (list, tuple)):
        if len(value) != len(names):
            raise TdfValueError(f"compile: {what} has {len(value)} entries for a model of {len(names)} outputs "
                                f"{names}")
        return list(value)
    return [value] * len(names)


class CompileLoss:
    def __init__(self, make_loss, loss, loss_weights, names):
        losses = _per_output(loss, names, "loss")
        weights = _per_output(loss_weights, names, "loss_weights") if loss_weights is not None else [None] * len(names)
        self.names = names
        self.flat = [(i, make_loss(losses[i]), None if weights[i] is None else num(weights[i], "a loss weight"))
                     for i in range(len(names)) if losses[i] is not None]
        self.trackers = [metrics_mod.Mean(name=f"{names[i]}_loss") for i, _, _ in self.flat] \
            if len(self.flat) > 1 else []

    def targets(self, y) -> list:
        """y as one entry per output: a dict by output name, a list by position (or, as long as the losses,
        for the outputs that have one)."""
        if isinstance(y, dict):
            return [y.get(name) for name in self.names]
        ys = y if isinstance(y, list) else [y]
        if len(ys) == len(self.names):
            return ys
        if len(ys) == len(self.flat):
            out = [None] * len(self.names)
            for (i, _, _), value in zip(self.flat, ys):
                out[i] = value
            return out
        raise TdfValueError(f"y has {len(ys)} entries for a model of {len(self.names)} outputs {self.names}")

    def call(self, interp, args, kwargs, node):
        y, y_pred = args
        sample_weight = kwargs.get("sample_weight")
        if not isinstance(y_pred, list):
            raise TdfTypeError("a loss for each output needs a model of several outputs")
        ys = self.targets(y)
        total = None
        for n, (i, loss, weight) in enumerate(self.flat):
            value = loss.call(interp, [ys[i], y_pred[i]], {} if sample_weight is None else
                              {"sample_weight": sample_weight}, node)
            if self.trackers:             # each output's loss, unweighted, by batch size
                self.trackers[n].add(np.asarray(tensor(value).value, np.float32),
                                     Tensor(np.float32(1.0)))
            if weight is not None:
                value = ops.mul(value, Tensor(np.float32(weight)))
            total = value if total is None else ops.add(total, value)
        return total
