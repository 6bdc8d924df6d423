"""tf.linalg.LinearOperator* as compositions of recorded ops: each operator knows its dense matrix
(``to_dense``), and its methods are the dense ones (matmul, solve, determinant, ...), except where TensorFlow's
structured formula is cheaper and as exact (a diagonal's product, a triangle's solve). Gradients flow to the
tensors the operator was built from."""
from __future__ import annotations

import numpy as np

from tapecli import ops
from tapecli.errors import NoAttribute, ShapeError, TdfTypeError, TdfValueError
from tapecli.interpreter.conversions import to_int, truth
from tapecli.interpreter.objects import BoundMethod, ProgramObject
from tapecli.interpreter.registry import builtin
from tapecli.runtime.limits import admit
from tapecli.runtime.numpy_gate import weighed
from tapecli.runtime.values import DType, Tensor, TensorShape, Variable
from tapecli.library.core import tensor_argument as _t

# NumPy's constructors, each result weighed before it is made (num_rows=2**31 would be 16 GB of ones).
_ones, _zeros, _eye = (weighed("numpy", name, getattr(np, name)) for name in ("ones", "zeros", "eye"))


def _adj(x: Tensor) -> Tensor:
    perm = list(range(x.ndim))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return ops.transpose(x, perm)


def _arg(x, adjoint_arg) -> Tensor:
    """A matmul/solve argument, adjointed when ``adjoint_arg``."""
    return _adj(_t(x)) if truth(adjoint_arg) else _t(x)


def _col(x: Tensor) -> Tensor:
    return ops.reshape(x, (*x.shape, 1))


def _uncol(x: Tensor) -> Tensor:
    return ops.reshape(x, x.shape[:-1])


def _batch(batch_shape) -> list[int]:
    return [] if batch_shape is None else [int(b) for b in np.atleast_1d(np.asarray(_t(batch_shape).value))]


def _const(array, dtype) -> Tensor:
    return Tensor(np.asarray(array, dtype=dtype))


class LinearOperator(ProgramObject):
    """A dense-backed operator; subclasses give ``dense()`` (and, where TensorFlow's is structured, more)."""

    kind_word = "a LinearOperator"

    def __init__(self, name, flags):
        self.name = name
        self.flags = flags

    def dense(self) -> Tensor:
        raise NotImplementedError

    # ---------------------------------------------------------------- the methods
    def matmul(self, x, adjoint=False, adjoint_arg=False, name=None):
        if isinstance(x, LinearOperator):
            return Composition([self if not truth(adjoint) else Adjoint(self), x])
        return self.apply(_arg(x, adjoint_arg), truth(adjoint))

    def oriented(self, adjoint) -> Tensor:
        return _adj(self.dense()) if adjoint else self.dense()

    def apply(self, x, adjoint):
        return ops.matmul(self.oriented(adjoint), x)

    def matvec(self, x, adjoint=False, name=None):
        return _uncol(self.apply(_col(_t(x)), truth(adjoint)))

    def solve(self, rhs, adjoint=False, adjoint_arg=False, name=None):
        return self.solve_dense(_arg(rhs, adjoint_arg), truth(adjoint))

    def solve_dense(self, rhs, adjoint):
        return ops.solve(self.oriented(adjoint), rhs)

    def solvevec(self, rhs, adjoint=False, name=None):
        return _uncol(self.solve_dense(_col(_t(rhs)), truth(adjoint)))

    def determinant(self, name=None):
        return ops.det(self.dense())

    def log_abs_determinant(self, name=None):
        return ops.slogdet(self.dense())[1]

    def diag_part(self, name=None):
        return ops.diag_part(self.dense())

    def trace(self, name=None):
        return ops.reduce_sum(self.diag_part(), axis=-1)

    def add_to_tensor(self, x, name=None):
        return ops.add(self.dense(), _t(x))

    def to_dense(self, name=None):
        return self.dense()

    def inverse(self, name=None):
        return Inversion(self)

    def adjoint(self, name=None):
        return Adjoint(self)

    def cholesky(self, name=None):
        return LowerTriangular(ops.cholesky(self.dense()))

    def eigvals(self, name=None):
        return ops.eigh_values(self.dense())

    # ---------------------------------------------------------------- program access
    def get_attribute(self, interp, attr, node):
        methods = {"matmul": self.matmul, "matvec": self.matvec, "solve": self.solve, "solvevec": self.solvevec,
                   "determinant": self.determinant, "log_abs_determinant": self.log_abs_determinant,
                   "diag_part": self.diag_part, "trace": self.trace, "add_to_tensor": self.add_to_tensor,
                   "to_dense": self.to_dense, "inverse": self.inverse, "adjoint": self.adjoint,
                   "cholesky": self.cholesky, "eigvals": self.eigvals}
        if attr in methods:
            fn = methods[attr]
            return BoundMethod(attr, lambda call_node, *a, **k: fn(*a, **k))
        shape = list(self.dense().shape)
        values = {"shape": _shape(shape), "batch_shape": _shape(shape[:-2]), "range_dimension": shape[-2],
                  "domain_dimension": shape[-1], "tensor_rank": len(shape), "name": self.name,
                  "dtype": DType(self.dense().dtype.name), "H": Adjoint(self)}
        values.update({k: self.flags.get(k) for k in ("is_non_singular", "is_self_adjoint", "is_positive_definite")})
        values["is_square"] = self.flags.get("is_square") if self.flags.get("is_square") is not None else \
            shape[-1] == shape[-2]
        if attr in values:
            return values[attr]
        raise NoAttribute(f"{type(self).__name__} has no attribute {attr} in tapecli",
                           hint="it has " + ", ".join(sorted([*methods, *values])))


def _flags(is_non_singular=None, is_self_adjoint=None, is_positive_definite=None, is_square=None):
    return {"is_non_singular": is_non_singular, "is_self_adjoint": is_self_adjoint,
            "is_positive_definite": is_positive_definite, "is_square": is_square}


class FullMatrix(LinearOperator):
    def __init__(self, matrix, name="LinearOperatorFullMatrix", **flags):
        super().__init__(name, flags)
        self.matrix = _t(matrix)
        if self.matrix.ndim < 2:
            raise ShapeError(f"LinearOperatorFullMatrix needs a matrix, got shape {list(self.matrix.shape)}")

    def dense(self):
        return self.matrix


class Diag(LinearOperator):
    """diag(d): products, quotients and sums of the diagonal, as TensorFlow's."""

    def __init__(self, diag, name="LinearOperatorDiag", **flags):
        super().__init__(name, flags)
        self.d = _t(diag)

    def dense(self):
        return ops.diag(self.d)

    def apply(self, x, adjoint):
        return ops.mul(_col(self.d), x)

    def solve_dense(self, rhs, adjoint):
        return ops.div(rhs, _col(self.d))

    def determinant(self, name=None):
        return ops.reduce_prod(self.d, axis=-1)

    def log_abs_determinant(self, name=None):
        return ops.reduce_sum(ops.log(ops.abs_(self.d)), axis=-1)

    def diag_part(self, name=None):
        return self.d

    def inverse(self, name=None):
        return Diag(ops.reciprocal(self.d))


class ScaledIdentity(Diag):
    def __init__(self, num_rows, multiplier, name="LinearOperatorScaledIdentity", **flags):
        m = _t(multiplier)
        n = to_int(num_rows, "num_rows")
        super().__init__(ops.mul(_col(m), _const(_ones(n), m.dtype)), name, **flags)


def identity_operator(num_rows, batch_shape=None, dtype=None, name="LinearOperatorIdentity", **flags):
    n = to_int(num_rows, "num_rows")
    shape = _batch(batch_shape)
    want = np.float32 if dtype is None else np.dtype(dtype.np if isinstance(dtype, DType) else dtype)
    return Diag(_const(_ones((*shape, n)), want), name, **flags)


class LowerTriangular(LinearOperator):
    def __init__(self, tril, name="LinearOperatorLowerTriangular", **flags):
        super().__init__(name, flags)
        self.tril = ops.band_part(_t(tril), -1, 0)

    def dense(self):
        return self.tril

    def solve_dense(self, rhs, adjoint):
        return ops.triangular_solve(self.tril, rhs, lower=True, adjoint=adjoint)

    def determinant(self, name=None):
        return ops.reduce_prod(ops.diag_part(self.tril), axis=-1)

    def log_abs_determinant(self, name=None):
        return ops.reduce_sum(ops.log(ops.abs_(ops.diag_part(self.tril))), axis=-1)


class Zeros(LinearOperator):
    def __init__(self, num_rows, num_columns=None, batch_shape=None, dtype=None, name="LinearOperatorZeros",
                 **flags):
        super().__init__(name, flags)
        rows = to_int(num_rows, "num_rows")
        cols = rows if num_columns is None else to_int(num_columns, "num_columns")
        if rows != cols and flags.get("is_square") is not False:
            raise TdfValueError(f"LinearOperatorZeros is square unless is_square=False, but got num_rows({rows}) != "
                                f"num_columns({cols})")
        shape = _batch(batch_shape)
        want = np.float32 if dtype is None else np.dtype(dtype.np if isinstance(dtype, DType) else dtype)
        self.zeros = _const(_zeros((*shape, rows, cols)), want)

    def dense(self):
        return self.zeros


def _operators(value, what) -> list:
    items = list(value) if isinstance(value, (list, tuple)) else None
    if not items or not all(isinstance(o, LinearOperator) for o in items):
        raise TdfTypeError(f"{what} takes a non-empty list of LinearOperators")
    return items


class Composition(LinearOperator):
    def __init__(self, operators, name=None, **flags):
        super().__init__(name or "LinearOperatorComposition", flags)
        self.parts = _operators(operators, "LinearOperatorComposition")

    def dense(self):
        out = self.parts[-1].dense()
        for part in reversed(self.parts[:-1]):
            out = ops.matmul(part.dense(), out)
        return out


class Adjoint(LinearOperator):
    def __init__(self, operator, name=None, **flags):
        super().__init__(name or "LinearOperatorAdjoint", flags)
        self.base = operator

    def dense(self):
        return _adj(self.base.dense())


class Inversion(LinearOperator):
    def __init__(self, operator, name=None, **flags):
        super().__init__(name or "LinearOperatorInversion", flags)
        self.base = operator

    def dense(self):
        return ops.inv(self.base.dense())

    def apply(self, x, adjoint):
        return self.base.solve_dense(x, adjoint)

    def solve_dense(self, rhs, adjoint):
        return self.base.apply(rhs, adjoint)


class Kronecker(LinearOperator):
    def __init__(self, operators, name=None, **flags):
        super().__init__(name or "LinearOperatorKronecker", flags)
        self.parts = _operators(operators, "LinearOperatorKronecker")

    def dense(self):
        out = self.parts[0].dense()
        for part in self.parts[1:]:
            b = part.dense()
            m, n, p, q = out.shape[-2], out.shape[-1], b.shape[-2], b.shape[-1]
            a4 = ops.reshape(out, (*out.shape[:-2], m, 1, n, 1))
            b4 = ops.reshape(b, (*b.shape[:-2], 1, p, 1, q))
            out = ops.reshape(ops.mul(a4, b4), (*np.broadcast_shapes(out.shape[:-2], b.shape[:-2]), m * p, n * q))
        return out


def _block_rows(rows, dtype):
    """The dense matrix of a grid of blocks (None: zeros of the block's shape)."""
    heights = [next(b for b in row if b is not None).shape[-2] for row in rows]
    widths = [next(r[j] for r in rows if j < len(r) and r[j] is not None).shape[-1] for j in range(len(rows[-1]))]
    out = []
    for i, row in enumerate(rows):
        cells = [row[j] if j < len(row) and row[j] is not None else _const(_zeros((heights[i], widths[j])), dtype)
                 for j in range(len(widths))]
        out.append(ops.concat(cells, -1))
    return ops.concat(out, -2)


class BlockDiag(LinearOperator):
    def __init__(self, operators, name=None, **flags):
        super().__init__(name or "LinearOperatorBlockDiag", flags)
        self.parts = _operators(operators, "LinearOperatorBlockDiag")

    def dense(self):
        blocks = [p.dense() for p in self.parts]
        return _block_rows([[b if i == j else None for j in range(len(blocks))] for i, b in enumerate(blocks)],
                           blocks[0].dtype)


class BlockLowerTriangular(LinearOperator):
    def __init__(self, operators, name=None, **flags):
        super().__init__(name or "LinearOperatorBlockLowerTriangular", flags)
        if not isinstance(operators, (list, tuple)) or any(not isinstance(r, (list, tuple)) or len(r) != i + 1
                                                           for i, r in enumerate(operators)):
            raise TdfValueError("LinearOperatorBlockLowerTriangular takes rows of operators, row i holding i + 1")
        self.rows = [_operators(r, "LinearOperatorBlockLowerTriangular") for r in operators]

    def dense(self):
        rows = [[o.dense() for o in r] for r in self.rows]
        return _block_rows(rows, rows[0][0].dtype)


class LowRankUpdate(LinearOperator):
    """base + U diag(d) V^H (V = U and d = 1 unless given)."""

    def __init__(self, base_operator, u, diag_update=None, v=None, is_diag_update_positive=None, name=None,
                 **flags):
        super().__init__(name or "LinearOperatorLowRankUpdate", flags)
        self.base, self.u = base_operator, _t(u)
        self.v = self.u if v is None else _t(v)
        self.d = None if diag_update is None else _t(diag_update)

    def dense(self):
        u = self.u if self.d is None else ops.mul(self.u, ops.reshape(self.d, (*self.d.shape[:-1], 1, self.d.shape[-1])))
        return ops.add(self.base.dense(), ops.matmul(u, _adj(self.v)))


class Householder(LinearOperator):
    """I - 2 v v^H / (v^H v)."""

    def __init__(self, reflection_axis, name="LinearOperatorHouseholder", **flags):
        super().__init__(name, flags)
        self.v = _t(reflection_axis)

    def dense(self):
        v = _col(self.v)
        n = self.v.shape[-1]
        outer = ops.matmul(v, _adj(v))
        norm = _col(_col(ops.reduce_sum(ops.square(self.v), axis=-1)))
        return ops.sub(_const(_eye(n), self.v.dtype), ops.div(ops.mul(outer, 2.0), norm))


class Permutation(LinearOperator):
    def __init__(self, perm, dtype=None, name="LinearOperatorPermutation", **flags):
        super().__init__(name, flags)
        p = np.asarray(_t(perm).value).astype(np.int64)
        want = np.float32 if dtype is None else np.dtype(dtype.np if isinstance(dtype, DType) else dtype)
        self.matrix = _const(_eye(p.shape[-1])[p], want)

    def dense(self):
        return self.matrix


class Toeplitz(LinearOperator):
    def __init__(self, col, row, name="LinearOperatorToeplitz", **flags):
        super().__init__(name, flags)
        self.col, self.row = _t(col), _t(row)

    def dense(self):
        n = self.col.shape[-1]
        values = ops.concat([ops.reverse(ops.getitem(self.row, (Ellipsis, slice(1, None))), [-1]), self.col], -1)
        admit(n * n, 8, "LinearOperatorToeplitz's indices")
        index = np.arange(n)[:, None] - np.arange(n)[None, :] + (n - 1)
        return ops.gather(values, Tensor(index.astype(np.int64)), axis=values.ndim - 1)


class Tridiag(LinearOperator):
    def __init__(self, diagonals, diagonals_format="compact", name="LinearOperatorTridiag", **flags):
        super().__init__(name, flags)
        if diagonals_format not in ("compact", "matrix", "sequence"):
            raise TdfValueError(f"diagonals_format must be 'compact', 'matrix' or 'sequence', got {diagonals_format!r}")
        if diagonals_format == "matrix":
            self.matrix = _t(diagonals)
            return
        if diagonals_format == "sequence":       # (each converted as tf.convert_to_tensor: a literal is float32)
            if isinstance(diagonals, (Tensor, Variable)):
                diagonals = ops.rows(ops.to_tensor(diagonals))
            if len(diagonals) != 3:
                raise TdfValueError("diagonals_format='sequence' takes three diagonals: super, main and sub")
            sup, main, sub = (ops.materialize(t) if t.weak else t for t in map(_t, diagonals))
        else:
            d = _t(diagonals)
            sup, main, sub = (ops.getitem(d, (Ellipsis, i, slice(None))) for i in range(3))
        n = main.shape[-1]
        eye = _eye(n)
        self.matrix = ops.add(ops.add(ops.mul(_col(sup), _const(_eye(n, k=1), main.dtype)),
                                      ops.mul(_col(main), _const(eye, main.dtype))),
                              ops.mul(_col(sub), _const(_eye(n, k=-1), main.dtype)))

    def dense(self):
        return self.matrix


def _constructor(name, cls):
    def make(*args, is_non_singular=None, is_self_adjoint=None, is_positive_definite=None, is_square=None,
             **kwargs):
        flags = _flags(is_non_singular, is_self_adjoint, is_positive_definite, is_square)
        kwargs.pop("assert_proper_shapes", None)
        return cls(*args, **kwargs, **flags)
    make.__name__ = name
    builtin(f"linalg.{name}")(make)


for _name, _cls in {"LinearOperatorFullMatrix": FullMatrix, "LinearOperatorDiag": Diag,
                    "LinearOperatorScaledIdentity": ScaledIdentity, "LinearOperatorIdentity": identity_operator,
                    "LinearOperatorLowerTriangular": LowerTriangular, "LinearOperatorZeros": Zeros,
                    "LinearOperatorComposition": Composition, "LinearOperatorAdjoint": Adjoint,
                    "LinearOperatorInversion": Inversion, "LinearOperatorKronecker": Kronecker,
                    "LinearOperatorBlockDiag": BlockDiag, "LinearOperatorBlockLowerTriangular": BlockLowerTriangular,
                    "LinearOperatorLowRankUpdate": LowRankUpdate, "LinearOperatorHouseholder": Householder,
                    "LinearOperatorPermutation": Permutation, "LinearOperatorToeplitz": Toeplitz,
                    "LinearOperatorTridiag": Tridiag}.items():
    _constructor(_name, _cls)


def _shape(dims: list) -> TensorShape:
    """An operator's shape as TensorFlow gives it: a TensorShape."""
    return TensorShape(np.array(dims, dtype=np.int64), weak=True)
