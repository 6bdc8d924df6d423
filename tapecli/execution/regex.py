"""``re`` for programs: CPython's own engine, each search bounded in time and its results in size.

One search of a backtracking pattern (``(a+)+$`` on a long string) can run for years inside one C call, where no
step of the run's is counted and the command line's watchdog cannot run (the call holds the GIL). But CPython's
regular-expression engine looks at the process's signals as it backtracks (``_sre`` calls
``PyErr_CheckSignals``), so a search runs under a timer: SIGALRM after ``SEARCH_SECONDS`` (or the run's
TAPECLI_MAX_SECONDS, if that ends sooner) raises a LimitError out of the engine. Signals reach the main thread
alone: elsewhere (a run in a thread of the library's user) a search is refused. A substitution's result is
weighed before it is made; the lists ``findall`` and ``split`` give, once they exist (at most the string's
characters again, and a slot each)."""
from __future__ import annotations

import re
import signal
import threading
import time

from tapecli.errors import LimitError
from tapecli.runtime.context import current
from tapecli.runtime.limits import admit_pieces, admit_text, deadline_error

SEARCH_SECONDS = 10.0

_NAMES = ("A", "ASCII", "DEBUG", "I", "IGNORECASE", "L", "LOCALE", "M", "MULTILINE", "NOFLAG", "S", "DOTALL", "U",
          "UNICODE", "X", "VERBOSE", "RegexFlag", "error", "Match", "escape", "purge")


def module(sandbox) -> dict:
    """The run's ``re``: its functions, and ``compile``'s patterns, search under the timer."""
    timer = _Timer()

    def compile(pattern, flags=0):
        return pattern if isinstance(pattern, Pattern) else Pattern(re.compile(pattern, flags), timer, sandbox)

    def search(pattern, string, flags=0):
        return compile(pattern, flags).search(string)

    def match(pattern, string, flags=0):
        return compile(pattern, flags).match(string)

    def fullmatch(pattern, string, flags=0):
        return compile(pattern, flags).fullmatch(string)

    def findall(pattern, string, flags=0):
        return compile(pattern, flags).findall(string)

    def finditer(pattern, string, flags=0):
        return compile(pattern, flags).finditer(string)

    def split(pattern, string, maxsplit=0, flags=0):
        return compile(pattern, flags).split(string, maxsplit)

    def sub(pattern, repl, string, count=0, flags=0):
        return compile(pattern, flags).sub(repl, string, count)

    def subn(pattern, repl, string, count=0, flags=0):
        return compile(pattern, flags).subn(repl, string, count)

    return {**{name: getattr(re, name) for name in _NAMES}, "compile": compile, "search": search, "match": match,
            "fullmatch": fullmatch, "findall": findall, "finditer": finditer, "split": split, "sub": sub,
            "subn": subn, "Pattern": Pattern}


class Pattern:
    """A compiled pattern (``re.compile``'s): the engine's, each search under the run's timer. It holds its
    pattern, the timer and the sandbox's tick (a program reads any public attribute, never the sandbox)."""

    __slots__ = ("_compiled", "_timer", "_tick")

    def __init__(self, compiled: re.Pattern, timer: "_Timer", sandbox):
        self._compiled, self._timer, self._tick = compiled, timer, sandbox.tick

    pattern = property(lambda self: self._compiled.pattern)
    flags = property(lambda self: self._compiled.flags)
    groups = property(lambda self: self._compiled.groups)
    groupindex = property(lambda self: self._compiled.groupindex)

    def search(self, string, *args, **kwargs):
        with self._timer:
            return self._compiled.search(string, *args, **kwargs)

    def match(self, string, *args, **kwargs):
        with self._timer:
            return self._compiled.match(string, *args, **kwargs)

    def fullmatch(self, string, *args, **kwargs):
        with self._timer:
            return self._compiled.fullmatch(string, *args, **kwargs)

    def findall(self, string, *args, **kwargs):
        with self._timer:
            found = self._compiled.findall(string, *args, **kwargs)
        admit_pieces(len(found), string, "re.findall()'s result")
        return found

    def split(self, string, *args, **kwargs):
        with self._timer:
            found = self._compiled.split(string, *args, **kwargs)
        admit_pieces(len(found), string, "re.split()'s result")
        return found

    def finditer(self, string, *args, **kwargs):
        found = self._compiled.finditer(string, *args, **kwargs)
        while True:
            self._tick()
            with self._timer:
                match = next(found, None)
            if match is None:
                return
            yield match

    def sub(self, repl, string, count=0, *args, **kwargs):
        return self.subn(repl, string, count, *args, **kwargs)[0]

    def subn(self, repl, string, count=0, *args, **kwargs):
        if isinstance(repl, (str, bytes)) and isinstance(string, (str, bytes)):
            # Matches do not overlap: every group a template names is at most the whole string once over.
            literal, refs = len(repl), repl.count("\\" if isinstance(repl, str) else b"\\")
            admit_text(len(string) * (1 + refs) + (len(string) + 1) * literal, "re.sub()'s result",
                       *(t for t in (repl, string) if isinstance(t, str)))
        with self._timer:
            return self._compiled.subn(repl, string, count, *args, **kwargs)

    def __eq__(self, other):
        return isinstance(other, Pattern) and self._compiled == other._compiled

    def __hash__(self):
        return hash(self._compiled)

    def __repr__(self):
        return repr(self._compiled)


class _Timer:
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
