"""Keras 3's config API of the built-in layers: ``get_config``, ``from_config`` and keras.layers.serialize /
deserialize. A layer's config is written from the arguments its constructor was given (``given_arguments``, kept
by keras_names), in Keras 3.15's keys, order and forms, so that the layer made again from it is the same layer."""
from __future__ import annotations

import functools
import re

import numpy as np

from tapecli.errors import TdfTypeError, TdfValueError
from tapecli.interpreter.classes import KERAS_MODEL, LAYER, Instance
from tapecli.interpreter.objects import Function
from tapecli.interpreter.registry import BUILTINS
from tapecli.library.keras import activations, initializers, penalties, saving
from tapecli.library.keras.common import float_dtype, written
from tapecli.library.keras.optimizers import plain
from tapecli.runtime.tape import type_word
from tapecli.runtime.values import PythonTuple, Tensor, dtype_name

_CONV = ("filters kernel_size strides padding data_format dilation_rate groups activation use_bias kernel_initializer "
         "bias_initializer kernel_regularizer bias_regularizer activity_regularizer kernel_constraint bias_constraint")
_CONV_TRANSPOSE = ("filters kernel_size strides padding output_padding data_format dilation_rate activation use_bias "
                   "kernel_initializer bias_initializer kernel_regularizer bias_regularizer activity_regularizer "
                   "kernel_constraint bias_constraint")
_DEPTHWISE = ("depth_multiplier kernel_size strides padding data_format dilation_rate activation use_bias "
              "depthwise_initializer bias_initializer depthwise_regularizer bias_regularizer activity_regularizer "
              "depthwise_constraint bias_constraint")
_SEPARABLE = ("depth_multiplier filters kernel_size strides padding data_format dilation_rate activation use_bias "
              "depthwise_initializer pointwise_initializer bias_initializer depthwise_regularizer "
              "pointwise_regularizer bias_regularizer activity_regularizer depthwise_constraint pointwise_constraint "
              "bias_constraint")
_POOL = "pool_size padding strides data_format"
_GLOBAL_POOL = "data_format keepdims"
_RNN = ("return_sequences return_state go_backwards stateful unroll zero_output_for_mask units activation {gate}"
        "use_bias kernel_initializer recurrent_initializer bias_initializer {forget}kernel_regularizer "
        "recurrent_regularizer bias_regularizer activity_regularizer kernel_constraint recurrent_constraint "
        "bias_constraint dropout recurrent_dropout {last}")
_CONV_LSTM = ("return_sequences return_state go_backwards stateful unroll zero_output_for_mask filters kernel_size strides "
              "padding data_format dilation_rate activation recurrent_activation use_bias kernel_initializer "
              "recurrent_initializer bias_initializer unit_forget_bias kernel_regularizer recurrent_regularizer "
              "bias_regularizer activity_regularizer kernel_constraint recurrent_constraint bias_constraint dropout "
              "recurrent_dropout seed")
_CELL = ("units activation {gate}use_bias {forget}kernel_initializer recurrent_initializer bias_initializer "
         "kernel_regularizer recurrent_regularizer bias_regularizer kernel_constraint recurrent_constraint "
         "bias_constraint dropout recurrent_dropout {last}")
# Each layer's get_config keys after Layer's ``name trainable dtype``, in Keras 3.15's order (an entry with
# ``name`` lists them all: those layers write their own).
LAYER_KEYS = {
    "Dense": "units activation use_bias kernel_initializer bias_initializer kernel_regularizer bias_regularizer "
             "kernel_constraint bias_constraint quantization_config",
    "Activation": "activation", "Flatten": "data_format", "Dropout": "rate seed noise_shape",
    "Embedding": "input_dim output_dim embeddings_initializer embeddings_regularizer activity_regularizer "
                 "embeddings_constraint mask_zero quantization_config",
    "LayerNormalization": "axis epsilon center scale rms_scaling beta_initializer gamma_initializer beta_regularizer "
                          "gamma_regularizer beta_constraint gamma_constraint",
    "BatchNormalization": "axis momentum epsilon center scale beta_initializer gamma_initializer "
                          "moving_mean_initializer moving_variance_initializer beta_regularizer gamma_regularizer "
                          "beta_constraint gamma_constraint synchronized renorm renorm_clipping renorm_momentum",
    "SimpleRNN": _RNN.format(gate="", forget="", last=""),
    "LSTM": _RNN.format(gate="recurrent_activation ", forget="unit_forget_bias ", last="seed"),
    "GRU": _RNN.format(gate="recurrent_activation ", forget="", last="reset_after seed"),
    **dict.fromkeys(("Conv1D", "Conv2D", "Conv3D"), _CONV),
    **dict.fromkeys(("ConvLSTM1D", "ConvLSTM2D", "ConvLSTM3D"), _CONV_LSTM),
    **dict.fromkeys(("Conv1DTranspose", "Conv2DTranspose", "Conv3DTranspose"), _CONV_TRANSPOSE),
    **dict.fromkeys(("DepthwiseConv1D", "DepthwiseConv2D"), _DEPTHWISE),
    **dict.fromkeys(("SeparableConv1D", "SeparableConv2D"), _SEPARABLE),
    **dict.fromkeys(("MaxPooling1D", "MaxPooling2D", "MaxPooling3D", "AveragePooling1D", "AveragePooling2D",
                     "AveragePooling3D"), _POOL), "Concatenate": "axis", "Dot": "axes normalize",
    "Normalization": "axis invert mean variance",
    "PReLU": "alpha_initializer alpha_regularizer alpha_constraint shared_axes", "Rescaling": "scale offset",
    "UnitNormalization": "axis", "RMSNormalization": "axis epsilon",
    "ReLU": "max_value negative_slope threshold", "LeakyReLU": "negative_slope",
    "GroupNormalization": "groups axis epsilon center scale beta_initializer gamma_initializer beta_regularizer "
                          "gamma_regularizer beta_constraint gamma_constraint",
    "ELU": "name alpha trainable dtype", "Softmax": "axis", "Reshape": "target_shape", "Permute": "dims",
    "RepeatVector": "n", **dict.fromkeys(("GlobalAveragePooling1D", "GlobalAveragePooling2D", "GlobalAveragePooling3D",
                                          "GlobalMaxPooling1D", "GlobalMaxPooling2D", "GlobalMaxPooling3D"),
                                         _GLOBAL_POOL),
    **dict.fromkeys((f"Adaptive{kind}Pooling{rank}D" for kind in ("Average", "Max") for rank in (1, 2, 3)),
                    "output_size data_format"),
    "ZeroPadding1D": "padding data_format", "ZeroPadding2D": "padding data_format",
    "ZeroPadding3D": "padding data_format", "Cropping1D": "cropping", "Cropping2D": "cropping data_format",
    "Cropping3D": "cropping data_format", "UpSampling1D": "size", "UpSampling2D": "size data_format interpolation",
    "UpSampling3D": "size data_format", "GaussianNoise": "stddev seed", "GaussianDropout": "rate seed",
    "SpatialDropout1D": "rate seed name dtype", "SpatialDropout2D": "rate seed name dtype data_format",
    "SpatialDropout3D": "rate seed name dtype data_format", "CategoryEncoding": "num_tokens output_mode",
    "Discretization": "bin_boundaries num_bins epsilon output_mode sparse name dtype",
    "StringLookup": "invert max_tokens num_oov_indices oov_token mask_token output_mode sparse pad_to_max_tokens "
                    "idf_weights vocabulary vocabulary_size oov_method salt encoding",
    "IntegerLookup": "invert max_tokens num_oov_indices oov_token mask_token output_mode sparse pad_to_max_tokens "
                     "vocabulary_dtype idf_weights vocabulary vocabulary_size oov_method salt",
    "TextVectorization": "max_tokens standardize split ngrams output_mode output_sequence_length pad_to_max_tokens "
                         "sparse ragged vocabulary idf_weights encoding vocabulary_size",
    "Hashing": "num_bins salt mask_value output_mode sparse", "HashedCrossing": "num_bins output_mode sparse name dtype",
    "Resizing": "data_format height width interpolation crop_to_aspect_ratio pad_to_aspect_ratio fill_mode "
                "fill_value antialias", "CenterCrop": "data_format height width",
    "RandomFlip": "data_format seed mode", "RandomRotation": "data_format factor fill_mode fill_value interpolation seed",
    **dict.fromkeys(("RandomZoom", "RandomTranslation"), "data_format height_factor width_factor fill_mode interpolation "
                                                         "seed fill_value"),
    **dict.fromkeys(("RandomContrast", "RandomBrightness"), "data_format factor value_range seed"),
    "RandomCrop": "data_format height width seed", "ActivityRegularization": "l1 l2", "AlphaDropout": "rate seed",
    "EinsumDense": "output_shape equation activation bias_axes kernel_initializer bias_initializer kernel_regularizer "
                   "bias_regularizer activity_regularizer kernel_constraint bias_constraint quantization_config",
    "GroupedQueryAttention": "head_dim num_query_heads num_key_value_heads use_bias use_gate sliding_window dropout "
                             "kernel_initializer bias_initializer kernel_regularizer bias_regularizer "
                             "activity_regularizer kernel_constraint bias_constraint seed",
    "Attention": "use_scale score_mode dropout seed", "AdditiveAttention": "use_scale dropout seed",
    "MultiHeadAttention": "num_heads key_dim value_dim dropout use_bias use_gate output_shape attention_axes "
                          "sliding_window kernel_initializer bias_initializer kernel_regularizer bias_regularizer "
                          "activity_regularizer kernel_constraint bias_constraint seed",
    **dict.fromkeys(("Add", "Subtract", "Multiply", "Maximum", "Minimum", "Average", "Identity"), ""),
    "Masking": "mask_value",
    "SimpleRNNCell": _CELL.format(gate="", forget="", last="seed"),
    "LSTMCell": _CELL.format(gate="recurrent_activation ", forget="unit_forget_bias ", last="seed"),
    "GRUCell": _CELL.format(gate="recurrent_activation ", forget="", last="reset_after seed"),
    "RNN": "return_sequences return_state go_backwards stateful unroll zero_output_for_mask",
    "StackedRNNCells": "", "TimeDistributed": "", "SpectralNormalization": "", "Bidirectional": "merge_mode",
}
# The layers whose call's ``training`` has a default other than None: Keras records it in their nodes' kwargs
# (a functional model's config)
CALL_TRAINING = {**dict.fromkeys(("AdditiveAttention", "AlphaDropout", "Attention", "Dropout", "GRU", "GaussianDropout",
                                  "GaussianNoise", "LSTM", "RNN", "SimpleRNN", "SpatialDropout1D", "SpatialDropout2D",
                                  "SpatialDropout3D", "SpectralNormalization"), False),
                 **dict.fromkeys(("CenterCrop", "RandomCrop", "RandomFlip", "RandomRotation", "RandomTranslation",
                                  "RandomZoom", "RandomContrast", "RandomBrightness", "Resizing"), True)}
# What Keras's config says of the arguments a tapecli layer does not take (what tapecli's layers always do).
FIXED = {"quantization_config": None, "data_format": "channels_last", "dilation_rate": 1, "groups": 1,
         "rms_scaling": False, "synchronized": False, "renorm": False, "renorm_clipping": None,
         "renorm_momentum": 0.99, "stateful": False, "dropout": 0.0, "recurrent_dropout": 0.0, "seed": None, "noise_shape": None,
         "interpolation": "nearest", "keepdims": False, "sparse": False,
         "use_gate": False, "sliding_window": None}
# The config keys of which Keras's layer keeps no attribute of the same value (beside its initializers,
# regularizers, constraints and activations, which it keeps as objects): its config has them, its attributes not
_NOT_ATTRIBUTES = {**dict.fromkeys(("LSTM", "GRU", "ConvLSTM1D", "ConvLSTM2D", "ConvLSTM3D"), "seed"),
                   "Normalization": "mean variance", "EinsumDense": "output_shape",
                   **dict.fromkeys(("StringLookup", "IntegerLookup"), "vocabulary idf_weights vocabulary_size"),
                   "TextVectorization": LAYER_KEYS["TextVectorization"],
                   "MultiHeadAttention": "use_gate output_shape sliding_window"}
# the layers whose config writes their dtype by its name (Keras's SpatialDropout's own get_config)
_DTYPE_AS_NAME = ("SpatialDropout1D", "SpatialDropout2D", "SpatialDropout3D", "Discretization", "HashedCrossing")
# Keras's own name of an activation that has two (keras.activations.serialize)
_ACTIVATION_NAMES = {"swish": "silu", "hard_swish": "hard_silu"}
# the keys whose int stands for one size per spatial axis (Keras writes the tuple)
_PER_AXIS = ("kernel_size", "strides", "dilation_rate", "pool_size", "output_padding")


def dtype_policy(name: str | None = None) -> dict:
    """A layer's ``dtype`` entry: the DTypePolicy of ``name``, by default the float type it computes in."""
    return {"module": "keras", "class_name": "DTypePolicy", "config": {"name": name or dtype_name(float_dtype())},
            "registered_name": None}


def serialized(obj, module: str) -> dict:
    """keras.saving.serialize_keras_object of a built-in object with a get_config."""
    name = getattr(obj, "keras_name", None) or type(obj).__name__
    return {"module": module, "class_name": name, "config": obj.get_config(), "registered_name": None}


def _program_class(obj) -> str:
    """The class of a program's value by its name, ``function`` for a function: an interpreter's function or
    instance, or (where CPython runs the program) its value as the library calls it."""
    if isinstance(obj, Function):
        return "function"
    if isinstance(obj, Instance):
        return obj.cls.name
    if not hasattr(obj, "python_class"):
        raise TdfValueError(f"tapecli cannot write the config of {type_word(obj)}")
    return obj.python_class().rpartition(".")[2]


def program_serialized(obj, interp) -> dict:
    """keras.saving.serialize_keras_object of a program's function or object (its class the program's): a
    function by its registered name, an object by its class's get_config, under its class's registered name (a
    class of the program's module has none: Keras writes None)."""
    class_name = _program_class(obj)
    if class_name == "function":
        name = saving.registered_name(obj, obj.name)
        return {"module": "builtins", "class_name": "function", "config": name, "registered_name": "function"}
    config = interp.call_value(obj.get_attribute(interp, "get_config", None), [])
    if not isinstance(config, dict):
        raise TdfTypeError(f"The `get_config()` method of {class_name} should return a dict, got {type_word(config)}")
    return {"module": None, "class_name": class_name, "config": config,
            "registered_name": saving.registered_name(obj, class_name)}


def _penalty(value, module, interp):
    resolve = penalties.regularizer if module == "keras.regularizers" else penalties.constraint
    found = resolve(value, interp)
    if found is None:
        return None
    if isinstance(found, penalties.ProgramPenalty):
        return program_serialized(found.fn, found.interp)
    return serialized(found, module)


def _initializer(value, interp):
    found = initializers.described(value, interp)
    if isinstance(found, initializers.ProgramInitializer):
        return program_serialized(found.fn, found.interp)
    return serialized(found, "keras.initializers")


def _activation_name(value):
    if value is None:
        return "linear"
    if isinstance(value, str):
        return _ACTIVATION_NAMES.get(value, value)
    name = next((n for n, fn in activations.FUNCTIONS.items() if fn is value), None)
    if name is None:
        raise TdfValueError(f"tapecli cannot write the config of a program's activation ({type_word(value)})")
    return _ACTIVATION_NAMES.get(name, name)


def _rank(class_name) -> int:
    """How many spatial axes a layer of this class has (the number in Conv2D's name)."""
    found = re.search(r"(\d)D(Transpose)?$", class_name)
    return int(found.group(1)) if found else 1


def _tuple(value, count=1):
    """A tuple as the interpreter holds one: ``count`` times an int, or the items of a list."""
    return PythonTuple([value] * count if isinstance(value, int) else value)


def _python(value):
    """An argument as the Python value Keras keeps; a float32 scalar as the float the program wrote
    (common.written)."""
    if isinstance(value, Tensor) and not value.weak and value.dtype == np.float32 and value.ndim == 0:
        return written(value, "the argument")
    return plain(value)


def _form(class_name, key, value, interp=None):
    """An argument as Keras's config writes it: initializers, regularizers and constraints serialized, an
    activation by its name, per-axis sizes as tuples, numbers as Python's."""
    if key.endswith("_initializer"):
        return None if value is None else _initializer(value, interp)
    if key.endswith("_regularizer"):
        return _penalty(value, "keras.regularizers", interp)
    if key.endswith("_constraint"):
        return _penalty(value, "keras.constraints", interp)
    if key in ("activation", "recurrent_activation"):
        return _activation_name(value)
    value = _python(value)
    rank = _rank(class_name)
    if key == "data_format" and value is None:
        return "channels_last"          # (keras.config.image_data_format())
    if key in _PER_AXIS and value is not None or key == "size" and rank > 1:
        return _tuple(value, rank)
    if key in ("padding", "cropping") and not isinstance(value, str):      # (a pair per spatial axis)
        return _tuple(value, 2) if rank == 1 else _tuple([_tuple(v, 2) for v in _tuple(value, rank)])
    if key in ("target_shape", "dims") or key == "axis" and class_name == "Normalization":
        return _tuple([] if value is None else value)
    return value


@functools.cache
def attribute_keys(class_name: str) -> tuple:
    """The config keys of which Keras 3.15's layer keeps an attribute holding the config's value (layer.epsilon,
    layer.use_bias, layer.kernel_size): its arguments, as given or as it made them."""
    skipped = {"name", "trainable", "dtype", "activation", "recurrent_activation",
               *_NOT_ATTRIBUTES.get(class_name, "").split()}
    return tuple(key for key in LAYER_KEYS.get(class_name, "").split()
                 if key not in skipped and not key.endswith(("_initializer", "_regularizer", "_constraint")))


def config_entry(layer, key: str):
    """One argument's entry of the layer's config (``layer_config``'s)."""
    class_name = type(layer).__name__
    arguments = layer.given_arguments
    value = arguments[key] if key in arguments else FIXED.get(key)
    value = layer.config_values().get(key, value)
    if key == "strides" and value is None:          # (a pooling's: its pool_size)
        value = arguments["pool_size"]
    return _form(class_name, key, value, layer.interp)


def layer_config(layer) -> dict:
    """Keras 3.15's ``layer.get_config()``."""
    class_name = type(layer).__name__
    if getattr(layer, "given_arguments", None) is None or class_name not in LAYER_KEYS:
        raise TdfValueError(f"tapecli does not write the config of a {class_name} layer")
    keys = LAYER_KEYS[class_name].split()
    arguments = layer.given_arguments
    out = {} if "name" in keys else {"name": None, "trainable": None, "dtype": None}
    if "name" not in keys and arguments.get("activity_regularizer") is not None:
        out["activity_regularizer"] = None          # (Layer's, after its dtype, where the layer has one)
    for key in [*out, *keys]:
        out[key] = _base_entry(layer, key) if key in _BASE_KEYS else config_entry(layer, key)
    return out


_BASE_KEYS = ("name", "trainable", "dtype")


def base_config(layer) -> dict:
    """Keras's Layer.get_config: its name, trainable and dtype (a layer's own config adds its keys after them)."""
    return {key: _base_entry(layer, key) for key in _BASE_KEYS}


def _base_entry(layer, key: str):
    if key == "name":
        return keras_name(layer)
    if key == "trainable":
        return layer.trainable
    # the dtype of a layer that has its own, Hashing's int64, its policy's, or floatx
    policy = getattr(layer, "policy", None)
    own = getattr(layer, "out_dtype", None)
    name = dtype_name(own) if own is not None else policy.name if policy is not None else dtype_name(float_dtype())
    return name if type(layer).__name__ in _DTYPE_AS_NAME else dtype_policy(name)


def keras_name(layer) -> str:
    """The name Keras gives a layer: its given one, else its automatic one (not a label tapecli binds)."""
    return getattr(layer, "given", None) or getattr(layer, "auto", None) or layer.display()


def constructor_arguments(cls, parameters, config) -> dict:
    """``cls.from_config(config)``: the arguments of tapecli's constructor (whose parameters are ``parameters``)
    from a Keras config. An entry the constructor does not take must say what tapecli's layer does (Keras's
    default); the dtype must be the float type layers compute in."""
    out = {}
    for key, value in config.items():
        if key == "dtype" and "dtype" in parameters:        # (a layer of its own dtype: Hashing's)
            out[key] = value
        elif key == "dtype":
            name = value.get("config", {}).get("name") if isinstance(value, dict) else value
            if name not in (None, dtype_name(float_dtype())):
                raise TdfValueError(f"{cls.__name__}.from_config: tapecli's layers compute in the float type "
                                    f"{dtype_name(float_dtype())}, the config says {name!r}")
        elif key in parameters:
            out[key] = value
        elif plain(value) != _form(cls.__name__, key, FIXED.get(key)):
            raise TdfValueError(f"{cls.__name__}.from_config: tapecli's {cls.__name__} takes no {key} (the config "
                                f"says {key}={plain(value)!r})")
    return out


def serialize_layer(layer) -> dict:
    """keras.layers.serialize: the layer's class and config (a program's layer: its class's get_config)."""
    program = getattr(layer, "program_object", None)
    if program is not None:
        return program_serialized(program, layer.interp)
    if LAYER not in getattr(layer, "keras_bases", ()):
        raise TdfValueError(f"keras.layers.serialize takes a layer, got {type_word(layer)}")
    module = "keras" if KERAS_MODEL in layer.keras_bases else "keras.layers"
    return {"module": module, "class_name": type(layer).__name__, "config": layer.get_config(), "registered_name": None}


def serialize_held(layer) -> dict:
    """A layer held by another (a wrapper's layer, an RNN's cell) as Keras serializes it: with its build_config
    once built."""
    entry = serialize_layer(layer)
    if layer.built and getattr(layer, "build_shape", None) is not None:
        entry["build_config"] = {"input_shape": PythonTuple(
            None if d is None else Tensor(np.array(d, dtype=np.int64), weak=True) for d in layer.build_shape)}
    return entry


def deserialize_layer(interp, config, custom_objects=None):
    """keras.layers.deserialize: the layer of a serialized config, made by its class's from_config: a class
    registered or in ``custom_objects`` under the config's registered name first (a program's, made on the
    program's side), as Keras looks it up, else Keras's own of that name."""
    name = config.get("class_name") if isinstance(config, dict) else None
    registered = config.get("registered_name") if isinstance(config, dict) else None
    found = saving.registered_object(registered, custom_objects) if isinstance(registered, str) else None
    if found is not None:
        return interp.call_value(found.get_attribute(interp, "from_config", None), [config["config"]])
    made = BUILTINS.get(name) if isinstance(name, str) else None
    if "from_config" not in getattr(made, "class_methods", ()):
        raise TdfValueError(f"Could not locate class '{name}'",
                            hint="a program's class is found by its registered name: decorate it with "
                                 "@keras.saving.register_keras_serializable(), or pass custom_objects=")
    return made.class_methods["from_config"](interp, config["config"])
