"""tf.image's functions of boxes [y1, x1, y2, x2]: non-max suppression by score, non_max_suppression
(NonMaxSuppressionV3) and non_max_suppression_with_scores (V5: soft-NMS with ``soft_nms_sigma``) as their CPU
kernel selects, in its dtype (IoU and the Gaussian weights in float32 for float32 boxes), and
non_max_suppression_padded as TensorFlow's Python computes it (non_max_suppression_padded_v2: boxes sorted by
score, then suppressed a tile at a time): indices and scores, which have no gradient in TensorFlow; then
crop_and_resize, draw_bounding_boxes and sobel_edges."""
from __future__ import annotations

import heapq
import math

import numpy as np

from tapecli import ops
from tapecli.errors import KernelValueError, ShapeError, TdfValueError
from tapecli.interpreter.registry import builtin
from tapecli.library.core import NamedResult, to_float, to_int, truth
from tapecli.runtime.values import PythonTuple, Tensor

f32 = np.float32


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


# ----------------------------------------------------------------- crops, drawn boxes, edges

@builtin("image.crop_and_resize")
def crop_and_resize(image, boxes, box_indices, crop_size, method="bilinear", extrapolation_value=0.0, name=None):
    """CropAndResize: each box [y1, x1, y2, x2] (normalized) of image[box_indices[i]] sampled on a
    crop_height x crop_width grid, bilinear or nearest, positions outside the image extrapolation_value. The
    positions and weights are the kernel's, in float32; the samples are gathered from the image and blended
    by recorded ops, so the image's gradient flows (the boxes' does not here)."""
    x = ops.to_tensor(image)
    x = ops.cast(ops.materialize(x) if x.weak else x, np.float32)
    b = np.asarray(ops.to_tensor(boxes).value, np.float32)
    which = np.asarray(ops.to_tensor(box_indices).value).astype(np.int64).reshape(-1)
    ch, cw = (int(v) for v in np.asarray(ops.to_tensor(crop_size).value).reshape(-1))
    if x.ndim != 4 or b.ndim != 2 or b.shape[1] != 4 or which.shape[0] != b.shape[0]:
        raise KernelValueError(f"crop_and_resize needs an image [batch, height, width, depth], boxes [n, 4] and n "
                               f"box indices, got shapes {list(x.shape)}, {list(b.shape)}, {list(which.shape)}")
    if ch <= 0 or cw <= 0:
        raise KernelValueError("crop dimensions must be positive")
    if method not in ("bilinear", "nearest"):
        raise TdfValueError(f"method must be bilinear or nearest, got {method!r}")
    if ((which < 0) | (which >= x.shape[0])).any():
        raise KernelValueError(f"box_index has values outside [0, {x.shape[0]})")
    h, w = x.shape[1:3]
    ys, xs = _sample_positions(b[:, 0], b[:, 2], h, ch), _sample_positions(b[:, 1], b[:, 3], w, cw)
    inside = ((ys >= 0) & (ys <= f32(h - 1)))[:, :, None] & ((xs >= 0) & (xs <= f32(w - 1)))[:, None, :]
    fill = Tensor(np.array(to_float(extrapolation_value), np.float32))
    if method == "nearest":
        rows, cols = np.clip(_round_half_away(ys), 0, h - 1), np.clip(_round_half_away(xs), 0, w - 1)
        out = _corners(x, which, rows, cols)
    else:
        top, left = np.floor(ys), np.floor(xs)
        y_lerp, x_lerp = (ys - top).astype(np.float32), (xs - left).astype(np.float32)
        top, bottom = np.clip(top, 0, h - 1), np.clip(np.ceil(ys), 0, h - 1)
        left, right = np.clip(left, 0, w - 1), np.clip(np.ceil(xs), 0, w - 1)
        tl, tr = _corners(x, which, top, left), _corners(x, which, top, right)
        bl, br = _corners(x, which, bottom, left), _corners(x, which, bottom, right)
        xl = Tensor(x_lerp[:, None, :, None])
        upper = ops.add(tl, ops.mul(ops.sub(tr, tl), xl))
        lower = ops.add(bl, ops.mul(ops.sub(br, bl), xl))
        out = ops.add(upper, ops.mul(ops.sub(lower, upper), Tensor(y_lerp[:, :, None, None])))
    return ops.where(Tensor(np.broadcast_to(inside[:, :, :, None], out.shape)), out, fill)


def _sample_positions(lo, hi, size, count):
    """The kernel's in_y (or in_x) of each box and crop row: lo * (size - 1) + i * scale, or the box's centre
    for a crop of one, in float32."""
    if count > 1:
        scale = (hi - lo) * f32(size - 1) / f32(count - 1)
        return (lo * f32(size - 1))[:, None] + np.arange(count, dtype=np.float32)[None, :] * scale[:, None]
    return (f32(0.5) * (lo + hi) * f32(size - 1))[:, None]


def _round_half_away(v):
    return np.where(v >= 0, np.floor(v + f32(0.5)), np.ceil(v - f32(0.5))).astype(np.int64)


def _corners(x, which, rows, cols):
    """image[which[n], rows[n, i], cols[n, j], :] for every box n and crop position (i, j): one gather_nd."""
    n, ch, cw = rows.shape[0], rows.shape[1], cols.shape[1]
    index = np.stack(np.broadcast_arrays(which[:, None, None], rows.astype(np.int64)[:, :, None],
                                         cols.astype(np.int64)[:, None, :]), axis=-1)
    return ops.gather_nd(x, Tensor(index.reshape(n, ch, cw, 3)))


_DEFAULT_COLORS = np.array([[1, 1, 0, 1], [0, 0, 1, 1], [1, 0, 0, 1], [0, 1, 0, 1], [0.5, 0, 0.5, 1],
                            [0.5, 0.5, 0, 1], [0.5, 0, 0, 1], [0, 0, 0.5, 1], [0, 1, 1, 1], [1, 0, 1, 1]],
                           np.float32)


@builtin("image.draw_bounding_boxes")
def draw_bounding_boxes(images, boxes, colors=None, name=None):
    """DrawBoundingBoxesV2: each box's outline, one pixel wide, at the rows and columns its normalized corners
    truncate to, in the box's colour (colors cycled; TensorFlow's table without colors). No gradient."""
    t = ops.to_tensor(images)
    t = ops.materialize(t) if t.weak else t
    canvas = np.array(t.value)
    b = np.asarray(ops.to_tensor(boxes).value, np.float32)
    if canvas.ndim != 4 or b.ndim != 3 or b.shape[-1] != 4 or b.shape[0] != canvas.shape[0]:
        raise KernelValueError(f"draw_bounding_boxes needs images [batch, height, width, depth] and boxes "
                               f"[batch, n, 4], got shapes {list(canvas.shape)} and {list(b.shape)}")
    table = _DEFAULT_COLORS if colors is None else np.atleast_2d(np.asarray(ops.to_tensor(colors).value, np.float32))
    h, w, depth = canvas.shape[1:]
    for i in range(b.shape[0]):
        for k in range(b.shape[1]):
            color = table[k % len(table)][:depth].astype(canvas.dtype)
            top, bottom = int(b[i, k, 0] * f32(h - 1)), int(b[i, k, 2] * f32(h - 1))
            left, right = int(b[i, k, 1] * f32(w - 1)), int(b[i, k, 3] * f32(w - 1))
            if top > bottom or left > right or top >= h or bottom < 0 or left >= w or right < 0:
                continue
            rows = slice(max(top, 0), min(bottom, h - 1) + 1)
            cols = slice(max(left, 0), min(right, w - 1) + 1)
            if top >= 0:
                canvas[i, top, cols, :len(color)] = color
            if bottom < h:
                canvas[i, bottom, cols, :len(color)] = color
            if left >= 0:
                canvas[i, rows, left, :len(color)] = color
            if right < w:
                canvas[i, rows, right, :len(color)] = color
    return Tensor(canvas)


@builtin("image.sobel_edges")
def sobel_edges(image):
    """TensorFlow's composition: the image padded by reflection, depthwise-convolved with the vertical and the
    horizontal Sobel kernels; [batch, height, width, depth, 2] (dy, dx)."""
    from tapecli.library.tf_nn import pad
    from tapecli.library.tf_nn_losses import depthwise_conv2d
    x = ops.to_tensor(image)
    x = ops.materialize(x) if x.weak else x
    kernels = np.transpose(np.array([[[-1, -2, -1], [0, 0, 0], [1, 2, 1]], [[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]]]),
                           (1, 2, 0))[:, :, None, :]
    filters = Tensor(np.tile(kernels, (1, 1, x.shape[-1], 1)).astype(x.dtype))
    padded = pad(x, [[0, 0], [1, 1], [1, 1], [0, 0]], mode="REFLECT")
    out = depthwise_conv2d(padded, filters, [1, 1, 1, 1], "VALID")
    return ops.reshape(out, (*x.shape, 2))
