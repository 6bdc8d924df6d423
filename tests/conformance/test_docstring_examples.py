"""TensorFlow's and Keras's own docstring examples as a conformance suite.

tests/tf_expectations/docstrings/tf.json and keras.json hold, for each function and class of
tests/data/tf_surface.tsv whose docstring has ``>>>`` examples, those examples as one program (doctest's way:
one namespace, in order) and the text TensorFlow 2.21 printed for each example that shows output, or the
class of the error it raised (benchmarks/record_docstring_examples.py records them in a venv with TensorFlow;
no TensorFlow here). tapecli runs each program through the library API, each shown expression turned into a
print of its repr (what doctest captures), and must print the same text: numbers compared with a relative
tolerance (float32's printed digits), the rest exactly after whitespace normalisation; an example that raised
in TensorFlow must raise a TdfError here. A symbol out of scope (tapecli/library/scope.py) must be refused
with a TdfError; an example of an in-scope symbol that tapecli refuses as out of scope (string tensors, complex
numbers, a symbol of scope.py), and one reading a name only such an example binds, counts apart. The examples
tapecli does not pass yet are tests/data/docstring_failures.tsv, an entry a line with its reason: the test
fails when a listed entry passes (tighten the list) or an unlisted one fails.

    python tests/conformance/test_docstring_examples.py      # the counts, and each failing entry's first failure
"""
from __future__ import annotations

import ast
import functools
import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from conformance.test_tf_surface import SURFACE, out_of_scope, resolves  # noqa: E402

from tapecli.api import run_source  # noqa: E402
from tapecli.errors import TdfError  # noqa: E402
from tapecli.interpreter.core import ErrorLine  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
FILES = {path.stem: json.loads(path.read_text())
         for path in sorted((ROOT / "tests" / "tf_expectations" / "docstrings").glob("*.json"))}
ENTRIES = [(stem, entry) for stem, data in FILES.items() for entry in data["entries"]]
FAILURES = dict(line.split("\t", 1) for line in (ROOT / "tests" / "data" / "docstring_failures.tsv")
                .read_text().splitlines() if line and not line.startswith("#"))
RTOL, ATOL = 1e-5, 1e-6       # float32 prints 8 significant digits; kernels may differ in the last ones
MARK = "@@doctest-example "
SHOW = "def doctest_show(value):\n    if value is not None:\n        print(repr(value))\n"
_FLOAT = re.compile(r"(?:[-+]|(?:^|(?<=[^\w.])))(?:\d+\.\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+|"
                    r"nan|inf)(?=$|[^\w.])")


def key(entry: dict) -> str:
    return entry["symbols"][0]


def standing(entry: dict) -> str:
    """"in scope" (tapecli resolves the symbol), "out of scope" (scope.py) or "missing" (not yet there)."""
    scope = out_of_scope()
    if all(symbol in scope for symbol in entry["symbols"]):
        return "out of scope"
    return "in scope" if any(resolves(s) for s in entry["symbols"] if s not in scope) else "missing"


def shown(source: str) -> str:
    """An example whose expression's value doctest shows, as a program statement that prints its repr."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    if len(tree.body) == 1 and isinstance(tree.body[0], ast.Expr):
        return f"doctest_show({ast.get_source_segment(source, tree.body[0].value)})\n"
    return source


def program(data: dict, entry: dict, indices: list[int]) -> tuple[str, dict[int, int]]:
    """The program of ``indices``' examples, each after a line printing its mark, and each line's example."""
    text = data["preamble"] + SHOW + entry.get("setup", "")
    lines: dict[int, int] = {}
    for i in indices:
        example = entry["examples"][i]
        text += f"print({MARK + str(i)!r})\n"
        start = text.count("\n") + 1
        text += shown(example["source"]) if "output" in example else example["source"]
        lines.update({line: i for line in range(start, text.count("\n") + 1)})
    return text, lines


def _run(text: str) -> list[str]:
    """What the examples printed to standard output: TensorFlow's recording read its doctests' standard output
    alone (tf.print writes to standard error)."""
    return [line for line in run_source(text, "example.py").output if not isinstance(line, ErrorLine)]


def bound(source: str) -> set[str]:
    """The names an example binds."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return names | {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}


def used(source: str) -> set[str]:
    """The names an example reads."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def refused(error: TdfError, source: str, names: set[str]) -> bool:
    """An example tapecli refuses as out of scope (a symbol of scope.py, string tensors, complex numbers), or
    one that fails reading a name such an example binds."""
    return any(word in error.message for word in OUT_OF_SCOPE_WORDS) or bool(used(source) & names)


OUT_OF_SCOPE_WORDS = ("out of scope", "complex numbers are not supported")


def outcome(stem: str, entry: dict) -> dict[int, str]:
    """Each example's failure (an empty dict: all pass); an example refused as out of scope fails with a
    message starting REFUSED. An error drops its example and the run goes on without it, as the examples after
    it may not need it."""
    data = FILES[stem]
    examples = entry["examples"]
    failures: dict[int, str] = {}

    def tainted(i: int) -> set[str]:
        """The names whose latest binding before example i is an example refused as out of scope."""
        names: set[str] = set()
        for k in range(i):
            if failures.get(k, "").startswith(REFUSED):
                names |= bound(examples[k]["source"])
            elif k not in failures:
                names -= bound(examples[k]["source"])
        return names

    raising = [i for i, e in enumerate(examples) if "raises" in e]
    for i in raising:
        before = [j for j in range(i) if j not in raising]
        text, _ = program(data, entry, before + [i])
        try:
            _run(text)
            failures[i] = f"TensorFlow raised {examples[i]['raises']}; tapecli ran it"
        except TdfError:
            pass
        except Exception as e:  # noqa: BLE001 - an internal error is a failure to report
            failures[i] = f"internal error {type(e).__name__}: {e}"
    dropped = set(raising)
    while True:
        indices = [i for i in range(len(examples)) if i not in dropped]
        text, lines = program(data, entry, indices)
        try:
            output = _run(text)
            break
        except TdfError as e:
            at = lines.get(e.line)
            message = f"{type(e).__name__}: {e.message}"
            if at is not None and refused(e, examples[at]["source"], tainted(at)):
                message = REFUSED + message
        except Exception as e:  # noqa: BLE001
            at, message = None, f"internal error {type(e).__name__}: {e}"
        if at is None:
            failures.update({i: message for i in indices})
            return failures
        failures[at] = message
        dropped.add(at)
    printed = split(output)
    for i in indices:
        if "output" in examples[i] and not same(examples[i]["output"], printed.get(i, "")):
            message = f"printed {printed.get(i, '')!r}, TensorFlow {examples[i]['output']!r}"
            # (reading a name an out-of-scope example would have bound: an earlier value of it)
            failures[i] = REFUSED + message if used(examples[i]["source"]) & tainted(i) else message
    return failures


def split(output: list[str]) -> dict[int, str]:
    """The program's output lines, by the example that printed them."""
    printed: dict[int, str] = {}
    current = None
    for line in output:
        if line.startswith(MARK):
            current = int(line[len(MARK):])
            printed[current] = ""
        elif current is not None:
            printed[current] += line + "\n"
    return printed


def same(want: str, got: str) -> bool:
    """TensorFlow's doctest checker's comparison: the numbers in the text within a relative tolerance, the
    text around them equal after whitespace normalisation."""
    def parts(text):
        numbers = [float(m) for m in _FLOAT.findall(text)]
        words = _FLOAT.sub("#", text)
        words = re.sub(r"\s+", " ", words)
        return re.sub(r" ?([#\[\](),]) ?", r"\1", words).strip(), numbers
    want_text, want_numbers = parts(want)
    got_text, got_numbers = parts(got)
    return want_text == got_text and len(want_numbers) == len(got_numbers) and \
        bool(np.allclose(got_numbers, want_numbers, rtol=RTOL, atol=ATOL, equal_nan=True))


def refusal(stem: str, entry: dict) -> str | None:
    """None when tapecli refuses the program with a TdfError, else what it did."""
    text, _ = program(FILES[stem], entry, list(range(len(entry["examples"]))))
    try:
        _run(text)
    except TdfError:
        return None
    except Exception as e:  # noqa: BLE001
        return f"internal error {type(e).__name__}: {e}"
    return RAN


RAN = "tapecli ran it"
REFUSED = "refused as out of scope: "


@functools.cache
def results(stem: str, index: int) -> tuple[str, dict[int, str] | str | None]:
    entry = FILES[stem]["entries"][index]
    where = standing(entry)
    if entry.get("skip"):
        return where, None
    if where == "in scope":
        return where, outcome(stem, entry)
    return where, refusal(stem, entry)


RUN = [(stem, i) for stem, data in FILES.items() for i, entry in enumerate(data["entries"]) if not entry.get("skip")]


@pytest.mark.parametrize("stem, index", RUN, ids=[key(FILES[s]["entries"][i]) for s, i in RUN])
def test_docstring_examples(stem, index):
    entry = FILES[stem]["entries"][index]
    where, result = results(stem, index)
    name = key(entry)
    if where != "in scope":
        # out of scope: refused with a TdfError; not yet supported: refused, or run where the examples do not
        # reach the symbol (tf.DType's use tf.float32); never an internal error
        assert result is None or (where == "missing" and result == RAN), f"{name} ({where}): {result}"
        assert name not in FAILURES, f"{name} is {where}: refused, not a known failure"
        return
    result = {i: message for i, message in result.items() if not message.startswith(REFUSED)}
    if name in FAILURES:
        assert result, f"{name} passes now: take it off tests/data/docstring_failures.tsv"
        assert not any(m.startswith("internal error") for m in result.values()), result
        return
    assert not result, "\n".join(f"{name} example {i}: {entry['examples'][i]['source'].strip()}\n  {message}"
                                 for i, message in sorted(result.items()))


def test_every_symbol_with_examples_is_in_the_suite():
    """Every function and class of the surface is recorded: with its examples, or as having none."""
    recorded = [s for _, entry in ENTRIES for s in entry["symbols"]] + \
        [s for data in FILES.values() for s in data["no_examples"]]
    assert len(recorded) == len(set(recorded)), "a symbol is recorded twice"
    assert sorted(recorded) == sorted(SURFACE), sorted(set(SURFACE) ^ set(recorded))[:20]


def test_in_scope_examples_are_run_and_not_skipped_without_a_reason():
    for stem, entry in ENTRIES:
        assert entry["examples"], key(entry)
        assert not entry.get("skip") or entry["skip"].strip(), key(entry)


def test_known_failures_name_entries_of_the_suite():
    keys = {key(entry) for _, entry in ENTRIES if not entry.get("skip")}
    assert not set(FAILURES) - keys, sorted(set(FAILURES) - keys)
    assert all(reason.strip() for reason in FAILURES.values())


def counts() -> dict[str, int]:
    """The examples of in-scope symbols that run (those TensorFlow printed the same way twice), those refused as
    out of scope, and of the others (the in-scope examples) those that pass."""
    total = passed = out = 0
    for stem, index in RUN:
        where, result = results(stem, index)
        if where != "in scope":
            continue
        examples = [i for i, e in enumerate(FILES[stem]["entries"][index]["examples"]) if "random" not in e]
        total += len(examples)
        out += sum(result.get(i, "").startswith(REFUSED) for i in examples)
        passed += sum(i not in result for i in examples)
    return {"examples": total, "out of scope": out, "in scope": total - out, "passed": passed}


def test_the_readme_states_the_counts():
    text = " ".join((ROOT / "README.md").read_text().split())
    found = re.search(r"([\d,]+) examples of in-scope symbols run, ([\d,]+) refused as out of scope, ([\d,]+) of "
                      r"the other ([\d,]+) pass", text)
    assert found, "README.md's development section states the docstring suite's counts"
    stated = [int(n.replace(",", "")) for n in found.groups()]
    now = counts()
    assert stated == [now["examples"], now["out of scope"], now["passed"], now["in scope"]], now


def test_the_comparison_is_tensorflows():
    assert same("<tf.Tensor: shape=(2,), dtype=float32, numpy=array([0.997495 , 0.9092974], dtype=float32)>\n",
                "<tf.Tensor: shape=(2,), dtype=float32, numpy=array([0.9974951, 0.9092974], dtype=float32)>\n")
    assert not same("array([1., 2.], dtype=float32)", "array([1., 2.5], dtype=float32)")
    assert not same("array([1, 2], dtype=int32)", "array([1, 3], dtype=int32)")
    assert not same("array([1., 2.], dtype=float32)", "array([1., 2.], dtype=float64)")
    assert same("[1.  2.5]\n", "[1.0 2.5]\n")


def first_failure(entry: dict, result: dict[int, str]) -> str:
    """One line: the first failing example and what went wrong."""
    first = min(result)
    return f"example {first} ({entry['examples'][first]['source'].strip().splitlines()[0][:60]}): " \
        f"{result[first]}".replace("\n", "\\n").replace("\t", " ")[:240]


if __name__ == "__main__":      # the failing entries as docstring_failures.tsv's lines, then the counts
    for stem, index in RUN:
        where, result = results(stem, index)
        if where != "in scope":
            continue
        result = {i: message for i, message in result.items() if not message.startswith(REFUSED)}
        if result:
            entry = FILES[stem]["entries"][index]
            print(f"{key(entry)}\t{first_failure(entry, result)}")
    print(counts(), file=sys.stderr)
