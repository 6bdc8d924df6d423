"""Record TensorFlow's string hashes (tests/kernels/test_tf_hashes.py): strings of every length from 0 to 200 bytes (each
branch of FarmHash's Fingerprint64: 0-16, 17-32, 33-64 and over 64 bytes, and every tail of the 8-byte loops) of
random bytes, non-ASCII UTF-8 text among them, each with its tf.fingerprint bytes and its
to_hash_bucket_fast, to_hash_bucket_strong and to_hash_bucket buckets, for a small bucket count and for 2**63 - 1
(which keeps nearly all of a hash's 64 bits). Run in a development venv that has TensorFlow:

    TFVENV/bin/python benchmarks/record_tf_hashes.py tests/data/tf_hashes.json [COUNT]
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import tensorflow as tf

KEY = [0x0123456789ABCDEF, -0x1032547698BADCF0]     # (a negative word: TensorFlow's attr is int64)
BUCKETS = (7, 2**63 - 1)


def strings(count: int) -> list[bytes]:
    rng = np.random.default_rng(20260)
    out = [bytes(rng.integers(0, 256, n, dtype=np.uint8)) for n in range(201)]
    out += ["héllo wörld ✓ 日本語 ".encode() * int(k) for k in rng.integers(0, 8, 20)]
    out += [bytes(rng.integers(0, 256, int(n), dtype=np.uint8)) for n in rng.integers(0, 201, max(count - len(out), 0))]
    return out


def record(path: Path, count: int) -> None:
    found = strings(count)
    tensor = tf.constant(found)
    rows = {"key": KEY, "buckets": list(BUCKETS), "strings": [s.hex() for s in found],
            "fingerprint": tf.fingerprint(tensor).numpy().tolist()}
    for n in BUCKETS:
        rows[f"fast_{n}"] = tf.strings.to_hash_bucket_fast(tensor, n).numpy().tolist()
        rows[f"strong_{n}"] = tf.strings.to_hash_bucket_strong(tensor, n, KEY).numpy().tolist()
        rows[f"legacy_{n}"] = tf.strings.to_hash_bucket(tensor, n).numpy().tolist()
    path.write_text("{\n" + ",\n".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in rows.items()) + "\n}\n")


if __name__ == "__main__":
    record(Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 300)
