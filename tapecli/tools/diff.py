"""`tapecli diff`: compare two grad/jacobian/hessian JSON documents (golden files) entry by entry, or two run
documents name by name (each name's value and type)."""
from __future__ import annotations

import json
import math

import numpy as np

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
    if not isinstance(doc, dict) or doc.get("schema") != "tapecli/1" or not (
            any(k in doc for k in ENTRY_KEYS) or _is_run(doc)):
        raise UsageError(f"{path} is not a tapecli run, grad, jacobian or hessian --json document")
    return doc


def _is_run(doc: dict) -> bool:
    return doc.get("command") == "run" and isinstance(doc.get("values"), dict) and isinstance(doc.get("types"), dict)


def _entries(doc: dict) -> dict:
    """label -> {"value", "shape"} of a grad/jacobian/hessian document; name -> {"value", "type"} of a run's
    (every name "types" lists: a tape or a function has a type and no value)."""
    if _is_run(doc):
        values, types = doc["values"], doc["types"]
        return {name: {"value": values.get(name), "type": types.get(name)} for name in {**values, **types}}
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
    if isinstance(a, dict) or isinstance(b, dict):
        return isinstance(a, dict) and isinstance(b, dict) and list(a) == list(b) and \
            all(_close(a[k], b[k], rtol, atol) for k in a)
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
    """(differences, number of entries compared). An entry missing on one side is a difference; so is a shape
    (a run's name: a type) that differs. A run document is compared with a run document only."""
    if _is_run(a) != _is_run(b):
        raise UsageError(f"a {a.get('command')} document and a {b.get('command')} document: diff compares two "
                         f"documents of one kind (two run --json, or two of grad, jacobian and hessian)")
    ea, eb = _entries(a), _entries(b)
    differences = []
    for label in list(ea) + [k for k in eb if k not in ea]:
        x, y = ea.get(label), eb.get(label)
        if x is None or y is None:
            differences.append({"entry": label, "what": "missing", "a": x and x.get("value"),
                                "b": y and y.get("value")})
        elif x.get("shape") != y.get("shape"):
            differences.append({"entry": label, "what": "shape", "a": x.get("shape"), "b": y.get("shape")})
        elif x.get("type") != y.get("type"):
            ta, tb = x.get("type") or {}, y.get("type") or {}
            differences.append({"entry": label, "what": "type", "a": x.get("type"), "b": y.get("type"),
                                "fields": {k: [ta.get(k), tb.get(k)] for k in {**ta, **tb} if ta.get(k) != tb.get(k)}})
        elif not _close(y.get("value"), x.get("value"), rtol, atol):
            differences.append({"entry": label, "what": "value", "a": x.get("value"), "b": y.get("value"),
                                **mismatch(x.get("value"), y.get("value"), rtol, atol)})
    return differences, len(set(ea) | set(eb))


def json_array(value):
    """A JSON tensor value as a float64 array ("NaN", "Infinity" read back); None if it is not one."""
    def numbers(v):
        return [numbers(item) for item in v] if isinstance(v, list) else _number(v)
    try:
        arr = np.array(numbers(value), dtype=np.float64)
    except (TypeError, ValueError):
        return None
    return arr


def _json_number(v):
    from tapecli.interpreter.jsonvalue import tensor_json
    return tensor_json(np.array(v, dtype=np.float64))


def mismatch(a, b, rtol: float, atol: float) -> dict:
    """What np.testing.assert_allclose(b, a, rtol, atol) reports of two values that differ, ``a`` the desired
    (golden) one: the mismatched elements out of all, the largest absolute and relative difference among them
    (relative to ``a``, over its nonzero elements; null where there is none), and the worst element (the largest
    absolute difference; a NaN or infinity on one side only counts as the worst): its index, a and b."""
    x, y = json_array(a), json_array(b)
    if x is None or y is None or x.shape != y.shape:
        return {}
    with np.errstate(all="ignore"):
        error = np.abs(y - x)
        same = (x == y) | (np.isnan(x) & np.isnan(y))
        bad = ~same & ~(error <= atol + rtol * np.abs(x))
        if not bad.any():
            return {}
        ranked = np.where(bad, np.where(np.isnan(error), np.inf, error), -1.0)
        worst = np.unravel_index(int(np.argmax(ranked)), x.shape) if x.ndim else ()
        relative = np.where(bad & (x != 0), error / np.abs(x), np.nan)
    finite = error[bad & ~np.isnan(error)]
    return {"mismatched": int(bad.sum()), "elements": int(x.size),
            "max_abs": _json_number(finite.max()) if finite.size else None,
            "max_rel": _json_number(np.nanmax(relative)) if not np.isnan(relative).all() else None,
            "worst": {"index": [int(i) for i in worst], "a": _json_number(x[worst]), "b": _json_number(y[worst])}}


def mismatch_text(d: dict) -> str:
    """assert_allclose's report of a value that differs: ``2 / 4 elements; max abs 0.1, max rel 0.05; worst
    [0, 1]: 2 vs 2.1``."""
    if "fields" in d:           # a run's name whose type differs: ``dtype float32 vs float64``
        return "; ".join(f"{k} {json.dumps(a)} vs {json.dumps(b)}" for k, (a, b) in d["fields"].items())
    if "mismatched" not in d:
        return ""
    worst = d["worst"]
    return (f"{d['mismatched']} / {d['elements']} elements; max abs {_g(d['max_abs'])}, max rel {_g(d['max_rel'])}; "
            f"worst {worst['index']}: {_g(worst['a'])} vs {_g(worst['b'])}")


def _g(v) -> str:
    return f"{v:.7g}" if isinstance(v, float) else str(v)
