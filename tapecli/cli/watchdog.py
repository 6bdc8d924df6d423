"""TAPECLI_MAX_SECONDS for the command line, inside one long call too.

The interpreter looks at the clock between steps (runtime/limits.check_deadline); one NumPy, BLAS or LAPACK
call (an einsum of four 250-vectors, the eigenvectors of a 2000 x 2000 matrix) runs for many seconds without
a step. While a command runs a program under a time limit, a daemon thread follows each run's deadline (the
run context's ``settings.deadline``, through ``context.observed``). When a run is still going
``GRACE_S`` after its deadline, the interpreter's own check had no chance to end it: the thread writes the
LimitError the command would have written (the JSON document under --json, else the error text on stderr),
at the line of the program being run when it is known, removes the temporaries of output files being
written (tools/outfile.py: their targets stay as they were) and ends the process with exit 3 (os._exit: the
C call cannot be interrupted, and nothing else is written). A lock makes one of the two paths write the
error: the run ending by itself (its result, or the interpreter's own LimitError) closes the watchdog first.
NumPy releases the GIL in its loops and LAPACK calls, so the thread runs meanwhile; a C call holding the GIL
ends before the thread can act."""
from __future__ import annotations

import contextlib
import os
import sys
import time
from _thread import get_ident
from typing import Callable

from tapecli.errors import LimitError

EXIT_PROGRAM = 3


class Watchdog:
    GRACE_S = 1.0       # after the deadline: the interpreter's own check, between steps, ends the run first

    def __init__(self, report: Callable[[LimitError], None], filename: str | None, source: str | None):
        """``report(error)``: write the error as the command would (it must not exit)."""
        import threading        # here, under a time limit: a run without one has no use for it (0.5 ms to import)
        self._report = report
        self._filename, self._source = filename, source
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._ctx = None
        self._closed = False
        self._streams = (sys.stdout, sys.stderr)     # the command's (a run may redirect sys.stdout meanwhile)
        self._thread_id = get_ident()
        self._pid = os.getpid()
        self._thread = threading.Thread(target=self._watch, name="tapecli-watchdog", daemon=True)

    def start(self) -> "Watchdog":
        self._thread.start()
        return self

    def attach(self, ctx) -> None:
        """A run begins (``context.begin_run``): follow its deadline. (Not in a forked worker: its parent's
        thread is not there.)"""
        if os.getpid() == self._pid and get_ident() == self._thread_id:
            with self._lock:
                self._ctx = ctx
            self._wake.set()

    def close(self) -> None:
        """The run is over: its result, or its error, is the command's to write."""
        with self._lock:
            self._closed, self._ctx = True, None
        self._wake.set()

    def join(self) -> None:
        """Wait for the closed thread to end (a process whose only thread is the main one ends without
        Python's teardown: process.end_without_teardown)."""
        self._thread.join(timeout=1.0)

    def _watch(self) -> None:
        while True:
            with self._lock:
                if self._closed:
                    return
                ctx = self._ctx
            deadline = ctx.settings.deadline if ctx is not None else None
            wait = None if deadline is None else deadline + self.GRACE_S - time.monotonic()
            if wait is None or wait > 0:
                self._wake.wait(wait)
                self._wake.clear()
                continue
            with self._lock:
                if not self._closed and self._ctx is ctx:
                    self._end(ctx)

    def _end(self, ctx) -> None:
        """Write the run's LimitError and end the process (under the lock: the run cannot write its own)."""
        from tapecli.runtime.limits import deadline_error
        from tapecli.tools.outfile import remove_temporaries
        error = deadline_error(ctx.settings)
        error.line, error.column, error.end_column = self._position(ctx)
        error.warnings = list(ctx.settings.warnings)
        sys.stdout, sys.stderr = self._streams          # (not the run's capture of what a program prints)
        try:
            self._report(error)
        except BaseException:       # (standard output closed or full: the exit code still says it)
            pass
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BaseException:
                pass
        remove_temporaries()
        os._exit(EXIT_PROGRAM)

    def _position(self, ctx) -> tuple[int | None, int | None, int | None]:
        """(line, column, end column) of what the run is doing: the program's innermost frame where CPython
        runs it (a program of Python alone), else the statement the interpreter runs (``settings.line``),
        pointed at from its first character."""
        frame = sys._current_frames().get(self._thread_id)
        while frame is not None:
            if self._filename is not None and frame.f_code.co_filename == self._filename:
                line, end_line, column, end_column = _instruction_position(frame)
                if column is None:
                    return line, None, None
                return line, column + 1, end_column + 1 if end_line == line and end_column is not None else None
            frame = frame.f_back
        line = ctx.settings.line
        if line is None or self._source is None or line > len(lines := self._source.splitlines()):
            return line, None, None
        text = lines[line - 1]
        return line, len(text) - len(text.lstrip()) + 1, None


def _instruction_position(frame) -> tuple:
    """(line, end line, column, end column) of the instruction ``frame`` runs (columns from 0 or None)."""
    positions = list(frame.f_code.co_positions())
    index = frame.f_lasti // 2
    return positions[index] if 0 <= index < len(positions) else (frame.f_lineno, frame.f_lineno, None, None)


@contextlib.contextmanager
def watching(max_seconds: float | None, report: Callable[[LimitError], None], filename: str | None,
             source: str | None):
    """Within the block, the runs of the calling thread end with their LimitError at their time limit, even
    inside one long call (nothing without a limit)."""
    if max_seconds is None:
        yield
        return
    from tapecli.runtime.context import observed
    watchdog = Watchdog(report, filename, source).start()
    try:
        with observed(watchdog.attach):
            yield
    finally:
        watchdog.close()
        watchdog.join()
