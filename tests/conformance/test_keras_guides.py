"""The keras.io developer guides, run as written, give Keras's values; and the behaviours they needed, one test
each (below).

The guides' own code is not redistributed here. To check them, make a folder of programs from the guides
(``keras-team/keras-io``, ``guides/``: each guide's code as written, small seeded data, final values collected in
a dict named ``results``; docs/keras.md says how), record Keras's answers into it with
``TFVENV/bin/python benchmarks/record_keras_guides.py DIR``, and run this file with ``TAPECLI_KERAS_GUIDES=DIR``:
each program then runs through tapecli and its ``results`` must agree within float32's tolerance."""
import json
import os
from pathlib import Path

import numpy as np
import pytest

import tapecli

GUIDES = Path(os.environ["TAPECLI_KERAS_GUIDES"]) if os.environ.get("TAPECLI_KERAS_GUIDES") else None


def plain(value):
    """tapecli's values as the recorder writes Keras's: nested lists of Python numbers."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, (np.ndarray, np.generic)):
        return np.asarray(value).tolist()
    return value


def assert_close(got, want, where, rtol=1e-4, atol=1e-6):
    if isinstance(want, dict):
        assert isinstance(got, dict) and sorted(got) == sorted(want), f"{where}: keys {sorted(got)} != {sorted(want)}"
        for k in want:
            assert_close(got[k], want[k], f"{where}.{k}", rtol, atol)
    elif isinstance(want, str) or isinstance(want, bool) or want is None:
        assert got == want, f"{where}: {got!r} != {want!r}"
    elif isinstance(want, list) and not all(isinstance(w, (int, float)) and not isinstance(w, bool) for w in want):
        assert isinstance(got, list) and len(got) == len(want), f"{where}: {got!r} != {want!r}"
        for i, (g, w) in enumerate(zip(got, want)):
            assert_close(g, w, f"{where}[{i}]", rtol, atol)
    else:
        np.testing.assert_allclose(np.asarray(got, dtype=float), np.asarray(want, dtype=float), rtol=rtol, atol=atol,
                                   err_msg=where)


if GUIDES is not None:          # (collected only where a folder of guide programs is given)
    RECORDED = json.loads((GUIDES / "recorded.json").read_text())

    @pytest.mark.parametrize("name", sorted(RECORDED))
    def test_guide_runs_as_written_and_matches_keras(name):
        result = tapecli.run(GUIDES / f"{name}.py")
        assert_close(plain(result["results"]), RECORDED[name], name)

    def test_every_guide_program_is_recorded():
        assert sorted(p.stem for p in GUIDES.glob("*.py")) == sorted(RECORDED)


# ---------------------------------------------------------------- the behaviours the guides needed, one by one
HEAD = "import tensorflow as tf\nimport keras\nimport numpy as np\n"


def test_a_model_subclass_built_from_inputs_and_outputs_is_that_functional_model():
    r = tapecli.run(HEAD + "class M(keras.Model):\n    pass\n"
                    "class N(keras.Model):\n    def __init__(self, *args, **kwargs):\n"
                    "        super().__init__(*args, **kwargs)\n        self.extra = keras.metrics.Mean(name='extra')\n"
                    "inputs = keras.Input(shape=(2,))\noutputs = keras.layers.Dense(1, kernel_initializer='ones')(inputs)\n"
                    "m = M(inputs, outputs)\nn = N(inputs=inputs, outputs=outputs)\n"
                    "y = m(tf.constant([[1.0, 2.0]]))\nz = n(tf.constant([[3.0, 4.0]]))\n"
                    "count = len(m.trainable_variables)\nlayers = len(m.layers)\nshapes = [w.shape for w in n.get_weights()]\n")
    assert float(np.asarray(r["y"]).ravel()[0]) == 3.0 and float(np.asarray(r["z"]).ravel()[0]) == 7.0
    assert r["count"] == 2 and r["layers"] == 2          # the InputLayer and the Dense
    assert [list(s) for s in r["shapes"]] == [[2, 1], [1]]


def test_a_program_layer_called_on_keras_tensors_is_a_node_of_the_graph_with_its_added_losses():
    r = tapecli.run(HEAD + "class Double(keras.layers.Layer):\n    def call(self, inputs):\n"
                    "        self.add_loss(tf.reduce_sum(inputs))\n        return tf.concat([inputs, inputs], axis=-1)\n"
                    "inputs = keras.Input(shape=(2,))\nh = Double()(inputs)\n"
                    "outputs = keras.layers.Dense(1, kernel_initializer='ones', use_bias=False)(h)\n"
                    "model = keras.Model(inputs, outputs)\nshape = list(h.shape)\n"
                    "y = model(tf.constant([[1.0, 2.0]]))\nadded = model.losses\n")
    assert r["shape"] == [None, 4]
    assert float(np.asarray(r["y"]).ravel()[0]) == 6.0
    assert [float(np.asarray(v)) for v in r["added"]] == [3.0]


def test_fit_casts_float64_data_to_floatx_and_flattens_a_step_s_nested_logs():
    r = tapecli.run(HEAD + "class M(keras.Model):\n    def train_step(self, data):\n        x, y = data\n"
                    "        for m in self.metrics:\n            if m.name != 'loss':\n"
                    "                m.update_state(y, self(x))\n"
                    "        return {m.name: m.result() for m in self.metrics}\n"
                    "inputs = keras.Input(shape=(1,))\n"
                    "model = M(inputs, keras.layers.Dense(1, kernel_initializer='ones')(inputs))\n"
                    "model.compile(optimizer='sgd', loss='mse', metrics=['mae'])\n"
                    "h = model.fit(np.array([[1.0], [2.0]]), np.array([[1.0], [1.0]]), epochs=1, shuffle=False)\n"
                    "keys = sorted(h.history)\nmae = h.history['mae'][0]\n")
    assert r["keys"] == ["loss", "mae"]
    assert float(np.asarray(r["mae"])) == 0.5


def test_a_sequential_model_of_known_input_is_a_graph_whose_layer_outputs_make_a_model():
    r = tapecli.run(HEAD + "s = keras.Sequential([keras.Input(shape=(3,)), keras.layers.Dense(4, name='a'),\n"
                    "                      keras.layers.Dense(2, name='b')])\n"
                    "f = keras.Model(inputs=s.inputs, outputs=[layer.output for layer in s.layers])\n"
                    "g = keras.Model(s.inputs, s.get_layer(name='a').output)\n"
                    "shapes = [list(t.shape) for t in f(tf.ones((5, 3)))]\none = list(g(tf.ones((5, 3))).shape)\n"
                    "same = bool(tf.reduce_all(f(tf.ones((1, 3)))[1] == s(tf.ones((1, 3)))))\n")
    assert plain(r["shapes"]) == [[5, 4], [5, 2]] and plain(r["one"]) == [5, 4] and bool(r["same"])
    with pytest.raises(tapecli.TdfError, match="never been called"):
        tapecli.run(HEAD + "layer = keras.layers.Dense(2)\nout = layer.output\n")


def test_program_layers_answer_weights_reset_their_losses_per_call_and_round_trip_their_config():
    r = tapecli.run(HEAD + "class Reg(keras.layers.Layer):\n    def call(self, inputs):\n"
                    "        self.add_loss(tf.reduce_sum(inputs))\n        return inputs\n"
                    "class Outer(keras.layers.Layer):\n    def __init__(self, units=3, **kwargs):\n"
                    "        super().__init__(**kwargs)\n        self.units = units\n        self.reg = Reg()\n"
                    "        self.w = self.add_weight(shape=(2,), initializer='ones')\n"
                    "        self.n = self.add_weight(shape=(1,), initializer='zeros', trainable=False)\n"
                    "    def call(self, inputs):\n        return self.reg(self.reg(inputs))\n"
                    "    def get_config(self):\n        config = super().get_config()\n"
                    "        config.update({'units': self.units})\n        return config\n"
                    "layer = Outer(5)\nsame = layer.weights == [layer.w, layer.n]\n"
                    "counts = [len(layer.trainable_weights), len(layer.non_trainable_weights)]\n"
                    "_ = layer(tf.ones((1, 2)))\n_ = layer(tf.ones((1, 2)))\nlosses = len(layer.losses)\n"
                    "again = Outer.from_config(layer.get_config()).units\nzeros = tf.zeros(1, 1)\n")
    assert bool(r["same"]) and plain(r["counts"]) == [1, 1]
    assert r["losses"] == 2 and r["again"] == 5
    assert np.asarray(r["zeros"]).dtype == np.float32 and np.asarray(r["zeros"]).shape == (1,)


def test_a_second_compile_keeps_the_loss_and_metrics_it_does_not_give():
    r = tapecli.run(HEAD + "inputs = keras.Input(shape=(1,))\n"
                    "model = keras.Model(inputs, keras.layers.Dense(1, kernel_initializer='ones')(inputs))\n"
                    "model.compile(optimizer='sgd', loss='mse', metrics=['mae'])\nmodel.compile(optimizer='adam')\n"
                    "scores = model.evaluate(np.array([[1.0]]), np.array([[3.0]]))\n")
    assert plain(r["scores"]) == [4.0, 2.0]


def test_a_program_metric_compiles_and_keras_ops_one_hot_takes_float_labels():
    r = tapecli.run(HEAD + "class Count(keras.metrics.Metric):\n"
                    "    def __init__(self, name='count', **kwargs):\n        super().__init__(name=name, **kwargs)\n"
                    "        self.n = self.add_variable(shape=(), name='n', initializer='zeros')\n"
                    "    def update_state(self, y_true, y_pred, sample_weight=None):\n"
                    "        self.n.assign_add(tf.cast(tf.shape(y_true)[0], 'float32'))\n"
                    "    def result(self):\n        return self.n\n"
                    "inputs = keras.Input(shape=(1,))\n"
                    "model = keras.Model(inputs, keras.layers.Dense(1, kernel_initializer='ones')(inputs))\n"
                    "model.compile(optimizer='sgd', loss='mse', metrics=[Count()])\n"
                    "h = model.fit(np.ones((5, 1)), np.ones((5, 1)), batch_size=2, epochs=2, shuffle=False)\n"
                    "counts = h.history['count']\n"
                    "hot = keras.ops.one_hot(np.array([2.0, 0.0]), num_classes=3)\n")
    assert plain(r["counts"]) == [5.0, 5.0]
    assert np.asarray(r["hot"]).tolist() == [[0, 0, 1], [1, 0, 0]] and np.asarray(r["hot"]).dtype == np.float32


def test_a_program_layer_called_on_keras_tensors_changes_no_state():
    r = tapecli.run(HEAD + "class Count(keras.layers.Layer):\n    def __init__(self):\n        super().__init__()\n"
                    "        self.total = self.add_weight(shape=(2,), initializer='zeros', trainable=False)\n"
                    "    def call(self, inputs):\n        self.total.assign_add(tf.reduce_sum(inputs, axis=0))\n"
                    "        return inputs + tf.random.uniform(tf.shape(inputs))\n"
                    "layer = Count()\ninputs = keras.Input(shape=(2,))\nout = layer(inputs)\n"
                    "total = layer.total.numpy()\nfirst = tf.random.uniform((3,))\n")
    again = tapecli.run(HEAD + "first = tf.random.uniform((3,))\n")
    assert np.asarray(r["total"]).tolist() == [0.0, 0.0]
    np.testing.assert_array_equal(np.asarray(r["first"]), np.asarray(again["first"]))


def test_a_program_layer_takes_several_keras_tensors_and_fit_maps_a_dict_of_data_by_input_names():
    r = tapecli.run(HEAD + "class Gap(keras.layers.Layer):\n    def call(self, targets, outputs):\n"
                    "        self.add_loss(tf.reduce_mean(tf.square(targets - outputs)))\n        return outputs\n"
                    "a = keras.Input(shape=(2,), name='a')\nt = keras.Input(shape=(1,), name='t')\n"
                    "h = keras.layers.Dense(1, kernel_initializer='zeros')(a)\n"
                    "model = keras.Model(inputs=[a, t], outputs=Gap()(t, h))\nmodel.compile(optimizer='sgd')\n"
                    "h = model.fit({'t': np.full((4, 1), 2.0), 'a': np.ones((4, 2))}, batch_size=4, shuffle=False)\n"
                    "loss = h.history['loss'][0]\n")
    assert float(np.asarray(r["loss"])) == 4.0
    with pytest.raises(tapecli.TdfError, match="names the model's inputs or outputs"):
        tapecli.run(HEAD + "a = keras.Input(shape=(2,), name='a')\nb = keras.Input(shape=(2,), name='b')\n"
                    "model = keras.Model([a, b], keras.layers.Add()([a, b]))\nmodel.compile(loss='mse')\n"
                    "model.fit({'a': np.ones((2, 2)), 'c': np.ones((2, 2))}, np.ones((2, 2)))\n")


def test_fit_weighs_samples_by_class_weight_as_keras_does():
    source = (HEAD + "inputs = keras.Input(shape=(1,))\n"
              "model = keras.Model(inputs, keras.layers.Dense(1, kernel_initializer='zeros')(inputs))\n"
              "model.compile(optimizer='sgd', loss='mse')\n"
              "y = np.array([[0.0], [1.0], [2.0], [1.0]])\n")
    r = tapecli.run(source + "weights = {1: 3.0, 2: 0.5}\n"
                    "h = model.fit(np.ones((4, 1)), y, class_weight=weights, batch_size=4, shuffle=False)\n"
                    "loss = h.history['loss'][0]\nthree = weights[1]\n")
    # mse per sample 0, 1, 4, 1 weighted 1, 3, 0.5, 3 over the 4 samples
    assert float(np.asarray(r["loss"])) == pytest.approx((0 + 3 + 2 + 3) / 4)
    assert float(np.asarray(r["three"])) == 3.0
    with pytest.raises(tapecli.TdfError, match="at the same time"):
        tapecli.run(source + "model.fit(np.ones((4, 1)), y, class_weight={1: 2.0}, sample_weight=np.ones(4))\n")


def test_a_model_of_several_outputs_compiles_a_loss_for_each_weighted_as_keras_does():
    source = (HEAD + "a = keras.Input(shape=(2,), name='a')\n"
              "p = keras.layers.Dense(1, name='p', kernel_initializer='ones')(a)\n"
              "q = keras.layers.Dense(1, name='q', kernel_initializer='zeros')(a)\n"
              "model = keras.Model(a, [p, q])\nx = np.ones((3, 2))\n")
    r = tapecli.run(source + "model.compile(optimizer='sgd', loss={'q': 'mse', 'p': 'mae'}, loss_weights=[2.0, 0.5])\n"
                    "ev = model.evaluate(x, {'p': np.zeros((3, 1)), 'q': np.full((3, 1), 4.0)}, batch_size=2,\n"
                    "                    return_dict=True)\nnames = [m.name for m in model.metrics]\n")
    # p = 2 (mae 2), q = 0 (mse 16); the total weighs them, each output's own loss is not weighted
    assert plain(r["ev"]) == {"loss": 2 * 2.0 + 0.5 * 16.0, "p_loss": 2.0, "q_loss": 16.0}
    assert r["names"] == ["loss", "p_loss", "q_loss"]
    r = tapecli.run(source + "model.compile(optimizer='sgd', loss=[None, 'mse'])\n"
                    "h = model.fit(x, [np.full((3, 1), 4.0)], epochs=1, shuffle=False)\nloss = h.history['loss']\n")
    assert plain(r["loss"]) == [16.0]
    # Keras builds the compiled loss on the first batch: the keys must name every output, checked by fit
    for keys in ("'p': 'mse', 'r': 'mse'", "'p': 'mse'"):
        with pytest.raises(tapecli.TdfError, match=r"Expected keys \['p', 'q'\] in loss dict, but found loss.keys"):
            tapecli.run(source + f"model.compile(optimizer='sgd', loss={{{keys}}})\n"
                        "model.fit(x, [np.ones((3, 1)), np.ones((3, 1))], verbose=0)\n")
    r = tapecli.run(source + "model.compile(optimizer='sgd', loss={'p': 'mse'})\nnames = [m.name for m in model.metrics]\n")
    assert r["names"] == ["loss"]


def test_compile_loss_weights_are_checked_as_keras_checks_them():
    source = (HEAD + "a = keras.Input(shape=(2,), name='a')\n"
              "model = keras.Model(a, [keras.layers.Dense(1, name='p')(a), keras.layers.Dense(1, name='q')(a)])\n"
              "x, y = np.ones((3, 2)), [np.ones((3, 1)), np.ones((3, 1))]\n")
    with pytest.raises(tapecli.TdfError, match=r"`loss_weights` must match the number of losses, got 2 losses and 3"):
        tapecli.run(source + "model.compile(loss=['mse', 'mse'], loss_weights=[1.0, 2.0, 3.0])\n"
                    "model.fit(x, y, verbose=0)\n")
    with pytest.raises(tapecli.TdfError, match=r"Expected `loss_weights` argument to be a float .* Received instead: "
                                               r"loss_weights=2 of type <class 'int'>"):
        tapecli.run(source + "model.compile(loss='mse', loss_weights=2)\n")
    # one output: its loss times the float weight
    r = tapecli.run(HEAD + "a = keras.Input(shape=(1,))\n"
                    "model = keras.Model(a, keras.layers.Dense(1, kernel_initializer='zeros')(a))\n"
                    "model.compile(loss='mse', loss_weights=0.5)\n"
                    "loss = model.evaluate(np.ones((2, 1)), np.full((2, 1), 2.0), verbose=0)\n")
    assert float(np.asarray(r["loss"])) == 2.0


def test_sample_weights_for_several_outputs_are_checked_as_keras_s_data_adapter_checks_them():
    source = (HEAD + "a = keras.Input(shape=(2,), name='a')\n"
              "model = keras.Model(a, [keras.layers.Dense(1, name='p')(a), keras.layers.Dense(1, name='q')(a)])\n"
              "model.compile(loss='mse')\nx, y = np.ones((3, 2)), [np.ones((3, 1)), np.ones((3, 1))]\n")
    with pytest.raises(tapecli.TdfError, match=r"one `sample_weight` array per output in `y`. The two structures did "
                                               r"not match: y is a list of 2, sample_weight \['p', 'q'\]"):
        tapecli.run(source + "model.evaluate(x, y, sample_weight={'p': np.ones(3), 'q': np.ones(3)}, verbose=0)\n")
    with pytest.raises(tapecli.TdfError, match=r"one scalar score per sample"):
        tapecli.run(source + "model.evaluate(x, y, sample_weight=np.ones((3, 2)), verbose=0)\n")


def test_a_dict_of_losses_for_a_subclassed_model_of_a_tuple_of_outputs_is_a_clear_error():
    with pytest.raises(tapecli.TdfError, match="a dict of losses names the outputs of a functional model"):
        tapecli.run(HEAD + "class Two(keras.Model):\n    def __init__(self):\n        super().__init__()\n"
                    "        self.d = keras.layers.Dense(1)\n    def call(self, x):\n        return self.d(x), self.d(x)\n"
                    "m = Two()\nm.compile(loss={'a': 'mse', 'b': 'mse'})\n"
                    "m.fit(np.ones((2, 1)), [np.ones((2, 1)), np.ones((2, 1))], verbose=0)\n")


def test_categorical_crossentropy_from_logits_has_tensorflow_s_gradient_for_labels_that_do_not_sum_to_one():
    logits = np.array([[0.5, -1.0, 2.0], [0.1, 0.2, 0.3]], np.float32)
    labels = np.array([[1.0, 1.0, 0.0], [0.0, 0.0, 0.0]], np.float32)
    r = tapecli.run(HEAD + f"z = tf.Variable({logits.tolist()})\ny = tf.constant({labels.tolist()})\n"
                    "with tf.GradientTape() as t:\n"
                    "    loss = tf.reduce_sum(keras.losses.categorical_crossentropy(y, z, from_logits=True))\n"
                    "g = t.gradient(loss, z)\n")
    soft = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    np.testing.assert_allclose(np.asarray(r["g"]), soft - labels, rtol=1e-6)     # TF's kernel: softmax - labels
    np.testing.assert_allclose(float(np.asarray(r["loss"])), -(labels * np.log(soft)).sum(), rtol=1e-6)


def test_a_functional_model_lists_its_layers_in_keras_s_order():
    r = tapecli.run(HEAD + "a = keras.Input(shape=(2,), name='a')\nb = keras.Input(shape=(2,), name='b')\n"
                    "ea = keras.layers.Dense(3, name='ea')(a)\nfa = keras.layers.Dense(3, name='fa')(ea)\n"
                    "eb = keras.layers.Dense(3, name='eb')(b)\nfb = keras.layers.Dense(3, name='fb')(eb)\n"
                    "out = keras.layers.Concatenate(name='c')([fa, fb])\nm = keras.Model([a, b], out)\n"
                    "names = [layer.name for layer in m.layers]\n")
    # by depth from the output (the inputs deepest), ties in the order a walk from the output meets them
    assert r["names"] == ["a", "b", "ea", "eb", "fa", "fb", "c"]


PROGRAM_LAYERS = """\
class Linear(keras.layers.Layer):
    def __init__(self, units=2, **kwargs):
        super().__init__(**kwargs)
        self.units = units

    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1], self.units), initializer="ones")

    def call(self, x):
        return tf.matmul(x, self.w)


class Twice(keras.Model):
    def __init__(self):
        super().__init__()
        self.inner = Linear(3)

    def call(self, x):
        return 2.0 * self.inner(x)


a, b, c = Linear(), Linear(), Linear(name="custom")
print(a.name, b.name, c.name, Twice().name, Twice().name)
s = keras.Sequential([keras.Input(shape=(4,)), Linear(3), keras.layers.Dense(1, kernel_initializer="ones")])
print([layer.name for layer in s.layers], [list(w.shape) for w in s.weights])
print(s(tf.ones((2, 4))).numpy().ravel().tolist())
s2 = keras.Sequential([Linear(2), Linear(1)])
print(s2(tf.ones((1, 3))).numpy().tolist(), [layer.name for layer in s2.layers], s2.get_layer(index=0) is s2.layers[0])
s2.compile(optimizer=keras.optimizers.SGD(0.01), loss="mse")
history = s2.fit(tf.ones((4, 3)), tf.zeros((4, 1)), epochs=2, verbose=0)
print([round(v, 4) for v in history.history["loss"]], s2.layers[1].w.numpy().ravel().tolist())
"""


def test_program_layers_take_keras_s_names_and_go_in_a_sequential_model_built_by_its_input_or_first_call():
    """Keras's automatic names (the class in snake case, counted per run, given names kept) and a Sequential
    model holding a program's layers: built from its Input or at its first call, listed as the program's own
    objects, compiled and fitted. The lines are what Keras 3 with TensorFlow 2.21 printed."""
    r = tapecli.run(HEAD + PROGRAM_LAYERS)
    assert r.output == """\
linear linear_1 custom twice twice_1
['linear_4', 'dense'] [[4, 3], [3, 1], [1]]
[12.0, 12.0]
[[6.0]] ['linear_5', 'linear_6'] True
[36.0, 11.419] [0.46157824993133545, 0.46157824993133545]
""".splitlines()


K1_PROGRAM = """\
import numpy as np
import tensorflow as tf

inputs = tf.keras.Input(shape=(3,), name="features")
x = tf.keras.layers.Dense(4, activation="relu", name="hidden")(inputs)
out1 = tf.keras.layers.Dense(1, name="reg")(x)
out2 = tf.keras.layers.Dense(2, activation="softmax", name="cls")(x)
model = tf.keras.Model(inputs=inputs, outputs=[out1, out2])
print([o.shape for o in model.outputs], [i.shape for i in model.inputs], model.output_names)
print(model.input.shape, len(model.output), model.count_params(), model.get_layer("hidden").count_params())
single = tf.keras.Model(inputs, out1)
print(single.output.shape, single.output_names)
p = single.predict(np.ones((3, 3), dtype="float32"), verbose=0)
print(type(p).__name__, p.dtype, p.shape)
both = model.predict(np.ones((2, 3), dtype="float32"), verbose=0)
print(type(both).__name__, [type(b).__name__ for b in both])
single.compile(optimizer="sgd", loss="mse")
h = single.fit(np.ones((4, 3)), np.zeros((4, 1)), epochs=2, verbose=0)
print([type(v).__name__ for v in h.history["loss"]])
try:
    tf.keras.layers.Dense(2).count_params()
except ValueError as e:
    print(e)
"""

# What TensorFlow 2.21 (Keras 3) printed for K1_PROGRAM.
K1_BY_TENSORFLOW = """\
[(None, 1), (None, 2)] [(None, 3)] ['reg', 'cls']
(None, 3) 2 31 16
(None, 1) ['reg']
ndarray float32 (3, 1)
list ['ndarray', 'ndarray']
['float', 'float']
You tried to call `count_params` on layer 'dense', but the layer isn't built. You can build it manually via: `layer.build(input_shape)`.
"""  # noqa: E501 (Keras's message)


@pytest.mark.parametrize("first_line", ["", "import os\n"], ids=["interpreter", "cpython"])
def test_functional_models_answer_inputs_outputs_and_count_params_and_predict_gives_numpy_arrays(first_line):
    """a functional model's inputs, outputs, input, output and output_names; count_params (refused before the
    layer is built, and Keras counts only unnamed layers for their names); predict's NumPy arrays; the history's
    Python floats, on both runners."""
    assert tapecli.run(first_line + K1_PROGRAM).output == K1_BY_TENSORFLOW.splitlines()


SM_PROGRAM = """\
import numpy as np
import tensorflow as tf

inputs = tf.keras.Input(shape=(3,), name="features")
x = tf.keras.layers.Dense(4, activation="relu", name="hidden")(inputs)
x = tf.keras.layers.BatchNormalization()(x)
out = tf.keras.layers.Dense(1)(x)
chain = tf.keras.Model(inputs, out)
chain.summary()
a = tf.keras.Input(shape=(2,))
b = tf.keras.Input(shape=(2,))
merged = tf.keras.layers.Concatenate()([a, b])
y1 = tf.keras.layers.Dense(1, name="reg")(merged)
y2 = tf.keras.layers.Dense(2, name="cls")(merged)
tf.keras.Model([a, b], [y1, y2]).summary()
unbuilt = tf.keras.Sequential([tf.keras.layers.Dense(2), tf.keras.layers.Dense(1)])
unbuilt.summary()
norm = tf.keras.layers.Normalization()
norm.adapt(np.array([[1.0, 2.0], [3.0, 4.0]], dtype="float32"))
seq = tf.keras.Sequential([tf.keras.Input(shape=(2,)), norm, tf.keras.layers.Dense(1)], name="with_norm")
seq.summary()
seq.compile(optimizer="adam", loss="mse")
seq.fit(np.ones((4, 2)), np.ones((4, 1)), epochs=1, verbose=0)
seq.summary()
lines = []
seq.summary(print_fn=lambda s: lines.append(s), line_length=60)
print(len(lines), lines[0].splitlines()[2])
"""

# What TensorFlow 2.21 (Keras 3) printed for SM_PROGRAM.
SM_BY_TENSORFLOW = """\
Model: "functional"
┏━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━┓
┃ Layer (type)                    ┃ Output Shape           ┃       Param # ┃
┡━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━┩
│ features (InputLayer)           │ (None, 3)              │             0 │
├─────────────────────────────────┼────────────────────────┼───────────────┤
│ hidden (Dense)                  │ (None, 4)              │            16 │
├─────────────────────────────────┼────────────────────────┼───────────────┤
│ batch_normalization             │ (None, 4)              │            16 │
│ (BatchNormalization)            │                        │               │
├─────────────────────────────────┼────────────────────────┼───────────────┤
│ dense (Dense)                   │ (None, 1)              │             5 │
└─────────────────────────────────┴────────────────────────┴───────────────┘
 Total params: 37 (148.00 B)
 Trainable params: 29 (116.00 B)
 Non-trainable params: 8 (32.00 B)
Model: "functional_1"
┏━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━┓
┃ Layer (type)        ┃ Output Shape      ┃    Param # ┃ Connected to      ┃
┡━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━┩
│ input_layer         │ (None, 2)         │          0 │ -                 │
│ (InputLayer)        │                   │            │                   │
├─────────────────────┼───────────────────┼────────────┼───────────────────┤
│ input_layer_1       │ (None, 2)         │          0 │ -                 │
│ (InputLayer)        │                   │            │                   │
├─────────────────────┼───────────────────┼────────────┼───────────────────┤
│ concatenate         │ (None, 4)         │          0 │ input_layer[0][0… │
│ (Concatenate)       │                   │            │ input_layer_1[0]… │
├─────────────────────┼───────────────────┼────────────┼───────────────────┤
│ reg (Dense)         │ (None, 1)         │          5 │ concatenate[0][0] │
├─────────────────────┼───────────────────┼────────────┼───────────────────┤
│ cls (Dense)         │ (None, 2)         │         10 │ concatenate[0][0] │
└─────────────────────┴───────────────────┴────────────┴───────────────────┘
 Total params: 15 (60.00 B)
 Trainable params: 15 (60.00 B)
 Non-trainable params: 0 (0.00 B)
Model: "sequential"
┏━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━┓
┃ Layer (type)                    ┃ Output Shape           ┃       Param # ┃
┡━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━┩
│ dense_1 (Dense)                 │ ?                      │   0 (unbuilt) │
├─────────────────────────────────┼────────────────────────┼───────────────┤
│ dense_2 (Dense)                 │ ?                      │   0 (unbuilt) │
└─────────────────────────────────┴────────────────────────┴───────────────┘
 Total params: 0 (0.00 B)
 Trainable params: 0 (0.00 B)
 Non-trainable params: 0 (0.00 B)
Model: "with_norm"
┏━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━┓
┃ Layer (type)                    ┃ Output Shape           ┃       Param # ┃
┡━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━┩
│ normalization (Normalization)   │ (None, 2)              │             5 │
├─────────────────────────────────┼────────────────────────┼───────────────┤
│ dense_3 (Dense)                 │ (None, 1)              │             3 │
└─────────────────────────────────┴────────────────────────┴───────────────┘
 Total params: 8 (36.00 B)
 Trainable params: 3 (12.00 B)
 Non-trainable params: 5 (24.00 B)
Model: "with_norm"
┏━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━┓
┃ Layer (type)                    ┃ Output Shape           ┃       Param # ┃
┡━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━┩
│ normalization (Normalization)   │ (None, 2)              │             5 │
├─────────────────────────────────┼────────────────────────┼───────────────┤
│ dense_3 (Dense)                 │ (None, 1)              │             3 │
└─────────────────────────────────┴────────────────────────┴───────────────┘
 Total params: 16 (72.00 B)
 Trainable params: 3 (12.00 B)
 Non-trainable params: 5 (24.00 B)
 Optimizer params: 8 (36.00 B)
1 ┃ Layer (type)             ┃ Output Shape      ┃   Param # ┃
"""


@pytest.mark.parametrize("first_line", ["", "import os\n"], ids=["interpreter", "cpython"])
def test_summary_prints_keras_s_table(first_line):
    """model.summary() as Keras 3 prints it without a terminal: a functional chain with its InputLayer, a model
    of two inputs and outputs with its connections, an unbuilt Sequential, a Normalization layer's weights,
    the optimizer's once it has stepped, and print_fn with line_length, on both runners."""
    assert tapecli.run(first_line + SM_PROGRAM).output == SM_BY_TENSORFLOW.splitlines()


KERAS_ALONE = """\
import numpy as np
import keras
from keras import ops

x = ops.convert_to_tensor(np.array([[1.0, 2.0], [3.0, 4.0]], dtype="float32"))
print(ops.shape(x), x.shape, ops.sum(x), ops.mean(x, axis=0))
y = ops.matmul(x, ops.transpose(x))
print(ops.convert_to_numpy(y))
model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(3, kernel_initializer="ones"), keras.layers.ReLU()])
out = model(x)
print(out.shape, keras.ops.convert_to_numpy(out).tolist())
print(model.count_params(), [l.name for l in model.layers])
keras.utils.set_random_seed(1)
print(keras.backend.backend(), keras.backend.floatx(), keras.backend.epsilon())
import keras
from keras import layers
d = layers.Dense(2)
d.build((None, 3))
print([w.shape for w in d.weights], d.kernel.shape)
"""

# What Keras 3 under TensorFlow 2.21 printed for KERAS_ALONE.
KERAS_ALONE_BY_KERAS = """\
(2, 2) (2, 2) tf.Tensor(10.0, shape=(), dtype=float32) tf.Tensor([2. 3.], shape=(2,), dtype=float32)
[[ 5. 11.]
 [11. 25.]]
(2, 3) [[3.0, 3.0, 3.0], [7.0, 7.0, 7.0]]
9 ['dense', 're_lu']
tensorflow float32 1e-07
[TensorShape([3, 2]), TensorShape([2])] (3, 2)
"""


@pytest.mark.parametrize("first_line", ["", "import os\n"], ids=["interpreter", "cpython"])
def test_a_program_importing_keras_alone_is_tensorflow_python(first_line):
    """No `import tensorflow`: keras.ops (shape as a tuple, sum/max/min as reductions, convert_to_numpy) and
    TensorFlow's printing of tensors and shapes."""
    output = tapecli.run(first_line + KERAS_ALONE).output
    assert "\n".join(output).splitlines() == KERAS_ALONE_BY_KERAS.splitlines()     # (a print of two lines: one entry)


KERAS2_TRAIN_STEP = """\
import numpy as np
import tensorflow as tf
from tensorflow import keras

class CustomModel(keras.Model):
    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compiled_loss(y, y_pred, regularization_losses=self.losses)
        trainable_vars = self.trainable_variables
        gradients = tape.gradient(loss, trainable_vars)
        self.optimizer.apply_gradients(zip(gradients, trainable_vars))
        self.compiled_metrics.update_state(y, y_pred)
        return {m.name: m.result() for m in self.metrics}

inputs = keras.Input(shape=(3,))
outputs = keras.layers.Dense(1, kernel_initializer="ones")(inputs)
model = CustomModel(inputs, outputs)
model.compile(optimizer="sgd", loss="mse", metrics=["mae"])
x = np.linspace(0, 1, 24, dtype="float32").reshape(8, 3)
y = x.sum(axis=1, keepdims=True) * 0.5
h = model.fit(x, y, epochs=2, batch_size=4, shuffle=False, verbose=0)
print({k: [round(float(v), 5) for v in vs] for k, vs in h.history.items()})
"""


def test_a_keras_2_train_step_runs_on_keras_3_s_deprecated_shims():
    """self.compiled_loss(y, y_pred) is compute_loss; self.compiled_metrics.update_state(y, y_pred) updates every
    metric, the loss tracker with y_pred (so 'loss' logs the mean prediction, as Keras 3 gives); each warns once.
    The history is what Keras 3 under TensorFlow 2.21 printed."""
    result = tapecli.run(KERAS2_TRAIN_STEP)
    assert result.output == ["{'mae': [0.74371, 0.68432], 'loss': [1.49371, 1.43432]}"]
    assert [w["message"].split("`")[1] for w in result.warnings] == ["model.compiled_loss()", "model.compiled_metrics()"]
