"""The cuda backend (``--device cuda``) under numba's CUDA simulator: no GPU is needed.

The simulator runs ``cuda.jit`` kernels on the CPU (each thread a Python thread), so these tests use
small tensors. They compare the cuda backend's kernel table and whole programs with the CPU backend.
Where the simulator cannot stand in for a library call — cuBLAS, for matmul — the backend computes the
product with NumPy under the simulator only (``blas == "numpy-stand-in"``); the plain cuda.jit product
kernel (GPUs without CuPy) is tested on its own.
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import fast_paths

# The simulator must be chosen before numba.cuda is first imported (nothing imports it before the cuda
# backend is asked for).
os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
pytest.importorskip("numba_cuda", reason="numba-cuda is not installed (it comes with the test extra: "
                                         "pip install -e '.[test]')")

import numpy as np  # noqa: E402
import numba  # noqa: E402

numba.config.reload_config()        # numba may have been imported by an earlier test

from tapecli import kernels  # noqa: E402
from tapecli.api import Options, run, run_source  # noqa: E402
from tapecli.errors import LimitError, TdfError, UsageError  # noqa: E402
from tapecli.kernels import backends  # noqa: E402
from tapecli.kernels.numpy_kernels import KERNELS as NUMPY  # noqa: E402


@pytest.fixture(scope="module")
def gpu():
    return backends.get("cuda")


def on_gpu(gpu, name, *args, **attrs):
    out = gpu.run(name, [gpu.asarray(a) if isinstance(a, np.ndarray) else a for a in args], attrs)
    return np.asarray(out)


X = np.array([[0.5, -1.25, 2.0], [-0.0, 3.5, -2.75]])
UNARY = ["neg", "sin", "cos", "tan", "exp", "log1p", "square", "abs", "sign", "tanh", "sigmoid", "softplus",
         "relu", "elu", "leaky_relu", "erf", "round", "floor", "ceil"]


def test_the_simulator_device_is_described(gpu):
    assert gpu.describe() == {"kind": "cuda", "name": "CUDA simulator"}
    assert gpu.blas == "numpy-stand-in"       # no cuBLAS under the simulator
    # The kernels the cuda backend was built with run on the device; kernels added to the op table
    # since (sinh, lgamma, the linalg family, ...) run on the host and come back to the device.
    assert set(UNARY) <= set(gpu.table)
    assert {"add", "sub", "mul", "div", "matmul", "sum", "max", "logsumexp"} <= set(gpu.table)


def test_kernels_without_a_device_kernel_round_trip_through_the_host(gpu):
    missing = sorted(set(NUMPY) - set(gpu.table) - {"argmax", "argmin"})
    assert "sinh" in missing
    x = X.astype(np.float32)
    np.testing.assert_array_equal(on_gpu(gpu, "sinh", x), NUMPY["sinh"](x))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", UNARY)
def test_unary_kernels_match_numpy(gpu, name, dtype):
    x = X.astype(dtype)
    want = NUMPY[name](x)
    got = on_gpu(gpu, name, x)
    assert got.dtype == want.dtype and got.shape == want.shape
    # float32: the device evaluates each formula in float64 where NumPy rounds some steps to float32; where
    # the formula cancels that is a few ulp of x, not of y
    atol = 4e-7 * np.abs(x).max() if dtype == np.float32 else 1e-30
    np.testing.assert_allclose(got, want, rtol=4e-7 if dtype == np.float32 else 1e-13, atol=atol)


def test_positive_domain_kernels_match_numpy(gpu):
    x = np.abs(X) + 0.25
    for name in ("log", "sqrt", "rsqrt"):
        np.testing.assert_allclose(on_gpu(gpu, name, x), NUMPY[name](x), rtol=1e-13)
    np.testing.assert_array_equal(on_gpu(gpu, "round", np.array([0.5, 1.5, 2.5, -0.5, -1.5])),
                                  [0.0, 2.0, 2.0, -0.0, -2.0])       # half to even


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "maximum", "minimum", "pow", "less", "equal",
                                  "greater_equal", "floordiv", "mod"])
def test_binary_kernels_broadcast_as_numpy(gpu, name):
    a = np.abs(X) + 0.5
    b = np.array([1.5, 0.75, 2.0])
    for args in ((a, b), (a, 2.0), (a, a[:, :1].copy())):
        want = NUMPY[name](*args)
        got = on_gpu(gpu, name, *args)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-13)


def test_special_values_as_numpy(gpu):
    x = np.array([np.nan, np.inf, -np.inf, 1000.0, -1000.0, 0.0])
    for name in ("exp", "floor", "ceil", "round", "sign", "relu", "tanh", "sigmoid", "softplus", "abs"):
        np.testing.assert_array_equal(on_gpu(gpu, name, x), NUMPY[name](x), err_msg=name)
    with np.errstate(all="ignore"):
        for name in ("log", "sqrt", "rsqrt", "log1p"):
            y = np.array([-1.0, 0.0, -0.0, np.inf, np.nan, 4.0])
            np.testing.assert_array_equal(on_gpu(gpu, name, y), NUMPY[name](y), err_msg=name)
        a, b = np.array([1.0, -1.0, 0.0, 7.5]), np.array([0.0, 0.0, 0.0, 2.0])
        for name in ("div", "floordiv"):
            np.testing.assert_array_equal(on_gpu(gpu, name, a, b), NUMPY[name](a, b), err_msg=name)


def test_gradient_helpers_and_selection(gpu):
    g = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    x = np.array([-1.0, 0.0, 2.0, np.nan], np.float32)
    for kind in ("relu", "abs", "leaky"):
        np.testing.assert_array_equal(on_gpu(gpu, "masked_grad", g, x, kind=kind, alpha=0.3),
                                      NUMPY["masked_grad"](g, x, kind=kind, alpha=0.3))
    c = x > 0
    np.testing.assert_array_equal(on_gpu(gpu, "where", c, g, x), np.where(c, g, x))
    np.testing.assert_array_equal(on_gpu(gpu, "clip", x, -0.5, 1.0), NUMPY["clip"](x, -0.5, 1.0))
    np.testing.assert_array_equal(on_gpu(gpu, "maximum", x, 0.0), np.maximum(x, 0.0))     # nan propagates
    out = on_gpu(gpu, "cast", x[:3], dtype=np.dtype(np.int32))
    assert out.dtype == np.int32 and out.tolist() == [-1, 0, 2]


@pytest.mark.parametrize("kind", ["sum", "mean", "max", "min", "prod"])
@pytest.mark.parametrize("axis,keepdims", [(None, False), (0, False), (1, True), ((0, 1), True), (-1, False)])
def test_reductions_match_numpy(gpu, kind, axis, keepdims):
    x = np.arange(1.0, 13.0).reshape(3, 4) / 4.0
    want = NUMPY[kind](x, axis=axis, keepdims=keepdims)
    got = on_gpu(gpu, kind, x, axis=axis, keepdims=keepdims)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-14)


def test_sum_is_a_tree_per_block_with_a_fixed_order(gpu):
    # float32 values whose sum depends on the order of the additions: the result is the block's tree
    # (each thread adds x[t], x[t + B], ... in order, then halves), the same on every run
    from tapecli.kernels.cuda import launch
    rng = np.random.default_rng(7)
    x = (rng.standard_normal(100) * 10.0 ** rng.integers(-4, 5, 100)).astype(np.float32)
    B = launch.BLOCK
    acc = [np.float32(0)] * B
    for t in range(B):
        for j in range(t, x.size, B):
            acc[t] = np.float32(acc[t] + x[j])
    s = B // 2
    while s:
        for t in range(s):
            acc[t] = np.float32(acc[t] + acc[t + s])
        s //= 2
    got = [on_gpu(gpu, "sum", x) for _ in range(2)]
    assert got[0].tobytes() == got[1].tobytes() == np.float32(acc[0]).tobytes()


def test_softmax_family_matches_numpy(gpu):
    x = np.array([[1.0, 2.0, 3.0], [1000.0, 0.0, -1000.0]], np.float32)
    for name, attrs in (("softmax", {"axis": -1}), ("log_softmax", {"axis": 1}), ("logsumexp", {"axis": 1}),
                        ("logsumexp", {"axis": None, "keepdims": True})):
        want = NUMPY[name](x, **attrs)
        got = on_gpu(gpu, name, x, **attrs)
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=2e-6)


def test_shape_ops_and_indexing_match_numpy(gpu):
    x = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(on_gpu(gpu, "transpose", x, perm=(2, 0, 1)), x.transpose(2, 0, 1))
    np.testing.assert_array_equal(on_gpu(gpu, "reshape", x, shape=(4, -1)), x.reshape(4, -1))
    np.testing.assert_array_equal(on_gpu(gpu, "broadcast_to", x[:1, :, :1], shape=(2, 3, 4)),
                                  np.broadcast_to(x[:1, :, :1], (2, 3, 4)))
    for index in ((1,), (slice(None), 2), (Ellipsis, slice(None, None, -2)), (np.array([1, 0, 1]),), (0, 1, 3)):
        want = NUMPY["getitem"](x, index)
        got = on_gpu(gpu, "getitem", x, index=index)
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(on_gpu(gpu, "concat", x, x[:, :1], axis=1), np.concatenate([x, x[:, :1]], axis=1))
    np.testing.assert_array_equal(on_gpu(gpu, "stack", x[0], x[1], axis=-1), np.stack([x[0], x[1]], axis=-1))


def test_index_grad_sums_repeated_indices_without_atomics(gpu):
    g = np.array([1.0, 2.0, 4.0, 8.0])
    index = (np.array([2, 0, 2, 2]),)
    np.testing.assert_array_equal(on_gpu(gpu, "index_grad", g, (3,), index=index), [2.0, 0.0, 13.0])


def test_matmul_stand_in_and_kernel_match_numpy(gpu):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((2, 3, 4))
    b = rng.standard_normal((4, 5))
    v = rng.standard_normal(4)
    for x, y in ((a, b), (a[0], v), (v, b), (a, a.transpose(0, 2, 1))):
        np.testing.assert_allclose(on_gpu(gpu, "matmul", x, y), np.matmul(x, y), rtol=1e-12)
    da, db = gpu.asarray(a), gpu.asarray(b.reshape(1, 4, 5))
    out = gpu.matmul_kernel(da, db, (2,), 3, 4, 5, np.dtype(np.float64))      # the cuda.jit product
    np.testing.assert_allclose(np.asarray(out), a @ b, rtol=1e-12)


def test_out_of_device_memory_is_a_limit_error(gpu, monkeypatch):
    from tapecli.kernels.cuda import table

    def refuse(n, dtype):
        raise RuntimeError("[CUDA_ERROR_OUT_OF_MEMORY] out of memory")
    monkeypatch.setattr(table.cuda, "device_array", refuse)
    with pytest.raises(LimitError, match=r"shape \[1000, 1000\] \(8,000,000 bytes\)"):
        gpu.alloc((1000, 1000), np.float64)


# -------------------------------------------------------------- whole programs

CHAIN = """
var x = [0.5, -1.0, 2.0]
tape t(persistent=True):
    y = tanh(x) * sigmoid(x) + exp(-square(x)) / (1.0 + softplus(x))
    s = reduce_sum(y * y)
g = t.gradient(s, x)
j = t.jacobian(y, x)
"""

MLP = """
var w1 = [[0.1, -0.2, 0.3], [0.4, 0.5, -0.6]]
var b1 = [0.01, -0.02, 0.03]
var w2 = [[0.7], [-0.8], [0.9]]
const xs = [[1.0, 2.0], [-1.0, 0.5], [0.25, -0.75], [2.0, 1.0]]
const ys = [[1.0], [0.0], [0.5], [2.0]]
tape t:
    h = relu(xs @ w1 + b1)
    p = h @ w2
    loss = reduce_mean(square(p - ys))
grads = t.gradient(loss, [w1, b1, w2])
"""

SOFTMAX = """
var z = [[1.0, 2.0, 0.5], [-1.0, 0.0, 3.0]]
tape t(persistent=True):
    a = reduce_sum(softmax(z) * [[1.0, 2.0, 3.0]])
    b = reduce_sum(log_softmax(z, axis=0))
    c = reduce_sum(reduce_logsumexp(z, axis=1))
    d = reduce_max(z) + reduce_sum(reduce_max(z, axis=0))
ga = t.gradient(a, z)
gb = t.gradient(b, z)
gc = t.gradient(c, z)
gd = t.gradient(d, z)
"""

NESTED = """
var x = [0.3, -0.7]
tape outer:
    tape inner:
        y = reduce_sum(sin(x) * x * x + exp(x[0] * x[1]))
    g = inner.gradient(y, x)
h = outer.jacobian(g, x)
"""


BUILTINS = """var x = [[1.0, -2.0, 3.0], [0.5, 0.25, -1.5]]
var w = [0.3, -0.1, 0.2]
layer = Dense(2, activation="gelu", seed=3)
tape t(persistent=True):
    a = concat([x, x * 2.0], axis=0)
    b = stack([w, w * w], axis=1)
    c = expand_dims(w, 0) * x
    d = squeeze(reshape(c, [1, 6]))
    e = norm(x) + sum(clip_by_norm(x, 1.0)) + sum(elu(x)) + sum(cast(x > 0.0, float32) * x)
    f = x[1, 1:] + x[:, 0][0] + sum(where(x > 0.0, x, 0.0 * x))
    i = argmax(w, 0)
    k = w[i] * 2.0
    l = sum(layer(x)) + sum(a) + sum(b) + sum(d) + e + sum(f) + k + prod(w) + min(x) + mean(transpose(x) @ x)
    m = sum(x ** 2.0 // 1.0) + sum(x % 0.7) + sum(sign(x) * abs(x)) + sum(floor(x) + ceil(x) + round(x))
g = t.gradient(l, [x, w])
h = t.gradient(m, x)
j = t.jacobian(f, x)
z = zeros([2, 3]) + ones([2, 3]) + eye(2, 3) + fill([2, 3], 2.0)
r = range(3)
print(l, shape(g[0]), size(x), len(w))
if l > 0.0:
    print("positive")
expect allclose(g[1], g[1])
"""


def _same(cpu, dev):
    assert type(cpu) is type(dev)
    if isinstance(cpu, dict):
        assert cpu.keys() == dev.keys()
        for k in cpu:
            _same(cpu[k], dev[k])
    elif isinstance(cpu, list):
        assert len(cpu) == len(dev)
        for a, b in zip(cpu, dev):
            _same(a, b)
    elif isinstance(cpu, np.ndarray):
        assert cpu.dtype == dev.dtype and cpu.shape == dev.shape
        np.testing.assert_allclose(dev, cpu, rtol=1e-5, atol=1e-7)
    else:
        assert cpu == dev


@pytest.mark.parametrize("source,dtype", [(s, d) for s in (CHAIN, MLP, SOFTMAX, NESTED) for d in ("float32", "float64")]
                         + [(BUILTINS, "float32")])          # BUILTINS casts to float32
def test_programs_on_cuda_equal_the_cpu(source, dtype):
    cpu = run(source, dtype=dtype)
    dev = run(source, dtype=dtype, device="cuda")
    _same(cpu.values, dev.values)
    _same(cpu.gradients, dev.gradients)
    _same(cpu.jacobians, dev.jacobians)
    assert dev.output == cpu.output and dev.expectations == cpu.expectations
    assert dev.run.context.device.describe()["kind"] == "cuda"


def test_hessian_with_of_wrt_equals_the_cpu():
    src = "var x = [0.5, 1.5, -0.25]\ny = reduce_sum(x * x * sin(x)) + reduce_logsumexp(x)\n"
    cpu = run(src, of="y", wrt=["x"], dtype="float64")
    dev = run(src, of="y", wrt=["x"], dtype="float64", device="cuda")
    _same(cpu.gradients, dev.gradients)


def test_tensors_stay_on_the_device_until_read():
    from tapecli.kernels.cuda.array import HOST_COPIES, DeviceArray
    before = HOST_COPIES.count
    result = run_source(CHAIN, options=Options(device="cuda"))
    # a whole gradient and jacobian without a copy back (the number `tapecli check` compares with finite
    # differences, the request's objective, reads the target only when asked)
    assert HOST_COPIES.count == before
    g = result.scope.lookup("g")
    assert isinstance(g.value, DeviceArray)
    np.asarray(g.value)
    assert HOST_COPIES.count == before + 1              # reading a value is a copy
    assert result.requests[0].objective is not None and HOST_COPIES.count == before + 2


def test_host_values_mix_with_device_tensors():
    src = "var x = [1.0, 2.0]\nconst c = 0.0\ntape t:\n    y = reduce_sum(x * c + x * x)\ng = t.gradient(y, x)\n"
    sets = {"c": np.array([3.0, -1.0])}
    cpu = run(src, sets=sets)
    dev = run(src, sets=sets, device="cuda")
    _same(cpu.gradients, dev.gradients)
    np.testing.assert_allclose(dev.gradients[0]["value"], [3.0 + 2.0, -1.0 + 4.0])


def test_printing_control_flow_and_expect_read_the_host():
    src = ("var x = 2.0\ntape t:\n    if x > 1.0:\n        y = x * x\n    else:\n        y = x\n"
           "g = t.gradient(y, x)\nprint(g)\nexpect g == 4.0\n")
    dev = run(src, device="cuda")
    assert dev.output == run(src).output
    assert all(e["ok"] for e in dev.expectations)


def test_json_documents_name_the_device():
    from conftest import cli
    env = {"NUMBA_ENABLE_CUDASIM": "1"}
    src = "var x = 3.0\ntape t:\n    y = x * x\ng = t.gradient(y, x)\n"
    docs = {}
    for device in ("cpu", "cuda"):
        proc = cli("grad", "-", "--json", "--device", device, input=src, env=env)
        assert proc.code == 0, proc.stderr
        docs[device] = proc.json
    assert docs["cuda"]["device"] == {"kind": "cuda", "name": "CUDA simulator"}
    assert docs["cpu"]["device"] == {"kind": "cpu"}
    assert docs["cpu"]["gradients"] == docs["cuda"]["gradients"]


def test_no_gpu_is_one_clean_usage_line():
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    proc = subprocess.run([sys.executable, "-m", "tapecli", "run", "--device", "cuda", "-"], input="x = 1.0\n",
                          capture_output=True, text=True, env=env)
    if proc.returncode == 0:
        pytest.skip("this machine has a usable GPU")
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr
    assert lines[0].startswith("tapecli run: --device cuda: ") and ("driver" in lines[0] or "GPU" in lines[0])


def test_a_missing_extra_says_what_to_install(monkeypatch):
    import importlib.util

    from tapecli.kernels import cuda as cuda_pkg
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "numba_cuda" else real(name, *a))
    assert cuda_pkg.unavailable() == ("the cuda extra is not installed (numba-cuda is missing): "
                                      "pip install 'tapecli[cuda]'")


def test_an_unknown_device_is_a_usage_error():
    with pytest.raises(UsageError):
        run("x = 1.0\n", device="tpu")


def test_the_device_is_read_from_the_run_context():
    from tapecli.runtime.context import run_context
    gpu = backends.get("cuda")
    with run_context():
        with kernels.quiet():
            assert kernels.device() is None
    with run_context(device=gpu):
        with kernels.quiet():
            assert kernels.device() is gpu and kernels.numba_forced()     # the small NumPy paths are off
            assert isinstance(kernels.zeros((2,), np.float32), type(gpu.asarray(np.zeros(1))))
        assert kernels.device() is None


def test_python_numbers_take_numpy_s_weak_dtype(gpu):
    c = np.array([True, False, True])
    x = np.array([1, 2, 3], np.int32)
    np.testing.assert_array_equal(on_gpu(gpu, "where", c, 0.5, 2.25), np.where(c, 0.5, 2.25))
    got = on_gpu(gpu, "mul", x, 0.5)
    assert got.dtype == np.float64 and got.tolist() == [0.5, 1.0, 1.5]


def test_large_index_arrays_are_not_mistaken_for_each_other(gpu):
    x = np.arange(3000.0)
    i = np.arange(2000)
    j = i.copy()
    j[1000] = 7                 # same printed form as i (NumPy elides the middle)
    np.testing.assert_array_equal(on_gpu(gpu, "getitem", x, index=(i,)), x[i])
    np.testing.assert_array_equal(on_gpu(gpu, "getitem", x, index=(j,)), x[j])


# ------------------------------------------------------------ fused kernels

FUSED_EXPRESSIONS = [
    "sum(sigmoid(x) * tanh(x * 1.5 + 0.5))",
    "mean((x - y) ** 2)",
    "sum(relu(x) * abs(y) + leaky_relu(x, 0.1) - leaky_relu(y))",
    "sum(maximum(x, y) * minimum(x, 0.5) / (square(y) + 1.0))",
    "sum(exp(-x * x) + softplus(y) - x ** 3 + sin(x) * cos(y))",
    "sum(sqrt(p) * log(p) + rsqrt(p) + p ** 0.5 + pow(p, 1.7))",
]


@pytest.fixture
def fuse_small(monkeypatch):
    from tapecli import fusion
    monkeypatch.setattr(fusion.plan, "THRESHOLD", 8)      # fuse these 40-element expressions
    monkeypatch.delenv("TAPECLI_BACKEND", raising=False)
    monkeypatch.setenv("TAPECLI_FUSION", "1")


@fast_paths
@pytest.mark.parametrize("expr", FUSED_EXPRESSIONS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fused_kernels_on_cuda_equal_the_cpu(fuse_small, expr, dtype):
    # the same per-op statements as the CPU's fused kernel, as a cuda.jit kernel; the CPU runs the same
    # program fused (Numba) and the device must match it and the unfused ops
    rng = np.random.default_rng(3)
    sets = {"x": rng.normal(size=40) * 2, "y": rng.normal(size=40), "p": np.abs(rng.normal(size=40)) + 0.1}
    src = (f"var x = 0.0\nvar y = 0.0\nvar p = 0.0\ntape t(persistent=True):\n    loss = {expr}\n"
           "g = t.gradient(loss, [x, y, p])\n")
    dev = run_source(src, options=Options(device="cuda", overrides=sets, dtype=dtype))
    cpu = run_source(src, options=Options(overrides=sets, dtype=dtype))
    assert [r.op.name for r in dev.tapes[0].records] == ["fused"]
    rtol = 2e-5 if dtype == "float32" else 1e-12
    for name in ("loss", "g"):
        a, b = dev.scope.vars[name], cpu.scope.vars[name]
        for u, v in zip(a if isinstance(a, list) else [a], b if isinstance(b, list) else [b]):
            assert (u is None) == (v is None)
            if u is not None:
                np.testing.assert_allclose(np.asarray(u.value), np.asarray(v.value), rtol=rtol, atol=rtol / 10)


@fast_paths
def test_fused_second_order_on_cuda_equals_the_cpu(fuse_small):
    rng = np.random.default_rng(4)
    sets = {"x": rng.normal(size=16), "w": rng.normal(size=16)}
    src = ("var x = 0.0\nconst w = 0.0\ntape outer:\n    tape inner:\n        y = sum(sigmoid(x) * tanh(x * w + 0.5))\n"
           "    g = inner.gradient(y, x)\n    s = sum(g * w)\nh = outer.gradient(s, [x, w])\n")
    dev = run(src, sets=sets, device="cuda", dtype="float64")
    cpu = run(src, sets=sets, dtype="float64")
    assert "fused" in [r.op.name for r in dev.run.tapes[1].records]
    _same(cpu.values, dev.values)


# The special values of every input position: the simulator runs a fused kernel's statements as Python, whose
# math raises where the CPU's fused kernel (Numba, NumPy's error model) and a GPU give inf or nan.
SPECIAL = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 1e30, -1e30, 88.8, -104.0, 1e-40, 3.0, -2.0])


@fast_paths
@pytest.mark.parametrize("expr", FUSED_EXPRESSIONS + ["sigmoid(x) * tanh(x * 1.5) + exp(y) * log(p) - sqrt(y) / p"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fused_kernels_on_cuda_give_the_cpu_s_inf_and_nan(fuse_small, expr, dtype):
    sets = {"x": SPECIAL, "y": np.roll(SPECIAL, 5), "p": np.roll(SPECIAL, 7)}
    src = (f"var x = 0.0\nvar y = 0.0\nvar p = 0.0\ntape t(persistent=True):\n    loss = {expr}\n"
           "g = t.gradient(loss, [x, y, p])\n")
    dev = run_source(src, options=Options(device="cuda", overrides=sets, dtype=dtype))
    cpu = run_source(src, options=Options(overrides=sets, dtype=dtype))
    assert [r.op.name for r in dev.tapes[0].records] == [r.op.name for r in cpu.tapes[0].records] == ["fused"]
    for name in ("loss", "g"):
        a, b = dev.scope.vars[name], cpu.scope.vars[name]
        for u, v in zip(a if isinstance(a, list) else [a], b if isinstance(b, list) else [b]):
            assert (u is None) == (v is None)
            if u is None:
                continue
            u, v = np.asarray(u.value), np.asarray(v.value)
            finite = np.isfinite(v)
            np.testing.assert_array_equal(np.isfinite(u), finite, err_msg=name)
            np.testing.assert_array_equal(u[~finite], v[~finite], err_msg=name)     # the same infinities and NaNs


def test_check_numerics_on_cuda_stops_where_the_cpu_does_in_a_fusable_expression(fuse_small):
    # --check-numerics runs such an expression op by op, on the device too: every op's result is checked
    src = "var x = 0.0\ntape t:\n    y = sum(log(x) * x + sqrt(x))\ng = t.gradient(y, x)\n"
    errors = []
    for device in ("cpu", "cuda"):
        with pytest.raises(TdfError) as e:
            run_source(src, options=Options(device=device, overrides={"x": np.linspace(-1.0, 1.0, 40)},
                                            check_numerics=True))
        errors.append((e.value.kind, e.value.line, e.value.message))
    assert errors[0] == errors[1] and errors[0][:2] == ("ValueError", 3) and "log at line 3 gave NaN" in errors[0][2]


def test_check_takes_the_device_as_the_other_commands_do(tmp_path):
    from conftest import cli
    program = tmp_path / "e.tdf"
    program.write_text("var x = 3.0\ntape t:\n    y = x * x\ng = t.gradient(y, x)\nexpect g == 6.0\nexpect y == 10.0\n")
    docs = {}
    for device in ("cpu", "cuda"):
        r = cli("check", "--json", "--device", device, program, env={"NUMBA_ENABLE_CUDASIM": "1"})
        assert r.code == 1, r.stderr
        docs[device] = r.json
    assert (docs["cuda"]["passed"], docs["cuda"]["failed"]) == (docs["cpu"]["passed"], docs["cpu"]["failed"]) == (1, 1)
    r = cli("check", "--device", "tpu", program)
    assert r.code == 2 and "--device must be cpu or cuda" in r.stderr
