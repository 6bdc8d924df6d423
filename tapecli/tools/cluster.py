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
from contextlib import contextmanager
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
            probe(address, timeout)
            self.client = _connect(distributed, address, timeout)
        try:
            # (every reply has a deadline: a scheduler that stops answering is an error, not a hang)
            versions = self.client.run(worker_version, callback_timeout=max(timeout, 30))
        except Exception as e:
            self.close()
            if isinstance(e, (TimeoutError, OSError)):
                raise UsageError(f"--scheduler {address}: the scheduler did not answer within {max(timeout, 30):g} s "
                                 f"when asked for its workers ({type(e).__name__})") from None
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


def _no_answer(address: str, timeout: float, what: str, why: str = "") -> UsageError:
    return UsageError(f"--scheduler {address}: {what} within {timeout:g} s{f' ({why})' if why else ''}; start one "
                      f"with `dask scheduler`, or check the address (TAPECLI_SCHEDULER_TIMEOUT sets the wait)")


def probe(address: str, timeout: float) -> None:
    """Refuse, with a usage error and before Dask reads a byte, an address Dask cannot use: a scheme tapecli
    cannot connect with (``ucx://``; ``tls://`` without Dask's TLS settings), and for ``tcp://``, a server that
    does not greet as a Dask scheduler does within ``timeout`` (one that accepts and never answers hung Dask's
    handshake for ever) or greets otherwise (Dask read an HTTP server's ``HTTP/1.1`` as a frame length and
    asked for 3 EiB)."""
    from distributed.comm.addressing import parse_address, parse_host_port
    try:
        scheme, location = parse_address(address, strict=False)
    except ValueError as e:
        raise UsageError(f"--scheduler {address}: not an address ({e})") from None
    if scheme in ("ucx", "ucxx"):
        raise UsageError(f"--scheduler {address}: tapecli connects to Dask schedulers over tcp:// (or tls://), not "
                         f"{scheme}://; give the scheduler's tcp:// address")
    if scheme == "tls":
        import dask
        if not dask.config.get("distributed.comm.tls.ca-file", None):
            raise UsageError(f"--scheduler {address}: tls:// needs Dask's TLS settings (distributed.comm.tls.ca-file, "
                             f"client.cert and client.key in the Dask configuration, or DASK_DISTRIBUTED__COMM__TLS__"
                             f"CA_FILE ...), and none are set")
        return
    if scheme != "tcp":
        return                                          # (Dask says what is wrong with it)
    try:
        host, port = parse_host_port(location)
    except ValueError as e:
        raise UsageError(f"--scheduler {address}: not a host:port address ({e})") from None
    head = _greeting(address, host, port, timeout)
    length = int.from_bytes(head, "little")
    if len(head) < 8 or not 0 < length < 1 << 26:
        what = "closed the connection" if not head else f"sent {head!r}"
        hint = ("; that is a web server (a Dask dashboard listens on 8787, its scheduler on 8786)"
                if head.startswith(b"HTTP") else "")
        raise UsageError(f"--scheduler {address}: the server {what}, not a Dask scheduler's greeting{hint}")


def _greeting(address: str, host: str, port: int, timeout: float) -> bytes:
    """The first 8 bytes a server sends on a new connection (a Dask scheduler's: its handshake's length)."""
    import socket
    import time
    deadline = time.monotonic() + timeout
    while True:                             # a scheduler still starting refuses for a moment: try until the deadline
        try:
            sock = socket.create_connection((host, port), timeout=max(0.1, deadline - time.monotonic()))
            break
        except OSError as e:
            if time.monotonic() + 0.2 >= deadline:
                raise _no_answer(address, timeout, "no Dask scheduler answered", e.strerror or type(e).__name__
                                 ) from None
            time.sleep(0.2)
    head = b""
    with sock:
        try:
            while len(head) < 8:
                sock.settimeout(max(0.01, deadline - time.monotonic()))
                chunk = sock.recv(8 - len(head))
                if not chunk:
                    break
                head += chunk
        except (socket.timeout, TimeoutError):
            raise _no_answer(address, timeout, "the server accepted the connection but sent nothing",
                             "a Dask scheduler greets at once") from None
        except OSError as e:
            raise _no_answer(address, timeout, "no Dask scheduler answered", e.strerror or type(e).__name__) from None
    return head


def _connect(distributed, address: str, timeout: float):
    """distributed.Client(address), given ``timeout`` (twice, and 5 s) in all: Dask's own timeout covers
    connecting, not each reply of the handshake that follows."""
    import threading
    box = {}

    def connect():
        try:
            box["client"] = distributed.Client(address, timeout=timeout)
        except Exception as e:          # (what Dask raises for an address or a server it cannot use)
            box["error"] = e
    thread = threading.Thread(target=connect, name="tapecli-dask-connect", daemon=True)
    thread.start()
    thread.join(2 * timeout + 5)
    if thread.is_alive():
        raise _no_answer(address, 2 * timeout + 5, "the server did not complete Dask's handshake")
    if "error" in box:
        e = box["error"]
        raise _no_answer(address, timeout, "no Dask scheduler answered",
                         f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}")
    return box["client"]


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
    with process_pool(workers) as pool:
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


MAX_WORKERS = 65536     # a --workers above it is a mistake (a typo, an overflowed script variable), not a machine


def check_workers(requested: int) -> None:
    """--workers N: a usage error unless 1 <= N <= MAX_WORKERS (the processes started are capped at the CPUs)."""
    if requested < 1:
        raise UsageError("--workers must be at least 1")
    if requested > MAX_WORKERS:
        shown = str(requested) if len(str(requested)) <= 30 else f"{str(requested)[:27]}..."
        raise UsageError(f"--workers {shown}: at most {MAX_WORKERS:,} (tapecli starts no more processes than the "
                         f"CPUs it may use: {worker_count(requested, requested)} here)")


def worker_count(requested: int, items: int) -> int:
    """Processes for ``--workers N``: never more than the items (files, batches of points), nor than the CPUs
    this process may use (the work is CPU-bound: more processes than cores only add start-up and memory)."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(1, min(requested, items, cpus))


@contextmanager
def process_pool(workers: int):
    """A ProcessPoolExecutor whose processes end with this one: on any way out but the usual one (Ctrl-C,
    SIGTERM, SIGHUP: cli/process.py raises them as exceptions here), they are terminated rather than waited
    for; each also asks the kernel to send it SIGTERM if this process dies without a word (SIGKILL)."""
    from concurrent.futures import ProcessPoolExecutor
    pool = ProcessPoolExecutor(max_workers=workers, initializer=_worker_start, initargs=(os.getpid(),))
    try:
        yield pool
    except BaseException:
        for process in list((getattr(pool, "_processes", None) or {}).values()):
            try:
                process.terminate()
            except (OSError, ValueError):
                pass
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)


def _worker_start(parent: int) -> None:
    """In each worker process, first: SIGTERM and SIGHUP end it (the parent's handlers, inherited by fork,
    would raise them in the work instead), and it ends when its parent does."""
    import signal
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)
    try:
        import ctypes
        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, int(signal.SIGTERM))
    except (OSError, AttributeError):         # not Linux: the parent's handlers stop the workers
        pass
    if os.getppid() != parent:                # the parent died before the request took effect
        os._exit(1)


def chunk_size(items: int, workers: int, most: int) -> int:
    """About four chunks per worker, at most ``most`` items each."""
    return max(1, min(most, -(-items // (4 * max(1, workers)))))
