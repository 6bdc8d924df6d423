"""tf.autodiff.ForwardAccumulator (library/control.py): jvps from the ops' forward-mode rules. tf.autodiff is
not among the modules of tests/data/tf_surface.tsv; the expected values were recorded by running the same
program in TensorFlow 2.21."""
from __future__ import annotations

import numpy as np
import pytest

import tapecli
from tapecli.errors import TdfError

PROGRAM = """import tensorflow as tf
x = tf.Variable([1.0, 2.0])
v = tf.constant([1.0, 0.5])
with tf.autodiff.ForwardAccumulator(x, v) as acc:
    y = tf.reduce_sum(tf.sin(x) * x)
    z = x * x
j = acc.jvp(y)
jz = acc.jvp(z)
c = tf.constant(3.0)
with tf.autodiff.ForwardAccumulator(primals=c, tangents=tf.constant(2.0)) as acc2:
    w = c ** 3.0
jw = acc2.jvp(w)
none = acc2.jvp(tf.constant(1.0))
zero = acc2.jvp(tf.constant(1.0), unconnected_gradients=tf.UnconnectedGradients.ZERO)
"""


def test_jvps_are_tensorflows():
    v = tapecli.run(PROGRAM).values
    np.testing.assert_allclose(v["y"], 2.6600656509399414, rtol=1e-6)
    np.testing.assert_allclose(v["j"], 1.420275092124939, rtol=1e-6)
    np.testing.assert_array_equal(v["jz"], [2.0, 2.0])
    assert v["jw"] == 54.0 and v["none"] is None and v["zero"] == 0.0
    assert v["j"].dtype == np.float32


def test_a_tangent_of_another_shape_is_an_error():
    with pytest.raises(TdfError, match="tangent of shape"):
        tapecli.run("import tensorflow as tf\nx = tf.constant([1.0, 2.0])\n"
                    "with tf.autodiff.ForwardAccumulator(x, tf.constant(1.0)) as acc:\n    y = x * 2.0\n")
