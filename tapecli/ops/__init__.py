"""The op table, one entry per op, split by family. See docs/adding-an-op.md.

``from tapecli import ops`` gives the op functions the rest of tapecli calls (``ops.add``, ``ops.reduce_sum``),
the table itself (``ops.OPS``) and, for every op a program calls by a builtin name, its public function: the one
its family module writes, imported here by name, or else a plain ``name(x)`` / ``name(x, y)`` made by
``publish``. The ``grads`` formulas run with this package as their namespace ``m``.

The families in ``DEFERRED`` are imported, and their ops registered, when one of their functions is first read
from this package (``ops.einsum``): a small program never loads them. None of their ops has a builtin name or a
fusion formula (the builtins and fusion's call table are derived from those when they load); ``load_deferred``
imports them all, for what reads the whole table.
"""
import importlib
import sys

from tapecli.ops import core, special   # special: its ops alone, registered on import
from tapecli.ops.core import (apply, default_dtype, emit, materialize, numeric, Op, OPS, publish, recording_watches,
                              text_leaf, to_tensor, unbroadcast)
from tapecli.ops.elementwise import (ABS, abs_, ADD, add, ADD_N, add_n, bitwise_and, bitwise_operator, bitwise_or,
                                     bitwise_xor, CAST, cast, ceil, clip, cos, div, divide_no_nan, elu, equal, erf, EXP,
                                     exp, floor, floordiv, greater, greater_equal, invert, leaky_relu, left_shift,
                                     less, less_equal, LOG, log, log1p, logical_and, logical_not, logical_or,
                                     masked_grad, maximum, minimum, mod, mul, NEG, neg, not_equal, ones_like, pow_,
                                     reciprocal, RELU, relu, right_shift, round_, rsqrt, SIGMOID, sigmoid, sigmoid_grad,
                                     sign, SIN, sin, softplus, SQRT, sqrt, sqrt_grad, square, stop_gradient, SUB, sub,
                                     tan, TANH, tanh, tanh_grad, where, zeros_like)
from tapecli.ops.elementwise_math import atan2, gelu, silu, trigamma
from tapecli.ops.special import betainc, igamma, igamma_grad_a, igammac

# family -> the names this package gives of it
DEFERRED = {
    "shape": ("admit_rows", "BROADCAST_TO", "broadcast_to", "CONCAT", "concat", "GETITEM", "getitem", "index_batchable",
              "index_grad", "RESHAPE", "reshape", "row", "rows", "STACK", "stack", "TRANSPOSE", "transpose"),
    "reductions": ("argmax", "argmin", "log_softmax", "MEAN", "reduce_logsumexp", "reduce_max", "reduce_mean",
                   "reduce_min", "reduce_prod", "reduce_sum", "SOFTMAX", "softmax", "SUM"),
    "linalg": ("IDENTITY_SEEDS", "MATMUL", "matmul"),
    "gathers": ("argsort", "band_part", "boolean_mask", "gather", "gather_nd", "int_indices", "pad", "reverse", "roll",
                "scatter_nd", "sequence_mask", "sort", "tensor_scatter_nd_add", "tile", "top_k", "unsorted_segment_prod",
                "unsorted_segment_sum"),
    "scan": ("cumprod", "cumsum", "cumulative_logsumexp", "identity", "one_hot"),
    "nn": ("avg_pool2d", "batch_normalization", "bias_add", "BIAS_ADD_GRAD", "CONV_FILTER_GRAD", "conv1d", "conv2d",
           "conv_transpose",
           "convolution", "convolutions", "dropout", "extract_patches", "max_pool2d", "MAX_POOL_GATHER", "MAX_POOL_GRAD",
           "sigmoid_cross_entropy_with_logits", "softmax_cross_entropy_with_logits", "SOFTMAX_XENT_BACKPROP",
           "sparse_softmax_cross_entropy_with_logits", "sparse_xent", "SPARSE_XENT_BACKPROP",
           "truncated_normal_values", "windows", "windows_grad"),
    "matrix": ("cholesky", "det", "diag", "diag_part", "eigh_values", "eigh_vectors", "einsum", "inv", "lu",
               "lstsq_complete_orthogonal", "matvec", "norm_ord", "slogdet", "solve", "tensordot", "trace",
               "triangular_solve"),
    "tridiagonal": ("tridiagonal_matmul", "tridiagonal_solve"),
    "decompositions": ("qr", "qr_q", "qr_r", "svd", "svd_s", "svd_u", "svd_v"),
    "colorspace": ("adjust_hue", "adjust_saturation", "hsv_to_rgb", "rgb_to_hsv"),
    "image": ("projective_transform",),
    "ctc": ("ctc_loss", "ctc_sparse_loss"),
    "quantization": ("fake_quant", "quantize_dequantize"),
}
_FAMILY = {name: family for family, names in DEFERRED.items() for name in names}


def __getattr__(name: str):
    family = _FAMILY.get(name)
    if family is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    _load(family)
    return globals()[name]


def _load(family: str) -> None:
    module = importlib.import_module(f"{__name__}.{family}")
    namespace = globals()
    for name in DEFERRED[family]:
        namespace[name] = getattr(module, name)


def load_deferred() -> None:
    """Every deferred family imported: the whole op table."""
    for family in DEFERRED:
        _load(family)


publish(globals())
core._E = sys.modules[__name__]
