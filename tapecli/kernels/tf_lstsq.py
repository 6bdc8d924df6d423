"""TensorFlow's MatrixSolveLs with ``fast=False`` (tf.linalg.lstsq), bit for bit: Eigen's
``CompleteOrthogonalDecomposition::solve`` on row-major matrices, in the matrix's dtype.

The decomposition is Eigen's ColPivHouseholderQR: each step pivots the column of the largest updated norm (LAPACK's
norm downdate, recomputed when it has lost too much), makes the Householder reflector of its tail
(``makeHouseholderInPlace``) and applies it to the columns after it (``applyHouseholderOnTheLeft``). The solve
applies the reflectors to the right-hand sides, solves the triangular factor (Eigen's trsm on its small panel:
each unknown's known terms subtracted one at a time, then times the diagonal's reciprocal) and undoes the pivots.
Every sum of a column (a norm, a reflector's dot with a column) is Eigen's on a strided column or its GEMV: one
value at a time, in blocks of 16 rows from 128 rows on. Measured against TensorFlow 2.21 on tall float32 and
float64 systems of up to 700 rows, 16 (float32) and 8 (float64) columns and 3 right-hand sides. Where Eigen
takes other paths, this kernel refuses: a matrix of lower rank than its columns (its Z reflectors), or more
columns than trsm's small panel (its GEBP updates)."""
from __future__ import annotations

import numpy as np

# trsm solves this many unknowns one at a time (gebp_traits' max(mr, nr) for AVX: 16 floats, 8 doubles)
_PANEL = {4: 16, 8: 8}
_GEMV_BLOCKED_FROM = 128        # Eigen's GEMV sums a column in one block below this many rows


def _column_sums(weights, block):
    """``weights @ block`` (a vector times the rows of a block) as Eigen sums each column: row by row; in its GEMV
    (a block of more than one column) from 128 rows on in blocks of 16 rows (4 where a row is 32,000 bytes or
    more) whose sums add up in order."""
    rows = block.shape[0]
    zero = np.zeros(block.shape[1:], block.dtype)
    step = rows if rows < _GEMV_BLOCKED_FROM or block.shape[1] == 1 else 16 if block.strides[0] < 32000 else 4
    total = zero
    for start in range(0, rows, max(step, 1)):
        part = zero
        for i in range(start, min(start + step, rows)):
            part = part + weights[i] * block[i]
        total = total + part
    return total


def _squares(column):
    """A strided column's squared norm as Eigen's redux takes it: its squares added one at a time."""
    total = column.dtype.type(0)
    for v in column:
        total = total + v * v
    return total


def _norm(column):
    return np.sqrt(_squares(column))


def _reflect(block, essential, tau):
    """Eigen's applyHouseholderOnTheLeft: ``block`` (its first row the reflector's 1) minus tau v (v' block)."""
    tmp = _column_sums(essential, block[1:]) + block[0]
    block[0] = block[0] - tau * tmp
    block[1:] = block[1:] - np.multiply.outer(tau * essential, tmp)


def unsupported(a) -> str | None:
    """Why this kernel does not give TensorFlow's bits for matrices of ``a``'s shape and dtype (None: it does)."""
    m, n = a.shape[-2:]
    if m < n:
        return "a wide matrix (fewer rows than columns)"
    if n > _PANEL.get(a.dtype.itemsize, 0):
        return f"more than {_PANEL.get(a.dtype.itemsize, 0)} columns of {a.dtype.name}"
    return None


def solve(a, b):
    """The minimum-norm least-squares solution of ``a x = b`` for each matrix of a batch, as Eigen's complete
    orthogonal decomposition gives it; ValueError for a matrix of lower rank than its columns."""
    out = np.empty(a.shape[:-2] + (a.shape[-1], b.shape[-1]), a.dtype)
    for index in np.ndindex(a.shape[:-2]):
        out[index] = _solve_one(a[index].copy(), b[index].copy())
    return out


def _solve_one(qr, c):
    dt = qr.dtype.type
    rows, cols = qr.shape
    eps = np.finfo(qr.dtype).eps
    direct = np.array([_norm(qr[:, j]) for j in range(cols)], qr.dtype)
    updated = direct.copy()
    order = np.arange(cols)
    taus, max_pivot, nonzero = [], dt(0), cols
    # (a column this small counts no pivot from here on: Eigen's m_nonzero_pivots)
    negligible = (updated.max(initial=dt(0)) * dt(eps)) ** 2 / dt(rows)
    for k in range(cols):
        j = k + int(np.argmax(updated[k:]))
        if nonzero == cols and updated[j] ** 2 < negligible * dt(rows - k):
            nonzero = k
        if j != k:
            qr[:, [k, j]] = qr[:, [j, k]]
            for arr in (updated, direct, order):
                arr[[k, j]] = arr[[j, k]]
        c0, tail = qr[k, k], qr[k + 1:, k]
        tail_sq = _squares(tail)
        if tail_sq <= np.finfo(qr.dtype).tiny:
            tau, beta = dt(0), c0
            tail[:] = 0
        else:
            beta = np.sqrt(c0 * c0 + tail_sq)
            beta = -beta if c0 >= 0 else beta
            tail[:] = tail / (c0 - beta)
            tau = (beta - c0) / beta
        qr[k, k] = beta
        taus.append(tau)
        max_pivot = max(max_pivot, abs(beta))
        if tau != 0 and k + 1 < cols:
            _reflect(qr[k:, k + 1:], tail, tau)
        for jj in range(k + 1, cols):
            if updated[jj] != 0:
                t = abs(qr[k, jj]) / updated[jj]
                t = max((dt(1) + t) * (dt(1) - t), dt(0))
                if t * (updated[jj] / direct[jj]) ** 2 <= np.sqrt(dt(eps)):
                    direct[jj] = updated[jj] = _norm(qr[k + 1:, jj])
                else:
                    updated[jj] = updated[jj] * np.sqrt(t)
    rank = int(np.sum(np.abs(np.diag(qr)[:nonzero]) > max_pivot * dt(eps * cols)))
    if rank == 0:
        return np.zeros((cols, c.shape[1]), qr.dtype)
    if rank < cols:
        raise ValueError(f"a matrix of rank {rank} < its {cols} columns")
    for k in range(cols):
        if taus[k] != 0:
            _reflect(c[k:], qr[k + 1:, k], taus[k])
    z = c[:cols]
    for i in range(cols - 1, -1, -1):
        for j in range(i + 1, cols):
            z[i] = z[i] - qr[i, j] * z[j]
        z[i] = z[i] * (dt(1) / qr[i, i])
    x = np.empty_like(z)
    x[order] = z
    return x
