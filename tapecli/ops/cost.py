"""What one long op costs, weighed against the time left before it starts (TAPECLI_MAX_SECONDS).

The interpreter looks at the clock between steps; one matrix product, einsum or decomposition is a single
NumPy/BLAS/LAPACK call that nothing interrupts. Where a run has a time limit, ``apply`` weighs each op of
this table before its kernel runs: its floating-point operations (the textbook counts below, for the
kernel tapecli runs) at a rate of its kind, against the seconds left. An op whose estimate is over them is a
LimitError at once, where it would otherwise run past the limit. The rates are deliberately high, several
times what a laptop core does, so that an op is refused only when it clearly cannot end in time; ordinary
work is never refused, and an op estimated under the time left may still overrun it (the command line's
watchdog ends such a run: cli/watchdog.py). Ops on a device backend are not weighed (devices differ too
much)."""
from __future__ import annotations

import math
import time

import numpy as np

from tapecli.errors import LimitError
from tapecli.runtime.limits import deadline_error

# Floating-point operations per second, by the kind of kernel (docs/commands.md, "Time limits").
BLAS_RATE = 1e12        # a matrix product: BLAS on every core
LAPACK_RATE = 1e11      # a factorization, an inverse, a solve, eigenvalues: LAPACK
LOOP_RATE = 5e10        # an einsum (one or two operands: more are a chain of these): transposes, sums, a product


def _batch_and_matrix(shape) -> tuple[int, int, int]:
    """(batch size, rows, columns) of a stack of matrices (the last two axes)."""
    return math.prod(shape[:-2]), shape[-2], shape[-1]


def _matmul(values, attrs) -> tuple[float, float]:
    a, b = values
    m, k = (1, a.shape[0]) if a.ndim == 1 else a.shape[-2:]
    n = 1 if b.ndim == 1 else b.shape[-1]
    try:
        batch = math.prod(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]))
    except ValueError:
        batch = 1               # (the kernel names the shapes)
    return 2.0 * batch * m * k * n, BLAS_RATE


def _conv_filter_grad(values, attrs) -> tuple[float, float]:
    rows, g = values                # (the windows' transpose times the output's gradient)
    return 2.0 * rows.shape[0] * rows.shape[1] * g.shape[-1], BLAS_RATE


def _einsum(values, attrs) -> tuple[float, float]:
    """An upper bound for one Einsum of one or two operands (an einsum of more is a chain of these, each weighed): a
    loop over every distinct index, a product of the operands at each point (TensorFlow's kernel, which tapecli
    follows, sums an operand's own indices first and takes one batched product)."""
    sizes = {c: n for sub, x in zip(attrs["ins"], values) for c, n in zip(sub, x.shape)}
    return float(math.prod(sizes.values())) * max(1, len(values)), LOOP_RATE


def _square(factor: float):
    def flops(values, attrs) -> tuple[float, float]:
        batch, _, n = _batch_and_matrix(values[0].shape)
        return factor * batch * float(n) ** 3, LAPACK_RATE
    return flops


def _solve(triangular: bool):
    def flops(values, attrs) -> tuple[float, float]:
        batch, _, n = _batch_and_matrix(values[0].shape)
        k = values[1].shape[-1]
        count = (0.0 if triangular else 2 / 3 * n ** 3) + (1 if triangular else 2) * float(n) ** 2 * k
        return batch * count, LAPACK_RATE
    return flops


def _thin(factor_mn2: float, factor_n3: float):
    """A decomposition of m x n matrices (m >= n after transposing): factor_mn2 * m n^2 + factor_n3 * n^3."""
    def flops(values, attrs) -> tuple[float, float]:
        batch, rows, cols = _batch_and_matrix(values[0].shape)
        m, n = max(rows, cols), min(rows, cols)
        return batch * (factor_mn2 * m * float(n) ** 2 + factor_n3 * float(n) ** 3), LAPACK_RATE
    return flops


# op name -> its kernel's (floating-point operations, the rate of its kind) for its input arrays and attributes
FLOPS = {
    "matmul": _matmul,
    "conv_product": lambda values, attrs: _matmul(values[:2], attrs),     # (the padded input after them)
    "conv_filter_grad": _conv_filter_grad,
    "einsum": _einsum,
    "inv": _square(2.0),
    "det": _square(2 / 3),
    "log_abs_det": _square(2 / 3),
    "cholesky": _square(1 / 3),
    "eigh_values": _square(9.0),        # (the kernel computes the eigenvectors too)
    "eigh_vectors": _square(9.0),
    "solve": _solve(False),
    "triangular_solve": _solve(True),
    "qr_q": _thin(4.0, -4 / 3),         # Householder QR and forming the reduced Q
    "qr_r": _thin(4.0, -4 / 3),
    "svd_s": _thin(4.0, 8.0),           # (the kernel computes the singular vectors too)
    "svd_u": _thin(4.0, 8.0),
    "svd_v": _thin(4.0, 8.0),
}


def weigh(name: str, flops, values, attrs, settings) -> None:
    """Before the kernel of op ``name`` runs on ``values`` (``flops``: its FLOPS entry): a LimitError if its
    estimate is over the time left before ``settings.deadline``."""
    try:
        count, rate = flops(values, attrs)
    except (ValueError, IndexError, KeyError):
        return                  # shapes the kernel refuses: its own error names them
    seconds = count / rate
    left = settings.deadline - time.monotonic()
    if left <= 0:
        raise deadline_error(settings)
    if seconds > left:
        shapes = " and ".join(str(list(v.shape)) for v in values)
        raise LimitError(f"{name} of shape{'s' if len(values) > 1 else ''} {shapes} would take about {seconds:.2g} s "
                         f"({count:.2g} floating-point operations at {rate:.0e} a second), more than the {left:.2g} s "
                         f"left of the {settings.max_seconds:g} s time limit",
                         hint="use smaller tensors, or raise the limit with TAPECLI_MAX_SECONDS")
