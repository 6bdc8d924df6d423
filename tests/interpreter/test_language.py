"""The interpreter: values, dtypes, bindings, control flow, functions, layers, warnings, limits."""
import numpy as np
import pytest

from conftest import close, run_program, value
from tapecli.errors import LimitError, ShapeError, TdfNameError, TdfTypeError, TdfValueError, UsageError
from tapecli.runtime.limits import Limits


def dtype_of(result, name):
    from tapecli.cli.render import type_json
    return type_json(result.scope.vars[name])["dtype"]


def test_literal_dtypes_follow_tensorflow():
    r = run_program("""
        var x = 3.0
        var i = 3
        const m = [1, 3.0]
        const b = [True, False]
        var d: float64 = 0.1
        y = x * 2
        q = i / i
    """)
    assert [dtype_of(r, n) for n in "x i m b d y q".split()] == \
        ["float32", "int32", "float32", "bool", "float64", "float32", "float64"]
    assert value(r, "d") == 0.1          # exact in float64, not float64(float32(0.1))


def test_dtype_mismatch_is_a_type_error_naming_both():
    with pytest.raises(TdfTypeError) as e:
        run_program("""
            var x = 1.0
            const d: float64 = 2.0
            y = x * d
        """)
    assert "float32" in e.value.message and "float64" in e.value.message and "cast" in e.value.hint
    assert (e.value.line, e.value.column) == (3, 5)


def test_float_literal_into_int_tensor_is_an_error():
    with pytest.raises(TdfTypeError):
        run_program("""
            const i = [1, 2]
            y = i * 2.5
        """)


def test_dtype_option_makes_floats_float64():
    r = run_program("""
        var x = 0.1
        z = zeros([2])
        var k: float32 = 1.0
    """, dtype="float64")
    assert dtype_of(r, "x") == "float64" and dtype_of(r, "z") == "float64" and dtype_of(r, "k") == "float32"


def test_ragged_literal_is_an_error():
    with pytest.raises(TdfTypeError, match="ragged"):
        run_program("const x = [[1.0, 2.0], [3.0]]\n")


def test_shape_mismatch_names_both_shapes():
    with pytest.raises(ShapeError) as e:
        run_program("""
            const a = [1.0, 2.0]
            const b = [1.0, 2.0, 3.0]
            c = a + b
        """)
    assert "[2]" in e.value.message and "[3]" in e.value.message and e.value.line == 3


def test_bindings_destructuring_and_augmented_assignment():
    r = run_program("""
        a, b = [1.0, 2.0]
        c = a
        c += 5.0
        lst = [a, b]
        first = lst[0]
        d = {"k": b}
        k = d["k"]
    """)
    assert (value(r, "a"), value(r, "b"), value(r, "c"), value(r, "first"), value(r, "k")) == (1.0, 2.0, 6.0, 1.0, 2.0)


def test_constant_cannot_be_reassigned():
    with pytest.raises(TdfTypeError, match="constant"):
        run_program("""
            const c = 1.0
            c = 2.0
        """)


def test_variable_rebound_to_tensor_warns_with_line():
    r = run_program("""
        var x = 2.0
        x = x + 1
    """)
    assert r.warnings[0]["line"] == 2 and "assign_add" in r.warnings[0]["message"]


def test_watching_an_integer_warns():
    r = run_program("""
        const i = 10
        tape t:
            watch i
            y = i * i
        g = t.gradient(y, i)
    """)
    assert value(r, "g") is None
    assert "must be floating, got int32" in r.warnings[0]["message"]


def test_control_flow_loops_break_continue():
    r = run_program("""
        total = 0
        for i in range(10):
            if i == 3:
                continue
            if i == 6:
                break
            total += i
        n = 0
        while n < 5:
            n += 1
        acc = 0.0
        for v in [1.0, 2.0, 3.0]:
            acc += v
        elif_hit = 0
        if n > 10:
            elif_hit = 1
        elif n == 5:
            elif_hit = 2
        else:
            elif_hit = 3
    """)
    assert (value(r, "total"), value(r, "n"), value(r, "acc"), value(r, "elif_hit")) == (12, 5, 6.0, 2)


def test_functions_closures_recursion_and_defaults():
    r = run_program("""
        def fact(n):
            if n <= 1:
                return 1
            return n * fact(n - 1)
        def adder(k):
            def add(z, scale=1.0):
                return z * scale + k
            return add
        f = fact(6)
        add3 = adder(3.0)
        s = add3(2.0)
        s2 = add3(2.0, scale=10.0)
    """)
    assert (value(r, "f"), value(r, "s"), value(r, "s2")) == (720, 5.0, 23.0)


def test_gradient_through_function_and_loop():
    r = run_program("""
        def poly(x, n):
            out = 1.0
            for i in range(n):
                out = out * x
            return out
        var x = 2.0
        tape t:
            y = poly(x, 4)
        g = t.gradient(y, x)
    """)
    assert value(r, "g") == 32.0


def test_runaway_recursion_and_endless_loop_hit_limits():
    with pytest.raises(LimitError):
        run_program("""
            var one = 1.0
            def f(n):
                return f(n + one)
            y = f(0)
        """)
    with pytest.raises(LimitError):
        run_program("""
            n = 0
            while True:
                n += 1
        """, limits=Limits(max_steps=1000))
    with pytest.raises(LimitError):
        run_program("z = zeros([100000, 100000])\n")


def test_unknown_name_suggests_a_close_one():
    with pytest.raises(TdfNameError) as e:
        run_program("""
            var x = 1.0
            y = sigmoidd(x)
        """)
    assert e.value.hint == "did you mean sigmoid?" and (e.value.line, e.value.column) == (2, 5)


def test_dense_layer_builds_on_first_call():
    r = run_program("""
        layer = Dense(3, activation="tanh", seed=0)
        before = layer.variables
        const x = [[1.0, 2.0]]
        tape t:
            y = layer(x)
            loss = sum(y)
        g = t.gradient(loss, layer.trainable_variables)
        names = [layer.kernel.name, layer.bias.name]
    """)
    assert value(r, "before") == []
    kernel, bias = value(r, "g")
    assert np.array(kernel).shape == (2, 3) and np.array(bias).shape == (3,)
    assert value(r, "names") == ["layer.kernel", "layer.bias"]
    k = r.scope.vars["layer"].kernel.read().value
    pre = np.array([[1.0, 2.0]], np.float32) @ k
    close(bias, 1 - np.tanh(pre[0]) ** 2)


def test_dense_with_function_activation():
    r = run_program("""
        def act(z):
            return z * 2.0
        layer = Dense(1, activation=act, use_bias=False, seed=0)
        y = layer([[1.0]])
        k = layer.kernel
    """)
    close(value(r, "y"), 2 * np.array(value(r, "k")))


def test_set_overrides_declarations_keeping_dtype(tmp_path):
    r = run_program("""
        var x = 1.0
        const n = 2
        tape t:
            y = x * x
        g = t.gradient(y, x)
    """, overrides={"x": np.array([3.0, 4.0]), "n": np.array(5)})
    assert value(r, "g") == [6.0, 8.0] and dtype_of(r, "x") == "float32" and value(r, "n") == 5


def test_set_unknown_name_is_a_usage_error():
    with pytest.raises(UsageError, match="declares no var or const"):
        run_program("var x = 1.0\n", overrides={"y": np.array(1.0)})


def test_of_wrt_implicit_tape():
    r = run_program("""
        var w = 2.0
        var unused = 1.0
        const c = 3.0
        h = w * c
        loss = h * h
    """, of="loss", wrt=["w", "c", "h"])
    got = {req.names[0]: req.values[0] for req in r.implicit}
    assert float(got["d(loss)/d(w)"].value) == 36.0      # 2 w c^2
    assert float(got["d(loss)/d(c)"].value) == 24.0      # 2 w^2 c
    assert float(got["d(loss)/d(h)"].value) == 12.0
    r = run_program("""
        var w = 2.0
        var unused = 1.0
        loss = w * w
        other = unused * 2.0
    """, of="loss")
    assert [req.names[0] for req in r.implicit] == ["d(loss)/d(w)"]


def test_print_collects_output():
    r = run_program("""
        var x = 2.0
        print("x is", x * 2.0)
    """)
    assert r.output == ["x is 4.0"]


def test_value_error_for_bad_option():
    with pytest.raises(TdfValueError):
        run_program('layer = Dense(2, activation="swishy")\n')


@pytest.mark.parametrize("expr,expected", [
    ("-2.0 ** 2", -4.0), ("2 ** 3 ** 2", 512), ("7 // 2", 3), ("-7 % 3", 2), ("1 + 2 * 3", 7),
    ("not 1.0 > 2.0", True), ("1.0 < 2.0 < 3.0", True), ("(1.0 > 2.0) or 5.0", 5.0),
])
def test_operator_precedence(expr, expected):
    assert value(run_program(f"v = {expr}\n"), "v") == expected


def test_indexing_and_slicing_scatter_gradients():
    r = run_program("""
        const x = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
        tape t:
            watch x
            y = sum(x[1, ::2]) + x[0, -1] * 10.0
        g = t.gradient(y, x)
    """)
    assert value(r, "g") == [[0.0, 0.0, 10.0], [1.0, 0.0, 1.0]]


def test_expectations_are_recorded_and_execution_goes_on():
    r = run_program("""
        var x = 3.0
        tape t:
            y = x ** 2
        g = t.gradient(y, x)
        expect g == 6.0
        expect g ~= 6.00001
        expect g == 7.0, "wrong on purpose"
        expect t.gradient is not None
        expect shape(g) == []
        expect allclose(g, 6.1, rtol=0.0, atol=0.2)
        expect_error TapeError:
            h = t.gradient(y, x)
        expect_error ShapeError:
            k = x + 1.0
        after = 1.0
    """)
    oks = [(e["line"], e["ok"]) for e in r.expectations]
    assert oks == [(5, True), (6, True), (7, False), (8, True), (9, True), (10, True), (11, True), (13, False)]
    assert r.expectations[1]["rtol"] == 1e-5 and r.expectations[2]["message"] == "wrong on purpose"
    assert value(r, "after") == 1.0
    assert sum("expectation failed" in w["message"] for w in r.warnings) == 2


def test_bare_matmul_is_numpys_with_vectors_and_tfs_refuses_them():
    """LANGUAGE.md: `@` and `matmul` follow NumPy's matmul, 1-D operands included (a vector times a matrix is a
    vector); tf.matmul is TensorFlow's kernel, which takes matrices only (its InvalidArgumentError, a ValueError)."""
    r = run_program("var v = [1.0, 2.0]\nconst m = [[1.0, 0.5], [2.0, -1.0]]\ny = matmul(v, m)\nz = v @ m\n"
                    "w = matmul(m, v)\n")
    assert value(r, "y") == [5.0, -1.5] and value(r, "z") == [5.0, -1.5]
    assert value(r, "w") == [2.0, 0.0]
    with pytest.raises(TdfValueError, match=r"In\[0\] ndims must be >= 2 \[Op:MatMul\]"):
        run_program("import tensorflow as tf\nv = tf.constant([1.0, 2.0])\ny = tf.matmul(v, [[1.0], [2.0]])\n")
