"""A run's own ``logging``: CPython's module itself, its code executed afresh into a new module object for each run
that imports it, so that the root logger, its level and handlers, the manager's loggers, basicConfig's once-only
flag, the disable level and added level names are the run's alone and go when the run ends (the process's
``logging``, tapecli's and a test runner's, is never touched; two runs never see each other's).

What the module's code reaches outside itself is handed to it by its imports: ``sys.stderr`` and ``sys.stdout``
are the run's streams (a StreamHandler without a stream, basicConfig and the last-resort handler write to the
run's standard error), ``time`` is the run's clock, ``warnings`` the run's. ``atexit`` and
``os.register_at_fork`` are left out, so nothing outside the run holds it (its handlers write to the run's streams,
which need no flushing at exit). What would reach files, frames or unguarded formatting is the run's own:
FileHandler is refused; findCaller, tracebacks and stacks read the program's frames alone (what CPython shows of a
script's: the run's ``traceback`` prints them, run_traceback.py); ``%``-formats are weighed, and ``{}``-formats
read their fields' attributes through the guard; the patterns its format checks keep as class attributes only
search."""
from __future__ import annotations

import functools
import io
import os
import re
import sys
import time
import types

from tapecli.execution import weigh
from tapecli.execution.fresh_module import executed
from tapecli.execution.run_traceback import ProgramFrames
from tapecli.runtime.clock import CLOCK_WARNING
from tapecli.runtime.context import current


def make(sandbox, run_warn, run_traceback: types.ModuleType, tensorflow: bool) -> types.ModuleType:
    """The run's ``logging`` module; a TensorFlow program's has TensorFlow's logger "tensorflow" as importing
    TensorFlow leaves it (tf_logging.get_logger: a handler of its own writing to standard error in BASIC_FORMAT,
    made while the root logger has none, so that a program's basicConfig later shows its records twice)."""
    from tapecli.execution.sandbox import SafeFormatter, program_frame

    frames = ProgramFrames(sandbox.filename)

    def stamp() -> float:       # a record's time: the run's clock, which warns where a format shows it
        return current().clock.stamp()

    def local_time(seconds=None):
        frame = program_frame(sandbox.filename)
        current().settings.warn_once_at(CLOCK_WARNING, frame.f_lineno if frame is not None else None)
        return time.gmtime(stamp() if seconds is None else seconds)

    stand_ins = {
        "sys": types.SimpleNamespace(stderr=sandbox.stderr, stdout=sandbox.stdout, exc_info=sys.exc_info,
                                     _getframe=sys._getframe, modules={}),
        "os": types.SimpleNamespace(path=os.path, fspath=os.fspath, getpid=lambda: None),
        # (a converter is a class attribute of Formatter: a staticmethod, as C's time.localtime binds no self)
        "time": types.SimpleNamespace(time=stamp, localtime=staticmethod(local_time), gmtime=staticmethod(local_time),
                                      strftime=time.strftime),
        "traceback": run_traceback,
        "warnings": types.SimpleNamespace(warn=lambda message, category=None, stacklevel=1, source=None:
                                          run_warn(message, category)),
        "atexit": types.SimpleNamespace(register=lambda *args, **kwargs: None),
        # its format checks' patterns, class attributes a program reads: their searches alone (a substitution's
        # result would not be weighed)
        "re": types.SimpleNamespace(compile=lambda pattern, flags=0: _Searching(re.compile(pattern, flags)), I=re.I),
    }

    module = executed("logging", stand_ins)
    _own_methods(module, sandbox, frames, run_traceback, SafeFormatter)
    if tensorflow:
        handler = module.StreamHandler()
        handler.setFormatter(module.Formatter(module.BASIC_FORMAT, None))
        module.getLogger("tensorflow").addHandler(handler)
    return module


def _own_methods(module, sandbox, frames: ProgramFrames, run_traceback: types.ModuleType, safe_formatter) -> None:
    """What the run's logging does in its own way (the module docstring)."""
    from tapecli.execution.modules import refused_name

    def get_message(record):
        message = str(record.msg)
        return weigh.binary("Mod", message, record.args) if record.args else message

    def percent_format(style, record):
        values = style._defaults | record.__dict__ if style._defaults else record.__dict__
        return weigh.binary("Mod", style._fmt, values)

    def braces_format(style, record):
        values = style._defaults | record.__dict__ if style._defaults else record.__dict__
        return safe_formatter(sandbox).vformat(style._fmt, (), values)

    def find_caller(logger, stack_info=False, stacklevel=1):
        """The program's frame ``stacklevel`` frames out (its outermost where the stack is not that deep, as
        CPython's), and with ``stack_info`` the stack up to it."""
        found = frames.on_stack(sys._getframe(1))
        if not found:
            return "(unknown file)", 0, "(unknown function)", None
        frame = found[min(max(stacklevel, 1), len(found)) - 1]
        stack = None
        if stack_info:
            text = io.StringIO()
            text.write("Stack (most recent call last):\n")
            run_traceback.print_stack(frame, file=text)
            stack = text.getvalue().removesuffix("\n")
        return frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name, stack

    def handle_error(handler, record):
        """CPython's report of a record its handler could not emit (a %-format that does not fit its arguments),
        on the run's standard error, the program's frames alone in its traceback and call stack. The run's own
        stops (a limit, a guard's refusal) are no record's error: they end the run."""
        sandbox.caught()
        stream = module.sys.stderr
        if not module.raiseExceptions:
            return
        kind, error, tb = sys.exc_info()
        stream.write("--- Logging error ---\n")
        run_traceback.print_exception(kind, error, tb, None, stream)
        stream.write("Call stack:\n")
        run_traceback.print_stack(file=stream)
        try:
            stream.write(f"Message: {record.msg!r}\nArguments: {record.args}\n")
        except RecursionError:
            raise
        except Exception:
            stream.write("Unable to print the message and arguments - possible formatting error.\n"
                         "Use the traceback above to help find the error.\n")

    real_basic_config = module.basicConfig

    @functools.wraps(real_basic_config)
    def basic_config(**kwargs):
        if "filename" in kwargs:
            raise refused_name("logging", "basicConfig(filename=...)", "it writes files")
        return real_basic_config(**kwargs)

    def file_handler(*args, **kwargs):
        raise refused_name("logging", "FileHandler", "it writes files")

    module.LogRecord.getMessage = get_message
    module.PercentStyle._format = percent_format
    module.StrFormatStyle._format = braces_format
    module.Logger.findCaller = find_caller
    module.Handler.handleError = handle_error
    module.basicConfig, module.FileHandler = basic_config, file_handler


class _Searching:
    """A pattern of logging's own (fixed, each search linear in its text) that only searches."""

    __slots__ = ("_compiled",)

    def __init__(self, compiled: re.Pattern):
        self._compiled = compiled

    def search(self, text):
        return self._compiled.search(text)

    def match(self, text):
        return self._compiled.match(text)
