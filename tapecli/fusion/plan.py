"""Fusion plans: which expressions a fused kernel can compute (see tapecli/fusion/__init__.py)."""
from __future__ import annotations

from tapecli.environment import setting
from tapecli.frontend import ast
from tapecli import kernels, ops
from tapecli.runtime.context import current

THRESHOLD = setting("TAPECLI_FUSION_THRESHOLD", kernels.THRESHOLD)
MAX_COMPILES = 8            # new kernels one run may compile (each costs ~1 s the first time)


def enabled() -> bool:
    """Whether the run's mode allows fused kernels (TAPECLI_ACCEL, TAPECLI_FUSION, --check-numerics) and the
    backend is not NumPy alone."""
    return current().mode.fusion and kernels.backend() != "numpy"


# Builtin calls a fused expression may contain: name -> (op, number of tensor arguments), derived
# from the op table: every op with a fusion template (``Op.fusion``), by its builtin names; those of the families
# imported on first use from their table (ops.BUILTINS).
CALLS = {name: (op.name, len(op.grads)) for op in ops.OPS.values() if op.fusion and op.grads
         for name in (op.program or (op.name,)) if name not in ("neg", "add", "sub", "mul", "div")} | {
    name: (op, inputs) for builtins in ops.BUILTINS.values() for name, (op, _, inputs) in builtins.items() if inputs}
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


def plan_of(node, plans: dict) -> Plan | None:
    """``analyze(node)``, kept in ``plans`` (its program's: a plan depends on the node alone)."""
    entry = plans.get(id(node))
    if entry is None or entry[0] is not node:
        entry = plans[id(node)] = (node, analyze(node))
    return entry[1]


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

