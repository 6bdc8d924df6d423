"""Fusion codegen: a plan as the Python source of a Numba kernel, written to the cache and loaded."""
from __future__ import annotations

from pathlib import Path


from tapecli.version import __version__
from tapecli import ops
from tapecli.cache import numba_version
from tapecli.fusion import plan as plans
from tapecli.kernels.formulas import numba_prelude

# ------------------------------------------------------------------ codegen

# hashlib, importlib.metadata and tempfile are imported where a kernel is built: they cost a
# small program's start-up ~30 ms.

def _salt() -> str:
    here = Path(__file__).parent
    # (the op table's files too: a kernel's derivative code comes from the ops' ``grads`` formulas)
    sources = sorted(here.glob("*.py")) + [here.parent / "kernels" / f for f in ("fusion_math.py", "formulas.py")] \
        + sorted((here.parent / "ops").glob("*.py"))
    ops.load_deferred(ops.BUILTINS)         # (every template, whichever families this run has loaded)
    templates = sorted((name, op.fusion) for name, op in ops.OPS.items() if op.fusion)
    parts = [p.read_bytes() for p in sources] + [
             __version__.encode(), numba_version().encode(), repr(templates).encode()]
    import hashlib
    return hashlib.sha1(b"\0".join(parts)).hexdigest()[:12]


_SALT = None
_LOADED: dict = {}          # key -> compiled kernel (or None where it could not be built)


def kernel_key(plan, dtype, kinds, watched) -> str:
    global _SALT
    if _SALT is None:
        _SALT = _salt()
    import hashlib
    from tapecli.kernels.numba_support import kernel_threads       # imports numba: only where a kernel is due
    key = (_SALT, plan.structure, dtype.str, kinds, watched, kernel_threads())
    return hashlib.sha1(repr(key).encode()).hexdigest()[:20]


def _kernel(run, plan, dtype, kinds, watched):
    key = kernel_key(plan, dtype, kinds, watched)
    if key in _LOADED:
        return _LOADED[key]

    def may_write():
        if run.compiles >= plans.MAX_COMPILES:
            return False
        run.compiles += 1
        return True
    try:
        from tapecli.kernels.numba_support import load_source
        # a formula that calls a function this namespace cannot write fails here: the unfused path
        module = load_source("fused", codegen(plan, dtype, kinds, watched), f"tapecli_fused_{key}", may_write)
        if module is None:
            return None
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

    def sigmoid_grad(self, y, g):
        """SigmoidGrad of one element in the order of Eigen's packets (fused tensors are large: their scalar tails
        are TensorFlow's other order, ops' sigmoid_grad)."""
        y, g = self._arg(y), self._arg(g)
        return self._emit(f"({g} * ({y} * (_F(1.0) - {y})))")

    def tanh_grad(self, y, g):
        """TanhGrad of one element (its packets and scalar tail compute the same formula)."""
        y, g = self._arg(y), self._arg(g)
        return self._emit(f"({g} * (_F(1.0) - {y} * {y}))")

    def sqrt_grad(self, y, g):
        """SqrtGrad of one element in the order of Eigen's packets (as sigmoid_grad: ops' sqrt_grad)."""
        y, g = self._arg(y), self._arg(g)
        return self._emit(f"(_F(0.0) if {g} == _F(0.0) else (_F(0.5) / {y}) * {g})")

    def pow_(self, a, b):
        a, b = self._arg(a), self._arg(b)
        return _pow_code(self, a, b)

    def __getattr__(self, name):
        """Any op with a fusion template (sin, exp, expm1, ...): its template, one element."""
        op = ops.OPS.get({"pow_": "pow", "abs_": "abs"}.get(name, name))
        if op is None or not op.fusion or name.startswith("_"):
            raise AttributeError(name)

        def emit(*args, **attrs):
            return self._emit(op.fusion.format(*(self._arg(a) for a in args), **attrs))
        return emit

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

    def multiply_no_nan(self, a, b):
        a, b = self._arg(a), self._arg(b)
        return self._emit(f"(_F(0.0) if {b} == _F(0.0) else {a} * {b})")

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
    if name == "pow":
        return _pow_code(sym, args[0], args[1])
    return sym._emit(ops.OPS[name].fusion.format(*args, **attrs))




def codegen(plan, dtype, kinds, watched) -> str:
    """The source of one kernel: ``kernel(n, leaves..., literal leaves..., constants..., out, D...)``.
    ``out`` has one element for a reduction; a ``D`` array per watched leaf (its derivative).

    The elements go in blocks of ``BLOCK``, the blocks in one contiguous run per thread (``prange``).
    A reduction keeps each block's float64 sum and adds the sums up in block order afterwards: the
    same additions in the same order as one thread makes, so the result does not depend on the
    number of threads."""
    header = numba_prelude(dtype)
    params, array_leaves, body = element_body(plan, kinds, watched)
    ind = "    "
    from tapecli.kernels.numba_support import kernel_threads
    threads = kernel_threads()      # written into the source: numba cannot cache a kernel that asks
    parallel = ", parallel=True" if threads > 1 else ""
    lines = [header, f"@_jit(fastmath={{'contract'}}{parallel})", f"def kernel({', '.join(params)}):",
             f"{ind}blocks = (n + BLOCK - 1) // BLOCK",
             f"{ind}runs = min({threads}, blocks)"]
    if plan.reduce:
        lines.append(f"{ind}sums = np.empty(blocks, np.float64)")
    lines.append(f"{ind}for r in {'prange' if parallel else 'range'}(runs):")
    if plan.reduce:
        lines.append(f"{ind * 2}buf = np.empty(BLOCK, _F)")
    lines.append(f"{ind * 2}for b in range(r * blocks // runs, (r + 1) * blocks // runs):")
    lines.append(f"{ind * 3}start = b * BLOCK")
    lines.append(f"{ind * 3}m = min(BLOCK, n - start)")
    for j in array_leaves:
        lines.append(f"{ind * 3}xs{j} = x{j}[start:start + m]")
    for j in watched:
        lines.append(f"{ind * 3}ds{j} = d{j}[start:start + m]")
    if not plan.reduce:
        lines.append(f"{ind * 3}os = out[start:start + m]")
    lines.append(f"{ind * 3}for k in range(m):")
    lines.extend(f"{ind * 4}{line}" for line in body)
    if plan.reduce:
        lines.append(f"{ind * 3}sums[b] = block_sum(buf, m)")
        lines.append(f"{ind}total = 0.0")
        lines.append(f"{ind}for b in range(blocks):")
        lines.append(f"{ind * 2}total += sums[b]")
        lines.append(f"{ind}out[0] = total" if plan.reduce == "sum" else f"{ind}out[0] = total / n")
    return "\n".join(lines) + "\n"


def element_body(plan, kinds, watched):
    """(the kernel's parameters, the array leaves, the statements for element ``k``): one element of the
    expression and of each watched leaf's derivative, from the ops' ``grads`` formulas. Leaves are read
    as ``xs{j}[k]`` (arrays) or ``x{j}`` (scalars); the value goes to ``os[k]`` (``buf[k]`` for a
    reduction), the derivatives to ``ds{j}[k]``. The CPU kernel (``codegen``) and the cuda one
    (``fusion.cuda``) wrap the same statements.
    """
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
    return params, array_leaves, body
