"""Statement records: one record for a recorded scalar statement's ops (``y = sin(y) * 1.01`` is two).

A long scalar loop records every op of every step; most of that memory is the records themselves and
the tensors between them. When a statement's ops are elementwise ops on float scalars and every tape
that records the statement records each of its ops (each op reads a watched name), the interpreter makes
one :class:`StatementRecord` instead: the statement's inputs (its names' tensors, then its literals'), its
output, and a :class:`StatementOp` saying which ops ran on what. The values between the ops are not kept;
they are computed again, by the same kernels, when something needs them.

Everything that reads records op by op (``tapecli tape``, ``explain``, jacobians, a backward pass that
another tape records or that logs its ops) reads :meth:`StatementRecord.op_records`: the records the
statement would have made one op at a time, the same ops, tensor ids, values and line. The backward
sweep orders a statement's ops as it orders those records (TensorFlow's order: the gradients meeting at a
tensor are summed in it). Where nothing records or logs the sweep and the statement's ops come one after
another in that order, it runs the statement's generated gradient function: the ops' ``grads`` formulas
written out as one function (as ``ops.core._small_rule`` writes each), in the order the sweep would apply
them op by op, so the gradients have the same bits; elsewhere it runs the statement's op records.

A generated loop of one such statement of one name (``for i in range(n): y = sin(y) * 1.01``) makes one
:class:`LoopRecord` for its steps: their values, not their tensors or records, which it gives as they would
have been (:meth:`LoopRecord.statements`). Its backward pass runs the statement's generated loop function
(``loop_sweep``) where the sweep would run the statement's gradient function at every step, one after another.
"""
from __future__ import annotations

import functools
import re

import numpy as np

from tapecli import kernels
from tapecli.ops.core import _OPERATORS, _NumpySource, _put, Op
from tapecli.ops.scalar import _run
from tapecli.runtime.tape import NO_ATTRS, Record, record_on
from tapecli.runtime.values import Tensor, new_ids

_new = Tensor.__new__
# Made once per process (a bench runs a program again): they hold code and ops, nothing of a run.
_STATEMENTS: dict = {}    # (steps, leaves, literals) -> its StatementOp, or None
_MISSING = object()


class StatementOp(Op):
    """The ops of one scalar statement. ``steps``: (op, argument indices) in the order they ran, an index
    naming the statement's inputs first (``leaves`` name tensors, then the literals) and then the steps'
    results; the last step's result is the statement's value. ``backward``: the steps in the order
    TensorFlow's tape runs their gradients (autodiff/backward.py's tensorflow_order): each step's result is read
    by one step, so a queue from the last step, each step's arguments in order. ``sweep``: its gradient
    function."""

    __slots__ = ("steps", "leaves", "arity", "subtrees", "backward", "sweep", "loop_sweep", "chained", "_reads")

    def __init__(self, steps, leaves: int, literals: int):
        super().__init__("statement")
        self.steps = tuple(steps)
        self.leaves = leaves
        self.arity = inputs = leaves + literals
        self._reads: dict = {}
        subtrees: list[frozenset] = []         # the leaves each step's result depends on
        for _, args in self.steps:
            depends: set = set()
            for a in args:
                if a < leaves:
                    depends.add(a)
                elif a >= inputs:
                    depends |= subtrees[a - inputs]
            subtrees.append(frozenset(depends))
        self.subtrees = tuple(subtrees)
        backward = [len(self.steps) - 1]
        for j in backward:
            backward.extend(a - inputs for a in self.steps[j][1] if a >= inputs)
        self.backward = tuple(backward)
        self.sweep = _sweep_function(self, inputs)
        # A loop's record (LoopRecord): a statement of one name whose gradient reaches it once, so that the
        # gradients of a loop of it pass from step to step as one value, in the reverse of the loop's order
        # (autodiff/backward.py's _chain: the step before is read at or after the statement's other ops' results).
        try:
            self.loop_sweep = _sweep_function(self, inputs, loop=True) if leaves == 1 else None
        except _Unwritable:
            self.loop_sweep = None
        steps, reads, before = self.backward_reads((True,)) if leaves == 1 else (0, (), 0)
        self.chained = 0 in reads and (steps < 2 or max(i for i, a in enumerate(reads) if a == 0) >= before)

    def backward_reads(self, reached: tuple) -> tuple:
        """How the backward order reads the statement's steps where ``reached`` (a bool per leaf) says which
        leaves a pass reaches (the steps that read none are not on its path): (how many steps are, the inputs their
        arguments read in ``backward``'s order (indices of the record's inputs, one per argument), how many of
        those reads come before the last read of another step's result)."""
        found = self._reads.get(reached)
        if found is None:
            arity = self.arity
            on = [*reached, *(False,) * (arity - self.leaves)]      # (a literal is never reached)
            for _, args in self.steps:
                on.append(any(on[a] for a in args))
            reads: list[int] = []
            before = 0
            for j in self.backward:
                if on[arity + j]:
                    for a in self.steps[j][1]:
                        if a < arity:
                            reads.append(a)
                        elif on[a]:
                            before = len(reads)
            found = self._reads[reached] = (sum(on[arity:]), tuple(reads), before)
        return found

    def records_every_op(self, tapes, leaves) -> bool:
        """Whether each open, recording tape of ``tapes`` that watches one of the ``leaves`` (tensors)
        would record every step: each step reads a watched leaf, directly or through another step."""
        for tape in tapes:
            if tape.open and not tape.paused:
                ids = tape.watched_ids
                watched = {i for i, t in enumerate(leaves) if t.id in ids}
                if watched and not all(subtree & watched for subtree in self.subtrees):
                    return False
        return True


def statement_op(steps, leaves: int, literals: int) -> StatementOp | None:
    """The statement op of ``steps``, or None where one record cannot stand for them: an op without a
    gradient, or a formula the generated function cannot write (then each op is recorded)."""
    key = (tuple(steps), leaves, literals)
    made = _STATEMENTS.get(key, _MISSING)
    if made is not _MISSING:
        return made
    if len(steps) < 2 or not all(op.differentiable and op.grads is not None for op, _ in steps):
        made = None
    else:
        try:
            made = StatementOp(steps, leaves, literals)
        except _Unwritable:
            made = None
    if len(_STATEMENTS) >= 4096:       # a long-lived process's many programs: start again
        _STATEMENTS.clear()
    _STATEMENTS[key] = made
    return made


class StatementRecord(Record):
    """The record of a :class:`StatementOp`: its inputs and output, as one op's record keeps them."""

    __slots__ = ()

    def op_records(self, reach=None, tapes=()) -> list:
        """The records the statement's ops would have made one by one, in order (each value between them
        computed again, with the id it had); with ``reach`` (a backward pass's set of reached ids), each
        result reached from a reached input is added to it. Each recording tape of ``tapes`` that watches the
        statement's output first splits its records (:meth:`Tape.split_records`): where it recorded the
        statement, it then holds and watches the records of its ops, so the gradient rules about to run on
        them are recorded there as they would have been (nested tapes, hessians)."""
        for tape in tapes:
            if tape.open and not tape.paused and self.output.id in tape.watched_ids:
                tape.split_records()
        op = self.op
        tensors = list(self.inputs)
        last = len(op.steps) - 1
        first_id = self.output.id - last      # the ids the values between the ops were given, in order
        records = []
        for j, (step_op, args) in enumerate(op.steps):
            inputs = tuple(tensors[a] for a in args)
            if j == last:
                out = self.output
            else:
                out = _new(Tensor)
                with np.errstate(all="ignore"):         # (as the ops computed it: a listing may ask outside a run)
                    value = _run(step_op, [t.value for t in inputs])
                out.value, out.weak, out.id = value, False, first_id + j
            tensors.append(out)
            records.append(Record(step_op, inputs, out, NO_ATTRS, self.line))
            if reach is not None and any(t.id in reach for t in inputs):
                reach.add(out.id)
        return records


class LoopRecord(Record):
    """The record of a loop's steps of one statement of one name (``y = sin(y) * 1.01``, its ``op``, whose
    ``loop_sweep`` is not None), each step reading the value the step before gave: ``inputs`` are the first step's
    (the name's tensor before the loop, then the literals'), ``output`` the last step's, ``values`` every step's
    value in order. The steps' tensors are not made: step ``i``'s ops had the ids from ``output.id - len(values) *
    len(op.steps) + 1 + i * len(op.steps)`` on, as they were given (:func:`record_loop`)."""

    __slots__ = ("values",)

    def __init__(self, op, inputs, output, attrs, line, values=()):
        super().__init__(op, inputs, output, attrs, line)
        self.values = values

    def statements(self, reach=None, upto=None) -> list:
        """The steps' records, as the loop would have made them one by one, up to step ``upto`` (default: all);
        with ``reach`` (a backward pass's set of reached ids), each step's output is added to it where the step
        reads a reached value."""
        op, values, literals = self.op, self.values, self.inputs[1:]
        width = len(op.steps)
        first = self.output.id - len(values) * width + width        # (the first step's output)
        last = len(values) - 1
        before = self.inputs[0]
        records = []
        for i in range(last + 1 if upto is None else upto + 1):
            if i == last:
                out = self.output
            else:
                out = _new(Tensor)
                out.value, out.weak, out.id = values[i], False, first + i * width
            records.append(StatementRecord(op, (before, *literals), out, NO_ATTRS, self.line))
            if reach is not None and before.id in reach:
                reach.add(out.id)
            before = out
        return records

    def op_records(self, reach=None, tapes=()) -> list:
        """The records of the steps' ops (StatementRecord.op_records), each recording tape of ``tapes`` that
        watches the loop's value first splitting its records."""
        for tape in tapes:
            if tape.open and not tape.paused and self.output.id in tape.watched_ids:
                tape.split_records()
        return [rec for statement in self.statements(reach) for rec in statement.op_records(reach)]

    def kept(self) -> list:
        return [*self.inputs, *(statement.output for statement in self.statements())]


def record_loop(tapes, op: StatementOp, before: Tensor, literals: tuple, values: list, line: int) -> Tensor:
    """The tensor of the last of ``values``, the values a loop's steps of the statement ``op`` gave from the name's
    tensor ``before`` (the loop's values since the last call; at least one), with the ids the steps' ops would
    have had; the steps recorded on ``tapes`` as :func:`record_on` records one step: one :class:`LoopRecord`
    (a :class:`StatementRecord` for one step)."""
    count = len(values)
    first = new_ids(count * len(op.steps))
    out = _new(Tensor)
    out.value, out.weak, out.id = values[-1], False, first + count * len(op.steps) - 1
    record_on(tapes, op, (before, *literals), out, NO_ATTRS, line, None,
              StatementRecord if count == 1 else functools.partial(LoopRecord, values=values))
    return out


class _Unwritable(Exception):
    pass


def _sweep_function(op: StatementOp, inputs: int, loop: bool = False):
    """``sweep(rec, g, reach, grads, add)``: the backward sweep's work on ``rec`` for the gradient ``g`` (a
    scalar or a 0-d array) of its output: every step's formulas in ``op.backward``'s order, each input's gradient
    computed where the sweep would compute it (the input is reached and its formula is not None) and each
    leaf's accumulated into ``grads`` by ``ops.core._put``, as ``ops.core._small_vjp`` accumulates it.

    ``loop``: ``loop_sweep(rec, g, reach, grads, add)`` for a :class:`LoopRecord` of the statement (one leaf, which
    its formulas reach once; else None): the same formulas from the loop's last step back to its second, each
    step's gradient of the value before it the gradient of the step before (what the sweep's map would hold
    there: a first gradient of the leaf's class, kept raw). It gives ``(i, g)``: the steps up to ``i`` are left to
    the sweep, ``g`` the gradient of step ``i``'s output (``i`` 0 at the end, or the step whose gradient was of
    another class)."""
    last = len(op.steps) - 1
    value = [f"x{a}" for a in range(inputs)] + [f"m{j}" for j in range(last)] + ["y"]
    grad = [f"g{j}" for j in range(last)] + ["g"]
    reached = [f"r{a}" for a in range(op.leaves)]
    source = _NumpySource()
    body = []
    stores, leaf_stores = 0, 0
    for j in op.backward:
        step_op, args = op.steps[j]
        block = []
        for position, a in enumerate(args):
            formula = step_op.grads[position]
            if formula is None or op.leaves <= a < inputs:       # no gradient; a literal is never reached
                continue
            source.lines = []
            try:
                result = formula(source, grad[j], *(value[b] for b in args), value[inputs + j], NO_ATTRS)
            except Exception as error:
                raise _Unwritable from error
            if result is None:
                raise _Unwritable
            stores += 1
            if a < inputs and loop:     # the value before the step: its gradient is the step before's
                leaf_stores += 1
                condition = reached[a]
                store = (f"gi = {result}\n"
                         f"if gi.__class__ is not x{a}.__class__: return i, g\n"
                         "gn = gi")
            elif a < inputs:    # _put's first case inline: a first gradient, a scalar of the input's class
                condition = reached[a]
                store = (f"gi = {result}; k = X[{a}].id; p = grads.get(k)\n"
                         f"if p is None and gi.__class__ is x{a}.__class__: grads[k] = gi\n"
                         f"else: put(grads, X[{a}], gi, x{a}, {grad[j]}, out, add)")
            else:               # (every step reads a name, directly or through another step)
                condition = " or ".join(reached[i] for i in sorted(op.subtrees[a - inputs]))
                store = f"{grad[a - inputs]} = {result}"
            block += [f"if {condition}:", *(f"    {line}" for line in [*source.lines, *store.split("\n")])]
        if block:
            body += block if j == last else [f"if {grad[j]} is not None:", *(f"    {line}" for line in block)]
    if loop and (leaf_stores != 1 or stores != len(op.steps)):       # (a gradient from each step to the one before)
        return None
    constants = {"K": kernels.RAW_NUMPY_KERNELS, "np": np, "inf": np.inf, "nan": np.nan, "put": _put}
    recompute = _recomputed(op, inputs, value, "\n".join(body), constants)
    if loop:
        step = ["x0 = values[i - 1]", "y = values[i]", *(f"{g} = None" for g in grad[:-1]), *recompute, *body,
                "g = gn"]
        lines = ["X = rec.inputs", *(f"x{a} = X[{a}].value" for a in range(1, inputs)), "values = rec.values",
                 "r0 = True", "for i in range(len(values) - 1, 0, -1):", *(f"    {line}" for line in step),
                 "return 0, g"]
        name = "loop_sweep"
    else:
        lines = ["X = rec.inputs", *(f"x{a} = X[{a}].value" for a in range(inputs)), "out = rec.output",
                 "y = out.value", *(f"r{a} = X[{a}].id in reach" for a in range(op.leaves)),
                 *(f"{g} = None" for g in grad[:-1]), *recompute, *body]
        name = "sweep"
    text = f"def {name}(rec, g, reach, grads, add):\n" + "".join(f"    {line}\n" for line in lines)
    try:
        exec(compile(text, "<statement gradient>", "exec"), constants)
    except SyntaxError as error:
        raise _Unwritable from error
    return constants[name]


def _recomputed(op: StatementOp, inputs: int, value: list, body: str, constants: dict) -> list:
    """The lines computing again the values between the steps that ``body`` reads (and those they need),
    with the kernels the interpreter computed them with (Python's operators on two scalars)."""
    last = len(op.steps) - 1
    needed = {int(j) for j in re.findall(r"\bm(\d+)\b", body)}
    for j in range(last - 1, -1, -1):
        if j in needed:
            needed.update(a - inputs for a in op.steps[j][1] if a >= inputs)
    lines = []
    for j in sorted(needed):
        step_op, args = op.steps[j]
        names = [value[a] for a in args]
        if len(args) == 2 and step_op.kernel in _OPERATORS:
            lines.append(f"m{j} = {names[0]} {_OPERATORS[step_op.kernel]} {names[1]}")
        else:
            constants[f"k{j}"] = kernels.RAW_NUMPY_KERNELS[step_op.kernel]
            lines.append(f"m{j} = k{j}({', '.join(names)})")
    return lines
