"""The run context: everything a run mutates, in one object per thread.

A run (``tapecli.api``) enters a fresh :class:`RunContext` with :func:`run_context`; the ops, tapes,
backward pass and interpreter read it with :func:`current`. Nothing else holds per-run state, so two
runs in two threads never see each other's tapes, warnings, provenance log or numerics checks.
"""
from __future__ import annotations

import contextlib
from _thread import _local as thread_local   # threading.local (importing threading: 0.5 ms of a small run)
import time
import weakref

import numpy as np

from tapecli.environment import setting
from tapecli.errors import UsageError
from tapecli.runtime.clock import RunClock
from tapecli.runtime.numerics import Numerics
from tapecli.runtime.provenance import Provenance


class Settings:
    """Per-run settings and diagnostics shared by the interpreter and the ops."""

    def __init__(self, float_dtype=np.float32, max_elements: int = 100_000_000, max_memory: int | None = None,
                 max_seconds: float | None = None):
        self.float_dtype = np.dtype(float_dtype)
        self.max_elements = max_elements
        self.max_memory = max_memory          # bytes of resident memory; None: no cap (a library call outside a run)
        # the resident size last read, plus the bytes of every array weighed since (limits.admit_bytes)
        self.resident_bound: int | None = None
        self.max_seconds = max_seconds        # TAPECLI_MAX_SECONDS, and when the run must end (time.monotonic())
        self.deadline = None if max_seconds is None else time.monotonic() + max_seconds
        # the run's step counter (the interpreter's or the sandbox's: limits.tick), which charges a step to the
        # step, time and memory budget; None: the clock alone (a library call outside a run)
        self.step = None
        self.line: int | None = None        # the statement being run, for records and warnings
        self.python_spelling = False        # a Python program (§11): messages spell t.watch(x), not watch x
        self.keep_requests = True           # False: the command reports no gradient request (run, bench)
        self.warnings: list[dict] = []
        self.said: set[str] = set()         # the messages of warn_once

    def warn(self, message: str, line: int | None = None) -> None:
        entry = {"line": self.line if line is None else line, "message": message}
        if entry not in self.warnings:
            self.warnings.append(entry)

    def warn_once(self, message: str) -> None:
        """A warning given once per run, at the line of the statement that first gives it."""
        self.warn_once_at(message, None)

    def warn_once_at(self, message: str, line: int | None) -> None:
        """A warning given once per run, at ``line`` (None: the line of the statement that first gives it)."""
        if message not in self.said:
            self.said.add(message)
            self.warn(message, line)


class Mode:
    """Which fast paths may run: one named answer per path, asked by that path (docs/architecture.md, "Fast
    paths and the Mode"). Computed once per run from TAPECLI_ACCEL (``accel``: 0 turns every path off, and the
    run takes the reference path alone), TAPECLI_FUSION, --explain and --check-numerics; a block that rules a
    path out switches it off for its length (:meth:`off`, :meth:`tracing`). What the kernels decide per call
    (TAPECLI_BACKEND=numba, a device, a recorder installed) the paths still ask the kernels.

    - ``compiled_closures``: the interpreter's hot nodes run as closures of their own (``interpreter/compiled.py``)
      rather than through their ``eval_``/``exec_`` methods, which stay the meaning;
    - ``plain_ops``: nothing logs or checks the ops (no --explain, no --check-numerics): ops on scalars may take
      ``ops/scalar.py``'s path, gradient rules may run on plain arrays, the backward sweep may run small rules
      compiled, statement records whole (``ops/statement``), and replay plans;
    - ``scalar_path``: while the interpreter runs (``Interpreter.run``): its generated scalar code
      (``ScalarSource``, ``scalar_loop``) and ``ops.scalar``'s path straight from its closures;
    - ``direct_calls``: a compiled call closure may call a builtin directly (off while a loop plan traces);
    - ``fusion``: large elementwise expressions may become one fused kernel (``tapecli/fusion``);
    - ``backward_plans``: a repeated backward pass may run as its plan (``autodiff/replay.py``);
    - ``loop_plans``: while the interpreter runs, a training loop's iterations may run as its plan
      (``interpreter/loop_plans.py``), where no tape is open;
    - ``plan_kernels``: a loop plan may compile its kernels (``kernels/plan_kernels.py``: the same bits), where
      its remaining iterations pay for them (TAPECLI_PLAN_KERNELS).

    ``observer`` is the loop plan's recorder while it traces an iteration (every call the body makes goes
    through it), None otherwise."""

    __slots__ = ("accel", "compiled_closures", "plain_ops", "scalar_path", "direct_calls", "fusion",
                 "backward_plans", "loop_plans", "plan_kernels", "observer")

    def __init__(self, *, accel: bool = True, fusion: bool = True, explain: bool = False,
                 check_numerics: bool = False, plan_kernels: bool = True):
        self.accel = accel
        self.compiled_closures = accel
        self.plain_ops = accel and not (explain or check_numerics)
        self.scalar_path = False
        self.direct_calls = accel
        self.fusion = accel and fusion and not check_numerics
        self.backward_plans = self.plain_ops
        self.loop_plans = False
        self.plan_kernels = accel and plan_kernels
        self.observer = None

    @classmethod
    def of_run(cls, *, explain: bool = False, check_numerics: bool = False, strict: bool = True) -> Mode:
        """The mode of a run: TAPECLI_ACCEL, TAPECLI_FUSION and TAPECLI_PLAN_KERNELS read here, once (``strict=False``:
        a value they do not accept reads as their default, for a thread's first context, made before any run
        checks the settings)."""
        try:
            accel, fusion = setting("TAPECLI_ACCEL", "1") != "0", setting("TAPECLI_FUSION", "1") != "0"
            plan_kernels = setting("TAPECLI_PLAN_KERNELS", "1") != "0"
        except UsageError:
            if strict:
                raise
            accel = fusion = plan_kernels = True
        return cls(accel=accel, fusion=fusion, explain=explain, check_numerics=check_numerics,
                   plan_kernels=plan_kernels)

    @contextlib.contextmanager
    def interpreting(self, numpy_quiet: bool, loop_plans: bool):
        """A runner runs the block: the interpreter's scalar path may run where the kernels leave small tensors to
        NumPy (``numpy_quiet``), its loop plans (and CPython's) where it allows them (``loop_plans``: no implicit
        gradient, no device)."""
        saved = self.scalar_path, self.loop_plans
        self.scalar_path = self.plain_ops and numpy_quiet
        self.loop_plans = self.plain_ops and loop_plans
        try:
            yield self
        finally:
            self.scalar_path, self.loop_plans = saved

    @contextlib.contextmanager
    def off(self, *paths: str):
        """The named paths switched off for the block, and back as they were after it."""
        saved = [getattr(self, path) for path in paths]
        for path in paths:
            setattr(self, path, False)
        try:
            yield self
        finally:
            for path, value in zip(paths, saved):
                setattr(self, path, value)

    @contextlib.contextmanager
    def tracing(self, observer):
        """A loop plan traces an iteration with ``observer``: the paths that compute outside the kernels
        (``scalar_path``) or call past the observer (``direct_calls``) are off meanwhile."""
        saved = self.observer
        self.observer = observer
        try:
            with self.off("scalar_path", "direct_calls"):
                yield self
        finally:
            self.observer = saved


# The seed a run's Python ``random`` starts from (a program gives the same numbers on every run; random.seed(n)
# changes them), as tapecli's own default generator starts from 0 (docs/language.md).
PYTHON_RANDOM_SEED = 0


class RunContext:
    """What one run mutates: settings and warnings, the open tapes (outermost first; a block opens one with
    ``runtime.tape.recording``), the tapes whose backward pass is running (innermost last), the --check-numerics
    state, the provenance log kept for ``explain``, ``observers``: those of the two the run keeps (the op stream's
    observers, ``runtime/observers.py``), how jacobians are computed, where kernels run (``device``: a
    ``tapecli.kernels.backends.Backend``, None for the CPU) and the open ``tf.name_scope`` names.
    ``updated_in_place`` counts the variables an optimizer stepped on its fast path (no tape open: slots
    updated in their own arrays). ``backward_plans`` holds what is known of the structures of the run's
    backward passes (``autodiff/replay.py``; None while none are to be built); ``backward_passes`` counts
    the run's backward passes and ``replayed`` those that ran as plans. ``variables`` holds the run's
    variables (weakly: a loop plan takes all their arrays as its inputs) and ``loop_replayed`` counts the
    loop iterations that ran as plans (``interpreter/loop_plans.py``). ``eager`` is what Python's operators on
tensors do in a TensorFlow program that CPython runs (``execution/tensorflow.py``), None in any other run:
there a tensor has no operators (the interpreter applies the ops itself); ``bridge`` is that run's Eager for the
whole run, also while the library's code runs (``eager`` is None then). ``functions`` counts the calls of
``tf.function``s under way (``tf.inside_function()``), ``graph_arguments`` what the parameters of one that
traces print as (by the id of their values: interpreter/objects.py, Traces.tracing), ``library_views`` the
program's view of each library object it holds on CPython's run (one, so ``is`` holds: execution/tf_values.py);
``constraints`` maps a
variable's id to the Keras constraint an optimizer applies to it after each step (a layer's
``kernel_constraint=``). ``mode`` says which fast paths may run (:class:`Mode`). ``python_random()`` is the
run's Python ``random`` (a program's module, Keras's default seeds), made at its first use. ``numpy_behavior`` is
what ``tf.experimental.numpy.experimental_enable_numpy_behavior()`` turned on (:class:`NumpyBehavior`), None
until a program calls it."""

    __slots__ = ("settings", "tapes", "running", "numerics", "provenance", "observers", "jacobian_mode", "device",
                 "name_scopes", "updated_in_place", "backward_plans", "backward_passes", "replayed",
                 "variables", "loop_replayed", "eager", "bridge", "functions", "constraints", "mode", "variable_slices",
                 "functions_eagerly", "clock", "graph_arguments", "library_views", "_python_random", "tf_random_state",
                 "keras_seed_generator", "seed_generators", "checkpoints", "program_running", "numpy_behavior", "tf_logger",
                 "run_logging", "counting_datasets", "dataset_pass", "runs_after", "keras_logits", "keras_floatx",
                 "keras_dtype_policy", "distribution", "mirroring", "mirrored_variables", "keras_registry", "tf1_graphs",
                 "tf1_sessions", "remapped", "keras_lambdas", "keras_unsafe")

    def __init__(self, *, float_dtype=np.float32, max_elements: int = 100_000_000, max_memory: int | None = None,
                 max_seconds: float | None = None, explain: bool = False, check_numerics: bool = False,
                 jacobian_mode: str = "auto", device=None, mode: Mode | None = None, runs_after: int = 0):
        self.settings = Settings(float_dtype, max_elements, max_memory, max_seconds)
        self.tapes: list = []
        self.running: list = []
        self.numerics = Numerics(enabled=check_numerics)
        self.provenance = Provenance(enabled=explain)
        # what watches the op stream, each called in this order (runtime/observers.py): the hot paths test only
        # whether the list is empty
        self.observers = [o for o in (self.provenance, self.numerics) if o.enabled]
        self.jacobian_mode = jacobian_mode
        self.device = device
        self.name_scopes: list[str] = []
        self.updated_in_place = 0
        self.backward_plans: dict = {}
        self.backward_passes = 0
        self.replayed = 0
        self.variables = weakref.WeakSet()
        self.loop_replayed = 0
        self.eager = self.bridge = None
        self.functions = 0
        self.graph_arguments: dict = {}
        self.library_views = weakref.WeakValueDictionary()
        self.constraints: dict = {}
        self.mode = mode or Mode.of_run(explain=explain, check_numerics=check_numerics)
        self.variable_slices = VariableSlices()
        self.functions_eagerly = False  # tf.config.run_functions_eagerly: tf.functions run as plain Python
        self.clock = RunClock()         # what the program's time module reads
        self._python_random = None
        self.tf_random_state = None     # TensorFlow's global seed and kernel states (library/draws.tf_random_state)
        self.keras_seed_generator = None        # Keras's global SeedGenerator (keras.random's unseeded draws)
        self.seed_generators = 0        # the SeedGenerators Keras named automatically (seed_generator_1, ...)
        self.checkpoints = None         # what tf.train.Checkpoint saved, in memory (library/tf_checkpoint.py)
        self.program_running = False    # a Python program's code runs (execution.run; execution/interfaces.py)
        self.numpy_behavior: NumpyBehavior | None = None
        self.tf_logger = None           # tf.get_logger()'s logger, made at its first use (library/tf_scopes.py)
        self.run_logging = None         # a CPython run's: the maker of its own logging module (execution/run_logging)
        self.counting_datasets = 0      # > 0 while a dataset runs for what TensorFlow knows ahead (library/data.py)
        self.dataset_pass = None        # the iteration of a dataset that an element is drawn for (library/data.py)
        self.keras_logits = None        # Keras's _keras_logits of its softmax's outputs (library/keras/activations.py)
        self.keras_floatx = None        # keras.config.set_floatx's dtype (None: the run's float dtype)
        self.keras_dtype_policy = None  # Keras's global DTypePolicy (library/keras/mixed_precision.py; None: floatx)
        self.distribution = None        # tf.distribute's scopes and replica contexts (library/tf_distribute.py)
        self.mirroring = False          # variables made now are a MirroredStrategy's (library/tf_distribute.py)
        self.mirrored_variables = None  # those made so (id -> weak reference): TensorFlow's MirroredVariables
        self.keras_registry = None      # keras.saving's registered objects (library/keras/saving.py)
        self.keras_lambdas = None       # the Python lambdas Lambda layers' configs name, by their code's stand-in
        self.keras_unsafe = False       # keras.config.enable_unsafe_deserialization() was called (keras/spatial.py)
        self.tf1_graphs = None          # TF1 graphs' default-graph stack, made at its first use (execution/tf_graphs)
        self.remapped = None            # what a tf.function's fused MatMul has seen so far (ops/remapper.py)
        self.tf1_sessions: list = []    # the default sessions (a Session's block), innermost last (tf_sessions.py)
        # the runs of the same program that this process makes after this one (``tapecli bench``'s): a loop plan's
        # compiled kernels, paid for once per process, serve their iterations too (interpreter/loop_plans.py)
        self.runs_after = runs_after

    def python_random(self):
        """The run's Python ``random.Random``, seeded 0 (PYTHON_RANDOM_SEED) as tapecli's other generators."""
        if self._python_random is None:
            import random
            self._python_random = random.Random(PYTHON_RANDOM_SEED)
        return self._python_random


class NumpyBehavior:
    """TensorFlow's NumPy behaviour, switched on for the rest of a run (as TensorFlow's is for its process):
    ``promotes``, whether tensors' operators promote mixed dtypes as NumPy does (dtype_conversion_mode "legacy");
    ``prefer_float32``, whether a Python float is read as a float32 rather than NumPy's float64; ``methods``, the
    NumPy methods tensors gain (``t.reshape``, ``t.ravel``...), each a function of the tensor and the call's
    arguments, given by the library that switches the behaviour on (library/tf_numpy.py)."""

    __slots__ = ("promotes", "prefer_float32", "methods")

    def __init__(self, promotes: bool, prefer_float32: bool, methods: dict):
        self.promotes = promotes
        self.prefer_float32 = prefer_float32
        self.methods = methods


class VariableSlices:
    """The tensors read as slices of variables (``v[0, 1]``), by tensor id, with their variable and key:
    TensorFlow gives such a tensor an ``assign`` of that slice (``v[0, 1].assign(5.0)``). The most recent
    ones only: a loop reading slices holds no more than ``KEPT``."""

    KEPT = 256

    def __init__(self):
        self.found: dict[int, tuple] = {}

    def remember(self, tensor, variable, key) -> None:
        self.found[tensor.id] = (variable, key)
        if len(self.found) > self.KEPT:
            del self.found[next(iter(self.found))]

    def of(self, tensor) -> tuple | None:
        return self.found.get(getattr(tensor, "id", None))


class _Current(thread_local):
    def __init__(self):
        # each thread starts with a context of its own (made before any run checks the settings)
        self.ctx = RunContext(mode=Mode.of_run(strict=False))
        self.observer = None          # called with each context begin_run makes in this thread (observed)


_CURRENT = _Current()


def current() -> RunContext:
    """The running thread's context."""
    return _CURRENT.ctx


def begin_run(**options) -> RunContext:
    """The single reset: a fresh context (options as :class:`RunContext`'s) becomes the calling
    thread's current one, and stays so after the run, for what reads its results."""
    ctx = _CURRENT.ctx = RunContext(**options)
    if _CURRENT.observer is not None:
        _CURRENT.observer(ctx)
    return ctx


@contextlib.contextmanager
def observed(observer):
    """Within the block, ``observer(ctx)`` is called with each run context that begin_run makes in the calling
    thread (the command line's watchdog follows each run's deadline: cli/watchdog.py)."""
    previous = _CURRENT.observer
    _CURRENT.observer = observer
    try:
        yield
    finally:
        _CURRENT.observer = previous


@contextlib.contextmanager
def run_context(**options):
    """Enter a fresh context for the calling thread (options as :class:`RunContext`'s); the previous
    one comes back on exit."""
    previous = _CURRENT.ctx
    ctx = _CURRENT.ctx = RunContext(**options)
    try:
        yield ctx
    finally:
        _CURRENT.ctx = previous
