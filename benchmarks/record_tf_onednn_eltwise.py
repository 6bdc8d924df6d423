"""Record TensorFlow's float32 bits for oneDNN's fused activations (tapecli/kernels/tf_onednn_eltwise.py) for
tests/kernels/test_tf_onednn_eltwise.py: a tf.function's ``act(tf.nn.bias_add(tf.matmul(x, [[1.0]]), [0.0]))``
(Grappler's remapper runs it as one _FusedMatMul whose post-op reads ``x * 1 + 0``: onednn_inputs.pre_activation)
for tanh, sigmoid, elu and gelu (exact and approximate), and tf.nn.silu of x (its _MklSwish), on about 400,000
values of every exponent (tests/kernels/onednn_inputs.py builds them from the recipe below).

    TF_CPP_MIN_LOG_LEVEL=3 TFVENV/bin/python benchmarks/record_tf_onednn_eltwise.py

It writes tests/data/tf_onednn_eltwise_bits.json: per activation the SHA-256 of TensorFlow's output bits, a sample
of them (every 997th) to tell where a difference is, and the points where tapecli's kernel gives other bits
(``pinned``: index, TensorFlow's bits, tapecli's), with the vector width oneDNN used (the bits may depend on it).
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import tensorflow as tf

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tapecli.kernels import tf_onednn_eltwise  # noqa: E402  (NumPy alone: no runtime needed)
from tapecli.kernels.cpu import vector_width  # noqa: E402

OUT = ROOT / "tests" / "data" / "tf_onednn_eltwise_bits.json"
_SPEC = importlib.util.spec_from_file_location("onednn_inputs", ROOT / "tests" / "kernels" / "onednn_inputs.py")
onednn_inputs = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(onednn_inputs)


def _hex(v: float) -> str:
    return f"{int(np.array([v], np.float32).view(np.uint32)[0]):08x}"


# the edges of the kernels' branches: tanh's linear and saturated ranges and its 32 half binades, exp's clamps
# (ln FLT_MIN, ln FLT_MAX) and the 0 of elu, gelu_erf's last polynomial, the smallest normal number
EDGES = [_hex(v) for v in (4.2294e-4, 9.0109, -87.33654, 88.72283, 5.5426, 1.1754944e-38, 0.0)] + \
        [f"{0x39800000 + (i << 22):08x}" for i in range(32)]
RECIPE = {"stride": 1 << 14, "grids": [[-12.0, 12.0, 120001], [-100.0, 100.0, 20001], [-1e-3, 1e-3, 4001]],
          "around": 64, "edges": EDGES,
          "special": [_hex(v) for v in (0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 3.4028235e38, -3.4028235e38,
                                        1e-40, -1e-40, 1e-45, 1.0, -1.0, 0.5, -0.5)]}
ACTIVATIONS = {"tanh": tf.nn.tanh, "sigmoid": tf.nn.sigmoid, "elu": tf.nn.elu, "gelu_erf": tf.nn.gelu,
               "gelu_tanh": lambda t: tf.nn.gelu(t, approximate=True)}
OURS = {"tanh": tf_onednn_eltwise.tanh, "sigmoid": tf_onednn_eltwise.logistic, "elu": tf_onednn_eltwise.elu,
        "gelu_erf": tf_onednn_eltwise.gelu_erf, "gelu_tanh": tf_onednn_eltwise.gelu_tanh,
        "silu": tf_onednn_eltwise.swish}


def tensorflow(name: str, x: np.ndarray) -> np.ndarray:
    one, zero = tf.constant([[1.0]]), tf.constant([0.0])
    if name == "silu":
        f = tf.function(lambda t: tf.nn.silu(t))
    else:
        act = ACTIVATIONS[name]
        f = tf.function(lambda t: act(tf.nn.bias_add(tf.matmul(t, one), zero)))
    return f(tf.constant(x[:, None])).numpy()[:, 0]


def main():
    x = onednn_inputs.inputs(RECIPE)
    pre = onednn_inputs.pre_activation(x)
    record = {"tensorflow": tf.__version__, "vector_width": vector_width(), "recipe": RECIPE, "count": int(x.size),
              "activations": {}}
    for name in OURS:
        theirs = np.ascontiguousarray(tensorflow(name, x), np.float32).view(np.uint32)
        ours = OURS[name](x if name == "silu" else pre).view(np.uint32)
        differ = np.flatnonzero(theirs != ours)
        record["activations"][name] = {
            "sha256": hashlib.sha256(theirs.tobytes()).hexdigest(),
            "sample": [f"{v:08x}" for v in theirs[::997].tolist()],
            "pinned": [[int(i), f"{theirs[i]:08x}", f"{ours[i]:08x}"] for i in differ.tolist()]}
        print(f"{name}: {differ.size} of {x.size} differ", *(f"x={x[i]!r}: tf {theirs[i]:08x} ours {ours[i]:08x}"
                                                            for i in differ[:8]), sep="\n  ")
    OUT.write_text(json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    main()
