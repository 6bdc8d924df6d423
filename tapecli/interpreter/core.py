"""The tree-walking interpreter: runs statements, opens tapes, records gradient requests.

Control flow runs in Python and is never recorded (docs/spec/LANGUAGE.md §4.9); only the ops
it reaches go to the tapes.
"""
from __future__ import annotations

import contextlib
import functools
import time

import numpy as np

from tapecli.frontend import ast
from tapecli.interpreter.registry import BUILTINS, defer
from tapecli.kernels import numpy_quiet, quiet as quiet_kernels
from tapecli.runtime.context import current
from tapecli.runtime.tape import Tape, as_tensor, flatten
from tapecli.runtime.values import Tensor, Variable
from tapecli.frontend.structure import check_structure
from tapecli.interpreter.compiled import Compiled
from tapecli.interpreter.expressions import Expressions
from tapecli.interpreter.objects import Request, RequestLog, Scope
from tapecli.interpreter.statements import Statements
from tapecli.interpreter.pyforms import PythonForms
from tapecli.runtime.limits import Limits

# `expect`, `expect_error`, `assert` and `~=`, with the builtins only they use: imported by the first a run makes
defer("tapecli.interpreter.expectations", ("allclose", "gradcheck", "gradgradcheck"))


class ErrorLine(str):
    """A line the program wrote to standard error (tf.print's stream, ``print(..., file=sys.stderr)``): one of
    the run's output lines, which the command line writes to stderr under ``run``."""

    __slots__ = ()


class Unterminated(str):
    """The program's last line of standard output when it did not end it (``print(x, end="")`` last): ``run
    --output-only`` writes it without a newline, as Python's stream leaves it."""

    __slots__ = ()


class Output(list):
    """The program's printed lines. ``write`` takes text as a stream does (``print(..., end='')``): a line is
    complete at its newline, and the text after the last one waits for the next (``close`` ends it with the run).
    ``write_error`` is standard error's stream, its lines ErrorLines."""

    partial = ""
    partial_error = ""

    def write(self, text: str) -> None:
        lines = (self.partial + text).split("\n")
        self.partial = lines.pop()
        self.extend(lines)

    def append(self, line: str) -> None:
        """A whole line (print's): the text waiting begins it."""
        super().append(self.partial + line)
        self.partial = ""

    def write_error(self, text: str) -> None:
        lines = (self.partial_error + text).split("\n")
        self.partial_error = lines.pop()
        self.extend(ErrorLine(line) for line in lines)

    def close(self) -> None:
        if self.partial:
            super().append(Unterminated(self.partial))
            self.partial = ""
        if self.partial_error:
            super().append(ErrorLine(self.partial_error))
            self.partial_error = ""

class Interpreter(Statements, Expressions, PythonForms):
    builtins = BUILTINS          # the names a program sees before its own (fusion checks calls against them)

    def __init__(self, program: ast.Program, overrides: dict | None = None, limits: Limits | None = None,
                 implicit_wrt: set | None = None, implicit_tape: Tape | None = None):
        self.program = program
        self.source = program.source
        self.globals = Scope()
        self.overrides = dict(overrides or {})
        self.limits = limits or Limits()
        self.steps = 0
        self.memory_due = time.monotonic() + Limits.MEMORY_EVERY_S     # when the loops' checks next read the resident size
        self.depth = 0
        self.requests = RequestLog()
        self.tapes: list[Tape] = []
        self.output = Output()
        self.muted_prints = 0           # calls of a tf.function running its traced graph (no Python print)
        self.expectation_results: list[dict] = []      # what its expectations and asserts gave
        self._rng = None
        self.literal_cache: dict[int, np.ndarray | None] = {}
        self.implicit_wrt = implicit_wrt or set()
        self.implicit_tape = implicit_tape
        self.method_stack: list = []    # (class, instance) of the methods running, for super()
        self.fusion_state = None      # the kernels fusion compiled in this run
        self.ctx = current()            # the run's context (api.run_program begins it first)
        self.ctx.settings.step = self._step     # what the library's iteration charges (limits.tick)
        self.compiled = Compiled(self)

    @functools.cached_property
    def expectations(self):
        """The run's checks (expectations.py), made by the first."""
        from tapecli.interpreter.expectations import Expectations
        return Expectations(self)

    @property
    def rng(self):
        """The program's default generator, seeded 0; numpy.random is imported only when it is used."""
        if self._rng is None:
            self._rng = np.random.default_rng(0)
        return self._rng

    @rng.setter
    def rng(self, value):
        self._rng = value

    # ------------------------------------------------------------------ what a loop plan asks of its runner
    def call_kind(self, recorder, f, args, kwargs):
        """What a call of the program is to a loop plan (interpreter/loop_plans.py, ``interpreter_kind``)."""
        from tapecli.interpreter.loop_plans import interpreter_kind
        return interpreter_kind(recorder, f, args, kwargs)

    def guard_test(self, test):
        """A guard's condition as a function of the loop's scope (loop_plans.LoopPlanner)."""
        return self.compiled.expression(test)

    def count_steps(self, steps: int) -> None:
        """A planned iteration's steps (the calls of the functions its plan took in), counted at once."""
        self.steps += steps
        if self.steps > self.limits.max_steps:
            self.check_limits(self.steps)

    @staticmethod
    def planning():
        """What a plan is made and run in: the interpreter's run already is the kernels' (``kernels.quiet``)."""
        return contextlib.nullcontext()

    @staticmethod
    def traced(body):
        """``body()``, an iteration a plan traces (fit's batch): every call of the program's comes to the plan."""
        return body()

    # ------------------------------------------------------------------ running
    def run(self) -> Scope:
        check_structure(self.program.body)
        ctx = self.ctx
        try:
            with quiet_kernels():     # floating-point warnings off once for the run, not per op
                with ctx.mode.interpreting(numpy_quiet(), ctx.device is None and not self.implicit_wrt):
                    self.exec_block(self.program.body, self.globals)
        finally:
            self.output.close()
        return self.globals

    def exec_block(self, body, scope):
        if body:
            self.compiled.block(body)(scope)

    def text(self, node) -> str:
        return self.source[node.start:node.end] if node.end > node.start else ""

    # ---------------------------------------------------------- gradient requests
    def _name_requests(self, first: int, value, names):
        """Name the requests made while evaluating an assignment, from the names bound."""
        for req in self.requests.since(first):
            if req.names is not None:
                continue
            if req.result is value or _values_of(req.result, value) \
                    or (value is None and req.result is None and self.requests.mark() - first == 1):
                req.names = self._leaf_names(value, names, len(req.values))

    def none_gradient_used(self, error, text: str) -> None:
        """``text``, a None that ``error`` is about, was bound by a gradient request that found no gradient: the
        error says where and for what, and its hint why (what `tapecli explain` says; a run that kept no
        provenance log marks the error ``explain_none``, and the API finds the reason by running again with one)."""
        for req in reversed(self.requests):
            for i, name in enumerate(req.names or ()):
                if name == text and req.values[i] is None:
                    error.message += (f": {text} is None, the gradient of {req.target_text} w.r.t. {req.labels[i]} "
                                      f"asked at line {req.line}")
                    if req.tape_obj is not None:
                        error.hint = req.why[i]
                    else:
                        error.explain_none = True
                    return

    def _leaf_names(self, value, names, count):
        if isinstance(names, list):          # destructured: a, b = t.gradient(l, [w, b])
            if count == len(names):
                return list(names)
            return [None] * count
        if isinstance(value, dict):
            return [f'{names}["{k}"]' for k in value]
        if isinstance(value, list):
            return [f"{names}[{i}]" for i in range(count)]
        return [names]

    def add_request(self, kind, tape, target, target_node, source_node, sources, values, result, whys,
                    objective=None):
        labels = self._source_labels(source_node, sources)
        target_text = self.text(target_node) if target_node else None
        self.requests.append(new_request(kind, tape, target, target_text, labels, sources, values, result, whys,
                                         objective, self.globals.consts))

    def _source_labels(self, node, sources):
        item_nodes = None
        if isinstance(node, ast.ListDisplay):
            item_nodes = node.items
        elif isinstance(node, ast.DictDisplay):
            item_nodes = [v for _, v in node.pairs]
        return source_labels(sources, self.text(node) if node is not None else None,
                             None if item_nodes is None else [self.text(n) for n in item_nodes])


def new_request(kind, tape, target, target_text, labels, sources, values, result, whys, objective=None,
                consts=()) -> Request:
    """The Request of one gradient call at the run's current line (``consts``: the names of constants, for
    ``explain``'s reason why a gradient is None)."""
    ctx = current()
    leaves = flatten(sources, "sources")
    targets = None
    if ctx.provenance.enabled:
        targets = [as_tensor(t) for t in flatten(target, "the target")]
        if any(v is None for v in values):
            from tapecli.autodiff.explain import diagnose      # (imported where a gradient is None)
            whys = [None if v is not None else
                    diagnose(tape, targets, target_text, leaf, label, label in consts)
                    for v, leaf, label in zip(values, leaves, labels)]
        else:
            whys = [None] * len(values)
    return Request(kind, ctx.settings.line, tape.name, target_text, labels, values, result, whys, leaves,
                   objective, targets, tape if ctx.provenance.enabled else None)


def source_labels(sources, text: str | None, item_texts: list | None) -> list[str]:
    """How a request names each source leaf: a variable by its name; else the program's text of the sources
    (``text``), or of each item of a list or dict display (``item_texts``)."""
    leaves = flatten(sources, "sources")
    labels = []
    for i, leaf in enumerate(leaves):
        if isinstance(leaf, Variable):
            labels.append(leaf.name)
        elif item_texts is not None and len(item_texts) == len(leaves):
            labels.append(item_texts[i])
        elif text is not None and len(leaves) == 1 and not isinstance(sources, (list, dict)):
            labels.append(text)
        else:
            labels.append(f"{text if text is not None else 'sources'}[{i}]")
    return labels


def _values_of(result, value) -> bool:
    """``value`` is ``result``'s values off the tape (``t.gradient(...).numpy()``: its copy, or a new tensor on the
    same array)."""
    return isinstance(value, Tensor) and isinstance(result, Tensor) and (
        value.value is result.value or getattr(value, "source", None) is result)      # (a NumpyArray too)

