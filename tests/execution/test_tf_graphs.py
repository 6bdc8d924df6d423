"""TensorFlow 1's graphs through tf.compat.v1 on CPython's run (tapecli/execution/tf_graphs.py, tf_variables.py,
tf_sessions.py): TensorFlow's errors of graphs and sessions, the names it refuses, and the runner it takes.
What such programs print is compared with TensorFlow's in tests/data/tf_programs_compat_v1.json."""
from __future__ import annotations

import ast

import pytest

from tapecli import api
from tapecli.errors import TdfError
from tapecli.execution import tensorflow
from tapecli.interpreter.core import ErrorLine

HEAD = """
import numpy as np
import tensorflow as tf
tf1 = tf.compat.v1
g = tf.Graph()
with g.as_default():
    x = tf1.placeholder(tf.float32, [None, 2], name="x")
    W = tf1.get_variable("W", [2, 1], initializer=tf1.ones_initializer())
    y = tf.matmul(x, W)
    init = tf1.global_variables_initializer()
sess = tf1.Session(graph=g)
def attempt(f):
    try:
        print("ok", f())
    except Exception as e:
        print(type(e).__name__, "|", e)
"""


def _printed(source: str, monkeypatch, on_cpython: str = "1") -> list[str]:
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", on_cpython)
    result = api.run_source(source, "graph.py")
    return [str(line) for line in result.output if type(line) is not ErrorLine]


def test_a_sessions_errors_are_tensorflows(monkeypatch):
    printed = _printed(HEAD + """
attempt(lambda: sess.run(W))
sess.run(init)
attempt(lambda: sess.run(y))
attempt(lambda: sess.run(y, feed_dict={x: [[1.0, 2.0, 3.0]]}))
attempt(lambda: sess.run(y, feed_dict={"x": [[1.0, 2.0]]}))
attempt(lambda: sess.run(y, feed_dict={x: y}))
attempt(lambda: sess.run("nothing"))
print(sess.run(y, {"x:0": [[1.0, 2.0]]}).tolist(), sess.run(init))
sess.close()
attempt(lambda: sess.run(y))
""", monkeypatch)
    assert printed == [
        "FailedPreconditionError | Could not find variable W. This could mean that the variable has been deleted. "
        "In TF1, it can also mean the variable is uninitialized. Debug info: container=localhost, status error "
        "message=Container localhost does not exist. (Could not find resource: localhost/W)",
        "InvalidArgumentError | You must feed a value for placeholder tensor 'x' with dtype float and shape [?,2]",
        "ValueError | Cannot feed value of shape (1, 3) for Tensor x:0, which has shape (None, 2)",
        "TypeError | Cannot interpret feed_dict key as Tensor: The name 'x' looks a like an Operation name, not a "
        "Tensor name. Tensor names must be of the form \"<op_name>:<output_index>\".",
        "TypeError | The value of a feed cannot be a tf.Tensor object. Acceptable feed values include Python scalars, "
        "strings, lists, numpy ndarrays, or TensorHandles. For reference, the tensor object was Tensor(\"MatMul:0\", "
        "shape=(None, 1), dtype=float32) which was passed to the argument `feed_dict` with key Tensor(\"x:0\", "
        "shape=(None, 2), dtype=float32).",
        "ValueError | Argument `fetch` = nothing cannot be interpreted as a Tensor. (\"The name 'nothing' refers to "
        "an Operation not in the graph.\")",
        "[[3.0]] None",
        "RuntimeError | Attempted to use a closed Session."]


def test_graph_mode_calls_outside_a_graph_are_tensorflows_errors(monkeypatch):
    printed = _printed(HEAD + """
attempt(lambda: tf1.placeholder(tf.float32))
attempt(lambda: tf.gradients(tf.constant(1.0), [tf.constant(1.0)]))
attempt(lambda: tf.hessians(tf.constant(1.0), [tf.constant(1.0)]))
with g.as_default():
    attempt(lambda: tf1.get_variable("W", [2, 1]))
    print(tf.executing_eagerly(), tf1.executing_eagerly())
print(tf.executing_eagerly())
""", monkeypatch)
    assert printed == [
        "RuntimeError | tf.placeholder() is not compatible with eager execution.",
        "RuntimeError | tf.gradients is not supported when eager execution is enabled. Use tf.GradientTape instead.",
        "RuntimeError | tf.gradients is not supported when eager execution is enabled. Use tf.GradientTape instead.",
        "ValueError | Variable W already exists, disallowed. Did you mean to set reuse=True or reuse=tf.AUTO_REUSE "
        "in VarScope?",
        "False False", "True"]


def test_a_graphs_operations_are_named_as_tensorflows(monkeypatch):
    """The ops a placeholder, a variable with its initializer and a matmul make (TensorFlow 2.21's names)."""
    printed = _printed(HEAD + "print([op.name for op in g.get_operations()])\n", monkeypatch)
    assert printed == [str(['x', 'W/Initializer/ones', 'W', 'W/IsInitialized/VarIsInitializedOp', 'W/Assign',
                            'W/Read/ReadVariableOp', 'MatMul/ReadVariableOp', 'MatMul', 'init'])]


@pytest.mark.parametrize("line, refused", [
    ("sess.run(y, feed_dict={W: [[1.0], [2.0]], x: [[1.0, 2.0]]})", "tapecli feeds no variable (W:0)"),
    ("tf1.layers", "tapecli has no tf.compat.v1.layers"),
    ("tf1.train.RMSPropOptimizer(0.1)", "tapecli has no tf.compat.v1.train.RMSPropOptimizer"),
    ("with g.as_default():\n    tf.random.normal([2])", "tf.random.normal inside a TF1 graph"),
    ("with g.as_default():\n    tf.print(1.0)", "tf.print inside a TF1 graph"),
])
def test_what_tf1_graphs_do_not_give_is_refused_by_name(line, refused, monkeypatch):
    """Feeding a variable (TensorFlow feeds its handle and leaves its value), and the symbols outside the family."""
    with pytest.raises(TdfError, match=refused.replace("(", r"\(").replace(")", r"\)")):
        _printed(HEAD + "sess.run(init)\n" + line + "\n", monkeypatch)


def test_the_interpreter_refuses_tf_compat_and_the_program_runs_on_cpython(monkeypatch):
    source = HEAD + "sess.run(init)\nprint(sess.run(y, {x: [[1.0, 2.0]]}).tolist())\n"
    assert tensorflow.interpreter_refuses(ast.parse(source))
    assert _printed(source, monkeypatch, on_cpython="auto") == ["[[3.0]]"]
    with pytest.raises(TdfError, match="tf.compat \\(TensorFlow 1's graphs.* runs on CPython's run only"):
        _printed("import tensorflow as tf\ntf1 = tf.compat.v1\nprint(tf1.executing_eagerly())\n", monkeypatch,
                 on_cpython="0")
    with pytest.raises(TdfError, match="a block of TensorFlow 1's graphs and sessions .* on the interpreter"):
        _printed("import tensorflow as tf\ng = tf.Graph()\nwith g.as_default():\n    x = tf.constant(1.0)\n",
                 monkeypatch, on_cpython="0")


def test_tf_gradients_and_hessians_inside_a_tf_function(monkeypatch):
    """In a tf.function, tf.gradients and tf.hessians differentiate what its body computed: of its arguments, of
    the variables it reads and of its intermediate tensors, None where unconnected (or zeros), stop_gradients and
    grad_ys as TensorFlow takes them, and tf.gradients of tf.gradients (TensorFlow 2.21's values)."""
    printed = _printed("""
import tensorflow as tf
w = tf.Variable([1.0, -2.0])
@tf.function
def with_var(x):
    loss = tf.reduce_sum(w * x) + tf.reduce_sum(w ** 2)
    gw, gx, gn = tf.gradients(loss, [w, x, tf.constant(1.0)])
    return gw, gx, gn is None
gw, gx, none = with_var(tf.constant([3.0, 4.0]))
print("gw:", gw.numpy(), "gx:", gx.numpy(), "unconnected None:", bool(none))
@tf.function
def inter(a, b):
    c = a * b
    d = c * c + a
    g1 = tf.gradients(d, [a, b, c])
    g2 = tf.gradients(d, [a, b], stop_gradients=[c])
    g3 = tf.gradients([d, c], a, grad_ys=[tf.constant(2.0), tf.constant(3.0)])
    z = tf.gradients(d, tf.constant(5.0), unconnected_gradients="zero")
    return g1, g2, g3, z
g1, g2, g3, z = inter(tf.constant(2.0), tf.constant(3.0))
print("g1:", [t.numpy() for t in g1])
print("g2:", [None if t is None else t.numpy() for t in g2])
print("g3:", [t.numpy() for t in g3])
print("z:", [t.numpy() for t in z])
@tf.function
def second(v):
    y = tf.reduce_sum(v ** 3 * 2.0)
    g = tf.gradients(y, v)[0]
    return g, tf.gradients(g, v)[0], tf.hessians(y, v)[0]
g, d2, h = second(tf.constant([1.0, 2.0]))
print(g.numpy(), d2.numpy())
print(h.numpy())
@tf.function
def hess2(x, y):
    f = x ** 2 * y + tf.reduce_sum(y ** 3)
    return tf.hessians(f, [x, y])
hx, hy = hess2(tf.constant(1.5), tf.constant([1.0, 2.0]))
print("hx:", hx.numpy())
print("hy:", hy.numpy())
""", monkeypatch)
    assert printed == [
        "gw: [5. 0.] gx: [ 1. -2.] unconnected None: True",
        "g1: [np.float32(37.0), np.float32(24.0), np.float32(12.0)]",
        "g2: [np.float32(1.0), None]",
        "g3: [np.float32(83.0)]",
        "z: [np.float32(0.0)]",
        "[ 6. 24.] [12. 24.]",
        "[[12.  0.]", " [ 0. 24.]]",
        "hx: 6.0",
        "hy: [[12.  0.]", " [ 0. 24.]]"]


def test_tf_gradients_in_a_tf_function_reach_its_constants_and_captures(monkeypatch):
    """A graph differentiates each of its tensors: a constant made in the function, what is computed from it and a
    tensor it captures (TensorFlow 2.21's values)."""
    printed = _printed("""
import tensorflow as tf
c = tf.constant([1.0, 2.0])
@tf.function
def example():
    Ws = tf.constant(0.)
    bs = 2 * Ws
    g = tf.gradients(Ws + bs, [Ws, bs])
    return g[0], g[1], tf.gradients(tf.reduce_sum(c * c), c)[0]
print([t.numpy().tolist() for t in example()])
""", monkeypatch)
    assert printed == ["[3.0, 1.0, [2.0, 4.0]]"]
