"""The backend interface (see ``backends``): what a kernel backend answers."""
from __future__ import annotations

import numpy as np


class Backend:
    name = "cpu"
    on_device = False           # arrays live off the host: the NumPy small path is off

    def run(self, name: str, args, attrs: dict):
        raise NotImplementedError

    def asarray(self, value):
        return np.asarray(value)

    def to_host(self, value) -> np.ndarray:
        return np.asarray(value)

    def zeros(self, shape, dtype):
        return np.zeros(shape, dtype=dtype)

    def ones(self, shape, dtype):
        return np.ones(shape, dtype=dtype)

    def begin_run(self) -> None:
        """A run on this backend starts (caches of the previous run's host arrays are dropped)."""

    def describe(self) -> dict:
        return {"kind": "cpu"}

    def synchronize(self) -> None:
        pass
