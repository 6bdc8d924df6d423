"""TensorFlow's tf.linalg.solve and tf.linalg.inv on the CPU, bit for bit, for the small systems Eigen solves
unblocked (and tf.linalg.qr below 48 columns).

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


def inverse(a: np.ndarray) -> np.ndarray | None:
    """The inverse of each matrix of ``a`` as TensorFlow's MatrixInverse computes it (``PartialPivLU``'s
    ``inverse()``: the solve of the identity above), or None where this module does not follow it."""
    n = a.shape[-1]
    if n > _UNBLOCKED.get(a.dtype, 0):
        return None
    flat = a.reshape(-1, n, n)
    identity = np.eye(n, dtype=a.dtype)
    return np.stack([_solve_one(m, identity) for m in flat]).reshape(a.shape) if len(flat) else a.copy()


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


def _partial_pivot_lu(a: np.ndarray, singular_ok: bool = False) -> tuple[np.ndarray, list[int]]:
    """Eigen's unblocked PartialPivLU; at a zero pivot Singular, or (``singular_ok``) Eigen's going on: no swap, no
    division, the trailing block's update as ever."""
    lu = a.copy()
    n = len(lu)
    pivots = []
    for k in range(n):
        magnitudes = np.abs(lu[k:, k])
        p = k + int(np.argmax(magnitudes))            # (the first of equal magnitudes, as Eigen's maxCoeff)
        pivots.append(p)
        if magnitudes[p - k] != 0:
            if p != k:
                lu[[k, p]] = lu[[p, k]]
            lu[k + 1:, k] = lu[k + 1:, k] / lu[k, k]
        elif not singular_ok:
            raise Singular("Input matrix is not invertible.")
        lu[k + 1:, k + 1:] = lu[k + 1:, k + 1:] - np.multiply.outer(lu[k + 1:, k], lu[k, k + 1:])
    return lu, pivots


def slogdet(a: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """(sign, log |det|) of each matrix of ``a`` as TensorFlow's SLogDet computes them (LogMatrixDeterminant, and
    MatrixDeterminant's ``sign * exp(log |det|)``): Eigen's LU, the sum of the logs of its diagonal's magnitudes as
    Eigen's vectorized reduction takes them (packets of Eigen's log, the rest the C library's, one after another),
    the sign from the permutation and the diagonal's signs; a zero on the diagonal gives (a signed zero, -inf). None
    where this module does not follow it."""
    n = a.shape[-1]
    if n > _UNBLOCKED.get(a.dtype, 0) or not n:
        return None
    flat = a.reshape(-1, n, n)
    signs, logs = np.empty(len(flat), a.dtype), np.empty(len(flat), a.dtype)
    for i, matrix in enumerate(flat):
        lu, pivots = _partial_pivot_lu(matrix, singular_ok=True)
        diagonal = np.diagonal(lu)
        swaps = sum(p != k for k, p in enumerate(pivots))
        with np.errstate(divide="ignore", invalid="ignore"):
            log_abs = _reduced_sum(_packet_logs(np.abs(diagonal)), _PACKET[a.dtype])
        if not np.isfinite(log_abs):
            log_abs = np.inf if log_abs > 0 else -np.inf
        # (measured: a zero on the diagonal makes the sign a zero, negative where the other signs multiply to -1)
        signs[i], logs[i] = (-1.0) ** swaps * np.prod(np.sign(diagonal)), log_abs
    return signs.reshape(a.shape[:-2]), logs.reshape(a.shape[:-2])


def _packet_logs(x: np.ndarray) -> np.ndarray:
    """log of each value as Eigen's reduction evaluates it: its packet log on whole packets, the C library's on
    the rest (float32: tf_float32's log, which is that)."""
    if x.dtype == np.float32:
        from tapecli.kernels import tf_float32
        return np.asarray(tf_float32.log(x))
    whole = len(x) - len(x) % _PACKET[x.dtype]
    return np.concatenate((_plog_double(x[:whole]), np.log(x[whole:])))


def _reduced_sum(x: np.ndarray, size: int):
    """Eigen's linear vectorized sum: two packet accumulators over pairs of packets (one where a single packet
    fits), a last odd packet into the first, the packet's halves added down, then the rest one by one."""
    whole = len(x) - len(x) % size
    if not whole:
        total = x[0]
        for v in x[1:]:
            total = total + v
        return total
    first = x[:size].copy()
    if whole > size:
        pairs = len(x) - len(x) % (2 * size)
        second = x[size:2 * size].copy()
        for i in range(2 * size, pairs, 2 * size):
            first += x[i:i + size]
            second += x[i + size:i + 2 * size]
        first += second
        if whole > pairs:
            first += x[pairs:pairs + size]
    total = _halved(first)
    for v in x[whole:]:
        total = total + v
    return total


# Eigen's plog_impl_double (Cephes' log): x = m 2^e with m in [sqrt(1/2), sqrt(2)) shifted by -1, then
# x - x^2 / 2 + x^3 P(x) / Q(x) and e ln 2, each pmadd a product and a sum
_LOG_P = (1.01875663804580931796E-4, 4.97494994976747001425E-1, 4.70579119878881725854E0, 1.44989225341610930846E1,
          1.79368678507819816313E1, 7.70838733755885391666E0)
_LOG_Q = (1.0, 1.12873587189167450590E1, 4.52279145837532221105E1, 8.29875266912776603211E1,
          7.11544750618563894466E1, 2.31251620126765340583E1)
_LN2 = 0.693147180559945309417232121458176568


def _plog_double(x0: np.ndarray) -> np.ndarray:
    m, e = np.frexp(x0)
    e = e.astype(np.float64)
    below = m < 0.70710678118654752440
    x = (m - 1.0) + m * below
    e -= below
    x2 = x * x
    x3 = x2 * x
    p = ((_LOG_P[0] * x + _LOG_P[1]) * x + _LOG_P[2]) * x3 + ((_LOG_P[3] * x + _LOG_P[4]) * x + _LOG_P[5])
    q = ((_LOG_Q[0] * x + _LOG_Q[1]) * x + _LOG_Q[2]) * x3 + ((_LOG_Q[3] * x + _LOG_Q[4]) * x + _LOG_Q[5])
    y = (p * x3) / q
    y = -0.5 * x2 + y
    y = x + y
    y = e * _LN2 + y
    y[x0 == 0] = -np.inf
    y[x0 == np.inf] = np.inf
    y[~(x0 >= 0)] = np.nan
    return y


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


# ------------------------------------------------------------------------- QR
# QrOp (tensorflow/core/kernels/linalg/qr_op_impl.h) factors each matrix with Eigen's HouseholderQR and forms
# the reduced Q as ``householderQ() * Identity(m, n)``. Below 48 reflectors Eigen applies them one at a time
# (past that in blocks, whose GEMM order this module does not follow). Each application to a block is
# ``tmp = essential^T bottom + row0; row0 -= tau tmp; bottom -= (tau essential) tmp``, the product a GEMV: on the
# row-major factorisation Eigen's column-major kernel (each column's sum in row order, in blocks of 16 rows past
# 128), on Q's column-major product its row-major kernel (packets of 8 floats or 4 doubles per column, reduced
# by halves, then a half packet for a lone last column, then the rest in order); a single column is a dot
# product, in order.
_QR_REFLECTORS = 48
_PACKET = {np.dtype(np.float32): 8, np.dtype(np.float64): 4}


def qr(a: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """The reduced (Q, R) of each matrix of ``a`` as TensorFlow's CPU kernel computes them, or None where this
    module does not follow it (more columns than rows, 48 columns or more, another dtype)."""
    m, n = a.shape[-2:]
    if a.dtype not in _PACKET or n > m or n >= _QR_REFLECTORS:
        return None
    flat = a.reshape(-1, m, n)
    q, r = np.empty_like(flat), np.empty((len(flat), n, n), a.dtype)
    for i, matrix in enumerate(flat):
        q[i], r[i] = _householder_qr(matrix)
    return q.reshape(a.shape), r.reshape(a.shape[:-2] + (n, n))


def _householder_qr(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    packed = a.copy()
    n = packed.shape[1]
    taus = []
    for k in range(n):
        taus.append(_make_householder(packed[k:, k]))
        _apply_householder(packed[k:, k + 1:], packed[k + 1:, k], taus[k], _column_sums)
    q = np.asfortranarray(np.eye(*a.shape, dtype=a.dtype))       # (Eigen's product is column-major)
    for k in range(n - 1, -1, -1):
        _apply_householder(q[k:], packed[k + 1:, k], taus[k], _packet_dots)
    return np.ascontiguousarray(q), np.triu(packed[:n])


def _make_householder(column: np.ndarray):
    """Eigen's makeHouseholderInPlace on ``column``: beta in its first place, the essential part below, tau out."""
    zero = column.dtype.type(0)
    tail = column[1:]
    tail_norm2 = _in_order(tail * tail) if tail.size else zero
    c0 = column[0]
    if tail_norm2 <= np.finfo(column.dtype).tiny:
        tail[:] = zero
        return zero
    beta = np.sqrt(c0 * c0 + tail_norm2)
    if c0 >= zero:
        beta = -beta
    tail /= c0 - beta
    column[0] = beta
    return (beta - c0) / beta


def _apply_householder(block: np.ndarray, essential: np.ndarray, tau, products) -> None:
    """Eigen's applyHouseholderOnTheLeft, in place."""
    if block.shape[0] == 1:
        block *= block.dtype.type(1) - tau
        return
    if tau == 0 or not block.shape[1]:
        return
    bottom = block[1:]
    tmp = _in_order(bottom * essential[:, None]) if block.shape[1] == 1 else products(essential, bottom)
    tmp += block[0]
    block[0] -= tau * tmp
    bottom -= (tau * essential)[:, None] * tmp


def _in_order(terms: np.ndarray) -> np.ndarray:
    """The sums down the first axis, one term after another from zero."""
    if not len(terms):
        return np.zeros(terms.shape[1:], terms.dtype)
    return np.add.accumulate(terms, axis=0)[-1] + terms.dtype.type(0)


def _column_sums(essential: np.ndarray, bottom: np.ndarray) -> np.ndarray:
    """Eigen's column-major GEMV: each column's sum in row order, in blocks of 16 rows from 128 rows on."""
    terms = bottom * essential[:, None]
    rows = len(terms)
    if rows < 128:
        return _in_order(terms)
    return _in_order(np.stack([_in_order(terms[i:i + 16]) for i in range(0, rows, 16)]))


def _packet_dots(essential: np.ndarray, bottom: np.ndarray) -> np.ndarray:
    """Eigen's row-major GEMV (bottom's columns, contiguous, dotted with ``essential``): per column, packets of
    lanes summed down then reduced by halves, then (for a lone last column) a half packet so reduced, then the
    remaining terms in order."""
    size = _PACKET[bottom.dtype]
    rows, cols = bottom.shape
    terms = (bottom * essential[:, None]).T
    full, half = rows - rows % size, rows - rows % (size // 2)
    sums = _halved(_in_order(terms[:, :full].reshape(cols, -1, size).transpose(1, 0, 2)))
    lone = _lone_column(cols, bottom.strides[1] > 32000)
    sums[lone:] += _halved(terms[lone:, full:half]) if half > full else 0
    for j in range(full, rows):
        sums[:lone] += terms[:lone, j]
    for j in range(half if half > full else full, rows):
        sums[lone:] += terms[lone:, j]
    return sums


def _halved(lanes: np.ndarray) -> np.ndarray:
    """predux: the lanes (last axis) summed by halves, (a0 + a4) + (a2 + a6) ... as Eigen's reduction adds."""
    while lanes.shape[-1] > 1:
        k = lanes.shape[-1] // 2
        lanes = lanes[..., :k] + lanes[..., k:]
    return lanes[..., 0]


def _lone_column(cols: int, far: bool) -> int:
    """Where the row-major kernel's single-column loop begins: it takes 8, 4, then 2 columns at a time (not 8
    where the columns lie far apart)."""
    i = 0
    for group in (8, 4, 2):
        if group == 8 and far:
            continue
        while i < cols - group + 1:
            i += group
    return i
