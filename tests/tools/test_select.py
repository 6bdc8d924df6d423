"""Choosing requests: -k (pytest's), --line and --last on grad, jacobian, hessian and explain, through the real
command line; the JSON keeps its schema, with fewer entries and a "selected" count."""
import textwrap

import numpy as np
import pytest

from conftest import cli

STEPS = 12
LOOP = textwrap.dedent(f"""\
    var w = 1.0
    var b = 0.5
    const x = 2.0
    for i in range({STEPS}):
        tape t:
            y = w * x + b
            loss = y ** 2
        dw, db = t.gradient(loss, [w, b])
        w.assign_sub(0.01 * dw)
    tape t2:
        z = w * w
    g = t2.gradient(z, w)
    """)


@pytest.fixture
def loop(tmp_path):
    path = tmp_path / "loop.tdf"
    path.write_text(LOOP)
    return path


def _grad(path, *args):
    res = cli("grad", path, "--json", *args)
    assert res.code == 0, res.stdout + res.stderr
    return res.json


def test_without_a_selection_every_entry_and_no_selected_field(loop):
    doc = _grad(loop)
    assert len(doc["gradients"]) == 2 * STEPS + 1 and "selected" not in doc


def test_last_keeps_the_last_iteration_of_each_call_site(loop):
    full = _grad(loop)["gradients"]
    doc = _grad(loop, "--last")
    assert [e["name"] for e in doc["gradients"]] == ["dw", "db", "g"]
    assert doc["gradients"][:2] == full[2 * STEPS - 2:2 * STEPS]       # the last iteration's, values and all
    assert doc["gradients"][2] == full[-1]
    assert doc["selected"] == {"k": None, "line": None, "last": True, "entries": 3, "of": 2 * STEPS + 1}


@pytest.mark.parametrize("expr, names", [
    ("dw", ["dw"] * STEPS), ("DB", ["db"] * STEPS), ("t2", ["g"]), ("not loss", ["g"]),
    ("dw or g", ["dw"] * STEPS + ["g"]), ("w and not (db or dw)", ["g"]), ("z and t2", ["g"]),
])
def test_k_matches_names_targets_sources_and_tapes_as_pytest_does(loop, expr, names):
    doc = _grad(loop, "-k", expr)
    assert [e["name"] for e in doc["gradients"]] == names
    assert doc["selected"]["entries"] == len(names) and doc["selected"]["k"] == expr


def test_line_and_a_range_of_lines(loop):
    assert {e["line"] for e in _grad(loop, "--line", "8")["gradients"]} == {8}
    assert len(_grad(loop, "--line", "8")["gradients"]) == 2 * STEPS
    doc = _grad(loop, "--line", "1-12", "--last", "-k", "db or g")
    assert [(e["name"], e["line"]) for e in doc["gradients"]] == [("db", 8), ("g", 12)]
    assert doc["selected"]["line"] == [1, 12]


def test_the_table_shows_only_the_selection(loop):
    res = cli("grad", loop, "--last", "-k", "g", "--no-color")
    assert res.code == 0 and res.stdout.count("│ g ") == 1 and "dw" not in res.stdout


def test_nothing_selected_is_a_usage_error_with_a_did_you_mean(loop):
    res = cli("grad", loop, "-k", "dx")
    assert res.code == 2 and "did you mean -k dw?" in res.stderr and "the entries: dw, db, g" in res.stderr
    res = cli("grad", loop, "--line", "3", "--json")
    assert res.code == 2 and res.json["ok"] is False and res.json["error"]["kind"] == "UsageError"
    assert "requests at lines 8, 12" in res.json["error"]["message"]


@pytest.mark.parametrize("args, words", [
    (("-k", "dw and"), "expected a name"), (("-k", "(dw"), "expected ')'"), (("-k", "dw db"), "expected and"),
    (("--line", "x"), "a line number"), (("--line", "9-3"), "A <= B"),
])
def test_malformed_selections_are_usage_errors_before_the_run(tmp_path, args, words):
    path = tmp_path / "p.tdf"
    path.write_text('print("the program ran")\n')
    res = cli("grad", path, *args)
    assert res.code == 2 and words in res.stderr and "the program ran" not in res.stderr


def test_out_writes_the_selection(loop, tmp_path):
    res = cli("grad", loop, "--last", "-o", tmp_path / "g.npz")
    assert res.code == 0
    arrays = np.load(tmp_path / "g.npz")
    assert sorted(arrays.files) == ["db", "dw", "g"]
    full = _grad(loop)["gradients"]
    assert float(arrays["dw"]) == pytest.approx(full[2 * STEPS - 2]["value"], rel=1e-6)


def test_jacobian_and_hessian_take_the_same_options(loop):
    res = cli("hessian", loop, "--of", "z", "--wrt", "w,b", "-k", "b and not d(w)d(b)", "--json")
    assert res.code == 2        # (a parenthesis is grouping, as in pytest's -k)
    doc = cli("hessian", loop, "--of", "loss", "--wrt", "w,b", "-k", "b", "--json").json
    assert doc["hessians"] and all("b" in (e["source"], e.get("source2")) for e in doc["hessians"])
    assert doc["selected"]["entries"] == 3 and doc["selected"]["of"] == 4
    jac = cli("jacobian", loop, "--of", "z", "--wrt", "w,b", "-k", "w", "--json").json
    assert [e["source"] for e in jac["jacobians"]] == ["w"]


def test_explain_last(loop):
    full = cli("explain", loop, "--of", "loss", "--wrt", "w", "--json").json
    assert len(full["explanations"]) == STEPS
    doc = cli("explain", loop, "--of", "loss", "--wrt", "w", "--last", "--json").json
    assert doc["explanations"] == full["explanations"][-1:] and doc["selected"]["of"] == STEPS
    res = cli("explain", loop, "--of", "loss", "--wrt", "w", "--line", "12")
    assert res.code == 2 and "requests at line 8" in res.stderr


def test_sweep_refuses_a_selection(loop, tmp_path):
    np.save(tmp_path / "pts.npy", np.ones(3, np.float32))
    res = cli("grad", loop, "--sweep", f"x=@{tmp_path / 'pts.npy'}", "--last")
    assert res.code == 2 and "--sweep" in res.stderr
