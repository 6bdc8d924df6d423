"""An optimizer's exponential moving average of the weights it trains (Keras's ``use_ema=True``): an ``average``
variable per weight, made when the optimizer is built (before its slots), updated after every call of apply as
Keras's base optimizer does (``momentum * average + (1 - momentum) * weight``, the momentum 0 at the first step),
and written into the weights every ``ema_overwrite_frequency`` steps and by ``finalize_variable_values`` (which
fit calls at its end)."""
from __future__ import annotations

import numpy as np

from tapecli.errors import TdfValueError
from tapecli.library.keras.common import integer, num
from tapecli.runtime.values import Variable


class WeightAverages:

    def __init__(self, momentum, overwrite_frequency):
        self.momentum = num(momentum, "ema_momentum")
        if not 0 <= self.momentum <= 1:
            raise TdfValueError(f"`ema_momentum` must be in the range [0, 1]. Received: ema_momentum={self.momentum}")
        self.overwrite_frequency = None if not overwrite_frequency else integer(overwrite_frequency,
                                                                               "ema_overwrite_frequency")
        if self.overwrite_frequency is not None and self.overwrite_frequency < 1:
            raise TdfValueError("`ema_overwrite_frequency` must be an integer >= 1 or None. Received: "
                                f"ema_overwrite_frequency={self.overwrite_frequency}")
        self.held: dict[int, tuple[Variable, Variable]] = {}     # by weight id: the weight and its average

    def build(self, weights, name_of, scope: str) -> None:
        """An average (zeros, named ``name_of(weight)``, its path in ``scope``) for each weight that has none yet,
        in order."""
        for w in weights:
            if w.id not in self.held:
                name = name_of(w)
                self.held[w.id] = (w, Variable(name, np.zeros(w.shape, w.dtype), False, tf_name=name,
                                                     keras=f"{scope}/{name}"))

    def variables(self) -> list:
        return [average for _, average in self.held.values()]

    def update(self, iterations: int) -> None:
        """After a step (``iterations``: the steps before it), Keras's _update_model_variables_moving_average,
        in each weight's dtype; then the averages written into the weights where the next count is a multiple of
        the overwrite frequency."""
        for w, average in self.held.values():
            dtype = w.dtype.type
            momentum = dtype(self.momentum) if iterations else dtype(0)
            new = momentum * average.read().value + (dtype(1) - momentum) * w.read().value
            average.assign(np.asarray(new, dtype=w.dtype))
        if self.overwrite_frequency and (iterations + 1) % self.overwrite_frequency == 0:
            self.overwrite([w for w, _ in self.held.values()])

    def overwrite(self, weights) -> None:
        """Keras's _overwrite_model_variables_with_average_value: each of ``weights`` takes its place's average."""
        if len(weights) != len(self.held):
            raise TdfValueError(f"The length of model variables ({len(weights)}) to override does not match the "
                                f"length of model variables stored in the optimizer ({len(self.held)}). Please "
                                "check if the optimizer was called on your model.")
        for w, (_, average) in zip(weights, self.held.values()):
            w.assign(np.asarray(average.read().value, dtype=w.dtype).reshape(w.shape))
