"""NumPy's own docstring examples as a test of the Python path: for every public function and class of the NumPy
modules the sandbox allows (derived from execution/modules.py's table, not listed by hand), the examples of its
docstring become one program (``import numpy as np`` and the statements, each expression whose value doctest
would show printed with ``repr``), run by CPython itself and by tapecli (tests/python_oracle.py): printed lines
and error (class, message, line) must agree. NumPy is installed wherever tapecli is, so the oracle is NumPy at
test time, never a recording.

Examples are left out with a reason: those NumPy marks ``+SKIP``, fragments that are not Python, those that
reach what tapecli refuses (``np.testing``, ``np.load``, ``memoryview``, ...: each such refusal is tested to be
tapecli's refusal naming it, not an error or a wrong number), those that plot with matplotlib (tapecli's stand-in
draws nothing) and those using a name such an example binds. A shown value NumPy marks ``# random`` or
``# uninitialized`` is computed but not printed; a program whose output differs between two CPython runs (fresh
entropy, object ids) is skipped. Known differences are listed with a reason in
tests/data/numpy_docstrings_known.tsv: the test fails if a listed one agrees or an unlisted one differs. CI runs a
deterministic sample of the docstrings (every listed one included); TAPECLI_LONG_FUZZ=N runs all of them.
``python tests/conformance/test_numpy_docstrings.py`` prints the counts."""
from __future__ import annotations

import ast
import doctest
import importlib
import os
import re
import sys
import types
from collections import Counter
from functools import cache
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1]))
from python_oracle import addresses_masked, through_cpython, through_tapecli  # noqa: E402

from tapecli import api, execution  # noqa: E402
from tapecli.errors import TdfNameError  # noqa: E402
from tapecli.execution.builtin_table import REFUSED_BUILTINS  # noqa: E402
from tapecli.execution.guard import UNREACHABLE  # noqa: E402
from tapecli.execution.modules import ALLOWED, STAND_INS, allows, submodule_name  # noqa: E402

KNOWN_FILE = Path(__file__).parents[1] / "data" / "numpy_docstrings_known.tsv"
NUMPY_MODULES = sorted(m for m in ALLOWED if m.split(".")[0] == "numpy")
PRELUDE = "import numpy as np\n\n\ndef show(value):\n    if value is not None:\n        print(repr(value))\n"
RANDOM_OUTPUT = re.compile(r"#\s*(random|uninitiali[sz]ed)", re.IGNORECASE)
SAMPLE_EVERY = 1 if os.environ.get("TAPECLI_LONG_FUZZ") else 6
_PARSER = doctest.DocTestParser()


@cache
def documented() -> dict[str, str]:
    """'module.name' -> docstring, for every name a program may read of an allowed NumPy module whose docstring
    has examples (one entry per docstring: ``np.linalg.outer`` and ``np.outer`` may share one)."""
    out, seen = {}, set()
    for module in NUMPY_MODULES:
        real = importlib.import_module(module)
        for name in sorted(dir(real)):
            obj = getattr(real, name, None)
            doc = getattr(obj, "__doc__", None)
            if not allows(module, name) or isinstance(obj, types.ModuleType) or not isinstance(doc, str) \
                    or doc in seen or not _PARSER.get_examples(doc):
                continue
            seen.add(doc)
            out[f"{module}.{name}"] = doc
    return out


@cache
def known() -> dict[str, str]:
    rows = (line.split("\t", 1) for line in KNOWN_FILE.read_text().splitlines() if line and not line.startswith("#"))
    return {name: reason for name, reason in rows}


# ---- an example's references to what tapecli refuses
def refused_reference(tree: ast.AST, aliases: dict[str, str]) -> str | None:
    """The first thing ``tree`` reaches that tapecli refuses (a module, a name of an allowed module, a builtin,
    an attribute), spelled as tapecli's message spells it; ``aliases`` (name -> module) is updated by imports."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name not in ALLOWED:
                    return alias.name
                aliases[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            if node.module not in ALLOWED:
                return node.module
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                if full in ALLOWED:
                    aliases[alias.asname or alias.name] = full
                elif not allows(node.module, alias.name):
                    return full
        elif isinstance(node, ast.Attribute) and node.attr in UNREACHABLE:
            return node.attr
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in REFUSED_BUILTINS:
            return f"{node.id}()"
        elif isinstance(node, ast.Attribute):
            found = _refused_chain(node, aliases)
            if found:
                return found
    return None


def _refused_chain(node: ast.Attribute, aliases: dict[str, str]) -> str | None:
    """``np.a.b.c`` followed from module to module: the first name of it that tapecli refuses."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.insert(0, node.attr)
        node = node.value
    module = aliases.get(node.id) if isinstance(node, ast.Name) else None
    for attr in parts if module else ():
        full = f"{module}.{attr}"
        if not allows(module, attr):
            return full
        value = getattr(importlib.import_module(module), attr, None)
        if not isinstance(value, types.ModuleType):
            return None
        if submodule_name(module, attr, value) not in ALLOWED:     # (np.emath is numpy.lib.scimath)
            return full
        module = submodule_name(module, attr, value)
    return None


def _plots(tree: ast.AST) -> bool:
    """Whether the example imports matplotlib (its stand-in's modules, or one the stand-in lacks): what it draws is
    no output to compare."""
    tops = {module.split(".")[0] for module in STAND_INS}
    return any((getattr(node, "module", None) or alias.name).split(".")[0] in tops for node in ast.walk(tree)
               if isinstance(node, (ast.Import, ast.ImportFrom)) for alias in node.names)


def _bound(tree: ast.AST) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.alias):
            names.add(node.asname or node.name.split(".")[0])
    return names


def _loaded(tree: ast.AST) -> set[str]:
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}


# ---- a docstring's examples as a program
class Examples:
    """One docstring's examples: the program of those that run, each example's reason to be left out (None
    where it runs), and the program that ends at the first example tapecli refuses (with what it refuses)."""

    def __init__(self, doc: str):
        self.reasons: list[str | None] = []
        self.refused: tuple[str, str] | None = None      # (the program up to the refused example, what it refuses)
        body: list[ast.stmt] = []
        aliases = {"np": "numpy"}
        missing: set[str] = set()
        for example in _PARSER.get_examples(doc):
            reason, statements = self._statements(example, aliases, missing)
            self.reasons.append(reason)
            if reason and reason.startswith("refused") and self.refused is None:
                self.refused = (_source(body + statements), reason.split(": ", 1)[1])
            if reason is None:
                body += statements
        self.source = _source(body) if body else None

    @staticmethod
    def _statements(example, aliases, missing) -> tuple[str | None, list[ast.stmt]]:
        if example.options.get(doctest.SKIP):
            return "marked +SKIP by NumPy", []
        try:
            tree = ast.parse(example.source)
        except SyntaxError:
            return "not Python (a fragment of a doctest)", []
        statements = tree.body if RANDOM_OUTPUT.search(example.want) else [_Shown().visit(s) for s in tree.body]
        if example.exc_msg is not None:       # the error NumPy shows, printed: the examples after it run too
            handler = ast.parse("try:\n    pass\nexcept Exception as e:\n    print(type(e).__name__ + ':', e)").body[0]
            handler.body = statements
            statements = [handler]
        if _plots(tree):
            missing |= _bound(tree)
            return "plots with matplotlib (tapecli's stand-in draws nothing)", []
        refused = refused_reference(tree, aliases)
        if refused:
            missing |= _bound(tree)
            return f"refused: {refused}", statements
        if _loaded(tree) & missing:
            missing |= _bound(tree)
            return "uses a name a left-out example binds", []
        missing -= _bound(tree)
        return None, statements


class _Shown(ast.NodeTransformer):
    """Each expression statement shows its value, as in doctest's interactive mode: at any depth of ``for``,
    ``if``, ``with``..., not in the body of a ``def`` or ``class``."""

    def visit_Expr(self, node: ast.Expr) -> ast.Expr:
        return ast.Expr(ast.Call(ast.Name("show", ast.Load()), [node.value], []))

    def visit_FunctionDef(self, node: ast.AST) -> ast.AST:
        return node

    visit_AsyncFunctionDef = visit_ClassDef = visit_FunctionDef


def _source(body: list[ast.stmt]) -> str:
    module = ast.fix_missing_locations(ast.Module(body, []))
    return PRELUDE + ast.unparse(module) + "\n"


def sampled() -> list[str]:
    names = list(documented())
    return [name for i, name in enumerate(names) if i % SAMPLE_EVERY == 0 or name in known()]


def outcome(name: str):
    """(what differs, tapecli's outcome, CPython's) for the docstring's program; pytest.skip where none runs
    or CPython itself does not repeat."""
    examples = Examples(documented()[name])
    if examples.source is None:
        pytest.skip("every example is left out: " + "; ".join(sorted({r for r in examples.reasons if r})))
    assert execution.python_only(examples.source, "prog.py") is not None, "it should run as Python alone"
    theirs = addresses_masked(through_cpython(examples.source))
    if addresses_masked(through_cpython(examples.source)) != theirs:
        pytest.skip("its output differs between two CPython runs (fresh entropy, object ids)")
    ours = addresses_masked(through_tapecli(examples.source))
    return ours != theirs, ours, theirs, examples.source


@pytest.mark.parametrize("name", sampled())
def test_numpy_docstring_examples_agree_with_cpython(name):
    differs, ours, theirs, source = outcome(name)
    if name in known():
        assert differs, f"{name} is listed in {KNOWN_FILE.name} ({known()[name]}) but now agrees: remove it"
    else:
        assert not differs, f"tapecli {ours!r}\nCPython {theirs!r}\nprogram:\n{source}"


def test_the_known_list_names_only_documented_functions():
    assert set(known()) <= set(documented()), set(known()) - set(documented())


REFUSED_EXAMPLES = sorted(name for name, doc in documented().items() if Examples(doc).refused)


@pytest.mark.parametrize("name", REFUSED_EXAMPLES)
def test_an_example_reaching_what_tapecli_refuses_ends_in_its_refusal(name):
    """The examples up to the first one that reaches a refused module, name or builtin end in tapecli's refusal
    naming it (a NameError, exit 3), never another error, an internal error or a value."""
    source, what = Examples(documented()[name]).refused
    with pytest.raises(TdfNameError) as caught:
        api.run_source(source, "prog.py")
    assert what in caught.value.message and ": " in caught.value.message, (caught.value.message, source)


@pytest.mark.parametrize("module, attr", sorted((m, a) for m in NUMPY_MODULES for a in ALLOWED[m]))
def test_every_refused_numpy_name_is_refused_with_its_reason(module, attr):
    short = module.replace("numpy", "np", 1)
    with pytest.raises(TdfNameError) as caught:
        api.run_source(f"import numpy as np\nimport {module}\nx = {short}.{attr}\n", "prog.py")
    assert caught.value.message == f"{module}.{attr} is not available in tapecli programs: {ALLOWED[module][attr]}"
    assert caught.value.line == 3


def test_the_examples_cover_every_allowed_numpy_module():
    """The harvest is derived from the allow table: each NumPy module with documented functions is in it."""
    covered = {name.rsplit(".", 1)[0] for name in documented()}
    assert {"numpy", "numpy.random", "numpy.linalg", "numpy.fft"} <= covered


def counts() -> Counter:
    """Every docstring's examples by what became of them: agreed, differed (the known list), in a program CPython
    does not repeat, or left out by reason (the counts in the README and docs/language.md)."""
    out = Counter()
    for name, doc in documented().items():
        reasons = Examples(doc).reasons
        out.update(f"left out: {reason}" for reason in reasons if reason)
        ran = sum(reason is None for reason in reasons)
        try:
            differs = outcome(name)[0]
        except pytest.skip.Exception:
            out["in a program CPython does not repeat"] += ran
            continue
        out["differed (known)" if differs else "agreed"] += ran
    return out


if __name__ == "__main__":
    for what, n in counts().most_common():
        print(f"{n:6}  {what}")
