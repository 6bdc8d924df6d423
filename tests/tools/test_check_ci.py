"""`tapecli check` as CI sees it: nothing to check is an error, JUnit with times and skips, quiet output."""
import xml.etree.ElementTree as ET

import pytest

from conftest import cli
from tapecli.api import Options
from tapecli.tools.check import check_file, expectation_lines, junit_xml

STOPS = """\
var x = 1.0
expect x == 1.0
y = x @ x
expect y == 2.0
if x > 5.0:
    expect x == 7.0
"""


def test_a_folder_without_expectations_exits_5(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    res = cli("check", empty)
    assert res.code == 5 and "no expectations found" in res.stderr
    (tmp_path / "plain.tdf").write_text("var x = 1.0\ny = x * 2.0\n")
    res = cli("check", "--json", tmp_path / "plain.tdf")
    assert res.code == 5 and "no expectations found" in res.stderr
    assert res.json["passed"] == res.json["failed"] == 0 and res.json["files"] == [str(tmp_path / "plain.tdf")]


def test_expectations_after_an_error_are_skipped_and_junit_has_times_and_totals(tmp_path):
    path = tmp_path / "stops.tdf"
    path.write_text(STOPS)
    junit = tmp_path / "out.xml"
    res = cli("check", "--junit", junit, path)
    assert res.code == 3
    assert f"{path}:4: SKIP y == 2.0: not run: the program stopped at line 3 with ShapeError" in res.stdout
    assert f"{path}:6: SKIP x == 7.0" in res.stdout
    assert res.stdout.splitlines()[-1] == "1 passed, 0 failed, 2 skipped, 1 error"
    root = ET.parse(junit).getroot()
    assert {k: root.get(k) for k in ("tests", "failures", "errors", "skipped")} == \
        {"tests": "4", "failures": "0", "errors": "1", "skipped": "2"}
    assert float(root.get("time")) > 0
    cases = root.findall("testsuite/testcase")
    assert all(float(c.get("time")) >= 0 for c in cases)
    assert [c.get("line") for c in cases if c.find("skipped") is not None] == ["4", "6"]
    doc = cli("check", "--json", path).json
    assert doc["skipped"] == 2 and all("ok" in r for r in doc["results"] + doc["skips"])
    assert [(s["line"], s["ok"]) for s in doc["skips"]] == [(4, None), (6, None)]


def test_expectation_lines_are_found_without_running_even_in_a_file_that_does_not_parse():
    assert expectation_lines(STOPS) == [(2, "x == 1.0"), (4, "y == 2.0"), (6, "x == 7.0")]
    broken = 'var x = 1.0\nexpect x == 1.0, "one"\nif x = 2:\n    pass\nexpect_error TapeError:\n    y = 1\n'
    assert expectation_lines(broken) == [(2, "x == 1.0"), (5, "expect_error TapeError")]


def test_junit_times_add_up_to_the_suite(tmp_path):
    path = tmp_path / "ok.tdf"
    path.write_text("var x = 3.0\nexpect x == 3.0\nexpect x ~= 3.0\n")
    root = ET.fromstring(junit_xml([check_file(str(path), Options())]))
    suite = root.find("testsuite")
    assert abs(sum(float(c.get("time")) for c in suite.findall("testcase")) - float(suite.get("time"))) < 1e-5


def test_quiet_hides_passes(tmp_path):
    path = tmp_path / "mixed.tdf"
    path.write_text("var x = 3.0\nexpect x == 3.0\nexpect x == 4.0\n")
    res = cli("check", "--quiet", path)
    assert res.code == 1 and "PASS" not in res.stdout and ":3: FAIL" in res.stdout


def test_the_progress_bar_draws_on_stderr():
    import io
    import sys
    from tapecli.cli.sweepcli import progress_bar
    saved, sys.stdout = sys.stdout, io.StringIO()
    try:
        with progress_bar(3, "checking", True) as advance:
            advance(3)
        assert sys.stdout.getvalue() == ""
    finally:
        sys.stdout = saved


def test_full_prints_what_numpy_prints_in_linear_time(monkeypatch):
    import sys
    import numpy as np
    from tapecli.cli import tensorfmt
    rng = np.random.default_rng(0)
    arrays = [np.arange(7.0), rng.standard_normal((4, 9)), rng.standard_normal((2, 3, 5)).astype(np.float32),
              rng.integers(-100, 100, (3, 2, 2, 6)), np.array([[1e-9, 1e9], [np.nan, np.inf]]),
              rng.standard_normal((1, 3, 1)), np.array([True, False] * 10), np.zeros((2, 0))]
    expected = {(i, width): np.array2string(a, threshold=sys.maxsize, max_line_width=width, separator=" ")
                for i, a in enumerate(arrays) for width in (16, 33, 80)}
    # NumPy's array2string appends to one growing string (quadratic: 40,000 elements took 6 s); the
    # elements' text must come from tensorfmt's own layout, which array2string never builds for a non-empty
    # array
    real = np.array2string
    monkeypatch.setattr(tensorfmt.np, "array2string",
                        lambda a, *args, **kw: real(a, *args, **kw) if a.size == 0 else pytest.fail("array2string"))
    for i, a in enumerate(arrays):
        for width in (16, 33, 80):
            assert tensorfmt._full(a, width) == expected[i, width]
