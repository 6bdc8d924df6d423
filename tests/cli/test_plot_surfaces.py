"""`tapecli plot`: second derivatives, contour plots of 2-D functions with their gradient field, signed heat
maps, --sweep, and --xlabel/--ylabel/--dpi/--size."""
from __future__ import annotations

import re
import struct
import textwrap

import numpy as np
import pytest

from conftest import cli

SIGMOID = "var x = linspace(-6.0, 6.0, 121)\ny = sigmoid(x)\n"
SURFACE = textwrap.dedent("""\
    var x = [[0.0]]
    var y = [[0.0]]
    f = sin(x) * cos(y) + 0.1 * x * y
    """)


@pytest.fixture(autouse=True)
def mpl():
    return pytest.importorskip("matplotlib")


def _write(tmp_path, name, text):
    (tmp_path / name).write_text(text)
    return tmp_path / name


def _png_size(path):
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def _texts(svg: str) -> set[str]:
    """The texts matplotlib drew (it names each in a comment)."""
    return set(re.findall(r"<!-- (.*?) -->", svg))


def test_second_derivative_through_of_wrt_is_the_hessians_diagonal(tmp_path):
    prog = _write(tmp_path, "s.tdf", SIGMOID)
    out = tmp_path / "s.svg"
    res = cli("plot", prog, "--of", "y", "--wrt", "x", "--x", "x", "--y", "d(y)/d(x)", "--y", "d2(y)/d(x)2",
              "-o", out, "--json")
    assert res.code == 0, res.stderr
    assert res.json["y"] == [{"name": "d(y)/d(x)", "shape": [121]}, {"name": "d2(y)/d(x)2", "shape": [121]}]
    assert {"d(y)/d(x)", "d2(y)/d(x)2"} <= _texts(out.read_text())
    # the values drawn: the hessian's diagonal, which is sigmoid''(x)
    from tapecli.api import Options
    from tapecli.cli import plot
    options = Options(of="y", wrt=["x"])
    _, values = plot.run_values(SIGMOID, "s.tdf", options, None, ["d2(y)/d(x)2"])
    xs, found, kind = plot.series(values, "x", ["d2(y)/d(x)2"], False)
    x = np.linspace(-6.0, 6.0, 121)
    s = 1 / (1 + np.exp(-x))
    assert kind == "lines" and found[0].values.shape == (121,)
    np.testing.assert_allclose(found[0].values, s * (1 - s) * (1 - 2 * s), atol=1e-6)
    hessian = cli("hessian", prog, "--of", "y", "--wrt", "x", "--json").json["hessians"][0]["value"]
    np.testing.assert_array_equal(found[0].values, np.diag(np.asarray(hessian, np.float32)))


def test_a_matrix_that_is_not_diagonal_is_not_drawn_against_x(tmp_path):
    prog = _write(tmp_path, "m.tdf", "var x = [1.0, 2.0, 3.0]\ny = reduce_sum(x) * x\n")
    res = cli("plot", prog, "--of", "y", "--wrt", "x", "--x", "x", "--y", "d2(y)/d(x)2", "-o", tmp_path / "m.png")
    assert res.code == 2 and "nonzero entries off its diagonal" in res.stderr
    assert not (tmp_path / "m.png").exists()
    alone = cli("plot", prog, "--of", "y", "--wrt", "x", "--y", "d2(y)/d(x)2", "-o", tmp_path / "h.png", "--json")
    assert alone.code == 0 and alone.json["kind"] == "heatmap"


@pytest.fixture
def grids(tmp_path):
    gx, gy = np.meshgrid(np.linspace(-3, 3, 31), np.linspace(-2, 2, 21))
    np.save(tmp_path / "gx.npy", gx.astype(np.float32))
    np.save(tmp_path / "gy.npy", gy.astype(np.float32))
    return f"x=@{tmp_path / 'gx.npy'}", f"y=@{tmp_path / 'gy.npy'}"


def test_contours_on_the_real_coordinates_with_the_gradient_as_arrows(tmp_path, grids):
    prog = _write(tmp_path, "f.tdf", SURFACE)
    out = tmp_path / "f.svg"
    res = cli("plot", prog, "--set", grids[0], "--set", grids[1], "--of", "f", "--wrt", "x,y", "--x", "x",
              "--y", "y", "--z", "f", "-o", out, "--json")
    assert res.code == 0, res.stderr
    doc = res.json
    assert doc["kind"] == "contour" and doc["z"] == {"name": "f", "shape": [21, 31]}
    assert doc["arrows"] == ["d(f)/d(x)", "d(f)/d(y)"]
    svg = out.read_text()
    texts = _texts(svg)
    assert {"x", "y", "f", "\u22123", "3", "\u22122", "2"} <= texts          # the axes span the grid's coordinates
    assert "PolyCollection_1" in svg or "Quiver" in svg or svg.count("<path") > 400   # the arrows
    without = cli("plot", prog, "--set", grids[0], "--set", grids[1], "--x", "x", "--y", "y", "--z", "f",
                  "-o", tmp_path / "plain.svg", "--json")
    assert without.code == 0 and without.json["arrows"] is None
    assert (tmp_path / "plain.svg").read_text().count("<path") < svg.count("<path")


def test_the_arrows_are_the_gradient_at_each_point(grids, tmp_path):
    from tapecli.api import Options, parse_set
    from tapecli.cli import plot
    options = Options(of="f", wrt=["x", "y"], overrides=dict(parse_set(g) for g in grids))
    _, values = plot.run_values(SURFACE, "f.tdf", options, None, ["d(f)/d(x)"])
    x, y, z, field = plot.surface(values, "x", ["y"], "f", plot.arrow_names(None, "f", "f", "x,y", "x", ["y"]))
    gx, gy = x.values, y.values
    np.testing.assert_allclose(field[0].values, np.cos(gx) * np.cos(gy) + 0.1 * gy, atol=1e-5)
    np.testing.assert_allclose(field[1].values, -np.sin(gx) * np.sin(gy) + 0.1 * gx, atol=1e-5)


@pytest.mark.parametrize("args, words", [
    (["--x", "x", "--y", "y", "--y", "f", "--z", "f"], "over --x X and one --y Y"),
    (["--x", "f", "--y", "y", "--z", "x", "--arrows", "f"], "give two names"),
    (["--x", "x", "--y", "y", "--z", "f", "--arrows", "f,nope"], "--arrows nope"),
])
def test_contour_usage_errors(tmp_path, grids, args, words):
    prog = _write(tmp_path, "f.tdf", SURFACE)
    res = cli("plot", prog, "--set", grids[0], "--set", grids[1], *args, "-o", tmp_path / "e.png")
    assert res.code == 2 and words in res.stderr, res.stderr
    assert not (tmp_path / "e.png").exists()


def test_a_signed_matrix_diverges_from_zero_with_integer_ticks(tmp_path):
    prog = _write(tmp_path, "j.tdf", "var v = [-1.0, 0.5]\ntape t:\n    y = v * reduce_sum(v)\nj = t.jacobian(y, v)\n")
    res = cli("plot", prog, "--y", "j", "-o", tmp_path / "j.png", "--json")
    assert res.code == 0 and res.json["kind"] == "heatmap", res.stderr
    from tapecli.cli import plot
    from matplotlib.figure import Figure
    fig = Figure()
    ax = fig.add_subplot()
    plot._heatmap(fig, ax, plot.Series("j", np.array([[-1.5, -1.0], [0.5, 0.0]])))     # (the jacobian above)
    image = ax.images[0]
    assert image.cmap.name == "RdBu_r" and image.norm.vmin == -1.5 and image.norm.vmax == 1.5
    for ticks in (ax.get_xticks(), ax.get_yticks()):
        assert len(ticks) and all(float(t).is_integer() for t in ticks)         # whole rows and columns
    ax2 = fig.add_subplot()
    plot._heatmap(fig, ax2, plot.Series("p", np.array([[3.0, 1.0], [0.0, 2.0]])))
    assert ax2.images[0].cmap.name == "viridis"                                 # nothing below 0: no centre


def test_sweep_input(tmp_path):
    prog = _write(tmp_path, "w.tdf", "var x = 0.0\ntape t:\n    y = x * sin(x)\ndy = t.gradient(y, x)\n")
    points = tmp_path / "p.npy"
    np.save(points, np.linspace(-6, 6, 121).astype(np.float32))
    out = tmp_path / "w.svg"
    res = cli("plot", prog, "--sweep", f"x=@{points}", "--x", "x", "--y", "y", "--y", "dy", "-o", out, "--json")
    assert res.code == 0, res.stderr
    assert res.json["y"] == [{"name": "y", "shape": [121]}, {"name": "dy", "shape": [121]}]
    assert sum(len(re.findall(r"\bL ", d)) == 120 for d in re.findall(r'<path d="([^"]*)"', out.read_text())) == 2
    from tapecli.api import Options
    from tapecli.cli import plot
    _, values = plot.run_values(prog.read_text(), "w.tdf", Options(), [f"x=@{points}"], ["dy"])
    swept = cli("grad", prog, "--sweep", f"x=@{points}", "--json").json["gradients"][0]["value"]
    np.testing.assert_allclose(values["dy"], np.asarray(swept, np.float64), rtol=1e-5, atol=1e-7)
    bad = _write(tmp_path, "bad.tdf", "var x = 0.0\ny = x\nif x > 5.0:\n    y = z\n")
    res = cli("plot", bad, "--sweep", f"x=@{points}", "--x", "x", "--y", "y", "-o", tmp_path / "b.png")
    assert res.code == 3 and "at sweep point" in res.stderr and not (tmp_path / "b.png").exists()


def test_labels_dpi_and_size(tmp_path):
    prog = _write(tmp_path, "s.tdf", SIGMOID)
    out = tmp_path / "s.png"
    res = cli("plot", prog, "--x", "x", "--y", "y", "-o", out, "--dpi", "50", "--size", "8x3")
    assert res.code == 0, res.stderr
    assert _png_size(out) == (400, 150)
    svg = tmp_path / "s.svg"
    assert cli("plot", prog, "--x", "x", "--y", "y", "-o", svg, "--xlabel", "input", "--ylabel", "sigmoid(input)",
               "--title", "S").code == 0
    assert {"input", "sigmoid(input)", "S (s.tdf)"} <= _texts(svg.read_text())


@pytest.mark.parametrize("args, words", [
    (["--size", "8"], "--size 8: give WIDTHxHEIGHT"),
    (["--size", "0x3"], "each from 0.5 to 100"),
    (["--dpi", "5"], "--dpi 5"),
    (["--size", "100x100", "--dpi", "2000"], "pixels"),
    (["--xlabel", "$\\frac{1$"], "--xlabel"),
])
def test_style_usage_errors(tmp_path, args, words):
    prog = _write(tmp_path, "s.tdf", SIGMOID)
    res = cli("plot", prog, "--x", "x", "--y", "y", "-o", tmp_path / "s.png", *args)
    assert res.code == 2 and words in res.stderr, res.stderr
