"""A name resolves under a TensorFlow or Keras module only where TensorFlow has it there (library/tf_names.txt,
recorded from TensorFlow 2.21 and Keras 3 by benchmarks/record_tf_names.py): ``tf.math.matmul`` is TensorFlow's
AttributeError, though tapecli has ``matmul`` as ``tf.matmul`` and ``tf.linalg.matmul``. And what a program
printed before its error is shown, as Python shows it."""
from __future__ import annotations

import pytest
from conftest import cli
from conformance.test_tf_surface import SURFACE

from tapecli.library.scope import lacking, public_names

NAMES = public_names()


def test_the_recorded_modules_hold_every_symbol_of_the_surface():
    """tests/data/tf_surface.tsv and library/tf_names.txt come from the same TensorFlow: each surface symbol is a
    name of its module (the surface spells Keras as ``tf.keras.``)."""
    missing = [s for s in SURFACE if s.rpartition(".")[2] not in NAMES.get(s.rpartition(".")[0], ())]
    assert not missing


@pytest.mark.parametrize("path, attr", [("tf", "matmul"), ("tf.linalg", "matmul"), ("tf.nn", "softmax"),
                                        ("tf.math", "softmax"), ("tf.keras.layers", "Dense"),
                                        ("keras.ops", "matmul"), ("tf.random", "normal")])
def test_a_name_tensorflow_has_resolves(path, attr):
    assert lacking(path, attr) is None


@pytest.mark.parametrize("path, attr, hint", [
    ("tf.math", "matmul", "tf.matmul, tf.linalg.matmul"),
    ("tf.nn", "reduce_sum", "tf.reduce_sum, tf.math.reduce_sum"),
    ("tf", "relu", "tf.nn.relu"),
    ("keras.layers", "Adam", "keras.optimizers.Adam"),
    ("tf", "not_a_name", None),
])
def test_a_name_tensorflow_lacks_is_its_error_with_where_it_is(path, attr, hint):
    message, found = lacking(path, attr)
    module = "tensorflow" + path[2:] if path.startswith("tf") else path
    assert message == f"module '{module}' has no attribute '{attr}'"
    assert (found is None) if hint is None else found.startswith(f"TensorFlow has it as {hint}")


def test_a_module_tapecli_does_not_record_is_not_checked():
    assert lacking("tf.raw_ops", "MatMul") is None and lacking("np", "relu") is None


@pytest.mark.parametrize("on", ["0", "1"])
def test_tf_math_matmul_fails_on_both_runners_after_what_it_printed(tmp_path, monkeypatch, on):
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", on)
    prog = tmp_path / "p.py"
    prog.write_text("import tensorflow as tf\nx = tf.constant([[2.0]])\nprint(tf.linalg.matmul(x, x).numpy())\n"
                    "print(tf.math.matmul(x, x))\n")
    r = cli("run", str(prog))
    assert r.code == 3 and r.stdout.splitlines()[0] == "[[4.]]"
    assert "p.py:4:7" in r.stderr and "module 'tensorflow.math' has no attribute 'matmul'" in r.stderr


def test_hasattr_of_a_tensorflow_module_on_cpython(tmp_path):
    """A program the interpreter cannot run (a ``try``) that holds a module as a value runs on CPython, where
    ``hasattr`` asks TensorFlow's names (TensorFlow 2.21 prints ``False True``)."""
    prog = tmp_path / "p.py"
    prog.write_text("import tensorflow as tf\ntry:\n    m = tf.math\n    print(hasattr(m, 'matmul'), "
                    "hasattr(tf.linalg, 'matmul'))\nexcept ValueError:\n    pass\n")
    r = cli("run", "--json", str(prog))
    assert r.code == 0 and r.json["output"] == ["False True"]


def test_an_import_only_cpython_gives_says_why_the_program_is_not_on_cpython(tmp_path, monkeypatch):
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", "auto")
    prog = tmp_path / "p.py"
    prog.write_text("import random\nimport tensorflow as tf\nclass M(tf.keras.Sequential):\n    pass\n")
    r = cli("run", str(prog))
    assert r.code == 3 and "programs cannot import random" in r.stderr
    assert "CPython runs this import in a TensorFlow program, but not in this one: line 3 derives the class M" in r.stderr


@pytest.mark.parametrize("source", ["print('before')\nx = 1 // 0\n",                        # CPython
                                    "print('before')\nvar x = 1.0\ny = x + unknown_name\n"])  # the interpreter
def test_output_printed_before_an_error_is_shown(tmp_path, source):
    prog = tmp_path / ("p.py" if "var" not in source else "p.tdf")
    prog.write_text(source)
    r = cli("run", str(prog))
    assert r.code == 3 and r.stdout == "before\n" and "Error" in r.stderr
    r = cli("run", "--json", str(prog))
    assert r.code == 3 and r.json["ok"] is False and r.json["output"] == ["before"]
    r = cli("grad", str(prog))
    assert r.code == 3 and r.stdout == "" and r.stderr.startswith("before\n")
