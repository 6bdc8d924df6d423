"""The op table, one entry per op, split by family. See docs/adding-an-op.md.

``from tapecli import ops`` gives the op functions the rest of tapecli calls (``ops.add``, ``ops.reduce_sum``),
the table itself (``ops.OPS``) and, for every op a program calls by a builtin name, its public function: the one
its family module writes, imported here by name, or else a plain ``name(x)`` / ``name(x, y)`` made by
``publish``. The ``grads`` formulas run with this package as their namespace ``m``.

The families in ``DEFERRED`` are imported, and their ops registered, when one of their functions is first read
from this package (``ops.einsum``): a small program never loads them. The builtins and fusion's call table are
derived from the ops' builtin names and fusion formulas as they load: a deferred family with such ops is listed
in ``BUILTINS`` (generated: builtin_families.py), from which the library imports it for a program that names one
of them and fusion plans them. ``load_deferred`` imports them all, for what reads the whole table.
"""
import importlib
import sys

from tapecli.ops import core
from tapecli.ops.builtin_families import BUILTINS
from tapecli.ops.core import (apply, default_dtype, emit, materialize, numeric, Op, OPS, publish, recording_watches,
                              text_leaf, to_tensor, unbroadcast)
from tapecli.ops.elementwise import (ABS, abs_, ADD, add, ADD_N, add_n, bitwise_and, bitwise_operator, bitwise_or,
                                     bitwise_xor, CAST, cast, ceil, clip, cos, div, divide_no_nan, elu, equal, erf, EXP,
                                     exp, floor, floordiv, greater, greater_equal, invert, leaky_relu, left_shift,
                                     less, less_equal, LOG, log, log1p, logical_and, logical_not, logical_or,
                                     masked_grad, maximum, minimum, mod, mul, NEG, neg, not_equal, ones_like, pow_,
                                     reciprocal, RELU, relu, right_shift, round_, rsqrt, SIGMOID, sigmoid, sigmoid_grad,
                                     sign, silu, SIN, sin, softplus, SQRT, sqrt, sqrt_grad, square, stop_gradient, SUB,
                                     sub, tan, TANH, tanh, tanh_grad, where, zeros_like)

# family -> the names this package gives of it
DEFERRED = {
    "shape": ("admit_rows", "BROADCAST_TO", "broadcast_to", "CONCAT", "concat", "GETITEM", "getitem", "index_batchable",
              "index_grad", "RESHAPE", "reshape", "row", "rows", "STACK", "stack", "TRANSPOSE", "transpose"),
    "reductions": ("argmax", "argmin", "log_softmax", "MEAN", "reduce_logsumexp", "reduce_max", "reduce_mean",
                   "reduce_min", "reduce_prod", "reduce_sum", "SOFTMAX", "softmax", "SUM"),
    "linalg": ("IDENTITY_SEEDS", "MATMUL", "matmul"),
    "elementwise_math": ("atan2", "gelu", "trigamma"),
    "special": ("betainc", "igamma", "igamma_grad_a", "igammac"),
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
# a name -> its family: the names each gives, and the public functions of its ops' builtins (publish)
_FAMILY = {name: family for family, names in DEFERRED.items() for name in names} | {
    public: family for family, builtins in BUILTINS.items() for _, public, _ in builtins.values()}


def __getattr__(name: str):
    family = _FAMILY.get(name)
    if family is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    _load(family)
    return globals()[name]


def _load(family: str) -> None:
    """Import ``family``, then give the names of every deferred family imported (it may import others, and the
    library imports those with builtins by their module's name), before ``publish`` makes the functions their
    modules do not write."""
    importlib.import_module(f"{__name__}.{family}")
    namespace = globals()
    for loaded, names in DEFERRED.items():
        module = sys.modules.get(f"{__name__}.{loaded}")
        if module is not None:
            for name in names:
                namespace[name] = getattr(module, name)
    publish(namespace)


def load_deferred(families=DEFERRED) -> None:
    """The deferred ``families`` imported (by default every one: the whole op table)."""
    for family in families:
        _load(family)


publish(globals())
core._E = sys.modules[__name__]
