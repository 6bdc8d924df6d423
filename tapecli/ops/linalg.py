"""Linear algebra: matmul (NumPy semantics, batch dimensions included)."""
from __future__ import annotations


import numpy as np

from tapecli.ops import remapper
from tapecli.ops.core import apply, register, to_tensor, unbroadcast
from tapecli.ops.elementwise import add, mul
from tapecli.ops.shape import reshape, transpose
from tapecli.runtime.context import current
from tapecli.runtime.limits import admit_result


# ------------------------------------------------------- shapes and matmul

# Ids of tangents (forward mode) and cotangents (reverse mode) that are a batch of one-hot
# rows, i.e. an identity matrix: the matmul rules skip the product with them.
IDENTITY_SEEDS: set[int] = set()


def _swap_last(t):
    """t's matrices transposed as a view: an operand TensorFlow's products take with a transpose flag."""
    perm = list(range(t.ndim))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return transpose(t, perm, view=True)


def matmul_vjp(r, g, needs=None):
    a, b = r.inputs
    lead = g.ndim - r.output.ndim
    need_a = needs is None or needs[0]
    need_b = needs is None or needs[1]
    if lead and a.ndim <= 2 and b.ndim <= 2:
        return _matmul_vjp_batched(a, b, g, lead, need_a, need_b)
    batch = g.shape[:lead]
    a2 = a if a.ndim > 1 else reshape(a, (1,) + a.shape)
    b2 = b if b.ndim > 1 else reshape(b, b.shape + (1,))
    out_shape = np.broadcast_shapes(a2.shape[:-2], b2.shape[:-2]) + (a2.shape[-2], b2.shape[-1])
    g2 = reshape(g, batch + out_shape)
    ga = gb = None
    if need_a:      # (an operand TensorFlow was handed with a transpose flag: its gradient's product in its layout)
        ga = _swap_last(matmul(b2, _swap_last(g2))) if _lies_transposed(a2) else matmul(g2, _swap_last(b2))
        ga = reshape(unbroadcast(ga, a2.shape, lead), batch + a.shape)
    if need_b:
        gb = _swap_last(matmul(_swap_last(g2), a2)) if _lies_transposed(b2) else matmul(_swap_last(a2), g2)
        gb = reshape(unbroadcast(gb, b2.shape, lead), batch + b.shape)
    return ga, gb


def _lies_transposed(t) -> bool:
    """Whether ``t``'s matrices lie transposed (a view :func:`_swap_last` made): TensorFlow's MatMul took the
    operand with a transpose flag, and its gradient (_MatMulGrad) is a product in the operand's own layout."""
    v = t.value
    return v.ndim >= 2 and not v.flags.c_contiguous and np.swapaxes(v, -1, -2).flags.c_contiguous


def _matmul_vjp_batched(a, b, g, lead, need_a, need_b):
    """matmul's gradient for a batch of cotangents, each product one matrix product over the batch."""
    batch = g.shape[:lead]
    n_batch = int(np.prod(batch))
    ga = gb = None
    if a.ndim == 2 and b.ndim == 2:
        (m, k), n = a.shape, b.shape[1]
        if need_a:
            ga = reshape(matmul(reshape(g, (n_batch * m, n)), _swap_last(b)), batch + (m, k))
        if need_b:
            gm = reshape(transpose(reshape(g, (n_batch, m, n)), (1, 0, 2)), (m, n_batch * n))
            gb = reshape(transpose(reshape(matmul(_swap_last(a), gm), (k, n_batch, n)), (1, 0, 2)), batch + (k, n))
    elif a.ndim == 2:                   # [m, k] @ [k]: g is batch + [m]
        (m, k) = a.shape
        if need_a:
            ga = mul(reshape(g, batch + (m, 1)), b)
        if need_b:
            gb = a if g.id in IDENTITY_SEEDS else matmul(reshape(g, (n_batch, m)), a)
            gb = reshape(gb, batch + (k,))
    elif b.ndim == 2:                   # [k] @ [k, n]: g is batch + [n]
        k, n = b.shape
        if need_a:
            ga = transpose(b) if g.id in IDENTITY_SEEDS else matmul(reshape(g, (n_batch, n)), _swap_last(b))
            ga = reshape(ga, batch + (k,))
        if need_b:
            gb = mul(reshape(a, (k, 1)), reshape(g, batch + (1, n)))
    else:                               # [k] @ [k]: g is batch + []
        if need_a:
            ga = mul(reshape(g, batch + (1,)), b)
        if need_b:
            gb = mul(reshape(g, batch + (1,)), a)
    return ga, gb


def matmul_jvp(r, ts):
    a, b = r.inputs[:2]             # (a convolution's product has its padded input after them: ops/nn.py)
    y = r.output
    parts = []
    a2 = a.shape if a.ndim > 1 else (1,) + a.shape
    b2 = b.shape if b.ndim > 1 else b.shape + (1,)
    bshape = np.broadcast_shapes(a2[:-2], b2[:-2])
    if ts[0] is not None:
        t = ts[0]
        lead = t.ndim - a.ndim
        batch = t.shape[:lead]
        if not lead:
            parts.append(matmul(t, b))
        elif t.id in IDENTITY_SEEDS and a.ndim == 1 and b.ndim == 2:
            parts.append(b)                       # e_i @ b = b[i]
        elif a.ndim <= 2 and b.ndim == 2:
            rows = int(np.prod(batch)) * (a.shape[0] if a.ndim == 2 else 1)
            parts.append(reshape(matmul(reshape(t, (rows, a.shape[-1])), b), batch + y.shape))
        else:
            t2 = reshape(t, batch + (1,) * (len(bshape) - len(a2[:-2])) + a2)
            bb = b if b.ndim > 1 else reshape(b, b2)
            parts.append(reshape(matmul(t2, bb), batch + y.shape))
    if ts[1] is not None:
        t = ts[1]
        lead = t.ndim - b.ndim
        batch = t.shape[:lead]
        if not lead:
            parts.append(matmul(a, t))
        elif t.id in IDENTITY_SEEDS and b.ndim == 1 and a.ndim == 2:
            parts.append(transpose(a))            # a @ e_i = a[:, i]
        elif b.ndim == 1 and a.ndim <= 2:
            # a @ t_i for every row t_i: one product t @ a^T
            parts.append(reshape(matmul(reshape(t, (int(np.prod(batch)), b.shape[0])),
                                        _swap_last(a) if a.ndim == 2 else a), batch + y.shape))
        else:
            t2 = reshape(t, batch + (1,) * (len(bshape) - len(b2[:-2])) + b2)
            aa = a if a.ndim > 1 else reshape(a, a2)
            parts.append(reshape(matmul(aa, t2), batch + y.shape))
    total = None
    for p in parts:
        total = p if total is None else add(total, p)
    return total


MATMUL = register("matmul", weighed=True, vjp=matmul_vjp, jvp=matmul_jvp, saves=(0, 1))



def matmul(a, b):
    a, b = to_tensor(a), to_tensor(b)
    if a.ndim >= 2 and b.ndim >= 2:     # an outer product can be far larger than its inputs
        try:
            shape = np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + (a.shape[-2], b.shape[-1])
        except ValueError:
            shape = ()                  # the kernel names the shapes
        admit_result(shape, a.dtype, "the result of matmul")
    result = apply(MATMUL, (a, b))
    if current().functions:     # (a fused MatMul's start: ops/remapper.py)
        remapper.product(result)
    return result
