"""The pytest plugin: .tdf files with expect lines are tests, one per expectation, run by check's code."""
import subprocess
import sys

pytest_plugins = ["pytester"]

FILE = """\
var x = 3.0
const two = 2.0
tape t:
    y = x ** two
dy_dx = t.gradient(y, x)
expect dy_dx == 6.0
expect dy_dx == 7.0, "off by one"
expect_error TapeError:
    again = t.gradient(y, x)
z = x @ x
expect z == 9.0
"""


def test_tdf_files_with_expectations_are_collected_one_item_per_expectation(pytester):
    pytester.makefile(".tdf", model=FILE, plain="var x = 1.0\n")
    result = pytester.runpytest("--collect-only", "-q")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["model.tdf::line 6: dy_dx == 6.0", "model.tdf::line 7: dy_dx == 7.0",
                                 "model.tdf::line 8: expect_error TapeError", "model.tdf::line 11: z == 9.0",
                                 "4 tests collected*"])


def test_failures_name_file_line_and_message_and_the_program_error_is_reported(pytester):
    pytester.makefile(".tdf", model=FILE)
    junit = pytester.path / "out.xml"
    result = pytester.runpytest("-rA", f"--junitxml={junit}")
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines(["*model.tdf:7: dy_dx == 7.0: off by one; actual 6.0, expected 7.0*",
                                 "*model.tdf:11: not run: the program stopped with an error*",
                                 "*model.tdf:10:*ShapeError*"])
    assert 'time="' in junit.read_text()
    selected = pytester.runpytest("-k", "TapeError")
    selected.assert_outcomes(passed=1, deselected=3)


def test_expectations_an_error_kept_from_running_are_skipped(pytester):
    pytester.makefile(".tdf", model="var x = 1.0\ny = x @ x\nexpect x == 1.0\nexpect x == 2.0\n")
    result = pytester.runpytest("-rs")
    result.assert_outcomes(failed=1, skipped=1)
    result.stdout.fnmatch_lines(["*model.tdf:4: not run: the program stopped at line 2 with ShapeError*"])


def test_collection_can_be_turned_off(pytester):
    pytester.makefile(".tdf", model=FILE)
    pytester.makeini("[pytest]\ntapecli_collect = false\n")
    assert pytester.runpytest().ret == 5          # no tests collected


def test_the_plugin_imports_nothing_heavy():
    code = ("import sys, tapecli.tools.pytest_plugin\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'numba', 'lark', 'typer', 'rich')"
            " or m.startswith(('tapecli.api', 'tapecli.interpreter', 'tapecli.tools.check'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_entry_point_is_registered():
    from importlib.metadata import entry_points
    (ep,) = [ep for ep in entry_points(group="pytest11") if ep.name == "tapecli"]
    assert ep.value == "tapecli.tools.pytest_plugin"


def test_assert_statements_are_items_too(pytester):
    pytester.makefile(".tdf", model="var x = 3.0\ntape t:\n    y = x * x\ng = t.gradient(y, x)\nassert g == 6.0\n"
                                    "assert g == 7.0\n")
    result = pytester.runpytest("-rA")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*model.tdf:6: g == 7.0: assert 6.0 == 7.0; actual 6.0, expected 7.0*"])


def test_ids_hold_no_brackets_so_last_failed_reruns_exactly_the_failed_expectation(pytester):
    pytester.makefile(".tdf", model="const x = [1.0, 2.0]\nexpect x == [1.0, 2.0]\nexpect x == [1.0, 3.0]\n"
                                    "expect x[::2] == [1.0]\nexpect x[0] == 2.0\n",
                      other="const y = 2.0\nexpect y == 2.0\n")
    collected = pytester.runpytest("--collect-only", "-q")
    collected.stdout.fnmatch_lines(["model.tdf::line 2: x == (1.0, 2.0)", "model.tdf::line 3: x == (1.0, 3.0)",
                                    "model.tdf::line 4: x(: :2) == (1.0)", "model.tdf::line 5: x(0) == 2.0"])
    assert "[" not in collected.stdout.str().split("tests collected")[0]
    first = pytester.runpytest("-p", "cacheprovider")
    first.assert_outcomes(passed=3, failed=2)
    assert "model.tdf:3: x == [1.0, 3.0]: actual" in first.stdout.str()     # the failure says it as written
    rerun = pytester.runpytest("-p", "cacheprovider", "--lf", "-v")
    rerun.assert_outcomes(failed=2)                 # only they: the passing ones are not collected again
    assert "rerun previous 2 failures" in rerun.stdout.str()
    rerun.stdout.fnmatch_lines(["*model.tdf::line 3: x == (1.0, 3.0) FAILED*", "*model.tdf::line 5: x(0) == 2.0 FAILED*"])
    failed_first = pytester.runpytest("-p", "cacheprovider", "--ff", "-v")
    failed_first.assert_outcomes(passed=3, failed=2)
    assert failed_first.stdout.str().index("line 3:") < failed_first.stdout.str().index("other.tdf")


PLAIN = "import numpy as np\nx = np.array([1.0, 2.0])\nassert x.sum() == 3.0\nassert x[1] > 5.0, 'too small'\n"


def test_python_programs_are_collected_only_when_tapecli_python_files_names_them(pytester):
    pytester.makepyfile(model_prog=PLAIN, test_ordinary="def test_one():\n    assert 1 + 1 == 2\n")
    plain = pytester.runpytest("--collect-only", "-q")          # no option: .py files are pytest's own
    plain.stdout.fnmatch_lines(["test_ordinary.py::test_one", "1 test collected*"])
    pytester.makeini("[pytest]\ntapecli_python_files = *_prog.py\n")
    collected = pytester.runpytest("--collect-only", "-q")
    collected.stdout.fnmatch_lines(["model_prog.py::line 3: x.sum() == 3.0", "model_prog.py::line 4: x(1) > 5.0",
                                    "test_ordinary.py::test_one", "3 tests collected*"])
    result = pytester.runpytest("-rA")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*model_prog.py:4: x?1? > 5.0: too small: assert 2.0 > 5.0; actual 2.0, expected 5.0*"])
