"""The command line through its real entry point: JSON documents, exit codes, errors, options."""

import numpy as np
import pytest

from conftest import cli

PROGRAM = """\
var x = 3.0
var b = 1.0
tape t:
    y = x ** 2
grads = t.gradient(y, [x, b])
print("y is", y)
"""


@pytest.fixture
def prog(tmp_path):
    path = tmp_path / "prog.tdf"
    path.write_text(PROGRAM)
    return path


def test_grad_json_has_one_entry_per_request_and_source(prog):
    res = cli("grad", "--json", prog)
    assert res.code == 0
    doc = res.json
    assert doc["schema"] == "tapecli/1" and doc["command"] == "grad"
    first, second = doc["gradients"]
    assert first == {"name": "grads[0]", "line": 5, "tape": "t", "target": "y", "source": "x", "value": 6.0,
                     "dtype": "float32", "shape": []}
    assert second["name"] == "grads[1]" and second["value"] is None
    assert second["why"] == "b was not read inside the block of tape t (line 3), so the tape never watched it"
    assert "y is 9.0" in res.stderr       # print() goes to stderr outside `run`


def test_run_json_values_types_output(prog):
    doc = cli("run", "--json", prog).json
    assert doc["values"]["grads"] == [6.0, None]
    assert doc["types"]["x"] == {"kind": "variable", "dtype": "float32", "shape": [], "trainable": True}
    assert doc["types"]["t"]["kind"] == "tape" and "t" not in doc["values"]
    assert doc["output"] == ["y is 9.0"]


def test_run_prints_program_output_on_stdout(prog):
    res = cli("run", "--no-color", prog)
    assert res.code == 0 and res.stdout.startswith("y is 9.0\n")


@pytest.mark.parametrize("color", [[], ["--no-color"]])
def test_run_output_only_prints_the_programs_output_alone(prog, color):
    """As `python prog.py` would: the program's lines and nothing after them (no table of named values)."""
    res = cli("run", "--output-only", *color, prog)
    assert res.code == 0 and res.stdout == "y is 9.0\n"


@pytest.mark.parametrize("suffix, text, printed", [
    # printed: CPython's stdout of the same Python programs (the first's stderr is "e", unended too)
    (".py", 'import sys\nprint("a")\nprint("b", end="")\nprint("e", file=sys.stderr, end="")\n', "a\nb"),
    (".py", 'print("x", end="")\nprint("y")\n', "xy\n"),
    (".tdf", 'var x = 1.0\nprint("a")\nprint("b", end="")\n', "a\nb"),
])
def test_run_output_only_leaves_an_unended_last_line_as_python_does(tmp_path, suffix, text, printed):
    path = tmp_path / f"p{suffix}"
    path.write_text(text)
    res = cli("run", "--no-color", "--output-only", path)
    assert res.code == 0 and res.stdout == printed
    assert cli("run", "--no-color", path).stdout.startswith(printed.rstrip("\n") + "\n")      # (a table after it)


def test_grad_table_for_people(prog):
    res = cli("grad", "--no-color", prog)
    assert res.code == 0 and "grads[0]" in res.stdout and "6.0" in res.stdout


def test_stdin_and_of_wrt():
    res = cli("grad", "--json", "--of", "y", "--wrt", "x", "-", input="var x = 2.0\ny = x * x * x\n")
    doc = res.json
    assert doc["file"] == "<stdin>"
    assert doc["gradients"][0]["name"] == "d(y)/d(x)" and doc["gradients"][0]["value"] == 12.0


def test_jacobian_command(tmp_path):
    path = tmp_path / "j.tdf"
    path.write_text("const x = [1.0, 2.0]\ntape g:\n    watch x\n    y = x * x\nj = g.jacobian(y, x)\n")
    doc = cli("jacobian", "--json", path).json
    assert doc["jacobians"][0]["name"] == "j" and doc["jacobians"][0]["value"] == [[2.0, 0.0], [0.0, 4.0]]
    doc = cli("jacobian", "--json", "--of", "y", "--wrt", "x", path).json
    assert doc["jacobians"][0]["value"] == [[2.0, 0.0], [0.0, 4.0]]


def test_watched_command(prog):
    doc = cli("watched", "--json", prog).json
    assert doc["tapes"] == [{"name": "t", "line": 3, "persistent": False,
                             "watched": [{"name": "x", "kind": "variable", "how": "accessed"}], "not_watched": [],
                             "off_the_tape": []}]


@pytest.mark.parametrize("source,kind,line,column", [
    ("var x = 1.0\ny = x +\n", "SyntaxError", 2, 8),
    ("var x = 1.0\ny = sigmod(x)\n", "NameError", 2, 5),
    ("var x = 1.0\nconst d: float64 = 2.0\ny = x * d\n", "TypeError", 3, 5),
    ("const a = [1.0, 2.0]\ny = a @ a @ [[1.0]]\n", "ShapeError", 2, 5),
    ("var x = 1.0\ntape t:\n    y = x * x\na = t.gradient(y, x)\nb = t.gradient(y, x)\n", "TapeError", 5, 5),
    ('var x = 1.0\ntape t:\n    y = x\ng = t.gradient(y, x, unconnected_gradients="no")\n', "ValueError", 4, 5),
])
def test_program_errors_exit_3_with_caret_and_json(tmp_path, source, kind, line, column):
    path = tmp_path / "bad.tdf"
    path.write_text(source)
    res = cli("run", "--no-color", path)
    assert res.code == 3
    head, text_line, caret = res.stderr.splitlines()[:3]
    assert head.startswith(f"{path}:{line}:{column}: {kind}:")
    assert text_line.strip().endswith(source.splitlines()[line - 1].strip())
    assert caret.index("^") == text_line.index("|") + 2 + column - 1
    doc = cli("grad", "--json", path).json
    assert res.code == 3 and doc["error"]["kind"] == kind
    assert (doc["error"]["line"], doc["error"]["column"]) == (line, column)


def test_usage_errors_exit_2(prog, tmp_path):
    assert cli("run", tmp_path / "missing.tdf").code == 2
    assert cli("run", "--set", "nope=1", prog).code == 2
    assert cli("run", "--set", "x=notjson", prog).code == 2
    assert cli("run", "--bogus-option", prog).code == 2
    res = cli("run", "--json", "--set", "nope=1", prog)
    assert res.code == 2 and res.json["error"]["kind"] == "UsageError"


def test_set_values_from_json_and_npy(prog, tmp_path):
    np.save(tmp_path / "x.npy", np.array([1.0, 2.0], dtype=np.float32))
    doc = cli("run", "--json", "--set", f"x=@{tmp_path / 'x.npy'}", prog).json
    assert doc["values"]["grads"] == [[2.0, 4.0], None]
    (tmp_path / "x.json").write_text("[[1, 2]]")
    doc = cli("run", "--json", "--set", f"x=@{tmp_path / 'x.json'}", prog).json
    assert doc["values"]["grads"][0] == [[2.0, 4.0]]
    doc = cli("run", "--json", "--set", "x=[5]", "--dtype", "float64", prog).json
    assert doc["types"]["x"]["dtype"] == "float64" and doc["values"]["grads"][0] == [10.0]


def test_json_numbers_are_shortest_and_non_finite_are_strings(tmp_path):
    path = tmp_path / "n.tdf"
    path.write_text("const a = [0.1, 1.0]\nb = a / 0.0\nc = log(a - 1.0)\n")
    doc = cli("run", "--json", path).json
    assert doc["values"]["a"] == [0.1, 1.0]
    assert doc["values"]["b"] == ["Infinity", "Infinity"]
    assert doc["values"]["c"][1] == "-Infinity" and doc["values"]["c"][0] == "NaN"


def test_warnings_go_to_stderr_and_json(tmp_path):
    path = tmp_path / "w.tdf"
    path.write_text("var x = 2.0\nx = x + 1\n")
    res = cli("run", "--json", path)
    assert res.json["warnings"][0]["line"] == 2
    assert "w.tdf:2: warning:" in res.stderr
    assert "warning" not in cli("run", "--json", "-q", path).stderr


def test_version_and_help():
    assert cli("--version").stdout.startswith("tapecli ")
    for command in ("run", "grad", "jacobian", "watched"):
        res = cli(command, "--help")
        assert res.code == 0 and "--json" in res.stdout
