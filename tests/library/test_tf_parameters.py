"""TensorFlow's functions take TensorFlow's parameters, checked by machine against TensorFlow 2.21's own signatures
(tests/data/tf_surface.tsv): ``tf.reduce_sum(x, name="total")``, ``tf.reshape(tensor=t, shape=[4])``,
``tf.add(x, y, "sum")``.

tapecli's builtins are written with parameters of their own (``reshape(x, shape)``); a call that binds them runs as
it did. A call that does not is bound to TensorFlow's signature instead (interpreter/registry.py,
``tensorflow_call``), through ``tapecli/interpreter/tf_parameters.py``: for each builtin a TensorFlow function
resolves to, that function's parameters and the builtin's parameter each is (the same name; else the one at the same
place, required alike; ``name`` none: TensorFlow's eager ops ignore it). The table is derived here from the surface
and the builtins as they are, so it cannot go stale (``python tests/library/test_tf_parameters.py`` writes it
again); what it cannot map is listed (``UNMAPPED``), exactly, so that a fix shows.
"""
from __future__ import annotations

import ast
import inspect
import sys
from pathlib import Path

import pytest
from conftest import cli

import tapecli.api  # noqa: F401  (the builtins, as a run has them)
from tapecli.errors import TdfError
from tapecli.interpreter.classes import Namespace
from tapecli.interpreter.registry import builtin_key, load_deferred
from tapecli.runtime.context import run_context

ROOT = Path(__file__).resolve().parents[2]
SURFACE = ROOT / "tests" / "data" / "tf_surface.tsv"
TABLE = ROOT / "tapecli" / "interpreter" / "tf_parameters.py"
_KINDS = {"POSITIONAL_OR_KEYWORD": "p", "KEYWORD_ONLY": "k"}


def tensorflow_parameters(text: str):
    """[(name, kind, TensorFlow's default as written, or None where required)] of a signature's text, or None where
    it takes ``*args``/``**kwargs``, has positional-only parameters or is not Python's syntax."""
    try:
        function = ast.parse(f"def f{text}: pass").body[0]
    except SyntaxError:
        return None
    a = function.args
    if a.vararg or a.kwarg or a.posonlyargs:
        return None
    defaults = [None] * (len(a.args) - len(a.defaults)) + [ast.unparse(d) for d in a.defaults]
    return [(arg.arg, "p", d) for arg, d in zip(a.args, defaults)] + \
        [(arg.arg, "k", None if d is None else ast.unparse(d)) for arg, d in zip(a.kwonlyargs, a.kw_defaults)]


def _own_parameters(f) -> list[inspect.Parameter] | None:
    """The builtin's parameters as a program passes them; None where it takes ``*args`` or ``**kwargs`` (it reads
    its arguments itself)."""
    try:
        params = list(inspect.signature(f).parameters.values())
    except (TypeError, ValueError):
        return None
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
        return None
    if getattr(f, "wants_interp", False):
        params = params[1:]
    return [p for p in params if not p.name.startswith("_")]


def mapping(theirs, mine: list[inspect.Parameter]) -> tuple:
    """For each of TensorFlow's parameters, the builtin's parameter it is: the same name; else the builtin's at the
    same place, positional, required where TensorFlow's is (an optional one: either default), and no name of
    TensorFlow's; "" for ``name`` where the builtin has none (TensorFlow's eager ops ignore it); None where none is."""
    own = {p.name: p for p in mine}
    positional = [p for p in mine if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    names = {name for name, _, _ in theirs}
    out = []
    for i, (name, kind, default) in enumerate(theirs):
        if name in own and own[name].kind not in (own[name].VAR_POSITIONAL, own[name].VAR_KEYWORD):
            mapped = name
        elif name == "name":
            mapped = ""
        elif kind == "p" and i < len(positional) and positional[i].name not in names \
                and (default is None) == (positional[i].default is inspect.Parameter.empty):
            mapped = positional[i].name
        else:
            mapped = None
        out.append((name, kind, default, mapped))
    return tuple(out)


def survey():
    """{builtin key: (TensorFlow symbol, mapping)} of every function of the surface that resolves to a builtin with
    parameters of its own (another name, no ``name``), and {symbol: its unmapped parameters}."""
    load_deferred()
    table, unmapped = {}, {}
    for line in SURFACE.read_text().splitlines():
        if not line or line.startswith("#"):
            continue
        symbol, kind, text = line.split("\t")
        theirs = tensorflow_parameters(text) if kind == "function" else None
        if theirs is None:
            continue
        module, _, attr = symbol.rpartition(".")
        with run_context():
            try:
                f = Namespace(module).get_attribute(None, attr, None)
            except TdfError:
                continue
        mine = _own_parameters(f) if getattr(f, "is_builtin", False) else None
        if mine is None:
            continue
        mapped = mapping(theirs, mine)
        missing = [name for name, _, _, own in mapped if own is None]
        # a positional argument binds the builtin's parameter at its place (the builtin's own binding comes first)
        places = [p.name for p in mine if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        missing += [f"{name} (at another place)" for i, (name, kind, _, own) in enumerate(mapped)
                    if kind == "p" and own and own in places and places.index(own) != i]
        if missing:
            unmapped[symbol] = missing
        if all(own == name for name, _, _, own in mapped):
            continue                    # (the builtin's own parameters are TensorFlow's)
        key = builtin_key(f)
        if key in table and table[key][1] != mapped:
            unmapped.setdefault(symbol, []).append("(another TensorFlow function, other parameters)")
            continue
        table.setdefault(key, (symbol, mapped))
    return table, unmapped


_HEADER = '''"""TensorFlow's parameters of the builtins its functions resolve to, where the builtin's own differ (generated by
tests/library/test_tf_parameters.py from tests/data/tf_surface.tsv: edit those, not this). registry.builtin_key of
the builtin -> (TensorFlow's symbol, ((parameter, "p" positional or "k" keyword-only, its default as TensorFlow
writes it or None, the builtin's parameter: "" none, None unmapped), ...)). Read by registry.tensorflow_call, for a
call that does not bind the builtin's own parameters."""
'''


def table_text(table: dict) -> str:
    rows = "".join(f"    {key!r}: ({symbol!r}, (\n" + "".join(f"        {p!r},\n" for p in mapped) + "    )),\n"
                   for key, (symbol, mapped) in sorted(table.items()))
    return f"{_HEADER}\nPARAMETERS = {{\n{rows}}}\n"


@pytest.fixture(scope="module")
def surveyed():
    return survey()


def test_the_table_is_the_surfaces(surveyed):
    assert TABLE.read_text() == table_text(surveyed[0]), "run: python tests/library/test_tf_parameters.py"


# TensorFlow's parameters that no builtin parameter stands for (or, at another place, that a positional call would
# give another meaning): a call naming one is refused as tapecli's limit, one passing it by position binds the
# builtin's parameter at that place. Shorten the list as builtins take them.
UNMAPPED = {
    'tf.fill': ['layout'],                  # (DTensor's layouts)
    'tf.ones': ['layout'],
    'tf.ones_like': ['layout'],
    'tf.zeros': ['layout'],
    'tf.zeros_like': ['layout'],
    'tf.linalg.matrix_transpose': ['conjugate', '(another TensorFlow function, other parameters)'],
    # (the builtin takes TensorFlow 1's t, m, v in the places of TensorFlow 2's input, mean, variance, and those
    # names by keyword: a call binds alike)
    'tf.nn.batch_norm_with_global_normalization': ['input (at another place)', 'mean (at another place)',
                                                   'variance (at another place)'],
    'tf.tuple': ['tensors', 'control_inputs'],
    'tf.linspace': ['name (at another place)'],    # (the bare linspace takes a dtype there: a string is its error)
}


def test_every_tensorflow_parameter_maps_or_is_listed(surveyed):
    assert surveyed[1] == UNMAPPED


def test_the_table_maps_the_builtins_whose_parameters_differ(surveyed):
    assert len(surveyed[0]) > 100 and "tapecli.library.core:reshape" in surveyed[0]


@pytest.mark.parametrize("call, printed", [
    ('tf.reduce_sum(x, name="total")', "tf.Tensor(6.0, shape=(), dtype=float32)"),
    ("tf.expand_dims(input=x, axis=0).shape", "(1, 2, 2)"),
    ("tf.reshape(tensor=x, shape=[4])", "tf.Tensor([ 1. -2.  3.  4.], shape=(4,), dtype=float32)"),
    ('tf.add(x, x, "sum")[0]', "tf.Tensor([ 2. -4.], shape=(2,), dtype=float32)"),
    ("tf.pow(x=x, y=2.0)[1]", "tf.Tensor([ 9. 16.], shape=(2,), dtype=float32)"),
    ("tf.concat(values=[x, x], axis=0).shape", "(4, 2)"),
    ("tf.argmax(input=x)", "tf.Tensor([1 1], shape=(2,), dtype=int64)"),
])
@pytest.mark.parametrize("runner", ["python", "interpreter"])
def test_a_call_with_tensorflows_parameters_runs(tmp_path, call, printed, runner, monkeypatch):
    # printed: TensorFlow 2.21's output of the same program
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", "1" if runner == "python" else "0")
    program = tmp_path / "p.py"
    program.write_text(f"import tensorflow as tf\nx = tf.constant([[1.0, -2.0], [3.0, 4.0]])\nprint({call})\n")
    out = cli("run", "--no-color", "--output-only", str(program))
    assert out.code == 0, out.stderr
    assert out.stdout.strip() == printed


def test_a_parameter_tensorflow_lacks_is_its_type_error(tmp_path):
    program = tmp_path / "p.py"
    program.write_text("import tensorflow as tf\nprint(tf.reduce_sum([1.0], total=2))\n")
    out = cli("run", "--no-color", str(program))
    assert out.code != 0
    assert "tf.reduce_sum(): got an unexpected keyword argument 'total'" in out.stderr
    assert "usage: tf.reduce_sum(input_tensor, axis=None, keepdims=False, name=None)" in out.stderr


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "tests"))
    TABLE.write_text(table_text(survey()[0]))
