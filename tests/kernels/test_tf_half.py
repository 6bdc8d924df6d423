"""float16 and bfloat16 ops against TensorFlow's bits: the ops Keras's Dense, Activation, softmax and crossentropy
layers and their gradients run under a mixed precision policy, recorded by benchmarks/record_tf_half.py from
TensorFlow 2.21 on the CPU into tests/tf_half_bits.json. HALF_EXACT lists those tapecli computes as TensorFlow
does, bit for bit (docs/tf-surface.md says so); tapecli's ops refuse a bfloat16 tensor for each of the others."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tapecli import kernels
from tapecli import ops  # noqa: F401  (the op table registers the kernels)
from tapecli.ops.core import BFLOAT16_OPS
from tapecli.runtime.values import DTYPES, DType

ml_dtypes = pytest.importorskip("ml_dtypes")

TABLE = json.loads((Path(__file__).parents[1] / "tf_half_bits.json").read_text())["ops"]
_K = kernels.RAW_NUMPY_KERNELS
# each recorded op as tapecli's kernels compute it
CALLS = {
    "exp": _K["exp"], "log": _K["log"], "tanh": _K["tanh"], "sigmoid": _K["sigmoid"], "relu": _K["relu"],
    "softplus": _K["softplus"], "sqrt": _K["sqrt"], "square": _K["square"], "neg": _K["neg"], "add": _K["add"],
    "sub": _K["sub"], "mul": _K["mul"], "div": _K["div"], "maximum": _K["maximum"],
    "softmax": lambda x: _K["softmax"](x, axis=-1), "log_softmax": lambda x: _K["log_softmax"](x, axis=-1),
    "sum": lambda x: _K["sum"](x, axis=0), "sum_last": lambda x: _K["sum"](x, axis=-1),
    "sum_all": lambda x: _K["sum"](x), "mean": lambda x: _K["mean"](x, axis=0),
    "max": lambda x: _K["max"](x, axis=-1), "sigmoid_grad": _K["sigmoid_grad"],
    "tanh_grad": _K["tanh_grad"],
}
HALF_EXACT = {
    "float16": {"exp", "log", "tanh", "sigmoid", "relu", "softplus", "sqrt", "square", "neg", "add", "sub", "mul",
                "div", "maximum", "softmax", "log_softmax", "sum", "sum_last", "sum_all", "mean", "max",
                "sigmoid_grad", "tanh_grad"},
    "bfloat16": {"exp", "log", "tanh", "sigmoid", "relu", "sqrt", "square", "neg", "add", "sub", "mul", "div",
                 "maximum", "sum", "sum_last", "sum_all", "mean", "max", "sigmoid_grad", "tanh_grad"},
}


# the op of each recorded case whose name is not its op's
OP_NAMES = {"sum_last": "sum", "sum_all": "sum"}


def _dtype(name):
    return DType(name).np if name == "bfloat16" else DTYPES[name]


def _value(hexes, shape, dtype):
    return np.array([int(h, 16) for h in hexes], np.uint16).view(_dtype(dtype)).reshape(shape)


def _outcome(dtype, op, case):
    """(tapecli's bits equal TensorFlow's, the largest difference in units of the last place)."""
    shape = tuple(case["shape"])
    args = [_value(h, shape, dtype) for h in case["args"]]
    want = _value(case["out"], tuple(case["out_shape"]), dtype)
    with kernels.quiet():
        got = np.asarray(CALLS[op](*args)).astype(want.dtype).reshape(want.shape)
    g, w = got.view(np.int16).astype(np.int64), want.view(np.int16).astype(np.int64)
    g, w = np.where(g < 0, -(g & 0x7FFF), g), np.where(w < 0, -(w & 0x7FFF), w)
    return got.tobytes() == want.tobytes(), int(np.abs(g - w).max(initial=0))


def rates() -> list[str]:
    """Per dtype and op: how many cases give TensorFlow's bits, and the largest difference in ulps."""
    lines = []
    for dtype, table in TABLE.items():
        for op, cases in table.items():
            found = [_outcome(dtype, op, c) for c in cases]
            lines.append(f"{dtype} {op}: {sum(same for same, _ in found)}/{len(found)} exact, "
                         f"max {max(ulps for _, ulps in found)} ulp")
    return lines


@pytest.mark.parametrize("dtype,op", [(d, op) for d, table in TABLE.items() for op in sorted(table)])
def test_half_float_ops_give_tensorflows_bits(dtype, op):
    if op not in HALF_EXACT[dtype]:
        assert dtype == "bfloat16" and OP_NAMES.get(op, op) not in BFLOAT16_OPS, (dtype, op)
        return
    assert dtype == "float16" or OP_NAMES.get(op, op) in BFLOAT16_OPS, op
    for case in TABLE[dtype][op]:
        same, ulps = _outcome(dtype, op, case)
        assert same, (dtype, op, case["shape"], ulps)
