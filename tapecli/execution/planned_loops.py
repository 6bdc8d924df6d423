"""Loop plans on CPython: the training loops of a TensorFlow program that CPython runs take the interpreter's loop
plans (interpreter/loop_plans.py), its planner, recorder and steps, with this module as their runner.

Which loops: ``training_loops.planned_loops``, by the text rule the interpreter's plans start from
(``training_loops.plannable``), of the loops outside any ``try`` (an error of a planned iteration leaves the loop as
it would) at the program's top level (their names are the module's) or in a function of the program that no
``try`` may call, no generator, no decorated one (their names are that function's locals), in a program that reads
no frames (``traceback``, ``logging``...). The guard (guard.py, ``TensorFlowGuard``) compiles each one as

- its body a function of its own that declares ``global`` every name it binds (in a function, ``nonlocal`` those
  the function does not declare ``global``: its locals, the body's cells), a ``break`` of the loop returning True,
  defined before the loop and deleted after it (a body that makes a scope, returns, or reads its frame's names, is
  not taken: a function of its own would show);
- the loop over what ``LOOP`` gives (its execution: its items, one ahead where the plan must see the last; each
  call of a function its own), asking at each iteration ``ITERATION``: the body as written, traced, or the plan's
  calls (:class:`ProgramLoops`), the scope the plan reads and binds the body's (:class:`_Names`);
- every call of its body, and of the program's plain functions and its models' plain ``call`` methods (whose first
  step is ``ENTER``; a model's plain ``train_step``, ``test_step`` and ``compute_loss`` too, and all of them in a
  program that calls ``fit`` or ``evaluate``: Keras's fit plans its batches with this runner,
  library/keras/fit_plans.py; none that reads its frame, ``super()``), through ``OBSERVE``: the
  call itself while no plan traces; while one does, the plan's recorder classifies it
  (:meth:`ProgramLoops.call_kind`: the library's objects, methods and functions behind what the program holds, as
  the interpreter's are; ``print``, a list's ``append``, ``zip``, a new ``GradientTape``; a plain function let in)
  and makes it as written.

A loop's name that is a Python number (``step`` of ``range(n)``) is an input of the plan where the body reads it
only as a whole argument of calls (``print(step, loss)``); read otherwise, the loop runs as written (in a guard's
branch alone, an iteration traced through that branch makes no plan: LoopShape.unsafe).

While a plan traces an iteration, the program's tick (``TICK``) refuses the plan: the program's code that runs
then but through ``OBSERVE`` and ``ENTER`` (a property, an operator of a program's class, a function the library
calls back) is code no plan makes again. A tensor's value read into Python (``float(loss)``, ``f"{loss}"``) refuses
it too (runtime/values.py, ``LoopRecorder.read``). What a planned iteration skips of the steps, the plan counts
(its inlined functions' calls), as the interpreter's does."""
from __future__ import annotations

import functools
import inspect
import types

from tapecli import kernels
from tapecli.errors import TdfError
from tapecli.execution import guard
from tapecli.execution.builtin_table import underlying
from tapecli.execution.tf_values import LibraryObject, library_value, program_side, to_library
from tapecli.execution.keras_classes import Layer as KerasLayer
from tapecli.execution.tf_module import Module
from tapecli.interpreter import loop_plans
from tapecli.interpreter.loop_shape import LoopShape
from tapecli.interpreter.objects import EFFECT, PURE, BoundMethod
from tapecli.runtime.context import current


class _Guard:
    """An ``if`` statement of a loop as the planner reads it: its conditions, each a function of the scope."""

    def __init__(self, conditions):
        self.branches = [(condition, None) for condition in conditions]


class _Running:
    """One execution of a planned loop (its items, as the loop takes them)."""

    __slots__ = ("planner", "body", "over", "items", "count", "index", "broke", "scope")

    def __init__(self, planner, body, over, items, count):
        self.planner, self.body, self.over, self.items, self.count = planner, body, over, items, count
        self.index = 0
        self.broke = False
        self.scope = _Names(body)

    def __iter__(self):
        return iter(self.items)


class _Names:
    """A loop's scope as its body's function sees it (``vars``: the names the plan reads and binds): the locals of
    the function around the loop (the body's cells), and the module's names."""

    def __init__(self, body):
        self.cells = dict(zip(body.__code__.co_freevars, body.__closure__ or ()))
        self.module = body.__globals__
        self.vars = self

    def get(self, name: str, default=None):
        cell = self.cells.get(name)
        if cell is None:
            return self.module.get(name, default)
        try:
            return cell.cell_contents
        except ValueError:          # (a local not bound yet)
            return default

    def __setitem__(self, name: str, value) -> None:
        cell = self.cells.get(name)
        if cell is None:
            self.module[name] = value
        else:
            cell.cell_contents = value


class ProgramLoops:
    """The runner of one CPython run's loop plans (what ``interpreter/loop_plans.py`` asks of the interpreter,
    answered for the program's module) and the runtime names its guard's code calls."""

    def __init__(self, sandbox, eager, scope: dict, shapes: list, plain: dict, source: str):
        self.sandbox, self.eager, self.scope = sandbox, eager, scope
        self.shapes, self.plain, self.source = shapes, plain, source
        self.ctx = current()

    @property
    def codes(self):
        """_codes of this run's bridge (asked while a plan traces: the program has read tf.GradientTape then)."""
        return _codes(type(self.eager), self.eager.tf.GradientTape)

    def runtime_names(self) -> dict:
        return {guard.LOOP: self.loop, guard.ITERATION: self.iteration, guard.OBSERVE: self.observe,
                guard.ENTER: self.enter}

    # ------------------------------------------------------------------ the runtime names
    def loop(self, number: int, over, body, conditions: list) -> _Running:
        """A planned loop's execution started: the items it takes from ``over`` (one ahead where its plan must see
        the last). No plan serves one that a ``tf.function``'s call runs (a function's loop): what its trace reads
        from outside is its captures, reads that a plan would skip."""
        known = self.shapes[number]
        shape = LoopShape(known.targets, known.carried,
                          [_Guard([self._condition(c) for c in chain]) for chain in conditions], known.left, known.span,
                          known.items, known.unsafe)
        count = len(over) if over.__class__ in (range, tuple, list) else None
        planner, items = None, over
        if not self.ctx.functions:
            if count is not None:
                planner = loop_plans.planner(self, shape, range(count), over)
            else:
                planner = loop_plans.planner(self, shape, None, library_value(over))
                if planner is not None:
                    items = planner.ahead(iter(over))
        return _Running(planner, body, over, items, count)

    def iteration(self, running: _Running) -> bool:
        """Run the loop's next iteration; whether it breaks the loop."""
        try:
            return self._iteration(running)
        except NameError as error:
            unbound = _unbound_local(error, running.body)
            if unbound is None:
                raise
            raise unbound from None

    def _iteration(self, running: _Running) -> bool:
        planner = running.planner
        if planner is None:
            return running.body() is True
        index, running.index, running.broke = running.index, running.index + 1, False
        if running.count is not None and len(running.over) != running.count:    # (a list the loop changed)
            running.planner = None
            return running.body() is True
        ctx = self.ctx
        eager, ctx.eager = ctx.eager, None          # (the plan is the library's code)
        try:
            planner.run(index, lambda names: self._body(running), running.scope)
        finally:
            ctx.eager = eager
        if planner.failed:
            running.planner = None
        return running.broke

    def _body(self, running: _Running) -> None:
        with program_side(self.eager):
            running.broke = self.traced(running.body) is True

    def traced(self, body):
        """``body()`` (an iteration: a loop's body, fit's batch), where a plan traces it with the program's tick
        refusing the plan: the program's code that runs then but through OBSERVE and ENTER is no plan's."""
        observer = self.ctx.mode.observer
        if observer is None:
            return body()
        scope, tick = self.scope, self.scope[guard.TICK]

        def refusing_tick():
            tick()
            observer.refuse("the program's code that the plan does not take")
            return False
        scope[guard.TICK] = refusing_tick
        try:
            return body()
        finally:
            scope[guard.TICK] = tick

    def observe(self, position, f, /, *args, **kwargs):
        """A call of a planned loop's body (or of a plain function): made as written, through the plan's recorder
        while it traces (``position``: the call's, where its records and errors are)."""
        observer = self.ctx.mode.observer
        if observer is None:
            return f(*args, **kwargs)
        self.ctx.settings.line = position[0]
        if any(a.__class__ is zip for a in args) and (f.__class__ is LibraryObject or f.__class__ is types.FunctionType
                                                      and library_callee(f, self.codes) is not None):
            args = [list(a) if a.__class__ is zip else a for a in args]     # (read once: as the library reads it)
        return observer.observe(f, list(args), kwargs, position, _as_written)

    def enter(self, name: str) -> None:
        """A plain function starts: a step; one the plan's recorder did not let in refuses the plan."""
        self.sandbox.tick()
        observer = self.ctx.mode.observer
        if observer is not None:
            observer.enter(name, name)

    # ------------------------------------------------------------------ what a loop plan asks of its runner
    @property
    def requests(self) -> list:
        return self.eager.run.requests

    @property
    def steps(self) -> int:
        return self.sandbox.steps

    @property
    def limits(self):
        return self.sandbox.limits

    def count_steps(self, steps: int) -> None:
        self.sandbox.charge(steps)

    def guard_test(self, condition):
        return condition

    @staticmethod
    def planning():
        """What a plan is made and run in: the kernels' block (their floating-point warnings off, and their NumPy
        functions the plan's to call: ``kernels.direct``), as the interpreter runs; the program's code is not."""
        return kernels.quiet()

    def _condition(self, condition):
        def test(names):
            with program_side(self.eager):
                return bool(condition())
        return test

    def call(self, f, args, kwargs, node):
        """An effect made again by a plan: the program's call as written, on the plan's values."""
        try:
            with program_side(self.eager):
                return f(*args, **kwargs)
        except TdfError as e:
            raise self.call_error(e, node) from None

    @staticmethod
    def call_error(error, node):
        """An error of an effect a plan made, at the call's place in the program (``node``: its position)."""
        if isinstance(error, TdfError) and error.line is None:
            line, column, end_line, end_column = node
            error.line, error.column = line, column + 1
            error.end_column = end_column + 1 if end_line == line else None
        return error

    def call_kind(self, recorder, f, args, kwargs):
        """What a call of the program is to a plan: that of the library's object, method or function behind ``f``
        (interpreter_kind, of the arguments as the library takes them); ``print`` and a list's ``append`` are
        effects, ``zip`` and a new ``GradientTape`` pure; a plain function or method of the program's is let in; a
        Keras model's method that is the Trainer's says what it is (keras_fitting._trainer_method: a compiled loss)."""
        cls = f.__class__
        if any(a.__class__ is zip for a in (*args, *kwargs.values())):
            return None, "an iterator"      # (given to Python's own: an effect made again would read it again)
        if cls is LibraryObject:
            callee = library_value(f)
        elif cls is types.FunctionType:
            callee = library_callee(f, self.codes)
            if callee is None:
                return self._function(recorder, f)
        elif f is zip:
            return PURE, f
        elif cls is types.MethodType and getattr(f.__func__, "replay_kind", None) is not None:
            # (a Keras model's method that is the Trainer's: keras_fitting._trainer_method, a compiled loss)
            return f.__func__.replay_kind(f.__self__, args, kwargs, recorder.tracked), f
        elif cls is types.BuiltinMethodType and f.__name__ == "append" and f.__self__.__class__ is list \
                or underlying(f) == self.sandbox.print:
            return EFFECT, f
        elif f is self.eager.tf.GradientTape and not any(map(recorder.tracked, (*args, *kwargs.values()))):
            return PURE, f
        elif issubclass(cls, (KerasLayer, Module)) and self.sandbox.program_made(f):
            return self._function(recorder, _called_method(cls))
        elif cls is types.MethodType and f.__func__.__class__ is types.FunctionType:
            return self._function(recorder, f.__func__)       # (a program's method: a step's compute_loss)
        else:
            return None, cls.__name__
        return loop_plans.interpreter_kind(recorder, callee, [to_library(a) for a in args],
                                           {k: to_library(v) for k, v in kwargs.items()})

    def _function(self, recorder, f):
        """A program's plain function (a ``tf.function`` of one, a model's ``call``) is let in: its calls come
        through OBSERVE."""
        if f is None:
            return None, "a call"
        if f.__code__ is self.codes[1]:
            f = f.__wrapped__
        code = f.__code__
        if code.co_filename != self.sandbox.filename or f.__closure__ is not None \
                or code.co_firstlineno not in self.plain.get(code.co_name, ()):
            return None, code.co_name
        recorder.inlined = code.co_name
        return loop_plans.INLINE, f


def _unbound_local(error: NameError, body) -> UnboundLocalError | None:
    """Where a loop's body read its function's local before the function bound it, the error that function's own
    code raises there (the body's function reads it as a free variable), at the same place; else None."""
    tb = error.__traceback__
    while tb.tb_next is not None:
        tb = tb.tb_next
    if tb.tb_frame.f_code is not body.__code__ or error.name not in body.__code__.co_freevars:
        return None
    unbound = UnboundLocalError(f"cannot access local variable '{error.name}' where it is not associated with a value")
    unbound.name = error.name
    return unbound.with_traceback(error.__traceback__)


def _called_method(cls):
    """The program's function a call of an instance of its model or module class runs: a Keras layer's ``call``
    (inside Keras's ``__call__``), a tf.Module's own ``__call__``; None for any other. (Looked up in the classes'
    dictionaries: no code of the program's runs to find it.)"""
    called = inspect.getattr_static(cls, "__call__", None)
    if issubclass(cls, KerasLayer) and called is KerasLayer.__call__:
        called = inspect.getattr_static(cls, "call", None)
    return called if called.__class__ is types.FunctionType else None


def _as_written(f, args, kwargs, node):
    return f(*args, **kwargs)


def library_callee(f, codes):
    """The library's function or method behind a function the bridge gave the program (a ``tf`` function, an
    object's method, a tape's or a variable's), or None for any other function (``codes``: _codes')."""
    library, _, methods = codes
    found = getattr(f, "library_builtin", None) if f.__code__ is library else None
    if found is not None or f.__code__ not in methods:
        return found
    cells = list(f.__closure__ or ())
    while cells:
        value = cells.pop().cell_contents
        if value.__class__ is types.FunctionType and value.__code__ in methods:
            cells.extend(value.__closure__ or ())
        elif value.__class__ is BoundMethod:
            return value
    return None


def _nested_codes(function) -> set:
    return {c for c in function.__code__.co_consts if isinstance(c, types.CodeType)}


@functools.cache
def _codes(eager_class, tape_class):
    """The code of the functions the bridge gives the program for the library's functions, for a ``tf.function``,
    and for the library's methods (those that hold the BoundMethod they call: of an object, of a tape
    (``tape_class``), of a variable (``eager_class``, the bridge's Eager, gives its attributes))."""
    from tapecli.execution import tf_calls, tf_values
    library = next(c for c in _nested_codes(tf_values.library_function) if c.co_name == "call")
    traced = next(c for c in _nested_codes(tf_calls._traced) if c.co_name == "traced")
    methods = _nested_codes(tf_values.program_method) | _nested_codes(tape_class.method) \
        | _nested_codes(eager_class.attribute) | _nested_codes(tf_values.as_tensorflow)
    return library, traced, frozenset(methods)

