"""Keras 3's learning-rate schedules beside ExponentialDecay (keras/src/optimizers/schedules), in float32:
PiecewiseConstantDecay, PolynomialDecay, InverseTimeDecay, CosineDecay and CosineDecayRestarts (their cosines and
logarithms TensorFlow's float32 ones: the C library's, tf_float32)."""
from __future__ import annotations

import math

import numpy as np

from tapecli.errors import TdfValueError
from tapecli.library.keras.common import flag, num, opt_num, tensor
from tapecli.library.keras.optimizers import Schedule
from tapecli.kernels.tf_float32 import cos as tf_cos, log as tf_log, pow_ as tf_pow   # (glibc's cosf, logf, powf)

f = np.float32


class PiecewiseConstantDecay(Schedule):
    def __init__(self, boundaries, values, name="PiecewiseConstant"):
        self.given(locals())
        self.boundaries = [float(b) for b in np.atleast_1d(np.asarray(tensor(boundaries, "boundaries").value))]
        self.values = [f(v) for v in np.atleast_1d(np.asarray(tensor(values, "values").value))]
        if len(self.boundaries) != len(self.values) - 1:
            raise TdfValueError("The length of boundaries should be 1 less than the length of values")
        self.name = name

    def value(self, step):
        if step <= self.boundaries[0]:
            return self.values[0]
        for low, high, v in zip(self.boundaries[:-1], self.boundaries[1:], self.values[1:-1]):
            if low < step <= high:
                return v
        return self.values[-1]


class PolynomialDecay(Schedule):
    def __init__(self, initial_learning_rate, decay_steps, end_learning_rate=0.0001, power=1.0, cycle=False,
                 name="PolynomialDecay"):
        self.given(locals())
        self.initial, self.decay_steps = num(initial_learning_rate, "initial_learning_rate"), num(decay_steps, "decay_steps")
        self.end, self.power, self.cycle = num(end_learning_rate, "end_learning_rate"), num(power, "power"), flag(cycle)
        self.name = name

    def value(self, step):
        initial, end, power = f(self.initial), f(self.end), f(self.power)
        step, steps = f(step), f(self.decay_steps)
        if self.cycle:
            steps = steps * (f(1.0) if step == 0 else np.ceil(step / steps))
        else:
            step = np.minimum(step, steps)
        p = step / steps
        return f((initial - end) * tf_pow(f(1) - p, power) + end)


class InverseTimeDecay(Schedule):
    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase=False, name="InverseTimeDecay"):
        self.given(locals())
        self.initial, self.decay_steps = num(initial_learning_rate, "initial_learning_rate"), num(decay_steps, "decay_steps")
        self.decay_rate, self.staircase, self.name = num(decay_rate, "decay_rate"), flag(staircase), name

    def value(self, step):
        p = f(step) / f(self.decay_steps)
        if self.staircase:
            p = np.floor(p)
        return f(f(self.initial) / (f(1) + f(self.decay_rate) * p))


class CosineDecay(Schedule):
    def __init__(self, initial_learning_rate, decay_steps, alpha=0.0, name="CosineDecay", warmup_target=None,
                 warmup_steps=0):
        self.given(locals())
        self.initial, self.decay_steps = num(initial_learning_rate, "initial_learning_rate"), num(decay_steps, "decay_steps")
        self.alpha, self.name = num(alpha, "alpha"), name
        self.warmup_target, self.warmup_steps = opt_num(warmup_target, "warmup_target"), num(warmup_steps, "warmup_steps")

    def decay(self, step, steps, start):
        cosine = f(0.5) * (f(1.0) + tf_cos(f(math.pi) * (step / steps)))
        return f(start * (f(1 - self.alpha) * cosine + f(self.alpha)))

    def value(self, step):
        initial, steps, step = f(self.initial), f(self.decay_steps), f(step)
        if self.warmup_target is None:
            return self.decay(np.minimum(step, steps), steps, initial)
        target, warm = f(self.warmup_target), f(self.warmup_steps)
        step = np.minimum(step, steps + warm)
        if step < warm:
            return f((target - initial) * (step / warm) + initial)
        return self.decay(step - warm, steps, target)


class CosineDecayRestarts(Schedule):
    """SGDR: a cosine decay over ``first_decay_steps``, restarted over periods ``t_mul`` times longer each, each
    restart's rate ``m_mul`` times the last's, as Keras's __call__ computes it in float32."""

    def __init__(self, initial_learning_rate, first_decay_steps, t_mul=2.0, m_mul=1.0, alpha=0.0, name="SGDRDecay"):
        self.given(locals())
        self.initial, self.first = num(initial_learning_rate, "initial_learning_rate"), num(first_decay_steps,
                                                                                             "first_decay_steps")
        if self.first <= 0:
            raise TdfValueError("Argument `first_decay_steps` must be > 0. Received: "
                                f"first_decay_steps={self.config['first_decay_steps']}")
        self.t_mul, self.m_mul, self.alpha = num(t_mul, "t_mul"), num(m_mul, "m_mul"), num(alpha, "alpha")
        self.name = name

    def value(self, step):
        one, t_mul, alpha = f(1.0), f(self.t_mul), f(self.alpha)
        fraction = f(step) / f(self.first)
        if t_mul == one:
            restart = np.floor(fraction)
            fraction = fraction - restart
        else:           # (the restarts so far from the geometric series of the periods' lengths)
            restart = np.floor(tf_log(one - fraction * (one - t_mul)) / tf_log(t_mul))
            fraction = (fraction - (one - tf_pow(t_mul, restart)) / (one - t_mul)) / tf_pow(t_mul, restart)
        cosine = f(0.5) * tf_pow(f(self.m_mul), restart) * (one + tf_cos(f(math.pi) * fraction))
        return f(f(self.initial) * ((one - alpha) * cosine + alpha))


SCHEDULES = [PiecewiseConstantDecay, PolynomialDecay, InverseTimeDecay, CosineDecay, CosineDecayRestarts]
