"""TensorFlow's float32 convolutions on an x86 CPU with AVX-512, bit for bit (the forward pass, and the gradients where
said below): TensorFlow runs Conv2D and Conv3D (and Conv1D, a Conv2D over a height of one) with oneDNN there (on by
default), whose brgemm kernel sums each output as one chain of fused multiply-adds from zero over the window's taps
and, within a tap, the input channels: taps in (depth, height, width) order, except where oneDNN relocates the input
of a one-channel convolution to make its height and width one long reduction (its "whi" relocation, weights laid out
width-major: the taps run column by column). oneDNN chooses that (jit_brgemm_conv_utils.cpp) for a one-channel 2-D
convolution without dilation, more than four outputs wide, more than one tap high, whose weights TensorFlow hands
over in a blocked layout (not for a batch of one, where it passes them plain), and whose width TensorFlow does not
fold into the channels (a stride of k > 1 taps with no padding at the sides: :func:`tap_order`). Measured against
TensorFlow 2.21's pip wheel (oneDNN 3.7) on an AVX-512 machine for 1 to 1,024 channels, kernels of 1 to 5 taps a
side, strides 1 to 3, dilation, SAME and VALID padding and batches of 1 to 64; 301 of them recorded
(benchmarks/record_tf_conv.py, tests/data/tf_conv_bits.json). The padding's taps add nothing.

The kernel's gradient of a 1-D or 2-D convolution (Conv2DBackpropFilter: oneDNN's jit backward-weights kernel, its
minibatch-reduction harness) is followed too (:func:`filter_grad_plan`, :func:`filter_grad`): oneDNN splits the
batch between TensorFlow's threads by its cost model (``balance``), a thread's images one after another; with
fewer than 16 input channels, a stride or a dilation along the width (its "embedded broadcast" kernel) each
thread's part is one chain of fused multiply-adds over its windows in order, and otherwise (its "explicit
broadcast" kernel) a chain from zero over each run of up to 28 outputs along a row, added to the thread's part
in turn; the threads' parts are then added in order. 1x1 kernels (oneDNN's own 1x1 kernel) and 3-D ones keep
matmul's product. Measured for 1 to 4 threads, 1 to 256 channels, batches of 1 to 64, outputs 1 to 40 wide.
TensorFlow's threads are as many as the CPUs the process may run on (tf_sums.POOL_THREADS): the bits of a
batch's kernel gradient depend on the machine's CPUs, and tapecli follows TensorFlow on the same machine.
The input's gradient (Conv2DBackpropInput, oneDNN's forward kernel over the flipped kernel) is followed for
strides 1 and 2 (:func:`input_grad_chains`): stride 1 with SAME padding one chain; with VALID padding a chain
over each kernel column apart where the kernel is at least as wide as high, over each tap apart where it is
higher, their sums added from the last (where the rows split evenly between TensorFlow's threads, up to 64
channels either side: elsewhere oneDNN's cost model may choose one chain); stride 2 (oneDNN's strided
backward-data kernel, the taps in order) one chain for an input of odd width and a chain over each column apart
for an even one. Other strides keep matmul's products (docs/design.md).

A chain over k taps is k NumPy steps over every output (about 4 ns a multiply-add on one core, where OpenBLAS
takes a tenth of a nanosecond): products of more than ``NUMPY_LIMIT`` multiply-adds run a Numba kernel of the
same bits (the CPU's fused multiply-add over a vector of filters, four chains at once: about 0.03 ns at the CNN
benchmark's shapes), and those of more than ``STEP_LIMIT`` (or where numba cannot be imported), other machines,
dtypes, and operands whose products could underflow (TensorFlow flushes them to zero) keep the product of
tapecli's matmul."""
from __future__ import annotations

import numpy as np

from tapecli.kernels.tf_matmul import fma, fma_chain, may_underflow
from tapecli.kernels.cpu import vector_width
from tapecli.kernels.tf_sums import POOL_THREADS

NUMPY_LIMIT = 1 << 20       # multiply-adds (outputs times the kernel's rows) of the largest product NumPy computes
STEP_LIMIT = 1 << 24        # those of the largest product computed here (Numba's kernel: 1 to 4 ms)
NUMPY_CHAIN = 256           # the longest chain of the kernel's gradient that NumPy computes (a step per element)
_ROW_RUN = 28               # oneDNN's backward-weights kernel: the most outputs of a row it sums in registers
_F32 = np.float32


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


def _same_pads(n, k, stride, dilation) -> tuple[int, int]:
    """TensorFlow's SAME padding (before, after) of an axis of ``n`` elements for a window of ``k`` taps."""
    total = max((-(-n // stride) - 1) * stride + (k - 1) * dilation + 1 - n, 0)
    return total // 2, total - total // 2


def input_grad_chains(shape, size, strides, dilations, pads, filters) -> tuple[tuple[int, ...], ...] | None:
    """How TensorFlow sums the input's gradient of a 1-D or 2-D convolution of an input of ``shape`` [batch,
    *spatial, channels] into ``filters`` (Conv2DBackpropInput), or None where it is not followed: the chains of
    the flipped kernel's taps (row-major indices, the original's from the last), each a chain of fused
    multiply-adds from zero over its taps and, within a tap, the output channels, the chains' sums added in turn.

    Stride 1 (oneDNN's forward kernel over the flipped kernel). SAME padding: one chain (its "vpad" execution).
    VALID: its "base" execution, which sums each kernel column apart where a row's windows reach past the input
    (in the inverted convolution, every column), a column's taps in one chain where the kernel is at least as
    wide as high and each tap apart where it is higher (its ``kh_block_pad``); one chain for one column. That
    holds where its cost model keeps each row in one block: measured for 1 to 64 channels either side, inputs up
    to 128 wide, on 2, 4 and 8 threads, where the rows (batch times height) split evenly between the threads;
    elsewhere it may split them and take the vpad execution's one chain (an odd number of rows on 2 threads, one
    input 197 wide): not followed.

    Stride 2, SAME or VALID (oneDNN's strided backward-data kernel, the original's taps in order): an input of
    odd width is copied (its "trans" execution): one chain; of even width ("base"), a chain over each kernel
    column apart, the columns' sums added in order. Measured for 1 to 64 channels either side, inputs up to 128
    wide, on 2 and 8 threads, for batches that split evenly between the threads (others, 1 or 3 images on 2, it
    may split along the width, a block's columns then in one chain: not followed)."""
    if len(size) > 2 or vector_width() != 16:
        return None
    kh, kw = (1, *size)[-2:]
    taps, spatial = kh * kw, shape[1:-1]
    same = all(tuple(p) == _same_pads(n, k, s, d) for n, k, s, d, p in zip(spatial, size, strides, dilations, pads))
    valid = all(tuple(p) == (0, 0) for p in pads)
    if same and all(s == 1 for s in strides):
        return (tuple(range(taps)),)
    if not (same or valid) or shape[-1] > 64 or filters > 64 or shape[-2] > 128:
        return None
    if all(s == 1 for s in strides):
        if kw == 1:
            return (tuple(range(taps)),)
        if shape[0] * (spatial[0] if len(size) == 2 else 1) % POOL_THREADS:
            return None
        if kw >= kh:
            return tuple(tuple(i * kw + j for i in range(kh)) for j in range(kw))
        return tuple((tap,) for tap in range(taps))
    one_row = kh == 1 and (len(size) == 1 or spatial[0] == 1)        # (TensorFlow's conv1d: strides (1, s))
    measured = {(2, 2), (1, 2)} if one_row else {(2, 2)}
    if (1, *strides)[-2:] not in measured or any(d != 1 for d in dilations) or shape[0] % POOL_THREADS:
        return None
    if shape[-2] % 2:
        return (tuple(reversed(range(taps))),)
    return tuple(tuple(i * kw + j for i in reversed(range(kh))) for j in reversed(range(kw)))


def _div_up(a, b) -> int:
    return -(-a // b)


def _balance211(n, team, member) -> tuple[int, int]:
    """oneDNN's split of n items between ``team`` members: the first ones take one more where it is uneven."""
    larger = _div_up(n, team)
    at_larger = n - (larger - 1) * team
    start = larger * member if member < at_larger else at_larger * larger + (member - at_larger) * (larger - 1)
    return start, start + (larger if member < at_larger else larger - 1)


def _minibatch_threads(batch, channels, filters, image, out, size, strides, threads) -> int:
    """How many of ``threads`` oneDNN's backward-weights kernel splits the batch between (its ``balance``: the
    split of batch, output and input channel blocks of least memory traffic, then of less work)."""
    in_block = channels if channels < 16 else 16
    in_blocks, out_blocks = _div_up(channels, in_block), _div_up(filters, 16)
    (ih, iw), (oh, ow), (kh, kw), (sh, sw) = image, out, size, strides

    def memory(mb, ocb, icb):
        source = _div_up(batch, mb) * _div_up(in_blocks, icb) * in_block * ih * iw // sh // sw
        return source + _div_up(batch, mb) * _div_up(out_blocks, ocb) * 16 * oh * ow \
            + 8 * _div_up(out_blocks, ocb) * _div_up(in_blocks, icb) * kh * kw * in_block * 16

    def work(mb, ocb, icb):
        return _div_up(batch, mb) * _div_up(out_blocks, ocb) * _div_up(in_blocks, icb)

    splits = [(mb, ocb, min(threads // mb // ocb, in_blocks)) for mb in range(1, min(threads, batch) + 1)
              for ocb in range(1, min(threads // mb, out_blocks) + 1)]
    best, least_memory = (1, 1, 1), memory(1, 1, 1)
    for split in splits:
        if memory(*split) <= least_memory:
            best, least_memory = split, memory(*split)
    least_work = work(*best)
    for split in splits:
        if work(*split) <= least_work and memory(*split) < 1.1 * least_memory or 4 * work(*split) <= 3 * least_work:
            best, least_work = split, work(*split)
    mb = best[0]
    return min(batch, threads) if threads // 2 < mb < threads else mb


def _row_runs(width, right) -> tuple[int, ...]:
    """The runs of a row of ``width`` outputs that the explicit-broadcast kernel sums apart (``right``: the
    padding after the row's last window)."""
    if width <= _ROW_RUN:
        return (width,)
    run, runs, tail = _ROW_RUN, width // _ROW_RUN, width % _ROW_RUN
    if (tail == 0 and right != 0) or 0 < right >= tail:
        if runs > 1:
            tail, runs = tail + run, runs - 1
        else:
            tail, run = tail + run - run // 2, run // 2
    return (run,) * runs + ((tail,) if tail else ())


def filter_grad_plan(shape, size, strides, dilations, pads, out, filters):
    """How oneDNN sums the kernel's gradient of a 2-D convolution of an input of ``shape`` [batch, height,
    width, channels] into ``filters`` output channels on this machine's CPUs (see the module's docstring), or
    None where it is not followed: ((first image, last image + 1) of each thread, outputs per image, the runs of
    a row summed apart (None: each thread's part one chain))."""
    if len(size) != 2 or size == (1, 1):
        return None
    batch, height, width, channels = shape
    mb = _minibatch_threads(batch, channels, filters, (height, width), out, size, strides, POOL_THREADS)
    bounds = tuple(_balance211(batch, mb, member) for member in range(mb)) if mb > 1 else ((0, batch),)
    explicit = channels >= 16 and strides[1] == 1 and dilations[1] == 1
    return bounds, out[0] * out[1], _row_runs(out[1], pads[1][1]) * out[0] if explicit else None


def _filter_grad_blocks(plan):
    """The (start, stop) of each chain over the windows, and the index of each thread's first chain."""
    bounds, per_image, runs = plan
    blocks, firsts = [], []
    for first, last in bounds:
        firsts.append(len(blocks))
        if runs is None:
            blocks.append((first * per_image, last * per_image))
            continue
        start = first * per_image
        for _ in range(first, last):
            for run in runs:
                blocks.append((start, start + run))
                start += run
    return np.array(blocks, np.int64).reshape(-1, 2), np.array(firsts + [len(blocks)], np.int64)


def filter_grad(rows, g, plan) -> np.ndarray | None:
    """``rows.T @ g`` of a convolution's windows [outputs, taps * channels] and its output's gradient
    [outputs, filters] as oneDNN sums the kernel's gradient (``plan``: :func:`filter_grad_plan`), or None where
    that does not apply."""
    if plan is None or rows.dtype != _F32 or g.dtype != _F32 or rows.ndim != 2 or g.ndim != 2 \
            or rows.shape[0] != g.shape[0] or rows.shape[0] != plan[0][-1][1] * plan[1] or not rows.size \
            or not g.size or rows.size * g.shape[1] > STEP_LIMIT or vector_width() != 16:
        return None
    blocks, firsts = _filter_grad_blocks(plan)
    longest = int((blocks[:, 1] - blocks[:, 0]).max())
    if longest > NUMPY_CHAIN or rows.size * g.shape[1] > NUMPY_LIMIT:
        compiled = _compiled()
        return None if compiled is None else compiled.blocked_chains(rows, g, blocks, firsts)
    if may_underflow(rows, g):
        return None
    with np.errstate(all="ignore"):
        sums = np.zeros((len(blocks), rows.shape[1], g.shape[1]), _F32)
        for step in range(longest):                     # the step-th window of every chain at once
            at = blocks[:, 0] + step
            live = at < blocks[:, 1]
            at = at[live]
            sums[live] = fma(rows[at][:, :, None], g[at][:, None, :], sums[live])
        total = None
        for first, last in zip(firsts[:-1], firsts[1:]):
            part = sums[first]
            for block in range(first + 1, last):
                part = part + sums[block]
            total = part if total is None else total + part
    return total


def product(rows, kernel, chains=None) -> np.ndarray | None:
    """``rows @ kernel`` of a convolution's windows [outputs, taps * channels] (taps, then channels) and its
    kernel [taps * channels, filters], summed as oneDNN sums it, or None where that does not apply (see the
    module's docstring). ``chains``: tuples of taps, each summed as one chain from zero in its order (a tap's
    channels in order), the chains' sums added in turn (:func:`tap_order`'s order as one chain;
    :func:`input_grad_chains`); None: one chain over the taps in row-major order."""
    if rows.dtype != _F32 or kernel.dtype != _F32 or rows.ndim != 2 or kernel.ndim != 2 \
            or rows.shape[1] != kernel.shape[0] or not rows.size or not kernel.size \
            or rows.shape[0] * kernel.size > STEP_LIMIT or vector_width() != 16:
        return None
    depth = kernel.shape[0]
    orders = [range(depth)]
    if chains is not None:
        channels = depth // sum(len(chain) for chain in chains)
        orders = [[tap * channels + c for tap in chain for c in range(channels)] for chain in chains]
    if rows.shape[0] * kernel.size > NUMPY_LIMIT:
        compiled = _compiled()
        return None if compiled is None else compiled.chains(rows, kernel, orders)
    if may_underflow(rows, kernel):
        return None
    shape = (rows.shape[0], kernel.shape[1])
    total = None
    with np.errstate(all="ignore"):
        for order in orders:
            part = fma_chain(rows[:, order].T[..., None], kernel[order][:, None], np.zeros(shape, _F32))
            total = part if total is None else total + part
    return total


def _compiled():
    """The Numba kernels' module (tf_conv_numba), or None where numba cannot be imported."""
    from tapecli import kernels
    if not kernels.numba_ready():
        return None
    from tapecli.kernels import tf_conv_numba
    return tf_conv_numba
