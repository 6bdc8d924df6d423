"""Run limits: steps, elements, recursion depth, seconds and memory (docs/spec/CLI.md's defaults)."""
from __future__ import annotations

import contextlib
import math
import os
import sys
import time

import numpy as np

from tapecli.environment import setting
from tapecli.errors import LimitError
from tapecli.runtime.context import current


def _default_memory_cap() -> int:
    """Three quarters of physical memory (TAPECLI_MAX_MEMORY bytes overrides it)."""
    cap = setting("TAPECLI_MAX_MEMORY")
    if cap is not None:
        return cap
    try:
        return int(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") * 0.75)
    except (ValueError, OSError, AttributeError):
        return 16 << 30


def resident_bytes() -> int:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        import resource
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


# Below this many bytes an allocation is not weighed against the memory cap (reading the resident size
# costs microseconds); the interpreter's periodic check covers many small ones.
WEIGH_FROM = 1 << 20

# glibc gives the top of its heap back to the system once more than a few megabytes there are free (its trim
# threshold follows the largest block freed, up to 64 MB), and serves blocks over its mmap threshold (at most
# 32 MiB) with mappings of their own, unmapped when freed. So a program that makes and drops large arrays,
# again and again or in run after run of bench, sweep or check, faults in fresh pages each time: 5.6 ms of a
# 7.9 ms 1000 x 1000 jacobian, and on a virtual machine whose host reclaims the guest's free memory, runs of
# the 1e7 elementwise benchmark at 40-60 ms instead of 5-7 (its two kernel threads faulting in its 40 MB
# outputs). From the first large array on, every block comes from the heap (no mappings) and up to 128 MiB of
# freed heap is kept for reuse. Process-wide, as malloc is: set once per process. Memory kept this way is
# handed back (malloc_trim) before the memory cap ever refuses anything: see resident_within.
_KEEP_FREED = 128 << 20
_freed_memory_kept = False
_malloc_trim = None


def keep_freed_memory() -> None:
    global _freed_memory_kept, _malloc_trim
    _freed_memory_kept = True
    try:
        os.confstr("CS_GNU_LIBC_VERSION")       # glibc's mallopt only (others may lack it or mean other things)
        import ctypes
        libc = ctypes.CDLL(None)
        mallopt, malloc_trim = libc.mallopt, libc.malloc_trim
    except (ValueError, OSError, AttributeError):
        return
    m_trim_threshold, m_mmap_max = -1, -4
    if mallopt(m_mmap_max, 0) and mallopt(m_trim_threshold, _KEEP_FREED):
        _malloc_trim = malloc_trim


def before_large_array(nbytes: int) -> None:
    """Called before an array of ``nbytes`` is made: from the first of a megabyte or more on, freed memory is
    kept (keep_freed_memory), that array's included. (A 40 MB input loaded before the policy, in a mapping of
    its own, left the 1e7 elementwise benchmark's two-thread kernel slow in stretches: 40-60 ms instead of 5.)"""
    if nbytes >= WEIGH_FROM and not _freed_memory_kept:
        keep_freed_memory()


def resident_within(limit: int) -> int:
    """The resident size, for a check against ``limit``: above it, the freed memory kept for reuse (see
    keep_freed_memory) goes back to the system first and the size is read again, so that memory kept for
    speed never makes a LimitError."""
    used = resident_bytes()
    if used > limit and _malloc_trim is not None:
        _malloc_trim(0)
        used = resident_bytes()
    return used


def _data_bytes() -> int | None:
    """The process's data segment (VmData: its private writable memory, touched or not), or None unknown."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmData:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


@contextlib.contextmanager
def data_bounded(max_memory: int | None):
    """Within the block, the process's data segment may grow by at most twice ``max_memory`` (RLIMIT_DATA):
    an allocation no gate weighs (``np.ndarray(shape)`` called as a class, a C library's own buffers) fails
    with a MemoryError, which is the program's error, where it would take memory past the cap unseen.
    Twice: the cap is on resident memory, and the data segment also counts what is reserved and never
    touched (thread stacks, malloc's arenas). Process-wide, so the command line sets it around one run."""
    try:
        import resource
        soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    except (ImportError, AttributeError, ValueError, OSError):
        soft = hard = None
    data = _data_bytes()
    if max_memory is None or data is None or soft is None:
        yield
        return
    bound = data + 2 * max_memory
    if hard != resource.RLIM_INFINITY:
        bound = min(bound, hard)
    if soft != resource.RLIM_INFINITY and soft <= bound:
        yield
        return
    resource.setrlimit(resource.RLIMIT_DATA, (bound, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_DATA, (soft, hard))


def admit(elements: int, itemsize: int, what: str, allocated: bool = False) -> None:
    """The gate every tensor passes as it is made (kernels' results, constructors, --set values,
    jacobians and hessians, rendered values): --max-elements, and the memory cap for a large one.
    ``allocated``: the array exists already (a kernel's result), so the resident size includes it."""
    admit_bytes(elements, elements * itemsize, what, allocated)


def admit_bytes(elements: int, nbytes: int, what: str, allocated: bool = False) -> None:
    """admit for ``elements`` that take ``nbytes`` in all (strings, lists of new strings)."""
    settings = current().settings
    if elements > settings.max_elements:
        raise LimitError(f"{what} would have {elements:,} elements, over the limit of {settings.max_elements:,}",
                         hint="raise it with --max-elements N")
    before_large_array(nbytes)
    if settings.max_memory is not None and nbytes >= WEIGH_FROM:
        # Reading the resident size costs up to ~90 µs (a CNN's step weighed 15 arrays): while the size
        # last read plus every array weighed since (none counted as freed) stays under half the cap, the
        # array is admitted without a read. Other growth (small arrays, objects) has the other half, and the
        # interpreter's periodic check reads the size again.
        bound = settings.resident_bound
        if bound is not None and bound + nbytes <= settings.max_memory // 2:
            settings.resident_bound = bound + nbytes
            return
        extra = 0 if allocated else nbytes
        used = settings.resident_bound = resident_within(settings.max_memory - extra) + extra
        if used > settings.max_memory:
            raise LimitError(f"{what} would bring the memory in use to {used / 2**30:.2f} GiB, over the memory limit of "
                             f"{settings.max_memory / 2**30:.2f} GiB", hint="raise it with TAPECLI_MAX_MEMORY=BYTES")


def check_deadline() -> None:
    """Past the run's TAPECLI_MAX_SECONDS: a LimitError. The interpreter's loops look every
    ``Limits.CHECK_EVERY`` steps; a device backend before each kernel launch (a launch of the CUDA
    simulator, which runs its threads in Python, can outlast many loop steps)."""
    settings = current().settings
    if settings.deadline is not None and time.monotonic() > settings.deadline:
        raise deadline_error(settings)


def deadline_error(settings) -> LimitError:
    """The LimitError of a run past its TAPECLI_MAX_SECONDS (the command line's watchdog writes the same)."""
    return LimitError(f"the program ran longer than {settings.max_seconds:g} s",
                      hint="is a loop endless? raise the limit with TAPECLI_MAX_SECONDS")


def tick() -> None:
    """One step of Python-level iteration run on the program's behalf outside the interpreter's own loops (an
    element drawn from a tf.data source, a Keras fit/evaluate/predict batch or epoch): charged to the run's
    step, time and memory budget by the run's own step counter (``Settings.step``: the interpreter's or the
    sandbox's, so --max-steps counts it as a loop step), or to the clock alone where no run counts steps."""
    settings = current().settings
    if settings.step is not None:
        settings.step()
    else:
        check_deadline()


# Strings and lists are weighed before they are built, by their real size: CPython stores a string's
# characters in the width of its widest one (1, 2 or 4 bytes), a list holds a pointer per item, and each new
# string of a list (split, list(s)) is an object with a header of its own.
LIST_SLOT = 8
STRING_OBJECT = sys.getsizeof("")
_WIDE_HEADER = sys.getsizeof("\xe9") - 2          # a non-ASCII string's header: its size less 2 one-byte chars


def char_bytes(*texts: str) -> int:
    """Bytes per character of a string built from ``texts`` (constant time: a string knows its width)."""
    return max([(sys.getsizeof(t) - _WIDE_HEADER) // (len(t) + 1) for t in texts if not t.isascii()], default=1)


def admit_text(length: int, what: str, *texts: str, width: int = 1) -> None:
    """The gate every string of the program passes before it is built: ``length`` characters as wide as the
    widest of ``texts`` (or ``width`` bytes, where a character comes from elsewhere), against --max-elements
    and the memory cap."""
    admit(length, max(width, char_bytes(*texts)), what)


def admit_pieces(count: int, text: str, what: str) -> None:
    """The gate for a list of ``count`` new strings cut from ``text`` (split, list(s), splitlines): a slot
    and a string object each, and the characters."""
    admit_bytes(count, count * (LIST_SLOT + STRING_OBJECT) + len(text) * char_bytes(text), what)


def admit_result(shape, dtype, what: str) -> None:
    """A result weighed against --max-elements and the memory cap before its kernel allocates it (a
    kernel's result is weighed again once it exists)."""
    admit(math.prod(shape), np.dtype(dtype).itemsize, what)


class Limits:
    CHECK_EVERY = 64        # loop steps between looks at the clock (~0.1 µs each)
    # Seconds between reads of the resident size (~10 µs each: every 64 steps of a fast loop was 12% of
    # its time). Large arrays are weighed as they are made (admit), so what grows between reads is small.
    MEMORY_EVERY_S = 0.005

    def __init__(self, max_steps=10_000_000, max_elements=100_000_000, max_depth=200, max_seconds=None,
                 max_memory=None):
        self.max_steps = max_steps
        self.max_elements = max_elements
        self.max_depth = max_depth
        self.max_seconds = max_seconds if max_seconds is not None else setting("TAPECLI_MAX_SECONDS")
        self.max_memory = max_memory if max_memory is not None else _default_memory_cap()


