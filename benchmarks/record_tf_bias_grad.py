"""Record TensorFlow's BiasAddGrad bits (a bias's gradient: tapecli/kernels/tf_sums.py's bias_add_grad) for
tests/kernels/test_tf_sums.py, float32 and float64, on 1, 2, 4 and 8 intra-op threads (Eigen's cost model splits
large ones into blocks of rows by the pool's threads).

    TF_CPP_MIN_LOG_LEVEL=3 TFVENV/bin/python benchmarks/record_tf_bias_grad.py THREADS...

One process a thread count (TensorFlow fixes its pool at its first op); each run merges its cases into
tests/tf_bias_grad_bits.json: per case the shape, dtype, inputs' seed (record_tf_sums.inputs) and threads, and
the output's bits (hex).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from record_tf_sums import inputs  # noqa: E402

OUT = Path(__file__).resolve().parent.parent / "tests" / "tf_bias_grad_bits.json"
SHAPES = [(2, 3), (32, 8), (32, 1), (8, 1), (7, 1), (1000, 1), (33, 17), (16, 8), (64, 65), (128, 64), (32, 1000),
          (1000, 16), (4096, 4), (300, 7), (2000, 20), (3000, 33), (2439, 53), (1500, 59), (50000, 3),
          (200000, 1), (100000, 8), (30000, 64), (8, 5, 5, 16), (32, 7, 7, 3), (4, 10, 10, 64), (2, 3, 4, 5, 6)]
BITS = {"float32": np.uint32, "float64": np.uint64}


def main(threads: list[int]) -> None:
    import tensorflow as tf
    tf.config.threading.set_intra_op_parallelism_threads(threads[0])
    data = json.loads(OUT.read_text()) if OUT.exists() else {"cases": []}
    cases = [c for c in data["cases"] if c["threads"] != threads[0]]
    for seed, shape in enumerate(SHAPES):
        for dtype in BITS:
            x = inputs(shape, seed).astype(dtype)
            g = tf.raw_ops.BiasAddGrad(out_backprop=x).numpy()
            cases.append({"shape": list(shape), "dtype": dtype, "seed": seed, "threads": threads[0],
                          "out": [format(int(b), "x") for b in g.view(BITS[dtype])]})
    OUT.write_text(json.dumps({"cases": cases}, indent=0) + "\n")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [1])
