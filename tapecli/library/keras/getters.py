"""``keras.losses.get``, ``metrics.get``, ``optimizers.get``, ``initializers.get``, ``regularizers.get`` and
``constraints.get``: an object from its name (as Keras resolves it), the object itself, or None."""
from __future__ import annotations

from tapecli.errors import TdfTypeError, TdfValueError
from tapecli.library.keras import (confusion, initializers, losses, losses_more, metrics, metrics_more, penalties,
                                   training)


def _named(kind, identifier, table, make):
    if identifier is None or not isinstance(identifier, str):
        return identifier
    if identifier not in table:
        raise TdfValueError(f"Could not interpret {kind} identifier: {identifier}")
    return make(table[identifier])


def _config(kind, identifier, classes: dict):
    """A serialized object, ``{"class_name": ..., "config": {...}}``: its class made with its config, as Keras's
    ``get`` deserializes it; None for any other identifier."""
    if not isinstance(identifier, dict):
        return None
    name, config = identifier.get("class_name"), identifier.get("config", {})
    if name not in classes or not isinstance(config, dict):
        raise TdfValueError(f"Could not interpret {kind} identifier: {identifier}")
    try:
        return classes[name](**config)
    except TypeError as e:
        raise TdfTypeError(f"{name}(): {e}") from None


def loss(identifier):
    """A loss function by its name ("mse", "dice"), a loss object by its class name ("Huber")."""
    functions = {**losses.FUNCTIONS, **losses.QUALIFIED_FUNCTIONS, **losses_more.FUNCTIONS}
    classes = {**{n: losses.make(n) for n in losses.CLASS_NAMES + losses.QUALIFIED_CLASS_NAMES},
               **losses_more.CLASSES}
    if isinstance(identifier, str) and identifier in classes:
        return classes[identifier]()
    return _config("loss", identifier, classes) or _named("loss", identifier, functions, lambda fn: fn)


_METRIC_ALIASES = {"mse": "mean_squared_error", "mae": "mean_absolute_error", "mape": "mean_absolute_percentage_error",
                   "msle": "mean_squared_logarithmic_error", "acc": "accuracy"}


def metric(identifier):
    """A metric object by its class name ("AUC") or its function's name ("mae", "binary_accuracy")."""
    classes = metrics.METRICS + metrics.LOSS_METRICS + confusion.METRICS + metrics_more.METRICS
    table = {cls.__name__: cls for cls in classes}
    table.update({cls.default_name: cls for cls in classes if isinstance(getattr(cls, "default_name", None), str)})
    table.update({alias: table[name] for alias, name in _METRIC_ALIASES.items()})
    return _config("metric", identifier, {cls.__name__: cls for cls in classes}) or \
        _named("metric", identifier, table, lambda cls: cls())


def optimizer(interp, identifier):
    return None if identifier is None else training.optimizer_of(interp, identifier)


def initializer(identifier):
    if identifier is None:
        return None
    table = {**initializers.BY_NAME, **{cls.keras_name: cls for cls in initializers.CLASSES}}
    if isinstance(identifier, str) and identifier in table:
        return initializers.get(identifier) if identifier in initializers.BY_NAME else table[identifier]()
    return initializers.get(identifier)


def regularizer(identifier):
    table = {k: v for k, v in penalties.REGULARIZERS.items() if k != "l1_l2"}     # Keras refuses "l1_l2"
    return _named("regularizer", identifier, table, lambda cls: cls())


def constraint(identifier):
    return _named("constraint", identifier, penalties.CONSTRAINTS, lambda cls: cls())
