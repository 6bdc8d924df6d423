"""tf.linalg: einsum, inv, det, slogdet, solve, cholesky, triangular_solve, eigh (one entry per op,
TensorFlow's gradient formulas written with recordable ops, forward-mode rules), and compositions:
tensordot, matvec, trace, diag, diag_part. Matrices are the last two axes; leading axes are a batch.

The rules keep no extra batch dimension (``batchable=False``): a jacobian through them is taken one
row at a time."""
from __future__ import annotations

import math

import numpy as np

from tapecli.errors import KernelValueError, ShapeError, TdfTypeError, TdfValueError
from tapecli.kernels import tf_einsum, tf_lstsq
from tapecli.ops.core import apply, materialize, register, to_tensor
from tapecli.ops.elementwise import abs_, add, div, mul, neg, pow_, sqrt, square, sub, where, zeros_like
from tapecli.ops.linalg import _swap_last, matmul
from tapecli.ops.reductions import reduce_max, reduce_sum
from tapecli.ops.shape import broadcast_to, getitem, reshape, transpose
from tapecli.runtime.limits import admit_result
from tapecli.runtime.values import dtype_name, Tensor, Variable
from tapecli.ops.gathers import band_part
from tapecli.runtime import spelling


def _t(x):
    return _swap_last(x)


def _expand2(x):
    """A batch of scalars [..] as [.., 1, 1]: it broadcasts against matrices."""
    return reshape(x, x.shape + (1, 1))


def _eye_like(a):
    n = a.shape[-1]
    return Tensor(np.broadcast_to(np.eye(n, dtype=a.dtype), a.shape).copy())


# -------------------------------------------------------------------- einsum

def parse_einsum(equation: str, ranks) -> tuple[list[str], str]:
    """(input subscripts, output subscripts) with ``...`` spelled out as letters and the implicit
    output (the letters used once, sorted) made explicit."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    ins = lhs.split(",")
    if len(ins) != len(ranks):
        raise TdfValueError(f"einsum: the equation {equation!r} names {len(ins)} operands, got {len(ranks)}")
    spare = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in eq]
    ell = 0
    out_ins = []
    for spec, rank in zip(ins, ranks):
        if "..." in spec:
            k = rank - (len(spec) - 3)
            if k < 0:
                raise ShapeError(f"einsum: operand {spec!r} has rank {rank}")
            ell = max(ell, k)
            spec = spec.replace("...", "".join(spare[len(spare) - k:]) if k else "")
        elif len(spec) != rank:
            raise ShapeError(f"einsum: subscripts {spec!r} name {len(spec)} axes of an operand of rank {rank}")
        if not spec.isalpha() and spec:
            raise TdfValueError(f"einsum: subscripts must be letters, got {spec!r}")
        out_ins.append(spec)
    letters = "".join(spare[len(spare) - ell:]) if ell else ""
    if arrow:
        out = rhs.replace("...", letters)
    else:
        counts = {}
        for spec in out_ins:
            for c in spec:
                counts[c] = counts.get(c, 0) + 1
        out = letters + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in letters))
    return out_ins, out


def _diagonal(spec: str, x: Tensor) -> tuple[str, Tensor]:
    """An operand whose subscripts repeat an index (``ii``, ``bii``) as its diagonal over those axes, the index
    once, last (diag_part's gathers: their gradient is TensorFlow's, zeros off the diagonal)."""
    while len(set(spec)) != len(spec):
        c = next(c for c in spec if spec.count(c) > 1)
        p = spec.index(c)
        q = spec.index(c, p + 1)
        rest = [k for k in range(len(spec)) if k not in (p, q)]
        x = diag_part(transpose(x, rest + [p, q]))
        spec = "".join(spec[k] for k in rest) + c
    return spec, x


def _einsum_vjp(r, g, needs=None):
    ins, out = r.attrs["ins"], r.attrs["out"]
    xs = r.inputs
    grads = []
    for i, spec in enumerate(ins):
        if needs is not None and not needs[i]:
            grads.append(None)
            continue
        others = [(s, x) for j, (s, x) in enumerate(zip(ins, xs)) if j != i]
        known = set(out).union(*[set(s) for s, _ in others])
        kept = "".join(c for c in spec if c in known)
        gi = einsum_subscripts([out] + [s for s, _ in others], kept, [g] + [x for _, x in others],
                               r.attrs["spread"])
        if kept != spec:            # letters summed within this operand alone: broadcast back
            shape = tuple(xs[i].shape[k] if c in known else 1 for k, c in enumerate(spec))
            gi = broadcast_to(reshape(gi, shape), xs[i].shape)
        grads.append(gi)
    return tuple(grads)


def _einsum_jvp(r, ts):
    """The sum over the operands of the einsum with that operand's tangent in its place; a tangent's leading
    (batch) axes, beyond its operand's, take letters of their own that lead the result too."""
    import string           # here: a small run never imports it (its Template compiles a pattern at import)
    ins, out = r.attrs["ins"], r.attrs["out"]
    spare = [c for c in string.ascii_letters if c not in set(out).union(*ins)]
    total = None
    for i, t in enumerate(ts):
        if t is None:
            continue
        batch = "".join(spare[:t.ndim - r.inputs[i].ndim])
        args, subs = list(r.inputs), list(ins)
        args[i], subs[i] = t, batch + ins[i]
        part = einsum_subscripts(subs, batch + out, args, r.attrs["spread"])
        total = part if total is None else add(total, part)
    return total


EINSUM = register("einsum", weighed=True, numpy=tf_einsum.einsum, vjp=_einsum_vjp, jvp=_einsum_jvp, batchable=False)


def einsum_subscripts(ins, out, xs, spread="") -> Tensor:
    """The einsum ``ins -> out`` (no label repeated within an operand; ``spread``: the labels an ellipsis stands
    for) as TensorFlow computes it: one Einsum of one or two operands, or a chain of them in opt_einsum's order."""
    xs = [to_tensor(x) for x in xs]
    sizes = {c: n for spec, x in zip(ins, xs) for c, n in zip(spec, x.shape)}
    admit_result([sizes.get(c, 1) for c in out], xs[0].dtype if xs else np.float32, "the result of einsum")
    if len(xs) <= 2:
        return apply(EINSUM, tuple(xs), ins=tuple(ins), out=out, spread=spread)
    for taken, step_ins, step_out in tf_einsum.contraction_order(ins, out, sizes):
        step = [xs.pop(k) for k in taken]
        xs.append(apply(EINSUM, tuple(step), ins=tuple(step_ins), out=step_out, spread=spread))
    return xs[0]


def einsum(equation: str, *inputs) -> Tensor:
    xs = [to_tensor(x) for x in inputs]
    ins, out = parse_einsum(equation, [x.ndim for x in xs])
    spread = {c for spec in ins for c in spec if c not in equation}     # the axes "..." stands for: they broadcast
    sizes = {}
    for spec, x in zip(ins, xs):
        for c, n in zip(spec, x.shape):
            if c in spread and 1 in (sizes.get(c, n), n):
                sizes[c] = max(sizes.get(c, n), n)
            elif sizes.setdefault(c, n) != n:
                raise ShapeError(f"einsum: index {c!r} has sizes {sizes[c]} and {n} "
                                 f"(shapes {', '.join(str(list(x.shape)) for x in xs)})")
    xs = [broadcast_to(x, tuple(sizes[c] for c in spec)) if tuple(sizes[c] for c in spec) != x.shape else x
          for spec, x in zip(ins, xs)]
    for c in out:
        if c not in sizes:
            raise TdfValueError(f"einsum: output index {c!r} appears in no operand of {equation!r}")
    if len(out) != len(set(out)):
        raise TdfValueError(f"einsum: output index repeated in {equation!r}")
    ins, xs = map(list, zip(*(_diagonal(spec, x) for spec, x in zip(ins, xs)))) if xs else (ins, xs)
    return einsum_subscripts(ins, out, xs, "".join(sorted(spread)))


def tensordot(a, b, axes) -> Tensor:
    """Contract ``axes`` of a with those of b (an int N: the last N of a with the first N of b), as TensorFlow's
    tensordot computes it: a's free axes then its contracted ones, and b's contracted axes then its free ones,
    each as a matrix (transposed and reshaped where that changes them), one product, reshaped to the free axes."""
    a, b = to_tensor(a), to_tensor(b)
    if isinstance(axes, int):
        if axes < 0 or axes > min(a.ndim, b.ndim):
            raise ShapeError(f"tensordot: axes={axes} is more than the ranks {a.ndim} and {b.ndim} allow")
        ax_a, ax_b = list(range(a.ndim - axes, a.ndim)), list(range(axes))
    else:
        ax_a, ax_b = [int(x) % max(a.ndim, 1) for x in axes[0]], [int(x) % max(b.ndim, 1) for x in axes[1]]
    if len(ax_a) != len(ax_b):
        raise ShapeError(f"tensordot: {len(ax_a)} axes of a against {len(ax_b)} of b")
    for i, j in zip(ax_a, ax_b):
        if a.shape[i] != b.shape[j]:
            raise ShapeError(f"tensordot: axis {i} of shape {list(a.shape)} and axis {j} of shape "
                             f"{list(b.shape)} differ")
    a_matrix, a_free = _tensordot_matrix(a, ax_a, flipped=False)
    b_matrix, b_free = _tensordot_matrix(b, ax_b, flipped=True)
    product = matmul(a_matrix, b_matrix)
    shape = tuple(a_free + b_free)
    return product if product.shape == shape else reshape(product, shape)


def _tensordot_matrix(x, axes: list, flipped: bool) -> tuple:
    """TensorFlow's _tensordot_reshape: ``x`` as a matrix of its free axes by its contracted ones (``flipped``:
    the contracted ones first), and the free axes' sizes."""
    free = [i for i in range(x.ndim) if i not in axes]
    free_dims = [x.shape[i] for i in free]
    free_size, axes_size = math.prod(free_dims), math.prod(x.shape[i] for i in axes)
    perm = axes + free if flipped else free + axes
    shape = (axes_size, free_size) if flipped else (free_size, axes_size)
    if perm != list(range(x.ndim)):
        x = transpose(x, perm)
    return (x if x.shape == shape else reshape(x, shape)), free_dims


def matvec(a, b, transpose_a=False) -> Tensor:
    a, b = to_tensor(a), to_tensor(b)
    if a.ndim < 2 or b.ndim < 1:
        raise ShapeError(f"matvec needs a matrix and a vector, got shapes {list(a.shape)} and {list(b.shape)}")
    if transpose_a:
        a = _t(a)
    if a.shape[-1] != b.shape[-1]:
        raise ShapeError(f"matvec: a matrix of shape {list(a.shape)} and a vector of shape {list(b.shape)}")
    y = matmul(a, reshape(b, b.shape + (1,)))
    return reshape(y, y.shape[:-1])


# -------------------------------------------------------------- square matrices

def _square(x, what) -> Tensor:
    t = to_tensor(x)
    if t.weak:
        t = materialize(t)     # an int literal stays int: TensorFlow refuses it too
    if t.dtype.kind != "f":
        raise TdfTypeError(f"{what} needs a float tensor, got {dtype_name(t.dtype)}", hint=spelling.cast("x", "float32"))
    if t.ndim < 2 or t.shape[-1] != t.shape[-2]:
        raise ShapeError(f"{what} needs square matrices in the last two axes, got shape {list(t.shape)}")
    return t


def _linalg_kernel(f):
    def run(*xs, **attrs):
        try:
            return np.asarray(f(*xs, **attrs))
        except np.linalg.LinAlgError as e:
            raise KernelValueError(f"the matrix is singular or not positive definite ({e})") from None
    return run


def _inverse_kernel(a):
    from tapecli.kernels import tf_linalg       # (at first use, as solve's)
    x = tf_linalg.inverse(a)            # (TensorFlow's bits for the small matrices Eigen inverts unblocked)
    return np.linalg.inv(a) if x is None else x


INV = register("inv", weighed=True, numpy=_linalg_kernel(_inverse_kernel), batchable=False, saves=("out",),
               vjp=lambda r, g: (neg(matmul(_t(r.output), matmul(g, _t(r.output)))),),
               jvp=lambda r, ts: neg(matmul(r.output, matmul(ts[0], r.output))))


def _det_vjp(r, g):
    a, d = r.inputs[0], r.output
    return (mul(_expand2(mul(g, d)), inv(_t(a))),)        # (TensorFlow's matrix_inverse(a, adjoint=True))


def _det_jvp(r, ts):
    a, d = r.inputs[0], r.output
    return mul(d, reduce_sum(mul(_t(inv(a)), ts[0]), axis=(-2, -1)))


def _slogdet(a):
    """(sign, log |det|): TensorFlow's SLogDet where kernels/tf_linalg.py follows it, else NumPy's."""
    from tapecli.kernels import tf_linalg       # (at first use, as solve's)
    found = tf_linalg.slogdet(a)
    return np.linalg.slogdet(a) if found is None else found


def _det_kernel(a):
    """MatrixDeterminant's ``sign * exp(log |det|)``, the C library's exp of each (NumPy's det past
    kernels/tf_linalg.py's sizes)."""
    from tapecli.kernels import tf_float32, tf_linalg
    found = tf_linalg.slogdet(a)
    if found is None:
        return np.linalg.det(a)
    sign, log_abs = found
    exp = tf_float32.exp if a.dtype == np.float32 else math.exp
    return sign * np.array([exp(v) for v in log_abs.reshape(-1)], a.dtype).reshape(log_abs.shape)


DET = register("det", weighed=True, numpy=_linalg_kernel(_det_kernel), batchable=False, saves=(0, "out"), vjp=_det_vjp,
               jvp=_det_jvp)
LOG_ABS_DET = register("log_abs_det", weighed=True, numpy=_linalg_kernel(lambda a: _slogdet(a)[1]), batchable=False,
                       saves=(0,), vjp=lambda r, g: (mul(_expand2(g), inv(_t(r.inputs[0]))),),
                       jvp=lambda r, ts: reduce_sum(mul(_t(inv(r.inputs[0])), ts[0]), axis=(-2, -1)))


def _solve_vjp(r, g, needs=None):
    a, b = r.inputs
    x = r.output
    gb = solve(_t(a), g)
    ga = neg(matmul(gb, _t(x))) if needs is None or needs[0] else None
    return ga, gb


def _solve_jvp(r, ts):
    a, b = r.inputs
    rhs = ts[1] if ts[1] is not None else None
    if ts[0] is not None:
        da_x = matmul(ts[0], r.output)
        rhs = neg(da_x) if rhs is None else sub(rhs, da_x)
    return solve(a, rhs)


def _solve_kernel(a, b):
    from tapecli.kernels import tf_linalg       # (at first use: most programs solve nothing)
    x = tf_linalg.solve(a, b)
    return np.linalg.solve(a, b) if x is None else x


SOLVE = register("solve", weighed=True, numpy=_linalg_kernel(_solve_kernel), batchable=False, saves=(0, "out"),
                 vjp=_solve_vjp, jvp=_solve_jvp)


def _tri_kernel(a, b, lower=True, adjoint=False):
    m = np.tril(a) if lower else np.triu(a)
    if adjoint:
        m = np.swapaxes(m, -1, -2)
    return np.linalg.solve(m, b)


def _tri_vjp(r, g, needs=None):
    a, b = r.inputs
    lower, adjoint = r.attrs["lower"], r.attrs["adjoint"]
    gb = triangular_solve(a, g, lower=lower, adjoint=not adjoint)
    ga = None
    if needs is None or needs[0]:
        ga = neg(matmul(r.output, _t(gb))) if adjoint else neg(matmul(gb, _t(r.output)))
        ga = band_part(ga, -1, 0) if lower else band_part(ga, 0, -1)
    return ga, gb


def _tri_jvp(r, ts):
    a, b = r.inputs
    lower, adjoint = r.attrs["lower"], r.attrs["adjoint"]
    rhs = ts[1]
    if ts[0] is not None:
        ta = band_part(ts[0], -1, 0) if lower else band_part(ts[0], 0, -1)
        da_x = matmul(_t(ta) if adjoint else ta, r.output)
        rhs = neg(da_x) if rhs is None else sub(rhs, da_x)
    return triangular_solve(a, rhs, lower=lower, adjoint=adjoint)


TRIANGULAR_SOLVE = register("triangular_solve", weighed=True, numpy=_linalg_kernel(_tri_kernel), batchable=False,
                            saves=(0, "out"), vjp=_tri_vjp, jvp=_tri_jvp)


def _cholesky_kernel(a):
    # the symmetric part: for a symmetric input (the only kind TensorFlow defines) it is the input,
    # and the forward then agrees with TensorFlow's symmetric gradient for any perturbation
    return np.linalg.cholesky((a + np.swapaxes(a, -1, -2)) / 2)


def _phi(x):
    """The lower triangle with the diagonal halved."""
    return sub(band_part(x, -1, 0), mul(0.5, mul(x, _eye_like(x))))


def _cholesky_vjp(r, g):
    # TensorFlow's CholeskyGrad
    ell = r.output
    l_inv = triangular_solve(ell, _eye_like(ell), lower=True)
    middle = _phi(matmul(_t(ell), g))
    ga = matmul(_t(l_inv), matmul(middle, l_inv))
    return (mul(0.5, add(ga, _t(ga))),)


def _cholesky_jvp(r, ts):
    ell = r.output
    t = mul(0.5, add(ts[0], _t(ts[0])))
    l_inv = triangular_solve(ell, _eye_like(ell), lower=True)
    return matmul(ell, _phi(matmul(l_inv, matmul(t, _t(l_inv)))))


CHOLESKY = register("cholesky", weighed=True, numpy=_linalg_kernel(_cholesky_kernel), batchable=False, saves=("out",),
                    vjp=_cholesky_vjp, jvp=_cholesky_jvp)


# ------------------------------------------------------------------------- eigh

def _eigh_f(w):
    """F[i, j] = 1 / (w[j] - w[i]) off the diagonal, 0 on it."""
    diff = sub(reshape(w, w.shape[:-1] + (1, w.shape[-1])), reshape(w, w.shape + (1,)))
    eye = _eye_like(diff)
    return where(Tensor(eye.value > 0), zeros_like(diff), div(1.0, add(diff, eye)))


def _lower_sym(ga):
    """TensorFlow's eigh convention: the input's lower triangle is read; its gradient is the lower
    triangle of ga + ga^T with the diagonal halved."""
    return _phi(add(ga, _t(ga)))


def _eigh_values_vjp(r, g):
    v = eigh_vectors(r.inputs[0])
    return (_lower_sym(matmul(v, mul(reshape(g, g.shape + (1,)), _t(v)))),)


def _eigh_vectors_vjp(r, g):
    a = r.inputs[0]
    v = r.output
    f = _eigh_f(eigh_values(a))
    return (_lower_sym(matmul(v, matmul(mul(f, matmul(_t(v), g)), _t(v)))),)


def _sym_lower_tangent(t):
    """The symmetric matrix whose lower triangle is t's: what the lower-reading forward sees."""
    low = band_part(t, -1, 0)
    return add(low, _t(sub(low, mul(t, _eye_like(t)))))


def _eigh_values_jvp(r, ts):
    v = eigh_vectors(r.inputs[0])
    m = matmul(_t(v), matmul(_sym_lower_tangent(ts[0]), v))
    return reduce_sum(mul(m, _eye_like(m)), axis=-1)


def _eigh_vectors_jvp(r, ts):
    v = r.output
    f = _eigh_f(eigh_values(r.inputs[0]))
    m = matmul(_t(v), matmul(_sym_lower_tangent(ts[0]), v))
    return matmul(v, mul(f, m))


def _eigh_kernel(part):
    def run(a):
        w, v = np.linalg.eigh(a)
        return w if part == 0 else v
    return _linalg_kernel(run)


EIGH_VALUES = register("eigh_values", weighed=True, numpy=_eigh_kernel(0), batchable=False, saves=(0,),
                       vjp=_eigh_values_vjp, jvp=_eigh_values_jvp)
EIGH_VECTORS = register("eigh_vectors", weighed=True, numpy=_eigh_kernel(1), batchable=False, saves=(0, "out"),
                        vjp=_eigh_vectors_vjp, jvp=_eigh_vectors_jvp)


# -------------------------------------------------------------- public functions

def _complete_orthogonal_kernel(a, b):
    try:
        return tf_lstsq.solve(a, b)
    except ValueError as e:         # (Eigen's Z reflectors, which this kernel does not take)
        raise TdfValueError(f"tapecli solves full-rank systems only, and this is {e}") from None


# MatrixSolveLs with fast=False: Eigen's complete orthogonal decomposition, TensorFlow's bits (kernels/tf_lstsq.py);
# TensorFlow defines no gradient for it, so none is registered (a GradientError if one is asked for)
LSTSQ_COMPLETE_ORTHOGONAL = register("lstsq_complete_orthogonal", numpy=_complete_orthogonal_kernel,
                                     batchable=False)


def lstsq_complete_orthogonal(matrix, rhs) -> Tensor:
    """The minimum-norm least-squares solutions of matrix x = rhs (tf.linalg.lstsq with fast=False)."""
    a, b = to_tensor(matrix), to_tensor(rhs)
    a = materialize(a) if a.weak else a
    b = materialize(b, a.dtype) if b.weak else b
    if a.dtype.kind != "f" or a.dtype != b.dtype:
        raise TdfTypeError(f"lstsq needs float matrices of one dtype, got {dtype_name(a.dtype)} and "
                           f"{dtype_name(b.dtype)}")
    if a.ndim < 2 or b.ndim != a.ndim or b.shape[:-1] != a.shape[:-1]:
        raise ShapeError(f"lstsq: the right-hand side of shape {list(b.shape)} does not fit matrices of shape "
                         f"{list(a.shape)} (it needs shape [..., {a.shape[-2]}, k])")
    why = tf_lstsq.unsupported(a.value)
    if why is not None:
        raise TdfValueError(f"tf.linalg.lstsq(fast=False): tapecli gives TensorFlow's complete orthogonal "
                            f"decomposition for tall float32 and float64 matrices of up to 16 and 8 columns, not {why}")
    return _apply_linalg(LSTSQ_COMPLETE_ORTHOGONAL, (a, b), "tf.linalg.lstsq(fast=False)")


def _lu_kernel(a):
    from tapecli.kernels import tf_linalg
    try:
        return tf_linalg.lu(a)[0]
    except tf_linalg.Singular:
        raise KernelValueError("Input is not invertible.") from None


# Lu's packed factors (kernels/tf_linalg.py: Eigen's PartialPivLU); TensorFlow's gradient of Lu is not written here
# yet, so none is registered (a GradientError if one is asked for)
LU = register("lu", numpy=_lu_kernel, batchable=False)


def lu(x) -> list:
    """[packed L and U, permutation] (tf.linalg.lu); the permutation is an int tensor, off the tapes."""
    from tapecli.kernels import tf_linalg
    a = _square(x, "lu")
    packed = _apply_linalg(LU, (a,), "tf.linalg.lu")
    return [packed, Tensor(tf_linalg.lu(a.value)[1])]


def _apply_linalg(op, inputs, what, **attrs):
    try:
        return apply(op, inputs, **attrs)
    except TdfValueError as e:
        raise type(e)(f"{what}: {e.message}") from None


def inv(x): return _apply_linalg(INV, (_square(x, "inv"),), "inv")
def det(x): return _apply_linalg(DET, (_square(x, "det"),), "det")
def eigh_values(x): return apply(EIGH_VALUES, (_square(x, "eigh"),))
def eigh_vectors(x): return apply(EIGH_VECTORS, (_square(x, "eigh"),))


def slogdet(x) -> list:
    a = _square(x, "slogdet")
    log_abs = _apply_linalg(LOG_ABS_DET, (a,), "slogdet")      # (first: the op weighed against a time limit)
    sign = Tensor(np.asarray(_slogdet(a.value)[0]).astype(a.dtype))
    return [sign, log_abs]


def _rhs(a, b, what):
    b = to_tensor(b)
    b = materialize(b, a.dtype) if b.weak else b
    if b.ndim < 2 or b.shape[-2] != a.shape[-1]:
        raise ShapeError(f"{what}: the right-hand side of shape {list(b.shape)} does not fit matrices of shape "
                         f"{list(a.shape)} (it needs shape [..., {a.shape[-1]}, k])")
    return b


def solve(matrix, rhs) -> Tensor:
    a = _square(matrix, "solve")
    return _apply_linalg(SOLVE, (a, _rhs(a, rhs, "solve")), "solve")


def triangular_solve(matrix, rhs, lower=True, adjoint=False) -> Tensor:
    a = _square(matrix, "triangular_solve")
    return _apply_linalg(TRIANGULAR_SOLVE, (a, _rhs(a, rhs, "triangular_solve")), "triangular_solve",
                         lower=bool(lower), adjoint=bool(adjoint))


def cholesky(x) -> Tensor:
    return _apply_linalg(CHOLESKY, (_square(x, "cholesky"),), "cholesky (the input must be positive definite)")


def diag_part(x, k: int = 0) -> Tensor:
    """The ``k``-th diagonal of each matrix (above the main one for k > 0), as tf.linalg.diag_part reads one."""
    t = to_tensor(x)
    if t.ndim < 2:
        raise ShapeError(f"diag_part needs at least a matrix, got shape {list(t.shape)}")
    rows, cols = t.shape[-2:]
    if not -rows < k < cols:
        raise ShapeError(f"diag_part: the diagonal k={k} lies outside a matrix of shape [{rows}, {cols}]")
    n = np.arange(min(rows + min(k, 0), cols - max(k, 0)))
    return getitem(t, (Ellipsis, n + max(-k, 0), n + max(k, 0)))


def trace(x) -> Tensor:
    return reduce_sum(diag_part(x), axis=-1)


def diag(v, k: int = 0, num_rows: int = -1, num_cols: int = -1, padding=0) -> Tensor:
    """A batch of matrices with the last axis of v on their ``k``-th diagonal and ``padding`` (+0 by default, as
    TensorFlow's MatrixDiag writes it) elsewhere (tf.linalg.diag): square of the diagonal's length plus |k|, or
    ``num_rows`` by ``num_cols`` where given (the other the least that holds the diagonal), as MatrixDiagV3."""
    t = to_tensor(v)
    if t.weak:
        t = materialize(t)
    if t.ndim < 1:
        raise ShapeError("diag needs at least a vector, got a scalar")
    n = t.shape[-1]
    least_rows, least_cols = n + max(-k, 0), n + max(k, 0)
    if num_rows == -1 and num_cols == -1:
        num_rows = num_cols = max(least_rows, least_cols)
    num_rows = least_rows if num_rows == -1 else num_rows
    num_cols = least_cols if num_cols == -1 else num_cols
    if num_rows < least_rows or num_cols < least_cols or (num_rows != least_rows and num_cols != least_cols):
        raise ShapeError(f"diag: a diagonal of {n} at k={k} needs num_rows={least_rows} or num_cols={least_cols} "
                         f"(and the other at least that), got num_rows={num_rows}, num_cols={num_cols}")
    rows, cols = np.arange(n) + max(-k, 0), np.arange(n) + max(k, 0)
    at, on = np.zeros((num_rows, num_cols), np.int64), np.zeros((num_rows, num_cols), bool)
    at[rows, cols], on[rows, cols] = np.arange(n), True
    # (a getitem, not a gather: its gradient is a dense tensor, as MatrixDiag's, not IndexedSlices)
    return where(Tensor(on), getitem(t, (Ellipsis, at)), Tensor(np.asarray(padding, t.dtype)))


def norm_ord(x, ord, axis, keepdims):  # noqa: A002
    """tf.norm's other orders: vectors 1, 2, inf, p > 0; matrices (a pair of axes) 1 and inf."""
    if isinstance(ord, (Tensor, Variable)):
        ord = float(to_tensor(ord).value)
    if isinstance(ord, str) or isinstance(ord, bool) or not isinstance(ord, (int, float)):
        raise TdfValueError(f"norm: ord must be \"euclidean\", \"fro\", 1, 2, inf or a number > 0, got {ord!r}")
    a = abs_(x)
    if isinstance(axis, tuple) and len(axis) == 2:
        rows, cols = axis
        if ord == 1:                     # the largest column sum
            out = reduce_max(reduce_sum(a, axis=rows, keepdims=True), axis=cols, keepdims=True)
        elif ord == math.inf:            # the largest row sum
            out = reduce_max(reduce_sum(a, axis=cols, keepdims=True), axis=rows, keepdims=True)
        else:
            raise TdfValueError(f"norm: a matrix norm takes ord \"fro\", \"euclidean\", 1 or inf, got {ord!r}")
        return out if keepdims else reshape(out, reduce_sum(x, axis=axis).shape)
    if isinstance(axis, tuple) and len(axis) > 2:
        raise TdfValueError(f"norm: axis must be an int or a pair of ints, got {list(axis)}")
    if ord == 2:
        return sqrt(reduce_sum(square(x), axis=axis, keepdims=keepdims))
    if ord == 1:
        return reduce_sum(a, axis=axis, keepdims=keepdims)
    if ord == math.inf:
        return reduce_max(a, axis=axis, keepdims=keepdims)
    if ord <= 0:
        raise TdfValueError(f"norm: ord must be positive, got {ord}")
    return pow_(reduce_sum(pow_(a, float(ord)), axis=axis, keepdims=keepdims), 1.0 / ord)
