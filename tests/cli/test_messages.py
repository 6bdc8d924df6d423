"""Error messages (LANGUAGE.md §9): for every kind, programs that raise it, with the kind, the words of
the message, the line and column, the caret under that column in `run`'s output, the --json error
document, exit code 3 and no traceback. LimitErrors must come within seconds."""
from __future__ import annotations

import sys
import textwrap
import time

import pytest

from conftest import cli, run_program
from tapecli.errors import ERROR_KINDS, TdfError


class Case:
    def __init__(self, id, kind, source, line, column, words, hint=None, args=()):
        self.id = id
        self.kind = kind
        self.source = textwrap.dedent(source).lstrip("\n")
        self.line = line
        self.column = column
        self.words = words          # all must be in the message
        self.hint = hint            # must be in the hint (None: not checked)
        self.args = list(args)      # extra CLI options

    def __repr__(self):
        return self.id


CASES = [
    # ------------------------------------------------------------ SyntaxError
    Case("syntax-two-expressions", "SyntaxError", """
        var x = 2.0
        y = x x
    """, 2, 7, ["unexpected 'x'"]),
    Case("syntax-assign-in-condition", "SyntaxError", """
        var x = 2.0
        if x = 1:
            y = 1.0
    """, 2, 6, ["unexpected '='"]),
    Case("syntax-missing-colon", "SyntaxError", """
        var x = 2.0
        if x > 0
            y = 1.0
    """, 2, 9, ["unexpected end of line", "':'"]),
    Case("syntax-tab", "SyntaxError", "var x = 2.0\ntape t:\n\ty = x\n", 3, 1, ["tab in indentation"],
         hint="spaces"),
    Case("syntax-block-not-indented", "SyntaxError", """
        tape t:
        y = 1.0
    """, 2, 1, ["unexpected 'y'", "indented block"], hint="must be indented"),
    Case("syntax-bad-dedent", "SyntaxError", """
        var x = 2.0
        if x > 0:
                y = 1.0
            z = 2.0
    """, 4, 1, ["indentation matches no enclosing block"]),
    # -------------------------------------------------------------- NameError
    Case("name-typo-with-hint", "NameError", """
        var x = 2.0
        y = sigmod(x)
    """, 2, 5, ["name sigmod is not defined"], hint="did you mean sigmoid?"),
    Case("name-undefined", "NameError", """
        var x = 2.0
        y = x + yy
    """, 2, 9, ["name yy is not defined"]),
    Case("name-error-kind", "NameError", """
        var x = 2.0
        expect_error TapeErorr:
            y = x
    """, 2, 1, ["TapeErorr"]),
    # -------------------------------------------------------------- TypeError
    Case("type-dtypes", "TypeError", """
        var x = 2.0
        var d: float64 = 1.0
        y = x * d
    """, 3, 5, ["float32", "float64"], hint="cast"),
    Case("type-constant-assigned", "TypeError", """
        const c = 1.0
        c = 2.0
    """, 2, 1, ["c is a constant"]),
    Case("type-wrong-argument", "TypeError", """
        var x = 2.0
        y = sin(x, 3)
    """, 2, 5, ["sin()", "too many positional arguments"], hint="usage: sin(x)"),
    Case("type-gradient-arguments", "TypeError", """
        var x = 2.0
        tape t:
            y = x * x
        g = t.gradient(y, x, None, "none", 7)
    """, 4, 5, ["gradient()", "too many positional arguments"], hint="usage: t.gradient(target, sources"),
    Case("type-gradient-keyword", "TypeError", """
        var x = 2.0
        tape t(persistent=True):
            y = x * x
        j = t.jacobian(y, x, line=7)
    """, 4, 5, ["jacobian()", "unexpected keyword argument 'line'"], hint="usage: t.jacobian(target, sources"),
    # ------------------------------------------------------------- ShapeError
    Case("shape-broadcast", "ShapeError", """
        const a = [1.0, 2.0]
        const b = [1.0, 2.0, 3.0]
        y = a + b
    """, 3, 5, ["[2]", "[3]"], hint="broadcast"),
    Case("shape-matmul", "ShapeError", """
        const a = ones([2, 3])
        y = a @ ones([2, 3])
    """, 2, 5, ["Matrix size-incompatible", "In[0]: [2,3], In[1]: [2,3]"], hint="inner dimensions"),
    # -------------------------------------------------------------- TapeError
    Case("tape-second-call", "TapeError", """
        var x = 2.0
        tape t:
            y = x * x
        a = t.gradient(y, x)
        b = t.gradient(y, x)
    """, 5, 5, ["tape t", "not persistent", "line 4"], hint="persistent=True"),
    Case("tape-watch-outside", "TapeError", """
        var x = 2.0
        watch x
    """, 2, 1, ["watch outside a tape block"]),
    Case("tape-stop-recording-not-recording", "TapeError", """
        var x = 2.0
        tape t:
            y = x
        stop_recording t:
            z = x
    """, 4, 1, ["tape t is not recording"]),
    # ------------------------------------------------------------- ValueError
    Case("value-unconnected", "ValueError", """
        var x = 2.0
        tape t:
            y = x * x
        g = t.gradient(y, x, unconnected_gradients="nonsense")
    """, 4, 5, ["unconnected_gradients", "nonsense"]),
    Case("value-unpack", "ValueError", """
        const x = [1.0, 2.0, 3.0]
        a, b = x
    """, 2, 1, ["cannot unpack 3 values into 2 names"]),
    Case("value-unpack-python", "ValueError", """
        a, b = [1.0, 2.0, 3.0]
    """, 1, 1, ["too many values to unpack (expected 2)"]),             # CPython's words
    # ------------------------------------------------------------- LimitError
    Case("limit-steps", "LimitError", """
        var x = 0.0
        while True:
            x = x + 1.0
    """, 2, 1, ["100,000 loop steps"], hint="--max-steps", args=["--max-steps", "100000"]),
    Case("limit-recursion", "LimitError", """
        var x = 1.0
        def f(n):
            return f(n + x)
        y = f(1)
    """, 3, 12, ["calls nest deeper than 200"], hint="--max-depth"),
    Case("recursion-python", "RecursionError", """
        def f(n):
            return f(n + 1)
        y = f(1)
    """, 2, 12, ["maximum recursion depth exceeded"]),
    Case("limit-elements", "LimitError", """
        x = zeros([100000, 100000])
    """, 1, 5, ["10,000,000,000 elements", "100,000,000"], hint="--max-elements"),
    # --------------------------------------------------------- AssertionError
    Case("assert-message", "AssertionError", """
        x = 2.0
        assert x < 1.0, "x must be small"
    """, 2, 1, ["x must be small"]),
    Case("assert-no-message", "AssertionError", """
        n = 3
        assert n == 4
    """, 2, 1, ["n == 4"]),
]

LIMITS = {"--max-steps": "max_steps", "--max-depth": "max_depth", "--max-elements": "max_elements"}


def test_every_kind_has_two_programs():
    kinds = [c.kind for c in CASES] + ["GradientError", "GradientError"]   # see the GradientError tests
    assert {k: kinds.count(k) >= 2 for k in ERROR_KINDS} == {k: True for k in ERROR_KINDS}


def _library_options(case):
    from tapecli.runtime.limits import Limits
    limits = {LIMITS[flag]: int(value) for flag, value in zip(case.args[::2], case.args[1::2])}
    return {"limits": Limits(**limits)} if limits else {}


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_library_error(case):
    with pytest.raises(TdfError) as info:
        run_program(case.source, **_library_options(case))
    e = info.value
    assert e.kind == case.kind
    for word in case.words:
        assert word in e.message, (word, e.message)
    assert (e.line, e.column) == (case.line, case.column), e.message
    if case.hint is not None:
        assert e.hint and case.hint in e.hint


def assert_caret_output(stderr: str, path, case, message: str) -> None:
    lines = stderr.splitlines()
    while lines[0].startswith(f"{path}:") and ": warning: " in lines[0]:    # the run's warnings come first
        lines.pop(0)
    assert lines[0] == f"{path}:{case.line}:{case.column}: {case.kind}: {message}"
    source_line = case.source.splitlines()[case.line - 1].rstrip()
    gutter, _, text = lines[1].partition(" | ")
    assert gutter.strip() == str(case.line) and text == source_line
    start = len(gutter) + 3                               # where the source text starts
    caret = lines[2]
    assert caret[:start] == " " * (start - 2) + "| ", caret
    assert caret[start:start + case.column - 1].strip() == "", caret
    assert caret[start + case.column - 1] == "^", (caret, case.column)
    if case.hint is not None:
        assert any(line.startswith("hint: ") and case.hint in line for line in lines[3:])


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_cli_error_output(case, tmp_path):
    path = tmp_path / f"{case.id}.tdf"
    path.write_text(case.source, encoding="utf-8")
    started = time.monotonic()
    human = cli("run", "--no-color", *case.args, path)
    doc_run = cli("run", "--json", *case.args, path)
    elapsed = time.monotonic() - started
    assert human.code == 3 and doc_run.code == 3
    assert "Traceback" not in human.stderr + doc_run.stderr
    error = doc_run.json["error"]
    assert doc_run.json["schema"] == "tapecli/1" and doc_run.json["command"] == "run"
    assert (error["kind"], error["line"], error["column"]) == (case.kind, case.line, case.column)
    for word in case.words:
        assert word in error["message"]
    assert_caret_output(human.stderr, path, case, error["message"])
    if case.kind == "LimitError":
        assert elapsed < 2 * 10, elapsed        # two runs, each well within 10 seconds


# --------------------------------------------------------------- LimitError timing

@pytest.mark.parametrize("source,args", [
    ("while True:\n    pass\n", ["--max-steps", "100000"]),
    ("var x = 0.0\nwhile True:\n    x = x + 1.0\n", ["--max-steps", "100000"]),
    ("var x = 1.0\ndef f(n):\n    return f(n + x)\ny = f(1)\n", []),
    ("x = zeros([100000, 100000])\n", []),
    ("for i in range(1000000000):\n    pass\n", []),
], ids=["while-pass", "while-add", "recursion", "zeros", "range"])
def test_limit_errors_come_within_10_seconds(source, args, tmp_path):
    path = tmp_path / "limit.tdf"
    path.write_text(source)
    started = time.monotonic()
    res = cli("run", "--json", *args, path)
    elapsed = time.monotonic() - started
    assert res.code == 3 and res.json["error"]["kind"] == "LimitError"
    assert elapsed < 10, f"{elapsed:.1f} s"


# --------------------------------------------------------------------- hints

def test_syntax_hint_on_the_first_statement():
    with pytest.raises(TdfError) as info:
        run_program("if x > 0\n    y = 1\n")
    assert info.value.hint == "a block needs ':' at the end of its first line"


def test_syntax_hint_after_other_statements():
    with pytest.raises(TdfError) as info:
        run_program("var x = 2.0\nif x > 0\n    y = 1\n")
    assert info.value.hint == "a block needs ':' at the end of its first line"


@pytest.mark.parametrize("source, line, column, bracket", [
    ("var x = 2.0\ny = (x +\n", 2, 5, "("),                      # at the end of the file
    ("var x = 2.0\ny = sin(x\nz = 2.0\n", 2, 8, "("),            # the next line is where the parser stops
    ("var x = 2.0\ny = [x, (x\n\n\n", 2, 9, "("),                # the innermost of two
    ("var x = 2.0\ny = [x, (x)\nz = 1\n", 2, 5, "["),             # the one that is never closed
    ("import tensorflow as tf\nx = tf.Variable(1.0)\ny = tf.sin(x\nz = 2.0\n", 3, 11, "("),
    ("x = {'a': (1,\n   2)\ny = 3\n", 1, 5, "{"),
])
def test_an_unclosed_bracket_is_reported_at_the_bracket(source, line, column, bracket):
    # as CPython 3.10+ reports it ("'(' was never closed"), not on the line after it
    with pytest.raises(TdfError) as info:
        run_program(source)
    e = info.value
    assert (e.kind, e.line, e.column) == ("SyntaxError", line, column)
    assert e.message == f"this {bracket} is never closed" and e.hint == f"close it with {')]}'['([{'.index(bracket)]}"


def test_a_bracket_closed_later_is_not_reported_as_never_closed():
    with pytest.raises(TdfError) as info:
        run_program("y = max(1,\n      2 3)\n")
    e = info.value
    assert (e.line, e.column) == (2, 9) and e.message.startswith("unexpected '3'")
    assert "never closed" not in (e.hint or "")


def test_unclosed_bracket_at_the_end_names_the_last_line(tmp_path):
    path = tmp_path / "eof.tdf"
    path.write_text("var x = 2.0\ny = (x +\n")
    res = cli("run", "--json", path)
    assert res.code == 3 and res.json["error"]["kind"] == "SyntaxError" and res.json["error"]["line"] == 2


# -------------------------------------------------------------- GradientError
# No program can raise GradientError: every differentiable op in the op table has a gradient
# rule. These tests register an op without one (vjp=None) for the duration of the test.

GRADIENT_PROGRAM = """\
var x = 2.0
tape t:
    y = nograd(x) * 3.0
g = t.gradient(y, x)
"""

_BOOTSTRAP = '''
import sys
from tapecli.library import core as builtins
from tapecli import ops
op = ops.Op("test_nograd", kernel="neg", vjp=None)
@builtins.builtin("nograd")
def nograd(x):
    return ops.apply(op, [x])
from tapecli.cli.app import main
sys.argv = ["tapecli", *sys.argv[1:]]
main()
'''


@pytest.fixture
def op_without_gradient(monkeypatch):
    from tapecli.library import core as builtins
    from tapecli import ops
    op = ops.Op("test_nograd", kernel="neg", vjp=None)

    monkeypatch.setitem(builtins.BUILTINS, "nograd", None)    # removed again after the test

    @builtins.builtin("nograd", replaces=True)
    def nograd(x):
        return ops.apply(op, [x])
    return op


def test_gradient_error_from_an_op_without_a_gradient(op_without_gradient):
    from tapecli.errors import GradientError
    with pytest.raises(GradientError) as info:
        run_program(GRADIENT_PROGRAM)
    e = info.value
    assert e.kind == "GradientError"
    assert "no gradient registered for op test_nograd, line 3" in e.message
    assert (e.line, e.column) == (4, 5)


def test_gradient_error_in_a_jacobian(op_without_gradient):
    with pytest.raises(TdfError) as info:
        run_program("var x = [1.0, 2.0]\ntape t:\n    y = nograd(x)\nj = t.jacobian(y, x)\n")
    e = info.value
    assert e.kind == "GradientError" and "test_nograd" in e.message and (e.line, e.column) == (4, 5)


def test_no_gradient_is_needed_where_the_op_is_not_on_the_path(op_without_gradient):
    r = run_program("var x = 2.0\nconst c = 1.0\ntape t:\n    y = x * 2.0 + nograd(c)\ng = t.gradient(y, x)\n")
    assert r.scope.vars["g"].value == 2.0


def test_gradient_error_in_the_cli(tmp_path):
    boot = tmp_path / "boot.py"
    boot.write_text(_BOOTSTRAP)
    path = tmp_path / "nograd.tdf"
    path.write_text(GRADIENT_PROGRAM)
    import subprocess
    human = subprocess.run([sys.executable, str(boot), "run", "--no-color", str(path)], capture_output=True,
                           text=True, timeout=60)
    assert human.returncode == 3 and "Traceback" not in human.stderr
    case = Case("gradient", "GradientError", GRADIENT_PROGRAM, 4, 5, [])
    assert_caret_output(human.stderr, path, case, "no gradient registered for op test_nograd, line 3")
    doc = subprocess.run([sys.executable, str(boot), "run", "--json", str(path)], capture_output=True, text=True,
                         timeout=60)
    import json
    error = json.loads(doc.stdout)["error"]
    assert doc.returncode == 3
    assert (error["kind"], error["line"], error["column"]) == ("GradientError", 4, 5)


def test_only_the_ops_tensorflow_gives_no_gradient_lack_one():
    """Which ops raise GradientError: those whose TensorFlow op has no gradient registered, where TensorFlow's
    backward pass raises (AdjustHue, AdjustSaturation; MatrixSolveLs with fast=False; ImageProjectiveTransformV3;
    IgammaGradA, igamma's gradient in a), and Lu, whose TensorFlow gradient tapecli does not have yet
    (docs/tf-surface.md)."""
    from tapecli import ops
    ops.load_deferred()
    assert sorted(name for name, op in ops.OPS.items() if op.differentiable and op.vjp is None) == [
        "adjust_hue", "adjust_saturation", "igamma_grad_a", "lstsq_complete_orthogonal", "lu", "projective_transform"]


def test_a_name_error_searches_for_its_hint_only_when_the_hint_is_read(monkeypatch):
    # expect_error in a loop meets the same NameError many times and never shows its hint: a search over
    # every name each time made such a loop thousands of times slower than its body.
    import difflib
    calls = []
    real = difflib.get_close_matches
    monkeypatch.setattr(difflib, "get_close_matches", lambda *a, **k: calls.append(a[0]) or real(*a, **k))
    run_program("""
        for i in range(50):
            expect_error NameError:
                y = sigmod(1.0) + sigmoidd
    """)
    assert calls == []
    with pytest.raises(TdfError) as caught:
        run_program("y = sigmod(1.0)\n")
    assert caught.value.hint == "did you mean sigmoid?" and calls == ["sigmod"]


# ------------------------------------------------- a variable rebound to a tensor, and an alias of one

def _warning_lines(source):
    return [w["line"] for w in run_program(source).warnings if "was a variable, now a tensor" in w["message"]]


@pytest.mark.parametrize("source, lines", [
    ("var x = 1.0\ny = x\ny = sin(y)\n", []),                         # y was an alias: x is still the variable
    ("var x = 1.0\nx = x - 0.1\n", [2]),                              # the pitfall itself
    ("var x = 1.0\ny = x\nx = x - 0.1\n", [2 + 1]),                   # its own name, though y still holds it
    ("var x = 1.0\ny = x\nx = 2.0 * x\ny = sin(y)\n", [3, 4]),        # y the last name of the variable
    ("var x = 1.0\ndef step(v):\n    v = v - 0.1\n    return v\nz = step(x)\n", [3]),   # a parameter
    ("import tensorflow as tf\nx = tf.Variable(1.0)\ny = x\ny = tf.sin(y)\nx = x - 0.1\n", [5]),
    ("import tensorflow as tf\ndef make():\n    v = tf.Variable(3.0)\n    return v\nm = make()\nk = m\nm = m - 0.1\n",
     [7]),
])
def test_rebinding_an_alias_of_a_variable_does_not_warn(source, lines):
    assert _warning_lines(source) == lines


def test_the_variable_is_still_one_after_its_alias_is_rebound():
    import math
    result = run_program("var x = 1.0\ny = x\ny = sin(y)\ntape t:\n    z = x * y\ng = t.gradient(z, x)\n")
    assert result.warnings == [] and abs(float(result.scope.vars["g"].value) - math.sin(1.0)) < 1e-6


# -------------------------------------------------------- did you mean: statements and --of/--wrt names

@pytest.mark.parametrize("source, hint", [
    ("var x = 1.0\ntap t:\n    y = x * x\n", "did you mean tape?"),
    ("var x = 1.0\nexpct x == 1.0\n", "did you mean expect?"),
    ("va x = 1.0\n", "did you mean var?"),
    ("var x = 1.0\nwach x\n", "did you mean watch?"),
])
def test_a_misspelled_statement_word_gets_a_did_you_mean(source, hint):
    with pytest.raises(TdfError) as info:
        run_program(source)
    assert info.value.kind == "SyntaxError" and info.value.hint == hint


def test_two_names_in_a_row_that_are_no_statement_word_get_no_did_you_mean():
    with pytest.raises(TdfError) as info:
        run_program("var x = 1.0\nzebra x\n")
    assert "did you mean" not in (info.value.hint or "")


@pytest.mark.parametrize("option, name, said", [
    ("--wrt", "w3", "did you mean w1?"), ("--wrt", "2w", "did you mean w2?"), ("--of", "ff", "did you mean f?"),
    ("--wrt", "zz", None),
])
def test_an_unknown_of_or_wrt_name_gets_a_did_you_mean(tmp_path, option, name, said):
    path = tmp_path / "w.tdf"
    path.write_text("var w1 = 1.0\nvar w2 = 2.0\nf = w1 * w2\n")
    args = ["--of", "f", "--wrt", name] if option == "--wrt" else ["--of", name, "--wrt", "w1"]
    res = cli("grad", path, *args)
    assert res.code == 2
    line = f"tapecli grad: {option} {name}: the program binds no such name"
    assert res.stderr.strip() == (f"{line}; {said}" if said else line)


@pytest.mark.parametrize("name, names, found", [
    ("w3", ["w1", "w2", "f"], "w1"), ("lossx", ["loss", "x"], "loss"), ("ab", ["ba"], "ba"), ("abc", ["abcd"], "abcd"),
    ("x", ["y"], None), ("w3", ["w3"], None), ("alpha", ["beta", "gamma"], None),
])
def test_closest_name(name, names, found):
    from tapecli.errors import closest
    assert closest(name, names) == found


# -------------------------------------------------------------------------------- counts in messages

@pytest.mark.parametrize("n, noun, nouns, text", [
    (0, "error", None, "0 errors"), (1, "error", None, "1 error"), (2, "error", None, "2 errors"),
    (1, "entry", "entries", "1 entry"), (3, "entry", "entries", "3 entries"),
])
def test_plural(n, noun, nouns, text):
    from tapecli.errors import plural
    assert plural(n, noun, nouns) == text


def test_counts_in_the_commands_messages_are_pluralised(tmp_path):
    bad = tmp_path / "bad.tdf"
    bad.write_text("x = undefined_name\n")
    one = tmp_path / "one.tdf"
    one.write_text("var x = 2.0\ntape t:\n    y = x * 2.0\ng = t.gradient(y, x)\nexpect g == 2.0\n")
    res = cli("check", "--no-color", bad, one)
    assert res.stdout.splitlines()[-1] == "1 passed, 0 failed, 1 error"
    tape = cli("tape", "--no-color", one, env={"COLUMNS": "200"})
    assert "1 record, " in tape.stdout
    lint = cli("lint", "--no-color", one)
    assert lint.stdout.strip() == "no findings"
    doc = tmp_path / "g.json"
    doc.write_text(cli("grad", "--json", one).stdout)
    same = cli("diff", doc, doc)
    assert same.stdout.startswith("1 entry agrees (")
    bench = cli("bench", one, "--repeat", "1", "--warmup", "0")
    assert f"{one}: 1 run after 0 untimed" in bench.stdout
