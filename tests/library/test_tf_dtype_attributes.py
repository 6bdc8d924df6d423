"""TensorFlow's DType properties (``x.dtype.name``, ``is_floating``, ``min``, ``as_numpy_dtype``...) and a NumPy
array's dtype's own, as TensorFlow 2.21 and NumPy 2 give them: the program's output, recorded once from
TensorFlow and kept here, on the interpreter and where CPython runs the program (an ``import os`` sends it
there)."""
from __future__ import annotations

import pytest

from tapecli.api import run_source

PROGRAM = """\
import tensorflow as tf
import numpy as np
for d in (tf.float32, tf.float64, tf.int32, tf.int64, tf.bool):
    print(d.name, d.is_floating, d.is_integer, d.is_unsigned, d.is_bool, d.is_complex, d.size, d.base_dtype,
          d.as_numpy_dtype, d.real_dtype, d.is_quantized)
    try: print(d.min, d.max)
    except TypeError as e: print(type(e).__name__, e)
J = tf.constant([1.0])
print(J.dtype.name, J.dtype.as_numpy_dtype(2.5), J.dtype.is_floating and 1)
a = np.zeros(3, dtype=np.float32)
print(a.dtype.name, a.dtype.kind, a.dtype.itemsize)
"""

TENSORFLOW_OUTPUT = """\
float32 True False False False False 4 <dtype: 'float32'> <class 'numpy.float32'> <dtype: 'float32'> False
-3.4028235e+38 3.4028235e+38
float64 True False False False False 8 <dtype: 'float64'> <class 'numpy.float64'> <dtype: 'float64'> False
-1.7976931348623157e+308 1.7976931348623157e+308
int32 False True False False False 4 <dtype: 'int32'> <class 'numpy.int32'> <dtype: 'int32'> False
-2147483648 2147483647
int64 False True False False False 8 <dtype: 'int64'> <class 'numpy.int64'> <dtype: 'int64'> False
-9223372036854775808 9223372036854775807
bool False False False True False 1 <dtype: 'bool'> <class 'numpy.bool'> <dtype: 'bool'> False
TypeError Cannot find minimum value of <dtype: 'bool'> with type <dtype: 'bool'>.
float32 2.5 1
float32 f 4
"""


@pytest.mark.parametrize("first_line", ["", "import os\n"], ids=["interpreter", "cpython"])
def test_dtype_properties_are_tensorflows(first_line):
    result = run_source(first_line + PROGRAM)
    assert "\n".join(result.output) + "\n" == TENSORFLOW_OUTPUT
