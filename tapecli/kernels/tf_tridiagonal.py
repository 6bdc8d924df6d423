"""TensorFlow's CPU kernels TridiagonalSolve and TridiagonalMatMul (tridiagonal_solve_op.cc,
tridiagonal_matmul_op.cc), bit for bit: each system's float operations in the C++ order, one row of right-hand
sides at a time, vectorised over the batch where both branches of a step are the same operations (the branch each
system takes is chosen per system). A singular system's solution is all NaN, as TensorFlow's (which logs a
warning and raises nothing).

``diagonals`` is [..., 3, M] (superdiagonal, its last element ignored; diagonal; subdiagonal, its first element
ignored), ``rhs`` [..., M, K]."""
from __future__ import annotations

import numpy as np


def solve(diagonals, rhs, partial_pivoting=True, perturb_singular=False):
    m, k = rhs.shape[-2:]
    d = diagonals.reshape((-1, 3, m))
    b = rhs.reshape((-1, m, k))
    if m == 0:
        return np.empty(rhs.shape, rhs.dtype)
    if perturb_singular:
        x = np.stack([_perturbed_one(d[s, 0], d[s, 1], d[s, 2], b[s]) for s in range(len(b))]) if len(b) else b.copy()
        return _batched(x, rhs.shape)
    with np.errstate(all="ignore"):     # (a system taking the other branch, or a singular one, computes garbage)
        if m == 1:
            x, bad = b / d[:, 1, :, None], d[:, 1, 0] == 0
        elif partial_pivoting:
            x, bad = _pivoting(d[:, 0], d[:, 1], d[:, 2], b)
        else:
            x, bad = _thomas(d[:, 0], d[:, 1], d[:, 2], b)
    x[bad] = np.nan
    return _batched(x, rhs.shape)


def _batched(x, shape):
    """x [B, M, K] in ``shape``: an array of its own, never a view of a temporary (a trace follows arrays by
    identity)."""
    return x if x.shape == shape else x.reshape(shape).copy()


def _pivoting(sup, diag, sub, rhs):
    """Gaussian elimination with partial pivoting (SolveWithGaussianEliminationWithPivoting, LAPACK's dgtsv): U's
    diagonal and two superdiagonals as u0, u1, u2; (x, singular) per system."""
    n = diag.shape[1]
    u0, u1, u2 = np.empty_like(diag), np.empty_like(diag), np.empty_like(diag)
    x = np.empty_like(rhs)
    u0[:, 0], u1[:, 0], x[:, 0] = diag[:, 0], sup[:, 0], rhs[:, 0]
    bad = np.zeros(len(diag), bool)
    for i in range(n - 1):
        keep = np.abs(u0[:, i]) >= np.abs(sub[:, i + 1])        # no interchange of rows i and i + 1
        bad |= keep & (u0[:, i] == 0)
        factor = np.where(keep, sub[:, i + 1] / u0[:, i], u0[:, i] / sub[:, i + 1])
        f = factor[:, None]
        u0_next = np.where(keep, diag[:, i + 1] - factor * u1[:, i], u1[:, i] - factor * diag[:, i + 1])
        x_next = np.where(keep[:, None], rhs[:, i + 1] - f * x[:, i], x[:, i] - f * rhs[:, i + 1])
        x[:, i] = np.where(keep[:, None], x[:, i], rhs[:, i + 1])
        x[:, i + 1] = x_next
        u0[:, i] = np.where(keep, u0[:, i], sub[:, i + 1])
        u1[:, i] = np.where(keep, u1[:, i], diag[:, i + 1])
        u0[:, i + 1] = u0_next
        if i != n - 2:
            u1[:, i + 1] = np.where(keep, sup[:, i + 1], -factor * sup[:, i + 1])
            u2[:, i] = np.where(keep, 0, sup[:, i + 1])
    bad |= u0[:, n - 1] == 0
    x[:, n - 1] = x[:, n - 1] / u0[:, n - 1, None]
    x[:, n - 2] = (x[:, n - 2] - u1[:, n - 2, None] * x[:, n - 1]) / u0[:, n - 2, None]
    for i in range(n - 3, -1, -1):
        x[:, i] = (x[:, i] - u1[:, i, None] * x[:, i + 1] - u2[:, i, None] * x[:, i + 2]) / u0[:, i, None]
    return x, bad


def _thomas(sup, diag, sub, rhs):
    """The Thomas algorithm, no pivoting (SolveWithThomasAlgorithm): U has ones on its diagonal, u above it."""
    n = diag.shape[1]
    u = np.empty_like(diag)
    x = np.empty_like(rhs)
    bad = diag[:, 0] == 0
    u[:, 0] = sup[:, 0] / diag[:, 0]
    x[:, 0] = rhs[:, 0] / diag[:, 0, None]
    for i in range(1, n):
        denom = diag[:, i] - sub[:, i] * u[:, i - 1]
        bad |= denom == 0
        u[:, i] = sup[:, i] / denom
        x[:, i] = (rhs[:, i] - sub[:, i, None] * x[:, i - 1]) / denom[:, None]
    for i in range(n - 2, -1, -1):
        x[:, i] = x[:, i] - u[:, i, None] * x[:, i + 1]
    return x, bad


def _cxx_max(a, b):
    """std::max(a, b): a unless a < b."""
    return b if a < b else a


def _perturb_pivot(perturb, pivot, row):
    """MaybePerturbPivot (LAPACK's xLAGTS): the pivot moved away from zero, or it and the row scaled up, until
    neither row / pivot nor 1 / pivot overflows; (pivot, row)."""
    dt = pivot.dtype.type
    one = dt(1)
    safemin = dt(np.finfo(pivot.dtype).tiny)      # (1 / max is below the smallest normal: xLAMCH's sfmin)
    bignum = one / safemin
    abs_pivot = abs(pivot)
    if abs_pivot >= one:
        return pivot, row
    perturb = np.copysign(_cxx_max(abs(perturb), safemin), pivot)
    max_factor = np.abs(row).max()
    while abs_pivot < one:
        if abs_pivot < safemin:
            if abs_pivot == 0 or max_factor * safemin > abs_pivot:
                pivot, perturb = pivot + perturb, perturb * dt(2)
            else:
                return pivot * bignum, row * bignum
        elif max_factor > abs_pivot * bignum:
            pivot, perturb = pivot + perturb, perturb * dt(2)
        else:
            break
        abs_pivot = abs(pivot)
    return pivot, row


def _perturbed_one(sup, diag, sub, rhs):
    """One system by SolveWithGaussianEliminationWithPivotingAndPerturbSingular (LAPACK's xLAGTF + xLAGTS): the
    pivoting chosen on scaled magnitudes, and tiny pivots of U perturbed by about eps * max |U|."""
    dt = diag.dtype.type
    zero, one, eps = dt(0), dt(1), dt(np.finfo(diag.dtype).eps)
    n = len(diag)
    x = rhs.copy()
    with np.errstate(all="ignore"):
        if n == 1:
            denom, row = _perturb_pivot(eps * abs(diag[0]), diag[0], rhs[0].copy())
            return (row * (one / denom))[None]
        u = np.zeros((n, 3), diag.dtype)
        u[0, 0], u[0, 1] = diag[0], sup[0]
        max_abs_u = _cxx_max(abs(u[0, 0]), abs(u[0, 1]))
        scale1 = abs(u[0, 0]) + abs(u[0, 1])
        for k in range(n - 1):
            u[k + 1, 0] = diag[k + 1]
            scale2 = abs(sub[k + 1]) + abs(u[k + 1, 0])
            if k < n - 2:
                scale2 = scale2 + abs(sup[k + 1])
            if sub[k + 1] == zero:
                scale1 = scale2
                u[k + 1, 1], u[k, 2] = sup[k + 1], zero
                x[k + 1] = rhs[k + 1]
            else:
                piv1 = zero if u[k, 0] == zero else abs(u[k, 0]) / scale1
                piv2 = abs(sub[k + 1]) / scale2
                if piv2 <= piv1:
                    scale1 = scale2
                    factor = sub[k + 1] / u[k, 0]
                    u[k + 1, 0] = diag[k + 1] - factor * u[k, 1]
                    u[k + 1, 1], u[k, 2] = sup[k + 1], zero
                    x[k + 1] = rhs[k + 1] - factor * x[k]
                else:
                    factor = u[k, 0] / sub[k + 1]
                    u[k, 0] = sub[k + 1]
                    u[k + 1, 0] = u[k, 1] - factor * diag[k + 1]
                    u[k, 1] = diag[k + 1]
                    if k < n - 2:
                        u[k, 2], u[k + 1, 1] = sup[k + 1], -factor * sup[k + 1]
                    x[k + 1] = x[k] - factor * rhs[k + 1]
                    x[k] = rhs[k + 1]
            if k < n - 2:
                for i in range(3):
                    max_abs_u = _cxx_max(max_abs_u, abs(u[k, i]))
        max_abs_u = _cxx_max(max_abs_u, abs(u[n - 1, 0]))
        tol = eps * max_abs_u
        denom, row = _perturb_pivot(tol, u[n - 1, 0], x[n - 1].copy())
        x[n - 1] = row * (one / denom)
        for k in range(n - 2, -1, -1):
            row = x[k] - u[k, 1] * x[k + 1]
            if k < n - 2:
                row = row - u[k, 2] * x[k + 2]
            denom, row = _perturb_pivot(np.copysign(tol, u[k, 0]), u[k, 0], row)
            x[k] = row * (one / denom)
    return x


def matmul(superdiag, maindiag, subdiag, rhs):
    """TridiagonalMatMul: the diagonals [..., 1, M] times rhs [..., M, N], each row of the product the diagonal's
    term, plus the subdiagonal's, plus the superdiagonal's."""
    result = rhs * np.swapaxes(maindiag, -1, -2)
    result[..., 1:, :] += rhs[..., :-1, :] * np.swapaxes(subdiag[..., :, 1:], -1, -2)
    result[..., :-1, :] += rhs[..., 1:, :] * np.swapaxes(superdiag[..., :, :-1], -1, -2)
    return result
