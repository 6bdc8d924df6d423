"""TensorFlow's float32 softmax, bit for bit (tapecli/kernels/tf_onednn.py), against the bits TensorFlow 2.21
gave on an x86 CPU (benchmarks/record_tf_softmax.py, tests/data/tf_softmax_bits.json): oneDNN's kernel, whose
bits depend on the machine's vector width, so a machine of another width has other expectations."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tapecli import api
from tapecli.kernels import numpy_kernels, tf_onednn

RECORDED = json.loads((Path(__file__).parents[1] / "data" / "tf_softmax_bits.json").read_text())
SAME_KERNEL = tf_onednn.vector_width() == RECORDED["vector_width"]


def _array(hexes, shape):
    return np.array([int(h, 16) for h in hexes], np.uint32).view(np.float32).reshape(shape)


@pytest.mark.skipif(not SAME_KERNEL, reason="TensorFlow's oneDNN kernel has other bits on this machine's vectors")
@pytest.mark.parametrize("case", RECORDED["cases"], ids=lambda c: f"{c['shape']}-axis{c['axis']}")
def test_softmax_gives_tensorflows_bits(case):
    x = _array(case["in"], case["shape"])
    got = numpy_kernels.softmax(x, case["axis"])
    assert got.dtype == np.float32
    assert got.view(np.uint32).tolist() == _array(case["out"], case["shape"]).view(np.uint32).tolist()


def test_other_dtypes_and_ranks_keep_numpys_softmax():
    x64 = np.array([1.0, 2.0, 3.0])
    assert tf_onednn.softmax(x64) is None
    assert tf_onednn.softmax(np.ones((1,) * 6, np.float32)) is None
    assert tf_onednn.softmax(np.ones((2, 0), np.float32)) is None
    # float64 is TensorFlow's Eigen kernel: exp(x - max) / sum
    e = np.exp(x64 - 3.0)
    assert numpy_kernels.softmax(x64).tolist() == (e / e.sum()).tolist()


@pytest.mark.skipif(not SAME_KERNEL, reason="TensorFlow's oneDNN kernel has other bits on this machine's vectors")
def test_a_program_prints_tensorflows_softmax():
    # TensorFlow 2.21 printed [0.09003057 0.24472848 0.6652409 ] (NumPy's exp(x) / sum gives 0.24472846)
    result = api.run_source("import tensorflow as tf\nprint(tf.nn.softmax([1.0, 2.0, 3.0]).numpy())\n", "p.py")
    assert [str(line) for line in result.output] == ["[0.09003057 0.24472848 0.6652409 ]"]
