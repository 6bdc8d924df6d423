"""`tapecli lint`: static checks of a parsed program, for mistakes the seeds warn about.

Everything here reads the syntax tree only; no program runs. Each check is a
conservative approximation of the runtime behaviour: where the path a program takes
cannot be known without running it (branches, loops, function calls), a check prefers
to say nothing rather than report a finding that may be false.

Codes (stable; tests and users' CI configurations rely on them):

TDF001  a second gradient/jacobian call on a tape that is not persistent (a TapeError at run time)
TDF002  a gradient/jacobian call inside the block of its own persistent tape (it records the backward pass)
TDF003  a var/const declared with integer literals only, then watched or used as a gradient source
TDF004  a tape that is never used
TDF005  a watch of a layer's variables (Dense, Conv2D, LSTM, ...) before the layer is first called (built)
TDF006  a gradient/jacobian with respect to a constant (`const c`, `tf.constant`) its tape never watched (None)
TDF007  a variable rebound to a tensor (`x = x - lr * g`, `x -= ...`) instead of updated (`x.assign_sub(...)`)

A finding is silenced by ``# noqa`` (or ``# noqa: TDF001``) on its line; ``--select``/``--ignore`` and the
``[tool.tapecli.lint]`` table of pyproject.toml choose the codes (``lint_checked``).
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass

from tapecli.frontend import ast
from tapecli.runtime import spelling

REQUEST_METHODS = ("gradient", "jacobian", "batch_jacobian")
TAPE_METHODS = REQUEST_METHODS + ("watched_variables",)
LAYER_VARIABLE_ATTRS = ("variables", "trainable_variables", "kernel", "bias")
FLOAT_DTYPES = ("float32", "float64", "f32", "f64")

CODES = {
    "TDF001": "second gradient call on a non-persistent tape",
    "TDF002": "gradient call inside its own persistent tape's block",
    "TDF003": "integer literals flowing into watched math",
    "TDF004": "tape never used",
    "TDF005": "watch of an unbuilt layer's variables",
    "TDF006": "gradient with respect to a constant the tape never watched",
    "TDF007": "variable rebound to a tensor",
}


@dataclass(frozen=True, order=True)
class Finding:
    line: int
    column: int
    code: str
    message: str

    def to_json(self) -> dict:
        return asdict(self)


def lint(program: ast.Program) -> list[Finding]:
    """Every finding of every check, sorted by position; one finding per (position, code)."""
    findings: dict[tuple, Finding] = {}
    for check in (_TapeUse().run, _integer_sources, _unused_tapes, _unbuilt_layers, _watch_and_update):
        for f in check(program):
            findings.setdefault((f.line, f.column, f.code), f)
    return sorted(findings.values())


def lint_source(source: str, filename: str = "<input>") -> list[Finding]:
    """Parse and lint; a syntax error propagates as TdfSyntaxError."""
    from tapecli.frontend.parser import parse
    return lint(parse(source, filename))


# ---------------------------------------------------------------- helpers

def _before(a, b) -> bool:
    """Node ``a`` starts before node ``b`` in the source."""
    return (a.line, a.column) < (b.line, b.column)


def _header_exprs(stmt) -> list:
    """The expressions a statement evaluates itself (not those of the blocks it contains)."""
    if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.For)) and ast.simple_names(stmt) is None:
        return []                   # (lint follows the assignments and loops of plain names only)
    if isinstance(stmt, (ast.ExprStmt, ast.Assign, ast.AugAssign, ast.ConstDecl)):
        return [stmt.value]
    if isinstance(stmt, ast.VarDecl):
        return _option_values(stmt.options) + [stmt.value]
    if isinstance(stmt, ast.Watch):
        return list(stmt.items)
    if isinstance(stmt, ast.Return):
        return [stmt.value] if stmt.value is not None else []
    if isinstance(stmt, ast.Expect):
        return [e for e in (stmt.test, stmt.message) if e is not None]
    if isinstance(stmt, ast.If):
        return [cond for cond, _ in stmt.branches]
    if isinstance(stmt, ast.While):
        return [stmt.test]
    if isinstance(stmt, ast.For):
        return [stmt.iter]
    if isinstance(stmt, ast.FuncDef):
        return [p.default for p in stmt.params if p.default is not None]
    if isinstance(stmt, ast.TapeBlock):
        return _option_values(stmt.options)
    return []


def _option_values(options) -> list:
    """Options are keywords, but the grammar also lets positional arguments through (a run-time error)."""
    return [o.value if isinstance(o, ast.Keyword) else o for o in options]


def _request_calls(exprs) -> list[tuple[str, str, ast.Call]]:
    """(tape name, method, call) of each `NAME.gradient(...)`-like call, in evaluation order."""
    calls = []
    for expr in exprs:
        for node in ast.walk(expr):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and isinstance(node.func.value, ast.Name) and node.func.attr in REQUEST_METHODS):
                calls.append((node.func.value.id, node.func.attr, node))
    # Arguments are evaluated before the call: inner calls first (they end first).
    calls.sort(key=lambda c: (c[2].end, -c[2].start))
    return calls


def _persistence(tape: ast.TapeBlock) -> bool | None:
    """True/False when the source says so (a literal, or no option at all); None when computed."""
    for kw in tape.options:
        if not isinstance(kw, ast.Keyword):
            return None
        if kw.name == "persistent":
            if isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, bool):
                return kw.value.value
            return None
    return False


def _bound_by(stmt) -> set[str]:
    """Names a statement binds itself (a block's own statements are visited separately)."""
    if isinstance(stmt, (ast.VarDecl, ast.ConstDecl, ast.FuncDef, ast.TapeBlock)):
        return {stmt.name}
    return set(ast.simple_names(stmt) or ())


def _followed_loop(stmt) -> bool:
    """A loop whose body lint follows: a while, or a for of plain names (simple_names)."""
    return isinstance(stmt, ast.While) or isinstance(stmt, ast.For) and ast.simple_names(stmt) is not None


def _ends_with_break(body) -> bool:
    return bool(body) and isinstance(body[-1], (ast.Break, ast.Return))


def _source_arg(call: ast.Call):
    if len(call.args) > 1:
        return call.args[1]
    for kw in call.keywords:
        if kw.name in ("sources", "source"):
            return kw.value
    return None


def _leaf_names(expr) -> list[ast.Name]:
    """The names of a sources/watch expression: `x`, `[x, y]`, `{"x": x}`, nested."""
    if isinstance(expr, ast.Name):
        return [expr]
    if isinstance(expr, (ast.ListDisplay, ast.TupleDisplay)):
        return [n for item in expr.items for n in _leaf_names(item)]
    if isinstance(expr, ast.DictDisplay):
        return [n for _, v in expr.pairs for n in _leaf_names(v)]
    return []


# ------------------------------------------------- TDF001 and TDF002: tape calls

class _TapeInfo:
    __slots__ = ("node", "persistent", "first")

    def __init__(self, node, persistent, first=None):
        self.node = node
        self.persistent = persistent
        self.first = first            # the first request call since the tape began or was reset

    def copy(self):
        return _TapeInfo(self.node, self.persistent, self.first)


class _TapeUse:
    """Follows statements in order with what is known of each tape: its declaration and its first
    gradient call. Branches are followed separately and merged (a call on any branch counts); a
    loop's body is followed twice, so a call in it meets itself on the second iteration."""

    def __init__(self):
        self.findings: list[Finding] = []
        self.python = False              # the program is TensorFlow Python: advice in its spelling

    def run(self, program):
        self.python = program.python
        self.block(program.body, {}, ())
        return self.findings

    def block(self, body, tapes: dict, open_: tuple) -> dict:
        for stmt in body:
            tapes = self.stmt(stmt, tapes, open_)
        return tapes

    def stmt(self, stmt, tapes, open_):
        tapes = self.requests(_header_exprs(stmt), tapes, open_)
        if isinstance(stmt, ast.TapeBlock):
            tapes = dict(tapes)
            tapes[stmt.name] = _TapeInfo(stmt, _persistence(stmt))
            return self.block(stmt.body, tapes, open_ + (stmt.name,))
        for name in _bound_by(stmt):
            if name in tapes:                  # rebound to something else: no longer known
                tapes = dict(tapes)
                del tapes[name]
        if isinstance(stmt, ast.Reset) and stmt.tape in tapes:
            tapes = dict(tapes)
            tapes[stmt.tape] = tapes[stmt.tape].copy()
            tapes[stmt.tape].first = None
        elif isinstance(stmt, ast.StopRecording):
            # Nothing in the block is recorded on the paused tape: a call there records nothing on it.
            return self.block(stmt.body, tapes, tuple(n for n in open_ if n != stmt.tape))
        elif isinstance(stmt, ast.If):
            outcomes = [self.block(body, tapes, open_) for _, body in stmt.branches]
            outcomes.append(self.block(stmt.orelse or [], tapes, open_))
            tapes = self.merge(outcomes)
        elif _followed_loop(stmt):
            once = self.block(stmt.body, tapes, open_)
            if _ends_with_break(stmt.body):
                tapes = self.merge([tapes, once])
            else:
                twice = self.block(stmt.body, once, open_)
                tapes = self.merge([tapes, once, twice])
        elif isinstance(stmt, ast.FuncDef):
            # A function body runs when called, with tapes of its own; tapes from outside are unknown.
            self.block(stmt.body, {}, ())
        elif isinstance(stmt, ast.ExpectError):
            pass    # calls meant to fail (`expect_error TapeError: t.gradient(...)`) are the point there
        return tapes

    @staticmethod
    def merge(outcomes: list[dict]) -> dict:
        merged: dict = {}
        names = [n for o in outcomes for n in o]
        for name in dict.fromkeys(names):
            infos = [o[name] for o in outcomes if name in o]
            if len(infos) != len(outcomes) or any(i.node is not infos[0].node for i in infos):
                continue                       # declared or rebound on some paths only: unknown after
            used = [i.first for i in infos if i.first is not None]
            merged[name] = _TapeInfo(infos[0].node, infos[0].persistent, used[0] if used else None)
        return merged

    def requests(self, exprs, tapes, open_) -> dict:
        for name, method, call in _request_calls(exprs):
            info = tapes.get(name)
            if info is None:
                continue
            if info.persistent is False:
                if info.first is None:
                    tapes = {**tapes, name: _TapeInfo(info.node, False, call)}
                    continue
                first = info.first
                where = (f"it runs again in a loop, and the call of the previous iteration (line {first.line}) "
                         f"already used the tape" if first is call else f"the first is at line {first.line}")
                self.findings.append(Finding(
                    call.line, call.column, "TDF001",
                    f"{name}.{method} is a second gradient call on tape {name}, which is not persistent "
                    f"({where}): this is a TapeError at run time; declare it with "
                    + spelling.either(f"`tape {name}(persistent=True):`, or record again in a new tape block",
                                      f"`with tf.GradientTape(persistent=True) as {name}:`, or record again in a new "
                                      f"`with tf.GradientTape() as {name}:` block", python=self.python)))
            elif info.persistent and name in open_:
                self.findings.append(Finding(
                    call.line, call.column, "TDF002",
                    f"note: {name}.{method} is called inside the block of its own persistent tape {name}, so "
                    f"{name} records the backward pass too (more time and memory); this is only needed for "
                    f"higher derivatives: otherwise call it after the block (dedent it)"))
        return tapes


# --------------------------------------------- TDF003: integer declarations

def _integer_literal(expr) -> bool:
    """A number literal, or a bracket literal of number literals, all integers."""
    if isinstance(expr, ast.Number):
        return isinstance(expr.value, int)
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.operand, ast.Number):
        return isinstance(expr.operand.value, int)
    if isinstance(expr, ast.ListDisplay):
        return bool(expr.items) and all(_integer_literal(i) for i in expr.items)
    return False


def _python_decl(kind: str, arguments: str) -> str:
    """A declaration as TensorFlow Python spells it: tf.Variable(...) or tf.constant(...)."""
    return f"tf.{'Variable' if kind == 'var' else 'constant'}({arguments})"


def _integer_sources(program) -> list[Finding]:
    """Integer-literal declarations (no annotation) that a watch or a gradient call then names.
    Follows statements in order; a name rebound on any path stops being tracked."""
    findings: dict[int, Finding] = {}

    def uses(stmt):
        names = []
        if isinstance(stmt, ast.Watch):
            names += [n for item in stmt.items for n in _leaf_names(item)]
        for _, _, call in _request_calls(_header_exprs(stmt)):
            source = _source_arg(call)
            if source is not None:
                names += _leaf_names(source)
        return names

    def report(name: ast.Name, decl, use_stmt):
        if id(decl) in findings:
            return
        kind = "var" if isinstance(decl, ast.VarDecl) else "const"
        literal = decl.value
        text = program.source[literal.start:literal.end] if literal.end > literal.start else "..."
        how = "watched" if isinstance(use_stmt, ast.Watch) else "a gradient source"
        written = spelling.declaration(kind, decl.name, text, python=program.python)
        findings[id(decl)] = Finding(
            literal.line, literal.column, "TDF003",
            f"{decl.name} is declared with integer literals only ({written}), so it is int32, "
            f"and it is {how} at line {use_stmt.line}: integers are not differentiable and its gradients will "
            + (f"be None; write a float literal ({_python_decl(kind, _float_hint(text))}) or give the dtype "
               f"({_python_decl(kind, text + ', dtype=tf.float32')})" if program.python else
               f"be None; write a float literal ({_float_hint(text)}) or declare `{kind} {decl.name}: float32 = "
               f"{text}`"))

    def block(body, known: dict) -> dict:
        for stmt in body:
            known = statement(stmt, known)
        return known

    def statement(stmt, known):
        for name in uses(stmt):
            decl = known.get(name.id)
            if decl is not None:
                report(name, decl, stmt)
        bound = _bound_by(stmt)
        if bound & set(known):
            known = {k: v for k, v in known.items() if k not in bound}
        if isinstance(stmt, (ast.VarDecl, ast.ConstDecl)) and stmt.dtype is None and _integer_literal(stmt.value):
            known = {**known, stmt.name: stmt}
        if isinstance(stmt, ast.If):
            outcomes = [block(body, known) for _, body in stmt.branches] + [block(stmt.orelse or [], known)]
            known = _common(outcomes)
        elif _followed_loop(stmt):
            known = _common([known, block(stmt.body, known)])
        elif isinstance(stmt, (ast.TapeBlock, ast.StopRecording, ast.ExpectError)):
            known = block(stmt.body, known)
        elif isinstance(stmt, ast.FuncDef):
            params = {p.name for p in stmt.params}
            block(stmt.body, {k: v for k, v in known.items() if k not in params})
        return known

    block(program.body, {})
    return list(findings.values())


def _common(outcomes: list[dict]) -> dict:
    first = outcomes[0]
    return {k: v for k, v in first.items() if all(o.get(k) is v for o in outcomes[1:])}


def _float_hint(text: str) -> str:
    import re
    return re.sub(r"(?<![\w.])(\d+)(?![\w.])", r"\1.0", text) if len(text) <= 40 else "e.g. 10.0"


# ------------------------------------------------------- TDF004: unused tapes

def _unused_tapes(program) -> list[Finding]:
    """A tape block whose name nothing refers to afterwards: no method call, `watch ... in t`,
    `reset t`, `stop_recording t`, nor any other use of the name (passing it to a function counts).
    A use inside a function body counts wherever the function is. A later `tape t:` in the same
    block sequence ends the first tape's life."""
    uses: list = []            # (name, node) of each reference to a name or a tape
    in_function = {id(inner) for node in ast.walk(program) if isinstance(node, ast.FuncDef)
                   for inner in ast.walk(node.body)}
    for node in ast.walk(program):
        if isinstance(node, ast.Name):
            uses.append((node.id, node))
        elif isinstance(node, ast.Watch) and node.tape:
            uses.append((node.tape, node))
        elif isinstance(node, (ast.Reset, ast.StopRecording)):
            uses.append((node.tape, node))

    findings = []

    def block(body):
        for i, stmt in enumerate(body):
            if isinstance(stmt, ast.TapeBlock):
                end = next((later for later in body[i + 1:] if stmt.name in _bound_by(later)), None)
                used = any(name == stmt.name and (id(node) in in_function or (
                    _before(stmt, node) and (end is None or _before(node, end))))
                    for name, node in uses)
                if not used:
                    findings.append(Finding(
                        stmt.line, stmt.column, "TDF004",
                        f"tape {stmt.name} is never used: nothing calls {stmt.name}.gradient, .jacobian, "
                        f".batch_jacobian or .watched_variables"
                        + (f" before it is declared again at line {end.line}" if end is not None else "")
                        + f"; ask it for a gradient (`{stmt.name}.gradient(target, sources)`) after the block, "
                          f"or remove the tape (dedent its block)"))
            for child in _child_blocks(stmt):
                block(child)

    block(program.body)
    return findings


def _child_blocks(stmt) -> list:
    if isinstance(stmt, ast.If):
        return [body for _, body in stmt.branches] + ([stmt.orelse] if stmt.orelse else [])
    if _followed_loop(stmt) or isinstance(stmt, (ast.FuncDef, ast.TapeBlock, ast.StopRecording, ast.ExpectError)):
        return [stmt.body]
    return []


# ----------------------------------------------------- TDF005: unbuilt layers

def _unbuilt_layers(program) -> list[Finding]:
    """`watch L.variables` (or .trainable_variables, .kernel, .bias) where the latest binding of
    L before the watch is `L = Dense(...)` and no call `L(...)` appears between the two."""
    bindings: dict[str, list] = {}
    calls: dict[str, list] = {}
    for node in ast.walk(program):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            calls.setdefault(node.func.id, []).append(node)
        for name in _bound_by(node) if isinstance(node, ast.Node) else ():
            bindings.setdefault(name, []).append(node)
        if isinstance(node, ast.Param):
            bindings.setdefault(node.name, []).append(node)

    findings = []
    for node in ast.walk(program):
        if not isinstance(node, ast.Watch):
            continue
        for item in node.items:
            for attr in _attribute_leaves(item):
                if not (isinstance(attr.value, ast.Name) and attr.attr in LAYER_VARIABLE_ATTRS):
                    continue
                layer = attr.value.id
                earlier = [b for b in bindings.get(layer, []) if _before(b, node)]
                if not earlier:
                    continue
                binding = max(earlier, key=lambda b: (b.line, b.column))
                if not _is_dense(binding):
                    continue
                if any(_before(binding, c) and _before(c, node) for c in calls.get(layer, [])):
                    continue
                what = ("an empty list" if attr.attr in ("variables", "trainable_variables")
                        else "not there yet (an error)")
                findings.append(Finding(
                    attr.line, attr.column, "TDF005",
                    f"layer {layer} is not built here: {layer}.{attr.attr} is {what} until its first call "
                    f"{layer}(x), so watching it here watches nothing of it; call {layer} once before the tape (to "
                    f"build it), or keep watch_accessed_variables=True and let the call inside the tape "
                    f"watch its variables"))
    return findings


def _attribute_leaves(expr) -> list[ast.Attribute]:
    if isinstance(expr, ast.Attribute):
        return [expr]
    if isinstance(expr, (ast.ListDisplay, ast.TupleDisplay)):
        return [a for item in expr.items for a in _attribute_leaves(item)]
    return []


_BUILT_ON_CALL = {"Dense", "Conv1D", "Conv2D", "Conv3D", "Conv1DTranspose", "Conv2DTranspose", "Conv3DTranspose",
                  "DepthwiseConv1D", "DepthwiseConv2D", "SeparableConv1D", "SeparableConv2D", "Embedding",
                  "LayerNormalization", "BatchNormalization", "SimpleRNN", "LSTM", "GRU"}
# (Keras-lite layers whose variables exist only after the first call)


def _is_dense(binding) -> bool:
    return (isinstance(binding, ast.Assign) and ast.single_name(binding) is not None
            and isinstance(binding.value, ast.Call) and isinstance(binding.value.func, ast.Name)
            and binding.value.func.id in _BUILT_ON_CALL)


# ------------------------------ TDF006 and TDF007: unwatched constants, variables rebound to tensors

_ARITHMETIC_UPDATES = {"-": "assign_sub", "+": "assign_add"}


def _tf_aliases(program) -> set[str]:
    """The names TensorFlow is imported as (``import tensorflow as tf``); ``tf`` where none is."""
    names = {bound for node in ast.walk(program) if isinstance(node, ast.Import)
             for module, bound in node.names if module == "tensorflow"}
    return names or {"tf"}


def _shorten(text: str, limit: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 4].rstrip() + " ..."


def _watch_and_update(program) -> list[Finding]:
    """TDF006: ``t.gradient(w, c)`` (or .jacobian, .batch_jacobian) where ``c`` is bound to a constant
    (``const c = ...``, ``c = tf.constant(...)``) and nothing in the block of tape ``t`` watches it: constants are
    watched only by ``watch`` (``t.watch``), so its gradient is None.
    TDF007: ``x = x - lr * g`` (any arithmetic on ``x``, or ``x -= ...``) where ``x`` is bound to a variable: the
    name now holds a tensor, which later tapes do not watch and later updates do not change.
    Statements are followed in order, branches merged; a name rebound on any path stops being tracked, and a
    function's body is read with its parameters unknown."""
    tf = _tf_aliases(program)
    findings: list[Finding] = []
    text = program.source

    def is_variable(stmt) -> bool:
        if isinstance(stmt, ast.VarDecl):
            return True
        return (isinstance(stmt, ast.Assign) and ast.single_name(stmt) is not None
                and isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, ast.Attribute)
                and stmt.value.func.attr == "Variable"
                and isinstance(stmt.value.func.value, ast.Name) and stmt.value.func.value.id in tf)

    def spelled(decl) -> str:
        value = text[decl.value.start:decl.value.end] if decl.value.end > decl.value.start else "..."
        if isinstance(decl, ast.ConstDecl):
            return f"{decl.name} = {_python_decl('const', value)}" if program.python else f"const {decl.name} = {value}"
        if isinstance(decl, ast.VarDecl):
            return f"{decl.name} = {_python_decl('var', value)}" if program.python else f"var {decl.name} = {value}"
        return f"{ast.single_name(decl)} = {value}"

    watching_functions = {node.name for node in ast.walk(program) if isinstance(node, ast.FuncDef)
                          and any(isinstance(inner, ast.Watch) for inner in ast.walk(node.body))}

    def watched(tape: ast.TapeBlock, name: str) -> bool:
        """A watch of ``name`` in the tape's block, or there perhaps: the tape handed to a call, or a call of a
        function of the program that watches something."""
        inner = {id(node) for block in ast.walk(tape.body) if isinstance(block, ast.TapeBlock)
                 for node in ast.walk(block.body)}          # a bare `watch c` there is on that (innermost) tape
        for node in ast.walk(tape.body):
            mine = node.tape == tape.name or (node.tape is None and id(node) not in inner) \
                if isinstance(node, ast.Watch) else False
            if mine and any(
                    n.id == name for item in node.items for n in _leaf_names(item)):
                return True
            if isinstance(node, ast.Call) and (
                    (isinstance(node.func, ast.Name) and node.func.id in watching_functions)
                    or any(isinstance(n, ast.Name) and n.id == tape.name
                           for arg in [*node.args, *(k.value for k in node.keywords)] for n in ast.walk(arg))):
                return True
        return False

    def requests(stmt, consts, tapes):
        if isinstance(stmt, (ast.Expect, ast.Assert)) and re.search(r"\bis\s+None\b", text[stmt.start:stmt.end]):
            return                              # `expect t.gradient(w, c) is None`: the None is the point
        for tape_name, method, call in _request_calls(_header_exprs(stmt)):
            tape = tapes.get(tape_name)
            source = _source_arg(call)
            if tape is None or source is None:
                continue
            for name in _leaf_names(source):
                decl = consts.get(name.id)
                if decl is None or watched(tape, name.id):
                    continue
                nested = any(isinstance(node, ast.TapeBlock) for node in ast.walk(tape.body))
                fix = (f"`{tape_name}.watch({name.id})`" if program.python
                       else f"`watch {name.id}{f' in {tape_name}' if nested else ''}`")
                findings.append(Finding(
                    name.line, name.column, "TDF006",
                    f"{tape_name}.{method} is asked for the gradient with respect to {name.id}, a constant "
                    f"({spelled(decl)}) that tape {tape_name} (line {tape.line}) never watched, so it is None: "
                    f"a tape watches variables by itself, constants and tensors only when told; add {fix} in the "
                    f"tape's block, before {name.id} is used"
                    + (f", or make it a variable ({name.id} = tf.Variable(...))" if program.python
                       else f", or declare it `var {name.id} = ...`")))

    def rebinding(stmt, variables):
        name = ast.single_name(stmt)
        if isinstance(stmt, ast.AugAssign) and name is not None:
            op, rest = stmt.op, stmt.value
            if name not in variables:
                return
            method = _ARITHMETIC_UPDATES.get(op)
            update = (f"{method}({_shorten(text[rest.start:rest.end])})" if method
                      else f"assign({name} {op} {_shorten(text[rest.start:rest.end])})")
            what = f"`{name} {op}= ...` is `{name} = {name} {op} ...`, which"
        elif isinstance(stmt, ast.Assign) and name in variables:
            value = stmt.value
            if not isinstance(value, (ast.BinOp, ast.UnaryOp)) or not any(
                    isinstance(n, ast.Name) and n.id == name for n in ast.walk(value)):
                return
            update = f"assign({_shorten(text[value.start:value.end])})"
            if isinstance(value, ast.BinOp) and value.op in _ARITHMETIC_UPDATES:
                if isinstance(value.left, ast.Name) and value.left.id == name:
                    rest = value.right
                    update = f"{_ARITHMETIC_UPDATES[value.op]}({_shorten(text[rest.start:rest.end])})"
                elif value.op == "+" and isinstance(value.right, ast.Name) and value.right.id == name:
                    update = f"assign_add({_shorten(text[value.left.start:value.left.end])})"
            what = "this"
        else:
            return
        findings.append(Finding(
            stmt.line, stmt.column, "TDF007",
            f"{name} is a variable ({spelled(variables[name])}) and {what} rebinds {name} to a tensor: {name} is no "
            f"longer a variable, so tapes after this line do not watch it (their gradients with respect to {name} "
            f"are None) and the variable itself is not updated; update it in place: `{name}.{update}`"))

    def block(body, state):
        for stmt in body:
            state = statement(stmt, state)
        return state

    def statement(stmt, state):
        consts, variables, tapes = state
        requests(stmt, consts, tapes)
        rebinding(stmt, variables)
        bound = _bound_by(stmt)
        if bound:
            consts = {k: v for k, v in consts.items() if k not in bound}
            variables = {k: v for k, v in variables.items() if k not in bound}
            tapes = {k: v for k, v in tapes.items() if k not in bound}
        if isinstance(stmt, ast.ConstDecl):
            consts = {**consts, stmt.name: stmt}
        elif is_variable(stmt):
            variables = {**variables, (stmt.name if isinstance(stmt, ast.VarDecl) else ast.single_name(stmt)): stmt}
        state = (consts, variables, tapes)
        if isinstance(stmt, ast.TapeBlock):
            consts, variables, tapes = block(stmt.body, state)
            state = (consts, variables, {**tapes, stmt.name: stmt})
        elif isinstance(stmt, ast.If):
            outcomes = [block(body, state) for _, body in stmt.branches] + [block(stmt.orelse or [], state)]
            state = tuple(_common([o[i] for o in outcomes]) for i in range(3))
        elif _followed_loop(stmt):
            once = block(stmt.body, state)
            state = tuple(_common([state[i], once[i]]) for i in range(3))
        elif isinstance(stmt, (ast.StopRecording, ast.ExpectError)):
            state = block(stmt.body, state)
        elif isinstance(stmt, ast.FuncDef):
            params = {p.name for p in stmt.params}
            block(stmt.body, tuple({k: v for k, v in d.items() if k not in params} for d in state))
        return state

    block(program.body, ({}, {}, {}))
    return findings


# ------------------------------------------------ noqa, --select/--ignore, [tool.tapecli.lint]

# A noqa comment: bare (every code) or with codes (`noqa: TDF001, TDF004`), as flake8 and ruff read it.
_NOQA = re.compile(r"#\s*noqa\b(?::\s*(?P<codes>[A-Za-z]+[0-9]+(?:[\s,]+[A-Za-z]+[0-9]+)*))?", re.IGNORECASE)


def noqa_lines(source: str) -> dict[int, frozenset | None]:
    """Line -> the codes its ``# noqa`` comment silences (None: all of them)."""
    found = {}
    for number, text in enumerate(source.splitlines(), 1):
        if "#" not in text:
            continue
        m = _NOQA.search(text)
        if m:
            codes = m.group("codes")
            found[number] = None if codes is None else frozenset(c.upper() for c in re.split(r"[\s,]+", codes))
    return found


@dataclass(frozen=True)
class LintSettings:
    """Which codes are reported: those matching a ``select`` prefix (all when empty), less those matching an
    ``ignore`` prefix, as ruff reads its ``select``/``ignore``."""
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()

    def reports(self, code: str) -> bool:
        return ((not self.select or code.startswith(self.select))
                and not (self.ignore and code.startswith(self.ignore)))

    def overridden(self, select: str | None, ignore: str | None) -> "LintSettings":
        """The command line's ``--select`` (instead of the file's) and ``--ignore`` (besides the file's)."""
        return LintSettings(_codes(select, "--select") if select is not None else self.select,
                            self.ignore + (_codes(ignore, "--ignore") if ignore is not None else ()))


def _codes(value, where: str) -> tuple[str, ...]:
    """Codes or code prefixes (``TDF``, ``TDF00``, ``TDF001``) from a comma-separated string or a list."""
    from tapecli.errors import UsageError
    items = [v.strip().upper() for v in value.split(",")] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
        raise UsageError(f"{where}: expected a list of codes, got {value!r}")
    items = [i.strip().upper() for i in items if i.strip()]
    unknown = [i for i in items if not any(code.startswith(i) for code in CODES)]
    if unknown:
        raise UsageError(f"{where}: no lint code is {unknown[0]} or starts with it (codes: {', '.join(CODES)})")
    return tuple(items)


def read_settings(start=None) -> tuple[LintSettings, str | None]:
    """The ``[tool.tapecli.lint]`` table (``select``, ``ignore``) of the nearest ``pyproject.toml`` at or above
    ``start`` (the current folder), and that file's path; defaults when there is none."""
    import tomllib
    from pathlib import Path
    from tapecli.errors import UsageError
    folder = Path(start or ".").resolve()
    for candidate in (folder, *folder.parents):
        path = candidate / "pyproject.toml"
        if path.is_file():
            try:
                with path.open("rb") as f:
                    table = tomllib.load(f).get("tool", {}).get("tapecli", {}).get("lint", {})
            except (OSError, tomllib.TOMLDecodeError) as e:
                raise UsageError(f"{path}: {e}") from None
            except UnicodeDecodeError as e:     # (TOML is UTF-8 text)
                raise UsageError(f"{path}: not UTF-8 text (at byte {e.start + 1}); TOML files are UTF-8") from None
            if not isinstance(table, dict):
                raise UsageError(f"{path}: [tool.tapecli.lint] must be a table")
            unknown = sorted(set(table) - {"select", "ignore"})
            if unknown:
                raise UsageError(f"{path}: [tool.tapecli.lint] has no setting {unknown[0]!r} (select, ignore)")
            where = f"{path} [tool.tapecli.lint]"
            return LintSettings(_codes(table.get("select", []), f"{where} select"),
                                _codes(table.get("ignore", []), f"{where} ignore")), str(path)
    return LintSettings(), None


def lint_checked(source: str, filename: str = "<input>", settings: LintSettings = LintSettings(),
                 program: ast.Program | None = None) -> list[Finding]:
    """The findings ``tapecli lint`` reports: those ``settings`` select, less those a ``# noqa`` silences.
    ``program`` is the source parsed, when the caller has it; a syntax error propagates."""
    found = lint(program) if program is not None else lint_source(source, filename)
    silenced = noqa_lines(source)
    return [f for f in found if settings.reports(f.code)
            and not (f.line in silenced and (silenced[f.line] is None or f.code in silenced[f.line]))]
