"""Results as NumPy arrays (`-o/--out` of run, grad, jacobian and hessian): a `.npz` file of every entry, or
one entry in a `.npy` file.

Keys: a run's values by name; a gradient (jacobian, hessian) entry by the name its value was bound to, as in
the JSON document (`dy_dx`, `grads[1]`, `g["w"]`, `d(y)/d(x)` for --of/--wrt; `d(y)/d(x)` also for an
unbound request), a repeated name (a request in a loop) as `name#2`, `name#3`, ... Lists and dicts are
flattened with the same brackets as the names: `pair[0]`, `g["w"]`, `layers[1]["kernel"]`. Arrays keep
their dtype. What has no array (None, a string, a function) has no key. With --sweep (sweep_arrays): each
entry stacked over the points along a leading axis, and the points as `sweep:NAME`. Files are written through
outfile.py: regular files or new paths only, through symlinks, whole or not at all.
"""
from __future__ import annotations

import numpy as np

from tapecli.api import numpy_value, request_entries, requests_of
from tapecli.errors import UsageError
from tapecli.tools import outfile
from tapecli.tools.diff import json_array
from tapecli.tools.sweep import KEYS, KINDS

OPTION = "--out"


def parse_out(specs: list[str], reads=()) -> list[tuple[str | None, str]]:
    """``FILE.npz`` (every entry), ``FILE.npy`` (the only entry) or ``NAME=FILE.npy`` (one entry), each
    as (name or None, path); the paths are checked now, before the run (outfile.target; none may be one of
    the files the command reads, ``reads``)."""
    parsed = []
    for spec in specs:
        name, sep, path = spec.rpartition("=") if spec.endswith(".npy") and "=" in spec else (None, "", spec)
        if sep and not name:
            raise UsageError(f"{OPTION} {spec}: give NAME=FILE.npy (or FILE.npz for every entry)")
        if not path.endswith(".npy" if name else (".npz", ".npy")):
            raise UsageError(f"{OPTION} {spec}: the file must end in .npz (every entry) or .npy (one entry, "
                             f"NAME=FILE.npy)")
        outfile.target(path, OPTION, reads)
        parsed.append((name or None, path))
    return parsed


def _flatten(key: str, value, out: dict) -> None:
    if isinstance(value, list):
        for i, item in enumerate(value):
            _flatten(f"{key}[{i}]", item, out)
    elif isinstance(value, dict):
        for k, item in value.items():
            _flatten(f'{key}["{k}"]', item, out)
    elif isinstance(value, (np.ndarray, bool, int, float)):
        out[key] = np.asarray(value)


def result_arrays(command: str, result) -> dict[str, np.ndarray]:
    """What `command --json` reports, as arrays: a run's top-level values; the gradient, jacobian or hessian
    entries by name, a repeated name numbered from its second time."""
    out: dict[str, np.ndarray] = {}
    if command == "run":
        for name, value in result.scope.vars.items():
            _flatten(name, numpy_value(value), out)
        return out
    for key, entry in _keyed(request_entries(requests_of(result, KINDS[command]), numpy_value)):
        _flatten(key, entry["value"], out)
    return out


def _keyed(entries: list[dict]):
    """(key, entry) for each gradient, jacobian or hessian entry: its name, a repeated one numbered."""
    seen: dict[str, int] = {}
    for entry in entries:
        base = entry["name"] or f"d({entry['target']})/d({entry['source']})"
        seen[base] = seen.get(base, 0) + 1
        yield (base if seen[base] == 1 else f"{base}#{seen[base]}"), entry


SWEPT = "sweep:"        # the key prefix of a sweep's points (no program name or entry holds a colon)
_ARRAY_KINDS = ("tensor", "variable", "ndarray", "numpy scalar", "int", "float", "bool")


def sweep_arrays(command: str, doc: dict, sweeps: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """A sweep's stacked --json document as arrays: each entry (`run`: each value that is a tensor, an array or
    a number) with the points along a leading axis (shape ``[points] + shape``, the entry's dtype), keyed as one
    run's are; each swept declaration's points as ``sweep:NAME``. An entry None at some point has no key, nor
    has a list or dict of `run`."""
    out: dict[str, np.ndarray] = {}
    if command == "run":
        stacked = [(name, values, doc["types"].get(name, {})) for name, values in doc["values"].items()]
        stacked = [(name, values, t.get("dtype")) for name, values, t in stacked if t.get("kind") in _ARRAY_KINDS]
    else:
        stacked = [(key, e["value"], e["dtype"]) for key, e in _keyed(doc[KEYS[command]])]
    for key, values, dtype in stacked:
        if any(v is None for v in values):
            continue
        if dtype is not None and np.dtype(dtype).kind == "f":   # ("NaN", "Infinity" read back as numbers)
            out[key] = json_array(values).astype(dtype)
        else:
            out[key] = np.array(values, dtype=dtype)
    for name, points in sweeps.items():
        out[SWEPT + name] = points
    return out


def write(specs: list[tuple[str | None, str]], arrays: dict[str, np.ndarray]) -> None:
    """Write each --out file; a name that is not an entry (or a lone FILE.npy for several entries) is a usage
    error before anything is written."""
    chosen = []
    for name, path in specs:
        if path.endswith(".npz"):
            chosen.append((path, arrays))
            continue
        if name is None and len(arrays) != 1:
            raise UsageError(f"{OPTION} {path}: the result has {len(arrays)} entries; write them all to a .npz file "
                             f"or one with NAME={path}" + _keys(arrays))
        if name is not None and name not in arrays:
            raise UsageError(f"{OPTION} {name}={path}: no entry named {name}" + _keys(arrays))
        chosen.append((path, arrays[name] if name is not None else next(iter(arrays.values()))))
    for path, data in chosen:
        if isinstance(data, dict):
            outfile.write_with(path, lambda f, data=data: np.savez(f, **data), OPTION)
        else:
            outfile.write_with(path, lambda f, data=data: np.save(f, data), OPTION)


def _keys(arrays: dict) -> str:
    names = list(arrays)
    shown = ", ".join(names[:20]) + (", ..." if len(names) > 20 else "")
    return f" (the entries: {shown})" if names else " (the result has no arrays)"
