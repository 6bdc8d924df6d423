"""tf.linalg as builtins: einsum, tensordot, matvec, inv, det, slogdet, logdet, solve, cholesky,
triangular_solve, trace, diag, diag_part, eigh, eigvalsh, matrix_transpose (plain names: ``tf.linalg.X``
is the builtin ``X``)."""
from __future__ import annotations

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
