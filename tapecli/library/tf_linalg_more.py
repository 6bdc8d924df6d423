"""More of tf.linalg as compositions of the op table's ops, written as TensorFlow writes them (linalg_impl.py):
cholesky_solve, lstsq (the fast Cholesky path), pinv (through the SVD), normalize, matrix_rank, set_diag,
cross, tensor_diag and tensor_diag_part; their gradients are the compositions'."""
from __future__ import annotations

import numpy as np

from tapecli import ops
from tapecli.errors import ShapeError, TdfValueError
from tapecli.library.core import norm, to_float, to_int, truth
from tapecli.library.tf_linalg import _maybe_adjoint
from tapecli.interpreter.registry import builtin
from tapecli.runtime.values import PythonTuple, Tensor


def _matrices(x, what):
    t = ops.to_tensor(x)
    if t.ndim < 2:
        raise ShapeError(f"{what} needs matrices (rank 2 or more), got shape {list(t.shape)}")
    return ops.materialize(t) if t.weak else t


@builtin()
def cholesky_solve(chol, rhs, name=None):
    """x with (chol chol^T) x = rhs, by two triangular solves."""
    chol = _matrices(chol, "cholesky_solve")
    y = ops.triangular_solve(chol, rhs, True, False)
    return ops.triangular_solve(chol, y, True, True)


@builtin()
def lstsq(matrix, rhs, l2_regularizer=0.0, fast=True, name=None):
    """The least-squares solution by the normal equations (TensorFlow's fast path): (A^T A + l2 I)^-1 A^T b for
    a tall A, A^T (A A^T + l2 I)^-1 b for a wide one."""
    if not truth(fast):
        raise TdfValueError("tf.linalg.lstsq: fast=False (the complete orthogonal decomposition) is not supported")
    a, b = _matrices(matrix, "lstsq"), _matrices(rhs, "lstsq")
    m, n = a.shape[-2:]
    at = _maybe_adjoint(a, True)
    l2 = to_float(l2_regularizer, "l2_regularizer")
    if m >= n:
        gram = ops.matmul(at, a)
        if l2:
            gram = ops.add(gram, ops.mul(l2, Tensor(np.eye(n, dtype=a.dtype))))
        return cholesky_solve(ops.cholesky(gram), ops.matmul(at, b))
    gram = ops.matmul(a, at)
    if l2:
        gram = ops.add(gram, ops.mul(l2, Tensor(np.eye(m, dtype=a.dtype))))
    return ops.matmul(at, cholesky_solve(ops.cholesky(gram), b))


@builtin()
def pinv(a, rcond=None, validate_args=False, name=None):
    """The Moore-Penrose pseudo-inverse through the SVD; singular values at most rcond * max(s) count as 0
    (rcond defaults to 10 * max(rows, cols) * eps)."""
    a = _matrices(a, "pinv")
    m, n = a.shape[-2:]
    cut = 10.0 * max(m, n) * float(np.finfo(a.dtype).eps) if rcond is None else to_float(rcond, "rcond")
    s, u, v = ops.svd(a, True)
    cutoff = ops.mul(cut, ops.reduce_max(s, -1, True))
    big = ops.greater(s, cutoff)
    inv_s = ops.where(big, ops.reciprocal(ops.where(big, s, ops.ones_like(s))), ops.zeros_like(s))
    return ops.matmul(ops.mul(v, ops.reshape(inv_s, inv_s.shape[:-1] + (1, inv_s.shape[-1]))), _maybe_adjoint(u, True))


@builtin()
def normalize(tensor, ord="euclidean", axis=None, name=None):  # noqa: A002
    """[tensor / norm, norm], the norm kept with its reduced axes."""
    n = norm(tensor, axis=axis, keepdims=True, ord=ord)
    return PythonTuple([ops.div(tensor, n), n])


@builtin()
def matrix_rank(a, tol=None, validate_args=False, name=None):
    """The number of singular values above tol (default max(s) * max(rows, cols) * eps), int32."""
    a = _matrices(a, "matrix_rank")
    s = np.asarray(ops.svd(a, False).value)         # counted on the host (a device's values are copied)
    m, n = a.shape[-2:]
    cut = s.max(axis=-1, keepdims=True) * max(m, n) * np.finfo(a.dtype).eps if tol is None else to_float(tol, "tol")
    return Tensor((s > cut).sum(axis=-1).astype(np.int32))


@builtin()
def set_diag(input, diagonal, name="set_diag", k=0, align="RIGHT_LEFT"):  # noqa: A002
    """``input`` with its main diagonal replaced by ``diagonal``."""
    if to_int(k, "k") != 0:
        raise TdfValueError("tf.linalg.set_diag: only the main diagonal (k=0) is supported")
    x = _matrices(input, "set_diag")
    m, n = x.shape[-2:]
    mask = Tensor(np.eye(m, n, dtype=x.dtype))
    d = ops.to_tensor(diagonal)
    spread = ops.reshape(d, d.shape + (1,)) if m <= n else ops.reshape(d, d.shape[:-1] + (1, d.shape[-1]))
    return ops.add(ops.mul(x, ops.sub(1, mask)), ops.mul(spread, mask))


@builtin()
def cross(a, b, name=None):
    """The cross product along the last axis (of size 3)."""
    ta, tb = (ops.materialize(t) if t.weak else t for t in (ops.to_tensor(a), ops.to_tensor(b)))   # (lists: float32)
    if ta.shape[-1:] != (3,) or tb.shape != ta.shape:
        raise ShapeError(f"tf.linalg.cross needs two shapes alike with a last axis of 3, got {list(ta.shape)} and "
                         f"{list(tb.shape)}")
    (a0, a1, a2), (b0, b1, b2) = ([ops.getitem(t, (Ellipsis, i)) for i in range(3)] for t in (ta, tb))
    return ops.stack([ops.sub(ops.mul(a1, b2), ops.mul(a2, b1)), ops.sub(ops.mul(a2, b0), ops.mul(a0, b2)),
                      ops.sub(ops.mul(a0, b1), ops.mul(a1, b0))], -1)


@builtin()
def tensor_diag(diagonal, name=None):
    """A tensor of rank 2k with ``diagonal`` (rank k) on its diagonal."""
    d = ops.to_tensor(diagonal)
    return ops.reshape(ops.diag(ops.reshape(d, (-1,))), d.shape + d.shape)


@builtin()
def tensor_diag_part(input, name=None):  # noqa: A002
    x = ops.to_tensor(input)
    k = x.ndim // 2
    if x.ndim % 2 or x.shape[:k] != x.shape[k:]:
        raise ShapeError(f"tf.linalg.tensor_diag_part needs a shape [d..., d...], got {list(x.shape)}")
    size = int(np.prod(x.shape[:k]))
    return ops.reshape(ops.diag_part(ops.reshape(x, (size, size))), x.shape[:k])
