"""The backend interface: where a run's kernels execute and where its arrays live.

A :class:`Backend` has a kernel table (``run(name, args, attrs)``: the kernel names of
``kernels.NUMPY_KERNELS``), makes and moves arrays (``asarray`` from the host, ``to_host``,
``zeros``/``ones``), says what it runs on (``describe()``, the ``"device"`` of the JSON documents)
and waits for queued work (``synchronize``). The run context holds the run's backend
(``RunContext.device``); ``kernels.run`` reads it once per ``quiet()`` block.

* :data:`CPU`: NumPy for small tensors, Numba for large ones (``kernels.run``'s own dispatch, the
  fast path: a small program never imports numba).
* ``cuda``: numba.cuda kernels on device arrays (``kernels/cuda``), imported only when asked for.
"""
from __future__ import annotations

from tapecli.kernels.interface import Backend


class CpuBackend(Backend):
    """NumPy for small tensors, Numba for large ones: ``tapecli.kernels.run``."""

    def run(self, name, args, attrs):
        from tapecli.kernels import run_on_host
        return run_on_host(name, args, attrs)

    @property
    def kernels(self):
        from tapecli.kernels import NUMPY_KERNELS
        return frozenset(NUMPY_KERNELS)


CPU = CpuBackend()


def get(device: str) -> Backend:
    """The backend of ``--device``: ``cpu``, or ``cuda`` (a :class:`tapecli.errors.UsageError` saying what
    is missing when there is no usable GPU)."""
    if device == "cpu":
        return CPU
    if device == "cuda":
        from tapecli.kernels.cuda import backend
        return backend()
    from tapecli.errors import UsageError
    raise UsageError(f"device must be cpu or cuda, got {device}")
