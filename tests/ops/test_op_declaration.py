"""A new elementwise op is one entry in one file: its scalar formula (``fusion=``) and its derivative. From
that entry alone it runs on NumPy, Numba (large arrays), the cuda backend (numba's simulator here), inside a
fused expression and in a replayed loop plan, with its declared gradient; the per-backend tables that once
listed op names by hand derive them from the op table, and a hand-kept list coming back fails here.

The new op is declared in a child process, as a family module would declare it (before the library, fusion
and the interpreter derive their tables): nothing of it leaks into the other tests' op table."""
from __future__ import annotations

import ast
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import fast_paths

import tapecli
from tapecli import kernels, ops

ops.load_deferred()         # the whole table, the families a small run never loads among it

PACKAGE = Path(tapecli.__file__).parent
ROOT = PACKAGE.parent

# The one entry (as it would stand in tapecli/ops/elementwise_math.py): softsign under another name, no
# kernel of its own.
DECLARATION = """
from tapecli import ops
from tapecli.ops.core import _unary, publish

SOFTSIGN_T = _unary("softsign_t", deriv=lambda m, x, y, at: m.reciprocal(m.square(m.add(1, m.abs_(x)))),
                    fusion="({0} / (_F(1.0) + abs({0})))")
publish(vars(ops))
"""

CPU_CHECKS = """
import textwrap

import numpy as np

from tapecli import kernels
from tapecli.api import Options, run_source
from tapecli.fusion import plan as fusion_plan
from tapecli.interpreter import loop_plans
from tapecli.kernels import formulas
from tapecli.runtime.context import run_context


def formula(x):
    return x / (x.dtype.type(1) + np.abs(x))


def derivative(x):
    return 1 / np.square(1 + np.abs(x))


x32 = np.linspace(-3, 3, 101, dtype=np.float32)
with run_context():
    assert np.array_equal(kernels.call("softsign_t", x32), formula(x32)), "NumPy"
    big = np.linspace(-40, 40, kernels.THRESHOLD + 1, dtype=np.float32)
    assert "softsign_t" in kernels.NUMBA_KERNELS and kernels.numba_ready()
    assert np.array_equal(kernels.call("softsign_t", big), formula(big)), "Numba"
    assert formulas._NUMBA, "the Numba kernel was not the generated one"

# a program: a scalar, a tensor, the gradient by the declared derivative (fused and unfused)
source = textwrap.dedent('''
    var x = 0.0
    s = softsign_t(2.0)
    tape t:
        y = reduce_sum(softsign_t(x) * x)
    g = t.gradient(y, x)
''').lstrip("\\n")
x = np.linspace(-1.9, 1.9, 400)
fusion_plan.THRESHOLD = 100
for fused in ("1", "0"):
    import os
    os.environ["TAPECLI_FUSION"] = fused
    r = run_source(source, "f.tdf", Options(overrides={"x": x}, dtype="float64"))
    names = [rec.op.name for rec in r.tapes[0].records]
    assert ("fused" in names) == (fused == "1"), names
    assert r.scope.vars["s"].value == np.float64(2.0) / 3
    np.testing.assert_allclose(r.scope.vars["y"].value, np.sum(formula(x) * x), rtol=1e-12)
    np.testing.assert_allclose(r.scope.vars["g"].value, derivative(x) * x + formula(x), rtol=1e-12)

# a training loop: its iterations after the traced ones replay as a plan, the bits of the loop as written
loop = textwrap.dedent('''
    var w = [0.5, -1.5, 2.0, -0.25]
    for step in range(8):
        tape t:
            loss = reduce_sum(softsign_t(w * 2.0))
        w.assign_sub(0.1 * t.gradient(loss, w))
''').lstrip("\\n")
planned = run_source(loop, "loop.tdf")
planner = loop_plans.planner
loop_plans.planner = lambda *args: None
written = run_source(loop, "loop.tdf")
loop_plans.planner = planner
assert planned.context.loop_replayed > 0
assert written.context.loop_replayed == 0
assert np.array_equal(planned.scope.vars["w"].read().value, written.scope.vars["w"].read().value)
w = np.array([0.5, -1.5, 2.0, -0.25], dtype=np.float32)
for _ in range(8):
    w = w - np.float32(0.1) * 2 * derivative(w * 2)
np.testing.assert_allclose(planned.scope.vars["w"].read().value, w, rtol=1e-6)
print("served")
"""

CUDA_CHECKS = """
import numpy as np

from tapecli.kernels import backends
from tapecli.api import Options, run_source

gpu = backends.get("cuda")
for dtype in (np.float32, np.float64):
    x = np.linspace(-3, 3, 37, dtype=dtype)
    out = np.asarray(gpu.run("softsign_t", [gpu.asarray(x)], {}))
    assert out.dtype == dtype and np.array_equal(out, x / (dtype(1) + np.abs(x))), dtype
r = run_source("var x = [-2.0, 0.5, 3.0]\\ntape t:\\n    y = reduce_sum(softsign_t(x))\\ng = t.gradient(y, x)\\n",
               "f.tdf", Options(device="cuda"))
np.testing.assert_allclose(np.asarray(r.scope.vars["g"].value), 1 / np.square(1 + np.abs([-2.0, 0.5, 3.0])),
                           rtol=1e-6)
print("served")
"""


def _child(checks: str, **env) -> None:
    environment = {**os.environ, "PYTHONPATH": str(ROOT), **env}
    environment.pop("TAPECLI_BACKEND", None)
    done = subprocess.run([sys.executable, "-c", DECLARATION + checks], capture_output=True, text=True,
                          env=environment, timeout=600)
    assert done.returncode == 0 and done.stdout.strip().endswith("served"), done.stderr[-4000:]


@fast_paths
@pytest.mark.skipif(importlib.util.find_spec("numba") is None, reason="Numba and fusion need numba")
def test_a_new_elementwise_op_declared_in_one_entry_is_served_on_the_cpu():
    _child(CPU_CHECKS)


@pytest.mark.skipif(importlib.util.find_spec("numba") is None, reason="the cuda backend needs numba")
def test_a_new_elementwise_op_declared_in_one_entry_is_served_on_the_cuda_simulator():
    _child(CUDA_CHECKS, NUMBA_ENABLE_CUDASIM="1")


# ------------------------------------------------------------------ no hand-kept op lists

def _op_builtins() -> set:
    return {name for op in ops.OPS.values() for name in op.program}


def _op_kernels() -> set:
    return {op.kernel for op in ops.OPS.values()}


def _elementwise_kernels() -> set:
    return {op.kernel for op in ops.OPS.values() if op.grads is not None or op.program}


def _name_lists(path: Path, names: set) -> list:
    """The literal tuples, lists and sets (and dict keys) in ``path`` holding three or more of ``names``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        items = node.keys if isinstance(node, ast.Dict) else node.elts \
            if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else ()
        listed = [i.value for i in items if isinstance(i, ast.Constant) and i.value in names]
        if len(listed) >= 3:
            found.append((node.lineno, listed))
    return found


def test_the_name_list_finder_finds_a_hand_kept_list(tmp_path):
    table = tmp_path / "table.py"
    table.write_text('_UNARY = ("neg", "sin", "cos")\n_FORMS = {"add": "binary"}\n')
    assert _name_lists(table, {"neg", "sin", "cos", "add"}) == [(1, ["neg", "sin", "cos"])]


def test_the_backend_tables_list_no_op_by_hand():
    """The loop-plan kinds of the ops' builtins, the cuda backend's elementwise kernels, warmup's call forms
    and the NumPy kernels of the elementwise ops are derived (from the op table, device_math's formulas, the
    ops' inputs, the ``numpy=`` of the ops' entries): a list of op names written into them again fails here."""
    from tapecli.library import replay_kinds
    from tapecli.tools import warmup
    assert not set(replay_kinds._ALL_DATA + replay_kinds._FIRST_DATUM) & _op_builtins()
    assert _op_builtins() <= set(replay_kinds._op_data())
    assert not _name_lists(PACKAGE / "library" / "replay_kinds.py", _op_builtins())
    assert not _name_lists(PACKAGE / "kernels" / "cuda" / "table.py", _elementwise_kernels())
    assert not _name_lists(PACKAGE / "kernels" / "numpy_kernels.py", _elementwise_kernels())
    assert not {"unary", "binary", "ternary"} & set(warmup._FORMS.values())


def _literal_keys(path: Path, table: str) -> set:
    """The constant keys of the dict literal assigned to ``table`` in ``path``."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == table for t in node.targets):
            return {k.value for k in node.value.keys if isinstance(k, ast.Constant)}
    raise AssertionError(f"no {table} in {path}")


def test_no_op_kernel_is_written_into_a_kernel_table_by_hand():
    """An op's NumPy kernel is its entry's ``numpy=`` (or made from its formula; matmul's alone is named
    beside TensorFlow's float32 product, kernels/blas.py), and a Numba kernel the op's formula makes
    (``numba="formula"``, or no kernel of its own) is written nowhere else: a name put back into
    numpy_kernels.KERNELS or numba_kernels._IMPLS fails here."""
    assert _literal_keys(PACKAGE / "kernels" / "numpy_kernels.py", "KERNELS") <= {"matmul"}
    made = set(kernels.FORMULAS)
    assert {"add", "mul", "relu", "sqrt"} <= made
    assert not _literal_keys(PACKAGE / "kernels" / "numba_kernels.py", "_IMPLS") & made
    assert not _name_lists(PACKAGE / "ops" / "scalar.py", _elementwise_kernels())      # (scalar_operator=)


def test_every_name_in_the_derived_kernel_tables_comes_from_an_op_entry():
    assert kernels.NUMBA_KERNELS <= _op_kernels()
    assert set(kernels.FORMULAS) <= _op_kernels()
    for op in ops.OPS.values():
        if op.kernel in kernels.FORMULAS and op.grads is not None:     # (bias_add borrows add's kernel, own rules)
            assert kernels.FORMULAS[op.kernel] == (op.fusion, len(op.grads)), op.name


def test_a_formula_kernel_evaluates_the_scalar_language_over_arrays():
    """Conditionals, boolean operators, math's functions by NumPy's names and the helpers, on arrays."""
    import numpy as np
    from tapecli.kernels import formulas
    cases = {"_t_where": ("({0} if {0} > _F(0.0) and {0} < _F(2.0) else {0} * _F({alpha!r}))", 1, {"alpha": 0.5}),
             "_t_math": ("math.atan2({0}, {1}) + maximum({0}, {1}) + relu({0}, _F(0.0))", 2, {})}
    try:
        kernels.FORMULAS.update({name: (formula, arity) for name, (formula, arity, _) in cases.items()})
        kernels_ = {name: formulas.numpy_kernel(name) for name in cases}
        x = np.array([-1.0, 0.5, 3.0], dtype=np.float32)
        w = np.float32(0.25)
        np.testing.assert_array_equal(kernels_["_t_where"](x, alpha=0.5),
                                      np.where((x > 0) & (x < 2), x, x * np.float32(0.5)))
        out = kernels_["_t_math"](x, w)
        assert out.dtype == np.float32
        np.testing.assert_array_equal(out, np.arctan2(x, w) + np.maximum(x, w) + np.maximum(x, 0))
    finally:
        for name in cases:
            kernels.FORMULAS.pop(name, None)
