"""The interpreter's recursion limit is the process's, not a run's: every change tapecli makes to it goes
through ``recursion_limit``, so that runs in several threads, each raising and restoring it, leave the
caller's limit as they found it (two threads saving and restoring it by hand can leave it raised)."""
from __future__ import annotations

import contextlib
import sys
from _thread import allocate_lock   # threading.Lock (importing threading: 0.5 ms of a small run)


class _ProcessLimit:
    def __init__(self):
        self.lock = allocate_lock()
        self.asked: list[tuple[object, int]] = []    # the open contexts' limits, in any thread; the newest holds
        self.caller = 0                                # the limit before the first of them opened

    @contextlib.contextmanager
    def at(self, limit: int):
        token = object()
        with self.lock:
            if not self.asked:
                self.caller = sys.getrecursionlimit()
            self.asked.append((token, limit))
            sys.setrecursionlimit(limit)
        try:
            yield
        finally:
            with self.lock:
                self.asked = [entry for entry in self.asked if entry[0] is not token]
                with contextlib.suppress(RecursionError):     # a lower limit than another thread's depth: keep it
                    sys.setrecursionlimit(self.asked[-1][1] if self.asked else self.caller)


    def move(self, old: int, new: int) -> None:
        """The newest open context asking for ``old`` asks for ``new`` from now on (a program's own
        ``sys.setrecursionlimit``, within the room its run gives it)."""
        with self.lock:
            found = next((i for i in range(len(self.asked) - 1, -1, -1) if self.asked[i][1] == old), None)
            if found is None or found == len(self.asked) - 1:
                sys.setrecursionlimit(new)          # (RecursionError: below the current depth, nothing changed)
            if found is not None:
                self.asked[found] = (self.asked[found][0], new)


_PROCESS_LIMIT = _ProcessLimit()


def move_recursion_limit(old: int, new: int) -> None:
    """Change the limit an open ``recursion_limit`` block set (``old``) to ``new``."""
    _PROCESS_LIMIT.move(old, new)


def recursion_limit(limit: int):
    """The recursion limit is ``limit`` inside the block, and what it was before when the last block open ends."""
    return _PROCESS_LIMIT.at(limit)


def frames() -> int:
    """How many frames the calling thread's stack holds."""
    frame, n = sys._getframe(), 0
    while frame is not None:
        frame, n = frame.f_back, n + 1
    return n
