"""TensorFlow's spellings of TDF's statements, made those statements (docs/spec/LANGUAGE.md §11).

Both parsers give the grammar's AST; this pass, run on every program, turns the forms that mean a TDF
statement into it, so that every later room (the interpreter, lint, explain, entry names) sees one
form of each: ``x = tf.Variable(v)`` at top level is ``var x = v`` (so ``--set x=`` works),
``with tf.GradientTape() as t:`` is ``tape t:``, ``t.watch(x)`` on a tape the block names is
``watch x in t``, ``with t.stop_recording():`` and ``t.reset()`` are ``stop_recording t:`` and
``reset t``. Docstrings and other bare strings go (they compute nothing). Anything else stays as
written: a tape reached another way (passed to a function, aliased) answers the same methods at
run time.
"""
from __future__ import annotations

from tapecli.errors import TdfSyntaxError
from tapecli.frontend import ast, forms

_TENSORFLOW = ("tensorflow", "tf")
# Statements only TDF spells: a program with one speaks TDF, and is answered in TDF.
_TDF_STATEMENTS = (ast.VarDecl, ast.ConstDecl, ast.TapeBlock, ast.Watch, ast.Reset, ast.StopRecording, ast.Expect,
                   ast.ExpectError)


class Spelling:
    """What the pass learnt: whether the program is written as TensorFlow Python (its messages then
    spell ``tf.GradientTape(persistent=True)``, not ``tape t(persistent=True):``)."""
    __slots__ = ("tensorflow",)

    def __init__(self):
        self.tensorflow = False


def rewrite(body: list, spelling: Spelling) -> list:
    imported = [module.split(".")[0] for node in body if isinstance(node, ast.Import) for module, _ in node.names]
    tf_names = {bound for node in body if isinstance(node, ast.Import)
                for module, bound in node.names if module.split(".")[0] in _TENSORFLOW}
    speaks_tdf = _has_tdf_statement(body)
    converter = _Converter(tf_names, _bound_once(body))
    out = converter.block(body, top=True, tapes=set())
    # (a Keras 3 program imports keras alone: it is TensorFlow Python too, printed and spelled as such)
    spelling.tensorflow = not speaks_tdf and (bool(tf_names) or "keras" in imported or converter.python_tapes)
    return out


def _has_tdf_statement(body) -> bool:
    stack = [body]
    while stack:
        for node in stack.pop():
            if isinstance(node, _TDF_STATEMENTS):
                return True
            stack.extend(_blocks(node))
    return False


def _blocks(node) -> list:
    """The statement lists directly under a statement."""
    if isinstance(node, ast.If):
        return [b for _, b in node.branches] + ([node.orelse] if node.orelse else [])
    body = getattr(node, "body", None)
    return [body] if isinstance(body, list) else []


def _bound_once(body) -> set[str]:
    """The names that the program's statements bind exactly once (a declaration needs that)."""
    counts: dict[str, int] = {}

    def count(name):
        counts[name] = counts.get(name, 0) + 1

    stack = [body]
    while stack:
        for node in stack.pop():
            if isinstance(node, (ast.Assign, ast.For, ast.AugAssign)):
                names = ast.simple_names(node)
                if names is None:       # (every name in the target: a.b = v counts a)
                    names = [sub.id for t in getattr(node, "targets", None) or [node.target] for sub in ast.walk(t)
                             if isinstance(sub, ast.Name)]
                for name in names:
                    count(name)
            elif isinstance(node, (ast.VarDecl, ast.ConstDecl, ast.FuncDef, ast.ClassDef)):
                count(node.name)
            stack.extend(_blocks(node))
    return {name for name, n in counts.items() if n == 1}


class _Converter:
    def __init__(self, tf_names: set[str], bound_once: set[str]):
        self.tf_names = tf_names
        self.bound_once = bound_once
        self.python_tapes = False
        self.made_tapes: dict = {}            # name -> the GradientTape(...) call a ``with name:`` enters

    def block(self, stmts: list, top: bool, tapes: set[str]) -> list:
        out = []
        entered = {s.items[0][0].id for s in stmts if isinstance(s, ast.With)
                   and isinstance(s.items[0][0], ast.Name)}
        for s in stmts:
            made = self.tape_value(s, entered)
            if made is not None:
                self.made_tapes[made[0]] = made[1]      # ``t = tf.GradientTape(...)`` entered below by ``with t:``
                continue
            converted = self.statement(s, top, tapes)
            if converted is not None:
                out.append(converted)
        return out

    def tape_value(self, s, entered: set[str]):
        """``t = tf.GradientTape(...)`` whose tape a later ``with t:`` of the same block enters: (t, the call)."""
        name = ast.single_name(s) if isinstance(s, ast.Assign) else None
        if name in entered and isinstance(s.value, ast.Call) and _callee_name(s.value.func) == "GradientTape":
            return name, s.value
        return None

    def body(self, stmts: list, tapes: set[str], at) -> list:
        return self.block(stmts, False, tapes) or [ast.Pass(**forms.position(at))]

    def statement(self, s, top: bool, tapes: set[str]):
        if isinstance(s, ast.ExprStmt):
            if isinstance(s.value, ast.String):
                return None                                  # a docstring or a bare string
            return self.method_statement(s, tapes) or s
        if isinstance(s, ast.Assign) and top and ast.single_name(s) in self.bound_once:
            return self.declaration(s) or s
        if isinstance(s, ast.With):
            return self.with_items(s, list(s.items), tapes)
        if isinstance(s, ast.TapeBlock):
            s.body = self.body(s.body, tapes | {s.name}, s)
            return s
        if isinstance(s, ast.FuncDef):
            s.body = self.body(s.body, set(), s)
            return s
        if isinstance(s, ast.ClassDef):
            s.body = self.body(s.body, set(), s)
            return s
        if isinstance(s, ast.If):
            s.branches = [(test, self.body(b, tapes, s)) for test, b in s.branches]
            if s.orelse:
                s.orelse = self.body(s.orelse, tapes, s)
            return s
        if isinstance(getattr(s, "body", None), list):
            s.body = self.body(s.body, tapes, s)
        return s

    def method_statement(self, s, tapes):
        """``t.watch(x)`` / ``t.reset()`` on a tape a block names: the TDF statement."""
        v = s.value
        if isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and isinstance(v.func.value, ast.Name) \
                and v.func.value.id in tapes and not v.keywords \
                and not any(isinstance(a, ast.Starred) for a in v.args):
            tape = v.func.value.id
            if v.func.attr == "watch" and v.args:
                return ast.Watch(v.args, tape, **forms.position(s))
            if v.func.attr == "reset" and not v.args:
                return ast.Reset(tape, **forms.position(s))
        return None

    def with_items(self, s, items, tapes):
        (context, bound), rest = items[0], items[1:]
        if isinstance(context, ast.Name) and context.id in self.made_tapes and bound is None:
            context, bound = self.made_tapes[context.id], context      # ``with t:`` of ``t = tf.GradientTape()``
        if isinstance(context, ast.Call) and _callee_name(context.func) == "GradientTape":
            if not isinstance(bound, ast.Name):
                raise forms.unsupported("a GradientTape without `as NAME`", s)
            if context.args or any(k.name is None for k in context.keywords):
                raise TdfSyntaxError("GradientTape's options are given by name",
                                     hint="e.g. tf.GradientTape(persistent=True)", line=s.line, column=s.column)
            self.python_tapes = True
            inner = tapes | {bound.id}
            body = [self.with_items(s, rest, inner)] if rest else self.body(s.body, inner, s)
            return ast.TapeBlock(bound.id, context.keywords, body, **forms.position(s))
        if isinstance(context, ast.Call) and isinstance(context.func, ast.Attribute) \
                and context.func.attr == "stop_recording" and not context.args and not context.keywords \
                and bound is None:
            body = [self.with_items(s, rest, tapes)] if rest else self.body(s.body, tapes, s)
            if isinstance(context.func.value, ast.Name):
                return ast.StopRecording(context.func.value.id, body, **forms.position(s))
            return ast.With([(context, None)], body, **forms.position(s))   # a tape reached another way
        if isinstance(context, ast.Call) and _callee_name(context.func) in CONTEXTS:
            body = [self.with_items(s, rest, tapes)] if rest else self.body(s.body, tapes, s)
            return ast.With([(context, bound)], body, **forms.position(s))    # a context object (exec_With)
        if isinstance(context, ast.Call) and _callee_name(context.func) in ("as_default", "Session", "variable_scope"):
            raise forms.unsupported("a block of TensorFlow 1's graphs and sessions (tf.compat.v1: CPython's run "
                                    "gives them, TAPECLI_TF_ON_CPYTHON=1 or auto) on the interpreter", s)
        raise forms.unsupported("this `with` statement (tapecli runs `with tf.GradientTape(...) as t:`, "
                                "`with t.stop_recording():` and the contexts of eager TensorFlow: "
                                + ", ".join(sorted(CONTEXTS)) + ")", s)

    def declaration(self, s):
        """``x = tf.Variable(v, ...)`` / ``x = tf.constant(v, ...)`` at top level: a TDF declaration."""
        value = s.value
        if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
                and isinstance(value.func.value, ast.Name) and value.func.value.id in self.tf_names):
            return None
        kind = value.func.attr
        if kind not in ("Variable", "constant") or len(value.args) > 1 \
                or any(isinstance(a, ast.Starred) for a in value.args) \
                or any(k.name is None for k in value.keywords):        # **options: an ordinary call
            return None
        kw = {k.name: k.value for k in value.keywords}
        init = value.args[0] if value.args else kw.pop("initial_value" if kind == "Variable" else "value", None)
        if init is None:
            return None
        dtype = kw.pop("dtype", None)
        name_given = kw.pop("name", None)
        if dtype is not None:
            dtype = dtype.attr if isinstance(dtype, ast.Attribute) else dtype.value \
                if isinstance(dtype, ast.String) else None
            if dtype is None:
                return None
        name = ast.single_name(s)
        if kind == "constant":
            return None if kw else ast.ConstDecl(name, dtype, init, **forms.position(s))
        options = []
        if "trainable" in kw:
            trainable = next(k for k in value.keywords if k.name == "trainable")
            options.append(ast.Keyword("trainable", kw.pop("trainable"), **forms.position(trainable)))
        if name_given is not None:          # (the name TensorFlow prints it with: 'x:0')
            options.append(ast.Keyword("name", name_given, **forms.position(name_given)))
        return None if kw else ast.VarDecl(name, dtype, init, options, **forms.position(s))


# Python's in-place methods of lists, dicts and sets: a call of one is a side effect of the Python code.
_MUTATING_METHODS = frozenset(("append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault",
                               "popitem", "sort", "reverse", "add", "discard"))


def trace_only(func: ast.FuncDef, callee: bool = False) -> tuple[list, list[tuple[int, str]]]:
    """A ``@tf.function``'s Python side effects on objects from outside it (a global list's ``append``, an
    attribute of ``self`` or an item of a parameter assigned), which TensorFlow runs only while it traces, since
    its graph has no op for them: the statements that are nothing else (``graph_body`` leaves them out of a call
    that runs the traced graph), and (line, what) of such effects inside other statements (run on every call:
    warned of). A ``print`` runs while tracing on both (objects.trace_key). ``callee``: of a function such a
    call calls (``_unread``)."""
    local = _locals(func.body)

    def outside(target) -> bool:
        while isinstance(target, (ast.Attribute, ast.Subscript)):
            target = target.value
        return isinstance(target, ast.Name) and target.id not in local

    def mutating(node) -> bool:
        return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr in _MUTATING_METHODS and outside(node.func.value)

    def only_effect(node) -> bool:
        targets = getattr(node, "targets", None) or [getattr(node, "target", None)]
        return isinstance(node, ast.ExprStmt) and mutating(node.value) or isinstance(
            node, (ast.Assign, ast.AugAssign)) and all(
            isinstance(t, (ast.Attribute, ast.Subscript)) and outside(t) for t in targets)

    def blocks(node) -> list:
        return [] if isinstance(node, (ast.FuncDef, ast.ClassDef)) else _blocks(node)
    statements, inside = _effect_statements(func.body, only_effect, blocks, ast.walk)
    statements, inside = _unread(statements, ast.walk(func.body), ast.walk, local | {p.name for p in func.params},
                                 callee, ast.Name, ast.Attribute, ast.Subscript)
    effects = [(node.line, f".{node.func.attr}()") for node in ast.walk(func.body)
               if id(node) not in inside and mutating(node)]
    return statements, effects


def _effect_statements(body: list, only_effect, blocks, walk) -> tuple[list, set]:
    """The statements under ``body`` that ``only_effect`` takes, looking into the blocks ``blocks`` gives of the
    others (none of a nested function or class), and the ids of every node inside those statements."""
    statements, inside = [], set()
    stack = [body]
    while stack:
        for node in stack.pop():
            if only_effect(node):
                statements.append(node)
                inside.update(map(id, walk(node)))
            else:
                stack.extend(blocks(node))
    return statements, inside


def _unread(statements: list, nodes, walk, own: set, callee: bool, name, attribute, subscript) -> tuple[list, set]:
    """Of ``statements`` (only side effects on objects from outside), those a call that runs the traced graph
    skips, and the ids of every node inside them: all but those whose value comes from the function's own names
    (``own``: its parameters and locals, read whole or by item) and whose object other code of the function
    reads (``nodes``: all of its nodes), or, in a function that call calls (``callee``), any code. The graph
    computes that value on every call (``cache["y"] = x * 2`` then ``return cache["y"]``), so such a statement
    runs on every call; a Python value made from outside objects alone (``self.scale = self.scale * 2``,
    ``step += 1`` of a ``global``, a count of calls) is the trace's, which later reads keep."""
    def path(node) -> str | None:
        """``a.b.c`` of a name or a chain of attributes of one; of an item or a method, its object's."""
        if isinstance(node, subscript):
            return path(node.value)
        if isinstance(node, attribute):
            owner = path(node.value)
            return None if owner is None else f"{owner}.{node.attr}"
        return node.id if isinstance(node, name) else None

    def targets(statement) -> list:
        found = getattr(statement, "targets", None) or [getattr(statement, "target", None)]
        return [statement.value.func.value] if found == [None] else found   # (a mutating method: its object)

    def computed(statement) -> bool:
        """Whether the statement's value reads the function's own names (not as an attribute's object)."""
        skipped = {id(n) for t in targets(statement) for n in walk(t)}
        skipped |= {id(n.value) for n in walk(statement) if isinstance(n, attribute)}
        return any(isinstance(n, name) and n.id in own and id(n) not in skipped for n in walk(statement))

    inside = {id(n) for statement in statements for n in walk(statement)}
    read = {p for n in nodes if id(n) not in inside and isinstance(n, (name, attribute)) and (p := path(n))}
    kept = [s for s in statements if not computed(s) or not callee and not any(
        r == w or r.startswith(w + ".") for w in filter(None, map(path, targets(s))) for r in read)]
    return kept, {id(n) for statement in kept for n in walk(statement)}


def _locals(body) -> set[str]:
    """The names a function's body binds (parameters aside: what they hold comes from outside)."""
    names = set()
    for node in ast.walk(body):
        if isinstance(node, ast.AugAssign):
            names.update(ast.simple_names(node) or ())      # (x //= v, x.a += v: x is not made local)
        elif isinstance(node, (ast.FuncDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.For, ast.With)):
            targets = [t for _, t in node.items] if isinstance(node, ast.With) else \
                getattr(node, "targets", None) or [node.target]
            names.update(name for t in targets for name in _target_names(t))
    return names


def _target_names(target):
    """The names an assignment's target binds (not those an attribute's or item's target reads)."""
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, (ast.TupleDisplay, ast.ListDisplay)):
        for item in target.items:
            yield from _target_names(item)
    elif isinstance(target, ast.Starred):
        yield from _target_names(target.value)


def graph_body(func: ast.FuncDef, statements: list) -> list:
    """The body of a ``@tf.function`` as its traced graph runs it: without ``statements`` (trace_only's), each
    compound statement around one copied with its blocks so filtered (an emptied block a ``pass``)."""
    if not statements:
        return func.body
    dropped = set(map(id, statements))

    def block(body: list) -> list:
        kept = [statement(s) for s in body if id(s) not in dropped]
        return kept or [ast.Pass(**forms.position(body[0]))]

    def statement(node):
        if isinstance(node, (ast.FuncDef, ast.ClassDef)) or not _blocks(node):
            return node
        import copy         # here: a small run never needs it
        node = copy.copy(node)
        if isinstance(node, ast.If):
            node.branches = [(test, block(body)) for test, body in node.branches]
            node.orelse = node.orelse and block(node.orelse)
        else:
            node.body = block(node.body)
        return node
    return block(func.body)


def cpython_trace_only(func, callee: bool = False) -> tuple[list, list[tuple[int, str]]]:
    """trace_only of a function as CPython's parser gives it (a ``FunctionDef`` of Python's ``ast``), for a
    TensorFlow program that CPython runs: the names it declares ``global`` or ``nonlocal`` are from outside too."""
    import ast as python
    declared = {n for node in python.walk(func) if isinstance(node, (python.Global, python.Nonlocal))
                for n in node.names}
    local = {node.id for node in python.walk(func) if isinstance(node, python.Name)
             and isinstance(node.ctx, python.Store)} - declared

    def outside(target) -> bool:
        while isinstance(target, (python.Attribute, python.Subscript)):
            target = target.value
        return isinstance(target, python.Name) and (target.id not in local or target.id in declared)

    def mutating(node) -> bool:
        return isinstance(node, python.Call) and isinstance(node.func, python.Attribute) \
            and node.func.attr in _MUTATING_METHODS and outside(node.func.value)

    def only_effect(node) -> bool:
        targets = getattr(node, "targets", None) or [getattr(node, "target", None)]
        return isinstance(node, python.Expr) and mutating(node.value) or isinstance(
            node, (python.Assign, python.AugAssign, python.AnnAssign)) and all(
            isinstance(t, (python.Attribute, python.Subscript, python.Name)) and outside(t) for t in targets)

    def blocks(node) -> list:
        if isinstance(node, (python.FunctionDef, python.AsyncFunctionDef, python.ClassDef)):
            return []
        return [b for f in ("body", "orelse", "finalbody") if isinstance(b := getattr(node, f, None), list)] + \
            [h.body for h in getattr(node, "handlers", ())] + [c.body for c in getattr(node, "cases", ())]
    statements, inside = _effect_statements(func.body, only_effect, blocks, python.walk)
    parameters = {a.arg for a in python.walk(func.args) if isinstance(a, python.arg)}
    statements, inside = _unread(statements, python.walk(python.Module(func.body, [])), python.walk,
                                 local | parameters, callee, python.Name, python.Attribute, python.Subscript)
    effects = [(node.lineno, f".{node.func.attr}()") for node in python.walk(python.Module(func.body, []))
               if id(node) not in inside and mutating(node)]
    return statements, effects


def traced_side_effects(name: str, effects: list[tuple[int, str]]) -> str | None:
    """The warning at ``@tf.function`` of a function with Python side effects (the first of ``effects``)."""
    if not effects:
        return None
    line, what = effects[0]
    return (f"@tf.function {name}: tapecli runs this Python side effect on every call ({what} at line {line}, "
            f"inside a statement that computes more); TensorFlow runs it only while tracing, once per input "
            f"signature, so a count or list it makes can differ (a statement that is only such an effect runs "
            f"while tracing in both)")


# The context objects a `with` enters (the library's objects with enter/exit; interpreter exec_With).
CONTEXTS = frozenset(("ForwardAccumulator", "name_scope", "control_dependencies", "device", "init_scope",
                      "RematScope", "scope"))       # (scope: a tf.distribute strategy's)


def _callee_name(f) -> str | None:
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
