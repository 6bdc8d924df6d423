"""Record TensorFlow's float32 matrix product bits (oneDNN's kernels on an x86 CPU: tapecli/kernels/tf_matmul.py)
for tests/kernels/test_tf_matmul.py: 2-D products (tf.matmul with every transpose flag, as the gradients call it) of
m, n, k from 1 to 300 and k up to 1,024, vectors as 1 x k and k x 1, Dense-sized products, batched products
(BatchMatMulV2) with k up to 1,024: those within tf_matmul's limits.

    TF_CPP_MIN_LOG_LEVEL=3 TFVENV/bin/python benchmarks/record_tf_matmul.py

Each case's operands are drawn from the seed and its index (tests/tf_matmul_cases.py: NumPy's generator, as the
test draws them again); the JSON holds a row per case (``fields``: its shapes and flags, the result's bits as the
start of their SHA-256 and its first value's bits) and the vector width oneDNN used on the recording machine (the
bits depend on it). It prints the cases where tapecli's kernel gives other bits (none when it was written).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tapecli.kernels import tf_matmul  # noqa: E402  (NumPy alone: no runtime needed)
from tests.tf_matmul_cases import FIELDS, SEED, digest, operands  # noqa: E402

FLAGS = ((False, False), (False, True), (True, False), (True, True))


def shapes():
    """(batch_a, batch_b, m, k, n): each with every pair of transpose flags."""
    rng = np.random.default_rng(SEED)
    sizes = (1, 2, 3, 8, 15, 16, 17, 33, 100, 300)
    for m in sizes:
        for n in sizes:
            for k in (1, 5, 23, 129, 300):
                yield (), (), m, k, n
    for _ in range(200):
        yield (), (), int(rng.integers(1, 41)), int(rng.integers(1, 301)), int(rng.integers(1, 41))
    for m, n in ((1, 1), (1, 7), (7, 1), (4, 4), (16, 16), (3, 40)):
        for k in (383, 384, 385, 500, 767, 768, 769, 1000, 1024):
            yield (), (), m, k, n
    for m, k, n in ((32, 8, 16), (32, 4, 8), (32, 8, 1), (64, 128, 10), (128, 4, 8), (8, 32, 16), (1, 784, 8),
                    (10, 64, 1), (64, 3, 1), (128, 8, 1), (256, 16, 4)):
        yield (), (), m, k, n
    for batch_a, batch_b in (((3,), (3,)), ((2, 3), (3,)), ((4,), ()), ((), (2,)), ((1,), (1,))):
        for m, k, n in ((1, 1, 1), (1, 5, 1), (1, 40, 7), (5, 40, 1), (2, 7, 3), (15, 16, 16), (16, 16, 16),
                        (32, 8, 8), (10, 64, 10), (4, 300, 5), (2, 512, 3), (2, 513, 3), (3, 700, 2),
                        (3, 1024, 2)):
            yield batch_a, batch_b, m, k, n


def cases():
    index = 0
    for batch_a, batch_b, m, k, n in shapes():
        batch = np.broadcast_shapes(batch_a, batch_b)
        if 2 * int(np.prod(batch)) * m * n * k > tf_matmul.FLOP_LIMIT or k > tf_matmul.K_LIMIT:
            continue
        for ta, tb in FLAGS:
            yield {"index": index, "batch_a": list(batch_a), "batch_b": list(batch_b), "m": m, "k": k, "n": n,
                   "ta": ta, "tb": tb}
            index += 1


def main() -> None:
    import tensorflow as tf
    rows, differ = [], []
    for case in cases():
        stored_a, stored_b, seen_a, seen_b = operands(case)
        out = tf.matmul(stored_a, stored_b, transpose_a=case["ta"], transpose_b=case["tb"]).numpy()
        ours = tf_matmul.matmul(seen_a, seen_b)
        if ours is None or digest(ours) != digest(out):
            differ.append(case["index"])
        rows.append([case[key] for key in FIELDS[:-2]] + [digest(out), f"{out.ravel()[:1].view(np.uint32)[0]:08x}"])
    out_path = ROOT / "tests" / "data" / "tf_matmul_bits.json"
    out_path.write_text(json.dumps({"tensorflow": tf.__version__, "vector_width": tf_matmul.vector_width(),
                                    "fields": FIELDS, "cases": rows}, separators=(",", ":")))
    print(f"{len(rows)} cases, tapecli's kernel differs on {len(differ)}: {differ[:40]}")


if __name__ == "__main__":
    main()
