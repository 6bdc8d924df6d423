"""Fusion (tapecli/fusion/): an elementwise expression over large tensors runs as one Numba kernel
and is recorded as one op. It must be invisible: the same values (within float32 rounding), the
same gradients of every order, the same None and watched semantics as the unfused ops.

The tests lower the size threshold so that small tensors fuse (compiles are cached per session).
"""
from __future__ import annotations

import importlib.util
import os
import textwrap

import numpy as np
import pytest

from conftest import cli, fast_paths

pytestmark = [pytest.mark.skipif(importlib.util.find_spec("numba") is None, reason="fusion needs numba"), fast_paths]

from tapecli import fusion  # noqa: E402
from tapecli.fusion import codegen, plan  # noqa: E402,F401
from tapecli.api import Options, run_source  # noqa: E402
from tapecli.errors import ShapeError, TdfTypeError  # noqa: E402
from tapecli.runtime.values import Tensor  # noqa: E402

N = 3000


@pytest.fixture(autouse=True)
def _small_threshold(monkeypatch):
    monkeypatch.setattr(fusion.plan, "THRESHOLD", 1000)
    monkeypatch.delenv("TAPECLI_BACKEND", raising=False)
    monkeypatch.delenv("TAPECLI_FUSION", raising=False)


def _data(seed=0, n=N, dtype=np.float32, low=None):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=n) * 2
    if low is not None:
        a = np.abs(a) + low
    return a.astype(dtype)


def run(source, fused=True, **options):
    old = os.environ.get("TAPECLI_FUSION")
    os.environ["TAPECLI_FUSION"] = "1" if fused else "0"
    try:
        return run_source(textwrap.dedent(source).lstrip("\n"), "f.tdf", Options(**options))
    finally:
        if old is None:
            del os.environ["TAPECLI_FUSION"]
        else:
            os.environ["TAPECLI_FUSION"] = old


def ops_recorded(result, tape=0):
    return [r.op.name for r in result.tapes[tape].records]


def val(result, name):
    v = result.scope.vars[name]
    if isinstance(v, list):
        return [None if x is None else np.asarray(x.value) for x in v]
    return None if v is None else np.asarray(v.read().value if hasattr(v, "read") else v.value)


def close(a, b, dtype=np.float32):
    rtol, atol = (2e-5, 2e-6) if dtype == np.float32 else (1e-12, 1e-13)
    if isinstance(a, list):
        for x, y in zip(a, b):
            close(x, y, dtype)
        return
    assert (a is None) == (b is None)
    if a is not None:
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


# --------------------------------------------------- approximations (float32)

def _ulps(a, b):
    a = np.asarray(a, np.float32).view(np.int32).astype(np.int64)
    b = np.asarray(b, np.float32).view(np.int32).astype(np.int64)
    a = np.where(a < 0, -(2 ** 31) - a, a)
    b = np.where(b < 0, -(2 ** 31) - b, b)
    return np.abs(a - b)


@pytest.fixture(scope="module")
def approx():
    from numba import njit

    from tapecli.kernels import fusion_math as fm

    def loop(f):
        @njit(error_model="numpy", fastmath={"contract"})
        def run(x, out):
            for i in range(x.size):
                out[i] = f(x[i])
        return run
    return {"exp": loop(fm.expf), "tanh": loop(fm.tanhf), "sigmoid": loop(fm.sigmoidf), "log": loop(fm.logf)}


def _every_float32(step=101):
    """Every float32 bit pattern in steps of ``step``: all magnitudes, both signs."""
    return np.arange(0, 2 ** 32, step, dtype=np.uint64).astype(np.uint32).view(np.float32)


@pytest.mark.parametrize("name, step", [("exp", 509), ("log", 257)])
def test_exp_and_log_are_numpys_bit_for_bit(approx, name, step):
    # every float32 magnitude (subnormals included), both signs (log of a negative: nan)
    x = _every_float32(step)
    out = np.empty_like(x)
    approx[name](x, out)
    with np.errstate(all="ignore"):
        want = getattr(np, name)(x)
    np.testing.assert_array_equal(np.isnan(out), np.isnan(want))
    ok = ~np.isnan(want)
    assert _ulps(out[ok], want[ok]).max() <= 2, "more than 2 ulp from NumPy"
    if os.uname().machine in ("x86_64", "AMD64"):
        assert _ulps(out[ok], want[ok]).max() == 0


def test_tanh_within_one_ulp_of_exact_and_two_of_numpy(approx):
    x = _every_float32()
    x = x[~np.isnan(x)]
    out = np.empty_like(x)
    approx["tanh"](x, out)
    exact = np.tanh(x.astype(np.float64)).astype(np.float32)
    assert _ulps(out, exact).max() <= 1, "more than 1 ulp from the correctly rounded value"
    assert _ulps(out, np.tanh(x)).max() <= 2, "more than 2 ulp from NumPy"


@pytest.mark.parametrize("name", ["exp", "tanh", "sigmoid", "log"])
def test_approximations_special_values(approx, name):
    from tapecli.kernels.numpy_kernels import KERNELS
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30, -1e-30, 88.0, 88.7, 88.8, 89.0, -87.0, -103.0,
                  -104.0, -200.0, 9.0, -9.0, 20.0, 1.0, 1e-45, 3.4e38], dtype=np.float32)
    out = np.empty_like(x)
    approx[name](x, out)
    # what the unfused kernel gives at the sizes fusion runs at: above tf_float32.PACKET_LIMIT, NumPy's
    # functions (below it, TensorFlow's bits: subnormals flushed, logf of one as TensorFlow's C library gives)
    from tapecli.kernels import tf_float32
    want = KERNELS[name](np.tile(x, tf_float32.PACKET_LIMIT // x.size + 1))[:x.size]
    np.testing.assert_array_equal(np.isnan(out), np.isnan(want))
    ok = ~np.isnan(want)
    assert (_ulps(out[ok], want[ok]) <= 2).all(), (x[ok], out[ok], want[ok])


# ------------------------------------------------- fused equals unfused

EXPRESSIONS = [
    "sum(sigmoid(x) * tanh(x * 1.5 + 0.5))",
    "mean((x - y) ** 2)",
    "sum(relu(x) * abs(y) + leaky_relu(x, 0.1) - leaky_relu(y))",
    "sum(maximum(x, y) * minimum(x, 0.5) / (square(y) + 1.0))",
    "sum(exp(-x * x) + softplus(y) - x ** 3)",
    "sum(sqrt(p) * log(p) + rsqrt(p) + p ** 0.5 + pow(p, 1.7))",
    "sum(sin(x) * cos(y) + tanh(-x))",
]


@pytest.mark.parametrize("expr", EXPRESSIONS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_values_and_gradients_match_unfused(expr, dtype):
    np_dtype = np.dtype(dtype)
    source = f"""
        var x = 0.0
        var y = 0.0
        var p = 0.0
        tape t:
            loss = {expr}
        g = t.gradient(loss, [x, y, p])
    """
    sets = {"x": _data(1, dtype=np_dtype), "y": _data(2, dtype=np_dtype), "p": _data(3, dtype=np_dtype, low=0.1)}
    fused = run(source, overrides=sets, dtype=dtype)
    plain = run(source, fused=False, overrides=sets, dtype=dtype)
    assert ops_recorded(fused) == ["fused"]
    assert "fused" not in ops_recorded(plain)
    close(val(fused, "loss"), val(plain, "loss"), np_dtype)
    close(val(fused, "g"), val(plain, "g"), np_dtype)
    assert [v is None for v in val(fused, "g")] == [v is None for v in val(plain, "g")]


SECOND_ORDER = """
    var x = 0.0
    const w = 0.0
    tape outer:
        tape inner:
            y = sum(sigmoid(x) * tanh(x * w + 0.5))
        g = inner.gradient(y, x)
        s = sum(g * w)
    h = outer.gradient(s, [x, w])
"""


def test_second_order_matches_unfused():
    sets = {"x": _data(4), "w": _data(5)}
    fused = run(SECOND_ORDER, overrides=sets)
    plain = run(SECOND_ORDER, fused=False, overrides=sets)
    assert "fused" in ops_recorded(fused, 1)
    close(val(fused, "g"), val(plain, "g"))
    close(val(fused, "h"), val(plain, "h"))
    assert val(fused, "h")[1] is None         # w is a constant: not watched


def test_elementwise_result_and_output_gradients():
    source = """
        var x = 0.0
        const c = 0.0
        tape t(persistent=True):
            y = sigmoid(x) * c - tanh(x)
        g1 = t.gradient(y, x)
        g2 = t.gradient(y, x, output_gradients=c)
        z = sum(y * y)
        g3 = t.gradient(z, x)
    """
    sets = {"x": _data(6), "c": _data(7)}
    fused = run(source, overrides=sets)
    plain = run(source, fused=False, overrides=sets)
    assert ops_recorded(fused)[0] == "fused"
    for name in ("y", "g1", "g2", "g3"):
        close(val(fused, name), val(plain, name))


def test_broadcast_scalar_leaf_and_literal_names():
    source = """
        var x = 0.0
        var b = [0.25]
        k = 2.0
        tape t:
            loss = mean(tanh(x * k + b) * b)
        g = t.gradient(loss, [x, b])
    """
    sets = {"x": _data(8)}
    fused = run(source, overrides=sets)
    plain = run(source, fused=False, overrides=sets)
    assert ops_recorded(fused) == ["fused"]
    close(val(fused, "loss"), val(plain, "loss"))
    close(val(fused, "g"), val(plain, "g"))
    assert val(fused, "g")[1].shape == (1,)


def test_none_and_watched_semantics():
    source = """
        var x = 0.0
        var(trainable=False) u = 0.0
        const c = 0.0
        tape t(persistent=True):
            loss = sum(sigmoid(x) * c + u * x)
            other = sum(exp(c) * u + c)
        gx = t.gradient(loss, x)
        gu = t.gradient(loss, u)
        gc = t.gradient(loss, c)
        go = t.gradient(other, x)
        vs = t.watched_variables()
    """
    sets = {"x": _data(9), "u": _data(10), "c": _data(11)}
    fused = run(source, overrides=sets)
    plain = run(source, fused=False, overrides=sets)
    for name in ("gx", "gu", "gc", "go"):
        close(val(fused, name), val(plain, name))
    assert val(fused, "gu") is None and val(fused, "gc") is None and val(fused, "go") is None
    assert [v.name for v in fused.scope.vars["vs"]] == [v.name for v in plain.scope.vars["vs"]] == ["x"]
    assert ops_recorded(fused) == ["fused"]        # `other` reads no watched leaf: not recorded


def test_a_leaf_watched_after_the_expression_replays():
    source = """
        const c = 0.0
        const d = 0.0
        tape t(persistent=True):
            watch c
            y = sum(sigmoid(c) * d + d * d)
            watch d
        gc = t.gradient(y, c)
        gd = t.gradient(y, d)
    """
    sets = {"c": _data(12), "d": _data(13)}
    fused = run(source, overrides=sets)
    plain = run(source, fused=False, overrides=sets)
    close(val(fused, "gc"), val(plain, "gc"))
    close(val(fused, "gd"), val(plain, "gd"))


def test_jacobians_through_a_fused_op_in_both_modes():
    source = """
        var x = 0.0
        tape t(persistent=True):
            y = sigmoid(x) * x + tanh(x)
            s = sum(y * y)
        j = t.jacobian(s, x)
    """
    sets = {"x": _data(14, n=1200)}
    want = run(source, fused=False, overrides=sets)
    for mode in ("rev", "fwd"):
        got = run(source, overrides=sets, jacobian_mode=mode)
        assert "fused" in ops_recorded(got)
        close(val(got, "j"), val(want, "j"))


def test_fused_op_forward_mode_rule():
    source = """
        var x = 0.0
        tape t(persistent=True):
            y = mean(exp(x * 0.1) * x)
    """
    r = run(source, overrides={"x": _data(15, n=1500, dtype=np.float64)}, dtype="float64")
    (rec,) = r.tapes[0].records
    t = np.random.default_rng(1).normal(size=1500)
    jv = rec.op.jvp(rec, [Tensor(t)])
    xv = rec.inputs[0].value
    np.testing.assert_allclose(float(jv.value), np.mean(np.exp(0.1 * xv) * (1 + 0.1 * xv) * t), rtol=1e-12)


def _load_kernel(source, folder, name):
    path = folder / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.kernel


def test_a_fused_sum_is_the_same_on_any_number_of_threads(monkeypatch, tmp_path):
    # the blocks split into one run per thread; the sums of the blocks are added in block order after
    from tapecli.frontend.parser import parse
    program = parse("loss = sum(sigmoid(x) * tanh(x * 1.5 + 0.5))\n", "f.tdf")
    p = plan.analyze(program.body[0].value)
    x = _data(5, n=5 * 2048 + 77)
    results = []
    from tapecli.kernels import numba_support
    for threads in (1, 2, 3):               # 1: a serial kernel
        monkeypatch.setattr(numba_support, "kernel_threads", lambda: threads)
        source = codegen.codegen(p, np.dtype(np.float32), ("a",), (0,))
        kernel = _load_kernel(source, tmp_path, f"threads{threads}")
        out, d = np.empty(1, np.float32), np.empty(x.size, np.float32)
        kernel(x.size, x, np.float32(1.5), np.float32(0.5), out, d)
        results.append((out.copy(), d))
    for out, d in results[1:]:
        np.testing.assert_array_equal(out, results[0][0])
        np.testing.assert_array_equal(d, results[0][1])
    exact = np.sum((1 / (1 + np.exp(-x.astype(np.float64)))) * np.tanh(x.astype(np.float64) * 1.5 + 0.5))
    np.testing.assert_allclose(results[0][0][0], exact, rtol=1e-5)


FORK = """
import os, sys
import numpy as np
from tapecli.api import Options, run_source
source = "var x = 0.0\\ntape t:\\n    loss = sum(sigmoid(x) * tanh(x * 1.5 + 0.5))\\ng = t.gradient(loss, x)\\n"
options = Options(overrides={"x": np.linspace(-3, 3, 5000)})
ops = lambda: [r.op.name for r in run_source(source, "f.tdf", options).tapes[0].records]
print("parent", ops(), flush=True)
pid = os.fork()
if pid == 0:
    print("child", ops(), flush=True)
    os._exit(0)
print("child exit", os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_process_forked_after_a_fused_kernel_runs_fused_kernels(tmp_path):
    # GNU OpenMP aborts a forked child that starts threads again: the child's kernels are serial
    import subprocess
    import sys
    env = {**os.environ, "TAPECLI_FUSION_THRESHOLD": "1000", "TAPECLI_FUSION": "1", "NUMBA_NUM_THREADS": "2"}
    env.pop("TAPECLI_BACKEND", None)
    out = subprocess.run([sys.executable, "-c", FORK], env=env, capture_output=True, text=True, timeout=300)
    assert out.stdout.split("\n")[:3] == ["parent ['fused']", "child ['fused']", "child exit 0"], out.stdout + out.stderr


# ----------------------------------------------------------------- fallbacks

def test_small_tensors_are_not_fused():
    r = run("var x = [1.0, 2.0]\ntape t:\n    y = sum(sigmoid(x) * x)\n")
    assert ops_recorded(r) == ["sigmoid", "mul", "sum"]


def test_a_program_function_named_like_a_builtin_is_not_fused():
    source = """
        def sigmoid(v):
            return v * 0.0
        var x = 0.0
        tape t:
            y = sum(sigmoid(x) + x)
        g = t.gradient(y, x)
    """
    r = run(source, overrides={"x": _data(16)})
    assert "fused" not in ops_recorded(r)
    np.testing.assert_allclose(val(r, "g"), 1.0)


@pytest.mark.parametrize("source,error", [
    ("var x = 0.0\nvar(trainable=False) n: float64 = 0.0\ny = sum(sigmoid(x) * n)\n", TdfTypeError),
    ("var x = 0.0\nvar z = [1.0, 2.0, 3.0]\ny = sum(sigmoid(x) * z)\n", ShapeError),
])
def test_errors_are_the_unfused_ones(source, error):
    sets = {"x": _data(17), "n": _data(18, dtype=np.float64)} if "n" in source else {"x": _data(17)}
    with pytest.raises(error) as fused:
        run(source, overrides=sets)
    with pytest.raises(error) as plain:
        run(source, fused=False, overrides=sets)
    assert fused.value.message == plain.value.message and fused.value.line == plain.value.line


def test_numpy_backend_and_check_numerics_do_not_fuse(monkeypatch):
    source = "var x = 0.0\ntape t:\n    y = sum(sigmoid(x) * x)\n"
    r = run(source, overrides={"x": _data(19)}, check_numerics=True)
    assert "fused" not in ops_recorded(r)
    monkeypatch.setenv("TAPECLI_BACKEND", "numpy")
    assert "fused" not in ops_recorded(run(source, overrides={"x": _data(19)}))


def test_compile_cap_falls_back_to_unfused(monkeypatch):
    monkeypatch.setattr(fusion.plan, "MAX_COMPILES", 0)
    source = "var x = 0.0\ntape t:\n    y = sum(cos(x) * x * 3.0 - x)\ng = t.gradient(y, x)\n"
    monkeypatch.setattr(fusion.codegen, "_LOADED", {})
    r = run(source, overrides={"x": _data(20)})
    plain = run(source, fused=False, overrides={"x": _data(20)})
    if "fused" in ops_recorded(r):       # its module was already in the cache folder: no compile needed
        pytest.skip("kernel cached by an earlier test")
    close(val(r, "g"), val(plain, "g"))


# ------------------------------------------------------------- memory, CLI

def test_non_persistent_tape_releases_the_derivatives():
    r = run("var x = 0.0\ntape t:\n    y = sum(sigmoid(x) * x)\ng = t.gradient(y, x)\n",
            overrides={"x": _data(21)})
    assert ops_recorded(r) == ["fused"]
    assert r.tapes[0].saved_bytes() < 1024
    r = run("var x = 0.0\ntape t(persistent=True):\n    y = sum(sigmoid(x) * x)\ng = t.gradient(y, x)\n",
            overrides={"x": _data(21)})
    assert r.tapes[0].saved_bytes() >= 2 * N * 4          # x (for a replay) and d y / d x


def test_cli_fused_and_unfused_agree(tmp_path):
    x = _data(22, n=1_100_000)
    np.save(tmp_path / "x.npy", x)
    path = tmp_path / "f.tdf"
    path.write_text("const x = 0.0\nvar a = 1.5\ntape t:\n    loss = sum(sigmoid(x * a) * tanh(x * 1.5 + 0.5))\n"
                    "g = t.gradient(loss, a)\n")
    # a process of its own: this one's numba may have been configured before the test run's cache folder was set
    fused = cli("grad", "--json", "--set", f"x=@{tmp_path / 'x.npy'}", path, process=True)
    plain = cli("grad", "--json", "--set", f"x=@{tmp_path / 'x.npy'}", path, env={"TAPECLI_FUSION": "0"})
    assert fused.code == plain.code == 0, fused.stderr + plain.stderr
    a, b = fused.json["gradients"][0], plain.json["gradients"][0]
    assert a["name"] == b["name"] == "g"
    np.testing.assert_allclose(a["value"], b["value"], rtol=1e-4)
    # the generated kernel is a module in the cache folder, which numba caches for the next process
    from pathlib import Path
    cache = Path(os.environ["TAPECLI_CACHE_DIR"])
    assert list(cache.glob("**/tapecli_fused_*.py")) and list(cache.glob("**/tapecli_fused_*.nbi"))


def test_explain_names_the_fused_op(tmp_path):
    x = _data(23, n=1_100_000)
    np.save(tmp_path / "x.npy", x)
    path = tmp_path / "e.tdf"
    path.write_text("var x = 0.0\ntape t:\n    loss = sum(sigmoid(x) * x)\ng = t.gradient(loss, x)\n")
    res = cli("explain", "--of", "loss", "--wrt", "x", "--json", "--set", f"x=@{tmp_path / 'x.npy'}", path)
    assert res.code == 0, res.stderr
    (entry,) = res.json["explanations"]
    assert entry["connected"] and entry["chain"][0]["ops"] == ["fused"]
