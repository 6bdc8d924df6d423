"""The interpreter's short paths (compiled closures, NumPy scalars, ops on unwatched scalars) give exactly
what the full path gives: the same bits, the same dtypes, the same errors with their positions."""
import textwrap

import numpy as np
import pytest
from conftest import fast_paths
from hypothesis import HealthCheck, given, settings, strategies as st

from tapecli import kernels
from tapecli.api import Options, run_source
from tapecli.errors import LimitError, TdfTypeError
from tapecli.runtime.limits import Limits
from tapecli.runtime.values import Tensor

# The NumPy kernels (float32 sin, tanh, cos of a scalar: TensorFlow's, kernels/tf_float32.py)
K = kernels.RAW_NUMPY_KERNELS

LOOP = """y = {start}
for i in range({steps}):
    y = sin(y) * 1.01 + 0.001
"""


def _value(result, name):
    value = result.scope.vars[name]
    return value.read() if hasattr(value, "read") else value


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_an_unwatched_scalar_loop_gives_numpys_bits(dtype):
    source = LOOP.format(start="cast(0.5, float64)" if dtype is np.float64 else "cast(0.5, float32)", steps=500)
    y = _value(run_source(source), "y")
    expected = dtype(0.5)
    for _ in range(500):
        expected = K["sin"](expected) * dtype(1.01) + dtype(0.001)
    assert y.dtype == dtype and not y.weak
    assert np.asarray(y.value).tobytes() == np.asarray(expected).tobytes()


@pytest.mark.parametrize("options", [Options(check_numerics=True), Options(explain=True)])
def test_the_short_path_and_the_full_path_agree(options):
    # explain and --check-numerics log every op, so their runs take apply's full path
    source = LOOP.format(start="cast(0.5, float32)", steps=200)
    short, full = _value(run_source(source), "y"), _value(run_source(source, options=options), "y")
    assert short.dtype == full.dtype and short.value.tobytes() == full.value.tobytes()


def test_a_recorded_loop_matches_the_unrecorded_one():
    recorded = run_source("var x = 0.5\ntape t:\n    y = x * 1.0\n" + "".join(
        "    " + line + "\n" for line in LOOP.format(start="y", steps=50).splitlines()[1:])
        + "d = t.gradient(y, x)\n")
    plain = run_source("x = cast(0.5, float32)\n" + LOOP.format(start="x * 1.0", steps=50))
    assert _value(recorded, "y").value.tobytes() == _value(plain, "y").value.tobytes()
    assert _value(recorded, "d") is not None


def test_literal_arithmetic_stays_literal_and_exact():
    result = run_source("x = 0.0\nfor i in range(10):\n    x = x + 0.1\nz = x * cast(1.0, float32)\n")
    x = _value(result, "x")
    total = 0.0
    for _ in range(10):
        total += 0.1
    assert isinstance(x, Tensor) and x.weak and float(x.value) == total
    assert _value(result, "z").dtype == np.float32


def test_a_literal_meets_an_integer_scalar_with_the_ops_error():
    with pytest.raises(TdfTypeError) as e:
        run_source("n = cast(3, int32)\nfor i in range(2):\n    m = n * 1.5\n")
    assert "1.5" in str(e.value) and (e.value.line, e.value.column) == (3, 9)


def test_an_endless_loop_meets_the_step_limit():
    with pytest.raises(LimitError, match="more than 5,000 loop steps"):
        run_source("x = 0.0\nwhile True:\n    x = x + 1.0\n", options=Options(limits=Limits(max_steps=5000)))


def test_a_builtin_error_in_a_loop_keeps_its_position():
    with pytest.raises(TdfTypeError) as e:
        run_source("y = cast(0.5, float32)\nfor i in range(3):\n    y = sin(y, y, y)\n")
    assert (e.value.line, e.value.column) == (3, 9)


def test_literals_on_either_side_and_scalar_operands_give_numpys_bits():
    result = run_source("y = cast(0.25, float32)\nz = cast(0.5, float32)\nfor i in range(50):\n"
                        "    y = 2.0 - y * 0.5 + tanh(z) / 3\n    z = z * y - sqrt(z * z + 1.0)\n")
    y, z = np.float32(0.25), np.float32(0.5)
    for _ in range(50):
        y = np.float32(2.0) - y * np.float32(0.5) + K["tanh"](z) / np.float32(3)
        z = z * y - np.sqrt(z * z + np.float32(1.0))
    assert _value(result, "y").value.tobytes() == np.asarray(y).tobytes()
    assert _value(result, "z").value.tobytes() == np.asarray(z).tobytes()


@pytest.mark.parametrize("binding", ["def sin(x):\n    return x * 2.0\n", "sin = cos\n"])
def test_a_program_name_shadows_a_builtin_in_a_scalar_loop(binding):
    result = run_source(binding + "y = cast(0.5, float32)\nfor i in range(3):\n    y = sin(y) * 1.01\n")
    y = np.float32(0.5)
    for _ in range(3):
        y = (y * np.float32(2.0) if binding.startswith("def") else K["cos"](y)) * np.float32(1.01)
    assert _value(result, "y").value.tobytes() == np.asarray(y).tobytes()


def test_a_kernel_that_gives_an_array_and_mixed_dtypes_take_the_full_path():
    result = run_source("y = cast(0.5, float32)\nfor i in range(5):\n    y = sigmoid(y) * 1.5\n")
    y = np.float32(0.5)
    for _ in range(5):
        y = np.float32(1 / (1 + np.exp(-y))) * np.float32(1.5)
    assert _value(result, "y").value.tobytes() == np.asarray(y).tobytes() and _value(result, "y").dtype == np.float32
    with pytest.raises(TdfTypeError) as e:
        run_source("y = cast(0.5, float32)\nz = cast(0.5, float64)\nfor i in range(2):\n    y = sin(y) + z\n")
    assert "float32 and float64" in str(e.value) and (e.value.line, e.value.column) == (4, 9)


def test_a_scalar_expression_without_literals_and_with_a_name_twice_gives_numpys_bits():
    result = run_source("y = cast(0.5, float32)\nz = cast(0.75, float32)\nfor i in range(20):\n"
                        "    y = sin(y) * z + y / z\n")
    y, z = np.float32(0.5), np.float32(0.75)
    for _ in range(20):
        y = np.sin(y) * z + y / z
    assert _value(result, "y").value.tobytes() == np.asarray(y).tobytes()


def test_a_loop_over_range_binds_weak_integer_scalars_and_keeps_the_last():
    result = run_source("s = cast(0.0, float32)\nfor i in range(4):\n    s = s + i\nlast = i\n")
    last = _value(result, "last")
    assert last.weak and last.value.dtype.kind == "i" and int(last.value) == 3
    assert _value(result, "s").dtype == np.float32 and float(_value(result, "s").value) == 6.0


RECORDED_LOOPS = {
    "float32 chain": """var x = 0.5
tape t:
    y = x * 1.0
    for i in range(40):
        y = sin(y) * 1.01
d = t.gradient(y, x)
""",
    "float64, two watched leaves, a literal on the left, persistent": """var x = cast(0.5, float64)
w = cast(0.25, float64)
tape t(persistent=True):
    watch(w)
    y = x * 1.0
    for i in range(30):
        y = tanh(y) / 1.5 - y * w
        y = 2.0 * exp(y * 0.1) - w
dx = t.gradient(y, x)
dw = t.gradient(y, w)
""",
    "an unwatched leaf": """var x = 0.5
c = cast(0.75, float32)
tape t:
    y = x * 1.0
    for i in range(30):
        y = y * c + sin(c)
d = t.gradient(y, x)
""",
    "raw scalar gradients meeting tensors": """var x = [0.5, -1.25, 2.0]
var w = 0.75
tape t:
    s = sum(x * w)
    for i in range(12):
        s = sin(s) * s + w
    v = reshape(s, [1]) * x
    z = sum(v) + s * s
grads = t.gradient(z, [x, w])
dx = grads[0]
dw = grads[1]
""",
    "nested tapes, second order": """var x = 0.5
tape outer:
    tape inner:
        y = x * 1.0
        for i in range(30):
            y = sin(y) * y + 0.5
    g = inner.gradient(y, x)
h = outer.gradient(g, x)
""",
    "a gradient the tape records itself, then its gradient": """var x = 0.5
tape t(persistent=True):
    y = x * 1.0
    for i in range(20):
        y = sin(y) * y + 0.5
        y = y / 1.5 - exp(y * 0.25)
    g = t.gradient(y, x)
    z = g * 1.0
    for i in range(5):
        z = sin(z) * y
h = t.gradient(z, x)
""",
    "a name twice; a name no tape watches under one op": """var x = 0.5
c = cast(0.75, float32)
w = cast(-0.5, float32)
tape t(persistent=True):
    watch(w)
    y = x * 1.0
    for i in range(20):
        y = y * y * 0.5 + sin(y) - y / 3.0
        y = sin(c) * y + cos(c * y)
        y = tanh(y * w) + w
dx = t.gradient(y, x)
dw = t.gradient(y, w)
""",
    # TensorFlow's order takes a statement's ops from its last by a queue, not in the reverse of the order they ran
    # (w's gradients: y * w's, then w + 2.0's), and may take another statement's between them (w + 2.0's after
    # sin(y) * y + w's): the gradients that meet at w are summed in that order
    "a statement's ops in TensorFlow's order": """var x = 0.5
w = cast(-0.75, float32)
tape t(persistent=True):
    watch(w)
    y = x * 1.0
    for i in range(8):
        y = tanh((y * w) + (w + 2.0))
        y = tanh(y)
dx = t.gradient(y, x)
dw = t.gradient(y, w)
""",
    "a statement's ops apart in TensorFlow's order": """var x = 0.5
w = cast(-0.75, float32)
tape t(persistent=True):
    watch(w)
    y = x * 1.0
    for i in range(12):
        y = tanh((y * w) + sin(w + 2.0))
        y = sin(y) * y + w
dx = t.gradient(y, x)
dw = t.gradient(y, w)
""",
    "a jacobian another tape records, then its gradient": """var x = 0.5
tape outer:
    tape inner(persistent=True):
        y = x * 1.0
        for i in range(15):
            if i > 100:
                break
            y = cos(y) * 0.5 + y * y / 4.0
    j = inner.jacobian(y, x)
h = outer.gradient(j, x)
""",
    "jacobians through a scalar loop": """var x = 0.5
w = cast(0.25, float32)
tape t(persistent=True):
    watch(w)
    y = x * 1.0
    for i in range(20):
        y = sin(y) * w + y * 0.5
j = t.jacobian(y, [x, w])
dx = j[0]
dw = j[1]
""",
}


@pytest.mark.parametrize("name", sorted(RECORDED_LOOPS))
def test_a_recorded_scalar_statement_records_what_the_full_path_records(name):
    # explain logs every op, so its run takes apply's full path: the same records, the same bits
    from tapecli.tools.tapelist import list_tapes
    source = RECORDED_LOOPS[name]
    short, full = list_tapes(source, "loop.tdf"), list_tapes(source, "loop.tdf", Options(explain=True))
    for mine, theirs in zip(short["tapes"], full["tapes"], strict=True):
        # A tape's total counts the arrays its records keep, each once: a statement's record keeps its inputs and
        # output, not the values between its ops (computed again), which ops of their own share with their rules'
        # records. Each record's own count is compared below.
        mine.pop("saved_bytes"), theirs.pop("saved_bytes")
    assert short["tapes"] == full["tapes"]
    assert len(short["tapes"][0]["records"]) > 30
    compared = 0
    for name in ("y", "d", "dx", "dw", "g", "h"):
        if name in full["result"].scope.vars:
            mine, theirs = _value(short["result"], name), _value(full["result"], name)
            assert mine.dtype == theirs.dtype and mine.value.tobytes() == theirs.value.tobytes(), name
            compared += 1
    assert compared >= 2


# Random scalar statements on a tape: the statement records (ops/statement.py) and their generated gradient
# functions against the op-by-op path, bit for bit, in listings and in first and second derivatives.
_UNARY = ["sin", "cos", "tanh", "exp", "sigmoid", "softplus", "square"]


def _expressions(names):
    leaves = st.one_of(st.sampled_from(names), st.sampled_from(["0.5", "1.25", "2.0", "0.75"]))

    def extend(inner):
        return st.one_of(st.builds(lambda f, a: f"{f}({a})", st.sampled_from(_UNARY), inner),
                         st.builds(lambda a, op, b: f"({a} {op} {b})", inner, st.sampled_from("+-*/"), inner))
    # y in it: the loop's value stays connected to x (and an expression of literals only is not a scalar statement)
    return st.recursive(leaves, extend, max_leaves=6).filter(lambda e: "y" in e)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(first=_expressions(["y", "w"]), second=_expressions(["y", "c"]), nested=st.booleans())
def test_random_scalar_statements_give_what_the_full_path_gives(first, second, nested):
    from tapecli.tools.tapelist import list_tapes
    body = f"y = tanh({first})\ny = tanh({second})\n"
    if nested:      # the inner gradient recorded on the outer tape, then differentiated there
        source = f"""var x = 0.5
w = cast(-0.75, float32)
c = cast(0.25, float32)
tape outer:
    watch(w)
    tape inner:
        y = x * 1.0
        for i in range(4):
{textwrap.indent(body, " " * 12)}    g = inner.gradient(y, x)
h = outer.gradient(g, [x, w])
h0 = h[0]
h1 = h[1]
"""
    else:
        source = f"""var x = 0.5
w = cast(-0.75, float32)
c = cast(0.25, float32)
tape t(persistent=True):
    watch(w)
    y = x * 1.0
    for i in range(4):
{textwrap.indent(body, " " * 8)}dx = t.gradient(y, x)
dw = t.gradient(y, w)
"""
    short, full = list_tapes(source, "loop.tdf"), list_tapes(source, "loop.tdf", Options(explain=True))
    for mine, theirs in zip(short["tapes"], full["tapes"], strict=True):
        mine.pop("saved_bytes"), theirs.pop("saved_bytes")
    assert short["tapes"] == full["tapes"]
    for name in ("y", "dx", "dw", "g", "h0", "h1"):
        if name in full["result"].scope.vars:
            mine, theirs = _value(short["result"], name), _value(full["result"], name)
            if theirs is None:
                assert mine is None, name
                continue
            assert mine.dtype == theirs.dtype and mine.value.tobytes() == theirs.value.tobytes(), (name, source)


@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_a_hessian_through_a_scalar_loop_gives_what_the_full_path_gives(mode):
    # the implicit persistent tape records its own backward pass: it splits its statement records first
    from tapecli.tools.sweep import hessians
    source = "var x = 0.5\ny = x * 1.0\nfor i in range(20):\n    y = sin(y) * y + 0.5\n    y = tanh(y) / 1.5\n"
    found = []
    for explain in (False, True):
        options = Options(of="y", wrt=["x"], jacobian_mode=mode, explain=explain)
        (h,) = hessians(run_source(source, "h.tdf", options), options)
        found.append(h.values[0])
    assert found[0].dtype == found[1].dtype and found[0].value.tobytes() == found[1].value.tobytes()
    assert abs(float(found[0].value)) > 0


def test_a_tape_that_splits_its_records_while_its_path_is_read_gives_each_op_once():
    # a jacobian inside a persistent tape's block: reading the path op by op splits the tape's statement
    # records (it is about to record rules on their ops), and the path must not take a statement twice
    from tapecli.runtime.tape import Tape
    paths = []
    read = Tape.path

    def path(tape, source_ids, per_op=False):
        found = read(tape, source_ids, per_op)
        if per_op:
            paths.append([rec.output.id for rec in found[0]])
        return found
    source = ("var x = 0.5\ntape t(persistent=True):\n    y = x * 1.0\n    for i in range(10):\n"
              "        y = sin(y) * y + 0.5\n    j = t.jacobian(y, x)\n")
    Tape.path = path
    try:
        result = run_source(source)
    finally:
        Tape.path = read
    assert len(paths) == 1
    assert len(paths[0]) == len(set(paths[0])) == 1 + 3 * 10
    full = run_source(source, options=Options(explain=True))
    assert _value(result, "j").value.tobytes() == _value(full, "j").value.tobytes()


# A loop over a range whose body assigns scalar expressions runs as one generated loop (scalar_source.scalar_loop):
# the same names, bits, dtypes and weak flags, loop name and step count as its statements one by one.
def _loop_outcome(source, monkeypatch, generated, options=None):
    """The step count and every tensor bound to a name (dtype, weak flag, bits); or the error and where."""
    from tapecli.interpreter import scalar_source
    with monkeypatch.context() as patch:
        if not generated:
            patch.setattr(scalar_source, "scalar_loop", lambda *args: None)
        try:
            result = run_source(source, options=options)
        except Exception as e:
            return type(e).__name__, str(e), getattr(e, "line", None), getattr(e, "column", None)
    return result.interpreter.steps, sorted(
        (name, value.dtype.str, value.weak, np.asarray(value.value).tobytes())
        for name, value in result.scope.vars.items() if isinstance(value, Tensor))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(first=_expressions(["y", "z"]), second=_expressions(["y", "w"]), dtype=st.sampled_from(["float32", "float64"]),
       start=st.sampled_from(["cast(0.5, {dtype})", "0.5"]), steps=st.integers(1, 40), order=st.booleans())
def test_a_scalar_loop_runs_as_one_generated_loop_with_its_statements_bits(first, second, dtype, start, steps,
                                                                           order, monkeypatch):
    body = [f"    w = tanh({first})\n", f"    y = {second} * 0.5\n", "    z = z + 0.125\n"]
    source = (f"y = {start.format(dtype=dtype)}\nz = cast(0.25, {dtype})\nw = cast(0.0, {dtype})\n"
              f"for i in range({steps}):\n" + "".join(body if order else body[::-1]))
    assert _loop_outcome(source, monkeypatch, True) == _loop_outcome(source, monkeypatch, False), source


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(first=_expressions(["y", "w"]), second=_expressions(["y", "c"]), steps=st.integers(1, 12),
       persistent=st.booleans())
def test_a_recorded_scalar_loop_runs_as_one_generated_loop_with_its_statements_records(first, second, steps,
                                                                                      persistent, monkeypatch):
    # on a tape: the same records (listing), the same gradients, names and step count as the statements one by one
    from tapecli.interpreter import scalar_source
    from tapecli.tools.tapelist import list_tapes
    source = f"""var x = 0.5
w = cast(-0.75, float32)
c = cast(0.25, float32)
tape t(persistent={persistent}):
    watch(w)
    y = x * 1.0
    for i in range({steps}):
        w = tanh({first})
        y = tanh({second})
dx = t.gradient(y, x)
"""
    listings = []
    for generated in (True, False):
        with monkeypatch.context() as patch:
            if not generated:
                patch.setattr(scalar_source, "scalar_loop", lambda *args: None)
            listing = list_tapes(source, "loop.tdf")
        for tape in listing["tapes"]:
            tape.pop("saved_bytes")
        listings.append((listing["tapes"], listing["result"].interpreter.steps, sorted(
            (name, value.dtype.str, value.weak, np.asarray(value.value).tobytes())
            for name, value in listing["result"].scope.vars.items() if isinstance(value, Tensor))))
    assert listings[0] == listings[1], source


@pytest.mark.parametrize("source", [
    "y = cast(0.5, float32)\nfor i in range(300):\n    y = sin(y) * 1.01 + 0.001\n",       # (the limit mid-loop)
    "y = cast(0.5, float32)\nz = cast(0.5, float64)\nfor i in range(300):\n    y = sin(y) + z\n",
    "y = cast(0.5, float32)\nfor i in range(300):\n    y = y + i\n",                          # (reads the loop's name)
    "y = cast(0.5, float32)\nfor i in range(300):\n    y = sin(y)\n    sin = y\n",
    "var y = 0.5\nfor i in range(300):\n    y = sin(y)\n",
])
def test_a_scalar_loop_that_meets_a_limit_or_a_value_it_cannot_take_ends_as_its_statements_do(source, monkeypatch):
    limited = Options(limits=Limits(max_steps=200))
    assert _loop_outcome(source, monkeypatch, True, limited) == _loop_outcome(source, monkeypatch, False, limited)


@pytest.mark.parametrize("source", [
    "def f(y):\n    for i in range(50):\n        y = sin(y) * 0.5 + 0.25\n    return y\nz = f(cast(0.5, float32))\n",
    "y = cast(0.5, float64)\nfor j in range(3):\n    for i in range(20):\n        y = cos(y) + 0.5\n    y = y * 1.0\n",
    "y = cast(0.5, float32)\nfor i in range(20):\n    y = y * 0.5\nfor i in range(0):\n    y = y * 2.0\n",
    "y = cast(0.5, float32)\nfor i in range(20):\n    y = sin(y)\n    if i > 10:\n        y = y * 2.0\n",
    "const y = cast(0.5, float32)\nz = y\nfor i in range(20):\n    z = sin(z) + y\n",
])
@pytest.mark.parametrize("options", [None, Options(check_numerics=True)])
def test_scalar_loops_elsewhere_end_as_their_statements_do(source, options, monkeypatch):
    # in a function, nested, empty, beside an if, reading a constant; and with every op checked (no short path)
    assert _loop_outcome(source, monkeypatch, True, options) == _loop_outcome(source, monkeypatch, False, options)


@fast_paths
def test_a_generated_scalar_loop_stops_where_a_check_fails_and_leaves_the_state_before_it(monkeypatch):
    # the third sin gives a float64: the generated loop stops in iteration 2 at its second statement, with z as
    # iteration 2 left it; that statement runs as written (a fourth sin), and the loop goes on from iteration 3
    from tapecli.kernels import RAW_NUMPY_KERNELS
    calls, sin = [], RAW_NUMPY_KERNELS["sin"]

    def counted(x):
        calls.append(x)
        return np.float64(sin(x)) if len(calls) == 3 else sin(x)
    monkeypatch.setitem(RAW_NUMPY_KERNELS, "sin", counted)
    result = run_source("y = cast(0.5, float32)\nz = cast(0.0, float32)\nfor i in range(5):\n    z = z + 1.0\n"
                        "    y = sin(y)\n")
    expected = np.float32(0.5)
    for _ in range(5):
        expected = np.sin(expected)
    assert len(calls) == 6
    assert _value(result, "y").value.tobytes() == np.asarray(expected).tobytes()
    assert float(_value(result, "z").value) == 5.0 and int(_value(result, "i").value) == 4
    assert result.interpreter.steps == 5


def test_a_listing_of_a_statement_record_computes_its_values_with_warnings_off():
    # `tapecli tape` splits a scalar statement's record into its ops' records, computing the values between
    # them again after the run: a 0/0 there is a NaN, as in the run, not a Python warning on stderr
    from conftest import cli
    proc = cli("tape", "-", "--json", input="var x = 0.5\ntape t:\n    y = x * 1.0\n    for i in range(3):\n"
                                              "        y = y / (y - y)\n")
    assert proc.code == 0 and proc.stderr == ""
    assert len(proc.json["tapes"][0]["records"]) == 1 + 3 * 2
