"""Every table fits the console: at 60, 80 and 120 columns, piped (no terminal), no line is wider than COLUMNS,
names are never broken, and a small matrix keeps every element (columns are dropped, or the table becomes one
block per entry, before an element is elided)."""
import re
import textwrap

import numpy as np
import pytest

from conftest import cli

PROGRAM = textwrap.dedent("""\
    var x = [1.0, 2.0, 3.0]
    var w = [[0.5, -1.25, 2.0, 3.5], [1.0, 2.0, 3.0, 4.0], [0.125, 0.25, 0.375, 0.5]]
    var b = 0.0
    var u = 1.0
    var v = 2.0
    tape t(persistent=True):
        y = x * x * sum(x)
        loss = sum(matmul(reshape(x, [1, 3]), w)) + b
        f = u * u * v + sin(v)
    dy_dx = t.jacobian(y, x)
    g = t.gradient(loss, [w, b])
    """)

COMMANDS = [("grad",), ("jacobian",), ("hessian", "--of", "f", "--wrt", "u,v"), ("hessian", "--of", "y", "--wrt", "x"),
            ("run",)]


def _numbers(text: str) -> list[float]:
    return [float(t) for t in re.findall(r"-?\d+\.\d*(?:e[-+]?\d+)?|-?\d+(?![\d.])", text)]


def _elements_present(text: str, value) -> bool:
    """Every element of ``value`` appears among the numbers in ``text``, in order, rows whole."""
    found = _numbers(text)
    want = [float(x) for x in np.asarray(value, dtype=np.float64).reshape(-1)]
    it = iter(found)
    return all(any(np.isclose(x, y, rtol=1e-4) for y in it) for x in want)


@pytest.mark.parametrize("width", [60, 80, 120])
@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_tables_fit_the_width_with_names_whole_and_small_matrices_whole(tmp_path, command, width):
    prog = tmp_path / "m.tdf"
    prog.write_text(PROGRAM)
    r = cli(*command, "--no-color", prog, env={"COLUMNS": str(width)})
    assert r.code == 0, r.stderr
    lines = r.stdout.rstrip("\n").split("\n")
    assert max(len(line) for line in lines) <= width, r.stdout
    doc = cli(*command, "--json", prog).json
    if command[0] == "run":
        names = [n for n, v in doc["values"].items()]
        values = {n: v for n, v in doc["values"].items() if isinstance(v, list) and n != "g"}
    else:
        entries = doc[{"grad": "gradients", "jacobian": "jacobians", "hessian": "hessians"}[command[0]]]
        names = [e["name"] for e in entries]
        values = {e["name"]: e["value"] for e in entries}
    words = set(re.split(r"[\s│┃]+", r.stdout)) | {w.rstrip(":") for w in r.stdout.split()}
    for name in names:                                      # each name whole, somewhere on one line
        assert name in words, (name, r.stdout)
    text = re.sub(r"[│┃]", " ", r.stdout)
    for name, value in values.items():
        assert np.size(value) <= 12
        assert _elements_present(text, value), (name, value, r.stdout)
    assert "..." not in r.stdout


@pytest.mark.parametrize("width", [60, 80, 120])
def test_the_round4_hessian_at_each_width(tmp_path, width):
    prog = tmp_path / "xy.tdf"
    prog.write_text("var x = 1.0\nvar y = 2.0\nf = x * x * y + sin(y)\n")
    for wrt in ("x", "x,y"):
        r = cli("hessian", prog, "--of", "f", "--wrt", wrt, env={"COLUMNS": str(width)})
        assert r.code == 0 and max(len(line) for line in r.stdout.splitlines()) <= width
        assert "(implicit)" in r.stdout or width < 80
        for name in (["d2(f)/d(x)2"] if wrt == "x" else ["d2(f)/d(x)2", "d2(f)/d(x)d(y)", "d2(f)/d(y)d(x)",
                                                         "d2(f)/d(y)2"]):
            assert re.search(rf"(^|[\s│]){re.escape(name)}($|[\s│])", r.stdout, re.M), r.stdout


def test_a_small_matrix_too_wide_for_a_table_gets_a_block_of_its_own(tmp_path):
    prog = tmp_path / "wide.tdf"
    prog.write_text("var a_rather_long_variable_name = [1.25, -2.5, 3.75, 4.125, 5.5, 6.625]\n"
                    "tape t:\n    y = sum(a_rather_long_variable_name * a_rather_long_variable_name)\n"
                    "gradient_of_the_loss = t.gradient(y, a_rather_long_variable_name)\n")
    r = cli("grad", prog, env={"COLUMNS": "60"})
    assert r.code == 0 and max(len(line) for line in r.stdout.splitlines()) <= 60
    assert "gradient_of_the_loss" in r.stdout.splitlines()               # the block's head, whole
    assert "[ 2.5  -5.    7.5   8.25 11.   13.25]" in r.stdout           # every element, on its own line
    assert "source: a_rather_long_variable_name" in r.stdout


def test_long_words_in_other_tables_are_broken_at_spaces_only(tmp_path):
    prog = tmp_path / "w.tdf"
    prog.write_text("var weights_of_the_first_layer = 1.0\nvar c = 2.0\ntape tape_with_a_long_name:\n"
                    "    y = weights_of_the_first_layer * c\n")
    for width in (40, 60, 80):
        r = cli("watched", prog, env={"COLUMNS": str(width)})
        assert r.code == 0 and max(len(line) for line in r.stdout.splitlines()) <= width, r.stdout
        assert "weights_of_the_first_layer" in r.stdout and "tape_with_a_long_name" in r.stdout


def test_the_table_layout_without_a_process():
    from tapecli.cli.render import TensorCell, blocks, fit_table
    arr = np.arange(12, dtype=np.float32).reshape(3, 4)
    columns = ["name", "line", "tape", "value", "dtype"]
    rows = [["a_long_name", "", "t", TensorCell(arr), "float32"]]
    cols, laid = fit_table(columns, rows, 120, drop=("line", "tape"), wrap=("value",))
    assert cols == columns and "[ 8.  9. 10. 11.]]" in laid[0][3]
    cols, laid = fit_table(columns, rows, 56, drop=("line", "tape"), wrap=("value",))
    assert cols == ["name", "tape", "value", "dtype"]                    # the empty column goes first
    assert fit_table(columns, rows, 30, drop=("line", "tape"), wrap=("value",)) is None
    text = blocks(["T"], columns, rows, 30)
    assert text.splitlines()[:3] == ["T", "", "a_long_name"] and " [ 8.  9. 10. 11.]]" in text
    assert max(len(line) for line in text.splitlines()) <= 30


@pytest.mark.parametrize("tf_import", ["", "import tensorflow as tf\n"])
def test_a_large_numpy_array_of_a_python_program_is_elided_with_its_summary(tmp_path, tf_import):
    """A NumPy array that CPython's run leaves in the program's names gets a tensor's cell (its printout elided,
    its summary line), as the interpreter's NumPy arrays do, not all of its rows."""
    prog = tmp_path / "np_table.py"
    prog.write_text(f"import numpy as np\n{tf_import}x = np.arange(200.0).reshape(50, 4)\n")
    r = cli("run", prog, env={"COLUMNS": "80", "TAPECLI_TF_ON_CPYTHON": "1"})
    assert r.code == 0 and "min 0  max 199  mean 99.5" in r.stdout
    assert len(r.stdout.splitlines()) < 15 and "[ 24.  25.  26.  27.]" not in r.stdout
