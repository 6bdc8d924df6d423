"""TensorFlow's bits for igamma, igammac, IgammaGradA, betainc, lgamma and digamma (tapecli/kernels/tf_igamma.py):
every point benchmarks/record_tf_igamma.py recorded from TensorFlow 2.21 (tests/tf_igamma_bits.json), float32 and
float64 —
each branch of Eigen's code, its domain errors, subnormal and infinite arguments; and the ops' dtypes and
broadcasting."""
from __future__ import annotations

import base64
import json
import platform
from pathlib import Path

import numpy as np
import pytest

from tapecli.kernels import tf_float32, tf_igamma

STORE = json.loads((Path(__file__).parents[1] / "tf_igamma_bits.json").read_text())
KERNELS = {"igamma": (tf_igamma.igamma, "a", "x"), "igammac": (tf_igamma.igammac, "a", "x"),
           "igamma_grad_a": (tf_igamma.igamma_grad_a, "a", "x"),
           "betainc": (tf_igamma.betainc, "a", "b", "betainc_x"), "lgamma": (tf_igamma.lgamma, "a"),
           "digamma": (tf_igamma.digamma, "digamma_x")}


# TensorFlow's bits came from glibc's libm (logf, expf, lgammaf_r, ...): another C library gives their values within
# an ulp or two, not their bits
SAME_LIBM = tf_float32.libm_float_functions() and platform.libc_ver()[0] == "glibc"


def _array(text: str, dtype: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(text), np.dtype(dtype).newbyteorder("<")).astype(dtype)


def _differing(got: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """Where the bits differ (any nan matches a nan; a zero's sign counts)."""
    unsigned = np.dtype(f"u{got.dtype.itemsize}")
    same = (got.view(unsigned) == expected.view(unsigned)) | (np.isnan(got) & np.isnan(expected))
    return np.flatnonzero(~same)


@pytest.mark.skipif(not SAME_LIBM, reason="TensorFlow's bits are glibc's libm's")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_every_recorded_point_has_tensorflows_bits(name, dtype):
    case = STORE[dtype]
    kernel, *inputs = KERNELS[name]
    args = [_array(case[k], dtype) for k in inputs]
    expected = _array(case[name], dtype)
    got = kernel(*args)
    assert got.dtype == np.dtype(dtype) and got.shape == expected.shape
    bad = _differing(got, expected)
    assert not bad.size, [(tuple(float(v[i]) for v in args), float(got[i]), float(expected[i])) for i in bad[:5]]
    assert expected.size > 2500


def test_a_result_takes_the_broadcast_shape_and_the_values_of_its_elements():
    a = np.array([[0.5], [2.0], [7.5]], np.float32)
    x = np.array([0.1, 1.0, 3.0, 30.0], np.float32)
    got = tf_igamma.igamma(a, x)
    assert got.shape == (3, 4) and got.dtype == np.float32
    for i in range(3):
        for j in range(4):
            assert got[i, j] == tf_igamma.igamma(a[i], x[j:j + 1])[0]
    np.testing.assert_allclose(got + tf_igamma.igammac(a, x), 1, atol=1e-6)
    assert tf_igamma.betainc(np.float64(2.0), np.float64(3.0), np.float64(0.5)).shape == ()
