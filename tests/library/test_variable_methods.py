"""A variable's slice assigned (``v[0, 1].assign(5.0)``, a slice kept and assigned later) and a variable's
``scatter_nd_update``/``add``/``sub``, as TensorFlow 2.21 does them: a slice has ``assign`` alone (not
``assign_add``). The expected lines are what TensorFlow printed for PROGRAM."""
from __future__ import annotations

import tapecli
from tapecli.interpreter.core import Interpreter

PROGRAM = """\
import tensorflow as tf
v = tf.Variable([[1.0, 2.0], [3.0, 4.0]])
v[0, 1].assign(5.0)
row = v[1]
row.assign([7.0, 8.0])
v[1:, 1:].assign([[9.0]])
print(v.numpy().tolist())
w = tf.Variable([1, 2, 3, 4])
w.scatter_nd_update([[0], [3]], [10, 40])
w.scatter_nd_add([[1]], [5])
w.scatter_nd_sub([[2]], [1])
print(w.numpy().tolist())
print(type(v[0]).__name__, v[0].numpy().tolist())
try:
    v[:, 0].assign_add([10.0, 20.0])
except AttributeError as e:
    print("AttributeError")
"""

BY_TENSORFLOW = """\
[[1.0, 5.0], [7.0, 9.0]]
[10, 7, 2, 40]
EagerTensor [1.0, 5.0]
AttributeError
"""


def test_where_cpython_runs_the_program():
    result = tapecli.run(PROGRAM)
    assert not isinstance(result.run.interpreter, Interpreter)       # (try/except: CPython's)
    assert result.output == BY_TENSORFLOW.splitlines()


def test_on_the_interpreter(monkeypatch):
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", "0")
    result = tapecli.run(PROGRAM.split("print(type(")[0])      # (type(...).__name__ and try: CPython's)
    assert isinstance(result.run.interpreter, Interpreter)
    assert result.output == BY_TENSORFLOW.splitlines()[:2]
