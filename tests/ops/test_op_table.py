"""The op table as the one place an op is defined: the builtin wrappers, the numba kernel set and
fusion's call table are derived from it, and every elementwise gradient formula runs in every
namespace the formulas are written against (recordable ops, plain arrays, the small-array NumPy
source, fusion's Numba source); where fusion cannot write one, the unfused path runs."""
from __future__ import annotations

import importlib
import importlib.util
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from conftest import fast_paths

from tapecli import kernels, ops
from tapecli.ops import core
from tapecli.runtime.context import run_context
from tapecli.runtime.values import Tensor

ops.load_deferred()         # the whole table, the families a small run never loads among it
ELEMENTWISE = sorted(name for name, op in ops.OPS.items() if op.grads)


def _inputs(op, rng):
    """Inputs of an elementwise op, positive floats (a bool condition for where)."""
    n = len(op.grads)
    dtype = np.float32 if op.name.startswith("onednn_") else np.float64      # (oneDNN's float32 kernels)
    arrays = [rng.uniform(0.2, 0.9, size=(3,)).astype(dtype) for _ in range(n)]
    if op.name == "where":
        arrays[0] = np.array([True, False, True])
    return arrays


def _attrs(op):
    return {"elu": {"alpha": 1.0}, "leaky_relu": {"alpha": 0.2}, "masked_grad": {"kind": "relu", "alpha": 0.2},
            "silu": {"beta": 1.0}, "onednn_elu": {"alpha": 1.0}, "onednn_silu": {"beta": 1.0}}.get(op.name, {})


@pytest.mark.parametrize("name", ELEMENTWISE)
def test_every_formula_runs_in_the_recordable_raw_and_small_rule_namespaces(name):
    op = ops.OPS[name]
    rng = np.random.default_rng(0)
    arrays = _inputs(op, rng)
    attrs = _attrs(op)
    with run_context(float_dtype=np.float64):
        tensors = [Tensor(a) for a in arrays]
        y = ops.apply(op, tensors, **attrs)
        g = Tensor(rng.normal(size=y.shape).astype(y.dtype))
        for i, f in enumerate(op.grads):
            if f is None:
                continue
            recorded = f(ops, g, *tensors, y, attrs)
            raw = f(core.RAW, g.value, *arrays, y.value, attrs)
            rule = core._small_rule(op, i, attrs)
            assert rule is not None, f"{name}[{i}]: the small-array NumPy source cannot write this formula"
            small = rule(g.value, *arrays, y.value)
            np.testing.assert_allclose(np.asarray(raw, dtype=float), np.asarray(recorded.value, dtype=float))
            np.testing.assert_allclose(np.asarray(small, dtype=float), np.asarray(recorded.value, dtype=float))


@pytest.mark.parametrize("name", ELEMENTWISE)
def test_every_formula_of_a_fusable_op_runs_in_fusions_namespace(name):
    from tapecli.fusion.codegen import _Code, _Symbolic
    op = ops.OPS[name]
    lines: list = []
    sym = _Symbolic(lines)
    args = [_Code(f"a{i}") for i in range(len(op.grads))]
    attrs = _attrs(op)
    for i, f in enumerate(op.grads):
        if f is None:
            continue
        try:
            f(sym, _Code("g"), *args, _Code("y"), attrs)
        except AttributeError as e:
            # fusion fuses only ops with a template: their formulas must be writable; others may not be
            assert not op.fusion, f"{name}[{i}] is fusable but its gradient formula needs {e}"


def test_derived_tables():
    from tapecli.fusion import plan
    from tapecli.interpreter.registry import BUILTINS, load_deferred
    import tapecli.library  # noqa: F401
    load_deferred()         # (the builtins of the op families loaded since the library was imported)
    for op in ops.OPS.values():
        for name in op.program:
            assert BUILTINS[name] is getattr(ops, op.public_name), name
        if op.fusion and op.grads and op.name not in ("neg", "add", "sub", "mul", "div"):
            for name in op.program or (op.name,):
                assert plan.CALLS[name] == (op.name, len(op.grads))
    assert {"sin", "exp", "add", "sum", "masked_grad"} <= kernels.NUMBA_KERNELS
    assert set(plan.CALLS) >= {"sin", "cos", "exp", "log", "sqrt", "tanh", "sigmoid", "relu", "pow", "maximum"}



def test_the_package_gives_each_ops_own_function():
    """``tapecli.ops`` imports its families' functions by name and makes a plain one for every other op a
    program calls: a function a family writes for such an op and the package forgot would be replaced by the
    plain one, silently."""
    import pkgutil
    for info in pkgutil.iter_modules(ops.__path__):
        family = importlib.import_module(f"tapecli.ops.{info.name}")
        for op in ops.OPS.values():
            own = vars(family).get(op.public_name)
            if op.program and callable(own) and getattr(own, "__module__", None) == family.__name__:
                assert getattr(ops, op.public_name) is own, f"tapecli/ops/__init__.py: import {op.public_name}"


# Run in a process of its own: this module loads every family.
DEFERRED_CHECKS = """
import ast, pathlib, sys
from tapecli import ops
loaded = [family for family in ops.DEFERRED if f"tapecli.ops.{family}" in sys.modules]
assert not loaded, f"imported with the package: {loaded}"
# every name tapecli reads from the package (ops.X; m.X in the op table's formulas) is given with it or deferred
def reads(tree, name):
    return {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
            and node.value.id == name and isinstance(node.ctx, ast.Load)}
eager, read = set(vars(ops)), set()
for path in pathlib.Path(ops.__file__).parents[1].rglob("*.py"):
    tree = ast.parse(path.read_text())
    if any(isinstance(node, ast.ImportFrom) and node.module == "tapecli" and any(a.name == "ops" and not a.asname
                                                                                   for a in node.names)
           for node in ast.walk(tree)):
        read |= reads(tree, "ops")
    for node in ast.walk(tree) if path.parent.name == "ops" else ():         # the op table's formulas' m
        if isinstance(node, (ast.Lambda, ast.FunctionDef)) and node.args.args and node.args.args[0].arg == "m":
            read |= reads(node, "m")
missing = sorted(read - eager - set(ops._FAMILY))
assert not missing, f"read from tapecli.ops, given by no family: {missing}"
assert not eager & set(ops._FAMILY), "a deferred name given with the package too"
given = set(ops._FAMILY) | {name for name, value in vars(ops).items() if not isinstance(value, type(sys))}
assert not given & set(ops.DEFERRED), "a deferred family named as a function: importing it rebinds that name"
before = set(ops.OPS)
assert ops.einsum.__module__ == "tapecli.ops.matrix" and "tapecli.ops.nn" not in sys.modules
import tapecli.ops.nn       # a family imported by its module's name (library/tf_nn_losses.py), itself importing others
assert ops.bias_add.__module__ == "tapecli.ops.nn" and ops.gather.__module__ == "tapecli.ops.gathers"
ops.load_deferred()
added = [ops.OPS[name] for name in sorted(set(ops.OPS) - before)]
assert len(added) > 20, len(added)
listed = {entry[0] for builtins in ops.BUILTINS.values() for entry in builtins.values()}
assert not [op.name for op in added if (op.program or op.fusion) and op.name not in listed], \
    "an op with a builtin name or a formula that ops.BUILTINS does not list"
try:
    ops.no_such_op
except AttributeError:
    print("deferred")
"""


def test_a_deferred_family_loads_on_first_use_and_holds_no_op_the_derived_tables_need():
    """The families in ``ops.DEFERRED`` load when one of their names is first read from the package; an op of
    theirs with a builtin name or a fusion formula, which the builtins and fusion's call table read before it
    loads, is listed in ``ops.BUILTINS`` (tests/ops/test_builtin_families.py)."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run([sys.executable, "-c", DEFERRED_CHECKS], capture_output=True, text=True, env=env,
                          timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "deferred", done.stderr[-4000:]


def test_a_kernel_registered_from_the_ops_room_runs():
    assert "sin" in kernels.NUMPY_KERNELS and "sin" in kernels.RAW_NUMPY_KERNELS
    with run_context():
        out = kernels.call("sin", np.array([0.0, 1.0]))
    np.testing.assert_allclose(out, np.sin([0.0, 1.0]))


@pytest.mark.skipif(importlib.util.find_spec("numba") is None, reason="fusion needs numba")
def test_fusion_codegen_failure_falls_back_to_unfused(monkeypatch):
    """A formula calling a function fusion's namespace lacks makes codegen fail: the unfused path
    runs (same values and gradient), nothing escapes as an internal error."""
    from tapecli import fusion
    from tapecli.fusion import codegen  # noqa: F401  (imported where a run first fuses: here, before it)
    from tapecli.api import Options, run_source
    monkeypatch.setattr(fusion.plan, "THRESHOLD", 100)
    monkeypatch.setattr(fusion.codegen, "_LOADED", {})
    monkeypatch.delenv("TAPECLI_BACKEND", raising=False)
    monkeypatch.setenv("TAPECLI_FUSION", "1")
    source = textwrap.dedent("""
        var x = 0.0
        tape t:
            y = sum(cos(x) * x * 3.0 - x)
        g = t.gradient(y, x)
    """).lstrip("\n")
    x = np.linspace(-1, 1, 500).astype(np.float32)

    def broken(*args, **kw):
        raise AttributeError("no_such_function")
    monkeypatch.setattr(fusion.codegen, "codegen", broken)
    r = run_source(source, "f.tdf", Options(overrides={"x": x}))
    assert "fused" not in [rec.op.name for rec in r.tapes[0].records]
    g = r.scope.vars["g"]
    expected = -np.sin(x) * x * 3 + np.cos(x) * 3 - 1
    np.testing.assert_allclose(g.value, expected, rtol=1e-5, atol=1e-5)


def _fusable_unary():
    from tapecli.fusion import plan
    return sorted(name for name, (op, arity) in plan.CALLS.items() if arity == 1)


@fast_paths
@pytest.mark.skipif(importlib.util.find_spec("numba") is None, reason="fusion needs numba")
@pytest.mark.parametrize("name", _fusable_unary())
def test_every_fusion_template_matches_the_unfused_op(name, monkeypatch):
    """Each template (forward) and the op's formulas in fusion's namespace (gradient) give the
    unfused values."""
    from tapecli import fusion
    from tapecli.api import Options, run_source
    monkeypatch.setattr(fusion.plan, "THRESHOLD", 100)
    monkeypatch.delenv("TAPECLI_BACKEND", raising=False)
    source = textwrap.dedent(f"""
        var x = 0.0
        tape t:
            y = sum({name}(x) * x)
        g = t.gradient(y, x)
    """).lstrip("\n")
    x = np.linspace(0.1, 1.9, 400)
    results = []
    for fused in ("1", "0"):
        monkeypatch.setenv("TAPECLI_FUSION", fused)
        r = run_source(source, "f.tdf", Options(overrides={"x": x}, dtype="float64"))
        results.append(r)
    assert "fused" in [rec.op.name for rec in results[0].tapes[0].records]
    for var in ("y", "g"):
        np.testing.assert_allclose(results[0].scope.vars[var].value, results[1].scope.vars[var].value,
                                   rtol=1e-12, atol=1e-12)


def _fusable_binary():
    from tapecli.fusion import plan
    return sorted(name for name, (op, arity) in plan.CALLS.items() if arity == 2)


@fast_paths
@pytest.mark.skipif(importlib.util.find_spec("numba") is None, reason="fusion needs numba")
@pytest.mark.parametrize("name", _fusable_binary())
def test_every_binary_fusion_template_matches_the_unfused_op(name, monkeypatch):
    from tapecli import fusion
    from tapecli.api import Options, run_source
    monkeypatch.setattr(fusion.plan, "THRESHOLD", 100)
    monkeypatch.delenv("TAPECLI_BACKEND", raising=False)
    source = textwrap.dedent(f"""
        var x = 0.0
        var w = 0.0
        tape t:
            y = sum({name}(x, w) * x)
        g = t.gradient(y, [x, w])
    """).lstrip("\n")
    x = np.linspace(0.1, 1.9, 400)
    w = np.linspace(1.7, 0.3, 400)
    results = []
    for fused in ("1", "0"):
        monkeypatch.setenv("TAPECLI_FUSION", fused)
        results.append(run_source(source, "f.tdf", Options(overrides={"x": x, "w": w}, dtype="float64")))
    assert "fused" in [rec.op.name for rec in results[0].tapes[0].records]
    np.testing.assert_allclose(results[0].scope.vars["y"].value, results[1].scope.vars["y"].value, rtol=1e-12)
    for a, b in zip(results[0].scope.vars["g"], results[1].scope.vars["g"]):
        np.testing.assert_allclose(a.value, b.value, rtol=1e-12, atol=1e-12)
