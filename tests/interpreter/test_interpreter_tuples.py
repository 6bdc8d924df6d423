"""A Python tuple in a TensorFlow program is a tuple on both runners: printed, concatenated, repeated, sliced,
made by tuple(), zip, enumerate, dict.items() and *args, answering isinstance and type() as one, and read by
tf.data as a structure of components, and passed to NumPy as a tuple (axis=(1, 2)). The interpreter once held
tuples as lists (print((1, 2)) wrote [1, 2] and isinstance(t, list) was True). The expected lines are what
TensorFlow 2.21 under CPython printed."""
from __future__ import annotations

import pytest

import tapecli
from tapecli.errors import TdfError

PROGRAM = """\
import tensorflow as tf
a = (1, 2)
b = (3,)
print(a, tuple([1, 2]), isinstance(a, tuple), isinstance([1], tuple), isinstance(a, list), type(a), a + b, b * 2, ())
for p in zip([1], [2]):
    print(p)
for i, v in enumerate("ab"):
    print((i, v))
print(list({"k": 1}.items()), tuple(tf.ones((2, 3)).shape))
x, y = a
print(x + y, len(a), a[0], a[-1:], [tuple(v.shape) for v in [tf.Variable([1.0])]])
def f(*args):
    return args
print(f(1, 2), type(f(1)))
ds = tf.data.Dataset.from_tensor_slices(([1.0, 2.0], [3, 4]))
print(list(ds))
print(list(tf.data.Dataset.zip((tf.data.Dataset.range(2), tf.data.Dataset.range(2)))))
import numpy as np
x = np.arange(24, dtype="float32").reshape(2, 3, 4)
print(x.mean(axis=(1, 2)), x.sum(axis=(0, 2)).tolist(), np.transpose(x, (2, 0, 1)).shape)
"""

BY_TENSORFLOW = """\
(1, 2) (1, 2) True False False <class 'tuple'> (1, 2, 3) (3, 3) ()
(1, 2)
(0, 'a')
(1, 'b')
[('k', 1)] (2, 3)
3 2 1 (2,) [(1,)]
(1, 2) <class 'tuple'>
[(<tf.Tensor: shape=(), dtype=float32, numpy=1.0>, <tf.Tensor: shape=(), dtype=int32, numpy=3>), (<tf.Tensor: shape=(), dtype=float32, numpy=2.0>, <tf.Tensor: shape=(), dtype=int32, numpy=4>)]
[(<tf.Tensor: shape=(), dtype=int64, numpy=0>, <tf.Tensor: shape=(), dtype=int64, numpy=0>), (<tf.Tensor: shape=(), dtype=int64, numpy=1>, <tf.Tensor: shape=(), dtype=int64, numpy=1>)]
[ 5.5 17.5] [60.0, 92.0, 124.0] (4, 2, 3)
"""  # noqa: E501 (TensorFlow's lines)


@pytest.mark.parametrize("first_line", ["", "import os\n"], ids=["interpreter", "cpython"])
def test_tuples_are_tuples(first_line):
    assert tapecli.run(first_line + PROGRAM).output == BY_TENSORFLOW.splitlines()


def test_a_tuple_refuses_item_assignment_and_concatenation_with_a_list():
    for source, message in (("t = (1, 2)\nt[0] = 5\n", "'tuple' object does not support item assignment"),
                            ("t = (1, 2) + [3]\n", 'can only concatenate tuple (not "list") to tuple')):
        with pytest.raises(TdfError) as e:
            tapecli.run("import tensorflow as tf\n" + source)
        assert message in e.value.message


EQUALITY = """\
import tensorflow as tf
a = [1, 2, 3]
b = [1, 2, 3]
print(a == b, [1, 2] == [1, 2, 3], a != b, (1, 2) == (1, 2), [1.0] == [1], (1, 2) == [1, 2], [[1, 2]] == [[1, 2]], ["a"] == ["a"])
if a == b:
    print("same")
t = tf.constant([1, 2])
print(t == [1, 2])
print([] < [], [1] < [2], [1, 2] < [1, 3], (1, 2) >= (1, 2), [2] <= [1, 5], [3] > [2, 9], (0.5,) < (1,))
"""


@pytest.mark.parametrize("on_cpython", ["0", "1"])
def test_python_lists_and_tuples_compare_as_python_compares_them(monkeypatch, on_cpython):
    """`a == b` and `a < b` of two lists (or tuples) of numbers are Python's bools, not elementwise tensors (a
    bracket literal is a weak tensor on the interpreter); a tensor beside a list is still TensorFlow's elementwise comparison.
    The lines are what TensorFlow 2.21 under CPython printed."""
    from tapecli.execution import PythonRun
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", on_cpython)
    result = tapecli.run(EQUALITY)
    assert isinstance(result.run.interpreter, PythonRun) == (on_cpython == "1")
    assert result.output == ["True False False True True False True True", "same",
                             "tf.Tensor([ True  True], shape=(2,), dtype=bool)", "False True True True False True True"]


KERAS_TUPLES = """\
import tensorflow as tf
from keras import ops

pair = ops.while_loop(lambda a, b: a < 10, lambda a, b: (a + 3, b * 2), (0, 1))
print(pair, type(pair))
print(ops.while_loop(lambda a, b: a < 3, lambda a, b: [a + 1, b - 1], [0, 0]))
counts, edges = ops.histogram(tf.constant([0.1, 0.2, 0.9, 0.5]), bins=2)
print(ops.histogram(tf.constant([0.1, 0.2, 0.9, 0.5]), bins=2), counts.shape, edges.shape)
print(ops.fft((tf.constant([1.0, 0.0]), tf.constant([0.0, 0.0]))))
"""

KERAS_TUPLES_BY_TENSORFLOW = """\
(<tf.Tensor: shape=(), dtype=int32, numpy=12>, <tf.Tensor: shape=(), dtype=int32, numpy=16>) <class 'tuple'>
(<tf.Tensor: shape=(), dtype=int32, numpy=3>, <tf.Tensor: shape=(), dtype=int32, numpy=-3>)
(<tf.Tensor: shape=(2,), dtype=float32, numpy=array([2., 2.], dtype=float32)>, <tf.Tensor: shape=(3,), dtype=float32, numpy=array([0.1       , 0.49999997, 0.9       ], dtype=float32)>) (2,) (3,)
(<tf.Tensor: shape=(2,), dtype=float32, numpy=array([1., 1.], dtype=float32)>, <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0., 0.], dtype=float32)>)
"""  # noqa: E501 (TensorFlow's lines)


@pytest.mark.parametrize("on_cpython", ["0", "1"])
def test_a_library_function_returning_a_tuple_gives_the_program_a_tuple(monkeypatch, on_cpython):
    """keras.ops.while_loop, histogram and fft return Python tuples: on the interpreter they once printed with
    tapecli's own text of a tensor (``(Tensor(np.int32(12)), ...)``) and had no type(); on CPython a body's list of
    Python numbers (``[a + 1, b - 1]``) arrived as one literal tensor that while_loop refused. The lines are what
    TensorFlow 2.21 printed."""
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", on_cpython)
    assert tapecli.run(KERAS_TUPLES).output == KERAS_TUPLES_BY_TENSORFLOW.splitlines()
