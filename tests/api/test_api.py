"""The library API: tapecli.run, its Result, its errors, and runs in threads that never see each other."""
from __future__ import annotations

import sys
import threading
from pathlib import Path

import numpy as np
import pytest

import tapecli
from tapecli import api

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

CUBIC = """\
var x = 2.0
tape t(persistent=True):
    y = x * x * x
    watch_me = sin(y)
g = t.gradient(y, x)
h = t.gradient(watch_me, x)
print("done")
"""

NONE_AND_WARNING = """\
var w = [[1.0, 2.0], [3.0, 4.0]]
const c = [1.0, -1.0]
tape t:
    z = reduce_sum(relu(c @ w) ** 2)
dz = t.gradient(z, [w, c])
"""


def test_run_source_gives_values_and_gradients():
    r = tapecli.run(CUBIC)
    assert r.values["y"] == np.float32(8.0)
    assert [e["name"] for e in r.gradients] == ["g", "h"]
    assert r.gradients[0]["value"] == np.float32(12.0)        # 3 x^2
    assert isinstance(r.gradients[0]["value"], np.ndarray)
    assert r.output == ["done"]


def test_run_a_path_with_sets_and_dtype():
    r = tapecli.run(EXAMPLES / "01_first_gradient.tdf", sets={"x": 5.0}, dtype="float64")
    assert r.gradients[0]["value"] == 10.0
    assert r.gradients[0]["dtype"] == "float64"


def test_none_gradients_carry_why():
    r = tapecli.run(NONE_AND_WARNING)
    by_source = {e["source"]: e for e in r.gradients}
    assert by_source["c"]["value"] is None and by_source["c"]["why"]
    np.testing.assert_allclose(by_source["w"]["value"], [[0.0, 0.0], [0.0, 0.0]])


def test_errors_raise_with_positions():
    with pytest.raises(tapecli.TdfError) as info:
        tapecli.run("x = 1.0\ny = undefined_name + x\n")
    assert (info.value.kind, info.value.line, info.value.column) == ("NameError", 2, 5)
    with pytest.raises(tapecli.UsageError):
        tapecli.run(CUBIC, sets={"nope": 1.0})


def test_two_programs_in_two_threads_see_nothing_of_each_other():
    expected = {name: tapecli.run(src) for name, src in (("a", CUBIC), ("b", NONE_AND_WARNING))}
    failures = []

    def work(name, src):
        for _ in range(50):
            r = tapecli.run(src)
            want = expected[name]
            same = (r.output == want.output and r.warnings == want.warnings
                    and len(r.gradients) == len(want.gradients)
                    and all((e["value"] is None and w["value"] is None) or np.array_equal(e["value"], w["value"])
                            for e, w in zip(r.gradients, want.gradients)))
            if not same:
                failures.append(name)

    limit = sys.getrecursionlimit()
    threads = [threading.Thread(target=work, args=(n, s)) for n, s in (("a", CUBIC), ("b", NONE_AND_WARNING))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    assert sys.getrecursionlimit() == limit        # each run raises it while it runs: together they restore it


def test_runs_in_threads_leave_the_callers_recursion_limit_as_they_found_it():
    """The order that a save-and-restore by hand gets wrong: the first to raise the limit restores it first,
    and the second then restores what it saw, the first's raised limit."""
    from tapecli.recursion import recursion_limit
    limit = sys.getrecursionlimit()
    first_open, second_open, first_closed = threading.Event(), threading.Event(), threading.Event()
    held = []

    def first():
        with recursion_limit(20_000):
            first_open.set()
            second_open.wait()
        first_closed.set()

    def second():
        first_open.wait()
        with recursion_limit(30_000):
            second_open.set()
            first_closed.wait()
            held.append(sys.getrecursionlimit())        # the open block's limit holds

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert held == [30_000] and sys.getrecursionlimit() == limit


@pytest.mark.parametrize("on_cpython", ["auto", "1"])
def test_numpys_print_options_of_one_run_never_reach_the_next(on_cpython, monkeypatch):
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", on_cpython)
    first = ("import numpy as np\nimport tensorflow as tf\nnp.set_printoptions(precision=3)\n"
             "print(np.array([1.23456789]))\n")
    second = "import numpy as np\nimport tensorflow as tf\nprint(np.array([1.23456789]))\n"
    assert [str(line) for line in api.run_source(first, "a.py").output] == ["[1.235]"]
    assert [str(line) for line in api.run_source(second, "b.py").output] == ["[1.23456789]"]


@pytest.mark.parametrize("name, loop", [
    ("loop.py", "import tensorflow as tf\nw = tf.Variable([1.0, 2.0])\nfor step in range(50):\n"
                "    with tf.GradientTape() as t:\n        y = tf.reduce_sum(w * w)\n"
                "    g = t.gradient(y, w)\n    w.assign_sub(0.1 * g)\n"),
    ("loop.tdf", "var w = [1.0, 2.0]\nfor step in range(50):\n    tape t:\n        y = reduce_sum(w * w)\n"
                 "    g = t.gradient(y, w)\n    w.assign_sub(0.1 * g)\n")])
def test_a_run_that_reports_no_request_holds_only_the_last_steps_gradients(name, loop):
    """`run` and `bench` report no gradient request: the run's log forgets each step's, where a run that reports
    them keeps every step's, in the order made."""
    from tapecli.api import Options, run_source
    kept = run_source(loop, name, Options())
    forgotten = run_source(loop, name, Options(keep_requests=False))
    assert len(kept.requests) == 50 and len(forgotten.requests) == 1
    assert forgotten.requests[0].values[0].value.tolist() == kept.requests[-1].values[0].value.tolist()


def test_a_request_log_that_forgets_still_counts_what_was_made():
    from tapecli.api import Options, run_source
    loop = "var w = 1.0\nfor step in range(5):\n    tape t:\n        y = w * w\n    g = t.gradient(y, w)\n"
    kept, forgotten = (run_source(loop, "l.tdf", Options(keep_requests=keep)).requests for keep in (True, False))
    assert kept.mark() == forgotten.mark() == 5 and [r.seq for r in kept] == list(range(5))
    assert forgotten.since(4) == [forgotten[0]] and forgotten.since(5) == [] and kept.since(3) == kept[3:]


# short texts, and whether CPython's parser refuses them with a SyntaxError
_REFUSED = {"x = 2.0\nprint(x * 3)\n": False, "import tensorflow as tf\nx = tf.Variable(1.0)\n": False,
            "print('\\d')\n": False,                   # (a SyntaxWarning only)
            "var x = 3.0\n": True, "y = " + "(" * 300 + "1" + ")" * 300 + "\n": True,   # (too many nested parentheses)
            "def f(:\n    pass\n": True, "": False, "\n\n# only\n": False,
            "match x:\n    case 1:\n        pass\n": False, "print(undefined_name)\n": False, "x = 1 +\n": True,
            "x = 1\n" * 1000 + "var y = 2.0\n": False}   # (a long text: the room weighs it first)
_SOURCES = [path.read_text() for path in sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.tdf"))] + \
    list(_REFUSED) + ["x = 1\0\n"]             # (null bytes: a SyntaxError or a ValueError, by Python's version)


@pytest.mark.parametrize("source", _SOURCES, ids=range(len(_SOURCES)))
def test_a_text_cpythons_parser_refuses_is_no_program_of_pythons(source):
    """run_source skips CPython's room for a short text whose parse is a SyntaxError: there, the room's own
    check (execution.python_only, with or without free names) finds no program either."""
    from tapecli import execution
    refused = api._cpython_refuses(source, "p.tdf")
    if source in _REFUSED:
        assert refused is _REFUSED[source]
    if refused:
        assert execution.python_only(source, "p.tdf") is None
        assert execution.python_only(source, "p.tdf", free_names=True) is None
