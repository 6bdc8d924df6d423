"""tf.linalg as builtins: einsum, tensordot, matvec, inv, det, slogdet, logdet, solve, cholesky,
triangular_solve, trace, diag, diag_part, eigh, eigvalsh, matrix_transpose, expm (plain names: ``tf.linalg.X``
is the builtin ``X``)."""
from __future__ import annotations

import numpy as np

from tapecli import ops
from tapecli.errors import TdfTypeError, TdfValueError
from tapecli.library.core import NamedResult, to_int, truth
from tapecli.runtime.values import PythonTuple, Tensor
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
def matvec(a, b, transpose_a=False, adjoint_a=False):
    return ops.matvec(a, b, truth(transpose_a) or truth(adjoint_a))


@builtin()
def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False, a_is_sparse=False,
           b_is_sparse=False, output_type=None, grad_a=False, grad_b=False, name=None):
    """tf.linalg.matmul; the is_sparse and grad_ flags are hints that change no value (real dtypes: the adjoint is
    the transpose)."""
    for t, adj, side in ((transpose_a, adjoint_a, "a"), (transpose_b, adjoint_b, "b")):
        if truth(t) and truth(adj):
            raise TdfValueError(f"tf.linalg.matmul: transpose_{side} and adjoint_{side} cannot both be True")
    if output_type is not None:
        raise TdfTypeError("tf.linalg.matmul: output_type is for int8 inputs, which tapecli does not have")
    return ops.matmul(_maybe_adjoint(a, truth(transpose_a) or truth(adjoint_a)),
                      _maybe_adjoint(b, truth(transpose_b) or truth(adjoint_b)))


def _maybe_adjoint(x, adjoint):
    t = ops.to_tensor(x)
    return ops.transpose(t, tuple(range(t.ndim - 2)) + (t.ndim - 1, t.ndim - 2)) if truth(adjoint) and t.ndim >= 2 \
        else t


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
def diag(diagonal):
    return ops.diag(diagonal)


@builtin("diag_part", "matrix_diag_part")
def diag_part(input):  # noqa: A002
    return ops.diag_part(input)


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
