"""`tapecli plot` (files and the terminal, bad requests) and readable tensors in the tables."""
from __future__ import annotations

import json
import re
import struct
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from conftest import cli

ROOT = Path(__file__).resolve().parents[2]
SIGMOID = ROOT / "examples" / "13_sigmoid_curve.tdf"
PLAIN = {"NO_COLOR": "1", "COLUMNS": "80", "LINES": "20"}


@pytest.fixture
def mpl():
    return pytest.importorskip("matplotlib")


@pytest.fixture
def plotext():
    return pytest.importorskip("plotext")


# ------------------------------------------------------------------- files

def test_png_of_the_sigmoid_curve(mpl, tmp_path):
    out = tmp_path / "sigmoid.png"
    r = cli("plot", SIGMOID, "--x", "x", "--y", "y", "--y", "dy_dx", "-o", out)
    assert r.code == 0 and r.stdout == "", r.stderr
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (700, 450)            # 7 x 4.5 inches at 100 dpi
    assert len(data) > 10_000                       # two curves, axes and text, not an empty canvas


def test_svg_has_both_curves_and_their_names(mpl, tmp_path):
    out = tmp_path / "sigmoid.svg"
    r = cli("plot", SIGMOID, "--x", "x", "--y", "y", "--y", "dy_dx", "-o", out, "--title", "sigmoid")
    assert r.code == 0, r.stderr
    svg = out.read_text()
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    paths = re.findall(r'<path d="([^"]*)"', svg)
    # each curve is one path through the 201 points: a move and 200 line segments
    curves = [d for d in paths if len(re.findall(r"\bL ", d)) == 200]
    assert len(curves) == 2
    for text in ("y", "dy_dx", "x", "sigmoid (13_sigmoid_curve.tdf)"):      # matplotlib names each text drawn
        assert f"<!-- {text} -->" in svg
    again = tmp_path / "again.svg"
    cli("plot", SIGMOID, "--x", "x", "--y", "y", "--y", "dy_dx", "-o", again, "--title", "sigmoid")
    assert again.read_text() == svg                 # no date, fixed ids: the same bytes each time


def test_pdf_and_a_heat_map(mpl, tmp_path):
    prog = tmp_path / "j.tdf"
    prog.write_text("var x = linspace(-1.0, 1.0, 6)\ntape t:\n    y = x * x\nj = t.jacobian(y, x)\n")
    out = tmp_path / "j.pdf"
    r = cli("plot", prog, "--y", "j", "-o", out)
    assert r.code == 0, r.stderr
    assert out.read_bytes()[:5] == b"%PDF-"


def test_a_sweep_over_a_grid_from_set(mpl, tmp_path):
    grid = tmp_path / "grid.npy"
    np.save(grid, np.linspace(-2.0, 2.0, 301).astype(np.float32))     # the program reads y[100]: 101 points or more
    out = tmp_path / "sweep.svg"
    r = cli("plot", SIGMOID, "--set", f"x=@{grid}", "--x", "x", "--y", "dy_dx", "-o", out, "--json")
    assert r.code == 0, r.stdout + r.stderr
    doc = r.json
    assert doc["command"] == "plot" and doc["output"] == str(out)
    assert doc["x"] == "x" and doc["y"] == [{"name": "dy_dx", "shape": [301]}]
    svg = out.read_text()
    assert any(len(re.findall(r"\bL ", d)) == 300 for d in re.findall(r'<path d="([^"]*)"', svg))
    assert "<!-- \u22122.0 -->" in svg and "<!-- \u221210.0 -->" not in svg       # the x axis spans the grid


def test_gradient_entry_names(mpl, tmp_path):
    out = tmp_path / "d.png"
    r = cli("plot", SIGMOID, "--of", "y", "--wrt", "x", "--x", "x", "--y", "d(y)/d(x)", "-o", out)
    assert r.code == 0 and out.read_bytes()[:4] == b"\x89PNG", r.stderr
    prog = tmp_path / "g.tdf"
    prog.write_text("var a = linspace(0.0, 1.0, 5)\nvar b = 2.0\nconst c = ones([5])\ntape t:\n"
                    "    loss = reduce_sum(a * a)\ngrads = t.gradient(loss, [a, b, c])\n")
    r = cli("plot", prog, "--x", "a", "--y", "grads[0]", "-o", tmp_path / "g.png")
    assert r.code == 0, r.stderr
    r = cli("plot", prog, "--x", "a", "--y", "grads[2]", "-o", tmp_path / "none.png")
    assert r.code == 2 and "--y grads[2] is None" in r.stderr and "not watched" in r.stderr
    assert not (tmp_path / "none.png").exists()


# ---------------------------------------------------------------- terminal

def test_the_terminal_plot_at_a_fixed_size(plotext):
    r = cli("plot", SIGMOID, "--x", "x", "--y", "y", "--y", "dy_dx", env=PLAIN)
    assert r.code == 0, r.stderr
    lines = r.stdout.rstrip("\n").split("\n")
    assert 17 <= len(lines) <= 19 and {len(line) for line in lines} == {80}     # at most LINES - 1 rows, COLUMNS wide
    assert "\x1b[" not in r.stdout                                              # NO_COLOR: no escapes
    assert "13_sigmoid_curve.tdf" in lines[0]
    text = r.stdout
    assert "* y" in text and "o dy_dx" in text                  # the legend, one character per line
    assert "-10.0" in lines[-2] and "10.0" in lines[-2]          # the x ticks
    assert lines[-1].split() == ["value", "x"]                   # the axis labels
    # the sigmoid rises from the bottom left to the top right
    assert "*" in lines[2] and lines[2].rindex("*") > 60
    assert lines[-4].startswith("0.00┤") and lines[-4][5] in "*o"
    # dy_dx peaks at 0.25 in the middle (x = 0)
    peak = next(line for line in lines if line.startswith("0.25┤"))
    assert "o" in peak[35:50] and "o" not in peak[5:25]


def test_the_terminal_heat_map_without_colors(plotext, tmp_path):
    prog = tmp_path / "j.tdf"
    prog.write_text("var x = linspace(1.0, 4.0, 4)\ntape t:\n    y = x * x * x\nj = t.jacobian(y, x)\n")
    r = cli("plot", prog, "--y", "j", env=PLAIN)
    assert r.code == 0, r.stderr
    lines = r.stdout.rstrip("\n").split("\n")
    # jacobian of x**3: diag(3x**2) = diag(3, 12, 27, 48) on the ten steps " .:-=+*#%@" from 0 to 48:
    # 3/48*9 = 0.56 -> '.', 12/48*9 = 2.25 -> ':', 27/48*9 = 5.06 -> '+', 48 -> '@'
    assert lines[1:7] == ["+----+", "|.   |", "| :  |", "|  + |", "|   @|", "+----+"]
    assert lines[-1] == "j [4, 4]: ' ' 0 ... '@' 48"


# ---------------------------------------------------------------- bad input

@pytest.fixture
def values_prog(tmp_path):
    prog = tmp_path / "v.tdf"
    prog.write_text("var x = linspace(0.0, 1.0, 8)\nnums = [1.0, 2.0, 3.0]\nword = \"abc\"\n"
                    "rag = [zeros([2]), zeros([3])]\ncube = zeros([2, 2, 2])\nm = zeros([3, 3])\n")
    return prog


@pytest.mark.parametrize("args, message", [
    (["--y", "zz"], "--y zz: the program binds no value of that name; the names it binds: x, nums, word, rag, cube, m"),
    (["--y", "word"], "--y word is a string, not numbers"),
    (["--y", "rag"], "--y rag is a ragged list (elements of shapes [2], [3])"),
    (["--y", "cube"], "--y cube has shape [2, 2, 2]"),
    (["--x", "x", "--y", "nums"], "--x x has shape [8] but --y nums has shape [3]"),
    (["--x", "x", "--y", "m"], "--y m has shape [3, 3]: a 2-D value is drawn alone as a heat map"),
    (["--x", "cube", "--y", "x"], "--x cube has shape [2, 2, 2]"),
    (["--y", "m", "--logy"], "--logy is for line plots"),
    (["--x", "x"], "plot needs at least one --y NAME"),
])
def test_bad_requests_are_usage_errors_and_write_nothing(mpl, values_prog, tmp_path, args, message):
    out = tmp_path / "out.png"
    r = cli("plot", values_prog, *args, "-o", out)
    assert r.code == 2 and message in r.stderr, r.stderr
    assert list(tmp_path.iterdir()) == [values_prog]            # no file, no temporary left behind


def test_bad_output_names(values_prog, tmp_path):
    r = cli("plot", values_prog, "--y", "x", "-o", tmp_path / "a.gif")
    assert r.code == 2 and "must end in .png, .svg or .pdf" in r.stderr
    r = cli("plot", values_prog, "--y", "x", "-o", tmp_path / "no" / "a.png")
    assert r.code == 2 and "no such folder" in r.stderr
    r = cli("plot", values_prog, "--y", "zz", "-o", tmp_path / "a.png", "--json")
    assert r.code == 2 and r.json["error"]["kind"] == "UsageError"


def test_without_the_extra_plot_says_how_to_install_it(tmp_path, values_prog):
    for module in ("matplotlib", "plotext"):
        (tmp_path / "shadow" / module).mkdir(parents=True)
        (tmp_path / "shadow" / module / "__init__.py").write_text("raise ImportError('not installed')\n")
    env = {"PYTHONPATH": str(tmp_path / "shadow") + ":" + ":".join(sys.path)}
    r = cli("plot", values_prog, "--y", "x", "-o", tmp_path / "a.png", env=env)
    assert r.code == 2 and "pip install 'tapecli[plot]'" in r.stderr
    r = cli("plot", values_prog, "--y", "x", env=env)
    assert r.code == 2 and "pip install 'tapecli[plot]'" in r.stderr
    assert cli("grad", values_prog, env=env).code == 0           # the other commands do not need it


# ---------------------------------------------------------------- tables

def _gradient_program(tmp_path, shapes):
    lines = [f"var w{i} = normal({list(s)}, seed={i + 1})" for i, s in enumerate(shapes)]
    prod = " * ".join(f"w{i}" for i in range(len(shapes)))
    lines += ["tape t:", f"    loss = reduce_sum({prod})",
              f"grads = t.gradient(loss, [{', '.join(f'w{i}' for i in range(len(shapes)))}])"]
    prog = tmp_path / "g.tdf"
    prog.write_text("\n".join(lines) + "\n")
    return prog


def test_a_4_by_16_gradient_fits_100_columns_in_a_few_lines(tmp_path):
    prog = _gradient_program(tmp_path, [(4, 16), (4, 16)])
    r = cli("grad", prog, env={"COLUMNS": "100"})
    assert r.code == 0, r.stderr
    lines = r.stdout.rstrip("\n").split("\n")
    assert max(len(line) for line in lines) <= 100
    assert len(lines) <= 5 + 2 * 6                              # title, rules and header; six lines an entry
    grads = np.array(cli("grad", "--json", prog).json["gradients"][0]["value"], dtype=np.float32)
    body = "\n".join(line.split("│")[6] for line in lines[4:-1])      # the value column
    assert "..." in body                                         # 16 columns do not fit: elided
    first, last = np.format_float_positional(grads[0, 0], precision=4), np.format_float_positional(grads[-1, -1],
                                                                                                     precision=4)
    assert first.rstrip("0").rstrip(".") in body and last.rstrip("0").rstrip(".") in body


def test_four_16_by_16_gradients_under_30_lines(tmp_path):
    prog = _gradient_program(tmp_path, [(16, 16)] * 4)
    r = cli("grad", prog, env={"COLUMNS": "100"})
    assert r.code == 0, r.stderr
    lines = r.stdout.rstrip("\n").split("\n")
    assert len(lines) < 30 and max(len(line) for line in lines) <= 100
    assert r.stdout.count("NaN 0") == 4
    full = cli("grad", "--full", prog, env={"COLUMNS": "100"})
    assert full.code == 0 and "..." not in full.stdout and len(full.stdout.split("\n")) > 4 * 16


def test_the_json_output_keeps_every_element(tmp_path):
    prog = _gradient_program(tmp_path, [(16, 16)] * 2)
    doc = cli("grad", "--json", prog).json
    assert np.array(doc["gradients"][0]["value"]).shape == (16, 16)


def test_format_array_elides_like_numpy_and_summarises():
    from tapecli.cli.tensorfmt import format_array, summary
    a = np.arange(64, dtype=np.float32).reshape(4, 16) - 10.5
    text = format_array(a, 40)
    lines = text.split("\n")
    assert max(map(len, lines)) <= 40 and len(lines) <= 6
    assert lines[0].startswith("[[-10.5") and "..." in lines[0] and lines[0].endswith("4.5]")
    assert "min -10.5" in text and "max 52.5" in text and "mean 21" in text and "NaN 0" in text
    norm = float(np.sqrt((a.astype(np.float64) ** 2).sum()))
    assert f"norm {norm:.4g}" in summary(a)
    small = np.array([1.0, np.nan, 3.0])
    assert summary(small) == "[3] float64  min 1  max 3  mean 2  norm 3.162  NaN 1"


_LINE = st.text(alphabet="abc0123 .-[]", max_size=12)
_CELL = st.lists(_LINE, min_size=1, max_size=4).map("\n".join)


@settings(max_examples=200, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
@given(st.integers(1, 4).flatmap(lambda n: st.tuples(st.lists(_LINE, min_size=n, max_size=n),
                                                     st.lists(st.lists(_CELL, min_size=n, max_size=n), max_size=3))),
       st.sampled_from([20, 40, 80]))
def test_the_plain_table_lays_out_multi_line_cells_as_rich_does(table, width):
    from cli import test_startup as ts
    from tapecli.cli.render import plain_table
    columns, rows = table
    with ts.plain_stdout(width):
        plain = plain_table("T", columns, rows)
    if plain is not None:
        assert plain == ts._rich_table("T", columns, rows, width)


def test_plot_json_is_a_document(mpl, tmp_path):
    out = tmp_path / "s.png"
    r = cli("plot", SIGMOID, "--x", "x", "--y", "y", "-o", out, "--json")
    assert r.code == 0 and json.loads(r.stdout)["schema"] == "tapecli/1"


def test_tensor_text_is_not_read_as_rich_markup(tmp_path):
    prog = tmp_path / "n.tdf"
    prog.write_text("x = zeros([3]) / zeros([3])\nb = ones([2, 3]) > 0.0\n")
    r = cli("run", "--no-color", prog, env={"FORCE_COLOR": "1", "COLUMNS": "100"})     # the Rich path
    assert r.code == 0 and "[nan nan nan]" in r.stdout and "True 6 of 6" in r.stdout
