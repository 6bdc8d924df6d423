"""Every limit on every path (reliability round 4, F1-F3): the step and time budget is charged wherever Python
iterates on the program's behalf (Keras fit/evaluate/predict, tf.data sources, whatever consumes them), and
NumPy's results in TensorFlow programs are weighed before NumPy allocates them. Each test runs the real
command line on a TensorFlow program and reads the error's kind, line and words; the memory cases read the
process's own peak resident size too (nothing refused was ever allocated)."""
from __future__ import annotations

import sys

import pytest

from conftest import cli
from reliability.test_reliability_cli import _write
from reliability.test_reliability_round3 import _peak_run

HEAD = "import tensorflow as tf\nimport numpy as np\nimport keras\n"      # the program's lines 1-3
FIT = ("m = keras.Sequential([keras.layers.Dense(1)])\nm.compile(optimizer='sgd', loss='mse')\n"
       "h = m.fit(tf.ones([8, 2]), tf.ones([8, 1]), epochs=1000000000, verbose=0)\n")
REPEAT = "ds = tf.data.Dataset.from_tensor_slices([1.0, 2.0]).repeat()\n"

# (program after HEAD, the line of the endless work)
ENDLESS = {
    "fit": (FIT, 6),
    "fit of no rows": (FIT.replace("[8, ", "[0, "), 6),
    "evaluate": (FIT.replace("h = m.fit(", "h = m.evaluate(").replace(", epochs=1000000000", ", batch_size=1")
                 .replace("[8, ", "[10000000, "), 6),
    "predict": ("m = keras.Sequential([keras.layers.Dense(1)])\np = m.predict(tf.ones([10000000, 2]), batch_size=1)\n",
                5),
    "list": (REPEAT + "l = list(ds)\n", 5),
    "sorted": (REPEAT + "l = sorted(ds)\n", 5),
    "dict(zip)": (REPEAT + "d = dict(zip(ds, ds))\n", 5),
    "comprehension": (REPEAT + "l = [v * 2.0 for v in ds]\n", 5),
    "skip": (REPEAT + "s = ds.skip(10**12)\nfor v in s:\n    pass\n", 6),
    # (the filter's function runs when the steps run out: its line, CPython's innermost)
    "filter": (REPEAT + "f = ds.filter(lambda v: v > 5.0)\nn = next(iter(f))\n", 5),
    # (an endless repeat's cardinality is INFINITE at once, as TensorFlow's, and a take of it counted ahead; a
    # shard of that take is counted by running it)
    "cardinality": (REPEAT + "n = ds.take(10**12).shard(1, 0).cardinality()\n", 5),
}


@pytest.mark.parametrize("case", sorted(ENDLESS))
def test_endless_work_on_the_programs_behalf_ends_at_max_steps(tmp_path, case):
    source, line = ENDLESS[case]
    r = cli("run", "--json", "--max-steps", "300", _write(tmp_path, HEAD + source, "p.py"))
    assert r.code == 3 and r.json["error"]["kind"] == "LimitError", r.stdout + r.stderr
    assert "more than 300 loop steps" in r.json["error"]["message"] and r.json["error"]["line"] == line, r.json


@pytest.mark.parametrize("case", ["fit", "list", "sorted"])
def test_endless_work_on_the_programs_behalf_ends_at_the_time_limit(tmp_path, case):
    source, line = ENDLESS[case]
    r = cli("run", "--json", _write(tmp_path, HEAD + source, "p.py"), env={"TAPECLI_MAX_SECONDS": "1"})
    assert r.code == 3 and r.json["error"]["kind"] == "LimitError", r.stdout + r.stderr
    assert "longer than 1 s" in r.json["error"]["message"] and r.json["error"]["line"] == line, r.json


def test_a_dataset_and_a_fit_within_the_steps_run_as_before(tmp_path):
    """Each element a source yields and each batch and epoch is a step: work within --max-steps is untouched."""
    source = (HEAD + "ds = tf.data.Dataset.range(10).batch(3)\nl = [int(tf.reduce_sum(b)) for b in ds]\n"
              "m = keras.Sequential([keras.layers.Dense(1)])\nm.compile(optimizer='sgd', loss='mse')\n"
              "h = m.fit(tf.ones([8, 2]), tf.ones([8, 1]), epochs=3, batch_size=4, verbose=0)\n"
              "n = len(h.history['loss'])\n")
    r = cli("run", "--json", "--max-steps", "300", _write(tmp_path, source, "p.py"))
    assert r.code == 0, r.stdout + r.stderr
    assert r.json["values"]["l"] == [3, 12, 21, 9] and r.json["values"]["n"] == 3


@pytest.mark.skipif(sys.platform != "linux", reason="VmHWM in /proc is Linux's")
@pytest.mark.parametrize("source", [
    "ds = tf.data.Dataset.range(10**12).batch(10**9)\nfor v in ds:\n    pass\n",
    "ds = tf.data.Dataset.range(10**9).batch(200000000)\nfor v in ds:\n    n = 0\n    break\n",
])
def test_a_huge_tf_data_batch_is_refused_while_it_is_gathered(tmp_path, source):
    code, doc, peak = _peak_run(tmp_path, HEAD + source)
    assert code == 3 and doc["error"]["kind"] == "LimitError", doc
    assert doc["error"]["line"] == 5 and "memory limit" in doc["error"]["message"], doc["error"]
    assert peak < 400_000_000, peak


@pytest.mark.skipif(sys.platform != "linux", reason="VmHWM in /proc is Linux's")
@pytest.mark.parametrize("source, words", [
    ("x = np.repeat(np.arange(3, dtype='int8'), 100000000)\n", "np.repeat()'s result"),
    ("x = np.full((20000, 20000), 1.0)\n", "np.full()'s result"),
    ("np.random.seed(0)\nx = np.random.choice(10**8, 3, replace=False)\n", "np.random.choice()'s result"),
    ("x = np.full(2, 1, dtype='V1500000000')\n", "np.full()'s result"),
    ("x = np.arange(0.0, 1.0, 1e-12)\n", "np.arange()'s result"),
    ("x = np.arange(10).astype('U100000000')\n", "x.astype()'s result"),
    ("x = tf.zeros([3000000])\nl = x.numpy().tolist()\n", "tolist()'s"),
    ("a = tf.linalg.LinearOperatorScaledIdentity(2147483648, [1.0, 2.0])\n", "np.ones()'s result"),
    ("a = tf.linalg.LinearOperatorZeros(100000)\n", "np.zeros()'s result"),
    ("a = keras.metrics.AUC(num_thresholds=30000000)\n", "num_thresholds' thresholds"),
    ("a = keras.metrics.PrecisionAtRecall(0.5, num_thresholds=10**9)\n", "num_thresholds' thresholds"),
    ("p = tf.dynamic_partition([0, 0], [0, 1], 2147483648)\n", "dynamic_partition's list of partitions"),
])
def test_numpy_results_and_keras_thresholds_are_weighed_before_they_are_made(tmp_path, source, words):
    code, doc, peak = _peak_run(tmp_path, HEAD + source)
    assert code == 3 and doc["error"]["kind"] == "LimitError", doc
    assert doc["error"]["line"] == HEAD.count("\n") + source.count("\n"), doc["error"]
    assert words in doc["error"]["message"], doc["error"]
    assert peak < 400_000_000, peak


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_DATA and VmHWM are Linux's")
@pytest.mark.parametrize("head", [HEAD, "import numpy as np\n"], ids=["tensorflow", "python"])
@pytest.mark.parametrize("make", ["np.ndarray((20000, 20000))", "type(np.zeros(1))((20000, 20000))"])
def test_an_allocation_no_gate_weighs_fails_at_the_data_bound(tmp_path, head, make):
    """NumPy's class called directly allocates before any gate sees its shape: the command line's bound on the
    data segment (twice the cap) makes it NumPy's MemoryError, the program's error at its line, and nothing is
    ever allocated past the cap."""
    code, doc, peak = _peak_run(tmp_path, head + f"a = {make}\na.fill(1.0)\n")
    assert code == 3 and doc["error"]["kind"] == "MemoryError", doc
    assert doc["error"]["line"] == head.count("\n") + 1, doc["error"]
    assert peak < 400_000_000, peak


def test_a_generators_choice_of_a_large_population_is_numpys(tmp_path, monkeypatch):
    """NumPy's Generator picks a few of 10**8 without making them (the legacy np.random.choice permutes them all,
    which is weighed first): CPython's run gives NumPy's own draw."""
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", "1")
    r = cli("run", "--json", _write(tmp_path, HEAD + "g = np.random.default_rng(0)\nx = g.choice(10**8, 3, replace=False)\n"
                                    "n = len(set(x.tolist()))\n", "p.py"))
    assert r.code == 0 and r.json["values"]["n"] == 3, r.stdout + r.stderr


def test_numpy_results_under_the_caps_are_made(tmp_path):
    source = HEAD + ("a = np.repeat(np.arange(3), 4)\nb = np.full((2, 3), 1.5)\nc = np.arange(5).astype('float32')\n"
                     "l = tf.ones([4]).numpy().tolist()\nnp.random.seed(0)\nd = np.random.choice(10, 3, replace=False)\n"
                     "n = [int(np.sum(a)), float(np.sum(b)), float(np.sum(c)), len(l), len(d)]\n")
    r = cli("run", "--json", _write(tmp_path, source, "p.py"))
    assert r.code == 0, r.stdout + r.stderr
    assert r.json["values"]["n"] == [12, 9.0, 10.0, 4, 3]


def test_cpython_holds_numpys_object_arrays(tmp_path, monkeypatch):
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", "1")
    r = cli("run", "--json", _write(tmp_path, HEAD + "x = np.arange(3).astype(dtype='O')\nn = [type(v).__name__ for v in x]\n",
                                    "p.py"))
    assert r.code == 0 and r.json["values"]["n"] == ["int", "int", "int"], r.stdout + r.stderr


@pytest.mark.parametrize("source, on_cpython", [("x = np.full(2, 1, dtype='V100')\n", "0"),
                                                ("x = np.arange(10).astype(dtype='O')\n", "0")])
def test_numpy_is_never_asked_for_an_array_no_program_value_can_hold(tmp_path, source, on_cpython, monkeypatch):
    """Under the caps, a record or object dtype is refused on the interpreter before NumPy fills it (not after);
    NumPy's strings are NumPy values, weighed as any other
    (test_numpy_results_and_keras_thresholds_are_weighed_before_they_are_made). CPython's run holds NumPy's record
    and object arrays as a Python program does (test_cpython_holds_numpys_object_arrays)."""
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", on_cpython)
    r = cli("run", "--json", _write(tmp_path, HEAD + source, "p.py"), env={"TAPECLI_MAX_MEMORY": "4e9"})
    assert r.code == 3 and r.json["error"]["kind"] == "TypeError", r.stdout + r.stderr
    assert r.json["error"]["line"] == 4 and "tapecli has no" in r.json["error"]["message"], r.json
