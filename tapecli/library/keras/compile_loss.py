"""Keras 3's ``CompileLoss`` (keras/src/trainers/compile_utils.py): the loss of ``compile(loss=...,
loss_weights=...)``, built on its first call from the structure of the predictions, as Keras builds it on the
first batch. A model's outputs are one tensor, a list (a functional model's, or the list or tuple a subclass's
``call`` returns) or a dict (a subclass's). The loss is one for every output, a list by position (``None`` for
an output without one; a dict of outputs takes it in sorted key order) or a dict (by the names of a functional
model's outputs, which it must name every one of, or by the keys of the returned dict). ``loss_weights`` has
the loss's structure, or is flat with an entry per entry of it (Keras's tree.flatten: a dict's by sorted key).
The compiled loss is the sum of each output's loss times its weight. With more than one loss, each output's
unweighted loss is also tracked by a ``Mean`` named ``"<name>_loss"``: the functional model's output name, the
returned dict's key, else the loss's own name (the string given, a loss object's ``name``, a function's
``__name__``), in the order of the losses."""
from __future__ import annotations

import numpy as np

from tapecli import ops
from tapecli.errors import TdfTypeError, TdfValueError
from tapecli.interpreter.printing import python_str
from tapecli.library.keras import metrics as metrics_mod
from tapecli.library.keras.common import layer_name, num, tensor
from tapecli.runtime.values import Tensor


def output_names(model) -> list | None:
    """The names of a functional model's outputs when it has several (None otherwise)."""
    return functional_output_names(model) if getattr(model, "many_out", False) else None


def functional_output_names(model) -> list | None:
    """The names of a functional model's outputs, however many (Keras's output_names, by which its CompileLoss maps a
    dict of losses); None for another model."""
    if not hasattr(model, "many_out"):
        return None
    return getattr(model, "output_keys", None) or [layer_name(t.layer or t.input_layer) for t in model.outputs]


def checked_weights(loss_weights):
    """compile's check of ``loss_weights`` (Keras's CompileLoss.__init__): a float, or a list, tuple or dict (the
    interpreter's list of numbers, a tensor of one axis, as that list); Keras checks only a true value (0 passes)."""
    if isinstance(loss_weights, Tensor) and loss_weights.ndim == 1:
        return [float(v) for v in loss_weights.value]
    number = isinstance(loss_weights, Tensor) and loss_weights.ndim == 0
    if loss_weights is None or isinstance(loss_weights, (list, tuple, dict)) or \
            number and (loss_weights.dtype.kind == "f" or not loss_weights.value):
        return loss_weights
    from tapecli.library.python import python_class
    raise TdfValueError("Expected `loss_weights` argument to be a float (single output case) or a list, tuple, or "
                        f"dict (multiple output case). Received instead: loss_weights={python_str(loss_weights)} of "
                        f"type <class '{python_class(loss_weights)}'>")


def _loss_name(given) -> str:
    """Keras's get_loss's name of a loss: the string given, a loss object's name, a function's ``__name__``."""
    from tapecli.library.keras.compile_metrics import function_name
    if isinstance(given, str):
        return given
    name = getattr(given, "keras_name", None) or getattr(given, "name", None)
    return name if isinstance(name, str) else function_name(given) or "loss"


def _nested(value) -> bool:
    return isinstance(value, (list, tuple, dict))


def _flat(value) -> list:
    """Keras's tree.flatten of one level: a dict's values by sorted key."""
    if isinstance(value, dict):
        return [value[k] for k in sorted(value, key=str)]
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _packed(like, flat: list):
    """Keras's tree.pack_sequence_as of one level: ``flat`` in the structure of ``like``."""
    if isinstance(like, dict):
        return dict(zip(sorted(like, key=str), flat))
    return list(flat) if _nested(like) else flat[0]


def _same_structure(a, b) -> bool:
    if isinstance(a, dict) or isinstance(b, dict):
        return isinstance(a, dict) and isinstance(b, dict) and set(a) == set(b)
    return _nested(a) == _nested(b) and (not _nested(a) or len(a) == len(b))


def _weighted(loss, weights):
    """The weights in the structure of the loss (Keras's CompileLoss.build)."""
    if weights is None:
        return _packed(loss, [None] * len(_flat(loss)))
    if _same_structure(loss, weights):
        return weights
    if len(_flat(loss)) != len(_flat(weights)):
        raise TdfValueError(f"`loss_weights` must match the number of losses, got {len(_flat(loss))} losses and "
                            f"{len(_flat(weights))} weights.")
    return _packed(loss, _flat(weights))


class CompileLoss:
    """The compiled loss. ``flat`` (built by the first call): (output key, loss, weight or None, name) per loss,
    the key an output's position, a returned dict's key, or None for a model of one output."""

    def __init__(self, make_loss, loss, loss_weights, names):
        self.make_loss, self.given, self.names = make_loss, loss, names
        self.given_weights = checked_weights(loss_weights)
        self.flat: list | None = None
        self.trackers: list = []

    def build(self, y_pred):
        loss, weights = self.given, self.given_weights
        if self.names and isinstance(loss, dict) and not isinstance(y_pred, dict):
            if set(loss) != set(self.names):
                raise TdfValueError(f"Expected keys {self.names} in loss dict, but found loss.keys()={list(loss)}")
            loss = [loss[name] for name in self.names]
            if isinstance(weights, dict):
                weights = [weights.get(name) for name in self.names]
        weights = _weighted(loss, weights)
        if not _nested(loss):           # (one loss for every output)
            keys = list(y_pred) if isinstance(y_pred, dict) else list(range(len(y_pred))) \
                if isinstance(y_pred, list) else [None]
            entries = [(key, loss, weights) for key in keys]
        elif isinstance(y_pred, dict):
            if not isinstance(loss, dict):          # (a list in the outputs' sorted order, taken in theirs)
                if len(loss) != len(y_pred):
                    raise TdfValueError(f"compile: loss has {len(loss)} entries for a model of {len(y_pred)} "
                                        f"outputs {sorted(y_pred, key=str)}")
                loss, weights = _packed(y_pred, loss), _packed(y_pred, weights)
                loss, weights = ({k: d[k] for k in y_pred} for d in (loss, weights))
            for key in loss:
                if key not in y_pred:
                    raise TdfValueError(f"The path: ({key!r},) in the `loss` argument, can't be found in the "
                                        "model's output (`y_pred`).")
            entries = [(key, loss[key], weights[key]) for key in loss]
        elif isinstance(loss, dict):
            raise TdfTypeError("compile: a dict of losses names the outputs of a functional model or the keys of the "
                               "dict a model returns; this model's call returns no dict: give a list of losses")
        else:
            count = len(y_pred) if isinstance(y_pred, list) else 1
            if len(loss) != count:
                raise TdfValueError(f"compile: loss has {len(loss)} entries for a model of {count} outputs"
                                    + (f" {self.names}" if self.names else ""))
            keys = list(range(count)) if isinstance(y_pred, list) else [None]
            entries = list(zip(keys, loss, weights))
        self.flat = [(key, self.make_loss(given), None if weight is None else num(weight, "a loss weight"),
                      self._name(key, given)) for key, given, weight in entries if given is not None]
        self.trackers = [metrics_mod.Mean(name=f"{name}_loss") for _, _, _, name in self.flat] \
            if len(self.flat) > 1 else []

    def _name(self, key, given) -> str:
        if isinstance(key, str):
            return key
        if self.names and isinstance(key, int):
            return self.names[key]
        return _loss_name(given)

    def targets(self, y, count: int) -> list:
        """y as one entry per output of a list of ``count``: a dict by output name, a list by position (or, as
        long as the losses, for the outputs that have one)."""
        if isinstance(y, dict) and self.names:
            return [y.get(name) for name in self.names]
        ys = y if isinstance(y, list) else [y]
        if len(ys) == count or self.flat is None:
            return ys
        if len(ys) == len(self.flat):
            out = [None] * count
            for (i, _, _, _), value in zip(self.flat, ys):
                out[i] = value
            return out
        raise TdfValueError(f"y has {len(ys)} entries for a model of {count} outputs"
                            + (f" {self.names}" if self.names else ""))

    def _aligned(self, y, y_pred, what="labels (`y_true`)"):
        """The targets (or sample weights) in the structure of the predictions (Keras's CompileLoss.call)."""
        if isinstance(y_pred, list):
            return self.targets(y, len(y_pred))
        if isinstance(y_pred, dict):
            if isinstance(y, dict):
                missing = [key for key, _, _, _ in self.flat if key not in y]
                if missing:
                    raise TdfValueError(f"The path: ({missing[0]!r},) in the `loss` argument, can't be found in the "
                                        f"{what}.")
                return y
            return _packed(y_pred, _flat(y))
        return y[0] if isinstance(y, list) and len(y) == 1 else y

    def call(self, interp, args, kwargs, node):
        y, y_pred = args
        sample_weight = kwargs.get("sample_weight")
        if self.flat is None:
            self.build(y_pred)
        y = self._aligned(y, y_pred)
        weights = self._aligned(sample_weight, y_pred, "sample weights") if _nested(sample_weight) else None
        total = None
        for n, (key, loss, weight, _) in enumerate(self.flat):
            # (an output's own sample weights where they are given by output, else the same for every output)
            given = sample_weight if weights is None else weights if key is None else weights[key]
            value = loss.call(interp, [y if key is None else y[key], y_pred if key is None else y_pred[key]],
                              {} if given is None else {"sample_weight": given}, node)
            if self.trackers:   # each output's loss, unweighted (each batch alike: TF's traced step has no batch size)
                self.trackers[n].add(np.asarray(tensor(value).value, np.float32), Tensor(np.float32(1.0)))
            if weight is not None:
                value = ops.mul(value, Tensor(np.float32(weight)))
            total = value if total is None else ops.add(total, value)
        return total
