"""Messages in the program's spelling (tapecli/runtime/spelling.py): every hint that shows a form to write
spells it as TDF for a .tdf program and as TensorFlow Python for a .py program that imports tensorflow; a
dtype mismatch converts the right operand; a NumPy call that takes a value off the tape is named in the
`why` of the None it causes, in `explain` and in `watched`."""
from __future__ import annotations

import pytest

from conftest import cli
from tapecli.api import run_source
from tapecli.errors import TdfError
from tapecli.runtime import spelling
from tapecli.runtime.context import begin_run

TF = "import tensorflow as tf\n"

# name: (TDF program, TensorFlow program, TDF hint, TensorFlow hint)
HINTS = {
    "dtype mismatch": ("var x = 2.0\nconst n: int32 = 3\ny = x * n\n",
                       TF + "x = tf.Variable(2.0)\nn = tf.constant(3)\ny = x * n\n",
                       "convert n with cast(n, float32)", "convert n with tf.cast(n, tf.float32)"),
    "dtype mismatch, integer first": ("var x = 2.0\nconst n: int32 = 3\ny = n + x\n",
                                      TF + "x = tf.Variable(2.0)\nn = tf.constant(3)\ny = n + x\n",
                                      "convert n with cast(n, float32)", "convert n with tf.cast(n, tf.float32)"),
    "dtype mismatch, augmented": ("var x = 2.0\nconst n: int32 = 3\ny = x\ny *= n\n",
                                  TF + "x = tf.Variable(2.0)\nn = tf.constant(3)\ny = x\ny *= n\n",
                                  "convert n with cast(n, float32)", "convert n with tf.cast(n, tf.float32)"),
    "dtype mismatch in a call": ("var x = 2.0\nconst n: int32 = 3\ny = multiply(n, x)\n",
                                 TF + "x = tf.Variable(2.0)\nn = tf.constant(3)\ny = tf.multiply(n, x)\n",
                                 "convert the int32 one with cast(..., float32)",
                                 "convert the int32 one with tf.cast(..., tf.float32)"),
    "float op on integers": ("const n: int32 = 3\ny = sqrt(n)\n", TF + "n = tf.constant(3)\ny = tf.sqrt(n)\n",
                             "use cast(x, float32)", "use tf.cast(x, tf.float32)"),
    "cholesky": ("const a: int32 = [[1, 0], [0, 1]]\ny = cholesky(a)\n",
                 TF + "a = tf.constant([[1, 0], [0, 1]])\ny = tf.linalg.cholesky(a)\n",
                 "cast(x, float32)", "tf.cast(x, tf.float32)"),
    "det": ("const a: int32 = [[1, 0], [0, 1]]\ny = det(a)\n",
            TF + "a = tf.constant([[1, 0], [0, 1]])\ny = tf.linalg.det(a)\n", "cast(x, float32)", "tf.cast(x, tf.float32)"),
    "softmax": ("const a: int32 = [1, 2]\ny = softmax(a)\n", TF + "a = tf.constant([1, 2])\ny = tf.nn.softmax(a)\n",
                "use cast(x, float32)", "use tf.cast(x, tf.float32)"),
    "gather": ("const a = [1.0, 2.0]\ny = gather(a, [0.0])\n",
               TF + "a = tf.constant([1.0, 2.0])\ny = tf.gather(a, tf.constant([0.0]))\n",
               "cast(indices, int32)", "tf.cast(indices, tf.int32)"),
    "one_hot": ("y = one_hot([0.0], 2)\n", TF + "y = tf.one_hot(tf.constant([0.0]), 2)\n",
                "cast(indices, int32)", "tf.cast(indices, tf.int32)"),
    "where": ("const c = [1.0, 0.0]\ny = where(c, c, c)\n", TF + "c = tf.constant([1.0, 0.0])\ny = tf.where(c, c, c)\n",
              "compare: where(x > 0, a, b)", "compare: tf.where(x > 0, a, b)"),
    "assign": ("var x = 2.0\nconst n: int32 = 3\nx.assign(n)\n", TF + "x = tf.Variable(2.0)\nx.assign(tf.constant(3))\n",
               "use cast(..., float32)", "use tf.cast(..., tf.float32)"),
    "fill": ("y = fill([2], [1.0, 2.0])\n", TF + "y = tf.fill([2], tf.constant([1.0, 2.0]))\n",
             "use ones(shape) * value", "use tf.ones(shape) * value"),
    "len": ("const a = 1.0\ny = len(a)\n", TF + "a = tf.constant(1.0)\ny = len(a)\n", "use size(x)", "use tf.size(x)"),
    "truth value": ("const a = [1.0, 2.0]\nif a:\n    y = 1.0\n", TF + "a = tf.constant([1.0, 2.0])\nif a:\n    y = 1.0\n",
                    "use all(...) or any(...)", "use tf.reduce_all(...) or tf.reduce_any(...)"),
    "undefined name": ("y = qqqzzz + 1.0\n", TF + "y = qqqzzz + 1.0\n",
                       "declare it with var, const or =", "bind it first (qqqzzz = ...)"),
    "convert_to_tensor": ("const n: int32 = 3\ny = convert_to_tensor(n, dtype=float32)\n",
                          TF + "n = tf.constant(3)\ny = tf.convert_to_tensor(n, dtype=tf.float32)\n",
                          "use cast(x, float32)", "use tf.cast(x, tf.float32)"),
    "switch_case": ("y = switch_case(1, [lambda: 1.0])\n", TF + "y = tf.switch_case(1, [lambda: 1.0])\n",
                    "constant(i)", "tf.constant(i)"),
    "declared dtype": ("var x: float32 = cast(1, int32)\n", TF + "x = tf.Variable(tf.constant(1), dtype=tf.float32)\n",
                       "use cast(..., float32)", "use tf.cast(..., tf.float32)"),
    "second gradient": ("var x = 3.0\ntape t:\n    y = x * x\ng = t.gradient(y, x)\ng2 = t.gradient(y, x)\n",
                        TF + "x = tf.Variable(3.0)\nwith tf.GradientTape() as t:\n    y = x * x\n"
                        "g = t.gradient(y, x)\ng2 = t.gradient(y, x)\n",
                        "declare it with tape t(persistent=True):",
                        "tape t computed them at line 5: open it with `with tf.GradientTape(persistent=True) as t:`"),
}


@pytest.mark.parametrize("name", HINTS)
@pytest.mark.parametrize("suffix", [".tdf", ".py"])
def test_each_hint_is_in_the_programs_spelling(name, suffix):
    tdf, python, tdf_hint, python_hint = HINTS[name]
    with pytest.raises(TdfError) as e:
        run_source(tdf if suffix == ".tdf" else python, f"p{suffix}")
    assert e.value.hint == (tdf_hint if suffix == ".tdf" else python_hint)


CONST_ASSIGN = "const c = 1.0\nc = 2.0\n"
WATCH_OUTSIDE = "var x = 1.0\nwatch x\n"


def test_tdf_only_statements_hint_in_tdf():
    with pytest.raises(TdfError) as e:
        run_source(CONST_ASSIGN, "p.tdf")
    assert e.value.hint == "use another name, or declare it with var c = ..."
    with pytest.raises(TdfError) as e:
        run_source(WATCH_OUTSIDE, "p.tdf")
    assert e.value.hint == "put it inside `tape t:`, or name one: watch x in t"


@pytest.mark.parametrize("python, forms", [
    (False, ["cast(x, float32)", "where(c, a, b)", "var x = 1", "const c = 1", "watch x", "reset t",
             "stop_recording t"]),
    (True, ["tf.cast(x, tf.float32)", "tf.where(c, a, b)", "x = tf.Variable(1)", "c = tf.constant(1)", "t.watch(x)",
            "t.reset()", "with t.stop_recording():"]),
])
def test_the_spelling_helper_in_both_spellings(python, forms):
    begin_run().settings.python_spelling = python        # as a run of such a program sets it
    assert [spelling.cast("x", "float32"), spelling.call("where", "c", "a", "b"), spelling.declaration("var", "x", "1"),
            spelling.declaration("const", "c", "1"), spelling.tape_statement("watch", "t", "x"),
            spelling.tape_statement("reset", "t"), spelling.tape_statement("stop_recording", "t")] == forms
    begin_run()


# (exp(100) is inf in float32 and its gradient g * inf is NaN where g is 0: TensorFlow's too; sqrt's gradient,
# as TensorFlow's SqrtGrad, is 0 there)
NUMERICS = {".tdf": "const x = [100.0, 1.0]\ntape t:\n    watch x\n    y = where(x < 50.0, exp(x), 0.0)\n"
                    "    s = sum(y)\ng = t.gradient(s, x)\n",
            ".py": TF + "x = tf.constant([100.0, 1.0])\nwith tf.GradientTape() as t:\n    t.watch(x)\n"
                   "    y = tf.where(x < 50.0, tf.exp(x), 0.0)\n    s = tf.reduce_sum(y)\ng = t.gradient(s, x)\n"}


@pytest.mark.parametrize("suffix, where, hint", [
    (".tdf", "The `where` at line 4", "e.g. where(x > 0, sqrt(where(x > 0, x, 1.0)), 0.0)"),
    (".py", "The `tf.where` at line 5", "e.g. tf.where(x > 0, tf.sqrt(tf.where(x > 0, x, 1.0)), 0.0)"),
])
def test_check_numerics_suggests_where_in_the_programs_spelling(tmp_path, suffix, where, hint):
    program = tmp_path / f"p{suffix}"
    program.write_text(NUMERICS[suffix])
    r = cli("run", "--check-numerics", "--json", program)
    error = r.json["error"]
    assert r.code == 3 and where in error["message"] and error["hint"].endswith(hint)


def test_a_dtype_mismatch_hint_names_the_operand_to_convert(tmp_path):
    program = tmp_path / "dtype_hint.py"
    program.write_text(TF + "x = tf.Variable(2.0)\nn = tf.constant(3)\nwith tf.GradientTape() as tape:\n    y = x * n\n")
    r = cli("run", program)
    assert r.code == 3 and "hint: convert n with tf.cast(n, tf.float32)" in r.stderr and "cast(x" not in r.stderr
    error = cli("run", "--json", program).json["error"]
    assert (error["line"], error["hint"]) == (5, "convert n with tf.cast(n, tf.float32)")


def test_lint_advice_for_an_unbuilt_layer_names_no_statement_of_one_spelling(tmp_path):
    program = tmp_path / "p.tdf"
    program.write_text("L = Dense(2)\nconst c = [[1.0, 2.0]]\ntape t:\n    watch L.kernel\n    y = L(c)\n"
                       "g = t.gradient(y, c)\n")
    finding = next(f for f in cli("lint", "--json", program).json["findings"] if f["code"] == "TDF005")
    assert "watching it here watches nothing" in finding["message"] and "this watch" not in finding["message"]


# ------------------------------------------------------------------ NumPy off the tape, by name
NP_NONE = (TF + "import numpy as np\nx = tf.Variable([1.0, 2.0])\nwith tf.GradientTape() as tape:\n"
           "    y = tf.reduce_sum(np.square(x))\nprint(tape.gradient(y, x))\n")


def test_the_why_of_a_none_through_numpy_names_the_call_and_its_line(tmp_path):
    program = tmp_path / "np_none.py"
    program.write_text(NP_NONE)
    (g,) = cli("grad", "--json", program).json["gradients"]
    assert g["value"] is None and "np.square() at line 5" in g["why"] and "not read inside" not in g["why"]
    (e,) = cli("explain", "--json", "--of", "y", "--wrt", "x", program).json["explanations"]
    assert not e["connected"] and "np.square() at line 5" in e["why"]


def test_watched_names_the_numpy_calls_that_took_values_off_the_tape(tmp_path):
    program = tmp_path / "np_none.py"
    program.write_text(NP_NONE)
    (tape,) = cli("watched", "--json", program).json["tapes"]
    # as in TensorFlow, NumPy reads the variable (its numpy()), which the tape watches
    assert tape["watched"] == [{"name": "x", "kind": "variable", "how": "accessed"}]
    assert tape["not_watched"] == [] and tape["off_the_tape"] == [{"line": 5, "call": "np.square()"}]
    table = cli("watched", program, env={"COLUMNS": "200"}).stdout
    assert "line 5: np.square() took values off the tape" in table


def test_numpy_method_values_are_named_where_they_leave_the_tape(tmp_path):
    program = tmp_path / "p.py"
    program.write_text(TF + "x = tf.Variable(2.0)\nwith tf.GradientTape() as t:\n    y = x.numpy() ** 2\n"
                       "g = t.gradient(y, x)\nwith tf.GradientTape() as t2:\n    z = x * 3.0\n    w = z.numpy() * 2.0\n"
                       "g2 = t2.gradient(w, x)\n")
    grads = {g["name"]: g for g in cli("grad", "--json", program).json["gradients"]}
    assert "x.numpy() at line 4" in grads["g"]["why"] and "not its .numpy() values" in grads["g"]["why"]
    assert "z.numpy() at line 8" in grads["g2"]["why"]
    tapes = cli("watched", "--json", program).json["tapes"]
    assert [t["off_the_tape"] for t in tapes] == [[{"line": 4, "call": "x.numpy()"}], [{"line": 8, "call": "z.numpy()"}]]
