"""Keras 3's ``layer.stateless_call(trainable_variables, non_trainable_variables, *args, **kwargs)``: the layer's
(or model's) call with the values given standing in for its variables (Keras's StatelessScope: a tape that
watches a value given sees the call's reads of its variable as reads of it), giving the outputs and the new
values of its non-trainable variables (a BatchNormalization's moving statistics, a Dropout's seed state) while
its own variables keep theirs; and a metric's ``stateless_update_state``, ``stateless_result`` and
``stateless_reset_state`` likewise."""
from __future__ import annotations

from tapecli import ops
from tapecli.errors import ShapeError, TdfTypeError, TdfValueError
from tapecli.runtime.tape import type_word
from tapecli.runtime.values import Tensor, Variable, dtype_name


def stateless_call(layer, interp, node, trainable_variables, non_trainable_variables, args, kwargs):
    """A library layer's or model's ``stateless_call``: its ``call`` with the values given."""
    return_losses = kwargs.pop("return_losses", False)
    (outputs, losses), new = stateless_values(
        layer.python_class_name(), layer.built, layer.trainable_weights, layer.non_trainable_variables(),
        trainable_variables, non_trainable_variables,
        lambda: (layer.call(interp, list(args), kwargs, node), layer.regularization_losses() if return_losses else None))
    return (outputs, new, losses) if return_losses else (outputs, new)


def stateless_values(class_name: str, built: bool, trainable: list, non_trainable: list, trainable_values,
                     non_trainable_values, action):
    """``action()`` (a layer's call) with the values given standing in for the layer's variables, checked as
    Keras checks them, and the new values of its non-trainable variables."""
    if not built:
        raise TdfValueError(f"To call stateless_call, {class_name} must be built (i.e. its variables must have been "
                            "already created). You can build it by calling it on some data.")
    _check(trainable_values, trainable, "trainable_variables", f"{class_name}().trainable_variables")
    _check(non_trainable_values, non_trainable, "non_trainable_variables", f"{class_name}().non_trainable_variables")
    found, new = standing_in(trainable + non_trainable, [*trainable_values, *non_trainable_values], action)
    return found, new[len(trainable):]


def metric_method(metric, name: str):
    """A metric's ``stateless_update_state(metric_variables, *args, **kwargs)`` (the new values of its
    variables), ``stateless_result(metric_variables)`` or ``stateless_reset_state()`` (its variables' values
    after a reset), its own variables kept as they are; None for any other name."""
    variables, owner = metric.keras_variables(), f"{metric.python_class_name()}().variables"
    if name == "stateless_update_state":
        def update(metric_variables, *args, **kwargs):
            _check(metric_variables, variables, "metric_variables", owner)
            return standing_in(variables, metric_variables, lambda: metric.update_state(*args, **kwargs))[1]
        return update
    if name == "stateless_result":
        def result(metric_variables):
            _check(metric_variables, variables, "metric_variables", owner)
            return standing_in(variables, metric_variables, metric.result)[0]
        return result
    if name == "stateless_reset_state":
        return lambda: standing_in(variables, [v.read() for v in variables], metric.reset_state)[1]
    return None


def standing_in(variables: list, values: list, action):
    """``action()`` with ``values`` standing in for ``variables`` (Variable.stand_in), and the variables' values
    it leaves (those it did not assign: the values given), the variables then restored to their own."""
    mapping = [(v, _value_for(v, given)) for v, given in zip(variables, values)]
    held = [v.stand_in(value) for v, value in mapping]
    try:
        found = action()
        left = [v.read() for v in variables]
    finally:
        for (v, _), own in zip(mapping, held):
            v.restore(own)
    return found, [Tensor(value.value) if value.id == v.id else value for v, value in zip(variables, left)]


def _check(given, own: list, argument: str, what: str) -> None:
    """Keras's check of the values given for the variables ``own`` (``what``: the attribute that lists them)."""
    if not isinstance(given, (list, tuple)):
        raise TdfTypeError(f"Argument `{argument}` must be a list of tensors corresponding 1:1 to {what}, got "
                           f"{type_word(given)}")
    if len(given) != len(own):
        raise TdfValueError(f"Argument `{argument}` must be a list of tensors corresponding 1:1 to {what}. Received "
                            f"list with length {len(given)}, but expected {len(own)} variables.")


def _value_for(variable: Variable, given) -> Tensor:
    """The tensor standing in for ``variable``: the value given (a variable's, read), of its shape and dtype."""
    value = given.read() if isinstance(given, Variable) else ops.to_tensor(given)
    if value.shape != variable.shape:
        raise ShapeError(f"a stateless call: the value for {variable.name} has shape {list(value.shape)}, the "
                         f"variable {list(variable.shape)}")
    if value.dtype != variable.dtype:
        raise TdfTypeError(f"a stateless call: the value for {variable.name} is {dtype_name(value.dtype)}, the "
                           f"variable {dtype_name(variable.dtype)}")
    return value
