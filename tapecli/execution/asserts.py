"""A Python program's ``assert`` statements as expectations (`tapecli check`, the pytest plugin), as the
interpreter's are (interpreter/expectations.py): the guard compiles ``assert a < b, msg`` as
``assert __tdf_assert__(line, "<", a, b, "a < b"), msg``, so each side is evaluated once, the comparison
made here and its result recorded with both sides; any other test is recorded with its value and ``True``.
A failure's ``message`` shows the values as pytest does (``assert 0.5 < 1e-06``); the statement's own
message, which CPython evaluates only when the assert fails, is put before it (``Assertions.failed``)."""
from __future__ import annotations

import operator

import numpy as np

_COMPARE = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt,
            ">=": operator.ge, "is": operator.is_, "is not": operator.is_not,
            "in": lambda a, b: a in b, "not in": lambda a, b: a not in b}
_SHOWN = 240        # most characters of a value in a failure's message (pytest's saferepr cuts too)


class Assertions:
    """One run's recorded asserts (``results``: the records of interpreter/expectations.py)."""

    def __init__(self):
        self.results: list[dict] = []

    def __call__(self, line: int, op: str | None, left, right, expr: str) -> bool:
        ok = bool(_COMPARE[op](left, right) if op is not None else left)
        shown = f"assert {_shown(left)} {op} {_shown(right)}" if op is not None else f"assert {_shown(left)}"
        self.results.append({"line": line, "expr": expr, "ok": ok, "actual": _json(left), "expected": _json(right),
                             "rtol": 0.0, "atol": 0.0, "message": None if ok else shown})
        return ok

    def failed(self, error: BaseException, line: int | None) -> None:
        """The AssertionError that ended the run: its message (the statement's own) before the values."""
        last = self.results[-1] if self.results else None
        if last is None or last["ok"] or last["line"] != line or not error.args:
            return
        last["message"] = f"{_text(error.args[0])}: {last['message']}"


def _shown(value) -> str:
    text = _text(value.item() if isinstance(value, np.generic) else value, repr)
    return text if len(text) <= _SHOWN else text[:_SHOWN - 3] + "..."


def _text(value, how=str) -> str:
    try:
        return how(value)
    except Exception:       # a program's __repr__ that fails: its type instead
        return f"<{type(value).__name__}>"


def _json(value):
    """A side as JSON (the results travel as JSON: check --json, JUnit, a worker's reply)."""
    from tapecli.interpreter.jsonvalue import to_json
    try:
        converted = to_json(value)
    except Exception:
        converted = None
    return converted if converted is not None or value is None else _shown(value)     # (a set, an object: its repr)
