"""`tapecli check` and `tapecli diff`: derivative checks for CI."""
import json
import xml.etree.ElementTree as ET

import pytest

from conftest import cli, run_program
from tapecli.tools.check import FileReport, github_annotations

PASSING = """\
var x = 3.0
tape t:
    y = x ** 2
g = t.gradient(y, x)
expect g == 6.0
expect g ~= 6.000001
expect shape(g) == []
"""

FAILING = """\
var x = 3.0
tape t:
    y = x ** 2
g = t.gradient(y, x)
expect g ~= 6.5, "off by half"
expect_error TapeError:
    z = x * 2.0
"""

CUSTOM = """\
@custom_gradient
def square(x):
    y = x * x
    def backward(dy):
        return dy * {factor} * x
    return y, backward

def loss(w):
    return sum(square(w) * 3.0)

var w = [0.5, -1.0, 2.0]
expect gradcheck(loss, [w])
expect gradgradcheck(loss, [w])
tape t:
    l = loss(w)
g = t.gradient(l, w)
"""


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_passing_file_exits_0(tmp_path):
    res = cli("check", write(tmp_path, "ok.tdf", PASSING))
    assert res.code == 0
    assert res.stdout.splitlines()[-1] == "3 passed, 0 failed"


def test_failing_expect_exits_1_naming_line_values_and_tolerance(tmp_path):
    path = write(tmp_path, "bad.tdf", FAILING)
    res = cli("check", path)
    assert res.code == 1
    lines = res.stdout.splitlines()
    assert lines[0] == (f"{path}:5: FAIL g ~= 6.5: off by half; actual 6.0, expected 6.5 (rtol 1e-05, atol 1e-06)")
    assert lines[1].startswith(f"{path}:6: FAIL expect_error TapeError") and '"no error"' in lines[1]
    assert lines[-1] == "0 passed, 2 failed"
    doc = cli("check", "--json", path).json
    assert (doc["passed"], doc["failed"], doc["errors"]) == (0, 2, 0)
    first = doc["results"][0]
    assert (first["line"], first["expr"], first["actual"], first["expected"], first["rtol"], first["atol"]) == \
        (5, "g ~= 6.5", 6.0, 6.5, 1e-5, 1e-6)


def test_program_error_counts_as_error_exit_3(tmp_path):
    path = write(tmp_path, "err.tdf", "var x = 1.0\ny = nope(x)\n")
    res = cli("check", "--json", path)
    assert res.code == 3
    assert res.json["errors"] == 1 and res.json["results"][0]["error"]["kind"] == "NameError"


def test_junit_has_a_testcase_per_expectation(tmp_path):
    a = write(tmp_path, "a.tdf", PASSING)
    b = write(tmp_path, "b.tdf", FAILING)
    junit = tmp_path / "out.xml"
    cli("check", "--junit", junit, a, b)
    root = ET.parse(junit).getroot()
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == [str(a), str(b)]
    assert [len(s.findall("testcase")) for s in suites] == [3, 2]
    assert suites[1].get("failures") == "2" and suites[1].find("testcase/failure") is not None


def test_github_annotations_are_escaped():
    report = FileReport("dir,with:odd%name.tdf", [{"file": "x", "line": 7, "expr": "a == b", "ok": False,
                                                   "actual": 1, "expected": 2, "rtol": 0, "atol": 0,
                                                   "message": "100% wrong\nsecond line"}])
    (line,) = github_annotations([report])
    assert line.startswith("::error file=dir%2Cwith%3Aodd%25name.tdf,line=7,title=expect failed::")
    assert "100%25 wrong%0Asecond line" in line and "\n" not in line


def test_gradcheck_catches_a_wrong_custom_gradient_and_passes_a_right_one():
    right = run_program(CUSTOM.format(factor="2.0"))
    assert [e["ok"] for e in right.expectations] == [True, True]
    wrong = run_program(CUSTOM.format(factor="2.5"))
    first = wrong.expectations[0]
    assert first["ok"] is False and "tape" in first["message"] and "finite differences" in first["message"]


def test_gradcheck_on_large_inputs_uses_seeded_random_directions():
    r = run_program("""
        def f(w):
            return sin(w) * w
        expect gradcheck(f, [normal([80, 80], seed=1)])
    """)
    assert r.expectations[0]["ok"] and "random directions" in r.expectations[0]["message"]
    assert "seed 0" in r.expectations[0]["message"]


def test_fd_finds_a_wrong_custom_gradient(tmp_path):
    right = write(tmp_path, "right.tdf", CUSTOM.format(factor="2.0").replace("expect grad", "# expect grad"))
    wrong = write(tmp_path, "wrong.tdf", CUSTOM.format(factor="2.5").replace("expect grad", "# expect grad"))
    assert cli("check", "--fd", right).code == 0
    res = cli("check", "--fd", "--json", wrong)
    assert res.code == 1
    (result,) = res.json["results"]
    assert result["line"] == 16 and not result["ok"] and "finite differences" in result["message"]


def test_fd_skips_variables_assigned_before_the_request(tmp_path):
    path = write(tmp_path, "train.tdf", """\
var w = 1.0
for i in range(2):
    tape t:
        loss = (w - 3.0) ** 2
    g = t.gradient(loss, w)
    w.assign_sub(0.1 * g)
""")
    doc = cli("check", "--fd", "--json", path).json
    assert doc["failed"] == 0
    assert doc["results"][1]["actual"]["skipped"] == ["w"]


def test_check_a_directory_of_200_files_reports_each(tmp_path):
    for i in range(200):
        sub = tmp_path / f"d{i % 7}"
        sub.mkdir(exist_ok=True)
        expected = 2 * i if i % 50 else 2 * i + 1       # four files fail on purpose
        (sub / f"f{i}.tdf").write_text(f"var x = {i}.0\ntape t:\n    y = x * x\ng = t.gradient(y, x)\n"
                                       f"expect g == {expected}.0\n")
    res = cli("check", "--json", "--workers", "2", tmp_path)
    doc = res.json
    assert res.code == 1 and (doc["passed"], doc["failed"]) == (196, 4)
    assert len({r["file"] for r in doc["results"]}) == 200


def test_fail_fast_stops_after_the_first_failing_file(tmp_path):
    write(tmp_path, "a.tdf", FAILING)
    write(tmp_path, "b.tdf", PASSING)
    doc = cli("check", "--json", "--fail-fast", tmp_path).json
    assert {r["file"] for r in doc["results"]} == {str(tmp_path / "a.tdf")}


def test_diff_compares_golden_files(tmp_path):
    prog = write(tmp_path, "p.tdf", "var w = [1.0, 2.0]\ntape t:\n    y = sum(w * w)\ng = t.gradient(y, w)\n")
    golden = tmp_path / "golden.json"
    golden.write_text(cli("grad", "--json", prog).stdout)
    same = tmp_path / "same.json"
    same.write_text(cli("grad", "--json", prog).stdout)
    moved = tmp_path / "moved.json"
    moved.write_text(cli("grad", "--json", "--set", "w=[1.0, 2.5]", prog).stdout)
    assert cli("diff", golden, same).code == 0
    res = cli("diff", "--json", golden, moved)
    assert res.code == 1 and res.json["differences"][0]["what"] == "value"
    assert cli("diff", "--rtol", "0.5", golden, moved).code == 0
    (tmp_path / "junk.json").write_text("{}")
    assert cli("diff", golden, tmp_path / "junk.json").code == 2


@pytest.mark.parametrize("example", ["37_expectations.tdf"])
def test_examples_with_expectations_pass(example):
    from pathlib import Path
    path = Path(__file__).resolve().parents[2] / "examples" / example
    res = cli("check", path)
    assert res.code == 0, res.stdout
    assert json.loads(cli("check", "--json", path).stdout)["failed"] == 0


def test_fd_compares_each_element_where_another_gradient_element_is_infinite(tmp_path):
    # sqrt's gradient at 0 is inf: the other element's check must not see inf * 0 = NaN, and the element at
    # the kink, where finite differences give NaN, is a mismatch, not a silent pass.
    path = write(tmp_path, "kink.tdf", "var x = [0.0, 4.0]\ntape t:\n    y = sum(sqrt(x))\ng = t.gradient(y, x)\n")
    res = cli("check", "--fd", "--json", path)
    (result,) = res.json["results"]
    assert res.code == 1 and not result["ok"]
    assert result["actual"]["worst"]["first_mismatch"]["tape"] == "Infinity"
    assert "RuntimeWarning" not in res.stderr


# ------------------------------------------------------------------ assert statements are expectations
ASSERTING = ("import tensorflow as tf\nx = tf.Variable(2.0)\nwith tf.GradientTape() as tape:\n    y = x ** 3\n"
             "g = tape.gradient(y, x)\nassert abs(g.numpy() - {want}) < 1e-6\n")


def test_an_assert_that_passes_counts_as_a_passed_expectation(tmp_path):
    program = tmp_path / "assert_expect.py"
    program.write_text(ASSERTING.format(want="12.0"))
    r = cli("check", program)
    assert r.code == 0 and "1 passed, 0 failed" in r.stdout
    doc = cli("check", "--json", program).json
    assert (doc["passed"], doc["failed"], doc["errors"]) == (1, 0, 0)
    (result,) = doc["results"]
    assert (result["line"], result["expr"], result["ok"]) == (6, "abs(g.numpy() - 12.0) < 1e-6", True)


def test_a_failing_assert_is_a_failed_expectation_with_both_sides_and_the_run_ends(tmp_path):
    program = tmp_path / "p.py"
    program.write_text(ASSERTING.format(want="11.5") + "assert g.numpy() == 12.0\n")
    doc = cli("check", "--json", program).json
    assert (doc["passed"], doc["failed"], doc["errors"], doc["skipped"]) == (0, 1, 1, 1)
    result, error = doc["results"]
    assert result["expr"] == "abs(g.numpy() - 11.5) < 1e-6" and not result["ok"]
    assert (result["actual"], result["expected"], result["message"]) == (0.5, 1e-6, "assert 0.5 < 1e-06")
    assert error["error"]["kind"] == "AssertionError" and error["error"]["line"] == 6
    assert doc["skips"][0]["line"] == 7 and "stopped at line 6 with AssertionError" in doc["skips"][0]["reason"]
    r = cli("check", program)
    assert r.code == 3
    assert "FAIL abs(g.numpy() - 11.5) < 1e-6: assert 0.5 < 1e-06; actual 0.5, expected 1e-06" in r.stdout


@pytest.mark.parametrize("on_cpython, shown", [("0", "0.0"), ("1", "<tf.Tensor: shape=(), dtype=float32, numpy=0.0>")])
def test_an_assert_that_is_not_a_comparison_shows_its_value_and_its_message(tmp_path, monkeypatch, on_cpython, shown):
    """The value as each runner shows it: the interpreter's number, CPython's repr (as pytest shows it)."""
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", on_cpython)
    program = tmp_path / "p.py"
    program.write_text("import tensorflow as tf\nx = tf.constant(0.0)\nassert x > -1.0\nassert x, 'x is zero'\n")
    doc = cli("check", "--json", program).json
    passed, failed, _ = doc["results"]
    assert (passed["ok"], passed["actual"], passed["expected"], passed["message"]) == (True, 0.0, -1.0, None)
    assert (failed["ok"], failed["actual"], failed["expected"]) == (False, 0.0, True)
    assert failed["message"] == f"x is zero: assert {shown}"


RUN_PROGRAM = ('var w = [1.0, 2.0]\nconst n = 3\ntape t:\n    y = sum(w * w)\ng = t.gradient(y, w)\n'
               'pair = {"a": w * 2.0, "b": [n, 1.5]}\nlabel = "loss"\n')


def test_diff_compares_run_documents_values_and_types(tmp_path):
    prog = write(tmp_path, "p.tdf", RUN_PROGRAM)

    def run_doc(name, *args):
        (tmp_path / name).write_text(cli("run", "--json", prog, *args).stdout)
        return tmp_path / name
    golden, same = run_doc("golden.json"), run_doc("same.json")
    res = cli("diff", "--json", golden, same)
    assert res.code == 0 and res.json["ok"] and res.json["compared"] == 7      # w n t y g pair label
    moved = run_doc("moved.json", "--set", "w=[1.0, 2.001]")
    res = cli("diff", "--json", golden, moved)
    assert res.code == 1
    what = {d["entry"]: d for d in res.json["differences"]}
    assert set(what) == {"w", "y", "g", "pair"} and what["w"]["what"] == "value"
    assert what["w"]["mismatched"] == 1 and what["w"]["worst"]["index"] == [1]
    assert cli("diff", "--rtol", "1e-2", golden, moved).code == 0              # the same tolerance options
    retyped = run_doc("retyped.json", "--dtype", "float64")
    res = cli("diff", "--json", golden, retyped)
    assert res.code == 1 and {d["what"] for d in res.json["differences"]} == {"type"}
    assert {d["entry"] for d in res.json["differences"]} == {"w", "y", "g"}
    assert all(d["fields"] == {"dtype": ["float32", "float64"]} for d in res.json["differences"])
    text = cli("diff", golden, retyped, "--no-color")
    assert text.code == 1 and "dtype \"float32\" vs \"float64\"" in text.stdout and "3 of 7 entries differ" in text.stdout


def test_diff_of_a_run_and_a_grad_document_is_a_usage_error(tmp_path):
    prog = write(tmp_path, "p.tdf", RUN_PROGRAM)
    (tmp_path / "run.json").write_text(cli("run", "--json", prog).stdout)
    (tmp_path / "grad.json").write_text(cli("grad", "--json", prog).stdout)
    res = cli("diff", tmp_path / "run.json", tmp_path / "grad.json")
    assert res.code == 2 and "a run document and a grad document" in res.stderr


PLAIN_PYTHON = """\
import numpy as np
x = np.array([1.0, 2.0])
assert x.sum() == 3.0
for i in range(3):
    assert i < 5, f"i={i}"
assert "a" in "abc"
assert x[1] > 5.0, "too small"
assert x[0] == 1.0
"""


def test_asserts_of_a_plain_python_program_are_expectations(tmp_path):
    path = write(tmp_path, "plain.py", PLAIN_PYTHON)
    res = cli("check", "--json", path)
    doc = res.json
    assert res.code == 3 and (doc["passed"], doc["failed"], doc["errors"], doc["skipped"]) == (5, 1, 1, 1)
    ran = [r for r in doc["results"] if "expr" in r]
    assert [(r["line"], r["expr"], r["ok"]) for r in ran] == [
        (3, "x.sum() == 3.0", True), (5, "i < 5", True), (5, "i < 5", True), (5, "i < 5", True),
        (6, '"a" in "abc"', True), (7, "x[1] > 5.0", False)]
    assert [r["actual"] for r in ran[1:4]] == [0, 1, 2] and ran[0]["actual"] == 3.0 and ran[0]["expected"] == 3.0
    assert ran[-1]["message"] == "too small: assert 2.0 > 5.0"           # pytest's way, after its own message
    assert doc["results"][-1]["error"]["kind"] == "AssertionError"
    assert doc["skips"][0]["line"] == 8
    text = cli("check", path)
    assert "plain.py:7: FAIL x[1] > 5.0: too small: assert 2.0 > 5.0; actual 2.0, expected 5.0" in text.stdout


def test_a_passing_plain_python_program_passes_and_other_tests_show_their_value(tmp_path):
    path = write(tmp_path, "ok.py", "values = [1, 2]\nassert values\nassert len(values) == 2\n")
    res = cli("check", path)
    assert res.code == 0 and res.stdout.strip().splitlines()[-1] == "2 passed, 0 failed"
    assert "ok.py:2: PASS values: actual [1, 2], expected true" in res.stdout
    failing = write(tmp_path, "bad.py", "class P:\n    def __repr__(self):\n        return 'P()'\nassert P() is None\n")
    doc = cli("check", "--json", failing).json
    (result,) = [r for r in doc["results"] if "expr" in r]
    assert result["message"] == "assert P() is None" and result["actual"] == "P()"


def test_fd_of_a_plain_python_program_checks_its_asserts_and_requests_nothing(tmp_path):
    """--fd re-runs a program's gradient requests; a program of Python alone has none (and no TDF to re-run)."""
    path = write(tmp_path, "ok.py", "values = [1, 2]\nassert len(values) == 2\n")
    res = cli("check", "--fd", "--json", path)
    assert res.code == 0 and (res.json["passed"], res.json["failed"], res.json["errors"]) == (1, 0, 0)
