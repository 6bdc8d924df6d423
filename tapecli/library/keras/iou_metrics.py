"""Keras 3's IoU family (IoU, BinaryIoU, MeanIoU, OneHotIoU, OneHotMeanIoU): a float32 confusion matrix updated as
Keras updates it (``ConfusionMetric``'s machinery), Keras's result formulas."""
from __future__ import annotations

import numpy as np

from tapecli.errors import ShapeError, TdfValueError
from tapecli.library.keras.common import flag, integer, num, scalar
from tapecli.library.keras.confusion import EPSILON, FirstBatchShaped, floats
from tapecli.runtime.limits import admit


def _class_count(num_classes) -> int:
    """num_classes, at least 1, its confusion matrix weighed before anything of that size is made."""
    n = integer(num_classes, "num_classes")
    if n < 1:
        raise TdfValueError(f"num_classes must be at least 1, got {n}")
    admit(n * n, 8, f"a {n:,} x {n:,} confusion matrix")
    return n


class IoU(FirstBatchShaped):
    """Intersection over union from a weighted confusion matrix of class ids (int64 unless ``dtype``, as
    Keras's "int" on TensorFlow: float weights are truncated then), averaged over ``target_class_ids``."""

    kinds = ("cm",)

    def __init__(self, num_classes, target_class_ids, name=None, dtype=None, ignore_class=None, sparse_y_true=True,
                 sparse_y_pred=True, axis=-1):
        self.num_classes = _class_count(num_classes)
        self.targets = [int(v) for v in floats(target_class_ids, "target_class_ids")]
        if max(self.targets) >= self.num_classes:
            raise TdfValueError(f"target class id {max(self.targets)} is out of range [0, {self.num_classes})")
        self.ignore_class = None if ignore_class is None else integer(ignore_class, "ignore_class")
        self.sparse = (flag(sparse_y_true), flag(sparse_y_pred))
        self.axis = integer(axis, "axis")
        self.dtype = np.dtype(np.int64) if dtype is None else np.dtype(getattr(dtype, "np", dtype))
        snake = "".join("_" + ch.lower() if ch.isupper() else ch for ch in type(self).__name__).lstrip("_")
        super().__init__(name or snake.replace("i_o_u", "iou"))

    state_names = {"cm": "total_confusion_matrix"}

    def zeros(self) -> dict:
        return {"cm": np.zeros((self.num_classes, self.num_classes), self.dtype)}

    def attributes(self):
        return {**super().attributes(), "total_cm": lambda: self.state["cm"]}

    def classes(self, y_true, y_pred):
        if not self.sparse[0]:
            y_true = np.argmax(y_true, axis=self.axis)
        if not self.sparse[1]:
            y_pred = np.argmax(y_pred, axis=self.axis)
        return y_true.astype(self.dtype).reshape(-1), y_pred.astype(self.dtype).reshape(-1)

    def count(self, y_true, y_pred, sample_weight):
        y_true, y_pred = self.classes(y_true, y_pred)
        sw = np.ones((), self.dtype) if sample_weight is None else sample_weight.astype(self.dtype).reshape(
            -1 if sample_weight.ndim > 1 else sample_weight.shape)
        try:
            sw = np.broadcast_to(sw, y_true.shape)
        except ValueError:
            raise ShapeError(f"sample_weight of shape {list(np.shape(sample_weight))} does not broadcast to "
                             f"{list(y_true.shape)}") from None
        n = self.num_classes
        keep = (y_true >= 0) & (y_true < n) & (y_pred >= 0) & (y_pred < n)
        if self.ignore_class is not None:
            keep &= y_true != self.ignore_class
        y_true, y_pred = np.where(keep, y_true, 0), np.where(keep, y_pred, 0)
        cm = np.zeros((n, n), self.dtype)
        np.add.at(cm, (y_true.astype(np.int64), y_pred.astype(np.int64)), np.where(keep, sw, 0).astype(self.dtype))
        return {"cm": cm}

    def result(self):
        cm = self.counts["cm"]
        tp = np.diag(cm)
        denominator = (np.sum(cm, axis=0) + np.sum(cm, axis=1) - tp)[self.targets].astype(np.float32)
        tp = tp[self.targets].astype(np.float32)
        valid = denominator > np.float32(1e-9)
        iou = np.where(valid, tp / (denominator + np.float32(EPSILON)), np.float32(0))
        return scalar(np.sum(iou, dtype=np.float32) / (np.float32(np.sum(valid)) + np.float32(EPSILON)))


class BinaryIoU(IoU):
    def __init__(self, target_class_ids=(0, 1), threshold=0.5, name=None, dtype=None):
        self.threshold = np.float32(num(threshold, "threshold"))
        super().__init__(2, target_class_ids, name, dtype)

    def classes(self, y_true, y_pred):
        return super().classes(y_true, (y_pred >= self.threshold).astype(np.float32))


class MeanIoU(IoU):
    def __init__(self, num_classes, name=None, dtype=None, ignore_class=None, sparse_y_true=True,
                 sparse_y_pred=True, axis=-1):
        n = _class_count(num_classes)
        super().__init__(n, list(range(n)), name, dtype, ignore_class, sparse_y_true, sparse_y_pred, axis)


class OneHotIoU(IoU):
    def __init__(self, num_classes, target_class_ids, name=None, dtype=None, ignore_class=None,
                 sparse_y_pred=False, axis=-1):
        super().__init__(num_classes, target_class_ids, name, dtype, ignore_class, False, sparse_y_pred, axis)


class OneHotMeanIoU(MeanIoU):
    def __init__(self, num_classes, name=None, dtype=None, ignore_class=None, sparse_y_pred=False, axis=-1):
        super().__init__(num_classes, name, dtype, ignore_class, False, sparse_y_pred, axis)


METRICS = [IoU, BinaryIoU, MeanIoU, OneHotIoU, OneHotMeanIoU]
