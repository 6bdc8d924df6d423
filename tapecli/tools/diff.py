"""`tapecli diff`: compare two grad/jacobian/hessian JSON documents (golden files) entry by entry."""
from __future__ import annotations

import json
import math

from tapecli.errors import UsageError

ENTRY_KEYS = ("gradients", "jacobians", "hessians")


def load_document(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except OSError as e:
        raise UsageError(f"cannot read {path}: {e.strerror}") from None
    except ValueError as e:
        raise UsageError(f"{path} is not JSON: {e}") from None
    except RecursionError:      # (the decoder recurses once per level)
        raise UsageError(f"{path} is nested too deep to be a tapecli --json document") from None
    if not isinstance(doc, dict) or doc.get("schema") != "tapecli/1" or not any(k in doc for k in ENTRY_KEYS):
        raise UsageError(f"{path} is not a tapecli grad, jacobian or hessian --json document")
    return doc


def _entries(doc: dict) -> dict:
    out = {}
    for key in ENTRY_KEYS:
        for i, e in enumerate(doc.get(key, [])):
            label = f"{e.get('name') or '#' + str(i)} w.r.t. {e.get('source')}"
            out[label] = e
    return out


def _number(v):
    if isinstance(v, str):
        return {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}.get(v, v)
    return v


def _close(a, b, rtol, atol) -> bool:
    if isinstance(a, list) or isinstance(b, list):
        return isinstance(a, list) and isinstance(b, list) and len(a) == len(b) and \
            all(_close(x, y, rtol, atol) for x, y in zip(a, b))
    a, b = _number(a), _number(b)
    if a is None or b is None or isinstance(a, str) or isinstance(b, str):
        return a == b
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= atol + rtol * abs(b)


def compare_documents(a: dict, b: dict, rtol: float, atol: float) -> tuple[list[dict], int]:
    """(differences, number of entries compared). An entry missing on one side is a difference."""
    ea, eb = _entries(a), _entries(b)
    differences = []
    for label in list(ea) + [k for k in eb if k not in ea]:
        x, y = ea.get(label), eb.get(label)
        if x is None or y is None:
            differences.append({"entry": label, "what": "missing", "a": x and x.get("value"),
                                "b": y and y.get("value")})
        elif x.get("shape") != y.get("shape"):
            differences.append({"entry": label, "what": "shape", "a": x.get("shape"), "b": y.get("shape")})
        elif not _close(y.get("value"), x.get("value"), rtol, atol):
            differences.append({"entry": label, "what": "value", "a": x.get("value"), "b": y.get("value")})
    return differences, len(set(ea) | set(eb))
