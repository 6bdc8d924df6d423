"""TensorFlow's float32 matrix products, bit for bit (tapecli/kernels/tf_matmul.py), against the bits TensorFlow 2.21
gave on an x86 CPU with AVX-512 (benchmarks/record_tf_matmul.py, tests/data/tf_matmul_bits.json): oneDNN's
kernels, whose bits depend on the machine's vector width, so a machine of another width has other expectations.
The exact fused multiply-add beneath them is checked against exact arithmetic."""
from __future__ import annotations

import json
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from tapecli import api
from tapecli.kernels import numpy_kernels, tf_matmul

sys.path.insert(0, str(Path(__file__).parents[1]))
from tf_matmul_cases import FIELDS, digest, operands  # noqa: E402

RECORDED = json.loads((Path(__file__).parents[1] / "data" / "tf_matmul_bits.json").read_text())
CASES = [dict(zip(RECORDED["fields"], row)) for row in RECORDED["cases"]]
SAME_KERNEL = tf_matmul.vector_width() == RECORDED["vector_width"]
other_width = pytest.mark.skipif(not SAME_KERNEL, reason="oneDNN's kernels have other bits on this machine's vectors")


def _family(case):
    if case["batch_a"] or case["batch_b"]:
        return "batched"
    return f"{'m1' if case['m'] == 1 else 'n1' if case['n'] == 1 else 'mn'}-t{int(case['ta'])}{int(case['tb'])}"


FAMILIES = sorted({_family(c) for c in CASES})


def test_the_recording_holds_its_fields():
    assert RECORDED["fields"] == FIELDS and len(CASES) > 2000


@other_width
@pytest.mark.parametrize("family", FAMILIES)
def test_products_give_tensorflows_bits(family):
    differ = []
    for case in (c for c in CASES if _family(c) == family):
        _, _, a, b = operands(case)
        got = numpy_kernels.matmul(a, b)
        assert got.dtype == np.float32
        if digest(got) != case["sha256"] or f"{got.ravel()[:1].view(np.uint32)[0]:08x}" != case["first"]:
            differ.append({key: case[key] for key in FIELDS[:-2]})
    assert differ == []


def _exact_fma(x, y, c) -> np.float32:
    """x * y + c rounded once to float32 (nearest, ties to even), from exact rationals."""
    exact = Fraction(float(x)) * Fraction(float(y)) + Fraction(float(c))
    near = np.float32(float(exact))
    candidates = [np.nextafter(near, np.float32(-np.inf)), near, np.nextafter(near, np.float32(np.inf))]
    return min(candidates, key=lambda v: (abs(Fraction(float(v)) - exact), int(np.array(v).view(np.uint32)) & 1))


def _halfway_triples(rng, count):
    """Triples whose exact sum x * y + c lies 2^-30 off a float32 halfway point, which float64 rounds onto: c an
    even integer of [2^24, 2^25) (float32's step there is 2), x * y = (1 + 2^-15)(1 - 2^-15) = 1 - 2^-30, each
    scaled by the same power of two and signed at random."""
    scale = 2.0 ** rng.integers(-20, 21, count)
    c = rng.choice([-1, 1], count) * (2 ** 24 + 2 * rng.integers(0, 2 ** 23, count)) * scale
    x = rng.choice([-1, 1], count) * (1 + 2.0 ** -15) * scale
    y = np.full(count, 1 - 2.0 ** -15)
    return x.astype(np.float32), y.astype(np.float32), c.astype(np.float32)


def test_fma_rounds_once():
    rng = np.random.default_rng(7)
    x, y, c = (rng.standard_normal(3000).astype(np.float32) * np.float32(10) ** rng.integers(-3, 4, 3000)
               for _ in range(3))
    halfway = _halfway_triples(rng, 300)
    x, y, c = (np.concatenate([v, h]) for v, h in zip((x, y, c), halfway))
    got = tf_matmul.fma(x, y, c)
    want = np.array([_exact_fma(*t) for t in zip(x, y, c)], np.float32)
    assert got.view(np.uint32).tolist() == want.view(np.uint32).tolist()
    # the halfway triples are the cases that a float64 sum rounded to float32 gets wrong half the time
    x, y, c = halfway
    plain = (x.astype(np.float64) * y + c).astype(np.float32)
    assert (plain != tf_matmul.fma(x, y, c)).sum() > 100


def test_a_chain_of_fmas_gives_fmas_bits_step_by_step():
    # fma_chain asks whether a sum fell on a halfway point once, after the chain: chains with no such step, and
    # chains whose step j (the first, a middle one, the last) is a halfway triple's (the steps before it multiply
    # by zero, so the total reaching it is the triple's c), against fma taken step by step
    rng = np.random.default_rng(11)
    hx, hy, hc = _halfway_triples(rng, 64)
    for halfway_at in (None, 0, 3, 7):
        x = rng.standard_normal((8, 64)).astype(np.float32)
        y = rng.standard_normal((8, 64)).astype(np.float32)
        start = rng.standard_normal(64).astype(np.float32)
        if halfway_at is not None:
            x[:halfway_at] = 0
            x[halfway_at], y[halfway_at], start = hx, hy, hc
        want = start
        for p in range(8):
            want = tf_matmul.fma(x[p], y[p], want)
        assert tf_matmul.fma_chain(x, y, start).view(np.uint32).tolist() == want.view(np.uint32).tolist()
    # where those steps fell, a plain float64 sum rounded to float32 differs from fma's in many lanes
    plain = (hx.astype(np.float64) * hy + hc).astype(np.float32)
    assert (plain != tf_matmul.fma_chain(hx[None], hy[None], hc)).sum() > 10


def test_other_products_keep_numpys():
    a = np.arange(6, dtype=np.float64).reshape(2, 3)
    assert tf_matmul.matmul(a, a.T) is None                         # float64: TensorFlow's Eigen kernel
    big = np.ones((64, 64), np.float32)
    assert tf_matmul.matmul(big, big) is None                       # above the flop limit: OpenBLAS's speed
    tiny = np.full((2, 2), 1e-30, np.float32)
    assert tf_matmul.matmul(tiny, tiny) is None                     # TensorFlow flushes the subnormal products
    assert tf_matmul.matmul(np.ones(3, np.float32), np.ones(3, np.float32)) is None
    assert numpy_kernels.matmul(big, big).tolist() == (big @ big).tolist()


@other_width
def test_a_program_prints_tensorflows_products():
    # TensorFlow 2.21 printed these (NumPy's products end 6.79603385925293, -0.7609531879425049 and
    # 9.838624000549316, 11.538262367248535): n = 1 takes oneDNN's gemv kernel, transpose_b its small-n kernel
    source = ("import numpy as np\nimport tensorflow as tf\nrng = np.random.default_rng(3)\n"
              "x = tf.constant(rng.standard_normal((4, 40)).astype('float32'))\n"
              "w = tf.constant(rng.standard_normal((40, 1)).astype('float32'))\n"
              "v = tf.constant(rng.standard_normal((3, 40)).astype('float32'))\n"
              "print((x @ w).numpy().ravel().tolist())\n"
              "print(tf.matmul(x, v, transpose_b=True).numpy().ravel().tolist()[:4])\n")
    result = api.run_source(source, "p.py")
    assert [str(line) for line in result.output] == EXPECTED_PROGRAM


EXPECTED_PROGRAM = ["[5.141897201538086, -9.365312576293945, 6.796034812927246, -0.7609530687332153]",
                    "[9.838624954223633, 5.990896224975586, -17.065322875976562, 11.538263320922852]"]


TRANSPOSES = """import numpy as np
import tensorflow as tf
rng = np.random.default_rng(3)
x = tf.constant(rng.standard_normal((4, 40)).astype('float32'))
v = tf.constant(rng.standard_normal((3, 40)).astype('float32'))
print(tf.matmul(x, v, transpose_b=True).numpy().ravel().tolist()[:4])
print(tf.matmul(x, tf.transpose(v)).numpy().ravel().tolist()[:4])
a, c = x.numpy(), v.numpy()
print((a @ c.T).ravel().tolist()[:4])
"""


@other_width
@pytest.mark.parametrize("on_cpython", ["auto", "1"])
def test_a_flag_a_transpose_and_numpys_transpose_give_their_own_bits(on_cpython, monkeypatch):
    # TensorFlow 2.21 (a transposed copy sums as an unflagged operand does) and NumPy printed these
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", on_cpython)
    result = api.run_source(TRANSPOSES, "p.py")
    assert [str(line) for line in result.output] == [
        "[5.141896724700928, 9.838624954223633, 5.990896224975586, -9.365311622619629]",
        "[5.141894817352295, 9.838624000549316, 5.990896224975586, -9.365314483642578]",
        "[5.141897201538086, 9.838624000549316, 5.990896224975586, -9.365311622619629]"]


# TensorFlow 2.21's float64 tf.linalg.matmul (np.random.default_rng(3): the operands normal, drawn in this order;
# m, k, n, transpose_a, transpose_b), the MD5 of the product's bytes (its first 10 digits): Eigen's lazy product,
# its row-major and column-major matrix-vector kernels and its dot product
MATVEC64 = [((100, 100, 1, False, False), "18c09580ea"), ((7, 37, 1, False, False), "5da48c51e0"),
            ((7, 38, 1, False, False), "17db0b0be3"), ((9, 39, 1, False, False), "c017109878"),
            ((3, 8, 1, False, False), "2cfb475f56"), ((1, 37, 5, False, False), "4b4da2530c"),
            ((1, 300, 5, False, False), "efbb21bee1"), ((1, 37, 5, False, True), "321533aa58"),
            ((6, 33, 1, True, False), "35dfd4be08"), ((100, 300, 1, True, False), "16b09b6279"),
            ((5, 300, 1, False, False), "937b6b9410"), ((1, 50, 1, False, False), "40b606d041"),
            ((1, 51, 1, False, False), "db042e94d1")]


def test_float64_matrix_vector_products_follow_eigens_kernels():
    import hashlib
    rng = np.random.default_rng(3)
    for (m, k, n, transpose_a, transpose_b), expected in MATVEC64:
        a = rng.standard_normal((k, m) if transpose_a else (m, k))
        b = rng.standard_normal((n, k) if transpose_b else (k, n))
        got = tf_matmul.matmul_double(a.T if transpose_a else a, b.T if transpose_b else b)
        assert hashlib.md5(got.tobytes()).hexdigest()[:10] == expected, (m, k, n, transpose_a, transpose_b)
    a, b = rng.standard_normal((40, 40)), rng.standard_normal((40, 1))
    assert (tf_matmul.matmul_double(a, b) != a @ b).any()           # (BLAS sums in another order)
    assert tf_matmul.matmul_double(a, rng.standard_normal((40, 2))) is None     # (Eigen's GEBP: NumPy's)


# TensorFlow 2.21's float64 tf.matmul of -1s (m x k, or k x m with transpose_a) and 0s (k x n, or n x k with
# transpose_b), every product -0.0: whether its outputs are -0.0, for no flag, transpose_b, transpose_a and both
# (a small product with one row, one column or a depth of one sums from its first product where an operand is
# flagged, else from zero; an operand of one element is taken without its flag here: its layout cannot tell)
ZERO_SIGNS64 = [((2, 2, 1), [0, 1, 1, 1]), ((1, 2, 2), [0, 1, 1, 1]), ((1, 5, 3), [0, 1, 1, 1]),
                ((3, 1, 2), [0, 1, 1, 1]), ((2, 2, 2), [0, 0, 0, 0]), ((3, 5, 3), [0, 0, 0, 0]),
                ((9, 9, 1), [0, 1, 1, 1]), ((10, 10, 1), [0, 0, 0, 0]),
                ((1, 18, 1), [0, 0, 0, 0]), ((1, 1, 17), [0, 1, 1, 1]), ((1, 1, 18), [0, 0, 0, 0]),
                ((1, 1, 30), [0, 0, 0, 0]), ((2, 16, 1), [0, 1, 1, 1]), ((2, 17, 1), [0, 0, 0, 0])]


def test_float64_products_give_tensorflows_signs_of_zero():
    for (m, n, k), expected in ZERO_SIGNS64:
        got = []
        for transpose_a, transpose_b in ((False, False), (False, True), (True, False), (True, True)):
            a = np.full((k, m), -1.0).T if transpose_a else np.full((m, k), -1.0)
            b = np.zeros((n, k)).T if transpose_b else np.zeros((k, n))
            signs = np.signbit(numpy_kernels.matmul(a, b))
            assert signs.all() or not signs.any(), (m, n, k, transpose_a, transpose_b)
            got.append(int(signs.all()))
        assert got == expected, (m, n, k)


def test_a_solves_gradient_keeps_tensorflows_zero():
    # TensorFlow 2.21 printed this: the gradient's product -(grad_b x^T) has x = [0, 1], and TensorFlow's +0.0
    source = ("import numpy as np\nimport tensorflow as tf\n"
              "A = tf.Variable([[3.0, 1.0], [1.0, 2.0]], dtype=tf.float64)\n"
              "b = tf.Variable([[1.0], [2.0]], dtype=tf.float64)\n"
              "with tf.GradientTape() as t:\n    l = tf.reduce_sum(tf.linalg.solve(A, b) ** 2)\n"
              "print(np.round(t.gradient(l, A).numpy(), 6).tolist())\n")
    result = api.run_source(source, "p.py")
    assert [str(line) for line in result.output] == ["[[0.0, 0.4], [-0.0, -1.2]]"]
