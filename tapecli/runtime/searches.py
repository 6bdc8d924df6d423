"""Searches of regular expressions bounded in time (``re`` for programs, tf.strings' regex ops).

One search of a backtracking pattern (``(a+)+$`` on a long string) can run for years inside one C call, where no
step of the run's is counted and the command line's watchdog cannot run (the call holds the GIL). But CPython's
regular-expression engine looks at the process's signals as it backtracks (``_sre`` calls
``PyErr_CheckSignals``), so a search runs under a timer: SIGALRM after ``SEARCH_SECONDS`` (or the run's
TAPECLI_MAX_SECONDS, if that ends sooner) raises a LimitError out of the engine. Signals reach the main thread
alone: elsewhere (a run in a thread of the library's user) a search is refused."""
from __future__ import annotations

import signal
import threading
import time

from tapecli.errors import LimitError
from tapecli.runtime.context import current
from tapecli.runtime.limits import deadline_error

SEARCH_SECONDS = 10.0


class SearchTimer:
    """``with timer:`` runs a search under SIGALRM (the outermost of nested ones: a substitution's function
    searching again): past its time, a LimitError from inside the engine."""

    def __init__(self):
        self.depth = 0
        self.seconds = SEARCH_SECONDS

    def __enter__(self):
        if self.depth == 0:
            if threading.current_thread() is not threading.main_thread():
                raise LimitError("re searches only in the main thread: its time limit is a signal, which reaches "
                                 "the main thread alone", hint="run the program in the process's main thread")
            deadline = current().settings.deadline
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise deadline_error(current().settings)
            self.seconds = SEARCH_SECONDS if left is None else min(SEARCH_SECONDS, left)
            self.by_deadline = left is not None and left < SEARCH_SECONDS
            self.previous = signal.signal(signal.SIGALRM, self._expired)
            signal.setitimer(signal.ITIMER_REAL, self.seconds)
        self.depth += 1
        return self

    def __exit__(self, *exc):
        self.depth -= 1
        if self.depth == 0:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.previous)
        return False

    def _expired(self, signum, frame):
        if self.by_deadline:
            raise deadline_error(current().settings)
        raise LimitError(f"a regular expression searched for more than {self.seconds:g} s in one call",
                         hint="does the pattern backtrack without end (a repeat inside a repeat, as (a+)+)?")
