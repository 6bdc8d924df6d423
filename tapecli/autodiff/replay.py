"""Backward plans: a backward pass over a tape of a structure seen before runs as a recorded plan.

A training loop records the same tape again and again: the same ops, shapes and wiring, other
values. Its backward pass is then the same kernel calls on other arrays, so once the structure
has repeated, the pass runs as a plan: the kernel calls of one traced pass (``kernels/trace.py``)
made again on the new tape's saved arrays, with none of the rules, tensors or op dispatch between
them.

A plan gives the ordinary path's bits, and is adopted only once it has shown it does:

1. the structure's first pass runs ordinarily;
2. its second runs traced (every op on kernels, no scalar shortcuts) and ordinarily, and the two give
   the same bits; the trace is the candidate plan;
3. its third runs traced again, which must make the same calls with the same constants (a value
   computed outside the kernels would show as a constant that changed), and the candidate run on
   this pass's arrays must give the ordinary pass's bits;
4. from then on the plan runs, calling each kernel's NumPy function itself where ``kernels.run`` would
   call it as it is (``kernels.direct``: not where Numba serves the arrays). A pass whose structure
   differs in anything (an op, an attribute, a shape, a dtype, the wiring, which tensors the records
   kept) is another structure: the ordinary path, and a plan of its own once it has repeated so.

Plans are kept per run (the run context), only where nothing records, logs or checks the pass, on
the CPU, for paths of at most ``MAX_RECORDS`` records of the op table's ops whose attributes are plain
values (never a program's own gradient function) and whose tensors are at most ``MAX_ELEMENTS`` (above
that, kernels outweigh what a plan saves), ``MAX_PATH_ELEMENTS`` in all (a traced pass holds every array it
makes until it ends). A traced pass that fails for any reason leaves the structure to the ordinary path.
"""
from __future__ import annotations

import numpy as np

from tapecli import kernels
from tapecli.ops.core import OPS
from tapecli.runtime.tape import Record, Stub
from tapecli.runtime.values import make_tensor

MAX_PLANS = 64              # structures one run keeps plans (or candidates) for
MAX_RECORDS = 2000          # a longer path is not planned (its structure would cost more than it saves)
MAX_ELEMENTS = 1 << 20      # in one tensor of the path
MAX_PATH_ELEMENTS = 1 << 24  # in the outputs of all its records (a traced pass holds what it makes)
_ATTR_VALUES = (bool, int, float, str, type(None), np.dtype, np.generic)


class _NoPlan(Exception):
    pass


class Plan:
    """What is known of one structure: how often its pass ran, the candidate trace, the adopted one."""

    __slots__ = ("seen", "candidate", "trace", "outputs", "rejected")

    def __init__(self):
        self.seen = 0
        self.candidate = None       # (trace, output specs) from the second pass
        self.trace = None
        self.outputs = None
        self.rejected = False


def backward(ctx, path, targets, seeds, source_ids, sweep, release) -> dict:
    """The gradients ``sweep(plain, release)`` gives (``autodiff/backward.py``), by the structure's plan
    where it has one. ``release``: let go of what the records kept once done (the sweep does it as it goes)."""
    if kernels.recording():      # a loop plan traces the pass's iteration: every rule on kernels, written down
        return sweep(False, release)
    if not ctx.mode.backward_plans:     # (off for the run, or a loop plan's last iteration: its plan made these passes)
        return sweep(True, release)
    try:
        key, positions = _structure(path, targets, seeds, source_ids)
    except _NoPlan:
        return sweep(True, release)
    plans = ctx.backward_plans
    plan = plans.get(key)
    if plan is None:
        if len(plans) >= MAX_PLANS:
            return sweep(True, release)
        plans[key] = plan = Plan()
    inputs = [path[i].output.value if j < 0 else path[i].inputs[j].value for i, j in positions]
    inputs.extend(s.value for s in seeds)
    if plan.trace is not None:
        from tapecli.kernels.trace import Mismatch, resolve
        try:
            values = plan.trace.run(inputs, kernels.run, direct=True)
        except Mismatch:
            return sweep(True, release)
        if release:
            _release(path)
        ctx.replayed += 1
        return {source_ids[k]: make_tensor(resolve(spec, values)) for k, spec in plan.outputs}
    plan.seen += 1
    if plan.rejected or plan.seen == 1:      # (a third pass either adopts the plan or rejects it)
        return sweep(True, release)
    # a structure's second or third pass (the trace module is imported here: a program without a repeated
    # backward pass never loads it)
    from tapecli.kernels.trace import Mismatch, Recorder, resolve, same_specs, same_value, slots_read
    recorder = Recorder(inputs)
    try:
        with kernels.tracing(recorder):
            traced = sweep(False, False)
    except Exception:       # whatever the ordinary pass makes of it (an error of the program's: the same error)
        plan.rejected = True
        return sweep(True, release)
    trace = recorder.trace()
    outputs = [(k, recorder.spec(traced[sid].value)) for k, sid in _unique(source_ids) if sid in traced]
    ordinary = sweep(True, release)
    if plan.seen == 2:
        plan.candidate = (trace, outputs)
        plan.rejected = traced.keys() != ordinary.keys() or not all(
            same_value(traced[k].value, ordinary[k].value) for k in traced)
        return ordinary
    candidate, candidate_outputs = plan.candidate
    adopt = trace.same_as(candidate) and [k for k, _ in outputs] == [k for k, _ in candidate_outputs] \
        and same_specs([s for _, s in outputs], [s for _, s in candidate_outputs])
    if adopt:
        try:
            values = candidate.run(inputs, kernels.run)
        except Mismatch:
            adopt = False
        else:
            # (a plan's gradients are strong tensors: an ordinary one that is a literal is not what it gives)
            adopt = all(source_ids[k] in ordinary and not ordinary[source_ids[k]].weak
                        and same_value(resolve(spec, values), ordinary[source_ids[k]].value)
                        for k, spec in candidate_outputs)
    if adopt:
        candidate.bind(values, kernels.direct, (slot for _, spec in candidate_outputs for slot in slots_read(spec)))
        plan.trace, plan.outputs = candidate, candidate_outputs
    plan.rejected = not adopt
    plan.candidate = None
    return ordinary


def _structure(path, targets, seeds, source_ids):
    """(a hashable key of everything a backward pass's kernel calls depend on but the saved arrays'
    values, the (record, input or -1 for the output) positions of the arrays the records kept)."""
    if len(path) > MAX_RECORDS:
        raise _NoPlan
    # seeds with leading batch dimensions (a jacobian's one-hot rows) make every gradient that many times larger
    batch = max((s.size // max(1, t.size) for t, s in zip(targets, seeds)), default=1)
    produced: dict[int, int] = {}
    leaves: dict[int, int] = {}
    positions = []
    parts = []
    elements = 0
    for i, rec in enumerate(path):
        op = rec.op
        if rec.__class__ is not Record or OPS.get(op.name) is not op:
            raise _NoPlan
        elements += rec.output.size * batch
        if elements > MAX_PATH_ELEMENTS:
            raise _NoPlan
        ins = []
        for j, t in enumerate(rec.inputs):
            ref = produced.get(t.id)
            if ref is None:
                ref = -1 - leaves.setdefault(t.id, len(leaves))
            ins.append((ref, _layout(t, positions, i, j)))
        parts.append((op, _frozen(rec.attrs) if rec.attrs else (), tuple(ins), _layout(rec.output, positions, i, -1)))
        produced[rec.output.id] = i

    def ref(tensor_id):          # a record's output, a leaf, or neither (None)
        if tensor_id in produced:
            return produced[tensor_id]
        return -1 - leaves[tensor_id] if tensor_id in leaves else None

    ends = tuple((ref(t.id), _array_layout(s.value)) for t, s in zip(targets, seeds))
    return (tuple(parts), ends, tuple(ref(sid) for sid in source_ids)), positions


def _layout(t, positions, i, j):
    if t.__class__ is Stub:
        return (None, t.shape, t.dtype)
    positions.append((i, j))
    return _array_layout(t.value), t.weak       # (a literal's rules may unify it otherwise)


def _array_layout(v):
    if v.size > MAX_ELEMENTS:
        raise _NoPlan
    if v.__class__ is np.ndarray:
        return (np.ndarray, v.shape, v.dtype, v.strides)
    if isinstance(v, np.generic):
        return (v.__class__, (), v.dtype)
    raise _NoPlan                # an array of a device: no plans there


def _frozen(attrs) -> tuple:
    """The attributes as a key: plain values only (a function, a program's object: no plan)."""
    return tuple(sorted((k, _frozen_value(v)) for k, v in attrs.items()))


def _frozen_value(v):
    if v.__class__ in (tuple, list):
        return (v.__class__, tuple(_frozen_value(x) for x in v))
    if v.__class__ is slice:
        return (slice, _frozen_value(v.start), _frozen_value(v.stop), _frozen_value(v.step))
    if v is Ellipsis:
        return (Ellipsis,)
    if v.__class__ is np.ndarray:
        if v.size > 64:
            raise _NoPlan
        return (np.ndarray, v.dtype, v.shape, v.tobytes())
    if isinstance(v, _ATTR_VALUES):
        return (v.__class__, repr(v)) if isinstance(v, float) else (v.__class__, v)
    raise _NoPlan


def _unique(source_ids):
    seen = set()
    for k, sid in enumerate(source_ids):
        if sid not in seen:
            seen.add(sid)
            yield k, sid


def _release(path) -> None:
    """What a releasing sweep does to the records it walks through."""
    for rec in path:
        rec.holders -= 1
        if rec.holders <= 0:
            rec.release()
