"""The JSON documents of runs (docs/spec/CLI.md) and an error's text for people: what the CLI prints and the
tools (check, sweeps) build their reports from."""
from __future__ import annotations

import functools
import re
import types

import numpy as np

from tapecli import api
from tapecli.errors import TdfError, escape_controls
from tapecli.interpreter.jsonvalue import _weak_default, to_json
from tapecli.runtime.values import DType, NumpyArray, Tensor, Variable, dtype_name

SCHEMA = "tapecli/1"


# ----------------------------------------------------------------- values

def type_json(value) -> dict:
    if isinstance(value, Variable):
        return {"kind": "variable", "dtype": dtype_name(value.dtype), "shape": list(value.shape),
                "trainable": value.trainable}
    if isinstance(value, NumpyArray):       # (the interpreter's NumPy values, as CPython's run reports NumPy's)
        return _numpy_json(value.value if value.ndim else value.value[()])
    if isinstance(value, Tensor):
        dtype = _weak_default(value).dtype if value.weak else value.dtype
        return {"kind": "tensor", "dtype": dtype_name(dtype), "shape": list(value.shape)}
    if isinstance(value, list):
        return {"kind": "list", "length": len(value)}
    if isinstance(value, dict):
        return {"kind": "dict", "keys": list(value)}
    if value is None:
        return {"kind": "none"}
    if isinstance(value, str):
        return {"kind": "string"}
    if isinstance(value, DType):
        return {"kind": "dtype"}
    from tapecli.interpreter.objects import Function, ProgramObject, TapeObject
    if isinstance(value, TapeObject):
        return {"kind": "tape", "persistent": value.tape.persistent}
    if isinstance(value, Function):
        return {"kind": "function"}
    if isinstance(value, ProgramObject):
        from tapecli.library.keras.layers import Dense, Layer      # (a Keras layer is a program object)
        if isinstance(value, Dense):
            return {"kind": "layer", "units": value.units, "built": value.built}
        if isinstance(value, Layer):
            return {"kind": "model" if hasattr(value, "layers") else "layer", "built": value.built}
        return {"kind": value.kind_word.split(" ", 1)[-1].replace(" ", "_")}
    if isinstance(value, (np.ndarray, np.generic)):
        return _numpy_json(value)
    if isinstance(value, type):
        return {"kind": "class"}
    return {"kind": type(value).__name__.lower()}


def _numpy_json(value) -> dict:
    if isinstance(value, np.generic):
        return {"kind": "numpy scalar", "dtype": str(value.dtype)}
    if not isinstance(value, np.ndarray):       # (an object array's item: a string tensor's bytes)
        return {"kind": type(value).__name__.lower()}
    return {"kind": "ndarray", "dtype": str(value.dtype), "shape": list(value.shape)}


def _is_value(value) -> bool:
    from tapecli.interpreter.objects import Function, TapeObject, BoundMethod
    from tapecli.interpreter.objects import ProgramObject
    return not isinstance(value, (Function, TapeObject, ProgramObject, BoundMethod, *_PYTHON_CODE)) and not getattr(
        value, "is_builtin", False)


# What a Python program binds that is code, not a value (listed in "types" only, as functions and tapes are).
_PYTHON_CODE = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType,
                functools.partial)


# --------------------------------------------------------------- documents

def dumps(doc: dict) -> str:
    import json     # (at first use: only --json writes a document)
    return json.dumps(doc, allow_nan=False)


def run_doc(result) -> dict:
    scope = result.scope.vars
    return {"schema": SCHEMA, "command": "run", "file": result.filename, "ok": True,
            "values": {k: to_json(v, k) for k, v in scope.items() if _is_value(v)},
            "types": {k: type_json(v) for k, v in scope.items()},
            "output": list(result.output), "warnings": list(result.warnings), "device": api.device_doc(result.context)}


def request_entries(requests) -> list[dict]:
    return api.request_entries(requests, to_json)


def requests_doc(command: str, result, kinds: tuple[str, ...]) -> dict:
    key = {"grad": "gradients", "jacobian": "jacobians", "hessian": "hessians"}[command]
    requests = api.requests_of(result, kinds)
    return {"schema": SCHEMA, "command": command, "file": result.filename, "ok": True,
            key: request_entries(requests),
            **({"selected": result.selected_json} if getattr(result, "selected", None) is not None else {}),
            "warnings": list(result.warnings), "device": api.device_doc(result.context)}


def watched_doc(result) -> dict:
    from tapecli.runtime.context import current
    tapes = []
    for tape in result.tapes:
        watched = [{"name": w.name, "kind": "variable", "how": w.how}
                   for w in sorted(tape.watched_variables_list, key=lambda w: w.obj.order)]
        watched += [{"name": w.name, "kind": "tensor", "how": w.how} for w in tape.watched_tensors]
        history = current().provenance.tapes.get(id(tape))
        not_watched = [{"name": name, "line": line, "why": why}
                       for name, (line, why) in (history.unwatched.items() if history else ())]
        off_tape = [{"line": line, "call": what} for line, what, _ in tape.left_at]
        tapes.append({"name": tape.name, "line": tape.line, "persistent": tape.persistent, "watched": watched,
                      "not_watched": not_watched, "off_the_tape": off_tape})
    return {"schema": SCHEMA, "command": "watched", "file": result.filename, "ok": True, "tapes": tapes,
            "device": api.device_doc(result.context)}


def error_doc(command: str, filename: str | None, error: TdfError) -> dict:
    return {"schema": SCHEMA, "command": command, "file": filename, "ok": False,
            "error": {"kind": error.kind, "message": error.message, "line": error.line, "column": error.column,
                      **({"hint": error.hint} if error.hint else {})},
            "warnings": list(getattr(error, "warnings", ())),
            **({"output": list(error.output)} if getattr(error, "output", None) else {})}


# ------------------------------------------------------------ for people

_EXCERPT = 120      # characters of a source line shown under an error

def terminal_text(text: str) -> str:
    """Text for people (an error with its excerpt, a report line) escaped for a terminal, line by line: a
    caret line under a source excerpt (``  12 | ...`` then ``     | ^^^``) still points at the same
    characters once the line before it is escaped."""
    if text.isprintable() or escape_controls(text, newlines=True) == text:      # (no control character but newlines)
        return text
    lines = text.split("\n")
    out = []
    for i, line in enumerate(lines):
        carets = re.fullmatch(_CARETS, line)
        excerpt = re.fullmatch(_EXCERPT_LINE, lines[i - 1], re.S) if carets and i else None
        if excerpt:
            shown = excerpt.group(2)
            column, width = len(carets.group(2)), len(carets.group(3))
            start = len(escape_controls(shown[:column]))
            out.append(carets.group(1) + " " * start + "^" * max(1, len(escape_controls(shown[column:column + width]))))
        else:
            out.append(escape_controls(line))
    return "\n".join(out)


# Both compiled on first use (re's cache): a run whose messages need no escaping never compiles them.
_EXCERPT_LINE = r"( *\d+ \| )(.*)"
_CARETS = r"( *\| )( *)(\^+)"


def warning_line(filename: str | None, warning: dict, terminal: bool = True) -> str:
    """A run's warning for people: ``file:line: warning: message`` (escaped for a terminal: terminal_text)."""
    where = f"{filename}:{warning['line']}" if warning.get("line") else f"{filename}"
    text = f"{where}: warning: {warning['message']}"
    return terminal_text(text) if terminal else text


def format_error(error: TdfError, filename: str | None, source: str | None, warnings: bool = True,
                 terminal: bool = True) -> str:
    """The error with its source line and a caret, after the warnings the run gathered before it (unless
    ``warnings`` is false: --quiet); escaped for a terminal (terminal_text) unless ``terminal`` is false (the
    text a JSON document or a JUnit file carries)."""
    gathered = [warning_line(filename, w, False) for w in getattr(error, "warnings", ())] if warnings else []
    where = filename or "<input>"
    if error.line:
        where += f":{error.line}"
        if error.column:
            where += f":{error.column}"
    lines = [f"{where}: {error.kind}: {error.message}"]
    if source is not None and error.line and error.line <= len(source.splitlines()):
        text = source.splitlines()[error.line - 1].rstrip()
        column = error.column
        if len(text) > _EXCERPT:       # a long line: the part around the column, elided at either end
            start = max(0, min((column or 1) - 1 - _EXCERPT // 2, len(text) - _EXCERPT))
            shown = text[start:start + _EXCERPT]
            text = ("…" if start else "") + shown + ("…" if start + _EXCERPT < len(text) else "")
            column = column and column - start + (1 if start else 0)
        gutter = f"{error.line:>5} | "
        lines.append(gutter + text)
        if column:
            width = max(1, (error.end_column or error.column + 1) - error.column)
            width = min(width, max(1, len(text) - column + 1))
            lines.append(" " * (len(gutter) - 2) + "| " + " " * (column - 1) + "^" * width)
    if error.hint:
        lines.append(f"hint: {error.hint}")
    text = "\n".join(gathered + lines)
    return terminal_text(text) if terminal else text
