"""TensorFlow's CTC on the CPU: the dense loss and its gradient, the CTCLoss kernel, and the greedy decoder.

``loss_and_grad`` is ``ctc_loss_dense``'s computation (tensorflow/python/ops/ctc_ops.py: ``ctc_loss_and_grad``,
the batched forward-backward algorithm of Sim et al., 2017, in the log domain), the blank at class 0, each of
its ops as TensorFlow's kernel computes it: log_softmax, exp, log and the sums are the kernels room's
(TensorFlow's bits where it follows them), reduce_logsumexp is TensorFlow's composition (``logsumexp``), and
the loop's steps are the scan's, one frame at a time, in its order. The signed zeros its constants carry
(``(1 - mask) * log_0``, the scan's outputs started from zeros) are kept, since a sum of them is what the
loss reads. Its exp, log and log_softmax run a piece of whole packets at a time (``_in_pieces``) and its sums a
block of the first axis at a time (``_sum``), so that tensors past the kernels room's exact sizes keep
TensorFlow's bits. ``sparse_loss_and_grad`` is the CTCLoss kernel (ctc_loss_calculator.h) of SparseTensor labels,
its per-frame softmax and its scalar loops; ``greedy_decode`` is the CTCGreedyDecoder kernel
(ctc_decoder_ops.cc): per frame the first greatest class, summed negated from 0 in the logits' dtype."""
from __future__ import annotations

import numpy as np

from .numpy_kernels import RAW_KERNELS as K
from . import tf_float32
from .tf_float32 import PACKET, PACKET_LIMIT
from .tf_sums import EXACT_MOST


def _in_pieces(kernel, x, row=1):
    """``kernel`` (elementwise, or on rows of ``row`` values) on ``x`` a piece at a time, each piece small enough
    for the kernels room to give TensorFlow's bits: Eigen's packets run from the tensor's start, so pieces of
    whole packets give what the whole tensor would (a row-wise kernel's packets are of rows too: LogSoftmax's
    log of the rows' sums)."""
    piece = PACKET_LIMIT // row // PACKET * PACKET * row
    if x.dtype != np.float32 or x.size <= piece or not piece:
        return kernel(x)
    flat = np.ascontiguousarray(x).reshape(-1)
    return np.concatenate([kernel(flat[i:i + piece].reshape(-1, row) if row > 1 else flat[i:i + piece])
                           .reshape(-1) for i in range(0, flat.size, piece)]).reshape(x.shape)


def _sum(x, axis):
    """TensorFlow's Sum over ``axis`` (not the first), kept: a block of the first axis at a time, each small
    enough for the kernels room to follow TensorFlow's order (each output's sum is its own)."""
    step = max(1, EXACT_MOST // max(1, x[0].size))
    if x.shape[0] <= step:
        return K["sum"](x, axis=axis, keepdims=True)
    return np.concatenate([K["sum"](x[i:i + step], axis=axis, keepdims=True) for i in range(0, x.shape[0], step)])


def _exp(x):
    return _in_pieces(K["exp"], x)


def _log(x):
    return _in_pieces(K["log"], x)


def _logsumexp(x, axis, keepdims=False):
    """TensorFlow's reduce_logsumexp (math_ops.py): log(sum(exp(x - m))) + m, m the greatest where finite, else 0."""
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0).astype(x.dtype, copy=False)
    out = _log(_sum(_exp(x - m), axis)) + m
    return out if keepdims else np.squeeze(out, axis=axis)


def _one_hot(indices, depth, on, off, dtype):
    """tf.one_hot on the last axis: ``off`` where an index is outside [0, depth)."""
    out = np.full(indices.shape + (depth,), off, dtype=dtype)
    inside = (indices >= 0) & (indices < depth)
    out[inside, indices[inside]] = on
    return out


def _transitions(labels, dtype):
    """``_ctc_state_trans``: [batch, states, states] of 1 where a step may go from state j (column) to state
    i (row). States 0..L are the start and the labels, L+1..2L+1 the blanks after each; a label follows the one
    before it only where the two differ."""
    batch, length = labels.shape
    label_states = length + 1
    trans = np.eye(2 * label_states, dtype=dtype)
    trans[1, 0] = 1
    i = np.arange(label_states)
    trans[i[1:], label_states + i[:-1]] = 1        # a blank to the next label
    trans[label_states + i, i] = 1                 # a label (or the start) to its blank
    trans = np.repeat(trans[None], batch, axis=0)
    trans[:, i[2:], i[1:-1]] += (labels[:, :-1] != labels[:, 1:]).astype(dtype)
    return trans


def _state_log_probs(label_length, length, dtype):
    """``ctc_state_log_probs``: the initial and final states' log probabilities, [batch, states] each, log(0)
    written as float32(log(1e-307)) (the finals' zeros are -0.0: (1 - 1) * log_0)."""
    batch = label_length.shape[0]
    label_states = length + 1
    log_0 = np.float32(np.log(np.float64(0) + 1e-307)).astype(dtype)
    initial = np.full((batch, 2 * label_states), log_0, dtype=dtype)
    initial[:, 0] = 0
    final_mask = _one_hot(label_length, label_states, 1, 0, dtype).T          # [label states, batch]
    final = (dtype.type(1) - np.stack([final_mask, final_mask])) * log_0
    return initial, np.ascontiguousarray(final.reshape(2 * label_states, batch).T)


def _forward_backward(trans_log, initial, final, observed, logit_length):
    """``_forward_backward_log``: the states' posterior log probabilities [frames, batch, states] and each
    sequence's log likelihood."""
    frames, batch, _ = observed.shape
    dtype = observed.dtype
    fwd = np.zeros((frames + 1,) + initial.shape, dtype=dtype)
    fwd[0] += initial
    state = initial
    for t in range(frames):
        state = _logsumexp(state[:, None, :] + trans_log, -1)
        state = state + observed[t]
        state = state - _logsumexp(state, -1, keepdims=True)
        fwd[t + 1] = state
    bwd_trans_log = np.transpose(trans_log, (0, 2, 1))
    mask = (np.arange(frames)[None, :] < logit_length[:, None]).astype(dtype).T        # [frames, batch]
    bwd = np.zeros((frames + 1,) + final.shape, dtype=dtype)
    bwd[frames] += final
    state, cum_log_sum = final, np.zeros(batch, dtype=dtype)
    for t in range(frames - 1, -1, -1):
        state = state + observed[t]
        state = _logsumexp(state[:, None, :] + bwd_trans_log, -1)
        log_prob_sum = _logsumexp(state, -1, keepdims=True)
        state = state - log_prob_sum
        cum_log_sum = cum_log_sum + log_prob_sum[:, 0] * mask[t]
        kept = mask[t][:, None]
        state = state * kept + final * (dtype.type(1) - kept)
        bwd[t] = state
    fwd_bwd = fwd[1:] + bwd[1:]
    fwd_bwd = fwd_bwd - _logsumexp(fwd_bwd, 2, keepdims=True)
    fwd_bwd = fwd_bwd + _log(mask[:, :, None])
    return fwd_bwd, bwd[0, :, 0] + cum_log_sum


def _olabels_unique(fwd_bwd, length, classes, unique_y, unique_idx):
    """``_state_to_olabel_unique``: the label states' posteriors summed per unique label (``_sum_states``), then
    scattered (scatter_nd, from zeros) to their classes; -inf where no label is."""
    frames, batch = fwd_bwd.shape[:2]
    dtype = fwd_bwd.dtype
    at_unique = np.swapaxes(_one_hot(unique_idx, length, 0, -np.inf, dtype), 1, 2)        # [batch, unique, position]
    summed = _logsumexp(fwd_bwd[:, :, None, 1:length + 1] + at_unique[None], -1)          # [frames, batch, unique]
    scatter = np.zeros((batch, classes, frames), dtype=dtype)
    hit = np.zeros((batch, classes), dtype=bool)
    rows = np.repeat(np.arange(batch), unique_y.shape[1])
    np.add.at(scatter, (rows, unique_y.reshape(-1)), summed.transpose(1, 2, 0).reshape(-1, frames))
    hit[rows, unique_y.reshape(-1)] = True
    scatter = np.where(hit[:, :, None], scatter, dtype.type(-np.inf))
    return scatter.transpose(2, 0, 1)[:, :, 1:]


def loss_and_grad(logits, labels, label_length, logit_length, *unique):
    """``ctc_loss_and_grad``: the per-sequence losses [batch] and the gradient of their sum to ``logits``
    [frames, batch, classes] (time-major, the blank at class 0; ``labels`` [batch, max label length]); with
    ``unique`` (each row's unique labels and the index of each label among them) the posteriors per class are
    summed as ``_state_to_olabel_unique`` sums them."""
    dtype = logits.dtype
    frames, batch, classes = logits.shape
    length = labels.shape[1]
    ilabel_log_probs = _in_pieces(lambda rows: K["log_softmax"](rows, axis=-1), logits, classes)
    # _ilabel_to_state: each label state's class log probability, the blanks', and the start's log(0)
    picked = _sum(ilabel_log_probs[:, :, None, :] * _one_hot(labels, classes, 1, 0, dtype)[None], 3)[..., 0]
    blank = np.repeat(ilabel_log_probs[:, :, :1], length + 1, axis=2)
    observed = np.concatenate([np.full((frames, batch, 1), -np.inf, dtype=dtype), picked, blank], axis=2)
    initial, final = _state_log_probs(label_length, length, dtype)
    fwd_bwd, log_likelihood = _forward_backward(_log(_transitions(labels, dtype)), initial, final, observed,
                                                logit_length)
    # _state_to_olabel: the posteriors summed per class
    if unique:
        label_olabels = _olabels_unique(fwd_bwd, length, classes, *unique)
    else:
        label_states = fwd_bwd[:, :, 1:length + 1, None] + _one_hot(labels - 1, classes - 1, 0, -np.inf, dtype)[None]
        label_olabels = _logsumexp(label_states, 2)
    olabel_log_probs = np.concatenate([_logsumexp(fwd_bwd[:, :, length + 1:], 2, keepdims=True), label_olabels],
                                      axis=-1)
    grad = _exp(ilabel_log_probs) - _exp(olabel_log_probs)
    grad *= (np.arange(frames)[:, None] < logit_length[None, :]).astype(dtype)[:, :, None]
    return -log_likelihood, grad


def greedy_decode(inputs, sequence_length, merge_repeated, blank_index):
    """CTCGreedyDecoder: (indices [n, 2] of (batch, position), values [n], dense shape [batch, longest],
    neg_sum_logits [batch, 1]) as int64, int64, int64 and the inputs' dtype."""
    batch = inputs.shape[1]
    best = np.zeros(inputs.shape[:2], dtype=np.int64)
    greatest = inputs[:, :, 0]
    for c in range(1, inputs.shape[2]):         # RowMax: the first greatest (a NaN after the first never is)
        greater = inputs[:, :, c] > greatest
        greatest = np.where(greater, inputs[:, :, c], greatest)
        best[greater] = c
    rows = []
    neg_sum = np.zeros((batch, 1), dtype=inputs.dtype)
    for b in range(batch):
        row, previous = [], -1
        for t in range(int(sequence_length[b])):
            c = int(best[t, b])
            neg_sum[b, 0] -= inputs[t, b, c]
            if c != blank_index and not (merge_repeated and c == previous):
                row.append(c)
            previous = c
        rows.append(row)
    indices = np.array([(b, i) for b, row in enumerate(rows) for i in range(len(row))], dtype=np.int64).reshape(-1, 2)
    values = np.array([c for row in rows for c in row], dtype=np.int64)
    shape = np.array([batch, max((len(row) for row in rows), default=0)], dtype=np.int64)
    return indices, values, shape, neg_sum



# ------------------------------------------------------------------ the CTCLoss kernel (SparseTensor labels)

_EXPF, _LOGF, _LOG1PF = (tf_float32.CFunction(name, 1, f) for name, f in
                         (("expf", np.exp), ("logf", np.log), ("log1pf", np.log1p)))
_NEG_INF = float("-inf")


def _f32(v: float) -> float:
    """A double's float32 rounding (a sum of two float32 values rounded so is their float32 sum)."""
    return float(np.float32(v))


def _log_sum_exp(a: float, b: float) -> float:
    """ctc_loss_util.h's LogSumExp of two float32 log probabilities: the larger plus log1pf(expf(difference))."""
    if a == _NEG_INF:
        return b
    if b == _NEG_INF:
        return a
    if a > b:
        return _f32(a + _LOG1PF(_EXPF(_f32(b - a))))
    return _f32(b + _LOG1PF(_EXPF(_f32(a - b))))


def _core_row_sums(e):
    """Eigen Core's sum of each row (a vector's redux): two packet accumulators over pairs of packets, a last
    packet added to the first, the packet's horizontal sum, then the tail one by one; under one packet, in order."""
    rows, n = e.shape
    whole = n - n % PACKET
    if not whole:
        total = e[:, 0].copy()
        for i in range(1, n):
            total += e[:, i]
        return total
    first = e[:, :PACKET].copy()
    if whole > PACKET:
        second = e[:, PACKET:2 * PACKET].copy()
        pairs = n // (2 * PACKET) * 2 * PACKET
        for i in range(2 * PACKET, pairs, 2 * PACKET):
            first += e[:, i:i + PACKET]
            second += e[:, i + PACKET:i + 2 * PACKET]
        first += second
        if whole > pairs:
            first += e[:, pairs:pairs + PACKET]
    half = first[:, :4] + first[:, 4:]
    total = (half[:, 0] + half[:, 2]) + (half[:, 1] + half[:, 3])
    for i in range(whole, n):
        total += e[:, i]
    return total


def _softmax_rows(rows):
    """The calculator's softmax of each frame: Eigen's exp of the row less its greatest, all of it in packets (the
    tail a partial packet: Eigen's assignment of a vector's segment), over its Core sum."""
    count, n = rows.shape
    padded = np.zeros((count, -(-n // PACKET) * PACKET), dtype=np.float32)
    padded[:, :n] = rows - rows.max(axis=1, keepdims=True)
    e = tf_float32._exp_packets(padded.reshape(-1)).reshape(padded.shape)[:, :n]
    return e / _core_row_sums(e)[:, None]


def _alphas(l_prime, log_y, blank):
    """CalculateForwardVariables (ctc_merge_repeated): log alpha [U, T], -inf where no path reaches."""
    u_count, frames = len(l_prime), len(log_y)
    alpha = [[_NEG_INF] * frames for _ in range(u_count)]
    alpha[0][0] = log_y[0][blank]
    alpha[1][0] = log_y[0][l_prime[1] if u_count > 1 else blank]
    for t in range(1, frames):
        for u in range(max(0, u_count - 2 * (frames - t)), min(u_count, 2 * (t + 1))):
            total = alpha[u][t - 1]
            if u > 0:
                total = _log_sum_exp(total, alpha[u - 1][t - 1])
            if u > 1 and l_prime[u] != blank and l_prime[u] != l_prime[u - 2]:
                total = _log_sum_exp(total, alpha[u - 2][t - 1])
            alpha[u][t] = _f32(log_y[t][l_prime[u]] + total)
    return alpha


def _betas(l_prime, log_y, blank):
    """CalculateBackwardVariables (ctc_merge_repeated): log beta [U, T]."""
    u_count, frames = len(l_prime), len(log_y)
    beta = [[_NEG_INF] * frames for _ in range(u_count)]
    for u in range(u_count - 2, u_count):
        beta[u][frames - 1] = 0.0
    for t in range(frames - 2, -1, -1):
        for u in range(max(0, u_count - 2 * (frames - t)), min(u_count, 2 * (t + 1))):
            value = _log_sum_exp(beta[u][t], _f32(beta[u][t + 1] + log_y[t + 1][l_prime[u]]))
            if u + 1 < u_count:
                value = _log_sum_exp(value, _f32(beta[u + 1][t + 1] + log_y[t + 1][l_prime[u + 1]]))
            if u + 2 < u_count and l_prime[u] != blank and l_prime[u] != l_prime[u + 2]:
                value = _log_sum_exp(value, _f32(beta[u + 2][t + 1] + log_y[t + 1][l_prime[u + 2]]))
            beta[u][t] = value
    return beta


def sparse_loss_and_grad(logits, label_rows, sequence_length):
    """The CTCLoss kernel (ctc_loss_calculator.h; preprocess_collapse_repeated False, ctc_merge_repeated True,
    the blank the last class): each sequence's loss and the gradient [frames, batch, classes] (zero past its
    length and for a sequence of no frames), from float32 time-major ``logits`` and each sequence's labels
    (checked by the caller)."""
    frames, batch, classes = logits.shape
    blank = classes - 1
    loss = np.zeros(batch, dtype=np.float32)
    grad = np.zeros(logits.shape, dtype=np.float32)
    for b in range(batch):
        n = int(sequence_length[b])
        if n == 0:
            continue
        l_prime = [blank]
        for label in label_rows[b]:
            l_prime += [label, blank]
        y = _softmax_rows(logits[:n, b, :])
        log_y = [[_LOGF(v) for v in row] for row in y.tolist()]
        alpha, beta = _alphas(l_prime, log_y, blank), _betas(l_prime, log_y, blank)
        log_p = _NEG_INF
        for u in range(len(l_prime)):
            log_p = _log_sum_exp(log_p, _f32(alpha[u][0] + beta[u][0]))
        loss[b] = -log_p
        if log_p == _NEG_INF:
            grad[:n, b] = y
            continue
        for t in range(n):
            prob_sum = [_NEG_INF] * classes
            for u, label in enumerate(l_prime):
                prob_sum[label] = _log_sum_exp(prob_sum[label], _f32(alpha[u][t] + beta[u][t]))
            grad[t, b] = y[t] - np.array([_EXPF(_f32(v - log_p)) for v in prob_sum], dtype=np.float32)
    return loss, grad
