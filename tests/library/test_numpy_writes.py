"""NumPy arrays written in place (library/numpy_writes.py, numpy_forms.py): views, item assignment, in-place
operators, mutating methods and functions, and the copies TensorFlow and Keras take of an array, each case of
tests/numpy_writes_cases.py run on both of tapecli's runners and compared with what CPython printed with NumPy
and TensorFlow: the same lines, and the same error class, message and line."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1]))
from numpy_writes_cases import CASES, HEADER, STORE  # noqa: E402

from tapecli import api  # noqa: E402
from tapecli.errors import TdfError  # noqa: E402
from tapecli.interpreter.core import ErrorLine  # noqa: E402

RECORDED = json.loads(STORE.read_text())


@pytest.mark.parametrize("on_cpython", ["0", "1"], ids=["interpreter", "cpython"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_numpy_writes_as_cpython_does(name, on_cpython, monkeypatch):
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", on_cpython)
    recorded = RECORDED[name]
    assert recorded["program"] == HEADER + CASES[name].lstrip("\n"), "recorded for another text: record it again"
    error = [None, None, None]
    try:
        output = api.run_source(recorded["program"], "prog.py").output
    except TdfError as e:
        output, error = getattr(e, "output", None) or [], [e.kind, e.message, e.line]
    printed = [line for line in output if type(line) is not ErrorLine]
    assert "\n".join(printed).splitlines() == recorded["stdout"].splitlines()
    assert error == recorded["error"]


def test_the_interpreter_runs_the_cases(monkeypatch):
    """Each case runs on the interpreter when it is asked to (its parser takes every one)."""
    from tapecli import execution
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", "0")
    for name, body in CASES.items():
        assert execution.python_only(HEADER + body, "prog.py") is None, name
