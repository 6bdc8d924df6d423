"""float32 elementwise math against TensorFlow's bits (tapecli/kernels/tf_float32.py, tf_pow.py): tensors of fewer
than 8 elements (Eigen's scalar path), and for exp, log, sin, cos, tanh, sigmoid, softplus, expm1, log1p, elu, selu and
pow tensors of 8 to 257 elements and 2-D ones (Eigen's packets and the scalar tail; pow's broadcast exponents too),
recorded by benchmarks/record_tf_float32.py from TensorFlow 2.21 on the CPU into tests/tf_float32_bits.json."""
from __future__ import annotations

import json
import math
import platform
from pathlib import Path

import numpy as np
import pytest

from tapecli import kernels
from tapecli import ops  # noqa: F401  (the op table registers expm1's and atan's kernels)
from tapecli.kernels import tf_erfc, tf_float32

TABLE = json.loads((Path(__file__).parents[1] / "tf_float32_bits.json").read_text())["ops"]
# Eigen's own arithmetic, not the C library's: the same bits everywhere
EIGEN_ONLY = {"tanh"}
# TensorFlow's bits came from glibc's libm: another C library (or none) gives the float functions' values within
# an ulp or two, not their bits
SAME_LIBM = tf_float32.libm_float_functions() and platform.libc_ver()[0] == "glibc"


def _value(hexes, shape):
    a = np.array([int(h, 16) for h in hexes], np.uint32).view(np.float32).reshape(shape)
    return a[()] if not shape else a


def _ulps(got, want):
    g = got.view(np.int32).astype(np.int64)
    w = want.view(np.int32).astype(np.int64)
    g = np.where(g < 0, -(g & 0x7FFFFFFF), g)
    w = np.where(w < 0, -(w & 0x7FFFFFFF), w)
    return np.abs(g - w)


@pytest.mark.parametrize("op", sorted(TABLE))
def test_float32_tensors_give_tensorflows_bits(op):
    exact = op in EIGEN_ONLY or SAME_LIBM
    with kernels.quiet():
        for case in TABLE[op]:
            shape = tuple(case["shape"])
            # (each argument has the result's shape, or its own where pow's case broadcasts one)
            arg_shapes = [tuple(a) for a in case.get("arg_shapes", [shape] * len(case["args"]))]
            args = [_value(h, a) for h, a in zip(case["args"], arg_shapes)]
            got = np.asarray(kernels.RAW_NUMPY_KERNELS[op](*args), np.float32).reshape(-1)
            want = _value(case["out"], (len(case["out"]),))
            nan = np.isnan(want)
            assert np.array_equal(np.isnan(got), nan), (op, case)
            if exact:
                assert got[~nan].tobytes() == want[~nan].tobytes(), (op, case, got)
            else:
                assert _ulps(got[~nan], want[~nan]).max(initial=0) <= 2, (op, case, got)


@pytest.mark.parametrize("op", ["exp", "log", "sin", "cos", "tan", "tanh", "sigmoid", "softplus", "log1p", "pow"])
def test_a_scalar_a_small_tensor_and_into_out_give_the_same_bits(op):
    rng = np.random.default_rng(3)
    x = rng.uniform(0.1, 5, 7).astype(np.float32)
    f = kernels.RAW_NUMPY_KERNELS[op]
    args = (x, x[::-1].copy()) if op == "pow" else (x,)
    with kernels.quiet():
        whole = f(*args)
        one_by_one = np.array([f(*[a[i] for a in args]) for i in range(7)])
        zero_d = np.array([f(*[np.asarray(a[i]) for a in args]) for i in range(7)])
        assert whole.dtype == one_by_one.dtype == np.float32
        assert whole.tobytes() == one_by_one.tobytes() == zero_d.tobytes()
        assert isinstance(f(*[a[0] for a in args]), np.float32)       # a scalar stays a NumPy scalar
        if op in kernels.OUT_KERNELS:
            into = np.full_like(whole, 7)
            assert f(*args, out=into) is into and into.tobytes() == whole.tobytes()


def test_float64_and_float32_tensors_above_the_limit_keep_numpys_functions():
    rng = np.random.default_rng(4)
    for x in (rng.standard_normal(64), rng.standard_normal(tf_float32.PACKET_LIMIT + 1).astype(np.float32)):
        with kernels.quiet():
            for op, ufunc in (("exp", np.exp), ("sin", np.sin), ("tanh", np.tanh), ("log1p", np.log1p)):
                if op in ("tanh", "exp") and x.dtype == np.float64:
                    continue            # (float64's tanh and exp are Eigen's at any size: the tests below)
                assert kernels.RAW_NUMPY_KERNELS[op](x).tobytes() == ufunc(x).tobytes(), (op, x.dtype)


@pytest.mark.parametrize("op", ["exp", "log", "tanh", "sigmoid", "softplus", "expm1", "log1p", "elu"])
def test_packets_and_tail_follow_the_row_major_order_of_any_layout(op):
    """Eigen's packets are the first size - size % 8 elements of the tensor's buffer, row-major: a
    transposed or sliced view gives what its C-order copy gives, and into ``out=`` the same bits."""
    rng = np.random.default_rng(5)
    base = rng.uniform(0.1, 5, (12, 9)).astype(np.float32)
    f = kernels.RAW_NUMPY_KERNELS[op]
    with kernels.quiet():
        for x in (base.T, base[:, 1:], base[::2]):
            y = f(x)
            assert y.shape == x.shape and y.dtype == np.float32
            assert y.tobytes() == f(np.ascontiguousarray(x)).tobytes()
            flat = np.ascontiguousarray(x).reshape(-1)
            k = flat.size - flat.size % tf_float32.PACKET
            # the tail is the scalar path: each of those elements alone gives its bits
            assert all(y.reshape(-1)[i] == f(flat[i]) for i in range(k, flat.size))
        if op in kernels.OUT_KERNELS:
            into = np.empty_like(base)
            assert f(base, out=into) is into and into.tobytes() == f(base).tobytes()


def test_pow_of_any_layout_and_broadcast_follows_the_row_major_order_of_its_result():
    """pow's packets are the first size - size % 8 elements of its (broadcast) result, row-major: a transposed or
    sliced base gives what its C-order copy gives, a broadcast exponent what its materialized copy gives (a
    scalar one as a tensor of it), the tail the scalar path; into ``out=`` (one of its arguments) the same bits."""
    rng = np.random.default_rng(6)
    base = rng.uniform(-3, 3, (12, 9)).astype(np.float32)
    exponent = rng.uniform(-3, 3, (12, 9)).astype(np.float32)
    f = kernels.RAW_NUMPY_KERNELS["pow"]
    with kernels.quiet():
        for x, e in ((base.T, exponent.T), (np.abs(base[:, 1:]), exponent[:, 1:]), (base[::2], np.float32(2.0)),
                     (base[::2], np.array(3.0, np.float32)), (np.abs(base), exponent[0]), (np.float32(1.5), exponent)):
            y = f(x, e)
            shape = np.broadcast_shapes(np.shape(x), np.shape(e))
            assert y.shape == shape and y.dtype == np.float32
            xs, es = (np.ascontiguousarray(np.broadcast_to(v, shape)) for v in (x, e))
            assert y.tobytes() == f(xs, es).tobytes()
            k = y.size - y.size % tf_float32.PACKET
            assert all(y.reshape(-1)[i] == f(xs.reshape(-1)[i], es.reshape(-1)[i]) for i in range(k, y.size))
        into = base.copy()
        assert f(into, np.float32(2.0), out=into) is into and into.tobytes() == f(base, np.float32(2.0)).tobytes()


def test_a_program_prints_tensorflows_squares_and_powers():
    import tapecli
    r = tapecli.run("import tensorflow as tf\nx = tf.fill([16], 2.1000001)\n"
                    "print((x ** 2).numpy()[0], tf.pow(tf.range(1.0, 13.0) * 0.37, 1.5).numpy()[5])\n")
    # TensorFlow 2.21 prints 4.4100003 3.3077254 (Eigen's generic_pow; NumPy's float32 power: 4.410001 3.3077257)
    assert " ".join(r.output).split() == ["4.4100003", "3.3077254"]


def test_results_below_the_smallest_normal_are_flushed_to_zero_as_tensorflow_runs():
    with kernels.quiet():
        assert kernels.RAW_NUMPY_KERNELS["exp"](np.float32(-100.0)) == 0
        assert kernels.RAW_NUMPY_KERNELS["sigmoid"](np.array([-100.0], np.float32))[0] == 0
        tiny = np.float32(1e-45)
        assert kernels.RAW_NUMPY_KERNELS["tanh"](-tiny).tobytes() == np.float32(-0.0).tobytes()
        assert kernels.RAW_NUMPY_KERNELS["sin"](tiny) == tiny        # sinf gives a tiny argument back as it is


def test_a_program_prints_tensorflows_sigmoid_and_its_gradient():
    import tapecli
    r = tapecli.run("import tensorflow as tf\nx = tf.constant(7.5)\nwith tf.GradientTape() as tape:\n"
                "    tape.watch(x)\n    y = tf.sigmoid(x)\nprint(y.numpy(), tape.gradient(y, x).numpy())\n")
    # TensorFlow 2.21 prints 0.9994472 0.00055246794 (float32 NumPy's 1 / (1 + exp(-x)): 0.99944717)
    assert " ".join(r.output).split() == ["0.9994472", "0.00055246794"]


# TensorFlow 2.21's SigmoidGrad of 20 float32 values (np.random.default_rng(1): sigmoid of 3 normal, then upstream
# normal), recorded: g * (y * (1 - y)) on two packets, (g * y) * (1 - y) on the last 4
SIGMOID_GRAD_20 = (
    ['0x1.0ae856p-1', '0x1.acd3dcp-1', '0x1.9525b4p-4', '0x1.855144p-2', '0x1.8645bcp-3', '0x1.b728p-1', '0x1.0f3c38p-1',
     '0x1.2cc5bap-2', '0x1.6603fep-4', '0x1.43b9b6p-2', '0x1.03205cp-1', '0x1.379fbep-2', '0x1.f5a9b6p-1',
     '0x1.e82e2ap-1', '0x1.33b62p-12', '0x1.c3b23ep-9', '0x1.7cc48ap-2', '0x1.c23df8p-3', '0x1.4f575ep-1',
     '0x1.509db8p-1'],
    ['0x1.0e975cp-1', '-0x1.35dc1p-3', '-0x1.13b4fp-5', '0x1.ececa2p-2', '0x1.98969ap-4', '0x1.4b6d06p-4',
     '-0x1.063d3ap-3', '-0x1.5e192cp-2', '0x1.b5b76ap-7', '0x1.822486p-6', '-0x1.3a27cp-2', '-0x1.283becp-3',
     '-0x1.75993cp-10', '-0x1.574ecep-5', '-0x1.e3adbep-16', '0x1.57d878p-12', '0x1.105edap-7', '-0x1.63adcp-4',
     '0x1.12cc6ap-3', '0x1.9b07bcp-3'])


def test_sigmoid_grad_takes_eigens_other_order_on_the_scalar_tail():
    rng = np.random.default_rng(1)
    rng.standard_normal(5), rng.standard_normal(5)         # (the recording's first case, of 5)
    z = rng.standard_normal(20).astype(np.float32) * 3
    up = rng.standard_normal(20).astype(np.float32)
    y = kernels.RAW_NUMPY_KERNELS["sigmoid"](z)
    assert [float(v) for v in y] == [float.fromhex(h) for h in SIGMOID_GRAD_20[0]]
    got = tf_float32.sigmoid_grad(y, up)
    assert [float(v) for v in got] == [float.fromhex(h) for h in SIGMOID_GRAD_20[1]]
    one = np.float32(1)
    assert (got[:16] == up[:16] * (y[:16] * (one - y[:16]))).all()
    assert (got[16:] != up[16:] * (y[16:] * (one - y[16:]))).any()     # (the packets' order misses on the tail)
    batched = tf_float32.sigmoid_grad(y, np.stack([up, up]))            # (each of a batch of seeds its own tensor)
    assert (batched == got).all()
    assert tf_float32.sigmoid_grad(y[0], up[0]) == (up[0] * y[0]) * (one - y[0])
    # a 0-d array is a scalar tensor, all tail (NumPy's product of two is a scalar: the tail was written into a copy)
    tails = [tf_float32.sigmoid_grad(np.asarray(y[k]), np.asarray(up[k])) for k in range(16, 20)]
    assert [float(v) for v in tails] == [float.fromhex(h) for h in SIGMOID_GRAD_20[1][16:]]


# TensorFlow 2.21's float64 tf.tanh (np.random.default_rng(0): n values normal times 10 ** uniform(-3, 1.5)),
# recorded: sum(t * (1..n)) and the last three, ptanh_double on the packets of 4, the C library's tanh on the tail
TANH64 = {3: ("0x1.ebd13cf44d7b0p+0", ["0x1.38ed7ac2b5b82p-13", "-0x1.143882e37b28bp-1", "0x1.fffffaf2a1b40p-1"]),
          8: ("-0x1.b4786bbe43f54p+1", ["0x1.b056adc6a6327p-9", "-0x1.98ac3d533fcedp-9", "-0x1.9fca8f200c3bap-11"]),
          1001: ("-0x1.2b8ef9551ff50p+14", ["-0x1.df00fe98d5d5cp-5", "0x1.924385eb7fa32p-11",
                                            "-0x1.4aaf9dc0323c2p-7"])}


def test_float64_tanh_is_eigens_rational_interpolant_on_packets():
    rng = np.random.default_rng(0)
    for n, (weighted, last) in TANH64.items():
        x = rng.standard_normal(n) * 10.0 ** rng.uniform(-3, 1.5, n)
        t = tf_float32.tanh(x)
        assert float(np.sum(t * np.arange(1, n + 1))) == float.fromhex(weighted), n
        assert [float(v) for v in t[-3:]] == [float.fromhex(h) for h in last], n
    x = rng.standard_normal(4000) * 3
    assert (tf_float32.tanh(x) != np.tanh(x)).any()      # (NumPy's tanh is another function: a test that can fail)
    assert np.isnan(tf_float32.tanh(np.array([np.nan] * 4))).all()


# TensorFlow 2.21's float32 tf.math.erf (np.random.default_rng(0): n values 2 * normal), recorded: sum(erf(x) *
# (1..n)) in float64. Eigen's generic_fast_erf<float> on the scalar path and the packets alike, at any size.
ERF = {3: 2.484962671995163, 8: -10.559325888752937, 1001: -35233.6151765089, 50000: -1156646.9411439917}


def test_float32_erf_is_eigens_rational_interpolant():
    rng = np.random.default_rng(0)
    for n, weighted in ERF.items():
        x = (rng.standard_normal(n) * 2).astype(np.float32)
        got = kernels.RAW_NUMPY_KERNELS["erf"](x)
        assert got.dtype == np.float32 and float(np.sum(got.astype(np.float64) * np.arange(1, n + 1))) == weighted, n
    special = tf_float32.erf(np.array([np.nan, np.inf, -np.inf, -0.0], np.float32))
    assert np.isnan(special[0]) and special[1:3].tolist() == [1.0, -1.0] and str(special[3]) == "-0.0"
    assert tf_float32.erf(np.array([0.5])) is None            # (float64: another algorithm)


def test_keras_elu_of_another_alpha_scales_tensorflows_elu():
    # keras.activations.elu(x, alpha=0.7) under TensorFlow 2.21: where(x > 0, elu, alpha * elu), x > 0 false
    # for a subnormal x (read as a zero), its product flushed (9 elements: a packet and a scalar tail)
    x = np.array([int(h, 16) for h in ("c0600000", "ba83126f", "800ae398", "000ae398", "00000000", "80000000",
                                       "40000000", "c0e80000", "be99999a")], np.uint32).view(np.float32)
    want = ("bf2dc9e3", "ba376933", "80000000", "00000000", "00000000", "80000000", "40000000", "bf33129f",
            "be39c811")
    with kernels.quiet():
        got = kernels.RAW_NUMPY_KERNELS["elu"](x, alpha=0.7)
    assert [format(int(v), "08x") for v in got.view(np.uint32)] == list(want)


# TensorFlow 2.21's float64 tf.pow (np.random.default_rng(7): n values normal times 10 ** uniform(-3, 3), their
# absolute values for fractional exponents; "y": exponents uniform in [-4, 4]), recorded as the MD5 of the
# result's bytes: Eigen's generic_pow on the packets of 4 doubles, the C library's pow on the tail
POW64 = {(3, "2.0"): "f21e18885f02393586de754dabfff6a6", (3, "0.5"): "c37a11bdc4c41fb3d869e5c0dc75ebbe",
         (3, "-1.5"): "ca3db6e15fe54154db1ca7950c776705", (3, "3.0"): "2f7688d09d7ab6fda349fd3448ac359b",
         (3, "y"): "0ea2ac5727ea41897c2101ee13a442a2", (8, "2.0"): "41aa909b2e5c092e8fbd7a9f962076ce",
         (8, "0.5"): "aaf7601ccc243d8c966f1783a6f31939", (8, "-1.5"): "dea7774c9d48f72557a3fbe2271d748d",
         (8, "3.0"): "18b6cbf7608301b44ef4e517f67be7ac", (8, "y"): "e830bc7cd2fefdf7a5478e117d129453",
         (1001, "2.0"): "42062f7e1070008388f9505387bea16a", (1001, "0.5"): "12492a7c6cf950ec048b0f5a0eb602df",
         (1001, "-1.5"): "c29ee6391c8c5921c4320ae04e592125", (1001, "3.0"): "fc037cfe727bb804723a88b3dcc0b451",
         (1001, "y"): "fd7b90d96321e62019885a3387b08b74"}


def test_float64_pow_is_eigens_generic_pow_on_packets():
    import hashlib
    rng = np.random.default_rng(7)
    for n in (3, 8, 1001):
        x = rng.standard_normal(n) * 10.0 ** rng.uniform(-3, 3, n)
        for name, base, y in (("2.0", x, np.float64(2.0)), ("0.5", np.abs(x), np.float64(0.5)),
                              ("-1.5", np.abs(x), np.float64(-1.5)), ("3.0", x, np.float64(3.0)),
                              ("y", np.abs(x), rng.uniform(-4, 4, n))):
            got = tf_float32.pow_(base, y)
            assert got.dtype == np.float64 and hashlib.md5(got.tobytes()).hexdigest() == POW64[n, name], (n, name)
    x = rng.standard_normal(4000) * 10
    assert (tf_float32.pow_(x, np.float64(2.0)) != x * x).any()     # (not the correctly rounded square)
    # C's special cases as generic_pow's selects give them (TensorFlow's: pow(-inf, 0.5) is inf, not nan)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, -2.0])
    inf, nan = np.inf, np.nan
    for y, expected in ((2.0, [0.0, 0.0, inf, inf, nan, 1.0, 1.0, 4.0]), (3.0, [0.0, -0.0, inf, -inf, nan, 1.0, -1.0, -8.0]),
                        (-1.0, [inf, -inf, 0.0, -0.0, nan, 1.0, -1.0, -0.5]),
                        (0.5, [0.0, 0.0, inf, inf, nan, 1.0, nan, nan])):
        with kernels.quiet():
            got = tf_float32.pow_(special, np.float64(y))
        assert np.array_equal(got, expected, equal_nan=True) and (np.signbit(got) == np.signbit(expected)).all(), y


# TensorFlow 2.21's float64 tf.exp (np.random.default_rng(11): n values normal times 10 ** uniform(-3, 2.5)), the
# MD5 of the result's bytes: Eigen's pexp_double on the packets of 4 doubles, the C library's exp on the tail
EXP64 = {3: "c46090121009bd34de57dc43857e5c49", 8: "284f074aaf4507852662e16128ff1677",
         1001: "6d5a8d8a69f9b64d7925ccd86b3eb714"}


def test_float64_exp_is_eigens_pexp_double_on_packets():
    import hashlib
    rng = np.random.default_rng(11)
    for n, digest in EXP64.items():
        x = rng.standard_normal(n) * 10.0 ** rng.uniform(-3, 2.5, n)
        assert hashlib.md5(tf_float32.exp(x).tobytes()).hexdigest() == digest, n
    x = rng.standard_normal(4000) * 10
    assert (tf_float32.exp(x) != np.exp(x)).any()
    # the clamps: a result below the smallest normal flushed (e^-708.5 too), inf above 709.78, nan kept
    edges = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 709.78, 709.79, -708.5, -745.0, -745.6, 1e-310, -1e-300])
    expected = [1.0, 1.0, np.inf, 0.0, np.nan, float.fromhex("0x1.fe9ce5c4c52b4p+1023"), np.inf, 0.0, 0.0, 0.0, 1.0, 1.0]
    assert np.array_equal(tf_float32.exp(edges), expected, equal_nan=True)


# TensorFlow 2.21's tf.math.erfc, recorded (np.random.default_rng(5), drawn in this order): md5 of its result's
# bytes. float32: 4 * normal at 1 to 7 elements (the scalar path), U(-1, 1) on the packets (where their erfc is
# the polynomial: beyond |x| = 1 they take the CPU's approximate reciprocal) with a tail of 4 * normal; float64:
# 4 * normal on packets of 4 and the tail.
ERFC = {("f32", 1): "83705f9d65a878969e1de6d75dab68e8", ("f32", 3): "6a084f190d6382677cf65acd8d0e5c77",
        ("f32", 7): "b968c40960c5940b3311f8e8fd6e13c8", ("f32in", 8): "d3b9cc920168ccadc45ff0866eb57b52",
        ("f32in", 13): "49bac11488e5f69b1c962a6bb3188c69", ("f32in", 1001): "0c811c4c7d1aa3ca723ada28862a5c3d",
        ("f64", 3): "a68353e9e9f7fb98b6b507c73ed648b7", ("f64", 8): "b53b1dbf39494798fe3e0346823f13a9",
        ("f64", 1001): "89e778d10df6a03fa566c924e730c0e2"}


def test_erfc_is_eigens_generic_fast_erfc():
    import hashlib
    rng = np.random.default_rng(5)
    for kind, n in ERFC:
        if kind == "f32":
            x = (rng.standard_normal(n) * 4).astype(np.float32)
        elif kind == "f32in":
            x = rng.uniform(-1, 1, n).astype(np.float32)
            x[-(n % 8):] = (rng.standard_normal(n % 8) * 4).astype(np.float32) if n % 8 else x[-1:]
        else:
            x = rng.standard_normal(n) * 4
        got = kernels.RAW_NUMPY_KERNELS["erfc"](x)
        assert got.dtype == x.dtype and hashlib.md5(got.tobytes()).hexdigest() == ERFC[kind, n], (kind, n)
    assert float(tf_erfc.erfc(np.float32(-0.7))) != float(np.float32(math.erfc(-0.7)))   # (not C's erfc)
    special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 11.5, -11.5, 1e-40], np.float32)
    for x in (special, special[:7]):
        assert np.array_equal(tf_erfc.erfc(x), [np.nan, 0.0, 2.0, 1.0, 1.0, 0.0, 2.0, 1.0][:x.size], equal_nan=True)
    special64 = tf_erfc.erfc(np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 28.5, -28.5, 26.0]))
    assert np.array_equal(special64, [np.nan, 0.0, 2.0, 1.0, 1.0, 0.0, 2.0, float.fromhex("0x1.284bfe1cdea24p-981")],
                          equal_nan=True)
    half = tf_erfc.erfc(np.array([-2.0, -0.5, 0.75, 3.0, 0.1], np.float16))
    assert half.dtype == np.float16 and half.tolist() == [1.9951171875, 1.5205078125, 0.288818359375,
                                                          2.2113323211669922e-05, 0.8876953125]
