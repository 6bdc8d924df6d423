"""tf.linalg as builtins: einsum, tensordot, matvec, inv, det, slogdet, logdet, solve, cholesky,
triangular_solve, trace, diag, diag_part, eigh, eigvalsh, matrix_transpose, expm (plain names: ``tf.linalg.X``
is the builtin ``X``); and, as compositions of the op table's ops written as TensorFlow writes them
(linalg_impl.py), cholesky_solve, lstsq (the fast Cholesky path), pinv (through the SVD), normalize, matrix_rank,
set_diag, cross, tensor_diag and tensor_diag_part, whose gradients are the compositions'; tridiagonal_solve and
tridiagonal_matmul, TensorFlow's wrappers around the raw ops of ops/tridiagonal.py."""
from __future__ import annotations

import numpy as np

from tapecli import ops
from tapecli.errors import KernelValueError, ShapeError, TdfTypeError, TdfValueError
from tapecli.library.core import NamedResult, norm, to_dtype, to_float, to_int, truth
from tapecli.runtime.values import PythonTuple, Tensor, Variable
from tapecli.interpreter.registry import builtin
from tapecli.runtime.tape import type_word
from tapecli.runtime import spelling


@builtin()
def einsum(equation, *inputs):
    if not isinstance(equation, str):
        raise TdfTypeError(f"einsum's first argument is the equation (a string), got {type_word(equation)}",
                           hint=spelling.call("einsum", '"ij,jk->ik"', "a", "b"))
    if len(inputs) == 1 and isinstance(inputs[0], list):
        inputs = tuple(inputs[0])
    return ops.einsum(equation, *inputs)


@builtin()
def tensordot(a, b, axes, name=None):
    if isinstance(axes, Tensor) and axes.ndim > 0:       # [[1], [0]] or [1, 0] written as a literal
        axes = [list(row) if isinstance(row, list) else row for row in axes.value.tolist()]
    if isinstance(axes, list):
        if len(axes) != 2:
            raise TdfTypeError("tensordot: axes must be an int or a pair of axis lists")
        pair = [[to_int(v, "an axis") for v in (ax if isinstance(ax, list) else [ax])] for ax in axes]
        return ops.tensordot(a, b, pair)
    return ops.tensordot(a, b, to_int(axes, "axes"))


@builtin()
def matvec(a, b, transpose_a=False, adjoint_a=False, a_is_sparse=False, b_is_sparse=False, name=None):
    """tf.linalg.matvec (``a_is_sparse`` and ``b_is_sparse`` choose TensorFlow's algorithm, not its values)."""
    return ops.matvec(a, b, truth(transpose_a) or truth(adjoint_a))


def _matrices(a, b, *args, **kwargs):
    """tf.matmul's kernel takes matrices (or batches): a vector or a scalar is TensorFlow's InvalidArgumentError.
    A TDF program's bare ``matmul`` is NumPy's (docs/language.md: 1-D operands too), so this is the check of a call
    spelled through tf (registry.call_builtin's ``tensorflow_check``)."""
    ranks = [ops.to_tensor(x).ndim for x in (a, b)]
    if min(ranks) < 2:
        side, batch = 0 if ranks[0] < 2 else 1, max(ranks) > 2
        raise KernelValueError(f"In[{side}] ndims must be >= 2{f': {ranks[side]}' if batch else ''} "
                               f"[Op:{'BatchMatMulV2' if batch else 'MatMul'}] name: ")


@builtin(tensorflow_check=_matrices)
def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False, a_is_sparse=False,
           b_is_sparse=False, output_type=None, grad_a=False, grad_b=False, name=None):
    """tf.linalg.matmul; the is_sparse and grad_ flags are hints that change no value (real dtypes: the adjoint is
    the transpose)."""
    for t, adj, side in ((transpose_a, adjoint_a, "a"), (transpose_b, adjoint_b, "b")):
        if truth(t) and truth(adj):
            raise TdfValueError(f"tf.linalg.matmul: transpose_{side} and adjoint_{side} cannot both be True")
    if output_type is not None:
        raise TdfTypeError("tf.linalg.matmul: output_type is for int8 inputs, which tapecli does not have")
    return ops.matmul(_maybe_adjoint(a, truth(transpose_a) or truth(adjoint_a), view=True),
                      _maybe_adjoint(b, truth(transpose_b) or truth(adjoint_b), view=True))


def _maybe_adjoint(x, adjoint, view=False):
    """x's matrices transposed where ``adjoint`` says (real dtypes); ``view``: as a product's flag takes them."""
    t = ops.to_tensor(x)
    return ops.transpose(t, tuple(range(t.ndim - 2)) + (t.ndim - 1, t.ndim - 2), view) \
        if truth(adjoint) and t.ndim >= 2 else t


@builtin("inv", "matrix_inverse")
def inv(input, adjoint=False):  # noqa: A002
    return ops.inv(_maybe_adjoint(input, adjoint))


@builtin("det", "matrix_determinant")
def det(input):  # noqa: A002
    return ops.det(input)


@builtin()
def slogdet(input):  # noqa: A002
    """[sign, log |det|], as tf.linalg.slogdet."""
    return NamedResult(("sign", "log_abs_determinant"), ops.slogdet(input), "LogMatrixDeterminant")


@builtin()
def logdet(matrix):
    """log det of a symmetric positive definite matrix: 2 * sum(log(diag(cholesky)))."""
    return ops.mul(2.0, ops.reduce_sum(ops.log(ops.diag_part(ops.cholesky(matrix))), axis=-1))


@builtin("solve", "matrix_solve")
def solve(matrix, rhs, adjoint=False):
    return ops.solve(_maybe_adjoint(matrix, adjoint), rhs)


@builtin()
def cholesky(input):  # noqa: A002
    return ops.cholesky(input)


@builtin("triangular_solve", "matrix_triangular_solve")
def triangular_solve(matrix, rhs, lower=True, adjoint=False):
    return ops.triangular_solve(matrix, rhs, truth(lower), truth(adjoint))


@builtin()
def trace(x):
    return ops.trace(x)


@builtin("diag", "matrix_diag")
def diag(diagonal, name=None, k=0, num_rows=-1, num_cols=-1, padding_value=0, align="RIGHT_LEFT"):
    """tf.linalg.diag of one diagonal ``k`` (``align`` places a band's diagonals: a pair ``k`` is refused)."""
    return ops.diag(diagonal, _one_diagonal(k), to_int(num_rows, "num_rows"), to_int(num_cols, "num_cols"),
                    to_float(padding_value, "padding_value"))


@builtin("diag_part", "matrix_diag_part")
def diag_part(input, name=None, k=0, padding_value=0, align="RIGHT_LEFT"):  # noqa: A002
    """tf.linalg.diag_part of one diagonal ``k`` (``padding_value`` and ``align`` fill and place a band's)."""
    return ops.diag_part(input, _one_diagonal(k))


def _one_diagonal(k) -> int:
    if isinstance(k, (list, tuple)) or getattr(k, "ndim", 0):
        raise TdfValueError("tapecli takes one diagonal k (an int), not a band of them (a pair)")
    return to_int(k, "k")


@builtin("matrix_transpose", "adjoint")
def matrix_transpose(a):
    return _maybe_adjoint(a, True)


@builtin()
def eigh(tensor):
    """[eigenvalues ascending, eigenvectors as columns] of a symmetric matrix; the lower triangle is
    read (tf.linalg.eigh). The gradient assumes distinct eigenvalues, as TensorFlow's."""
    return PythonTuple([ops.eigh_values(tensor), ops.eigh_vectors(tensor)])


@builtin()
def eigvalsh(tensor):
    return ops.eigh_values(tensor)



def _reduced(full_matrices, what):
    if truth(full_matrices):
        from tapecli.errors import TdfValueError
        raise TdfValueError(f"{what}: full_matrices=True is not supported", hint="use the reduced factorization")


@builtin()
def qr(input, full_matrices=False):  # noqa: A002
    """[q, r], reduced (tf.linalg.qr); the gradient needs at least as many rows as columns."""
    _reduced(full_matrices, "qr")
    return NamedResult(("q", "r"), ops.qr(input), "Qr")


@builtin()
def lu(input, output_idx_type=None, name=None):  # noqa: A002
    """[lu, p] (tf.linalg.lu): the packed factors, Eigen's partial-pivoting LU, and the permutation (int32 unless
    ``output_idx_type`` is int64)."""
    idx = np.dtype(np.int32) if output_idx_type is None else to_dtype(output_idx_type)
    if idx not in (np.dtype(np.int32), np.dtype(np.int64)):
        raise TdfTypeError(f"tf.linalg.lu: output_idx_type is int32 or int64, not {idx}")
    packed, perm = ops.lu(input)
    return NamedResult(("lu", "p"), [packed, Tensor(perm.value.astype(idx))], "Lu")


@builtin()
def lu_reconstruct(lower_upper, perm, validate_args=False, name=None):
    """The matrices tf.linalg.lu factored, as linalg_impl.py rebuilds them: L (the strict lower triangle, a unit
    diagonal) times U (the upper triangle), its rows put back by the inverted permutation (a gather, so the
    gradient flows to ``lower_upper``)."""
    packed = _matrices(lower_upper, "lu_reconstruct")
    order = ops.to_tensor(perm)
    n = packed.shape[-1]
    if packed.shape[-2] != n or order.shape != packed.shape[:-1] or order.dtype.kind not in "iu":
        raise ShapeError(f"tf.linalg.lu_reconstruct: square factors and an integer permutation of their rows, got "
                         f"shapes {list(packed.shape)} and {list(order.shape)}")
    rows = order.value.reshape(-1, n).astype(np.int64)
    if any(sorted(r.tolist()) != list(range(n)) for r in rows):
        raise TdfValueError("tf.linalg.lu_reconstruct: perm is not a permutation of the rows")
    strictly_lower = np.tril(np.ones((n, n), bool), -1)
    lower = ops.where(Tensor(np.broadcast_to(strictly_lower, packed.shape).copy()), packed,
                      Tensor(np.broadcast_to(np.eye(n, dtype=packed.dtype), packed.shape).copy()))
    product = ops.matmul(lower, ops.band_part(packed, 0, -1))
    inverse = np.argsort(rows, axis=-1).reshape(order.shape).astype(np.int32)
    batch = packed.ndim - 2
    return ops.gather(product, Tensor(inverse), axis=batch, batch_dims=batch)


@builtin()
def svd(tensor, full_matrices=False, compute_uv=True):
    """[s, u, v] (v itself, not its transpose), or s alone with compute_uv=False (tf.linalg.svd)."""
    _reduced(full_matrices, "svd")
    found = ops.svd(tensor, truth(compute_uv))
    return PythonTuple(found) if isinstance(found, list) else found


# tf.linalg.expm: TensorFlow's scaling and squaring with Pade approximants (linalg_impl.matrix_exponential), written
# with the same ops, so its values are TensorFlow's composition and its gradient flows through them.
_PADE = {
    3: [120.0, 60.0, 12.0],
    5: [30240.0, 15120.0, 3360.0, 420.0, 30.0],
    7: [17297280.0, 8648640.0, 1995840.0, 277200.0, 25200.0, 1512.0, 56.0],
    9: [17643225600.0, 8821612800.0, 2075673600.0, 302702400.0, 30270240.0, 2162160.0, 110880.0, 3960.0, 90.0],
    13: [64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0, 129060195264000.0,
         10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0],
}
# (the l1-norm bounds below which each order is used, and the bound the scaled matrix keeps, per precision)
_ORDERS = {np.dtype(np.float32): ((0.4258730016922831, 1.880152677804762), (3, 5, 7), 3.925724783138660),
           np.dtype(np.float64): ((1.495585217958292e-2, 2.539398330063230e-1, 9.504178996162932e-1, 2.097847961257068),
                                  (3, 5, 7, 9, 13), 5.371920351148152)}


def _sum_of(terms):
    total = terms[0]
    for t in terms[1:]:
        total = ops.add(total, t)
    return total


def _pade(m, order, ident):
    """(U, V) of TensorFlow's Pade approximant of this order, its products in TensorFlow's order."""
    b = [_constant(x, m) for x in _PADE[order]]
    m2 = ops.matmul(m, m)
    powers = [ident, m2]
    if order >= 5:
        powers.append(ops.matmul(m2, m2))
    if order >= 7:
        powers.append(ops.matmul(powers[2], m2))
    if order == 9:
        powers.append(ops.matmul(powers[3], m2))
    if order == 13:
        m4, m6 = powers[2], powers[3]
        inner = _sum_of([m6, ops.mul(b[11], m4), ops.mul(b[9], m2)])
        tmp_u = _sum_of([ops.matmul(m6, inner), ops.mul(b[7], m6), ops.mul(b[5], m4), ops.mul(b[3], m2),
                         ops.mul(b[1], ident)])
        tmp_v = _sum_of([ops.mul(b[12], m6), ops.mul(b[10], m4), ops.mul(b[8], m2)])
        v = _sum_of([ops.matmul(m6, tmp_v), ops.mul(b[6], m6), ops.mul(b[4], m4), ops.mul(b[2], m2),
                     ops.mul(b[0], ident)])
        return ops.matmul(m, tmp_u), v
    top = len(powers) - 1           # the highest power's coefficient is 1 in U's sum, b[order - 1] in V's
    tmp = _sum_of([powers[top]] + [ops.mul(b[2 * k + 1], powers[k]) for k in range(top - 1, -1, -1)])
    v = _sum_of([ops.mul(b[order - 1], powers[top])] + [ops.mul(b[2 * k], powers[k]) for k in range(top - 1, -1, -1)])
    return ops.matmul(m, tmp), v


def _constant(x, like):
    return Tensor(np.asarray(x, like.dtype))


@builtin("expm")
def expm(input, name=None):  # noqa: A002
    """tf.linalg.expm of a float32 or float64 matrix (or a batch of them)."""
    m = ops.to_tensor(input)
    if m.dtype not in _ORDERS:
        raise TdfValueError(f"tf.linalg.expm does not support matrices of type {m.dtype}")
    if m.ndim < 2 or m.shape[-1] != m.shape[-2]:
        raise TdfValueError(f"tf.linalg.expm needs square matrices, got shape {list(m.shape)}")
    bounds, orders, maxnorm = _ORDERS[m.dtype]
    n = m.shape[-1]
    ident = Tensor(np.broadcast_to(np.eye(n, dtype=m.dtype), m.shape).copy())
    l1 = ops.reshape(ops.reduce_max(ops.reduce_sum(ops.abs_(m), axis=m.ndim - 2), axis=-1), (*m.shape[:-2], 1, 1))
    squarings = ops.maximum(ops.floor(ops.div(ops.log(ops.div(l1, _constant(maxnorm, m))),
                                              ops.log(_constant(2.0, m)))), _constant(0.0, m))
    scaled = ops.div(m, ops.pow_(_constant(2.0, m), squarings))
    pairs = [_pade(m if order != orders[-1] else scaled, order, ident) for order in orders]

    def nested(k, part):            # where l1 < bounds[k] the order k's, else the next choice
        if k == len(bounds) - 1:
            return ops.where(ops.less(l1, _constant(bounds[k], m)), pairs[k][part], pairs[k + 1][part])
        return ops.where(ops.less(l1, _constant(bounds[k], m)), pairs[k][part], nested(k + 1, part))
    u, v = nested(0, 0), nested(0, 1)
    if not np.isfinite(np.max(l1.value)):
        return Tensor(np.full(m.shape, np.nan, m.dtype))
    result = ops.solve(ops.add(ops.neg(u), v), ops.add(u, v))
    counts = squarings.value
    for i in range(int(np.max(counts)) if counts.size else 0):
        result = ops.where(ops.less(_constant(float(i), m), squarings), ops.matmul(result, result), result)
    return result



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
    a tall A, A^T (A A^T + l2 I)^-1 b for a wide one; with fast=False, Eigen's complete orthogonal decomposition
    (l2_regularizer ignored, as TensorFlow's)."""
    if not truth(fast):
        return ops.lstsq_complete_orthogonal(matrix, rhs)
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


# tf.linalg.tridiagonal_solve and tridiagonal_matmul: TensorFlow's Python wrappers (linalg_impl.py), which bring the
# three forms of the diagonals to the raw ops' (ops/tridiagonal.py) with slices, pads and stacks whose gradients
# are TensorFlow's

def _diagonals_of_matrices(diagonals):
    """The 'matrix' form as compact diagonals [..., 3, M]: matrix_diag_part(k=(-1, 1), align='LEFT_RIGHT'), the
    superdiagonal padded with a zero at its end, the subdiagonal at its start."""
    t = _matrices(diagonals, "the 'matrix' form of tridiagonal diagonals")
    m = t.shape[-1]
    if t.shape[-2] != m:
        raise TdfValueError(f"Expected last two dimensions of diagonals to be same, got {m} and {t.shape[-2]}")
    k, batch = np.arange(m - 1), [[0, 0]] * (t.ndim - 2)
    superdiag = ops.pad(ops.getitem(t, (Ellipsis, k, k + 1)), batch + [[0, 1]])
    subdiag = ops.pad(ops.getitem(t, (Ellipsis, k + 1, k)), batch + [[1, 0]])
    return ops.stack([superdiag, ops.diag_part(t), subdiag], -2)


def _diagonal_sequence(diagonals):
    if isinstance(diagonals, (Tensor, Variable)) or not isinstance(diagonals, (tuple, list)) or len(diagonals) != 3:
        raise TdfValueError("Expected diagonals to be a sequence of length 3.")
    return [ops.materialize(t) if t.weak else t for t in map(ops.to_tensor, diagonals)]


def _compact_of_sequence(diagonals):
    """The 'sequence' form as compact diagonals: a super- or subdiagonal of M - 1 elements padded to M."""
    superdiag, maindiag, subdiag = _diagonal_sequence(diagonals)
    if subdiag.shape[:-1] != maindiag.shape[:-1] or superdiag.shape[:-1] != maindiag.shape[:-1]:
        raise TdfValueError(f"Tensors representing the three diagonals must have the same shape,except for the last "
                            f"dimension, got {subdiag.shape}, {maindiag.shape}, {superdiag.shape}")
    m = maindiag.shape[-1]

    def padded(t, name, padding):
        n = t.shape[-1]
        if n in (0, m):
            return t
        if n != m - 1:
            raise TdfValueError(f"Expected {name} to be have length {m} or {m - 1}, got {n}.")
        return ops.pad(t, [[0, 0]] * (t.ndim - 1) + [padding])
    return ops.stack([padded(superdiag, "superdiagonal", [0, 1]), maindiag, padded(subdiag, "subdiagonal", [1, 0])],
                     -2)


@builtin()
def tridiagonal_solve(diagonals, rhs, diagonals_format="compact", transpose_rhs=False, conjugate_rhs=False,
                      name=None, partial_pivoting=True, perturb_singular=False):
    """x with T x = rhs for the tridiagonal matrices T (Gaussian elimination with partial pivoting, or the Thomas
    algorithm; perturb_singular moves tiny pivots); rhs [..., M] or [..., M, K] ([..., K, M] with transpose_rhs).
    A singular T gives NaN, as TensorFlow's CPU kernel."""
    if truth(perturb_singular) and not truth(partial_pivoting):
        raise TdfValueError("partial_pivoting must be True if perturb_singular is.")
    if diagonals_format == "compact":
        d = ops.to_tensor(diagonals)
        d = ops.materialize(d) if d.weak else d
    elif diagonals_format == "sequence":
        d = _compact_of_sequence(diagonals)
    elif diagonals_format == "matrix":
        d = _diagonals_of_matrices(diagonals)
    else:
        raise TdfValueError(f"Unrecognized diagonals_format: {diagonals_format}")
    b = ops.to_tensor(rhs)
    b = ops.materialize(b, d.dtype if d.dtype.kind == "f" else None) if b.weak else b
    if d.ndim < 2:
        raise TdfValueError(f"Expected diagonals to have rank at least 2, got {d.ndim}")
    if b.ndim not in (d.ndim, d.ndim - 1):
        raise TdfValueError(f"Expected the rank of rhs to be {d.ndim - 1} or {d.ndim}, got {b.ndim}")
    if d.shape[:-2] != b.shape[:d.ndim - 2]:
        raise TdfValueError(f"Batch shapes {d.shape[:-2]} and {b.shape[:d.ndim - 2]} are incompatible")
    if d.shape[-2] != 3:
        raise TdfValueError(f"Expected 3 diagonals got {d.shape[-2]}")
    vector = b.ndim == d.ndim - 1
    if vector:
        b = ops.reshape(b, b.shape + (1,))
    elif truth(transpose_rhs):
        b = _maybe_adjoint(b, True)
    if d.shape[-1] != b.shape[-2]:
        raise TdfValueError(f"Expected number of left-hand sided and right-hand sides to be equal, got "
                            f"{d.shape[-1]} and {b.shape[-2]}")
    x = ops.tridiagonal_solve(d, b, truth(partial_pivoting), truth(perturb_singular))
    return ops.reshape(x, x.shape[:-1]) if vector else x


@builtin()
def tridiagonal_matmul(diagonals, rhs, diagonals_format="compact", name=None):
    """The tridiagonal matrices of ``diagonals`` times rhs [..., M, N]."""
    if diagonals_format == "sequence":
        parts = _diagonal_sequence(diagonals)
    elif diagonals_format in ("compact", "matrix"):
        d = _diagonals_of_matrices(diagonals) if diagonals_format == "matrix" else ops.to_tensor(diagonals)
        d = ops.materialize(d) if d.weak else d
        parts = [ops.getitem(d, (Ellipsis, i, slice(None))) for i in range(3)]
    else:
        raise TdfValueError(f"Unrecognized diagonals_format: {diagonals_format}")
    return ops.tridiagonal_matmul(*(ops.reshape(p, p.shape[:-1] + (1, p.shape[-1])) for p in parts), rhs)
