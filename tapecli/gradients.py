"""tape.gradient, tape.jacobian and tape.batch_jacobian over the library's values.

Results are built with ops (stack, reshape, getitem), so a jacobian taken while an
outer tape records is itself differentiable.
"""
from __future__ import annotations

import numpy as np

from . import ops
from .errors import ShapeError, TdfTypeError
from .runtime import STATE
from .tape import Tape, as_tensor, check_unconnected, flatten, unflatten
from .values import Tensor, Variable, dtype_name, is_float


def _targets(target) -> list[Tensor]:
    return [as_tensor(t) for t in flatten(target, "the target")]


def _prepare(tape: Tape, line) -> None:
    tape.begin_request(line)
    if tape.open and tape.persistent and tape.recording:
        STATE.warn(f"gradient inside the block of persistent tape {tape.name} is recorded on it, "
                   "which costs memory; call it after the block unless you need higher derivatives")


def objective(target, output_gradients=None) -> float:
    """The number a gradient differentiates: sum(target * seed) over the float targets, in float64."""
    targets = _targets(target)
    seeds = [ops.to_tensor(g).value for g in flatten(output_gradients, "output_gradients")] \
        if output_gradients is not None else [1.0] * len(targets)
    return float(sum(np.sum(t.value.astype(np.float64) * np.asarray(s, dtype=np.float64))
                     for t, s in zip(targets, seeds) if is_float(t.dtype)))


def why_none(tape: Tape, leaf) -> str:
    """A short reason for a None gradient (``tapecli explain`` gives the full story)."""
    name = leaf.name if isinstance(leaf, Variable) else "the source"
    if not is_float(leaf.dtype):
        return f"{name} is {dtype_name(leaf.dtype)}: integer tensors have no gradient"
    if leaf.id not in tape.watched_ids:
        return f"{name} is not watched by tape {tape.name}"
    return f"no recorded path from {name} to the target on tape {tape.name}"


def gradient(tape: Tape, target, sources, output_gradients=None, unconnected_gradients="none", line=None):
    """Returns (result structured like sources, leaf values, leaf reasons for None)."""
    unconnected = check_unconnected(unconnected_gradients)
    _prepare(tape, line)
    targets = _targets(target)
    leaves = flatten(sources, "sources")
    if output_gradients is None:
        seeds = [ops.ones_like(t) for t in targets]
    else:
        seeds = [ops.to_tensor(g) for g in flatten(output_gradients, "output_gradients")]
        if len(seeds) != len(targets):
            raise TdfTypeError(f"output_gradients has {len(seeds)} tensor(s) for {len(targets)} target(s)")
        for i, (s, t) in enumerate(zip(seeds, targets)):
            if s.weak:
                seeds[i] = s = ops.materialize(s, t.dtype)
            if s.shape != t.shape:
                raise ShapeError(f"output_gradients[{i}] has shape {list(s.shape)}, its target {list(t.shape)}")
    float_targets = [(t, s) for t, s in zip(targets, seeds) if is_float(t.dtype)]
    grads = tape.backward([t for t, _ in float_targets], [s for _, s in float_targets], [leaf.id for leaf in leaves])
    values, whys = [], []
    for leaf in leaves:
        g = grads.get(leaf.id) if is_float(leaf.dtype) else None
        if g is not None and g.shape != leaf.shape:
            g = ops.unbroadcast(g, leaf.shape) if len(g.shape) >= len(leaf.shape) else ops.broadcast_to(g, leaf.shape)
        if g is None and unconnected == "zero":
            g = ops.zeros_like(leaf)
        values.append(g)
        whys.append(why_none(tape, leaf) if g is None else None)
    return unflatten(sources, values), values, whys


def jacobian(tape: Tape, target, sources, unconnected_gradients="none", line=None):
    """d target[i...] / d source[j...], shaped target.shape + source.shape; one backward pass per
    target element (a vectorised pass is a later optimisation)."""
    unconnected = check_unconnected(unconnected_gradients)
    _prepare(tape, line)
    target = as_tensor(target) if isinstance(target, (Tensor, Variable)) else None
    if target is None:
        raise TdfTypeError("jacobian takes one target tensor")
    leaves = flatten(sources, "sources")
    rows: list[list] = [[] for _ in leaves]
    if is_float(target.dtype):
        for i in range(target.size):
            onehot = np.zeros(target.size, dtype=target.dtype)
            onehot[i] = 1
            seed = Tensor(onehot.reshape(target.shape))
            grads = tape.backward([target], [seed], [leaf.id for leaf in leaves])
            for k, leaf in enumerate(leaves):
                rows[k].append(grads.get(leaf.id))
    values, whys = [], []
    for leaf, row in zip(leaves, rows):
        if not is_float(leaf.dtype) or all(g is None for g in row):
            j = Tensor(np.zeros(target.shape + leaf.shape, dtype=leaf.dtype)) if unconnected == "zero" else None
        else:
            filled = [ops.zeros_like(leaf) if g is None else g for g in row]
            j = ops.reshape(ops.stack(filled), target.shape + leaf.shape)
        values.append(j)
        whys.append(why_none(tape, leaf) if j is None else None)
    return unflatten(sources, values), values, whys


def batch_jacobian(tape: Tape, target, source, unconnected_gradients="none", line=None):
    """Per-example jacobians: shape [b] + target.shape[1:] + source.shape[1:]."""
    target_t = as_tensor(target)
    source_t = as_tensor(source)
    if target_t.ndim < 1 or source_t.ndim < 1 or target_t.shape[0] != source_t.shape[0]:
        raise ShapeError(f"batch_jacobian needs the same first (batch) dimension, got target "
                         f"{list(target_t.shape)} and source {list(source_t.shape)}")
    full, values, whys = jacobian(tape, target, source, unconnected_gradients, line)
    if full is None:
        return None, [None], whys
    rest_t = target_t.ndim - 1
    per_example = [ops.getitem(full, (b,) + (slice(None),) * rest_t + (b,)) for b in range(target_t.shape[0])]
    result = ops.stack(per_example)
    return result, [result], [None]
