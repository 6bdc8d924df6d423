"""keras.Variable, keras.backend's configuration readers and keras.utils.to_categorical."""
from __future__ import annotations

import numpy as np

from tapecli.errors import TdfValueError
from tapecli.library.keras import initializers
from tapecli.library.keras.common import dims, flag, float_dtype, integer, tensor
from tapecli.runtime.values import DType, NumpyArray, Tensor, Variable


def variable(initializer, shape=None, dtype=None, trainable=True, autocast=True, aggregation="none",
             synchronization="auto", name=None):
    """keras.Variable: a value, or an initializer (a name or an object) called with ``shape``."""
    want = DType(dtype).np if isinstance(dtype, str) else dtype.np if isinstance(dtype, DType) else None
    if isinstance(initializer, (str, initializers.Initializer)):
        if shape is None:
            raise TdfValueError("When creating a Variable from an initializer, the `shape` argument should be "
                                f"specified. Received: initializer={initializer} and shape={shape}")
        value = initializers.get(initializer).make(dims(shape), np.random.default_rng(), want or float_dtype())
    else:
        t = tensor(initializer, "the initial value")
        value = np.asarray(t.value, dtype=want or (float_dtype() if t.dtype.kind == "f" else t.dtype))
        if shape is not None and tuple(dims(shape)) != value.shape:
            raise TdfValueError(f"Initial value has shape {value.shape}, but `shape` is {tuple(dims(shape))}")
    name = name if isinstance(name, str) else "variable"        # (Keras's default)
    return Variable(name, np.array(value), trainable=flag(trainable), tf_name=name, keras=True)


def backend():
    return "tensorflow"


def epsilon():
    return 1e-07


def floatx():
    return np.dtype(float_dtype()).name


def image_data_format():
    return "channels_last"


def to_categorical(x, num_classes=None):
    """keras.utils.to_categorical: a float64 NumPy array from a list or NumPy array (Keras's NumPy path), a
    float32 tensor (one_hot) from a tensor; a trailing axis of size 1 is dropped."""
    from_tensor = isinstance(x, Variable) or (isinstance(x, Tensor) and not x.weak    # (a list literal is weak,
                                              and not isinstance(x, NumpyArray))  # an array NumPy's)
    ids = np.asarray(tensor(x, "x").value).astype(np.int64)
    if ids.ndim > 1 and ids.shape[-1] == 1:
        ids = ids.reshape(ids.shape[:-1])
    n = int(ids.max()) + 1 if num_classes is None else integer(num_classes, "num_classes")
    out = np.zeros((ids.size, n), np.float32 if from_tensor else np.float64)
    out[np.arange(ids.size), ids.reshape(-1)] = 1
    return (Tensor if from_tensor else NumpyArray)(out.reshape(*ids.shape, n))      # Keras's NumPy path: an array


to_categorical.literals = "a Python list takes Keras's NumPy path"     # (interpreter/registry.py: call_builtin)


def normalize(x, axis=-1, order=2):
    """keras.utils.normalize on a tensor (Keras 3's ops.nn.normalize): x / maximum(norm(x, order, axis), 1e-7)."""
    from tapecli import ops
    from tapecli.library.core import norm
    t = tensor(x, "x")
    return ops.div(t, ops.maximum(norm(t, axis=integer(axis, "axis"), keepdims=True, ord=order), 1e-7))


FUNCTIONS = {"keras.Variable": variable, "backend.backend": backend, "backend.epsilon": epsilon,
             "backend.floatx": floatx, "backend.image_data_format": image_data_format, "config.backend": backend,
             "config.epsilon": epsilon, "config.floatx": floatx, "config.image_data_format": image_data_format,
             "utils.to_categorical": to_categorical, "utils.normalize": normalize}
