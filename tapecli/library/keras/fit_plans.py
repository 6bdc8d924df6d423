"""Loop plans over the batches of ``fit`` and ``evaluate`` (interpreter/loop_plans.py): an epoch's batches are a
loop whose body is the model's train (or test) step, planned as a program's training loop is.

Keras's default step (training.Trainer.train_updates, test_updates) is the body less the logs it reads into Python
(read once, at the epoch's end): the forward pass and the loss, each a pure call where the plan's own rules take
the model and the loss (their ``replay_kind``: the audited layers, a loss that reads no labels into Python), the
gradient's kernels, and the calls that change state as effects made again at every batch (the loss tracker's
update, the optimizer's step, the compiled metrics' updates). A program's model (its ``call``) and its own
``compute_loss`` are let in as a hand-written loop lets a plain function in, their calls judged by the runner of
the program's loop plans (the interpreter, or CPython's execution/planned_loops.py); so is a program's own
``train_step`` (``test_step``), the whole body then, whose last batch of an epoch runs as written (the logs it
returns are the epoch's). What the rules refuse (a Python side effect, a branch, a value read into Python; a loss
tracked per output) leaves the epoch as written, as does a callback that hears each batch
(training.Trainer.planned_batches). The batch's tensors are the loop's items; the run's variables (the weights, the
optimizer's slots) are inputs as in every plan. Each epoch plans afresh (a callback between epochs may change what
the step's calls are: a learning rate)."""
from __future__ import annotations

from tapecli import kernels
from tapecli.interpreter import loop_plans
from tapecli.interpreter.loop_shape import LoopShape
from tapecli.interpreter.objects import EFFECT, PURE, RequestLog
from tapecli.runtime.context import current
from tapecli.runtime.values import Tensor

_REFUSED = (None, "a call of the step the plan does not take")


class _NoStepLimit:
    """The step limit of a plan of the library's step: none of its own (each batch is a step as it is taken)."""

    max_steps = float("inf")


_NO_STEP_LIMIT = _NoStepLimit()


class _Batch:
    """A batch as a plan's scope: its tensors by name (``vars``)."""

    def __init__(self, tensors: list):
        self.vars = {f"batch{i}": t for i, t in enumerate(tensors)}


class BatchPlans:
    """One epoch's batches as a planned loop (``count`` of them; too few or not known: as written), and the
    runner its plan asks (what ``interpreter/loop_plans.py`` asks of the interpreter): the library step's calls
    answered here; the program's code the step lets in (``program``) answered by ``runner``, the runner of the
    program's loop plans (the interpreter, CPython's ProgramLoops; None: the step lets none in). Where the step is
    the program's (``own_step``), the epoch's last batch runs as written: the logs it returns are the epoch's."""

    def __init__(self, count: int | None, runner=None, own_step: bool = False):
        self.ctx = current()
        self.library_requests = RequestLog()    # (none is made: the library's gradient is no request of the program's)
        self.count = count
        self.runner = runner
        self.own_step = own_step
        self.planner = None
        self.names = None           # the batch tensors' names, from the first batch
        self.kind = _REFUSED        # what the call the step is making now is to the plan

    def run(self, index: int, batch, body):
        """Batch ``index`` (its data: x, y, sample weight) through ``body()``, as written, traced or planned; what
        ``body()`` returned where it ran as written (a program's step's logs), else None."""
        tensors = _tensors(batch)
        if index == 0 and self.count is not None and tensors is not None:
            self.names = tuple(f"batch{i}" for i in range(len(tensors)))
            self.planner = loop_plans.planner(self, LoopShape(self.names, (), []), range(self.count), None)
        planner = self.planner
        if planner is None or tensors is None or len(tensors) != len(self.names) \
                or self.own_step and index == self.count - 1:
            self.planner = None
            return body()
        traced = body if self.runner is None else lambda: self.runner.traced(body)
        planner.run(index, lambda scope: traced(), _Batch(tensors))
        if planner.failed:
            self.planner = None
        return None

    # ------------------------------------------------------------------ the calls of the step
    def pure(self, kind, f, *args):
        """``f(*args)``, a call the plan makes again by its kernels where ``kind(tracked)`` (of the plan's
        recorder's ``tracked``) says PURE; None refuses the plan."""
        observer = self.ctx.mode.observer
        if observer is None:
            return f(*args)
        found = kind(observer.tracked)
        if observer.packs(args, {}):
            found = None        # (a list of the plan's tensors, packed in Python: as the interpreter's rule)
        return self._observed(observer, (found, f), f, args)

    def effect(self, callee, f, *args):
        """``f(*args)``, a call that changes state, made again at every planned batch (``callee``: what names it
        to a plan, the same object at every batch; an optimizer's method gives the plan's faster call)."""
        observer = self.ctx.mode.observer
        if observer is None:
            return f(*args)
        return self._observed(observer, (EFFECT, callee), f, args)

    def program(self, function, call):
        """``call()``, which runs the program's ``function`` (its model's ``train_step``, ``compute_loss``, its
        model itself: its ``call``), let in where the runner lets a call of ``function`` in (a plain function:
        its own calls then come to the plan one by one, judged by the runner)."""
        observer = self.ctx.mode.observer
        if observer is None:
            return call()
        kind = self.runner.call_kind(observer, function, [], {}) if self.runner is not None else _REFUSED
        return self._observed(observer, kind, call, ())

    def _observed(self, observer, kind, f, args):
        self.kind = kind if kind[0] is not None else _REFUSED
        try:
            return observer.observe(f, list(args), {}, None, _as_written)
        finally:
            self.kind = _REFUSED

    # ------------------------------------------------------------------ what a loop plan asks of its runner
    def call_kind(self, recorder, f, args, kwargs):
        """The step's call being made (``pure``, ``effect``, ``program``); a call of the program's code it let in,
        the runner's; any other refuses."""
        kind, self.kind = self.kind, _REFUSED
        if kind is _REFUSED and self.runner is not None:
            return self.runner.call_kind(recorder, f, args, kwargs)
        return kind

    def call(self, f, args, kwargs, node):
        """An effect made again: the step's own (no place in the program), or one of the program's code, by the
        runner (at its place)."""
        return f(*args, **kwargs) if node is None else self.runner.call(f, args, kwargs, node)

    def call_error(self, error, node):
        return error if node is None else self.runner.call_error(error, node)

    @property
    def requests(self):
        """The gradient requests of the program's code (the library's gradient is none)."""
        return self.library_requests if self.runner is None else self.runner.requests

    @property
    def steps(self) -> int:
        """The run's steps (the program's code counts its calls; the library's step none: the run counts each
        batch as it is taken, epochs.py)."""
        return 0 if self.runner is None else self.runner.steps

    def count_steps(self, steps: int) -> None:
        if self.runner is not None:
            self.runner.count_steps(steps)

    @property
    def limits(self):
        return _NO_STEP_LIMIT if self.runner is None else self.runner.limits

    @staticmethod
    def planning():
        return kernels.quiet()


class _AsWritten:
    """The step's calls made as they are (a step no plan takes)."""

    runner = None

    @staticmethod
    def program(function, call):
        return call()

    @staticmethod
    def pure(kind, f, *args):
        return f(*args)

    @staticmethod
    def effect(callee, f, *args):
        return f(*args)


AS_WRITTEN = _AsWritten()


def _as_written(f, args, kwargs, node):
    return f(*args, **kwargs)


def _tensors(batch) -> list | None:
    """The tensors of a batch (x, y, sample weight; lists and dicts of them), in order; None where it holds
    anything else (a PyDataset's NumPy arrays: a plan's effects take tensors)."""
    out = []

    def walk(value):
        if value is None:
            return True
        if value.__class__ is Tensor:
            out.append(value)
            return True
        if isinstance(value, (list, tuple)):
            return all(map(walk, value))
        if isinstance(value, dict):
            return all(map(walk, value.values()))
        return False
    return out if walk(batch) else None


def forward(calls, trainer, x, training: bool):
    """The step's forward pass: a pure call of a library model (``model_kind``), or the program's model let in
    (its ``call``: the runner judges it)."""
    model = trainer.model
    if calls.runner is None or getattr(model, "replay_kind", None) is not None:
        return calls.pure(model_kind(model, x), model.forward, x, training)
    return calls.program(trainer.program_model(), lambda: model.forward(x, training))


def loss(calls, trainer, x, y, y_pred, sample_weight, training: bool):
    """The step's loss: a pure call of the compiled loss (``loss_kind``), or the program's ``compute_loss`` let
    in."""
    own = getattr(trainer.model, "own_function", None)
    function = None if calls.runner is None or own is None else own("compute_loss")
    if function is None:
        return calls.pure(loss_kind(trainer, y), trainer.compute_loss, x, y, y_pred, sample_weight, training)
    return calls.program(function, lambda: trainer.compute_loss(x, y, y_pred, sample_weight, training))


def model_kind(model, x):
    """What the model's forward pass is to a plan: a library model's ``replay_kind`` (its layers audited), None
    for a program's (its ``call`` is the program's code)."""
    replay_kind = getattr(model, "replay_kind", None)
    return lambda tracked: None if replay_kind is None else replay_kind([x], {}, tracked)


def loss_kind(trainer, y):
    """What the compiled loss is to a plan: PURE where it is one library loss of one output whose ``replay_kind``
    takes these labels (one reading them into Python does not) and the model has no ``compute_loss`` of its own;
    None else (several outputs' losses are each tracked by a Mean: a state the loss's call changes)."""
    from tapecli.library.keras import losses as losses_mod
    compiled = trainer.loss

    def kind(tracked):
        if compiled is None or compiled.flat is None or len(compiled.flat) != 1 \
                or trainer.model.method("compute_loss") is not None:
            return None
        key, loss, _, _ = compiled.flat[0]
        return PURE if key is None and isinstance(loss, losses_mod.Loss) \
            and loss.replay_kind([y], {}, tracked) is PURE else None
    return kind
