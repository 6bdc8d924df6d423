"""The kernel layer: picks NumPy for small tensors and Numba for large ones.

Numba costs ~0.4 s to import, so it is imported only when a kernel it serves meets
a tensor of at least ``THRESHOLD`` elements. A kernel whose Numba kernel gives the NumPy
kernel's bits (``EXACT_NUMBA_KERNELS``) is Numba's from ``STARTED_THRESHOLD`` elements once
this process has started Numba (``numba_started``: another kernel paid for its start): which
backend serves it, a run's values are the same. ``TAPECLI_BACKEND=numpy|numba`` forces
one backend (the tests run the op table on both).

A run on a device (``--device cuda``) puts its :class:`~tapecli.kernels.backends.Backend` in the run
context; :func:`quiet` reads it once per block and :func:`run` hands it every kernel.

Floating-point warnings are off in every kernel (inf and nan are values here). A run
enters :func:`quiet` once, so that the per-call ``np.errstate`` of the NumPy kernels is
skipped: it cost more than the kernel itself on scalars.
"""
from __future__ import annotations

import contextlib
import os
import sys
from _thread import _local as thread_local   # threading.local (importing threading: 0.5 ms of a small run)

import numpy as np

from tapecli.environment import setting
from tapecli.runtime.context import current

from .numpy_kernels import FORMULAS, KERNELS as NUMPY_KERNELS, RAW_KERNELS as _RAW, _quiet, writes_out

RAW_NUMPY_KERNELS = _RAW   # without np.errstate: for callers inside quiet()

# Kernels that numba_kernels.py implements: filled by the op table (``register(..., numba=True)``
# on an op entry), so the set is one fact per op. Kernels the ops use but no op entry names
# (gradient helpers) are listed here.
NUMBA_KERNELS: set = set()
# Of those, the kernels whose Numba kernel gives the NumPy kernel's bits (``register(..., numba="exact")``)
EXACT_NUMBA_KERNELS: set = set()
# NumPy functions giving two kernels' results in one call, for a plan that makes both on the same arguments
# (a loss and, for its backward pass, its gradient): (first kernel, second kernel) -> function of the arguments
# giving (first's result, second's result), the bits each gives alone.
PAIRED: dict = {}
# The NumPy kernels that write their result into ``out=`` where given (numpy_kernels.writes_out)
OUT_KERNELS: set = {name for name, f in _RAW.items() if writes_out(f)}
# The kernels that a loop plan compiling its kernels may make compiled (plan_kernels.KERNELS', relu made with the
# bias added before it, the first of a pair of plan_kernels.PAIRS: plan_kernels imports numba)
PLAN_KERNELS = frozenset({"masked_grad", "sum", "relu", "sparse_softmax_xent"})


def register(name: str, numpy=None, numba: bool | str = False, paired=None, formula=None, arity=1) -> None:
    """Add an op's kernel, called by the op table (``tapecli.ops``) as it registers an entry: ``numpy``
    (arrays in, an array out) becomes the NumPy kernel ``name``; ``numba`` says that numba_kernels.py
    implements ``name`` too (``"exact"``: with the NumPy kernel's bits, EXACT_NUMBA_KERNELS); ``paired``:
    {second kernel: function}, entries of PAIRED with ``name`` first; ``formula`` (with ``arity`` inputs): the
    scalar formula the backends generate kernel ``name`` from (``formulas.py``) where no kernel of theirs is
    written by hand: all of them for an op with none, Numba's (and cuda's, where device_math has none) beside a
    ``numpy`` kernel. The kernels room never imports the ops: they call down into it."""
    if formula is not None:
        FORMULAS[name] = (formula, arity)
        numpy = _from_formula(name) if numpy is None else numpy
        numba = True
    if numpy is not None:
        _RAW[name] = numpy
        NUMPY_KERNELS[name] = _quiet(numpy)
        if writes_out(numpy):
            OUT_KERNELS.add(name)
        else:
            OUT_KERNELS.discard(name)
    if numba:
        NUMBA_KERNELS.add(name)
    if numba == "exact":
        EXACT_NUMBA_KERNELS.add(name)
    for second, both in (paired or {}).items():
        PAIRED[name, second] = both


def _from_formula(name: str):
    """Kernel ``name``'s NumPy kernel, made from its formula at its first call: formulas.py is imported
    then, not at a small program's start-up."""
    made = []

    def run(*args, **attrs):
        if not made:
            from . import formulas
            made.append(formulas.numpy_kernel(name))
            _RAW[name] = made[0]
            NUMPY_KERNELS[name] = _quiet(made[0])
        return made[0](*args, **attrs)
    run.__name__ = name
    return run


# Measured with benchmarks/kernel_threshold.py.
# Crossover (float32, warm, 2 cores): 1e4 elements for its kernel mix (sigmoid 1e3, masked_grad 1e4,
# sum 1e5; add, mul and tanh a tie at every size), but numba's first use in a process (~0.3 s:
# import, load the cached kernels) is repaid only after ~40 calls at 1e6 elements (~430 at 1e5).
THRESHOLD = setting("TAPECLI_NUMBA_THRESHOLD", 1_000_000)
# Once Numba has started, a kernel of EXACT_NUMBA_KERNELS pays for loading its compiled code (2-7 ms) in a few dozen
# calls from this size (benchmarks/cnn.py: 0.03 ms saved a call on its second pool's 124K elements, 0.15 ms on the
# windows' gradient of 557K, 0.4 ms on the bias gradient of 346K)
STARTED_THRESHOLD = 100_000

_NUMBA_WORD = "numba"
_NUMPY_WORD = "numpy"


def backend() -> str:
    mode = os.environ.get("TAPECLI_BACKEND", "auto")
    return mode if mode in ("numpy", "numba") else "auto"


def numba_forced() -> bool:
    """TAPECLI_BACKEND=numba (as read for the current run), or a run on a device: either way the small
    NumPy paths of the ops and the backward pass are off."""
    state = _DISPATCH
    return state.device is not None or (state.mode if state.depth else _raw_mode()) == _NUMBA_WORD


def device():
    """The backend of the running ``quiet()`` block when it is on a device, else None."""
    return _DISPATCH.device


def zeros(shape, dtype):
    """Zeros where the run's arrays live (the host, or the run's device)."""
    d = _DISPATCH.device
    return np.zeros(shape, dtype=dtype) if d is None else d.zeros(shape, dtype)


def ones(shape, dtype):
    d = _DISPATCH.device
    return np.ones(shape, dtype=dtype) if d is None else d.ones(shape, dtype)


def to_host(value) -> np.ndarray:
    """A kernel's result as a NumPy array (a device array is copied to the host)."""
    return value if value.__class__ is np.ndarray else np.asarray(value)


def _array(out) -> np.ndarray:
    """A NumPy kernel's result as an array: a string tensor's element (bytes, of a kernel on 0-d object arrays) a
    0-d object array, which ``np.asarray`` would make a fixed-width one that drops trailing NULs."""
    if out.__class__ is bytes:
        array = np.empty((), dtype=object)
        array[()] = out
        return array
    return np.asarray(out)


def _raw_mode():
    """TAPECLI_BACKEND as set now (inside quiet(), the value read when its block began is used)."""
    return os.environ.get("TAPECLI_BACKEND")


_numba_missing: str | None = None     # why numba could not be imported, once it failed


class _Dispatch(thread_local):
    """Per thread: how deep in quiet() blocks, TAPECLI_BACKEND as read when the outermost began, and the
    run's device backend (None on the CPU)."""
    depth = 0
    mode = None
    device = None
    recorder = None          # a trace.Recorder writing the kernel calls down (kernels.tracing)


_DISPATCH = _Dispatch()


class quiet:
    """Run kernels with floating-point warnings off for a whole block (a run, a backward pass, a loop plan's
    iteration). TAPECLI_BACKEND and the run context's device are read once at the start of the block. (A class:
    a generator's context manager cost a planned iteration as much as a small kernel.)"""

    __slots__ = ("errstate",)

    def __enter__(self) -> None:
        state = _DISPATCH
        self.errstate = np.errstate(all="ignore")
        self.errstate.__enter__()
        if not state.depth:
            state.mode = _raw_mode()
            dev = current().device
            state.device = dev if dev is not None and dev.on_device else None
        state.depth += 1

    def __exit__(self, *raised) -> None:
        state = _DISPATCH
        state.depth -= 1
        if not state.depth:
            state.device = None
        self.errstate.__exit__(*raised)


def numba_ready() -> bool:
    """Whether numba kernels can be used (imports numba on first call)."""
    global _numba_missing
    if _numba_missing is not None:
        return False
    try:
        from . import numba_kernels  # noqa: F401
    except ImportError as e:
        _numba_missing = str(e)
        return False
    return True


def numba_started() -> bool:
    """Whether this process has run a Numba kernel: numba imported and its compiler started, which a later kernel
    need not pay for again (its own load from the cache aside)."""
    support = sys.modules.get(f"{__name__}.numba_support")
    return support is not None and bool(support._READY)


def call(name: str, *args, **attrs) -> np.ndarray:
    return run(name, args, attrs)


def run(name: str, args, attrs: dict) -> np.ndarray:
    """``call(name, *args, **attrs)``, for callers that hold the arguments in a list (the ops)."""
    state = _DISPATCH
    if state.recorder is not None:
        return state.recorder.call(name, args, attrs, _run_unrecorded)
    if state.device is not None:
        return state.device.run(name, args, attrs)
    # the CPU backend, inlined (a call costs as much as a scalar kernel): as run_on_host
    if _numba_missing is None and name in NUMBA_KERNELS:
        mode = state.mode if state.depth else _raw_mode()
        if mode != _NUMPY_WORD:
            if mode == _NUMBA_WORD or _large(name, args):
                return _numba(name, args, attrs)
    if state.depth:
        out = _RAW[name](*args, **attrs) if attrs else _RAW[name](*args)
        # a 0-d result stays a NumPy scalar: the next kernel on it is several times faster than on a 0-d array
        return out if out.__class__ is np.ndarray or isinstance(out, np.generic) else _array(out)
    return _array(NUMPY_KERNELS[name](*args, **attrs))


def direct(name: str, args):
    """The NumPy function that ``run(name, args, attrs)`` calls as it is here (inside :func:`quiet`, on the
    CPU, nothing recording, NumPy chosen over Numba for these arguments), else None: a caller making the same
    call again and again (a backward plan) may call it itself, as ``run`` would (its result a NumPy array or
    scalar: ``np.asarray`` of anything else)."""
    state = _DISPATCH
    if not state.depth or state.device is not None or state.recorder is not None or _numba_serves(name, args):
        return None
    return _RAW[name]


def for_plan(function, args, attrs: dict):
    """``function`` (``direct``'s) as a loop plan calls it at every iteration on arguments laid out as ``args`` (the
    same classes, shapes, strides and dtypes: a plan checks its inputs' layouts, and its kernels make the same layouts
    from them) with these attributes, constants of the plan: the NumPy kernel's own function for such calls where it
    has one (its ``for_plan``: what it decides from the layouts decided once, the same bits), a function of the
    arguments alone (and ``out=``, where the kernel takes it); else ``function``."""
    make = getattr(function, "for_plan", None)
    return function if make is None else make(*args, **attrs) or function


def numpy_quiet() -> bool:
    """Whether a kernel on small inputs runs on NumPy with warnings off here: inside :func:`quiet`, off a
    device, Numba not forced (the ops may then compute NumPy scalars with Python's operators)."""
    state = _DISPATCH
    return state.depth > 0 and state.device is None and state.mode != _NUMBA_WORD and state.recorder is None


@contextlib.contextmanager
def tracing(recorder):
    """Write every kernel call of the block down on ``recorder`` (a ``trace.Recorder``); the shortcuts that
    compute small tensors outside ``run`` are off meanwhile (``numpy_quiet``)."""
    state = _DISPATCH
    outer, state.recorder = state.recorder, recorder
    try:
        yield recorder
    finally:
        state.recorder = outer


def recording() -> bool:
    """Whether a ``trace.Recorder`` is writing the kernel calls down (the ops then take no shortcut)."""
    return _DISPATCH.recorder is not None


def traced(value) -> bool:
    """Whether a ``trace.Recorder`` is writing the kernel calls down and ``value`` is one of its inputs or
    results (or a view of one): what is computed from it must be a kernel's, to be written down too."""
    recorder = _DISPATCH.recorder
    return recorder is not None and recorder.follows(value)


def checked(check, value, *params) -> None:
    """``check(value, *params)``, which raises on a value its caller refuses (a label out of range); while a
    recorder writes the kernel calls down and ``value`` is traced, the check is written down too, so that the
    trace, made again on other values, checks them again."""
    recorder = _DISPATCH.recorder
    if recorder is not None and recorder.follows(value):
        recorder.check(check, value, params)
    check(value, *params)


def drawn(draw, *params):
    """``draw(*params)``, an array of random draws from a generator among ``params``; while a recorder writes
    the kernel calls down, the draw is written down too, its array as a result of the trace: the trace, made
    again, draws again, in the order the calls as written draw."""
    value = draw(*params)
    recorder = _DISPATCH.recorder
    if recorder is not None:
        recorder.draw(draw, params, value)
    return value


def updated(update, state, value, *params) -> None:
    """``update(state, value, *params)``: a state's update from a traced array (a batch normalization's moving
    statistics from its batch's); while a recorder writes the kernel calls down, the update is written down
    too, so that the trace, made again, updates the state again from that iteration's array."""
    update(state, value, *params)
    recorder = _DISPATCH.recorder
    if recorder is not None:
        recorder.update(update, state, value, params)


def _run_unrecorded(name, args, attrs):
    state = _DISPATCH
    recorder, state.recorder = state.recorder, None
    try:
        return run(name, args, attrs)
    finally:
        state.recorder = recorder


def run_on_host(name, args, attrs):
    """The CPU backend: NumPy for small tensors, Numba for large ones (``run`` off a device; on a device, the
    ops of literals, whose values stay on the host)."""
    state = _DISPATCH
    if state.recorder is not None:
        return state.recorder.call(name, args, attrs, _run_unrecorded)
    if _numba_serves(name, args):
        return _numba(name, args, attrs)
    if state.depth:
        out = _RAW[name](*args, **attrs) if attrs else _RAW[name](*args)
        return out if out.__class__ is np.ndarray or isinstance(out, np.generic) else _array(out)
    return _array(NUMPY_KERNELS[name](*args, **attrs))


def _numba_serves(name, args) -> bool:
    """Whether the CPU backend gives this call to Numba: a kernel it implements, Numba importable, and
    TAPECLI_BACKEND=numba or an array of ``THRESHOLD`` elements or more (``run`` inlines the same test)."""
    if _numba_missing is not None or name not in NUMBA_KERNELS:
        return False
    state = _DISPATCH
    mode = state.mode if state.depth else _raw_mode()
    if mode == _NUMPY_WORD or _numpy_only(args):
        return False
    return mode == _NUMBA_WORD or _large(name, args)


def _large(name, args) -> bool:
    """Whether an array among a Numba kernel's arguments is large enough for Numba: ``THRESHOLD`` elements, or
    ``STARTED_THRESHOLD`` for a kernel of EXACT_NUMBA_KERNELS once this process has started Numba."""
    for a in args:
        if a.__class__ is np.ndarray and (a.size >= THRESHOLD or a.size >= STARTED_THRESHOLD
                                          and name in EXACT_NUMBA_KERNELS and numba_started()):
            return True
    return False


def _numpy_only(args) -> bool:
    """Whether a kernel's arguments hold what only NumPy's kernels serve: a string tensor's values (Python
    objects) or half floats (float16, and ml_dtypes' bfloat16: kind "V")."""
    return any(a.__class__ is np.ndarray and (a.dtype.hasobject or a.dtype == _HALF or a.dtype.kind == "V")
               for a in args)


_HALF = np.dtype(np.float16)


def _numba(name, args, attrs):
    global _numba_missing
    if _numpy_only(args):
        return run_on_host(name, args, attrs)
    try:
        from . import numba_kernels
    except ImportError as e:      # e.g. a numba that does not support the installed numpy
        _numba_missing = str(e)
        return run_on_host(name, args, attrs)
    return numba_kernels.call(name, *args, **attrs)
