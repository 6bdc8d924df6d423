"""Table-driven gradient checks over the op table (``tapecli.ops.OPS``).

Every differentiable op has at least one row in ``CASES``: a function building the
op from input tensors, the inputs' shapes and domains (kept away from kinks and
poles), and whether its second derivative is checked. For every row and every
kernel backend (``TAPECLI_BACKEND=numpy|numba``) the tests check:

* the first-order gradient of ``sum(op(...) * w)`` against float64 central finite
  differences, with gradient shapes and dtypes equal to the inputs';
* the second-order gradient of ``sum(grad * v)`` (nested tapes) against finite
  differences of the first-order gradient along ``v``;
* the op's forward-mode rule (``Op.jvp``), where it has one, against finite
  differences and against its gradient rule: ``<vjp(w), t> == <w, jvp(t)>``.

Also: gradients of float32 inputs stay float32; third derivatives for a few rows
(prod with zeros among them); the kink conventions; the numeric stability of the
exp/log-based ops at +-100 and +-1000; and the table's coverage of ``OPS``.
"""
from __future__ import annotations

import importlib.util
import math

import numpy as np
import pytest

from conftest import fast_paths, open_tape
from autodiff.gradient_cases import EPS, F32, F64, LINALG_CASES, Case, In
from tapecli.autodiff.backward import backward
from tapecli import ops
from tapecli.autodiff import replay
from tapecli.autodiff.gradients import gradient
from tapecli.ops.remapper import FUSED
from tapecli.runtime.context import current, run_context
from tapecli.runtime.tape import Tape
from tapecli.runtime.values import Tensor, is_float

ops.load_deferred()         # the whole table: the cases cover the ops of the families a small run never loads

EPS2 = 1e-5         # differences of the first-order gradient (second order)


# ---------------------------------------------------------------- fixtures

def _numba_missing() -> bool:
    return importlib.util.find_spec("tapecli.kernels.numba_kernels") is None


@pytest.fixture(params=["numpy", "numba"])
def backend(request, monkeypatch):
    if request.param == "numba" and _numba_missing():
        pytest.skip("tapecli/kernels/numba_kernels.py does not exist (yet): no numba backend to test")
    monkeypatch.setenv("TAPECLI_BACKEND", request.param)
    return request.param


@pytest.fixture(autouse=True)
def _clean_state():
    with run_context(float_dtype=np.float64):
        yield


def _apart(i, j, margin=0.02):
    """Inputs i and j differ by more than ``margin`` everywhere (after broadcasting)."""
    return lambda *a: bool(np.all(np.abs(a[i] - a[j]) > margin))


def _mod_ok(a, b):
    q = a / b
    frac = q - np.floor(q)
    return bool(np.all((frac > 0.05) & (frac < 0.95)))


def _clip_ok(x, lo, hi):
    return bool(np.all(hi - lo > 0.1) and np.all(np.abs(x - lo) > 0.02) and np.all(np.abs(x - hi) > 0.02))


def _clip_const_ok(x):
    return bool(np.all(np.abs(np.abs(x) - 0.5) > 0.02))


# --------------------------------------------------------------- the table

def _unary_rows(name, fn, domain="normal", second=True, shape=(3, 4)):
    return [Case(name, name, fn, (In(shape, domain),), second=second),
            Case(f"{name}_scalar", name, fn, (In((), domain),), second=second)]


def _binary_rows(name, fn, da="normal", db="normal", accept=None):
    pairs = [("same", (3, 4), (3, 4)), ("bcast_3x1_1x4", (3, 1), (1, 4)), ("bcast_4_2x3x4", (4,), (2, 3, 4)),
             ("bcast_2x3x4_3x1", (2, 3, 4), (3, 1)), ("scalar_3", (), (3,))]
    return [Case(f"{name}_{tag}", name, fn, (In(sa, da), In(sb, db)), accept=accept) for tag, sa, sb in pairs]


IDX_ARRAY = np.array([0, 2, 0, 3, 0])
IDX_2D_ROWS = np.array([[0, 1], [1, 1]])
IDX_2D_COLS = np.array([[2, 2], [0, 2]])
MASK = np.array([True, False, True, True])

GETITEM_INDEXES = [
    ("int", (1,)),
    ("negative_int", (-1,)),
    ("int_int", (1, -2)),
    ("slices", (slice(1, 3), slice(None, None, 2))),
    ("negative_step", (slice(None, None, -1),)),
    ("negative_step_2", (slice(3, 0, -2), slice(None, None, -1))),
    ("int_array_repeats", (IDX_ARRAY,)),
    ("int_array_2d_repeats", (IDX_2D_ROWS, IDX_2D_COLS)),
    ("slice_int_array", (slice(None), np.array([4, 4, 1, -1]))),
    ("int_slice_step", (2, slice(4, None, -3))),
    ("newaxis", (None, slice(1, 3))),
    ("bool_mask", (MASK,)),
]


def _getitem_rows():
    rows = []
    for tag, index in GETITEM_INDEXES:
        rows.append(Case(f"getitem_{tag}", "getitem", lambda x, i=index: ops.getitem(x, i), (In((4, 5)),)))
    # sin after the index: the first gradient depends on x, so the second order runs
    # index_grad's own gradient rule.
    for tag in ("int_array_repeats", "negative_step_2", "slice_int_array"):
        index = dict(GETITEM_INDEXES)[tag]
        rows.append(Case(f"sin_of_getitem_{tag}", "getitem", lambda x, i=index: ops.sin(ops.getitem(x, i)),
                         (In((4, 5)),)))
    rows.append(Case("getitem_3d_mixed", "getitem",
                     lambda x: ops.getitem(x, (slice(None, None, -1), np.array([0, 2, 2]), 1)), (In((2, 3, 4)),)))
    return rows


def _index_grad_rows():
    rows = []
    for tag in ("int", "negative_step_2", "int_array_repeats", "int_array_2d_repeats", "slice_int_array",
                "newaxis"):
        index = dict(GETITEM_INDEXES)[tag]
        gshape = np.zeros((4, 5))[index].shape
        rows.append(Case(f"index_grad_{tag}", "index_grad",
                         lambda g, i=index: ops.index_grad(ops.sin(g), (4, 5), i), (In(gshape),)))
    return rows


def _masked_rows():
    rows = []
    for kind, fn in (("relu", ops.relu), ("abs", ops.abs_), ("leaky_relu", ops.leaky_relu)):
        rows.append(Case(kind, kind, fn, (In((3, 4), "nonzero"),), zero_second=True))
        rows.append(Case(f"{kind}_scalar", kind, fn, (In((), "nonzero"),), zero_second=True))
        # sin after the kink: the first gradient depends on x through masked_grad's g.
        rows.append(Case(f"sin_of_{kind}", kind, lambda x, f=fn: ops.sin(f(x)), (In((3, 4), "nonzero"),)))
        rows.append(Case(f"masked_grad_{kind}", "masked_grad",
                         lambda g, x, k=kind: ops.masked_grad(ops.sin(g), x, kind=k, alpha=0.3),
                         (In((3, 4)), In((3, 4), "nonzero"))))
    rows.append(Case("leaky_relu_alpha_0.05", "leaky_relu", lambda x: ops.leaky_relu(x, alpha=0.05),
                     (In((3, 4), "nonzero"),), zero_second=True))
    return rows


def _reduction_rows(name, fn, domain="normal"):
    specs = [("all", (3, 4), {}), ("axis0", (3, 4), {"axis": 0}), ("axis_neg1_keepdims", (2, 3, 4),
             {"axis": -1, "keepdims": True}), ("axes_0_2", (2, 3, 4), {"axis": (0, 2)}),
             ("axes_0_2_keepdims", (2, 3, 4), {"axis": (2, 0), "keepdims": True}), ("vector", (5,), {}),
             ("scalar", (), {})]
    return [Case(f"{name}_{tag}", name, lambda x, kw=kw: fn(x, **kw), (In(shape, domain),)) for tag, shape, kw in specs]


def _softmax_rows(name, fn):
    return [Case(f"{name}_last", name, lambda x: fn(x), (In((3, 4), "wide"),)),
            Case(f"{name}_axis0", name, lambda x: fn(x, axis=0), (In((3, 4), "wide"),)),
            Case(f"{name}_3d_axis1", name, lambda x: fn(x, axis=1), (In((2, 3, 4), "wide"),)),
            Case(f"{name}_vector", name, lambda x: fn(x), (In((5,), "wide"),))]


def _beta_a(x):
    return Tensor(np.array([[0.7, 1.5, 2.5, 4.0]] * 3, dtype=x.dtype))


def _beta_b(x):
    return Tensor(np.array([[3.0], [0.8], [1.6]], dtype=x.dtype))


MATMUL_SHAPES = [("2d_2d", (3, 4), (4, 5)), ("1d_2d", (4,), (4, 5)), ("2d_1d", (3, 4), (4,)), ("1d_1d", (4,), (4,)),
                 ("batched_3d_2d", (2, 3, 4), (4, 5)), ("batched_3d_3d", (2, 3, 4), (2, 4, 5)),
                 ("batched_bcast", (1, 3, 4), (2, 4, 5)), ("1d_3d", (4,), (2, 4, 5)), ("3d_1d", (2, 3, 4), (4,))]

CASES: list[Case] = [
    # ----- elementwise arithmetic
    *_binary_rows("add", ops.add),
    Case("add_literal", "add", lambda x: ops.add(x, 2.5), (In((3, 4)),)),
    *_binary_rows("sub", ops.sub),
    Case("sub_literal_first", "sub", lambda x: ops.sub(1.5, x), (In((3, 4)),)),
    *_binary_rows("mul", ops.mul),
    Case("mul_literal", "mul", lambda x: ops.mul(x, -3.0), (In((3, 4)),)),
    *_binary_rows("div", ops.div, db="nonzero"),
    Case("div_literal_numerator", "div", lambda x: ops.div(2.0, x), (In((3, 4), "nonzero"),)),
    *_binary_rows("mod", ops.mod, db=("uniform", 0.5, 1.5), accept=_mod_ok),
    Case("mod_negative_divisor", "mod", ops.mod, (In((3, 4)), In((3, 4), ("uniform", -1.5, -0.5))), accept=_mod_ok),
    *_binary_rows("pow", ops.pow_, da="positive", db=("uniform", -2.0, 2.0)),
    Case("pow_negative_base_literal_exponent", "pow", lambda x: ops.pow_(x, 3.0), (In((3, 4), "nonzero"),)),
    Case("pow_literal_base", "pow", lambda x: ops.pow_(2.0, x), (In((3, 4)),)),
    *_binary_rows("maximum", ops.maximum, accept=_apart(0, 1)),
    *_binary_rows("minimum", ops.minimum, accept=_apart(0, 1)),
    Case("maximum_literal", "maximum", lambda x: ops.maximum(x, 0.0), (In((3, 4), "nonzero"),)),
    Case("minimum_literal_first", "minimum", lambda x: ops.minimum(0.5, x), (In((3, 4)),),
         accept=lambda x: bool(np.all(np.abs(x - 0.5) > 0.02))),
    Case("neg", "neg", ops.neg, (In((3, 4)),)),
    Case("neg_scalar", "neg", ops.neg, (In(()),)),
    # ----- unary elementwise
    *_unary_rows("sin", ops.sin),
    *_unary_rows("cos", ops.cos),
    *_unary_rows("tan", ops.tan, ("uniform", -1.2, 1.2)),
    *_unary_rows("exp", ops.exp),
    *_unary_rows("sign", ops.sign),
    *_unary_rows("log", ops.log, "positive"),
    *_unary_rows("log1p", ops.log1p, ("uniform", -0.5, 2.0)),
    *_unary_rows("expm1", ops.expm1),
    *_unary_rows("sqrt", ops.sqrt, "positive"),
    *_unary_rows("rsqrt", ops.rsqrt, "positive"),
    *_unary_rows("reciprocal", ops.reciprocal, "positive"),
    *_unary_rows("square", ops.square),
    *_unary_rows("tanh", ops.tanh, "wide"),
    *_unary_rows("sigmoid", ops.sigmoid, "wide"),
    *_unary_rows("softplus", ops.softplus, "wide"),
    *_unary_rows("erf", ops.erf),
    *_unary_rows("elu", ops.elu, "nonzero"),
    Case("elu_alpha_0.5", "elu", lambda x: ops.elu(x, alpha=0.5), (In((3, 4), "nonzero"),)),
    # gelu: TensorFlow's composition of ops (its last a mul), erfc's and pow's gradients through it
    Case("gelu_exact", "mul", lambda x: ops.gelu(x), (In((3, 4), "wide"),)),
    Case("gelu_tanh", "mul", lambda x: ops.gelu(x, approximate=True), (In((3, 4), "wide"),)),
    Case("gelu_exact_scalar", "mul", lambda x: ops.gelu(x), (In(()),)),
    *_masked_rows(),
    # ----- tf.math elementwise (ops/elementwise_math.py)
    *_unary_rows("sinh", ops.sinh),
    *_unary_rows("cosh", ops.cosh),
    *_unary_rows("asin", ops.asin, ("uniform", -0.8, 0.8)),
    *_unary_rows("acos", ops.acos, ("uniform", -0.8, 0.8)),
    *_unary_rows("asinh", ops.asinh),
    *_unary_rows("acosh", ops.acosh, ("uniform", 1.2, 3.0)),
    *_unary_rows("atanh", ops.atanh, ("uniform", -0.8, 0.8)),
    *_unary_rows("atan", ops.atan, "wide"),
    *_unary_rows("erfc", ops.erfc),
    *_unary_rows("lgamma", ops.lgamma, ("uniform", 0.3, 4.0)),
    *_unary_rows("erfinv", ops.erfinv, ("uniform", -0.9, 0.9)),
    *_unary_rows("ndtri", ops.ndtri, ("uniform", 0.05, 0.95)),
    *_unary_rows("erfcinv", ops.erfcinv, ("uniform", 0.1, 1.9)),
    *_unary_rows("bessel_i0", ops.bessel_i0, ("uniform", -3.0, 3.0)),
    *_unary_rows("bessel_i0e", ops.bessel_i0e, "nonzero"),
    *_unary_rows("bessel_i1", ops.bessel_i1, ("uniform", -3.0, 3.0)),
    *_unary_rows("bessel_i1e", ops.bessel_i1e, "nonzero"),
    *_binary_rows("multiply_no_nan", ops.multiply_no_nan),
    # IgammaGradA has no gradient (TensorFlow's LookupError): no second order through a
    *[Case(c.id, c.op, c.fn, c.inputs, second=False)
      for name in ("igamma", "igammac")
      for c in _binary_rows(name, getattr(ops, name), da=("uniform", 0.5, 3.0), db=("uniform", 0.3, 4.0))],
    Case("igamma_x_only", "igamma", lambda x: ops.igamma(_beta_a(x), x), (In((3, 4), ("uniform", 0.3, 4.0)),)),
    Case("igammac_x_only", "igammac", lambda x: ops.igammac(_beta_a(x), x), (In((3, 4), ("uniform", 0.3, 4.0)),)),
    # betainc's gradient is x's alone (None for a and b, as TensorFlow's)
    Case("betainc_x", "betainc", lambda x: ops.betainc(_beta_a(x), _beta_b(x), x), (In((3, 4), ("uniform", 0.05, 0.95)),)),
    Case("betainc_x_scalar", "betainc", lambda x: ops.betainc(_beta_a(x), _beta_b(x), x),
         (In((), ("uniform", 0.05, 0.95)),)),
    Case("lgamma_negative", "lgamma", ops.lgamma, (In((3, 4), ("uniform", -2.9, -2.1)),)),
    # digamma's derivative (trigamma) is not differentiable: no second order
    *_unary_rows("digamma", ops.digamma, ("uniform", 0.3, 8.0), second=False),
    Case("digamma_negative", "digamma", ops.digamma, (In((3, 4), ("uniform", -0.9, -0.1)),), second=False),
    *_unary_rows("softsign", ops.softsign, "nonzero"),
    *_unary_rows("selu", ops.selu, "nonzero"),
    *_unary_rows("silu", ops.silu),
    Case("silu_beta_0.5", "silu", lambda x: ops.silu(x, beta=0.5), (In((3, 4)),)),
    # oneDNN's kernels of the activations a graph fuses into a MatMul (ops/remapper.py): float32 inside, the
    # Eigen ops' gradient rules (a coarser difference step)
    *[Case(f"onednn_{name}", f"onednn_{name}", lambda x, name=name, attrs=attrs: ops.apply(FUSED[name][0], (x,), **attrs),
           (In((3, 4), "nonzero", F32),), second=False, eps=1e-2, tol=(2e-3, 2e-4), jvp=False)
      for name, attrs in (("tanh", {}), ("sigmoid", {}), ("elu", {"alpha": 1.0}), ("silu", {"beta": 1.0}))],
    Case("relu6", "relu6", ops.relu6, (In((3, 4), ("uniform", -2.0, 8.0)),),
         accept=lambda x: bool(np.all(np.abs(x) > 0.05) and np.all(np.abs(x - 6) > 0.05))),
    *_binary_rows("atan2", ops.atan2, da="nonzero", db="nonzero"),
    *_binary_rows("squared_difference", ops.squared_difference),
    # ----- selection
    Case("where_same", "where", ops.where, (In((3, 4), "bool", np.bool_), In((3, 4)), In((3, 4)))),
    Case("where_bcast", "where", ops.where, (In((3, 4), "bool", np.bool_), In((3, 1)), In((4,)))),
    Case("where_bcast_cond", "where", ops.where, (In((3, 1), "bool", np.bool_), In((3, 4)), In(()))),
    Case("where_literal", "where", lambda c, x: ops.where(c, x, 0.0), (In((2, 3), "bool", np.bool_), In((2, 3)))),
    Case("clip_tensors", "clip", ops.clip, (In((3, 4)), In((3, 4), ("uniform", -1.0, -0.2)),
                                            In((3, 4), ("uniform", 0.2, 1.0))), accept=_clip_ok),
    Case("clip_bcast", "clip", ops.clip, (In((3, 4)), In((4,), ("uniform", -1.0, -0.2)),
                                          In((), ("uniform", 0.2, 1.0))), accept=_clip_ok),
    Case("clip_literals", "clip", lambda x: ops.clip(x, -0.5, 0.5), (In((3, 4)),), accept=_clip_const_ok),
    # ----- dtypes: float32 inside, so everything sits on grids that float32 holds exactly
    Case("cast_f64_f32_f64", "cast", lambda x: ops.cast(ops.square(ops.cast(x, F32)), F64),
         (In((3, 4), "grid"),), grid=True, eps=2.0 ** -10),
    Case("cast_f32_to_f64", "cast", lambda x: ops.square(ops.cast(x, F64)), (In((3, 4), "grid", F32),),
         grid=True, eps=2.0 ** -10),
    # ----- reductions
    *_reduction_rows("sum", ops.reduce_sum),
    *_reduction_rows("mean", ops.reduce_mean),
    *_reduction_rows("max", ops.reduce_max, "distinct"),
    *_reduction_rows("min", ops.reduce_min, "distinct"),
    *_reduction_rows("prod", ops.reduce_prod, ("uniform", 0.5, 1.5)),
    # (at zeros TensorFlow's Hessian of a product is not the true one: test_prod_hessian_at_zeros)
    Case("prod_one_zero", "prod", lambda x: ops.reduce_prod(x, axis=1), (In((3, 4), ("with_zeros", (1,))),),
         second=False),
    Case("prod_two_zeros", "prod", lambda x: ops.reduce_prod(x, axis=1), (In((3, 4), ("with_zeros", (1, 2))),),
         second=False),
    Case("prod_zeros_all", "prod", lambda x: ops.reduce_prod(x), (In((2, 3), ("with_zeros", (4,))),), second=False),
    Case("prod_three_zeros", "prod", lambda x: ops.reduce_prod(x, axis=0),
         (In((4, 2), ("with_zeros", (0, 2, 4))),), second=False),
    *_reduction_rows("logsumexp", ops.reduce_logsumexp, "wide"),
    *_softmax_rows("softmax", ops.softmax),
    *_softmax_rows("log_softmax", ops.log_softmax),
    # ----- shapes and linear algebra
    *[Case(f"matmul_{tag}", "matmul", ops.matmul, (In(sa), In(sb))) for tag, sa, sb in MATMUL_SHAPES],
    Case("matmul_same_input", "matmul", lambda x: ops.matmul(x, x), (In((3, 3)),)),
    Case("reshape", "reshape", lambda x: ops.reshape(x, (2, 6)), (In((3, 4)),)),
    Case("reshape_flat", "reshape", lambda x: ops.reshape(x, (24,)), (In((2, 3, 4)),)),
    Case("reshape_to_scalar", "reshape", lambda x: ops.reshape(x, ()), (In((1, 1)),)),
    Case("sin_of_reshape", "reshape", lambda x: ops.sin(ops.reshape(x, (4, 3))), (In((3, 4)),)),
    Case("transpose_default", "transpose", lambda x: ops.transpose(x), (In((3, 4)),)),
    Case("transpose_perm", "transpose", lambda x: ops.transpose(x, (2, 0, 1)), (In((2, 3, 4)),)),
    Case("sin_of_transpose", "transpose", lambda x: ops.sin(ops.transpose(x, (1, 2, 0))), (In((2, 3, 4)),)),
    Case("broadcast_to", "broadcast_to", lambda x: ops.broadcast_to(x, (2, 3, 4)), (In((3, 1)),)),
    Case("broadcast_to_scalar", "broadcast_to", lambda x: ops.broadcast_to(x, (3,)), (In(()),)),
    Case("sin_of_broadcast_to", "broadcast_to", lambda x: ops.sin(ops.broadcast_to(x, (2, 4))), (In((4,)),)),
    Case("concat_axis0", "concat", lambda a, b: ops.concat([a, b], axis=0), (In((2, 3)), In((1, 3)))),
    Case("concat_axis1", "concat", lambda a, b, c: ops.concat([a, b, c], axis=1),
         (In((2, 1)), In((2, 3)), In((2, 2)))),
    Case("concat_axis_neg1", "concat", lambda a, b: ops.concat([a, b], axis=-1), (In((2, 3, 2)), In((2, 3, 1)))),
    Case("sin_of_concat", "concat", lambda a, b: ops.sin(ops.concat([a, b], axis=0)), (In((2, 3)), In((1, 3)))),
    Case("stack_axis0", "stack", lambda a, b, c: ops.stack([a, b, c], axis=0), (In((2, 3)), In((2, 3)), In((2, 3)))),
    Case("stack_axis1", "stack", lambda a, b: ops.stack([a, b], axis=1), (In((2, 3)), In((2, 3)))),
    Case("stack_axis_neg1", "stack", lambda a, b: ops.stack([a, b], axis=-1), (In((2, 3)), In((2, 3)))),
    Case("stack_scalars", "stack", lambda a, b: ops.stack([a, b]), (In(()), In(()))),
    Case("sin_of_stack", "stack", lambda a, b: ops.sin(ops.stack([a, b], axis=-1)), (In((2, 3)), In((2, 3)))),
    Case("identity", "identity", ops.identity, (In((3, 4)),)),
    Case("sin_of_identity", "identity", lambda x: ops.sin(ops.identity(x)), (In((3, 4)),)),
    *[Case(f"{name}_{tag}", name, lambda x, f=f, kw=kw: ops.sin(f(x, **kw)), (In((3, 4), dom),))
      for name, f, dom in (("cumsum", ops.cumsum, "normal"), ("cumprod", ops.cumprod, ("uniform", 0.5, 1.5)))
      for tag, kw in (("axis0", {"axis": 0}), ("axis1", {"axis": 1}), ("exclusive", {"axis": 1, "exclusive": True}),
                      ("reverse", {"axis": 0, "reverse": True}),
                      ("exclusive_reverse", {"axis": -1, "exclusive": True, "reverse": True}))],
    Case("cumprod_negative", "cumprod", lambda x: ops.cumprod(x, axis=1), (In((2, 4), "nonzero"),)),
    *_getitem_rows(),
    *_index_grad_rows(),
]

# Compositions (tapecli/ops/gathers.py, nn.py): no entry of their own; each row names the op
# whose record it checks, and runs the same first/second-order and jvp checks.
IDX = np.array([[2, 0], [1, 1]])
# max pooling's 3 x 2 windows, strides 1 and 2, SAME, on 5 x 6 images: TensorFlow's MaxPoolGrad and its adjoint
_POOL_GEOMETRY = {"size": (3, 2), "strides": (1, 2), "pads": (1, 1, 0, 0), "out": (5, 3)}
_POOLED = Tensor(np.random.default_rng(5).permutation(60).reshape(1, 5, 6, 2).astype(np.float64))
CASES += [
    Case("gather_axis1", "getitem", lambda x: ops.gather(x, IDX, axis=1), (In((3, 4)),)),
    Case("gather_batch_dims", "getitem",
         lambda x: ops.sin(ops.gather(x, np.array([[2, 0, 2], [1, 1, 3]]), axis=1, batch_dims=1)), (In((2, 4, 3)),)),
    Case("gather_nd_batch_dims", "getitem",
         lambda x: ops.sin(ops.gather_nd(x, np.array([[[0], [2]], [[1], [1]]]), batch_dims=1)), (In((2, 3, 2)),)),
    Case("unsorted_segment_sum", "index_grad",
         lambda x: ops.sin(ops.unsorted_segment_sum(x, np.array([2, 0, 2, 1]), 4)), (In((4, 3)),)),
    *[Case(f"unsorted_segment_prod_{tag}", "unsorted_segment_prod",
           lambda x: ops.sin(ops.unsorted_segment_prod(x, np.array([2, 0, 2, 1, 2]), 4)), (In((5, 3), dom),),
           second=second)
      # two zeros in a segment: TensorFlow's gradient there is 0 whatever x is, so no second order to check
      for tag, dom, second in (("normal", "normal", True), ("one_zero", ("with_zeros", (7,)), True),
                               ("two_zeros", ("with_zeros", (0, 6)), False))],
    Case("unsorted_segment_prod_2d_ids", "unsorted_segment_prod",
         lambda x: ops.unsorted_segment_prod(x, np.array([[0, 1], [1, 1]]), 2), (In((2, 2, 3)),)),
    Case("gather_nd", "getitem", lambda x: ops.sin(ops.gather_nd(x, np.array([[0, 1], [2, 3], [0, 1]]))),
         (In((3, 4)),)),
    Case("scatter_nd", "index_grad", lambda u: ops.sin(ops.scatter_nd(np.array([[1], [3], [1]]), u, (5, 2))),
         (In((3, 2)),)),
    Case("tensor_scatter_nd_add", "index_grad",
         lambda t, u: ops.tensor_scatter_nd_add(t, np.array([[0, 1], [2, 0]]), u), (In((3, 2)), In((2,)))),
    Case("boolean_mask", "getitem", lambda x: ops.boolean_mask(x, Tensor(np.array([True, False, True]))),
         (In((3, 4)),)),
    Case("sort_descending", "getitem", lambda x: ops.sin(ops.sort(x, axis=0, direction="DESCENDING")),
         (In((3, 4), "distinct"),)),
    Case("top_k", "getitem", lambda x: ops.sin(ops.top_k(x, 2)[0]), (In((3, 4), "distinct"),)),
    Case("reverse", "getitem", lambda x: ops.reverse(x, [0, 1]), (In((3, 4)),)),
    Case("roll", "getitem", lambda x: ops.sin(ops.roll(x, [1, -2], [0, 1])), (In((3, 4)),)),
    Case("tile", "broadcast_to", lambda x: ops.sin(ops.tile(x, [2, 3])), (In((2, 3)),)),
    Case("pad_constant", "concat", lambda x: ops.sin(ops.pad(x, [(1, 0), (2, 1)], constant_values=0.5)),
         (In((2, 3)),)),
    Case("pad_reflect", "getitem", lambda x: ops.sin(ops.pad(x, [(2, 1), (1, 2)], "REFLECT")), (In((3, 4)),)),
    Case("pad_symmetric", "getitem", lambda x: ops.sin(ops.pad(x, [(2, 3), (0, 1)], "SYMMETRIC")), (In((3, 4)),)),
    Case("band_part", "where", lambda x: ops.sin(ops.band_part(x, 1, 0)), (In((2, 3, 4)),)),
    Case("sparse_softmax_xent", "sparse_softmax_xent",
         lambda z: ops.sparse_softmax_cross_entropy_with_logits(Tensor(np.array([2, 0, 3], np.int32)), z),
         (In((3, 4), "wide"),)),
    Case("sparse_softmax_xent_backprop", "sparse_softmax_xent_backprop",
         lambda z: ops.sin(ops.apply(ops.SPARSE_XENT_BACKPROP, (z, Tensor(np.array([2, 0, 3], np.int32))))),
         (In((3, 4), "wide"),)),
    Case("softmax_xent_backprop", "softmax_xent_backprop",
         lambda z, y: ops.sin(ops.apply(ops.SOFTMAX_XENT_BACKPROP, (z, y))), (In((3, 4), "wide"), In((3, 4)))),
    Case("softmax_xent", "softmax_xent", lambda y, z: ops.softmax_cross_entropy_with_logits(ops.softmax(y), z),
         (In((3, 4)), In((3, 4), "wide"))),
    # labels [[1, 1, 2], [3, 0, 0]] of lengths 3 and 1 (a repeat, padding), over 6 and 4 of 6 frames; TensorFlow's
    # gradient is a constant to a tape (no second derivative)
    Case("ctc_loss", "ctc_loss",
         lambda z: ops.ctc_loss(z, Tensor(np.array([[1, 1, 2], [3, 0, 0]], np.int32)), Tensor(np.array([3, 1])),
                                Tensor(np.array([6, 4]))), (In((6, 2, 4)),), second=False),
    # the CTCLoss kernel (float32 inside: a coarser difference step), the blank the last class
    Case("ctc_sparse_loss", "ctc_sparse_loss",
         lambda z: ops.ctc_sparse_loss(z, Tensor(np.array([5, 3])), ((0, 0, 2), (1,))),
         (In((5, 2, 4), dtype=F32),), second=False, eps=1e-2, tol=(2e-3, 2e-4)),
    Case("sigmoid_xent", "log1p", lambda z, x: ops.sigmoid_cross_entropy_with_logits(z, x),
         (In((3, 4), ("uniform", 0.0, 1.0)), In((3, 4), "nonzero"))),
    Case("batch_normalization", "rsqrt", lambda x, m, v, o, s: ops.batch_normalization(x, m, v, o, s, 1e-3),
         (In((2, 3)), In((3,)), In((3,), "positive"), In((3,)), In((3,)))),
    Case("bias_add", "bias_add", lambda x, b: ops.sin(ops.bias_add(x, b)), (In((2, 3)), In((3,)))),
    Case("bias_add_4d", "bias_add", lambda x, b: ops.sin(ops.bias_add(x, b)), (In((2, 2, 1, 3)), In((3,)))),
    Case("bias_add_grad", "bias_add_grad", lambda g: ops.sin(ops.apply(ops.BIAS_ADD_GRAD, (ops.sin(g),))),
         (In((4, 2, 3)),)),
    Case("cumulative_logsumexp", "cumulative_logsumexp", lambda x: ops.sin(ops.cumulative_logsumexp(x, 1)),
         (In((2, 4)),)),
    Case("cumulative_logsumexp_reverse", "cumulative_logsumexp",
         lambda x: ops.sin(ops.cumulative_logsumexp(x, 0, reverse=True)), (In((3, 2)),)),
    Case("add_n", "add_n", lambda a, b, c: ops.sin(ops.add_n([a, ops.mul(b, b), c, a])),
         (In((2, 3)), In((2, 3)), In((2, 3)))),
    Case("sigmoid_grad", "sigmoid_grad", lambda y, g: ops.sin(ops.sigmoid_grad(ops.sigmoid(y), g)),
         (In((3, 3), "wide"), In((3, 3)))),
    Case("tanh_grad", "tanh_grad", lambda y, g: ops.sin(ops.tanh_grad(ops.tanh(y), g)),
         (In((3, 3)), In((3, 3)))),
    Case("sqrt_grad", "sqrt_grad", lambda y, g: ops.sin(ops.sqrt_grad(ops.sqrt(y), g)),
         (In((3, 3), "positive"), In((3, 3)))),
    Case("conv2d_valid", "conv_product", lambda x, f: ops.conv2d(x, f, (1, 1), "VALID"), (In((1, 4, 4, 2)), In((3, 3, 2, 2)))),
    Case("conv2d_same_strided", "windows", lambda x, f: ops.sin(ops.conv2d(x, f, (2, 2), "SAME")),
         (In((2, 5, 4, 1)), In((3, 2, 1, 2)))),
    Case("conv2d_dilated", "conv_product", lambda x, f: ops.conv2d(x, f, (1, 1), "SAME", (2, 2)),
         (In((1, 5, 5, 1)), In((2, 2, 1, 1)))),
    Case("conv1d_same", "conv_product", lambda x, f: ops.conv1d(x, f, 2, "SAME"), (In((2, 5, 2)), In((3, 2, 3)))),
    # (float32, stride 1, SAME: the input's gradient as TensorFlow sums it, the kernel's by its threads' plan)
    Case("conv2d_same_float32", "conv_product", lambda x, f: ops.cast(ops.conv2d(x, f, (1, 1), "SAME"), F64),
         (In((2, 4, 5, 2), "grid", F32), In((3, 2, 2, 3), "grid", F32)), grid=True, eps=2.0 ** -10, jvp=False),
    Case("conv2d_same_dilated_float32", "conv_product",
         lambda x, f: ops.cast(ops.conv2d(x, f, (1, 1), "SAME", (2, 1)), F64),
         (In((3, 5, 4, 1), "grid", F32), In((2, 3, 1, 2), "grid", F32)), grid=True, eps=2.0 ** -10, jvp=False),
    Case("max_pool2d_same", "max_pool", lambda x: ops.sin(ops.max_pool2d(x, (2, 2), (2, 2), "SAME")),
         (In((1, 3, 5, 2), "distinct"),)),
    Case("max_pool2d_overlapping", "max_pool", lambda x: ops.sin(ops.max_pool2d(x, (3, 2), (1, 2), "SAME")),
         (In((2, 5, 6, 2), "distinct"),)),
    # (no gradient for the pooled input: the first maxima move only where they tie)
    Case("max_pool_grad", "max_pool_grad",
         lambda g: ops.sin(ops.apply(ops.MAX_POOL_GRAD, (_POOLED, ops.sin(g)), **_POOL_GEOMETRY)),
         (In((1, 5, 3, 2)),)),
    Case("max_pool_gather", "max_pool_gather",
         lambda t: ops.sin(ops.apply(ops.MAX_POOL_GATHER, (_POOLED, ops.sin(t)), **_POOL_GEOMETRY)),
         (In((1, 5, 6, 2)),)),
    Case("avg_pool2d_same", "div", lambda x: ops.sin(ops.avg_pool2d(x, (3, 3), (1, 2), "SAME")),
         (In((1, 4, 4, 2)),)),
    Case("windows_overlapping", "windows", lambda x: ops.sin(ops.windows(x, (3, 2), (1, 2), (1, 1))),
         (In((2, 5, 6, 2)),)),
    Case("windows_dilated", "windows", lambda x: ops.sin(ops.windows(x, (2, 2), (2, 1), (2, 3))),
         (In((1, 6, 7, 3)),)),
    # (two images of four windows, on one thread: the kernel's gradient as one chain)
    Case("conv_filter_grad", "conv_filter_grad",
         lambda rows, g: ops.sin(ops.apply(ops.CONV_FILTER_GRAD, (rows, ops.sin(g)), plan=(((0, 2),), 4, None))),
         (In((8, 6)), In((8, 3)))),
    Case("windows_grad", "windows_grad",
         lambda g: ops.sin(ops.windows_grad(ops.sin(g), (1, 5, 6, 1), (3, 2), (1, 2), (1, 1))),
         (In((1, 3, 3, 3, 2, 1)),)),
]



CASES += LINALG_CASES

# Differentiable ops with no row of their own, and why. (The coverage test fails on a
# differentiable op that is in neither, and on an exclusion that is stale.)
EXCLUDED: dict[str, str] = {
    "adjust_hue": "TensorFlow registers no gradient for AdjustHue: its backward pass is an error",
    "adjust_saturation": "TensorFlow registers no gradient for AdjustSaturation: its backward pass is an error",
    "projective_transform": "TensorFlow registers no gradient for ImageProjectiveTransformV3: its backward pass is "
                            "an error",
    "rgb_to_hsv": "its gradient is TensorFlow's formula (image_grad.py), checked against TensorFlow's values by a "
                  "recorded program (tf_programs_round_m.json), whose hue terms are not the numeric derivative",
    "lstsq_complete_orthogonal": "TensorFlow defines no gradient for MatrixSolveLs with fast=False",
    "fake_quant": "its gradient is TensorFlow's straight-through one (the rounding is passed through), not the numeric "
                  "derivative of its steps: checked against TensorFlow's bits by a recorded program "
                  "(tf_programs_patches_quantization.json)",
    "quantize_dequantize": "its gradient is TensorFlow's straight-through one (QuantizeAndDequantizeV2's whole, V4's "
                           "within the given range), not the numeric derivative of its steps: checked against "
                           "TensorFlow's by a recorded program (tf_programs_patches_quantization.json)",
    "lu": "TensorFlow's gradient of Lu (linalg_grad.py) is not written yet: asking for it is a GradientError",
    "igamma_grad_a": "TensorFlow registers no gradient for IgammaGradA (igamma's gradient in a): its backward pass is "
                     "an error, test_igamma_has_no_second_derivative_in_a",
}

CASE_IDS = [c.id for c in CASES]
assert len(set(CASE_IDS)) == len(CASE_IDS), "duplicate row ids"


# ---------------------------------------------------------------- machinery

_tape = open_tape


def _weight(rng, shape, dtype, grid):
    w = rng.normal(size=shape)
    if grid:
        w = np.round(w * 16) / 16
    return Tensor(np.asarray(w, dtype=dtype))


def _objective(case, tensors, w):
    out = case.fn(*tensors)
    return ops.reduce_sum(ops.mul(out, w)), out


def _float_idx(case):
    return [i for i, s in enumerate(case.inputs) if np.dtype(s.dtype).kind == "f"]


def _output_info(case, arrays):
    out = case.fn(*[Tensor(a) for a in arrays])
    return out.shape, out.dtype


def _first(case, arrays, w):
    """Gradients of sum(op * w) w.r.t. the float inputs, straight from Tape.backward."""
    xs = [Tensor(a) for a in arrays]
    with _tape(xs) as t:
        y, _ = _objective(case, xs, w)
    ids = [xs[i].id for i in _float_idx(case)]
    grads = backward(t, [y], [ops.ones_like(y)], ids)
    return [grads.get(i) for i in ids]


def _value(case, arrays, w) -> float:
    assert not current().tapes
    y, _ = _objective(case, [Tensor(a) for a in arrays], w)
    return float(y.value)


def _fd_gradient(case, arrays, w, i):
    eps = case.eps
    base = arrays[i]
    g = np.zeros(base.shape, dtype=F64)
    for j in np.ndindex(base.shape):
        plus, minus = base.copy(), base.copy()
        plus[j] += eps
        minus[j] -= eps
        args_p = list(arrays)
        args_p[i] = plus
        args_m = list(arrays)
        args_m[i] = minus
        g[j] = (_value(case, args_p, w) - _value(case, args_m, w)) / (2 * eps)
    return g


def _close(actual, expected, case, what):
    rtol, atol = case.tol
    np.testing.assert_allclose(np.asarray(actual, dtype=F64), expected, rtol=rtol, atol=atol,
                               err_msg=f"{case.id}: {what}")


# ------------------------------------------------------------- the checks

@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_first_order(case, backend):
    arrays, rng = case.sample()
    shape, dtype = _output_info(case, arrays)
    w = _weight(rng, shape, dtype, case.grid)
    grads = _first(case, arrays, w)
    for i, g in zip(_float_idx(case), grads):
        assert g is not None, f"{case.id}: no gradient for input {i}"
        assert g.shape == arrays[i].shape, f"{case.id}: gradient {g.shape} for input {i} of shape {arrays[i].shape}"
        assert g.dtype == arrays[i].dtype, f"{case.id}: gradient dtype {g.dtype} for a {arrays[i].dtype} input"
        _close(g.value, _fd_gradient(case, arrays, w, i), case, f"d/d input {i}")


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_first_order_via_gradient_api(case, backend):
    """tapecli.autodiff.gradients.gradient agrees with the raw backward pass (and so with the FD above)."""
    arrays, rng = case.sample()
    shape, dtype = _output_info(case, arrays)
    w = _weight(rng, shape, dtype, case.grid)
    xs = [Tensor(a) for a in arrays]
    with _tape(xs) as t:
        y, _ = _objective(case, xs, w)
    fi = _float_idx(case)
    _, values, whys = gradient(t, y, [xs[i] for i in fi])
    raw = _first(case, arrays, w)
    for g, r, why in zip(values, raw, whys):
        assert g is not None, why
        np.testing.assert_array_equal(g.value, r.value)


SECOND = [c for c in CASES if c.second]


@pytest.mark.parametrize("case", SECOND, ids=[c.id for c in SECOND])
def test_second_order(case, backend):
    arrays, rng = case.sample()
    shape, dtype = _output_info(case, arrays)
    w = _weight(rng, shape, dtype, case.grid)
    fi = _float_idx(case)
    vs = [rng.normal(size=arrays[i].shape) for i in fi]
    if case.grid:
        vs = [np.round(v * 16) / 16 for v in vs]
    vs = [np.asarray(v, dtype=arrays[i].dtype) for v, i in zip(vs, fi)]

    xs = [Tensor(a) for a in arrays]
    with _tape(xs, "outer") as outer:
        with _tape(xs, "inner") as inner:
            y, _ = _objective(case, xs, w)
        first, _, _ = gradient(inner, y, [xs[i] for i in fi])
        terms = [ops.reduce_sum(ops.mul(g, Tensor(v))) for g, v in zip(first, vs) if g is not None]
        s = terms[0]
        for term in terms[1:]:
            s = ops.add(s, term)
    second, _, _ = gradient(outer, s, [xs[i] for i in fi])

    # Hessian-vector product by central differences of the (tape) first gradient along v.
    eps2 = case.eps if case.grid else EPS2
    plus = list(arrays)
    minus = list(arrays)
    for i, v in zip(fi, vs):
        plus[i] = arrays[i] + eps2 * v
        minus[i] = arrays[i] - eps2 * v
    g_plus, g_minus = _first(case, plus, w), _first(case, minus, w)
    for k, (i, g2) in enumerate(zip(fi, second)):
        expected = (g_plus[k].value.astype(F64) - g_minus[k].value.astype(F64)) / (2 * eps2)
        if case.zero_second:
            assert g2 is not None, f"{case.id}: the second derivative must be zeros, not None"
        if g2 is None:
            actual = np.zeros(arrays[i].shape)
        else:
            assert g2.shape == arrays[i].shape, f"{case.id}: second-order gradient shape {g2.shape}"
            actual = g2.value
        _close(actual, expected, case, f"second order, input {i}")
        if case.zero_second:
            np.testing.assert_array_equal(actual, 0.0)


def _nth_gradient(case, arrays, w, v, order):
    """The gradient of D^(order-1) f [v, ..., v] (f = sum(op * w), one float input), by
    ``order`` nested tapes; order 1 is the plain gradient."""
    x, vt = Tensor(arrays[0]), Tensor(v)
    tapes = []
    try:
        for k in range(order):              # outermost first
            tapes.append(Tape(f"t{k}", persistent=True))
            tapes[-1].open = True
            current().tapes.append(tapes[-1])
            tapes[-1].watch_tensor(x, None, None)
        y, _ = _objective(case, [x], w)
        while tapes:                        # close the innermost tape, then differentiate on it
            tape = tapes.pop()
            current().tapes.remove(tape)
            tape.open = False
            _, (g,), _ = gradient(tape, y, [x])
            if g is None:
                return np.zeros(x.shape)
            y = ops.reduce_sum(ops.mul(g, vt)) if tapes else g
    finally:
        for tape in tapes:
            current().tapes.remove(tape)
    return y.value


THIRD = [c for c in CASES if c.id in ("prod_axis0", "tanh", "sigmoid",
                                       "log_softmax_last", "softmax_3d_axis1", "logsumexp_axes_0_2", "gelu_exact",
                                       "gelu_tanh", "rsqrt", "sin_of_relu", "sin_of_getitem_int_array_repeats")]


@pytest.mark.parametrize("case", THIRD, ids=[c.id for c in THIRD])
def test_third_order(case, backend):
    """D^3 f [v, v, .] against central differences of the (tape) D^2 f [v, .] along v."""
    arrays, rng = case.sample()
    shape, dtype = _output_info(case, arrays)
    w = _weight(rng, shape, dtype, False)
    v = rng.normal(size=arrays[0].shape)
    third = _nth_gradient(case, arrays, w, v, 3)
    eps = 1e-4
    plus = _nth_gradient(case, [arrays[0] + eps * v], w, v, 2)
    minus = _nth_gradient(case, [arrays[0] - eps * v], w, v, 2)
    np.testing.assert_allclose(third, (plus - minus) / (2 * eps), rtol=1e-5, atol=1e-6, err_msg=case.id)


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_float32_gradients_stay_float32(case, backend):
    """With float32 inputs the gradient rules stay in float32 (no promotion by constants)
    and agree with the float64 gradients to float32 accuracy."""
    arrays, rng = case.sample()
    shape, dtype = _output_info(case, arrays)
    w64 = np.round(rng.normal(size=shape) * 16) / 16
    fi = _float_idx(case)
    arrays32 = [a.astype(F32) if i in fi else a for i, a in enumerate(arrays)]
    out32 = case.fn(*[Tensor(a) for a in arrays32])
    g32 = _first(case, arrays32, Tensor(w64.astype(out32.dtype)))
    g64 = _first(case, [a.astype(F64) if i in fi else a for i, a in enumerate(arrays)], Tensor(w64.astype(dtype)))
    for i, a, b in zip(fi, g32, g64):
        assert a.dtype == F32, f"{case.id}: a float32 input got a {a.dtype} gradient"
        np.testing.assert_allclose(a.value, b.value, rtol=2e-3, atol=2e-4, err_msg=f"{case.id}: input {i}")


JVP = [c for c in CASES if ops.OPS[c.op].jvp is not None and c.jvp]


def _last_record(case, tape):
    recs = [r for r in tape.records if r.op is ops.OPS[case.op]]
    assert recs, f"{case.id}: {case.op} was not recorded"
    return recs[-1]


@pytest.mark.parametrize("case", JVP, ids=[c.id for c in JVP])
def test_jvp(case, backend):
    arrays, rng = case.sample()
    xs = [Tensor(a) for a in arrays]
    with _tape(xs) as t:
        case.fn(*xs)
    rec = _last_record(case, t)
    op = rec.op
    present = [k for k, x in enumerate(rec.inputs) if is_float(x.dtype) and x.id in t.watched_ids]
    tangents = {k: rng.normal(size=rec.inputs[k].shape).astype(rec.inputs[k].dtype) for k in present}
    w = Tensor(rng.normal(size=rec.output.shape).astype(rec.output.dtype))
    vjps = op.vjp(rec, w)
    # every tangent, and (for ops of several inputs) each tangent alone
    subsets = [present] + ([[k] for k in present] if len(present) > 1 else [])
    for subset in subsets:
        ts = [Tensor(tangents[k]) if k in subset else None for k in range(len(rec.inputs))]
        jv = op.jvp(rec, ts)
        if jv is None:      # "no tangent": the output does not move (checked against FD below)
            jv = Tensor(np.zeros(rec.output.shape, dtype=rec.output.dtype))
        assert jv.shape == rec.output.shape, f"{case.id}: jvp shape {jv.shape}, output {rec.output.shape}"
        # against finite differences of the op itself
        plus = [Tensor(x.value + EPS * ts[k].value) if ts[k] is not None else x for k, x in enumerate(rec.inputs)]
        minus = [Tensor(x.value - EPS * ts[k].value) if ts[k] is not None else x for k, x in enumerate(rec.inputs)]
        fd = (ops.apply(op, plus, **rec.attrs).value - ops.apply(op, minus, **rec.attrs).value) / (2 * EPS)
        _close(jv.value, fd, case, f"jvp along inputs {subset}")
        # against the gradient rule: <w, jvp(t)> == sum_k <vjp_k(w), t_k>
        lhs = float(np.sum(w.value * jv.value))
        rhs = sum(float(np.sum(vjps[k].value * tangents[k])) for k in subset if vjps[k] is not None)
        assert math.isclose(lhs, rhs, rel_tol=1e-9, abs_tol=1e-9), f"{case.id}: <w, jvp> {lhs} != <vjp, t> {rhs}"


@fast_paths
@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_a_repeated_backward_pass_runs_as_a_plan_with_the_ordinary_bits(case, monkeypatch):
    """Six passes of one structure (the inputs scaled a little each time): from the fourth on, the pass runs
    as its plan (autodiff/replay.py), and every pass gives the bits of the ordinary path."""
    monkeypatch.setenv("TAPECLI_BACKEND", "numpy")

    def six_passes(max_plans):
        monkeypatch.setattr(replay, "MAX_PLANS", max_plans)
        with run_context(float_dtype=np.float64):
            arrays, rng = case.sample()
            shape, dtype = _output_info(case, arrays)
            w = _weight(rng, shape, dtype, case.grid)
            passes = []
            for step in range(6):
                scaled = [a * a.dtype.type(1 + 1e-3 * step) if a.dtype.kind == "f" else a for a in arrays]
                passes.append([None if g is None else (g.dtype, np.asarray(g.value).tobytes())
                               for g in _first(case, scaled, w)])
            return passes, current().replayed
    planned, replayed = six_passes(64)
    assert planned == six_passes(0)[0]
    assert replayed == (0 if case.id in LEFT_TO_THE_ORDINARY_PATH else 3)


# Rows whose plan is refused at its check: the ordinary path's gradient is a 0-d array where the traced
# kernels give a NumPy scalar (the same number in another container), so the results are not the same
LEFT_TO_THE_ORDINARY_PATH = {"sum_scalar", "silu_scalar"}


# ---------------------------------------------------------------- coverage

def test_every_differentiable_op_has_a_row():
    covered = {c.op for c in CASES}
    differentiable = {name for name, op in ops.OPS.items() if op.differentiable}
    missing = sorted(differentiable - covered - set(EXCLUDED))
    assert not missing, f"differentiable ops with no row in CASES (add one, or an EXCLUDED reason): {missing}"
    stale = sorted(name for name in EXCLUDED if name not in differentiable or name in covered)
    assert not stale, f"EXCLUDED entries that are not differentiable ops or do have a row: {stale}"
    unknown = sorted(covered - set(ops.OPS))
    assert not unknown, f"rows naming ops that are not in OPS: {unknown}"


# Differentiable ops without a forward-mode rule, and why (a jacobian through them runs in reverse mode).
NO_JVP = {"cast": "the tangent of a cast would need the cast's dtype rule for tangents; reverse mode serves",
          "cumulative_logsumexp": "TensorFlow's own rule is reverse mode's (a scan of the gradient's logs); it serves",
          **{name: "TensorFlow registers no gradient for it, so no tangent either" for name in (
              "adjust_hue", "adjust_saturation", "projective_transform")},
          "rgb_to_hsv": "TensorFlow's gradient of it is a formula for reverse mode alone; reverse mode serves",
          "lstsq_complete_orthogonal": "TensorFlow defines no gradient for MatrixSolveLs with fast=False",
          "lu": "no gradient of Lu yet (reverse mode refuses it too)",
          "quantize_dequantize": "its gradient is a straight-through rule, not a derivative a tangent would be "
                                 "checked against; reverse mode serves",
          "fake_quant": "its gradient is a straight-through rule, not the derivative a tangent would be checked "
                        "against; reverse mode serves",
          "ctc_sparse_loss": "TensorFlow's forward mode through CTCLoss meets its gradient's prevent_gradient; reverse "
                             "mode serves",
          "igamma_grad_a": "TensorFlow registers no gradient for IgammaGradA, so no tangent either"}


# Ops whose forward-mode rule is another op's, checked under that op's name: oneDNN's fused activations (float32
# kernels, whose finite differences lose their bits) take their Eigen ops' formulas.
SAME_JVP = {f"onednn_{name}": name for name in FUSED}


def test_every_differentiable_op_has_a_forward_mode_rule():
    missing = sorted(name for name, op in ops.OPS.items() if op.differentiable and op.jvp is None
                     and name not in NO_JVP)
    assert not missing, f"differentiable ops without a jvp (add one, or a NO_JVP reason): {missing}"
    covered = {c.op for c in JVP}
    untested = sorted(name for name, op in ops.OPS.items() if op.jvp is not None and name not in covered
                      and name not in SAME_JVP)
    assert not untested, f"ops whose jvp no row checks: {untested}"
    for name, same in SAME_JVP.items():
        assert not ops.OPS[name].differentiable or ops.OPS[name].grads is ops.OPS[same].grads, name


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_row_records_its_op(case):
    """Each row really runs the op it claims to cover (under a tape, so it is recorded)."""
    arrays, _ = case.sample()
    xs = [Tensor(a) for a in arrays]
    with _tape(xs) as t:
        case.fn(*xs)
    _last_record(case, t)


def test_non_differentiable_ops_are_not_recorded():
    x = Tensor(np.array([0.5, -1.5, 2.0]))
    with _tape([x]) as t:
        for f in (ops.floor, ops.ceil, ops.round_):     # (sign is recorded: TensorFlow's gradient is zeros)
            f(x)
        ops.cast(x, np.int32)
        ops.floordiv(x, 2.0)
        ops.greater(x, 0.0)
    assert t.records == []


# ------------------------------------------------------- kink conventions

def _grad_of_sum(fn, *arrays):
    xs = [Tensor(np.asarray(a, dtype=F64)) for a in arrays]
    with _tape(xs) as t:
        y = ops.reduce_sum(fn(*xs))
    _, values, _ = gradient(t, y, xs)
    return [None if g is None else g.value for g in values]


KINKS = [
    ("relu_at_0", ops.relu, [[-1.0, 0.0, 2.0]], [[0.0, 0.0, 1.0]]),
    ("abs_at_0", ops.abs_, [[-1.0, 0.0, 2.0]], [[-1.0, 0.0, 1.0]]),
    ("leaky_relu_at_0", ops.leaky_relu, [[-1.0, 0.0, 2.0]], [[0.2, 0.2, 1.0]]),
    ("leaky_relu_alpha_at_0", lambda x: ops.leaky_relu(x, alpha=0.3), [[-1.0, 0.0, 2.0]], [[0.3, 0.3, 1.0]]),
    ("maximum_tie", ops.maximum, [[1.0, 2.0, 3.0], [1.0, 0.0, 3.0]], [[1.0, 1.0, 1.0], [0.0, 0.0, 0.0]]),
    ("minimum_tie", ops.minimum, [[1.0, 2.0, 3.0], [1.0, 0.0, 3.0]], [[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]]),
    ("clip_at_bounds", ops.clip, [[-1.0, -0.5, 0.0, 0.5, 1.0], [-0.5] * 5, [0.5] * 5],
     [[0.0, 1.0, 1.0, 1.0, 0.0], [1.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 1.0]]),
    ("reduce_max_ties", ops.reduce_max, [[1.0, 3.0, 3.0, 2.0]], [[0.0, 0.5, 0.5, 0.0]]),
    ("reduce_min_ties", ops.reduce_min, [[1.0, 3.0, 1.0, 1.0]], [[1 / 3, 0.0, 1 / 3, 1 / 3]]),
    ("reduce_max_ties_axis", lambda x: ops.reduce_max(x, axis=1),
     [[[2.0, 2.0, 1.0], [0.0, 5.0, 5.0]]], [[[0.5, 0.5, 0.0], [0.0, 0.5, 0.5]]]),
    ("reduce_max_all_tied_keepdims", lambda x: ops.reduce_max(x, axis=0, keepdims=True),
     [[[4.0, 1.0], [4.0, 2.0], [4.0, 2.0]]], [[[1 / 3, 0.0], [1 / 3, 0.5], [1 / 3, 0.5]]]),
    ("prod_one_zero", ops.reduce_prod, [[2.0, 0.0, 3.0]], [[0.0, 6.0, 0.0]]),
    ("prod_two_zeros", ops.reduce_prod, [[2.0, 0.0, 3.0, 0.0]], [[0.0, 0.0, 0.0, 0.0]]),
]


@pytest.mark.parametrize("name,fn,inputs,expected", KINKS, ids=[k[0] for k in KINKS])
def test_kink_conventions(name, fn, inputs, expected, backend):
    grads = _grad_of_sum(fn, *inputs)
    for g, e in zip(grads, expected):
        assert g is not None
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=0)


# TensorFlow 2.21's Hessians of sum(reduce_prod(x, axis=1)) (a tape's jacobian of its gradient): its _ProdGrad is a
# product of exclusive cumulative products, whose own gradient (Cumprod's) divides by x with div_no_nan, so the
# rows of zero entries are zeros where the true Hessian is not (and it is not symmetric).
PROD_HESSIANS_AT_ZEROS = [
    ([2.0, 0.0, 3.0], [[0.0, 0.0, 0.0], [3.0, 0.0, 2.0], [0.0, 0.0, 0.0]]),
    ([2.0, 0.0, 3.0, 0.0], [[0.0] * 4] * 4),
    ([0.0, 0.0, 0.0, 5.0], [[0.0] * 4] * 4),
]


@pytest.mark.parametrize("row,hessian", PROD_HESSIANS_AT_ZEROS, ids=["one_zero", "two_zeros", "three_zeros"])
def test_prod_hessian_at_zeros(row, hessian, backend):
    x = Tensor(np.array([row]))
    rows = []
    for k in range(len(row)):
        with _tape([x], "outer") as outer:
            with _tape([x], "inner") as inner:
                y = ops.reduce_sum(ops.reduce_prod(x, axis=1))
            g, _, _ = gradient(inner, y, x)
            picked = ops.reduce_sum(ops.mul(g, Tensor(np.eye(len(row))[k][None, :])))
        h, _, why = gradient(outer, picked, x)
        assert h is not None, why
        rows.append(h.value[0])
    np.testing.assert_array_equal(np.array(rows), np.array(hessian))


@pytest.mark.parametrize("fn", [ops.relu, ops.abs_, ops.leaky_relu], ids=["relu", "abs", "leaky_relu"])
def test_piecewise_linear_second_derivative_is_zeros(fn, backend):
    """As in TensorFlow: a Tensor of zeros (kink included), not None."""
    x = Tensor(np.array([-1.5, 0.0, 0.7, 2.0]))
    with _tape([x], "outer") as outer:
        with _tape([x], "inner") as inner:
            y = ops.reduce_sum(fn(x))
        g, _, _ = gradient(inner, y, x)
        s = ops.reduce_sum(g)
    g2, _, why = gradient(outer, s, x)
    assert g2 is not None, why
    assert g2.shape == x.shape
    np.testing.assert_array_equal(g2.value, np.zeros(4))


# ------------------------------------------------------- numeric stability

def _sigmoid64(x):
    return np.where(x >= 0, 1 / (1 + np.exp(-np.abs(x))), np.exp(-np.abs(x)) / (1 + np.exp(-np.abs(x))))


def _softmax64(x):
    e = np.exp(x - x.max())
    return e / e.sum()


STABLE_X = np.array([-1000.0, -100.0, -1.0, 0.0, 1.0, 100.0, 1000.0])
STABILITY = [
    # name, fn, x, value(x), d sum(fn(x) * w) / dx given w
    ("sigmoid", ops.sigmoid, STABLE_X, _sigmoid64, lambda x, w: w * _sigmoid64(x) * _sigmoid64(-x)),
    ("softplus", ops.softplus, STABLE_X, lambda x: np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x))),
     lambda x, w: w * _sigmoid64(x)),
    ("logsumexp", ops.reduce_logsumexp, np.array([1000.0, 999.0, -1000.0, 0.0]),
     lambda x: x.max() + np.log(np.sum(np.exp(x - x.max()))), lambda x, w: w * _softmax64(x)),
    ("logsumexp_negative", ops.reduce_logsumexp, np.array([-1000.0, -1001.0, -100.0 - 900.0]),
     lambda x: x.max() + np.log(np.sum(np.exp(x - x.max()))), lambda x, w: w * _softmax64(x)),
    ("softmax", ops.softmax, np.array([1000.0, 999.0, -1000.0, 100.0]), _softmax64,
     lambda x, w: _softmax64(x) * (w - np.sum(w * _softmax64(x)))),
    ("log_softmax", ops.log_softmax, np.array([1000.0, 0.0, -1000.0, -100.0]),
     lambda x: (x - x.max()) - np.log(np.sum(np.exp(x - x.max()))),
     lambda x, w: w - _softmax64(x) * np.sum(w)),
]


@pytest.mark.parametrize("dtype", [F32, F64], ids=["float32", "float64"])
@pytest.mark.parametrize("name,fn,x,value,grad", STABILITY, ids=[s[0] for s in STABILITY])
def test_numeric_stability(name, fn, x, value, grad, dtype, backend):
    xt = Tensor(x.astype(dtype))
    out_shape = np.shape(value(x))
    w_np = np.linspace(0.5, 1.5, int(np.prod(out_shape))).reshape(out_shape)
    w = Tensor(w_np.astype(dtype))
    with _tape([xt]) as t:
        out = fn(xt)
        y = ops.reduce_sum(ops.mul(out, w))
    g, _, _ = gradient(t, y, xt)
    assert out.dtype == dtype and g.dtype == dtype
    assert np.all(np.isfinite(out.value)), f"{name}: {out.value}"
    assert np.all(np.isfinite(g.value)), f"{name}: gradient {g.value}"
    # float32 keeps ~7 digits: exp(x - y) near |x| = 1000 is good to ~1e-4 relative
    rtol = 2e-4 if dtype == F32 else 1e-12
    np.testing.assert_allclose(out.value, value(x), rtol=rtol, atol=1e-30)
    np.testing.assert_allclose(g.value, grad(x, w_np), rtol=rtol, atol=1e-30)


@pytest.mark.parametrize("dtype", [F32, F64], ids=["float32", "float64"])
@pytest.mark.parametrize("fn", [ops.sigmoid, ops.softplus, ops.tanh], ids=["sigmoid", "softplus", "tanh"])
def test_saturating_second_derivative_is_finite(fn, dtype, backend):
    x = Tensor(STABLE_X.astype(dtype))
    with _tape([x], "outer") as outer:
        with _tape([x], "inner") as inner:
            y = ops.reduce_sum(fn(x))
        g, _, _ = gradient(inner, y, x)
        s = ops.reduce_sum(g)
    g2, _, _ = gradient(outer, s, x)
    assert g2 is not None and np.all(np.isfinite(g2.value)), g2


def test_igamma_has_no_second_derivative_in_a_and_betainc_no_gradient_in_a_or_b():
    """TensorFlow registers no gradient for IgammaGradA (a LookupError through it) and gives None for betainc's a
    and b."""
    from tapecli.errors import GradientError
    a, x = Tensor(np.array([1.5, 2.0])), Tensor(np.array([0.5, 3.0]))
    with _tape([a, x]) as outer:
        with _tape([a, x]) as inner:
            y = ops.reduce_sum(ops.igamma(a, x))
        (ga,), _, _ = gradient(inner, y, [a])
        s = ops.reduce_sum(ga)
    with pytest.raises(GradientError, match="igamma_grad_a"):
        gradient(outer, s, [a])
    with _tape([a, x]) as t:
        y = ops.reduce_sum(ops.betainc(a, x, Tensor(np.array([0.3, 0.6]))))
    _, values, _ = gradient(t, y, [a, x])
    assert values == [None, None]
