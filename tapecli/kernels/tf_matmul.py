"""TensorFlow's float32 matrix products on an x86 CPU with AVX-512, bit for bit: TensorFlow runs MatMul and
BatchMatMulV2 with oneDNN there (on by default), whose kernels sum each output in an order set by the shape and
by which operands TensorFlow hands over transposed (``transpose_a``/``transpose_b``, as its gradients do).

For C = A B with A m x k and B k x n (measured against TensorFlow 2.21's pip wheel on an AVX-512 machine,
benchmarks/record_tf_matmul.py, tests/data/tf_matmul_bits.json; TensorFlow's thread count changes nothing):

* a batched product (BatchMatMulV2: an operand of rank 3 or more): each output a chain of fused multiply-adds
  over k from zero, in blocks of k (one up to 512, 512 and the rest up to 1,024) whose sums are added;
* a 2-D product (MatMul, oneDNN's sgemm), by the first that applies:
  - m = 1: with B transposed, oneDNN's gemv kernel along k: 8-lane fused dot products over k sixteen at a time,
    the lanes summed as ``((l0+l1)+(l4+l5)) + ((l2+l3)+(l6+l7))``, then the 8, 4, 2 and 1 last products (each
    summed alike) added in turn; else its gemv kernel along columns: a chain of fused multiply-adds over all of k;
  - B transposed, A not, m up to 15 (its small-n kernel): 16-lane fused dot products over k (the last partial
    vector in its first lanes), the lanes summed by halves;
  - n = 1: the gemv kernel along k where A is not transposed, else the chain over all of k;
  - else a chain of fused multiply-adds over k, in blocks of 384 (the last two halved when less than 768 is
    left) whose sums are added.

An operand counts as transposed when its values are laid out with rows along the first axis (a transposed view,
as tapecli's transpose gives it: tf.matmul's ``transpose_b=True`` and the gradients' products); a transpose that
TensorFlow computes as an op of its own (``tf.transpose(b)`` then a product) is a copy there, a view here.

A fused multiply-add is computed in float64, where the product of two float32 values is exact: the sum is rounded
once more to float32, which is the fused result but where float64 rounded the exact sum onto a float32 halfway
point; there the rounding error (TwoSum) says which way the exact sum lies. Other machines (another vector width
or architecture), other dtypes, k above ``K_LIMIT``, products of more than ``FLOP_LIMIT`` flops (the loop over k
costs about a microsecond a step: a training workload's larger products keep OpenBLAS's speed) and operands
whose products could underflow (TensorFlow flushes subnormal numbers to zero) keep NumPy's product."""
from __future__ import annotations

import math

import numpy as np

from tapecli.kernels.cpu import vector_width

FLOP_LIMIT = 1 << 17        # 2 m n k (times the batch) of the largest product computed here
K_LIMIT = 1024              # the longest sum computed here (the blocks measured)
SMALL_N_ROWS = 15           # oneDNN's small-n kernel takes up to this many rows
_GEMM_K_BLOCK = 384
_F32, _F64 = np.float32, np.float64
_TINY = float(np.finfo(np.float32).tiny)
_LOW_BITS = np.uint64((1 << 29) - 1)        # the float64 fraction bits below float32's
_HALFWAY = np.uint64(1 << 28)


def matmul(a, b) -> np.ndarray | None:
    """``a @ b`` with TensorFlow's bits for float32 operands of rank 2 or more (see the module's docstring), or
    None where this does not apply."""
    if not takes(a, b) or may_underflow(a, b):
        return None
    (m, k), n = a.shape[-2:], b.shape[-1]
    batched = a.ndim > 2 or b.ndim > 2
    with np.errstate(all="ignore"):
        if batched:
            return _blocks(a, b, _batched_blocks(k))
        transposed_a, transposed_b = _transposed(a), _transposed(b)
        if m == 1:
            return _gemv_dots(a, b) if transposed_b else _chain(a, b)
        if transposed_b and not transposed_a and m <= SMALL_N_ROWS:
            return _lane_dots(a, b)
        if n == 1:
            return _chain(a, b) if transposed_a else _gemv_dots(a, b)
        return _blocks(a, b, _gemm_blocks(k))


def takes(a, b) -> bool:
    """Whether :func:`matmul` computes a product of operands laid out as these (unless their values could
    underflow)."""
    if a.__class__ is not np.ndarray or b.__class__ is not np.ndarray or a.dtype != _F32 or b.dtype != _F32 \
            or a.ndim < 2 or b.ndim < 2:
        return False
    (m, k), n = a.shape[-2:], b.shape[-1]
    outputs = m * n
    if a.ndim > 2 or b.ndim > 2:
        try:
            outputs *= math.prod(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]))
        except ValueError:
            return False                            # (NumPy's error names the shapes)
    return 2 * outputs * k <= FLOP_LIMIT and outputs > 0 and 0 < k <= K_LIMIT and b.shape[-2] == k \
        and vector_width() == 16


def _transposed(x) -> bool:
    """Whether TensorFlow would hold the matrix ``x`` transposed: its rows' elements are apart, its columns'
    adjacent (a column of one element: laid out as a transposed row)."""
    rows, columns = x.shape
    step = x.itemsize
    if columns == 1:
        return x.strides == (step, rows * step) and rows > 1
    return x.strides[0] == step and x.strides[1] != step


def may_underflow(a, b) -> bool:
    """Whether a product of an element of ``a`` and one of ``b`` could fall below float32's smallest normal
    number (TensorFlow flushes it to zero)."""
    smallest = []
    for x in (a, b):
        magnitudes = np.abs(x)
        nonzero = magnitudes[magnitudes > 0]
        smallest.append(float(nonzero.min()) if nonzero.size else np.inf)
    return smallest[0] * smallest[1] < _TINY


def fma(x, y, c, out=None) -> np.ndarray:
    """``x * y + c`` of float32 arrays (broadcast), rounded once to float32 as a fused multiply-add rounds it;
    ``out``: a float64 array of the result's shape to compute in."""
    total = np.multiply(x, y, dtype=_F64, out=out)
    total += c
    result = total.astype(_F32)
    halfway = (total.view(np.uint64) & _LOW_BITS) == _HALFWAY
    if halfway.any():               # float64 rounded onto a float32 halfway point: the error says which side
        x, y, c = (np.broadcast_to(v, total.shape)[halfway].astype(_F64) for v in (x, y, c))
        product, total = x * y, total[halfway]
        carried = total - product
        error = (product - (total - carried)) + (c - carried)
        side = np.where(error > 0, np.inf, np.where(error < 0, -np.inf, total))
        result[halfway] = np.nextafter(total, side).astype(_F32)
    return result


def fma_chain(xs, ys, total) -> np.ndarray:
    """``total`` after ``total = fma(x, y, total)`` for each ``x`` of ``xs`` and ``y`` of ``ys`` (float32, their
    first axis the steps, the rest broadcast to total's shape) in turn, with fma's bits. The products are made at
    once; a step here is then a sum and a rounding. Whether any step's sum fell on a float32 halfway point, where
    :func:`fma` asks the rounding error, is asked once of all of them at the end (rarely so: the steps are then
    taken again through fma). A chain of small products is a Python loop of NumPy calls: two a step, where fma
    takes seven."""
    wide = np.multiply(xs, ys, dtype=_F64)
    start = total
    for step in wide:
        step += total
        total = step.astype(_F32)
    if ((wide.view(np.uint64) & _LOW_BITS) == _HALFWAY).any():
        total = start
        for x, y in zip(xs, ys):
            total = fma(x, y, total)
    return total


def _chain(a, b, start=0, stop=None) -> np.ndarray:
    """Each output a chain of fused multiply-adds over k from ``start`` to ``stop``, from zero."""
    stop = a.shape[-1] if stop is None else stop
    shape = np.broadcast_shapes(a.shape[:-1] + (1,), b.shape[:-2] + (1, b.shape[-1]))
    ndim = max(a.ndim, b.ndim)                                        # (the batch axes aligned on the right)
    a, b = (x.reshape((1,) * (ndim - x.ndim) + x.shape) for x in (a, b))
    columns = _steps_first(a[..., start:stop], -1)[..., None]        # (k, ..., m, 1): a's column p at step p
    rows = _steps_first(b[..., start:stop, :], -2)[..., None, :]      # (k, ..., 1, n): b's row p
    return fma_chain(columns, rows, np.zeros(shape, _F32))


def _blocks(a, b, sizes) -> np.ndarray:
    total, start = None, 0
    for size in sizes:
        part = _chain(a, b, start, start + size)
        total = part if total is None else total + part
        start += size
    return total


def _gemm_blocks(k):
    sizes = []
    while k > _GEMM_K_BLOCK:
        size = (k + 1) // 2 if k < 2 * _GEMM_K_BLOCK else _GEMM_K_BLOCK
        sizes.append(size)
        k -= size
    return sizes + [k]


def _batched_blocks(k):
    return [k] if k <= 512 else [512, k - 512]


def _lane_dots(a, b, lanes=16) -> np.ndarray:
    """oneDNN's small-n kernel: each output a vector of fused dot products over k, its lanes summed by halves."""
    rows, columns = a[:, None, :], b.T[None, :, :]
    k = a.shape[-1]
    total = np.zeros((a.shape[0], b.shape[1], lanes), _F32)
    whole, rest = divmod(k, lanes)
    if whole:
        total = fma_chain(*(_vectors(v[..., :whole * lanes], lanes) for v in (rows, columns)), total)
    if rest:
        total[..., :rest] = fma(rows[..., k - rest:], columns[..., k - rest:], total[..., :rest])
    while total.shape[-1] > 1:
        half = total.shape[-1] // 2
        total = total[..., :half] + total[..., half:]
    return total[..., 0]


def _steps_first(x, axis) -> np.ndarray:
    """A view of ``x`` with axis ``axis`` (negative) first: the steps of a chain along it (np.moveaxis's, without
    its checks, which took a quarter of a small product's time)."""
    order = list(range(x.ndim))
    return x.transpose([order.pop(axis)] + order)


def _vectors(v, lanes) -> np.ndarray:
    """``v``'s last axis cut into vectors of ``lanes``, the vectors first: the steps of a chain over them."""
    return _steps_first(v.reshape(v.shape[:-1] + (-1, lanes)), -2)


def _eight_lanes(v) -> np.ndarray:
    """vhaddps, the halves swapped and added, vhaddps: one sum of the 8 lanes."""
    return ((v[..., 0] + v[..., 1]) + (v[..., 4] + v[..., 5])) + ((v[..., 2] + v[..., 3]) + (v[..., 6] + v[..., 7]))


def _gemv_dots(a, b) -> np.ndarray:
    """oneDNN's gemv kernel along k: 8-lane fused dot products over k sixteen at a time, summed across the
    lanes; then the last 8, 4, 2 and 1 products, each summed alike, added in turn."""
    rows, columns = a[:, None, :], b.T[None, :, :]
    k = a.shape[-1]
    whole = k // 16 * 16
    total = np.zeros((a.shape[0], b.shape[1]), _F32)
    if whole:
        lanes = fma_chain(*(_vectors(v[..., :whole], 8) for v in (rows, columns)),
                          np.zeros(total.shape + (8,), _F32))
        total = _eight_lanes(lanes)
    start = whole
    for width in (8, 4, 2, 1):
        if (k - whole) & width:
            lanes = np.zeros(total.shape + (8,), _F32)
            lanes[..., :width] = np.multiply(rows[..., start:start + width], columns[..., start:start + width])
            total = total + _eight_lanes(lanes)
            start += width
    return total


# ------------------------------------------------------------------ float64: Eigen's matrix-vector products
# TensorFlow's CPU MatMul on doubles (no oneDNN) is Eigen's dense product of row-major matrices, z = x y
# (x.transpose() with transpose_a, and so on), each pmadd a product and a sum (the wheel is built without FMA):
# * rows + columns + depth below 20: the lazy coefficient product, each output a plain sum of the products in k's
#   order (from the first product); a row times a column too (Eigen's dot product: y's column is strided);
# * one column (one row: the transposed product, y^T x^T): general_matrix_vector_product; on a row-major matrix
#   each output's products over the first k - k % 4 in 4 lanes (lane l: k = l mod 4), reduced (l0 + l2) +
#   (l1 + l3), then the rest added one at a time, but on an odd last row a 2-lane pair first; on a column-major
#   matrix a plain sum over k in blocks (all of k below 128, else 16 columns, or 4 where a column is 4,000
#   doubles), each block's sum from zero added to the output.
# A product of more rows and columns (Eigen's GEBP kernel) keeps NumPy's.

DOUBLE_K_LIMIT = 1 << 14           # the longest sum computed here (the loop over k costs about a microsecond a step)


def matmul_double(a, b) -> np.ndarray | None:
    """``a @ b`` with TensorFlow's bits for 2-D float64 operands with one row or one column (see above), or None."""
    if not takes_double(a, b):
        return None
    (m, k), n = a.shape, b.shape[1]
    if in_order_double(m, n, k):
        return in_order_products(a, b)
    with np.errstate(all="ignore"):
        if n == 1:
            matrix, vector = a, b[:, 0]
            row_major = not _transposed(a)
        else:                               # (y^T x^T: y's transpose is row-major where y is held transposed)
            matrix, vector = b.T, a[0]
            row_major = _transposed(b)
        y = _row_major_gemv(matrix, vector) if row_major else _column_major_gemv(matrix, vector)
    return y.reshape(m, n)


def double_zero_signs(a, b, y):
    """``y = a @ b`` of 2-D float64 operands with the signs of TensorFlow's zeros, where they could differ: in
    Eigen's small products (rows + columns + depth below 20) and its dot products, an output whose products are all
    -0.0 is -0.0 where TensorFlow hands an operand over transposed and the product has one row, one column or a
    depth of one (each output summed from its first product), else +0.0 (summed from zero). Where none of the
    products is -0.0 (the common case) the signs are those of any order's."""
    if a.dtype != _F64 or b.dtype != _F64 or y.__class__ is not np.ndarray or y.ndim != 2 or a.ndim != 2 \
            or b.ndim != 2 or y.size == 0:
        return y
    (m, k), n = a.shape, b.shape[1]
    if m + n + k >= 20 and not m == n == 1:
        return y
    y = y + 0.0
    if (m == 1 or n == 1 or k == 1) and m + n + k < 20 and (_flagged(a) or _flagged(b)):
        with np.errstate(all="ignore"):
            products = a[:, :, None] * b[None, :, :]
        negative = np.all((products == 0) & np.signbit(products), axis=1)
        y[negative] = -0.0
    return y


def _flagged(x) -> bool:
    """Whether TensorFlow took the matrix ``x`` with a transpose flag: it lies transposed (:func:`_transposed`),
    a single row laid out as a transposed column too."""
    rows, columns = x.shape
    if rows == 1 and columns > 1:
        return x.strides[0] == x.itemsize
    return _transposed(x)


def small_double(a, b) -> bool:
    """Whether :func:`double_zero_signs` may change the signs of a product of these operands' zeros."""
    if a.__class__ is not np.ndarray or b.__class__ is not np.ndarray or a.dtype != _F64 or a.ndim != 2 \
            or b.ndim != 2:
        return False
    (m, k), n = a.shape, b.shape[-1]
    return m + n + k < 20 or m == n == 1


def in_order_double(m, n, k) -> bool:
    """Whether Eigen takes a float64 product of these sizes (one row or one column) as plain sums in k's order."""
    return m + n + k < 20 or m == n == 1


def in_order_products(a, b):
    """``a @ b`` (batched or not) as each output's products summed in k's order from the first."""
    with np.errstate(all="ignore"):
        total = a[..., :, :1] * b[..., :1, :]
        for p in range(1, a.shape[-1]):
            total = total + a[..., :, p:p + 1] * b[..., p:p + 1, :]
    return total


def takes_double(a, b) -> bool:
    """Whether :func:`matmul_double` computes a product of operands laid out as these."""
    if a.__class__ is not np.ndarray or b.__class__ is not np.ndarray or a.dtype != _F64 or b.dtype != _F64 \
            or a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        return False
    (m, k), n = a.shape, b.shape[1]
    return 0 < k <= DOUBLE_K_LIMIT and (m == 1 or n == 1) and m > 0 and n > 0


def _row_major_gemv(matrix, vector):
    rows, k = matrix.shape
    full = k - k % 4
    lanes = np.zeros((4, rows))
    for p in range(0, full, 4):
        for lane in range(4):
            lanes[lane] = lanes[lane] + matrix[:, p + lane] * vector[p + lane]
    total = (lanes[0] + lanes[2]) + (lanes[1] + lanes[3])
    start = np.full(rows, full)
    if rows % 2 and k - full >= 2:          # (the odd last row: a packet of 2 before the single products)
        total[-1] += matrix[-1, full] * vector[full] + matrix[-1, full + 1] * vector[full + 1]
        start[-1] = full + 2
    for p in range(full, k):
        total = np.where(start <= p, total + matrix[:, p] * vector[p], total)
    return total


def _column_major_gemv(matrix, vector):
    rows, k = matrix.shape
    block = k if k < 128 else (16 if rows * 8 < 32000 else 4)
    total = np.zeros(rows)
    for begin in range(0, k, block):
        part = np.zeros(rows)
        for p in range(begin, min(begin + block, k)):
            part = part + matrix[:, p] * vector[p]
        total = total + part
    return total
