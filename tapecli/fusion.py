"""Fusion: an assignment whose value is an expression of elementwise ops over large float tensors
(optionally inside a full ``sum`` or ``mean``) runs as one Numba kernel, and is recorded on the
tapes as ONE op, ``fused``.

    loss = sum(sigmoid(x) * tanh(x * 1.5 + 0.5))

Unfused, that is six ops, five intermediate tensors of x's size, each written and read back,
and as many again in the backward pass. Fused, one loop reads x once; every intermediate stays in
a register.

How:

* **Plan** (once per AST node): the expression must be names, number literals, ``+ - * / **``,
  unary minus and calls of the elementwise builtins in ``CALLS``, at least two ops in all. Names
  become the kernel's leaves (one per distinct name), literals its constants.
* **Run-time check** (every execution): the leaves are float tensors or variables of one dtype,
  at least one with ``THRESHOLD`` elements or more (below it the unfused ops win: the kernel is
  a compile away), each either of the full (broadcast) shape or of one element; the call names
  still mean the builtins; the NumPy backend is not forced; ``--check-numerics`` is off. Anything
  else, and the interpreter evaluates the expression as usual, so errors and edge cases are the
  unfused path's.
* **Kernels** are generated as Python source (``codegen``), written as a real module in the cache
  folder (``tapecli.cache``) and imported (registered in ``sys.modules`` first), so that
  numba's ``cache=True`` serves a later process from disk. Their names hash the expression's
  structure, the dtype, the leaf kinds (array or scalar), the kernel variant, and the sources of
  this module and of ``kernels/fusion_math.py`` (the cache folder is per tapecli and numba
  version). A run compiles at most ``MAX_COMPILES`` new kernels; beyond that, the unfused path.
* **Derivatives**: the backward pass of an elementwise expression is diagonal, so when a tape
  records the expression the forward kernel also writes, for each leaf a tape watches, the
  derivative of the expression's value with respect to that leaf (``D``), differentiated
  symbolically from the ``grads`` formulas of the op table (the same formulas the unfused
  gradient rules run: ``ops._ew_vjp``), evaluated in registers. The fused op's gradient rule is
  then ``g * D`` (just ``D`` for the seed of a sum).
* **Higher order**: when a recording tape watches a leaf or the upstream gradient (a gradient
  taken inside another tape, for second derivatives), when the upstream gradient carries a batch
  (a vectorised jacobian), or for a leaf that was not watched when the expression ran, the rule
  replays the unfused ops instead (recorded wherever they would have been) and applies their
  rules one by one. The forward-mode rule replays the same way.

Semantically invisible: the same values within float32 rounding (the float32 kernels use the
vectorisable ``expf``/``tanhf`` of ``kernels/fusion_math.py``, within 1 ulp of the correctly rounded
results), the same tapes record the result, the same ``None``s. What differs: a tape holds one
record ``fused`` (explain's chains name it) instead of one per op.
"""
from __future__ import annotations

import importlib.util
import math
import os
import sys
import weakref
from pathlib import Path

import numpy as np

from . import __version__, ast, kernels, ops
from .builtins import BUILTINS
from .cache import cache_dir
from .numerics import NUMERICS
from .provenance import PROVENANCE
from .runtime import STATE
from .tape import ACTIVE, RUNNING, Record
from .values import Tensor, Variable

THRESHOLD = int(os.environ.get("TAPECLI_FUSION_THRESHOLD", kernels.THRESHOLD))
MAX_COMPILES = 8            # new kernels one run may compile (each costs ~1 s the first time)


def enabled() -> bool:
    return os.environ.get("TAPECLI_FUSION", "1") != "0" and kernels.backend() != "numpy"


# Builtin calls a fused expression may contain: name -> (op, number of tensor arguments).
CALLS = {"sin": ("sin", 1), "cos": ("cos", 1), "exp": ("exp", 1), "log": ("log", 1), "sqrt": ("sqrt", 1),
         "rsqrt": ("rsqrt", 1), "square": ("square", 1), "abs": ("abs", 1), "tanh": ("tanh", 1),
         "sigmoid": ("sigmoid", 1), "relu": ("relu", 1), "softplus": ("softplus", 1),
         "leaky_relu": ("leaky_relu", 1), "maximum": ("maximum", 2), "minimum": ("minimum", 2), "pow": ("pow", 2)}
BINOPS = {"+": "add", "-": "sub", "*": "mul", "/": "div", "**": "pow"}
REDUCTIONS = {"sum": "sum", "reduce_sum": "sum", "mean": "mean", "reduce_mean": "mean"}


# --------------------------------------------------------------------- plans

class Plan:
    """An expression as a list of nodes in evaluation order: ("leaf", name), ("const", value, keyed),
    ("op", name, children, attrs); the last is the root (before the optional reduction). A constant is
    ``keyed`` where its value shapes the generated code (an exponent: x ** 2 is x * x)."""

    def __init__(self, nodes, reduce, calls):
        self.nodes = nodes
        self.reduce = reduce                  # None, "sum" or "mean"
        self.calls = calls                    # builtin names the expression calls
        self.leaf_nodes = [i for i, n in enumerate(nodes) if n[0] == "leaf"]
        self.leaf_names = [nodes[i][1] for i in self.leaf_nodes]
        self.const_nodes = [i for i, n in enumerate(nodes) if n[0] == "const"]
        self.below = []                       # per node: the leaves (positions in leaf_nodes) under it
        for n in nodes:
            if n[0] == "leaf":
                self.below.append({self.leaf_nodes.index(len(self.below))})
            elif n[0] == "const":
                self.below.append(set())
            else:
                self.below.append(set().union(*(self.below[c] for c in n[2])))
        self.structure = repr([(n[0], n[1], n[2], sorted(n[3].items())) if n[0] == "op" else
                               ("const", n[1] if n[2] else None) if n[0] == "const" else ("leaf",)
                               for n in nodes]) + repr(reduce)


class _NotFusable(Exception):
    pass


def _number(n):
    if isinstance(n, ast.Number):
        return n.value
    if isinstance(n, ast.UnaryOp) and n.op == "-" and isinstance(n.operand, ast.Number):
        return -n.operand.value
    return None


def analyze(node) -> Plan | None:
    """The plan of an expression, or None if it cannot be fused."""
    reduce = None
    calls = set()
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in REDUCTIONS
            and len(node.args) == 1 and not node.keywords):
        reduce = REDUCTIONS[node.func.id]
        calls.add(node.func.id)
        node = node.args[0]
    nodes: list = []
    leaves: dict = {}

    def op(name, children, attrs=None):
        nodes.append(("op", name, tuple(children), attrs or {}))
        return len(nodes) - 1

    def visit(n):
        value = _number(n)
        if value is not None and not isinstance(value, bool):
            nodes.append(("const", value, False))
            return len(nodes) - 1
        if isinstance(n, ast.Name):
            if n.id not in leaves:
                nodes.append(("leaf", n.id))
                leaves[n.id] = len(nodes) - 1
            return leaves[n.id]
        if isinstance(n, ast.UnaryOp) and n.op == "-":
            return op("neg", [visit(n.operand)])
        if isinstance(n, ast.BinOp) and n.op in BINOPS:
            left = visit(n.left)
            return op(BINOPS[n.op], [left, visit(n.right)])
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and not n.keywords and n.func.id in CALLS:
            name, arity = CALLS[n.func.id]
            attrs = {}
            if name == "leaky_relu" and len(n.args) == 2 and _number(n.args[1]) is not None:
                attrs = {"alpha": float(_number(n.args[1]))}
                args = n.args[:1]
            elif name == "leaky_relu":
                attrs = {"alpha": 0.2}
                args = n.args
            else:
                args = n.args
            if len(args) != arity:
                raise _NotFusable
            calls.add(n.func.id)
            children = [visit(a) for a in args]
            return op(name, children, attrs)
        raise _NotFusable

    try:
        visit(node)
    except _NotFusable:
        return None
    n_ops = sum(1 for n in nodes if n[0] == "op") + (reduce is not None)
    if n_ops < 2 or nodes[-1][0] != "op":
        return None
    for n in nodes:                    # exponents shape the code: their values are part of the key
        if n[0] == "op" and n[1] == "pow" and nodes[n[2][1]][0] == "const":
            i = n[2][1]
            nodes[i] = ("const", nodes[i][1], True)
    return Plan(nodes, reduce, calls)


# ---------------------------------------------------------------- the hook

_MISSING = object()


def _lookup(scope, name):
    return scope.get(name, _MISSING)


class _RunState:
    """Per run (per interpreter, held weakly): the plans of its AST nodes, the kernels it compiled."""

    def __init__(self, interp):
        self.interp = weakref.ref(interp)
        self.plans: dict = {}
        self.compiles = 0


_RUN: _RunState | None = None


def evaluate(interp, node, scope):
    """The value of ``node`` computed by a fused kernel, or None (the caller evaluates it as usual)."""
    global _RUN
    run = _RUN
    if run is None or run.interp() is not interp:
        run = _RUN = _RunState(interp)
    plan = run.plans.get(id(node), _MISSING)
    if plan is _MISSING:
        plan = run.plans[id(node)] = analyze(node)
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
        if size >= THRESHOLD:
            big = True
        values.append(v)
    if not big or NUMERICS.enabled or not enabled():
        return None
    return _fuse(run, plan, values, scope)


def _fuse(run, plan, values, scope):
    for name in plan.calls:
        if _lookup(scope, name) is not _MISSING or name not in BUILTINS:
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
    if size > STATE.max_elements or size == 0 or not kernels.numba_ready():
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
    if ACTIVE:
        for j, t in enumerate(tensors):
            if any(tape.open and not tape.paused and t.id in tape.watched_ids for tape in ACTIVE):
                watched.append(j)
    kernel = _kernel(run, plan, dtype, tuple(kinds), tuple(watched))
    if kernel is None:
        return None
    from .kernels.numba_kernels import _launch
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
        _LOADED[kernel_key(plan, dtype, tuple(kinds), tuple(watched))] = None
        return None
    value = out.reshape(()) if plan.reduce else out.reshape(shape)
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
    tape = RUNNING[-1] if RUNNING else None
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
            and not (ACTIVE and ops.recording_watches((g, *leaves)))):
        return _kernel_vjp(rec, g, want, derivs)
    return _replay_vjp(rec, g, want, then)


def _kernel_vjp(rec, g, want, derivs):
    at = rec.attrs
    plan, dtype, shape = at["plan"], at["dtype"], at["shape"]
    leaf_kinds = [k for k in at["kinds"] if k != "c"]
    gv = g.value
    out = []
    with np.errstate(all="ignore"):
        if plan.reduce:
            scale = np.asarray(gv, dtype=dtype)
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
                else:
                    v = np.asarray(np.sum(d, dtype=np.float64) * scale.astype(np.float64), dtype=dtype)
                    v = v.reshape(rec.inputs[j].shape)
                out.append(Tensor(v))
        else:
            gflat = np.ascontiguousarray(gv).reshape(-1)
            for j, (w, kind) in enumerate(zip(want, leaf_kinds)):
                if not w:
                    out.append(None)
                    continue
                v = kernels.call("mul", gflat, derivs[j])
                if kind == "a":
                    v = v.reshape(shape)
                else:
                    v = np.asarray(np.sum(v, dtype=np.float64), dtype=dtype).reshape(rec.inputs[j].shape)
                out.append(Tensor(v))
    if PROVENANCE.enabled:
        for t in out:
            if t is not None:
                PROVENANCE.op("fused_grad", [g, *rec.inputs], t, rec.line, True, True, ())
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


# ------------------------------------------------------------------ codegen

# hashlib, importlib.metadata and tempfile are imported where a kernel is built: they cost a
# small program's start-up ~30 ms.

def _numba_version() -> str:
    import importlib.metadata
    try:
        return importlib.metadata.version("numba")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _salt() -> str:
    here = Path(__file__)
    parts = [here.read_bytes(), (here.parent / "kernels" / "fusion_math.py").read_bytes(),
             __version__.encode(), _numba_version().encode()]
    import hashlib
    return hashlib.sha1(b"\0".join(parts)).hexdigest()[:12]


_SALT = None
_LOADED: dict = {}          # key -> compiled kernel (or None where it could not be built)
_FOLDER = None


def _folder() -> Path:
    global _FOLDER
    if _FOLDER is None:
        import tempfile
        _FOLDER = cache_dir("fused-numba-" + _numba_version()) or Path(tempfile.mkdtemp(prefix="tapecli-fused-"))
    return _FOLDER


def kernel_key(plan, dtype, kinds, watched) -> str:
    global _SALT
    if _SALT is None:
        _SALT = _salt()
    import hashlib
    return hashlib.sha1(repr((_SALT, plan.structure, dtype.str, kinds, watched)).encode()).hexdigest()[:20]


def _kernel(run, plan, dtype, kinds, watched):
    key = kernel_key(plan, dtype, kinds, watched)
    if key in _LOADED:
        return _LOADED[key]
    name = f"tapecli_fused_{key}"
    path = _folder() / f"{name}.py"
    source = codegen(plan, dtype, kinds, watched)
    try:
        fresh = not path.exists() or path.read_text() != source
        if fresh:
            if run.compiles >= MAX_COMPILES:
                return None
            run.compiles += 1
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(source)
            os.replace(tmp, path)
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        kernel = module.kernel
    except Exception:           # an unwritable cache, a compile failure: the unfused path
        kernel = None
    _LOADED[key] = kernel
    return kernel


class _Code(str):
    """A scalar expression in generated source; ``const`` is its value where it is a literal."""
    const = None


def _lit(value, F="_F"):
    c = _Code(f"{F}({float(value)!r})")
    c.const = float(value)
    return c


class _Symbolic:
    """The ``grads`` formulas' namespace writing Numba source: each call appends a statement and
    returns the name of its result."""

    def __init__(self, lines):
        self.lines = lines
        self.n = 0

    def _arg(self, x):
        return x if isinstance(x, str) else _lit(x)

    def _emit(self, expr):
        self.n += 1
        name = _Code(f"t{self.n}")
        self.lines.append(f"{name} = {expr}")
        return name

    def mul(self, a, b):
        a, b = self._arg(a), self._arg(b)
        if a.const == 1.0:
            return b
        if b.const == 1.0:
            return a
        if a.const is not None and b.const is not None:
            return _lit(a.const * b.const)
        return self._emit(f"({a} * {b})")

    def add(self, a, b):
        a, b = self._arg(a), self._arg(b)
        if a.const is not None and b.const is not None:
            return _lit(a.const + b.const)
        return self._emit(f"({a} + {b})")

    def sub(self, a, b):
        a, b = self._arg(a), self._arg(b)
        if a.const is not None and b.const is not None:
            return _lit(a.const - b.const)
        return self._emit(f"({a} - {b})")

    def div(self, a, b):
        a, b = self._arg(a), self._arg(b)
        return self._emit(f"({a} / {b})")

    def neg(self, a):
        a = self._arg(a)
        return _lit(-a.const) if a.const is not None else self._emit(f"(-{a})")

    def reciprocal(self, a):
        return self._emit(f"(_F(1.0) / {self._arg(a)})")

    def square(self, a):
        a = self._arg(a)
        return self._emit(f"({a} * {a})")

    def pow_(self, a, b):
        a, b = self._arg(a), self._arg(b)
        return _pow_code(self, a, b)

    def cos(self, a):
        return self._emit(f"math.cos({a})")

    def sin(self, a):
        return self._emit(f"math.sin({a})")

    def exp(self, a):
        return self._emit(f"_exp({a})")

    def log(self, a):
        return self._emit(f"math.log({a})")

    def sqrt(self, a):
        return self._emit(f"math.sqrt({a})")

    def tanh(self, a):
        return self._emit(f"_tanh({a})")

    def sigmoid(self, a):
        return self._emit(f"_sigmoid({a})")

    def floor(self, a):
        return self._emit(f"np.floor({a})")

    def greater(self, a, b):
        return self._emit(f"({self._arg(a)} > {self._arg(b)})")

    def greater_equal(self, a, b):
        return self._emit(f"({self._arg(a)} >= {self._arg(b)})")

    def less(self, a, b):
        return self._emit(f"({self._arg(a)} < {self._arg(b)})")

    def less_equal(self, a, b):
        return self._emit(f"({self._arg(a)} <= {self._arg(b)})")

    def logical_and(self, a, b):
        return self._emit(f"({a} and {b})")

    def where(self, c, a, b):
        return self._emit(f"({self._arg(a)} if {c} else {self._arg(b)})")

    def zeros_like(self, x):
        return _lit(0.0)

    def ones_like(self, x):
        return _lit(1.0)

    def masked_grad(self, g, x, kind, alpha=0.2):
        if kind == "relu":
            return self._emit(f"({g} if {x} > _F(0.0) else _F(0.0))")
        if kind == "abs":
            return self._emit(f"({g} * sign({x}, _F(0.0), _F(1.0)))")
        return self._emit(f"({g} if {x} > _F(0.0) else {g} * _F({float(alpha)!r}))")


def _pow_code(sym, a, b):
    if b.const == 1.0:
        return a
    if b.const == 2.0:                  # NumPy's power gives x * x too (correctly rounded both)
        return sym._emit(f"({a} * {a})")
    return sym._emit(f"math.pow({a}, {b})")


def _forward_code(sym, name, args, attrs):
    a = args[0]
    simple = {"add": "({0} + {1})", "sub": "({0} - {1})", "mul": "({0} * {1})", "div": "({0} / {1})",
              "neg": "(-{0})", "maximum": "maximum({0}, {1})", "minimum": "minimum({0}, {1})",
              "sin": "math.sin({0})", "cos": "math.cos({0})", "exp": "_exp({0})", "log": "math.log({0})",
              "sqrt": "math.sqrt({0})", "rsqrt": "(_F(1.0) / math.sqrt({0}))", "square": "({0} * {0})",
              "abs": "abs({0})", "tanh": "_tanh({0})", "sigmoid": "_sigmoid({0})", "relu": "relu({0}, _F(0.0))",
              "softplus": "_softplus({0})"}
    if name in simple:
        return sym._emit(simple[name].format(*args))
    if name == "pow":
        return _pow_code(sym, a, args[1])
    if name == "leaky_relu":
        return sym._emit(f"({a} if {a} > _F(0.0) else {a} * _F({float(attrs['alpha'])!r}))")
    raise KeyError(name)


_HEADER = '''"""Generated by tapecli.fusion: a fused elementwise kernel. Do not edit; delete freely."""
import math

import numpy as np

from tapecli.kernels.numba_kernels import _jit
from tapecli.kernels.fusion_math import (BLOCK, block_sum, expf, exp64, maximum, minimum, relu, sigmoid64,
                                          sigmoidf, sign, softplus64, softplusf, tanh64, tanhf)

_F = np.{dtype}
_exp, _tanh, _sigmoid, _softplus = {impls}

'''


def codegen(plan, dtype, kinds, watched) -> str:
    """The source of one kernel: ``kernel(n, leaves..., literal leaves..., constants..., out, D...)``.
    ``out`` has one element for a reduction; a ``D`` array per watched leaf (its derivative)."""
    f32 = dtype == np.dtype(np.float32)
    header = _HEADER.format(dtype="float32" if f32 else "float64",
                            impls="expf, tanhf, sigmoidf, softplusf" if f32 else "exp64, tanh64, sigmoid64, softplus64")
    leaf_kinds = [k for k in kinds if k != "c"]
    array_leaves = [j for j, k in enumerate(leaf_kinds) if k == "a"]
    params = ["n"] + [f"x{j}" for j in range(len(leaf_kinds))]
    params += [f"w{j}" for j in range(sum(k == "c" for k in kinds))]
    params += [f"c{k}" for k in range(len(plan.const_nodes))]
    params += ["out"] + [f"d{j}" for j in watched]
    body: list[str] = []
    sym = _Symbolic(body)
    names: list = []
    leaf_of_node, w = {}, 0
    j = 0
    for node, kind in zip(plan.leaf_nodes, kinds):
        if kind == "c":
            leaf_of_node[node] = ("w", w)
            w += 1
        else:
            leaf_of_node[node] = ("x", j)
            j += 1
    const_of_node = {node: k for k, node in enumerate(plan.const_nodes)}
    for i, n in enumerate(plan.nodes):
        if n[0] == "leaf":
            kind, j = leaf_of_node[i]
            if kind == "x":
                names.append(sym._emit(f"xs{j}[k]" if leaf_kinds[j] == "a" else f"x{j}"))
            else:
                names.append(_Code(f"w{j}"))
        elif n[0] == "const":
            c = _Code(f"c{const_of_node[i]}")
            if n[2]:
                c.const = float(n[1])       # keyed: the code may depend on it
            names.append(c)
        else:
            names.append(_forward_code(sym, n[1], [names[c] for c in n[2]], n[3]))
    root = names[-1]
    body.append(f"buf[k] = {root}" if plan.reduce else f"os[k] = {root}")
    if watched:
        adj: dict = {len(plan.nodes) - 1: _lit(1.0)}
        for i in range(len(plan.nodes) - 1, -1, -1):
            n = plan.nodes[i]
            if n[0] != "op" or i not in adj:
                continue
            formulas = ops.OPS[n[1]].grads
            args = [names[c] for c in n[2]]
            for c, f in zip(n[2], formulas):
                if f is None or plan.nodes[c][0] == "const" or not plan.below[c]:
                    continue
                contrib = f(sym, adj[i], *args, names[i], n[3])
                adj[c] = contrib if c not in adj else sym.add(adj[c], contrib)
        for j in watched:
            node = next(nd for nd, (kind, jj) in leaf_of_node.items() if kind == "x" and jj == j)
            body.append(f"ds{j}[k] = {adj.get(node, _lit(0.0))}")
    lines = [header, "@_jit(fastmath={'contract'})", f"def kernel({', '.join(params)}):"]
    ind = "    "
    if plan.reduce:
        lines.append(f"{ind}buf = np.empty(BLOCK, _F)")
        lines.append(f"{ind}total = 0.0")
    lines.append(f"{ind}for start in range(0, n, BLOCK):")
    lines.append(f"{ind * 2}m = min(BLOCK, n - start)")
    for j in array_leaves:
        lines.append(f"{ind * 2}xs{j} = x{j}[start:start + m]")
    for j in watched:
        lines.append(f"{ind * 2}ds{j} = d{j}[start:start + m]")
    if not plan.reduce:
        lines.append(f"{ind * 2}os = out[start:start + m]")
    lines.append(f"{ind * 2}for k in range(m):")
    lines.extend(f"{ind * 3}{line}" for line in body)
    if plan.reduce:
        lines.append(f"{ind * 2}total += block_sum(buf, m)")
        lines.append(f"{ind}out[0] = total" if plan.reduce == "sum" else f"{ind}out[0] = total / n")
    return "\n".join(lines) + "\n"
