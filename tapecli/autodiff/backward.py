"""The backward pass: walks a tape's records in reverse, calling each op's gradient rule.

The rules are ops themselves, so while another tape records, the pass is recorded there: that is
how nested tapes give higher derivatives.
"""
from __future__ import annotations

import collections

from tapecli import kernels, ops
from tapecli.autodiff import replay
from tapecli.errors import GradientError
from tapecli.ops.core import _small_vjp, gathered, gradient_tensor, summed
from tapecli.ops.statement import StatementRecord
from tapecli.runtime.context import current
from tapecli.runtime.tape import Tape
from tapecli.runtime.values import Tensor


def backward(tape: Tape, targets: list[Tensor], seeds: list[Tensor], source_ids: list[int],
             release: bool | None = None, path=None) -> dict[int, Tensor]:
    """Accumulated gradients of sum(seed * target) for every source id with a path.

    Seeds may carry leading batch dimensions (one backward pass for many cotangents: the
    gradient rules keep them). ``release`` (default: the tape is not persistent) drops what
    each record kept once its rule has run. A pass over a structure seen before may run as a
    plan (``replay.py``): the same bits."""
    ctx = current()

    if release is None:
        release = not tape.persistent
    wanted = set(source_ids)
    if path is None:
        path, reach = tape.path(wanted)
    else:
        path, reach = path

    def sweep(plain: bool, release_records: bool) -> dict[int, Tensor]:
        grads: dict[int, Tensor] = {}
        for target, seed in zip(targets, seeds):
            if target.id in reach or target.id in wanted:
                grads[target.id] = gathered(grads.get(target.id), seed)
        _backward_sweep(tape, tensorflow_order(path, targets), reach, wanted, grads, release_records, ops.add, plain)
        return {sid: gradient_tensor(summed(g, ops.add)) for sid, g in grads.items() if sid in wanted}

    ctx.backward_passes += 1
    ctx.running.append(tape)
    try:
        with kernels.quiet():
            # Nothing records this pass and nothing logs it: small elementwise records may run their
            # compiled gradient rules straight from the sweep (ops._small_vjp), and plans may run.
            plain = ctx.mode.plain_ops and not (kernels.numba_forced() or any(t.open and not t.paused for t in ctx.tapes))
            grads = replay.backward(ctx, path, targets, seeds, source_ids, sweep, release) if plain \
                else sweep(False, release)
    finally:
        ctx.running.pop()
    if release:
        tape.release_rest(path)
    return grads


def _backward_sweep(tape: Tape, order, reach, wanted, grads, release, add, plain):
    ctx = current()
    observers = ctx.observers
    threshold = kernels.THRESHOLD
    for rec in order:
        out_id = rec.output.id
        g = grads.get(out_id)
        if g is not None:
            g = summed(g, add)      # (what its consumers gave, summed as TensorFlow's tape sums them)
            if out_id in wanted:
                grads[out_id] = g
            gv = g.value if g.__class__ is Tensor else g      # (a scalar _small_vjp left raw)
            if rec.__class__ is StatementRecord:
                if plain and gv.ndim == 0 and threshold > 1:
                    if out_id not in wanted:
                        del grads[out_id]
                    rec.op.sweep(rec, gv, reach, grads, add)
                else:        # its ops' records, each as the sweep takes it (they keep scalars only)
                    _backward_sweep(tape, tensorflow_order(rec.op_records(reach, ctx.tapes), [rec.output]), reach,
                                    wanted, grads, False, add, plain)
                if release:
                    rec.holders -= 1
                continue
            if out_id not in wanted:
                del grads[out_id]        # consumed: free it early
            op = rec.op
            inputs = rec.inputs
            if plain and op._rules and not rec.attrs and gv.size < threshold:
                scalars = _small_vjp(rec, gv, op._rules, reach, grads, add)
                if release:
                    rec.holders -= 1
                    if rec.holders <= 0 and not scalars:
                        rec.release()
                continue
            g = gradient_tensor(g)
            vjp = op.vjp
            if vjp is None:
                raise GradientError(f"no gradient registered for op {op.name}, line {rec.line}")
            if op.vjp_needs:
                input_grads = vjp(rec, g, [inp.id in reach for inp in inputs])
            else:
                input_grads = vjp(rec, g)
            if observers:
                for observer in observers:
                    observer.backward(rec, g, input_grads)
            for inp, ig in zip(inputs, input_grads):
                if ig is not None:
                    key = inp.id
                    if key in reach:
                        grads[key] = gathered(grads.get(key), ig)
        if release:
            rec.holders -= 1
            if rec.holders <= 0:
                rec.release()


def tensorflow_order(path: list, targets: list) -> list:
    """``path``'s records (in the tape's order) in the order TensorFlow's tape runs their gradients
    (c/eager/tape.h, ComputeGradient): from the targets' ops, each op once every use of its output by an op the
    targets' gradients reach has given it its gradient, the first ready the first run (a queue, as TensorFlow 2.21
    runs them: recorded). The gradients that meet at one tensor are summed in the order they came
    (ops.core.summed), so this order is in their bits. The records no target's gradient reaches come last."""
    made = {rec.output.id: rec for rec in path}
    live: set[int] = set()
    uses: dict[int, int] = {}
    pending = [made[t.id] for t in targets if t.id in made]
    while pending:
        rec = pending.pop()
        if id(rec) in live:
            continue
        live.add(id(rec))
        for inp in rec.inputs:
            key = inp.id
            uses[key] = uses.get(key, 0) + 1
            producer = made.get(key)
            if producer is not None and id(producer) not in live:
                pending.append(producer)
    ready = collections.deque(made[t.id] for t in targets if t.id in made and t.id not in uses)
    order = []
    while ready:
        rec = ready.popleft()
        if id(rec) not in live:     # (a target given twice)
            continue
        live.discard(id(rec))
        order.append(rec)
        for inp in rec.inputs:
            key = inp.id
            left = uses[key] - 1
            uses[key] = left
            if left == 0 and key in made:
                ready.append(made[key])
    if len(order) < len(path):
        done = {id(rec) for rec in order}
        order.extend(rec for rec in reversed(path) if id(rec) not in done)
    return order


# ------------------------------------------------------------------ structures
