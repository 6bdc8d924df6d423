"""``tapecli bench``: run a program repeatedly in one process and time it. A library: no printing.

The program is parsed and its ``--set`` inputs are read before any timing (the CLI binds them in
``Options.overrides``); each run is then the whole program, forward pass and every gradient/jacobian
request, on the runner ``tapecli run`` chooses, as ``tapecli run`` does it (without the provenance log that
``grad`` keeps to explain a None). The interpreter's program is parsed once; CPython's run of a Python or
TensorFlow program takes a syntax tree of its own, parsed before its clock starts (the guards are compiled into
a tree: the first run's is compiled, and the runs after it take that code, execution._program). ``warmup`` runs
are not timed. Between runs the previous
run's values are dropped and the garbage collector runs, outside the timer, so each run
starts from the same memory.

Peak memory is taken on one more run, after the timed ones, with ``tracemalloc`` on: the
most memory (NumPy arrays included, which NumPy reports to tracemalloc) held at once during
the run, above what was held before it. tracemalloc slows Python-heavy programs down, which is
why that run is not timed. ``peak_rss_bytes`` is the process's high-water resident set size
(``getrusage``), which also counts the interpreter, the libraries and the parsed program.
"""
from __future__ import annotations

import gc
import statistics
import time

from tapecli import execution
from tapecli.api import Options, run_program, run_python
from tapecli.frontend.parser import parse


class BenchResult:
    """Timings (seconds) of ``repeat`` runs after ``warmup`` untimed ones, and memory (bytes)."""

    def __init__(self, filename: str, repeat: int, warmup: int, times: list[float], peak_bytes: int | None,
                 peak_rss_bytes: int | None, last):
        self.filename = filename
        self.repeat = repeat
        self.warmup = warmup
        self.times = times
        self.peak_bytes = peak_bytes
        self.peak_rss_bytes = peak_rss_bytes
        self.last = last                 # the RunResult of the last run: its warnings and output

    @property
    def median_s(self) -> float:
        return statistics.median(self.times)

    @property
    def min_s(self) -> float:
        return min(self.times)

    @property
    def max_s(self) -> float:
        return max(self.times)

    @property
    def warnings(self) -> list[dict]:
        return self.last.warnings if self.last is not None else []

    def to_json(self) -> dict:
        return {"file": self.filename, "repeat": self.repeat, "warmup": self.warmup, "median_s": self.median_s,
                "min_s": self.min_s, "max_s": self.max_s, "times_s": list(self.times),
                "peak_bytes": self.peak_bytes, "peak_rss_bytes": self.peak_rss_bytes,
                "device": _device_doc(self.last), **self.backward_passes}

    @property
    def backward_passes(self) -> dict:
        """The last run's backward passes, how many of them ran as plans (autodiff/replay.py), and how many
        loop iterations ran as plans (interpreter/loop_plans.py)."""
        ctx = self.last.context if self.last is not None else None
        return {"backward_passes": ctx.backward_passes if ctx else 0, "backward_replayed": ctx.replayed if ctx else 0,
                "loop_replayed": ctx.loop_replayed if ctx else 0}


def _device_doc(result) -> dict:
    from tapecli.api import device_doc
    return device_doc(result.context) if result is not None else {"kind": "cpu"}


def bench_source(source: str, filename: str, options: Options | None = None, repeat: int = 10, warmup: int = 1,
                 memory: bool = True, progress=None) -> BenchResult:
    """Parse ``source`` once and run it ``warmup`` + ``repeat`` times (and once more for the memory peak);
    ``progress(1)`` after each run, where given (see runs())."""
    options = options or Options()
    if repeat < 1 or warmup < 0:
        from tapecli.errors import UsageError
        raise UsageError("--repeat must be at least 1 and --warmup at least 0")
    on_cpython = _python_tree(source, filename, options) is not None
    program = None if on_cpython else parse(source, filename)
    total = runs(repeat, warmup, memory)

    def prepared(run: int):
        """The run, ready to start (each knows how many of the same program follow it): a program CPython runs
        takes a syntax tree of its own, since the guards are compiled into the tree."""
        options_of = options.replace(runs_after=total - 1 - run, keep_requests=False)   # (it reports none)
        if on_cpython:
            tree = _python_tree(source, filename, options)
            return lambda: run_python(tree, source, filename, options_of)
        return lambda: run_program(program, filename, options_of)
    result = None
    for run in range(warmup):
        result = prepared(run)()
        if progress:
            progress(1)
    times = []
    for run in range(warmup, warmup + repeat):
        result = None
        gc.collect()
        once = prepared(run)
        start = time.perf_counter()
        result = once()
        _synchronize(result)            # a device's queued kernels are part of the run
        times.append(time.perf_counter() - start)
        if progress:
            progress(1)
    peak = None
    if memory:
        result = None
        gc.collect()
        peak, result = _traced_peak(prepared(total - 1))
        if progress:
            progress(1)
    return BenchResult(filename, repeat, warmup, times, peak, _max_rss(), result)


def _python_tree(source: str, filename: str, options: Options):
    """The program's syntax tree where ``run`` has CPython run it (execution.python_only), else None."""
    if options.of or options.overrides:
        return None
    return execution.python_only(source, filename, options.limits.max_memory)


def runs(repeat: int, warmup: int, memory: bool = True) -> int:
    """How many runs bench_source makes (for a progress bar)."""
    return warmup + repeat + (1 if memory else 0)


def _synchronize(result) -> None:
    """Wait for the run's device (if any) to finish its kernels before the clock is read."""
    device = result.context.device
    if device is not None:
        device.synchronize()


def _traced_peak(run):
    """(bytes held at the peak of ``run()`` above those held before it, its result)."""
    import tracemalloc
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        result = run()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        if not was_tracing:
            tracemalloc.stop()
    return max(0, peak - before), result


def _max_rss() -> int | None:
    """The process's peak resident set size in bytes (None where getrusage is missing)."""
    try:
        import resource
    except ImportError:       # Windows
        return None
    import sys
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(rss if sys.platform == "darwin" else rss * 1024)     # macOS: bytes; Linux: KiB
