"""The Numba kernels against the NumPy kernels, the dispatcher, and numba's import and cache."""
from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from tapecli import kernels
from tapecli import ops  # (the op table registers the kernels' names)
from tapecli.kernels import NUMBA_KERNELS, tf_sums
from tapecli.kernels.numpy_kernels import KERNELS as NUMPY_KERNELS

from kernels.test_numba_windows import EXACT as EXACT_KERNELS       # (tested there)

ops.load_deferred()         # the whole op table: the families a small run never loads name kernels too

DTYPES = [np.float32, np.float64]
UNARY = ["neg", "sin", "cos", "tan", "exp", "log", "log1p", "sqrt", "rsqrt", "square", "abs", "sign", "tanh",
         "sigmoid", "softplus", "softsign", "relu", "elu", "leaky_relu", "erf", "round", "floor", "ceil"]
BINARY = ["add", "sub", "mul", "div", "maximum", "minimum", "pow"]
REDUCTIONS = ["sum", "mean", "max", "min", "prod", "logsumexp"]
OTHER = ["masked_grad", "where", "clip"]
EXACT = {"round", "floor", "ceil", "sign", "where", "max", "min"}
# ±100 saturates sigmoid/softplus/logsumexp (no overflow or nan allowed), 2.5 and -0.5 are
# rounding ties, and -0.0, inf and nan are values too.
SPECIAL = [100.0, -100.0, 0.0, -0.0, 2.5, -0.5, 1e-3, -1e-3, 30.0, -30.0, np.inf, -np.inf, np.nan]
SHAPES = [(), (1,), (37,), (3, 4, 5)]


@pytest.fixture(scope="module")
def nb():
    # Imported here, not at module level: the session fixture in conftest.py must first
    # point TAPECLI_CACHE_DIR (and so numba's cache) at a temporary folder.
    from tapecli.kernels import numba_kernels
    return numba_kernels


def rtol(dtype):
    return 2e-6 if np.dtype(dtype) == np.float32 else 1e-6


def data(shape, dtype, seed=0, specials=True):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape) * 3
    if specials and x.size >= len(SPECIAL):
        x.reshape(-1)[:len(SPECIAL)] = SPECIAL
        rng.shuffle(x.reshape(-1))
    elif specials and x.ndim == 0:
        x = np.asarray(-2.5)
    return np.asarray(x, dtype)


def check(name, got, want, exact=False, tol=None, atol=0.0):
    """Same type, dtype and shape; values equal (exact) or close, nan where nan."""
    want = np.asarray(want)
    assert type(got) is np.ndarray, f"{name}: {type(got)}"
    assert got.dtype == want.dtype, f"{name}: {got.dtype} != {want.dtype}"
    assert got.shape == want.shape, f"{name}: {got.shape} != {want.shape}"
    if exact or name in EXACT:
        np.testing.assert_array_equal(got, want, err_msg=name)
    else:
        np.testing.assert_allclose(got, want, rtol=tol or rtol(want.dtype), atol=atol, err_msg=name)


def test_every_numba_kernel_is_tested():
    assert set(UNARY + BINARY + REDUCTIONS + OTHER + EXACT_KERNELS) == set(NUMBA_KERNELS)


UNARY_ATTRS = {"elu": [{}, {"alpha": 0.7}], "leaky_relu": [{}, {"alpha": 0.1}]}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name", UNARY)
def test_unary_matches_numpy(nb, name, shape, dtype):
    x = data(shape, dtype)
    # float32 NumPy kernels of small tensors compute TensorFlow's bits (kernels/tf_float32.py): subnormal
    # results flushed to zero, and Elu's exp(x) - 1, whose cancellation near 0 costs relative 1e-5
    tf32 = dtype == np.float32 and name in ("sigmoid", "softplus", "elu")
    for attrs in UNARY_ATTRS.get(name, [{}]):
        check(name, nb.call(name, x, **attrs), NUMPY_KERNELS[name](x, **attrs),
              tol=1e-4 if tf32 and name == "elu" else None, atol=float(np.finfo(np.float32).tiny) if tf32 else 0.0)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name, attrs", [("sigmoid", {}), ("softplus", {}), ("elu", {"alpha": 0.7}), ("erf", {}),
                                         ("relu", {}),
                                         ("leaky_relu", {"alpha": 0.1})], ids=str)
def test_fused_kernels_agree_bit_for_bit(nb, name, attrs, dtype):
    # Stronger than the tolerance: the rounding steps follow numpy_kernels' order.
    x = np.linspace(-120, 120, 100_001).astype(dtype)
    np.testing.assert_array_equal(nb.call(name, x, **attrs), NUMPY_KERNELS[name](x, **attrs))


def test_saturating_kernels_stay_finite(nb):
    x = np.array([-1000.0, -100.0, 100.0, 1000.0], np.float32)
    for name in ("sigmoid", "softplus", "elu", "tanh"):
        assert np.all(np.isfinite(nb.call(name, x))), name
    s = nb.call("sigmoid", x)
    assert s[0] == 0 and s[-1] == 1
    np.testing.assert_array_equal(nb.call("softplus", x)[2:], x[2:])


BROADCAST = [((3, 4, 5), (3, 4, 5)), ((3, 4, 5), (5,)), ((4, 1), (1, 5)), ((), (3, 4)), ((3, 4), ()),
             ((), ()), ((1,), (2, 3)), ((2, 1, 3), (4, 1))]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shapes", BROADCAST, ids=str)
@pytest.mark.parametrize("name", BINARY)
def test_binary_matches_numpy(nb, name, shapes, dtype):
    a, b = data(shapes[0], dtype, 1), data(shapes[1], dtype, 2)
    if name == "pow":  # a negative base to a fractional power is nan in both; keep most finite
        a = np.abs(a) if a.ndim else np.asarray(1.7, dtype)
    check(name, nb.call(name, a, b), NUMPY_KERNELS[name](a, b))


def test_maximum_and_minimum_propagate_nan_and_break_ties_like_numpy(nb):
    a = np.array([np.nan, 1.0, 2.0, 0.0, -0.0], np.float32)
    b = np.array([1.0, np.nan, 2.0, -0.0, 0.0], np.float32)
    for name in ("maximum", "minimum"):
        got, want = nb.call(name, a, b), NUMPY_KERNELS[name](a, b)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", ["relu", "abs", "leaky_relu"])
@pytest.mark.parametrize("shapes", [((3, 4, 5), (3, 4, 5)), ((), ()), ((37,), (37,)), ((3, 4), (4,)), ((), (6,))],
                         ids=str)
def test_masked_grad_matches_numpy(nb, kind, shapes, dtype):
    g, x = data(shapes[0], dtype, 3), data(shapes[1], dtype, 4)
    for attrs in ({}, {"alpha": 0.3}):
        check("masked_grad", nb.call("masked_grad", g, x, kind=kind, **attrs),
              NUMPY_KERNELS["masked_grad"](g, x, kind=kind, **attrs), exact=True)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shapes", [((3, 4, 5),) * 3, ((), (), ()), ((4, 5), (5,), ()), ((3, 1), (), (1, 4)),
                                    ((37,), (37,), (37,))], ids=str)
def test_where_matches_numpy(nb, shapes, dtype):
    c = data(shapes[0], np.float64, 5) > 0
    a, b = data(shapes[1], dtype, 6), data(shapes[2], dtype, 7)
    check("where", nb.call("where", c, a, b), NUMPY_KERNELS["where"](c, a, b))
    cf = data(shapes[0], dtype, 8).round()  # a float condition: nonzero (nan too) is true
    check("where", nb.call("where", cf, a, b), NUMPY_KERNELS["where"](cf, a, b))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shapes", [((3, 4, 5), (), ()), ((37,), (37,), (37,)), ((), (), ()), ((4, 5), (5,), (4, 1))],
                         ids=str)
def test_clip_matches_numpy(nb, shapes, dtype):
    x = data(shapes[0], dtype, 9)
    for lo, hi in ((-1.0, 2.0), (2.0, -1.0)):  # lo > hi: hi wins, as np.minimum(np.maximum(x, lo), hi)
        lo_a = (data(shapes[1], dtype, 10, specials=False) * 0 + lo).astype(dtype)
        hi_a = (data(shapes[2], dtype, 11, specials=False) * 0 + hi).astype(dtype)
        check("clip", nb.call("clip", x, lo_a, hi_a), NUMPY_KERNELS["clip"](x, lo_a, hi_a), exact=True)


AXES = [None, 0, 1, 2, -1, -2, (0, 2), (1, 2), (0, 1), (-1, -3), (0, 1, 2), (2, 0)]


def reduction_tol(name, x, axis, dtype):
    """Sums in another order (numba: float64 accumulators; NumPy: pairwise float32) differ
    by a few ulps of the sum of |x|; products of n values by ~n ulps."""
    n = x.size if axis is None else int(np.prod([x.shape[a] for a in np.atleast_1d(axis)]))
    eps = np.finfo(dtype).eps
    if name in ("sum", "mean"):
        scale = NUMPY_KERNELS[name](np.abs(np.nan_to_num(x, posinf=0, neginf=0)), axis=axis, keepdims=True)
        return rtol(dtype), 4 * eps * np.max(scale)
    if name == "prod":
        return max(rtol(dtype), 2 * n * eps), 0.0
    return rtol(dtype), 4 * eps * 100


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", AXES, ids=str)
@pytest.mark.parametrize("name", REDUCTIONS)
def test_reductions_match_numpy(nb, name, axis, keepdims, dtype):
    if name == "prod":  # values near 1: neither overflow nor underflow
        x = np.random.default_rng(12).uniform(0.5, 1.5, (3, 4, 5)).astype(dtype)
    else:
        x = data((3, 4, 5), dtype, 12, specials=False)
        x[0, 1, :] = 100.0   # large values: logsumexp must not overflow
        x[1, 2, :] = -100.0
    tol, atol = reduction_tol(name, x, axis, dtype)
    check(name, nb.call(name, x, axis=axis, keepdims=keepdims),
          NUMPY_KERNELS[name](x, axis=axis, keepdims=keepdims), tol=tol, atol=atol)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", REDUCTIONS)
def test_reductions_of_special_values(nb, name, dtype):
    x = np.array([[np.nan, 1.0, 2.0], [-np.inf, -np.inf, -np.inf], [1.0, np.inf, 3.0], [2.0, 2.0, -0.0],
                  [-100.0, 100.0, 0.0]], dtype)
    for axis in (None, 0, 1, -1):
        for keepdims in (False, True):
            check(name, nb.call(name, x, axis=axis, keepdims=keepdims),
                  NUMPY_KERNELS[name](x, axis=axis, keepdims=keepdims), tol=1e-5)
    d0 = np.asarray(-2.5, dtype)  # 0-d in, 0-d ndarray out
    check(name, nb.call(name, d0, axis=None, keepdims=False), NUMPY_KERNELS[name](d0, axis=None, keepdims=False))
    check(name, nb.call(name, d0, axis=None, keepdims=True), NUMPY_KERNELS[name](d0, axis=None, keepdims=True))


@pytest.mark.parametrize("name", ["max", "min"])
def test_max_and_min_over_leading_axes_break_ties_like_numpy(nb, name):
    # The numba kernel runs for reductions over leading/middle axes.
    x = np.zeros((4, 3, 5), np.float32)
    x[1::2] = -0.0
    x[2, 1, 1] = np.nan
    for axis in (0, (0, 1), 1):
        got, want = nb.call(name, x, axis=axis, keepdims=False), NUMPY_KERNELS[name](x, axis=axis, keepdims=False)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


def test_large_reductions(nb):
    x = np.random.default_rng(13).standard_normal((300, 500, 7)).astype(np.float32)
    for name in ("sum", "mean", "logsumexp", "max"):
        for axis in (None, 0, 1, 2, (0, 2)):
            want = NUMPY_KERNELS[name](x, axis=axis, keepdims=False)
            tol, atol = reduction_tol(name, x, axis, np.float32)
            check(name, nb.call(name, x, axis=axis, keepdims=False), want, tol=max(tol, 1e-5), atol=atol)


def test_inputs_numba_does_not_cover_go_to_numpy(nb):
    i = np.arange(-5, 7, dtype=np.int32).reshape(3, 4)
    for name in ("add", "mul", "maximum"):
        check(name, nb.call(name, i, i), NUMPY_KERNELS[name](i, i), exact=True)
    for name in ("neg", "abs", "sign", "relu", "square"):
        check(name, nb.call(name, i), NUMPY_KERNELS[name](i), exact=True)
    for name in ("sum", "max", "prod", "mean"):
        check(name, nb.call(name, i, axis=0, keepdims=False), NUMPY_KERNELS[name](i, axis=0, keepdims=False),
              exact=True)
    b = i > 0
    check("sum", nb.call("sum", b, axis=None, keepdims=False), NUMPY_KERNELS["sum"](b, axis=None, keepdims=False))
    f32, f64 = np.ones(3, np.float32), np.ones(3, np.float64)
    check("add", nb.call("add", f32, f64), NUMPY_KERNELS["add"](f32, f64))  # mixed: NumPy's promotion
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    check("add", nb.call("add", x.T, x.T), NUMPY_KERNELS["add"](x.T, x.T), exact=True)  # strided input
    check("sum", nb.call("sum", x, axis=(), keepdims=False), NUMPY_KERNELS["sum"](x, axis=(), keepdims=False))


def test_operands_that_need_a_copy_go_to_numpy_in_place(nb):
    # A transposed view or a broadcast row is read in place by NumPy's loop (a copy for numba's flat
    # loop cost ten times the product); the values are the same either way.
    from tapecli.kernels.numba_support import _operands
    m = data((40, 30), np.float32, 12)
    row = data((40,), np.float32, 13)
    assert _operands(m.T, row) == (None, None)
    assert _operands(m, row[:30]) == (None, None)
    shape, flat = _operands(m, np.float32(2))
    assert shape == m.shape and flat[0].base is m
    for name in ("add", "sub", "mul", "div", "maximum", "minimum"):
        check(name, nb.call(name, m.T, row), NUMPY_KERNELS[name](m.T, row), exact=True)
    check("masked_grad", nb.call("masked_grad", m.T, row), NUMPY_KERNELS["masked_grad"](m.T, row), exact=True)


def test_errors_are_numpys(nb):
    with pytest.raises(ValueError, match="broadcast"):
        nb.call("add", np.ones(2, np.float32), np.ones(3, np.float32))
    with pytest.raises(ValueError):
        nb.call("max", np.ones((0, 3), np.float32), axis=None, keepdims=False)
    with pytest.raises(ValueError):
        nb.call("sum", np.ones((2, 3), np.float32), axis=(1, 1), keepdims=False)
    with pytest.raises(ValueError):
        nb.call("sum", np.ones((2, 3), np.float32), axis=2, keepdims=False)
    check("sum", nb.call("sum", np.ones((0, 3), np.float32), axis=0, keepdims=False),
          NUMPY_KERNELS["sum"](np.ones((0, 3), np.float32), axis=0, keepdims=False))


def test_inputs_are_not_modified_and_outputs_are_fresh(nb):
    x = data((37,), np.float32)
    before = x.copy()
    for name in UNARY:
        out = nb.call(name, x)
        assert not np.shares_memory(out, x)
    np.testing.assert_array_equal(x, before)


# ----------------------------------------------------------------- dispatcher

def test_dispatcher_backend_env(nb, monkeypatch):
    calls = []
    real = nb.call

    def spy(name, *args, **attrs):
        calls.append(name)
        return real(name, *args, **attrs)

    monkeypatch.setattr(nb, "call", spy)
    monkeypatch.setattr(kernels, "THRESHOLD", 1000)
    x = np.linspace(-1, 1, 7, dtype=np.float32)
    monkeypatch.setenv("TAPECLI_BACKEND", "numba")
    np.testing.assert_allclose(kernels.call("sin", x), np.sin(x), rtol=2e-6)
    assert calls == ["sin"]
    monkeypatch.setenv("TAPECLI_BACKEND", "numpy")
    np.testing.assert_allclose(kernels.call("sin", x), np.sin(x), rtol=2e-6)
    big = np.zeros(kernels.THRESHOLD, np.float32)
    kernels.call("sigmoid", big)
    assert calls == ["sin"]
    monkeypatch.setenv("TAPECLI_BACKEND", "auto")
    kernels.call("sigmoid", x)
    assert calls == ["sin"]
    kernels.call("sigmoid", big)
    assert calls == ["sin", "sigmoid"]
    kernels.call("matmul", np.ones((2, 2), np.float32), np.ones((2, 2), np.float32))  # not a numba kernel
    assert calls == ["sin", "sigmoid"]


@pytest.mark.skipif("TAPECLI_NUMBA_THRESHOLD" in os.environ, reason="the threshold is overridden")
def test_default_threshold_is_at_most_a_million():
    assert 0 < kernels.THRESHOLD <= 1_000_000


# ------------------------------------------------------------- subprocesses

SMALL = "var x = 3.0\ntape t:\n    y = x ** 2\ndy = t.gradient(y, x)\n"
# Big tensors stay inside the function: the JSON output is the four numbers it returns.
BIG = textwrap.dedent("""\
    def parts(n):
        x = linspace(-1.0, 1.0, n)
        tape t:
            watch x
            y = sum(sigmoid(x) * tanh(x))
        g = t.gradient(y, x)
        return [sum(g), g[0], g[n // 3], g[n - 1], y]

    p = parts(2000000)
    """)
# Runs the CLI's entry point, then reports on stderr whether numba was imported.
RUNNER = textwrap.dedent("""\
    import sys
    from tapecli.cli.app import main
    sys.argv = ["tapecli", "run", "--json", *sys.argv[1:]]
    try:
        main()
        code = 0
    except SystemExit as e:
        code = e.code or 0
    sys.stderr.write("\\nnumba imported: %s\\n" % ("numba" in sys.modules))
    sys.exit(code)
    """)


def env_for(cache, **extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TAPECLI_", "NUMBA_"))}
    env["TAPECLI_CACHE_DIR"] = str(cache)
    env.update(extra)
    return env


def start(program, env, *options):
    return subprocess.Popen([sys.executable, "-c", RUNNER, str(program), *options], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(proc, timeout=120):
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, err
    assert "Traceback" not in err, err
    return json.loads(out), err


def test_small_program_does_not_import_numba(tmp_path):
    prog = tmp_path / "small.tdf"
    prog.write_text(SMALL)
    doc, err = finish(start(prog, env_for(tmp_path / "cache")))
    assert doc["values"]["dy"] == 6.0
    assert "numba imported: False" in err


def shared_cache(tmp_path):
    # The session's private cache (conftest.py): kernels this run compiled load from there.
    return os.environ.get("TAPECLI_CACHE_DIR") or tmp_path / "cache"


def test_big_program_uses_numba_and_matches_numpy(tmp_path):
    prog = tmp_path / "big.tdf"
    prog.write_text(BIG)
    cache = shared_cache(tmp_path)
    auto = start(prog, env_for(cache))
    numpy = start(prog, env_for(cache, TAPECLI_BACKEND="numpy"))
    (doc_auto, err_auto), (doc_np, err_np) = finish(auto), finish(numpy)
    assert "numba imported: True" in err_auto
    assert "numba imported: False" in err_np
    got, want = doc_auto["values"]["p"], doc_np["values"]["p"]
    np.testing.assert_allclose(got, want, rtol=1e-5)
    # d/dx sigmoid(x) tanh(x) at x = -1
    s, t = 1 / (1 + np.exp(1.0)), np.tanh(-1.0)
    np.testing.assert_allclose(got[1], s * (1 - s) * t + s * (1 - t * t), rtol=1e-5)
    # numba's cache is under tapecli's, in a folder per numba version
    folders = list(Path(cache).glob(f"tapecli-*/numba-{importlib.metadata.version('numba')}"))
    assert folders and any(folders[0].rglob("*.nbi"))


def test_concurrent_first_runs_on_an_empty_cache(tmp_path):
    # Half of them float64: processes that compile different signatures of one kernel at
    # once must not mix up numba's cache entries.
    prog = tmp_path / "small.tdf"
    prog.write_text("var x = linspace(-2.0, 2.0, 50)\ntape t:\n    y = sum(sigmoid(x) * x ** 2)\n"
                    "dy = t.gradient(y, x)\ns = sum(dy)\nm = dy[7]\n")
    env = env_for(tmp_path / "cache", TAPECLI_BACKEND="numba")
    options = [("--dtype", "float64") if i % 2 else () for i in range(8)]
    procs = [start(prog, env, *o) for o in options]
    results = [finish(p, timeout=300) for p in procs]
    for o in set(options):
        want, _ = finish(start(prog, env_for(tmp_path / "numpy-cache", TAPECLI_BACKEND="numpy"), *o))
        for (doc, err), opt in zip(results, options, strict=True):
            if opt == o:
                assert "numba imported: True" in err
                np.testing.assert_allclose([doc["values"]["s"], doc["values"]["m"]],
                                           [want["values"]["s"], want["values"]["m"]], rtol=1e-6)
    # and a later process loads what they cached
    doc, err = finish(start(prog, env, "--dtype", "float64"))
    assert doc["values"]["s"] == results[1][0]["values"]["s"]


def _python(code, env):
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs CPU affinity")
def test_numba_threads_follow_the_cpus_the_process_may_use(tmp_path):
    code = ("import os; os.sched_setaffinity(0, {min(os.sched_getaffinity(0))}); "
            "import tapecli.kernels.numba_support; from numba.core import config; "
            "print(config.NUMBA_NUM_THREADS, config.THREADING_LAYER, os.environ['OMP_WAIT_POLICY'])")
    assert _python(code, env_for(tmp_path)) == ["1", "threadsafe", "PASSIVE"]
    assert _python(code, env_for(tmp_path, NUMBA_NUM_THREADS="3", OMP_WAIT_POLICY="ACTIVE"))[::2] == ["3", "ACTIVE"]


def test_openblas_idle_threads_spin_where_a_core_is_free_unless_the_user_says_otherwise(tmp_path):
    import tapecli
    assert tapecli._openblas_thread_timeout("0.31 0.40 0.52 1/80 4242", cores=2) == tapecli._SPINNING
    assert tapecli._openblas_thread_timeout("0.31 0.40 0.52 2/80 4242", cores=2) == tapecli._SPINNING
    assert tapecli._openblas_thread_timeout("0.31 0.40 0.52 3/80 4242", cores=2) == tapecli._ASLEEP   # busy now
    assert tapecli._openblas_thread_timeout("2.05 1.10 0.52 1/80 4242", cores=2) == tapecli._ASLEEP   # this minute
    assert tapecli._openblas_thread_timeout("3.50 3.00 2.00 3/80 4242", cores=4) == tapecli._SPINNING
    assert tapecli._openblas_thread_timeout("1.00 1.00 1.00 1/1 1", cores=1) == tapecli._ASLEEP       # no core spare
    assert tapecli._openblas_thread_timeout("", cores=2) == tapecli._ASLEEP
    assert tapecli._openblas_thread_timeout("0.3 0.4 0.5 x/80 1", cores=2) == tapecli._ASLEEP
    code = "import tapecli, os; print(os.environ['OPENBLAS_THREAD_TIMEOUT'], tapecli._machine_thread_timeout())"
    env = {k: v for k, v in env_for(tmp_path).items() if not k.startswith(("OPENBLAS_", "GOTO_"))}
    chosen, machine = _python(code, env)
    assert chosen in (tapecli._SPINNING, tapecli._ASLEEP) and machine in (tapecli._SPINNING, tapecli._ASLEEP)
    assert _python(code, {**env, "OPENBLAS_THREAD_TIMEOUT": "20"})[0] == "20"


@pytest.mark.skipif(importlib.util.find_spec("tbb") is not None, reason="TBB is installed")
def test_without_a_thread_safe_threading_layer_fused_kernels_are_serial(tmp_path):
    code = "from tapecli.kernels.numba_support import kernel_threads; print(kernel_threads())"
    assert _python(code, env_for(tmp_path, NUMBA_THREADING_LAYER="tbb", NUMBA_NUM_THREADS="2")) == ["1"]


@pytest.mark.parametrize("index", [
    (slice(None), slice(1, 6, 2), slice(0, 5)), 2, (1, Ellipsis, 2), (None, slice(None), 3), (slice(None, None, -1),),
    (1, 2, 3, 0), (np.array([0, 0, 2]),), ([1, 1],), (slice(None), np.array([1, 1, 3])), (True,),
])
def test_index_grad_adds_as_np_add_at_does(index):
    """A basic index takes ``+=`` on a view (each position once), any other np.add.at: the same bits,
    -0.0 included (0.0 + -0.0 is 0.0 either way)."""
    x = np.random.default_rng(0).standard_normal((4, 7, 6, 3)).astype(np.float32)
    g = np.array(x[index], dtype=np.float32)
    g.reshape(-1)[0] = -0.0
    want = np.zeros(x.shape, np.float32)
    np.add.at(want, index, g)
    got = NUMPY_KERNELS["index_grad"](g, x.shape, index)
    assert got.dtype == want.dtype and got.tobytes() == want.tobytes()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_numpy_kernels_short_ways_give_numpys_bits(dtype):
    # relu (max(0, x): -0 stays -0, as TensorFlow's) and its gradient as a bit mask; sum, max, min and max's share
    # over a short inner axis slice by slice;
    # broadcast_to as a copy: each against the NumPy call it stands for, with NaN, inf and both zeros among the values
    rng = np.random.default_rng(11)
    x = rng.standard_normal((16, 9, 7, 4, 8)).astype(dtype)
    flat = x.reshape(-1)
    flat[::97], flat[::89], flat[::53], flat[5] = 0.0, -0.0, np.inf, np.nan
    g = rng.standard_normal(x.shape).astype(dtype)
    g.reshape(-1)[::61] = -0.0
    g.reshape(-1)[7] = np.nan

    def same(a, b):
        return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()
    for values in (x, x[:, ::2], x[..., :7]):      # rows of zeros along it; strided; rows of 7 (no such rows)
        assert same(NUMPY_KERNELS["relu"](values), np.maximum(np.zeros_like(values), values))   # (-0 kept: Eigen's)
    assert same(NUMPY_KERNELS["masked_grad"](g, x, kind="relu"), np.where(x > 0, g, 0).astype(dtype))
    assert same(NUMPY_KERNELS["masked_grad"](g[:, ::2], x[:, ::2], kind="relu"),
                np.where(x[:, ::2] > 0, g[:, ::2], 0).astype(dtype))
    for axis in (3, (1,), -2, 0):
        for keepdims in (False, True):
            assert same(NUMPY_KERNELS["max"](x, axis=axis, keepdims=keepdims), np.max(x, axis=axis, keepdims=keepdims))
            assert same(NUMPY_KERNELS["min"](x, axis=axis, keepdims=keepdims), np.min(x, axis=axis, keepdims=keepdims))
            for v in (x, g):      # (float sums are TensorFlow's, in Eigen's order, where tf_sums follows it)
                exact = tf_sums.reduce_sum(v, axis, keepdims)
                want = np.sum(v, axis=axis, keepdims=keepdims) if exact is None else exact
                assert same(NUMPY_KERNELS["sum"](v, axis=axis, keepdims=keepdims), want)
    for axis in (3, (1,), -2, 0, (1, 3), None):
        y = np.max(x, axis=axis, keepdims=True)
        y.reshape(-1)[::3] = np.min(x, axis=axis, keepdims=True).reshape(-1)[::3]
        hit = np.equal(x, y).astype(dtype)
        with np.errstate(invalid="ignore"):         # (0 / 0 where the extreme is NaN: NaN, as TensorFlow's)
            want = hit / np.sum(hit, axis=axis, keepdims=True)
        assert same(NUMPY_KERNELS["extreme_share"](x, y, axis=axis), want)
    assert same(NUMPY_KERNELS["broadcast_to"](x[0, 0, 0], (3, 4, 8)), np.array(np.broadcast_to(x[0, 0, 0], (3, 4, 8))))
    with pytest.raises(ValueError, match="broadcast"):
        NUMPY_KERNELS["broadcast_to"](x[0, 0, 0], (3, 5))


@pytest.mark.parametrize("shape", [(256, 10), (6, 40, 3), (64, 32), (40, 33), (5, 4)])
def test_sparse_xent_kernels_class_major_or_not_are_float64s_numbers_rounded(shape):
    # few classes and many rows take the class-major layout (_class_major); the rest the row-major one
    rng = np.random.default_rng(3)
    logits = (rng.standard_normal(shape) * 4).astype(np.float32)
    labels = rng.integers(0, shape[-1], shape[:-1]).astype(np.int32)
    x = logits.astype(np.float64)
    shifted = x - x.max(axis=-1, keepdims=True)
    log_total = np.log(np.exp(shifted).sum(axis=-1))
    want_loss = log_total - np.take_along_axis(shifted, labels[..., None], -1)[..., 0]
    want_backprop = np.exp(shifted - log_total[..., None])
    np.put_along_axis(want_backprop, labels[..., None], np.take_along_axis(want_backprop, labels[..., None], -1) - 1, -1)
    loss = NUMPY_KERNELS["sparse_softmax_xent"](logits, labels)
    backprop = NUMPY_KERNELS["sparse_softmax_xent_backprop"](logits, labels)
    assert loss.dtype == backprop.dtype == np.float32 and loss.shape == shape[:-1] and backprop.shape == shape
    assert backprop.flags.c_contiguous
    np.testing.assert_allclose(loss, want_loss, rtol=2e-6, atol=2e-6)
    np.testing.assert_allclose(backprop, want_backprop, rtol=2e-6, atol=2e-7)


_WINDOWS = [
    ((2, 9, 8, 16), (3, 3), (1, 1), (1, 1), 1),       # many channels: one strided view, copied
    ((2, 9, 8, 1), (3, 2), (2, 1), (1, 2), 1),        # one channel: a tap at a time
    ((2, 12, 12, 3), (3, 3), (1, 1), (1, 1), 1),      # few channels: each pixel's channels copied as one item
    ((2, 12, 12, 6), (3, 2), (2, 1), (1, 2), 2),      # ... not contiguous (every second channel): element by element
    ((3, 8, 8, 5), (2, 2), (2, 2), (1, 1), 1),        # pooling's windows side by side
]


def _window_sizes(shape, size, strides, dilations):
    return tuple((n - (k - 1) * d - 1) // s + 1 for n, k, s, d in zip(shape[1:3], size, strides, dilations))


@pytest.mark.parametrize("shape, size, strides, dilations, step", _WINDOWS)
def test_the_windows_kernel_copies_every_window_into_one_contiguous_array(shape, size, strides, dilations, step):
    # contiguous, its own: the reshape that follows (a convolution's rows, a pooling's taps) is a view, not a
    # second copy; and a trace sees the kernel's array, not a view of one made inside it
    x = np.random.default_rng(5).standard_normal(shape).astype(np.float32)[..., ::step]
    (kh, kw), (sh, sw), (dh, dw) = size, strides, dilations
    oh, ow = _window_sizes(shape, size, strides, dilations)
    got = NUMPY_KERNELS["windows"](x, size=size, strides=strides, dilations=dilations, out=(oh, ow))
    assert got.shape == (shape[0], oh, ow, kh, kw, x.shape[3]) and got.flags.c_contiguous and got.base is None
    for i in range(kh):
        for j in range(kw):
            np.testing.assert_array_equal(got[:, :, :, i, j], x[:, i * dh::sh, j * dw::sw][:, :oh, :ow])


@pytest.mark.parametrize("shape, size, strides, dilations, step", _WINDOWS)
@pytest.mark.parametrize("contiguous", [True, False], ids=["contiguous", "transposed"])
def test_the_windows_gradient_adds_each_tap_from_the_last_to_the_first(shape, size, strides, dilations, step,
                                                                       contiguous):
    (kh, kw), (sh, sw), (dh, dw) = size, strides, dilations
    oh, ow = _window_sizes(shape, size, strides, dilations)
    c = len(range(0, shape[3], step))
    g = np.random.default_rng(6).standard_normal((shape[0], oh, ow, kh, kw, c)).astype(np.float32)
    if not contiguous:          # the same values, the channels' axis not contiguous
        g = np.ascontiguousarray(g.transpose(5, 0, 1, 2, 3, 4)).transpose(1, 2, 3, 4, 5, 0)
    got = NUMPY_KERNELS["windows_grad"](g, shape=shape[:3] + (c,), size=size, strides=strides, dilations=dilations)
    want = np.zeros(shape[:3] + (c,), dtype=np.float32)
    for i in reversed(range(kh)):
        for j in reversed(range(kw)):
            want[:, i * dh:i * dh + sh * (oh - 1) + 1:sh, j * dw:j * dw + sw * (ow - 1) + 1:sw] += g[:, :, :, i, j]
    assert got.tobytes() == want.tobytes() and got.base is None


# The NumPy kernels' layouts for large arrays (a bias on wide rows, sums in blocks, masks on the bits, max
# pooling on window-major taps): NumPy's plain calls' bits (a blocked sum: within rounding of the exact sum),
# in arrays of their own (a trace follows arrays by identity and base: a view of a temporary would look like a
# constant to it)
_LARGE = np.random.default_rng(11).normal(size=(4, 16, 16, 8)).astype(np.float32)
_POOLING = {"size": (2, 2), "strides": (2, 2), "pads": (0, 0, 0, 0), "out": (8, 8)}


def _to_windows(x):
    return x.reshape(4, 8, 2, 8, 2, 8).transpose(0, 1, 3, 2, 4, 5).reshape(4, 8, 8, 4, 8)


def _pool_grad(x, g):
    """Each window's gradient at its maximum (the values are distinct)."""
    grad = np.zeros((4, 8, 8, 4, 8), dtype=g.dtype)
    np.put_along_axis(grad, _to_windows(x).argmax(axis=3)[:, :, :, None], g[:, :, :, None], axis=3)
    return grad.reshape(4, 8, 8, 2, 2, 8).transpose(0, 1, 3, 2, 4, 5).reshape(x.shape)


LAYOUTS = [
    ("add", (_LARGE, _LARGE[0, 0, 0]), {}, lambda x, b: x + b),
    ("sub", (_LARGE, _LARGE[0, 0, 0]), {}, lambda x, b: x - b),
    ("mul", (_LARGE, _LARGE[0, 0, 0]), {}, lambda x, b: x * b),
    ("div", (_LARGE, _LARGE[0, 0, 0]), {}, lambda x, b: x / b),
    ("relu", (_LARGE,), {}, lambda x: np.maximum(x, 0)),
    ("masked_grad", (_LARGE[::-1].copy(), _LARGE), {}, lambda g, x: np.where(x > 0, g, 0).astype(g.dtype)),
    ("sum", (_LARGE,), {"axis": (0, 1, 2), "keepdims": True}, None),
    ("sum", (_LARGE,), {"axis": (0, 1, 2)}, None),
    ("max_pool", (_LARGE,), _POOLING, lambda x: _to_windows(x).max(axis=3)),
    ("max_pool_grad", (_LARGE, _LARGE[:, ::2, ::2].copy()), _POOLING, _pool_grad),
]


@pytest.mark.parametrize("name, args, attrs, plain", LAYOUTS, ids=[f"{n}-{len(a)}" for n, _, a, _ in LAYOUTS])
def test_kernels_on_large_arrays_give_arrays_of_their_own(name, args, attrs, plain):
    out = NUMPY_KERNELS[name](*args, **attrs)
    assert out.base is None and out.flags.c_contiguous
    if plain is None:
        exact = np.sum(args[0].astype(np.float64), **attrs)
        assert out.shape == exact.shape and out.dtype == args[0].dtype
        np.testing.assert_allclose(out, exact, rtol=1e-5)
    else:
        assert out.tobytes() == np.asarray(plain(*args)).tobytes()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_max_pooling_of_windows_side_by_side_gives_the_window_major_bits(dtype):
    # the maximum over rows, then over taps (no copy of the windows), where it can agree; the window-major
    # path (TensorFlow's loop where NaN, a lone -inf or -0.0 could differ) everywhere: the same bits
    from tapecli.ops import nn
    rng = np.random.default_rng(5)
    taken = 0
    for trial in range(400):
        n, h, w, c = rng.integers(1, 4), rng.integers(1, 9), rng.integers(1, 9), rng.integers(1, 5)
        kh, kw = min(rng.integers(1, 4), h), min(rng.integers(1, 4), w)
        x = rng.standard_normal((n, h, w, c)).astype(dtype)
        special = [None, 0.0, -0.0, -np.inf, np.nan][trial % 5]
        if special is not None:
            x.reshape(-1)[rng.integers(0, x.size, 3)] = special
        if trial % 7 == 0:
            x = np.maximum(x, 0)            # (ties of zeros, as after relu)
        if trial % 11 == 0:                 # ties of zeros of both signs
            x = rng.choice(np.array([-1.0, 0.0, -0.0], dtype), size=x.shape)
        geometry = ((kh, kw), (kh, kw), (0, 0, 0, 0), (h // kh, w // kw))
        windows = nn._window_major(x, geometry, -np.inf)
        want = nn._tap_maximum(windows)
        if not nn._plain_windows(windows, want):
            want.fill(np.finfo(dtype).min)
            for tap in windows:
                np.copyto(want, tap, where=np.greater(tap, want))
        got = NUMPY_KERNELS["max_pool"](x, *geometry)
        assert got.shape == want.shape and got.dtype == want.dtype and got.tobytes() == want.tobytes()
        taken += nn._side_by_side_maximum(x, *geometry) is not None
    assert 200 < taken < 400      # (both paths ran)


# Matrix products on OpenBLAS's threads where they pay (kernels/blas.py)
def test_a_small_product_runs_on_one_thread_and_gives_openblas_its_threads_back(monkeypatch):
    from tapecli.kernels import blas
    calls = []
    monkeypatch.setattr(blas, "_openblas", (calls.append, 4))
    rng = np.random.default_rng(7)
    for a_shape, b_shape, threads in [((4, 3), (3, 5), []),                 # OpenBLAS's one thread anyway
                                      ((256, 64), (64, 128), [1, 4]),       # one thread, then its 4 again
                                      ((3, 256, 64), (64, 128), [1, 4]),    # (a batch: each product's size)
                                      ((1024, 128), (128, 256), []),        # large: OpenBLAS's threads
                                      ((64,), (64, 128), [])]:              # a vector: NumPy's as it is
        a, b = rng.standard_normal(a_shape).astype(np.float32), rng.standard_normal(b_shape).astype(np.float32)
        calls.clear()
        assert blas.matmul(a, b).tobytes() == np.matmul(a, b).tobytes()
        assert calls == threads, (a_shape, b_shape)


def test_products_are_numpys_where_the_user_chose_the_threads(monkeypatch):
    from tapecli.kernels import blas
    monkeypatch.setattr(blas, "_openblas", blas._unknown)
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "2")
    assert blas._found() is None


def test_the_openblas_numpy_loaded_takes_a_thread_count_and_gives_it_back():
    from tapecli.kernels import blas
    np.matmul(np.ones((128, 128)), np.ones((128, 128)))         # (the library is loaded by now)
    found = blas._find_openblas()
    if found is None:
        pytest.skip("NumPy is not on a multithreaded OpenBLAS here")
    set_threads, threads = found
    set_threads(1)
    assert blas._find_openblas() is None                         # one thread: nothing to choose
    set_threads(threads)
    assert blas._find_openblas()[1] == threads


# ------------------------------------------------------------------ kernels made in pairs (loop plans)

def _xent_inputs(shape, seed, special=False):
    rng = np.random.default_rng(seed)
    logits = rng.standard_normal(shape).astype(np.float32)
    if special:                     # ties, a huge logit and the lowest float in some rows
        logits[..., 0] = logits[..., 1]
        logits[0, -1] = 1e30
        logits[1, 0] = np.finfo(np.float32).min
    labels = rng.integers(0, shape[-1], shape[:-1]).astype(np.int32)
    return logits, labels


def _ctc_inputs(frames, batch, classes, length, seed):
    """Time-major logits, dense labels (no blank: class 0) of ``length`` each, and the two lengths."""
    rng = np.random.default_rng(seed)
    logits = rng.standard_normal((frames, batch, classes)).astype(np.float32)
    labels = rng.integers(1, classes, (batch, length)).astype(np.int32)
    return logits, labels, np.full(batch, length, np.int32), np.full(batch, frames, np.int32)


# every entry of kernels.PAIRED, with the arguments its two kernels are compared on
PAIRED_CASES = {
    ("sparse_softmax_xent", "sparse_softmax_xent_backprop"): [
        _xent_inputs((256, 10), 0), _xent_inputs((256, 10), 1, special=True), _xent_inputs((40, 32), 2),
        _xent_inputs((64, 3), 3), _xent_inputs((32, 10), 4), _xent_inputs((8, 3, 5), 5), _xent_inputs((70, 2, 4), 6),
        (np.zeros((0, 4), np.float32), np.zeros((0,), np.int32))],
    ("ctc_loss", "ctc_loss_grad"): [_ctc_inputs(6, 2, 4, 3, 0), _ctc_inputs(12, 3, 7, 4, 1)],
    ("ctc_sparse_loss", "ctc_sparse_loss_grad"): [
        _ctc_inputs(6, 2, 4, 3, 2)[:1] + (np.array([6, 5], np.int32), ((0, 2, 1), (1,))),
        _ctc_inputs(9, 3, 5, 3, 3)[:1] + (np.array([9, 9, 7], np.int32), ((3, 3), (0, 1, 2), (2,)))],
}


def test_every_paired_kernel_is_tested():
    assert set(kernels.PAIRED) == set(PAIRED_CASES)


@pytest.mark.parametrize("pair", sorted(PAIRED_CASES))
def test_a_paired_kernel_gives_the_bits_of_its_two_kernels(pair):
    first, second = pair
    for args in PAIRED_CASES[pair]:
        with kernels.quiet():
            both = kernels.PAIRED[pair](*args)
            alone = [kernels.direct(name, list(args))(*args) for name in pair]
        for made, expected in zip(both, alone):
            assert made.shape == expected.shape and made.dtype == expected.dtype
            assert made.tobytes() == expected.tobytes(), (pair, [a.shape for a in args])


def _out_inputs(seed):
    """Float32 arrays of 64 x 300 (wide enough for the bias and relu layouts) with the special values a result
    written in place must keep: signed zeros, infinities, NaN."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((64, 300)).astype(np.float32)
    x.reshape(-1)[:6] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40]
    return x


# every kernel of kernels.OUT_KERNELS, with the arguments it is compared on: with ``out=`` an array of its own,
# and, where an argument has the result's shape and dtype, that argument's array
_X, _Y = _out_inputs(0), _out_inputs(1)
_BIAS, _ROW = _out_inputs(2)[0, :16], _out_inputs(3)[0]
_X16 = _out_inputs(4).T[:, :16].copy()      # (a bias along 300 rows of 16: the widened layout)
_INTS = np.random.default_rng(5).integers(-2**31, 2**31, (64, 300), dtype=np.int32)
_SHIFTS = np.random.default_rng(6).integers(0, 32, (64, 300), dtype=np.int32)
_UNARY = ("abs", "ceil", "cos", "exp", "floor", "log", "log1p", "neg", "sign", "sin", "sqrt", "square", "tan", "tanh",
          "relu", "acos", "acosh", "asin", "asinh", "atan", "atanh", "cosh", "sinh", "expm1", "reciprocal", "rsqrt")
_BINARY = ("add", "sub", "mul", "div", "maximum", "minimum", "pow", "greater", "greater_equal", "less", "less_equal",
           "equal", "not_equal", "atan2")
OUT_CASES = {
    **{name: [(_X,), (_X[:3, :5].copy(),)] for name in _UNARY},
    **{name: [(_X, _Y), (_X, _ROW), (_X16, _BIAS), (_BIAS, _X16)] for name in _BINARY},
    **{name: [(_X > 0, _Y > 0)] for name in ("logical_and", "logical_or")},
    "logical_not": [(_X > 0,)],
    **{name: [(_INTS, _SHIFTS)] for name in ("bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift")},
    "invert": [(_INTS,)],
    "masked_grad": [(_X, _Y), (_X, _Y, "abs"), (_X, _Y, "leaky", 0.3), (_X[:, ::2], _Y[:, ::2])],
}


def test_every_kernel_that_writes_into_out_is_tested():
    assert set(kernels.OUT_KERNELS) == set(OUT_CASES)


@pytest.mark.parametrize("name", sorted(OUT_CASES))
def test_a_kernel_gives_the_same_bits_into_out_as_alone(name):
    for args in OUT_CASES[name]:
        with kernels.quiet():
            function = kernels.RAW_NUMPY_KERNELS[name]
            alone = function(*args)
            into = np.full_like(alone, 7)
            assert function(*args, out=into) is into
            assert into.tobytes() == alone.tobytes(), (name, [np.shape(a) for a in args])
            for k, arg in enumerate(args):
                if isinstance(arg, np.ndarray) and arg.shape == alone.shape and arg.dtype == alone.dtype:
                    copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
                    assert function(*copies, out=copies[k]) is copies[k]
                    assert copies[k].tobytes() == alone.tobytes(), (name, k, [np.shape(a) for a in args])
