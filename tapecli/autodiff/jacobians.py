"""tape.jacobian and tape.batch_jacobian over the library's values, and hessians (tape.gradient: gradients.py).

Results are built with ops (stack, reshape, getitem), so a jacobian taken while an
outer tape records is itself differentiable.

A jacobian is one batched pass: reverse mode seeds a backward pass with the batch of all
one-hot cotangents of the target (the gradient rules keep a leading batch dimension),
forward mode pushes the batch of all one-hot tangents of a source through the records
with the ops' jvp rules. ``auto`` takes forward mode for tall jacobians (more outputs
than inputs). Paths through an op whose rules take no batch (a custom gradient) fall back
to one backward pass per target element.
"""
from __future__ import annotations

import math

import numpy as np

from tapecli import ops
from tapecli.autodiff.backward import backward
from tapecli.autodiff.gradients import _prepare, _targets, why_none
from tapecli.errors import ShapeError, TapeError, TdfTypeError, TdfValueError
from tapecli.runtime.context import current
from tapecli.runtime.limits import admit
from tapecli.runtime.tape import Tape, as_tensor, check_unconnected, flatten, recording, type_word, unflatten
from tapecli.runtime.values import Tensor, Variable, is_float


# How t.jacobian computes: "rev" (one backward pass over a batch of one-hot cotangents), "fwd"
# (one forward-mode pass over a batch of one-hot tangents per source, from the ops' jvp rules) or
# "auto" (the cheaper one for the shapes). Set per run from Options.jacobian_mode.
MODES = ("auto", "rev", "fwd")

# A batched pass holds (batch size x tensor size) elements per tensor: batches are cut so that
# this stays under CHUNK_ELEMENTS for the largest tensor on the path.
CHUNK_ELEMENTS = 1 << 23


def jacobian(tape: Tape, target, sources, unconnected_gradients="none", parallel_iterations=None,
             experimental_use_pfor=True, line=None):
    """d target[i...] / d source[j...], shaped target.shape + source.shape. (``parallel_iterations`` and
    ``experimental_use_pfor`` say how TensorFlow computes it, with a loop or vectorized, not what.)"""
    return jacobian_in_mode(tape, target, sources, unconnected_gradients, line, current().jacobian_mode)


def jacobian_in_mode(tape: Tape, target, sources, unconnected_gradients="none", line=None, mode="auto"):
    unconnected = check_unconnected(unconnected_gradients)
    if mode not in MODES:
        raise TdfValueError(f'the jacobian mode must be "auto", "rev" or "fwd", got "{mode}"')
    _prepare(tape, line)
    target = as_tensor(target) if isinstance(target, (Tensor, Variable)) else None
    if target is None:
        raise TdfTypeError("jacobian takes one target tensor")
    leaves = flatten(sources, "sources")
    for leaf in leaves:
        if isinstance(leaf, (Tensor, Variable)):
            leaf = as_tensor(leaf)
            admit(target.size * leaf.size, leaf.dtype.itemsize,
                  f"the jacobian of a {list(target.shape)} tensor w.r.t. a {list(leaf.shape)} one")
    found = [None] * len(leaves)
    if is_float(target.dtype):
        found = _jacobians(tape, target, leaves, mode)
    values, whys = [], []
    for leaf, j in zip(leaves, found):
        if j is None and unconnected == "zero":
            j = Tensor(np.zeros(target.shape + leaf.shape, dtype=leaf.dtype))
        values.append(j)
        whys.append(why_none(tape, leaf) if j is None else None)
    return unflatten(sources, values), values, whys


def _jacobians(tape: Tape, target: Tensor, leaves: list, mode: str) -> list:
    """Each leaf's jacobian (a tensor shaped target.shape + leaf.shape) or None."""
    release = not tape.persistent
    ids = [leaf.id for leaf in leaves if is_float(leaf.dtype)]
    path, reach = tape.path(ids, per_op=True)      # forward mode and batching read each op's record
    used = _toward(path, target.id)
    try:
        out = [None] * len(leaves)
        rev = [i for i, leaf in enumerate(leaves) if is_float(leaf.dtype)]
        chosen = _choose_mode(mode, target, [leaves[i] for i in rev], used)
        if chosen == "fwd":
            rest = []
            for i in rev:
                j = _forward(tape, target, leaves[i], used)
                if j is NotImplemented:
                    rest.append(i)
                else:
                    out[i] = j
            if rest and mode == "fwd":
                current().settings.warn("the jacobian was taken in reverse mode: an op on the path has no forward-mode rule")
            rev = rest
        if rev:
            found = _reverse(tape, target, [leaves[i] for i in rev], (path, reach), used)
            for i, j in zip(rev, found):
                out[i] = j
        return out
    finally:
        if release:
            tape.release_rest([])


def _toward(path: list, target_id: int) -> list:
    """The records of ``path`` that lead to the target, in execution order."""
    needed = {target_id}
    used = []
    for rec in reversed(path):
        if rec.output.id in needed:
            used.append(rec)
            needed.update(inp.id for inp in rec.inputs)
    used.reverse()
    return used


def _size(t) -> int:
    return math.prod(t.shape)


def _largest(records, reach, *tensors) -> int:
    """The most elements of one tensor that gets a (co)tangent: each gets one per batch row."""
    sizes = [_size(t) for t in tensors]
    for rec in records:
        sizes.append(_size(rec.output))
        sizes.extend(_size(t) for t in rec.inputs if t.id in reach)
    return max(sizes, default=1) or 1


def _choose_mode(mode: str, target: Tensor, leaves: list, used: list) -> str:
    if mode != "auto":
        return mode
    n_in = sum(_size(leaf) for leaf in leaves)
    if n_in != target.size:
        return "fwd" if n_in < target.size else "rev"
    # A tie: the pass whose one-hot end meets a matrix product skips that product.
    leaf_ids = {leaf.id for leaf in leaves}
    fwd = any(rec.op is ops.MATMUL and any(inp.id in leaf_ids for inp in rec.inputs) for rec in used)
    rev = any(rec.op is ops.MATMUL and rec.output.id == target.id for rec in used)
    return "fwd" if fwd and not rev else "rev"


def _one_hot(n: int, start: int, count: int, shape: tuple, dtype) -> Tensor:
    rows = np.zeros((count, n), dtype=dtype)
    rows[np.arange(count), start + np.arange(count)] = 1
    return Tensor(rows.reshape((count,) + tuple(shape)))


def _identity(n: int, dtype) -> Tensor:
    """The tangents of a vector's every element at once: the identity, in Fortran order (it is its own
    transpose). matmul's tangent for it is the matrix transposed, a Fortran-ordered view, and the sums of
    the two then run in one layout (a 1000 x 1000 add of mixed layouts took 2 ms, 0.3 ms in one)."""
    return Tensor(np.eye(n, dtype=dtype).T)


def _reverse(tape: Tape, target: Tensor, leaves: list, path, used: list) -> list:
    """Reverse mode: backward passes over batches of one-hot cotangents (one pass where it fits)."""
    n = target.size
    if n == 0 or not all(rec.op.can_batch(rec) for rec in used):
        return _reverse_rows(tape, target, leaves, path)
    chunk = max(1, CHUNK_ELEMENTS // _largest(used, path[1], target, *leaves))
    parts = [[] for _ in leaves]
    for start in range(0, n, chunk):
        count = min(chunk, n - start)
        seed = _one_hot(n, start, count, target.shape, target.dtype)
        if count == n:
            ops.IDENTITY_SEEDS.add(seed.id)
        try:
            grads = backward(tape, [target], [seed], [leaf.id for leaf in leaves], release=False, path=path)
        finally:
            ops.IDENTITY_SEEDS.discard(seed.id)
        for k, leaf in enumerate(leaves):
            parts[k].append(grads.get(leaf.id))
    return [_assemble(rows, target, leaf) for rows, leaf in zip(parts, leaves)]


def _assemble(chunks: list, target: Tensor, leaf) -> Tensor | None:
    if all(c is None for c in chunks):
        return None
    chunks = [Tensor(np.zeros((c_rows,) + leaf.shape, dtype=leaf.dtype)) if c is None else c
              for c, c_rows in zip(chunks, _chunk_rows(chunks, target.size))]
    rows = chunks[0] if len(chunks) == 1 else ops.concat(chunks, axis=0)
    return ops.reshape(rows, target.shape + leaf.shape)


def _chunk_rows(chunks, n):
    sizes = [c.shape[0] for c in chunks if c is not None]
    size = sizes[0] if sizes else n
    out, left = [], n
    for _ in chunks:
        out.append(min(size, left))
        left -= size
    return out


def _reverse_rows(tape: Tape, target: Tensor, leaves: list, path) -> list:
    """One backward pass per target element: for paths through ops whose rules take no batch."""
    rows: list[list] = [[] for _ in leaves]
    for i in range(target.size):
        onehot = np.zeros(target.size, dtype=target.dtype)
        onehot[i] = 1
        seed = Tensor(onehot.reshape(target.shape))
        grads = backward(tape, [target], [seed], [leaf.id for leaf in leaves], release=False, path=path)
        for k, leaf in enumerate(leaves):
            rows[k].append(grads.get(leaf.id))
    out = []
    for leaf, row in zip(leaves, rows):
        if all(g is None for g in row):
            out.append(None)
        else:
            filled = [ops.zeros_like(leaf) if g is None else g for g in row]
            out.append(ops.reshape(ops.stack(filled), target.shape + leaf.shape))
    return out


def _forward(tape: Tape, target: Tensor, leaf, used: list):
    """Forward mode for one source: tangents pushed through the records with the ops' jvp rules, a
    batch of one-hot tangents at a time. NotImplemented where an op on the path has no such rule."""
    ctx = current()
    n = _size(leaf)
    if leaf.id == target.id:
        return ops.reshape(Tensor(np.eye(n, dtype=leaf.dtype)), target.shape + leaf.shape)
    if leaf.id not in tape.watched_ids:
        return None
    reach = {leaf.id}
    fwd = []
    for rec in used:
        if any(inp.id in reach for inp in rec.inputs):
            reach.add(rec.output.id)
            fwd.append(rec)
    if target.id not in reach:
        return None
    if n == 0 or not all(rec.op.jvp is not None and rec.op.can_batch(rec) for rec in fwd):
        return NotImplemented
    chunk = max(1, CHUNK_ELEMENTS // _largest(fwd, reach, target, leaf))
    from tapecli.kernels import quiet
    parts = []
    ctx.running.append(tape)
    try:
        with quiet():
            for start in range(0, n, chunk):
                count = min(chunk, n - start)
                if count == n and len(leaf.shape) == 1:
                    seed = _identity(n, leaf.dtype)
                else:
                    seed = _one_hot(n, start, count, leaf.shape, leaf.dtype)
                parts.append(_tangents(fwd, target, leaf, seed, count == n))
    finally:
        ctx.running.pop()
    columns = parts[0] if len(parts) == 1 else ops.concat(parts, axis=0)     # [n_in] + target.shape
    columns = ops.reshape(columns, (n, target.size))
    return ops.reshape(ops.transpose(columns), target.shape + leaf.shape)


def _tangents(records: list, target: Tensor, leaf, seed: Tensor, identity: bool) -> Tensor:
    """The target's tangent (batch + target.shape) for a batch of tangents ``seed`` of ``leaf``."""
    if identity:
        ops.IDENTITY_SEEDS.add(seed.id)
    try:
        tangents = {leaf.id: seed}
        for rec in records:
            ts = [tangents.get(inp.id) for inp in rec.inputs]
            if all(t is None for t in ts):
                continue
            t_out = rec.op.jvp(rec, ts)
            if t_out is not None:
                tangents[rec.output.id] = t_out
    finally:
        ops.IDENTITY_SEEDS.discard(seed.id)
    t = tangents.get(target.id)
    return t if t is not None else Tensor(np.zeros(seed.shape[:1] + target.shape, dtype=target.dtype))


def hessian(tape: Tape, target, source, unconnected_gradients="none", line=None, mode=None):
    """d2 sum(target) / d source2, shaped source.shape + source.shape: the jacobian of the gradient,
    which ``tape`` (persistent) records while it computes it."""
    (row,), (whys,) = hessian_block(tape, target, [source], unconnected_gradients, line, mode)
    return row[0], row, whys


def hessian_block(tape: Tape, target, sources: list, unconnected_gradients="none", line=None, mode=None):
    """The second derivatives of sum(target) w.r.t. every ordered pair of ``sources``: (values, whys), each
    a list of rows, ``values[i][j]`` the jacobian w.r.t. sources[j] of the gradient w.r.t. sources[i] (which
    ``tape``, persistent, records while it computes it), shaped sources[i].shape + sources[j].shape (as
    ``jax.hessian(f, argnums)[i][j]`` of a scalar f), or None with its reason in ``whys[i][j]`` (zeros of
    that shape, in sources[j]'s dtype, with unconnected_gradients="zero")."""
    ctx = current()
    if not tape.persistent:
        raise TapeError(f"a hessian needs a persistent tape; {tape.name} is not")
    unconnected = check_unconnected(unconnected_gradients)
    targets = _targets(target)
    if not all(isinstance(source, (Tensor, Variable)) for source in sources):
        raise TdfTypeError("a hessian is taken with respect to one tensor or variable")
    leaves = [as_tensor(source) for source in sources]
    for i, a in enumerate(leaves):
        for j, b in enumerate(leaves):
            admit(a.size * b.size, max(a.dtype.itemsize, b.dtype.itemsize),
                  f"the hessian w.r.t. a {list(a.shape)} tensor" if i == j else
                  f"the hessian block w.r.t. a {list(a.shape)} tensor and a {list(b.shape)} one")
    with recording(tape):       # (closed or paused: its backward pass is recorded on it, for the second one)
        float_targets = [t for t in targets if is_float(t.dtype)]
        grads = backward(tape, float_targets, [ops.ones_like(t) for t in float_targets],
                         [source.id for source in sources], release=False)
    values, whys = [], []
    for source, leaf in zip(sources, leaves):
        g = grads.get(source.id) if is_float(leaf.dtype) else None
        row = [None] * len(sources)
        if g is not None:
            if g.shape != leaf.shape:
                g = ops.unbroadcast(g, leaf.shape) if g.ndim >= leaf.ndim else ops.broadcast_to(g, leaf.shape)
            _, row, _ = jacobian_in_mode(tape, g, list(sources), "none", line, mode or ctx.jacobian_mode)
        why_row = [None if h is not None else why_none(tape, source if g is None else other)
                   for h, other in zip(row, sources)]
        if unconnected == "zero":
            row = [Tensor(np.zeros(leaf.shape + other.shape, dtype=other.dtype)) if h is None else h
                   for h, other in zip(row, leaves)]
            why_row = [None] * len(row)
        values.append(row)
        whys.append(why_row)
    return values, whys


def batch_jacobian(tape: Tape, target, source, unconnected_gradients="none", parallel_iterations=None,
                   experimental_use_pfor=True, line=None):
    """Per-example jacobians: shape [b] + target.shape[1:] + source.shape[1:]. (``parallel_iterations`` and
    ``experimental_use_pfor`` say how TensorFlow computes them, as for :func:`jacobian`, not what.)"""
    for what, value in (("target", target), ("source", source)):
        if not isinstance(value, (Tensor, Variable)):
            raise TdfTypeError(f"batch_jacobian takes one {what} tensor, got {type_word(value)}")
    target_t = as_tensor(target)
    source_t = as_tensor(source)
    if target_t.ndim < 1 or source_t.ndim < 1 or target_t.shape[0] != source_t.shape[0]:
        raise ShapeError(f"batch_jacobian needs the same first (batch) dimension, got target "
                         f"{list(target_t.shape)} and source {list(source_t.shape)}")
    check_unconnected(unconnected_gradients)
    _prepare(tape, line)
    found = _example_columns(tape, target_t, source_t) if is_float(target_t.dtype) else None
    if found is None:       # (TensorFlow's zeros of the target's dtype, whatever unconnected_gradients says)
        found = Tensor(np.zeros(target_t.shape + source_t.shape[1:], dtype=target_t.dtype))
    return found, [found], [None]


def _example_columns(tape: Tape, target: Tensor, source: Tensor) -> Tensor | None:
    """TensorFlow's batch_jacobian: for each element j of an example's target, the gradient of target[:, j]
    (every example's at once, as the examples are independent) with respect to the source, stacked along axis 1
    (a backward pass per element of one example, not per element of the batch)."""
    batch, width = target.shape[0], _size(target) // max(target.shape[0], 1)
    admit(width * _size(source), source.dtype.itemsize,
          f"the batch jacobian of a {list(target.shape)} tensor w.r.t. a {list(source.shape)} one")
    path = tape.path({source.id})
    columns = []
    try:
        for j in range(width):
            seed = np.zeros((batch, width), dtype=target.dtype)
            seed[:, j] = 1
            grads = backward(tape, [target], [Tensor(seed.reshape(target.shape))], [source.id], release=False,
                             path=path)
            columns.append(grads.get(source.id))
    finally:
        if not tape.persistent:
            tape.release_rest([])
    if width == 0 or all(c is None for c in columns):
        return None
    filled = [ops.zeros_like(source) if c is None else c for c in columns]
    return ops.reshape(ops.stack(filled, axis=1), target.shape + source.shape[1:])
