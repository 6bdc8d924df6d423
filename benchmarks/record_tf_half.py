"""Record TensorFlow's float16 and bfloat16 bits for the ops that Keras's Dense, Activation, softmax and
crossentropy layers and their gradients run under a mixed precision policy, for tests/kernels/test_tf_half.py:
per op and dtype, random tensors' inputs and TensorFlow's outputs as 16-bit patterns (hex).

Run it with the python of a development venv that has TensorFlow (never tapecli's runtime):

    TF_CPP_MIN_LOG_LEVEL=3 TFVENV/bin/python benchmarks/record_tf_half.py [--rates]

It writes tests/tf_half_bits.json. With --rates it prints instead what share of each op's cases tapecli's kernels
give TensorFlow's bits for (run from a checkout whose tapecli imports with that python's NumPy: set PYTHONPATH to
it, with ml_dtypes installed).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent.parent / "tests" / "tf_half_bits.json"
# the shapes recorded: fewer values than a packet, one, several and a tail, 2-D; and for the reductions (and the
# softmaxes, which sum rows) sums split into leaves (more than Eigen's 200 packets of float16 values)
SHAPES = [(7,), (8,), (100,), (3, 5)]
REDUCED_SHAPES = SHAPES + [(32, 64), (2, 1700)]
REDUCTIONS = {"softmax", "log_softmax", "sum", "sum_last", "sum_all", "mean", "max"}


def table(tf):
    """An op: (TensorFlow's function of the tensors, how many arguments, the inputs' range)."""
    return {
        "exp": (tf.math.exp, 1, (-8, 8)), "log": (tf.math.log, 1, (0.01, 100)), "tanh": (tf.math.tanh, 1, (-4, 4)),
        "sigmoid": (tf.math.sigmoid, 1, (-12, 12)), "relu": (tf.nn.relu, 1, (-4, 4)),
        "softplus": (tf.math.softplus, 1, (-8, 8)), "sqrt": (tf.math.sqrt, 1, (0, 100)),
        "square": (tf.math.square, 1, (-10, 10)), "neg": (tf.math.negative, 1, (-10, 10)),
        "add": (tf.math.add, 2, (-10, 10)), "sub": (tf.math.subtract, 2, (-10, 10)),
        "mul": (tf.math.multiply, 2, (-10, 10)), "div": (tf.math.divide, 2, (0.5, 10)),
        "maximum": (tf.math.maximum, 2, (-10, 10)),
        "softmax": (tf.nn.softmax, 1, (-6, 6)), "log_softmax": (tf.nn.log_softmax, 1, (-6, 6)),
        "sum": (lambda x: tf.reduce_sum(x, axis=0), 1, (-4, 4)),
        "sum_last": (lambda x: tf.reduce_sum(x, axis=-1), 1, (-4, 4)),
        "sum_all": (tf.reduce_sum, 1, (-4, 4)),
        "mean": (lambda x: tf.reduce_mean(x, axis=0), 1, (-4, 4)),
        "max": (lambda x: tf.reduce_max(x, axis=-1), 1, (-4, 4)),
        "sigmoid_grad": (lambda y, g: tf.raw_ops.SigmoidGrad(y=y, dy=g), 2, (0, 1)),
        "tanh_grad": (lambda y, g: tf.raw_ops.TanhGrad(y=y, dy=g), 2, (-1, 1)),
    }


def record():
    import tensorflow as tf
    import ml_dtypes
    rng = np.random.default_rng(16)
    out = {"tensorflow": tf.__version__, "ops": {}}
    for dtype, np_dtype in (("float16", np.float16), ("bfloat16", ml_dtypes.bfloat16)):
        for op, (fn, arity, (lo, hi)) in table(tf).items():
            cases = []
            for shape in REDUCED_SHAPES if op in REDUCTIONS else SHAPES:
                args = [rng.uniform(lo, hi, shape).astype(np.float32).astype(np_dtype) for _ in range(arity)]
                got = fn(*[tf.constant(a) for a in args]).numpy()
                cases.append({"shape": list(shape), "args": [_hex(a) for a in args], "out": _hex(got),
                              "out_shape": list(got.shape)})
            out["ops"].setdefault(dtype, {})[op] = cases
    OUT.write_text(json.dumps(out, separators=(",", ":")) + "\n")


def _hex(a) -> list:
    return [f"{int(v):04x}" for v in np.asarray(a).reshape(-1).view(np.uint16)]


if __name__ == "__main__":
    if "--rates" in sys.argv:
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "kernels"))
        from test_tf_half import rates
        for line in rates():
            print(line)
    else:
        record()
