import numpy as np

a = np.arange(6).reshape(2, 3)
v = a[:, 1:]
v += 10
print(a)
print(a.dtype, str(a.dtype), a.shape, a.T.shape, np.array([1.0, 2.0]).dtype, np.array([1, 2]).dtype)
img = np.array([[0, 128], [255, 64]], dtype=np.uint8)
print(img / 255.0, (img / 255.0).dtype)
try:
    ints = np.array([1, 2, 3])
    ints += 0.5
except Exception as e:
    print(type(e).__name__)
print(np.mean([1, 2, 4]), np.std([1.0, 2.0, 3.0]), np.prod((2, 3)), np.copy(a) is a)
print(np.where(np.array([0, 3, 0, 5])), np.where(a > 11, a, -1))
np.random.seed(0)
x = np.random.randn(3)
perm = np.arange(5)
np.random.shuffle(perm)
print(x, perm, np.random.randint(0, 10, size=4))
rng = np.random.default_rng(1)
print(rng.normal(size=2), rng.integers(0, 5, 3))
print(np.linalg.norm([3.0, 4.0]), np.linalg.inv(np.array([[2.0, 0.0], [0.0, 4.0]])))
w = np.zeros((2, 2), dtype=np.float32)
w[0] = 1.5
print(w, w.sum(), float(w.sum()), w.astype(int), np.float32(0.1) + np.float32(0.2))
print(np.concatenate([a, a]).shape, np.stack([a, a], axis=-1).shape, a.mean(axis=0), a.max(), a.argmax())
print(np.eye(2) @ np.ones((2, 3)), np.dot([1, 2], [3, 4]), np.clip([-1, 5, 2], 0, 3))
b = a.copy()
b[b > 11] = 0
print(b, a.tolist(), np.unique([3, 1, 3, 2]), np.sort([3, 1, 2])[::-1], np.cumsum([1, 2, 3]))
print(np.isclose(0.1 + 0.2, 0.3), np.allclose([1.0], [1.0 + 1e-9]), np.nan, np.inf, np.array([np.nan]) == np.nan)
print(repr(np.array([1.5, 2.0])), repr(np.float64(0.5)), np.float32(0.504), np.array([0.504], dtype=np.float32))
print(a.flatten(), a.ravel()[0], np.expand_dims(a, 0).shape, np.squeeze(np.ones((1, 3))).shape)
print(np.linspace(0, 1, 5), np.zeros_like(a), np.full((2,), 7), np.argsort([3, 1, 2]))

# numpy.testing's comparisons of arrays: a gradient check's assert_allclose
from numpy.testing import assert_allclose, assert_array_equal
import numpy.testing as npt


def cube_sum(x):
    return np.sum(x ** 3)


x = np.array([1.0, -2.0, 0.5])
numeric = np.array([(cube_sum(x + 1e-6 * e) - cube_sum(x - 1e-6 * e)) / 2e-6 for e in np.eye(3)])
assert_allclose(3 * x ** 2, numeric, rtol=1e-5)
np.testing.assert_array_almost_equal(3 * x ** 2, numeric, decimal=5)
npt.assert_equal({"a": [1, 2]}, {"a": [1, 2]})
assert_array_equal(np.arange(3), [0, 1, 2])
npt.assert_approx_equal(1.2345, 1.2346, significant=3)
print("gradient check passed")
try:
    assert_allclose(np.array([1.0, 2.0]), np.array([1.0, 2.1]), rtol=1e-3)
except AssertionError as e:
    print(str(e))
try:
    npt.assert_array_less([1, 5], [2, 4])
except AssertionError as e:
    print(type(e).__name__, str(e).splitlines()[1])
