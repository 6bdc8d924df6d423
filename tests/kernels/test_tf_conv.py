"""TensorFlow's float32 convolutions, bit for bit (tapecli/kernels/tf_conv.py), against the bits TensorFlow 2.21 gave on
an x86 CPU with AVX-512 (benchmarks/record_tf_conv.py, tests/data/tf_conv_bits.json): oneDNN's kernel, whose bits
depend on the machine's vector width, so a machine of another width has other expectations."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import open_tape
from tapecli.autodiff.gradients import gradient
from tapecli.kernels import tf_conv, tf_onednn
from tapecli.library import tf_nn, tf_nn_losses
from tapecli.runtime.context import run_context
from tapecli.runtime.values import Tensor

sys.path.insert(0, str(Path(__file__).parents[1]))
from tf_conv_cases import FIELDS, operands, output_gradient  # noqa: E402
from tf_matmul_cases import digest  # noqa: E402

RECORDED = json.loads((Path(__file__).parents[1] / "data" / "tf_conv_bits.json").read_text())
CASES = [dict(zip(RECORDED["fields"], row)) for row in RECORDED["cases"]]
other_width = pytest.mark.skipif(tf_onednn.vector_width() != RECORDED["vector_width"],
                                 reason="oneDNN's kernels have other bits on this machine's vectors")


def _convolve(case, x, f):
    """The case's convolution as a program's tf.nn.conv1d, conv2d or conv3d computes it."""
    rank, s, d, p = len(case["size"]), case["strides"], case["dilations"], case["padding"]
    if rank == 1:
        return tf_nn.conv1d(x, f, s[0], p, dilations=d[0])
    if rank == 2:
        return tf_nn.conv2d(x, f, s, p, dilations=d)
    return tf_nn_losses.conv3d(x, f, [1, *s, 1], p, dilations=[1, *d, 1])


def tapecli_conv(case) -> np.ndarray:
    with run_context():
        return np.asarray(_convolve(case, *(Tensor(v) for v in operands(case))).value)


def _gradients(case) -> tuple[np.ndarray, np.ndarray]:
    """The kernel's and the input's gradients of the case's convolution for its drawn output gradient, as a
    tape gives them."""
    x, f = (Tensor(v) for v in operands(case))
    with run_context(), open_tape([x, f]) as tape:
        y = _convolve(case, x, f)
        grads, _, _ = gradient(tape, y, [f, x], output_gradients=[Tensor(output_gradient(case, y.shape))])
        return tuple(np.asarray(g.value) for g in grads)


def _family(case):
    rank = len(case["size"])
    return f"{rank}d" if rank != 2 else "2d-one-channel" if case["channels"] == 1 else "2d"


FAMILIES = sorted({_family(c) for c in CASES})


def test_the_recording_holds_its_fields():
    assert RECORDED["fields"] == FIELDS and len(CASES) > 200


@other_width
@pytest.mark.parametrize("family", FAMILIES)
def test_convolutions_give_tensorflows_bits(family):
    differ = []
    for case in (c for c in CASES if _family(c) == family):
        got = tapecli_conv(case)
        if digest(got) != case["sha256"] or f"{got.ravel()[:1].view(np.uint32)[0]:08x}" != case["first"]:
            differ.append({key: case[key] for key in FIELDS[:-2]})
    assert differ == []


GRADIENTS = [c for c in CASES if c["filter_grad_sha256"] and any(k > 1 for k in c["size"])]


@other_width
@pytest.mark.parametrize("rank", [1, 2])
def test_kernel_gradients_give_tensorflows_bits(rank, monkeypatch):
    monkeypatch.setattr(tf_conv, "POOL_THREADS", RECORDED["threads"])      # (TensorFlow's threads split the batch)
    differ = [{key: case[key] for key in FIELDS[:-4]} for case in GRADIENTS
              if len(case["size"]) == rank and digest(_gradients(case)[0]) != case["filter_grad_sha256"]]
    assert differ == []


def _input_grad_followed(case) -> bool:
    """Whether tapecli sums the case's input gradient as TensorFlow does: input_grad_chains knows its chains, and
    its product (every input element times the whole kernel) is within tf_conv.STEP_LIMIT."""
    x, f = operands(case)
    pads = [(0, 0) if case["padding"] == "VALID" else tf_conv._same_pads(n, k, s, d)
            for n, k, s, d in zip(case["spatial"], case["size"], case["strides"], case["dilations"])]
    chains = tf_conv.input_grad_chains(x.shape, case["size"], case["strides"], case["dilations"], pads, f.shape[-1])
    return chains is not None and x.size // x.shape[-1] * f.size <= tf_conv.STEP_LIMIT


@other_width
@pytest.mark.parametrize("rank", [1, 2])
@pytest.mark.parametrize("padding", ["SAME", "VALID"])
@pytest.mark.parametrize("stride", [1, 2])
def test_input_gradients_give_tensorflows_bits(rank, padding, stride, monkeypatch):
    monkeypatch.setattr(tf_conv, "POOL_THREADS", RECORDED["threads"])      # (where the work splits evenly)
    cases = [c for c in CASES if len(c["size"]) == rank and c["padding"] == padding
             and set(c["strides"]) == {stride} and _input_grad_followed(c)]
    assert len(cases) > 3
    differ = [{key: case[key] for key in FIELDS[:-4]} for case in cases
              if digest(_gradients(case)[1]) != case["input_grad_sha256"]]
    assert differ == []


@other_width
def test_input_gradient_chains_are_onednns(monkeypatch):
    """VALID, stride 1: a chain per kernel column (the flipped kernel's taps, row-major) where it is at least as wide
    as high, per tap where higher, one for one column, where the rows split evenly between the threads; stride 2:
    one chain (from the original's first tap) for an odd width, a chain per column for an even one."""
    monkeypatch.setattr(tf_conv, "POOL_THREADS", 2)
    valid = ((0, 0), (0, 0))
    assert tf_conv.input_grad_chains((2, 9, 9, 3), (2, 3), (1, 1), (1, 1), valid, 4) == ((0, 3), (1, 4), (2, 5))
    assert tf_conv.input_grad_chains((2, 9, 9, 3), (3, 2), (1, 1), (1, 1), valid, 4) == tuple((t,) for t in range(6))
    assert tf_conv.input_grad_chains((3, 9, 9, 3), (3, 1), (1, 1), (1, 1), valid, 4) == ((0, 1, 2),)
    assert tf_conv.input_grad_chains((3, 9, 9, 3), (3, 3), (1, 1), (1, 1), valid, 4) is None     # (27 rows)
    assert tf_conv.input_grad_chains((2, 9, 9, 128), (3, 3), (1, 1), (1, 1), valid, 4) is None
    assert tf_conv.input_grad_chains((2, 9, 9, 3), (3, 3), (1, 1), (1, 1), ((1, 1), (0, 0)), 4) is None
    assert tf_conv.input_grad_chains((2, 9, 9, 3), (3, 3), (1, 1), (1, 1), ((1, 1), (1, 1)), 4) == (tuple(range(9)),)
    assert tf_conv.input_grad_chains((4, 9, 9, 3), (2, 2), (2, 2), (1, 1), valid, 4) == ((3, 2, 1, 0),)
    assert tf_conv.input_grad_chains((4, 8, 8, 3), (2, 2), (2, 2), (1, 1), ((0, 0), (0, 0)), 4) == ((3, 1), (2, 0))
    assert tf_conv.input_grad_chains((4, 8, 8, 3), (3, 3), (2, 2), (1, 1), ((0, 1), (0, 1)), 4) is not None
    assert tf_conv.input_grad_chains((3, 8, 8, 3), (2, 2), (2, 2), (1, 1), valid, 4) is None      # (3 images)
    assert tf_conv.input_grad_chains((4, 8, 8, 3), (2, 2), (3, 3), (1, 1), valid, 4) is None
    assert tf_conv.input_grad_chains((4, 8, 3), (3,), (2,), (1,), ((0, 0),), 4) == ((2,), (1,), (0,))


def test_the_kernel_gradient_follows_the_threads():
    """oneDNN splits a batch of one-channel images between every thread (its cost model: each reads less)."""
    for threads, parts in ((1, ((0, 8),)), (2, ((0, 4), (4, 8))), (3, ((0, 3), (3, 6), (6, 8)))):
        assert tf_conv._minibatch_threads(8, 1, 16, (28, 28), (26, 26), (3, 3), (1, 1), threads) == len(parts)
        assert tuple(tf_conv._balance211(8, len(parts), t) for t in range(len(parts))) == parts


@pytest.mark.parametrize("chains", [(tuple(reversed(range(20))),), tuple((j, 5 + j, 10 + j, 15 + j) for j in range(5))])
def test_numba_gives_numpys_bits(chains, monkeypatch):
    rng = np.random.default_rng(5)
    rows = (rng.integers(-64, 64, (300, 40)) / 8).astype(np.float32)     # few bits: sums on halfway points
    kernel = (1 + rng.integers(-64, 64, (40, 6)) * 2.0 ** -20).astype(np.float32)
    monkeypatch.setattr(tf_conv, "NUMPY_LIMIT", 1 << 40)
    by_numpy = tf_conv.product(rows, kernel, chains)
    monkeypatch.setattr(tf_conv, "NUMPY_LIMIT", 0)
    assert np.array_equal(tf_conv.product(rows, kernel, chains), by_numpy)


def test_chains_are_summed_apart():
    """A chain's sum is rounded before the next is added: 1 + 2^-24 + 2^-24 as two chains is 1, as one 1 + 2^-23."""
    rows = np.array([[1.0, 2.0 ** -24, 2.0 ** -24]], np.float32)
    kernel = np.ones((3, 1), np.float32)
    assert tf_conv.product(rows, kernel)[0, 0] == np.float32(1)
    assert tf_conv.product(rows, kernel, ((1, 2), (0,)))[0, 0] == np.float32(1 + 2.0 ** -23)


@pytest.mark.parametrize("smallest, underflows", [(1e-20, True), (1e-18, False), (0.0, False)])
def test_numba_s_underflow_check_is_numpys(smallest, underflows):
    """Both compiled chains refuse the operands NumPy's refuses: a product of their smallest nonzero magnitudes
    below float32's smallest normal number (zeros and NaN aside)."""
    from tapecli.kernels import tf_conv_numba, tf_matmul
    a = np.array([[0.0, -3.0, np.nan], [np.inf, -smallest, 2.0]], np.float32)
    b = np.array([[1e-19, 0.0], [-5.0, np.nan], [1.0, 2.0]], np.float32)
    assert tf_matmul.may_underflow(a, b) == underflows
    assert (tf_conv_numba.chains(a, b, [range(3)]) is None) == underflows
    blocks, firsts = np.array([[0, 2]], np.int64), np.array([0, 1], np.int64)
    assert (tf_conv_numba.blocked_chains(a, b[:2], blocks, firsts) is None) == underflows


@pytest.mark.parametrize("runs", [None, (12, 8, 12, 8)])
def test_numba_gives_numpys_kernel_gradients(runs, monkeypatch):
    rng = np.random.default_rng(6)
    rows = (rng.integers(-64, 64, (120, 30)) / 8).astype(np.float32)
    g = (1 + rng.integers(-64, 64, (120, 6)) * 2.0 ** -20).astype(np.float32)
    plan = (((0, 2), (2, 3)), 40, runs)         # three images of two rows of twenty outputs, on two threads
    monkeypatch.setattr(tf_conv, "NUMPY_CHAIN", 1 << 20)
    by_numpy = tf_conv.filter_grad(rows, g, plan)
    monkeypatch.setattr(tf_conv, "NUMPY_CHAIN", 0)
    assert np.array_equal(tf_conv.filter_grad(rows, g, plan), by_numpy)


def test_other_dtypes_and_large_products_keep_matmul():
    rows, kernel = np.ones((4, 9)), np.ones((9, 2))
    assert tf_conv.product(rows, kernel) is None
    big = np.ones((tf_conv.STEP_LIMIT // 8 + 1, 8), np.float32)
    assert tf_conv.product(big, np.ones((8, 1), np.float32)) is None
    tiny = np.full((4, 9), 1e-30, np.float32)               # products below float32's normal numbers
    assert tf_conv.product(tiny, np.full((9, 2), 1e-10, np.float32)) is None


def _same_bits(a, b) -> bool:
    """The same bits, NaN for NaN (NumPy's and the compiled fused multiply-add may carry other NaN payloads)."""
    return a.shape == b.shape and bool(np.all((a.view(np.uint32) == b.view(np.uint32)) | (np.isnan(a) & np.isnan(b))))


@other_width
def test_recorded_cases_give_tensorflows_bits_on_the_compiled_chains(monkeypatch):
    monkeypatch.setattr(tf_conv, "POOL_THREADS", RECORDED["threads"])
    monkeypatch.setattr(tf_conv, "NUMPY_LIMIT", 0)
    monkeypatch.setattr(tf_conv, "NUMPY_CHAIN", 0)
    differ = [case["index"] for case in CASES if digest(tapecli_conv(case)) != case["sha256"]]
    differ += [case["index"] for case in GRADIENTS if digest(_gradients(case)[0]) != case["filter_grad_sha256"]]
    assert differ == []


@pytest.mark.parametrize("outputs, depth, filters", [(1, 1, 1), (3, 5, 16), (6, 9, 17), (13, 4, 35), (7, 14, 40)])
def test_compiled_chains_keep_each_outputs_order(outputs, depth, filters, monkeypatch):
    """The compiled chains (a vector of filters at a time, four outputs or kernel rows at once, the last group
    and vector partly past the end) give NumPy's chains' bits, with halfway sums, zeros, -0.0, inf and NaN."""
    rng = np.random.default_rng(outputs * depth * filters)
    rows = (rng.integers(-64, 64, (outputs * 3, depth)) / 8).astype(np.float32)
    rows[rng.random(rows.shape) < 0.1] = rng.choice([0.0, -0.0, np.inf, np.nan], size=1)
    kernel = (1 + rng.integers(-64, 64, (depth, filters)) * 2.0 ** -20).astype(np.float32)
    g = (rng.integers(-64, 64, (outputs * 3, filters)) * 2.0 ** -20).astype(np.float32)
    chains = (tuple(reversed(range(depth))),) if depth % 2 else (tuple(range(0, depth, 2)), tuple(range(1, depth, 2)))
    plan = (((0, 1), (1, 3)), outputs, (2, outputs - 2) if outputs > 2 else None)      # three images, two threads
    monkeypatch.setattr(tf_conv, "NUMPY_LIMIT", 1 << 40)
    monkeypatch.setattr(tf_conv, "NUMPY_CHAIN", 1 << 20)
    by_numpy = tf_conv.product(rows, kernel, chains), tf_conv.filter_grad(rows, g, plan)
    monkeypatch.setattr(tf_conv, "NUMPY_LIMIT", 0)
    monkeypatch.setattr(tf_conv, "NUMPY_CHAIN", 0)
    compiled = tf_conv.product(rows, kernel, chains), tf_conv.filter_grad(rows, g, plan)
    assert all(a is not None for a in by_numpy) and all(_same_bits(a, b) for a, b in zip(compiled, by_numpy))
