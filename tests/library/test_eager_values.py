"""What eager TensorFlow and Keras give back, as their docstrings show it: the UnreadVariable of an assign,
tf.function's tensors and tf.inside_function, type(), TensorShape concatenation, tf.gather's batch_dims,
get_static_value of a variable, MAPE of integer predictions, and Keras's constraints and activity
regularizers. The expected values are computed here with NumPy from the inputs (or are TensorFlow's and Keras's
own repr strings)."""
from __future__ import annotations

import numpy as np
import pytest

from tapecli.api import run_source
from tapecli.errors import TdfError, TdfTypeError


def run(body: str) -> list[str]:
    return run_source("import tensorflow as tf\nimport keras\n" + body, "prog.py").output


# ------------------------------------------------------------------ assign's UnreadVariable

def test_assign_returns_an_unread_variable_that_reads_the_variable_when_used():
    out = run("v = tf.Variable(1.)\nu = v.assign(2.)\nprint(repr(u))\nv.assign(7.)\nprint(repr(u))\n"
              "print(repr(v.assign_add(0.5)))\nprint(repr(v.assign_sub(1.5)))\nu.assign_add(1.)\nprint(v.numpy())\n"
              "print(repr(v))")
    assert out == ["<tf.Variable 'UnreadVariable' shape=() dtype=float32, numpy=2.0>",
                   "<tf.Variable 'UnreadVariable' shape=() dtype=float32, numpy=7.0>",
                   "<tf.Variable 'UnreadVariable' shape=() dtype=float32, numpy=7.5>",
                   "<tf.Variable 'UnreadVariable' shape=() dtype=float32, numpy=6.0>",
                   "7.0", "<tf.Variable 'Variable:0' shape=() dtype=float32, numpy=7.0>"]


def test_an_unread_variable_computes_as_the_variable_but_is_no_read_of_it_to_a_tape():
    out = run("v = tf.Variable([1., 2.])\nu = v.assign([3., 4.])\nprint((u * 2.).numpy())\n"
              "with tf.GradientTape() as t:\n    y = tf.reduce_sum(u * 2.)\nprint(t.gradient(y, v))")
    assert out == ["[6. 8.]", "None"]          # TensorFlow's: the unread variable is another variable


# ------------------------------------------------------------------ tf.function

def test_a_tf_function_returns_its_variables_read_and_runs_inside_a_function():
    out = run("v = tf.Variable(0.)\nf = tf.function(lambda: v.assign_sub(0.25))\nprint(repr(f()))\n"
              "print(repr(f()))\nprint(tf.inside_function())\n"
              "@tf.function\ndef g():\n    return tf.inside_function()\n"
              "def h():\n    return tf.inside_function()\n"
              "k = tf.function(h)\nprint(g(), h(), k())")
    assert out == ["<tf.Tensor: shape=(), dtype=float32, numpy=-0.25>",
                   "<tf.Tensor: shape=(), dtype=float32, numpy=-0.5>", "False",
                   # (TensorFlow's outputs are tensors: a Python bool returned is a bool tensor)
                   "tf.Tensor(True, shape=(), dtype=bool) False tf.Tensor(True, shape=(), dtype=bool)"]


def test_get_static_value_of_a_variable_is_none_and_of_a_tensor_its_value():
    assert run("print(tf.get_static_value(tf.Variable(3)))\nprint(tf.get_static_value(tf.constant(3) * 2))") == \
        ["None", "6"]


# ------------------------------------------------------------------ type()

@pytest.mark.parametrize("expr, name", [
    ("tf.constant([1.0])", "tensorflow.python.framework.ops.EagerTensor"),
    ("tf.Variable(1.)", "tensorflow.python.ops.resource_variable_ops.ResourceVariable"),
    ("tf.Variable(1.).assign(2.)", "tensorflow.python.ops.resource_variable_ops._UnreadVariable"),
    ("tf.zeros([2]).shape", "tensorflow.python.framework.tensor_shape.TensorShape"),
    ("tf.float32", "tensorflow.python.framework.dtypes.DType"),
    ("tf.constant([1.0]).numpy()", "numpy.ndarray"),
    ("tf.constant([1.0]).numpy()[0]", "numpy.float32"),
    ("1", "int"), ("2.5", "float"), ("True", "bool"), ("'s'", "str"), ("None", "NoneType"), ("{}", "dict"),
    ("tf.nn.relu", "function"), ("lambda x: x", "function"),
    ("keras.losses.get('categorical_crossentropy')", "function"),
    ("keras.losses.get('CategoricalCrossentropy')", "keras.src.losses.losses.CategoricalCrossentropy"),
    ("keras.losses.get({'class_name': 'Huber', 'config': {}})", "keras.src.losses.losses.Huber"),
    ("keras.metrics.get('categorical_crossentropy')",
     "keras.src.metrics.probabilistic_metrics.CategoricalCrossentropy"),
    ("keras.metrics.get({'class_name': 'MeanSquaredError', 'config': {}})",
     "keras.src.metrics.regression_metrics.MeanSquaredError"),
    ("keras.metrics.AUC()", "keras.src.metrics.confusion_metrics.AUC"),
    ("keras.optimizers.RMSprop()", "keras.src.optimizers.rmsprop.RMSprop"),
    ("keras.layers.Dense(2)", "keras.src.layers.core.dense.Dense"),
    ("keras.layers.MaxPooling2D()", "keras.src.layers.pooling.max_pooling2d.MaxPooling2D"),
    ("keras.layers.LeakyReLU()", "keras.src.layers.activations.leaky_relu.LeakyReLU"),
    ("keras.layers.SimpleRNN(2)", "keras.src.layers.rnn.simple_rnn.SimpleRNN"),
    ("keras.layers.BatchNormalization()", "keras.src.layers.normalization.batch_normalization.BatchNormalization"),
    ("keras.Sequential()", "keras.src.models.sequential.Sequential"),
    ("keras.layers.GlobalAveragePooling1D()", "keras.src.layers.pooling.global_average_pooling1d.GlobalAveragePooling1D"),
    ("keras.layers.Conv2D(2, 3)", "keras.src.layers.convolutional.conv2d.Conv2D"),
    ("keras.regularizers.L2(0.1)", "keras.src.regularizers.regularizers.L2"),
    ("keras.regularizers.OrthogonalRegularizer()", "keras.src.regularizers.regularizers.OrthogonalRegularizer"),
    ("keras.constraints.NonNeg()", "keras.src.constraints.constraints.NonNeg"),
])
def test_type_names_the_class_as_tensorflow_keras_numpy_and_python_do(expr, name):
    assert run(f"print(type({expr}))") == [f"<class '{name}'>"]


def test_type_of_a_program_class_and_identity_of_classes():
    out = run("class M:\n    pass\nprint(type(M()), type(M))\nt = tf.constant(1.)\n"
              "print(type(t) is type(tf.constant([2])), type(t) is type(tf.Variable(1.)))")
    assert out == ["<class '__main__.M'> <class 'type'>", "True False"]


def test_type_of_what_the_interpreter_cannot_name_is_a_type_error(monkeypatch):
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", "0")
    with pytest.raises(TdfTypeError, match="type()"):
        run("type(len)")


@pytest.mark.parametrize("on_cpython", ["0", "1"])
def test_type_of_a_list_and_of_a_dataset_on_both_runners(on_cpython, monkeypatch):
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", on_cpython)
    assert run("print(type([1, 2]), type(tf.data.Dataset.range(3).batch(2)))") == [
        "<class 'list'> <class 'tensorflow.python.data.ops.batch_op._BatchDataset'>"]


def test_type_of_a_python_value_on_cpython_is_pythons(monkeypatch):
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", "1")
    assert run("print(type([1, 2]), type(len))") == ["<class 'list'> <class 'builtin_function_or_method'>"]


# ------------------------------------------------------------------ TensorShape

def test_a_shapes_slice_is_a_shape_and_plus_concatenates():
    out = run("s = tf.zeros([3, 4, 5]).shape\nprint(repr(s[:-1]), s[1:].as_list(), repr(s[0]))\n"
              "print(repr(s[:-1] + [7]), repr([7] + s[1:]), repr(s[:1] + s[2:]), repr(s + 2))\n"
              "print(tf.zeros([3, 4]).shape == tf.ones([3, 4]).shape == s[:-1] + [1])")
    assert out == ["TensorShape([3, 4]) [4, 5] 3",
                   "TensorShape([3, 4, 7]) TensorShape([7, 4, 5]) TensorShape([3, 5]) TensorShape([3, 4, 5, 2])",
                   "False"]
    assert run("s = tf.zeros([3, 4]).shape\nprint(s == tf.ones([3, 4]).shape == s[:1] + [4])") == ["True"]


def test_a_shape_plus_a_float_or_a_variable_is_a_type_error():
    with pytest.raises(TdfError):
        run("tf.zeros([2]).shape + [1.5]")
    with pytest.raises(TdfError):
        run("tf.zeros([2]).shape + tf.Variable([1])")


# ------------------------------------------------------------------ tf.gather

def _batched(params, indices, axis, b):
    """tf.gather with batch_dims=b, written as a loop over the batch (tf.gather's own definition)."""
    if b == 0:
        return np.take(params, indices, axis=axis)
    return np.stack([_batched(p, i, axis - 1, b - 1) for p, i in zip(params, indices)])


@pytest.mark.parametrize("axis, batch_dims", [(None, 1), (None, -1), (2, 1), (3, 1), (3, -1), (2, 2), (-1, 1)])
def test_gather_with_batch_dims(axis, batch_dims):
    params = np.arange(2 * 3 * 4 * 5).reshape(2, 3, 4, 5)
    indices = np.array([[1, 0, 3], [2, 2, 0]])
    b = batch_dims + indices.ndim if batch_dims < 0 else batch_dims
    a = b if axis is None else axis % 4
    indices = indices % params.shape[a]
    out = run(f"p = tf.reshape(tf.range({params.size}), {list(params.shape)})\n"
              f"r = tf.gather(p, tf.constant({indices.tolist()}), {'' if axis is None else f'axis={axis}, '}"
              f"batch_dims={batch_dims})\nprint(r.shape.as_list())\nprint(r.numpy().ravel().tolist())")
    want = _batched(params, indices, a, b)
    assert out == [str(list(want.shape)), str(want.ravel().tolist())]


def test_gather_batch_dims_after_the_axis_is_a_shape_error():
    with pytest.raises(TdfError, match="batch_dims"):
        run("tf.gather(tf.zeros([2, 3, 4]), tf.constant([[0], [1]]), axis=0, batch_dims=1)")


def test_gather_of_a_literal_takes_its_own_dtype():
    assert run("print(tf.gather([[3, 1], [2, 4]], tf.constant([1, 0]), batch_dims=-1).dtype)\n"
               "print(tf.gather([1, 2], tf.constant([1], tf.int64)).dtype)") == \
        ["<dtype: 'int32'>", "<dtype: 'int32'>"]


# ------------------------------------------------------------------ Keras

def test_mape_of_integer_predictions_is_computed_on_integers_as_keras_does():
    y_true, y_pred = [[0, 1], [0, 0]], [[1, 1], [0, 0]]
    out = run(f"print(repr(keras.losses.mean_absolute_percentage_error({y_true}, {y_pred})))\n"
              f"print(keras.losses.MeanAbsolutePercentageError()({y_true}, {y_pred}).numpy())\n"
              f"m = keras.metrics.MeanAbsolutePercentageError()\nm.update_state({y_true}, {y_pred})\n"
              f"print(m.result().numpy())")
    assert out[0] == "<tf.Tensor: shape=(2,), dtype=float64, numpy=array([inf, nan])>"
    t, p = np.array(y_true, np.float32), np.array(y_pred, np.float32)      # a loss object casts first
    want = np.mean(100 * np.mean(np.abs((t - p) / np.maximum(np.abs(t), np.float32(1e-7))), axis=-1))
    assert float(out[1]) == pytest.approx(want, rel=1e-6)
    assert out[2] == "nan"


def test_activity_regularizer_adds_its_loss_of_the_output_over_the_batch():
    out = run("layer = keras.layers.Dense(3, kernel_initializer='ones', bias_initializer='ones',\n"
              "    kernel_regularizer=keras.regularizers.L1(0.5), activity_regularizer=keras.regularizers.L2(0.1))\n"
              "x = tf.reshape(tf.range(8.), [4, 2])\ny = layer(x)\nprint([float(l) for l in layer.losses])\n"
              "y = layer(x[:2])\nprint(len(layer.losses), float(layer.losses[0]))")
    x = np.arange(8.0).reshape(4, 2)
    y = x @ np.ones((2, 3)) + 1
    # Keras's order: the activity regularizer's loss first, then the kernel's (six ones)
    assert eval(out[0]) == pytest.approx([0.1 * np.sum(y ** 2) / 4, 0.5 * 6])
    assert out[1].split()[0] == "2"
    assert float(out[1].split()[1]) == pytest.approx(0.1 * np.sum(y[:2] ** 2) / 2)


def test_kernel_constraint_is_applied_after_each_optimizer_step():
    out = run("class Clip(keras.constraints.Constraint):\n"
              "    def __call__(self, w):\n        return tf.clip_by_value(w, -0.5, 0.5)\n"
              "d = keras.layers.Dense(2, kernel_initializer='ones', kernel_constraint=Clip(), bias_constraint='non_neg')\n"
              "x = tf.constant([[1., -2.], [3., 1.]])\nopt = keras.optimizers.SGD(0.1)\n"
              "for i in range(2):\n    with tf.GradientTape() as t:\n        loss = tf.reduce_sum(d(x) ** 2)\n"
              "    g = t.gradient(loss, d.trainable_variables)\n    opt.apply_gradients(zip(g, d.trainable_variables))\n"
              "print(d.kernel.numpy().ravel().tolist())\nprint(d.bias.numpy().tolist())")
    x = np.array([[1., -2.], [3., 1.]], np.float32)
    w, b = np.ones((2, 2), np.float32), np.zeros(2, np.float32)
    for _ in range(2):
        y = x @ w + b
        gw, gb = x.T @ (2 * y), (2 * y).sum(0)
        w, b = np.clip(w - np.float32(0.1) * gw, -0.5, 0.5), np.maximum(b - np.float32(0.1) * gb, 0)
    assert np.allclose(eval(out[0]), w.ravel(), rtol=1e-6)
    assert np.allclose(eval(out[1]), b, rtol=1e-6)


# ------------------------------------------------------------------ einsum

def test_einsum_broadcasts_the_size_one_axes_of_an_ellipsis():
    s, t = np.arange(11 * 5 * 3.0).reshape(11, 1, 5, 3), np.arange(7 * 3 * 2.0).reshape(1, 7, 3, 2)
    out = run(f"s = tf.reshape(tf.range({s.size}.), {list(s.shape)})\nt = tf.reshape(tf.range({t.size}.), "
              f"{list(t.shape)})\nwith tf.GradientTape() as g:\n    g.watch(s)\n"
              f"    e = tf.einsum('...ij,...jk->...ik', s, t)\nprint(e.shape.as_list(), float(tf.reduce_sum(e)))\n"
              f"print(g.gradient(e, s).shape.as_list())")
    want = np.matmul(s, t)
    assert out == [f"{list(want.shape)} {float(want.sum())}", str(list(s.shape))]
    with pytest.raises(TdfError, match="has sizes 1 and 3"):       # a named index does not broadcast
        run("tf.einsum('ij,jk->ik', tf.zeros([2, 1]), tf.zeros([3, 2]))")


def test_tridiag_of_literal_diagonals_in_sequence_format_is_float32():
    out = run("op = tf.linalg.LinearOperatorTridiag([[3., 4., 5.], [1., -1., 2.], [6., 7., 8]], "
              "diagonals_format='sequence')\nd = op.to_dense()\nprint(d.dtype)\nprint(d.numpy().tolist())")
    want = np.diag([1., -1., 2.]) + np.diag([3., 4.], 1) + np.diag([7., 8.], -1)    # (superdiag's last, subdiag's first unused)
    assert out == ["<dtype: 'float32'>", str(want.tolist())]
