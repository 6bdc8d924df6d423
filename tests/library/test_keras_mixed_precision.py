"""Keras's mixed precision and bfloat16 where tapecli refuses or must keep run state: the programs that compute are
tests/data/tf_programs_mixed_precision.json's (recorded from TensorFlow 2.21 and Keras 3.15), the float16 and
bfloat16 bits tests/kernels/test_tf_half.py's."""
from __future__ import annotations

import pytest

from tapecli import api
from tapecli.errors import TdfError

HEAD = "import tensorflow as tf\nimport keras\n"


def run(source, monkeypatch, on_cpython="auto"):
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", on_cpython)
    return api.run_source(HEAD + source, "p.py").output


@pytest.mark.parametrize("on_cpython", ["0", "1"])
def test_a_bfloat16_op_whose_bits_tapecli_does_not_check_is_refused_at_its_line(monkeypatch, on_cpython):
    with pytest.raises(TdfError) as e:
        run("x = tf.cast(tf.constant([[1.0, 2.0]]), tf.bfloat16)\nprint(tf.nn.relu(x).dtype)\n"
            "y = tf.nn.softmax(x)\n", monkeypatch, on_cpython)
    assert (e.value.kind, e.value.line) == ("TypeError", 5)
    assert "softmax of a bfloat16 tensor is not in tapecli" in e.value.message
    assert e.value.hint == "tf.cast(x, tf.float32) first" and e.value.output == ["<dtype: 'bfloat16'>"]


@pytest.mark.parametrize("on_cpython", ["0", "1"])
def test_a_layer_not_checked_under_a_mixed_policy_is_refused(monkeypatch, on_cpython):
    with pytest.raises(TdfError) as e:
        run("keras.mixed_precision.set_global_policy('mixed_float16')\nn = keras.layers.LayerNormalization()\n",
            monkeypatch, on_cpython)
    assert e.value.line == 4 and "LayerNormalization under the mixed precision policy 'mixed_float16'" in \
        e.value.message and e.value.hint == 'give this layer dtype="float32"'
    out = run("keras.mixed_precision.set_global_policy('mixed_float16')\n"
              "n = keras.layers.LayerNormalization(dtype='float32')\nprint(n.compute_dtype)\n", monkeypatch, on_cpython)
    assert out == ["float32"]


def test_the_loss_scale_optimizer_refuses_as_keras_does(monkeypatch):
    with pytest.raises(TdfError, match="no longer supports `dynamic=False`"):
        run("keras.optimizers.LossScaleOptimizer(keras.optimizers.SGD(), dynamic=False)\n", monkeypatch)
    with pytest.raises(TdfError, match="LossScaleOptimizer wraps an optimizer"):
        run("keras.mixed_precision.LossScaleOptimizer('sgd')\n", monkeypatch)
    with pytest.raises(TdfError, match="Cannot convert 'mixed_half' to a mixed precision DTypePolicy"):
        run("keras.mixed_precision.set_global_policy('mixed_half')\n", monkeypatch)
    with pytest.raises(TdfError, match="a mixed precision policy"):
        run("keras.layers.Dense(2, dtype='int32')\n", monkeypatch)


@pytest.mark.parametrize("on_cpython", ["0", "1"])
def test_the_global_policy_is_the_runs_each_run_starting_with_float32(monkeypatch, on_cpython):
    first = run("keras.mixed_precision.set_global_policy('mixed_bfloat16')\n"
                "print(keras.layers.Dense(1).compute_dtype)\n", monkeypatch, on_cpython)
    second = run("print(keras.mixed_precision.global_policy().name, keras.layers.Dense(1).compute_dtype)\n",
                 monkeypatch, on_cpython)
    assert (first, second) == (["bfloat16"], ["float32 float32"])


@pytest.mark.parametrize("on_cpython", ["0", "1"])
def test_a_programs_layer_subclass_under_a_mixed_policy_is_refused(monkeypatch, on_cpython):
    source = ("class Block(keras.layers.Layer):\n    def __init__(self, **kw):\n        super().__init__(**kw)\n"
              "    def call(self, x):\n        return x * 2.0\n"
              "keras.mixed_precision.set_global_policy('mixed_float16')\n")
    with pytest.raises(TdfError) as e:
        run(source + "b = Block()\n", monkeypatch, on_cpython)
    assert e.value.line == 5 and "Block, a program's Keras subclass, under the mixed precision policy " \
        "'mixed_float16'" in e.value.message and e.value.hint == 'give it dtype="float32"'
    assert run(source + "print(Block(dtype='float32')(tf.constant([1.0])).dtype)\n", monkeypatch,
               on_cpython) == ["<dtype: 'float32'>"]


def test_gradients_under_mixed_bfloat16_reach_the_float32_variables(monkeypatch):
    """Under mixed_bfloat16 a layer casts its float32 variables to bfloat16: those casts and the ops after them
    are recorded, so the tape gives the variables' gradients (TensorFlow 2.21 / Keras 3.15 printed these)."""
    printed = run("""import numpy as np
keras.mixed_precision.set_global_policy("mixed_bfloat16")
tf.keras.utils.set_random_seed(1)
model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4, activation="relu"),
                          keras.layers.Dense(1, dtype="float32")])
X = tf.constant(np.linspace(-1, 1, 12).reshape(4, 3), dtype=tf.float32)
with tf.GradientTape() as t:
    loss = tf.reduce_mean((model(X) - 1.0) ** 2)
g = t.gradient(loss, model.trainable_variables)
print([x.dtype.name for x in g])
print(np.round(g[0].numpy(), 4).tolist())
print(f"{float(loss):.5f}")
""", monkeypatch)
    assert printed == [
        "['float32', 'float32', 'float32', 'float32']",
        "[[0.10639999806880951, -0.0723000019788742, -0.11720000207424164, 0.07419999688863754], "
        "[0.07859999686479568, -0.05909999832510948, -0.19529999792575836, 0.05469999834895134], "
        "[0.05079999938607216, -0.045899998396635056, -0.2734000086784363, 0.03539999946951866]]",
        "0.52321"]
