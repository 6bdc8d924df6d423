"""tapecli.run on any existing path, results read by name, a short repr, warnings through `warnings`."""
import warnings

import pytest

import tapecli

PROGRAM = "var x = 3.0\ntape t:\n    y = x ** 2\ndy_dx = t.gradient(y, x)\n"
PYTHON = """\
import tensorflow as tf

x = tf.Variable(3.0)
with tf.GradientTape() as tape:
  y = x**2
dy_dx = tape.gradient(y, x)
"""


def test_run_reads_any_existing_path(tmp_path, monkeypatch):
    (tmp_path / "x.py").write_text(PYTHON)
    (tmp_path / "prog").write_text(PROGRAM)         # no suffix at all
    monkeypatch.chdir(tmp_path)
    for path in ("x.py", str(tmp_path / "x.py"), "prog"):
        assert float(tapecli.run(path).gradient("dy_dx")) == 6.0
    with pytest.raises(tapecli.UsageError, match="no such file"):
        tapecli.run("missing.py")


def test_results_by_name_and_a_short_repr():
    r = tapecli.run(PROGRAM)
    assert float(r["dy_dx"]) == float(r.gradient("dy_dx")) == 6.0 and float(r["x"]) == 3.0 and "y" in r
    with pytest.raises(KeyError, match="did you mean 'dy_dx'"):
        r.gradient("dy_dz")
    with pytest.raises(KeyError):
        r["nope"]
    implicit = tapecli.run(PROGRAM, of="y", wrt=["x"])
    assert float(implicit["d(y)/d(x)"]) == 6.0
    assert repr(r) == "<tapecli.Result '<source>' values=[x, y, dy_dx] gradients=[dy_dx]>"
    jac = tapecli.run("var x = [1.0, 2.0]\ntape t:\n    y = x * x\nj = t.jacobian(y, x)\n")
    assert jac.jacobian("j").tolist() == [[2.0, 0.0], [0.0, 4.0]]


def test_warnings_also_go_through_python_warnings():
    program = "var x = 1.0\ntape t:\n    x = x + 1.0\n    y = x * 2.0\ng = t.gradient(y, x)\n"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = tapecli.run(program)
    assert r.warnings and [w.category for w in caught] == [tapecli.TdfWarning] * len(r.warnings)
    assert str(caught[0].message).startswith("<source>:3: x was a variable, now a tensor")
    with warnings.catch_warnings():
        warnings.simplefilter("error", tapecli.TdfWarning)
        with pytest.raises(tapecli.TdfWarning):
            tapecli.run(program)
