"""The Numba kernels that give the NumPy kernels' bits (``kernels.EXACT_NUMBA_KERNELS``: the windows' gradient, max
pooling and its gradient, a bias's gradient) against those NumPy kernels, and the dispatch that serves them from
``kernels.STARTED_THRESHOLD`` elements once Numba has started."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from tapecli import kernels
from tapecli import ops  # (the op table registers the kernels' names)
from tapecli.kernels import tf_sums
from tapecli.kernels.numpy_kernels import KERNELS as NUMPY_KERNELS
from tapecli.ops.nn import _pads

ops.load_deferred()

EXACT = ["windows_grad", "max_pool", "max_pool_grad", "bias_add_grad"]
DTYPES = [np.float32, np.float64]
# signed zeros, infinities, NaN and ties (the same value twice in a window: the first is the maximum)
SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, 1.0, -1.0, 2.0, -np.inf]
POOLS = [((2, 2), (2, 2)), ((3, 3), (1, 1)), ((3, 2), (1, 2)), ((2, 2), (3, 3)), ((1, 3), (2, 1))]


@pytest.fixture(scope="module")
def nb():
    from tapecli.kernels import numba_kernels       # (after conftest.py points the cache at a temporary folder)
    return numba_kernels


def values(shape, dtype, seed, kind="special"):
    """Special values; small integers (ties everywhere); or normal draws (whose sums round by their order)."""
    rng = np.random.default_rng(seed)
    if kind == "special":
        return rng.choice(np.array(SPECIAL), size=shape).astype(dtype)
    if kind == "ties":
        return rng.integers(-3, 4, size=shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


KINDS = ("special", "ties", "normal")


def same_bits(got, want, nan_payloads=True):
    """Every bit the same; or, without ``nan_payloads``, NaN where NaN (NumPy's adds of two NaNs keep one or the
    other's sign by where an element falls in its SIMD loop) and every other value's bits."""
    assert got.__class__ is np.ndarray and got.dtype == want.dtype and got.shape == want.shape
    if nan_payloads:
        assert got.tobytes() == want.tobytes()
        return
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    assert got[~nan].tobytes() == want[~nan].tobytes()


def test_the_exact_kernels_are_these():
    assert kernels.EXACT_NUMBA_KERNELS == set(EXACT)
    assert kernels.EXACT_NUMBA_KERNELS <= kernels.NUMBA_KERNELS


# channels: part of a vector (the kernels take a vector of them at a time), and whole vectors and part of one
CHANNELS = [3, 21]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("channels", CHANNELS)
@pytest.mark.parametrize("padding", ["VALID", "SAME", ((1, 0), (0, 2))], ids=str)
@pytest.mark.parametrize("size, strides", POOLS, ids=str)
def test_max_pool_and_its_gradient_give_numpys_bits(nb, size, strides, padding, channels, dtype):
    for seed, kind in itertools.product(range(3), KINDS):
        x = values((2, 7, 6, channels), dtype, seed, kind)
        paddings = padding if isinstance(padding, tuple) else (padding, padding)
        (oh, top, bottom), (ow, left, right) = (_pads(n, k, s, 1, p) for n, k, s, p in
                                               zip(x.shape[1:3], size, strides, paddings))
        if max(top, bottom) >= size[0] or max(left, right) >= size[1]:
            continue            # (a window of padding alone: TensorFlow refuses such paddings)
        attrs = {"size": size, "strides": strides, "pads": (top, bottom, left, right), "out": (oh, ow)}
        same_bits(nb.call("max_pool", x, **attrs), NUMPY_KERNELS["max_pool"](x, **attrs))
        g = values((2, oh, ow, channels), dtype, seed + 10, kind)
        overlapping = any(s < k for s, k in zip(strides, size))       # (sums of gradients: NaN signs as below)
        same_bits(nb.call("max_pool_grad", x, g, **attrs), NUMPY_KERNELS["max_pool_grad"](x, g, **attrs),
                  nan_payloads=not overlapping or kind != "special")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("channels", CHANNELS)
@pytest.mark.parametrize("dilations", [(1, 1), (2, 1)], ids=str)
@pytest.mark.parametrize("size, strides", POOLS, ids=str)
def test_windows_gradient_gives_numpys_bits(nb, size, strides, dilations, channels, dtype):
    shape = (2, 7, 6, channels)
    out = [max(0, (n - (k - 1) * d - 1) // s + 1) for n, k, s, d in zip(shape[1:3], size, strides, dilations)]
    attrs = {"shape": shape, "size": size, "strides": strides, "dilations": dilations}
    for seed, kind in itertools.product(range(3), KINDS):
        g = values((2, *out, *size, channels), dtype, seed, kind)
        # inf + -inf meeting a NaN: NumPy's own NaN sign depends on the element's place in its loop
        same_bits(nb.call("windows_grad", g, **attrs), NUMPY_KERNELS["windows_grad"](g, **attrs),
                  nan_payloads=kind != "special")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(40, 3), (2, 5, 7, 16), (1000, 1), (3, 1), (64, 40), (4096, 2)], ids=str)
@pytest.mark.parametrize("threads", [1, 2, 8])
def test_bias_gradient_gives_numpys_bits(nb, shape, threads, dtype):
    for kind in KINDS:
        g = values(shape, dtype, 5, kind)
        with np.errstate(all="ignore"):
            want = tf_sums.bias_add_grad(g, threads=threads)
        same_bits(nb.call("bias_add_grad", g, threads=threads), want, nan_payloads=kind != "special")


def test_what_the_exact_kernels_do_not_take_is_numpys(nb):
    one_row = np.array([[-0.0, 1.0, np.nan]], np.float32)       # (its own values: -0.0 stays)
    same_bits(nb.call("bias_add_grad", one_row), NUMPY_KERNELS["bias_add_grad"](one_row))
    ints = np.arange(2 * 4 * 4 * 3, dtype=np.int32).reshape(2, 4, 4, 3)
    attrs = {"size": (2, 2), "strides": (2, 2), "pads": (0, 0, 0, 0), "out": (2, 2)}
    same_bits(nb.call("max_pool", ints, **attrs), NUMPY_KERNELS["max_pool"](ints, **attrs))
    same_bits(nb.call("bias_add_grad", ints), NUMPY_KERNELS["bias_add_grad"](ints))
    halves = values((2, 4, 4, 3), np.float16, 1)
    g = values((2, 2, 2, 3), np.float16, 2)
    same_bits(nb.call("max_pool_grad", halves, g, **attrs), NUMPY_KERNELS["max_pool_grad"](halves, g, **attrs))


def test_the_exact_kernels_are_numbas_from_the_started_threshold_once_numba_started(nb, monkeypatch):
    calls = []
    real = nb.call

    def spy(name, *args, **attrs):
        calls.append(name)
        return real(name, *args, **attrs)

    monkeypatch.setattr(nb, "call", spy)
    monkeypatch.delenv("TAPECLI_BACKEND", raising=False)
    g = np.ones((kernels.STARTED_THRESHOLD // 4, 4), np.float32)
    x = np.ones(kernels.STARTED_THRESHOLD, np.float32)
    small = np.ones((kernels.STARTED_THRESHOLD // 8, 4), np.float32)
    for started in (False, True):
        monkeypatch.setattr(kernels, "numba_started", lambda: started)
        calls.clear()
        kernels.call("bias_add_grad", g)
        kernels.call("bias_add_grad", small)
        kernels.call("sigmoid", x)              # (not exact: Numba's from THRESHOLD only)
        assert calls == (["bias_add_grad"] if started else [])


@pytest.mark.parametrize("dtype", DTYPES)
def test_pooling_of_windows_without_a_number_or_of_signed_zeros(nb, dtype):
    # windows of NaN and -inf alone (the lowest float; the first element gets the gradient), -0.0 before +0.0 and
    # +0.0 before -0.0 (the first is the maximum), a NaN first (it stays the first maximum), and SAME padding
    x = np.array([[np.nan, -np.inf, -0.0, 0.0, np.nan, 1.0],
                  [-np.inf, np.nan, 0.0, -0.0, 2.0, 2.0],
                  [0.0, -0.0, -np.inf, -np.inf, 3.0, np.nan]], dtype).reshape(1, 3, 6, 1)
    g = np.array([1.5, -2.5, 3.5, -0.0, 0.25, 8.0], dtype)
    for pads, out in (((0, 0, 0, 0), (1, 3)), ((0, 1, 0, 0), (2, 3))):
        attrs = {"size": (2, 2), "strides": (2, 2), "pads": pads, "out": out}
        top = nb.call("max_pool", x, **attrs)
        same_bits(top, NUMPY_KERNELS["max_pool"](x, **attrs))
        assert top[0, 0, 0, 0] == np.finfo(dtype).min
        grad = g[:out[0] * out[1]].reshape(1, *out, 1)
        same_bits(nb.call("max_pool_grad", x, grad, **attrs), NUMPY_KERNELS["max_pool_grad"](x, grad, **attrs))
