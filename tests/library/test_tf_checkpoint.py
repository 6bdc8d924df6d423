"""tf.train.Checkpoint kept in the run's memory (library/tf_checkpoint.py): what TensorFlow's values are is in
tests/data/tf_programs_checkpoint.json (recorded from TensorFlow, run on both runners); these pin what only
tapecli has: a run's checkpoints are its own, and a path it did not save is TensorFlow's error with a hint."""
from __future__ import annotations

import pytest

import tapecli
from tapecli.errors import TdfAssertionError, TdfValueError

SAVE = "import tensorflow as tf\nv = tf.Variable([1.0, 2.0])\nckpt = tf.train.Checkpoint(v=v)\np = ckpt.save('./c/ck')\n"


@pytest.mark.parametrize("on_cpython", ["0", "1"])
def test_a_runs_checkpoints_are_its_own(on_cpython, monkeypatch):
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", on_cpython)
    assert tapecli.run(SAVE + "latest = tf.train.latest_checkpoint('./c')\n").values["latest"] == "./c/ck-1"
    with pytest.raises(TdfValueError, match="Failed to find any matching files for ./c/ck-1") as caught:
        tapecli.run("import tensorflow as tf\nckpt = tf.train.Checkpoint(v=tf.Variable([1.0, 2.0]))\n"
                    "ckpt.restore('./c/ck-1')\n")
    assert "run's memory" in caught.value.hint
    assert tapecli.run("import tensorflow as tf\nlatest = tf.train.latest_checkpoint('./c')\n").values["latest"] is None


def test_a_restore_into_another_shape_is_refused_and_an_unbound_variable_fails_assert_consumed():
    with pytest.raises(TdfValueError, match=r"incompatible tensor with shape \[2\] when attempting to restore "
                                            r"variable with shape \[3\]"):
        tapecli.run(SAVE + "tf.train.Checkpoint(v=tf.Variable([1.0, 2.0, 3.0])).restore(p)\n")
    with pytest.raises(TdfAssertionError, match="Found 1 Python objects that were not bound"):
        tapecli.run(SAVE + "tf.train.Checkpoint(v=tf.Variable([0.0, 0.0]), w=tf.Variable(1.0)).restore(p)"
                           ".assert_consumed()\n")
