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


# TensorFlow 2.21's session output of sigmoid(matmul(x, w) + b) with variables w and b (Grappler's fused oneDNN
# kernel) and of the same pre-activation fetched apart, as float32 bits: 7 of the 24 differ from the eager Sigmoid.
_PRE = (0x413d9262, 0x40d03944, 0xbf892778, 0xc06f0f10, 0x404a9a9b, 0x40439ce1, 0x40d99740, 0x40635758, 0x3fcef8c4,
        0xc004820d, 0xbfc9927b, 0xc01eaf05, 0x40cd81e6, 0xc07456f4, 0x41069df2, 0x40866b2f, 0xc00b233c, 0xc0b2bb5d,
        0x40f51d90, 0xc0a2d32f, 0x40da41c4, 0x40a6ad27, 0x40257995, 0xbdca7d94)
_FUSED = (0x3f7fff88, 0x3f7f9e4e, 0x3e829e66, 0x3cbef442, 0x3f75a342, 0x3f747ed3, 0x3f7fb711, 0x3f78ddfd, 0x3f5599b1,
          0x3de56217, 0x3e2fa70a, 0x3d9e561e, 0x3f7f95a9, 0x3cb027da, 0x3f7ff177, 0x3f7c3853, 0x3dd11dac, 0x3b74febd,
          0x3f7fe11f, 0x3bc8e4ef, 0x3f7fb892, 0x3f7e9b86, 0x3f6e0f99, 0x3ef35ac9)


@pytest.mark.skipif(tf_onednn.vector_width() is None, reason="no oneDNN kernel of TensorFlow's on this machine")
def test_logistic_gives_the_fused_kernels_bits():
    pre = np.array(_PRE, np.uint32).view(np.float32)
    assert tf_onednn.logistic(pre).view(np.uint32).tolist() == list(_FUSED)
    assert tf_onednn.logistic(pre.astype(np.float64)) is None
