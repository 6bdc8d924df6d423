"""tf.linalg's tridiagonal ops: TridiagonalSolve and TridiagonalMatMul, TensorFlow's CPU kernels bit for bit
(kernels/tf_tridiagonal.py), each with TensorFlow's gradient (linalg_grad.py: _TridiagonalSolveGrad,
_TridiagonalMatMulGrad) written with recordable ops, and a forward-mode rule. These are the raw ops: the
diagonals in compact form [..., 3, M] for the solve and as three [..., 1, M] rows for the product, the right-hand
sides [..., M, K]; library/tf_linalg.py reads the other forms as TensorFlow's Python wrappers do."""
from __future__ import annotations

import numpy as np

from tapecli.errors import ShapeError, TdfTypeError
from tapecli.kernels import tf_tridiagonal
from tapecli.ops.core import apply, materialize, register, to_tensor
from tapecli.ops.elementwise import add, mul, neg, sub, zeros_like
from tapecli.ops.gathers import pad
from tapecli.ops.reductions import reduce_sum
from tapecli.ops.shape import concat, getitem, reshape, stack
from tapecli.ops.linalg import _swap_last
from tapecli.runtime.values import dtype_name, Tensor


def _float(x, what) -> Tensor:
    t = to_tensor(x)
    t = materialize(t) if t.weak else t
    if t.dtype not in (np.float32, np.float64):
        raise TdfTypeError(f"{what} takes float32 or float64 tensors, got {dtype_name(t.dtype)}")
    return t


# ------------------------------------------------------------------------- the solve

def _zeros(shape, like):
    return Tensor(np.zeros(shape, like.dtype))


def _transposed(diags):
    """_TransposeTridiagonalMatrix: the compact diagonals of the transposed matrices (the subdiagonal moved up to
    be the superdiagonal, the superdiagonal down)."""
    zeros = _zeros(diags.shape[:-2] + (1,), diags)
    superdiag = concat([getitem(diags, (Ellipsis, 2, slice(1, None))), zeros], -1)
    subdiag = concat([zeros, getitem(diags, (Ellipsis, 0, slice(None, -1)))], -1)
    return stack([superdiag, getitem(diags, (Ellipsis, 1, slice(None))), subdiag], -2)


def _three_diagonals_of_product(x, y_tr):
    """_MatmulExtractingThreeDiagonals: the compact diagonals of x @ y_tr^T, each a sum of products over K."""
    zeros = _zeros(x.shape[:-2] + (1, x.shape[-1]), x)
    diag = reduce_sum(mul(x, y_tr), -1)
    superdiag = reduce_sum(mul(x, concat([getitem(y_tr, (Ellipsis, slice(1, None), slice(None))), zeros], -2)), -1)
    subdiag = reduce_sum(mul(x, concat([zeros, getitem(y_tr, (Ellipsis, slice(None, -1), slice(None)))], -2)), -1)
    return stack([superdiag, diag, subdiag], -2)


def _solve_vjp(r, g, needs=None):
    diags, x = r.inputs[0], r.output
    grad_rhs = tridiagonal_solve(_transposed(diags), g, **r.attrs)
    grad_diags = neg(_three_diagonals_of_product(grad_rhs, x)) if needs is None or needs[0] else None
    return grad_diags, grad_rhs


def _solve_jvp(r, ts):
    """x = T^-1 b moves by T^-1 (db - dT x)."""
    diags, x = r.inputs[0], r.output
    rhs = ts[1]
    if ts[0] is not None:
        dt_x = tridiagonal_matmul(*(getitem(ts[0], (Ellipsis, slice(i, i + 1), slice(None))) for i in range(3)), x)
        rhs = neg(dt_x) if rhs is None else sub(rhs, dt_x)
    return tridiagonal_solve(diags, rhs, **r.attrs)


TRIDIAGONAL_SOLVE = register("tridiagonal_solve", numpy=tf_tridiagonal.solve, batchable=False, saves=(0, "out"),
                             vjp=_solve_vjp, jvp=_solve_jvp)


def tridiagonal_solve(diagonals, rhs, partial_pivoting=True, perturb_singular=False) -> Tensor:
    """TridiagonalSolve: x with T x = rhs for the tridiagonal T of each compact ``diagonals`` [..., 3, M] and
    right-hand sides [..., M, K] (one batch shape); NaN for a singular T."""
    d = _float(diagonals, "tridiagonal_solve")
    b = to_tensor(rhs)
    b = materialize(b, d.dtype) if b.weak else b
    if d.ndim < 2 or d.shape[-2] != 3 or b.ndim != d.ndim or b.shape[:-2] != d.shape[:-2] \
            or b.shape[-2] != d.shape[-1]:
        raise ShapeError(f"tridiagonal_solve: diagonals [..., 3, M] and right-hand sides [..., M, K] of one batch "
                         f"shape, got shapes {list(d.shape)} and {list(b.shape)}")
    return apply(TRIDIAGONAL_SOLVE, (d, b), partial_pivoting=bool(partial_pivoting),
                 perturb_singular=bool(perturb_singular))


# ------------------------------------------------------------------------ the product

def _left_shift(x):
    """x's rows moved up one, a zero row last (linalg_grad's _LeftShift)."""
    return pad(getitem(x, (Ellipsis, slice(1, None), slice(None))), [[0, 0]] * (x.ndim - 2) + [[0, 1], [0, 0]])


def _right_shift(x):
    """x's rows moved down one, a zero row first (_RightShift)."""
    return pad(getitem(x, (Ellipsis, slice(None, -1), slice(None))), [[0, 0]] * (x.ndim - 2) + [[1, 0], [0, 0]])


def _matmul_vjp(r, g, needs=None):
    superdiag, maindiag, subdiag, rhs = r.inputs

    def row(x):                 # a sum over the columns, as a [..., 1, M] row
        s = reduce_sum(x, -1)
        return reshape(s, s.shape[:-1] + (1, s.shape[-1]))
    wanted = needs or (True,) * 4
    return (row(mul(_left_shift(rhs), g)) if wanted[0] else None,
            row(mul(rhs, g)) if wanted[1] else None,
            row(mul(_right_shift(rhs), g)) if wanted[2] else None,
            add(add(_right_shift(mul(_swap_last(superdiag), g)), mul(_swap_last(maindiag), g)),
                _left_shift(mul(_swap_last(subdiag), g))) if wanted[3] else None)


def _matmul_jvp(r, ts):
    """The product is linear in the diagonals and in rhs: the tangents' products added."""
    *diagonals, rhs = r.inputs
    total = None
    if any(t is not None for t in ts[:3]):
        total = tridiagonal_matmul(*(zeros_like(d) if t is None else t for d, t in zip(diagonals, ts)), rhs)
    if ts[3] is not None:
        part = tridiagonal_matmul(*diagonals, ts[3])
        total = part if total is None else add(total, part)
    return total


TRIDIAGONAL_MATMUL = register("tridiagonal_matmul", numpy=tf_tridiagonal.matmul, batchable=False, saves=(0, 1, 2, 3),
                              vjp=_matmul_vjp, jvp=_matmul_jvp)


def tridiagonal_matmul(superdiag, maindiag, subdiag, rhs) -> Tensor:
    """TridiagonalMatMul: the tridiagonal matrices of the three diagonals ([..., 1, M] each) times rhs
    [..., M, N]."""
    parts = [_float(x, "tridiagonal_matmul") for x in (superdiag, maindiag, subdiag)]
    b = to_tensor(rhs)
    b = materialize(b, parts[1].dtype) if b.weak else b
    m = b.shape[-2] if b.ndim >= 2 else None
    for part, which in zip(parts, ("superdiagonal", "main diagonal", "subdiagonal")):
        if m is None or part.shape != b.shape[:-2] + (1, m):
            raise ShapeError(f"tridiagonal_matmul: Invalid {which} shape: {list(part.shape)} for right-hand sides "
                             f"of shape {list(b.shape)}")
    return apply(TRIDIAGONAL_MATMUL, (*parts, b))
