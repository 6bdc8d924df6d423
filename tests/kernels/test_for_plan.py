"""The NumPy kernels' functions for a loop plan's calls (``kernels.for_plan``): what a kernel decides from its
arguments' layouts decided once, for every later call on arguments laid out alike. Each against its kernel on
awkward values (signed zeros, NaN, infinities) and on other values of the same layouts: the same bits; and no
such function where a kernel's choice depends on the values."""
import numpy as np
import pytest

from tapecli import kernels
from tapecli.kernels import numpy_kernels
from tapecli.ops import nn

RAW = numpy_kernels.RAW_KERNELS


def _bits(a):
    a = np.asarray(a)
    return a.__class__, a.shape, a.dtype, a.tobytes()


def _awkward(rng, shape, dtype):
    x = rng.standard_normal(shape).astype(dtype)
    flat = x.reshape(-1)
    flat[rng.random(flat.size) < 0.1] = -0.0
    if flat.size > 8:
        flat[3], flat[5], flat[7] = np.nan, np.inf, -np.inf
    return x


def _same(kernel, make, attrs=None, calls=3):
    """The kernel's function for the first arguments ``make(rng)`` gives, against the kernel on them and on later
    ones; the function (or the kernel itself where it has none)."""
    attrs = attrs or {}
    rng = np.random.default_rng(0)
    first = make(rng)
    planned = kernels.for_plan(kernel, first, attrs)
    for args in [first] + [make(rng) for _ in range(calls)]:
        want = kernel(*args, **attrs)
        got = planned(*args) if planned is not kernel else kernel(*args, **attrs)
        want, got = (want, got) if isinstance(want, tuple) else ((want,), (got,))
        assert [_bits(w) for w in want] == [_bits(g) for g in got]
    return planned


@pytest.mark.parametrize("shapes", [((256, 64), (64, 128)), ((64, 256), (256, 128)), ((256, 10), (10, 128)),
                                    ((300, 700), (700, 40))])
def test_products_choose_blas_once(shapes):
    with np.errstate(all="ignore"):
        planned = _same(RAW["matmul"], lambda rng: [_awkward(rng, s, np.float32) for s in shapes])
    assert planned is not RAW["matmul"]


@pytest.mark.parametrize("shapes, dtype", [(((3, 4), (4, 5)), np.float32), (((1, 40), (40, 1)), np.float64)])
def test_products_tensorflow_orders_are_chosen_at_each_call(shapes, dtype):
    """A float32 product that tf_matmul computes (unless its values could underflow), a float64 one of one row."""
    rng = np.random.default_rng(1)
    args = [rng.standard_normal(s).astype(dtype) for s in shapes]
    assert kernels.for_plan(RAW["matmul"], args, {}) is RAW["matmul"]


@pytest.mark.parametrize("shape", [(256, 10), (256, 128), (1000, 3), (40, 8, 16)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_bias_gradients(shape, dtype):
    with np.errstate(all="ignore"):
        planned = _same(RAW["bias_add_grad"], lambda rng: [_awkward(rng, shape, dtype)])
    assert planned is not RAW["bias_add_grad"]


@pytest.mark.parametrize("kind", ["sum", "mean"])
@pytest.mark.parametrize("size", [8, 13, 40, 256, 300, 1600])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_whole_sums(kind, size, dtype):
    with np.errstate(all="ignore"):
        planned = _same(RAW[kind], lambda rng: [_awkward(rng, (size,), dtype)], {"axis": None, "keepdims": False})
    assert planned is not RAW[kind]


def test_other_sums_are_the_kernels():
    """Over an axis, or of more values than one leaf holds (float64's 4,096, float16's 1,600)."""
    assert kernels.for_plan(RAW["sum"], [np.ones((16, 4), np.float32)], {"axis": 0, "keepdims": False}) is RAW["sum"]
    for size, dtype in ((4100, np.float64), (1608, np.float16)):
        assert kernels.for_plan(RAW["sum"], [np.ones(size, dtype)], {"axis": None, "keepdims": False}) is RAW["sum"]


@pytest.mark.parametrize("shape", [(256, 10), (400, 3), (60, 5, 7)])
def test_sparse_cross_entropy_pair(shape):
    def make(rng):
        return [_awkward(rng, shape, np.float32) * 3, rng.integers(0, shape[-1], shape[:-1])]
    with np.errstate(all="ignore"):
        planned = _same(nn._sparse_xent_with_backprop, make)
    assert planned is not nn._sparse_xent_with_backprop


def _in_place(kernel, make, into=0):
    """The kernel's function against the kernel where each writes into its argument ``into``'s array."""
    rng = np.random.default_rng(2)
    first = make(rng)
    planned = kernels.for_plan(kernel, first, {})
    for args in [first] + [make(rng) for _ in range(2)]:
        mine = [a.copy() for a in args]
        want = kernel(*args, out=args[into])
        got = planned(*mine, out=mine[into])
        assert want is args[into] and got is mine[into] and _bits(want) == _bits(got)
    return planned


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div"])
@pytest.mark.parametrize("shape, along_rows", [((256, 16), True), ((64, 8, 32), True), ((256, 10), False),
                                              ((256, 128), False)])
def test_a_bias_along_rows(name, shape, along_rows):
    """A short bias repeated along rows of _WIDE elements (of a large array); else NumPy's own broadcast."""
    def make(rng):
        return [_awkward(rng, shape, np.float32), _awkward(rng, shape[-1:], np.float32)]
    with np.errstate(all="ignore"):
        assert (_same(RAW[name], make) is not RAW[name]) == along_rows
        assert (_in_place(RAW[name], make) is not RAW[name]) == along_rows


@pytest.mark.parametrize("shape", [(256, 128), (64, 100), (4096,)])
def test_relu_and_its_gradient(shape):
    with np.errstate(all="ignore"):
        assert _same(RAW["relu"], lambda rng: [_awkward(rng, shape, np.float32)]) is not RAW["relu"]
        assert _in_place(RAW["relu"], lambda rng: [_awkward(rng, shape, np.float32)]) is not RAW["relu"]
        pair = lambda rng: [_awkward(rng, shape, np.float32), _awkward(rng, shape, np.float32)]    # noqa: E731
        assert _same(RAW["masked_grad"], pair, {"kind": "relu", "alpha": 0.2}) is not RAW["masked_grad"]
        assert _in_place(RAW["masked_grad"], pair) is not RAW["masked_grad"]
    assert kernels.for_plan(RAW["masked_grad"], pair(np.random.default_rng(3)), {"kind": "abs"}) \
        is RAW["masked_grad"]
