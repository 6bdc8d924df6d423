"""A TensorFlow program's Python literals in TensorFlow's functions, and the pieces of TensorFlow's and
Keras's API their docstrings use (docs/language.md, "TensorFlow's ops: decisions"; docs/tf-surface.md)."""
from __future__ import annotations

import pytest

from tapecli.api import run_source
from tapecli.errors import TdfError, TdfNameError


def printed(body: str, keras: bool = False) -> list[str]:
    """The program's output lines (the interpreter keeps a print's lines as one entry, CPython's stream splits them)."""
    head = "import tensorflow as tf\nimport numpy as np\n" + ("import keras\nfrom keras import ops\n" if keras else "")
    return [line for entry in run_source(head + body, "program.py").output for line in entry.split("\n")]


@pytest.mark.parametrize("expression, text", [
    ("tf.reshape([1, 2, 3, 4], [2, 2])",
     "<tf.Tensor: shape=(2, 2), dtype=int32, numpy=\narray([[1, 2],\n       [3, 4]], dtype=int32)>"),
    ("tf.math.multiply(7, 6)", "<tf.Tensor: shape=(), dtype=int32, numpy=42>"),
    ("tf.size(tf.ones((3, 4)))", "<tf.Tensor: shape=(), dtype=int32, numpy=12>"),
    ("tf.add([1, 2], 1)", "<tf.Tensor: shape=(2,), dtype=int32, numpy=array([2, 3], dtype=int32)>"),
    ("tf.sort([2.5, 1.0]).numpy()", "array([1. , 2.5], dtype=float32)"),
    ("tf.boolean_mask([0, 1, 2], np.array([True, False, True]))",
     "<tf.Tensor: shape=(2,), dtype=int32, numpy=array([0, 2], dtype=int32)>"),
    ("tf.add([1, 2], tf.constant([0.5, 0.5], tf.float64))",
     "<tf.Tensor: shape=(2,), dtype=float64, numpy=array([1.5, 2.5])>"),
    ("tf.cast([1, 2], tf.int64)", "<tf.Tensor: shape=(2,), dtype=int64, numpy=array([1, 2])>"),
    ("tf.range(3, 1, -0.5)", "<tf.Tensor: shape=(4,), dtype=float32, numpy=array([3. , 2.5, 2. , 1.5], dtype=float32)>"),
    ("tf.is_tensor(3.0)", "False"),         # (a Python bool, as TensorFlow 2.21 gives it)
    ("keras.ops.sum([1, 2])", "<tf.Tensor: shape=(), dtype=int32, numpy=3>"),
])
def test_a_literal_in_a_tensorflow_function_is_converted_as_tensorflow_does(expression, text):
    assert printed(f"print(repr({expression}))\n", keras="keras" in expression) == text.split("\n")


def test_only_the_modules_functions_convert():
    """Python's own functions and a literal's arithmetic keep Python values: len, range, 2 + 3."""
    assert printed("print(repr(len([1, 2])), repr(2 + 3), repr(list(range(2))))\n") == ["2 5 [0, 1]"]


def test_a_python_index_is_still_refused_by_switch_case():
    with pytest.raises(TdfError):
        printed("y = tf.switch_case(1, [lambda: 1.0, lambda: 2.0])\n")


def test_tensor_shape_methods_and_comparison():
    assert printed("s = tf.ones((2, 3)).shape\nprint(s.as_list(), s.rank, s.ndims, s.num_elements(), "
                   "s.is_fully_defined())\nprint(s == (2, 3), s == [2], s != (2, 3))\n") == \
        ["[2, 3] 2 2 6 True", "True False False"]
    with pytest.raises(TdfError, match="TensorShape.? (object )?has no attribute"):
        printed("tf.ones(2).shape.nope\n")


def test_a_keras_tensor_has_a_shape_and_dtype():
    out = printed("x = keras.Input(shape=(4,))\ny = keras.layers.Dense(3)(x)\nprint(y.shape)\nprint(y.dtype)\n"
                  "print(repr(y.ndim))\n", keras=True)
    assert out == ["(None, 3)", "float32", "2"]


def test_keras_config_getters():
    assert printed("print(repr(keras.config.floatx()), keras.config.epsilon(), repr(keras.config.backend()), "
                   "repr(keras.config.image_data_format()))\n", keras=True) == \
        ["'float32' 1e-07 'tensorflow' 'channels_last'"]


def test_as_dtype_reads_names_and_enum_values():
    assert printed("print(repr(tf.as_dtype('float')), repr(tf.as_dtype(2)), repr(tf.as_dtype('int32')))\n") == \
        ["tf.float32 tf.float64 tf.int32"]
    with pytest.raises(TdfError, match="as_dtype"):
        printed("tf.as_dtype(99)\n")
    assert printed("print(repr(tf.ones(2, 3)))\n") == \
        ["<tf.Tensor: shape=(2,), dtype=int32, numpy=array([1, 1], dtype=int32)>"]


def test_feature_crosses_and_files_are_refused_as_out_of_scope():
    for name in ("tf.sparse.cross_hashed", "tf.ragged_fill_empty_rows", "tf.saved_model.save", "tf.saved_model.load",
                 "tf.summary.create_file_writer", "tf.io.read_file"):
        with pytest.raises(TdfNameError, match=f"{name} is out of scope"):
            printed(f"f = {name}\n")


def test_a_tuple_of_literals_is_an_array_argument():
    assert printed("shape = (2, 3)\nprint(repr(np.arange(np.prod(shape)).reshape(shape)))\n") == \
        ["array([[0, 1, 2],", "       [3, 4, 5]])"]


def test_small_values_as_tensorflow_gives_them():
    assert printed("print(tf.get_static_value(tf.constant(10)), repr(tf.inside_function()))\n"
                   "print(repr(keras.ops.convert_to_tensor((-1.0, 1.0)).dtype))\n"
                   "print(keras.utils.to_categorical([0, 1], num_classes=2))\n"
                   "print(keras.utils.to_categorical(np.array([0, 2]), 3)[1])\n", keras=True) == \
        ["10 False", "tf.float32", "[[1. 0.]", " [0. 1.]]", "[0. 0. 1.]"]


def test_keras_dense_input_dim_and_a_dice_loss_over_several_axes():
    out = printed("layer = keras.layers.Dense(2, input_dim=3)\nprint(layer(tf.ones((1, 3))).shape)\n"
                  "y = [[[1.0], [0.0]], [[1.0], [1.0]]]\np = [[[1.0], [1.0]], [[0.0], [1.0]]]\n"
                  "print(keras.losses.dice(y, p, axis=(1, 2)).shape)\n", keras=True)
    assert out == ["(1, 2)", "(2,)"]


def test_a_linear_operators_shape_is_a_tensor_shape():
    assert printed("op = tf.linalg.LinearOperatorDiag([1.0, 2.0])\nprint(repr(op.shape), repr(op.batch_shape))\n") \
        == ["TensorShape([2, 2]) TensorShape([])"]


def test_polyval_of_a_list_of_numbers():
    assert printed("print(repr(tf.math.polyval([2, 1, 0], 3)), repr(tf.math.polyval([1.0, 2.5], 2.0)))\n") == \
        ["<tf.Tensor: shape=(), dtype=int32, numpy=21> <tf.Tensor: shape=(), dtype=float32, numpy=4.5>"]
    with pytest.raises(TdfError, match="coeffs must be a list"):
        printed("tf.math.polyval(tf.constant([1.0, 2.0]), 2.0)\n")


def test_linspace_of_tensors_along_an_axis():
    assert printed("print(tf.linspace([0., 5.], [10., 40.], 3, axis=-1).numpy())\n"
                   "print(tf.linspace([0., 5.], [10., 40.], 3).shape)\n") == \
        ["[[ 0.   5.  10. ]", " [ 5.  22.5 40. ]]", "(3, 2)"]
    with pytest.raises(TdfError, match="axis 3 is out of range"):
        printed("tf.linspace([0., 5.], [10., 40.], 3, axis=3)\n")


def test_recurrent_layers_return_their_final_state():
    out = printed("x = tf.ones((2, 3, 4))\nlstm = keras.layers.LSTM(5, return_sequences=True, return_state=True)\n"
                  "seq, h, c = lstm(x)\nprint(seq.shape, h.shape, c.shape)\n"
                  "print(bool(tf.reduce_all(seq[:, -1] == h)))\n"
                  "out, state = keras.layers.GRU(5, return_state=True)(x)\nprint(bool(tf.reduce_all(out == state)))\n",
                  keras=True)
    assert out == ["(2, 3, 5) (2, 5) (2, 5)", "True", "True"]


def test_einsum_with_an_index_repeated_in_one_operand_takes_the_diagonal():
    out = printed("m = tf.Variable([[1.0, 2.0], [3.0, 4.0]])\nwith tf.GradientTape() as t:\n"
                  "    d = tf.einsum('ii->i', m)\n    y = tf.reduce_sum(d * [1.0, 2.0]) + tf.einsum('ii', m)\n"
                  "print(d.numpy(), tf.einsum('bii->b', tf.reshape(tf.range(8.0), (2, 2, 2))).numpy())\n"
                  "print(t.gradient(y, m).numpy())\n")
    assert out == ["[1. 4.] [ 3. 11.]", "[[2. 0.]", " [0. 3.]]"]


def test_bincount_of_each_row():
    assert printed("print(tf.math.bincount([[1, 1, 3], [0, 2, 2]], axis=-1).numpy())\n"
                   "print(tf.math.bincount([[1, 1], [0, 2]], axis=-1, binary_output=True).numpy())\n") == \
        ["[[0 2 0 1]", " [1 0 2 0]]", "[[0 1 0]", " [1 0 1]]"]
    with pytest.raises(TdfError, match="Unsupported value for argument axis=1"):
        printed("tf.math.bincount([1, 2], axis=1)\n")


def test_a_ragged_list_is_a_python_list_of_rows():
    assert printed("s = [[1], [2, 3]]\nprint(len(s), repr(keras.utils.pad_sequences(s)))\n", keras=True) == \
        ["2 array([[0, 1],", "       [2, 3]], dtype=int32)"]


def test_a_ragged_literal_stays_an_error_in_tdf():
    with pytest.raises(TdfError, match="ragged literal"):
        run_source("var w = [1.0]\nx = [[1.0], [2.0, 3.0]]\n", "program.tdf")


def test_a_programs_function_or_class_as_a_kernel_regularizer():
    out = printed("def l1(w):\n    return 0.01 * ops.sum(ops.absolute(w))\n"
                  "class L2(keras.regularizers.Regularizer):\n    def __init__(self, l2=0.0):\n        self.l2 = l2\n"
                  "    def __call__(self, x):\n        return self.l2 * ops.sum(ops.square(x))\n"
                  "for reg in (l1, L2(0.5)):\n"
                  "    layer = keras.layers.Dense(5, input_dim=5, kernel_initializer='ones', kernel_regularizer=reg)\n"
                  "    out = layer(ops.ones((5, 5)))\n    print(repr(layer.losses))\n", keras=True)
    assert out == ["[<tf.Tensor: shape=(), dtype=float32, numpy=0.25>]", "[<tf.Tensor: shape=(), dtype=float32, numpy=12.5>]"]
    with pytest.raises(TdfError, match="Could not interpret regularizer"):
        printed("keras.layers.Dense(2, kernel_regularizer=3)\n", keras=True)


def test_max_pool_of_integers():
    assert printed("x = tf.reshape(tf.range(16), (1, 4, 4, 1))\n"
                   "print(tf.nn.max_pool(x, ksize=2, strides=2, padding='SAME')[0, :, :, 0].numpy())\n") == \
        ["[[ 5  7]", " [13 15]]"]


def test_layer_normalization_over_several_axes():
    out = printed("x = tf.reshape(tf.range(24.0), (2, 3, 4))\nlayer = keras.layers.LayerNormalization(axis=[1, 2])\n"
                  "y = layer(x)\nprint(layer.gamma.shape, layer.beta.shape)\n"
                  "m = tf.reduce_mean(x, axis=[1, 2], keepdims=True)\n"
                  "v = tf.reduce_mean(tf.square(x - m), axis=[1, 2], keepdims=True)\n"
                  "print(bool(tf.reduce_max(tf.abs(y - (x - m) / tf.sqrt(v + 1e-3))) < 1e-5))\n", keras=True)
    assert out == ["(3, 4) (3, 4)", "True"]
    with pytest.raises(TdfError, match="axis 3 is out of range"):
        printed("keras.layers.LayerNormalization(axis=[1, 3])(tf.ones((2, 3, 4)))\n", keras=True)


def test_clear_session_restarts_keras_names():
    assert printed("a = keras.layers.Dense(1)\nb = keras.layers.Dense(1)\nprint(b.name)\n"
                   "print(keras.backend.clear_session())\nprint(keras.layers.Dense(1).name, keras.backend.get_uid('x'))\n",
                   keras=True) == ["dense_1", "None", "dense 1"]


def test_a_declared_dtype_out_of_scope_says_why():
    with pytest.raises(TdfError, match="dtype complex128 is out of scope for tapecli: complex numbers"):
        printed("z = tf.constant([[-1.0], [16.0]], dtype=tf.complex128)\n")
    with pytest.raises(TdfError, match="dtype qint8 is out of scope for tapecli: quantized dtypes"):
        printed("z = tf.constant([1], dtype=tf.qint8)\n")


def test_tensor_scatter_nd_update_of_slices_and_of_an_index_given_twice():
    out = printed("t = tf.zeros([4, 2], dtype=tf.int32)\n"
                  "print(tf.tensor_scatter_nd_update(t, [[1], [3]], [[1, 2], [3, 4]]).numpy())\n"
                  "x = tf.Variable([1.0, 2.0, 3.0])\nwith tf.GradientTape() as g:\n"
                  "    y = tf.tensor_scatter_nd_update(x, [[0], [0]], x[:2] * 10.0)\n    s = tf.reduce_sum(y)\n"
                  "print(y.numpy(), g.gradient(s, x).numpy())\n")
    assert out == ["[[0 0]", " [1 2]", " [0 0]", " [3 4]]", "[20.  2.  3.] [ 0. 11.  1.]"]


def test_explicit_padding_as_a_literal():
    assert printed("x = tf.reshape(tf.range(1.0, 17.0), (1, 4, 4, 1))\n"
                   "y = tf.nn.max_pool2d(x, ksize=(2, 2), strides=(2, 2), padding=[[0, 0], [1, 1], [1, 1], [0, 0]])\n"
                   "print(y.shape, y[0, :, :, 0].numpy())\n") == \
        ["(1, 3, 3, 1) [[ 1.  3.  4.]", " [ 9. 11. 12.]", " [13. 15. 16.]]"]


def test_tf_version_is_the_release_whose_semantics_tapecli_follows():
    assert printed("print('TensorFlow version:', tf.__version__)\n") == ["TensorFlow version: 2.21.0"]
    with pytest.raises(TdfError, match="no attribute '?__version__"):      # a module's attribute, not a tensor's
        printed("x = tf.constant(3)\nprint(x.__version__)\n")


def test_config_lists_the_runs_devices_as_tensorflow_does():
    """Recorded from TensorFlow 2.21 on a machine without a GPU."""
    cpu = "PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU')"
    assert printed("d = tf.config.list_physical_devices()\nprint(d)\nprint(d[0].name, d[0].device_type, len(d[0]))\n"
                   "print(tf.config.list_physical_devices('GPU'), tf.config.list_physical_devices('cpu'))\n"
                   "print(tf.config.experimental.list_physical_devices('CPU'))\n"
                   "print(tf.config.list_logical_devices(), tf.config.list_logical_devices('GPU'))\n"
                   "print('Num GPUs Available: ', len(tf.config.list_physical_devices('GPU')))\n"
                   "for g in tf.config.get_visible_devices():\n    tf.config.experimental.set_memory_growth(g, True)\n") == \
        [f"[{cpu}]", "/physical_device:CPU:0 CPU 2", "[] []", f"[{cpu}]",
         "[LogicalDevice(name='/device:CPU:0', device_type='CPU')] []", "Num GPUs Available:  0"]
    with pytest.raises(TdfError, match="set_memory_growth"):
        printed("tf.config.experimental.set_memory_growth('GPU', True)\n")


def test_keras_registration_decorates_a_class_and_returns_it(monkeypatch):
    program = ("@keras.saving.register_keras_serializable()\nclass Scale(tf.keras.layers.Layer):\n"
               "    def __init__(self, k, **kwargs):\n        super().__init__(**kwargs)\n        self.k = k\n"
               "    def call(self, x):\n        return x * self.k\n\n"
               "@tf.keras.utils.register_keras_serializable(package='mine')\nclass Twice(tf.Module):\n"
               "    def __call__(self, x):\n        return 2.0 * x\n    def get_config(self):\n        return {}\n\n"
               "print(Scale(3.0)(tf.constant([1.0, 2.0])))\nprint(Twice()(tf.constant(1.5)))\n")
    assert printed(program, keras=True) == ["tf.Tensor([3. 6.], shape=(2,), dtype=float32)",
                                            "tf.Tensor(3.0, shape=(), dtype=float32)"]
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", "0")      # (CPython, which runs the program by default, takes any)
    with pytest.raises(TdfError, match="a class decorator is not supported") as e:     # any other stays refused
        printed("@tf.function\nclass A:\n    pass\n")
    assert e.value.line == 3


def test_a_dict_keyed_by_numbers_reads_back_what_it_stored():
    """A dict keyed by learning rates (TensorFlow's optimizer guide): its keys are Python numbers, written,
    read, looped over and printed as Python does."""
    program = ("d = {}\nfor lr in [0.1, 0.01]:\n    d[lr] = lr * 2\nfor lr in d:\n    print(lr, d[lr])\n"
               "print(d[0.1], {0.5: 1}[0.5], d)\nfor k in {0: 1.0, 2: 3.0}:\n    print(k, tf.constant([5.0, 6.0, 7.0])[k])\n")
    assert printed(program) == ["0.1 0.2", "0.01 0.02", "0.2 1 {0.1: 0.2, 0.01: 0.02}",
                                "0 tf.Tensor(5.0, shape=(), dtype=float32)", "2 tf.Tensor(7.0, shape=(), dtype=float32)"]
    for program in ("x = tf.constant([1.0, 2.0])\nprint(x[0.5])\n", "x = tf.constant([1.0, 2.0])\nk = 0.5\nprint(x[k])\n"):
        with pytest.raises(TdfError, match="valid indices, got 0.5") as e:     # a tensor's index stays an int
            printed(program)
        assert e.value.line in (4, 5)


# isinstance of the program's classes, tf.Module, and Keras's classes and bases; each line as TensorFlow 2.21 and
# Keras 3 print it (recorded in the development venv).
ISINSTANCE = """
class A:
    pass
class B(A):
    pass
class C:
    pass
b = B()
print(isinstance(b, A), isinstance(b, B), isinstance(b, C), isinstance(b, (C, A)), isinstance(A(), B))
d = tf.keras.layers.Dense(2)
s = tf.keras.Sequential([d])
print(isinstance(d, tf.keras.layers.Layer), isinstance(d, tf.keras.layers.Dense), isinstance(d, tf.keras.layers.Conv2D))
print(isinstance(s, tf.keras.Model), isinstance(s, tf.keras.layers.Layer), isinstance(s, tf.keras.Sequential),
      isinstance(d, tf.Module))
print(isinstance(tf.keras.losses.MeanSquaredError(), tf.keras.losses.Loss),
      isinstance(tf.keras.metrics.Mean(), tf.keras.metrics.Metric), isinstance(tf.keras.metrics.Mean(), tf.keras.layers.Layer))
class L(tf.keras.layers.Layer):
    def call(self, x):
        return x
class M(tf.keras.Model):
    def call(self, x):
        return x
print(isinstance(L(), tf.keras.layers.Layer), isinstance(L(), tf.keras.Model), isinstance(M(), tf.keras.layers.Layer),
      isinstance(M(), tf.keras.Model), isinstance(M(), L))
class Mod(tf.Module):
    pass
print(isinstance(Mod(), tf.Module), isinstance(Mod(), tf.keras.layers.Layer), Mod().name, Mod(name="m2").name)
"""
ISINSTANCE_PRINTED = ["True True False True False", "True True False", "True True True False", "True True False",
                      "True False True True False", "True False mod m2"]


def test_isinstance_answers_for_classes_bases_and_keras_as_tensorflow_does():
    assert printed(ISINSTANCE) == ISINSTANCE_PRINTED
