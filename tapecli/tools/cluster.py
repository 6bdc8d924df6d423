"""Where chunks of work run: in this process, in a local process pool (--workers N), or on a Dask
cluster (--scheduler ADDRESS, or TAPECLI_SCHEDULER; ``local:N`` starts a LocalCluster of N processes).

A chunk is a call ``fn(*args)`` of a module-level tapecli function returning plain data; results come
back in the order the chunks were given, whatever the order they finished in. A chunk that cannot be
computed (its worker was lost twice, the pool broke) comes back as a :class:`Lost` saying why, so the
caller reports it for each file or point of that chunk: nothing is dropped silently.

Dask (the optional ``dask`` extra) is imported only here, and only when a scheduler is asked for.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from tapecli.environment import setting
from tapecli.errors import UsageError
from tapecli.version import __version__

INSTALL = "pip install 'tapecli[dask]'"
DEFAULT_TIMEOUT_S = 10.0


@dataclass
class Lost:
    """A chunk whose result never came back: its worker was lost (``lost``), or the task raised."""
    message: str
    lost: bool = True


def scheduler_address(option: str | None) -> str | None:
    """--scheduler, else TAPECLI_SCHEDULER, else None."""
    return option or os.environ.get("TAPECLI_SCHEDULER") or None


def _timeout() -> float:
    return setting("TAPECLI_SCHEDULER_TIMEOUT", DEFAULT_TIMEOUT_S)


def worker_version() -> str:
    """Run on each worker: the tapecli version it imports."""
    from tapecli.version import __version__ as version
    return version


def check_versions(versions: dict, local: str = __version__) -> None:
    """Refuse workers that run another tapecli version, naming both."""
    other = {addr: v for addr, v in versions.items() if v != local}
    if other:
        addr, version = sorted(other.items())[0]
        raise UsageError(f"the Dask worker at {addr} runs tapecli {version}, but this is tapecli {local}; "
                         f"install the same version on the workers ({len(other)} of {len(versions)} differ)")


class Cluster:
    """A Dask client (and the LocalCluster it started, if any); a context manager that closes both."""

    def __init__(self, address: str):
        try:
            import distributed
        except ImportError:
            raise UsageError(f"--scheduler needs Dask's distributed scheduler, which is not installed: "
                             f"{INSTALL}") from None
        self.address, self.local = address, None
        timeout = _timeout()
        if address.startswith("local:"):
            count = address.partition(":")[2]
            if not count.isdigit() or int(count) < 1:
                raise UsageError(f"--scheduler {address}: expected local:N with N a number of worker processes")
            import dask
            import logging
            # A task whose worker dies is retried once (by the scheduler), then reported as lost.
            with dask.config.set({"distributed.scheduler.allowed-failures": 1}):
                self.local = distributed.LocalCluster(n_workers=int(count), threads_per_worker=1, processes=True,
                                                      host="127.0.0.1", dashboard_address=None,
                                                      worker_dashboard_address=None,
                                                      silence_logs=logging.CRITICAL)
            self.client = distributed.Client(self.local, timeout=timeout)
            self.client.wait_for_workers(int(count), timeout=max(timeout, 60))
        else:
            try:
                self.client = distributed.Client(address, timeout=timeout)
            except (OSError, TimeoutError, ValueError) as e:
                raise UsageError(f"--scheduler {address}: no Dask scheduler answered within {timeout:g} s "
                                 f"({type(e).__name__}); start one with `dask scheduler`, or check the "
                                 f"address (TAPECLI_SCHEDULER_TIMEOUT sets the wait)") from None
        try:
            versions = self.client.run(worker_version)
        except Exception as e:
            self.close()
            raise UsageError(f"--scheduler {address}: the workers cannot run tapecli ({type(e).__name__}: {e}); "
                             f"install tapecli {__version__} on them") from None
        if not versions:
            self.close()
            raise UsageError(f"--scheduler {address}: the scheduler has no workers; start some with "
                             f"`dask worker {address}`")
        try:
            check_versions(versions)
        except UsageError:
            self.close()
            raise
        self.workers = len(versions)

    def close(self):
        try:
            self.client.close()
        finally:
            if self.local is not None:
                self.local.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def map(self, fn, chunks: list[tuple], on_result=None) -> list:
        """``fn(*args)`` for each args in chunks, in order; a lost worker's chunk is submitted once more."""
        futures = [self.client.submit(fn, *args, pure=False) for args in chunks]
        out = []
        try:
            for index, fut in enumerate(futures):
                result = _gather(fut)
                if isinstance(result, Lost) and result.lost:      # once more, on whichever worker is left
                    fut.release()
                    result = _gather(self.client.submit(fn, *chunks[index], pure=False))
                    if isinstance(result, Lost):
                        result = Lost(f"{result.message} (tried twice)")
                out.append(result)
                if on_result is not None and on_result(index, result) is False:
                    break
        finally:
            for fut in futures:
                fut.cancel()
        return out


def _gather(fut):
    from distributed import CancelledError, KilledWorker
    from distributed.comm import CommClosedError
    try:
        return fut.result()
    except (KilledWorker, CommClosedError, CancelledError, OSError) as e:    # the worker was lost
        return Lost(f"the work did not come back from the Dask cluster: {type(e).__name__}: {e}")
    except Exception as e:  # the task raised (a bug in tapecli): said per file or point, not retried
        return Lost(f"internal error on a Dask worker: {type(e).__name__}: {e}. This is a bug in tapecli; "
                    f"please report it", lost=False)


def run_chunks(fn, chunks: list[tuple], workers: int = 1, cluster: Cluster | None = None, on_result=None) -> list:
    """``[fn(*args) for args in chunks]`` here, in a process pool of ``workers``, or on ``cluster``;
    ``on_result(index, result)`` after each in order (returning False stops early)."""
    if cluster is not None:
        return cluster.map(fn, chunks, on_result)
    out = []
    if workers <= 1:
        for index, args in enumerate(chunks):
            out.append(fn(*args))
            if on_result is not None and on_result(index, out[-1]) is False:
                break
        return out
    from concurrent.futures import ProcessPoolExecutor
    with ProcessPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(fn, *args) for args in chunks]
        for index, fut in enumerate(futures):
            try:
                out.append(fut.result())
            except Exception as e:       # the pool broke (a process killed): said per file or point
                out.append(Lost(f"the worker process failed: {type(e).__name__}: {e}"))
            if on_result is not None and on_result(index, out[-1]) is False:
                for rest in futures:
                    rest.cancel()
                break
    return out


def chunk_size(items: int, workers: int, most: int) -> int:
    """About four chunks per worker, at most ``most`` items each."""
    return max(1, min(most, -(-items // (4 * max(1, workers)))))
