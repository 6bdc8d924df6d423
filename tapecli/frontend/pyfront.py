"""The Python front end: a program written as Python (TensorFlow code pasted as it is) parsed by
Python's own parser and turned into TDF's AST, with positions (docs/spec/LANGUAGE.md §11).

parser.parse tries it for programs the TDF parsers do not take. TensorFlow spellings become the TDF
forms they mean, so every later room sees one language: ``x = tf.Variable(v)`` at top level is
``var x = v``, ``with tf.GradientTape() as t:`` is ``tape t:``, ``t.watch(x)`` is ``watch x in t``,
``with t.stop_recording():`` and ``t.reset()`` are ``stop_recording t:`` and ``reset t``. Python
constructs TDF does not run are a SyntaxError naming the construct.
"""
from __future__ import annotations

import ast as py
import re
import warnings

from tapecli.errors import TdfSyntaxError
from tapecli.frontend import ast, pyast

_BINOPS = {py.Add: "+", py.Sub: "-", py.Mult: "*", py.Div: "/", py.FloorDiv: "//", py.Mod: "%", py.Pow: "**",
           py.MatMult: "@"}
_CMPOPS = {py.Lt: "<", py.LtE: "<=", py.Gt: ">", py.GtE: ">=", py.Eq: "==", py.NotEq: "!=", py.Is: "is",
           py.IsNot: "is not", py.In: "in", py.NotIn: "not in"}
_UNSUPPORTED = {
    py.Try: "try/except", py.Raise: "raise", py.Global: "global", py.Nonlocal: "nonlocal",
    py.AsyncFunctionDef: "async def", py.AsyncFor: "async for", py.AsyncWith: "async with",
    py.Yield: "yield", py.YieldFrom: "yield from", py.Await: "await", py.NamedExpr: "the := operator",
    py.Set: "a set", py.SetComp: "a set comprehension", py.Match: "match",
    py.BitAnd: "the & operator", py.BitOr: "the | operator", py.BitXor: "the ^ operator",
    py.LShift: "the << operator", py.RShift: "the >> operator", py.Invert: "the ~ operator",
}
if hasattr(py, "TryStar"):
    _UNSUPPORTED[py.TryStar] = "try/except*"
_TENSORFLOW = ("tensorflow", "tf")


def parse_python(source: str) -> list | None:
    """The statements of ``source`` if Python parses it, else None (the TDF parsers report the error)."""
    return parse_python_or_error(source)[0]


def parse_python_or_error(source: str) -> tuple[list | None, SyntaxError | None]:
    """(statements, None), or (None, Python's SyntaxError where it has one to say)."""
    if "\t" in source and re.search(r"^[ ]*\t", source, re.M):
        return None, None            # TDF indents with spaces only: the TDF parser names the tab
    try:
        with warnings.catch_warnings():          # "invalid decimal literal" and the like: the library never prints
            warnings.simplefilter("ignore", SyntaxWarning)
            tree = py.parse(source)
    except SyntaxError as e:
        return None, e
    except (ValueError, MemoryError, RecursionError):
        return None, None
    return _Converter(source).module(tree), None


class _Converter:
    def __init__(self, source: str):
        self.source = source
        self.line_starts = [0]
        for line in source.split("\n"):
            self.line_starts.append(self.line_starts[-1] + len(line) + 1)
        self.lines = source.split("\n")
        self.tf_names: set[str] = set()      # names bound to tensorflow by an import
        self.tapes: list[set[str]] = [set()]  # names bound by `with ...GradientTape() as NAME`, per function

    # ------------------------------------------------------------ positions
    def _col(self, line: int, byte_col: int) -> int:
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        return len(text.encode("utf-8")[:byte_col].decode("utf-8", "replace")) if not text.isascii() else byte_col

    def pos(self, node: py.AST) -> dict:
        line, end_line = node.lineno, node.end_lineno or node.lineno
        col = self._col(line, node.col_offset)
        end_col = self._col(end_line, node.end_col_offset if node.end_col_offset is not None else node.col_offset)
        return {"line": line, "column": col + 1, "end_line": end_line, "end_column": end_col + 1,
                "start": self.line_starts[line - 1] + col, "end": self.line_starts[end_line - 1] + end_col}

    def unsupported(self, node: py.AST, what: str | None = None):
        what = what or _UNSUPPORTED.get(type(node), type(node).__name__)
        p = self.pos(node) if hasattr(node, "lineno") else {}
        return TdfSyntaxError(f"{what} is not supported in tapecli programs",
                              hint="tapecli runs the Python forms of docs/spec/LANGUAGE.md §11",
                              line=p.get("line"), column=p.get("column"))

    # ------------------------------------------------------------ statements
    def module(self, tree: py.Module) -> list:
        body = tree.body
        if body and isinstance(body[0], py.Expr) and isinstance(body[0].value, py.Constant) \
                and isinstance(body[0].value.value, str):
            body = body[1:]                              # the module's docstring
        rebound = _assigned_names(body)
        return self.block(body, top=rebound)

    def block(self, stmts, top=None) -> list:
        out = []
        for s in stmts:
            converted = self.stmt(s, top)
            if converted is None:
                continue
            out.extend(converted if isinstance(converted, list) else [converted])
        return out

    def body(self, stmts) -> list:
        out = self.block(stmts)
        return out or [ast.Pass(**self.pos(stmts[0]))]

    def stmt(self, s: py.stmt, top):
        method = getattr(self, "stmt_" + type(s).__name__, None)
        if method is None:
            raise self.unsupported(s)
        return method(s, top)

    def stmt_Expr(self, s, top):
        v = s.value
        if isinstance(v, py.Constant) and isinstance(v.value, str):
            return None                                  # a docstring or a bare string
        if isinstance(v, py.Call) and isinstance(v.func, py.Attribute) and isinstance(v.func.value, py.Name) \
                and v.func.value.id in self.tapes[-1] and not v.keywords:
            tape = v.func.value.id
            if v.func.attr == "watch" and v.args:
                return ast.Watch([self.expr(a) for a in v.args], tape, **self.pos(s))
            if v.func.attr == "reset" and not v.args:
                return ast.Reset(tape, **self.pos(s))
        return ast.ExprStmt(self.expr(v), **self.pos(s))

    def stmt_Pass(self, s, top):
        return ast.Pass(**self.pos(s))

    def stmt_Break(self, s, top):
        return ast.Break(**self.pos(s))

    def stmt_Continue(self, s, top):
        return ast.Continue(**self.pos(s))

    def stmt_Return(self, s, top):
        return ast.Return(self.expr(s.value) if s.value is not None else None, **self.pos(s))

    def stmt_Assign(self, s, top):
        p = self.pos(s)
        if len(s.targets) == 1:
            t = s.targets[0]
            if isinstance(t, py.Name) and top is not None and top.get(t.id, 0) <= 1:
                decl = self.declaration(t.id, s.value, p)
                if decl is not None:
                    return decl
            names = _simple_names(t)
            if names is not None:
                return ast.Assign(names, self.expr(s.value), **p)
        return pyast.AssignTo([self.target(t) for t in s.targets], self.expr(s.value), **p)

    def stmt_AnnAssign(self, s, top):
        if s.value is None:
            return None                                  # `x: int` declares nothing at run time
        return self.stmt_Assign(py.Assign(targets=[s.target], value=s.value, lineno=s.lineno,
                                          col_offset=s.col_offset, end_lineno=s.end_lineno,
                                          end_col_offset=s.end_col_offset), top)

    def stmt_AugAssign(self, s, top):
        op = _BINOPS.get(type(s.op))
        if op is None:
            raise self.unsupported(s.op)
        if isinstance(s.target, py.Name) and op in ("+", "-", "*", "/"):
            return ast.AugAssign(s.target.id, op, self.expr(s.value), **self.pos(s))
        return pyast.AugAssignTo(self.target(s.target), op, self.expr(s.value), **self.pos(s))

    def stmt_If(self, s, top):
        branches = [(self.expr(s.test), self.body(s.body))]
        orelse = s.orelse
        while len(orelse) == 1 and isinstance(orelse[0], py.If) and _is_elif(self.lines, orelse[0]):
            branches.append((self.expr(orelse[0].test), self.body(orelse[0].body)))
            orelse = orelse[0].orelse
        return ast.If(branches, self.body(orelse) if orelse else None, **self.pos(s))

    def stmt_While(self, s, top):
        if s.orelse:
            raise self.unsupported(s, "while ... else")
        return ast.While(self.expr(s.test), self.body(s.body), **self.pos(s))

    def stmt_For(self, s, top):
        if s.orelse:
            raise self.unsupported(s, "for ... else")
        names = _simple_names(s.target)
        if names is not None:
            return ast.For(names, self.expr(s.iter), self.body(s.body), **self.pos(s))
        return pyast.ForEach(self.target(s.target), self.expr(s.iter), self.body(s.body), **self.pos(s))

    def stmt_FunctionDef(self, s, top):
        a = s.args
        if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs:
            raise self.unsupported(s, "*args, **kwargs and keyword-only parameters")
        defaults = [None] * (len(a.args) - len(a.defaults)) + [self.expr(d) for d in a.defaults]
        params = [ast.Param(arg.arg, d, **self.pos(arg)) for arg, d in zip(a.args, defaults)]
        decorators = [self.decorator(d) for d in s.decorator_list]
        self.tapes.append(set())
        try:
            body = self.body(s.body[1:] if _has_docstring(s) and len(s.body) > 1 else s.body)
        finally:
            self.tapes.pop()
        node = ast.FuncDef(s.name, params, body, **self.pos(s))
        node.decorators = [d for d in decorators if d != "function"]   # @tf.function changes no value
        return node

    def decorator(self, d) -> str:
        if isinstance(d, py.Name):
            return d.id
        if isinstance(d, py.Attribute):
            return d.attr
        if isinstance(d, py.Call):
            return self.decorator(d.func)
        raise self.unsupported(d, "this decorator")

    def stmt_ClassDef(self, s, top):
        if s.keywords or s.decorator_list:
            raise self.unsupported(s, "class keywords and class decorators")
        body = s.body[1:] if _has_docstring(s) else s.body
        return pyast.ClassDef(s.name, [self.expr(b) for b in s.bases], self.block(body), **self.pos(s))

    def stmt_With(self, s, top):
        return self.with_items(s, list(s.items))

    def with_items(self, s, items):
        item, rest = items[0], items[1:]
        body = self.with_items(s, rest) if rest else None
        ce, var = item.context_expr, item.optional_vars
        p = self.pos(s)
        if isinstance(ce, py.Call) and _callee_name(ce.func) == "GradientTape":
            if not isinstance(var, py.Name):
                raise self.unsupported(s, "a GradientTape without `as NAME`")
            if ce.args:
                raise TdfSyntaxError("GradientTape's options are given by name",
                                     hint="e.g. tf.GradientTape(persistent=True)", **_lc(p))
            self.tapes[-1].add(var.id)
            inner = [body] if body is not None else self.body(s.body)
            return ast.TapeBlock(var.id, [self.keyword(k) for k in ce.keywords], inner, **p)
        if isinstance(ce, py.Call) and isinstance(ce.func, py.Attribute) and ce.func.attr == "stop_recording" \
                and isinstance(ce.func.value, py.Name) and not ce.args and var is None:
            inner = [body] if body is not None else self.body(s.body)
            return ast.StopRecording(ce.func.value.id, inner, **p)
        raise self.unsupported(s, "this `with` statement (tapecli runs `with tf.GradientTape(...) as t:` and "
                                  "`with t.stop_recording():`)")

    def stmt_Delete(self, s, top):
        return pyast.Delete([self.target(t) for t in s.targets], **self.pos(s))

    def stmt_Assert(self, s, top):
        return pyast.Assert(self.expr(s.test), self.expr(s.msg) if s.msg is not None else None, **self.pos(s))

    def stmt_Import(self, s, top):
        names = []
        for alias in s.names:
            bound = alias.asname or alias.name.split(".")[0]
            module = alias.name if alias.asname else alias.name.split(".")[0]
            names.append((module, bound))
            if module in _TENSORFLOW or module == "tensorflow":
                self.tf_names.add(bound)
        return pyast.Import(names, **self.pos(s))

    def stmt_ImportFrom(self, s, top):
        if s.level:
            raise self.unsupported(s, "a relative import")
        names = []
        for alias in s.names:
            if alias.name == "*":
                raise self.unsupported(s, "import *")
            names.append((f"{s.module}.{alias.name}", alias.asname or alias.name))
        return pyast.Import(names, **self.pos(s))

    def declaration(self, name: str, value, p):
        """``x = tf.Variable(v, ...)`` / ``x = tf.constant(v, ...)`` at top level: a TDF declaration."""
        if not (isinstance(value, py.Call) and isinstance(value.func, py.Attribute)
                and isinstance(value.func.value, py.Name) and value.func.value.id in self.tf_names):
            return None
        kind = value.func.attr
        if kind not in ("Variable", "constant") or len(value.args) > 1 or any(isinstance(a, py.Starred)
                                                                                for a in value.args):
            return None
        kw = {k.arg: k.value for k in value.keywords}
        init = value.args[0] if value.args else kw.pop("initial_value" if kind == "Variable" else "value", None)
        if init is None:
            return None
        dtype = kw.pop("dtype", None)
        kw.pop("name", None)
        if dtype is not None:
            dtype = dtype.attr if isinstance(dtype, py.Attribute) else dtype.value if isinstance(
                dtype, py.Constant) and isinstance(dtype.value, str) else None
            if dtype is None:
                return None
        if kind == "constant":
            return None if kw else ast.ConstDecl(name, dtype, self.expr(init), **p)
        options = []
        if "trainable" in kw:
            options.append(ast.Keyword("trainable", self.expr(kw.pop("trainable")), **self.pos(value)))
        return None if kw else ast.VarDecl(name, dtype, self.expr(init), options, **p)

    # ------------------------------------------------------------ targets
    def target(self, t):
        if isinstance(t, py.Name):
            return ast.Name(t.id, **self.pos(t))
        if isinstance(t, py.Attribute):
            return self.expr(t)
        if isinstance(t, py.Subscript):
            return self.expr(t)
        if isinstance(t, (py.Tuple, py.List)):
            items = [self.target(e) for e in t.elts]
            return (ast.TupleDisplay if isinstance(t, py.Tuple) else ast.ListDisplay)(items, **self.pos(t))
        if isinstance(t, py.Starred):
            raise self.unsupported(t, "a starred assignment target")
        raise self.unsupported(t, "this assignment target")

    # ------------------------------------------------------------ expressions
    def expr(self, e):
        method = getattr(self, "expr_" + type(e).__name__, None)
        if method is None:
            raise self.unsupported(e)
        return method(e)

    def exprs(self, es) -> list:
        return [self.expr(e) for e in es]

    def expr_Constant(self, e):
        v = e.value
        if v is None or isinstance(v, bool):
            return ast.Constant(v, **self.pos(e))
        if isinstance(v, int) and v > ast.INT64_MAX:
            position = self.pos(e)
            ast.number_value(str(v) if v.bit_length() < 10_000 else "9" * 25, position["line"], position["column"])
        if isinstance(v, (int, float)):
            return ast.Number(v, **self.pos(e))
        if isinstance(v, str):
            return ast.String(v, **self.pos(e))
        raise self.unsupported(e, f"a {type(v).__name__} literal")

    def expr_Name(self, e):
        return ast.Name(e.id, **self.pos(e))

    def expr_BinOp(self, e):
        op = _BINOPS.get(type(e.op))
        if op is None:
            raise self.unsupported(e, _UNSUPPORTED.get(type(e.op)))
        return ast.BinOp(op, self.expr(e.left), self.expr(e.right), **self.pos(e))

    def expr_UnaryOp(self, e):
        if isinstance(e.op, py.Not):
            return ast.Not(self.expr(e.operand), **self.pos(e))
        if isinstance(e.op, py.USub):
            return ast.UnaryOp("-", self.expr(e.operand), **self.pos(e))
        if isinstance(e.op, py.UAdd):
            return ast.UnaryOp("+", self.expr(e.operand), **self.pos(e))
        raise self.unsupported(e, _UNSUPPORTED.get(type(e.op)))

    def expr_BoolOp(self, e):
        return ast.BoolOp("and" if isinstance(e.op, py.And) else "or", self.exprs(e.values), **self.pos(e))

    def expr_Compare(self, e):
        return ast.Compare(self.expr(e.left), [_CMPOPS[type(o)] for o in e.ops], self.exprs(e.comparators),
                           **self.pos(e))

    def keyword(self, k):
        if k.arg is None:
            raise self.unsupported(k.value, "**keyword arguments")
        return ast.Keyword(k.arg, self.expr(k.value), **self.pos(k))

    def expr_Call(self, e):
        return ast.Call(self.expr(e.func), self.exprs(e.args), [self.keyword(k) for k in e.keywords],
                        **self.pos(e))

    def expr_Starred(self, e):
        return pyast.Starred(self.expr(e.value), **self.pos(e))

    def expr_Attribute(self, e):
        if e.attr.startswith("__") and e.attr not in ("__init__", "__call__"):
            raise TdfSyntaxError(f"the attribute {e.attr} is not accessible in tapecli programs",
                                 hint="programs cannot reach Python objects", **_lc(self.pos(e)))
        return ast.Attribute(self.expr(e.value), e.attr, **self.pos(e))

    def expr_Subscript(self, e):
        s = e.slice
        items = [self.subscript(i) for i in s.elts] if isinstance(s, py.Tuple) else [self.subscript(s)]
        return ast.Subscript(self.expr(e.value), items, **self.pos(e))

    def subscript(self, s):
        if isinstance(s, py.Slice):
            part = [self.expr(x) if x is not None else None for x in (s.lower, s.upper, s.step)]
            return ast.Slice(*part, **self.pos(s))
        return self.expr(s)

    def expr_List(self, e):
        return ast.ListDisplay(self.exprs(e.elts), **self.pos(e))

    def expr_Tuple(self, e):
        return ast.TupleDisplay(self.exprs(e.elts), **self.pos(e))

    def expr_Dict(self, e):
        if any(k is None for k in e.keys):
            raise self.unsupported(e, "**mapping in a dict display")
        return ast.DictDisplay([(self.expr(k), self.expr(v)) for k, v in zip(e.keys, e.values)], **self.pos(e))

    def comprehension(self, e, kind, element, key=None):
        gens = []
        for g in e.generators:
            if g.is_async:
                raise self.unsupported(e, "async comprehensions")
            gens.append((self.target(g.target), self.expr(g.iter), self.exprs(g.ifs)))
        return pyast.Comprehension(kind, element, key, gens, **self.pos(e))

    def expr_ListComp(self, e):
        return self.comprehension(e, "list", self.expr(e.elt))

    def expr_GeneratorExp(self, e):
        return self.comprehension(e, "generator", self.expr(e.elt))

    def expr_DictComp(self, e):
        return self.comprehension(e, "dict", self.expr(e.value), self.expr(e.key))

    def expr_Lambda(self, e):
        a = e.args
        if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs:
            raise self.unsupported(e, "*args, **kwargs and keyword-only parameters")
        defaults = [None] * (len(a.args) - len(a.defaults)) + [self.expr(d) for d in a.defaults]
        params = [ast.Param(arg.arg, d, **self.pos(arg)) for arg, d in zip(a.args, defaults)]
        return pyast.Lambda(params, self.expr(e.body), **self.pos(e))

    def expr_IfExp(self, e):
        return pyast.IfExp(self.expr(e.test), self.expr(e.body), self.expr(e.orelse), **self.pos(e))

    def expr_JoinedStr(self, e):
        parts = []
        for v in e.values:
            if isinstance(v, py.Constant):
                parts.append(ast.String(v.value, **self.pos(v)))
            else:
                parts.append(self.expr(v))
        return pyast.FString(parts, **self.pos(e))

    def expr_FormattedValue(self, e):
        conversion = None if e.conversion == -1 else chr(e.conversion)
        spec = self.expr(e.format_spec) if e.format_spec is not None else None
        return pyast.FormattedValue(self.expr(e.value), conversion, spec, **self.pos(e))


def _lc(p: dict) -> dict:
    return {"line": p["line"], "column": p["column"]}


def _callee_name(f) -> str | None:
    return f.attr if isinstance(f, py.Attribute) else f.id if isinstance(f, py.Name) else None


def _simple_names(t) -> list[str] | None:
    """A target of plain names (``x``, ``a, b``, ``[a, b]``) as TDF's Assign/For take it; else None."""
    if isinstance(t, py.Name):
        return [t.id]
    if isinstance(t, (py.Tuple, py.List)) and len(t.elts) >= 2 and all(isinstance(e, py.Name) for e in t.elts):
        return [e.id for e in t.elts]
    return None


def _has_docstring(s) -> bool:
    return bool(s.body) and isinstance(s.body[0], py.Expr) and isinstance(s.body[0].value, py.Constant) \
        and isinstance(s.body[0].value.value, str)


def _is_elif(lines, node) -> bool:
    text = lines[node.lineno - 1] if node.lineno - 1 < len(lines) else ""
    return text[node.col_offset:].startswith("elif") or text.lstrip().startswith("elif")


def _assigned_names(body) -> dict[str, int]:
    """How many times each name is bound by the module's top-level statements (a declaration needs one)."""
    counts: dict[str, int] = {}
    for node in body:
        for sub in py.walk(node):
            targets = []
            if isinstance(sub, py.Assign):
                targets = sub.targets
            elif isinstance(sub, (py.AugAssign, py.AnnAssign, py.For)):
                targets = [sub.target]
            elif isinstance(sub, (py.FunctionDef, py.ClassDef)):
                counts[sub.name] = counts.get(sub.name, 0) + 1
            for t in targets:
                for n in py.walk(t):
                    if isinstance(n, py.Name):
                        counts[n.id] = counts.get(n.id, 0) + 1
    return counts
