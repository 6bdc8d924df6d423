"""Python as CPython runs it: programs run through tapecli and through CPython must print the same lines and
end with the same error class, message and line (tests/python_oracle.py). Two sources: the hand-written
programs of tests/data/python (classes, exceptions, generators, closures, the standard library, NumPy), and
programs hypothesis draws over Python's forms. TAPECLI_LONG_FUZZ=N draws N programs instead of the CI's few
hundred (the README's long mode)."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).parents[1]))
from python_oracle import addresses_masked, agree, through_cpython, through_tapecli  # noqa: E402

from tapecli import execution  # noqa: E402

PROGRAMS = sorted((Path(__file__).parents[1] / "data" / "python").glob("*.py"))
EXAMPLES = int(os.environ.get("TAPECLI_LONG_FUZZ", "300"))


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_hand_written_programs_agree_with_cpython(path):
    source = path.read_text()
    assert execution.python_only(source, "prog.py") is not None, "the program should run as Python alone"
    agree(source)


# ---- drawn programs
NAMES = ("a", "b", "c", "xs", "d")
small_ints = st.integers(-20, 20)
big_ints = st.builds(lambda k, s: s * 2 ** k, st.integers(60, 200), st.sampled_from((1, -1)))
floats = st.floats(-1e6, 1e6, allow_nan=False).map(repr)
atoms = st.one_of(small_ints.map(str), big_ints.map(str), floats, st.sampled_from(
    ("True", "False", "None", "'ab'", "''", "[1, 2, 3]", "[]", "(1, 'x')", "{'k': 1}", "2.5", "0.1")),
    st.sampled_from(NAMES))


def _binary(pair, op):
    return f"({pair[0]} {op} {pair[1]})"


expressions = st.recursive(atoms, lambda inner: st.one_of(
    st.builds(_binary, st.tuples(inner, inner), st.sampled_from(
        ("+", "-", "*", "/", "//", "%", "<", "==", "!=", "and", "or", "in", "is", "&", "|", "^"))),
    st.builds(lambda x: f"(-{x})", inner), st.builds(lambda x: f"(not {x})", inner),
    st.builds(lambda x, e: f"({x} ** {e})", inner, st.integers(0, 5)),
    st.builds(lambda f, x: f"{f}({x})", st.sampled_from(
        ("abs", "len", "str", "repr", "bool", "int", "float", "round", "sorted", "list", "sum", "min", "max",
         "type", "hash", "tuple", "set", "reversed", "enumerate")), inner),
    st.builds(lambda x, y: f"divmod({x}, {y})", inner, inner),
    st.builds(lambda x: f"[v * 2 for v in {x} if v]", inner),
    st.builds(lambda x: f"{{k: k for k in {x}}}", inner),
    st.builds(lambda x: f"sum(v for v in {x})", inner),
    st.builds(lambda x, i: f"{x}[{i}]", inner, small_ints),
    st.builds(lambda x, i, j: f"{x}[{i}:{j}]", inner, small_ints, small_ints),
    st.builds(lambda x: f'f"{{({x})!r:>6}}"', atoms),
    st.builds(lambda x, y, z: f"({x} if {y} else {z})", inner, inner, inner),
    st.builds(lambda x: f"isinstance({x}, (int, Base))", inner),
    st.builds(lambda x: f"Shape({x}).area()", inner),
    st.builds(lambda x: f"list(gen({x}))", inner),
), max_leaves=6)


def _statement(kind, name, expr, other):
    return {
        "assign": f"{name} = {expr}",
        "aug": f"{name} += {expr}",
        "print": f"print({expr}, {name})",
        "if": f"if {expr}:\n    {name} = {other}\nelse:\n    print('else', {other})",
        "for": f"for item in {expr}:\n    {name} = item\n    print(item)",
        "try": f"try:\n    {name} = {expr}\nexcept (TypeError, ZeroDivisionError) as e:\n    print(type(e).__name__, e)\n"
               f"else:\n    print('ok')\nfinally:\n    print('finally')",
        "while": f"n = 0\nwhile n < 3 and {expr}:\n    n += 1\n    {name} = n",
        "call": f"{name} = apply(lambda v: {expr}, {other})",
        "raise": f"if {expr}:\n    raise ValueError({other})",
        "attr": f"obj.{name} = {expr}\nprint(obj.{name})",
        "append": f"xs.append({expr})",
    }[kind]


PRELUDE = """class Base:
    def __init__(self, v=0):
        self.v = v
    def __repr__(self):
        return f"Base({self.v!r})"
class Shape(Base):
    @staticmethod
    def unit():
        return Shape(1)
    def area(self):
        return self.v * 2
def gen(x):
    yield from (x if isinstance(x, (list, tuple, str, dict)) else [x])
def apply(f, v, *args, **kwargs):
    return f(v)
a, b, c, xs, d = 1, 2.5, 'c', [1, 2], {'k': 2}
obj = Base()
"""

statements = st.builds(_statement, st.sampled_from(
    ("assign", "aug", "print", "if", "for", "try", "while", "call", "raise", "attr", "append")),
    st.sampled_from(NAMES), expressions, expressions)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(statements, min_size=1, max_size=8))
def test_drawn_programs_agree_with_cpython(body):
    source = PRELUDE + "\n".join(body) + "\nprint(a, b, c, xs, d, obj)\n"
    assert execution.python_only(source, "prog.py") is not None
    ours = addresses_masked(through_tapecli(source))
    assume(ours[1] != "LimitError")      # tapecli's limits end what CPython would run out of memory on
    theirs = addresses_masked(through_cpython(source))
    assert ours == theirs, f"tapecli {ours!r}\nCPython {theirs!r}\n{source}"


# ---- the interpreter's Python (a TensorFlow program with a training loop its plans run, or TAPECLI_TF_ON_CPYTHON=0)
INTERPRETER_PRELUDE = """class Base:
    def __init__(self, v=0):
        self.v = v
    def __repr__(self):
        return f"Base({self.v!r})"
class Shape(Base):
    def area(self):
        return self.v * 2
def gen(x):
    return list(x) if isinstance(x, (list, tuple, str, dict)) else [x]
def apply(f, v):
    return f(v)
a, b, c, xs, d = 1, 2.5, 'c', [1, 2], {'k': 2}
obj = Base()
"""
# (the interpreter's enumerate and reversed give lists, not Python's iterators, its type() knows TensorFlow's
# classes alone, and `is` of two equal numbers is CPython's cache of small ints: forms left out of its draws)
interpreter_expressions = expressions.filter(
    lambda e: not any(f in e for f in ("enumerate(", "reversed(", "type(", " is ")))
interpreter_statements = st.builds(_statement, st.sampled_from(
    ("assign", "aug", "print", "if", "for", "while", "call", "attr", "append")),
    st.sampled_from(NAMES), interpreter_expressions, interpreter_expressions)


@pytest.mark.usefixtures("on_the_interpreter")
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[
    HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.function_scoped_fixture])
@given(body=st.lists(interpreter_statements, min_size=1, max_size=6))
def test_the_interpreters_python_gives_cpythons_values_where_it_runs_a_program(body):
    """A program CPython runs to its end prints the same lines on the interpreter, or the lines before an error
    there (a form it does not read, an operation it does not take, a limit, a Python integer past 64 bits):
    never other values."""
    source = INTERPRETER_PRELUDE + "\n".join(body) + "\nprint(a, b, c, xs, d, obj)\n"
    theirs = addresses_masked(through_cpython("\n" + source))
    assume(theirs[1] is None)
    ours = addresses_masked(through_tapecli("import tensorflow as tf\n" + source))
    printed = ours[0] or []
    assert printed == theirs[0][:len(printed)] and (ours[1] is not None or printed == theirs[0]), \
        f"tapecli {ours!r}\nCPython {theirs!r}\n{source}"
