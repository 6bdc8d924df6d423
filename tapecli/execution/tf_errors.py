"""``tf.errors`` of a TensorFlow program that CPython runs, and the library's errors as the program catches them.

The classes are real Python exception classes, TensorFlow's hierarchy (``InvalidArgumentError`` is an ``OpError``,
an ``Exception``, not a ``ValueError``). An error of the library that crosses into the program (a tf function, a
tensor's operator, a tape's method: :func:`catchable`) takes, in place, a class that is both its own and the
Python or TensorFlow class it stands for (a ShapeError is TensorFlow's InvalidArgumentError, a TdfValueError a
ValueError...), so ``except tf.errors.InvalidArgumentError`` or ``except ValueError`` catches it; one the program
does not catch ends the run as before (its kind, message, position and exit code are its own). The run's own stops
(limits, the guards' refusals, what the bridge does not give) take no such class: no handler runs for them."""
from __future__ import annotations

import types

from tapecli.errors import (CheckpointAssertionError, DtypeMismatch, EndOfSequence, GradientError, KernelPreconditionError,
                            KernelValueError, ShapeError, TapeError, TdfAssertionError, TdfError, TdfTypeError,
                            TdfValueError, UndefinedMethod)

# TensorFlow's status codes (tf.errors.OK ... tf.errors.UNAUTHENTICATED) and the class of each.
CODES = {"OK": 0, "CANCELLED": 1, "UNKNOWN": 2, "INVALID_ARGUMENT": 3, "DEADLINE_EXCEEDED": 4, "NOT_FOUND": 5,
         "ALREADY_EXISTS": 6, "PERMISSION_DENIED": 7, "RESOURCE_EXHAUSTED": 8, "FAILED_PRECONDITION": 9,
         "ABORTED": 10, "OUT_OF_RANGE": 11, "UNIMPLEMENTED": 12, "INTERNAL": 13, "UNAVAILABLE": 14,
         "DATA_LOSS": 15, "UNAUTHENTICATED": 16}


class OpError(Exception):
    """``tf.errors.OpError(node_def, op, message, error_code)``: the base of TensorFlow's runtime errors."""

    op = None
    node_def = None
    error_code = None
    message = ""

    def __init__(self, node_def, op, message, error_code=None, *args):
        super().__init__(message, *args)
        self.node_def, self.op, self.message = node_def, op, message
        if error_code is not None:
            self.error_code = error_code

    def __str__(self):
        return str(self.message)


def _error_class(name: str, code: str) -> type:
    def __init__(self, node_def, op, message, *args):
        OpError.__init__(self, node_def, op, message, CODES[code], *args)
    return type(name, (OpError,), {"__init__": __init__, "error_code": CODES[code], "__module__": "tensorflow.errors",
                                   "__doc__": f"tf.errors.{name} (status {code})."})


CLASSES = {"OpError": OpError, **{
    name: _error_class(name, code) for name, code in (
        ("CancelledError", "CANCELLED"), ("UnknownError", "UNKNOWN"), ("InvalidArgumentError", "INVALID_ARGUMENT"),
        ("DeadlineExceededError", "DEADLINE_EXCEEDED"), ("NotFoundError", "NOT_FOUND"),
        ("AlreadyExistsError", "ALREADY_EXISTS"), ("PermissionDeniedError", "PERMISSION_DENIED"),
        ("ResourceExhaustedError", "RESOURCE_EXHAUSTED"), ("FailedPreconditionError", "FAILED_PRECONDITION"),
        ("AbortedError", "ABORTED"), ("OutOfRangeError", "OUT_OF_RANGE"), ("UnimplementedError", "UNIMPLEMENTED"),
        ("InternalError", "INTERNAL"), ("UnavailableError", "UNAVAILABLE"), ("DataLossError", "DATA_LOSS"),
        ("UnauthenticatedError", "UNAUTHENTICATED"))}}
OpError.__module__ = "tensorflow.errors"

# The class a program catches each library error as (the first of its classes' MRO found here), as TensorFlow
# raises it: an op's invalid shapes or mixed dtypes and a failed tf.debugging assertion are InvalidArgumentError,
# a non-persistent tape asked twice a RuntimeError, a missing gradient a LookupError.
STANDS_FOR = {CheckpointAssertionError: AssertionError,
              DtypeMismatch: CLASSES["InvalidArgumentError"], ShapeError: CLASSES["InvalidArgumentError"],
              TdfAssertionError: CLASSES["InvalidArgumentError"], KernelValueError: CLASSES["InvalidArgumentError"],
              KernelPreconditionError: CLASSES["FailedPreconditionError"], EndOfSequence: CLASSES["OutOfRangeError"],
              TdfValueError: ValueError,
              TdfTypeError: TypeError, TapeError: RuntimeError, GradientError: LookupError,
              UndefinedMethod: NotImplementedError}
# What a program may read of a library error it caught (its other attributes are tapecli's: hint, line, ...).
ATTRIBUTES = frozenset({"args", "message", "op", "node_def", "error_code", "with_traceback", "add_note"})
# The names of those other attributes: read through the guard (execution/tensorflow.py, GUARDED).
HIDDEN = frozenset({name for cls in (*STANDS_FOR, TdfError) for name in dir(cls) if not name.startswith("_")} | {
    "hint", "line", "column", "end_column", "dtypes", "convert", "inputs", "spell_cast", "output",
    "expectations"}) - ATTRIBUTES

_made: dict[type, type] = {}


def catchable(error: TdfError) -> None:
    """Give ``error`` (in place: its traceback and position stay) the class that a program's ``except`` of the
    Python or TensorFlow class it stands for catches; an error that stands for none is left as it is."""
    kind = type(error)
    if getattr(kind, "_tf_catchable", False):
        return
    cls = _made.get(kind)
    if cls is None:
        program = next((STANDS_FOR[c] for c in kind.__mro__ if c in STANDS_FOR), None)
        if program is None:
            return
        attrs = {"__module__": program.__module__, "__doc__": kind.__doc__, "_tf_catchable": True}
        if issubclass(program, OpError):
            attrs.update(op=None, node_def=None)
        cls = _made[kind] = type(program.__name__, (kind, program), attrs)
        cls.__qualname__ = program.__name__
    error.__class__ = cls


def is_catchable(error: BaseException) -> bool:
    """Whether a program's handler may run for ``error`` (sandbox.caught): any but tapecli's own stops."""
    return not isinstance(error, TdfError) or getattr(type(error), "_tf_catchable", False)


def errors_module() -> types.ModuleType:
    """A run's ``tf.errors``: the classes and the status codes."""
    module = types.ModuleType("tensorflow.errors")
    module.__dict__.update(CLASSES)
    module.__dict__.update(CODES)
    return module
