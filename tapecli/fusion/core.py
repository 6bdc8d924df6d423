"""Fusion at run time: the interpreter's hook and the recorded ``fused`` op."""
from __future__ import annotations

import math

import numpy as np

from tapecli import kernels
from tapecli import ops
from tapecli.runtime.context import current
from tapecli.runtime.tape import Record
from tapecli.runtime.values import Tensor, Variable
from tapecli.fusion import codegen, plan as plans
from tapecli.fusion.codegen import _kernel, kernel_key
from tapecli.fusion.plan import enabled, plan_of

# ---------------------------------------------------------------- the hook

_MISSING = object()


def _lookup(scope, name):
    return scope.get(name, _MISSING)


class FusionState:
    """Per run (held by the interpreter): the kernels it compiled."""

    def __init__(self):
        self.compiles = 0


def evaluate(interp, node, scope):
    """The value of ``node`` computed by a fused kernel, or None (the caller evaluates it as usual)."""
    run = interp.fusion_state
    if run is None:
        run = interp.fusion_state = FusionState()
    plan = plan_of(node, interp.program.plans)
    if plan is None:
        return None
    values = []
    big = False
    for name in plan.leaf_names:
        v = _lookup(scope, name)
        if v.__class__ is Variable:
            size = math.prod(v.shape)
        elif v.__class__ is Tensor:
            size = v.value.size
        else:
            return None
        if size >= plans.THRESHOLD:
            big = True
        values.append(v)
    if not big or not enabled():
        return None
    return _fuse(interp, run, plan, values, scope)


def _fuse(interp, run, plan, values, scope):
    ctx = current()
    for name in plan.calls:
        if _lookup(scope, name) is not _MISSING or name not in interp.builtins:
            return None                   # a program function of that name
    dtype = None
    strong = []
    for v in values:
        weak = v.__class__ is Tensor and v.weak
        if weak:
            if v.value.ndim != 0:
                return None
            strong.append(False)
            continue
        d = v.dtype
        if d.kind != "f" or (dtype is not None and d != dtype):
            return None
        dtype = d
        strong.append(True)
    if dtype is None or dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
        return None
    for i, n in enumerate(plan.nodes):      # every op meets a tensor (literal-only arithmetic is exact)
        if n[0] == "op" and not any(strong[j] for j in plan.below[i]):
            return None
    shapes = [v.shape for v, s in zip(values, strong) if s]
    try:
        shape = np.broadcast_shapes(*shapes)
    except ValueError:
        return None
    size = math.prod(shape)
    kinds = []
    for v, s in zip(values, strong):
        if not s:
            kinds.append("c")
        elif tuple(v.shape) == shape:
            kinds.append("a")
        elif math.prod(v.shape) == 1:
            kinds.append("s")
        else:
            return None
    if size > ctx.settings.max_elements or size == 0 or not kernels.numba_ready():
        return None
    # Read the variables (watching them, as the ops would) and turn literals into constants.
    tensors = []
    consts = []
    for v, kind in zip(values, kinds):
        if kind == "c":
            consts.append(ops.materialize(v, dtype).value[()])
        else:
            tensors.append(ops.to_tensor(v))
    const_values = [dtype.type(plan.nodes[i][1]) for i in plan.const_nodes]
    leaf_kinds = [k for k in kinds if k != "c"]
    watched = []
    if ctx.tapes:
        for j, t in enumerate(tensors):
            if any(tape.open and not tape.paused and t.id in tape.watched_ids for tape in ctx.tapes):
                watched.append(j)
    dev = kernels.device()
    if dev is not None:         # --device cuda: the same statements as a cuda.jit kernel
        from tapecli.fusion import ondevice
        value, derivs = ondevice.launch(dev, plan, dtype, tuple(kinds), tuple(watched), tensors, consts,
                                        const_values, shape, size)
        return _fused_result(plan, dtype, kinds, consts, const_values, shape, derivs, tensors, value)
    kernel = _kernel(run, plan, dtype, tuple(kinds), tuple(watched))
    if kernel is None:
        return None
    from tapecli.kernels.numba_support import _launch
    args = [size]
    for t, kind in zip(tensors, leaf_kinds):
        a = t.value
        args.append(np.require(a, requirements="CAW").reshape(-1) if kind == "a" else a.reshape(-1)[0])
    args.extend(consts)
    args.extend(const_values)
    out = np.empty(1 if plan.reduce else size, dtype)
    derivs = {j: np.empty(size, dtype) for j in watched}
    args.append(out)
    args.extend(derivs[j] for j in watched)
    try:
        _launch(kernel, *args)
    except Exception:           # MemoryError; a kernel numba cannot compile: the unfused path
        codegen._LOADED[kernel_key(plan, dtype, tuple(kinds), tuple(watched))] = None
        return None
    value = out.reshape(()) if plan.reduce else out.reshape(shape)
    return _fused_result(plan, dtype, kinds, consts, const_values, shape, derivs, tensors, value)


def _fused_result(plan, dtype, kinds, consts, const_values, shape, derivs, tensors, value):
    result = Tensor(value)
    attrs = {"plan": plan, "dtype": dtype, "kinds": tuple(kinds), "consts": consts, "const_values": const_values,
             "shape": shape, "D": derivs, "watched": {}}
    for tape in ops.emit(FUSED, tensors, result, attrs):
        # What this tape watched now decides which ops the unfused expression records on it.
        attrs["watched"][id(tape)] = frozenset(j for j, t in enumerate(tensors) if t.id in tape.watched_ids)
    return result


# ------------------------------------------------------------ the fused op

class _Every:
    def __contains__(self, i):
        return True


def _kept_extra(rec):
    return [Tensor(d) for d in (rec.attrs.get("D") or {}).values()]


def _release_extra(rec):
    rec.attrs = {**rec.attrs, "D": {}}


def _leaf_index(plan, kinds):
    """node index -> index into the record's inputs, for the leaves that are tensors."""
    out, j = {}, 0
    for node, kind in zip(plan.leaf_nodes, kinds):
        if kind != "c":
            out[node] = j
            j += 1
    return out


def _watched_then(rec):
    """The leaves (indices) that the tape running a pass over ``rec`` watched when the expression
    ran: unfused, only the ops above them were recorded there. Every leaf when no tape is known."""
    ctx = current()
    tape = ctx.running[-1] if ctx.running else None
    found = rec.attrs.get("watched", {}).get(id(tape)) if tape is not None else None
    return found if found is not None else frozenset(range(len(rec.inputs)))


def _fused_vjp(rec, g, needs=None):
    at = rec.attrs
    leaves = rec.inputs
    want = [needs is None or needs[j] for j in range(len(leaves))]
    derivs = at.get("D") or {}
    then = _watched_then(rec)
    lead = g.ndim - rec.output.ndim
    if (lead == 0 and all(j in derivs and j in then for j, w in enumerate(want) if w)
            and not (current().tapes and ops.recording_watches((g, *leaves)))):
        return _kernel_vjp(rec, g, want, derivs)
    return _replay_vjp(rec, g, want, then)


def _kernel_vjp(rec, g, want, derivs):
    ctx = current()
    at = rec.attrs
    plan, dtype, shape = at["plan"], at["dtype"], at["shape"]
    leaf_kinds = [k for k in at["kinds"] if k != "c"]
    gv = g.value
    dev = kernels.device()
    out = []
    with np.errstate(all="ignore"):
        if plan.reduce:
            scale = np.asarray(gv, dtype=dtype)         # one number (a device's scalar is read once)
            if plan.reduce == "mean":
                scale = np.divide(scale, dtype.type(math.prod(shape)), dtype=dtype)
            one = scale == 1
            for j, (w, kind) in enumerate(zip(want, leaf_kinds)):
                if not w:
                    out.append(None)
                    continue
                d = derivs[j]
                if kind == "a":
                    v = d if one else kernels.call("mul", d, scale)
                    v = v.reshape(shape)
                elif dev is not None:
                    v = kernels.call("mul", kernels.call("sum", d), scale).reshape(rec.inputs[j].shape)
                else:
                    v = np.asarray(np.sum(d, dtype=np.float64) * scale.astype(np.float64), dtype=dtype)
                    v = v.reshape(rec.inputs[j].shape)
                out.append(Tensor(v))
        else:
            gflat = gv.reshape(-1) if dev is not None else np.ascontiguousarray(gv).reshape(-1)
            for j, (w, kind) in enumerate(zip(want, leaf_kinds)):
                if not w:
                    out.append(None)
                    continue
                v = kernels.call("mul", gflat, derivs[j])
                if kind == "a":
                    v = v.reshape(shape)
                elif dev is not None:
                    v = kernels.call("sum", v).reshape(rec.inputs[j].shape)
                else:
                    v = np.asarray(np.sum(v, dtype=np.float64), dtype=dtype).reshape(rec.inputs[j].shape)
                out.append(Tensor(v))
    for observer in ctx.observers:
        for t in out:
            if t is not None:
                observer.emitted("fused_grad", [g, *rec.inputs], t, rec.line, True, ())
    return out


def _replay(rec):
    """The unfused ops again, on the record's leaves: a Tensor per node, and the (local) records of
    the op nodes. Ops are recorded wherever they would have been."""
    at = rec.attrs
    plan, dtype = at["plan"], at["dtype"]
    index = _leaf_index(plan, at["kinds"])
    consts = iter(at["consts"])
    literal = iter(at["const_values"])
    values, local = [], {}
    for i, n in enumerate(plan.nodes):
        if n[0] == "leaf":
            j = index.get(i)
            values.append(rec.inputs[j] if j is not None else Tensor(np.asarray(next(consts), dtype=dtype)))
        elif n[0] == "const":
            values.append(Tensor(np.asarray(next(literal), dtype=dtype)))
        else:
            op = ops.OPS[n[1]]
            inputs = [values[c] for c in n[2]]
            out = ops.apply(op, inputs, **n[3])
            local[i] = Record(op, inputs, out, n[3], rec.line)
            values.append(out)
    return values, local


def _reduction_record(plan, elem, rec):
    op = ops.SUM if plan.reduce == "sum" else ops.MEAN
    out = ops.apply(op, [elem], axis=None, keepdims=False)
    return Record(op, [elem], out, {"axis": None, "keepdims": False}, rec.line)


def _recorded(plan, index, then):
    """Per node: whether the unfused op there was recorded (a leaf watched then is under it)."""
    positions = {plan.leaf_nodes.index(node) for node, j in index.items() if j in then}
    return [n[0] == "op" and bool(plan.below[i] & positions) for i, n in enumerate(plan.nodes)]


def _replay_vjp(rec, g, want, then):
    at = rec.attrs
    plan = at["plan"]
    index = _leaf_index(plan, at["kinds"])
    wanted_nodes = {node for node, j in index.items() if want[j]}
    recorded = _recorded(plan, index, then)
    values, local = _replay(rec)
    root = len(plan.nodes) - 1
    adj = {}
    if not recorded[root]:
        return [None] * len(rec.inputs)
    if plan.reduce:
        red = _reduction_record(plan, values[root], rec)
        (adj[root],) = red.op.vjp(red, g)
    else:
        adj[root] = g
    # a gradient flows into a leaf, or into an op that was recorded, with a wanted leaf under it
    needed = [(i in wanted_nodes) or (recorded[i] and any(plan.leaf_nodes[k] in wanted_nodes for k in plan.below[i]))
              for i in range(len(plan.nodes))]
    for i in range(root, -1, -1):
        if i not in local or i not in adj:
            continue
        r = local[i]
        children = plan.nodes[i][2]
        needs = [needed[c] for c in children]
        grads = r.op.vjp(r, adj.pop(i), needs) if r.op.vjp_needs else r.op.vjp(r, adj.pop(i))
        for c, gc in zip(children, grads):
            if gc is not None and needed[c]:
                adj[c] = gc if c not in adj else ops.add(adj[c], gc)
    out = []
    for node, j in sorted(index.items(), key=lambda kv: kv[1]):
        out.append(adj.get(node) if want[j] else None)
    return out


def _fused_jvp(rec, ts):
    at = rec.attrs
    plan = at["plan"]
    index = _leaf_index(plan, at["kinds"])
    recorded = _recorded(plan, index, _watched_then(rec))
    values, local = _replay(rec)
    tangents = {node: ts[j] for node, j in index.items() if ts[j] is not None}
    for i, n in enumerate(plan.nodes):
        if i in local and recorded[i]:
            t_in = [tangents.get(c) for c in n[2]]
            if any(t is not None for t in t_in):
                t = local[i].op.jvp(local[i], t_in)
                if t is not None:
                    tangents[i] = t
    root = len(plan.nodes) - 1
    t = tangents.get(root)
    if t is None or not plan.reduce:
        return t
    red = _reduction_record(plan, values[root], rec)
    return red.op.jvp(red, [t])


FUSED = ops.Op("fused", vjp=_fused_vjp, jvp=_fused_jvp, batchable=True, saves="all")
FUSED._save_in = _Every()          # the leaves (for the replay), not the output
FUSED._save_out = False
FUSED.kept_extra = _kept_extra
FUSED.release_extra = _release_extra

