"""keras.Variable, keras.backend's configuration readers, keras.utils.to_categorical and img_to_array;
set_random_seed, the (x, y, sample_weight) packing helpers, pad_sequences, dtype names and promotion
(standardize_dtype, result_type, is_float_dtype, is_int_dtype), clear_session, get_uid, keras.remat / RematScope
(rematerialization saves memory and changes no value), timeseries_dataset_from_array, and the keras.ops reductions
written on TensorFlow's."""
from __future__ import annotations

import numpy as np

from tapecli.errors import TdfTypeError, TdfValueError
from tapecli.library.keras import initializers
from tapecli.library.keras.common import converted, dims, flag, float_dtype, integer, num, tensor
from tapecli.runtime.context import current
from tapecli.runtime.tape import type_word
from tapecli.runtime.values import DTYPES, DType, NumpyArray, PythonBool, PythonTuple, Tensor, Variable, dtype_name


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


_FLOATX = ("bfloat16", "float16", "float32", "float64")


def set_floatx(value):
    """keras.config.set_floatx: the dtype of the Keras layers, weights, losses and metrics made after it, in this
    run. tapecli computes Keras in float32 or float64 (its float16 and bfloat16 arithmetic is not TensorFlow's)."""
    name = str(value)
    if name not in _FLOATX:
        raise TdfValueError(f"Unknown `floatx` value: {value}. Expected one of {set(_FLOATX)}")
    if name not in ("float32", "float64"):
        raise TdfValueError(f"keras.config.set_floatx({name!r}): tapecli computes Keras in float32 or float64",
                            hint="float16 and bfloat16 arithmetic as TensorFlow's CPU kernels do it is not here")
    current().keras_floatx = np.dtype(name)


def enable_unsafe_deserialization():
    """keras.config.enable_unsafe_deserialization: a Lambda's Python lambda may be made again from its config."""
    current().keras_unsafe = True


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
    """keras.utils.normalize: of a NumPy array, NumPy's (x over its norms along ``axis``, a zero norm taken as 1,
    and Keras's ``axis or -1`` where it expands them back); of a tensor, Keras 3's ops.nn.normalize:
    x / maximum(norm(x, order, axis), 1e-7)."""
    from tapecli import ops
    from tapecli.library.core import norm
    if isinstance(x, NumpyArray):
        axis, order = integer(axis, "axis"), integer(order, "order")
        norms = np.atleast_1d(np.linalg.norm(x.value, order, axis))
        norms[norms == 0] = 1
        return NumpyArray(x.value / np.expand_dims(norms, axis or -1))
    t = tensor(x, "x")
    return ops.div(t, ops.maximum(norm(t, axis=integer(axis, "axis"), keepdims=True, ord=order), 1e-7))


def img_to_array(img, data_format=None, dtype=None):
    """keras.utils.img_to_array of an image as an array (a NumPy array, a tensor, nested lists): NumPy's array of
    it in ``dtype`` (floatx by default; a NumPy array already of it is itself, as np.asarray gives), a 2-D one with
    a channel axis added, channels moved first where asked. Keras's other input, a PIL image, no program holds."""
    from tapecli.library.numpy_forms import to_numpy
    data_format = standardize_data_format(data_format)
    source = img.value if isinstance(img, NumpyArray) else to_numpy(img)
    if dtype.__class__ is DType:           # (NumPy takes its own dtypes and names, not TensorFlow's)
        raise TdfTypeError(f"Cannot interpret 'tf.{dtype.name}' as a data type")
    numpy_type = isinstance(dtype, type) and issubclass(dtype, np.generic)      # (np.int64 on CPython's run)
    try:
        x = np.asarray(source, dtype=float_dtype() if dtype is None else dtype if numpy_type else to_numpy(dtype))
    except (TypeError, ValueError) as e:
        raise TdfValueError(f"img_to_array: {e}") from None
    if x.ndim == 3:
        x = x.transpose(2, 0, 1) if data_format == "channels_first" else x
    elif x.ndim == 2:
        x = x.reshape((1, *x.shape) if data_format == "channels_first" else (*x.shape, 1))
    else:
        raise TdfValueError(f"Unsupported image shape: {x.shape}")
    if x is source and isinstance(img, NumpyArray):
        return img
    return NumpyArray(x if x.flags.writeable else x.copy())


def standardize_data_format(data_format) -> str:
    """keras.config.standardize_data_format: the global image data format for None, else the name checked."""
    if data_format is None:
        return image_data_format()
    data_format = data_format.lower() if isinstance(data_format, str) else type_word(data_format)
    if data_format not in ("channels_first", "channels_last"):
        raise TdfValueError("The `data_format` argument must be one of {'channels_first', 'channels_last'}. "
                            f"Received: data_format={data_format}")
    return data_format


def set_random_seed(interp, seed):
    """Python's, NumPy's global and TensorFlow's seeds at once, as keras.utils.set_random_seed (Python's is the
    run's, whose draws a program's random module and Keras's default seeds share)."""
    from tapecli.library.numpy_forms import np_seed    # (families imported when a program first names them)
    from tapecli.library.tf_nn import set_seed
    if not isinstance(seed, int) and not (isinstance(seed, Tensor) and seed.dtype.kind in "iu" and seed.ndim == 0):
        raise TdfTypeError(f"Expected `seed` argument to be an integer. Received: seed={seed!r}")
    seed = integer(seed, "seed")
    current().python_random().seed(seed)          # (Keras's initializers draw their seeds from it)
    current().keras_seed_generator = None           # (Keras's global SeedGenerator is made again at its next use)
    np_seed(interp, seed)
    set_seed(interp, seed)


def pack_x_y_sample_weight(x, y=None, sample_weight=None):
    if y is None:
        return [x] if not isinstance(x, (list, tuple)) else x
    return [x, y] if sample_weight is None else [x, y, sample_weight]


def unpack_x_y_sample_weight(data):
    if isinstance(data, list) and not isinstance(data, Tensor):
        if len(data) == 1:
            return [data[0], None, None]
        if len(data) == 2:
            return [data[0], data[1], None]
        if len(data) == 3:
            return list(data)
        raise TdfValueError(f"Data is expected to be in format `x`, `(x,)`, `(x, y)`, or `(x, y, sample_weight)`, "
                            f"found: {len(data)} items")
    return [data, None, None]


def pad_sequences(sequences, maxlen=None, dtype="int32", padding="pre", truncating="pre", value=0.0):
    """keras.utils.pad_sequences: a NumPy array of the sequences cut and padded to one length."""
    if isinstance(sequences, Tensor):       # (rows of one length: a tensor, as CPython's run hands a list over)
        rows = [np.asarray(row).reshape(-1) for row in np.asarray(sequences.value)]
    else:
        rows = [np.asarray(tensor(s, "a sequence").value if not isinstance(s, list) or s else np.zeros(0)).reshape(-1)
                for s in sequences]
    if padding not in ("pre", "post") or truncating not in ("pre", "post"):
        raise TdfValueError("padding and truncating must be 'pre' or 'post'")
    length = max((len(r) for r in rows), default=0) if maxlen is None else integer(maxlen, "maxlen")
    want = np.dtype(dtype.np if isinstance(dtype, DType) else dtype)
    out = np.full((len(rows), length), num(value, "value"), dtype=want)
    for i, row in enumerate(rows):
        if not len(row) or not length:
            continue
        cut = row[-length:] if truncating == "pre" else row[:length]
        if padding == "post":
            out[i, :len(cut)] = cut
        else:
            out[i, -len(cut):] = cut
    return NumpyArray(out)


def standardize_dtype(dtype=None):
    if dtype is None:
        return "float32"
    name = dtype.name if isinstance(dtype, DType) else dtype if isinstance(dtype, str) else None
    if name not in DTYPES:
        raise TdfValueError(f"Invalid dtype: {dtype!r}")
    return name


def is_float_dtype(dtype):
    return standardize_dtype(dtype).startswith("float")


def is_int_dtype(dtype):
    return standardize_dtype(dtype).startswith("int")


# Keras's type promotion lattice (keras/src/backend/common/dtypes.py, JAX's): each dtype's next ones up; "int" and
# "float" are the weak types of Python numbers
_LATTICE = {"bool": ("int",), "int": ("uint8", "int8"), "uint8": ("int16", "uint16"), "uint16": ("int32", "uint32"),
            "uint32": ("int64", "uint64"), "uint64": ("float",), "int8": ("int16",), "int16": ("int32",),
            "int32": ("int64",), "int64": ("float",), "float": ("bfloat16", "float16"), "bfloat16": ("float32",),
            "float16": ("float32",), "float32": ("float64",), "float64": ()}


def _upper_bounds(node: str) -> set:
    bounds, todo = {node}, [node]
    while todo:
        for up in _LATTICE[todo.pop()]:
            if up not in bounds:
                bounds.add(up)
                todo.append(up)
    return bounds


_UPPER_BOUNDS = {node: _upper_bounds(node) for node in _LATTICE}
_WEAK_TYPES = ("int", "float")


def result_type(*dtypes):
    """Keras's dtypes.result_type (its _lattice_result_type, TensorFlow backend): the least upper bound of the dtypes
    on Keras's lattice, where "int" and "float" stand for Python numbers (weak: a weak result takes floatx's
    precision); no dtypes: floatx."""
    floatx = dtype_name(float_dtype())
    if not dtypes:
        return floatx
    pairs = [(_weak_name(d), True) if _weak_name(d) else (_lattice_name(floatx if d is None else d), False)
             for d in dtypes]
    names, weak = [n for n, _ in pairs], [w for _, w in pairs]
    if len(names) == 1:
        out, out_weak = names[0], weak[0]
    elif len(set(names)) == 1 and not all(weak):
        out, out_weak = names[0], False
    elif all(weak):
        out, out_weak = _least_upper_bound(set(names)), True
    else:
        out = _least_upper_bound(set(names))
        out_weak = out in _WEAK_TYPES
    if out_weak and out != "bool":
        out = {"i": "int", "u": "uint"}.get(out[:1], "float") + floatx[-2:]
    return "uint32" if out == "uint64" else out


def _weak_name(dtype) -> str | None:
    """"int" or "float" for a Python number's type (its name, as the library's callers give it, or the class)."""
    from tapecli.library.python import float_, int_     # (the interpreter's int and float)
    if dtype is int or dtype is int_:
        return "int"
    if dtype is float or dtype is float_:
        return "float"
    return dtype if isinstance(dtype, str) and dtype in _WEAK_TYPES else None


def _lattice_name(dtype) -> str:
    return dtype if dtype == "bfloat16" else standardize_dtype(dtype)


def _least_upper_bound(nodes: set) -> str:
    if any(n not in _UPPER_BOUNDS for n in nodes):
        raise TdfValueError(f"dtype={next(n for n in nodes if n not in _UPPER_BOUNDS)!r} is not a valid dtype for "
                            "Keras type promotion.")
    common = set.intersection(*(_UPPER_BOUNDS[n] for n in nodes))
    least = (common & nodes) or {c for c in common if common.issubset(_UPPER_BOUNDS[c])}
    return least.pop()


def clear_session(interp, free_memory=True):
    """Keras's global state reset: its automatic layer names and get_uid's counters start again."""
    interp.__dict__.pop("keras_names", None)
    interp.__dict__.pop("keras_uids", None)


def get_uid(interp, prefix=""):
    """1, 2, ... for each prefix in a run (the run's own counters)."""
    counters = interp.__dict__.setdefault("keras_uids", {})
    counters[prefix] = counters.get(prefix, 0) + 1
    return counters[prefix]


def remat(f):
    return f


def remat_scope(mode="full", output_size_threshold=1024, layer_names=None):
    """keras.RematScope: a with-context whose body runs unchanged (rematerialization changes no value)."""
    from tapecli.library.tf_scopes import Scope
    if mode not in ("full", "activations", "larger_than", "list_of_layers", None):
        raise TdfValueError(f"RematScope: invalid mode {mode!r}")
    return Scope()


def _logging(interp):
    return interp.__dict__.setdefault("keras_logging", {"interactive": True})


def enable_interactive_logging(interp):
    """Keras's fit/evaluate progress display switch (tapecli's fit prints nothing either way)."""
    _logging(interp)["interactive"] = True


def disable_interactive_logging(interp):
    _logging(interp)["interactive"] = False


def is_interactive_logging_enabled(interp):
    return _logging(interp)["interactive"]


def ops_one_hot(x, num_classes, axis=-1, dtype=None, sparse=False):
    """keras.ops.one_hot (its TensorFlow backend): tf.one_hot of the indices cast to int64, floatx unless
    ``dtype`` says (float labels, such as MNIST's after astype("float32"), are truncated)."""
    from tapecli.library.tf_nn import one_hot
    if sparse:
        raise TdfValueError("ops.one_hot(sparse=True) is not supported by tapecli")
    indices = Tensor(np.asarray(tensor(x, "x").value).astype(np.int64))
    return one_hot(indices, integer(num_classes, "num_classes"), axis=axis,
                   dtype=DType(np.dtype(float_dtype()).name) if dtype is None else dtype)


def convert_to_numpy(x):
    """keras.ops.convert_to_numpy: ``np.array(x)``, as Keras's TensorFlow backend makes it (0-d for a scalar): a
    tensor's dtype, NumPy's of its own arrays and of Python numbers (float64 data and shapes' ints stay 64-bit)."""
    if isinstance(x, (Tensor, Variable, list, tuple)):
        from tapecli.library.numpy_forms import to_numpy
        return NumpyArray(np.array(to_numpy(x)))
    return NumpyArray(np.array(converted(x).value))      # (tf.IndexedSlices: dense)


convert_to_numpy.literals = "np.array's: a Python number is NumPy's"      # (interpreter/registry.py: call_builtin)


def ops_shape(x):
    """keras.ops.shape: the static shape as a tuple of Python ints (TensorFlow's tf.shape is a tensor)."""
    return PythonTuple(Tensor(np.array(d, dtype=np.int64), weak=True) for d in tensor(x).shape)


def keras_reduction(tensorflow_name: str):
    """keras.ops.sum/max/min: TensorFlow's reduction (not Python's sum, min, max of the same flat names)."""
    def reduce(x, axis=None, keepdims=False):
        from tapecli.interpreter.registry import BUILTINS, load_word
        load_word(tensorflow_name)          # (its family, imported when a program first names it)
        return BUILTINS[tensorflow_name](x, axis=axis, keepdims=keepdims)
    reduce.__name__ = tensorflow_name.removeprefix("reduce_")
    return reduce


def is_keras_tensor(x) -> PythonBool:
    """keras.utils.is_keras_tensor: whether ``x`` is a functional model's symbolic tensor."""
    from tapecli.library.keras.keras_tensor import KerasTensor
    return PythonBool(np.array(isinstance(x, KerasTensor)))


def split_dataset(dataset, left_size=None, right_size=None, shuffle=False, seed=None, preferred_backend=None):
    """keras.utils.split_dataset (Keras 3.15's TensorFlow path): the samples of a tuple or list of NumPy arrays
    (their rows together), a NumPy array's rows or an unbatched tf.data.Dataset's elements, shuffled by Python's
    random (seeded with ``seed``, which reseeds the program's random module, as Keras's does), cut into the first
    ``left_size`` and the last ``right_size`` (fractions of the total rounded), each a dataset of slices."""
    from tapecli.library.control import flatten, pack_as
    from tapecli.library.data import Dataset, from_tensor_slices
    if right_size is None and left_size is None:
        raise TdfValueError("At least one of the `left_size` or `right_size` must be specified. Received: "
                            "left_size=None and right_size=None")
    if isinstance(dataset, (list, PythonTuple)):
        if not dataset or not all(isinstance(a, NumpyArray) and a.ndim for a in dataset):
            raise TdfValueError("Expected a list or tuple of `numpy.ndarray` objects of the same length")
        samples = [PythonTuple(NumpyArray(np.asarray(a.value[i])) for a in dataset)
                   for i in range(dataset[0].shape[0])]
    elif isinstance(dataset, NumpyArray) and dataset.ndim:
        samples = [NumpyArray(np.asarray(row)) for row in dataset.value]
    elif isinstance(dataset, Dataset):
        if dataset.kind in ("_BatchDataset", "_PaddedBatchDataset"):
            raise TdfValueError("keras.utils.split_dataset of a batched tf.data.Dataset is not supported by tapecli: "
                                "split its unbatched elements, then batch each side")
        samples = list(dataset.source())
    else:
        raise TdfTypeError(f"The `dataset` argument must be either a `tf.data.Dataset` object, or a list/tuple of "
                           f"arrays. Received: dataset of type {type_word(dataset)}")
    if not samples:
        raise TdfValueError("Received an empty dataset.")
    if flag(shuffle):
        generator = current().python_random()
        generator.seed(generator.randint(0, int(1e6)) if seed is None else integer(seed, "seed"))
        generator.shuffle(samples)
    left, right = _split_sizes(_size_value(left_size), _size_value(right_size), len(samples))

    def sliced(part):
        columns = [np.array([np.asarray(leaf.value) for leaf in row]) for row in zip(*(flatten(s) for s in part))]
        made = from_tensor_slices(pack_as(part[0], [NumpyArray(c) for c in columns]))
        made.kind = "_PrefetchDataset"      # (Keras prefetches each side)
        return made
    return PythonTuple((sliced(samples[:left]), sliced(samples[-right:])))


def _size_value(size):
    """A split size as Keras reads it: None, a Python int or a Python float (its type decides)."""
    if size is None or isinstance(size, (int, float)):
        return size
    if isinstance(size, Tensor) and size.weak and size.ndim == 0:
        return size.value.item()
    raise TdfTypeError(f"Invalid split size type. Expected: int or float or None, Received: {type_word(size)}")


def _split_sizes(left, right, total: int) -> tuple[int, int]:
    """Keras's _rescale_dataset_split_sizes: a float a fraction of ``total`` (rounded), an int a count; the one
    not given the rest."""
    for value, side in ((left, "left"), (right, "right")):
        if isinstance(value, int) and not 0 < value < total or isinstance(value, float) and not 0 < value < 1:
            raise TdfValueError(f"`{side}_size` should be either a positive integer smaller than {total}, or a float "
                                f"within the range `[0, 1]`. Received: {side}_size={value}")
    if isinstance(left, float) and isinstance(right, float) and left + right > 1:
        raise TdfValueError("The sum of `left_size` and `right_size` is greater than 1. It must be less than or "
                            "equal to 1.")
    left, right = (round(v * total) if isinstance(v, float) else v for v in (left, right))
    left = total - right if left is None else left
    right = total - left if right is None else right
    if left + right > total:
        raise TdfValueError(f"The sum of `left_size` and `right_size` should be smaller than the {total}. Received: "
                            f"left_size + right_size = {left + right}and total_length = {total}")
    for split, side in ((left, "left"), (right, "right")):
        if split == 0:
            raise TdfValueError(f"With `dataset` of length={total}, `left_size`={left} and `right_size`={right}."
                                f"Resulting {side} side dataset split will be empty. Adjust any of the "
                                "aforementioned parameters")
    return int(left), int(right)


def timeseries_dataset_from_array(interp, data, targets, sequence_length, sequence_stride=1, sampling_rate=1,
                                  batch_size=128, shuffle=False, seed=None, start_index=None, end_index=None,
                                  format="tf"):
    """keras.utils.timeseries_dataset_from_array (Keras 3.15's tf format): windows of ``sequence_length`` steps
    ``sampling_rate`` apart, starting every ``sequence_stride`` steps, each with the target at its first step, in
    the data's own dtype, batched. ``shuffle`` shuffles the start positions with NumPy's RandomState(seed), as
    Keras does, then the dataset's shuffle (whose order is tapecli's: Dataset.shuffle)."""
    from tapecli.library.keras.common import converted
    from tapecli.library.data import from_tensor_slices
    from tapecli.runtime.limits import admit
    from tapecli.runtime.specs import TensorSpec
    values = converted(data, "data").value
    n = len(values)
    length, stride, rate = (integer(v, k) for v, k in ((sequence_length, "sequence_length"),
                                                         (sequence_stride, "sequence_stride"), (sampling_rate, "sampling_rate")))
    start = 0 if start_index is None else integer(start_index, "start_index")
    end = n if end_index is None else integer(end_index, "end_index")
    _check_window(start_index is not None and start, end_index is not None and end, start, n, rate, stride, format)
    labels = None if targets is None else converted(targets, "targets").value
    count = end - start - (length - 1) * rate
    if labels is not None:
        count = min(count, len(labels))
    positions = np.arange(0, max(count, 0), stride, dtype=np.int32 if count < 2147483647 else np.int64)
    if flag(shuffle):
        from tapecli.library.numpy_forms import _global_state       # (np.random.randint: the run's own state)
        rng = np.random.RandomState(_global_state(interp).randint(1e6) if seed is None else integer(seed, "seed"))
        rng.shuffle(positions)
    steps = positions[:, None] + np.arange(0, length * rate, rate)
    admit(steps.size * int(np.prod(values.shape[1:], dtype=np.int64)), values.itemsize, "the windows")
    windows = NumpyArray(values[start:end][steps])
    dataset = from_tensor_slices(windows if labels is None else
                                 PythonTuple([windows, NumpyArray(labels[start:end][positions])]))
    sliced = dataset.spec

    def spec():         # (Keras's windows come from a map over ranges: their length is unknown to the spec)
        found = sliced()
        first = found if labels is None else found[0]
        window = TensorSpec((None, *first.shape[1:]), first.dtype)
        return window if labels is None else PythonTuple([window, found[1]])
    dataset.spec = spec
    if flag(shuffle) and batch_size is not None:
        dataset = dataset.get_attribute(interp, "shuffle", None).fn(None, integer(batch_size, "batch_size") * 8, seed)
    if batch_size is not None:
        dataset = dataset.get_attribute(interp, "batch", None).fn(None, batch_size)
    return dataset


def _check_window(start_given, end_given, start, n, rate, stride, format):
    """Keras's argument checks, in its order and words."""
    if start_given:
        if start < 0:
            raise TdfValueError(f"`start_index` must be 0 or greater. Received: start_index={start}")
        if start >= n:
            raise TdfValueError(f"`start_index` must be lower than the length of the data. Received: "
                                f"start_index={start}, for data of length {n}")
    if end_given:
        if start_given and end_given <= start:
            raise TdfValueError(f"`end_index` must be higher than `start_index`. Received: start_index={start}, and "
                                f"end_index={end_given} ")
        if end_given >= n:
            raise TdfValueError(f"`end_index` must be lower than the length of the data. Received: "
                                f"end_index={end_given}, for data of length {n}")
    for name, value in (("sampling_rate", rate), ("sequence_stride", stride)):
        if value <= 0:
            raise TdfValueError(f"`{name}` must be higher than 0. Received: {name}={value}")
        if value >= n:
            raise TdfValueError(f"`{name}` must be lower than the length of the data. Received: {name}={value}, "
                                f"for data of length {n}")
    if format not in ("tf", "grain"):
        raise TdfValueError(f'`format` should be either "tf" or "grain". Received: format={format}')
    if format == "grain":
        raise TdfValueError("format='grain' makes a Grain dataset, which tapecli does not have: use format='tf'")


WITH_INTERP = {"utils.set_random_seed": set_random_seed,
               "utils.timeseries_dataset_from_array": timeseries_dataset_from_array,
               "preprocessing.timeseries_dataset_from_array": timeseries_dataset_from_array, "backend.get_uid": get_uid,
               "backend.clear_session": clear_session, "utils.clear_session": clear_session,
               "utils.enable_interactive_logging": enable_interactive_logging,
               "utils.disable_interactive_logging": disable_interactive_logging,
               "utils.is_interactive_logging_enabled": is_interactive_logging_enabled}


FUNCTIONS = {"keras.Variable": variable, "backend.backend": backend, "backend.epsilon": epsilon,
             "backend.floatx": floatx, "backend.image_data_format": image_data_format, "config.backend": backend,
             "config.epsilon": epsilon, "config.floatx": floatx, "config.image_data_format": image_data_format,
             "config.set_floatx": set_floatx, "backend.set_floatx": set_floatx,
             "config.enable_unsafe_deserialization": enable_unsafe_deserialization,
             "utils.to_categorical": to_categorical, "utils.normalize": normalize, "utils.img_to_array": img_to_array,
             "ops.one_hot": ops_one_hot, "ops.sum": keras_reduction("reduce_sum"),
             "ops.convert_to_numpy": convert_to_numpy, "ops.shape": ops_shape,
             "utils.pack_x_y_sample_weight": pack_x_y_sample_weight,
             "utils.unpack_x_y_sample_weight": unpack_x_y_sample_weight, "utils.pad_sequences": pad_sequences,
             "utils.split_dataset": split_dataset, "utils.is_keras_tensor": is_keras_tensor,
             "backend.is_keras_tensor": is_keras_tensor,
             "sequence.pad_sequences": pad_sequences,
             "utils.standardize_dtype": standardize_dtype, "backend.standardize_dtype": standardize_dtype,
             "backend.is_float_dtype": is_float_dtype, "backend.is_int_dtype": is_int_dtype,
             "backend.result_type": result_type, "keras.remat": remat, "keras.RematScope": remat_scope}
