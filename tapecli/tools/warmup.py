"""``tapecli warmup``: fill the caches a later run would otherwise fill on its own time. A library.

* The numba kernels (kernels/numba_kernels.py), float32 and float64: each kernel is called
  on small arrays in the argument shapes the dispatcher gives it (array or one-element
  operands, reductions over every axis, leading or trailing axes), so numba compiles each
  signature, or loads it when the cache already has it, and saves it in the user cache dir.
  A large program then loads machine code instead of compiling it (seconds).
"""
from __future__ import annotations

import itertools
import time

import numpy as np

DTYPES = ("float32", "float64")

# kernel -> how to call it, where its inputs do not say: a special form (the elementwise kernels are "unary",
# "binary" or "ternary" by their op's inputs in the op table)
_FORMS = {
    "where": "where", "masked_grad": "masked_grad",
    "sum": "reduce", "mean": "reduce", "max": "reduce", "min": "reduce", "prod": "reduce", "logsumexp": "reduce",
    "leaky_relu": "leaky_relu", "elu": "elu",
    "windows_grad": "windows_grad", "max_pool": "max_pool", "max_pool_grad": "max_pool_grad",
    "bias_add_grad": "bias_add_grad",
}


def _form(name: str) -> str:
    from tapecli import ops
    if name in _FORMS:
        return _FORMS[name]
    arity = next((len(op.grads) for op in ops.OPS.values() if op.kernel == name and op.grads), 1)
    return {2: "binary", 3: "ternary"}.get(arity, "unary")


def _calls(name: str, dtype: np.dtype):
    """Argument lists (args, attrs) covering the kernel's signatures for ``dtype``."""
    x = np.linspace(-1.5, 1.5, 24, dtype=dtype)
    one = np.asarray([0.5], dtype=dtype)
    form = _form(name)
    if form == "unary":
        return [((x,), {})]
    if form in ("binary", "ternary"):
        arity = 2 if form == "binary" else 3
        # every mix of full-size and one-element operands but all one-element (which is all full-size)
        return [(ops, {}) for ops in itertools.product((x, one), repeat=arity) if any(o is x for o in ops)]
    if form == "where":
        cond = x > 0
        return [((c, a, b), {}) for c in (cond, cond[:1]) for a in (x, one) for b in (x, one)
                if any(o is x or o is cond for o in (c, a, b))]
    if form == "masked_grad":
        return [((g, x), {"kind": kind}) for g in (x, one) for kind in ("relu", "abs", "leaky_relu")]
    if form == "leaky_relu":
        return [((x,), {"alpha": 0.2})]
    if form == "elu":
        return [((x,), {"alpha": 1.0})]
    image = x.reshape(1, 4, 2, 3)       # (an NHWC image, pooled in windows of 2 x 2)
    pooling = {"size": (2, 2), "strides": (2, 2), "pads": (0, 0, 0, 0), "out": (2, 1)}
    if form == "max_pool":
        return [((image,), pooling)]
    if form == "max_pool_grad":
        return [((image, x[:6].reshape(1, 2, 1, 3)), pooling)]
    if form == "bias_add_grad":
        return [((x.reshape(4, 6),), {})]
    if form == "windows_grad":
        return [((x.reshape(1, 2, 2, 3, 1, 2),), {"shape": (1, 4, 2, 2), "size": (3, 1), "strides": (1, 1),
                                                   "dilations": (1, 1)})]
    m = x.reshape(4, 6)
    t = x.reshape(2, 3, 4)
    return [((x,), {}), ((m,), {"axis": 0}), ((m,), {"axis": 1}), ((t,), {"axis": 1}), ((m,), {})]


def compile_kernels(dtypes=DTYPES, names=None, progress=None) -> list[dict]:
    """Compile (or load) the numba kernels ``names`` (default all) for ``dtypes``; one entry per kernel and dtype:
    {"kernel", "dtype", "calls", "seconds"}, or {"error"} where numba is missing."""
    from tapecli import kernels, ops
    ops.load_deferred()         # (the whole op table fills kernels.NUMBA_KERNELS)
    try:
        from tapecli.kernels import numba_kernels
    except ImportError as e:          # e.g. a numba that does not support the installed NumPy
        return [{"error": f"numba cannot be imported: {e}"}]
    out = []
    for dtype_name in dtypes:
        dtype = np.dtype(dtype_name)
        for name in sorted(names or kernels.NUMBA_KERNELS):
            start = time.perf_counter()
            calls = 0
            with np.errstate(all="ignore"):
                for args, attrs in _calls(name, dtype):
                    try:
                        numba_kernels.call(name, *args, **attrs)
                        calls += 1
                    except (TypeError, ValueError, KeyError):     # a form (attributes) it does not take
                        pass
            entry = {"kernel": name, "dtype": dtype_name, "calls": calls, "seconds": time.perf_counter() - start}
            out.append(entry)
            if progress is not None:
                progress(entry)
    return out
