"""Record TensorFlow's float32 softmax bits (oneDNN's kernel on an x86 CPU: tapecli/kernels/tf_onednn.py) for
tests/kernels/test_tf_onednn.py: rows of 1 to 1,000 elements at several scales (exp's underflow included), rows with NaN
and infinite entries and subnormals, a 4-D tensor and an axis other than the last.

    TF_CPP_MIN_LOG_LEVEL=3 TFVENV/bin/python benchmarks/record_tf_softmax.py

It writes tests/data/tf_softmax_bits.json, with the vector width oneDNN used on the recording machine (the
bits depend on it).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import tensorflow as tf

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tapecli.kernels.tf_onednn import vector_width  # noqa: E402  (NumPy alone: no runtime needed)

SPECIAL_ROWS = [[np.nan, 1, 2], [1, np.nan, 2], [np.inf, 1, 2], [-np.inf, -np.inf, -np.inf], [1e-40, 2e-39, 0],
                [np.nan] * 3, [np.nan] + [1.0] * 20, [1.0] * 17 + [np.nan], [-np.inf, 0.0, 1.0], [3e38, -3e38, 0.0]]


def _hex(a: np.ndarray) -> list[str]:
    return [f"{v:08x}" for v in np.ascontiguousarray(a, np.float32).view(np.uint32).ravel().tolist()]


def cases():
    rng = np.random.default_rng(2026)
    for n in (1, 3, 7, 8, 9, 15, 16, 17, 31, 33, 48, 64, 65, 100, 129, 257):
        for scale in (0.1, 3.0, 30.0, 300.0):
            yield (rng.standard_normal((2, n)) * scale).astype(np.float32), -1
    yield (rng.standard_normal((1, 1000)) * 30).astype(np.float32), -1
    for row in SPECIAL_ROWS:
        yield np.array([row], np.float32), -1
    yield rng.standard_normal((2, 3, 4, 10)).astype(np.float32), -1
    yield rng.standard_normal((5, 7)).astype(np.float32), 0
    yield np.array([1.0, 2.0, 3.0], np.float32), -1


def main() -> None:
    recorded = [{"shape": list(x.shape), "axis": axis, "in": _hex(x), "out": _hex(tf.nn.softmax(x, axis=axis).numpy())}
                for x, axis in cases()]
    out = ROOT / "tests" / "data" / "tf_softmax_bits.json"
    out.write_text(json.dumps({"tensorflow": tf.__version__, "vector_width": vector_width(), "cases": recorded}))


if __name__ == "__main__":
    main()
