"""Every JSON document has schema, command, file (a string or null; files for several) and ok (exit 0 or not);
diff reports what np.testing.assert_allclose reports."""
import json
import textwrap

import numpy as np
import pytest

from conftest import cli

PROGRAM = textwrap.dedent("""\
    var x = [1.0, 2.0]
    tape t:
        y = reduce_sum(x * x)
    dy_dx = t.gradient(y, x)
    expect dy_dx == [2.0, 4.0]
    """)


@pytest.fixture
def prog(tmp_path):
    (tmp_path / "p.tdf").write_text(PROGRAM)
    return tmp_path / "p.tdf"


def _uniform(res, command, ok):
    doc = res.json
    assert doc["schema"] == "tapecli/1" and doc["command"] == command
    assert "file" in doc and (doc["file"] is None or isinstance(doc["file"], str))
    if doc["file"] is None and "files" in doc:
        assert isinstance(doc["files"], list)
    assert doc["ok"] is ok and (res.code == 0) is ok, (res.code, doc)
    return doc


@pytest.mark.parametrize("args", [
    ("run",), ("grad",), ("jacobian", "--of", "y", "--wrt", "x"), ("hessian", "--of", "y", "--wrt", "x"),
    ("watched",), ("explain", "--of", "y", "--wrt", "x"), ("tape",), ("bench", "--repeat", "1"),
    ("plot", "--y", "x", "-o", "{dir}/p.png"), ("grad", "--sweep", "x=@{dir}/pts.npy"),
])
def test_each_command_of_a_run(prog, tmp_path, args):
    np.save(tmp_path / "pts.npy", np.ones((3, 2), np.float32))
    args = [a.format(dir=tmp_path) for a in args]
    doc = _uniform(cli(args[0], prog, "--json", *args[1:]), args[0], True)
    assert doc["file"] == str(prog)


def test_errors_are_documents_with_ok_false(prog, tmp_path):
    bad = tmp_path / "bad.tdf"
    bad.write_text("y = z + 1\n")
    _uniform(cli("grad", bad, "--json"), "grad", False)                    # a program error
    _uniform(cli("grad", tmp_path / "missing.tdf", "--json"), "grad", False)     # a usage error
    _uniform(cli("grad", prog, "--json", "--nope"), "grad", False)          # Typer's usage error


def test_check_lint_diff_warmup(prog, tmp_path):
    doc = _uniform(cli("check", prog, "--json"), "check", True)
    assert doc["files"] == [str(prog)] and all("ok" in r for r in doc["results"])
    failing = tmp_path / "f.tdf"
    failing.write_text(PROGRAM.replace("[2.0, 4.0]", "[2.0, 5.0]"))
    doc = _uniform(cli("check", failing, "--json"), "check", False)
    assert [r["ok"] for r in doc["results"]] == [False]
    (tmp_path / "empty").mkdir()
    _uniform(cli("check", tmp_path / "empty", "--json"), "check", False)      # nothing to check: exit 5
    _uniform(cli("lint", prog, "--json"), "lint", True)
    golden = tmp_path / "a.json"
    golden.write_text(cli("grad", prog, "--json").stdout)
    doc = _uniform(cli("diff", golden, golden, "--json"), "diff", True)
    assert doc["files"] == [str(golden), str(golden)] and doc["file"] is None
    _uniform(cli("warmup", "--json", "--kernel", "abs", "--dtype", "float64"), "warmup", True)


def _grad_doc(path, values):
    doc = {"schema": "tapecli/1", "command": "grad", "file": "m.tdf", "ok": True,
           "gradients": [{"name": name, "source": "w", "value": v, "dtype": "float32", "shape": list(np.shape(v))}
                         for name, v in values.items()]}
    path.write_text(json.dumps(doc))
    return path


def _allclose_report(actual, desired, rtol, atol) -> str:
    try:
        np.testing.assert_allclose(np.array(actual, float), np.array(desired, float), rtol=rtol, atol=atol)
    except AssertionError as e:
        return str(e)
    return ""


@pytest.mark.parametrize("golden, other", [
    ([[1.0, 2.0], [3.0, 0.0]], [[1.0, 2.1], [3.0, 1e-3]]),
    ([1.0, -4.0, 5.0, 1e-3], [1.0, -4.5, 5.00001, 2e-3]),
    (2.0, 2.5),
])
def test_diff_reports_what_assert_allclose_reports(tmp_path, golden, other):
    a = _grad_doc(tmp_path / "a.json", {"g": golden})
    b = _grad_doc(tmp_path / "b.json", {"g": other})
    res = cli("diff", a, b, "--json", "--rtol", "1e-5", "--atol", "1e-6")
    d = _uniform(res, "diff", False)["differences"][0]
    report = _allclose_report(other, golden, 1e-5, 1e-6)
    x, y = np.array(golden, float), np.array(other, float)
    assert f"Mismatched elements: {d['mismatched']} / {d['elements']} " in report
    bad = ~np.isclose(y, x, rtol=1e-5, atol=1e-6)
    assert d["max_abs"] == np.abs(y - x)[bad].max()
    rel = (np.abs(y - x) / np.abs(np.where(x == 0, np.nan, x)))[bad]
    assert d["max_rel"] == np.nanmax(rel)
    assert f"Max absolute difference among violations: {np.array2string(np.abs(y - x)[bad].max())}" in report
    worst = tuple(d["worst"]["index"])
    assert d["worst"]["a"] == x[worst] and d["worst"]["b"] == y[worst]
    assert np.abs(y - x)[worst] == np.abs(y - x).max()
    text = cli("diff", a, b, "--no-color", env={"COLUMNS": "200"}).stdout
    assert f"{d['mismatched']} / {d['elements']} elements; max abs" in text


def test_diff_nan_on_one_side_is_the_worst(tmp_path):
    a = _grad_doc(tmp_path / "a.json", {"g": [1.0, 2.0, 3.0]})
    b = _grad_doc(tmp_path / "b.json", {"g": [1.5, "NaN", 3.0]})
    d = cli("diff", a, b, "--json").json["differences"][0]
    assert d["mismatched"] == 2 and d["worst"] == {"index": [1], "a": 2.0, "b": "NaN"} and d["max_abs"] == 0.5
