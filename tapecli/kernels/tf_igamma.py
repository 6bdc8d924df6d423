"""TensorFlow's Igamma, Igammac, IgammaGradA, Betainc and Digamma on the CPU: Eigen's Cephes code
(unsupported/Eigen/src/SpecialFunctions/SpecialFunctionsImpl.h: ``igamma_generic_impl``, ``igamma_series_impl``,
``igammac_cf_impl``, ``igammac_impl``, ``betainc_impl`` with ``incbeta_cfe`` and ``betainc_helper``,
``digamma_impl``), step by step in the input's dtype.

Eigen has no packet form of these (``HasIGamma``, ``HasDiGamma`` and the others are 0 on the CPU): TensorFlow runs
the scalar code on each element, whatever the tensor's size, so the elements here are independent. Each loop runs over
the elements still iterating, all of them at once; an element leaves it where Eigen's ``break`` (or ``return``) would.
Every step is one IEEE operation in the dtype (the wheel is built without FMA: no contraction); ``log``, ``exp``,
``log1p``, ``lgamma`` and ``tan`` are the C library's (``logf``, ``lgammaf_r``, ...: Eigen's scalar functors call
them); and TensorFlow's flush-to-zero is kept: a subnormal argument compares and computes as zero (DAZ), a subnormal
result of a product or quotient that can shrink is a zero (FTZ). TensorFlow's bits at every point of
tests/tf_igamma_bits.json.

Cephes's series in ``incbps`` has no bound on its steps; here it stops after ``_SERIES_BOUND``, where TensorFlow's
kernel runs on (or, for float32's t = x / (1 - x) infinite after the swap and b not whole, never returns: nan here).
"""
from __future__ import annotations

import functools
import math

import numpy as np

from tapecli.kernels.tf_erfc import _flush, _polevl

_F32 = np.dtype(np.float32)
_VALUE_ITERATIONS = 2000                    # igamma_num_iterations<VALUE>
_DERIVATIVE_ITERATIONS = {_F32: 200, np.dtype(np.float64): 500}
# Cephes's power series in incbps has no bound on its steps: this one only ends the few that never converge
_SERIES_BOUND = 100_000
# digamma's asymptotic series (digamma_impl_maybe_poly): its coefficients, and the argument from which it is 0
_PSI_POLY = {_F32: (-4.16666666666666666667E-3, 3.96825396825396825397E-3, -8.33333333333333333333E-3,
                    8.33333333333333333333E-2),
             np.dtype(np.float64): (8.33333333333333333333E-2, -2.10927960927960927961E-2, 7.57575757575757575758E-3,
                                    -4.16666666666666666667E-3, 3.96825396825396825397E-3,
                                    -8.33333333333333333333E-3, 8.33333333333333333333E-2)}
_PSI_LARGE = {_F32: 1.0e8, np.dtype(np.float64): 1.0e17}


def _c_double(name: str, fallback):
    from tapecli.kernels.tf_random import libm_function
    c = libm_function(name) or fallback
    tiny = np.finfo(np.float64).tiny

    def run(v):
        # DAZ: glibc's log reads a subnormal double as a zero there (-inf, measured against TensorFlow 2.21); FTZ
        y = c(v if not -tiny < v < tiny else v * 0.0)
        return y if not -tiny < y < tiny else y * 0.0
    return run


def _lgamma(v: float) -> float:
    try:
        return math.lgamma(v)
    except ValueError:          # a pole
        return math.inf


@functools.cache
def _c_function(name: str, dtype: np.dtype):
    """The C library's ``name`` (``log``: ``logf`` for float32) on each element of a 1-D array of ``dtype``, its
    result flushed; where no C library answers, Python's function (rounded to float32)."""
    fallback = {"log": math.log, "exp": math.exp, "log1p": math.log1p, "lgamma": _lgamma, "tan": math.tan}[name]
    if dtype == _F32:
        from tapecli.kernels.tf_float32 import CFunction
        c = CFunction(name + "f", 1, np.vectorize(lambda v: _guarded(fallback, v), otypes=[np.float64]))
    else:
        c = _c_double(name, lambda v: _guarded(fallback, v))

    def each(v: np.ndarray) -> np.ndarray:
        return np.array([c(u) for u in v.tolist()], dtype)
    return each


def _guarded(f, v: float) -> float:
    """Python's ``f`` with the C library's answers where Python raises (log(0) is -inf, log(-1) nan)."""
    try:
        return f(v)
    except (ValueError, OverflowError):
        if f is math.exp:
            return math.inf
        return -math.inf if v == 0 or (f is math.log1p and v == -1) else math.nan


class _Scalar:
    """One dtype's constants (cephes_helper) and C functions."""

    def __init__(self, dtype: np.dtype):
        self.dtype, t = dtype, dtype.type
        self.t = t
        eps = np.finfo(dtype).eps
        self.machep = t(eps / 2)
        single = dtype == _F32
        self.big = t(1 / (eps / 2)) if single else t(1 / eps)
        self.biginv = self.machep if single else t(eps)
        self.log, self.exp, self.log1p, self.lgamma, self.tan = (
            _c_function(n, dtype) for n in ("log", "exp", "log1p", "lgamma", "tan"))
        # -log(highest()): below it, main_igamma_term is 0
        self.log_floor = -self.log(np.array([np.finfo(dtype).max], dtype))[0]


@functools.cache
def _scalar(dtype: np.dtype) -> _Scalar:
    return _Scalar(dtype)


def _loop(state: dict, step, limit: int) -> dict:
    """Run ``step`` (a state of 1-D arrays in, the next state and the mask of elements that stop out) up to ``limit``
    times; each element leaves with its state where it stopped. The state's arrays come back in their order."""
    out = {k: v.copy() for k, v in state.items()}
    idx = np.arange(next(iter(state.values())).size)
    for _ in range(limit):
        if not idx.size:
            break
        state, done = step(state)
        if done.any():
            for k, v in state.items():
                out[k][idx[done]] = v[done]
            keep = ~done
            idx = idx[keep]
            state = {k: v[keep] for k, v in state.items()}
    for k, v in state.items():
        out[k][idx] = v
    return out


# ---------------------------------------------------------------------------------------------- the gamma family

def _digamma(s: _Scalar, x: np.ndarray) -> np.ndarray:
    """digamma_impl on a 1-D array: nan at the poles (0, -1, ...); below them psi(x) = psi(1 - x) - pi / tan(pi nz),
    nz x less its nearest integer (the cotangent 0 where nz is 1/2); then the recurrence psi(x) = psi(x + 1) - 1 / x
    up to 10 and the asymptotic series. (A subnormal argument reads as a zero, under DAZ: a pole.)"""
    t = s.t
    zero, one, half = t(0), t(1), t(0.5)
    x = _flush(x)
    with np.errstate(all="ignore"):
        negative = x <= zero
        p = np.floor(x)
        pole = negative & (p == x)
        nz = x - p
        reflected = negative & ~pole & (nz != half)
        q, nz = x[reflected], nz[reflected]
        nz = np.where(nz > half, q - (p[reflected] + one), nz)
        cot = np.zeros_like(x)
        pi = t(math.pi)
        cot[reflected] = pi / s.tan(pi * nz)
        x = np.where(negative, one - x, x)
        w, z = np.zeros_like(x), x
        for _ in range(10):                 # (from x > 0, ten steps reach 10)
            more = z < t(10)
            w, z = np.where(more, w + one / z, w), np.where(more, z + one, z)
        zz = one / (z * z)
        poly = np.where(z < t(_PSI_LARGE[s.dtype]), zz * _polevl(zz, _PSI_POLY[s.dtype]), zero)
        y = s.log(z) - half / z - poly - w
        return np.where(pole, t(np.nan), np.where(negative, y - cot, y))


def _main_term(s: _Scalar, a, x):
    """main_igamma_term: x^a e^-x / Gamma(a), 0 where its log is below -log(highest) or nan. (A subnormal x reaches
    the C library's log as it is: glibc's logf then gives log(2^-150), under DAZ.)"""
    with np.errstate(all="ignore"):
        logax = _flush(a * s.log(x)) - _flush(x) - s.lgamma(a)
        return np.where((logax < s.log_floor) | np.isnan(logax), s.t(0), s.exp(logax))


def _series(s: _Scalar, a, x, derivative: bool):
    """igamma_series_impl (its preconditions hold: x > 0, a > 0, not x > 1 and x > a)."""
    t = s.t
    one = t(1)
    ax = _main_term(s, a, x)
    live = ax != 0
    a, x, ax = a[live], _flush(x[live]), ax[live]
    out = np.zeros(live.shape, s.dtype)
    if not a.size:
        return out
    with np.errstate(all="ignore"):
        ax = _flush(ax / a)

        def step(st):
            r = st["r"] + one
            term = _flush(st["x"] / r)
            c = st["c"]
            if derivative:
                dterm = _flush(-st["x"] / (r * r))
                dc = _flush(_flush(term * st["dc"]) + _flush(dterm * c))
                dans = st["dans"] + dc
            c = _flush(c * term)
            ans = st["ans"] + c
            nxt = {**st, "r": r, "c": c, "ans": ans}
            if derivative:
                nxt.update(dc=dc, dans=dans)
                return nxt, np.abs(dc) <= s.machep * np.abs(dans)
            return nxt, c <= s.machep * ans
        state = {"x": x, "r": a.copy(), "c": np.ones_like(a), "ans": np.ones_like(a)}
        if derivative:
            state.update(dc=np.zeros_like(a), dans=np.zeros_like(a))
        state = _loop(state, step, _DERIVATIVE_ITERATIONS[s.dtype] if derivative else _VALUE_ITERATIONS)
        ans = state["ans"]
        if derivative:
            dlogax = s.log(x) - _digamma(s, a + one)
            out[live] = _flush(_flush(ans * _flush(ax * dlogax)) + _flush(state["dans"] * ax))
        else:
            out[live] = _flush(ans * ax)
    return out


def _continued_fraction(s: _Scalar, a, x, derivative: bool):
    """igammac_cf_impl (its preconditions hold: a > 0, x >= 1, x >= a)."""
    t = s.t
    zero, one, two = t(0), t(1), t(2)
    out = np.zeros(a.shape, s.dtype)
    ax = np.zeros(a.shape, s.dtype)
    finite = ~np.isinf(x)
    ax[finite] = _main_term(s, a[finite], x[finite])
    live = ax != 0
    a, x, ax = a[live], x[live], ax[live]
    if not a.size:
        return out
    with np.errstate(all="ignore"):
        y = one - a
        z = x + y + one
        pkm1, qkm1 = x + one, z * x
        ans = pkm1 / qkm1
        state = {"x": x, "c": np.zeros_like(a), "y": y, "z": z, "pkm2": np.ones_like(a), "qkm2": x.copy(),
                 "pkm1": pkm1, "qkm1": qkm1, "ans": ans}
        if derivative:
            state.update(dpkm2=np.zeros_like(a), dqkm2=np.zeros_like(a), dpkm1=np.zeros_like(a), dqkm1=-x,
                         dans=(zero - ans * -x) / qkm1)

        def step(st):
            c, y, z = st["c"] + one, st["y"] + one, st["z"] + two
            yc = y * c
            pkm1, pkm2, qkm1, qkm2 = st["pkm1"], st["pkm2"], st["qkm1"], st["qkm2"]
            pk = _flush(pkm1 * z) - _flush(pkm2 * yc)
            qk = _flush(qkm1 * z) - _flush(qkm2 * yc)
            nonzero = qk != 0
            ans = np.where(nonzero, pk / np.where(nonzero, qk, one), st["ans"])
            nxt = {"x": st["x"], "c": c, "y": y, "z": z, "ans": ans}
            if derivative:
                dpk = st["dpkm1"] * z - pkm1 - st["dpkm2"] * yc + pkm2 * c
                dqk = st["dqkm1"] * z - qkm1 - st["dqkm2"] * yc + qkm2 * c
                dans = np.where(nonzero, (dpk - ans * dqk) / np.where(nonzero, qk, one), st["dans"])
                done = nonzero & (np.abs(dans - st["dans"]) <= s.machep)
                scale = [("dpkm2", st["dpkm1"]), ("dpkm1", dpk), ("dqkm2", st["dqkm1"]), ("dqkm1", dqk)]
                nxt["dans"] = dans
            else:
                done = nonzero & (np.abs(st["ans"] - ans) <= s.machep * np.abs(ans))
                scale = []
            big = np.abs(pk) > s.big
            for k, v in [("pkm2", pkm1), ("pkm1", pk), ("qkm2", qkm1), ("qkm1", qk), *scale]:
                nxt[k] = np.where(big, _flush(v * s.biginv), v)
            return nxt, done
        state = _loop(state, step, _DERIVATIVE_ITERATIONS[s.dtype] if derivative else _VALUE_ITERATIONS)
        ans = state["ans"]
        if derivative:
            dlogax = s.log(x) - _digamma(s, a)
            out[live] = _flush(_flush(ans * _flush(ax * dlogax)) + _flush(state["dans"] * ax))
        else:
            out[live] = _flush(ans * ax)
    return out


def _operands(*args):
    """The arguments broadcast and flattened in float32 or float64 (float32's where all are), and the result's
    shape. A subnormal argument compares (and adds, multiplies) as a zero, under DAZ: only igammac's series then
    reads one's own value (in logf)."""
    arrays = [np.asarray(v) for v in args]
    dtype = _F32 if all(v.dtype == _F32 for v in arrays) else np.dtype(np.float64)
    shape = np.broadcast_shapes(*(v.shape for v in arrays))
    flat = [np.broadcast_to(v.astype(dtype, copy=False), shape).reshape(-1) for v in arrays]
    return _scalar(dtype), flat, shape


def _igamma(a, x, derivative: bool):
    """igamma_generic_impl: 0 at x = 0, nan where x < 0 or a <= 0 or either is nan, the continued fraction's
    complement where x > 1 and x > a, the series elsewhere."""
    s, (a, x), shape = _operands(a, x)
    a, x = _flush(a), _flush(x)
    t = s.t
    out = np.full(a.shape, np.nan, s.dtype)
    with np.errstate(invalid="ignore"):
        zero = x == 0
        valid = ~zero & ~(x < 0) & ~(a <= 0) & ~np.isnan(a) & ~np.isnan(x)
        cf = valid & (x > 1) & (x > a)
        series = valid & ~cf
    out[zero] = t(0)
    ret = _continued_fraction(s, a[cf], x[cf], derivative)
    out[cf] = -ret if derivative else t(1) - ret
    out[series] = _series(s, a[series], x[series], derivative)
    return out.reshape(shape)


def igamma(a, x):
    """TensorFlow's Igamma: the lower regularized incomplete gamma function P(a, x)."""
    return _igamma(a, x, derivative=False)


def igamma_grad_a(a, x):
    """TensorFlow's IgammaGradA: d P(a, x) / da, Eigen's forward-mode derivative of its igamma code."""
    return _igamma(a, x, derivative=True)


def igammac(a, x):
    """TensorFlow's Igammac (igammac_impl): nan where x < 0 or a <= 0 or either is nan, 1 - the series where x < 1
    or x < a, the continued fraction elsewhere."""
    s, (a, x), shape = _operands(a, x)
    a, flushed = _flush(a), _flush(x)
    out = np.full(a.shape, np.nan, s.dtype)
    with np.errstate(invalid="ignore"):
        valid = ~(flushed < 0) & ~(a <= 0) & ~np.isnan(a) & ~np.isnan(x)
        series = valid & ((flushed < 1) | (flushed < a))
        cf = valid & ~series
    out[series] = s.t(1) - _series(s, a[series], x[series], derivative=False)
    out[cf] = _continued_fraction(s, a[cf], x[cf], derivative=False)
    return out.reshape(shape)


# ------------------------------------------------------------------------------------------------------- betainc

def _cfe(s: _Scalar, a, b, x, small):
    """incbeta_cfe: the continued fraction of the incomplete beta integral, its small branch where ``small`` (on
    x), else its other (on x / (1 - x)); 100 steps at most for float32 (to machep), 300 for float64 (to 3 machep)."""
    t = s.t
    one, two = t(1), t(2)
    single = s.dtype == _F32
    thresh = s.machep if single else t(3) * s.machep
    with np.errstate(all="ignore"):
        x = np.where(small, x, x / (one - x))
        k26 = np.where(small, one, -one)
        state = {"x": x, "k26": k26, "k1": a, "k2": np.where(small, a + b, b - one), "k3": a, "k4": a + one,
                 "k5": np.ones_like(a), "k6": np.where(small, b - one, a + b), "k7": a + one, "k8": a + two,
                 "pkm2": np.zeros_like(a), "qkm2": np.ones_like(a), "pkm1": np.ones_like(a), "qkm1": np.ones_like(a),
                 "ans": np.ones_like(a)}

        def step(st):
            x, k1, k2, k3, k4, k5, k6, k7, k8 = (st[k] for k in ("x", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8"))
            pkm2, pkm1, qkm2, qkm1 = st["pkm2"], st["pkm1"], st["qkm2"], st["qkm1"]
            xk = -_flush(_flush(_flush(x * k1) * k2) / (k3 * k4))
            pkm2, pkm1 = pkm1, pkm1 + _flush(pkm2 * xk)
            qkm2, qkm1 = qkm1, qkm1 + _flush(qkm2 * xk)
            xk = _flush(_flush(_flush(x * k5) * k6) / (k7 * k8))
            pkm2, pkm1 = pkm1, pkm1 + _flush(pkm2 * xk)
            qkm2, qkm1 = qkm1, qkm1 + _flush(qkm2 * xk)
            pk, qk = pkm1, qkm1
            nonzero = qk != 0
            r = _flush(pk / np.where(nonzero, qk, one))
            done = nonzero & (np.abs(st["ans"] - r) < _flush(np.abs(r) * thresh))
            k26 = st["k26"]
            nxt = {"x": x, "k26": k26, "k1": k1 + one, "k2": k2 + k26, "k3": k3 + two, "k4": k4 + two, "k5": k5 + one,
                   "k6": k6 - k26, "k7": k7 + two, "k8": k8 + two, "ans": np.where(nonzero, r, st["ans"])}
            down = (np.abs(qk) + np.abs(pk)) > s.big
            scaled = [np.where(down, _flush(v * s.biginv), v) for v in (pkm2, pkm1, qkm2, qkm1)]
            up = (np.abs(qk) < s.biginv) | (np.abs(pk) < s.biginv)
            nxt.update(zip(("pkm2", "pkm1", "qkm2", "qkm1"), (np.where(up, v * s.big, v) for v in scaled)))
            return nxt, done
        return _loop(state, step, 100 if single else 300)["ans"]


def _incbps32(s: _Scalar, a, b, x):
    """betainc_helper<float>::incbps: the power series for b x / a small."""
    t = s.t
    one = t(1)
    with np.errstate(all="ignore"):
        y = _flush(a * s.log(x)) + _flush((b - one) * s.log1p(-x)) - s.log(a)
        y = y - (s.lgamma(a) + s.lgamma(b))
        y = y + s.lgamma(a + b)
        r = _flush(x / (one - x))

        def step(st):
            b = st["b"] - one
            stop = b == 0
            a = st["a"] + one
            u = _flush(st["u"] * _flush(_flush(st["r"] * b) / a))
            go = ~stop
            nxt = {"r": st["r"], "b": b, "a": np.where(go, a, st["a"]), "u": np.where(go, u, st["u"]),
                   "s": np.where(go, st["s"] + u, st["s"])}
            return nxt, stop | ~(np.abs(u) > s.machep)
        state = _loop({"r": r, "b": b, "a": a, "u": np.ones_like(a), "s": np.zeros_like(a)}, step, _SERIES_BOUND)
        return _flush(s.exp(y) * (one + state["s"]))


def _incbsa32(s: _Scalar, aa, bb, xx):
    """betainc_helper<float>::incbsa: a and b swapped where x is above the mean, then the power series or the
    continued fraction."""
    t = s.t
    one = t(1)
    with np.errstate(all="ignore"):
        onemx = one - xx
        rev = xx > aa / (aa + bb)
        a, b = np.where(rev, bb, aa), np.where(rev, aa, bb)
        tt, x = np.where(rev, xx, onemx), np.where(rev, onemx, xx)
        out = np.empty_like(a)
        series = (b > t(10)) & (np.abs(b * x / a) < t(0.3))
        out[series] = _incbps32(s, a[series], b[series], x[series])
        rest = ~series
        a, b, tt, x = a[rest], b[rest], tt[rest], x[rest]
        small = (x * (a + b - t(2)) / (a - one)) < one
        ans = _cfe(s, a, b, x, small)
        u = _flush(np.where(small, b, b - one) * s.log(tt))
        u = u + (_flush(a * s.log(x)) + s.lgamma(a + b) - s.lgamma(a) - s.lgamma(b))
        u = u + s.log(_flush(ans / a))
        out[rest] = s.exp(u)
        return np.where(rev, one - out, out)


def _betainc32(s: _Scalar, a, b, x):
    """betainc_impl<float> where a > 0, b > 0 and 0 < x < 1 (or an argument is nan)."""
    one = s.t(1)
    out = np.empty_like(a)
    with np.errstate(all="ignore"):
        low = a <= one
        al, bl, xl = a[low], b[low], x[low]
        ans = _incbsa32(s, al + one, bl, xl)
        u = _flush(al * s.log(xl)) + _flush(bl * s.log1p(-xl)) + s.lgamma(al + bl) - s.lgamma(al + one) - s.lgamma(bl)
        out[low] = ans + s.exp(u)
        out[~low] = _incbsa32(s, a[~low], b[~low], x[~low])
    return out


def _incbps64(s: _Scalar, a, b, x):
    """betainc_helper<double>::incbps: the power series, in logarithms."""
    t = s.t
    one = t(1)
    with np.errstate(all="ignore"):
        ai = one / a
        u = _flush((one - b) * x)
        v = _flush(u / (a + one))
        z = _flush(s.machep * ai)

        def step(st):
            go = np.abs(st["v"]) > st["z"]
            n, x, b, a = st["n"], st["x"], st["b"], st["a"]
            tt = _flush(st["t"] * _flush((n - b) * x / n))
            v = _flush(tt / (a + n))
            nxt = {**st, "t": np.where(go, tt, st["t"]), "v": np.where(go, v, st["v"]),
                   "s": np.where(go, st["s"] + v, st["s"]), "n": np.where(go, n + one, n)}
            return nxt, ~go
        state = _loop({"a": a, "b": b, "x": x, "z": z, "v": v, "t": u, "n": np.full_like(a, 2), "s": np.zeros_like(a)},
                      step, _SERIES_BOUND)
        total = state["s"] + v + ai
        y = s.lgamma(a + b) - s.lgamma(a) - s.lgamma(b) + _flush(a * s.log(x)) + s.log(total)
        return s.exp(y)


def _betainc64(s: _Scalar, aa, bb, xx):
    """betainc_impl<double> where a > 0, b > 0 and 0 < x < 1 (or an argument is nan)."""
    t = s.t
    one = t(1)
    out = np.empty_like(aa)
    with np.errstate(all="ignore"):
        direct = (bb * xx <= one) & (xx <= t(0.95))
        out[direct] = _incbps64(s, aa[direct], bb[direct], xx[direct])
        aa, bb, xx, idx = aa[~direct], bb[~direct], xx[~direct], np.flatnonzero(~direct)
        w = one - xx
        rev = xx > aa / (aa + bb)
        a, b = np.where(rev, bb, aa), np.where(rev, aa, bb)
        xc, x = np.where(rev, xx, w), np.where(rev, w, xx)
        value = np.empty_like(a)
        swapped = rev & (b * x <= one) & (x <= t(0.95))
        value[swapped] = _incbps64(s, a[swapped], b[swapped], x[swapped])
        rest = ~swapped
        a, b, x, xc = a[rest], b[rest], x[rest], xc[rest]
        small = (x * (a + b - t(2)) - (a - one)) < 0
        w = _cfe(s, a, b, x, small)
        w = np.where(small, w, w / xc)
        y = _flush(a * s.log(x))
        y = y + (_flush(b * s.log(xc)) + s.lgamma(a + b) - s.lgamma(a) - s.lgamma(b))
        y = y + s.log(_flush(w / a))
        value[rest] = s.exp(y)
        value = np.where(rev, np.where(value <= s.machep, one - s.machep, one - value), value)
        out[idx] = value
    return out


def betainc(a, b, x):
    """TensorFlow's Betainc: the regularized incomplete beta integral I_x(a, b); nan where a <= 0 or b <= 0 or x is
    outside [0, 1], 0 at x = 0 and 1 at x = 1."""
    s, (a, b, x), shape = _operands(a, b, x)
    a, b, x = _flush(a), _flush(b), _flush(x)
    t = s.t
    out = np.full(a.shape, np.nan, s.dtype)
    with np.errstate(invalid="ignore"):
        bad = (a <= 0) | (b <= 0)
        out[~bad & (x == 0)] = t(0)
        out[~bad & (x == 1)] = t(1)
        inside = ~bad & ~(x <= 0) & ~(x >= 1)
    out[inside] = (_betainc32 if s.dtype == _F32 else _betainc64)(s, a[inside], b[inside], x[inside])
    return out.reshape(shape)


def lgamma(x):
    """TensorFlow's Lgamma: the C library's ``lgammaf_r`` (``lgamma_r`` for float64) on each element, whatever the
    tensor's size (Eigen has no packet form of it); float16's is float32's, rounded. Poles give inf; a subnormal
    argument, under DAZ, -log of half the least subnormal (measured against TensorFlow 2.21)."""
    x = np.asarray(x)
    if x.dtype != _F32 and x.dtype != np.float64:
        return lgamma(x.astype(_F32)).astype(x.dtype)
    y = _c_function("lgamma", x.dtype)(x.reshape(-1)).reshape(x.shape)
    info = np.finfo(x.dtype)
    subnormal = (x != 0) & (np.abs(x) < info.tiny)
    return np.where(subnormal, x.dtype.type((info.nmant - info.minexp + 1) * math.log(2)), y) if subnormal.any() else y


def digamma(x):
    """TensorFlow's Digamma: Eigen's digamma_impl on each element, whatever the tensor's size (Eigen has no packet
    form of it on the CPU); float16's is float32's, rounded."""
    x = np.asarray(x)
    if x.dtype != _F32 and x.dtype != np.float64:
        return digamma(x.astype(_F32)).astype(x.dtype)
    return _digamma(_scalar(x.dtype), x.reshape(-1)).reshape(x.shape)
