"""tf.data in memory (tapecli/library/data.py): each program is TensorFlow Python as a user writes it; the
expected values were recorded by running the same program in TensorFlow 2.21 (tf.data is not among the modules of
tests/data/tf_surface.tsv, so these rows live here rather than in tests/tf_expectations)."""
from __future__ import annotations

import numpy as np
import pytest

import tapecli
from tapecli.errors import TdfError

CASES = {
    'slices_tuple_batch': ('''import tensorflow as tf
x = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
y = tf.constant([0, 1, 1])
ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(2)
out = []
for xb, yb in ds:
    out.append(float(tf.reduce_sum(xb) * 10.0 + tf.cast(tf.reduce_sum(yb), tf.float32)))
dropped = [b for b in tf.data.Dataset.from_tensor_slices(y).batch(2, drop_remainder=True)]
''',
        {'dropped': [[0, 1]], 'out': [101.0, 111.0]}),
    'range_skip_take_repeat': ('''import tensorflow as tf
l = [v for v in tf.data.Dataset.range(5).skip(1).take(3)]
r = [v for v in tf.data.Dataset.range(2, 8, 2).repeat(2)]
inf = [v for v in tf.data.Dataset.range(3).repeat().take(7)]
e = [[int(i), int(v)] for i, v in tf.data.Dataset.range(10, 12).enumerate(start=5)]
dt = [v.dtype == tf.int64 for v in tf.data.Dataset.range(1)]
dt += [v.dtype == tf.int32 for v in tf.data.Dataset.range(1, output_type=tf.int32)]
''',
        {'dt': [True, True],
         'e': [[5, 10], [6, 11]],
         'inf': [0, 1, 2, 0, 1, 2, 0],
         'l': [1, 2, 3],
         'r': [2, 4, 6, 2, 4, 6]}),
    'map_filter_dict': ('''import tensorflow as tf
ds = tf.data.Dataset.from_tensor_slices([1.0, 2.0, 3.0])
m = [v for v in ds.map(lambda v: v * 2.0).repeat(2).batch(4, drop_remainder=True)]
d = [[int(e["a"]), float(e["b"])] for e in tf.data.Dataset.from_tensor_slices({"a": [1, 2], "b": [3.0, 4.0]})]
p = [v for v in tf.data.Dataset.from_tensor_slices((tf.constant([1.0, 2.0]), tf.constant([10.0, 20.0]))).map(lambda a, b: a + b)]
f = [v for v in tf.data.Dataset.range(10).filter(lambda v: v % 3 == 0)]
''',
        {'d': [[1, 3.0], [2, 4.0]], 'f': [0, 3, 6, 9], 'm': [[2.0, 4.0, 6.0, 2.0]], 'p': [11.0, 22.0]}),
    'zip_from_tensors_iter': ('''import tensorflow as tf
z = [[int(a), int(b)] for a, b in tf.data.Dataset.zip((tf.data.Dataset.range(3), tf.data.Dataset.range(10, 12)))]
ft = [v for v in tf.data.Dataset.from_tensors([1.0, 2.0]).prefetch(1).cache()]
first = next(iter(tf.data.Dataset.from_tensor_slices([[1, 2], [3, 4]])))
npit = [v for v in tf.data.Dataset.from_tensor_slices([4, 5]).shuffle(1).as_numpy_iterator()]
''',
        {'first': [1, 2], 'ft': [[1.0, 2.0]], 'npit': [4, 5], 'z': [[0, 10], [1, 11]]}),
    'training_loop': ('''import tensorflow as tf
x = tf.constant([[1.0], [2.0], [3.0], [4.0]])
y = tf.constant([[2.0], [4.0], [6.0], [8.0]])
w = tf.Variable([[0.5]])
ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(3)
losses = []
for epoch in range(2):
    for xb, yb in ds:
        with tf.GradientTape() as t:
            loss = tf.reduce_mean((tf.matmul(xb, w) - yb) ** 2)
        g = t.gradient(loss, w)
        w.assign_sub(0.05 * g)
        losses.append(float(loss))
wf = w
''',
        {'losses': [10.5, 10.239998817443848, 1.075200080871582, 1.0485763549804688], 'wf': [[1.8464000225067139]]}),
}


def _plain(value):
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return np.asarray(getattr(value, "value", value)).tolist()


@pytest.mark.parametrize("name", list(CASES))
def test_tapecli_gives_tensorflows_elements(name):
    program, expected = CASES[name]
    values = tapecli.run(program).values
    for key, want in expected.items():
        got = _plain(values[key])
        if np.asarray(want).dtype.kind == "f":
            np.testing.assert_allclose(np.asarray(got, dtype=float), np.asarray(want, dtype=float), rtol=1e-6,
                                       err_msg=f"{name}: {key}")
        else:
            assert got == want, f"{name}: {key}: {got} != {want}"


def test_elements_keep_tensorflows_dtypes():
    v = tapecli.run("import tensorflow as tf\n"
                    "ds = tf.data.Dataset.from_tensor_slices((tf.constant([1.0, 2.0]), tf.constant([3, 4])))\n"
                    "a, b = next(iter(ds))\nr = next(iter(tf.data.Dataset.range(3)))\n").values
    assert v["a"].dtype == np.float32 and v["b"].dtype == np.int32 and v["r"].dtype == np.int64


def test_a_dataset_is_a_constant_to_the_tape():
    v = tapecli.run("import tensorflow as tf\nx = tf.Variable(2.0)\nwith tf.GradientTape() as t:\n"
                    "    ds = tf.data.Dataset.from_tensors(x * 3.0).map(lambda e: e * x)\n"
                    "    y = next(iter(ds)) + x\ng = t.gradient(y, x)\n").values
    assert v["y"] == 14.0 and v["g"] == 1.0          # TensorFlow: the dataset's values are constants


REFUSED = {
    "ds = tf.data.Dataset.range(5).shuffle(0)\n": "buffer_size must be greater than zero",
    "ds = tf.data.Dataset.range(5).batch(0)\n": "batch_size must be positive",
    "ds = tf.data.Dataset.from_tensor_slices(1.0)\n": "at least one dimension",
    "ds = tf.data.Dataset.range(5).window(0)\n": "must be positive",
}


def _message(src: str) -> str | None:
    try:
        tapecli.run("import tensorflow as tf\n" + src)
    except TdfError as e:
        return e.message
    return None


def test_what_tapecli_cannot_do_is_a_clear_error():
    messages = {src: _message(src) for src in REFUSED}
    assert all(words in (messages[src] or "") for src, words in REFUSED.items()), messages


def test_shuffle_is_a_buffered_shuffle_drawing_from_the_runs_generator():
    """Dataset.shuffle as TensorFlow's algorithm (a buffer of buffer_size, each element drawn from it): every
    element once; a buffer of one keeps the order, a small buffer moves an element at most that far ahead; a new
    order each iteration unless reshuffle_each_iteration=False; the same orders on every run (the draws are the
    run's generator's, or the seed's: not TensorFlow's stream, so the order is another than TensorFlow's)."""
    source = ("import tensorflow as tf\nds = tf.data.Dataset.range(20)\n"
              "a = [int(v) for v in ds.shuffle(20)]\nb = [int(v) for v in ds.shuffle(20)]\n"
              "one = [int(v) for v in ds.shuffle(1)]\nsmall = [int(v) for v in ds.shuffle(3)]\n"
              "s = ds.shuffle(20, seed=7)\nfirst, second = [int(v) for v in s], [int(v) for v in s]\n"
              "f = ds.shuffle(20, seed=7, reshuffle_each_iteration=False)\nthird, fourth = list(f), list(f)\n")
    v = tapecli.run(source).values
    again = tapecli.run(source).values
    assert sorted(v["a"]) == list(range(20)) and v["a"] != list(range(20)) and v["a"] != v["b"]
    assert v["one"] == list(range(20))
    assert sorted(v["small"]) == list(range(20))
    assert all(value <= position + 2 for position, value in enumerate(v["small"]))     # (3 in the buffer)
    assert v["first"] != v["second"] and sorted(v["first"]) == list(range(20))
    assert [int(t) for t in v["third"]] == [int(t) for t in v["fourth"]]
    assert v["a"] == again["a"] and v["first"] == again["first"]


FIT = """import numpy as np
import tensorflow as tf
x = np.linspace(-1, 1, 24, dtype="float32").reshape(8, 3)
y = x.sum(axis=1, keepdims=True)
model = tf.keras.Sequential([tf.keras.layers.Dense(2, activation="tanh"), tf.keras.layers.Dense(1)])
model.compile(optimizer="sgd", loss="mse", metrics=["mae"])
"""


def test_fit_evaluate_and_predict_take_a_dataset_of_batches_as_keras_does():
    """A dataset's elements are the batches (Keras: batch_size and shuffle do not apply): fitting on
    ``from_tensor_slices((x, y)).batch(4)`` gives the weights that fitting the arrays in the same batches gives,
    and what evaluate and the history hold are Python numbers a program compares."""
    on_arrays = tapecli.run(FIT + "h = model.fit(x, y, batch_size=4, epochs=3, shuffle=False, verbose=0)\n"
                            "w = model.get_weights()\nr = model.evaluate(x, y, verbose=0)\np = model.predict(x)\n")
    on_dataset = tapecli.run(FIT + "ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(4)\n"
                             "h = model.fit(ds, epochs=3, verbose=0)\nw = model.get_weights()\n"
                             "r = model.evaluate(ds, verbose=0)\np = model.predict(ds.map(lambda a, b: a))\n"
                             "ok = h.history['loss'][-1] < h.history['loss'][0] and 0.0 <= r[1] and min(r) >= 0\n")
    for a, b in zip(on_arrays.values["w"], on_dataset.values["w"]):
        np.testing.assert_array_equal(a, b)
    # (evaluate's loss averages one batch of the arrays against three of the dataset: sums in other orders)
    np.testing.assert_allclose(on_arrays.values["r"], on_dataset.values["r"], rtol=1e-6)
    np.testing.assert_array_equal(on_arrays.values["p"], on_dataset.values["p"])
    assert bool(on_dataset.values["ok"])
    with pytest.raises(TdfError) as e:
        tapecli.run(FIT + "ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(4)\nmodel.fit(ds, y, verbose=0)\n")
    assert "not supported when using a dataset" in e.value.message


D1_PROGRAM = """\
import tensorflow as tf

xs = tf.range(12)
ds = tf.data.Dataset.from_tensor_slices((xs, xs % 3)).map(lambda x, y: (tf.cast(x, tf.float32) / 10.0, tf.one_hot(y, 3))).batch(4)
total = ds.reduce(0.0, lambda acc, el: acc + tf.reduce_sum(el[0]))
print(float(total), total.dtype)
print(ds.cardinality().numpy(), len(list(ds.unbatch().as_numpy_iterator())))
print(list(tf.data.Dataset.range(10).filter(lambda v: v % 2 == 0).map(lambda v: v * v).as_numpy_iterator()))
print(list(tf.data.Dataset.range(10).take_while(lambda v: v < 4).as_numpy_iterator()))
nested = tf.data.Dataset.range(3).flat_map(lambda v: tf.data.Dataset.range(v))
print([int(v) for v in nested])
print(list(tf.data.Dataset.range(6).apply(lambda d: d.skip(2).take(2)).as_numpy_iterator()))
counts = tf.data.Dataset.range(5).reduce(tf.constant(0, tf.int64), lambda s, v: s + v)
print(counts.numpy())
"""

# What TensorFlow 2.21 (Keras 3) printed for D1_PROGRAM.
D1_BY_TENSORFLOW = """\
6.600000381469727 <dtype: 'float32'>
3 12
[np.int64(0), np.int64(4), np.int64(16), np.int64(36), np.int64(64)]
[np.int64(0), np.int64(1), np.int64(2), np.int64(3)]
[0, 0, 1]
[np.int64(2), np.int64(3)]
10
"""


@pytest.mark.parametrize("first_line", ["", "import os\n"], ids=["interpreter", "cpython"])
def test_reduce_unbatch_take_while_flat_map_apply_and_numpy_elements_print_as_tensorflows(first_line):
    """reduce (the element whole, the state converted as TensorFlow converts it), unbatch, take_while, flat_map,
    apply, and as_numpy_iterator's NumPy values, on both runners."""
    assert tapecli.run(first_line + D1_PROGRAM).output == D1_BY_TENSORFLOW.splitlines()


# keras.utils.timeseries_dataset_from_array and a tuple of specs printed; what TensorFlow 2.21 + Keras 3.15 printed.
TIMESERIES = """\
import numpy as np
import tensorflow as tf
import keras
data = np.arange(40, dtype="float64").reshape(20, 2) / 4
targets = np.arange(20) * 10
ds = keras.utils.timeseries_dataset_from_array(data, targets, sequence_length=4, sequence_stride=3, sampling_rate=2,
                                               batch_size=3, start_index=1, end_index=18)
print(ds.element_spec)
parts = [(x, y) for x, y in ds]
print([tuple(x.shape) for x, _ in parts], parts[0][0].dtype, parts[0][1].dtype)
x = tf.concat([p[0] for p in parts], 0)
y = tf.concat([p[1] for p in parts], 0)
print(x[0].numpy(), y.numpy())
only = keras.utils.timeseries_dataset_from_array(np.arange(6), None, sequence_length=3, batch_size=None)
print([w.numpy().tolist() for w in only])
print(tf.data.Dataset.from_tensor_slices((np.zeros((2, 3)), np.zeros(2))).batch(2).element_spec)
"""
TIMESERIES_PRINTED = """\
(TensorSpec(shape=(None, None, 2), dtype=tf.float64, name=None), TensorSpec(shape=(None,), dtype=tf.int64, name=None))
[(3, 4, 2), (1, 4, 2)] <dtype: 'float64'> <dtype: 'int64'>
[[0.5  0.75]
 [1.5  1.75]
 [2.5  2.75]
 [3.5  3.75]] [ 10  40  70 100]
[[0, 1, 2], [1, 2, 3], [2, 3, 4], [3, 4, 5]]
(TensorSpec(shape=(None, 3), dtype=tf.float64, name=None), TensorSpec(shape=(None,), dtype=tf.float64, name=None))
"""


@pytest.mark.parametrize("on_cpython", ["0", "1"])
def test_timeseries_windows_are_kerass(on_cpython, monkeypatch):
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", on_cpython)
    assert "\n".join(tapecli.run(TIMESERIES).output) == TIMESERIES_PRINTED.rstrip("\n")


def test_rejection_resample_warns_as_tensorflow_where_it_rejects_half_or_more():
    """TensorFlow's filter prints the proportion rejected, the initial distribution and the acceptance
    probabilities (stderr, recorded from TensorFlow 2.21); tapecli gives it as a warning, once."""
    source = ("import tensorflow as tf\nds = tf.data.Dataset.range(60).rejection_resample(\n"
              "    lambda x: tf.cast(x % 3 == 0, tf.int32), [0.5, 0.5], initial_dist=[2 / 3, 1 / 3], seed=3)\n"
              "n = len([c for c, _ in ds])\n")
    [warning] = tapecli.api.run_source(source, "p.py").warnings
    assert warning["message"] == ("Proportion of examples rejected by sampler is high: "
                                  "[0.666666687][0.666666687 0.333333343][0 1]")
