"""Record Keras's answers for the keras.io developer guides (tests/conformance/test_keras_guides.py): each program in
DIR (a folder made from keras-io's guides, not redistributed here) is one guide's code as written, with
small data and seeded weights, that collects its final values (histories, evaluate results, weights' sums,
shapes) in a dict named ``results``. This
script runs every program in real TensorFlow and Keras 3 and writes those dicts into
DIR/recorded.json, which the test compares tapecli's with (TAPECLI_KERAS_GUIDES=DIR), without TensorFlow.

Run it with the python of a development venv that has TensorFlow (never tapecli's runtime):

    TFVENV/bin/python benchmarks/record_keras_guides.py DIR [NAME ...]
"""
from __future__ import annotations

import contextlib
import io
import json
import runpy
import sys
from pathlib import Path



def plain(value):
    """Keras's values as JSON: tensors and NumPy values as (nested lists of) floats."""
    import numpy as np
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if hasattr(value, "numpy"):
        value = value.numpy()
    if isinstance(value, (np.ndarray, np.generic)):
        return np.asarray(value).tolist()
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    raise TypeError(f"cannot record a {type(value).__name__}")


def main(folder: Path, names: list[str]) -> None:
    out = folder / "recorded.json"
    recorded = json.loads(out.read_text()) if out.exists() else {}
    for path in sorted(folder.glob("*.py")):
        if names and path.stem not in names:
            continue
        with contextlib.redirect_stdout(io.StringIO()):
            namespace = runpy.run_path(str(path), run_name="__main__")
        recorded[path.stem] = plain(namespace["results"])
        print(path.stem, "recorded:", ", ".join(recorded[path.stem]))
    out.write_text(json.dumps(recorded, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2:])
