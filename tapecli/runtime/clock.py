"""The run's clock, which a program's ``time`` reads (on CPython and on the interpreter alike): it starts at
2024-01-01 00:00:00 UTC and moves one millisecond at each reading (and by a sleep's seconds, which returns at
once), so a program's timings print and never divide by zero, and its output is the same on every run and
machine. Reading it warns once that it is not the machine's."""
from __future__ import annotations

CLOCK_START = 1_704_067_200.0
CLOCK_STEP = 0.001
CLOCK_WARNING = ("time's clock is tapecli's own (it starts at 2024-01-01 00:00 UTC and moves 1 ms at each "
                 "reading): a run prints the same on every machine; `tapecli bench` times a program")


class RunClock:
    def __init__(self):
        self.now = CLOCK_START

    def read(self, settings, line: int | None) -> float:
        settings.warn_once_at(CLOCK_WARNING, line)
        return self.stamp()

    def stamp(self) -> float:
        """A reading a library takes for its records (a log record's time), which warns where it is shown."""
        self.now += CLOCK_STEP
        return self.now

    def sleep(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError("sleep length must be non-negative")
        self.now += seconds
