"""``keras.losses.get``, ``metrics.get``, ``optimizers.get``, ``initializers.get``, ``regularizers.get`` and
``constraints.get``: an object from its name (as Keras resolves it), the object itself, or None."""
from __future__ import annotations

from tapecli.errors import TdfTypeError, TdfValueError
from tapecli.library.keras import (confusion, initializers, iou_metrics, losses, metrics, mixed_precision, optimizers,
                                   penalties)
from tapecli.library.keras.common import snake_case


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
    functions = {**losses.FUNCTIONS, **losses.QUALIFIED_FUNCTIONS, **losses.KERAS3_FUNCTIONS}
    classes = {**{n: losses.make(n) for n in losses.CLASS_NAMES + losses.QUALIFIED_CLASS_NAMES},
               **losses.KERAS3_CLASSES}
    if isinstance(identifier, str) and identifier in classes:
        return classes[identifier]()
    return _config("loss", identifier, classes) or _named("loss", identifier, functions, lambda fn: fn)


def metric_classes() -> dict:
    """Keras's metrics ALL_OBJECTS_DICT, of the classes tapecli has: each by its name, its snake-case name
    ("AUC", "auc", "log_cosh_error") and the short names Keras adds ("mse", "MSE", "bce", ...)."""
    classes = metrics.METRICS + metrics.LOSS_METRICS + confusion.METRICS + metrics.SCORE_METRICS + iou_metrics.METRICS
    table = {cls.__name__: cls for cls in classes}
    table.update({snake_case(cls.__name__): cls for cls in classes})
    for short, name in {"bce": "BinaryCrossentropy", "mse": "MeanSquaredError", "mae": "MeanAbsoluteError",
                        "mape": "MeanAbsolutePercentageError", "msle": "MeanSquaredLogarithmicError"}.items():
        table[short] = table[short.upper()] = table[name]
    return table


def metric(identifier):
    """A metric object by its class name ("AUC") or its snake-case name ("mae", "binary_accuracy")."""
    table = metric_classes()
    return _config("metric", identifier, {cls.__name__: cls for cls in table.values()}) or \
        _named("metric", identifier, table, lambda cls: cls())


def optimizer_of(interp, value):
    """An optimizer from its name ("adam", "SGD"), its serialized config (``{"class_name": "SGD", "config":
    {...}}``: its class's from_config, the class name read as Keras reads it, in any case) or itself."""
    if isinstance(value, dict):
        by_name = {cls.prefix.lower(): cls for cls in optimizers.OPTIMIZERS}
        name, config = value.get("class_name"), value.get("config", {})
        if not isinstance(name, str) or name.lower() not in by_name or not isinstance(config, dict):
            raise TdfValueError(f"Could not interpret optimizer identifier: {value}")
        from tapecli.interpreter.registry import BUILTINS     # (the classes' from_config: keras_names registers them)
        return BUILTINS[by_name[name.lower()].__name__].class_methods["from_config"](interp, config)
    if isinstance(value, str):
        by_name = {cls.prefix.lower(): cls for cls in optimizers.OPTIMIZERS}
        if value.lower() not in by_name:
            raise TdfValueError(f"Could not interpret optimizer identifier: {value}",
                                hint="use one of " + ", ".join(f'"{n}"' for n in by_name) + " or an optimizer")
        return by_name[value.lower()](interp)
    if not isinstance(value, (optimizers.Optimizer, mixed_precision.LossScaleOptimizer)):
        raise TdfTypeError("compile(optimizer=...) takes an optimizer or its name")
    return value


def optimizer(interp, identifier):
    return None if identifier is None else optimizer_of(interp, identifier)


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
