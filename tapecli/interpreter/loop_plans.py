"""Loop plans: the iterations of a training loop run as the kernel calls of one recorded iteration.

A training loop runs the same body again and again: the same forward pass on a tape, the same backward
pass, the same optimizer step, on new values. Once two iterations have shown the same kernel calls, the
iterations after them run as a plan: those calls made again on the variables' new arrays, with the calls
that change state (the effects: an optimizer's step, an assign, a list's append, a print) and the gradient
requests made as calls of their own, and none of the interpreter, the tapes or the ops between them.

What a plan may replace is decided first from the body's text, then from what its calls are:

1. the body is straight-line code: assignments to names, expression statements, tape blocks and ``watch``;
   names, literals, attributes, literal subscripts, arithmetic and calls (no loop, comparison, ``break`` or
   function definition outside an ``if``). An ``if`` whose conditions read only the loop's name and names
   the body never binds is a guard: evaluated before each iteration, an iteration whose branch differs from
   the plan's runs as written, and the next one is traced again and must agree with the plan;
2. every call it makes is to a callable that says what it is to a plan (``interpreter.objects.PURE``,
   ``EFFECT``, ``REQUEST``): a built Keras layer or model of the audited kinds, a loss, a math builtin, a
   tape's gradient, an optimizer's step, a metric's update, a variable's assign, a list's append, ``print``,
   or a program's function whose body is such code (:func:`plain_function`; its calls are checked). Anything
   else (a random op, a value read into Python, a state change no step makes again) leaves the loop to run as
   written. A pure call's arguments that it reads into Python (a loss's labels, a reduction's axis) must not
   come from the plan's inputs: what it decides from them would be decided once for every iteration;
3. the iterations at positions 1 and 2 run traced (``kernels.tracing``: the small-tensor shortcuts and the
   interpreter's scalar path off, so every value made from an input is a kernel's) and must make the same
   calls with the same constants (a value computed outside the kernels shows as a constant that changed),
   create no variable, change no variable outside an effect, and make a gradient request or an effect (a
   loop without either is the interpreter's: its scalar path is faster than a plan);
4. the iterations from 3 on run as the plan, the last one too: it binds the names the body assigns to the
   tensors (and lists of tensors) of its slots, as the loop as written leaves them. A name bound to what an
   effect returned (a plan drops it), to a tensor not from the slots, or to anything else (a tape, a new
   object) that the program's text names outside the loop, would be the traced iteration's: there the last
   iteration runs as written. A kernel's reading what an effect returned leaves the loop as written.

A plan's inputs are the loop item, the tensors of the names the body reads before it assigns them (the
loop-carried names: the plan binds their new tensors after each iteration, laid out as traced) and the arrays of every
variable of the run; a layout unlike the traced one's ends the plan, and the loop runs as written. Plans
are made only where nothing logs or checks the run (no ``explain``, ``--check-numerics``, numba forced or
device), no tape is open around the loop, and the loop has at least ``MIN_ITERATIONS`` items or takes them one
ahead (a tensor's rows, a dataset's batches: the plan must know which is the last).
"""
from __future__ import annotations

from types import FunctionType

import numpy as np

from tapecli import kernels
from tapecli.frontend.ast import identifiers
from tapecli.interpreter.classes import Instance
from tapecli.interpreter.conversions import truth
from tapecli.interpreter.loop_shape import LoopShape, plain_function
from tapecli.interpreter.loop_steps import (CheckStep, DictSpec, DrawStep, EffectStep, RequestStep, TensorSpec,
                                            UpdateStep, VariableStep, alone, as_array, maker, same_template)
from tapecli.interpreter.objects import (_PYFUNCTION, EFFECT, PURE, REQUEST, BoundMethod, Function, ProgramObject)
from tapecli.kernels.trace import (Const, Recorder, Sequence, of_constants, released, resolve, same_call, same_specs,
                                   slots_read)
from tapecli.runtime.context import current
from tapecli.runtime.values import SEQUENCES, DType, PythonTuple, Tensor, Variable, make_tensor

MIN_ITERATIONS = 6              # a shorter loop runs as written (tracing two iterations costs more than it saves)
# A plan compiles its kernels (kernels/plan_kernels.py) where its known remaining iterations times its calls that
# compiled kernels may take (see compiles) come to this many: such a call saves about 10 microseconds (a small
# MLP's iteration about 65 with six of them), against about 0.4 s for Numba's import and start in a process that
# has run no Numba kernel yet (COLD), about 40 ms for loading the plan's kernels from the cache in one that has
# (WARM): a loop must have about 6,000 iterations of such an MLP left to compile in a fresh process.
COMPILED_FROM_CALLS_COLD = 36_000
COMPILED_FROM_CALLS_WARM = 4_000
TRACED = (1, 2)                 # the iterations that run traced
IN_PLACE_FROM = 1 << 14         # elements of a result that a plan writes into an argument's array (see _into)

_PLAIN = (bool, int, float, str, type(None), DType, np.dtype)
_PLAN_CODE: dict = {}           # a plan's source: its code, compiled once per process (bench runs a program again)


class AsWritten(Exception):
    """A plan's check (or kernel) refused this iteration's values before any of its steps changed state: the
    iteration runs as written instead, and raises the error where the program made it."""
INLINE = "inline"       # a program's function whose body a plan may take in (its calls are observed one by one)


def interpreter_kind(recorder, f, args, kwargs):
    """What a call the interpreter makes is to a plan (the interpreter's ``call_kind``): (PURE, EFFECT, REQUEST,
    INLINE or None, the callee that names the call to a plan). A program's function let in is the recorder's
    ``inlined`` until it starts (:meth:`LoopRecorder.enter`)."""
    kind = _kind(recorder, f, args, kwargs)
    if kind is PURE and getattr(f, "replay_lists", False) is False and recorder.packs(args, kwargs):
        kind = None             # (a list of the plan's tensors, packed in Python)
    return kind, f


def _kind(recorder, f, args, kwargs):
    if f.__class__ is BoundMethod:
        if f.function is None:
            replay = f.replay
            return replay(args, kwargs, recorder.tracked) if callable(replay) else replay
        f = f.function          # (a method of the program's class: its function, taken in)
    if f.__class__ is Function or f.__class__ is Instance:     # (a subclassed model: its call method, taken in)
        method = f if f.__class__ is Function else f.called_method()
        if method is None or not plain_function(method.node):
            return None
        recorder.inlined = method
        return INLINE
    if isinstance(f, ProgramObject):
        return f.replay_kind(args, kwargs, recorder.tracked)
    if f.__class__ is _PYFUNCTION and getattr(f, "is_builtin", False):
        count, keywords = getattr(f, "replay_data", (None, ()))
        if any(recorder.tracked(v) for k, v in kwargs.items() if k not in keywords) \
                or count is not None and any(map(recorder.tracked, args[count:])):
            return None         # (an argument it reads into Python)
        return getattr(f, "replay", None)
    return None


def planner(interp, shape, items, over) -> LoopPlanner | None:
    """The planner of one execution of a loop over ``items`` (taken from ``over``; ``shape``: the body's, or a
    function giving it), or None where no plan serves it: too few items, items whose end cannot be seen one
    ahead without running a program's code, a run or a tape that rules plans out, a body a plan cannot replace."""
    listed = items.__class__ in (list, PythonTuple, np.ndarray, range)
    if listed and len(items) < MIN_ITERATIONS or not listed and not _ahead(over) or not _plain_run():
        return None
    shape = shape() if callable(shape) else shape
    return None if shape is None else LoopPlanner(interp, shape, len(items) if listed else None)


def _ahead(over) -> bool:
    """Whether the items of ``over`` may be taken one ahead of the loop: a tensor's rows, a dataset's batches
    (nothing of the program runs to make them)."""
    return over.__class__ is Tensor or getattr(over, "items_are_values", False)


class LoopPlanner:
    """One execution of one ``for`` statement: which of its iterations run as written, traced, or as the plan."""

    def __init__(self, interp, shape: LoopShape, count: int | None):
        self.interp = interp
        self.inputs = shape.targets + shape.carried     # the names whose tensors are inputs
        self.carried = shape.carried
        self.shape = shape
        self.tests = [[interp.guard_test(test) for test, _ in s.branches] for s in shape.guards]
        self.count = count          # None: items taken one ahead (``ahead``) say which is the last
        self.at_last = False
        self.candidate = None
        self.recorder = None        # the adopted plan's
        self.plan = None
        self.failed = False
        self.verify = False         # an iteration ran as written since the plan's last: trace the next one again

    def ahead(self, items):
        """``items`` (an iterator), each given once the next is known: ``at_last`` tells the last."""
        iterator = iter(items)
        for item in iterator:
            for following in iterator:
                yield item
                item = following
            self.at_last = True
            yield item

    def run(self, index: int, body, scope) -> None:
        """Run iteration ``index`` of the loop (its item already bound)."""
        branches = self._branches(scope)
        plan = self.plan
        last = self.at_last if self.count is None else index == self.count - 1
        if plan is not None and last and plan.left is None:
            # as written, so that what the loop leaves is the program's; the plan made this structure's
            # backward passes, and the loop ends: no backward plan to build from this one
            with self.interp.ctx.mode.off("backward_plans"):
                body(scope)
            return
        if plan is not None:
            if branches != self.recorder.branches:
                body(scope)             # another branch than the plan's: as written (an `if step % 100 == 0:`)
                self.verify = True
                return
            if not self.verify and self.interp.steps + plan.steps_made > self.interp.limits.max_steps:
                self.plan, self.failed = None, True
                body(scope)             # (it stops in this iteration: where the loop as written stops)
                return
            if not self.verify:
                inputs = self._inputs(scope, plan)
                if inputs is not None:
                    try:
                        with self.interp.planning():
                            plan.run(self.interp, inputs, scope, last)
                    except AsWritten:           # the iteration as written raises the error, where it is
                        self.plan, self.failed = None, True
                        body(scope)
                    return
            elif _plain_run():
                # what the branch did may have changed what the plan's calls are: the iteration traced must agree
                self.verify = False
                recorder = self._traced(body, scope, branches)
                if recorder is None or not self.recorder.same_as(recorder):
                    self.plan, self.failed = None, True
                return
            self.plan, self.failed = None, True
        if self.failed or index not in TRACED or branches is None or not _plain_run():
            if index in TRACED:
                self.failed = True
            body(scope)
            return
        recorder = self._traced(body, scope, branches)
        if recorder is None:
            self.failed = True
        elif index == TRACED[0]:
            self.candidate = recorder
        elif self.candidate.same_as(recorder):
            # (the same loop in the runs of the program this process makes after this one: tapecli bench's)
            remaining = 0 if self.count is None else self.count - index - 1 + current().runs_after * self.count
            with self.interp.planning():
                self.plan = recorder.plan(self._left(self.candidate, recorder), remaining)
            self.recorder = recorder.done()
            self.candidate = None
        else:
            self.failed = True
        if self.failed:
            self.candidate = None

    def _branches(self, scope):
        """The branch each guard takes now (its index; one past the last for none), or None where a condition
        fails to evaluate (the body, run as written, says why)."""
        if not self.tests:
            return ()
        try:
            return tuple(next((i for i, test in enumerate(tests) if truth(test(scope))), len(tests))
                         for tests in self.tests)
        except Exception:       # (the runner's error: the body, run as written, raises it where it is)
            self.plan, self.failed = None, True
            return None

    def _traced(self, body, scope, branches):
        """Run the body with its kernel calls written down; the recorder, or None where it made what a plan
        cannot make again. The iteration itself runs as written either way (its errors are the program's)."""
        ctx, interp = current(), self.interp
        variables = sorted(ctx.variables, key=lambda v: v.order)
        carried = [self._tensor(scope, name, branches) for name in self.inputs]
        if any(t is None for t in carried):
            body(scope)
            return None
        inputs = [t.value for t in carried] + [v.read().value for v in variables]
        recorder = LoopRecorder(interp, inputs, variables, [t.weak for t in carried], branches)
        if len(recorder.slots) + len(recorder.items) != len(inputs):     # two inputs that are one: they could part
            body(scope)
            return None
        versions = [v.version for v in variables]
        # the scalar path computes outside the kernels: off, every value made from an input is a kernel's
        steps = interp.steps
        try:
            with ctx.mode.tracing(recorder), kernels.tracing(recorder):
                body(scope)
        except BaseException:           # (a `continue`, `break` or error leaves a traced iteration: no plan)
            self.plan, self.candidate, self.failed = None, None, True
            raise
        recorder.steps_made = interp.steps - steps
        if recorder.refused is not None or len(ctx.variables) != len(variables) or ctx.tapes \
                or not any(name is None for name, _, _ in recorder.steps):
            return None         # (a loop with no gradient and no effect: the interpreter's own paths serve it)
        if any(v.version != n and v not in recorder.assigned for v, n in zip(variables, versions)):
            return None
        ends = [self._tensor(scope, name) for name in self.carried]
        if any(t is None for t in ends):
            return None
        recorder.carried = [(name, recorder.spec(t.value), t.weak) for name, t in zip(self.carried, ends)]
        recorder.left = {name: scope.vars.get(name) for name in self.shape.left}
        return recorder

    def _left(self, first, second) -> list | None:
        """[(name, template)]: what the plan's last iteration binds of the names the loop leaves behind (those
        the body assigns, not carried), as the two traced iterations left them: tensors and lists of them from
        its slots; a name that was the same object after both (a constant, or one this branch leaves alone) as
        it is. None where a name is a tensor that an effect returned (an optimizer's step count, a metric's
        result: made again at every iteration, but not by the plan) or not made from the slots, or where a name
        is something else (a tape, a new object of the program's) and the program's text names it outside the
        loop: the last iteration then runs as written."""
        left = []
        for name, value in second.left.items():
            before = first.left[name]
            if value is before:
                continue
            if second.returned_by_effect(value) or first.returned_by_effect(before):
                return None
            template, other = _tensors(second, value), _tensors(first, before)
            if template is not None and other is not None and same_template(template, other):
                left.append((name, template))
            elif template is not None or other is not None or self._named_elsewhere(name):
                return None
        return left

    def _named_elsewhere(self, name: str) -> bool:
        """Whether the program's text has ``name`` outside this loop (in code, a string or a comment), or the
        program has no text."""
        source, (start, end) = self.interp.source, self.shape.span
        return not source or name in identifiers(source[:start] + "\n" + source[end:])

    def _tensor(self, scope, name, branches=()):
        """The tensor bound to ``name``; a loop's item that is a Python number as an _Item where the plan may take it
        (a traced iteration's ``branches`` none that reads it otherwise: LoopShape.unsafe); else None."""
        value = scope.vars.get(name)
        if value.__class__ is Tensor:
            return value
        if name not in self.shape.items or value.__class__ not in _ITEMS \
                or any(b in unsafe for b, unsafe in zip(branches, self.shape.unsafe)):
            return None
        return _Item(value)

    def _inputs(self, scope, plan):
        """The plan's inputs now, or None where one is not laid out as when it was traced."""
        ctx = current()
        if not _plain_run(ctx) or len(ctx.variables) != len(plan.variables):
            return None
        inputs = []
        for name in self.inputs:
            t = self._tensor(scope, name)
            if t is None:
                return None
            inputs.append(t.value)
        inputs += [v.read().value for v in plan.variables]
        for value, layout in zip(inputs, plan.layouts):
            if (value.shape, value.strides, value.dtype) != layout if value.__class__ is np.ndarray \
                    else _layout(value) != layout:
                return None
        read = plan.read
        return [value if k in read else None for k, value in enumerate(inputs)]


_ITEMS = (int, float, bool)


class _Item:
    """A loop's item that is a Python number (CPython's ``for step in range(n)``) as an input of its plan: the
    number itself in its slot, which a call's argument that is that very object reads (LoopRecorder.template)."""

    __slots__ = ("value",)
    weak = None

    def __init__(self, value):
        self.value = value


def _plain_run(ctx=None) -> bool:
    """Whether a loop plan may serve now (``ctx``: the run's context, where the caller holds it): the run's mode
    allows them, no tape is open, Numba is not forced."""
    ctx = current() if ctx is None else ctx
    return ctx.mode.loop_plans and not ctx.tapes and not kernels.numba_forced()


def compiles(steps, remaining: int) -> bool:
    """Whether a plan of ``steps`` compiles its kernels (kernels/plan_kernels.py: the same bits as NumPy's), decided
    from counts, never from timings: the run's mode allows it (TAPECLI_PLAN_KERNELS), the ``remaining`` iterations
    times its calls that compiled kernels may take (the kernels of ``kernels.PLAN_KERNELS``, an effect that has a
    call for plans: an optimizer's step) pay for what compiling costs this process (``COMPILED_FROM_CALLS_COLD``
    before its first Numba kernel, ``_WARM`` after), and Numba imports. (Which way it goes, the bits are the same.)"""
    if not current().mode.plan_kernels or remaining <= 0:
        return False
    calls = sum(1 for name, specs, _ in steps if name in kernels.PLAN_KERNELS or name is None
                and specs.__class__ is EffectStep and getattr(specs.callee, "planned", None) is not None)
    cost = COMPILED_FROM_CALLS_WARM if kernels.numba_started() else COMPILED_FROM_CALLS_COLD
    return remaining * calls >= cost and kernels.numba_ready()


def _tensors(recorder, value):
    """The template (``recorder.template``) of a tensor, or of a list or tuple of tensors and Nones; None for
    any other value."""
    return recorder.template(value) if _of_tensors(value) else None


def _arrays_in(value) -> list:
    """The arrays of a tensor, or of the tensors in a list or tuple."""
    if value.__class__ in SEQUENCES:
        return [array for v in value for array in _arrays_in(v)]
    return [value.value] if value.__class__ is Tensor else []


def _of_tensors(value) -> bool:
    if value.__class__ in SEQUENCES:
        return all(v is None or _of_tensors(v) for v in value)
    return value.__class__ is Tensor


def _laid_out(value, layout):
    """A carried name's new value laid out as its input was when traced: a NumPy scalar (a kernel's result of 0-d
    arrays) as a 0-d array where the loop as written made one (CPython's ops do), the same bits."""
    return np.asarray(value) if len(layout) == 3 and value.__class__ is not np.ndarray else value


def _layout(value):
    if value.__class__ is np.ndarray:
        return value.shape, value.strides, value.dtype
    return value.__class__, getattr(value, "dtype", None)


class LoopRecorder(Recorder):
    """Writes down one iteration: its kernel calls, and its effects and gradient requests as calls of their
    own. It is also the run mode's ``observer``: every call the body makes comes through
    :meth:`call`, which refuses what a plan cannot make again."""

    def __init__(self, interp, inputs, variables, weak, branches):
        super().__init__(inputs)
        # the inputs that are Python numbers (a loop's items: _Item), by id: a call's argument that is that object
        # reads them, never a kernel's (a shape's 1 is no loop's 1)
        self.items = {id(a): self.slots.pop(id(a)) for a in inputs if a.__class__ in _ITEMS and id(a) in self.slots}
        self.interp = interp
        self.variables = variables
        self.weak = weak
        self.branches = branches
        self.layouts = [_layout(a) for a in inputs]
        self.refused: str | None = None
        self.assigned: set = set()
        self.depth = 0               # inside a call the observer let through
        self.inlined = None          # the program's function the observer is letting in
        self.carried: list = []
        self.steps_made = 0          # the interpreter's steps the iteration counts beside the loop's own
        self.effect_made: set = set()   # the ids of the arrays the effects returned (held: see spec)
        self.constant: set = set()      # the slots of kernel calls made of constants only (an axis of -1)

    # ------------------------------------------------------------------ observing calls
    def observe(self, f, args, kwargs, node, call):
        """``call(f, args, kwargs, node)`` (the interpreter's), with what it is to the plan written down."""
        kind, callee = self.interp.call_kind(self, f, args, kwargs) if not self.depth and self.refused is None \
            else (None, "a call inside a call")
        if kind is None:        # (named by its callee: the runner's, which reads no attribute of a program's object)
            self.refuse(callee if callee.__class__ is str else getattr(callee, "name", None)
                        or getattr(callee, "__name__", None) or type(callee).__name__)
            return call(f, args, kwargs, node)
        if kind is EFFECT:
            return self._effect(f, args, kwargs, node, call, callee)
        if kind is INLINE:              # its calls come through here one by one, as the body's do
            return call(f, args, kwargs, node)
        first = self.interp.requests.mark()
        self.depth += 1
        try:
            result = call(f, args, kwargs, node)
        finally:
            self.depth -= 1
        if kind is REQUEST:
            made = self.interp.requests.since(first)
            if self.interp.requests.mark() - first != 1 or len(made) != 1:
                self.refuse("a gradient request")
            else:
                request = made[0]
                self._step(RequestStep(request, self.template(list(request.values)), self.template(request.result),
                                       self.template(args), self.template(kwargs)))
        return result

    def enter(self, fn, name: str) -> None:
        """A program's function starts (``fn``: what the runner's ``call_kind`` let it in by; ``name``: its name):
        one this observer let in (``INLINE``), or anything else, refused."""
        if self.inlined is not None and self.inlined == fn:
            self.inlined = None
        else:
            self.refuse(f"function {name}")

    def read(self) -> None:
        """A tensor's value read into Python by the program's code (not a call's: inside one, its own business)."""
        if not self.depth:
            self.refuse("a value read into Python")

    def refuse(self, what: str) -> None:
        """The iteration did what a plan cannot make again (``what``: the first such call, for debugging)."""
        if self.refused is None:
            self.refused = what

    def packs(self, args, kwargs) -> bool:
        """Whether a call is given a list holding the plan's tensors, which it would pack into one in Python."""
        return any(v.__class__ in SEQUENCES and self.tracked(v) for v in (*args, *kwargs.values()))

    def tracked(self, value) -> bool:
        """Whether ``value`` holds an array the plan makes or takes as an input (anything but a constant)."""
        if isinstance(value, Variable):
            return True
        if value.__class__ is Tensor:
            value = value.value
        if isinstance(value, (list, tuple)):
            return any(self.tracked(v) for v in value)
        if value.__class__ is np.ndarray or isinstance(value, np.generic):
            return not of_constants(self.spec(value), self.constant)
        return False

    def call(self, name, args, attrs, run):
        out = super().call(name, args, attrs, run)
        _, specs, attr_specs = self.steps[-1]
        if all(of_constants(spec, self.constant) for spec in (*specs, *(attr_specs or {}).values())):
            self.constant.add(self.n_inputs + len(self.steps) - 1)
        return out

    def _effect(self, f, args, kwargs, node, call, callee):
        args = [list(a) if a.__class__ is zip else a for a in args]      # (an iterator is read once)
        step = EffectStep(f, node, self.template(args), self.template(kwargs), callee)
        versions = [v.version for v in self.variables]
        self.depth += 1
        try:
            with kernels.tracing(None):
                result = call(f, args, kwargs, node)
        finally:
            self.depth -= 1
        self._step(step)
        for array in _arrays_in(result):
            self.held.append(array)
            self.effect_made.add(id(array))
        for v, n in zip(self.variables, versions):
            if v.version != n:
                self.assigned.add(v)
                self._step(VariableStep(v))
                self._made(v.read().value)
        return result

    def returned_by_effect(self, value) -> bool:
        """Whether ``value`` is (or holds) a tensor that an effect of the iteration returned."""
        return any(id(array) in self.effect_made for array in _arrays_in(value))

    def spec(self, value):
        if id(value) in self.effect_made:
            # a plan drops what an effect returns (a metric's result): a value read from state, not a constant
            self.refuse("a value an effect returned")
        return super().spec(value)

    def check(self, check, value, params) -> None:
        self._step(CheckStep(check, self.spec(value), params))

    def draw(self, draw, params, value) -> None:
        self._step(DrawStep(draw, params))
        self._made(value)

    def update(self, update, variable, value, params) -> None:
        self._step(UpdateStep(update, variable, self.spec(value), params))
        self.assigned.add(variable)
        self._step(VariableStep(variable))
        self._made(variable.read().value)

    def _made(self, array) -> None:
        """``array`` is the result of the last step (a special one's: a variable's new array, a draw)."""
        self.slots[id(array)] = self.n_inputs + len(self.steps) - 1
        self.held.append(array)

    def _step(self, special) -> None:
        self.steps.append((None, special, None))

    def template(self, value):
        """``value`` with its tensors as the specs of their arrays: what a replayed call is given."""
        if value.__class__ is Tensor:
            return TensorSpec(self.spec(value.value), value.weak)
        if value.__class__ in SEQUENCES:
            return Sequence(value.__class__, tuple(self.template(v) for v in value))
        if value.__class__ is dict:
            return DictSpec(tuple(value), tuple(self.template(v) for v in value.values()))
        if isinstance(value, _PLAIN) or isinstance(value, (Variable, ProgramObject, BoundMethod)):
            slot = self.items.get(id(value)) if value.__class__ in _ITEMS else None
            return Const(value) if slot is None else slot      # (a loop's item: its slot)
        self.refuse(f"a {type(value).__name__} argument")
        return Const(value)

    # ------------------------------------------------------------------ the plan
    def same_as(self, other: LoopRecorder) -> bool:
        """The same calls on the same slots with the same constants, effects and requests, the same layouts."""
        if self.layouts != other.layouts or self.variables != other.variables or self.weak != other.weak \
                or self.branches != other.branches or self.steps_made != other.steps_made \
                or len(self.steps) != len(other.steps):
            return False
        for step, other_step in zip(self.steps, other.steps):
            if step[0] is None or other_step[0] is None:      # an effect, a request, a check, a variable's array
                if step[0] is not other_step[0] or not step[1].same_as(other_step[1]):
                    return False
            elif not same_call(step, other_step):
                return False
        return [(n, w) for n, _, w in self.carried] == [(n, w) for n, _, w in other.carried] \
            and same_specs([s for _, s, _ in self.carried], [s for _, s, _ in other.carried])

    def done(self) -> LoopRecorder:
        """This recorder, letting go of the arrays it kept while it wrote the calls down (only its steps'
        constants stay, which the plan and comparisons read)."""
        self.held, self.slots = [], {}
        return self

    def plan(self, left, remaining=0) -> LoopPlan:
        """The plan of these calls (``left``: see LoopPlanner._left; ``remaining``: the iterations known to follow
        this one, which may pay for compiled kernels), compiled from this iteration's arrays where they are all
        known (its first run is then the compiled code's), else compiled after a first run step by step."""
        plan = LoopPlan(self.n_inputs, self.steps, self.variables, self.layouts, self.carried, self.steps_made,
                        left, compiles(self.steps, remaining))
        values = self.traced_values()
        if values is not None:
            plan.compiled = plan.compile(values)
        return plan


class LoopPlan:
    """The calls of one traced iteration, made again: kernels (by the NumPy function itself once bound,
    as backward plans do), effects and requests (by the interpreter, on tensors of the new arrays)."""

    def __init__(self, n_inputs, steps, variables, layouts, carried, steps_made, left=None, kernels_compiled=False):
        self.n_inputs = n_inputs
        self.steps = steps
        self.variables = variables
        self.layouts = layouts
        self.carried = carried
        self.left = left                # what its last iteration binds (None: the last one runs as written)
        self.left_makers = [(name, maker(template)) for name, template in left or ()]
        self.steps_made = steps_made    # the calls of the functions it took in: steps, as --max-steps counts them
        self.compiled = None
        self.kernels_compiled = kernels_compiled    # its kernels (and an optimizer's step) compiled where they may be
        # the first step that changes state (an effect, a request): an error before it changed nothing
        self.first_change = next((k for k, (name, special, _) in enumerate(steps)
                                  if name is None and special.__class__ is not CheckStep), len(steps))
        # the inputs its steps read: it holds no other array (an optimizer then writes its slots in place)
        self.read = frozenset(slot for name, specs, attrs in steps for slot in slots_read(
            (specs, attrs) if name is not None else specs.specs()) if slot < n_inputs) \
            | frozenset(slot for _, spec, _ in carried for slot in slots_read(spec) if slot < n_inputs)

    def run(self, interp, inputs, scope, last=False) -> None:
        values = list(inputs)
        try:
            if self.compiled is not None:
                self.compiled(values, interp)
            else:
                self._run_steps(values, interp)
                self.compiled = self.compile(values) or self._run_steps
        except Exception:
            if len(values) - self.n_inputs < self.first_change:
                raise AsWritten from None       # (a check or a kernel refused a value before anything changed)
            raise
        if self.steps_made:
            interp.count_steps(self.steps_made)
        names = scope.vars
        at = self.n_inputs - len(self.variables) - len(self.carried)       # (the carried names' inputs)
        for k, (name, spec, weak) in enumerate(self.carried):
            names[name] = make_tensor(_laid_out(resolve(spec, values), self.layouts[at + k]), weak)
        if last:
            for name, make in self.left_makers:
                names[name] = make(values)
        current().loop_replayed += 1

    def _run_steps(self, values, interp) -> None:
        append = values.append
        for name, specs, attr_specs in self.steps:
            if name is None:
                append(specs.make(interp, values))
                continue
            args = [resolve(s, values) for s in specs]
            append(kernels.run(name, args, {} if attr_specs is None else
                               {k: resolve(s, values) for k, s in attr_specs.items()}))

    def _released(self) -> dict:
        """{step k: the slots that no step after k reads}, but for those the loop binds after the plan."""
        reads = [list(slots_read((specs, attr_specs) if name is not None else specs.specs()))
                 for name, specs, attr_specs in self.steps]
        kept = {slot for _, spec, _ in self.carried for slot in slots_read(spec)}
        return released(self.n_inputs, reads, kept.union(*(slots_read(t) for _, t in self.left or ())))

    def _paired(self, values) -> dict:
        """{k: (m, function)}: kernel calls k and m > k on the same arguments that ``kernels.PAIRED`` makes in
        one call (a loss and its backprop), each by its NumPy function, to arrays (by a compiled function giving
        their bits, ``plan_kernels.for_pair``, where the plan compiles its kernels)."""
        pairs, waiting = {}, {}
        for k, (name, specs, attr_specs) in enumerate(self.steps):
            if name is None or attr_specs is not None or not all(s.__class__ is int for s in specs) \
                    or values[self.n_inputs + k].__class__ is not np.ndarray \
                    or kernels.direct(name, [values[s] for s in specs]) is None:
                continue
            first = waiting.pop((name, specs), None)
            if first is not None:
                both = kernels.for_plan(first[1], [values[s] for s in specs], {})
                if self.kernels_compiled:       # (the pair's compiled function, where one gives its bits)
                    from tapecli.kernels import plan_kernels
                    both = plan_kernels.for_pair(first[2], [values[s] for s in specs], both) or both
                pairs[first[0]] = (k, both)
            for (a, b), both in kernels.PAIRED.items():
                if a == name:
                    waiting[b, specs] = (k, both, (a, b))
        return pairs

    def _fusions(self, values, released) -> dict:
        """{k: function}: kernel calls k and k + 1 that one compiled kernel makes (``kernels.plan_kernels``: a
        bias added, then relu), where step k + 1 alone reads step k's result, and NumPy makes both here."""
        from tapecli.kernels import plan_kernels
        fusions = {}
        for k, ((name, specs, attrs), (following, after, after_attrs)) in enumerate(zip(self.steps, self.steps[1:])):
            slot = self.n_inputs + k
            if name == "add" and following == "relu" and attrs is None and after_attrs is None \
                    and tuple(after) == (slot,) and slot in released.get(k + 1, ()) \
                    and all(s.__class__ is int for s in specs) and len(specs) == 2:
                args = [values[s] for s in specs]
                if plan_kernels.bias_takes(*args) and kernels.direct(name, args) is not None \
                        and kernels.direct(following, [values[slot]]) is not None:
                    fusions[k] = plan_kernels.bias_relu
        return fusions

    def _into(self, k, values, released, constant):
        """The slot of step k's argument whose array may take its result (``kernels.OUT_KERNELS``): an array the
        iteration made (not an input, not a constant), which no later step reads, of the result's shape and
        dtype and laid out to be written, a large one (a small one's allocation costs less than the check);
        else None. Whether nothing else holds it is the plan's check at each iteration (``loop_steps.alone``)."""
        name, specs, attr_specs = self.steps[k]
        result = values[self.n_inputs + k]
        if name not in kernels.OUT_KERNELS or result.__class__ is not np.ndarray or result.size < IN_PLACE_FROM:
            return None
        read = list(slots_read((specs, attr_specs)))
        for spec in specs:
            if spec.__class__ is not int or spec < self.n_inputs or spec in constant \
                    or spec not in released.get(k, ()) or read.count(spec) != 1:
                continue
            array = values[spec]
            if array.__class__ is np.ndarray and array.shape == result.shape and array.dtype == result.dtype \
                    and array.flags.c_contiguous and array.flags.writeable:
                return spec
        return None

    def compile(self, values):
        """The plan as one Python function of the slots' list (``values``: the arrays of one iteration, run or
        traced): each kernel called by the NumPy function ``kernels.run`` calls for these layouts
        (``kernels.direct``; ``run`` itself where Numba serves), its arguments read from the list, constants
        bound once; an effect or request by its step. A call made of constants only (a mean's seed broadcast
        back) gives the same array at every iteration: its result, as that iteration made it, is bound as a
        constant. Each slot is let go of after the last step that reads it (what the loop binds after the plan
        is kept): an array no step needs is freed as the iteration goes, and its memory, still in the cache, is
        the next array's. A kernel that can write its result into an argument's array whose last reader it is
        does so where, at that iteration, nothing else holds that array (``_into``, ``loop_steps.alone``)."""
        env = {"run_kernel": kernels.run, "_scalar": as_array, "_alone": alone}
        lines = ["def plan(v, interp):", "    a = v.append"]
        constant = set()        # the slots made of constants only
        released = self._released()

        def fixed(spec) -> bool:
            return of_constants(spec, constant)

        def bound(obj, prefix):
            key = f"{prefix}{len(env)}"
            env[key] = obj
            return key

        def argument(spec):
            if spec.__class__ is int:
                return f"v[{spec}]"
            if spec.__class__ is Const:
                return bound(spec.value, "c")
            if spec.__class__ is Sequence and fixed(spec):      # (an axis, a permutation)
                return bound(spec.resolve(values), "c")
            return f"{bound(spec, 'r')}.resolve(v)"

        pairs = self._paired(values)            # {k: (m, the function making both steps' results)}
        fusions = self._fusions(values, released) if self.kernels_compiled else {}
        fused = set()                           # the steps made with the next one (not as constants)
        seconds = {m: k for k, (m, _) in pairs.items()}
        paired = set()                          # the first steps made as pairs (not as constants)
        unread = set()                          # the slots of variables' arrays that no step reads: left None
        for k, (name, specs, attr_specs) in enumerate(self.steps):
            if k:       # (what the step before was the last to read)
                lines.extend(f"    v[{slot}] = None" for slot in released.get(k - 1, ()) if slot not in unread)
            if name is None:
                if specs.__class__ is CheckStep and fixed(specs.spec):
                    lines.append("    a(None)")        # (a constant the traced iterations' checks passed)
                    continue
                if specs.__class__ is VariableStep and self.n_inputs + k in released.get(k, ()):
                    unread.add(self.n_inputs + k)      # (an optimizer's slots after its step: read by no call)
                    lines.append("    a(None)")
                    continue
                make = specs.planned_make(self.kernels_compiled) if specs.__class__ is EffectStep else None
                lines.append(f"    a({bound(make, 'e')}(interp, v))" if make is not None else
                             f"    a({bound(specs, 's')}.make(interp, v))")
                continue
            slot = self.n_inputs + k
            if all(map(fixed, specs)) and (attr_specs is None or all(map(fixed, attr_specs.values()))):
                constant.add(slot)
                lines.append(f"    a({bound(values[slot], 'c')})")
                continue
            args = [argument(s) for s in specs]
            if k - 1 in fused:                  # (made with the step before)
                lines += [f"    a(q{k - 1})", f"    q{k - 1} = None"]
                continue
            if k in fusions:                    # this step and the next in one kernel, into an argument's array
                fused.add(k)
                into = self._into(k, values, released, constant)
                out = ""
                if into is not None:
                    lines += [f"    o = v[{into}]", f"    v[{into}] = None", "    free = _alone(o)"]
                    args = ["o" if a == f"v[{into}]" else a for a in args]
                    out = ", out=o if free else None"
                lines += [f"    q{k} = {bound(fusions[k], 'f')}({', '.join(args)}{out})", "    a(None)"]
                if into is not None:
                    lines.append("    o = None")
                continue
            if k in seconds and seconds[k] in paired:       # (made with the first of the pair)
                lines += [f"    a(p{seconds[k]}[1])", f"    p{seconds[k]} = None"]
                continue
            if k in pairs:
                paired.add(k)
                lines += [f"    p{k} = {bound(pairs[k][1], 'f')}({', '.join(args)})", f"    a(p{k}[0])"]
                continue
            attrs = {} if attr_specs is None else {key: argument(s) for key, s in attr_specs.items()}
            if not all(key.isidentifier() for key in attrs):
                return None                     # (the ops' attribute names are words: never, but not source)
            arguments = [resolve(s, values) for s in specs]
            attr_values = {} if attr_specs is None else {key: resolve(s, values) for key, s in attr_specs.items()}
            function = kernels.direct(name, arguments)
            if function is not None and self.kernels_compiled and name in kernels.PLAN_KERNELS:
                from tapecli.kernels import plan_kernels
                function = plan_kernels.for_call(name, arguments, attr_values) or function
            elif function is not None and (attr_specs is None or all(map(fixed, attr_specs.values()))):
                planned = kernels.for_plan(function, arguments, attr_values)
                if planned is not function:     # (the attributes, constants, are its own)
                    function, attrs = planned, {}
            into = None if function is None else self._into(k, values, released, constant)
            if into is not None:        # its result in that argument's array, where nothing else holds it
                lines += [f"    o = v[{into}]", f"    v[{into}] = None", "    free = _alone(o)"]
                args = ["o" if a == f"v[{into}]" else a for a in args]
                attrs["out"] = "o if free else None"
            if function is None:
                attributes = ", ".join(f"{key!r}: {a}" for key, a in attrs.items())
                call = f"run_kernel({bound(name, 'n')}, [{', '.join(args)}], {{{attributes}}})"
            else:
                call = f"{bound(function, 'f')}({', '.join(args + [f'{key}={a}' for key, a in attrs.items()])})"
                if values[slot].__class__ is not np.ndarray:     # (a scalar: as run makes it)
                    call = f"_scalar({call})"
            lines.append(f"    a({call})")
            if into is not None:
                lines.append("    o = None")      # (held, it would fail the next check of the same array)
        source = "\n".join(lines) + "\n"
        code = _PLAN_CODE.get(source)
        if code is None:        # (a plan's source is its structure's: the same in every run of a program)
            namespace: dict = {}
            exec(compile(source, "<loop plan>", "exec"), {}, namespace)    # noqa: S102
            if len(_PLAN_CODE) >= 256:          # a long-lived process's many programs: start again
                _PLAN_CODE.clear()
            code = _PLAN_CODE[source] = namespace["plan"].__code__
        return FunctionType(code, env)
