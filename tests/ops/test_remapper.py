"""Grappler's remapper as tapecli follows it op by op (tapecli/ops/remapper.py): where a tf.function's activation
is oneDNN's fused kernel (kernels/tf_onednn_eltwise.py) and where it stays the eager op's. (TensorFlow's own
answers for these forms: tests/data/tf_fresh_programs_fused.json.)"""
from __future__ import annotations

import contextlib

import numpy as np
import pytest

from tapecli import ops
from tapecli.autodiff.gradients import gradient
from tapecli.kernels import tf_float32, tf_onednn_eltwise
from tapecli.runtime.context import current
from tapecli.runtime.values import Tensor
from conftest import open_tape

pytestmark = pytest.mark.skipif(not tf_onednn_eltwise.gelu_erf_known(),
                                reason="TensorFlow runs no such oneDNN kernel on this machine")

X = Tensor(np.linspace(-3, 3, 24, dtype=np.float32).reshape(6, 4))
W = Tensor(np.linspace(-1, 1, 20, dtype=np.float32).reshape(4, 5))
B = Tensor(np.linspace(-0.2, 0.2, 5, dtype=np.float32))


@contextlib.contextmanager
def in_function():
    ctx = current()
    ctx.functions += 1
    try:
        yield
    finally:
        ctx.functions -= 1


def _bits(t) -> list:
    return t.value.view(np.uint32).tolist()


def _pre(add=ops.add):
    return add(ops.matmul(X, W), B)


@pytest.mark.parametrize("name, kernel", [("tanh", tf_onednn_eltwise.tanh), ("sigmoid", tf_onednn_eltwise.logistic),
                                          ("elu", tf_onednn_eltwise.elu)])
@pytest.mark.parametrize("add", [ops.add, ops.bias_add, lambda p, b: ops.add(b, p)], ids=["add", "bias_add", "b+p"])
def test_an_activation_of_a_matmul_and_its_bias_is_the_fused_kernels_in_a_function(name, kernel, add):
    with in_function():
        pre = _pre(add)
        fused = getattr(ops, name)(pre)
    assert _bits(fused) == _bits(Tensor(kernel(pre.value)))
    eager = getattr(ops, name)(_pre(add))
    assert _bits(eager) != _bits(fused)         # (Eigen's differ in the last bits on these values)


def test_the_eager_op_where_the_pattern_is_not_there():
    def eager_tanh(x):
        return _bits(Tensor(tf_float32.tanh(x.value)))
    with in_function():
        product = ops.matmul(X, W)
        assert _bits(ops.tanh(product)) == eager_tanh(product)                  # no bias
        scalar = ops.add(ops.matmul(X, W), Tensor(np.float32(0.1)))
        assert _bits(ops.tanh(scalar)) == eager_tanh(scalar)                    # a scalar bias
        wide = ops.add(ops.matmul(X, W), ops.matmul(X, W))
        assert _bits(ops.tanh(wide)) == eager_tanh(wide)                        # no bias either
        x64 = ops.add(ops.matmul(ops.cast(X, np.float64), ops.cast(W, np.float64)), ops.cast(B, np.float64))
        assert ops.tanh(x64).dtype == np.float64


def test_gelu_fuses_after_bias_add_alone_and_where_no_tape_records():
    with in_function():
        fused = ops.gelu(_pre(ops.bias_add))
        after_add = ops.gelu(_pre(ops.add))
        with open_tape([W]):
            taped = ops.gelu(_pre(ops.bias_add))
    assert _bits(fused) == _bits(Tensor(tf_onednn_eltwise.gelu_erf(_pre(ops.bias_add).value)))
    eager = ops.gelu(_pre(ops.bias_add))
    assert _bits(after_add) == _bits(taped) == _bits(eager)


def test_silu_and_x_times_its_sigmoid_are_onednns_swish_in_a_function():
    swish = _bits(Tensor(tf_onednn_eltwise.swish(X.value)))
    with in_function():
        assert _bits(ops.silu(X)) == swish
        assert _bits(ops.mul(X, ops.sigmoid(X))) == swish
        assert _bits(ops.mul(ops.sigmoid(X), X)) == swish
        assert _bits(ops.silu(X, 2.0)) == _bits(ops.silu(X, 2.0))
    assert _bits(ops.silu(X)) != swish


def test_the_fused_tanhs_gradient_reads_its_output():
    with in_function(), open_tape([W]) as tape:
        y = ops.tanh(_pre())
        loss = ops.reduce_sum(y)
    g = gradient(tape, loss, [W])[0][0]
    expected = ops.matmul(ops.transpose(X, (1, 0)), ops.tanh_grad(y, ops.ones_like(y)))
    assert _bits(g) == _bits(expected)


GRADIENTS_PROGRAM = """
import numpy as np
import tensorflow as tf
rng = np.random.default_rng(0)
x = tf.constant(rng.normal(size=(4, 16)).astype(np.float32))
W = tf.constant(rng.normal(size=(16, 32)).astype(np.float32))
b = tf.constant(rng.normal(size=(32,)).astype(np.float32))
@tf.function
def act(x):
    return tf.nn.gelu(tf.nn.bias_add(tf.matmul(x, W), b), approximate=False)
print(act(x).numpy().tobytes().hex()[:64])
@tf.function
def grads(v):
    return tf.gradients(tf.reduce_sum(v ** 2), v)
print(grads(tf.constant([1.0, 2.0]))[0].numpy())
"""


def test_a_function_of_a_program_with_tf_gradients_still_fuses():
    """The tape that records a tf.function's body for tf.gradients in it (execution/tf_calls.py) is not a
    program's tape: the remapper fuses as TensorFlow's graph does (TensorFlow 2.21 printed these bits)."""
    from tapecli import api
    result = api.run_source(GRADIENTS_PROGRAM, "p.py")
    assert [str(line) for line in result.output] == [
        "31d2babae5733e40af7930b7395f3e3fd54275bcfdc469bb9bae96bd5c380840", "[2. 4.]"]
