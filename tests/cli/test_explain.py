"""explain, the `why` of None gradients, `watched`'s unwatched reads, and --check-numerics."""
import textwrap

import pytest

from conftest import cli
from tapecli.api import Options, explain, run_source
from tapecli.errors import TdfValueError


def why_of(source, name, **options):
    """The `why` of the gradient entry bound to ``name`` (grad --json's entries), via the library."""
    result = run_source(textwrap.dedent(source).lstrip("\n"), "p.tdf", Options(explain=True, **options))
    for req in result.requests:
        for entry_name, value, why in zip(req.names or [], req.values, req.why):
            if entry_name == name:
                assert value is None
                return why
    raise AssertionError(f"no entry {name}")


def explained(source, of, wrt):
    return explain(textwrap.dedent(source).lstrip("\n"), "p.tdf", Options(of=of, wrt=[wrt]))


# The nine causes, each from a seed example, with the line that cut the path.
CASES = {
    "constant": ("""
        const x = 3.0
        tape t:
            y = x * x
        g = t.gradient(y, x)
    """, "g", "x is a constant: tape t watches it only after `watch x`"),
    "non-trainable": ("""
        var(trainable=False) x = 3.0
        tape t:
            y = x * x
        g = t.gradient(y, x)
    """, "g", "x is a variable with trainable=False"),
    "watch_accessed_variables=False": ("""
        var x0 = 0.0
        tape t(watch_accessed_variables=False):
            y = sin(x0)
        g = t.gradient(y, x0)
    """, "g", "watch_accessed_variables=False and x0 was never watched"),
    "unbuilt layer": ("""
        a = Dense(3, seed=1)
        const inputs = ones([1, 4])
        tape tp(watch_accessed_variables=False):
            watch a.variables
            result = a(inputs)
        ga = tp.gradient(result, a.variables)
    """, "ga[0]", "not built when `watch a.variables` ran at line 4"),
    "rebound to a tensor": ("""
        var x = 2.0
        x = x + 1
        tape t2:
            y2 = x + 1
        g2 = t2.gradient(y2, x)
    """, "g2", "x was a variable until line 2"),
    "integer": ("""
        const x = 10
        tape g:
            watch x
            y = x * x
        dy_dx = g.gradient(y, x)
    """, "dy_dx", "x is int32: integer tensors have no gradient"),
    "non-differentiable op": ("""
        var x = 2.5
        tape t:
            r = round(x)
            y = r * 3.0
        g = t.gradient(y, x)
    """, "g", "round at line 3 is not differentiable"),
    "state": ("""
        var x0 = 3.0
        var x1 = 0.0
        tape t:
            x1.assign_add(x0)
            y = x1 ** 2
        dy_dx0 = t.gradient(y, x0)
    """, "dy_dx0", "state: x1.assign_add(...) at line 4"),
    "stop_recording": ("""
        var x = 2.0
        tape t:
            a = x * 2.0
            stop_recording t:
                b = a * 3.0
            y = b + 1.0
        g = t.gradient(y, x)
    """, "g", "line 5 ran inside `stop_recording t` (line 4)"),
    "reset": ("""
        var x = 2.0
        const c = 1.0
        tape t:
            watch c
            a = c * 2.0
            reset t
            y = a * x
        g = t.gradient(y, c)
    """, "g", "`reset t` at line 6"),
    "outside the scope": ("""
        var x = 2.0
        tape t:
            a = x * 2.0
        y = a * 3.0
        g = t.gradient(y, x)
    """, "g", "line 4 ran outside the block of tape t (line 2)"),
    "another tape": ("""
        var x1 = 3.0
        tape t(persistent=True):
            r1 = x1 * 2.0
        tape t2:
            r2 = r1 * x1
        g = t.gradient(r2, x1)
    """, "g", "line 5 ran outside the block of tape t (line 2); it was recorded on tape t2"),
    "branch not taken": ("""
        const x = 1.0
        var v0 = 2.0
        var v1 = 2.0
        tape t(persistent=True):
            watch x
            if x > 0.0:
                result = v0
            else:
                result = v1 ** 2
        dx = t.gradient(result, x)
    """, "dx", "the branch at line 6 that would bind result was not taken"),
    "no path": ("""
        var x = 2.0
        var y = 3.0
        tape t:
            w = x * 1.0
            z = y * y
        g = t.gradient(z, x)
    """, "g", "no path at all: z does not depend on x"),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_why_names_the_cause_and_line(case):
    source, name, expected = CASES[case]
    assert expected in why_of(source, name)


def test_explain_prints_the_chain_when_connected():
    (entry,) = explained("""
        var x = 3.0
        tape t:
            y = x ** 2
            z = sin(y) + y
        g = t.gradient(z, x)
    """, "z", "x")
    assert entry["connected"] and entry["why"] is None
    assert [(s["line"], s["ops"]) for s in entry["chain"]] == [(3, ["pow"]), (4, ["sin", "add"])]


def test_explain_without_a_request_uses_the_implicit_tape():
    (entry,) = explained("""
        var x = 3.0
        const c = 2.0
        y = floor(x) * c
    """, "y", "x")
    assert entry["tape"] == "(implicit)" and "floor at line 3 is not differentiable" in entry["why"]


def test_explain_cli(tmp_path):
    path = tmp_path / "p.tdf"
    path.write_text("var x0 = 3.0\nvar x1 = 0.0\ntape t:\n    x1.assign_add(x0)\n    y = x1 ** 2\n"
                    "dy_dx0 = t.gradient(y, x0)\n")
    res = cli("explain", path, "--of", "y", "--wrt", "x0")
    assert res.code == 0 and "None, because state: x1.assign_add(...) at line 4" in res.stdout
    doc = cli("explain", "--json", path, "--of", "y", "--wrt", "x0").json
    assert doc["explanations"][0]["connected"] is False


def test_watched_lists_variables_read_but_not_watched(tmp_path):
    path = tmp_path / "w.tdf"
    path.write_text("var a = 1.0\nvar(trainable=False) b = 2.0\ntape t(watch_accessed_variables=False):\n"
                    "    watch a\n    y = a * b\n")
    (tape,) = cli("watched", "--json", path).json["tapes"]
    assert tape["watched"] == [{"name": "a", "kind": "variable", "how": "watch"}]
    assert tape["not_watched"] == [{"name": "b", "line": 5, "why": "it is not trainable: watch it explicitly"}]


def test_check_numerics_names_a_where_that_poisons_the_backward_pass():
    with pytest.raises(TdfValueError) as e:
        # (exp's gradient g * inf at 100 is NaN where g is 0; TensorFlow's sqrt's is 0 there)
        run_source("const x = [100.0, 1.0]\ntape t:\n    watch x\n    y = where(x < 50.0, exp(x), 0.0)\n"
                   "    s = sum(y)\ng = t.gradient(s, x)\n", "p.tdf", Options(check_numerics=True))
    assert e.value.line == 4 and "backward" in e.value.message and "`where` at line 4" in e.value.message
    assert "sqrt(where(" in e.value.hint


def test_check_numerics_forward():
    with pytest.raises(TdfValueError) as e:
        run_source("const x = [0.0, 4.0]\ny = log(x) * 2.0\nz = y + 1.0\n", "p.tdf", Options(check_numerics=True))
    assert (e.value.line, e.value.column) == (2, 1) and "log at line 2 gave Inf in the forward pass" in e.value.message


def test_check_numerics_quiet_when_finite_and_masked_forward_only():
    # The NaN of sqrt(-1) is discarded by where and never differentiated: nothing to report.
    result = run_source("const x = [-1.0, 4.0]\ny = where(x > 0.0, sqrt(x), 0.0)\n", "p.tdf",
                        Options(check_numerics=True))
    assert result.scope.vars["y"].value.tolist() == [0.0, 2.0]
