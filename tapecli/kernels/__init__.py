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

# Measured with benchmarks/kernel_threshold.py.
# Crossover (float32, warm, 2 cores): 1e4 elements for its kernel mix (sigmoid 1e3, masked_grad 1e4,
# sum 1e5; add, mul and tanh a tie at every size), but numba's first use in a process (~0.3 s:
# import, load the cached kernels) is repaid only after ~40 calls at 1e6 elements (~430 at 1e5).
THRESHOLD = int(os.environ.get("TAPECLI_NUMBA_THRESHOLD", 1_000_000))


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


_numba_missing: str | None = None     # why numba could not be imported, once it failed


def call(name: str, *args, **attrs) -> np.ndarray:
    global _numba_missing
    if _numba_missing is None and _wants_numba(name, args):
        try:
            from . import numba_kernels
        except ImportError as e:      # e.g. a numba that does not support the installed numpy
            _numba_missing = str(e)
        else:
            return numba_kernels.call(name, *args, **attrs)
    return np.asarray(NUMPY_KERNELS[name](*args, **attrs))
