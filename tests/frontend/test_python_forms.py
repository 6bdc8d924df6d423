"""Programs written as Python, the way TensorFlow users write them (docs/spec/LANGUAGE.md §11): the Python
front end, TensorFlow spellings, classes and modules, and Python's builtins and methods. Expected values
are Python's and TensorFlow's, worked out by hand."""
from __future__ import annotations


import numpy as np
import pytest

import tapecli
from tapecli import execution
from tapecli.api import run_source
from tapecli.errors import TdfError, TdfSyntaxError
from tapecli.frontend import ast
from tapecli.frontend.parser import parse

from conftest import cli
from python_oracle import through_cpython


def run(src: str, **kw):
    return tapecli.run(src, **kw)


def values(src: str):
    return run(src).values


@pytest.mark.parametrize("statement, names", [
    ("x = v", ["x"]), ("a, b = v", ["a", "b"]), ("[a, b] = v", ["a", "b"]), ("(a,) = v", None), ("a = b = v", None),
    ("x.a = v", None), ("x[0] = v", None), ("a, (b, c) = v", None),
    ("x += v", ["x"]), ("x /= v", ["x"]), ("x //= v", None), ("x.a += v", None), ("x[0] -= v", None),
    ("for x in v:\n    pass", ["x"]), ("for a, b in v:\n    pass", ["a", "b"]),
    ("for a, (b, c) in v:\n    pass", None), ("for x.a in v:\n    pass", None)])
def test_an_assignment_or_loop_is_one_node_whatever_its_target_and_simple_names_tells_plain_names(statement, names):
    # the fast paths (compiled closures, scalar sources, loop plans) take the statements simple_names gives names of
    node = parse(statement + "\n").body[0]
    assert type(node).__name__ in ("Assign", "AugAssign", "For")
    assert ast.simple_names(node) == names
    walked = [n.id for n in ast.walk(node) if isinstance(n, ast.Name)]     # a plain-names target reads nothing
    assert ("x" in walked or "a" in walked) == (names is None)


def test_tensorflow_spellings_become_tdf_forms():
    body = parse("import tensorflow as tf\nx = tf.Variable(3.0)\nc = tf.constant([1.0, 2.0])\n"
                 "with tf.GradientTape(persistent=True) as tape:\n  tape.watch(c)\n  y = x * c\n"
                 "  with tape.stop_recording():\n    z = y\n  tape.reset()\n").body
    kinds = [type(s).__name__ for s in body]
    assert kinds == ["Import", "VarDecl", "ConstDecl", "TapeBlock"]
    tape = body[3]
    assert tape.name == "tape" and [k.name for k in tape.options] == ["persistent"]
    assert [type(s).__name__ for s in tape.body] == ["Watch", "Assign", "StopRecording", "Reset"]
    assert isinstance(body[1].value, ast.Number) and body[1].line == 2 and body[1].column == 1


def test_a_pasted_guide_snippet_runs_as_written():
    r = run("import tensorflow as tf\n\nx = tf.Variable(3.0)\n\nwith tf.GradientTape() as tape:\n"
            "  y = x**2\n\ndy_dx = tape.gradient(y, x)\nprint(dy_dx.numpy())\n")
    assert r.values["dy_dx"] == 6.0
    assert r.gradients[0]["name"] == "dy_dx" and r.gradients[0]["line"] == 8
    assert r.output == ["6.0"]


def test_top_level_variables_take_set():
    r = run("import tensorflow as tf\nw = tf.Variable([1.0, 2.0], dtype=tf.float32)\n"
            "with tf.GradientTape() as t:\n    l = tf.reduce_sum(w * w)\ng = t.gradient(l, w)\n",
            sets={"w": [3.0, -1.0]})
    np.testing.assert_array_equal(r.values["g"], [6.0, -2.0])


def test_a_constant_rebound_later_is_an_ordinary_name():
    assert values("import tensorflow as tf\nx = tf.constant(2.0)\nx = x * 3.0\n")["x"] == 6.0


MODULES = """
import tensorflow as tf

class Dense(tf.Module):
    \"\"\"A dense layer.\"\"\"
    def __init__(self, n_in, n_out):
        super().__init__()
        self.w = tf.Variable(tf.ones([n_in, n_out]))
        self.b = tf.Variable(tf.zeros([n_out]))

    def __call__(self, x):
        return tf.nn.relu(x @ self.w + self.b)

class MLP(tf.Module):
    def __init__(self):
        super().__init__()
        self.layers = [Dense(2, 3), Dense(3, 1)]

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x

model = MLP()
x = tf.constant([[1.0, 2.0]])
with tf.GradientTape() as tape:
    y = tf.reduce_sum(model(x))
grads = tape.gradient(y, model.trainable_variables)
shapes = [list(g.shape) for g in grads]
"""


def test_tf_module_subclasses_collect_variables_sorted_by_attribute_name():
    r = run(MODULES)
    assert r.values["y"] == 9.0                          # relu([1, 2] @ ones(2, 3)) @ ones(3, 1) = 3 + 3 + 3
    assert r.values["shapes"] == [[3], [2, 3], [1], [3, 1]]   # b before w in each layer, as tf.Module sorts
    np.testing.assert_array_equal(r.values["grads"][1], np.full((2, 3), [[1.0], [2.0]]))
    assert [e["name"] for e in r.gradients] == ["grads[0]", "grads[1]", "grads[2]", "grads[3]"]


def test_keras_style_subclass_keeps_assignment_order_and_call():
    r = run("import tensorflow as tf\nfrom tensorflow import keras\n"
            "class Scale(keras.layers.Layer):\n"
            "    def __init__(self):\n        super().__init__()\n"
            "        self.w = self.add_weight(name='w', shape=[2], initializer='ones')\n"
            "        self.a = tf.Variable(2.0)\n"
            "    def call(self, x, training=None):\n        return x * self.w * self.a\n"
            "m = Scale()\nwith tf.GradientTape() as t:\n    out = tf.reduce_sum(m(tf.constant([1.0, 3.0]), training=True))\n"
            "g = t.gradient(out, m.trainable_variables)\nnames = [v.name for v in m.trainable_variables]\n")
    assert r.values["out"] == 8.0                          # (1 + 3) * 1 * 2
    np.testing.assert_array_equal(r.values["g"][0], [2.0, 6.0])
    assert r.values["g"][1] == 4.0
    # TensorFlow's names (a Keras weight's, a tf.Variable's); Keras 3 itself would not track the tf.Variable ``a``
    # (docs/tf-surface.md, "Known differences")
    assert r.values["names"] == ["w", "Variable:0"]


def test_inheritance_and_super_methods():
    v = values("class A:\n    def __init__(self, k):\n        self.k = k\n    def f(self):\n        return self.k * 2\n"
               "class B(A):\n    def f(self):\n        return super().f() + 1\n"
               "b = B(5)\nr = b.f()\n")
    assert v["r"] == 11


PYTHON = """
pairs = list(zip(["a", "b"], [1, 2]))
d = {k: v * 2 for k, v in pairs}
squares = [i * i for i in range(5) if i % 2 == 0]
f = lambda t: t * 3.0
z = f(2.0)
n = 4
y = 9.0
msg = f"y={float(y):.2f} n={n}"
msg2 = "{} and {:.1f}".format("a", 2.5)
msg3 = "%d items" % 3
lst = []
lst.append(1.0)
lst.insert(0, 2.0)
del lst[0]
a, b = 1, 2
a, b = b, a
m = min(3, 7)
cond = "x" if a > b else "y"
assert a == 2, "swap"
for i, (p, q) in enumerate(zip([1.0, 2.0], [3.0, 4.0])):
    last = i + p * q
keys = list(d.keys())
ok = "a" in d
total = sum([1.0, 2.0, 3.5])
"""


def test_python_forms_mean_what_python_means():
    v = values(PYTHON)
    assert v["d"] == {"a": 2, "b": 4}
    assert v["squares"] == [0, 4, 16]
    assert v["z"] == 6.0
    assert (v["msg"], v["msg2"], v["msg3"]) == ("y=9.00 n=4", "a and 2.5", "3 items")
    assert v["lst"] == [1.0]
    assert (v["a"], v["b"], v["m"], v["cond"]) == (2, 1, 3, "x")
    assert v["last"] == 9.0                               # 1 + 2 * 4
    assert v["keys"] == ["a", "b"]
    assert bool(v["ok"]) is True
    assert v["total"] == 6.5


def test_min_and_max_with_two_arguments_are_pythons():
    v = values("n = 10\nbatch = 4\ni = 8\nhi = min(i + batch, n)\nr = min([3.0, 1.0])\n")
    assert v["hi"] == 10
    assert v["r"] == 1.0


def test_negative_shape_entries_and_axes():
    v = values("import tensorflow as tf\nx = tf.ones([2, 3])\nr = tf.reshape(x, [-1])\n"
               "s = tf.reduce_sum(x, axis=[-1])\nq = tf.reshape(x, [-1, 2])\n")
    assert list(np.shape(v["r"])) == [6] and list(np.shape(v["q"])) == [3, 2]
    np.testing.assert_array_equal(v["s"], [3.0, 3.0])


@pytest.mark.parametrize("src, kind, words", [
    ("import subprocess\n", "NameError", "cannot import subprocess"),
    ("x = open('f')\n", "NameError", "open() is not available in tapecli programs: it reaches files"),
    ("import tensorflow as tf\ny = tf.signal.fft(1.0)\n", "NameError", "tapecli has no tf.signal.fft"),
    ("x = '{0.__class__.__base__}'.format(1)\n", "NameError", "the attribute __base__ of int cannot be read"),
    ("b = type(1).__dict__\n", "NameError", "the attribute __dict__ of int cannot be read"),
    ("assert 1 == 2, 'nope'\n", "AssertionError", "nope"),
])
def test_unsupported_python_is_a_clear_error(tmp_path, src, kind, words):
    path = tmp_path / "p.py"
    path.write_text(src)
    r = cli("run", "--json", path)
    assert r.code == 3
    err = r.json["error"]
    assert err["kind"] == kind and words in err["message"] and err["line"]


def test_hints_are_right_or_absent(tmp_path):
    path = tmp_path / "p.py"
    path.write_text("import tensorflow as tf\nz = tf.clip_by_valu(1.0, 0.0, 1.0)\n")
    assert cli("run", "--json", path).json["error"]["hint"] == "did you mean tf.clip_by_value?"
    path.write_text("import tensorflow as tf\nz = tf.signal.fft(1.0)\n")
    assert "hint" not in cli("run", "--json", path).json["error"]


@pytest.mark.parametrize("expr", ["expand_dims([[1.0, 2.0]], 0)", "reshape([1.0, 2.0], [2, 1])",
                                  "transpose([[1.0, 2.0]])", "squeeze([[1.0, 2.0]])", "stop_gradient([1.0, 2.0])",
                                  "identity([1.0, 2.0])"])
def test_a_literal_stays_a_literal_through_shape_ops(expr):
    v = values(f"y = {expr} * ones([1])\n")
    assert v["y"].dtype == np.float32


def test_dense_takes_a_builtin_activation_function():
    r = run("import tensorflow as tf\nlayer = tf.keras.layers.Dense(1, activation=tf.nn.relu, kernel_initializer='ones')\n"
            "y = layer(tf.constant([[1.0, -3.0]]))\n")
    assert r.values["y"] == [[0.0]]


STAR_FORMS = """
def f(a, *args, b=2, **kw):
    return a, args, b, kw
r1 = f(1, 2, 3, b=4, c=5)
r1b = f(1)
def g(*, x, y=3):
    return x + y
r2 = g(x=1)
def h(a, b, /, c):
    return a * 100 + b * 10 + c
r3 = h(1, 2, c=3)
args = [1, 2]
kw = {"c": 3}
r4 = h(*args, **kw)
l = lambda *a, **k: (len(a), len(k))
r5 = l(1, 2, z=3)
def fwd(*args, **kwargs):
    return h(*args, **kwargs)
r6 = fwd(4, 5, c=6)
"""


def test_star_args_keyword_only_and_positional_only_parameters_bind_as_python_binds():
    v = values(STAR_FORMS)
    assert v["r1"] == [1, [2, 3], 4, {"c": 5}]
    assert v["r1b"] == [1, [], 2, {}]
    assert (v["r2"], v["r3"], v["r4"], v["r6"]) == (4, 123, 123, 456)
    assert v["r5"] == [2, 1]


BINDING_ERRORS = {
    "def g(*, x):\n    return x\nr = g(1)\n": "takes 0 positional",
    "def g(*, x):\n    return x\nr = g()\n": "missing the keyword-only argument x",
    "def h(a, /):\n    return a\nr = h(a=1)\n": "has no parameter a",
    "def h(a):\n    return a\nr = h(**{'a': 1, 'b': 2})\n": "has no parameter b",
    "def h(a):\n    return a\nr = h(1, **{'a': 1})\n": "two values for a",
    "def h(**k):\n    return k\nr = h(**[1])\n": "must be a mapping",
}


def test_binding_errors_say_what_python_says():
    """A Python program's binding errors are CPython's own, word for word."""
    for src in BINDING_ERRORS:
        with pytest.raises(TdfError) as e:
            run(src)
        _, kind, message, line = through_cpython(src, "<input>")
        assert (e.value.kind, e.value.message, e.value.line) == (kind, message, line)


@pytest.mark.parametrize("src", ["def f():\n    yield 1\nx = list(f())\n", "try:\n    x = 1 / 0\nexcept:\n    x = 2\n",
                                 "x = 0\ndef g():\n    global x\n    x = 5\ng()\n",
                                 "class A:\n    pass\nx = A().__dict__\n",
                                 # the class being made is the program's to the hooks its class statement runs
                                 "class B:\n    def __init_subclass__(cls):\n        cls.tag = cls.__name__\n"
                                 "        setattr(cls, '_n', 1)\nclass A(B):\n    pass\nx = (A.tag, A._n)\n",
                                 "class M(type):\n    def __init__(cls, name, bases, ns):\n"
                                 "        super().__init__(name, bases, ns)\n        cls.tag = 'm_' + name\n"
                                 "class A(metaclass=M):\n    pass\nx = A.tag\n",
                                 "class F:\n    def __set_name__(self, owner, name):\n"
                                 "        owner.fields = getattr(owner, 'fields', ()) + (name,)\n"
                                 "class A:\n    x = F()\n    y = F()\nx = A.fields\n"])
def test_python_forms_the_interpreter_refused_run_as_cpython_runs_them(src):
    ours = run(src + "print(repr(x))\n").output
    assert ours == through_cpython(src + "print(repr(x))\n", "<input>")[0]


@pytest.mark.parametrize("src", ["def f(a=1, b):\n    pass\n", "def f(*, **k):\n    pass\n",
                                 "def f(**k, a):\n    pass\n", "def f(a, a):\n    pass\n", "def f(*a, *, b):\n    pass\n"])
def test_malformed_parameter_lists_are_syntax_errors(src):
    with pytest.raises(TdfSyntaxError):
        parse(src)


def test_property_and_super_with_class_and_self():
    v = values("import tensorflow as tf\n"
               "class A:\n    def __init__(self, k):\n        self.k = k\n    @property\n    def double(self):\n"
               "        return self.k * 2\n    def f(self, x):\n        return x + self.k\n"
               "class B(A):\n    def __init__(self, k, **kwargs):\n        super(B, self).__init__(k)\n"
               "        self.extra = kwargs\n    def f(self, x):\n        return super(B, self).f(x) * 10\n"
               "b = B(3, z=1)\nr1 = b.double\nr2 = b.f(1)\nr3 = b.extra\n"
               "class M(tf.Module):\n    def __init__(self, **kwargs):\n        super().__init__(**kwargs)\n"
               "        self.w = tf.Variable(2.0)\n    @property\n    def scale(self):\n        return self.w * 3.0\n"
               "m = M(name='m')\nwith tf.GradientTape() as t:\n    y = m.scale\ng = t.gradient(y, m.w)\n")
    assert (v["r1"], v["r2"], v["r3"]) == (6, 40, {"z": 1})
    assert v["y"] == 6.0 and v["g"] == 3.0


def test_a_property_without_setter_refuses_assignment():
    with pytest.raises(TdfError) as e:
        run("class A:\n    @property\n    def p(self):\n        return 1\na = A()\na.p = 2\n")
    assert "no setter" in e.value.message


def test_keyword_mappings_reach_tensorflow_calls_and_a_tape_takes_named_options_only():
    v = values("import tensorflow as tf\nopts = {'trainable': False}\nv = tf.Variable(1.0, **opts)\n"
               "def f(*args, **kwargs):\n    return tf.reduce_sum(tf.stack(args)) * kwargs['s']\ny = f(1.0, 2.0, s=3.0)\n"
               "t = tf.GradientTape()\nwith t:\n    t.watch(v)\n    z = v * 2.0\ng = t.gradient(z, v)\n")
    assert v["y"] == 9.0 and v["g"] == 2.0
    with pytest.raises(TdfSyntaxError):
        parse("import tensorflow as tf\nwith tf.GradientTape(**{}) as t:\n    pass\n")


@pytest.mark.parametrize("on_cpython", ["0", "1"])
def test_print_takes_end_and_flush_as_python_does(monkeypatch, on_cpython):
    """print's ``end``: a line is complete at its newline, as on a stream, on either runner."""
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", on_cpython)
    source = ("import tensorflow as tf\nfor i in range(3):\n    print(i, end=' ')\nprint()\n"
              "print('a', 'b', sep='-', end='!\\n')\nprint('x', end='')\nprint('y', flush=True)\nprint('tail', end='')\n")
    result = run_source(source, "p.py")
    assert isinstance(result.interpreter, execution.PythonRun) == (on_cpython == "1")
    assert result.output == ["0 1 2 ", "a-b!", "xy", "tail"]


def test_a_python_program_naming_what_it_never_binds_runs_as_python_until_that_line():
    """A typo'd name is CPython's NameError at its line, after what ran before it printed (it was TDF's run of a
    program that is not TDF, which refused a NumPy slice assignment earlier on)."""
    src = "import numpy as np\nc = np.zeros(4)\nc[0:2] = 2.0\nprint(c)\nprint(undefined_name.history)\n"
    with pytest.raises(TdfError) as e:
        run(src)
    _, kind, message, line = through_cpython(src, "<input>")
    assert (e.value.kind, e.value.message, e.value.line) == (kind, message, line) == ("NameError", message, 5)
    assert e.value.output == ["[2. 2. 0. 0.]"]
