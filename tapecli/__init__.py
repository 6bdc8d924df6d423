"""tapecli: gradients of small tensor programs, with tf.GradientTape's semantics.

The library API (README, "Library"): ``tapecli.run(path_or_source, sets=None, dtype=None)`` returns a
:class:`tapecli.api.Result`; errors raise :class:`TdfError` subclasses or :class:`UsageError`.
"""
import os

from tapecli.version import __version__

# OpenBLAS's idle threads spin for a while after each product before they sleep. On a machine with a core to
# spare, spinning is what makes its threads pay: a Keras CNN's training loop (products of 6 to 36 million
# flops between pooling and elementwise kernels) ran its planned iterations up to 7% faster (2.15-2.31 ->
# 2.01-2.05 ms) with them spinning than with them asleep after each product. On a machine whose cores are all
# busy with other work, a spinning thread takes the CPU the run needs next (a 1000 x 1000 jacobian: 45 ms
# with the spin, 20 ms without, at a load average of 5.7 on 2 cores). So they spin for 2^24 cycles (a few
# ms: the gaps of a training step) where a core is free when tapecli is imported, and sleep at once
# otherwise. Read when NumPy loads OpenBLAS: here, before anything imports NumPy. Only speed depends on it:
# which products run on several threads does not (kernels/blas.py).
_SPINNING, _ASLEEP = "24", "4"


def _openblas_thread_timeout(loadavg: str, cores: int) -> str:
    """OPENBLAS_THREAD_TIMEOUT for a machine of ``cores`` usable cores whose ``/proc/loadavg`` reads
    ``loadavg``: spinning (_SPINNING) where a core was free over the last minute (its load average below the cores) and
    the entities runnable now, this process among them, are no more than the cores (one more, a process
    starting or ending beside this one, showed in up to a quarter of the reads on an idle 2-core machine), else
    asleep (_ASLEEP)."""
    try:
        fields = loadavg.split()
        average, running = float(fields[0]), int(fields[3].split("/")[0])
    except (IndexError, ValueError):
        return _ASLEEP
    return _SPINNING if running <= cores and average < cores else _ASLEEP


def _machine_thread_timeout() -> str:
    try:
        with open("/proc/loadavg") as file:
            loadavg = file.read()
        cores = len(os.sched_getaffinity(0))
    except (OSError, AttributeError):          # (no /proc or no affinity: not Linux)
        return _ASLEEP
    return _openblas_thread_timeout(loadavg, cores)


if "OPENBLAS_THREAD_TIMEOUT" not in os.environ:
    os.environ["OPENBLAS_THREAD_TIMEOUT"] = _machine_thread_timeout()

__all__ = ["run", "Result", "TdfWarning", "TdfError", "UsageError", "__version__"]


def __getattr__(name):
    # The API is imported on first use: `tapecli --version` and the CLI's start-up stay light.
    if name in ("run", "Result", "TdfWarning"):
        from tapecli import api
        return getattr(api, name)
    if name in ("TdfError", "UsageError"):
        from tapecli import errors
        return getattr(errors, name)
    raise AttributeError(f"module 'tapecli' has no attribute {name!r}")
