"""tf.linalg.qr and tf.linalg.svd: one op per result (q and r; s, u and v), each with TensorFlow's
gradient formula for its own cotangent (the formulas are linear in the cotangents, so the sum over
the results is TensorFlow's gradient), written with recordable ops. Reduced factorizations only
(``full_matrices=False``, TensorFlow's default)."""
from __future__ import annotations

import numpy as np

from tapecli.errors import GradientError, ShapeError, TdfTypeError
from tapecli.kernels import tf_linalg
from tapecli.ops.core import apply, materialize, register, to_tensor
from tapecli.ops.elementwise import add, div, mul, square, sub, where, zeros_like
from tapecli.ops.linalg import matmul
from tapecli.ops.reductions import reduce_sum
from tapecli.ops.shape import reshape
from tapecli.runtime.values import dtype_name, Tensor
from tapecli.ops.gathers import band_part
from tapecli.ops.matrix import _eye_like, _t, triangular_solve
from tapecli.runtime import spelling


def _matrix(x, what) -> Tensor:
    t = to_tensor(x)
    if t.weak:
        t = materialize(t)     # an int literal stays int: TensorFlow refuses it too
    if t.dtype.kind != "f":
        raise TdfTypeError(f"{what} needs a float tensor, got {dtype_name(t.dtype)}", hint=spelling.cast("x", "float32"))
    if t.ndim < 2:
        raise ShapeError(f"{what} needs at least a matrix, got shape {list(t.shape)}")
    return t


# ------------------------------------------------------------------------- QR

def _qr_kernel(part):
    def run(a):
        q, r = tf_linalg.qr(a) or np.linalg.qr(a, mode="reduced")      # (TensorFlow's bits where followed)
        return np.ascontiguousarray(q if part == 0 else r)
    return run


def _right_tri_solve(x, r):
    """x @ inv(r)^T for an upper-triangular r: TensorFlow's _TriangularSolve in QrGrad."""
    return _t(triangular_solve(r, _t(x), lower=False))


def _times_inv(x, r):
    """x @ inv(r) for an upper-triangular r."""
    return _t(triangular_solve(r, _t(x), lower=False, adjoint=True))


def _qr_grad(a, dq, dr):
    """TensorFlow's QrGrad (m >= n); ``dq`` or ``dr`` may be None (zeros)."""
    m, n = a.shape[-2:]
    if m < n:
        raise GradientError(f"the gradient of qr is defined for matrices with at least as many rows as columns, "
                            f"got shape {list(a.shape)}")
    q, r = qr_q(a), qr_r(a)
    dq = zeros_like(q) if dq is None else dq
    dr = zeros_like(r) if dr is None else dr
    qdq = matmul(_t(q), dq)
    qdq_ = sub(qdq, _t(qdq))
    rdr = matmul(r, _t(dr))
    rdr_ = sub(rdr, _t(rdr))
    tril = band_part(add(qdq_, rdr_), -1, 0)
    grad_a = matmul(q, add(dr, _right_tri_solve(tril, r)))
    grad_b = _right_tri_solve(sub(dq, matmul(q, qdq)), r)
    return add(grad_a, grad_b)


def _qr_tangents(a, t):
    """(dQ, dR) along t (m >= n): X = Q^T t R^-1, Omega its skew part from the strict lower
    triangle, dR = (X - Omega) R, dQ = t R^-1 - Q (X - Omega)."""
    m, n = a.shape[-2:]
    if m < n:
        raise GradientError(f"the forward-mode rule of qr is defined for matrices with at least as many rows as "
                            f"columns, got shape {list(a.shape)}")
    q, r = qr_q(a), qr_r(a)
    y = _times_inv(t, r)
    x = matmul(_t(q), y)
    low = sub(band_part(x, -1, 0), mul(x, _eye_like(x)))
    upper = sub(x, sub(low, _t(low)))
    return sub(y, matmul(q, upper)), matmul(upper, r)


QR_Q = register("qr_q", weighed=True, numpy=_qr_kernel(0), batchable=False, saves=(0,),
                vjp=lambda r, g: (_qr_grad(r.inputs[0], g, None),),
                jvp=lambda r, ts: _qr_tangents(r.inputs[0], ts[0])[0])
QR_R = register("qr_r", weighed=True, numpy=_qr_kernel(1), batchable=False, saves=(0,),
                vjp=lambda r, g: (_qr_grad(r.inputs[0], None, g),),
                jvp=lambda r, ts: _qr_tangents(r.inputs[0], ts[0])[1])


def qr_q(x): return apply(QR_Q, (_matrix(x, "qr"),))
def qr_r(x): return apply(QR_R, (_matrix(x, "qr"),))


def qr(x) -> list:
    return [qr_q(x), qr_r(x)]


# ------------------------------------------------------------------------ SVD

def _svd_kernel(part):
    def run(a):
        u, s, vh = np.linalg.svd(a, full_matrices=False)
        return np.ascontiguousarray((s, u, np.swapaxes(vh, -1, -2))[part])
    return run


def _diag(v):
    return mul(reshape(v, v.shape + (1,)), Tensor(np.eye(v.shape[-1], dtype=v.dtype)))


def _svd_grad(a, gs, gu, gv):
    """TensorFlow's SvdGrad (reduced, real). With more rows than columns it works on the transpose
    (u and v swap roles), so that m <= n below; the factors are the forward's own (no new signs)."""
    s, u, v = svd_s(a), svd_u(a), svd_v(a)
    m, n = a.shape[-2:]
    if m > n:
        return _t(_svd_core(s, v, u, gs, gv, gu, n, m))
    return _svd_core(s, u, v, gs, gu, gv, m, n)


def _svd_core(s, u, v, gs, gu, gv, m, n):
    s_mat = _diag(s)
    if gu is None and gv is None:
        return matmul(u, matmul(_diag(gs), _t(v)))
    gs = zeros_like(s) if gs is None else gs
    gu = zeros_like(u) if gu is None else gu
    gv = zeros_like(v) if gv is None else gv
    s2 = square(s)
    diff = sub(reshape(s2, s2.shape[:-1] + (1, s2.shape[-1])), reshape(s2, s2.shape + (1,)))   # s_j^2 - s_i^2
    eye = _eye_like(diff)
    f = where(Tensor(eye.value > 0), zeros_like(diff), div(1.0, add(diff, eye)))
    f_u = mul(f, matmul(_t(u), gu))
    f_v = mul(f, matmul(_t(v), gv))
    term1_nouv = add(add(_diag(gs), matmul(add(f_u, _t(f_u)), s_mat)), matmul(s_mat, add(f_v, _t(f_v))))
    term1 = matmul(u, matmul(term1_nouv, _t(v)))
    if m == n:
        return term1
    gvt = _t(gv)
    term2_nous = sub(gvt, matmul(matmul(gvt, v), _t(v)))
    return add(term1, matmul(matmul(u, _diag(div(1.0, s))), term2_nous))


def _svd_s_jvp(r, ts):
    """ds_i = u_i^T t v_i."""
    a = r.inputs[0]
    u, v = svd_u(a), svd_v(a)
    return reduce_sum(mul(u, matmul(ts[0], v)), axis=-2)


def _svd_tangents(a, t):
    """(dU, dV) along t: with dP = U^T t V and F as in the gradient, dU = U (F o (dP S + S dP^T)),
    dV = V (F o (S dP + dP^T S)) + (I - V V^T) t^T U S^-1 (m <= n; the transpose otherwise)."""
    s, u, v = svd_s(a), svd_u(a), svd_v(a)
    m, n = a.shape[-2:]
    if m > n:
        dv, du = _svd_tangents_core(s, v, u, _t(t))
        return du, dv
    return _svd_tangents_core(s, u, v, t)


def _svd_tangents_core(s, u, v, t):
    s_mat = _diag(s)
    s2 = square(s)
    diff = sub(reshape(s2, s2.shape[:-1] + (1, s2.shape[-1])), reshape(s2, s2.shape + (1,)))
    eye = _eye_like(diff)
    f = where(Tensor(eye.value > 0), zeros_like(diff), div(1.0, add(diff, eye)))
    dp = matmul(_t(u), matmul(t, v))
    du = matmul(u, mul(f, add(matmul(dp, s_mat), matmul(s_mat, _t(dp)))))
    dv = matmul(v, mul(f, add(matmul(s_mat, dp), matmul(_t(dp), s_mat))))
    tu = matmul(_t(t), u)
    rest = sub(tu, matmul(v, matmul(_t(v), tu)))
    return du, add(dv, matmul(rest, _diag(div(1.0, s))))


SVD_S = register("svd_s", weighed=True, numpy=_svd_kernel(0), batchable=False, saves=(0,),
                 vjp=lambda r, g: (_svd_grad(r.inputs[0], g, None, None),), jvp=_svd_s_jvp)
SVD_U = register("svd_u", weighed=True, numpy=_svd_kernel(1), batchable=False, saves=(0,),
                 vjp=lambda r, g: (_svd_grad(r.inputs[0], None, g, None),),
                 jvp=lambda r, ts: _svd_tangents(r.inputs[0], ts[0])[0])
SVD_V = register("svd_v", weighed=True, numpy=_svd_kernel(2), batchable=False, saves=(0,),
                 vjp=lambda r, g: (_svd_grad(r.inputs[0], None, None, g),),
                 jvp=lambda r, ts: _svd_tangents(r.inputs[0], ts[0])[1])


def svd_s(x): return apply(SVD_S, (_matrix(x, "svd"),))
def svd_u(x): return apply(SVD_U, (_matrix(x, "svd"),))
def svd_v(x): return apply(SVD_V, (_matrix(x, "svd"),))


def svd(x, compute_uv=True) -> list | Tensor:
    """[s, u, v] (v, not its transpose, as tf.linalg.svd); s alone without compute_uv."""
    return [svd_s(x), svd_u(x), svd_v(x)] if compute_uv else svd_s(x)
