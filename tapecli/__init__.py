"""tapecli: gradients of small tensor programs, with tf.GradientTape's semantics.

The library API (README, "Library"): ``tapecli.run(path_or_source, sets=None, dtype=None)`` returns a
:class:`tapecli.api.Result`; errors raise :class:`TdfError` subclasses or :class:`UsageError`.
"""
import os

from tapecli.version import __version__

# OpenBLAS's idle threads spin for ~2^28 cycles after each product before they sleep; on a machine whose
# cores are busy with other work, a spinning thread takes the CPU the run needs next (a 1000 x 1000
# jacobian: 45 ms with the spin, 20 ms without, at a load average of 5.7 on 2 cores; a 1024-wide MLP the
# same either way). Read when NumPy loads OpenBLAS: here, before anything imports NumPy.
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")

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
