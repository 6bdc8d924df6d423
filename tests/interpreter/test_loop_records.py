"""A recorded loop of one statement of one name (``y = sin(y) * 1.01``) is one record (ops/statement.py's
LoopRecord): its steps' values kept, its gradient passed back from step to step as one value. It must give what
the loop's statements one by one give, and what the ops one by one give: the same listings, gradients and names,
bit for bit, in first and second derivatives, jacobians, paths that are not chains and loops a limit stops."""
import numpy as np
import pytest
from conftest import drawn, fast_paths
from hypothesis import HealthCheck, given, settings, strategies as st

from tapecli.api import Options, run_source
from tapecli.autodiff import backward
from tapecli.interpreter import scalar_source
from tapecli.ops.statement import LoopRecord
from tapecli.runtime.limits import Limits
from tapecli.runtime.values import Tensor
from tapecli.tools.tapelist import list_tapes

_UNARY = ["sin", "cos", "exp", "square", "softplus", "log1p", "sqrt"]

# {body}: the loop's statement; {steps}: its length. Each compares every name it binds.
PROGRAMS = {
    "a gradient": """var x = 0.5
tape t:
    y = x * 1.0
    for i in range({steps}):
        {body}
dx = t.gradient(y, x)
""",
    "a persistent tape: two gradients, one of a path that is not a chain": """var x = 0.5
tape t(persistent=True):
    y0 = x * 1.0
    y = y0 * 1.0
    for i in range({steps}):
        {body}
    z = y * y0
dx = t.gradient(y, x)
dz = t.gradient(z, x)
dy = t.gradient(y, y)
""",
    "a gradient the outer tape records, then its gradient": """var x = 0.5
tape outer:
    tape inner:
        y = x * 1.0
        for i in range({steps}):
            {body}
    g = inner.gradient(y, x)
h = outer.gradient(g, x)
""",
    "a jacobian": """var x = 0.5
tape t(persistent=True):
    y = x * 1.0
    for i in range({steps}):
        {body}
j = t.jacobian(y, x)
dx = t.gradient(y, x)
""",
    "a tape that watches the loop's value": """var x = 0.5
tape t:
    y = x * 1.0
    for i in range({steps}):
        {body}
    tape u:
        watch(y)
        z = y * y
    dz = u.gradient(z, y)
dx = t.gradient(dz, x)
""",
}


def _outcome(source, monkeypatch, way, options=None, nan_signs=True):
    """The listing of every tape, the step count and every tensor bound to a name (dtype, weak flag, bits), or the
    error: ``way`` "loop" (the loop's record), "statements" (the statements one by one), "ops" (explain: each op)."""
    with monkeypatch.context() as patch:
        if way == "statements":
            patch.setattr(scalar_source, "scalar_loop", lambda *args: None)
        if way == "ops":
            options = (options or Options()).replace(explain=True)
        try:
            listing = list_tapes(source, "loop.tdf", options)
        except Exception as e:
            return type(e).__name__, str(e), getattr(e, "line", None)
    for tape in listing["tapes"]:
        tape.pop("saved_bytes")         # (the values between a statement's ops are kept only op by op)
    result = listing["result"]
    return listing["tapes"], result.interpreter.steps, sorted(
        (name, value.dtype.str, value.weak, _bits(value.value, nan_signs and way != "ops"))
        for name, value in result.scope.vars.items() if isinstance(value, Tensor))


def _bits(value, nan_signs: bool) -> bytes:
    """The value's bytes; op by op, a NaN's sign aside: the statements' generated gradient functions and the ops'
    rules give NaNs of other signs in places (a second derivative through sqrt(y - y)), as before loops had records
    of their own; the loop's record is compared with the statements' bit for bit."""
    value = np.asarray(value)
    if not nan_signs and value.dtype.kind == "f":
        value = np.where(np.isnan(value), np.array(np.nan, value.dtype), value)
    return value.tobytes()


def _expressions():
    leaves = st.one_of(st.just("y"), st.sampled_from(["0.5", "1.25", "2.0", "0.75"]))

    def extend(inner):
        return st.one_of(st.builds(lambda f, a: f"{f}({a})", st.sampled_from(_UNARY), inner),
                         st.builds(lambda a, op, b: f"({a} {op} {b})", inner, st.sampled_from("+-*/"), inner))
    return st.recursive(leaves, extend, max_leaves=4).filter(lambda e: "y" in e and e != "y")


@fast_paths
@settings(max_examples=drawn(40), deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(expression=_expressions(), steps=st.sampled_from([1, 2, 3, 17, 64, 65, 130]),
       program=st.sampled_from(sorted(PROGRAMS)))
def test_a_loops_record_gives_what_its_statements_and_ops_give(expression, steps, program, monkeypatch):
    source = PROGRAMS[program].format(steps=steps, body=f"y = {expression}")
    loop = _outcome(source, monkeypatch, "loop")
    assert loop == _outcome(source, monkeypatch, "statements"), source
    assert _outcome(source, monkeypatch, "loop", nan_signs=False) == _outcome(source, monkeypatch, "ops"), source


@fast_paths
@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_the_benchmarks_loop_is_one_record_and_gives_what_its_statements_give(program, monkeypatch):
    source = PROGRAMS[program].format(steps=100, body="y = sin(y) * 1.01")
    made = []
    record_loop = scalar_source.record_loop

    def recorded(*args):
        out = record_loop(*args)
        made.append(len(args[4]))
        return out
    monkeypatch.setattr(scalar_source, "record_loop", recorded)
    loop = _outcome(source, monkeypatch, "loop")
    assert made == [99]             # (the first step runs as written: the loop is generated from the second)
    assert loop == _outcome(source, monkeypatch, "statements") == _outcome(source, monkeypatch, "ops")


@fast_paths
@pytest.mark.parametrize("body", ["y = sin(y) * 1.01 + 0.001", "y = exp(y * 0.5) - y"])
def test_a_loop_a_limit_stops_records_the_steps_it_ran(body, monkeypatch):
    source = PROGRAMS["a persistent tape: two gradients, one of a path that is not a chain"].format(steps=300,
                                                                                                   body=body)
    limited = Options(limits=Limits(max_steps=200))
    outcome = _outcome(source, monkeypatch, "loop", limited)
    assert outcome[0] == "LimitError"
    assert outcome == _outcome(source, monkeypatch, "statements", limited) == _outcome(source, monkeypatch, "ops",
                                                                                       limited)


@fast_paths
def test_a_step_whose_gradient_is_of_another_class_leaves_the_steps_before_it_to_the_sweep(monkeypatch):
    # one value the loop kept made a float64 (by hand): the gradient passed back through it is a float64, which the
    # step before it (a float32) would not keep raw in the sweep's map. The loop's gradient function stops there,
    # and the sweep takes that step and those before it as it takes any statement's record.
    source = PROGRAMS["a gradient"].format(steps=40, body="y = sin(y) * 1.01")
    record_loop = scalar_source.record_loop

    def widened(tapes, op, before, literals, values, line):
        values[20] = np.float64(values[20])
        return record_loop(tapes, op, before, literals, values, line)
    monkeypatch.setattr(scalar_source, "record_loop", widened)
    left = []
    statements = LoopRecord.statements

    def spied(loop, reach=None, upto=None):
        left.append(upto)
        return statements(loop, reach, upto)
    monkeypatch.setattr(LoopRecord, "statements", spied)
    found = run_source(source).scope.vars["dx"]

    def one_by_one(tape, loop, reach, wanted, grads, add, plain, views):
        backward._backward_sweep(tape, loop.statements(reach)[::-1], reach, wanted, grads, False, add, plain, views)
    monkeypatch.setattr(backward, "_loop_sweep", one_by_one)
    expected = run_source(source).scope.vars["dx"]
    assert left[0] == 20            # (the step that reads values[20] gave a float64; the one before it stops)
    assert found.dtype == expected.dtype and found.value.tobytes() == expected.value.tobytes()
