"""A model's JSON, as Keras 3 writes and reads it: ``model.to_json()`` is json.dumps of the model serialized as
serialize_keras_object serializes it (its class, config, build config and compile config), and
``keras.models.model_from_json`` makes the model again from that text: its graph from its config (a program's
layers by their registered classes or ``custom_objects``), compiled as its compile config says."""
from __future__ import annotations

import json

import numpy as np

from tapecli.errors import TdfTypeError, TdfValueError
from tapecli.interpreter.registry import BUILTINS
from tapecli.library.keras.configs import serialized
from tapecli.library.keras.optimizers import plain
from tapecli.runtime.tape import type_word
from tapecli.runtime.values import PythonBool, Tensor, literal_array

# serialize_keras_object's entry of a model's class: Functional is no public class of Keras (its module's, under its
# registered name), Sequential is keras.Sequential
_CLASSES = {"Functional": ("keras.src.models.functional", "Functional"), "Sequential": ("keras", None)}
# the builtin whose from_config makes a model of the class a JSON names
_MADE_BY = {"Functional": "Model", "Sequential": "Sequential"}


def _by_name(value) -> bool:
    """Whether a loss or metrics argument names its losses and metrics only (strings, in lists or dicts)."""
    if isinstance(value, (list, tuple)):
        return all(_by_name(v) for v in value)
    if isinstance(value, dict):
        return all(_by_name(v) for v in value.values())
    return value is None or isinstance(value, str)


def compile_config(model) -> dict:
    """Keras's ``model.get_compile_config()``: compile's arguments, the optimizer serialized; {} before compile."""
    if model.trainer is None:
        return {}
    out = dict(model.trainer.given)
    out["optimizer"] = serialized(out["optimizer"], "keras.optimizers")
    for key in ("loss", "metrics", "weighted_metrics"):
        if not _by_name(out[key]):
            raise TdfValueError(f"tapecli writes the compile config of a model whose {key} is given by name, "
                                f"not {type_word(out[key])}")
    out["loss_weights"] = plain(out["loss_weights"])
    return out


def serialized_model(model) -> dict:
    """keras.saving.serialize_keras_object of a Sequential or functional model."""
    kind = type(model).__name__
    if kind not in _CLASSES:
        raise TdfValueError(f"tapecli writes the JSON of a Sequential or functional model, not of a {kind}")
    module, registered = _CLASSES[kind]
    config = model.get_config()
    out = {"module": module, "class_name": kind, "config": config, "registered_name": registered}
    if kind == "Functional":            # (Keras's functional model is built without a build shape)
        out["build_config"] = {"input_shape": None}
    elif "build_input_shape" in config:
        out["build_config"] = {"input_shape": config["build_input_shape"]}
    out["compile_config"] = compile_config(model)
    return out


def _json_data(value):
    """A config as the Python data json.dumps writes: tuples as lists, numbers and bools as Python's."""
    if isinstance(value, dict):
        return {k: _json_data(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_data(v) for v in value]
    if value is None or isinstance(value, (Tensor, str, bool, int, float)):
        return plain(value)
    raise TdfTypeError(f"Object of type {type_word(value)} is not JSON serializable")


def to_json(model, indent=None, sort_keys=False, separators=None) -> str:
    """``model.to_json(**kwargs)``: json.dumps of the serialized model (with json.dumps's options)."""
    return json.dumps(_json_data(serialized_model(model)), indent=plain(indent), sort_keys=bool(plain(sort_keys)),
                      separators=None if separators is None else tuple(separators))


def _library_data(value):
    """JSON data as the program's values: numbers and bools as Python's, as the interpreter holds them."""
    if isinstance(value, dict):
        return {k: _library_data(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_library_data(v) for v in value]
    if isinstance(value, bool):
        return PythonBool(np.array(value))
    if isinstance(value, (int, float)):
        return Tensor(literal_array(value), weak=True)
    return value


def compile_like(interp, made, model) -> None:
    """Keras's ``made.compile_from_config(model.get_compile_config())`` (clone_model's): compiled as ``model`` is,
    with a new optimizer of its optimizer's config; metrics given by name are made anew, as Keras deserializes
    them (a metric object given would share its state: refused)."""
    if model.trainer is None:
        return
    given = dict(model.trainer.given)
    for key in ("metrics", "weighted_metrics"):
        if not _by_name(given[key]):
            raise TdfValueError(f"tapecli compiles a clone of a compiled model whose {key} are given by name, not "
                                f"{type_word(given[key])}")
    given["optimizer"] = _optimizer(interp, serialized(given["optimizer"], "keras.optimizers"))
    made.methods()["compile"](**given)


def _optimizer(interp, entry):
    """The optimizer of a compile config's entry: Keras's class of its name, made with its config."""
    made = BUILTINS.get(entry.get("class_name")) if isinstance(entry, dict) else None
    if made is None or entry.get("module") != "keras.optimizers":
        raise TdfValueError(f"Could not interpret optimizer identifier: {entry!r}")
    return made.class_methods["from_config"](interp, entry["config"])


def model_from_json(interp, json_string, custom_objects=None):
    """keras.models.model_from_json: the model a JSON text serializes, compiled where its compile config says."""
    try:
        data = _library_data(json.loads(json_string))
    except (TypeError, ValueError) as e:
        raise TdfValueError(f"model_from_json takes a model's JSON text: {e}") from None
    kind = data.get("class_name") if isinstance(data, dict) else None
    if kind not in _MADE_BY:
        raise TdfValueError(f"Could not locate class '{kind}'",
                            hint="tapecli reads the JSON of a Sequential or functional model")
    model = BUILTINS[_MADE_BY[kind]].class_methods["from_config"](interp, data["config"], custom_objects)
    given = data.get("compile_config")
    if given:
        model.methods()["compile"](**{**given, "optimizer": _optimizer(interp, given["optimizer"])})
    return model
