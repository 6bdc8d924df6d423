"""tf.config and tf.debugging as TensorFlow 2.21 gives them, on both runners: the devices (named tuples a program
passes back, as the GPU boilerplate does), name and device scopes as ``with`` blocks, assert_near,
check_numerics and assert_all_finite, and run_functions_eagerly (a tf.function's Python runs at every call and
tf.inside_function() is False until it is switched off; then it traces again). The expected lines are what
TensorFlow printed for PROGRAM."""
from __future__ import annotations

import pytest

import tapecli
from tapecli.errors import TdfError

PROGRAM = """\
import tensorflow as tf

gpus = tf.config.list_physical_devices("GPU")
for gpu in gpus:
    tf.config.experimental.set_memory_growth(gpu, True)
cpus = tf.config.list_physical_devices("CPU")
print(cpus, cpus[0].device_type, len(gpus))
with tf.name_scope("outer") as scope:
    with tf.name_scope("inner"):
        print(scope, tf.get_current_name_scope())
with tf.device("/CPU:0"):
    x = tf.constant([1.0, 2.0])
tf.debugging.assert_near(x, x + 1e-7)
tf.debugging.assert_near(1.0, 1.05, atol=0.1)
print(tf.debugging.check_numerics(x, "x bad").numpy(), tf.debugging.assert_all_finite(x, "x bad").numpy())
print(tf.config.functions_run_eagerly())
tf.config.run_functions_eagerly(True)


@tf.function
def f(v):
    print("python side", tf.inside_function())
    return v * 2


f(tf.constant(1.0))
f(tf.constant(2.0))
print(tf.config.functions_run_eagerly())
tf.config.run_functions_eagerly(False)
f(tf.constant(3.0))
f(tf.constant(4.0))
"""

BY_TENSORFLOW = """\
[PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU')] CPU 0
outer/ outer/inner
[1. 2.] [1. 2.]
False
python side False
python side False
True
python side True
"""


@pytest.mark.parametrize("first_line", ["", "import os\n"], ids=["interpreter", "cpython"])
def test_config_and_debugging_as_tensorflow(first_line):
    assert tapecli.run(first_line + PROGRAM).output == BY_TENSORFLOW.splitlines()


@pytest.mark.parametrize("call, message", [
    ("tf.debugging.check_numerics(tf.constant([1.0, float('nan')]), 'bad')", "bad : Tensor had NaN values"),
    ("tf.debugging.assert_all_finite(tf.constant([float('inf')]), 'bad')", "bad : Tensor had Inf values"),
    ("tf.debugging.assert_near(tf.constant([1.0, 2.0]), tf.constant([1.0, 2.00001]))", "not equal to tolerance"),
])
def test_a_failed_check_is_tensorflows_invalid_argument_error(call, message):
    with pytest.raises(TdfError) as e:
        tapecli.run("import tensorflow as tf\n" + call + "\n")
    assert message in e.value.message
    caught = tapecli.run("import tensorflow as tf\ntry:\n    " + call + "\nexcept tf.errors.InvalidArgumentError:\n"
                         "    print('caught')\n")
    assert caught.output == ["caught"]
