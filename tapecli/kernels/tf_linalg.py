"""TensorFlow's tf.linalg.solve on the CPU, bit for bit, for the small systems Eigen solves unblocked.

MatrixSolveOp (tensorflow/core/kernels/linalg/matrix_solve_op.cc) factors each matrix with Eigen's
``PartialPivLU`` and calls its ``solve``. For at most 16 rows the factorisation is Eigen's unblocked one:
at each column the first row of largest magnitude becomes the pivot, the column below it is divided by it,
and the trailing block loses the outer product of that column and the pivot row (``a - l * u``, no fused
multiply-add, as the wheel is built). ``solve`` permutes the right-hand sides, then solves the unit lower
and the upper triangle with ``triangular_solve_matrix``: TensorFlow's row-major right-hand sides make it
Eigen's on-the-right kernel, whose unblocked panel subtracts the known unknowns one at a time in index
order (the upper triangle: from the diagonal outwards) and multiplies by the pivot's reciprocal. A panel
holds Eigen's ``SmallPanelWidth`` unknowns (8 doubles, 16 floats with AVX); past that the solve adds a
GEBP block product whose order this module does not follow, so larger systems keep NumPy's solve (LAPACK's
answer, equal to rounding).
"""
from __future__ import annotations

import numpy as np

_UNBLOCKED = {np.dtype(np.float64): 8, np.dtype(np.float32): 16}


class Singular(np.linalg.LinAlgError):
    """An exact zero pivot: TensorFlow's "Input matrix is not invertible."."""


def solve(a: np.ndarray, b: np.ndarray) -> np.ndarray | None:
    """``a`` x = ``b`` over the leading (batch) dimensions as TensorFlow's CPU kernel solves it, or None where
    this module does not follow it (a larger system, another dtype)."""
    n = a.shape[-1]
    if a.dtype != b.dtype or n > _UNBLOCKED.get(a.dtype, 0):
        return None
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = np.broadcast_to(a, batch + a.shape[-2:]).reshape(-1, n, n)
    flat_b = np.broadcast_to(b, batch + b.shape[-2:]).reshape(-1, *b.shape[-2:])
    out = np.stack([_solve_one(m, rhs) for m, rhs in zip(a, flat_b)]) if len(a) else flat_b.copy()
    return out.reshape(batch + b.shape[-2:])


def _solve_one(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    lu, pivots = _partial_pivot_lu(a)
    x = b.copy()
    for k, p in enumerate(pivots):
        if p != k:
            x[[k, p]] = x[[p, k]]
    n, one = len(lu), a.dtype.type(1)
    for j in range(n):                          # unit lower triangle
        for k in range(j):
            x[j] = x[j] - x[k] * lu[j, k]
    for j in range(n - 1, -1, -1):              # upper triangle
        for k in range(j + 1, n):
            x[j] = x[j] - x[k] * lu[j, k]
        x[j] = x[j] * (one / lu[j, j])
    return x


def _partial_pivot_lu(a: np.ndarray) -> tuple[np.ndarray, list[int]]:
    lu = a.copy()
    n = len(lu)
    pivots = []
    for k in range(n):
        magnitudes = np.abs(lu[k:, k])
        p = k + int(np.argmax(magnitudes))            # (the first of equal magnitudes, as Eigen's maxCoeff)
        pivots.append(p)
        if magnitudes[p - k] == 0:
            raise Singular("Input matrix is not invertible.")
        if p != k:
            lu[[k, p]] = lu[[p, k]]
        lu[k + 1:, k] = lu[k + 1:, k] / lu[k, k]
        lu[k + 1:, k + 1:] = lu[k + 1:, k + 1:] - np.multiply.outer(lu[k + 1:, k], lu[k, k + 1:])
    return lu, pivots


def lu(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """TensorFlow's Lu kernel over the leading (batch) dimensions: Eigen's ``PartialPivLU`` packed factors (L
    below the diagonal, its unit diagonal implied, U on and above it) and the permutation, ``perm[i]`` the input
    row at row i (``permutationP().transpose()``'s indices). Eigen factors unblocked up to 16 rows, so these are
    its bits there; past that Eigen's blocked products round otherwise (equal to rounding)."""
    n = a.shape[-1]
    flat = a.reshape(-1, n, n)
    packed, perms = np.empty_like(flat), np.empty((len(flat), n), dtype=np.int64)
    for i, m in enumerate(flat):
        packed[i], pivots = _partial_pivot_lu(m)
        perm = list(range(n))
        for k, p in enumerate(pivots):
            perm[k], perm[p] = perm[p], perm[k]
        perms[i] = perm
    return packed.reshape(a.shape), perms.reshape(a.shape[:-1])
