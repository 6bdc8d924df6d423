"""``re`` for programs: CPython's own engine, each search bounded in time (runtime/searches.py) and its results
in size. A substitution's result is weighed before it is made; the lists ``findall`` and ``split`` give, once they
exist (at most the string's characters again, and a slot each)."""
from __future__ import annotations

import re

from tapecli.runtime.limits import admit_pieces, admit_text
from tapecli.runtime.searches import SearchTimer

_NAMES = ("A", "ASCII", "DEBUG", "I", "IGNORECASE", "L", "LOCALE", "M", "MULTILINE", "NOFLAG", "S", "DOTALL", "U",
          "UNICODE", "X", "VERBOSE", "RegexFlag", "error", "Match", "escape", "purge")


def module(sandbox) -> dict:
    """The run's ``re``: its functions, and ``compile``'s patterns, search under the timer."""
    timer = SearchTimer()

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

    def __init__(self, compiled: re.Pattern, timer: SearchTimer, sandbox):
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
        elif callable(repl) and isinstance(string, (str, bytes)):
            repl = _weighed_replacement(repl, string)
        with self._timer:
            return self._compiled.subn(repl, string, count, *args, **kwargs)

    def __eq__(self, other):
        return isinstance(other, Pattern) and self._compiled == other._compiled

    def __hash__(self):
        return hash(self._compiled)

    def __repr__(self):
        return repr(self._compiled)


def _weighed_replacement(repl, string):
    """A substitution's function, what it returns weighed as it comes: the engine joins the pieces inside one C
    call, so the result (at most the string and every piece) is admitted before it is built."""
    made = 0

    def weighed(match):
        nonlocal made
        piece = repl(match)
        if isinstance(piece, (str, bytes)):
            made += len(piece)
            admit_text(len(string) + made, "re.sub()'s result", *(t for t in (string, piece) if isinstance(t, str)))
        return piece
    return weighed
