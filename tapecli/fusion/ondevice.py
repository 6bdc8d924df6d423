"""Fused elementwise kernels on ``--device cuda``: the statements the CPU kernel runs for one element
(``codegen.element_body``, from the ops' ``grads`` formulas), wrapped as a ``cuda.jit`` kernel with one
thread per element. A fused reduction writes its elements to a buffer that the backend sums as a tree
per block (reproducible, as its other reductions). Under numba's CUDA simulator the statements' ``math.*``
give NumPy's inf and nan where Python's math raises, as a GPU's math library and the CPU kernel do
(``device_math.SIMULATED_MATH``)."""
from __future__ import annotations

import math

import numpy as np

from tapecli.fusion.codegen import element_body

_KERNELS: dict = {}


def source(plan, kinds, watched) -> str:
    """The cuda kernel's source: ``kernel(base, n, leaves..., literal leaves..., constants..., out, D..., buf)``
    on the elements ``base`` to ``n - 1`` (a grid-stride loop: ``launch.over``); a scalar leaf comes as a
    one-element array."""
    params, array_leaves, body = element_body(plan, kinds, watched)
    leaf_kinds = [k for k in kinds if k != "c"]
    scalar = {f"x{j}" for j, k in enumerate(leaf_kinds) if k == "s"}
    head = ["base"] + [f"{p}_arr" if p in scalar else p for p in params] + ["buf"]
    lines = [f"def kernel({', '.join(head)}):"]
    lines += [f"    {p} = {p}_arr[0]" for p in sorted(scalar)]
    lines += [f"    xs{j} = x{j}" for j in array_leaves]
    lines += [f"    ds{j} = d{j}" for j in watched]
    lines += ["    os = out", "    k = base + cuda.grid(1)", "    stride = cuda.gridsize(1)", "    while k < n:"]
    lines += [f"        {line}" for line in body]
    lines += ["        k += stride"]
    return "\n".join(lines) + "\n"


def kernel(plan, dtype, kinds, watched):
    key = (plan.structure, dtype.str, kinds, watched)
    k = _KERNELS.get(key)
    if k is None:
        from numba import cuda

        from tapecli.kernels.cuda import device_math, launch
        ns = {"cuda": cuda, "np": np, "math": device_math.SIMULATED_MATH if launch.SIMULATED else math,
              "_F": dtype.type, "inf": math.inf, "nan": math.nan, **device_math.FUSED}
        exec(compile(source(plan, kinds, watched), "<cuda fused>", "exec"), ns)
        k = _KERNELS[key] = cuda.jit(ns["kernel"])
    return k


def launch(dev, plan, dtype, kinds, watched, tensors, consts, const_values, shape, size):
    """Run the fused expression on the device: (its value, {leaf: derivative}) as device arrays."""
    from tapecli.kernels.cuda import launch as cl
    leaf_kinds = [k for k in kinds if k != "c"]
    args = []
    for t, kind in zip(tensors, leaf_kinds):
        a = dev.asarray(t.value)
        args.append(a.dev if kind == "a" else a.reshape(1).dev)
    args.extend(dtype.type(c) for c in consts)
    args.extend(const_values)
    out = dev.alloc((1,) if plan.reduce else (size,), dtype)
    derivs = {j: dev.alloc((size,), dtype) for j in watched}
    buf = dev.alloc((size,) if plan.reduce else (1,), dtype)
    args.append(out.dev)
    args.extend(derivs[j].dev for j in watched)
    args.append(buf.dev)
    cl.over(kernel(plan, dtype, kinds, watched), size, *args)
    if plan.reduce:
        value = dev.reduce(plan.reduce, buf)
    else:
        value = out.reshape(shape)
    return value, derivs
