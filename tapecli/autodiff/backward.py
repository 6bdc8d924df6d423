"""The backward pass: walks a tape's records in reverse, calling each op's gradient rule.

The rules are ops themselves, so while another tape records, the pass is recorded there: that is
how nested tapes give higher derivatives.
"""
from __future__ import annotations

import bisect
import collections
import sys

from tapecli import kernels, ops
from tapecli.errors import GradientError
from tapecli.lazymodule import LazyModule
from tapecli.ops.core import _small_vjp, gathered, gradient_tensor, small_rules, summed
from tapecli.runtime.context import current
from tapecli.runtime.tape import Record, Tape
from tapecli.runtime.values import Tensor

replay = LazyModule("tapecli.autodiff.replay", globals())     # (a backward pass's plans: from a plain pass on)
# The classes of a statement's and a loop's records (ops/statement.py), bound by the first pass after that module is
# imported: the interpreter's generated code (interpreter/scalar_source.py) imports it to make one, so no path holds
# one before (None is no node's class).
StatementRecord = LoopRecord = None


def backward(tape: Tape, targets: list[Tensor], seeds: list[Tensor], source_ids: list[int],
             release: bool | None = None, path=None) -> dict[int, Tensor]:
    """Accumulated gradients of sum(seed * target) for every source id with a path.

    Seeds may carry leading batch dimensions (one backward pass for many cotangents: the
    gradient rules keep them). ``release`` (default: the tape is not persistent) drops what
    each record kept once its rule has run. A pass over a structure seen before may run as a
    plan (``replay.py``): the same bits."""
    global StatementRecord, LoopRecord
    if StatementRecord is None and (statement := sys.modules.get("tapecli.ops.statement")) is not None:
        StatementRecord, LoopRecord = statement.StatementRecord, statement.LoopRecord
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
        views = matmul_views(path, targets)
        _backward_sweep(tape, tensorflow_order(path, targets, reach, views), reach, wanted, grads, release_records,
                        ops.add, plain, views)
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


def _backward_sweep(tape: Tape, order, reach, wanted, grads, release, add, plain, views):
    ctx = current()
    observers = ctx.observers
    threshold = kernels.THRESHOLD
    split: dict[int, list] = {}     # by a statement record's id: its op records, once its ops run one by one
    for node in order:
        cls = node.__class__
        if cls is LoopRecord:         # (on a chain: tensorflow_order)
            if release:
                node.holders -= 1
            _loop_sweep(tape, node, reach, wanted, grads, add, plain, views)
            continue
        if cls is StatementRecord or cls is _Step:
            if cls is StatementRecord or node.whole is not None:     # a statement's last op: the first of its ops
                statement = node if cls is StatementRecord else node.statement
                if release:
                    statement.holders -= 1
                out_id = statement.output.id
                g = grads.get(out_id)
                if g is None:
                    continue
                if plain and threshold > 1 and (cls is StatementRecord or node.whole):
                    g = grads[out_id] = summed(g, add)      # (as TensorFlow's tape sums what its consumers gave)
                    gv = g.value if g.__class__ is Tensor else g
                    if gv.ndim == 0:        # its ops one after another: its gradient function runs them at once
                        if out_id not in wanted:
                            del grads[out_id]
                        statement.op.sweep(statement, gv, reach, grads, add)
                        continue
                # its ops' records, each as the sweep takes it (they keep scalars only)
                records = statement.op_records(reach, ctx.tapes)
                if cls is StatementRecord:          # (one after another)
                    _backward_sweep(tape, [records[j] for j in statement.op.backward], reach, wanted, grads, False,
                                    add, plain, views)
                    continue
                split[id(statement)] = records
            records = split.get(id(node.statement))
            if records is None:         # (its gradient function ran, or no gradient came)
                continue
            rec = records[node.index]
            releasing = False
        else:
            rec = node
            releasing = release
        out_id = rec.output.id
        g = grads.get(out_id)
        if g is not None:
            g = summed(g, add)      # (what its consumers gave, summed as TensorFlow's tape sums them)
            if out_id in wanted:
                grads[out_id] = g
            else:
                del grads[out_id]        # consumed: free it early
            gv = g.value if g.__class__ is Tensor else g      # (a scalar _small_vjp left raw)
            op = rec.op
            inputs = rec.inputs
            rules = op._rules
            if rules is None and plain:
                rules = small_rules(op)
            if plain and rules and not rec.attrs and gv.size < threshold:
                scalars = _small_vjp(rec, gv, rules, reach, grads, add)
                if releasing:
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
                    view = views.get(key)
                    while view is not None:     # (the product's gradient goes to the operand it was told transposed)
                        ig = view.op.vjp(view, ig)[0]
                        key = view.inputs[0].id
                        view = views.get(key)
                    if key in reach:
                        grads[key] = gathered(grads.get(key), ig)
        if releasing:
            rec.holders -= 1
            if rec.holders <= 0:
                rec.release()


def _loop_sweep(tape: Tape, loop, reach, wanted, grads, add, plain, views) -> None:
    """A loop's record, its steps in the reverse of their order: as one value passed back from step to step where
    the statement's gradient function would run each (a scalar gradient, nothing recording or logging the sweep),
    then the steps the sweep would take otherwise (the first step, whose gradient goes to the name before the
    loop, and every step from one whose gradient is not the value's class); else each step's record."""
    out_id = loop.output.id
    g = grads.get(out_id)
    if g is None:
        return
    upto = None
    if plain and kernels.THRESHOLD > 1:
        g = grads[out_id] = summed(g, add)
        gv = g.value if g.__class__ is Tensor else g
        if gv.ndim == 0:
            upto, g = loop.op.loop_sweep(loop, gv, reach, grads, add)
    statements = loop.statements(reach, upto)
    if upto is not None and upto < len(loop.values) - 1:
        if out_id not in wanted:
            del grads[out_id]
        grads[statements[-1].output.id] = g
    _backward_sweep(tape, statements[::-1], reach, wanted, grads, False, add, plain, views)


def matmul_views(path: list, targets: list) -> dict:
    """The view transposes on ``path`` (an operand TensorFlow's MatMul is told is transposed: tf.matmul's flags,
    which its gradients set) that only products read, through views of them, by their output's id. TensorFlow's
    product reads the operand itself, so its gradient goes there at once, summed with the operand's others in
    one AddN: not first at the view (a second derivative reads the view again, transposed back)."""
    views: dict = {}
    readers: dict[int, list] = {}
    transpose = ops.OPS.get("transpose")      # (None before its family is imported: then no path holds one)
    for node in path:
        cls = node.__class__
        if cls is Record and node.op is transpose and node.attrs and node.attrs.get("view"):
            views[node.output.id] = node
            readers[node.output.id] = []
        if readers:                     # (a view's readers come after it)
            for inp in node.inputs:
                if inp.id in readers:
                    readers[inp.id].append(node)
    if not views:
        return views
    for node in reversed(path):         # (a view's readers before it)
        out_id = node.output.id
        if out_id in views and not all(r.__class__ is Record and r.op is ops.MATMUL or r.output.id in views
                                       for r in readers[out_id]):
            del views[out_id]
    for target in targets:
        views.pop(target.id, None)
    return views


def tensorflow_order(path: list, targets: list, reach, views) -> list:
    """``path``'s records (in the tape's order) in the order TensorFlow's tape runs their gradients
    (c/eager/tape.h, ComputeGradient): from the targets' ops, each op once every use of its output by an op the
    targets' gradients reach has given it its gradient, the first ready the first run (a queue, as TensorFlow 2.21
    runs them: recorded). The gradients that meet at one tensor are summed in the order they came
    (ops.core.summed), so this order is in their bits. A statement's record (ops/statement.py) stands for its ops,
    each in the place its own record would have had: where they come one after another (as in a chain of
    statements) the record stands there for them all, its ops to run in its op's ``backward`` order; else each
    of them is a :class:`_Step` in its place. The records no target's gradient reaches come last, and ``views``
    (:func:`matmul_views`): their readers give their gradients to their operands."""
    order = None if views else _chain(path, targets, reach)
    if order is None and any(node.__class__ is LoopRecord for node in path):     # (each step in its place)
        path = [statement for node in path for statement in
                (node.statements(reach) if node.__class__ is LoopRecord else (node,))]
    if order is None:
        order = _queue(path, targets, reach, views)
    if order is None:
        nodes = []
        for rec in path:
            if rec.__class__ is StatementRecord:
                nodes.extend(_steps(rec, reach))
            else:
                nodes.append(rec)
        order = _queue(nodes, targets, reach, views)
        _mark_whole(order)
    return order


_ONE_REACHED = (True,)


def _reads(node, reach) -> tuple[list, int | None]:
    """The ids ``node``'s gradient reads, in the order it gives theirs; and for a statement's record of several
    ops, how many of those come before the last read of another of its ops' results (else None)."""
    cls = node.__class__
    if cls is StatementRecord or cls is LoopRecord:       # (a loop's: its first step's)
        inputs = node.inputs
        op = node.op
        # (a statement of one name is on the path by it: that leaf is reached)
        steps, read, before = op.backward_reads(
            _ONE_REACHED if op.leaves == 1 else tuple([t.id in reach for t in inputs[:op.leaves]]))
        return [inputs[a].id for a in read], before if steps > 1 else None
    return (node.input_ids if cls is _Step else [t.id for t in node.inputs]), None


def _chain(path: list, targets: list, reach) -> list | None:
    """:func:`_queue`'s order where ``path`` is a chain, without its tables: one target, the last record's result,
    and each record's gradient reading of the path's results only the one just before it (a statement's record of
    several ops reading it at or after its ``before``: else the queue splits the statement, and so does this);
    then the queue has one record ready at a time, in the reverse of the tape's order. None where the path is not
    such a chain. (A recorded scalar loop's statements: its queue's tables held about 150 bytes a record.)"""
    if len(targets) != 1 or not path or path[-1].output.id != targets[0].id:
        return None
    made = [node.output.id for node in path]        # (increasing: ids are given as tensors are made)
    previous = None
    for node, made_id in zip(path, made):
        if previous is not None and made_id <= previous:
            return None
        if node.__class__ is LoopRecord and not node.op.chained:
            return None
        keys, before = _reads(node, reach)
        last = -1
        for i, key in enumerate(keys):
            if key == previous:
                last = i
            elif key >= made[0]:
                at = bisect.bisect_left(made, key)
                if at < len(made) and made[at] == key:
                    return None                     # (a result made further back, or by itself)
        if previous is not None and (last < 0 or before is not None and last < before):
            return None
        previous = made_id
    return path[::-1]


def _queue(nodes: list, targets: list, reach, views) -> list | None:
    """:func:`tensorflow_order` of ``nodes`` (records, a statement's ops as :class:`_Step` objects), a statement's
    record standing for its ops where they would come one after another; None where they would not. (Records
    hash as themselves: they are the keys of ``live``.)"""
    made = {}
    folded = {}             # a view's output id: the id its readers' gradients go to
    for node in nodes:
        out_id = node.output_id if node.__class__ is _Step else node.output.id
        if out_id in views:
            source = node.inputs[0].id
            folded[out_id] = folded.get(source, source)
        else:
            made[out_id] = node
    made_get = made.get
    live: dict = {}         # by node: the ids its gradient reads, in the order it gives theirs
    apart: dict = {}        # by a statement's record of several ops: how many of its reads come before the last
                            # read of another of its ops' results (StatementOp.backward_reads)
    uses: dict[int, int] = {}
    uses_get = uses.get
    pending = [made[t.id] for t in targets if t.id in made]
    while pending:
        node = pending.pop()
        if node in live:
            continue
        keys, before = _reads(node, reach)
        if before is not None:
            apart[node] = before
        if folded:
            keys = [folded.get(key, key) for key in keys]
        live[node] = keys
        for key in keys:
            uses[key] = uses_get(key, 0) + 1
            producer = made_get(key)
            if producer is not None and producer not in live:
                pending.append(producer)
    ready = collections.deque(made[t.id] for t in targets if t.id in made and t.id not in uses)
    order = []
    append, popleft, live_pop = order.append, ready.popleft, live.pop
    while ready:
        node = popleft()
        keys = live_pop(node, None)
        if keys is None:     # (a target given twice)
            continue
        append(node)
        if node.__class__ is StatementRecord and node in apart:     # a statement's ops, more than one
            if ready:               # (another op ahead of its other ops)
                return None
            before = apart[node]
            for i, key in enumerate(keys):
                left = uses[key] - 1
                uses[key] = left
                if left == 0 and key in made:
                    if i < before:      # (an op that would come before its other ops)
                        return None
                    ready.append(made[key])
            continue
        for key in keys:
            left = uses[key] - 1
            uses[key] = left
            if left == 0:
                producer = made_get(key)
                if producer is not None:
                    ready.append(producer)
    if len(order) < len(nodes):
        done = set(order)
        order.extend(node for node in reversed(nodes) if node not in done)
    return order


class _Step:
    """One op of a statement's record (ops/statement.py) where the backward order places it: TensorFlow's tape
    holds each op's own record, so a statement's ops take their places among the others'. ``whole``, on the
    statement's last op (None on the others): whether its reached ops come one after another in the order."""

    __slots__ = ("statement", "index", "output_id", "input_ids", "whole")

    def __init__(self, statement, index, output_id, input_ids):
        self.statement = statement
        self.index = index
        self.output_id = output_id
        self.input_ids = input_ids
        self.whole = None


def _steps(statement, reach) -> list:
    """The ops of ``statement`` that :meth:`Tape.path` would have taken one by one (one of their inputs reached
    from a source), in the order they ran, each a :class:`_Step`."""
    op = statement.op
    ids = [t.id for t in statement.inputs]
    on = [i in reach for i in ids]
    last = len(op.steps) - 1
    first_id = statement.output.id - last       # (as StatementRecord.op_records gives them)
    steps = []
    for j, (_, args) in enumerate(op.steps):
        ids.append(first_id + j)
        on.append(any(on[a] for a in args))
        if on[-1]:
            steps.append(_Step(statement, j, ids[-1], tuple(ids[a] for a in args)))
    steps[-1].whole = False
    return steps


def _mark_whole(order: list) -> None:
    """Each statement's last op's ``whole``: whether its statement's ops in ``order`` follow it without a gap
    (it comes first of them: each of the others gives its gradient to another of them)."""
    spans: dict[int, list] = {}         # by statement: [the position of its last op, of its latest, its ops]
    for position, node in enumerate(order):
        if node.__class__ is _Step:
            span = spans.get(id(node.statement))
            if span is None:
                spans[id(node.statement)] = [position, position, 1]
            else:
                span[1] = position
                span[2] += 1
    for start, end, count in spans.values():
        order[start].whole = end - start + 1 == count


# ------------------------------------------------------------------ structures
