"""One language (docs/spec/LANGUAGE.md §11): TDF's statements beside Python's forms in any mix, through one
grammar; the tape as an object with methods wherever it goes; one iteration rule; builtins bound once;
messages in the program's spelling; NumPy off the tape; @tf.function's side effects said. Expected
values are Python's and TensorFlow's, worked out by hand."""
from __future__ import annotations

import numpy as np
import pytest

import tapecli
from tapecli.errors import TdfError
from tapecli.frontend import ast, fastparse
from tapecli.frontend.parser import parse

from conftest import cli
from frontend.lark_oracle import parse_body


def values(src: str) -> dict:
    return tapecli.run(src).values


def arr(v) -> np.ndarray:
    return np.asarray(getattr(v, "value", v))


def as_float(v) -> float:
    return float(arr(v))


# ------------------------------------------------------------------ mixing
def test_tdf_statements_beside_python_forms():
    v = values("var w = [1.0, -2.0]\nconst x = [3.0, 1.0]\ntape t:\n    y = reduce_sum(w * x) if True else 0.0\n"
               "g = t.gradient(y, {'w': w})\nsteps = {k: -0.5 * v for k, v in g.items()}\n"
               "msg = f\"{float(y):.1f}\"\nsq = (lambda z: z * z)(3.0)\n")
    assert np.allclose(arr(v["steps"]["w"]), [-1.5, -0.5])
    assert v["msg"] == "1.0" and as_float(v["sq"]) == 9.0


def test_python_tape_block_with_tdf_watch_and_expect(tmp_path):
    program = tmp_path / "p.tdf"
    program.write_text("import tensorflow as tf\nconst x = 2.0\nwith tf.GradientTape() as t:\n    watch x\n"
                       "    y = x ** 3\ng = t.gradient(y, x)\nexpect g == 12.0\n")
    r = cli("check", "--json", program)
    assert r.code == 0 and r.json["passed"] == 1


@pytest.mark.parametrize("src, name, expected", [
    ("var = 3\nr = var + 1\n", "r", 4.0),                          # a soft keyword where a name is read
    ("reset = 2.0\nexpect_error = reset * 2\n", "expect_error", 4.0),
    ("const = [1.0, 2.0]\nn = len(const)\n", "n", 2.0),
    ("def watch(v):\n    return v * 10\nr = watch(1.0) + 0\n", "r", 10.0),
])
def test_soft_keywords_are_names_where_no_statement_follows(src, name, expected):
    assert as_float(values(src)[name]) == expected


def test_a_tape_named_tape_answers_its_methods():
    v = values("const x = 3.0\ntape tape:\n    tape.watch(x)\n    y = x * x\ng = tape.gradient(y, x)\n")
    assert as_float(v["g"]) == 6.0


def test_the_two_parsers_give_one_ast_on_mixed_programs():
    for text in ["var x = 1.0\nwith tf.GradientTape() as t:\n    y = [v * 2 for v in (x, x) if v is not None]\n",
                 "tape t(persistent=True):\n    a, (b, c) = 1, (2, 3)\n    d: int = 4; e = f'{a!r:>{b}}'\n",
                 "@tf.function(jit_compile=True)\ndef f(x: float, y=2) -> float:\n    return x ** -y\n",
                 "class M(tf.Module):\n    def __init__(self):\n        self.w = {'a': 1}\n",
                 "for i, (p, q) in enumerate(zip(a, b)):\n    del p\nassert a not in b, 'm'\n",
                 "x = 0x1F + 1_000 + .5e-3 + 3.\ns = 'a' \"b\" r'\\d'\nexpect x ~= 1\n",
                 "d = {**a, 'k': 1, **b}\n",
                 "y = x[..., None] + x[1, ...]\ndef f():\n    ...\n"]:
        assert fastparse.parse(text) == parse_body(text), text


@pytest.mark.parametrize("src, construct", [
    ("try:\n    x = 1\nexcept ValueError:\n    pass\n", "try/except"),
    ("def f():\n    yield 1\n", "yield"),
    ("global x\n", "global"),
    ("async def f():\n    pass\n", "async def"),
    ("s = {1, 2}\n", "a set"),
    ("m = a << 1\n", "the << operator"),
    ("raise ValueError('x')\n", "raise"),
    ("x = 1j\n", "complex numbers"),
    ("from . import x\n", "a relative import"),
    ("with open('f') as h:\n    pass\n", "this `with` statement"),
])
def test_a_python_form_tapecli_does_not_run_is_named(src, construct):
    with pytest.raises(TdfError) as e:
        parse(src)
    assert type(e.value).__name__ == "TdfSyntaxError" and construct in e.value.message
    assert e.value.line == 1 or construct in ("yield",)


def test_tensorflow_spellings_are_tdf_statements_in_any_mix():
    body = parse("import tensorflow as tf\nvar a = 1.0\nb = tf.Variable(2.0)\ntape t:\n    t.watch(a)\n"
                 "    with t.stop_recording():\n        pass\n    t.reset()\n").body
    assert [type(s).__name__ for s in body] == ["Import", "VarDecl", "VarDecl", "TapeBlock"]
    assert [type(s).__name__ for s in body[3].body] == ["Watch", "StopRecording", "Reset"]


# ------------------------------------------------------------------ the tape as an object
def test_a_tape_passed_to_a_function_aliased_or_in_a_list_has_its_methods():
    v = values("const c = 2.0\nvar x = 3.0\ndef watch_it(tp, v):\n    tp.watch(v)\n"
               "tape t(persistent=True):\n    alias = t\n    watch_it(alias, c)\n    y = x * x * c\n"
               "    tapes = [t]\n    with tapes[0].stop_recording():\n        z = x * 5.0\n"
               "g = alias.gradient(y, [x, c])\ngz = t.gradient(z, x)\nn = len(tapes[0].watched_variables())\n"
               "tapes[0].reset()\n")
    assert [as_float(g) for g in v["g"]] == [12.0, 9.0]       # d(x*x*c)/dx = 2xc, d/dc = x*x
    assert v["gz"] is None and as_float(v["n"]) == 1


def test_reset_through_an_alias_forgets_the_recording():
    v = values("var x = 2.0\ntape t(persistent=True):\n    y = x * x\n    other = t\n    other.reset()\n"
               "    z = x * 3.0\ngy = t.gradient(y, x)\ngz = t.gradient(z, x)\n")
    assert v["gy"] is None and as_float(v["gz"]) == 3.0


# ------------------------------------------------------------------ one iteration rule
@pytest.mark.parametrize("iterable, expected", [
    ('"wbw"', ["w", "b", "w"]),
    ('{"a": 1, "b": 2}', ["a", "b"]),
    ("[1.0, 2.0]", [1.0, 2.0]),
    ("zip([1, 2], [3, 4])", [[1, 3], [2, 4]]),
    ("constant([[1.0, 2.0], [3.0, 4.0]])", [[1.0, 2.0], [3.0, 4.0]]),
])
def test_for_loops_and_comprehensions_iterate_alike(iterable, expected):
    v = values(f"looped = []\nfor item in {iterable}:\n    looped.append(item)\n"
               f"comprehended = [item for item in {iterable}]\n")

    def plain(x):
        if isinstance(x, (list, tuple)):
            return [plain(i) for i in x]
        return x if isinstance(x, str) else arr(x).tolist()
    assert plain(v["looped"]) == plain(v["comprehended"]) == expected


# ------------------------------------------------------------------ builtins bound once
def test_a_builtin_bound_twice_must_say_it_replaces():
    from tapecli.interpreter.registry import BUILTINS, register
    with pytest.raises(RuntimeError, match="bound twice"):
        register("sum", None)
    with pytest.raises(RuntimeError, match="there is none"):
        register("surely_not_a_builtin", None, replaces=True)
    assert "surely_not_a_builtin" not in BUILTINS


@pytest.mark.parametrize("on_cpython", ["0", "1"])
def test_bool_int_float_are_dtypes_and_functions(monkeypatch, on_cpython):
    """bool and float are dtypes to TensorFlow (dtypes._PYTHON_TO_TF); int is one on the interpreter only (TensorFlow
    cannot convert it, nor does CPython's run)."""
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", on_cpython)
    v = values("import tensorflow as tf\nx = tf.constant([1.0, 0.0, 2.0])\nb1 = tf.cast(x, tf.bool)\n"
               "b2 = tf.cast(x, bool)\nn = tf.cast(b1, tf.int32)\nf = tf.zeros([2], dtype=float)\n"
               "p = bool(x[1])\nq = int(2.7)\nr = float(x[2])\nsame = b1.dtype == tf.bool\n")
    assert arr(v["b1"]).tolist() == arr(v["b2"]).tolist() == [True, False, True]
    assert str(arr(v["n"]).dtype) == "int32" and str(arr(v["f"]).dtype) == "float32"
    if on_cpython == "1":
        with pytest.raises(TdfError, match="dtype"):
            values("import tensorflow as tf\nn = tf.cast(tf.constant([True]), int)\n")
    assert bool(arr(v["p"])) is False and int(arr(v["q"])) == 2 and float(arr(v["r"])) == 2.0
    assert bool(arr(v["same"]))


# ------------------------------------------------------------------ messages in the program's spelling
PYTHON_SECOND_GRADIENT = ("import tensorflow as tf\nx = tf.Variable(3.0)\nwith tf.GradientTape() as t:\n"
                          "    y = x * x\ng = t.gradient(y, x)\ng2 = t.gradient(y, x)\n")
TDF_SECOND_GRADIENT = "var x = 3.0\ntape t:\n    y = x * x\ng = t.gradient(y, x)\ng2 = t.gradient(y, x)\n"


@pytest.mark.parametrize("suffix, src, spelled, not_spelled", [
    (".py", PYTHON_SECOND_GRADIENT, "tf.GradientTape(persistent=True)", "tape t(persistent=True):"),
    (".tdf", TDF_SECOND_GRADIENT, "tape t(persistent=True):", "tf.GradientTape"),
])
def test_hints_and_lint_speak_the_programs_spelling(tmp_path, suffix, src, spelled, not_spelled):
    program = tmp_path / f"p{suffix}"
    program.write_text(src)
    r = cli("run", program)
    assert r.code == 3 and spelled in r.stderr and not_spelled not in r.stderr
    lint = cli("lint", program)
    assert "TDF001" in lint.stdout and spelled in lint.stdout and not_spelled not in lint.stdout


def test_lint_advice_on_an_integer_variable_is_tensorflow_python(tmp_path):
    program = tmp_path / "p.py"
    program.write_text("import tensorflow as tf\nx = tf.Variable(3)\nwith tf.GradientTape() as t:\n"
                       "    y = x * x\ng = t.gradient(y, x)\n")
    out = cli("lint", program).stdout
    assert "TDF003" in out and "tf.Variable(3.0)" in out and "var x" not in out


# ------------------------------------------------------------------ NumPy leaves the tape
def test_numpy_and_numpy_method_values_are_off_the_tape(tmp_path):
    program = tmp_path / "p.py"
    program.write_text("import numpy as np\nimport tensorflow as tf\nx = tf.Variable(3.0)\n"
                       "with tf.GradientTape(persistent=True) as tape:\n    y1 = np.square(x)\n"
                       "    y3 = tf.square(x)\ng1 = tape.gradient(y1, x)\ng3 = tape.gradient(y3, x)\n")
    r = cli("grad", "--json", program)
    grads = {g["name"]: g for g in r.json["gradients"]}
    assert grads["g1"]["value"] is None and "np.square() at line 5" in grads["g1"]["why"]
    assert grads["g3"]["value"] == 6.0                       # d(x^2)/dx at 3, as TensorFlow says
    v = values("import tensorflow as tf\nx = tf.Variable(2.0)\nwith tf.GradientTape() as t:\n"
               "    y = x.numpy() ** 2\ng = t.gradient(y, x)\n")
    assert v["g"] is None and as_float(v["y"]) == 4.0


def test_numpy_values_stay_usable_as_constants():
    v = values("import numpy as np\nimport tensorflow as tf\nw = tf.Variable(np.array([1.0, 2.0]))\n"
               "with tf.GradientTape() as t:\n    y = tf.reduce_sum(w * np.array([3.0, 4.0]))\n"
               "g = t.gradient(y, w)\n")
    assert arr(v["g"]).tolist() == [3.0, 4.0]


# ------------------------------------------------------------------ @tf.function
def test_tf_function_side_effects_run_while_it_traces_or_are_said_at_the_decorator(tmp_path):
    """A statement that is only a Python side effect runs while the function traces (once here, as TensorFlow
    printed); one inside a statement that computes more runs on every call, said at the decorator."""
    program = tmp_path / "p.py"
    program.write_text("import tensorflow as tf\ncalls = []\n@tf.function\ndef f(x):\n    calls.append(1)\n"
                       "    return x * 2.0\na = f(tf.constant(1.0))\nb = f(tf.constant(2.0))\nprint(len(calls))\n")
    r = cli("run", "--json", program)
    assert r.code == 0 and r.json["output"] == ["1"]
    assert not [w for w in r.json["warnings"] if "@tf.function" in w["message"]]
    popped = tmp_path / "r.py"
    popped.write_text("import tensorflow as tf\nseen = {'a': 1.0}\n@tf.function\ndef f(x):\n    n = seen.pop('a', 2.0)\n"
                      "    return x * n\na = f(tf.constant(1.0))\nb = f(tf.constant(2.0))\n")
    r = cli("run", "--json", popped)
    warning = next(w for w in r.json["warnings"] if "@tf.function" in w["message"])
    assert warning["line"] == 3 and ".pop() at line 5" in warning["message"]
    pure = tmp_path / "q.py"
    pure.write_text("import tensorflow as tf\n@tf.function\ndef f(x):\n    return x * 2.0\na = f(1.0)\n")
    assert not [w for w in cli("run", "--json", pure).json["warnings"] if "@tf.function" in w["message"]]


def test_with_items_of_several_tapes_nest():
    body = parse("import tensorflow as tf\nwith tf.GradientTape() as a, tf.GradientTape() as b:\n    pass\n").body
    outer = body[1]
    assert isinstance(outer, ast.TapeBlock) and outer.name == "a"
    assert isinstance(outer.body[0], ast.TapeBlock) and outer.body[0].name == "b"
    assert not any(isinstance(s, ast.With) for s in ast.walk(body))


# ------------------------------------------------------------------ list literals keep Python's meaning
@pytest.mark.parametrize("src, expected", [
    ("r = [0.0] * 3\n", [0.0, 0.0, 0.0]),
    ("r = 2 * [1.0, 2.0]\n", [1.0, 2.0, 1.0, 2.0]),
    ("r = [1, 2] + [3]\n", [1, 2, 3]),
    ("n = 2\nr = [[0.0] * n for _ in range(2)]\n", [[0.0, 0.0], [0.0, 0.0]]),
    ("x = constant([1.0, 2.0])\nr = x * [2.0, 3.0]\n", [2.0, 6.0]),           # beside a tensor: elementwise
    ("x = constant(2)\nr = [1, 2] * x\n", [2, 4]),                             # a strong integer tensor too
])
def test_list_repetition_and_concatenation_are_pythons(src, expected):
    r = values(src)["r"]
    got = [arr(v).tolist() for v in r] if isinstance(r, list) else arr(r).tolist()
    assert got == expected
