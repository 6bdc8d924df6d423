"""NumPy beside the tape (tapecli/library/numpy_forms.py): array methods, np.random (default_rng and the seeded
global functions) and the NumPy functions TensorFlow programs use. NumPy is the reference here: each expected
value is computed by NumPy itself in the test."""
from __future__ import annotations

import numpy as np
import pytest

import tapecli
from tapecli.errors import TdfError, TdfNameError


def run(src: str) -> dict:
    return tapecli.run("import numpy as np\nimport tensorflow as tf\n" + src).values


def _array(value):
    if isinstance(value, list):
        return [_array(v) for v in value]
    return np.asarray(getattr(value, "value", value))


def test_default_rng_gives_numpys_own_numbers_bit_for_bit():
    v = run("rng = np.random.default_rng(1234)\na = rng.normal(size=(2, 3))\nb = rng.uniform(-1.0, 1.0, size=4)\n"
            "c = rng.integers(0, 10, size=5)\nd = rng.standard_normal(3, dtype=np.float32)\ne = rng.permutation(6)\n"
            "f = rng.random((2, 2))\ng = rng.choice(5, size=3, replace=False)\n"
            "h = tf.constant(rng.normal(0.5, 2.0), dtype=tf.float64)\n")   # a Python float, kept whole
    rng = np.random.default_rng(1234)
    want = [rng.normal(size=(2, 3)), rng.uniform(-1.0, 1.0, size=4), rng.integers(0, 10, size=5),
            rng.standard_normal(3, dtype=np.float32), rng.permutation(6), rng.random((2, 2)),
            rng.choice(5, size=3, replace=False), np.asarray(rng.normal(0.5, 2.0))]
    for name, w in zip("abcdefgh", want):
        got = _array(v[name])
        assert got.dtype == w.dtype and got.shape == w.shape, name
        assert np.array_equal(got, w), name


def test_np_random_seed_seeds_the_runs_own_global_stream():
    src = ("np.random.seed(7)\na = np.random.normal(size=3)\nb = np.random.rand(2, 2)\nc = np.random.randn(2)\n"
           "d = np.random.randint(0, 5, size=4)\ne = np.random.uniform(0.0, 2.0, (2,))\nf = np.random.random(2)\n")
    v = run(src)
    np.random.seed(7)
    want = [np.random.normal(size=3), np.random.rand(2, 2), np.random.randn(2), np.random.randint(0, 5, size=4),
            np.random.uniform(0.0, 2.0, (2,)), np.random.random(2)]
    for name, w in zip("abcdef", want):
        got = _array(v[name])
        assert got.dtype == w.dtype and np.array_equal(got, w), name
    again = run(src)
    assert np.array_equal(_array(again["a"]), _array(v["a"]))       # the stream belongs to the run


def test_array_methods_are_numpys():
    v = run("a = np.array([[1.0, 2.0, 3.5], [4.0, -5.0, 6.25]])\nm = a.mean()\ns0 = a.sum(axis=0)\n"
            "s1 = a.sum(axis=1, keepdims=True)\nr = a.reshape(3, 2)\nt = a.T\ni = a.astype(np.int32)\n"
            "l = a.tolist()\nx = a.max()\nn = a.min(axis=1)\nsd = a.std()\nam = a.argmax()\nfl = a.flatten()\n"
            "it = a[0, 1].item()\nsh = a.shape\nsz = a.size\n")
    a = np.array([[1.0, 2.0, 3.5], [4.0, -5.0, 6.25]])     # NumPy's own: float64
    want = {"m": a.mean(), "s0": a.sum(axis=0), "s1": a.sum(axis=1, keepdims=True), "r": a.reshape(3, 2),
            "t": a.T, "i": a.astype(np.int32), "x": a.max(), "n": a.min(axis=1), "sd": a.std(), "am": a.argmax(),
            "fl": a.flatten()}
    for name, w in want.items():
        got = _array(v[name])
        assert got.dtype == np.asarray(w).dtype and np.array_equal(got, w), name
    assert np.array_equal(np.array(_array(v["l"]), dtype=np.float32), a)
    assert float(_array(v["it"])) == 2.0 and list(_array(v["sh"])) == [2, 3] and int(_array(v["sz"])) == 6


def test_numpy_functions_are_numpys():
    v = run("a = np.arange(5)\nb = np.arange(0.0, 1.0, 0.25)\nc = np.append([1.0, 2.0], [3.0])\n"
            "d = np.concatenate([np.arange(2), np.arange(3)])\ne = np.finfo(np.float32).eps\n"
            "f = np.finfo(np.float64).max\ng = np.vstack([np.arange(2), np.arange(2)])\n")
    want = {"a": np.arange(5), "b": np.arange(0.0, 1.0, 0.25), "c": np.append([1.0, 2.0], [3.0]),
            "d": np.concatenate([np.arange(2), np.arange(3)]), "e": np.finfo(np.float32).eps,
            "f": np.finfo(np.float64).max, "g": np.vstack([np.arange(2), np.arange(2)])}
    for name, w in want.items():
        got = _array(v[name])
        assert got.dtype == np.asarray(w).dtype and np.array_equal(got, w), name


def test_numpy_values_are_constants_to_the_tape():
    v = run("x = tf.Variable([1.0, 2.0])\nwith tf.GradientTape() as t:\n    y = x * 3.0\n"
            "    m = y.numpy().mean()\n    z = tf.reduce_sum(y) + m\ng = t.gradient(z, x)\n"
            "with tf.GradientTape() as t2:\n    k = tf.reduce_sum(x.numpy().sum() * x)\ngk = t2.gradient(k, x)\n")
    assert float(_array(v["m"])) == 4.5
    np.testing.assert_array_equal(_array(v["g"]), [3.0, 3.0])       # the mean adds no gradient
    np.testing.assert_array_equal(_array(v["gk"]), [3.0, 3.0])


def test_a_generator_method_the_interpreter_lacks_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", "0")       # (CPython's run has NumPy's own Generator)
    with pytest.raises(TdfError) as e:
        run("rng = np.random.default_rng(0)\nx = rng.spawn(2)\n")
    assert "no method spawn" in e.value.message


@pytest.mark.parametrize("on_cpython", ["0", "1"])
@pytest.mark.parametrize("spelling, module", [("np.relu", "numpy"), ("np.linalg.softmax", "numpy.linalg"),
                                              ("math.softmax", "math")])
def test_a_name_the_module_lacks_is_a_name_error(spelling, module, on_cpython, monkeypatch):
    """np.X and math.X are the modules' own names, as in Python: TensorFlow's names do not leak into them (CPython's
    AttributeError on CPython)."""
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", on_cpython)
    with pytest.raises(TdfError, match=f"{module}'? has no attribute"):
        tapecli.run(f"import tensorflow as tf\nimport numpy as np\nimport math\nf = {spelling}\n")


@pytest.mark.parametrize("on_cpython", ["0", "1"])
@pytest.mark.parametrize("spelling", ["np.save", "np.load", "np.fromfile", "np.memmap", "np.ctypeslib"])
def test_numpy_names_reaching_files_or_memory_are_refused_with_their_reason(spelling, on_cpython, monkeypatch):
    # (on CPython, np.save and np.load read and write a program's own streams: a path is what is refused)
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", on_cpython)
    call = "('x.npy')" if on_cpython == "1" and spelling in ("np.save", "np.load") else ""
    with pytest.raises(TdfNameError, match="(out of scope for tapecli|is not available in tapecli programs): it "
                                           "(reads or writes files|reaches raw memory|reaches files)"):
        tapecli.run(f"import tensorflow as tf\nimport numpy as np\nf = {spelling}{call}\n")


_DTYPES = ("int64", "int32", "uint8", "float32", "float64", "bool")
_SCALARS = ("3", "0.2", "True", "-2")


@pytest.mark.parametrize("op", ["+", "-", "*", "/", "//", "%", "**"])
def test_numpy_arithmetic_is_numpys_on_the_interpreter(op, monkeypatch):
    """An array beside a Python number or another array computes as NumPy does (NEP 50: an int64 array times 0.2
    is float64, a float32 array times 2.5 float32, a uint8 array plus 3 uint8): checked against NumPy itself, dtype
    and values, for each pair of these dtypes and each of these Python scalars on either side."""
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", "0")
    arrays = {d: np.array([1, 2, 3]).astype(d) for d in _DTYPES}
    cases = [(f"a_{d}", s) for d in _DTYPES for s in _SCALARS] + [(s, f"a_{d}") for d in _DTYPES for s in _SCALARS] + \
        [(f"a_{d}", f"a_{e}") for d in _DTYPES for e in _DTYPES]
    env = {f"a_{d}": a for d, a in arrays.items()}
    statements, want = {}, {}
    for i, (x, y) in enumerate(cases):
        try:
            with np.errstate(all="ignore"):
                want[f"r{i}"] = eval(f"{x} {op} {y}", {}, env)
        except (TypeError, ValueError, OverflowError, ZeroDivisionError):
            continue
        statements[f"r{i}"] = f"{x} {op} {y}"
    source = "".join(f"a_{d} = np.array([1, 2, 3]).astype('{d}')\n" for d in _DTYPES) + "".join(
        f"{name} = {text}\n" for name, text in statements.items())
    got = run(source)
    for name, expected in want.items():
        value = _array(got[name])
        assert value.dtype == np.asarray(expected).dtype, statements[name]
        np.testing.assert_array_equal(value, expected, err_msg=statements[name])


@pytest.mark.parametrize("expression", ["np.array([1], dtype=np.uint8) + 300", "np.array([1.5]) & 1"])
def test_numpy_arithmetic_refuses_as_numpy_does_on_the_interpreter(expression, monkeypatch):
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", "0")
    with pytest.raises((OverflowError, TypeError)):
        eval(expression, {"np": np})
    with pytest.raises(TdfError):
        run(f"x = {expression}\n")


def test_r_and_c_join_as_numpys(monkeypatch):
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", "0")
    v = run("a = np.r_[np.zeros(2), np.ones(2)]\nb = np.r_[0:5, 7, np.array([8, 9])]\nc = np.c_[np.arange(3), np.ones(3)]\n"
            "d = np.r_[np.array([1, 2]), 0.5]\n")
    for name, want in {"a": np.r_[np.zeros(2), np.ones(2)], "b": np.r_[0:5, 7, np.array([8, 9])],
                       "c": np.c_[np.arange(3), np.ones(3)], "d": np.r_[np.array([1, 2]), 0.5]}.items():
        got = _array(v[name])
        assert got.dtype == want.dtype and np.array_equal(got, want), name
    with pytest.raises(TdfError, match="1,000,000,000 elements"):
        run("x = np.r_[0:10**9]\n")
    with pytest.raises(TdfError, match="10,000,000,000 elements"):       # (a float step's many points)
        run("x = np.r_[0:1:1e-10]\n")


def test_mesh_grids_are_numpys_and_weighed_whole(monkeypatch):
    """np.mgrid's arrays each hold the ranges' product (weighed so before NumPy makes them), np.ogrid's one range."""
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", "0")
    v = run("a = np.mgrid[:3, 1:7:2]\nb = np.ogrid[:2, :4]\nc = np.mgrid[0:1:0.25]\n")
    assert np.array_equal(_array(v["a"]), np.mgrid[:3, 1:7:2])
    assert [_array(x).shape for x in v["b"]] == [(2, 1), (1, 4)]
    assert np.array_equal(_array(v["c"]), np.mgrid[0:1:0.25])
    with pytest.raises(TdfError, match="2,000,000,000 elements"):
        run("x = np.mgrid[:10**5, :10**4]\n")


_TEXT_EXPRESSIONS = ('w == "bb"', 'w != "a"', 'w < "b"', '"ccc" == w', 'w == w[::-1]', 'w + "!"', 'w[1:]',
                     'w[w != "a"]', 'w[[2, 0]]', 'w[0]', 'np.unique(w[[0, 0, 1]])', 'np.where(w == "a", 1, 0)')


def test_numpy_string_arrays_compute_as_numpys_on_the_interpreter(monkeypatch):
    """NumPy's strings (``rng.choice(["a", "b"])``, ``np.array(["x"])``) stay NumPy's on the interpreter: compared,
    indexed and joined as NumPy does, each result checked against NumPy itself; TensorFlow converts them to a
    string tensor of UTF-8 bytes."""
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", "0")
    words = np.array(["a", "bb", "ccc"])
    got = run('w = np.array(["a", "bb", "ccc"])\n' + "".join(f"r{i} = {e}\n" for i, e in enumerate(_TEXT_EXPRESSIONS))
              + "t = tf.constant(w)\nd = str(w.dtype)\n")
    for i, expression in enumerate(_TEXT_EXPRESSIONS):
        want = np.asarray(eval(expression, {"np": np, "w": words}))
        value = _array(got[f"r{i}"])
        assert value.dtype == want.dtype and np.array_equal(value, want), expression
    assert _array(got["t"]).tolist() == [b"a", b"bb", b"ccc"]
    assert got["d"] == "<U3"
