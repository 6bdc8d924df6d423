"""Why a gradient is None, or how it is connected, from the run's provenance log."""
from __future__ import annotations

from tapecli.runtime import spelling
from tapecli.runtime.context import current
from tapecli.runtime.values import Tensor, Variable, dtype_name, is_float


def _reach_path(leaf_id: int, target_ids: set, tape) -> list | None:
    """The chain of events from the leaf to a target through every op the run made (recorded or not).
    Each step is ("op", event) or ("assign", assign record)."""
    parent = {leaf_id: None}
    assigns = sorted(current().provenance.assigns, key=lambda a: a[0])
    a = 0
    for event in current().provenance.events:
        while a < len(assigns) and assigns[a][0] <= event.index:
            rec = assigns[a]
            if rec[2] not in parent and any(s in parent for s in rec[5]):
                parent[rec[2]] = ("assign", rec, next(s for s in rec[5] if s in parent))
            a += 1
        if event.output in parent:
            continue
        for i in event.inputs:
            if i in parent:
                parent[event.output] = ("op", event, i)
                break
    hit = next((t for t in target_ids if t in parent and t != leaf_id), None)
    if hit is None:
        return None
    chain = []
    node = hit
    while parent[node] is not None:
        kind, what, prev = parent[node]
        chain.append((kind, what))
        node = prev
    return list(reversed(chain))


def _cut(step, tape) -> str | None:
    """Why one step of a path is not on ``tape``'s record, or None if it is."""
    ctx = current()
    kind, what = step
    h = ctx.provenance.tapes.get(id(tape))
    if kind == "assign":
        _, line, _, name, how, _ = what
        return (f"state: {name}.{how}(...) at line {line} changed {name}'s value; state stops gradients, so reads "
                f"of {name} after it have no path to what was assigned")
    e = what
    if id(tape) in e.tapes:
        return None
    if not e.differentiable:
        return f"{e.op} at line {e.line} is not differentiable: it cuts the path"
    if not e.float_output:
        return f"{e.op} at line {e.line} made an integer tensor: integers carry no gradient"
    if h is None:
        return f"line {e.line} was not recorded on tape {tape.name}"
    if e.index < h.opened or (h.closed is not None and e.index >= h.closed):
        other = [h.name for key, h in ctx.provenance.tapes.items() if key in e.tapes]
        return (f"line {e.line} ran outside the block of tape {tape.name} (line {h.line})"
                + (f"; it was recorded on tape {other[0]}" if other else ""))
    for start, end, line in h.pauses:
        if start <= e.index and (end is None or e.index < end):
            return f"line {e.line} ran inside `{_spell('stop_recording', tape)}` (line {line})"
    if h.stopped and e.index >= h.stopped[0]:
        return (f"tape {tape.name} is not persistent and stopped recording at line {h.stopped[1]}, where it "
                f"computed gradients inside its own block")
    for index, line in h.resets:
        if index <= e.index:
            return f"`{_spell('reset', tape)}` at line {line} forgot what the tape had watched and recorded before"
    return f"line {e.line} was not recorded on tape {tape.name}: none of its inputs was watched there"


def _spell(statement: str, tape, argument: str = "") -> str:
    """A tape statement as the program spells it: TDF's ``watch x``, or ``t.watch(x)`` in a Python program."""
    return spelling.tape_statement(statement, tape.name, argument)


def _tape_name(tape) -> str:
    return f"tape {tape.name}"


def why_unwatched(tape, leaf, label, is_const) -> str:
    ctx = current()
    h = ctx.provenance.tapes.get(id(tape))
    if label in ctx.provenance.rebinds and not isinstance(leaf, Variable):
        line, name = ctx.provenance.rebinds[label]
        return (f"{label} was a variable until line {line}, where `{label} = ...` rebound the name to a tensor, "
                f"which {_tape_name(tape)} does not watch; did you mean {label}.assign_add(...) or "
                f"{label}.assign(...)?")
    if h is not None and h.resets:
        line = h.resets[-1][1]
        reset_note = f"; `{_spell('reset', tape)}` at line {line} forgot what it watched before"
    else:
        reset_note = ""
    if isinstance(leaf, Variable):
        if h is not None and h.empty_watches and "." in leaf.name:
            line, text = h.empty_watches[0]
            return (f"{leaf.name} belongs to a layer that was not built when `{_spell('watch', tape, text)}` ran at "
                    f"line {line}, so the list was empty; call the layer once before the tape, or watch its variables after the "
                    f"first call")
        if not leaf.trainable:
            return (f"{label} is a variable with trainable=False: {_tape_name(tape)} watches it only after "
                    f"`{_spell('watch', tape, label)}`{reset_note}")
        if not tape.watch_accessed_variables:
            return (f"{_tape_name(tape)} (line {tape.line}) has watch_accessed_variables=False and {label} was never watched: "
                    f"add `{_spell('watch', tape, label)}` in its block{reset_note}")
        return (f"{label} was not read inside the block of {_tape_name(tape)} (line {tape.line}), so the tape "
                f"never watched it{reset_note}")
    kind = "a constant" if is_const else "a tensor"
    return f"{label} is {kind}: {_tape_name(tape)} watches it only after `{_spell('watch', tape, label)}`{reset_note}"


def diagnose(tape, targets: list[Tensor], target_text: str | None, leaf, label: str, is_const: bool = False) -> str:
    """Why ``leaf`` (named ``label``) gets no gradient from ``targets`` on ``tape``."""
    ctx = current()
    if not is_float(leaf.dtype):
        return f"{label} is {dtype_name(leaf.dtype)}: integer tensors have no gradient (watch a float tensor)"
    if leaf.id not in tape.watched_ids:
        return why_unwatched(tape, leaf, label, is_const)
    if ctx.provenance.full:
        return f"no recorded path from {label} on {_tape_name(tape)} (the run was too long to say why)"
    target_ids = {t.id for t in targets}
    path = _reach_path(leaf.id, target_ids, tape)
    if path is None:
        left = tape.left_reason(leaf.id, label)
        if left is not None:
            return left
        outside = _target_outside(tape, target_ids, target_text)
        if outside is not None:
            return outside
        for line, bound in ctx.provenance.untaken:
            if target_text in bound:
                return f"the branch at line {line} that would bind {target_text} was not taken"
        return f"no path at all: {target_text or 'the target'} does not depend on {label}"
    for step in path:
        reason = _cut(step, tape)
        if reason is not None:
            return reason
    return f"no recorded path from {label} to the target on {_tape_name(tape)}"


def _target_outside(tape, target_ids: set, target_text: str | None) -> str | None:
    """Why no path: the target itself was computed outside ``tape``'s block (a gradient asked of the
    wrong tape), or None."""
    made = [e for e in current().provenance.events if e.output in target_ids]
    if not made or id(tape) in made[-1].tapes:
        return None
    reason = _cut(("op", made[-1]), tape)
    if reason is None or "outside the block" not in reason:
        return None
    return f"{target_text or 'the target'} is not on the record of {_tape_name(tape)}: {reason}"


def chain(tape, targets: list[Tensor], leaf) -> list[tuple]:
    """The recorded ops from ``leaf`` to a target on ``tape``, by statement: [(line, [op names])], in order."""
    parent = {leaf.id: None}
    for rec in tape.op_records():
        if rec.output.id in parent:
            continue
        for inp in rec.inputs:
            if inp.id in parent:
                parent[rec.output.id] = (rec, inp.id)
                break
    hit = next((t.id for t in targets if t.id in parent), None)
    steps = []
    while hit is not None and parent[hit] is not None:
        rec, hit = parent[hit]
        steps.append((rec.line, rec.op.name))
    grouped: list[tuple] = []
    for line, op in reversed(steps):
        if grouped and grouped[-1][0] == line:
            grouped[-1][1].append(op)
        else:
            grouped.append((line, [op]))
    return grouped
