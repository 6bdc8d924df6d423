"""float32 reduce_sum and reduce_mean against TensorFlow's bits (tapecli/kernels/tf_sums.py), recorded by
benchmarks/record_tf_sums.py from TensorFlow 2.21 on the CPU into tests/tf_sums_bits.json; and the same
sums against a literal transcription of Eigen's loops, which checks the orders NumPy's reductions add in."""
from __future__ import annotations

import functools
import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from tapecli import kernels
from tapecli import ops  # noqa: F401  (the op table)
from tapecli.api import run_source
from tapecli.kernels import numpy_kernels, tf_sums

DATA = json.loads((Path(__file__).parents[1] / "tf_sums_bits.json").read_text())
f32 = np.float32
_spec = importlib.util.spec_from_file_location(
    "record_tf_sums", Path(__file__).resolve().parents[2] / "benchmarks" / "record_tf_sums.py")
_recording = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_recording)
inputs = _recording.inputs          # (the inputs the recording made: the same function, the same bits)


def _bits(a):
    return np.asarray(a, np.float32).reshape(-1).view(np.uint32).tolist()


def _axis(a):
    return tuple(a) if isinstance(a, list) else a


KINDS = sorted({c["kind"] for c in DATA["cases"]})


@pytest.mark.parametrize("kind", KINDS)
def test_the_kernels_give_tensorflows_bits(kind):
    with kernels.quiet():
        for case in DATA["cases"]:
            if case["kind"] != kind:
                continue
            x = inputs(tuple(case["shape"]), case["seed"])
            if x.size <= tf_sums.EXACT_MOST:        # (the kernel: TensorFlow's order up to EXACT_MOST values)
                got = kernels.RAW_NUMPY_KERNELS[case["op"]](x, axis=_axis(case["axis"]), keepdims=case["keepdims"])
            else:                                   # (the order itself, beyond, where NumPy's adds faster)
                got = tf_sums.reduce_sum(x, _axis(case["axis"]), case["keepdims"], case["op"] == "mean", most=x.size)
            assert np.shape(got) == tuple(case["out_shape"]), case
            assert _bits(got) == [int(h, 16) for h in case["out"]], (case["op"], case["shape"], case["axis"])


@pytest.mark.parametrize("k", range(len(DATA["programs"])))
def test_keras_losses_and_the_mean_metric_print_tensorflows_digits(k):
    program = DATA["programs"][k]
    assert run_source(program["source"], "prog.py").output == program["output"]


# ------------------------------------------------------------------ Eigen's loops, one float at a time

def _inner(v, first, n):
    """InnerMostDimReducer<..., Vectorizable, UseTreeReduction> over v[first:first + n] (AVX: packets of 8)."""
    if n > 8 * 1024:
        split = 8 * -(-(first + -(-n // 2)) // 8)
        left = min(split - first, n)
        accum = f32(0) + _inner(v, first, left)
        return accum + _inner(v, split, n - left) if left < n else accum
    p = [[f32(0)] * 8 for _ in range(4)]
    start = 0
    if n >= 32:
        for j in range(0, n - n % 32, 32):
            for k in range(4):
                p[k] = [a + b for a, b in zip(p[k], v[first + j + 8 * k:first + j + 8 * k + 8])]
        for k in (1, 2, 3):
            p[0] = [a + b for a, b in zip(p[0], p[k])]
        start = n - n % 32
    if start <= n - 8:
        for j in range(start, n - n % 8, 8):
            p[0] = [a + b for a, b in zip(p[0], v[first + j:first + j + 8])]
        start = n - n % 8
    accum = f32(0)
    for j in range(start, n):
        accum = accum + v[first + j]
    q = p[0]
    s = [q[i] + q[i + 4] for i in range(4)]
    return accum + ((s[0] + s[2]) + (s[1] + s[3]))


def _preserved(cols, c, first, n, four):
    """InnerMostDimPreserver (``four``: 16 rows or more) or the scalar path over n rows of the column ``first``."""
    if not four:
        accum = f32(0)
        for j in range(n):
            accum = accum + cols[j * c + first]
        return accum
    acc = [f32(0)] * 4
    unrolled = n - n % 4
    for j in range(0, unrolled, 4):
        acc = [acc[k] + cols[(j + k) * c + first] for k in range(4)]
    out = ((acc[0] + acc[1]) + acc[2]) + acc[3]
    for j in range(unrolled, n):
        out = out + cols[j * c + first]
    return out


@pytest.mark.parametrize("n", [1, 5, 8, 13, 31, 32, 40, 77, 96, 1000, 8192, 8193, 9001, 16390])
def test_a_full_sum_is_eigens_loop(n):
    x = inputs((n,), n)
    want = _inner(list(x), 0, n)
    with kernels.quiet():
        got = kernels.RAW_NUMPY_KERNELS["sum"](x) if n <= tf_sums.EXACT_MOST else tf_sums.reduce_sum(x, most=n)
        assert _bits(got) == _bits(want)


@pytest.mark.parametrize("shape", [(3, 9), (5, 40), (4, 100), (2, 8195), (3, 9001)])
def test_row_sums_are_eigens_loop_on_each_row(shape):
    x = inputs(shape, 7)
    v = list(x.reshape(-1))
    want = [_inner(v, r * shape[1], shape[1]) for r in range(shape[0])]
    assert _bits(tf_sums.reduce_sum(x, 1, most=x.size)) == _bits(want)


@pytest.mark.parametrize("shape", [(2, 20, 9), (3, 17, 5), (4, 33, 8), (1, 40, 17), (5, 16, 12), (3, 15, 20)])
def test_middle_and_first_axis_sums_are_eigens_packets_and_scalars(shape):
    a, n, c = shape
    x = inputs(shape, 11)
    v = list(x.reshape(-1))
    total = a * c
    want = []
    for i in range(a):
        for k in range(c):
            start = (i * c + k) - (i * c + k) % 8
            packed = start + 8 <= total - total % 8 and start % c + 8 <= c
            want.append(_preserved(v[i * n * c:], c, k, n, four=packed and n >= 16))
    got = tf_sums.reduce_sum(x, 1, most=x.size) if a > 1 else tf_sums.reduce_sum(x[0], 0, most=x.size)
    assert _bits(got) == _bits(want)


def test_other_dtypes_large_sums_and_views():
    x = inputs((200_000,), 3)
    assert tf_sums.reduce_sum(x) is None                    # a full sum TensorFlow splits across threads
    assert tf_sums.reduce_sum(x.astype(np.float64)) is None
    assert tf_sums.reduce_sum(np.zeros((0, 3), np.float32), 0) is None
    y = inputs((40, 30), 4)
    with kernels.quiet():
        s = kernels.RAW_NUMPY_KERNELS["sum"]
        # a transposed view sums as its copy; keepdims and a negative axis as TensorFlow's shapes
        assert _bits(s(y.T, axis=1)) == _bits(s(np.ascontiguousarray(y.T), axis=1))
        assert s(y, axis=-1, keepdims=True).shape == (40, 1)
        assert _bits(s(y, axis=(0, 1))) == _bits(s(y.reshape(-1)))
        assert kernels.RAW_NUMPY_KERNELS["mean"](np.zeros((0,), np.float32)).dtype == np.float32   # NaN, as before
        # float64 sums are TensorFlow's too (packets of 4: tests/data/tf_programs_sums64.json), and float16's
        # (tests/kernels/test_tf_half.py), other dtypes NumPy's
        z = y.astype(np.float64)
        assert s(z, axis=0).tobytes() == tf_sums.reduce_sum(z, 0).tobytes()
        assert tf_sums.reduce_sum(y.astype(np.int32)) is None


BIAS_GRAD = json.loads((Path(__file__).parents[1] / "tf_bias_grad_bits.json").read_text())["cases"]


@pytest.mark.parametrize("threads", sorted({c["threads"] for c in BIAS_GRAD}))
def test_bias_add_grad_gives_tensorflows_bits_on_each_pool(threads):
    # (rows in order from 0 below Eigen's cost model's second thread; above, blocks of rows by the pool's threads)
    bits = {"float32": np.uint32, "float64": np.uint64}
    for case in BIAS_GRAD:
        if case["threads"] == threads:
            x = inputs(tuple(case["shape"]), case["seed"]).astype(case["dtype"])
            got = tf_sums.bias_add_grad(x, threads)
            assert got.dtype == x.dtype and got.shape == (x.shape[-1],)
            assert got.view(bits[case["dtype"]]).tolist() == [int(h, 16) for h in case["out"]], case["shape"]


# TensorFlow 2.21's tf.add_n of n float32 vectors (np.random.default_rng(0): each n vectors of 6, normal times
# 10 ** uniform(-3, 3)), recorded: the first n % 8 (or 8 or 9) in order, then blocks of 8 summed and added
ADD_N = {9: ['0x1.6db65ep+5', '-0x1.b2bf1cp+8', '0x1.c41c48p+8', '0x1.828c24p+8', '-0x1.7604a6p+5', '0x1.173ab4p+10'],
         10: ['-0x1.cf511ep+9', '0x1.d180ccp+9', '0x1.50e5ecp+8', '-0x1.66bb56p+7', '-0x1.a5bbc8p+9', '0x1.7b34d6p+8'],
         17: ['-0x1.56645p+3', '0x1.5c313cp+9', '-0x1.93580cp+8', '-0x1.795d2cp+7', '-0x1.2a452cp+9', '-0x1.1fd298p+10'],
         26: ['0x1.1ab474p+9', '0x1.d37618p+6', '0x1.5e4d3ep+10', '0x1.4f05ap+9', '0x1.b7c80ap+9', '0x1.0ad9e2p+10']}


def test_add_n_sums_in_tensorflows_blocks_of_eight():
    rng = np.random.default_rng(0)
    for n, expected in ADD_N.items():
        xs = [(rng.standard_normal(6) * 10.0 ** rng.uniform(-3, 3, 6)).astype(np.float32) for _ in range(n)]
        got = numpy_kernels.add_n(*xs)
        assert got.dtype == np.float32 and [float(v) for v in got] == [float.fromhex(h) for h in expected], n
        in_order = functools.reduce(np.add, xs)
        assert (got == in_order).all() == (n <= 9)      # (past 9 the blocks are another order: a test that can fail)
