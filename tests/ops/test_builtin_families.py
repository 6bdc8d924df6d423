"""``tapecli/ops/builtin_families.py``: the builtins of the op families imported on first use, which the library and
fusion read before those families load, derived from what the families register (``python
tests/ops/test_builtin_families.py`` writes it again); and a program sees the same builtins, fused or not, whether
their family was imported before it ran or not."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TABLE = ROOT / "tapecli" / "ops" / "builtin_families.py"
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}

# Run in a process of its own: each op of a deferred family, by the family whose module registered it.
FAMILY_OPS = textwrap.dedent("""\
    import json, sys
    from tapecli import ops
    from tapecli.ops import core
    owners, register = {}, core.register

    def watched(name, **kw):
        frame = sys._getframe(1)
        while frame.f_globals["__name__"].rpartition(".")[2] not in ops.DEFERRED:
            frame = frame.f_back
        owners[name] = frame.f_globals["__name__"].rpartition(".")[2]
        return register(name, **kw)
    core.register = watched
    ops.load_deferred()
    print(json.dumps(owners))
    """)


def family_ops() -> dict:
    done = subprocess.run([sys.executable, "-c", FAMILY_OPS], capture_output=True, text=True, env=ENV, timeout=120,
                          check=True)
    return json.loads(done.stdout)


def family_builtins(owners: dict) -> dict:
    """Each deferred family that has ops a program calls by name: name -> (op, public function, inputs of its
    fusion formula or 0)."""
    from tapecli import ops
    ops.load_deferred()
    table: dict = {}
    for name, family in owners.items():
        op = ops.OPS[name]
        for builtin in op.program:
            table.setdefault(family, {})[builtin] = (op.name, op.public_name, len(op.grads) if op.fusion else 0)
    return {family: dict(sorted(builtins.items())) for family, builtins in table.items()}


def table_text(table: dict) -> str:
    """builtin_families.py as it should read."""
    lines = ['"""The builtins of the op families imported on first use (``ops.DEFERRED``): each family that has ops a',
             "program calls by name, and for each such name its op, the op's public function in ``tapecli.ops`` and",
             "the number of inputs of the op's fusion formula (0: it has none). The library imports such a family for a",
             "program that names one of them (library/core.py); fusion plans them before it loads (fusion/plan.py).",
             'Generated from the op table by ``python tests/ops/test_builtin_families.py``, which checks it."""', "",
             "BUILTINS = {"]
    for family, builtins in table.items():
        lines.append(f"    {family!r}: {{")
        lines += [f"        {name!r}: {entry!r}," for name, entry in builtins.items()]
        lines.append("    },")
    return "\n".join([*lines, "}", ""])


@pytest.fixture(scope="module")
def owners():
    return family_ops()


def test_the_table_is_what_the_deferred_families_register(owners):
    table = family_builtins(owners)
    assert TABLE.read_text() == table_text(table), "builtin_families.py is stale: python tests/ops/test_builtin_families.py"
    assert {"elementwise_math", "special"} <= table.keys()


def test_each_deferred_op_with_a_fusion_formula_has_a_builtin_name(owners):
    """Fusion's call table holds the builtin names of such ops (an op's own name where it has none): the table
    gives only those."""
    from tapecli import ops
    ops.load_deferred()
    assert not [name for name in owners if ops.OPS[name].fusion and not ops.OPS[name].program]


# Runs a program in a process of its own, the deferred families loaded first with ``preload``: its values and the
# names of its first tape's records.
RUN = textwrap.dedent("""\
    import sys
    if sys.argv[2] == "preload":
        from tapecli import library, ops
        from tapecli.interpreter import registry
        ops.load_deferred()
        registry.load_deferred()
    import numpy as np
    from tapecli.api import Options, run_source

    def bits(v):
        if isinstance(v, (list, tuple)):
            return [bits(item) for item in v]
        value = getattr(v, "value", v)
        return f"{value.dtype}:{value.tobytes().hex()}" if isinstance(value, np.ndarray) else type(v).__name__
    result = run_source(sys.argv[1], "p.tdf", Options())
    print(sorted((name, bits(value)) for name, value in result.scope.vars.items()))
    print([rec.op.name for rec in result.tapes[0].records] if result.tapes else [])
    """)


def run_fresh(program: str, preload: bool, env=None) -> list[str]:
    done = subprocess.run([sys.executable, "-c", RUN, program, "preload" if preload else "-"], capture_output=True,
                          text=True, env={**ENV, **(env or {})}, timeout=300)
    assert done.returncode == 0, done.stderr[-4000:]
    return done.stdout.splitlines()


PROGRAMS = {
    "bare builtins": "var x = [0.5, 1.0, 1.5]\ntape t:\n    y = sinh(x) * cosh(x) + erfinv(x * 0.5) + relu6(x)\n"
                     "    z = atan2(y=x, x=2.0) + squared_difference(x, 1.0) + bessel_i0e(x) + lgamma(x)\n"
                     "g = t.gradient([y, z], x)\n",
    "spelled through tf": "import tensorflow as tf\nx = tf.Variable([0.5, 1.0, 1.5])\nwith tf.GradientTape() as t:\n"
                          "    y = tf.math.asinh(x) + tf.math.ndtri(x / 2.0) + tf.nn.selu(x) + tf.math.softsign(x)\n"
                          "g = t.gradient(y, x)\n",
}


@pytest.mark.parametrize("program", PROGRAMS.values(), ids=PROGRAMS.keys())
def test_a_program_naming_a_deferred_familys_builtins_sees_them_as_if_loaded_before(program):
    assert run_fresh(program, preload=False) == run_fresh(program, preload=True)


@pytest.mark.skipif(importlib.util.find_spec("numba") is None, reason="fusion needs numba")
def test_a_fused_expression_of_a_deferred_familys_builtins_fuses():
    program = ("var x = linspace(0.1, 0.9, 400)\ntape t:\n    y = sum(sinh(x) * 2.0 + atan2(x, x * 2.0) * erfc(x))\n"
               "g = t.gradient(y, x)\n")
    fused = run_fresh(program, preload=False, env={"TAPECLI_FUSION": "1", "TAPECLI_FUSION_THRESHOLD": "100"})
    assert fused[1] == "['fused']"
    assert fused == run_fresh(program, preload=True, env={"TAPECLI_FUSION": "1", "TAPECLI_FUSION_THRESHOLD": "100"})


if __name__ == "__main__":
    TABLE.write_text(table_text(family_builtins(family_ops())))
