"""``tapecli tape``: each tape's records, with the bytes they keep alive. A library: no printing.

A record keeps arrays alive for its gradient rule: those its ``kept()`` method lists (the
tensors the rule reads, see tape.Record). A record's
``saved_bytes`` counts each array it keeps once; a tape's ``saved_bytes`` counts each array
once however many of its records keep it. An array that is a view counts as the array whose
memory it shares (that is what it keeps alive), once. A statement's record (ops/statement.py) is listed
op by op, each as its own record would be; the values between those ops are computed again when needed,
so the tape's total counts only what the statement's record keeps: its inputs and output.

A tape that is not persistent lets go of what its records kept when its one gradient or
jacobian request runs, so such a tape is listed as it was just before that request; every
other tape as it is when the program ends. ``when`` says which.
"""
from __future__ import annotations

import numpy as np

from tapecli.api import Options, run_source
from tapecli.runtime.tape import Tape


def list_tapes(source: str, filename: str, options: Options | None = None) -> dict:
    """Run the program; {"result": RunResult, "tapes": [tape listing, ...]} in the order the tapes opened."""
    snapshots: dict[int, dict] = {}
    original = Tape.begin_request

    def begin_request(tape, line):
        if not tape.persistent and id(tape) not in snapshots:
            snapshots[id(tape)] = describe(tape, f"before its request at line {line}" if line else
                                           "before its request")
        return original(tape, line)

    Tape.begin_request = begin_request      # for this run only: see the module docstring
    try:
        result = run_source(source, filename, options)
    finally:
        Tape.begin_request = original
    tapes = [snapshots.get(id(t)) or describe(t, "at the end of the program") for t in result.tapes]
    return {"result": result, "tapes": tapes}


def describe(tape, when: str) -> dict:
    """A tape's records: op, line, input and output shapes, saved bytes; and the tape's total."""
    seen: dict[int, int] = {}
    records = []
    for rec in tape.records:
        seen.update(_arrays(rec))
        for op_rec in rec.op_records():
            records.append({"op": op_rec.op.name, "line": op_rec.line, "inputs": [_shape(t) for t in op_rec.inputs],
                            "output": _shape(op_rec.output), "saved_bytes": sum(_arrays(op_rec).values())})
    return {"name": tape.name, "line": tape.line, "persistent": tape.persistent, "when": when,
            "records": records, "saved_bytes": sum(seen.values())}


def _arrays(rec) -> dict:
    """id -> bytes of each array ``rec`` keeps alive."""
    arrays = {}
    for t in rec.kept():
        arr = _array(t)
        if arr is not None:
            owner = _owner(arr)
            arrays[id(owner)] = int(owner.nbytes)
    return arrays


def _array(t):
    """The array a kept tensor holds, or None (a stub: its value was not kept). A NumPy scalar is its own
    memory: itself, not an array made of it (whose id the next one could take once it is gone)."""
    try:
        value = t.value
    except AttributeError:
        return None
    return value if isinstance(value, (np.ndarray, np.generic)) else np.asarray(value)


def _owner(arr):
    while isinstance(arr.base, np.ndarray):
        arr = arr.base
    return arr


def _shape(t) -> list[int]:
    return [int(d) for d in t.shape]
