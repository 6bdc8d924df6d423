"""TAPECLI_ACCEL=0 (the run context's Mode, runtime/context.py): every fast path off, the reference path
alone. The programs of examples/ and training loops give the same printed output, values and gradients, bit
for bit, with the fast paths on and off; with them off, no loop iteration and no backward pass runs as a plan."""
import json
import textwrap
from pathlib import Path

import numpy as np
import pytest

from tapecli.api import Options, run_source
from tapecli.errors import TdfError
from tapecli.runtime.context import Mode
from tapecli.runtime.values import Tensor, Variable

from conftest import cli
from interpreter.test_loop_plans import MANUAL, MLP

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.tdf"))

# a loop that runs on NumPy scalars: the interpreter's scalar path and its generated loop (scalar_loop)
SCALARS = """
y = cast(0.5, float32)
total = 0.0
for i in range(300):
    y = sin(y) * 1.01 + 0.001
    total = total + y * y
var w = 0.25
tape t:
    z = w
    for i in range(40):
        z = tanh(z) * 1.5 + 0.01
g = t.gradient(z, w)
print(y, total, g)
"""


def _bits(value):
    """What a value holds, to compare bit for bit: tensors and variables as (dtype, shape, bytes), through lists,
    tuples and dicts; None and Python numbers and strings as they are; anything else by its type alone."""
    if isinstance(value, Variable):
        value = value.read()
    if value.__class__ is Tensor:
        array = np.asarray(value.value)
        return ("tensor", array.dtype.str, array.shape, array.tobytes(), value.weak)
    if isinstance(value, (list, tuple)):
        return [_bits(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _bits(v) for k, v in value.items()}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return type(value).__name__


def _run(source: str, filename: str, accel: str, monkeypatch, **options):
    monkeypatch.setenv("TAPECLI_ACCEL", accel)
    try:
        result = run_source(source, filename, Options(**options))
    except TdfError as e:
        return {"error": (type(e).__name__, e.line, e.message)}, None
    requests = [[_bits(v) for v in req.values] for req in result.requests]
    return {"output": list(result.output), "names": _bits(dict(result.scope.vars)), "requests": requests,
            "warnings": list(result.warnings)}, result.context


def _same_on_and_off(source: str, filename: str, monkeypatch, **options):
    on, on_ctx = _run(source, filename, "1", monkeypatch, **options)
    off, off_ctx = _run(source, filename, "0", monkeypatch, **options)
    assert off == on
    return on_ctx, off_ctx


@pytest.mark.parametrize("path", [pytest.param(p, id=p.stem) for p in EXAMPLES])
def test_an_example_gives_the_same_bits_with_the_fast_paths_off(path, monkeypatch):
    monkeypatch.chdir(path.parent)
    _same_on_and_off(path.read_text(encoding="utf-8"), path.name, monkeypatch)


@pytest.mark.parametrize("source, filename", [(MANUAL, "manual.tdf"), (MLP, "mlp.py"), (SCALARS, "scalars.tdf")],
                         ids=["manual", "keras", "scalars"])
def test_a_training_loop_gives_the_same_bits_with_the_fast_paths_off(source, filename, monkeypatch):
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", "0")        # (the interpreter's loop plans)
    on, off = _same_on_and_off(textwrap.dedent(source), filename, monkeypatch)
    if filename != "scalars.tdf":
        assert on.loop_replayed > 0             # (the fast run did take its plans)
    assert off.loop_replayed == 0 and off.replayed == 0
    assert not off.mode.accel and on.mode.accel


def test_a_training_loop_on_cpython_gives_the_same_bits_with_the_fast_paths_off(monkeypatch):
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", "1")
    on, off = _same_on_and_off(textwrap.dedent(MLP), "mlp.py", monkeypatch)
    assert on.loop_replayed > 0 and off.loop_replayed == 0 and off.replayed == 0     # (its iterations as plans)


def test_the_fast_paths_off_with_explain_give_the_same_values(monkeypatch):
    _same_on_and_off(textwrap.dedent(SCALARS), "scalars.tdf", monkeypatch, explain=True)


@pytest.mark.parametrize("accel", ["1", "0"])
def test_bench_reports_replayed_iterations_only_with_the_fast_paths_on(tmp_path, accel):
    program = tmp_path / "train.tdf"
    program.write_text(MANUAL)
    r = cli("bench", "--json", "--repeat", "1", "--warmup", "0", program, env={"TAPECLI_ACCEL": accel})
    assert r.code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["backward_passes"] > 0
    if accel == "1":
        assert doc["loop_replayed"] > 0
    else:
        assert doc["loop_replayed"] == 0 and doc["backward_replayed"] == 0


def test_the_mode_of_a_run_reads_its_settings(monkeypatch):
    monkeypatch.setenv("TAPECLI_ACCEL", "0")
    off = Mode.of_run()
    assert not (off.accel or off.compiled_closures or off.plain_ops or off.direct_calls or off.fusion
                or off.backward_plans or off.plan_kernels)
    monkeypatch.setenv("TAPECLI_ACCEL", "1")
    monkeypatch.setenv("TAPECLI_FUSION", "0")
    on = Mode.of_run()
    assert on.accel and on.compiled_closures and on.plain_ops and on.backward_plans and not on.fusion
    monkeypatch.delenv("TAPECLI_FUSION")
    assert Mode.of_run().fusion and not Mode.of_run(check_numerics=True).fusion
    assert Mode.of_run().plan_kernels
    monkeypatch.setenv("TAPECLI_PLAN_KERNELS", "0")
    assert not Mode.of_run().plan_kernels and Mode.of_run().fusion
    monkeypatch.delenv("TAPECLI_PLAN_KERNELS")
    explained = Mode.of_run(explain=True)
    assert explained.compiled_closures and not explained.plain_ops and not explained.backward_plans


def test_an_interpreter_block_and_a_switched_off_block_restore_the_mode():
    mode = Mode()
    with mode.interpreting(numpy_quiet=True, loop_plans=True):
        assert mode.scalar_path and mode.loop_plans
        with mode.off("backward_plans"):
            assert not mode.backward_plans and mode.scalar_path
        assert mode.backward_plans
        observer = object()
        with mode.tracing(observer):
            assert mode.observer is observer and not mode.scalar_path and not mode.direct_calls
            assert mode.loop_plans
        assert mode.observer is None and mode.scalar_path and mode.direct_calls
    assert not mode.scalar_path and not mode.loop_plans
    reference = Mode(accel=False)
    with reference.interpreting(numpy_quiet=True, loop_plans=True):
        assert not reference.scalar_path and not reference.loop_plans
