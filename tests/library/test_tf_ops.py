"""TensorFlow's op vocabulary as builtins: forward values against NumPy or hand-computed references,
TensorFlow's defaults, dtypes and gradient conventions, and its errors in tapecli's form.
(Gradients of the ops in the op table are checked in test_op_gradients.py.)"""
from __future__ import annotations

import math
import textwrap

import numpy as np
import pytest

from tapecli.api import Options, run_source
from tapecli.errors import KernelValueError, ShapeError, TdfError, TdfTypeError, TdfValueError
from tapecli.runtime.values import Tensor


def run(source, **options):
    return run_source(textwrap.dedent(source).lstrip("\n"), "t.tdf", Options(**options))


def values(source, *names, **options):
    r = run(source, **options)
    out = []
    for n in names:
        v = r.scope.vars[n]
        if isinstance(v, list):
            out.append([None if x is None else np.asarray(getattr(x, "value", x)) for x in v])   # (CPython's: bools)
        else:
            out.append(None if v is None else np.asarray(v.read().value if hasattr(v, "read") else v.value))
    return out if len(out) > 1 else out[0]


def error(source, kind=TdfError):
    with pytest.raises(kind) as info:
        run(source)
    return str(info.value)


X = np.array([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]])
XS = "[[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]]"


# -------------------------------------------------------------- tf.math elementwise

def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


@pytest.mark.parametrize("name, reference", [
    ("expm1", np.expm1), ("sinh", np.sinh), ("cosh", np.cosh), ("atan", np.arctan),
    ("erfc", np.vectorize(math.erfc)), ("lgamma", np.vectorize(math.lgamma)),
    ("log_sigmoid", lambda x: np.log(_sigmoid(x))), ("reciprocal", lambda x: 1 / x),
    ("softsign", lambda x: x / (1 + np.abs(x))),
    ("selu", lambda x: 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * (np.exp(x) - 1))),
    ("silu", lambda x: x * _sigmoid(x)), ("swish", lambda x: x * _sigmoid(x)),
    ("hard_sigmoid", lambda x: np.clip(x + 3, 0, 6) / 6), ("relu6", lambda x: np.clip(x, 0, 6)),
    ("negative", lambda x: -x),
])
def test_unary_values(name, reference):
    x = np.array([-3.5, -0.7, 0.3, 1.9, 6.5, 2.5])
    got = values(f"x = cast({x.tolist()}, float64)\ny = {name}(x)\n", "y")
    np.testing.assert_allclose(got, reference(x), rtol=1e-12, atol=1e-14)


def test_asin_acos_and_binary_values():
    a = np.array([-0.9, -0.2, 0.4, 0.8])
    b = np.array([0.3, -1.5, 2.0, -0.1])
    got = values(f"""
        a = cast({a.tolist()}, float64)
        b = cast({b.tolist()}, float64)
        s = asin(a)
        c = acos(a)
        t = atan2(a, b)
        d = squared_difference(a, b)
        """, "s", "c", "t", "d")
    for g, want in zip(got, (np.arcsin(a), np.arccos(a), np.arctan2(a, b), (a - b) ** 2)):
        np.testing.assert_allclose(g, want, rtol=1e-14)


def test_digamma_known_values():
    # psi(1) = -euler_gamma, psi(1/2) = -euler_gamma - 2 ln 2, psi(n + 1) = psi(n) + 1/n
    g = 0.57721566490153286
    got = values("y = digamma(cast([1.0, 0.5, 5.0, -0.5], float64))\n", "y")
    np.testing.assert_allclose(got, [-g, -g - 2 * math.log(2), -g + 1 + 1 / 2 + 1 / 3 + 1 / 4,
                                     -g - 2 * math.log(2) + 2], rtol=1e-13)
    assert np.isnan(values("y = digamma(cast([0.0, -2.0], float64))\n", "y")).all()
    assert np.isinf(values("y = lgamma(cast([0.0, -1.0], float64))\n", "y")).all()


def test_lgamma_gradient_is_digamma_and_digamma_gradient_is_trigamma():
    gx, gy = values("""
        var x: float64 = [0.5, 1.0]
        tape t(persistent=True):
            y = sum(lgamma(x))
            z = sum(digamma(x))
        gx = t.gradient(y, x)
        gy = t.gradient(z, x)
        """, "gx", "gy")
    g = 0.57721566490153286
    np.testing.assert_allclose(gx, [-g - 2 * math.log(2), -g], rtol=1e-13)
    np.testing.assert_allclose(gy, [math.pi ** 2 / 2, math.pi ** 2 / 6], rtol=1e-13)


def test_named_arithmetic_and_comparisons():
    got = values(f"""
        x = cast({XS}, float32)
        a = add(x, 1.0)
        s = subtract(x, 1.0)
        m = multiply(x, 2.0)
        d = divide(x, 2.0)
        e = equal(x, 0.5)
        n = not_equal(x, 0.5)
        g = greater(x, 1.0)
        l = less_equal(x, 1.0)
        f = floormod(x, 3.0)
        """, "a", "s", "m", "d", "e", "n", "g", "l", "f")
    want = [X + 1, X - 1, X * 2, X / 2, X == 0.5, X != 0.5, X > 1, X <= 1, np.mod(X, 3)]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w)
    assert got[0].dtype == np.float32 and got[4].dtype == np.bool_


def test_constants():
    got = values("a = pi\nb = e\nc = inf\nd = reshape([1.0, 2.0], [2])[newaxis, :]\n", "a", "b", "c", "d")
    assert float(got[0]) == math.pi and float(got[1]) == math.e and got[2] == math.inf
    assert got[3].shape == (1, 2)


# ------------------------------------------------------------ clipping, like, identity

def test_clip_by_value_and_its_gradient_passes_on_the_bounds():
    y, g = values("""
        var x = [-2.0, -1.0, 0.0, 1.0, 3.0]
        tape t:
            y = clip_by_value(x, -1.0, 1.0)
            s = sum(y)
        g = t.gradient(s, x)
        """, "y", "g")
    np.testing.assert_array_equal(y, [-1, -1, 0, 1, 1])
    np.testing.assert_array_equal(g, [0, 1, 1, 1, 0])


def test_clip_by_value_bound_that_would_grow_t_is_an_error():
    assert "[3]" in error("y = clip_by_value(1.0, [0.0, 0.0, 0.0], 2.0)\n", ShapeError)


def test_zeros_like_ones_like_identity():
    z, o, i, w = values(f"""
        var x = {XS}
        z = zeros_like(x)
        o = ones_like(x, dtype=int32)
        i = identity(x)
        tape t:
            y = sum(identity(x) * 3.0)
        w = t.gradient(y, x)
        """, "z", "o", "i", "w")
    assert z.dtype == np.float32 and not z.any() and z.shape == (2, 3)
    assert o.dtype == np.int32 and (o == 1).all()
    np.testing.assert_array_equal(i, X.astype(np.float32))
    np.testing.assert_array_equal(w, np.full((2, 3), 3.0))


def test_convert_to_tensor():
    a, b, c = values("a = convert_to_tensor([1, 2])\nb = convert_to_tensor(1.5, dtype=float64)\n"
                     "c = convert_to_tensor([[1.0, 2.0]])\n", "a", "b", "c")
    assert a.dtype == np.int32 and b.dtype == np.float64 and c.dtype == np.float32
    msg = error("x = cast([1.0], float32)\ny = convert_to_tensor(x, dtype=float64)\n", TdfValueError)
    assert "requested dtype float64" in msg and "float32" in msg



# TensorFlow 2.21's answers, recorded: a host value converted to a requested dtype (None: TensorFlow's TypeError or
# ValueError). NumPy arrays cast as NumPy casts; Python's ints wrap, its floats take float dtypes only, its bools
# bool, the floats, int32, int64 and uint64.
_REQUESTED = [
    (np.array([1.5, -2.5, 300.0]), "int8", [1, -2, 44]), (np.array([1.5, -2.5]), "uint8", [1, 254]),
    (np.array([1.5, 0.0]), "bool", [True, False]), (np.array([True, False]), "float16", [1.0, 0.0]),
    (np.array([200], np.uint8), "int8", [-56]), (np.array([1.5]), "string", None), (np.array([1]), "string", None),
    (np.array(["1", "3"]), "float32", [1.0, 3.0]), (np.array(["1", "b"]), "int32", None),
    (np.float64(1.5), "float32", 1.5),
    (300, "uint8", 44), (-2, "uint8", 254), (2**40, "int32", 0), (2**40, "float16", float("inf")), (3, "bool", None),
    (3, "string", None), (2.0, "int32", None), (1.5, "float16", 1.5), (True, "int32", 1), (True, "uint64", 1),
    (True, "int8", None), (True, "float32", 1.0), ("7", "float32", None), ([1, 2.5], "int32", None),
    ([[1, 2], [3, 300]], "int8", [[1, 2], [3, 44]]), (-2, "uint64", None),
]


@pytest.mark.parametrize("value, dtype, expected", _REQUESTED, ids=[f"{v!r}-{d}" for v, d, _ in _REQUESTED])
def test_a_host_value_converts_to_a_requested_dtype_as_tensorflow_converts_it(value, dtype, expected):
    from tapecli.library.python import host_conversion
    from tapecli.runtime.values import NumpyArray, PythonBool, text_array
    if isinstance(value, (np.ndarray, np.generic)):
        program_value = NumpyArray(np.asarray(value))
    elif isinstance(value, bool):
        program_value = PythonBool(np.array(value))
    elif isinstance(value, str):
        program_value = value
    else:
        program_value = Tensor(np.asarray(value), weak=True)
    t = Tensor(text_array(value)) if isinstance(value, str) else program_value
    if expected is None:
        with pytest.raises((TdfTypeError, TdfValueError)):
            host_conversion(program_value, t, np.dtype(object if dtype == "string" else dtype))
        return
    got = host_conversion(program_value, t, np.dtype(dtype))
    assert got.dtype == np.dtype(dtype) and got.value.tolist() == expected


def test_a_numpy_array_converted_is_a_copy():
    arr = np.array([1.0, 2.0])
    from tapecli.library.python import host_conversion
    from tapecli.runtime.values import NumpyArray
    got = host_conversion(NumpyArray(arr), NumpyArray(arr), np.dtype(np.float64))
    arr[0] = 5.0
    assert got.value.tolist() == [1.0, 2.0]


# ---------------------------------------------------------------- reductions, moments

def test_reduce_variance_std_moments():
    v, s, m, mv = values(f"""
        x = cast({XS}, float64)
        v = reduce_variance(x, axis=1)
        s = reduce_std(x)
        m, mv = moments(x, axes=[0])
        """, "v", "s", "m", "mv")
    np.testing.assert_allclose(v, X.var(axis=1))
    np.testing.assert_allclose(s, X.std())
    np.testing.assert_allclose(m, X.mean(axis=0))
    np.testing.assert_allclose(mv, X.var(axis=0))


def test_moments_variance_gradient_stops_at_the_mean():
    # d/dx mean((x - stop(mean))^2) = 2 (x - mean) / n; with the mean's path it would be the same
    # in sum, but the mean's own gradient (1/n) is added: d(sum(m) + sum(v))/dx = 1/n + 2(x - mean)/n
    g = values("""
        var x: float64 = [1.0, 2.0, 6.0]
        tape t:
            m, v = moments(x, axes=[0])
            y = m + v
        g = t.gradient(y, x)
        """, "g")
    x = np.array([1.0, 2.0, 6.0])
    np.testing.assert_allclose(g, 1 / 3 + 2 * (x - x.mean()) / 3)


def test_reduce_any_all_need_bool():
    a, b = values("a = reduce_any([[True, False], [False, False]], axis=1)\nb = reduce_all([True, True])\n", "a", "b")
    np.testing.assert_array_equal(a, [True, False])
    assert bool(b)
    assert "bool" in error("a = reduce_any([1.0, 0.0])\n", TdfTypeError)


def test_add_n_and_l2_normalize():
    a, n = values(f"x = {XS}\na = add_n([x, x, x])\nn = l2_normalize(cast(x, float64), axis=1)\n", "a", "n")
    np.testing.assert_allclose(a, 3 * X)
    np.testing.assert_allclose(n, X / np.linalg.norm(X, axis=1, keepdims=True))
    assert "[2, 3] and [3]" in error(f"x = cast({XS}, float32)\na = add_n([x, x[0]])\n", ShapeError)


def test_clip_by_global_norm():
    c, n = values("""
        a = cast([3.0, 4.0], float64)
        b = cast([[12.0]], float64)
        c, n = clip_by_global_norm([a, b], 6.5)
        """, "c", "n")
    assert float(n) == 13.0
    np.testing.assert_allclose(c[0], [1.5, 2.0])
    np.testing.assert_allclose(c[1], [[6.0]])


def test_cumsum_cumprod():
    x = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    got = values(f"""
        x = cast({x.tolist()}, float64)
        a = cumsum(x, axis=1)
        b = cumsum(x, axis=1, exclusive=True)
        c = cumsum(x, axis=0, reverse=True)
        d = cumprod(x, axis=-1, exclusive=True, reverse=True)
        """, "a", "b", "c", "d")
    want = [np.cumsum(x, 1), np.cumsum(x, 1) - x, np.cumsum(x[::-1], 0)[::-1],
            np.array([[6.0, 3.0, 1.0], [30.0, 6.0, 1.0]])]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w)


def test_reduce_sum_of_a_list_stacks():
    y = values("a = cast([1.0, 2.0], float64)\nb = cast([3.0, 5.0], float64)\ny = reduce_sum([a, b], axis=0)\n", "y")
    np.testing.assert_array_equal(y, [4.0, 7.0])


def test_norm_orders_and_argmax_output_type():
    x = np.array([[1.0, -2.0], [3.0, 4.0]])
    got = values(f"""
        x = cast({x.tolist()}, float64)
        a = norm(x, ord=1)
        b = norm(x, ord=inf, axis=1)
        c = norm(x, ord=1, axis=[0, 1])
        d = norm(x, ord=inf, axis=[0, 1])
        e = norm(x, ord=3, axis=0)
        f = norm(x, 1)
        i = argmax(x, axis=1, output_type=int32)
        """, "a", "b", "c", "d", "e", "f", "i")
    want = [np.abs(x).sum(), np.abs(x).max(1), np.linalg.norm(x, 1), np.linalg.norm(x, np.inf),
            (np.abs(x) ** 3).sum(0) ** (1 / 3), np.linalg.norm(x, axis=1), np.argmax(x, 1)]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w)
    assert got[-1].dtype == np.int32


# ------------------------------------------------------------------- one_hot

def test_one_hot_defaults_axis_and_out_of_range():
    a, b, c = values("a = one_hot([0, 2, -1, 3], 3)\nb = one_hot([1, 0], 3, on_value=5, off_value=-1, axis=0)\n"
                     "c = one_hot([[1]], 2, dtype=float64)\n", "a", "b", "c")
    np.testing.assert_array_equal(a, [[1, 0, 0], [0, 0, 1], [0, 0, 0], [0, 0, 0]])
    assert a.dtype == np.float32
    np.testing.assert_array_equal(b, [[-1, 5], [5, -1], [-1, -1]])
    assert b.dtype == np.int32
    assert c.shape == (1, 1, 2) and c.dtype == np.float64


def test_one_hot_of_floats_is_tensorflows_invalid_argument():
    assert "int32" in error("a = one_hot([0.0, 1.0], 3)\n", KernelValueError)


# -------------------------------------------------------------- gather, scatter

def test_gather_family_values():
    x = np.arange(12.0).reshape(3, 4)
    got = values(f"""
        x = cast({x.tolist()}, float64)
        a = gather(x, [2, 0])
        b = gather(x, [[1, 3]], axis=1)
        c = gather_nd(x, [[0, 1], [2, 3]])
        d = gather_nd(x, [[1]])
        e = scatter_nd([[1], [3], [1]], [1.0, 2.0, 3.0], [5])
        f = tensor_scatter_nd_add(x, [[0, 0]], [10.0])
        g = boolean_mask(x, [True, False, True])
        h = embedding_lookup(x, [1, 1])
        """, *"abcdefgh")
    e = np.zeros(5)
    e[1], e[3] = 4.0, 2.0
    f = x.copy()
    f[0, 0] += 10
    want = [x[[2, 0]], x[:, [[1, 3]]], x[[0, 2], [1, 3]], x[[1]], e, f, x[[0, 2]], x[[1, 1]]]
    for g_, w in zip(got, want):
        np.testing.assert_array_equal(g_, w)


def test_batch_dims_and_segments():
    x = np.arange(24.0).reshape(2, 4, 3)
    a, b, c, d = values(f"""
        x = cast({x.tolist()}, float64)
        a = gather(x, [[2, 0], [1, 3]], axis=1, batch_dims=1)
        b = gather_nd(x, [[[0, 1]], [[3, 2]]], batch_dims=1)
        c = unsorted_segment_sum(x[0], [1, 0, 1, 3], 4)
        d = segment_sum(x[0], [0, 0, 1, 2])
        """, "a", "b", "c", "d")
    np.testing.assert_array_equal(a, np.stack([x[0][[2, 0]], x[1][[1, 3]]]))
    np.testing.assert_array_equal(b, [[x[0, 0, 1]], [x[1, 3, 2]]])
    np.testing.assert_array_equal(c, [x[0, 1], x[0, 0] + x[0, 2], np.zeros(3), x[0, 3]])
    np.testing.assert_array_equal(d, [x[0, 0] + x[0, 1], x[0, 2], x[0, 3]])
    assert "sorted" in error("d = segment_sum(zeros([3]), [1, 0, 2])\n", TdfValueError)


def test_divide_no_nan_and_float_tests():
    q, g, n, f, c, e, k = values("""
        var x: float64 = [1.0, 2.0, 3.0]
        y = cast([2.0, 0.0, -1.0], float64)
        tape t:
            q = divide_no_nan(x, y)
            s = sum(q)
        g = t.gradient(s, x)
        z = cast([1.0, 0.0], float64) / cast([1.0, 0.0], float64)
        n = is_nan(z)
        w = cast([1.0, 1.0], float64) / cast([1.0, 0.0], float64)
        f = is_finite(w)
        k = is_inf(w)
        c = count_nonzero([[0, 1], [2, 3]], axis=1)
        e = reduce_euclidean_norm(cast([3.0, 4.0], float64))
        """, "q", "g", "n", "f", "c", "e", "k")
    np.testing.assert_array_equal(k, [False, True])
    np.testing.assert_array_equal(q, [0.5, 0.0, -3.0])
    np.testing.assert_array_equal(g, [0.5, 0.0, -1.0])
    np.testing.assert_array_equal(n, [False, True])
    np.testing.assert_array_equal(f, [True, False])
    np.testing.assert_array_equal(c, [1, 2])
    assert c.dtype == np.int64 and float(e) == 5.0


def test_gather_errors():
    assert "indices[1] = 3 is not in [0, 3)" in error("a = gather([1.0, 2.0, 3.0], [0, 3])\n", TdfValueError)
    assert "int32" in error("a = gather([1.0, 2.0], [0.0])\n", TdfTypeError)


def test_split_unstack():
    x = np.arange(12.0).reshape(2, 6)
    a, b, c = values(f"x = cast({x.tolist()}, float64)\na = split(x, 3, axis=1)\nb = split(x, [1, -1, 2], 1)\n"
                     "c = unstack(x)\n", "a", "b", "c")
    for g, w in zip(a, np.split(x, 3, axis=1)):
        np.testing.assert_array_equal(g, w)
    for g, w in zip(b, [x[:, :1], x[:, 1:4], x[:, 4:]]):
        np.testing.assert_array_equal(g, w)
    np.testing.assert_array_equal(c[1], x[1])
    assert "divisible" in error("a = split(zeros([2, 5]), 2, axis=1)\n", TdfValueError)


def test_sorting():
    x = np.array([[3.0, 1.0, 2.0, 1.0], [0.5, -1.0, 4.0, 4.0]])
    got = values(f"""
        x = cast({x.tolist()}, float64)
        a = sort(x)
        b = sort(x, direction="DESCENDING")
        c = argsort(x)
        d = argsort(x, direction="DESCENDING")
        v, i = top_k(x, k=2)
        """, "a", "b", "c", "d", "v", "i")
    np.testing.assert_array_equal(got[0], np.sort(x))
    np.testing.assert_array_equal(got[1], -np.sort(-x))
    np.testing.assert_array_equal(got[2], [[1, 3, 2, 0], [1, 0, 2, 3]])       # ties: lower index first
    np.testing.assert_array_equal(got[3], [[0, 2, 1, 3], [2, 3, 0, 1]])
    np.testing.assert_array_equal(got[4], [[3.0, 2.0], [4.0, 4.0]])
    np.testing.assert_array_equal(got[5], [[0, 2], [2, 3]])
    assert got[5].dtype == np.int32


def test_rearranging():
    x = np.arange(6.0).reshape(2, 3)
    got = values(f"""
        x = cast({x.tolist()}, float64)
        a = reverse(x, [1])
        b = roll(x, 1, 1)
        c = roll(x, [1, -1], [0, 1])
        d = tile(x, [2, 2])
        e = pad(x, [[1, 0], [0, 2]], constant_values=7.0)
        f = pad(x, [[1, 1], [2, 2]], mode="REFLECT")
        g = pad(x, [[2, 2], [3, 1]], mode="SYMMETRIC")
        h = band_part(cast(reshape(range(16), [4, 4]), float64), 1, 0)
        m = sequence_mask([1, 3], 4)
        """, *"abcdefghm")
    want = [x[:, ::-1], np.roll(x, 1, 1), np.roll(np.roll(x, 1, 0), -1, 1), np.tile(x, (2, 2)),
            np.pad(x, [(1, 0), (0, 2)], constant_values=7.0), np.pad(x, [(1, 1), (2, 2)], mode="reflect"),
            np.pad(x, [(2, 2), (3, 1)], mode="symmetric"),
            np.tril(np.triu(np.arange(16.0).reshape(4, 4), -1)), [[True, False, False, False], [True, True, True, False]]]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    assert "REFLECT" in error("a = pad(zeros([2, 3]), [[2, 0], [0, 0]], mode=\"REFLECT\")\n", TdfValueError)
    assert "length 2" in error("a = tile(zeros([2, 3]), [2])\n", ShapeError)


# --------------------------------------------------------------- cross-entropies

def _log_softmax(z):
    z = z - z.max(-1, keepdims=True)
    return z - np.log(np.exp(z).sum(-1, keepdims=True))


def test_cross_entropies_and_their_gradients():
    z = np.array([[2.0, -1.0, 0.5], [0.0, 3.0, -2.0]])
    y = np.array([[0.2, 0.3, 0.5], [1.0, 0.0, 0.0]])
    b = np.array([[1.0, 0.0, 0.5], [0.0, 1.0, 1.0]])
    got = values(f"""
        var z: float64 = {z.tolist()}
        tape t(persistent=True):
            s = sparse_softmax_cross_entropy_with_logits(labels=[2, 1], logits=z)
            c = softmax_cross_entropy_with_logits(labels=cast({y.tolist()}, float64), logits=z)
            b = sigmoid_cross_entropy_with_logits(labels=cast({b.tolist()}, float64), logits=z)
            ss = sum(s)
            bs = sum(b)
        gs = t.gradient(ss, z)
        gb = t.gradient(bs, z)
        """, "s", "c", "b", "gs", "gb")
    ls = _log_softmax(z)
    np.testing.assert_allclose(got[0], -ls[[0, 1], [2, 1]])
    np.testing.assert_allclose(got[1], -(y * ls).sum(-1))
    np.testing.assert_allclose(got[2], np.maximum(z, 0) - z * b + np.log1p(np.exp(-np.abs(z))))
    onehot = np.eye(3)[[2, 1]]
    np.testing.assert_allclose(got[3], np.exp(ls) - onehot)
    np.testing.assert_allclose(got[4], 1 / (1 + np.exp(-z)) - b)


def test_cross_entropy_errors():
    assert "outside the valid range of [0, 3)" in error(
        "s = sparse_softmax_cross_entropy_with_logits(labels=[3], logits=[[1.0, 2.0, 3.0]])\n", TdfValueError)
    msg = error("s = sigmoid_cross_entropy_with_logits(labels=[1.0, 0.0], logits=[1.0, 2.0, 3.0])\n", ShapeError)
    assert "[3] vs [2]" in msg


def test_sigmoid_cross_entropy_gradient_at_zero_logit():
    g = values("""
        var z: float64 = [0.0]
        tape t:
            l = sum(sigmoid_cross_entropy_with_logits(labels=cast([0.25], float64), logits=z))
        g = t.gradient(l, z)
        """, "g")
    np.testing.assert_allclose(g, [0.25])


# --------------------------------------------------------- bias, batch normalization

def test_bias_add_and_batch_normalization():
    x = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    a, n = values(f"""
        x = cast({x.tolist()}, float64)
        a = bias_add(x, cast([1.0, 0.0, -1.0], float64))
        n = batch_normalization(x, 2.0, 4.0, 1.0, 3.0, 0.001)
        """, "a", "n")
    np.testing.assert_allclose(a, x + [1, 0, -1])
    # Python numbers make a float32 inv and shift (as in TensorFlow), cast to x's dtype afterwards
    inv = np.float32(1) / np.sqrt(np.float32(4.0 + 0.001)) * np.float32(3)
    shift = np.float32(1) - np.float32(2) * inv
    np.testing.assert_allclose(n, x * np.float64(inv) + np.float64(shift), rtol=1e-15)
    assert "as many biases" in error("a = bias_add(zeros([2, 3]), zeros([2]))\n", ShapeError)


# ------------------------------------------------------------ convolution, pooling

def _conv2d_reference(x, f, stride, padding):
    n, h, w, c = x.shape
    kh, kw, _, co = f.shape
    if padding == "SAME":
        oh, ow = -(-h // stride), -(-w // stride)
        ph = max((oh - 1) * stride + kh - h, 0)
        pw = max((ow - 1) * stride + kw - w, 0)
        x = np.pad(x, [(0, 0), (ph // 2, ph - ph // 2), (pw // 2, pw - pw // 2), (0, 0)])
    else:
        oh, ow = (h - kh) // stride + 1, (w - kw) // stride + 1
    out = np.zeros((n, oh, ow, co))
    for i in range(oh):
        for j in range(ow):
            window = x[:, i * stride:i * stride + kh, j * stride:j * stride + kw, :]
            out[:, i, j, :] = np.tensordot(window, f, axes=([1, 2, 3], [0, 1, 2]))
    return out


@pytest.mark.parametrize("stride, padding", [(1, "VALID"), (1, "SAME"), (2, "SAME"), (2, "VALID")])
def test_conv2d_against_a_loop(stride, padding):
    rng = np.random.default_rng(3)
    x = rng.normal(size=(2, 5, 6, 3))
    f = rng.normal(size=(3, 2, 3, 4))
    got = values(f"""
        x = cast({x.tolist()}, float64)
        f = cast({f.tolist()}, float64)
        y = conv2d(x, f, strides={stride}, padding="{padding}")
        """, "y")
    np.testing.assert_allclose(got, _conv2d_reference(x, f, stride, padding), rtol=1e-12)


def test_conv1d_and_strides_as_four_ints():
    rng = np.random.default_rng(4)
    x = rng.normal(size=(1, 7, 2))
    f = rng.normal(size=(3, 2, 2))
    a, b = values(f"""
        x = cast({x.tolist()}, float64)
        f = cast({f.tolist()}, float64)
        a = conv1d(x, f, stride=2, padding="SAME")
        b = conv2d(reshape(x, [1, 1, 7, 2]), reshape(f, [1, 3, 2, 2]), [1, 1, 2, 1], "SAME")
        """, "a", "b")
    np.testing.assert_allclose(a, _conv2d_reference(x[:, None], f[None], 2, "SAME")[:, 0], rtol=1e-12)
    np.testing.assert_allclose(a, b[:, 0])


def test_conv2d_depth_mismatch_names_both_shapes():
    msg = error("y = conv2d(zeros([1, 4, 4, 3]), zeros([2, 2, 2, 1]), 1, \"VALID\")\n", ShapeError)
    assert "[1, 4, 4, 3]" in msg and "[2, 2, 2, 1]" in msg


def test_pooling_same_and_valid():
    x = np.arange(1.0, 26.0).reshape(1, 5, 5, 1)
    m, a, gm = values(f"""
        var x: float64 = {x.tolist()}
        m = max_pool2d(x, 2, 2, "SAME")
        a = avg_pool2d(x, 2, 2, "SAME")
        tape t:
            s = sum(max_pool2d(x, 3, 2, "VALID"))
        gm = t.gradient(s, x)
        """, "m", "a", "gm")
    v = x[0, :, :, 0]
    np.testing.assert_array_equal(m[0, :, :, 0], [[7, 9, 10], [17, 19, 20], [22, 24, 25]])
    # SAME averaging counts only the input's own elements: the last row and column are averages of 2 and 1
    want = np.array([[v[0:2, 0:2].mean(), v[0:2, 2:4].mean(), v[0:2, 4:5].mean()],
                     [v[2:4, 0:2].mean(), v[2:4, 2:4].mean(), v[2:4, 4:5].mean()],
                     [v[4:5, 0:2].mean(), v[4:5, 2:4].mean(), v[4:5, 4:5].mean()]])
    np.testing.assert_allclose(a[0, :, :, 0], want)
    g = np.zeros((5, 5))
    for r, c in ((2, 2), (2, 4), (4, 2), (4, 4)):
        g[r, c] += 1
    np.testing.assert_array_equal(gm[0, :, :, 0], g)


def test_max_pool_gradient_goes_to_the_first_maximum_of_a_tie():
    g = values("""
        var x: float64 = reshape([1.0, 1.0, 1.0, 0.0], [1, 2, 2, 1])
        tape t:
            s = sum(max_pool2d(x, 2, 2, "VALID"))
        g = t.gradient(s, x)
        """, "g")
    np.testing.assert_array_equal(g.reshape(-1), [1, 0, 0, 0])


def test_max_pool_follows_tensorflow_on_nan_inf_and_signed_zeros():
    # TensorFlow 2.21: MaxPool takes an element where it is greater, from the lowest float up (NaN never is);
    # MaxPoolGrad's maximum starts at the window's first element (a NaN there stays)
    y, g = values("""
        n = float("nan")
        i = float("inf")
        x = reshape(constant([[n, 1, n, n, -i, -i, 0, -0.0], [2, 1, n, n, -i, -i, -0.0, 0]]), [1, 2, 8, 1])
        tape t:
            watch x
            y = max_pool2d(x, 2, 2, "VALID")
        g = t.gradient(y, x)
        """, "y", "g")
    lowest = np.finfo(np.float32).min
    np.testing.assert_array_equal(y.reshape(-1), [2, lowest, lowest, 0])
    assert not np.signbit(y.reshape(-1)[3])
    np.testing.assert_array_equal(g.reshape(2, 8), [[1, 0, 1, 0, 1, 0, 1, 0], [0] * 8])


def test_max_pool_of_an_empty_batch_or_no_channels_is_empty():
    y, z, g = values("""
        x = zeros([0, 4, 4, 2])
        tape t:
            watch x
            y = max_pool2d(x, 2, 2, "VALID")
            s = reduce_sum(y * 2.0)
        g = t.gradient(s, x)
        z = max_pool2d(zeros([2, 4, 4, 0]), 2, 2, "SAME")
        """, "y", "z", "g")
    assert y.shape == (0, 2, 2, 2) and z.shape == (2, 2, 2, 0)
    assert g.shape == (0, 4, 4, 2) and g.dtype == np.float32


def test_max_pool_keeps_the_first_of_tied_zeros_as_tensorflow():
    # TensorFlow 2.21: the maximum of tied zeros is the first one, bits and gradient
    y, g = values("""
        x = reshape(constant([[0.0, -0.0, -0.0, 0.0, 1, 1], [-0.0, 0.0, 0.0, -0.0, 1, 2]]), [1, 2, 6, 1])
        tape t:
            watch x
            y = max_pool2d(x, 2, 2, "VALID")
        g = t.gradient(y, x)
        """, "y", "g")
    np.testing.assert_array_equal(y.reshape(-1), [0, 0, 2])
    np.testing.assert_array_equal(np.signbit(y.reshape(-1)), [False, True, False])
    np.testing.assert_array_equal(g.reshape(2, 6), [[1, 0, 1, 0, 0, 0], [0, 0, 0, 0, 0, 1]])
    # windows whose zero last in order has the other sign (NumPy's maximum of the four gives that one's)
    y, g = values("""
        x = reshape(constant([[0.0, 0.0, -0.0, 0.0], [0.0, -0.0, 0.0, 0.0]]), [1, 2, 4, 1])
        tape t:
            watch x
            y = max_pool2d(x, 2, 2, "VALID")
        g = t.gradient(y, x)
        """, "y", "g")
    np.testing.assert_array_equal(np.signbit(y.reshape(-1)), [False, True])
    np.testing.assert_array_equal(g.reshape(2, 4), [[1, 0, 1, 0], [0, 0, 0, 0]])


def test_max_pool_with_nan_in_padded_overlapping_windows_follows_tensorflow():
    # TensorFlow 2.21's values and gradients: padding is never in a window, a NaN first in one keeps its gradient
    a, ga, b, gb = values("""
        n = float("nan")
        i = float("inf")
        x = reshape(constant([[n, 2, 3], [4, n, 6], [7, 8, -i]]), [1, 3, 3, 1])
        tape t(persistent=True):
            watch x
            a = max_pool2d(x, 3, 2, "SAME")
            b = max_pool2d(x, 2, 1, "SAME")
        ga = t.gradient(a, x)
        gb = t.gradient(b, x)
        """, "a", "ga", "b", "gb")
    np.testing.assert_array_equal(a.reshape(-1), [4, 6, 8, 8])
    np.testing.assert_array_equal(ga.reshape(-1), [1, 0, 0, 0, 1, 1, 0, 1, 0])
    np.testing.assert_array_equal(b.reshape(-1), [4, 6, 6, 8, 8, 6, 8, 8, np.finfo(np.float32).min])
    np.testing.assert_array_equal(gb.reshape(-1), [1, 0, 0, 0, 1, 3, 0, 3, 1])


def test_max_pool_overlapping_same_windows_add_up_as_tensorflow():
    # TensorFlow 2.21's values and gradients for these windows
    m, gm, w, gw = values("""
        x = reshape(constant([1.0, 2, 3, 4, 5, 6, 7, 8, 9]), [1, 3, 3, 1])
        tape t(persistent=True):
            watch x
            m = max_pool2d(x, 2, 1, "SAME")
            w = max_pool2d(-x, 3, 2, "SAME")
        gm = t.gradient(m, x)
        gw = t.gradient(w, x)
        """, "m", "gm", "w", "gw")
    np.testing.assert_array_equal(m.reshape(-1), [5, 6, 6, 8, 9, 9, 8, 9, 9])
    np.testing.assert_array_equal(gm.reshape(-1), [0, 0, 0, 0, 1, 2, 0, 2, 4])
    np.testing.assert_array_equal(w.reshape(-1), [-1, -2, -4, -5])
    np.testing.assert_array_equal(gw.reshape(-1), [-1, -1, 0, -1, -1, 0, 0, 0, 0])


# --------------------------------------------------------------------- random

def test_dropout_scales_and_is_seeded():
    a, b, c = values("""
        x = ones([1000], dtype=float64)
        a = dropout(x, 0.25, seed=3)
        b = dropout(x, 0.25, seed=3)
        c = dropout(x, 0.0)
        """, "a", "b", "c")
    np.testing.assert_array_equal(a, b)
    assert set(np.unique(a)) <= {0.0, 1 / 0.75}
    assert 0.15 < (a == 0).mean() < 0.35
    np.testing.assert_array_equal(c, 1.0)
    assert "[0, 1)" in error("a = dropout(ones([3]), 1.0)\n", TdfValueError)


def test_truncated_normal_and_set_seed():
    a, b = values("set_seed(5)\na = truncated_normal([2000], stddev=2.0)\n"
                  "set_seed(5)\nb = truncated_normal([2000], stddev=2.0)\n", "a", "b")
    np.testing.assert_array_equal(a, b)
    assert np.abs(a).max() <= 4.0 and a.dtype == np.float32


# --------------------------------------------------------------------- linalg

def test_linalg_values():
    rng = np.random.default_rng(7)
    a = rng.normal(size=(3, 3)) + 3 * np.eye(3)
    b = rng.normal(size=(3, 2))
    s = a @ a.T
    got = values(f"""
        a = cast({a.tolist()}, float64)
        b = cast({b.tolist()}, float64)
        s = cast({s.tolist()}, float64)
        i = inv(a)
        d = det(a)
        sg, ld = slogdet(a)
        x = solve(a, b)
        l = cholesky(s)
        u = triangular_solve(l, b)
        tr = trace(a)
        dp = diag_part(a)
        dg = diag([1.0, 2.0])
        mv = matvec(a, b[:, 0])
        e = einsum("ij,jk->ik", a, b)
        td = tensordot(a, b, 1)
        w, v = eigh(s)
        lg = logdet(s)
        """, "i", "d", "sg", "ld", "x", "l", "u", "tr", "dp", "dg", "mv", "e", "td", "w", "v", "lg")
    L = np.linalg.cholesky(s)
    sign, logabs = np.linalg.slogdet(a)
    want = [np.linalg.inv(a), np.linalg.det(a), sign, logabs, np.linalg.solve(a, b), L,
            np.linalg.solve(L, b), np.trace(a), np.diag(a), np.diag([1.0, 2.0]), a @ b[:, 0], a @ b, a @ b,
            np.linalg.eigvalsh(s), None, np.linalg.slogdet(s)[1]]
    for k, (g, w) in enumerate(zip(got, want)):
        if w is not None:
            np.testing.assert_allclose(g, w, rtol=1e-10, err_msg=str(k))
    v, w = got[14], got[13]
    np.testing.assert_allclose(s @ v, v * w, rtol=1e-10)


def test_linalg_errors():
    assert "square" in error("a = inv(zeros([2, 3]))\n", ShapeError)
    assert "singular" in error("a = inv(cast([[1.0, 2.0], [2.0, 4.0]], float64))\n", TdfValueError)
    assert "positive definite" in error("a = cholesky(cast([[1.0, 2.0], [2.0, 1.0]], float64))\n", TdfValueError)
    msg = error("a = einsum(\"ij,jk->ik\", zeros([2, 3]), zeros([4, 2]))\n", ShapeError)
    assert "[2, 3]" in msg and "[4, 2]" in msg


def test_qr_and_svd_values():
    rng = np.random.default_rng(9)
    a = rng.normal(size=(4, 3))
    q, r, s, u, v, s2 = values(f"""
        a = cast({a.tolist()}, float64)
        q, r = qr(a)
        s, u, v = svd(a)
        s2 = svd(a, compute_uv=False)
        """, "q", "r", "s", "u", "v", "s2")
    np.testing.assert_allclose(q @ r, a, atol=1e-12)
    np.testing.assert_allclose(np.triu(r), r)
    np.testing.assert_allclose(q.T @ q, np.eye(3), atol=1e-12)
    np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False))
    np.testing.assert_allclose(u @ np.diag(s) @ v.T, a, atol=1e-12)
    np.testing.assert_array_equal(s, s2)


def test_svd_singular_value_gradient_is_u_v_transpose():
    rng = np.random.default_rng(10)
    a = rng.normal(size=(3, 2))
    g = values(f"""
        var a: float64 = {a.tolist()}
        tape t:
            s = svd(a, compute_uv=False)
            y = sum(s)
        g = t.gradient(y, a)
        """, "g")
    u, _, vh = np.linalg.svd(a, full_matrices=False)
    np.testing.assert_allclose(g, u @ vh, rtol=1e-12)


def test_aliases_and_logical_ops():
    rng = np.random.default_rng(11)
    a = rng.normal(size=(3, 3)) + 3 * np.eye(3)
    b = rng.normal(size=(3, 1))
    got = values(f"""
        a = cast({a.tolist()}, float64)
        b = cast({b.tolist()}, float64)
        i = matrix_inverse(a)
        d = matrix_determinant(a)
        s = matrix_solve(a, b)
        ts = matrix_triangular_solve(a, b, lower=False)
        mt = matrix_transpose(a)
        ad = adjoint(a)
        dg = matrix_diag(cast([1.0, 2.0], float64))
        dp = matrix_diag_part(a)
        bp = matrix_band_part(a, 0, 0)
        td = truediv(a, 2.0)
        ge = greater_equal(a, 0.0)
        ls = less(a, 0.0)
        la = logical_and(ge, ls)
        lo = logical_or(ge, ls)
        lx = logical_xor(ge, ls)
        ln = logical_not(ge)
        rm = reduce_mean([a, a], axis=0)
        rn = reduce_min(a, axis=1)
        rl = reduce_logsumexp(a, axis=0)
        """, "i", "d", "s", "ts", "mt", "ad", "dg", "dp", "bp", "td", "ge", "ls", "la", "lo", "lx", "ln", "rm",
        "rn", "rl")
    want = [np.linalg.inv(a), np.linalg.det(a), np.linalg.solve(a, b), np.linalg.solve(np.triu(a), b), a.T, a.T,
            np.diag([1.0, 2.0]), np.diag(a), np.diag(np.diag(a)), a / 2, a >= 0, a < 0, (a >= 0) & (a < 0),
            (a >= 0) | (a < 0), (a >= 0) ^ (a < 0), ~(a >= 0), a, a.min(1),
            np.log(np.exp(a).sum(0))]
    for k, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_allclose(g, w, rtol=1e-12, err_msg=str(k))
    assert "bool" in error("y = logical_and([1.0], [0.0])\n", TdfTypeError)


def test_pool_and_cross_entropy_aliases():
    x = np.arange(16.0).reshape(1, 4, 4, 1)
    m, a, c = values(f"""
        x = cast({x.tolist()}, float64)
        m = max_pool(x, 2, 2, "VALID")
        a = avg_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
        c = softmax_cross_entropy_with_logits_v2(labels=cast([[0.0, 1.0]], float64), logits=cast([[1.0, 2.0]], float64))
        """, "m", "a", "c")
    np.testing.assert_array_equal(m[0, :, :, 0], [[5, 7], [13, 15]])
    np.testing.assert_array_equal(a[0, :, :, 0], [[2.5, 4.5], [10.5, 12.5]])
    np.testing.assert_allclose(c, [np.log1p(np.exp(-1.0))])


def test_every_tensorflow_builtin_is_exercised():
    """Each builtin of the TensorFlow vocabulary modules is called by a test in this file or in
    test_tf_api_forms.py (forward values), by a program of the surface rows or of the programs that TensorFlow
    recorded (tests/tf_expectations, tests/data/tf_programs_*.json), or built into a finite-difference row of
    test_op_gradients.py (by its ops function)."""
    import json
    from pathlib import Path

    import tapecli.library  # noqa: F401
    from tapecli.interpreter.registry import BUILTINS, load_deferred
    load_deferred()                   # every family, those imported on first use too
    surface = Path(__file__).parents[1] / "tf_expectations"
    tests = Path(__file__).read_text() + (Path(__file__).parent / "test_tf_api_forms.py").read_text()
    programs = [p["program"] for path in (Path(__file__).parents[1] / "data").glob("tf_programs_*.json")
                for p in json.loads(path.read_text()).values()]
    here = tests + "".join(row["program"] for path in sorted(surface.glob("*.json"))
                           for row in json.loads(path.read_text())) + "".join(programs)
    rows = (Path(__file__).parents[1] / "autodiff" / "test_op_gradients.py").read_text()
    missing = []
    for name, f in BUILTINS.items():
        module = getattr(f, "__module__", "") or ""
        if not module.startswith("tapecli.library.tf_"):
            continue
        # (tf.experimental.numpy's, experimental.numpy.X, as programs spell them: tnp.X)
        spelled = name.replace("experimental.numpy.", "tnp.")
        if f"{spelled}(" not in here and f'"{name}"' not in here and f"ops.{name}(" not in rows:
            missing.append(name)
    assert not missing, f"TensorFlow builtins no test calls: {sorted(missing)}"


def test_debugging_checks_and_the_eager_switch_give_tensorflows_values():
    """Recorded from TensorFlow 2.21: check_numerics and assert_all_finite give the tensor back, assert_near
    passes within its tolerances, functions_run_eagerly follows run_functions_eagerly; a failed check raises."""
    y, z, ok, flags = values("""
        import tensorflow as tf
        x = tf.constant([1.0, -2.5])
        y = tf.debugging.check_numerics(x, 'x bad')
        z = tf.debugging.assert_all_finite(x * 2.0, 'x bad')
        tf.debugging.assert_near(x, x + 1e-7)
        tf.debugging.assert_near(1.0, 1.05, atol=0.1)
        ok = tf.reduce_sum(x)
        before = tf.config.functions_run_eagerly()
        tf.config.run_functions_eagerly(True)
        during = tf.config.functions_run_eagerly()
        tf.config.run_functions_eagerly(False)
        flags = [before, during, tf.config.functions_run_eagerly()]
    """, "y", "z", "ok", "flags")
    assert y.tolist() == [1.0, -2.5] and z.tolist() == [2.0, -5.0] and float(ok) == -1.5
    assert [bool(f) for f in flags] == [False, True, False]
    for failing in ("tf.debugging.check_numerics(tf.constant([1.0, float('nan')]), 'x bad')",
                    "tf.debugging.assert_near(tf.constant([1.0, 2.0]), tf.constant([1.0, 2.00001]))"):
        with pytest.raises(TdfError):
            run("import tensorflow as tf\n" + failing + "\n")


@pytest.mark.parametrize("call, holds", [        # recorded from TensorFlow 2.21: None, or InvalidArgumentError
    ("assert_positive(tf.constant([1, 2]))", True), ("assert_positive(tf.constant([1, -1]))", False),
    ("assert_negative(tf.constant([-1.0]))", True), ("assert_negative(tf.constant([0.0]))", False),
    ("assert_non_negative(tf.constant([0, 3]))", True), ("assert_non_negative(tf.constant([-1]))", False),
    ("assert_non_positive(tf.constant([0.0, -2.0]))", True), ("assert_non_positive(tf.constant([1.0]))", False),
    ("assert_greater_equal(tf.constant([2, 2]), tf.constant([1, 2]))", True),
    ("assert_greater_equal(tf.constant([0]), tf.constant([1]))", False),
    ("assert_less_equal(tf.constant([1.0]), 1.0)", True), ("assert_less_equal(tf.constant([2.0]), 1.0)", False),
    ("assert_none_equal(tf.constant([1, 2]), tf.constant([3, 4]))", True),
    ("assert_none_equal(tf.constant([1, 2]), tf.constant([1, 4]))", False),
])
def test_the_debugging_assertions_of_signs_and_orders(call, holds):
    source = (f"import tensorflow as tf\ntry:\n    r = tf.debugging.{call}\n    print('ok', r)\n"
              "except tf.errors.InvalidArgumentError:\n    print('caught')\n")
    assert run_source(source, "t.py").output == (["ok None"] if holds else ["caught"])


@pytest.mark.parametrize("shapes, message", [       # recorded from TensorFlow 2.21: None, or its ValueError
    ("[(x, ('N', 3)), (y, ('N', 'D')), (z, ('*', 'N', 3))]", None),
    ("[(x, (2, '.')), (y, (None, 4)), (tf.constant(1.0), ())]", None),
    ("[(x, ('N', 4))]", "Specified explicitly.  Tensor shape=(2, 3) dtype=float32 dimension 1 must have size 4.  "
                        "Received size 3, shape (2, 3)"),
    ("[(x, ('N', 'D')), (y, ('M', 'D'))]", "Specified by tensor shape=(2, 3) dtype=float32 dimension 1.  Tensor "
     "shape=(2, 4) dtype=float32 dimension 1 must have size 3.  Received size 4, shape (2, 4)"),
    ("[(x, ('N',))]", "Tensor  must have rank in (0, 1).  Received rank 2, shape (2, 3)"),
    ("[(y, ('N', 'K', 'L'))]", "Tensor  must have rank 3.  Received rank 2, shape (2, 4)"),
])
def test_assert_shapes_checks_symbolic_shapes_as_tensorflow(shapes, message):
    source = ("import tensorflow as tf\nx = tf.ones([2, 3]); y = tf.ones([2, 4]); z = tf.ones([5, 2, 3])\ntry:\n"
              f"    print(tf.debugging.assert_shapes({shapes}))\nexcept ValueError as e:\n    print(e)\n")
    assert run_source(source, "t.py").output == ["None" if message is None else message]


@pytest.mark.parametrize("runner", ["0", "1"])
@pytest.mark.parametrize("call, kind, message", [
    ("tf.image.extract_patches(tf.zeros((1, 5, 5, 1)), [1, 7, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1], 'VALID')",
     KernelValueError, "Computed output size would be negative: -1 [input_size: 5, effective_filter_size: 7, stride: 1]"),
    ("tf.image.extract_patches(tf.zeros((1, 5, 5, 1)), [1, 2, 2, 3], [1, 1, 1, 1], [1, 1, 1, 1], 'SAME')",
     KernelValueError, "Only support ksizes across space"),
    ("tf.image.extract_patches(tf.zeros((5, 5, 1)), [1, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1], 'SAME')",
     KernelValueError, "input must be 4-dimensional[5, 5, 1]"),
    ("tf.image.extract_patches(tf.fill((1, 2, 2, 1), 'a'), [1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1], 'SAME')",
     TdfTypeError, "extract_patches takes numbers"),
    ("tf.quantization.fake_quant_with_min_max_args(tf.ones(3), min=0.5, max=0.5)", KernelValueError,
     "min has to be smaller than max, was: 0.5 >= 0.5"),
    ("tf.quantization.fake_quant_with_min_max_vars(tf.ones(3), -1.0, 1.0, num_bits=1)", KernelValueError,
     "num_bits must be between 2 and 16, inclusive"),
    ("tf.quantization.fake_quant_with_min_max_vars_per_channel(tf.constant(1.0), [-1.0], [1.0])", KernelValueError,
     "needs inputs of rank 1 or more"),
    ("tf.quantization.quantize_and_dequantize_v2(tf.ones(2, tf.float16), -1.0, 1.0)", KernelValueError,
     "takes float32 or float64 inputs"),
    ("tf.quantization.quantize_and_dequantize(tf.ones(2), [-1.0], [1.0])", KernelValueError,
     "input_min must be a scalar."),
])
def test_extract_patches_and_quantization_refuse_at_their_line_on_both_runners(call, kind, message, runner, monkeypatch):
    """Their refusals as TensorFlow's kernels word them (a program that catches them is a recorded one), at the
    line of the call on the interpreter and on CPython."""
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", runner)
    with pytest.raises(kind) as info:
        run_source(f"import tensorflow as tf\nprint('before')\ny = {call}\n", "t.py")
    assert info.value.line == 3 and message in info.value.message


@pytest.mark.parametrize("runner", ["0", "1"])
def test_tf_dtype_is_the_class_of_dtypes_made_from_an_enum_value(runner, monkeypatch):
    """Recorded from TensorFlow 2.21: isinstance of dtypes and of a name, and DType of the enum values 1 and 9."""
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", runner)
    source = ("import tensorflow as tf\nprint(isinstance(tf.float32, tf.DType), isinstance(tf.as_dtype('int32'), "
              "tf.dtypes.DType), isinstance('float32', tf.DType), tf.DType(1), tf.DType(9))\n")
    assert run_source(source, "t.py").output == ["True True False <dtype: 'float32'> <dtype: 'int64'>"]
