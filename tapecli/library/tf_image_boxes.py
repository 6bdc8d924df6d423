"""tf.image's non-max suppression of boxes [y1, x1, y2, x2] by score: non_max_suppression (NonMaxSuppressionV3),
non_max_suppression_with_scores (V5: soft-NMS with ``soft_nms_sigma``) as their CPU kernel selects, in its
dtype (IoU and the Gaussian weights in float32 for float32 boxes), and non_max_suppression_padded as TensorFlow's
Python computes it (non_max_suppression_padded_v2: boxes sorted by score, then suppressed a tile at a time).
Their results are indices and scores, which have no gradient in TensorFlow."""
from __future__ import annotations

import heapq
import math

import numpy as np

from tapecli import ops
from tapecli.errors import KernelValueError, ShapeError, TdfValueError
from tapecli.interpreter.registry import builtin
from tapecli.library.core import NamedResult, to_float, to_int, truth
from tapecli.runtime.values import PythonTuple, Tensor


def _boxes_scores(boxes, scores, what):
    b, s = ops.to_tensor(boxes), ops.to_tensor(scores)
    b = ops.materialize(b) if b.weak else b
    s = ops.materialize(s) if s.weak else s
    if b.ndim != 2 or b.shape[1] != 4:
        raise KernelValueError(f"boxes must be 2-D with 4 columns (the kernel of {what}), got shape {list(b.shape)}")
    if s.ndim != 1 or s.shape[0] != b.shape[0]:
        raise KernelValueError(f"scores has incompatible shape: {list(s.shape)} for {b.shape[0]} boxes")
    return np.asarray(b.value), np.asarray(s.value)


def _iou(boxes, i, j):
    """The kernel's IOU of boxes i and j, in the boxes' dtype (0 for a box of no area)."""
    a, b = boxes[i], boxes[j]
    ymin_i, xmin_i, ymax_i, xmax_i = min(a[0], a[2]), min(a[1], a[3]), max(a[0], a[2]), max(a[1], a[3])
    ymin_j, xmin_j, ymax_j, xmax_j = min(b[0], b[2]), min(b[1], b[3]), max(b[0], b[2]), max(b[1], b[3])
    area_i = (ymax_i - ymin_i) * (xmax_i - xmin_i)
    area_j = (ymax_j - ymin_j) * (xmax_j - xmin_j)
    zero = boxes.dtype.type(0)
    if area_i <= zero or area_j <= zero:
        return zero
    inter = max(min(ymax_i, ymax_j) - max(ymin_i, ymin_j), zero) * max(min(xmax_i, xmax_j) - max(xmin_i, xmin_j), zero)
    return inter / (area_i + area_j - inter)


def _suppress(boxes, scores, max_output_size, iou_threshold, score_threshold, soft_nms_sigma=0.0):
    """DoNonMaxSuppressionOp: candidates popped by score (the lower index first among equals), each compared with
    the boxes selected since it was last compared, newest first; a hard suppression drops it, a soft one lowers
    its score and puts it back while it stays above score_threshold."""
    size = to_int(max_output_size, "max_output_size")
    if size < 0:
        raise KernelValueError("output size must be non-negative")
    t = scores.dtype.type
    threshold, floor, sigma = t(to_float(iou_threshold)), t(to_float(score_threshold)), t(to_float(soft_nms_sigma))
    if not t(0) <= threshold <= t(1):
        raise KernelValueError("iou_threshold must be in [0, 1]")
    soft = sigma > t(0)
    scale = t(-0.5) / sigma if soft else t(0)
    queue = [(-scores[i], i, scores[i], 0) for i in range(len(scores)) if scores[i] > floor]
    heapq.heapify(queue)
    selected, kept = [], []
    while len(selected) < size and queue:
        _, index, score, begin = heapq.heappop(queue)
        original, hard = score, False
        for j in range(len(selected) - 1, begin - 1, -1):
            similarity = _iou(boxes, index, selected[j])
            weight = t(math.exp(scale * similarity * similarity))      # (the C library's expf: rounded so)
            score = score * (weight if soft or similarity <= threshold else t(0))
            if not soft and similarity > threshold:
                hard = True
                break
            if score <= floor:
                break
        if hard:
            continue
        if score == original:
            selected.append(index)
            kept.append(score)
        elif score > floor:
            heapq.heappush(queue, (-score, index, score, len(selected)))
    return selected, kept


@builtin("image.non_max_suppression")
def non_max_suppression(boxes, scores, max_output_size, iou_threshold=0.5, score_threshold=float("-inf"),
                        name=None):
    b, s = _boxes_scores(boxes, scores, "NonMaxSuppressionV3")
    selected, _ = _suppress(b, s, max_output_size, iou_threshold, score_threshold)
    return Tensor(np.array(selected, dtype=np.int32))


@builtin("image.non_max_suppression_with_scores")
def non_max_suppression_with_scores(boxes, scores, max_output_size, iou_threshold=0.5,
                                    score_threshold=float("-inf"), soft_nms_sigma=0.0, name=None):
    """The selected indices and their scores (lowered by soft-NMS where soft_nms_sigma > 0)."""
    b, s = _boxes_scores(boxes, scores, "NonMaxSuppressionV5")
    selected, kept = _suppress(b, s, max_output_size, iou_threshold, score_threshold, soft_nms_sigma)
    return NamedResult(("selected_indices", "selected_scores"),
                       [Tensor(np.array(selected, dtype=np.int32)), Tensor(np.array(kept, dtype=s.dtype))])


# ----------------------------------------------------------------- padded (TensorFlow's tiled algorithm)

@builtin("image.non_max_suppression_padded")
def non_max_suppression_padded(boxes, scores, max_output_size, iou_threshold=0.5, score_threshold=float("-inf"),
                               pad_to_max_output_size=False, name=None, sorted_input=False,
                               canonicalized_coordinates=False, tile_size=512):
    """(indices, number valid): the indices padded with 0 to max_output_size where pad_to_max_output_size, for
    boxes [..., num_boxes, 4] of any batch dimensions (only one image unpadded)."""
    b, s = ops.to_tensor(boxes), ops.to_tensor(scores)
    b = np.asarray((ops.materialize(b) if b.weak else b).value)
    s = np.asarray((ops.materialize(s) if s.weak else s).value)
    pad_out = truth(pad_to_max_output_size)
    if not pad_out and b.ndim > 2:
        raise TdfValueError(f"'pad_to_max_output_size' (value {pad_to_max_output_size}) must be True for batched "
                            "input")
    if b.ndim < 2 or b.shape[-1] != 4 or s.shape != b.shape[:-1]:
        raise ShapeError(f"non_max_suppression_padded needs boxes [..., num_boxes, 4] and scores [..., num_boxes], "
                         f"got shapes {list(b.shape)} and {list(s.shape)}")
    batch_dims, n = b.shape[:-2], b.shape[-2]
    size, tile = to_int(max_output_size, "max_output_size"), to_int(tile_size, "tile_size")
    idx, valid = _padded_v2(b.reshape(-1, n, 4), s.reshape(-1, n), size, to_float(iou_threshold),
                            to_float(score_threshold), truth(sorted_input), truth(canonicalized_coordinates), tile)
    if not pad_out:
        return PythonTuple([Tensor(idx[0, :valid[0]]), Tensor(valid.reshape(batch_dims))])
    return PythonTuple([Tensor(idx.reshape(*batch_dims, size)), Tensor(valid.reshape(batch_dims))])


def _padded_v2(boxes, scores, size, iou_threshold, score_threshold, sorted_input, canonical, tile):
    f32 = np.float32
    batch, n = scores.shape
    if score_threshold != float("-inf"):
        mask = (scores > scores.dtype.type(score_threshold)).astype(scores.dtype)
        scores = scores * mask
        boxes = boxes * mask.astype(boxes.dtype)[:, :, None]
    if not canonical:           # (which corner is the minimum, as the first box of the first image has them)
        y1, x1, y2, x2 = (boxes[:, :, k:k + 1] for k in range(4))
        y_min, y_max = (y1, y2) if y1[0, 0, 0] <= y2[0, 0, 0] else (y2, y1)
        x_min, x_max = (x1, x2) if x1[0, 0, 0] <= x2[0, 0, 0] else (x2, x1)
        boxes = np.concatenate([y_min, x_min, y_max, x_max], axis=2)
    if not sorted_input:        # (descending, the lower index first among equal scores: top_k's order)
        order = np.argsort(-scores, axis=1, kind="stable").astype(np.int32)
        scores = np.take_along_axis(scores, order, 1)
        boxes = np.take_along_axis(boxes, order[:, :, None], 1)
    else:
        order = np.zeros(scores.shape, np.int32)
    pad = int(np.ceil(f32(max(n, size)) / f32(tile))) * tile - n
    boxes = np.pad(boxes.astype(f32), [[0, 0], [0, pad], [0, 0]])
    padded = n + pad
    threshold = f32(iou_threshold)
    output = np.zeros(batch, np.int32)
    step = 0
    while output.min() < size and step < padded // tile:
        boxes, output = _tile_step(boxes, threshold, output, step, tile)
        step += 1
    valid = np.minimum(output, size).astype(np.int32)
    ranks = np.any(boxes > 0, axis=2).astype(np.int32) * np.arange(padded, 0, -1, dtype=np.int32)[None]
    top = -np.sort(-ranks, axis=1, kind="stable")[:, :size]
    idx = np.minimum(padded - top, n - 1).astype(np.int32)
    if not sorted_input:
        idx = np.take_along_axis(order, idx, 1)
    return np.where(np.arange(size)[None] < valid[:, None], idx, 0).astype(np.int32), valid


def _overlap(a, b):
    """_bbox_overlap: [batch, N, M] IoU in float32, an epsilon of 1e-8 added to the union."""
    f32 = np.float32
    ay0, ax0, ay1, ax1 = (a[:, :, k:k + 1] for k in range(4))
    by0, bx0, by1, bx1 = (b[:, :, k:k + 1].transpose(0, 2, 1) for k in range(4))
    inter = np.maximum(np.minimum(ax1, bx1) - np.maximum(ax0, bx0), f32(0)) * \
        np.maximum(np.minimum(ay1, by1) - np.maximum(ay0, by0), f32(0))
    a_area = (ay1 - ay0) * (ax1 - ax0)
    b_area = (by1 - by0) * (bx1 - bx0)
    return inter / (a_area + b_area - inter + f32(1e-8))


def _tile_step(boxes, threshold, output, step, tile):
    """_suppression_loop_body: the tile's boxes suppressed by each earlier tile's, then among themselves (a box
    suppressed by one that nothing suppresses, until nothing changes); suppressed boxes become zeros."""
    f32 = np.float32
    box_slice = boxes[:, step * tile:(step + 1) * tile]
    for inner in range(step):
        iou = _overlap(boxes[:, inner * tile:(inner + 1) * tile], box_slice)
        box_slice = np.all(iou < threshold, axis=1).astype(f32)[:, :, None] * box_slice
    iou = _overlap(box_slice, box_slice)
    later = np.arange(tile)[None, :] > np.arange(tile)[:, None]
    iou = iou * (later[None] & (iou >= threshold)).astype(f32)
    total = iou.sum(axis=(1, 2))
    while True:
        free = (iou.max(axis=1) < threshold).astype(f32)[:, :, None]
        iou = (np.max(free * iou, axis=1) < threshold).astype(f32)[:, :, None] * iou
        new_total = iou.sum(axis=(1, 2))
        changed = np.any(total - new_total > threshold)
        total = new_total
        if not changed:
            break
    suppressed = iou.sum(axis=1) > 0
    box_slice = box_slice * (f32(1) - suppressed.astype(f32))[:, :, None]
    boxes = boxes.copy()
    boxes[:, step * tile:(step + 1) * tile] = box_slice
    return boxes, output + np.any(box_slice > 0, axis=2).sum(axis=1).astype(np.int32)
