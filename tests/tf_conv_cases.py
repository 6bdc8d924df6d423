"""The operands of the recorded convolutions (benchmarks/record_tf_conv.py writes tests/data/tf_conv_bits.json,
tests/kernels/test_tf_conv.py reads it): drawn again from the seed and the case's index, so the JSON holds no inputs."""
from __future__ import annotations

import numpy as np

SEED = 2027
FIELDS = ["index", "batch", "spatial", "channels", "size", "filters", "strides", "dilations", "padding", "sha256",
          "first", "filter_grad_sha256", "input_grad_sha256"]


def operands(case):
    """The case's input [batch, *spatial, channels] and filters [*size, channels, filters], float32."""
    rng = np.random.default_rng([SEED, case["index"]])
    x = rng.standard_normal((case["batch"], *case["spatial"], case["channels"])).astype(np.float32)
    f = rng.standard_normal((*case["size"], case["channels"], case["filters"])).astype(np.float32)
    return x, f


def output_gradient(case, shape):
    """The gradient of the case's output (of ``shape``) that its kernel's gradient is taken for."""
    return np.random.default_rng([SEED, case["index"], 1]).standard_normal(shape).astype(np.float32)
