"""tape.gradient over the library's values (tape.jacobian, tape.batch_jacobian and hessians: jacobians.py)."""
from __future__ import annotations

import numpy as np

from tapecli import ops
from tapecli.autodiff.backward import backward
from tapecli.errors import ShapeError, TdfTypeError
from tapecli.runtime.context import current
from tapecli.runtime.tape import Tape, as_tensor, check_unconnected, flatten, unflatten
from tapecli.runtime.values import Tensor, Variable, dtype_name, is_float


def _targets(target) -> list[Tensor]:
    return [as_tensor(t) for t in flatten(target, "the target")]


def _prepare(tape: Tape, line) -> None:
    tape.begin_request(line)
    if tape.open and tape.persistent and tape.recording:
        current().settings.warn(f"gradient inside the block of persistent tape {tape.name} is recorded on it, "
                   "which costs memory; call it after the block unless you need higher derivatives")


def objective(target, output_gradients=None):
    """A function giving the number a gradient differentiates: sum(target * seed) over the float targets, in
    float64. The targets and seeds are read now (a variable may change); the sum is made when asked (only
    `tapecli check` asks)."""
    targets = _targets(target)
    seeds = [ops.to_tensor(g).value for g in flatten(output_gradients, "output_gradients")] \
        if output_gradients is not None else [1.0] * len(targets)

    def value() -> float:
        return float(sum(np.sum(t.value.astype(np.float64) * np.asarray(s, dtype=np.float64))
                         for t, s in zip(targets, seeds) if is_float(t.dtype)))
    return value


def why_none(tape: Tape, leaf) -> str:
    """A short reason for a None gradient (``tapecli explain`` gives the full story)."""
    name = leaf.name if isinstance(leaf, Variable) else "the source"
    if not is_float(leaf.dtype):
        return f"{name} is {dtype_name(leaf.dtype)}: integer tensors have no gradient"
    if leaf.id not in tape.watched_ids:
        return f"{name} is not watched by tape {tape.name}"
    return tape.left_reason(leaf.id, name) or f"no recorded path from {name} to the target on tape {tape.name}"


def gradient(tape: Tape, target, sources, output_gradients=None, unconnected_gradients="none", line=None,
             rows=None):
    """Returns (result structured like sources, leaf values, leaf reasons for None). ``rows(values, indices,
    dense_shape)``, where given, makes the result of a variable or tensor that the tape saw read only by gathers
    along its first axis: TensorFlow's IndexedSlices of the rows read (the values stay the dense sums)."""
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
    readers = _readers(tape, leaves) if rows is not None else {}
    grads = backward(tape, [t for t, _ in float_targets], [s for _, s in float_targets],
                     [leaf.id for leaf in leaves] + [rec.output.id for recs in readers.values() for rec in recs])
    values, whys, results = [], [], []
    for leaf in leaves:
        g = grads.get(leaf.id) if is_float(leaf.dtype) else None     # (as the backward pass gave it: a
        # custom_gradient's grad_fn may give a source a gradient of another shape, which TensorFlow's tape keeps)
        if g is None and unconnected == "zero":
            g = ops.zeros_like(leaf)
        values.append(g)
        whys.append(why_none(tape, leaf) if g is None else None)
        gathers = _gathers(readers[leaf.id], leaf.id, grads) if g is not None and leaf.id in readers else None
        results.append(g if gathers is None else _rows(leaf, gathers, grads, rows))
    return unflatten(sources, results), values, whys


def _readers(tape: Tape, leaves: list) -> dict[int, list]:
    """By leaf id, the tape's records that read each float variable or watched tensor of ``leaves`` of which at
    least one is a gather along its first axis: those leaves' gradients may be IndexedSlices (:func:`_gathers`)."""
    ids = {leaf.id for leaf in leaves if isinstance(leaf, (Tensor, Variable)) and is_float(leaf.dtype)}
    found: dict[int, list] = {}
    for rec in tape.records:
        for inp in getattr(rec, "inputs", ()):
            if inp.id in ids and rec not in found.setdefault(inp.id, []):
                found[inp.id].append(rec)
    return {key: recs for key, recs in found.items() if any(_gathers_rows(rec, key) for rec in recs)}


def _gathers_rows(rec, leaf_id: int) -> bool:
    """Whether ``rec`` reads the leaf as a gather along its first axis (an index of one integer array)."""
    index = rec.attrs.get("index") if getattr(rec.op, "name", None) == "getitem" and rec.inputs[0].id == leaf_id \
        else None
    return (isinstance(index, tuple) and len(index) == 1 and isinstance(index[0], np.ndarray)
            and index[0].dtype.kind in "iu")


def _gathers(readers: list, leaf_id: int, grads: dict) -> list | None:
    """The records on the target's path (their outputs have a gradient) that read the leaf, where every one of
    them is a gather along its first axis: TensorFlow's ResourceGather and GatherV2 on axis 0, whose gradients
    are IndexedSlices; None where another op on the path reads it."""
    reached = [rec for rec in readers if rec.output.id in grads]
    return reached if reached and all(_gathers_rows(rec, leaf_id) for rec in reached) else None


def _rows(leaf: Tensor | Variable, records: list, grads: dict, make):
    """The gradient of ``leaf`` as the rows its gathers read: their upstream gradients, one row each, and
    their indices, in the tape's order (a gather no path reached gives none)."""
    parts = [(grads[rec.output.id], rec.attrs["index"][0]) for rec in records if rec.output.id in grads]
    row = leaf.shape[1:]
    values = ops.concat([ops.reshape(g, (-1, *row)) for g, _ in parts], 0)
    indices = np.concatenate([np.asarray(i).reshape(-1) for _, i in parts])
    wide = indices.size and (indices.max() > np.iinfo(np.int32).max)
    return make(values, Tensor(indices.astype(np.int64 if wide else np.int32)),
                Tensor(np.array(leaf.shape, dtype=np.int32)))
