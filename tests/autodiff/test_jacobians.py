"""Vectorised jacobians: one backward pass over a batch of one-hot cotangents (reverse mode) or one
forward pass over a batch of one-hot tangents (forward mode), against one backward pass per target
element (the reference, as tapecli computed jacobians before).

Every row of the op table (test_op_gradients.CASES), random programs, nested tapes that record a
jacobian, the fallbacks (custom gradients, indexes NumPy cannot batch), batching in chunks, the
None/zeros semantics, ``tapecli jacobian --mode`` and ``tapecli hessian``.
"""
from __future__ import annotations

import json

import numpy as np
import pytest

from conftest import open_tape, cli, run_program, value
from autodiff.test_op_gradients import CASES, _float_idx

from tapecli.autodiff.backward import backward
from tapecli.autodiff import jacobians
from tapecli import ops
from tapecli.errors import TapeError
from tapecli.autodiff.gradients import gradient
from tapecli.autodiff.jacobians import jacobian_in_mode
from tapecli.runtime.tape import Tape
from tapecli.runtime.context import current
from tapecli.runtime.values import Tensor

F64 = np.float64
RTOL, ATOL = 1e-10, 1e-12


pytestmark = pytest.mark.usefixtures("float64_state")
_tape = open_tape


def reference(tape, target, leaves):
    """One backward pass per target element, rows stacked: the per-row jacobian."""
    out = []
    rows = [[] for _ in leaves]
    for i in range(target.size):
        onehot = np.zeros(target.size, dtype=target.dtype)
        onehot[i] = 1
        grads = backward(tape, [target], [Tensor(onehot.reshape(target.shape))], [x.id for x in leaves],
                              release=False)
        for k, leaf in enumerate(leaves):
            rows[k].append(grads.get(leaf.id))
    for leaf, row in zip(leaves, rows):
        if target.size == 0 or all(g is None for g in row):
            out.append(None)
        else:
            full = [np.zeros(leaf.shape) if g is None else g.value for g in row]
            out.append(np.stack(full).reshape(target.shape + leaf.shape))
    return out


def assert_same(got, want, what=""):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if w is None:
            assert g is None, f"{what}: expected None"
            continue
        assert g is not None, f"{what}: got None"
        assert g.shape == w.shape, f"{what}: shape {g.shape} != {w.shape}"
        np.testing.assert_allclose(g.value, w, rtol=RTOL, atol=ATOL, err_msg=what)


def _modes_agree(tape, y, leaves, what):
    want = reference(tape, y, leaves)
    for mode in ("rev", "fwd", "auto"):
        _, got, _ = jacobian_in_mode(tape, y, leaves, mode=mode)
        assert_same(got, want, f"{what} [{mode}]")


# ------------------------------------------------------------- the op table

@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_every_op_in_both_modes(case):
    arrays, _ = case.sample()
    xs = [Tensor(a) for a in arrays]
    with _tape(xs) as t:
        y = case.fn(*xs)
    _modes_agree(t, y, [xs[i] for i in _float_idx(case)], case.id)


@pytest.mark.parametrize("backend", ["numpy", "numba"])
@pytest.mark.parametrize("case", [c for c in CASES if c.id in (
    "mul_bcast_3x1_1x4", "sigmoid", "relu", "where_bcast", "sum_axes_0_2", "max_axis0", "softmax_3d_axis1",
    "matmul_2d_1d", "matmul_batched_bcast", "getitem_int_array_2d_repeats", "stack_axis1", "prod_one_zero")],
    ids=lambda c: c.id)
def test_both_backends(case, backend, monkeypatch):
    monkeypatch.setenv("TAPECLI_BACKEND", backend)
    test_every_op_in_both_modes(case)


# ---------------------------------------------------------- random programs

def _random_program(seed):
    """A random chain of ops over two watched inputs; returns (inputs, build(*inputs) -> target)."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(3, 4))
    w = rng.normal(size=(4, 3))
    steps = []
    choices = [
        lambda h, x, w: ops.sin(h),
        lambda h, x, w: ops.tanh(h),
        lambda h, x, w: ops.mul(h, h),
        lambda h, x, w: ops.add(h, 0.5),
        lambda h, x, w: ops.matmul(h, w) if h.shape[-1] == 4 else ops.matmul(w, h) if h.shape[0] == 3 else h,
        lambda h, x, w: ops.transpose(h),
        lambda h, x, w: ops.reshape(h, (h.size,)),
        lambda h, x, w: ops.softmax(h, axis=0) if h.ndim else h,
        lambda h, x, w: ops.log_softmax(h) if h.ndim else h,
        lambda h, x, w: ops.reduce_sum(h, axis=0, keepdims=True) if h.ndim else h,
        lambda h, x, w: ops.getitem(h, (slice(None, None, -1),)) if h.ndim else h,
        lambda h, x, w: ops.concat([h, ops.sin(h)], axis=-1) if h.ndim else h,
        lambda h, x, w: ops.stack([h, h], axis=-1) if h.ndim < 3 else h,
        lambda h, x, w: ops.where(ops.greater(h, 0.0), h, ops.mul(h, 0.1)),
        lambda h, x, w: ops.maximum(h, ops.cos(h)),
        lambda h, x, w: ops.add(h, ops.reduce_sum(x)),
        lambda h, x, w: ops.div(h, ops.add(ops.square(h), 1.0)),
        lambda h, x, w: ops.reduce_logsumexp(h, axis=-1) if h.ndim else h,
        lambda h, x, w: ops.exp(ops.mul(h, 0.3)),
        lambda h, x, w: ops.broadcast_to(h, (2,) + h.shape),
    ]
    for _ in range(rng.integers(2, 7)):
        steps.append(choices[rng.integers(len(choices))])

    def build(xt, wt):
        h = xt
        for step in steps:
            h = step(h, xt, wt)
            if h.size > 400:
                h = ops.reduce_sum(h, axis=0)
        return ops.mul(h, ops.reduce_sum(wt))
    return [x, w], build


@pytest.mark.parametrize("seed", range(40))
def test_random_programs(seed):
    arrays, build = _random_program(seed)
    xs = [Tensor(a) for a in arrays]
    with _tape(xs) as t:
        y = build(*xs)
    _modes_agree(t, y, xs, f"seed {seed}")


@pytest.mark.parametrize("seed", range(8))
def test_random_programs_float32(seed):
    arrays, build = _random_program(seed)
    xs = [Tensor(a.astype(np.float32)) for a in arrays]
    with _tape(xs) as t:
        y = build(*xs)
    want = reference(t, y, xs)
    for mode in ("rev", "fwd"):
        _, got, _ = jacobian_in_mode(t, y, xs, mode=mode)
        for g, w in zip(got, want):
            assert (g is None) == (w is None)
            if w is not None:
                assert g.dtype == np.float32
                np.testing.assert_allclose(g.value, w, rtol=1e-4, atol=1e-5)


# ------------------------------------------------------------ nested tapes

def _second(mode, monkeypatch=None):
    """The gradient of sum(J * W) where J = jacobian(sin(M @ x) * x, x) was taken inside an outer tape."""
    rng = np.random.default_rng(3)
    M = Tensor(rng.normal(size=(4, 3)))
    x = Tensor(rng.normal(size=3))
    W = Tensor(rng.normal(size=(4, 3)))
    with _tape([x], "outer") as outer:
        with _tape([x], "inner") as inner:
            y = ops.mul(ops.sin(ops.matmul(M, ops.reshape(x, (3,)))), ops.reduce_sum(x))
        _, (j,), _ = jacobian_in_mode(inner, y, [x], mode=mode)
        s = ops.reduce_sum(ops.mul(j, W))
    _, (g,), _ = gradient(outer, s, [x])
    return j.value, g.value


def test_nested_jacobian_is_differentiable(monkeypatch):
    rows = None
    with monkeypatch.context() as m:
        m.setattr(ops.Op, "can_batch", lambda self, rec: False)    # the per-row path
        rows = _second("rev")
    for mode in ("rev", "fwd", "auto"):
        j, g = _second(mode)
        np.testing.assert_allclose(j, rows[0], rtol=RTOL, atol=ATOL)
        np.testing.assert_allclose(g, rows[1], rtol=1e-9, atol=1e-10, err_msg=mode)


def test_nested_jacobian_against_finite_differences():
    _, g = _second("auto")
    rng = np.random.default_rng(3)
    M = rng.normal(size=(4, 3))
    x = rng.normal(size=3)
    W = rng.normal(size=(4, 3))

    def s(x):
        u = M @ x
        j = (np.cos(u) * x.sum())[:, None] * M + np.sin(u)[:, None]
        return float(np.sum(j * W))
    eps = 1e-6
    fd = np.array([(s(x + eps * e) - s(x - eps * e)) / (2 * eps) for e in np.eye(3)])
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)


def test_jacobian_in_program_is_differentiable():
    source = """
        var x = [0.3, -1.2, 0.8]
        const M = [[1.0, 2.0, 0.5], [0.0, -1.0, 2.0]]
        tape outer:
            tape inner:
                y = sin(M @ x) * x[0]
            j = inner.jacobian(y, x)
            s = sum(j * j)
        g = outer.gradient(s, x)
    """
    got = {mode: value(run_program(source, jacobian_mode=mode), "g") for mode in ("rev", "fwd", "auto")}
    np.testing.assert_allclose(got["rev"], got["fwd"], rtol=1e-5)
    np.testing.assert_allclose(got["rev"], got["auto"], rtol=1e-5)


# ----------------------------------------------------------------- fallbacks

def test_custom_gradient_on_the_path_falls_back_to_rows():
    source = """
        @custom_gradient
        def clip_grad(y):
            def backward(dy):
                return clip_by_norm(dy, 0.5)
            return y, backward
        var x = [1.0, 2.0, 3.0]
        tape t:
            y = clip_grad(x * x)
        j = t.jacobian(y, x)
    """
    # Each row's cotangent is clipped to norm 0.5 on its own (2x * 0.5); one batched pass would clip
    # the whole batch of one-hot rows at once (norm sqrt(3)).
    want = np.diag([1.0, 2.0, 3.0])
    for mode in ("rev", "fwd", "auto"):
        np.testing.assert_allclose(value(run_program(source, jacobian_mode=mode), "j"), want, rtol=1e-6)


def test_index_numpy_cannot_batch_falls_back():
    x = Tensor(np.arange(24.0).reshape(2, 3, 4) / 10)
    index = (np.array([0, 1, 1]), slice(None), np.array([3, 0, 2]))     # advanced indexes apart
    assert not ops.index_batchable(index)
    with _tape([x]) as t:
        y = ops.sin(ops.getitem(x, index))
    _modes_agree(t, y, [x], "non-adjacent advanced index")


def test_batches_in_chunks(monkeypatch):
    monkeypatch.setattr(jacobians, "CHUNK_ELEMENTS", 7)
    rng = np.random.default_rng(5)
    x = Tensor(rng.normal(size=(3, 4)))
    w = Tensor(rng.normal(size=(4, 5)))
    with _tape([x, w]) as t:
        y = ops.tanh(ops.matmul(x, w))
    _modes_agree(t, y, [x, w], "chunks")


# ---------------------------------------------------------------- semantics

def test_none_zero_and_identity_semantics():
    a = Tensor(np.array([1.0, 2.0]))
    b = Tensor(np.array([3.0, 4.0, 5.0]))
    c = Tensor(np.array([1, 2], dtype=np.int32))
    with _tape([a]) as t:
        y = ops.sin(a)
    for mode in ("rev", "fwd", "auto"):
        _, (ja, jb, jc, jy), _ = jacobian_in_mode(t, y, [a, b, c, y], mode=mode)
        np.testing.assert_allclose(ja.value, np.diag(np.cos([1.0, 2.0])))
        assert jb is None and jc is None                # not watched; integer
        np.testing.assert_array_equal(jy.value, np.eye(2))   # the target itself
        _, (jb0,), _ = jacobian_in_mode(t, y, [b], "zero", mode=mode)
        np.testing.assert_array_equal(jb0.value, np.zeros((2, 3)))


def test_auto_picks_the_cheaper_mode():
    x = Tensor(np.ones(3))
    big = Tensor(np.ones(30))
    with _tape([x, big]) as t:
        tall = ops.mul(ops.reshape(ops.broadcast_to(x, (10, 3)), (30,)), 2.0)     # 30 outputs, 3 inputs
        wide = ops.reduce_sum(ops.sin(big), axis=0, keepdims=True)                # 1 output, 30 inputs
        M = Tensor(np.ones((3, 3)))
        square = ops.sin(ops.matmul(M, x))                                         # 3 x 3, matmul at x
    used = lambda y, src: jacobians._toward(t.path([src.id])[0], y.id)         # noqa: E731
    assert jacobians._choose_mode("auto", tall, [x], used(tall, x)) == "fwd"
    assert jacobians._choose_mode("auto", wide, [big], used(wide, big)) == "rev"
    assert jacobians._choose_mode("auto", square, [x], used(square, x)) == "fwd"
    assert jacobians._choose_mode("rev", tall, [x], used(tall, x)) == "rev"


def test_non_persistent_tape_answers_once_and_releases():
    x = Tensor(np.linspace(0.1, 1.0, 300))
    with _tape([x], persistent=False) as t:
        y = ops.exp(ops.sin(x))
    assert t.saved_bytes() > 0
    _, (j,), _ = jacobian_in_mode(t, y, [x], line=4, mode="auto")
    np.testing.assert_allclose(j.value, np.diag(np.exp(np.sin(x.value)) * np.cos(x.value)))
    assert t.saved_bytes() < 1024
    with pytest.raises(TapeError):
        jacobian_in_mode(t, y, [x], line=5)


def test_batch_jacobian_agrees_across_modes():
    source = """
        var x = [[1.0, 2.0], [0.5, -1.0], [2.0, 0.1]]
        const w = [[1.0, -1.0, 0.5], [0.2, 0.3, 0.4]]
        tape t:
            y = tanh(x @ w)
        bj = t.batch_jacobian(y, x)
    """
    got = {mode: np.array(value(run_program(source, jacobian_mode=mode), "bj")) for mode in ("rev", "fwd")}
    assert got["rev"].shape == (3, 3, 2)
    np.testing.assert_allclose(got["rev"], got["fwd"], rtol=1e-6)


# -------------------------------------------------------------------- the CLI

PROGRAM = """var x = [1.0, 2.0, 0.5]
const a = [[1.0, 2.0, 0.0], [0.5, -1.0, 3.0]]
tape t:
    y = sin(a @ x) * 2.0
j = t.jacobian(y, x)
loss = sum(y * y) + sum(x ** 3)
"""


def _hessian_of_program(x):
    a = np.array([[1.0, 2, 0], [0.5, -1, 3]])
    u = a @ x
    return 8 * sum(np.outer(a[i], a[i]) * np.cos(2 * u[i]) for i in range(2)) + np.diag(6 * x)


def test_cli_jacobian_modes(tmp_path):
    path = tmp_path / "j.tdf"
    path.write_text(PROGRAM)
    docs = [cli("jacobian", "--json", "--mode", mode, path).json["jacobians"] for mode in ("auto", "rev", "fwd")]
    for doc in docs[1:]:
        assert [e["name"] for e in doc] == [e["name"] for e in docs[0]]
        np.testing.assert_allclose(doc[0]["value"], docs[0][0]["value"], rtol=1e-6)
    implicit = cli("jacobian", "--json", "--mode", "fwd", "--of", "y", "--wrt", "x", path).json["jacobians"]
    np.testing.assert_allclose(implicit[0]["value"], docs[0][0]["value"], rtol=1e-6)
    bad = cli("jacobian", "--mode", "sideways", path)
    assert bad.code == 2 and "--mode" in bad.stderr


def test_cli_hessian(tmp_path):
    path = tmp_path / "h.tdf"
    path.write_text(PROGRAM)
    for mode in ("auto", "rev", "fwd"):
        res = cli("hessian", "--json", "--of", "loss", "--wrt", "x", "--mode", mode, path)
        assert res.code == 0, res.stderr
        (entry,) = res.json["hessians"]
        assert entry["name"] == "d2(loss)/d(x)2" and entry["shape"] == [3, 3] and entry["dtype"] == "float32"
        np.testing.assert_allclose(entry["value"], _hessian_of_program(np.array([1.0, 2, 0.5])), rtol=2e-5,
                                   atol=1e-4)
    assert cli("hessian", path).code == 2                       # --of is required
    table = cli("hessian", "--of", "loss", "--wrt", "x", "--no-color", path)
    assert table.code == 0 and "hessians of" in table.stdout and "d2(loss)/" in table.stdout


def test_hessian_of_a_linear_target_is_none_or_zeros(tmp_path):
    path = tmp_path / "lin.tdf"
    path.write_text("var x = [1.0, 2.0]\nloss = sum(x * 3.0)\n")
    (entry,) = cli("hessian", "--json", "--of", "loss", "--wrt", "x", path).json["hessians"]
    assert entry["value"] is None and entry["why"]
    (entry,) = cli("hessian", "--json", "--of", "loss", "--wrt", "x", "--unconnected", "zero",
                   path).json["hessians"]
    assert entry["value"] == [[0.0, 0.0], [0.0, 0.0]]


def test_hessian_function_against_finite_differences():
    rng = np.random.default_rng(11)
    w0 = rng.normal(size=(3, 2))
    xb = Tensor(rng.normal(size=(4, 3)))

    def loss_value(w):
        return float(np.mean(np.tanh(xb.value @ w) ** 2))

    w = Tensor(w0)
    tape = Tape("h", persistent=True)
    tape.open = True
    current().tapes.append(tape)
    tape.watch_tensor(w, None, None)
    loss = ops.reduce_mean(ops.square(ops.tanh(ops.matmul(xb, w))))
    current().tapes.remove(tape)
    tape.open = False
    h, _, _ = jacobians.hessian(tape, loss, w)
    eps = 1e-5
    fd = np.zeros((3, 2, 3, 2))
    for i in np.ndindex(3, 2):
        for j in np.ndindex(3, 2):
            def f(di, dj):
                v = w0.copy()
                v[i] += di
                v[j] += dj
                return loss_value(v)
            fd[i + j] = (f(eps, eps) - f(eps, -eps) - f(-eps, eps) + f(-eps, -eps)) / (4 * eps * eps)
    np.testing.assert_allclose(h.value, fd, rtol=1e-4, atol=1e-6)
    assert json.dumps(h.shape) == "[3, 2, 3, 2]"


# ------------------------------------------------- hessian with several sources: the whole block

BLOCK_NAMES = ["d2(f)/d(x)2", "d2(f)/d(x)d(y)", "d2(f)/d(y)d(x)", "d2(f)/d(y)2"]
BLOCK_PAIRS = [("x", None), ("x", "y"), ("y", "x"), ("y", None)]


def test_cli_hessian_of_two_sources_is_the_whole_block(tmp_path):
    path = tmp_path / "p.tdf"
    path.write_text("var x = 2.0\nvar y = 3.0\nf = x ** 2 * y ** 3\n")
    x, y = 2.0, 3.0
    by_hand = [2 * y ** 3, 6 * x * y ** 2, 6 * x * y ** 2, 6 * x ** 2 * y]      # 54, 108, 108, 72
    for mode in ("auto", "rev", "fwd"):
        res = cli("hessian", "--json", "--of", "f", "--wrt", "x,y", "--mode", mode, path)
        assert res.code == 0, res.stderr
        entries = res.json["hessians"]
        assert [e["name"] for e in entries] == BLOCK_NAMES
        assert [(e["source"], e.get("source2")) for e in entries] == BLOCK_PAIRS
        assert all(e["target"] == "f" and e["shape"] == [] and e["dtype"] == "float32" for e in entries)
        np.testing.assert_allclose([e["value"] for e in entries], by_hand, rtol=1e-6)
    (single,) = cli("hessian", "--json", "--of", "f", "--wrt", "y", path).json["hessians"]
    assert single["name"] == "d2(f)/d(y)2" and "source2" not in single
    np.testing.assert_allclose(single["value"], 6 * x ** 2 * y, rtol=1e-6)
    table = cli("hessian", "--of", "f", "--wrt", "x,y", "--no-color", path, env={"COLUMNS": "200"})
    assert table.code == 0 and all(name in table.stdout for name in BLOCK_NAMES)
    assert "x, y" in table.stdout and "y, x" in table.stdout


def test_cli_hessian_block_of_vectors_against_finite_differences(tmp_path):
    path = tmp_path / "v.tdf"
    path.write_text("var x = [0.5, -1.0]\nvar y = [1.0, 0.3, -0.7]\n"
                    "const a = [[1.0, 2.0, -1.0], [0.5, -0.5, 3.0]]\n"
                    "f = reduce_sum(sin(x) * (a @ (y * y))) + reduce_sum(x * x) * reduce_sum(exp(y))\n")
    a = np.array([[1.0, 2.0, -1.0], [0.5, -0.5, 3.0]])
    start = [np.array([0.5, -1.0]), np.array([1.0, 0.3, -0.7])]

    def f(x, y):
        return np.sum(np.sin(x) * (a @ (y * y))) + np.sum(x * x) * np.sum(np.exp(y))

    def fd_block(i, j, eps=1e-4):
        out = np.zeros(start[i].shape + start[j].shape)
        for p in np.ndindex(start[i].shape):
            for q in np.ndindex(start[j].shape):
                def at(di, dj):
                    s = [v.copy() for v in start]
                    s[i][p] += di
                    s[j][q] += dj
                    return f(*s)
                out[p + q] = (at(eps, eps) - at(eps, -eps) - at(-eps, eps) + at(-eps, -eps)) / (4 * eps * eps)
        return out

    expected = [fd_block(i, j) for i in range(2) for j in range(2)]
    for mode in ("auto", "rev", "fwd"):
        res = cli("hessian", "--json", "--of", "f", "--wrt", "x,y", "--dtype", "float64", "--mode", mode, path)
        assert res.code == 0, res.stderr
        entries = res.json["hessians"]
        assert [e["name"] for e in entries] == BLOCK_NAMES
        assert [(e["source"], e.get("source2")) for e in entries] == BLOCK_PAIRS
        assert [e["shape"] for e in entries] == [[2, 2], [2, 3], [3, 2], [3, 3]]
        for entry, fd in zip(entries, expected):
            np.testing.assert_allclose(entry["value"], fd, rtol=1e-6, atol=1e-7, err_msg=entry["name"])


def test_hessian_block_of_an_unconnected_pair_is_none_or_zeros(tmp_path):
    path = tmp_path / "sep.tdf"
    path.write_text("var x = [1.0, 2.0]\nvar y = [0.5, 1.0, 1.5]\nf = reduce_sum(x * x) + reduce_sum(y ** 3)\n")
    entries = cli("hessian", "--json", "--of", "f", "--wrt", "x,y", path).json["hessians"]
    assert [e["name"] for e in entries] == BLOCK_NAMES
    xx, xy, yx, yy = entries
    np.testing.assert_allclose(xx["value"], 2 * np.eye(2))
    np.testing.assert_allclose(yy["value"], np.diag(6 * np.array([0.5, 1.0, 1.5])))
    for mixed in (xy, yx):       # d(f)/d(x) = 2x has no path from y, d(f)/d(y) = 3y**2 none from x
        assert mixed["value"] is None and mixed["shape"] is None and mixed["why"]
    zero = cli("hessian", "--json", "--of", "f", "--wrt", "x,y", "--unconnected", "zero", path).json["hessians"]
    assert zero[1]["value"] == np.zeros((2, 3)).tolist() and zero[1]["shape"] == [2, 3]
    assert zero[2]["value"] == np.zeros((3, 2)).tolist() and zero[2]["shape"] == [3, 2]
    assert all("why" not in e for e in zero)
    apart = tmp_path / "apart.tdf"        # f does not depend on x: d(f)/d(x) is None, and so its whole row
    apart.write_text("var x = [1.0, 2.0]\nvar y = 3.0\nf = y * y\n")
    xx, xy, yx, yy = cli("hessian", "--json", "--of", "f", "--wrt", "x,y", apart).json["hessians"]
    assert xx["value"] is None and xy["value"] is None and yx["value"] is None
    assert "from x" in xy["why"] and "from x" in yx["why"]
    assert yy["value"] == 2.0
    xx, xy, yx, yy = cli("hessian", "--json", "--of", "f", "--wrt", "x,y", "--unconnected", "zero",
                         apart).json["hessians"]
    assert xy["value"] == [0.0, 0.0] and xy["shape"] == [2] and yx["value"] == [0.0, 0.0] and yx["shape"] == [2]
