"""The kernel layer: picks NumPy for small tensors and Numba for large ones.

Numba costs ~0.4 s to import, so it is imported only when a kernel it serves meets
a tensor of at least ``THRESHOLD`` elements. ``TAPECLI_BACKEND=numpy|numba`` forces
one backend (the tests run the op table on both).
"""
from __future__ import annotations

import os

import numpy as np

from .numpy_kernels import KERNELS as NUMPY_KERNELS

# Kernels that numba_kernels.py implements: every elementwise op, its gradient
# helpers, and the reductions.
NUMBA_KERNELS = frozenset({
    "neg", "sin", "cos", "tan", "exp", "log", "log1p", "sqrt", "rsqrt", "square", "abs", "sign",
    "tanh", "sigmoid", "softplus", "relu", "elu", "leaky_relu", "gelu", "erf", "round", "floor", "ceil",
    "add", "sub", "mul", "div", "maximum", "minimum", "pow", "masked_grad", "where", "clip",
    "sum", "mean", "max", "min", "prod", "logsumexp",
})

# Measured with benchmarks/kernel_threshold.py (see the README's performance notes).
THRESHOLD = int(os.environ.get("TAPECLI_NUMBA_THRESHOLD", 1 << 18))


def backend() -> str:
    mode = os.environ.get("TAPECLI_BACKEND", "auto")
    return mode if mode in ("numpy", "numba") else "auto"


def _wants_numba(name: str, args) -> bool:
    if name not in NUMBA_KERNELS:
        return False
    mode = backend()
    if mode == "numpy":
        return False
    if mode == "numba":
        return True
    return max((a.size for a in args if isinstance(a, np.ndarray)), default=0) >= THRESHOLD


def call(name: str, *args, **attrs) -> np.ndarray:
    if _wants_numba(name, args):
        from . import numba_kernels
        return numba_kernels.call(name, *args, **attrs)
    return np.asarray(NUMPY_KERNELS[name](*args, **attrs))
