"""The grammar and parser: positions on nodes, and syntax errors with line, column and a hint."""
import pytest
from hypothesis import given, settings, strategies as st

from tapecli.frontend import ast
from tapecli.errors import TdfSyntaxError
from tapecli.frontend.parser import parse


def test_every_node_has_a_position():
    program = parse("var x = 3.0\ntape t(persistent=True):\n    y = x ** 2 + f(x, k=1)[0]\ng = t.gradient(y, x)\n")
    nodes = [n for n in ast.walk(program) if not isinstance(n, ast.Program)]
    assert nodes and all(n.line > 0 and n.column > 0 for n in nodes)
    call = next(n for n in nodes if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute))
    assert (call.line, call.column) == (4, 5)


def test_power_binds_tighter_than_unary_minus_and_is_right_associative():
    expr = parse("y = -x ** 2 ** 3\n").body[0].value
    assert isinstance(expr, ast.UnaryOp) and expr.operand.op == "**"
    assert isinstance(expr.operand.right, ast.BinOp) and expr.operand.right.op == "**"


def test_statements_parse_to_their_nodes():
    src = """
var(trainable=False) a: float64 = 1.0
const c = [1.0, 2.0]
a1, b1 = f(1)
x += 1
@custom_gradient
def g(y):
    def backward(dy):
        return dy
    return y, backward
tape t(persistent=True):
    watch x, y in t
    stop_recording t:
        pass
    reset t
for i in range(3):
    if i == 1:
        continue
    elif i > 1:
        break
    else:
        pass
while False:
    pass
expect a ~= 1.0, "close"
expect_error TapeError:
    t.gradient(y, x)
"""
    kinds = [type(s).__name__ for s in parse(src).body]
    assert kinds == ["VarDecl", "ConstDecl", "Assign", "AugAssign", "FuncDef", "TapeBlock", "For", "While",
                     "Expect", "ExpectError"]


@pytest.mark.parametrize("source,line,column,hint", [
    ("if x > 0\n    y = 1\n", 1, 9, "':'"),
    ("y = (x + 1\n", 1, 5, "close it with )"),
    ("y = x x\n", 1, 7, "operator"),
    ("if x:\n\ty = 1\n", 2, 1, "spaces"),
    ("if x:\n    y = 1\n  z = 2\n", 3, 1, "indent"),
    ("if x = 1:\n    y = 1\n", 1, 6, "'=='"),
    ("tape t:\ny = x\n", 2, 1, "indented"),
])
def test_syntax_errors_have_positions_and_hints(source, line, column, hint):
    with pytest.raises(TdfSyntaxError) as e:
        parse(source)
    if line is not None:
        assert (e.value.line, e.value.column) == (line, column)
    assert hint in (e.value.hint or "")


def test_unexpected_character():
    with pytest.raises(TdfSyntaxError) as e:
        parse("y = $x\n")
    assert "'$'" in e.value.message and (e.value.line, e.value.column) == (1, 5)


def test_soft_keywords_are_names_where_they_do_not_begin_their_statement():
    # docs/spec/LANGUAGE.md §11: `reset = True`, a tape named `tape` (via the Python front end)
    body = parse("tape = 3\nreset = True\n").body
    assert [ast.simple_names(s) for s in body] == [["tape"], ["reset"]]


names = st.sampled_from(["x", "y", "w1", "_b"])
numbers = st.one_of(st.integers(0, 99).map(str), st.floats(0, 100, allow_nan=False).map(lambda f: f"{f:.3f}"))
atoms = st.one_of(names, numbers)
exprs = st.recursive(atoms, lambda inner: st.one_of(
    st.tuples(inner, st.sampled_from(["+", "-", "*", "/", "@", "**", "//", "%", "<", "=="]), inner)
    .map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
    st.tuples(st.sampled_from(["sin", "sum", "f"]), inner).map(lambda t: f"{t[0]}({t[1]})"),
    st.lists(inner, min_size=1, max_size=3).map(lambda xs: "[" + ", ".join(xs) + "]")), max_leaves=12)


@pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisWarning")
@settings(max_examples=200, deadline=None)
@given(exprs)
def test_generated_expressions_parse_and_keep_their_text(expr):
    source = f"y = {expr}\n"
    program = parse(source)
    node = program.body[0].value
    assert source[node.start:node.end] == expr


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="xy =+-*()[]:\n 0123456789.#@tapewhil", max_size=40))
def test_arbitrary_text_parses_or_raises_a_syntax_error(text):
    try:
        parse(text)
    except TdfSyntaxError as e:
        assert e.line is None or e.line >= 1


@pytest.mark.parametrize("source,line,column", [
    ('x = 1\nprint(f"ab {x.__class__}")\n', 2, 13),
    ('x = 1\ns = f"{x}, {x.__dict__!r}"\n', 2, 13),
    ('x = 1\ns = f"""\n{x.__dict__}"""\n', 3, 2),
])
def test_an_error_inside_an_f_string_field_names_the_fields_place(source, line, column):
    """A field's expression is parsed from its own text: its error is moved to where the field is in the file (as
    the oracle, Lark and its tree's transformer, moves it)."""
    from frontend.lark_oracle import parse_body
    for parser in (parse, parse_body):
        with pytest.raises(TdfSyntaxError) as e:
            parser(source)
        assert "not accessible" in e.value.message
        assert (e.value.line, e.value.column) == (line, column)
