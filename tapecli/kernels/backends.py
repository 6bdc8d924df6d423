"""The backend interface: where a run's kernels execute and where its arrays live.

A :class:`Backend` runs kernels (``run(name, args, attrs)``: the kernel names of
``kernels.NUMPY_KERNELS``), makes and moves arrays (``asarray`` from the host, ``to_host``,
``zeros``/``ones``), says what it runs on (``describe()``, the ``"device"`` of the JSON documents)
and waits for queued work (``synchronize``). The run context holds the run's backend
(``RunContext.device``); ``kernels.run`` reads it once per ``quiet()`` block.

* the CPU: NumPy for small tensors, Numba for large ones (``kernels.run``'s own dispatch, the fast path: a
  small program never imports numba); a run on it holds no backend (``RunContext.device`` is None).
* ``cuda``: numba.cuda kernels on device arrays (``kernels/cuda``), imported only when asked for.
"""
from __future__ import annotations

from tapecli.kernels.interface import Backend

DEVICES = ("cpu", "cuda")


def check(device: str, spelled: str = "device") -> None:
    """A :class:`tapecli.errors.UsageError` unless tapecli runs on ``device`` (``--device``, ``tapecli.run``'s
    ``device``; ``spelled`` names it in the message)."""
    if device not in DEVICES:
        from tapecli.errors import UsageError
        raise UsageError(f"{spelled} must be cpu or cuda, got {device}")


def get(device: str) -> Backend | None:
    """The backend of ``--device``: None for ``cpu`` (``kernels.run``'s own dispatch), the cuda backend for
    ``cuda`` (a :class:`tapecli.errors.UsageError` saying what is missing when there is no usable GPU)."""
    check(device)
    if device == "cuda":
        from tapecli.kernels.cuda import backend
        return backend()
    return None
