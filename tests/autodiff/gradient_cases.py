"""The rows of the table-driven gradient checks (test_op_gradients.py): an input's sampling (``In``), a row
(``Case``), and the linear algebra's rows with the constraints that keep their inputs well conditioned."""
from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Callable

import numpy as np

from tapecli import ops
from tapecli.runtime.values import Tensor

F32 = np.float32
F64 = np.float64

EPS = 1e-6          # first-order central differences
RTOL, ATOL = 1e-5, 1e-7

# ------------------------------------------------------------------- inputs

@dataclass(frozen=True)
class In:
    """One input of a row: its shape, its domain, its dtype."""
    shape: tuple
    domain: object = "normal"
    dtype: type = F64

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        shape, d = self.shape, self.domain
        if d == "normal":
            a = rng.normal(size=shape)
        elif d == "wide":                      # the saturating ops' interesting range
            a = rng.normal(scale=3.0, size=shape)
        elif d == "positive":                  # log, sqrt, rsqrt, pow's base
            a = rng.uniform(0.5, 2.0, size=shape)
        elif d == "nonzero":                   # kinks and poles at 0 stay >= 0.2 away
            a = rng.uniform(0.2, 2.0, size=shape) * rng.choice([-1.0, 1.0], size=shape)
        elif d == "distinct":                  # no ties within 0.05: max/min reductions
            n = int(np.prod(shape))
            a = rng.permutation(np.linspace(-2.0, 2.0, n) + rng.uniform(-0.02, 0.02, n)).reshape(shape)
        elif d == "bool":
            return rng.random(size=shape) < 0.5
        elif d == "grid":                      # values exact in float32: k/64 in [-2, 2]
            a = np.round(rng.uniform(-2.0, 2.0, size=shape) * 64) / 64
        elif isinstance(d, tuple) and d[0] == "uniform":
            a = rng.uniform(d[1], d[2], size=shape)
        elif isinstance(d, tuple) and d[0] == "with_zeros":   # normal, some entries exactly 0
            a = rng.normal(size=shape)
            flat = a.reshape(-1)
            flat[list(d[1])] = 0.0
        else:
            raise ValueError(f"unknown domain {d!r}")
        return np.asarray(a, dtype=self.dtype)


@dataclass(frozen=True)
class Case:
    id: str
    op: str                                 # the OPS entry this row covers
    fn: Callable                            # (*tensors) -> Tensor
    inputs: tuple                           # of In
    second: bool = True                     # check the second derivative
    zero_second: bool = False               # the second derivative is a zeros tensor, not None
    accept: Callable | None = None          # joint constraint on the sampled inputs (kinks)
    grid: bool = False                      # float32 inside: weights, steps and directions on grids
    jvp: bool = True                        # check the op's own jvp (False: float32 ops, whose finite
                                            # differences off the grids lose their bits)
    eps: float = EPS
    tol: tuple = (RTOL, ATOL)

    def sample(self):
        rng = np.random.default_rng(zlib.crc32(self.id.encode()))
        for _ in range(10_000):
            arrays = [spec.sample(rng) for spec in self.inputs]
            if self.accept is None or self.accept(*arrays):
                return arrays, rng
        raise AssertionError(f"{self.id}: could not sample inputs satisfying its constraint")



# ------------------------------------------------------------ linear algebra

def _well_conditioned(*arrays):
    return all(np.linalg.cond(a) < 8 for a in arrays if a.ndim >= 2 and a.shape[-1] == a.shape[-2])


def _tri_ok(a, *rest):
    return bool(np.all(np.abs(np.diagonal(a, axis1=-2, axis2=-1)) > 0.5))


def _tridiagonal_ok(diagonals, *rest):
    """The tridiagonal matrices of compact diagonals [..., 3, M] are well conditioned."""
    sup, main, sub = np.moveaxis(diagonals, -2, 0)
    m = main.shape[-1]
    dense = (main[..., None] * np.eye(m) + sup[..., None] * np.eye(m, k=1) + sub[..., None] * np.eye(m, k=-1))
    return _well_conditioned(*dense.reshape(-1, m, m))


def _dominant(diagonals):
    """Diagonals whose matrices are diagonally dominant: the Thomas algorithm needs no pivoting for them."""
    return ops.add(diagonals, Tensor(np.array([[0.0], [4.0], [0.0]], diagonals.dtype)))


def _spd(x):
    """A well-conditioned symmetric positive definite matrix from x."""
    n = x.shape[-1]
    return ops.add(ops.matmul(x, ops.transpose(x, tuple(range(x.ndim - 2)) + (x.ndim - 1, x.ndim - 2))),
                   Tensor(n * np.eye(n, dtype=x.dtype)))


def _distinct_singular_values(a):
    sv = np.linalg.svd(a, compute_uv=False)
    return bool(np.all(-np.diff(sv) > 0.3) and sv[-1] > 0.3)


def _distinct_eigenvalues(a):
    w = np.linalg.eigvalsh(a)
    return bool(np.all(np.diff(w, axis=-1) > 0.3))


LINALG_CASES = [
    Case("einsum_matmul", "einsum", lambda a, b: ops.einsum("ij,jk->ik", a, b), (In((2, 3)), In((3, 4)))),
    Case("einsum_batch_ellipsis", "einsum", lambda a, b: ops.einsum("...ij,...jk", a, b),
         (In((2, 2, 3)), In((2, 3, 2)))),
    Case("einsum_outer_sum", "einsum", lambda a, b: ops.einsum("ij,k->jk", a, b), (In((2, 3)), In((4,)))),
    Case("einsum_three", "einsum", lambda a, b, c: ops.einsum("ab,bc,ca->", a, b, c),
         (In((2, 3)), In((3, 2)), In((2, 2)))),
    Case("einsum_transpose", "einsum", lambda a: ops.sin(ops.einsum("ijk->kij", a)), (In((2, 3, 4)),)),
    Case("tensordot_2", "matmul", lambda a, b: ops.tensordot(a, b, 2), (In((2, 3, 4)), In((3, 4, 2)))),
    Case("tensordot_pairs", "matmul", lambda a, b: ops.tensordot(a, b, [[0], [1]]), (In((3, 2)), In((4, 3)))),
    Case("matvec", "matmul", lambda a, b: ops.matvec(a, b), (In((2, 3, 4)), In((4,)))),
    Case("inv", "inv", ops.inv, (In((3, 3)),), accept=_well_conditioned),
    Case("inv_batch", "inv", ops.inv, (In((2, 3, 3)),), accept=lambda a: _well_conditioned(a[0], a[1])),
    Case("det", "det", ops.det, (In((3, 3)),), accept=_well_conditioned),
    Case("det_batch", "det", ops.det, (In((2, 2, 2)),), accept=lambda a: _well_conditioned(a[0], a[1])),
    Case("slogdet", "log_abs_det", lambda a: ops.slogdet(a)[1], (In((3, 3)),), accept=_well_conditioned),
    Case("solve", "solve", ops.solve, (In((3, 3)), In((3, 2))), accept=_well_conditioned),
    Case("solve_batch", "solve", ops.solve, (In((2, 3, 3)), In((2, 3, 1))),
         accept=lambda a, b: _well_conditioned(a[0], a[1])),
    Case("triangular_solve_lower", "triangular_solve", lambda a, b: ops.triangular_solve(a, b),
         (In((3, 3)), In((3, 2))), accept=_tri_ok),
    Case("triangular_solve_upper_adjoint", "triangular_solve",
         lambda a, b: ops.triangular_solve(a, b, lower=False, adjoint=True), (In((3, 3)), In((3, 2))), accept=_tri_ok),
    Case("tridiagonal_solve", "tridiagonal_solve", ops.tridiagonal_solve, (In((2, 3, 4)), In((2, 4, 2))),
         accept=_tridiagonal_ok),
    Case("tridiagonal_solve_thomas", "tridiagonal_solve",
         lambda d, b: ops.tridiagonal_solve(_dominant(d), b, partial_pivoting=False), (In((3, 5)), In((5, 1)))),
    Case("tridiagonal_matmul", "tridiagonal_matmul", ops.tridiagonal_matmul,
         (In((2, 1, 4)), In((2, 1, 4)), In((2, 1, 4)), In((2, 4, 3)))),
    Case("cholesky", "cholesky", lambda x: ops.cholesky(_spd(x)), (In((3, 3)),)),
    Case("cholesky_batch", "cholesky", lambda x: ops.cholesky(_spd(x)), (In((2, 3, 3)),)),
    Case("eigh_values", "eigh_values", ops.eigh_values, (In((3, 3)),), accept=_distinct_eigenvalues),
    Case("eigh_vectors", "eigh_vectors", ops.eigh_vectors, (In((3, 3)),), accept=_distinct_eigenvalues),
    Case("qr_q_square", "qr_q", ops.qr_q, (In((3, 3)),), accept=_well_conditioned),
    Case("qr_r_tall", "qr_r", ops.qr_r, (In((4, 3)),), accept=lambda a: np.linalg.cond(a) < 8),
    Case("qr_q_tall", "qr_q", ops.qr_q, (In((4, 2)),), accept=lambda a: np.linalg.cond(a) < 8),
    Case("svd_s", "svd_s", ops.svd_s, (In((3, 4)),), accept=_distinct_singular_values),
    Case("svd_u_square", "svd_u", ops.svd_u, (In((3, 3)),), accept=_distinct_singular_values),
    Case("svd_v_wide", "svd_v", ops.svd_v, (In((2, 4)),), accept=_distinct_singular_values),
    Case("svd_u_tall", "svd_u", ops.svd_u, (In((4, 2)),), accept=_distinct_singular_values),
    Case("svd_v_tall", "svd_v", ops.svd_v, (In((4, 3)),), accept=_distinct_singular_values),
    Case("trace", "sum", lambda x: ops.trace(x), (In((2, 3, 3)),)),
    Case("diag_part", "getitem", lambda x: ops.sin(ops.diag_part(x)), (In((3, 4)),)),
    Case("diag", "where", lambda x: ops.sin(ops.diag(x)), (In((2, 3)),)),
]
