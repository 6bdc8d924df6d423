"""Record TensorFlow's float32 convolution bits (oneDNN's brgemm kernel on an x86 CPU: tapecli/kernels/tf_conv.py)
for tests/kernels/test_tf_conv.py: tf.nn.conv2d with 1 to 64 input channels (one channel on both sides of oneDNN's
choice of order), kernels of 1 to 5 taps a side, strides 1 to 3, dilation, SAME and VALID padding and batches of 1
to 64; tf.nn.conv1d and tf.nn.conv3d; a few products large enough for the Numba kernel; 1-D and 2-D convolutions
with VALID padding and stride 1, and with stride 2, 1 to 64 channels either side, for their input gradients.

    TF_CPP_MIN_LOG_LEVEL=3 TFVENV/bin/python benchmarks/record_tf_conv.py

Each case's operands are drawn from the seed and its index (tests/tf_conv_cases.py); the JSON holds a row per case
(``fields``: its shapes, the result's bits as the start of their SHA-256 and its first value's bits, and for 1-D
and 2-D ones the bits of the kernel's and the input's gradients, Conv2DBackpropFilter and Conv2DBackpropInput, for
a drawn gradient of the output), the
vector width oneDNN used on the recording machine and TensorFlow's threads there (the kernel's gradient splits the
batch between them); tests/kernels/test_tf_conv.py says where tapecli gives other bits."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tapecli.kernels import tf_onednn  # noqa: E402
from tests.tf_conv_cases import FIELDS, SEED, operands, output_gradient  # noqa: E402
from tests.tf_matmul_cases import digest  # noqa: E402


def shapes():
    """(batch, spatial, channels, size, filters, strides, dilations, padding)."""
    rng = np.random.default_rng(SEED)
    for _ in range(160):                                    # 2-D, mostly one channel (two orders)
        c = int(rng.choice([1, 1, 1, 2, 3, 4, 8, 16]))
        kh, kw = int(rng.choice([1, 2, 3, 4, 5])), int(rng.choice([1, 2, 3, 4, 5]))
        s = int(rng.choice([1, 1, 2, 3]))
        d = 1 if s > 1 else int(rng.choice([1, 1, 2]))
        h, w = int(rng.integers((kh - 1) * d + 1, 17)), int(rng.integers((kw - 1) * d + 1, 17))
        yield (int(rng.choice([1, 2, 3, 8])), [h, w], c, [kh, kw], int(rng.choice([1, 3, 8, 16])), [s, s], [d, d],
               str(rng.choice(["SAME", "VALID"])))
    for b, hw, c, k, f, s, p in ((2, [8, 8], 1, [2, 2], 4, 2, "VALID"), (2, [9, 9], 1, [2, 2], 4, 2, "VALID"),
                                 (2, [10, 10], 1, [3, 3], 4, 3, "VALID"), (2, [12, 12], 1, [4, 4], 4, 2, "VALID"),
                                 (2, [12, 12], 1, [4, 4], 4, 2, "SAME"), (2, [8, 8], 1, [3, 3], 4, 1, "VALID"),
                                 (2, [6, 6], 1, [3, 3], 4, 1, "VALID"), (2, [7, 7], 1, [3, 3], 4, 1, "VALID"),
                                 (1, [12, 12], 1, [3, 3], 4, 1, "VALID"), (2, [12, 12], 1, [1, 3], 4, 1, "VALID"),
                                 (2, [12, 12], 1, [3, 1], 4, 1, "VALID"), (2, [28, 28], 1, [5, 5], 8, 1, "SAME"),
                                 (4, [6, 6], 32, [3, 3], 8, 1, "SAME"), (2, [5, 5], 64, [5, 5], 4, 2, "SAME"),
                                 (2, [4, 4], 128, [1, 1], 8, 1, "VALID")):
        yield b, hw, c, k, f, [s, s], [1, 1], p
    for _ in range(20):                                     # 1-D: conv2d over a height of one
        c, k = int(rng.choice([1, 2, 5])), int(rng.choice([1, 2, 3, 5]))
        yield (int(rng.choice([1, 4])), [int(rng.integers(k, 30))], c, [k], int(rng.choice([1, 4, 8])),
               [int(rng.choice([1, 2]))], [1], str(rng.choice(["SAME", "VALID"])))
    for _ in range(16):                                     # 3-D
        c, k = int(rng.choice([1, 2, 4])), [int(v) for v in rng.choice([1, 2, 3], 3)]
        yield (int(rng.choice([1, 3])), [int(rng.integers(3, 8)) for _ in range(3)], c, k, int(rng.choice([2, 4])),
               [int(rng.choice([1, 2]))] * 3, [1, 1, 1], str(rng.choice(["SAME", "VALID"])))
    yield 32, [28, 28], 1, [3, 3], 16, [1, 1], [1, 1], "VALID"         # Numba's kernel (MNIST's first layer)
    yield 8, [12, 12], 16, [3, 3], 32, [1, 1], [1, 1], "SAME"
    for _ in range(48):     # the input's gradient with VALID padding: 1 to 64 channels either side, batches to 32
        rank, c, f = int(rng.choice([1, 2, 2])), int(rng.choice([1, 3, 8, 16, 32, 64])), int(rng.choice([1, 4, 16, 64]))
        size = [int(k) for k in rng.integers(1, 6, rank)]
        d = [int(rng.choice([1, 1, 1, 2])) for _ in size]
        spatial = [int(rng.integers((k - 1) * e + 1, (k - 1) * e + 12)) for k, e in zip(size, d)]
        yield int(rng.choice([1, 2, 3, 4, 8, 16, 32])), spatial, c, size, f, [1] * rank, d, "VALID"
    for _ in range(40):     # the input's gradient with stride 2: SAME and VALID, odd and even widths
        rank, c, f = int(rng.choice([1, 2, 2])), int(rng.choice([1, 3, 8, 16, 32, 64])), int(rng.choice([1, 3, 16, 64]))
        size = [int(k) for k in rng.integers(1, 6, rank)]
        spatial = [int(rng.integers(k, k + 14)) for k in size]
        yield (int(rng.choice([1, 2, 3, 4, 8, 16])), spatial, c, size, f, [2] * rank, [1] * rank,
               str(rng.choice(["SAME", "VALID"])))


def cases():
    for index, (b, spatial, c, size, f, strides, dilations, padding) in enumerate(shapes()):
        yield {"index": index, "batch": b, "spatial": spatial, "channels": c, "size": size, "filters": f,
               "strides": strides, "dilations": dilations, "padding": padding}


def tensorflow_conv(tf, case):
    x, f = operands(case)
    rank = len(case["size"])
    if rank == 1:
        return tf.nn.conv1d(x, f, case["strides"][0], case["padding"], dilations=case["dilations"][0])
    if rank == 2:
        return tf.nn.conv2d(x, f, case["strides"], case["padding"], dilations=case["dilations"])
    return tf.nn.conv3d(x, f, [1, *case["strides"], 1], case["padding"], dilations=[1, *case["dilations"], 1])


def tensorflow_gradients(tf, case, shape):
    """Conv2DBackpropFilter's and Conv2DBackpropInput's results as tf.GradientTape gives them (a 1-D case: a
    Conv2D over a height of one)."""
    x, f = operands(case)
    g = output_gradient(case, shape)
    strides, dilations = [1, 1, *case["strides"]][-2:], [1, 1, *case["dilations"]][-2:]
    kernel = f[None] if len(case["size"]) == 1 else f
    if len(case["size"]) == 1:
        x, g = x[:, None], g[:, None]
    kernel_grad = tf.compat.v1.nn.conv2d_backprop_filter(x, kernel.shape, g, [1, *strides, 1], case["padding"],
                                                         dilations=[1, *dilations, 1])
    input_grad = tf.compat.v1.nn.conv2d_backprop_input(x.shape, kernel, g, [1, *strides, 1], case["padding"],
                                                       dilations=[1, *dilations, 1])
    return kernel_grad.numpy().reshape(f.shape), input_grad.numpy().reshape(operands(case)[0].shape)


def main() -> None:
    import tensorflow as tf
    from tapecli.kernels.tf_sums import POOL_THREADS
    rows = []
    for case in cases():
        out = tensorflow_conv(tf, case).numpy()
        grads = [digest(g) for g in tensorflow_gradients(tf, case, out.shape)] if len(case["size"]) < 3 else [None] * 2
        rows.append([case[key] for key in FIELDS[:-4]] + [digest(out), f"{out.ravel()[:1].view(np.uint32)[0]:08x}",
                                                          *grads])
    out_path = ROOT / "tests" / "data" / "tf_conv_bits.json"
    out_path.write_text(json.dumps({"tensorflow": tf.__version__, "vector_width": tf_onednn.vector_width(),
                                    "threads": POOL_THREADS, "fields": FIELDS, "cases": rows},
                                   separators=(",", ":")))
    print(f"{len(rows)} cases")


if __name__ == "__main__":
    main()
