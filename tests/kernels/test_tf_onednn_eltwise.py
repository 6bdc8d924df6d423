"""oneDNN's fused activations (tapecli/kernels/tf_onednn_eltwise.py) against the bits TensorFlow 2.21 gave on an
AVX-512 x86 CPU (benchmarks/record_tf_onednn_eltwise.py, tests/data/tf_onednn_eltwise_bits.json): about 400,000
values of every exponent, the edges of the kernels' branches, subnormal numbers, infinities and NaN, for each
activation, compared by their SHA-256 (a sample of the bits says where a difference is)."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from tapecli.kernels import tf_onednn_eltwise
from tapecli.kernels.cpu import vector_width
from kernels.onednn_inputs import inputs, pre_activation

RECORDED = json.loads((Path(__file__).parents[1] / "data" / "tf_onednn_eltwise_bits.json").read_text())
KERNELS = {"tanh": tf_onednn_eltwise.tanh, "sigmoid": tf_onednn_eltwise.logistic, "elu": tf_onednn_eltwise.elu,
           "gelu_erf": tf_onednn_eltwise.gelu_erf, "gelu_tanh": tf_onednn_eltwise.gelu_tanh,
           "silu": tf_onednn_eltwise.swish}


@pytest.fixture(scope="module")
def values():
    x = inputs(RECORDED["recipe"])
    assert x.size == RECORDED["count"]
    return x


def test_the_record_has_every_activation_and_every_point_matched():
    assert set(RECORDED["activations"]) == set(KERNELS)
    assert all(not entry["pinned"] for entry in RECORDED["activations"].values())


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_the_kernel_gives_tensorflows_bits(name, values):
    # (the kernels are machine-independent NumPy: this holds on any machine, whatever TensorFlow runs there)
    x = values if name == "silu" else pre_activation(values)     # (silu reads x; the others matmul(x, 1) + 0)
    got = KERNELS[name](x)
    assert got.dtype == np.float32 and got.shape == x.shape
    bits = got.view(np.uint32)
    entry = RECORDED["activations"][name]
    sample = bits[::997]
    wrong = [(i * 997, f"{b:08x}", want) for i, (b, want) in enumerate(zip(sample.tolist(), entry["sample"]))
             if f"{b:08x}" != want]
    assert not wrong, f"{len(wrong)} sampled values differ, first: {wrong[:5]}"
    assert hashlib.sha256(bits.tobytes()).hexdigest() == entry["sha256"]


def test_the_kernels_run_on_the_machines_tensorflow_runs_them_on():
    assert tf_onednn_eltwise.known() == (vector_width() is not None)
    assert tf_onednn_eltwise.gelu_erf_known() == (vector_width() == 16)


# TensorFlow 2.21's session output of sigmoid(matmul(x, w) + b) with variables w and b (Grappler's fused oneDNN
# kernel) and of the same pre-activation fetched apart, as float32 bits: 7 of the 24 differ from the eager Sigmoid.
_PRE = (0x413d9262, 0x40d03944, 0xbf892778, 0xc06f0f10, 0x404a9a9b, 0x40439ce1, 0x40d99740, 0x40635758, 0x3fcef8c4,
        0xc004820d, 0xbfc9927b, 0xc01eaf05, 0x40cd81e6, 0xc07456f4, 0x41069df2, 0x40866b2f, 0xc00b233c, 0xc0b2bb5d,
        0x40f51d90, 0xc0a2d32f, 0x40da41c4, 0x40a6ad27, 0x40257995, 0xbdca7d94)
_FUSED = (0x3f7fff88, 0x3f7f9e4e, 0x3e829e66, 0x3cbef442, 0x3f75a342, 0x3f747ed3, 0x3f7fb711, 0x3f78ddfd, 0x3f5599b1,
          0x3de56217, 0x3e2fa70a, 0x3d9e561e, 0x3f7f95a9, 0x3cb027da, 0x3f7ff177, 0x3f7c3853, 0x3dd11dac, 0x3b74febd,
          0x3f7fe11f, 0x3bc8e4ef, 0x3f7fb892, 0x3f7e9b86, 0x3f6e0f99, 0x3ef35ac9)


def test_logistic_gives_the_fused_kernels_bits():
    pre = np.array(_PRE, np.uint32).view(np.float32)
    assert tf_onednn_eltwise.logistic(pre).view(np.uint32).tolist() == list(_FUSED)
