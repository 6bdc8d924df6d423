"""An error comes with the warnings gathered before it, and a None gradient used as a value says where it
became None and why (what `tapecli explain` says)."""
import textwrap

import pytest

from conftest import cli

REBOUND = textwrap.dedent("""\
    var x = 2.0
    for epoch in range(2):
        tape t:
            y = x + 1
        g = t.gradient(y, x)
        x = x + 1
    h = g * 2
    """)

UNWATCHED = textwrap.dedent("""\
    var x = 2.0
    var w = 1.0
    tape t:
        y = w * 3.0
    g = t.gradient(y, x)
    h = 1.0 + g
    """)


def _write(tmp_path, text, name="prog.tdf"):
    path = tmp_path / name
    path.write_text(text)
    return path


def _explained(tmp_path, text, of, wrt):
    """What `tapecli explain` says of the program without its last line (the use of the None)."""
    path = _write(tmp_path, "".join(text.splitlines(keepends=True)[:-1]), "explained.tdf")
    res = cli("explain", path, "--of", of, "--wrt", wrt, "--json")
    assert res.code == 0, res.stderr
    return [e["why"] for e in res.json["explanations"] if not e["connected"]][-1]


@pytest.mark.parametrize("command", ["run", "grad", "jacobian", "tape", "watched", "bench"])
def test_the_error_document_lists_the_warnings_gathered_before_it(tmp_path, command):
    path = _write(tmp_path, REBOUND)
    res = cli(command, path, "--json")
    assert res.code == 3
    doc = res.json
    assert doc["command"] == command and doc["error"]["line"] == 7
    assert [w["line"] for w in doc["warnings"]] == [6]
    assert "x was a variable, now a tensor" in doc["warnings"][0]["message"]


def test_without_json_the_warnings_come_before_the_error_on_stderr_and_quiet_hides_them(tmp_path):
    path = _write(tmp_path, REBOUND)
    res = cli("run", path)
    assert res.code == 3 and res.stdout == ""
    lines = res.stderr.splitlines()
    assert lines[0] == f"{path}:6: warning: x was a variable, now a tensor: did you mean x.assign_add(...) or x.assign(...)?"
    assert lines[1].startswith(f"{path}:7:5: TypeError:")
    quiet = cli("run", path, "-q")
    assert ": warning: " not in quiet.stderr and quiet.stderr.startswith(f"{path}:7:5: TypeError:")


def test_an_error_without_warnings_has_an_empty_list(tmp_path):
    res = cli("run", _write(tmp_path, "a = 1.0\nb = a + c\n"), "--json")
    assert res.code == 3 and res.json["warnings"] == []


@pytest.mark.parametrize("text, line, request_line, operator", [(REBOUND, 7, 5, "*"), (UNWATCHED, 6, 5, "+")])
@pytest.mark.parametrize("command", ["run", "grad"])
def test_a_none_gradient_used_says_where_it_became_none_and_why(tmp_path, text, line, request_line, operator,
                                                                 command):
    path = _write(tmp_path, text)
    err = cli(command, path, "--json").json["error"]
    assert err["kind"] == "TypeError" and err["line"] == line
    assert err["message"] == (f"'{operator}' needs tensors, got None: g is None, the gradient of y w.r.t. x "
                              f"asked at line {request_line}")
    assert err["hint"] == _explained(tmp_path, text, "y", "x")     # (a run without explain's log asks for it once more)


def test_the_reason_is_printed_as_the_hint(tmp_path):
    path = _write(tmp_path, UNWATCHED)
    res = cli("run", path)
    assert res.stderr.splitlines()[-1] == ("hint: x was not read inside the block of tape t (line 3), so the tape "
                                           "never watched it")


@pytest.mark.parametrize("use", ["h = -g", "h = 1.0\nh += g", "h = reduce_sum(g)", "h = sin(g)",
                                 "h = [g][0] * 2.0", "def f(a):\n    return a * 2.0\nh = f(g)"])
def test_other_uses_of_a_none(tmp_path, use):
    path = _write(tmp_path, UNWATCHED.replace("h = 1.0 + g\n", use + "\n"))
    err = cli("run", path, "--json").json["error"]
    assert err["kind"] == "TypeError"
    if "[g]" in use or "def " in use:   # not the name the request bound, or a function's own None: no claim
        assert "hint" not in err and "gradient" not in err["message"]
    else:
        assert "g is None, the gradient of y w.r.t. x asked at line 5" in err["message"]
        assert err["hint"].startswith("x was not read inside the block of tape t")


def test_a_none_that_no_gradient_bound_gets_no_hint(tmp_path):
    err = cli("run", _write(tmp_path, "var x = 1.0\ng = None\nh = g * x\n"), "--json").json["error"]
    assert err["message"] == "'*' needs tensors, got None" and "hint" not in err
    err = cli("run", _write(tmp_path, "g = None\nh = g * 2.0\n"), "--json").json["error"]      # Python's: CPython's
    assert err["message"] == "unsupported operand type(s) for *: 'NoneType' and 'float'" and "hint" not in err


# A loop whose later requests (at another call site) follow the None: a run that reports no request (`run`)
# forgets each step's gradients, not the request whose None an error names.
NONE_THEN_OTHERS = textwrap.dedent("""\
    var x = 2.0
    var w = 1.0
    for step in range(3):
        tape t:
            y = w * 3.0
        g = t.gradient(y, x)
        tape u:
            z = w * w
        gw = u.gradient(z, w)
    h = 1.0 + g
    """)


def test_a_run_that_forgets_old_gradients_still_names_the_none(tmp_path):
    err = cli("run", _write(tmp_path, NONE_THEN_OTHERS), "--json").json["error"]
    assert err["line"] == 10
    assert err["message"].endswith(": g is None, the gradient of y w.r.t. x asked at line 6")
