"""Scalar expressions as generated Python (Compiled._scalar): an assignment's value computed on NumPy float
scalars without a tensor for each op (ScalarSource), and a loop over a range whose body is such assignments run
as one generated Python loop (scalar_loop)."""
from __future__ import annotations

import functools
from types import FunctionType

import numpy as np

from tapecli import ops
from tapecli.frontend import ast
from tapecli.frontend.ast import Starred
from tapecli.interpreter.registry import BUILTINS, after_load
from tapecli.kernels import RAW_NUMPY_KERNELS
from tapecli.ops.scalar import FLOAT_SCALARS, OP_NAMES
from tapecli.ops.statement import StatementRecord, record_loop, statement_op
from tapecli.runtime.tape import NO_ATTRS, record_on
from tapecli.runtime.values import Tensor, Variable, new_id

new = Tensor.__new__

_SCALAR_OPERATORS = ("+", "-", "*", "/")
_SCALAR_CODE: dict = {}         # ScalarSource's source -> its compiled code


class ScalarSource:
    """The Python source of one scalar expression (Compiled._scalar): one line per node, each value a local
    ``vN``, every name's scalar of one class ``cls`` (a binary op of two classes is the usual path's), the
    literals in that class from ``literals(cls)``, computed once per class as the ops would make them (values
    ``c``, tensors ``C``). Recording, the lines making each op's tensor ``TvN`` and record come after them."""

    def __init__(self, compiled, record=False):
        self.compiled = compiled
        self.record = record
        self.lines: list[str] = []
        self.entry = self.lines                 # where the names' reads and the builtins' checks go
        self.recording: list[str] = []          # record: the lines after the values
        self.steps: list[tuple] = []            # record: (value local, op, argument locals) of each op
        self.tensors: dict[str, str] = {}       # record: a value's local -> its tensor's
        self.names: dict[str, str] = {}        # program name -> its local
        self.literals: list = []               # the weak tensors of the expression's literals
        self.constants: dict = {"Tensor": Tensor, "FLOATS": FLOAT_SCALARS, "BUILTINS": BUILTINS}
        if record:
            ctx = compiled.interp.ctx
            self.constants.update(new=new, new_id=new_id, record=record_on, NO_ATTRS=NO_ATTRS,
                                  tapes=ctx.tapes, settings=ctx.settings)
        self.count = 0

    def _local(self) -> str:
        self.count += 1
        return f"v{self.count}"

    def emit(self, node) -> str | None:
        """The local holding ``node``'s scalar, after the lines computing it; None for a node it cannot take."""
        cls = node.__class__
        if cls is ast.Name:
            return self._name(node.id)
        if cls is ast.BinOp and node.op in _SCALAR_OPERATORS:
            return self._binop(node)
        if (cls is ast.Call and node.func.__class__ is ast.Name and len(node.args) == 1 and not node.keywords
                and node.args[0].__class__ is not Starred):
            return self._call(node)
        return None

    def _name(self, ident: str) -> str:
        local = self.names.get(ident)
        if local is not None:
            return local
        local = self.names[ident] = self._local()
        tensor = self.tensors[local] = f"T{local}"
        first = not self.entry
        self.entry += [f"{tensor} = get({ident!r})",
                       f"if {tensor}.__class__ is not Tensor or {tensor}.weak: return None",
                       f"{local} = {tensor}.value"]
        if first:
            self.entry += [f"cls = {local}.__class__", "if cls not in FLOATS: return None",
                           "m = made.get(cls)", "if m is None: m = literals(cls)", "if m is False: return None",
                           "c, C = m" if self.record else "c = m[0]"]
        else:
            self.entry.append(f"if {local}.__class__ is not cls: return None")
        return local

    def _literal(self, node) -> str:
        self.literals.append(self.compiled.expression(node)(None))
        local = f"c[{len(self.literals) - 1}]"
        self.tensors[local] = f"C[{len(self.literals) - 1}]"
        return local

    def _recorded(self, local: str, op, inputs) -> None:
        """Recording: the lines making ``local``'s tensor and recording ``op`` on ``inputs`` (value locals)."""
        tensor = self.tensors[local] = f"T{local}"
        op_name = f"op{self.count}"
        self.constants[op_name] = op
        arguments = "".join(f"{self.tensors[i]}, " for i in inputs)
        self.steps.append((local, op, inputs))
        self.recording += [f"{tensor} = new(Tensor)", f"{tensor}.value, {tensor}.weak, {tensor}.id = {local}, False, new_id()"]
        if op.differentiable:
            self.recording.append(f"record(tapes, {op_name}, ({arguments}), {tensor}, NO_ATTRS, line)")

    def _binop(self, node) -> str | None:
        left_literal, right_literal = node.left.__class__ is ast.Number, node.right.__class__ is ast.Number
        if left_literal and right_literal:
            return None
        left = self._literal(node.left) if left_literal else self.emit(node.left)
        right = self._literal(node.right) if right_literal else self.emit(node.right)
        if left is None or right is None:
            return None
        local = self._local()
        self.lines.append(f"{local} = {left} {node.op} {right}")
        if self.record:
            self._recorded(local, ops.OPS[OP_NAMES[node.op]], (left, right))
        return local

    def _call(self, node) -> str | None:
        ident = node.func.id
        function = BUILTINS.get(ident)
        op = _unary_builtins().get(function)
        if op is None:
            return None
        argument = self.emit(node.args[0])
        if argument is None:
            return None
        local = self._local()
        function_name, kernel_name = f"f{self.count}", f"k{self.count}"
        self.constants[function_name], self.constants[kernel_name] = function, RAW_NUMPY_KERNELS[op.kernel]
        self.entry.append(f"if {ident!r} in names or BUILTINS.get({ident!r}) is not {function_name}: return None")
        self.lines += ["try:", f"    {local} = {kernel_name}({argument})",
                       "except Exception: return None      # the usual path words it",
                       f"if {local}.__class__ is not cls: return None"]
        if self.record:
            self._recorded(local, op, (argument,))
        return local

    def _recording_lines(self, result: str, leaves: list, literals: list, key: str = "statement") -> list[str]:
        """Recording: the lines making the tensors and records, after which the value's tensor is
        ``self.tensors[result]``; ``leaves`` and ``literals``: the locals of the names and literals the expression
        reads, in order (the statement's inputs). One statement record stands for the ops (ops/statement.py, bound
        as ``key``) where it can: with two names or more, only where every tape that records the statement would
        record each op; else each op's tensor and record are made."""
        one_by_one = list(self.recording)
        statement = self._statement_op(leaves, literals)
        if statement is None:
            return one_by_one
        self.constants.update({key: statement, "StatementRecord": StatementRecord})
        tensor = self.tensors[result]
        inputs = "".join(f"{self.tensors[local]}, " for local in [*leaves, *literals])
        lines = ["new_id()"] * (len(statement.steps) - 1) + [       # the ids the ops' values would have had
            f"{tensor} = new(Tensor)", f"{tensor}.value, {tensor}.weak, {tensor}.id = {result}, False, new_id()",
            f"record(tapes, {key}, ({inputs}), {tensor}, NO_ATTRS, line, None, StatementRecord)"]
        if len(leaves) == 1:        # each op reads the name: recorded on a tape watching it, all of them are
            return lines
        names = "".join(f"{self.tensors[local]}, " for local in leaves)
        return [f"if {key}.records_every_op(tapes, ({names})):", *(f"    {line}" for line in lines), "else:",
                *(f"    {line}" for line in one_by_one)]

    def _statement_op(self, leaves: list, literals: list):
        """The statement op (ops/statement.py) of the ops emitted since ``self.steps`` was cleared, on the locals
        ``leaves`` and ``literals``; None where one record cannot stand for them."""
        index = {local: i for i, local in enumerate([*leaves, *literals])}
        steps = []
        for local, op, arguments in self.steps:
            steps.append((op, tuple(index[a] for a in arguments)))
            index[local] = len(leaves) + len(literals) + len(steps) - 1
        return statement_op(steps, len(leaves), len(literals))

    def function(self, result: str):
        if self.record:
            literals = [f"c[{i}]" for i in range(len(self.literals))]
            lines = [*self.lines, "line = settings.line",
                     *self._recording_lines(result, list(self.names.values()), literals),
                     f"return {self.tensors[result]}"]
        else:
            lines = [*self.lines, f"return {result}"]
        body = "\n    ".join(["names = scope.vars", "get = names.get", *lines])
        return self._made(f"def scalar(scope):\n    {body}\n", "scalar", "<scalar expression>")

    def _made(self, source: str, name: str, filename: str):
        """The function ``name`` that ``source`` defines, with this expression's constants and literals; its code
        made once per process (a bench runs the program again)."""
        literals, made = self.literals, {}

        def literals_in(cls):
            """The literals as ``cls`` scalars and tensors, kept in ``made`` (False where one cannot be: the usual
            path words it)."""
            try:
                tensors = tuple(ops.materialize(literal, np.dtype(cls)) for literal in literals)
                made[cls] = (tuple(t.value for t in tensors), tensors)
            except Exception:
                made[cls] = False
            return made[cls]

        code = _SCALAR_CODE.get(source)
        if code is None:
            namespace: dict = {}
            exec(compile(source, filename, "exec"), namespace)      # noqa: S102
            if len(_SCALAR_CODE) >= 4096:      # a long-lived process's many programs: start again
                _SCALAR_CODE.clear()
            code = _SCALAR_CODE[source] = namespace[name].__code__
        return FunctionType(code, dict(self.constants, literals=literals_in, made=made))


class LoopSource(ScalarSource):
    """The Python source of a loop over a range whose body is assignments of scalar expressions to names
    (:func:`scalar_loop`): the names read before the body assigns them read once, before the loop (and the
    builtins it calls checked), each name's scalar (and, recording, its tensor) a local from one iteration to
    the next, bound to the name again where the loop stops."""

    def __init__(self, compiled, record=False):
        super().__init__(compiled, record)
        self.entry = []
        self.assigned: dict[str, str] = {}      # a name the body assigns before it reads it -> its local
        self.body: list[str] = []
        self.statements = 0
        self.reads: list[str] = []              # the locals of the names the statement being added reads
        self.carried = None                     # a loop's record's flush lines (statement)

    def _name(self, ident: str) -> str:
        local = self.assigned.get(ident) or super()._name(ident)
        if local not in self.reads:
            self.reads.append(local)
        return local

    def statement(self, node, alone: bool = False) -> bool:
        """Add an assignment's lines (a check that fails stops the loop there, before the statement records
        anything: ``return index, k``, k the statement's position); False where its value is not a scalar
        expression. ``alone``: the loop's only statement, which a loop's record may stand for (recording, where it
        reads the name it assigns and no other, and its op's loop_sweep is written): its values are kept, and
        recorded (ops.statement.record_loop) where the loop stops, before anything can read the name's tensor
        (the limits' checks read no name; one that fails stops the loop)."""
        first_literal = len(self.literals)
        self.reads, self.steps, self.recording = [], [], []
        result = self.emit(node.value)
        if result is None:
            return False
        target = ast.single_name(node)
        local = self.names.get(target) or self.assigned.get(target)
        if local is None:
            local = self.assigned[target] = self._local()
            self.tensors[local] = f"T{local}"
        stop = f"return index, {self.statements}"
        self.body += [line.replace("return None", stop) for line in self.lines]
        literals = [f"c[{i}]" for i in range(first_literal, len(self.literals))]
        op = self._statement_op(self.reads, literals) if self.record and alone and self.reads == [local] else None
        if op is not None and op.loop_sweep is not None:
            self.constants.update(statement=op, record_loop=record_loop)
            tensor = self.tensors[local]
            self.carried = ["if values:",
                            f"    {tensor} = record_loop(tapes, statement, {tensor}, "
                            f"({''.join(f'{self.tensors[c]}, ' for c in literals)}), values, {node.line})",
                            "    values = []", "    keep = values.append"]
            self.body.append(f"keep({result})")
        elif self.record:
            self.body += [f"line = {node.line}",
                          *self._recording_lines(result, self.reads, literals, f"statement{self.statements}"),
                          f"{self.tensors[local]} = {self.tensors[result]}"]
        self.body.append(f"{local} = {result}")
        self.lines.clear()
        self.statements += 1
        return True

    def function(self, targets, last_line: int):
        """The loop's function (see :func:`scalar_loop`); ``targets``: the names the body assigns."""
        write_back, entry = [], []
        for name in targets:
            local = self.names.get(name) or self.assigned[name]
            if self.record:         # the tensor the last assignment made and recorded
                tensor = self.tensors[local]
                before = f"E{local}" if name in self.names else "UNSET"
                entry.append(f"{before} = {tensor}" if name in self.names else f"{tensor} = UNSET")
                write_back += [f"if {tensor} is not {before}:", f"    names[{name!r}] = {tensor}"]
            else:                   # a tensor of the last value
                before = f"{self.tensors[local]}.value" if name in self.names else "UNSET"
                write_back += [f"if {local} is not {before}:", f"    w = new(Tensor); w.value, w.weak, w.id = "
                                                                f"{local}, False, new_id(); names[{name!r}] = w"]
        carried = self.carried or []
        loop = ["steps = interp.steps", "index = start", f"settings.line = {last_line}",
                *(["values = []", "keep = values.append"] if carried else []), "try:",
                "    while index < n:", "        steps += 1", "        if steps > max_steps or not steps % every:",
                "            interp.steps = steps", *(f"            {line}" for line in write_back),
                "            bind_item(index)", "            check_limits(steps)",
                *(f"        {line}" for line in self.body), "        index += 1", "    return index, -1",
                "finally:", "    interp.steps = steps", *(f"    {line}" for line in [*carried, *write_back]),
                "    bind_item(min(index, n - 1))"]
        self.constants.update(new=new, new_id=new_id, Variable=Variable, UNSET=_UNSET)
        body = "\n    ".join([
            "names = scope.vars", "get = names.get", "consts = scope.consts",
            *(f"if {name!r} in consts or get({name!r}).__class__ is Variable: return start, -1" for name in targets),
            *(line.replace("return None", "return start, -1") for line in self.entry),
            *(f"{local} = UNSET" for local in self.assigned.values()), *entry, *loop])
        return self._made("def scalar_loop(scope, n, start, interp, check_limits, max_steps, every, bind_item, "
                          f"settings):\n    {body}\n", "scalar_loop", "<scalar loop>")


_UNSET = object()


def scalar_loop(compiled, node, record=False):
    """A ``for`` over a range whose body assigns scalar expressions (Compiled._scalar's) to names, reading
    neither the loop's name nor a name it binds to a builtin it calls, as one generated Python loop:
    ``f(scope, n, start, interp, check_limits, max_steps, every, bind_item, settings)`` runs iterations ``start``
    to ``n - 1`` as their statements would (the steps counted and the limits checked as the loop does, each
    name's tensor bound where the loop stops, ``bind_item(index)`` binding the loop's name), and gives ``(index,
    k)``: all run (``k`` -1, ``index`` n), or stopped at statement ``k`` of iteration ``index``, whose check
    failed before it changed anything (that statement and the rest of the iteration are the caller's to run
    as written), or ``(start, -1)`` where a name is not a strong float scalar of one class before the loop.
    With ``record`` (tapes are open), each statement's tensors and records are made as its own recorded
    function (Compiled._scalar) makes them. None for another body."""
    source = LoopSource(compiled, record)
    for statement in node.body:
        if statement.__class__ is not ast.Assign or ast.single_name(statement) is None \
                or statement.value.__class__ not in (ast.BinOp, ast.Call) \
                or not source.statement(statement, alone=len(node.body) == 1):
            return None
    targets = list(dict.fromkeys(ast.single_name(statement) for statement in node.body))
    called = {call.func.id for statement in node.body for call in _calls(statement.value)}
    item = ast.single_name(node)
    if item in source.names or item in targets or called & {item, *targets}:
        return None
    return source.function(targets, node.body[-1].line)


def _calls(node):
    if node.__class__ is ast.Call:
        yield node
        yield from _calls(node.args[0])
    elif node.__class__ is ast.BinOp:
        yield from _calls(node.left)
        yield from _calls(node.right)


@functools.cache
def _unary_builtins() -> dict:
    """Builtin function -> op, for the one-input elementwise ops whose builtin is exactly ``apply(op, (x,))``:
    the op's own public function, whose code names nothing but ``apply`` and op constants. Made on the first
    compiled call, once the library (imported by the api) has registered the builtins."""
    out = {}
    for op in ops.OPS.values():
        function = getattr(ops, op.public_name, None)
        code = getattr(function, "__code__", None)
        if (op.grads is None or len(op.grads) != 1 or code is None or code.co_argcount != 1
                or op.kernel not in RAW_NUMPY_KERNELS or "apply" not in code.co_names
                or not all(n in ("apply", "OPS") or n.isupper() for n in code.co_names)):
            continue
        if any(BUILTINS.get(name) is function for name in op.program):
            out[function] = op
    return out


after_load(_unary_builtins.cache_clear)       # (made again once a family's builtins are registered)
