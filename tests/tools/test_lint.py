"""`tapecli lint`: static findings (TDF001-TDF007), the command, and the findings in `tapecli check`."""
import json
import textwrap
import time
from pathlib import Path

import pytest

from conftest import cli, run_program, value
from tapecli.tools.lint import CODES, Finding, lint, lint_source
from tapecli.frontend.parser import parse

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def findings(source: str) -> list[Finding]:
    return lint_source(textwrap.dedent(source).lstrip("\n"), "prog.tdf")


def codes(source: str) -> list[tuple[str, int]]:
    return [(f.code, f.line) for f in findings(source)]


def write(tmp_path, name, source):
    path = tmp_path / name
    path.write_text(textwrap.dedent(source).lstrip("\n"))
    return path


def test_codes_are_stable_and_documented():
    assert sorted(CODES) == ["TDF001", "TDF002", "TDF003", "TDF004", "TDF005", "TDF006", "TDF007"]
    f = Finding(3, 5, "TDF001", "m")
    assert f.to_json() == {"line": 3, "column": 5, "code": "TDF001", "message": "m"}


def test_a_clean_program_has_no_findings():
    assert findings("""
        var x = 3.0
        tape t:
            y = x ** 2
        dy_dx = t.gradient(y, x)
    """) == []


# ------------------------------------------------ TDF001: second call, non-persistent

def test_second_gradient_call_names_the_first_line():
    (f,) = findings("""
        var x = 2.0
        tape t:
            y1 = x ** 2
            y2 = x ** 3
        d1 = t.gradient(y1, x)
        d2 = t.gradient(y2, x)
    """)
    assert (f.code, f.line, f.column) == ("TDF001", 6, 6)
    assert "line 5" in f.message and "persistent=True" in f.message and "not persistent" in f.message


def test_jacobian_then_gradient_and_persistent_false_count():
    assert codes("""
        var x = [1.0, 2.0]
        tape t(persistent=False):
            y = x * x
        j = t.jacobian(y, x)
        g = t.batch_jacobian(y, x)
    """) == [("TDF001", 5)]


def test_two_calls_in_one_statement():
    assert codes("""
        var x = 2.0
        tape t:
            y = x * x
        both = [t.gradient(y, x), t.gradient(y, x)]
    """) == [("TDF001", 4)]


def test_a_call_in_a_loop_repeats():
    (f,) = findings("""
        var x = 2.0
        tape t:
            y = x * x
        for i in range(3):
            g = t.gradient(y, x)
    """)
    assert (f.code, f.line) == ("TDF001", 5) and "loop" in f.message


def test_a_tape_per_iteration_is_fine():
    assert findings("""
        var w = 1.0
        for i in range(3):
            tape t:
                loss = (w - 3.0) ** 2
            g = t.gradient(loss, w)
            w.assign_sub(0.1 * g)
    """) == []


def test_loop_ending_in_break_runs_once():
    assert findings("""
        var x = 2.0
        tape t:
            y = x * x
        while True:
            g = t.gradient(y, x)
            break
    """) == []


def test_persistent_tape_and_reset_and_redeclared_tape_are_fine():
    assert findings("""
        var x = 2.0
        tape t(persistent=True):
            y = x * x
        a = t.gradient(y, x)
        b = t.gradient(y, x)
        tape u:
            z = x * x
        c = u.gradient(z, x)
        tape u:
            z = x * x
        d = u.gradient(z, x)
    """) == []
    assert findings("""
        var x = 2.0
        tape t:
            y = x * x
            g = t.gradient(y, x)
            reset t
            y = x * x
        h = t.gradient(y, x)
    """) == []


def test_branches_are_alternatives_but_a_later_call_meets_either():
    source = """
        var x = 2.0
        const c = 1.0
        tape t:
            y = x * x
        if c > 0:
            g = t.gradient(y, x)
        else:
            g = t.gradient(y * 2.0, x)
    """
    assert findings(source) == []
    assert codes(textwrap.dedent(source) + "h = t.gradient(y, x)\n") == [("TDF001", 9)]


def test_expect_error_blocks_are_meant_to_fail():
    assert findings("""
        var x = 2.0
        tape t:
            y = x * x
        g = t.gradient(y, x)
        expect_error TapeError:
            t.gradient(y, x)
    """) == []


def test_computed_persistence_is_unknown_and_not_reported():
    assert findings("""
        var x = 2.0
        const p = 1.0
        tape t(persistent=p > 0):
            y = x * x
        a = t.gradient(y, x)
        b = t.gradient(y, x)
    """) == []


def test_inside_a_function():
    assert codes("""
        def grads(x):
            tape t:
                y = x * x
            a = t.gradient(y, x)
            return t.gradient(y, x)
        var v = 1.0
        g = grads(v)
    """) == [("TDF001", 5)]


def test_tdf001_agrees_with_the_runtime():
    from tapecli.errors import TapeError
    source = """
        var x = 2.0
        tape t:
            y = x * x
        for i in range(2):
            g = t.gradient(y, x)
    """
    with pytest.raises(TapeError):
        run_program(source)
    assert codes(source) == [("TDF001", 5)]


# ------------------------------------------- TDF002: gradient inside its persistent tape

def test_gradient_inside_its_own_persistent_tape_is_a_note():
    (f,) = findings("""
        var x = 2.0
        tape t(persistent=True):
            y = x * x
            g = t.gradient(y, x)
    """)
    assert (f.code, f.line, f.column) == ("TDF002", 4, 9)
    assert f.message.startswith("note:") and "higher derivatives" in f.message and "records" in f.message


def test_nested_tapes_for_higher_derivatives_are_not_reported():
    assert findings("""
        var x = 1.0
        tape t:
            tape t2:
                y = x * x * x
            dy_dx = t2.gradient(y, x)
        d2y_dx2 = t.gradient(dy_dx, x)
    """) == []


def test_paused_persistent_tape_records_nothing():
    assert findings("""
        var x = 1.0
        tape t(persistent=True):
            y = x * x
            stop_recording t:
                g = t.gradient(y, x)
        h = t.gradient(y, x)
    """) == []


def test_jacobian_inside_an_outer_persistent_tape():
    assert codes("""
        var x = [1.0, 2.0]
        tape outer(persistent=True):
            tape inner(persistent=True):
                y = x * x
                j = inner.jacobian(y, x)
            k = outer.jacobian(j, x)
        h = outer.gradient(y, x)
    """) == [("TDF002", 5), ("TDF002", 6)]


# ------------------------------------------------ TDF003: integer literals, watched

def test_watched_integer_constant():
    (f,) = findings("""
        const x = 10
        tape g:
            watch x
            y = x * x
        dy_dx = g.gradient(y, x)
    """)
    assert (f.code, f.line, f.column) == ("TDF003", 1, 11)
    assert "line 3" in f.message and "10.0" in f.message and ": float32" in f.message and "None" in f.message


def test_integer_variable_as_a_gradient_source():
    (f,) = findings("""
        var v = [1, 2]
        tape t:
            y = sum(v * v)
        g = t.gradient(y, [v])
    """)
    assert (f.code, f.line) == ("TDF003", 1) and "[1.0, 2.0]" in f.message and "gradient source" in f.message


def test_integer_sources_in_dicts_jacobians_and_negative_literals():
    assert codes("""
        const a = -3
        var b = [[1, 2], [3, 4]]
        tape t(persistent=True):
            watch a
            y = a * 2
        j = t.jacobian(y, a)
        g = t.gradient(y, {"b": b})
    """) == [("TDF003", 1), ("TDF003", 2)]


@pytest.mark.parametrize("decl", ["const x = 10.0", "const x: float32 = 10", "const x: f64 = 10",
                                  "const x = [1, 3.0]", "var x = 1e3", "const x: int32 = 10"])
def test_floats_annotations_and_explicit_integers_are_not_reported(decl):
    assert findings(f"""
        {decl}
        tape g:
            watch x
            y = x * x
        d = g.gradient(y, x)
    """) == []


def test_integers_never_watched_and_rebound_names_are_not_reported():
    assert findings("""
        const n = 3
        var x = 2.0
        tape t:
            y = x ** n
        g = t.gradient(y, x)
    """) == []
    assert codes("""
        const x = 10
        const x = 10.5
        tape g:
            watch x
            y = x * x
        d = g.gradient(y, x)
    """) == []


def test_the_suggested_fix_gives_a_gradient():
    r = run_program("""
        const x: float32 = 10
        tape g:
            watch x
            y = x * x
        dy_dx = g.gradient(y, x)
    """)
    assert value(r, "dy_dx") == 20.0


def test_a_function_parameter_shadows_an_integer_declaration():
    assert findings("""
        const x = 10
        def f(x):
            tape g:
                watch x
                y = x * x
            return g.gradient(y, x)
        d = f(2.0)
    """) == []


# ------------------------------------------------------------ TDF004: unused tapes

def test_unused_tape():
    (f,) = findings("""
        var x = 2.0
        tape t:
            y = x * x
    """)
    assert (f.code, f.line, f.column) == ("TDF004", 2, 1)
    assert "tape t is never used" in f.message and "t.gradient(target, sources)" in f.message


@pytest.mark.parametrize("use", ["g = t.gradient(y, x)", "j = t.jacobian(y, x)", "b = t.batch_jacobian(y, x)",
                                 "v = t.watched_variables()", "reset t", "helper(t)"])
def test_any_use_after_the_tape_counts(use):
    assert findings(f"""
        def helper(tp):
            return 1.0
        var x = [[2.0]]
        tape t:
            y = x * x
        {use}
    """) == []


def test_uses_inside_the_block_count():
    assert findings("""
        var x = 2.0
        const c = 1.0
        tape t:
            watch c in t
            stop_recording t:
                y = x * x
    """) == []


def test_a_use_in_a_function_defined_earlier_counts():
    assert findings("""
        def grad_of(y, x):
            return t.gradient(y, x)
        var x = 2.0
        tape t:
            y = x * x
        g = grad_of(y, x)
    """) == []


def test_a_tape_redeclared_before_any_use_was_never_used():
    (f,) = findings("""
        var x = 2.0
        tape t:
            y = x * x
        tape t:
            z = x * x
        g = t.gradient(z, x)
    """)
    assert (f.code, f.line) == ("TDF004", 2) and "declared again at line 4" in f.message


def test_a_bare_watch_is_not_a_use():
    assert codes("""
        const c = 1.0
        tape t:
            watch c
    """) == [("TDF004", 2)]


# ----------------------------------------------------- TDF005: unbuilt layer watch

def test_watch_before_the_first_call():
    (f,) = findings("""
        a = Dense(32, seed=1)
        const inputs = ones([1, 4])
        tape tp(watch_accessed_variables=False):
            watch a.variables
            result = a(inputs)
        ga = tp.gradient(result, a.variables)
    """)
    assert (f.code, f.line, f.column) == ("TDF005", 4, 11)
    assert "not built" in f.message and "empty list" in f.message and "a(x)" in f.message


@pytest.mark.parametrize("item", ["L.trainable_variables", "L.kernel", "[L.bias, c]"])
def test_other_layer_attributes(item):
    assert codes(f"""
        L = Dense(2)
        const c = [[1.0, 2.0]]
        tape t:
            watch {item}
            y = L(c)
        g = t.gradient(y, c)
    """) == [("TDF005", 4)] + ([] if item == "[L.bias, c]" else [("TDF006", 6)])      # c watched, or not


def test_a_built_layer_is_fine():
    assert findings("""
        L = Dense(2, seed=1)
        const c = [[1.0, 2.0]]
        warm = L(c)
        tape t(watch_accessed_variables=False):
            watch L.trainable_variables
            y = L(c)
        g = t.gradient(y, L.trainable_variables)
    """) == []


def test_a_name_that_is_not_a_layer_is_not_reported():
    assert not [f for f in findings("""
        var kernel = 1.0
        def L():
            return 1.0
        tape t:
            watch L.kernel
    """) if f.code == "TDF005"]


# ------------------------------------- TDF006: the gradient of a constant the tape never watched

def py_findings(source: str) -> list[Finding]:
    return lint_source(textwrap.dedent(source).lstrip("\n"), "prog.py")


def test_an_unwatched_constant_as_a_source_is_reported_with_a_watch_to_add():
    found = [f for f in findings("""
        var x = 2.0
        const c = 1.0
        tape t(persistent=True):
            y = x ** 2
            w = c * c
        g = t.gradient(w, c)
        h = t.gradient(w, [x, c])
    """) if f.code == "TDF006"]
    assert [(f.line, f.column) for f in found] == [(6, 19), (7, 23)]
    assert "`watch c`" in found[0].message and "tape t (line 3)" in found[0].message and "None" in found[0].message
    assert "const c = 1.0" in found[0].message and "t.watch" not in found[0].message


def test_an_unwatched_tf_constant_is_reported_in_tensorflow_spelling():
    (f,) = py_findings("""
        import tensorflow as tf
        c = tf.constant(1.0)
        with tf.GradientTape() as t:
            w = c * c
        g = t.gradient(w, c)
    """)
    assert (f.code, f.line, f.column) == ("TDF006", 5, 19)
    assert "`t.watch(c)`" in f.message and "c = tf.constant(1.0)" in f.message and "`watch c`" not in f.message


def test_a_watched_or_rebound_constant_is_not_reported():
    assert not [f for f in findings("""
        const c = 1.0
        const d = 2.0
        tape t:
            watch c
            w = c * c
        g = t.gradient(w, c)
        tape t2:
            d = d * 1.0
            v = d * d
        h = t2.gradient(v, d)
    """) if f.code == "TDF006"]
    assert not py_findings("""
        import tensorflow as tf
        c = tf.constant(1.0)
        with tf.GradientTape() as t:
            t.watch(c)
            w = c * c
        g = t.gradient(w, c)
    """)


def test_a_gradient_expected_to_be_none_is_not_reported():
    assert not findings("""
        const c = 2.0
        tape t3:
            w = c * c
        expect t3.gradient(w, c) is None, "a constant is not watched"
    """)


def test_a_watch_by_a_function_given_the_tape_counts():
    assert not [f for f in findings("""
        def watch_all(tape_object, values):
            for v in values:
                watch v in tape_object
        const c = 2.0
        tape t:
            watch_all(t, [c])
            y = c * c
        g = t.gradient(y, c)
    """) if f.code == "TDF006"]


def test_a_nested_tape_gets_the_watch_naming_it():
    (f,) = [f for f in findings("""
        const c = 1.0
        tape outer:
            tape inner:
                watch c
                y = c * c
            g = inner.gradient(y, c)
        h = outer.gradient(g, c)
    """) if f.code == "TDF006"]
    assert f.line == 7 and "`watch c in outer`" in f.message


# ---------------------------------------------- TDF007: a variable rebound to a tensor

def test_rebinding_a_variable_to_a_tensor_is_reported_with_the_update_to_write():
    found = findings("""
        var x = 2.0
        var b = 1.0
        var s = 3.0
        tape t:
            y = x ** 2 + b + s
        g = t.gradient(y, [x, b, s])
        x = x - 0.1 * g[0]
        b -= 0.5
        s = 2.0 * s
    """)
    assert [(f.code, f.line) for f in found] == [("TDF007", 7), ("TDF007", 8), ("TDF007", 9)]
    assert "`x.assign_sub(0.1 * g[0])`" in found[0].message and "var x = 2.0" in found[0].message
    assert "`b.assign_sub(0.5)`" in found[1].message and "`s.assign(2.0 * s)`" in found[2].message


def test_rebinding_a_tf_variable_is_reported_in_tensorflow_spelling():
    found = py_findings("""
        import tensorflow as tf
        x = tf.Variable(2.0)
        for step in range(3):
            with tf.GradientTape() as tape:
                y = x * x
            g = tape.gradient(y, x)
            x = x - 0.1 * g
    """)
    assert [(f.code, f.line, f.column) for f in found] == [("TDF007", 7, 5)]
    assert "x = tf.Variable(2.0)" in found[0].message and "`x.assign_sub(0.1 * g)`" in found[0].message


def test_updates_in_place_and_other_bindings_are_not_reported():
    assert not findings("""
        var x = 2.0
        tape t:
            y = x * x
        g = t.gradient(y, x)
        x.assign_sub(0.1 * g)
        z = x - 1.0
        w = 3.0
        w = w - 1.0
    """)
    assert not py_findings("""
        import tensorflow as tf
        x = tf.Variable(2.0)
        with tf.GradientTape() as tape:
            y = x * x
        x.assign_sub(0.1 * tape.gradient(y, x))
    """)


def test_noqa_silences_the_new_codes():
    from tapecli.tools.lint import lint_checked
    source = "var x = 2.0\nconst c = 1.0\ntape t:\n    y = x * c\ng = t.gradient(y, [x, c])  # noqa: TDF006\n" \
             "x = x - g[0]  # noqa: TDF007\n"
    assert [f.code for f in lint_source(source)] == ["TDF006", "TDF007"]
    assert lint_checked(source) == []


# ---------------------------------------------------------------- on the examples

def test_examples_lint_without_errors_and_show_their_pitfalls():
    found = {}
    for path in sorted(EXAMPLES.glob("*.tdf")):
        program = parse(path.read_text(encoding="utf-8"), path.name)
        found[path.name] = {f.code for f in lint(program)}
    assert "TDF005" in found["08_unbuilt_layer_watch.tdf"]
    # 11 makes its second call inside `expect_error TapeError:`, which lint takes as deliberate
    assert "TDF001" not in found["11_non_persistent_twice.tdf"]
    assert "TDF003" in found["19_none_integer.tdf"]
    assert found["01_first_gradient.tdf"] == set()
    assert "TDF006" in found["06_watch_a_constant.tdf"]
    assert "TDF007" in found["18_none_variable_replaced_by_tensor.tdf"]


def test_lint_is_static():
    start = time.monotonic()
    assert codes("""
        var x = 1.0
        while True:
            x = x + undefined_name
        tape t:
            y = x
    """) == [("TDF007", 3), ("TDF004", 4)]
    assert time.monotonic() - start < 5


# -------------------------------------------------------------------- the command

def test_cli_lint_lines_summary_and_exit_1(tmp_path):
    path = write(tmp_path, "twice.tdf", """
        var x = 2.0
        tape t:
            y = x * x
        a = t.gradient(y, x)
        b = t.gradient(y, x)
    """)
    res = cli("lint", path)
    assert res.code == 1
    lines = res.stdout.splitlines()
    assert lines[0].startswith(f"{path}:5:5: TDF001 t.gradient is a second gradient call on tape t")
    assert lines[-1] == "1 finding"


def test_cli_lint_clean_exit_0(tmp_path):
    path = write(tmp_path, "ok.tdf", "var x = 3.0\ntape t:\n    y = x * x\ng = t.gradient(y, x)\n")
    res = cli("lint", path)
    assert (res.code, res.stdout.strip()) == (0, "no findings")
    doc = cli("lint", "--json", path).json
    assert doc == {"schema": "tapecli/1", "command": "lint", "file": str(path), "ok": True, "findings": []}


def test_cli_lint_json(tmp_path):
    path = EXAMPLES / "19_none_integer.tdf"
    res = cli("lint", "--json", path)
    assert res.code == 1
    doc = res.json
    assert (doc["schema"], doc["command"], doc["file"]) == ("tapecli/1", "lint", str(path))
    first = doc["findings"][0]
    assert set(first) == {"file", "line", "column", "code", "message"}
    assert (first["code"], first["line"], first["column"]) == ("TDF003", 9, 11)


def test_cli_lint_syntax_error_exit_3(tmp_path):
    path = write(tmp_path, "bad.tdf", "var x = 2.0\ny = (x +\n")
    res = cli("lint", "--no-color", path)
    assert res.code == 3 and res.stdout == ""
    first, source_line, caret = res.stderr.splitlines()[:3]
    assert first.startswith(f"{path}:2:") and "SyntaxError" in first
    assert source_line.endswith("y = (x +") and "^" in caret
    doc = cli("lint", "--json", path).json
    assert doc["command"] == "lint" and doc["error"]["kind"] == "SyntaxError" and doc["error"]["line"] == 2


def test_cli_lint_stdin_and_missing_file():
    res = cli("lint", "-", input="var x = 2.0\ntape t:\n    y = x\n")
    assert res.code == 1 and res.stdout.startswith("<stdin>:2:1: TDF004 ")
    assert cli("lint", "no/such/file.tdf").code == 2


# ------------------------------------------------------------------ in tapecli check

def test_check_reports_lint_findings_as_warnings(tmp_path):
    path = write(tmp_path, "int.tdf", """
        const x = 10
        tape g:
            watch x
            y = x * x
        dy_dx = g.gradient(y, x)
        expect dy_dx is None
    """)
    res = cli("check", path)
    assert res.code == 0
    lines = res.stdout.splitlines()
    assert f"{path}:1: lint TDF003 x is declared with integer literals only" in "\n".join(lines)
    assert [line for line in lines if " lint " in line][0].startswith(f"{path}:1: lint TDF003 ")
    assert lines[-1] == "1 passed, 0 failed"
    doc = cli("check", "--json", path).json
    assert doc["failed"] == 0 and doc["passed"] == 1
    (finding,) = doc["lint"]
    assert set(finding) == {"file", "line", "code", "message"}
    assert (finding["file"], finding["line"], finding["code"]) == (str(path), 1, "TDF003")
    assert all("lint" not in r for r in doc["results"])
    quiet = cli("check", "-q", path)
    assert " lint " not in quiet.stdout


def test_check_json_has_an_empty_lint_list_for_clean_files(tmp_path):
    path = write(tmp_path, "ok.tdf", "var x = 3.0\ntape t:\n    y = x * x\ng = t.gradient(y, x)\nexpect g == 6.0\n")
    doc = cli("check", "--json", path).json
    assert doc["lint"] == [] and doc["passed"] == 1
    assert json.loads(cli("check", "--json", "--workers", "2", path, path).stdout)["lint"] == []


def test_positional_options_are_linted_without_error():
    """The grammar lets `tape t(x):` and `var(3) x = 1.0` through (the run reports them)."""
    assert codes("tape t(True):\n    y = 1.0\ng = t.gradient(y, y)\nh = t.gradient(y, y)\n") == []
    assert codes("var(3) x = 1\ntape t:\n    watch x\n    y = x * x\ng = t.gradient(y, x)\n") == [("TDF003", 1)]
