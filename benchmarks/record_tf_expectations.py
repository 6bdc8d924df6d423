"""Record TensorFlow's answers for the surface harness (tests/conformance/test_tf_surface.py), as PyTorch's OpInfo does
with its references: each row of tests/tf_expectations/*.json is a small program written as TensorFlow
Python, the TensorFlow symbols it exercises, and the names whose values it checks. This script runs every
program in real TensorFlow and writes the values it computed (tensors as nested lists, None as null, errors
as {"error": "KindName"}) into the row, so that CI compares tapecli with them without TensorFlow.

Run it with the python of a development venv that has TensorFlow (never tapecli's runtime):

    TFVENV/bin/python benchmarks/record_tf_expectations.py [tests/tf_expectations/FILE.json ...]

A row: {"symbols": ["tf.math.sin", ...], "program": "import tensorflow as tf\\n...", "check": ["y", "g"],
        "rtol": 1e-5, "atol": 1e-6 (optional), "values": {...} (written here)}.
A program that must fail in TensorFlow names its error in "raises" ("InvalidArgumentError", ...); tapecli
must then fail with its own kind of error (the test checks that it does not succeed).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

FOLDER = Path(__file__).resolve().parent.parent / "tests" / "tf_expectations"


def plain(value):
    """A TensorFlow/NumPy/Python value as JSON."""
    import numpy as np
    import tensorflow as tf
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (tf.Tensor, tf.Variable)):
        value = value.numpy()
    if isinstance(value, np.ndarray) or np.isscalar(value):
        array = np.asarray(value)
        if array.dtype.kind == "f":
            return {"dtype": str(array.dtype), "value": _floats(array.tolist())}
        return {"dtype": str(array.dtype), "value": array.tolist()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    raise TypeError(f"cannot record a {type(value).__name__}")


def _floats(x):
    """NaN and infinities as strings (JSON has none)."""
    import math
    if isinstance(x, list):
        return [_floats(v) for v in x]
    return x if math.isfinite(x) else str(x)


def record(path: Path) -> int:
    rows = json.loads(path.read_text())
    for row in rows:
        namespace: dict = {}
        try:
            exec(compile(row["program"], f"{path.name}:{row['symbols'][0]}", "exec"), namespace)
        except Exception as e:   # noqa: BLE001 - a row that must fail records how
            if not row.get("raises"):
                raise RuntimeError(f"{path.name}: {row['symbols']}: TensorFlow raised {type(e).__name__}: {e}") from e
            row["raises"] = type(e).__name__
            row.pop("values", None)
            continue
        if row.get("raises"):
            raise RuntimeError(f"{path.name}: {row['symbols']}: expected {row['raises']}, TensorFlow succeeded")
        row["values"] = {name: plain(namespace[name]) for name in row["check"]}
    path.write_text(json.dumps(rows, indent=1) + "\n")
    return len(rows)


def main(argv: list[str]) -> None:
    paths = [Path(p) for p in argv] or sorted(FOLDER.glob("*.json"))
    for path in paths:
        print(f"{path.name}: {record(path)} rows")


if __name__ == "__main__":
    main(sys.argv[1:])
