"""A program's matplotlib (tapecli/execution/run_matplotlib.py): a stand-in that draws nothing, warns once per run
and lets the program go on, never the real library (the differential programs of tests/data/python/plots_*.py
check the printed output against CPython's with the Agg backend)."""
from __future__ import annotations

import sys

import pytest

from conftest import cli
from tapecli import api, execution
from tapecli.errors import LimitError, TdfError
from tapecli.execution.run_matplotlib import WARNING

PLOTS = """import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import matplotlib as mpl
from matplotlib import pyplot
fig, axes = plt.subplots(2, 2)
for ax in axes.flat:
    ax.plot([1, 2, 3])
    ax.set_title("t")
plt.savefig("plot.png")
fig.savefig("fig.pdf")
plt.show()
print(plt is pyplot, mpl.rcParams is plt.rcParams)
"""


def _run(source: str):
    return api.run_source(source, "prog.py")


def test_a_program_that_plots_prints_its_output_and_warns_once_per_run(tmp_path):
    (tmp_path / "prog.py").write_text(PLOTS)
    before = sorted(p.name for p in tmp_path.iterdir())
    for _ in range(2):          # (a second run warns again: once per run)
        r = cli("run", "--no-color", "--output-only", "prog.py", cwd=tmp_path)
        assert r.code == 0, r.stderr
        assert r.stdout == "True True\n"
        assert r.stderr.count(WARNING) == 1 and "prog.py:1: warning: " in r.stderr, r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == before        # savefig wrote nothing


def test_the_real_matplotlib_is_never_imported():
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        pytest.skip(f"this process has imported {name} already")
    _run(PLOTS)
    assert "matplotlib" not in sys.modules


def test_open_stays_refused_in_a_program_that_plots():
    with pytest.raises(TdfError) as e:
        _run("import matplotlib.pyplot as plt\nplt.plot([1])\nf = open('loss.png', 'w')\n")
    assert e.value.kind == "NameError" and "open() is not available" in e.value.message and e.value.line == 3


def test_what_a_program_passes_is_never_called_or_iterated():
    source = """import matplotlib.pyplot as plt
def points():
    print("drawn")
    yield 1
class Data:
    def __iter__(self):
        print("iterated")
        return iter([1])
    def __len__(self):
        print("measured")
        return 1
def formatter(x, pos):
    print("called")
    return str(x)
lines = plt.plot(points(), Data())
plt.gca().xaxis.set_major_formatter(formatter)
plt.scatter(Data(), points(), c=formatter)
print(len(lines))
"""
    assert _run(source).output == ["1"]


@pytest.mark.parametrize("source, printed", [
    ("import matplotlib.pyplot as plt\nprint(plt.figure(figsize=(3, 2), dpi=50))", "Figure(150x100)"),
    ("import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\nprint(repr(fig), ax)",
     "<Figure size 640x480 with 1 Axes> Axes(0.125,0.11;0.775x0.77)"),
    ("import matplotlib.pyplot as plt\nprint(plt.subplots(1, 4)[1].shape, plt.subplots(4, 1, squeeze=False)[1].shape)",
     "(4,) (4, 1)"),
    ("import matplotlib.pyplot as plt\nline, = plt.plot([1, 2], label='loss')\n"
     "print(line, len(plt.plot([1], [2], 'r', [3], [4])))",
     "Line2D(loss) 2"),
    ("import matplotlib.pyplot as plt\nprint(plt.gca().some_method(1, k=2).anything[0])",
     "<matplotlib stand-in anything>"),
    ("import matplotlib.pyplot as plt\nwith plt.style.context('ggplot'):\n    print(plt.style.use('x'))", "None"),
    ("import matplotlib\nprint(hasattr(matplotlib, '__version__'))", "False"),
])
def test_the_stand_ins_answer_as_matplotlib_does(source, printed):
    assert _run(source).output == [printed]


def test_a_tensorflow_program_that_plots_runs_on_cpython():
    source = """import tensorflow as tf
import matplotlib.pyplot as plt
w = tf.Variable(2.0)
losses = []
for step in range(3):
    with tf.GradientTape() as tape:
        loss = (w - 5.0) ** 2
    w.assign_sub(0.1 * tape.gradient(loss, w))
    losses.append(float(loss))
plt.plot(losses)
plt.savefig("loss.png")
print(f"{losses[-1]:.4f}")
"""
    assert execution.python_only(source, "prog.py") is not None
    assert _run(source).output == ["3.6864"]


def test_a_tdf_program_cannot_import_it():
    with pytest.raises(TdfError) as e:
        _run("import matplotlib.pyplot as plt\nvar x = 3.0\ntape t:\n    y = x ** 2\n")
    assert "cannot import matplotlib.pyplot" in e.value.message and e.value.line == 1


def test_a_submodule_the_stand_in_lacks_is_refused():
    with pytest.raises(TdfError) as e:
        _run("import matplotlib.backends.backend_pdf\n")
    assert e.value.kind == "NameError" and "matplotlib.backends.backend_pdf" in e.value.message


def test_the_modules_scripts_import_to_style_their_plots_are_stand_ins_too():
    source = """import matplotlib.pyplot as plt
import matplotlib.patches as mpatches
import matplotlib.colors as mcolors
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator
import matplotlib
fig = plt.figure()
print(isinstance(fig, Figure), Figure(figsize=(2, 2)))
plt.gca().xaxis.set_major_locator(MaxNLocator(integer=True))
patch = mpatches.Patch(color="red", label="x")
plt.legend(handles=[patch])
cmap = mcolors.ListedColormap(["red", "blue"])
print(matplotlib.colors is mcolors, cmap)
"""
    assert _run(source).output == ["True Figure(200x200)", "True <matplotlib stand-in ListedColormap>"]


@pytest.mark.parametrize("call", ["plt.hist([1, 2], bins=10**9)", "plt.subplots(10**4, 10**4)"])
def test_what_a_stand_in_would_make_is_weighed_before_it_is_made(call):
    with pytest.raises(LimitError):
        _run(f"import matplotlib.pyplot as plt\nr = {call}\n")


def test_two_runs_keep_their_own_figures_and_settings():
    first = _run("import matplotlib.pyplot as plt\nplt.rcParams['figure.figsize'][0] = 10\nplt.figure()\n"
                 "print(plt.get_fignums(), plt.figure())")
    second = _run("import matplotlib.pyplot as plt\nplt.figure()\nprint(plt.get_fignums(), plt.figure())")
    assert first.output == ["[1] Figure(1000x480)"] and second.output == ["[1] Figure(640x480)"]
