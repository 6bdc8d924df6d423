"""TensorFlow's float32 convolutions on an x86 CPU with AVX-512, bit for bit (the forward pass): TensorFlow runs
Conv2D and Conv3D (and Conv1D, a Conv2D over a height of one) with oneDNN there (on by default), whose brgemm
kernel sums each output as one chain of fused multiply-adds from zero over the window's taps and, within a
tap, the input channels: taps in (depth, height, width) order, except where oneDNN relocates the input of a
one-channel convolution to make its height and width one long reduction (its "whi" relocation, weights laid
out width-major: the taps run column by column). oneDNN chooses that (jit_brgemm_conv_utils.cpp) for a
one-channel 2-D convolution without dilation, more than four outputs wide, more than one tap high, whose
weights TensorFlow hands over in a blocked layout (not for a batch of one, where it passes them plain), and
whose width TensorFlow does not fold into the channels (a stride of k > 1 taps with no padding at the sides:
:func:`tap_order`). Measured against TensorFlow 2.21's pip wheel (oneDNN 3.7) on an AVX-512 machine for 1 to
1,024 channels, kernels of 1 to 5 taps a side, strides 1 to 3, dilation, SAME and VALID padding and batches of
1 to 64; 213 of them recorded (benchmarks/record_tf_conv.py, tests/data/tf_conv_bits.json). The padding's taps
add nothing.

The gradients are not followed here (they keep matmul's products): TensorFlow's input gradient is a chain over
the flipped kernel where the input's padding is small, but for VALID padding sums each kernel column's chain
apart and adds them; its kernel gradient (oneDNN's jit backward-weights kernel) splits the batch between
TensorFlow's threads and, with padding, sums row by row.

A chain over k taps is k NumPy steps over every output (about 4 ns a multiply-add on one core, where OpenBLAS
takes a tenth of a nanosecond): products of more than ``NUMPY_LIMIT`` multiply-adds run a Numba kernel of the
same bits (about 1 to 2 ns), and those of more than ``STEP_LIMIT`` (or where numba cannot be imported), other
machines, dtypes, and operands whose products could underflow (TensorFlow flushes them to zero) keep the
product of tapecli's matmul."""
from __future__ import annotations

import numpy as np

from tapecli.kernels.tf_matmul import fma, may_underflow
from tapecli.kernels.tf_onednn import vector_width

NUMPY_LIMIT = 1 << 20       # multiply-adds (outputs times the kernel's rows) of the largest product NumPy computes
STEP_LIMIT = 1 << 24        # those of the largest product computed here (Numba's kernel: about 30 ms)
_F32, _F64 = np.float32, np.float64


def tap_order(shape, size, strides, dilations, pads, out) -> tuple[int, ...] | None:
    """The order in which oneDNN sums the taps of the windows of a convolution of an input of ``shape``
    [batch, *spatial, channels] (indices into the taps in row-major order of ``size``), or None for that
    row-major order. ``pads``: (before, after) of each spatial axis; ``out``: the output's spatial sizes."""
    if len(size) != 2 or shape[-1] != 1 or shape[0] == 1 or any(d != 1 for d in dilations):
        return None
    (kh, kw), (_, sw), (_, (left, right)), width = size, strides, pads, shape[2]
    if kh == 1 or out[1] <= 4:
        return None
    if kw > 1 and sw > 1 and left == right == 0 \
            and any(kw % i == 0 and sw % i == 0 and width % i == 0 for i in range(2, min(kw, sw, width) + 1)):
        return None         # (the width folded into the channels: the taps' order is row-major again)
    return tuple(i * kw + j for j in range(kw) for i in range(kh))


def product(rows, kernel, taps=None) -> np.ndarray | None:
    """``rows @ kernel`` of a convolution's windows [outputs, taps * channels] (taps, then channels) and its
    kernel [taps * channels, filters], summed as oneDNN sums it (``taps``: :func:`tap_order`'s order), or None
    where that does not apply (see the module's docstring)."""
    if rows.dtype != _F32 or kernel.dtype != _F32 or rows.ndim != 2 or kernel.ndim != 2 \
            or rows.shape[1] != kernel.shape[0] or not rows.size or not kernel.size \
            or rows.shape[0] * kernel.size > STEP_LIMIT or vector_width() != 16 or may_underflow(rows, kernel):
        return None
    depth = kernel.shape[0]
    order = range(depth)
    if taps is not None:
        channels = depth // len(taps)
        order = [tap * channels + c for tap in taps for c in range(channels)]
    if rows.shape[0] * kernel.size > NUMPY_LIMIT:
        from tapecli import kernels
        if not kernels.numba_ready():
            return None
        from tapecli.kernels import tf_conv_numba
        return tf_conv_numba.chain(rows, kernel, order)
    shape = (rows.shape[0], kernel.shape[1])
    total, wide = np.zeros(shape, _F32), np.empty(shape, _F64)
    with np.errstate(all="ignore"):
        for p in order:
            total = fma(rows[:, p:p + 1], kernel[p:p + 1], total, wide)
    return total
