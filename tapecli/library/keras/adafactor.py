"""Keras 3's Adafactor (keras/src/optimizers/adafactor.py) in float32: a variable of two or more dimensions keeps
the running means of its squared gradient's rows (``r``) and columns (``c``) over its last two axes, whose product
stands for the second moment; a smaller one keeps that moment whole (``velocity``). Its means and RMS are
TensorFlow's Mean (kernels/tf_sums.py), its powers glibc's powf."""
from __future__ import annotations

import numpy as np

from tapecli.kernels import tf_sums
from tapecli.kernels.tf_float32 import pow_ as tf_pow
from tapecli.library.keras.optimizers import Optimizer, converted, slot_prefix
from tapecli.runtime.values import Variable, tensorflow_name


def _mean(x: np.ndarray, axis=None, keepdims=False) -> np.ndarray:
    """tf.reduce_mean of a float32 array (NumPy's mean where tf_sums does not follow TensorFlow's order)."""
    found = tf_sums.reduce_sum(np.ascontiguousarray(x), axis, keepdims, mean=True)
    return np.mean(x, axis=axis, keepdims=keepdims, dtype=x.dtype) if found is None else found


def _rms(x: np.ndarray):
    return np.sqrt(_mean(np.square(x)))


class Adafactor(Optimizer):
    prefix = "adafactor"
    hyper = {"beta_2_decay": -0.8, "epsilon_1": 1e-30, "epsilon_2": 1e-3, "clip_threshold": 1.0,
             "relative_step": True}
    elementwise = False             # (the RMS of the whole variable and of its step, the rows' and columns' means)

    def __init__(self, interp, learning_rate=0.001, beta_2_decay=-0.8, epsilon_1=1e-30, epsilon_2=1e-3,
                 clip_threshold=1.0, relative_step=True, **kw):
        super().__init__(interp, learning_rate, beta_2_decay=beta_2_decay, epsilon_1=epsilon_1, epsilon_2=epsilon_2,
                         clip_threshold=clip_threshold, relative_step=relative_step, **kw)

    def slot_specs(self):
        return [("r", 0.0), ("c", 0.0), ("velocity", 0.0)]

    def slots_of(self, v: Variable) -> dict:
        """Keras's build: ``r`` of the variable's shape less its last axis and ``c`` less its second last (each
        named as the variable is), for two or more dimensions (else an int32 zero each, unused), then ``velocity``
        of its shape."""
        if v.id not in self.slots:
            factored = len(v.shape) >= 2
            shapes = {"r": v.shape[:-1] if factored else (), "c": (*v.shape[:-2], v.shape[-1]) if factored else (),
                      "velocity": v.shape}
            made = {}
            for slot, shape in shapes.items():
                keras = f"{slot_prefix(v)}_velocity" if slot == "velocity" else tensorflow_name(v)
                dtype = v.dtype if factored or slot == "velocity" else np.int32
                made[slot] = Variable(f"{self.name}/{v.name}/{slot}", np.zeros(shape, dtype=dtype), trainable=False,
                                      tf_name=keras, keras=f"{self.name}/{keras}")
                self.slot_list.append(made[slot])
            self.slots[v.id] = made
        return self.slots[v.id]

    def update(self, g, value, slots, lr, dtype):
        one, step = dtype(1.0), dtype(self.iterations + 1)
        rho = np.minimum(lr, one / np.sqrt(step))           # (relative_step's minimum is this one too)
        alpha = np.maximum(converted(self.epsilon_2, dtype), _rms(value)) * rho
        squared = np.square(g) + dtype(self.epsilon_1)
        beta = one - tf_pow(step, dtype(self.beta_2_decay))
        v = slots["velocity"]
        if g.ndim >= 2:
            r, c = slots["r"], slots["c"]
            r[...] = beta * r + (one - beta) * _mean(squared, -1)
            c[...] = beta * c + (one - beta) * _mean(squared, -2)
            v[...] = np.expand_dims(r / _mean(r, -1, keepdims=True), -1) * np.expand_dims(c, -2)
        else:
            v[...] = beta * v + (one - beta) * squared
        u = g / np.sqrt(v)
        u = u / np.maximum(one, _rms(u) / dtype(self.clip_threshold))
        return value - alpha * u


OPTIMIZERS = [Adafactor]
