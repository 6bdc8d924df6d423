"""Keras-lite layers and models against NumPy references of Keras 3's formulas, with weights set by
set_weights so no random values are involved."""
import textwrap

import numpy as np
import pytest

import tapecli
from conftest import run_program, value
from tapecli.errors import ShapeError, TdfTypeError, TdfValueError

f = np.float32
X = np.array([[1.0, -2.0, 0.5], [0.0, 3.0, -1.0]], f)
K = np.array([[0.1, -0.2], [0.3, 0.4], [-0.5, 0.6]], f)
B = np.array([0.05, -0.1], f)


def lit(a):
    return np.array2string(np.asarray(a), separator=", ", floatmode="unique").replace("\n", "")


CONSTS = f"const K = {lit(K)}\nconst B = {lit(B)}\n"


def run(source):
    return run_program(CONSTS + textwrap.dedent(source).lstrip("\n"))


def test_dense_with_set_weights_and_activation_by_builtin_function():
    r = run(f"""
        d = Dense(2, activation=relu)
        y0 = d({lit(X)})
        d.set_weights([K, B])
        y = d({lit(X)})
        names = [d.kernel.name, d.bias.name]
        ws = d.get_weights()
    """)
    np.testing.assert_allclose(value(r, "y"), np.maximum(X @ K + B, 0), rtol=1e-6)
    assert value(r, "names") == ["d.kernel", "d.bias"]
    np.testing.assert_allclose(value(r, "ws")[0], K)


def test_dense_activation_by_program_function_and_name():
    r = run(f"""
        def twice(v):
            return 2.0 * v
        d = Dense(2, activation=twice, use_bias=False)
        e = Dense(2, activation="tanh", bias_initializer="ones", kernel_initializer="zeros")
        d.build([3])
        d.set_weights([K])
        y = d({lit(X)})
        z = e({lit(X)})
    """)
    np.testing.assert_allclose(value(r, "y"), 2 * (X @ K), rtol=1e-6)
    np.testing.assert_allclose(value(r, "z"), np.tanh(np.ones((2, 2))), rtol=1e-6)


def test_unbound_layers_get_keras_automatic_names_and_models_name_their_layers():
    r = run_program("""
        layers = [Dense(2), Dense(3)]
        a = layers[0]([[1.0, 2.0]])
        b = layers[1]([[1.0, 2.0]])
        names = [layers[0].kernel.name, layers[1].kernel.name, layers[1].name]
        mname = Sequential([Dense(1)]).layers[0].name
        model = Sequential([Dense(4, input_shape=[2]), Dense(1)])
        mnames = [model.layers[0].kernel.name, model.layers[1].bias.name]
    """)
    assert value(r, "names") == ["dense.kernel", "dense_1.kernel", "dense_1"]
    assert value(r, "mname") == "dense_2"          # Keras's name, whatever the variables are called
    assert value(r, "mnames") == ["model.layers[0].kernel", "model.layers[1].bias"]


def test_sequential_weights_order_get_set_weights_and_call():
    k2 = np.array([[1.0], [-1.0]], f)
    r = run(f"""
        model = Sequential()
        model.add(Dense(2, activation="relu"))
        model.add(Dense(1))
        before = model.trainable_variables
        y0 = model({lit(X)})
        const k2 = {lit(k2)}
        model.set_weights([K, B, k2, [0.25]])
        y = model({lit(X)})
        n = len(model.variables)
    """)
    assert value(r, "before") == [] and value(r, "n") == 4
    np.testing.assert_allclose(value(r, "y"), np.maximum(X @ K + B, 0) @ k2 + 0.25, rtol=1e-6)


def test_model_gradients_flow_through_layers():
    r = run(f"""
        model = Sequential([Input(shape=[3]), Dense(2, activation="sigmoid")])
        model.set_weights([K, B])
        tape t:
            loss = sum(model({lit(X)}))
        gk, gb = t.gradient(loss, model.trainable_variables)
    """)
    s = 1 / (1 + np.exp(-(X.astype(np.float64) @ K + B)))
    ds = s * (1 - s)
    np.testing.assert_allclose(value(r, "gk"), X.T @ ds, rtol=1e-5)
    np.testing.assert_allclose(value(r, "gb"), ds.sum(0), rtol=1e-5)


def test_functional_model():
    r = run(f"""
        inputs = Input(shape=[3])
        h = Dense(2, activation="relu")(inputs)
        outputs = Dense(1)(h)
        model = Model(inputs, outputs)
        const k2 = [[2.0], [1.0]]
        model.set_weights([K, B, k2, [0.0]])
        y = model({lit(X)})
        n = len(model.layers)
    """)
    np.testing.assert_allclose(value(r, "y"), np.maximum(X @ K + B, 0) @ np.array([[2.0], [1.0]]), rtol=1e-6)
    assert value(r, "n") == 3          # the InputLayer first, as Keras lists it


def test_flatten_activation_dropout():
    x = np.arange(12, dtype=f).reshape(2, 2, 3) / 4
    r = run(f"""
        const x = {lit(x)}
        fl = Flatten()(x)
        act = Activation("softplus")(x)
        drop = Dropout(0.5, seed=3)
        same = drop(x)
        trained = drop(x, training=True)
    """)
    assert np.array(value(r, "fl")).shape == (2, 6)
    np.testing.assert_allclose(value(r, "act"), np.log1p(np.exp(x)), rtol=1e-6)
    np.testing.assert_array_equal(value(r, "same"), x)
    t = np.array(value(r, "trained"))
    kept = t != 0
    np.testing.assert_allclose(t[kept], (x * f(2.0))[kept])      # kept values scaled by 1 / (1 - rate)
    assert 0 < kept.sum() < x.size or x[~kept].sum() == 0


def test_layer_normalization_and_batch_normalization():
    x = np.array([[1.0, 2.0, 4.0], [-1.0, 0.5, 3.0]], f)
    r = run(f"""
        const x = {lit(x)}
        ln = LayerNormalization()
        y = ln(x)
        bn = BatchNormalization(momentum=0.9)
        inf = bn(x)
        tr = bn(x, training=True)
        mm = bn.moving_mean
        mv = bn.moving_variance
        n_trainable = len(bn.trainable_variables)
    """)
    xd = x.astype(np.float64)
    mu, var = xd.mean(-1, keepdims=True), xd.var(-1, keepdims=True)
    np.testing.assert_allclose(value(r, "y"), (xd - mu) / np.sqrt(var + 1e-3), rtol=1e-5)
    np.testing.assert_allclose(value(r, "inf"), xd / np.sqrt(1 + 1e-3), rtol=1e-6)
    bm, bv = xd.mean(0), xd.var(0)
    np.testing.assert_allclose(value(r, "tr"), (xd - bm) / np.sqrt(bv + 1e-3), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(value(r, "mm"), 0.1 * bm, rtol=1e-6)
    np.testing.assert_allclose(value(r, "mv"), 0.9 + 0.1 * bv, rtol=1e-6)
    assert value(r, "n_trainable") == 2


def test_embedding_lookup_and_gradient_accumulates_duplicates():
    table = np.array([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]], f)
    r = run(f"""
        e = Embedding(3, 2)
        y0 = e([0])
        e.set_weights([{lit(table)}])
        tape t:
            y = e([[2, 0], [2, 1]])
            loss = sum(y)
        g = t.gradient(loss, e.embeddings)
    """)
    np.testing.assert_array_equal(value(r, "y"), table[[[2, 0], [2, 1]]])
    np.testing.assert_array_equal(value(r, "g"), [[1, 1], [1, 1], [2, 2]])


def test_initializers_shapes_and_scales():
    r = run_program("""
        a = GlorotUniform(seed=1)([200, 300])
        b = HeNormal(seed=2)([400, 100])
        c = RandomNormal(stddev=2.0, seed=3)([100, 100])
        d = Constant(3.0)([2])
        e = Dense(5, kernel_initializer="glorot_normal", seed=4)
        y = e(ones([1, 50]))
        k = e.kernel
    """)
    a = np.array(value(r, "a"))
    assert np.abs(a).max() <= np.sqrt(6 / 500) and np.abs(a).max() > 0.9 * np.sqrt(6 / 500)
    b = np.array(value(r, "b"))
    assert np.abs(b).max() <= 2 * np.sqrt(2 / 400) / 0.87962566103423978 + 1e-6
    assert abs(b.std() - np.sqrt(2 / 400)) < 0.1 * np.sqrt(2 / 400)
    assert abs(np.array(value(r, "c")).std() - 2.0) < 0.1
    assert value(r, "d") == [3.0, 3.0]
    assert np.array(value(r, "k")).shape == (50, 5)


def test_metrics():
    r = run_program("""
        m = Mean()
        m.update_state([1.0, 2.0, 3.0])
        m.update_state([4.0], sample_weight=[2.0])
        mean = m.result()
        acc = SparseCategoricalAccuracy()
        acc.update_state([0, 2, 1], [[0.9, 0.1, 0.0], [0.2, 0.3, 0.5], [0.6, 0.3, 0.1]])
        a = acc.result()
        cat = CategoricalAccuracy()
        cat.update_state([[0.0, 1.0], [1.0, 0.0]], [[0.2, 0.8], [0.3, 0.7]])
        c = cat.result()
        cat.reset_state()
        c0 = cat.result()
    """)
    assert value(r, "mean") == pytest.approx(14 / 5)
    assert value(r, "a") == pytest.approx(2 / 3) and value(r, "c") == 0.5 and value(r, "c0") == 0.0


def test_errors():
    with pytest.raises(TdfValueError, match=r"expected axis -1 of input shape to have value 3, but received input "
                                            r"with shape \(1, 2\)"):
        run_program("d = Dense(2)\ny = d([[1.0, 2.0, 3.0]])\nz = d([[1.0, 2.0]])")
    with pytest.raises(TdfValueError, match="no layers"):
        run_program("m = Sequential()\ny = m([[1.0]])")
    with pytest.raises(TdfTypeError, match="Only instances of `keras.Layer`"):
        run_program("x = 1.0\nm = Sequential([x])")
    with pytest.raises(TdfValueError, match="expecting 2 weights"):
        run_program("d = Dense(2)\ny = d([[1.0]])\nd.set_weights([[[1.0, 2.0]]])")
    with pytest.raises(TdfValueError, match="Could not interpret activation function identifier: nope"):
        run_program('d = Dense(2, activation="nope")')
    with pytest.raises(TdfTypeError, match="unexpected keyword argument 'colour'"):
        run_program("d = Dense(2, colour=3)")
    with pytest.raises(TdfValueError, match="no kernel yet"):
        run_program("d = Dense(2)\nk = d.kernel")


def test_summary_prints_keras_s_listing():
    r = run_program("""
        model = Sequential([Dense(4, input_shape=[3]), Dense(2)])
        model.summary()
    """)
    text = "\n".join(r.output)
    assert " Total params: 26 (104.00 B)" in text and "(None, 4)" in text and "│ dense_1 (Dense)   " in text


def test_batch_normalization_on_the_first_axis():
    x = np.array([[1.0, 2.0, 4.0], [-1.0, 0.5, 3.0]], f)
    r = run(f"""
        bn = BatchNormalization(axis=0)
        y = bn({lit(x)}, training=True)
        bn.set_weights([[2.0, 3.0], [1.0, -1.0], [0.0, 0.0], [1.0, 1.0]])
        z = bn({lit(x)}, training=True)
    """)
    xd = x.astype(np.float64)
    mu, var = xd.mean(1, keepdims=True), xd.var(1, keepdims=True)
    want = (xd - mu) / np.sqrt(var + 1e-3) * np.array([[2.0], [3.0]]) + np.array([[1.0], [-1.0]])
    np.testing.assert_allclose(value(r, "z"), want, rtol=1e-5)


def test_bad_arguments_are_errors_not_crashes():
    with pytest.raises(ShapeError, match="negative"):
        run_program("m = Sequential([Input(shape=[-1]), Dense(2)])")
    with pytest.raises(ShapeError, match="axis 5"):
        run_program("y = LayerNormalization(axis=5)(ones([2]))")
    with pytest.raises(TdfValueError, match="non-negative integer"):
        run_program("d = Dense(2, seed=-1)")


def test_lint_flags_a_watch_of_an_unbuilt_keras_layer():
    from tapecli.tools.lint import lint_source
    findings = lint_source("l = LSTM(2)\ntape t(watch_accessed_variables=False):\n    watch l.trainable_variables\n"
                           "    y = l(ones([1, 2, 3]))\n", "p.tdf")
    assert "TDF005" in [f.code for f in findings]


def test_functional_summary_lists_each_layers_output_shape():
    r = run_program("""
        inputs = Input(shape=[3])
        h = Dense(5)(inputs)
        model = Model(inputs, Dense(2)(h))
        model.summary()
    """)
    text = "\n".join(r.output)
    assert "(None, 5)" in text and "(None, 2)" in text and "Total params: 32" in text


def test_functional_model_checks_its_input_shape():
    with pytest.raises(TdfValueError, match="incompatible"):
        run_program("""
            inputs = Input(shape=[3])
            model = Model(inputs, Dense(2)(inputs))
            y = model(ones([2, 4]))
        """)


NZ_PROGRAM = """\
import numpy as np
import tensorflow as tf

data = np.array([[1.0, 10.0], [2.0, 20.0], [3.0, 30.0]], dtype="float32")
norm = tf.keras.layers.Normalization(axis=-1)
norm.adapt(data)
print(norm.mean.numpy(), norm.variance.numpy(), [w.name for w in norm.weights], norm.count_params())
print(norm(data).numpy().round(4).tolist())
whole = tf.keras.layers.Normalization(axis=None)
whole.adapt(tf.constant([1.0, 2.0, 3.0, 4.0, 5.0]))
print(whole(tf.constant([1.0, 2.0, 3.0])).numpy())
given = tf.keras.layers.Normalization(mean=3.0, variance=2.0)
print(given(np.array([[1.0], [2.0], [3.0]], dtype="float32")).numpy().ravel().tolist())
inverse = tf.keras.layers.Normalization(axis=-1, invert=True)
inverse.adapt(data)
print(inverse(tf.constant([[0.0, 1.0]])).numpy().tolist())
batched = tf.keras.layers.Normalization()
batched.adapt(tf.data.Dataset.from_tensor_slices(data).batch(2))
print(batched.mean.numpy().tolist(), batched.variance.numpy().round(4).tolist())
print(np.array([[1.5, 2.7]]).astype(int).tolist(), np.array([1, 0]).astype(bool).tolist())
i = tf.keras.Input((3,))
m = tf.keras.Model(i, tf.keras.layers.Dense(2)(i))
print(m.input_shape, m.output_shape)
"""

# What TensorFlow 2.21 (Keras 3) printed for NZ_PROGRAM.
NZ_BY_TENSORFLOW = """\
[[ 2. 20.]] [[ 0.6666667 66.666664 ]] ['mean', 'variance', 'count'] 5
[[-1.2246999740600586, -1.2246999740600586], [0.0, 0.0], [1.2246999740600586, 1.2246999740600586]]
[-1.4142135  -0.70710677  0.        ]
[-1.4142135381698608, -0.7071067690849304, 0.0]
[[2.0, 28.164966583251953]]
[[2.0, 20.0]] [[0.666700005531311, 66.66670227050781]]
[[1, 2]] [True, False]
(None, 3) (None, 2)
"""


@pytest.mark.parametrize("first_line", ["", "import os\n"], ids=["interpreter", "cpython"])
def test_normalization_adapts_and_normalizes_as_keras_does(first_line):
    """keras.layers.Normalization: adapt() of a NumPy array, a tensor (axis=None) and a dataset of batches;
    given mean and variance; invert; its weights and parameter count; with NumPy's astype(int) and a model's
    input_shape and output_shape, on both runners."""
    assert tapecli.run(first_line + NZ_PROGRAM).output == NZ_BY_TENSORFLOW.splitlines()


def test_image_augmentation_layers_refuse_what_keras_refuses():
    with pytest.raises(TdfValueError, match="Unknown `fill_mode` mirror"):
        run_program('r = RandomRotation(0.1, fill_mode="mirror")')
    with pytest.raises(TdfValueError, match="Unknown `interpolation` bicubic"):
        run_program('z = RandomZoom(0.1, interpolation="bicubic")')
    with pytest.raises(TdfValueError, match=r"in the range \[-1, 1\]. Received: factor=2"):
        run_program("r = RandomRotation(2)")
    with pytest.raises(TdfValueError, match=r"Received: input_number=-1.0$"):
        run_program("z = RandomZoom(-1.0)")
    with pytest.raises(TdfValueError, match="Unknown `mode` sideways"):
        run_program('f = RandomFlip("sideways")')
    with pytest.raises(TdfValueError, match="rank 3 \\(single image\\) or 4"):
        run_program("f = RandomFlip()\ny = f([[1.0, 2.0]])")
    with pytest.raises(TdfTypeError, match="tapecli takes float images, got int32"):
        run_program("c = RandomContrast(0.5)\ny = c(ones([1, 2, 2, 1], dtype=int32), training=True)")


def test_image_augmentation_in_inference_passes_images_through():
    r = run_program("f = RandomRotation(0.3, seed=1)\nx = ones([1, 3, 3, 1])\ny = f(x, training=False)\n"
                    "z = f(x, training=True)")
    np.testing.assert_array_equal(value(r, "y"), np.ones((1, 3, 3, 1), f))
    assert np.asarray(value(r, "z")).shape == (1, 3, 3, 1)


def test_stateless_call_on_the_interpreter(monkeypatch):
    """The recorded program of stateless calls (tests/data/tf_programs_optimizer_bases.json), less its last lines
    that catch an error: the interpreter runs it and prints what TensorFlow printed."""
    import json
    from pathlib import Path
    from tapecli.execution import python_only
    recorded = json.loads((Path(__file__).parents[1] / "data" / "tf_programs_optimizer_bases.json").read_text())
    program = recorded["stateless_call_layers"]
    source = program["program"].split("try:")[0]
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", "0")
    assert python_only(source) is None          # (the interpreter runs it)
    assert tapecli.run(source).output == program["stdout"].splitlines()[:-1]


def test_stateless_call_keeps_the_layers_variables_and_refuses_a_wrong_count():
    r = tapecli.run("""\
import tensorflow as tf
import keras
layer = keras.layers.BatchNormalization(momentum=0.5)
layer.build((None, 2))
x = tf.constant([[1.0, 2.0], [3.0, 6.0]])
out, (mean, variance) = layer.stateless_call(layer.trainable_variables, layer.non_trainable_variables, x,
                                             training=True)
kept = layer.moving_mean.numpy()
""")
    # the batch's mean [2, 4] halfway from the moving mean's zeros; the layer's own moving mean still zeros
    assert np.asarray(r.values["mean"]).tolist() == [1.0, 2.0]
    assert np.asarray(r.values["kept"]).tolist() == [0.0, 0.0]
    with pytest.raises(TdfValueError, match="Argument `non_trainable_variables` must be a list of tensors "
                                            "corresponding 1:1 to BatchNormalization"):
        tapecli.run("import keras\nlayer = keras.layers.BatchNormalization()\nlayer.build((None, 2))\n"
                    "layer.stateless_call(layer.trainable_variables, [], [[1.0, 2.0]])\n")


def test_every_keras_layer_class_has_its_keras_class_name():
    """type(layer) names Keras's class in its module: every registered layer class is in the table of packages
    (a new layer missing from it made type(layer) an error)."""
    from tapecli.interpreter.registry import BUILTINS
    from tapecli.library.keras import layers as keras_layers
    import tapecli.library.keras_names  # noqa: F401  (registers the Keras names)
    missing = []
    for name, registered in BUILTINS.items():
        made = getattr(registered, "makes", None)
        if isinstance(made, type) and issubclass(made, keras_layers.Layer) \
                and made.python_class is keras_layers.Layer.python_class \
                and keras_layers.Layer.python_class(object.__new__(made)) is None:
            missing.append(name)
    assert not missing
