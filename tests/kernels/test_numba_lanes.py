"""A row's lanes as one value in compiled kernels (kernels/numba_lanes.py): a whole vector and a part of one loaded
and stored (nothing past the part read or written), and each operation the elementwise one, lane by lane: a fused
multiply-add rounded once, an add, selects false where NaN meets, integers as the vector's float."""
import numpy as np
import pytest

pytest.importorskip("numba")
lanes = pytest.importorskip("tapecli.kernels.numba_lanes")
from tapecli.kernels.numba_support import _jit  # noqa: E402
from tapecli.kernels.tf_matmul import fma  # noqa: E402

DTYPES = [np.float32, np.float64]


@_jit
def _copy(a, i, n, out):
    lanes.store(out, i, n, lanes.load(a, i, n))
    return lanes.width(a)


@_jit
def _operations(x, y, z, out):
    # one vector's worth of each operation, in turn into out[k]
    width = lanes.width(x)
    u, v, w = lanes.load(x, 0, width), lanes.load(y, 0, width), lanes.load(z, 0, width)
    lanes.store(out[0], 0, width, lanes.fused_multiply_add(u, v, w))
    lanes.store(out[1], 0, width, lanes.fused_multiply_add(x[0], v, lanes.fill(z[0])))
    lanes.store(out[2], 0, width, lanes.add(u, v))
    lanes.store(out[3], 0, width, lanes.where_greater(u, v, u, 3))
    lanes.store(out[4], 0, width, lanes.where_equal(u, v, w, z[1]))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("start, count", [(0, 0), (0, 3), (5, 64 // np.dtype(np.float32).itemsize), (9, 8), (2, 1)])
def test_loads_and_stores_touch_only_their_part(dtype, start, count):
    width = 64 // np.dtype(dtype).itemsize
    count = min(count, width)
    a = np.arange(40, dtype=dtype) + 1
    out = np.full(40, -1, dtype)
    assert _copy(a[:start + count], start, count, out) == width     # (a ends at the part: a masked load reads no more)
    expected = np.full(40, -1, dtype)
    expected[start:start + count] = a[start:start + count]
    assert out.tobytes() == expected.tobytes()


def _same_bits(got, want) -> bool:
    """Every lane's bits, NaN for NaN (LLVM's operations may carry another NaN's payload)."""
    bits = f"u{got.itemsize}"
    return bool(np.all((got.view(bits) == want.view(bits)) | (np.isnan(got) & np.isnan(want))))


@pytest.mark.parametrize("dtype", DTYPES)
def test_each_lane_is_the_elementwise_operation(dtype):
    width = 64 // np.dtype(dtype).itemsize
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 3.0], dtype)
    rng = np.random.default_rng(3)
    x, y, z = (np.concatenate([special, rng.standard_normal(width)]).astype(dtype)[rng.permutation(width)]
               for _ in range(3))
    x[:2], y[:2], z[:2] = [1 + 2.0 ** -12, 3.0], [1 - 2.0 ** -12, 3.0], [-1.0, 3.0]   # (lane 0: an fma's -2^-24)
    out = np.empty((5, width), dtype)
    _operations(x, y, z, out)
    with np.errstate(all="ignore"):
        expected = [None, None, x + y, np.where(x > y, x, dtype(3)), np.where(x == y, z, z[1])]
        if dtype is np.float32:         # (tf_matmul.fma: float32's fused multiply-add in NumPy)
            expected[:2] = fma(x, y, z), fma(x[0], y, z[0])
    assert out[0][0] == -(2.0 ** -24)
    assert all(_same_bits(got, want) for got, want in zip(out, expected) if want is not None)
