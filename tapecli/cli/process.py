"""The command line as a process: Ctrl-C, standard output that fails, usage errors before a command runs,
and their exit codes (docs/spec/CLI.md). ``app.main`` calls ``run_process``."""
from __future__ import annotations

import os
import sys

# The signal module's functions and constants, without the module: importing signal makes its Signals, Handlers and
# Sigmasks enums (a small run's 0.5 ms); a handler here only names a signal (signal.Signals) when one comes.
import _signal

EXIT_OK, EXIT_EXPECT, EXIT_USAGE, EXIT_PROGRAM, EXIT_INTERNAL = 0, 1, 2, 3, 4
EXIT_INTERRUPTED = 130      # 128 + SIGINT, as shells report a process ended by Ctrl-C
EXIT_HANGUP = 129           # 128 + SIGHUP: the terminal went away
EXIT_TERMINATED = 143       # 128 + SIGTERM: what `timeout`, `docker stop` and a cancelled CI job send
EXIT_BROKEN_PIPE = 141      # 128 + SIGPIPE, as `yes | head` ends

# The signals that end a run the way Ctrl-C does: their exit code and the word the report says.
_ENDING = {"SIGINT": (EXIT_INTERRUPTED, "interrupted"), "SIGTERM": (EXIT_TERMINATED, "terminated (SIGTERM)"),
           "SIGHUP": (EXIT_HANGUP, "hung up (SIGHUP)")}


class _Interrupted(BaseException):
    """SIGINT, SIGTERM or SIGHUP, raised by the handler: a BaseException, so that no `except Exception` (the
    library's, Typer's or Click's) turns it into another error, and every `finally` on the way out runs (worker
    processes are stopped, a Dask cluster closed)."""


class OutputError(Exception):
    """Standard output could not be written (a closed pipe, a full disk): told apart from a bug."""

    def __init__(self, error: OSError):
        super().__init__(error.strerror or str(error))
        self.broken_pipe = isinstance(error, BrokenPipeError)


class _GuardedStdout:
    """sys.stdout with a failed write or flush raised as OutputError; characters its encoding cannot
    write are escaped (PYTHONIOENCODING=ascii)."""

    def __init__(self, stream):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
        self._stream = stream

    def write(self, text):
        try:
            return self._stream.write(text)
        except OSError as e:
            raise OutputError(e) from None

    def flush(self):
        try:
            self._stream.flush()
        except OSError as e:
            raise OutputError(e) from None

    def __getattr__(self, name):
        return getattr(self._stream, name)


class _QuietStderr:
    """sys.stderr whose failures are dropped: a message that cannot be written (stderr closed, a full disk)
    is lost, and the exit code still says what happened (a program error stays 3). After a failure the
    descriptor points at /dev/null, so that Python's last flush at exit has nowhere to fail either."""

    def __init__(self, stream):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
        self._stream = stream
        self._failed = False

    def write(self, text):
        if not self._failed:
            try:
                return self._stream.write(text)
            except (OSError, ValueError):
                self._fail()
        return len(text)

    def flush(self):
        if not self._failed:
            try:
                self._stream.flush()
            except (OSError, ValueError):
                self._fail()

    def _fail(self):
        self._failed = True
        _point_at_devnull(2)
        try:
            self._stream.flush()            # (what it buffered, now to /dev/null)
        except (OSError, ValueError):
            pass

    def __getattr__(self, name):
        return getattr(self._stream, name)


def _open_stderr():
    """sys.stderr for the run: the process's own, or where it started with descriptor 2 closed (``2>&-``),
    one on /dev/null in its place (so that no file the run opens becomes descriptor 2, and writes to it go
    nowhere)."""
    if sys.stderr is not None:
        return sys.stderr
    _point_at_devnull(2)
    try:
        return open(2, "w", encoding="utf-8", closefd=False)
    except OSError:
        return None


def _point_at_devnull(fd: int) -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
    except OSError:
        return
    if devnull != fd:
        try:
            os.dup2(devnull, fd)
        except OSError:
            pass
        os.close(devnull)


class _Reporter:
    """How this command line reports an error that ends it: one line on stderr, or a JSON error document
    on stdout where --json was asked for."""

    def __init__(self, app, argv: list[str]):
        self.command = argv[0] if argv and argv[0] in app.commands() else None
        self.json = "--json" in argv

    def exit_with(self, code: int, kind: str, message: str, always_stderr: bool = False):
        """Exit with ``code``: the JSON document under --json (and the line too with ``always_stderr``)."""
        if self.json and sys.stdout is not None:
            import json
            try:
                print(json.dumps({"schema": "tapecli/1", "command": self.command, "file": None, "ok": False,
                                  "error": {"kind": kind, "message": message, "line": None, "column": None}}))
                sys.stdout.flush()
            except OutputError:
                always_stderr = True
        else:
            always_stderr = True
        if always_stderr:
            line = f"tapecli{' ' + self.command if self.command else ''}: {message}"
            if not line.isprintable():      # (a file name, say, with a terminal's escape sequence in it)
                from tapecli.documents import terminal_text
                line = terminal_text(line)
            sys.stderr.write(line + "\n")
        sys.exit(code)


class _InterruptHandler:
    """Ctrl-C, SIGTERM, SIGHUP: raise _Interrupted, so that run_process reports it and the process ends the
    usual way, with 128 + the signal's number, having stopped its worker processes on the way out. A second
    signal meanwhile changes nothing. Python drops an exception raised where it cannot propagate (an import
    lock's weakref callback, a __del__), so a timer ends the process itself after a grace period if the report
    is not written by then."""

    GRACE_S = 1.0

    def __init__(self, reporter: _Reporter):
        self.reporter = reporter
        self.reported = False
        self.raised = False
        self.pid = os.getpid()
        self.code, self.message = _ENDING["SIGINT"]

    def __call__(self, signum, frame):
        import signal
        if os.getpid() != self.pid:     # a forked worker (check --workers): Python's default; the parent reports
            if signum == signal.SIGINT:
                raise KeyboardInterrupt
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        if self.raised:
            return
        self.raised = True
        self.code, self.message = _ENDING.get(signal.Signals(signum).name, _ENDING["SIGINT"])
        import threading
        timer = threading.Timer(self.GRACE_S, self.report, kwargs={"hard": True})
        timer.daemon = True
        timer.start()
        raise _Interrupted()

    def report(self, hard: bool = False):
        if not self.reported:
            self.reported = True
            try:
                self.reporter.exit_with(self.code, "Interrupted", self.message, always_stderr=True)
            except (SystemExit, OSError):       # (after SIGHUP the terminal may be gone)
                pass
        if hard:
            from tapecli.tools.outfile import remove_temporaries
            remove_temporaries()        # (no half file beside an output file's target)
            os._exit(self.code)
        sys.exit(self.code)


def _interrupted_early(signum, frame):
    """Ctrl-C before ``run_process``'s handler: nothing runs yet to stop or report, so the process ends here."""
    os.write(2, b"tapecli: interrupted\n")
    os._exit(EXIT_INTERRUPTED)


def interrupt_early() -> None:
    """From the console script's first line: Ctrl-C during start-up ends the process at once, with 130 and one
    line. (Python's default raises KeyboardInterrupt wherever start-up is: a traceback, or an import that drops
    the exception and lets the run go on, deaf to Ctrl-C.) Not where Ctrl-C is ignored or handled already."""
    if _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler:
        try:
            _signal.signal(_signal.SIGINT, _interrupted_early)
        except ValueError:      # not the main thread
            pass


def _install(handler: _InterruptHandler) -> dict:
    """The handler for SIGINT (unless Ctrl-C is ignored or handled by an embedding program), SIGTERM and SIGHUP
    (unless ignored, as under nohup); the handlers it replaced, to put back. Only the main thread can."""
    previous = {}
    for name, default in (("SIGINT", _signal.default_int_handler), ("SIGTERM", _signal.SIG_DFL),
                          ("SIGHUP", _signal.SIG_DFL)):
        signum = getattr(_signal, name, None)
        if signum is None or _signal.getsignal(signum) not in (default, _interrupted_early):
            continue
        try:
            previous[signum] = _signal.signal(signum, handler)
        except ValueError:      # not the main thread (an embedding program): leave its handlers alone
            break
    return previous


def run_process(app, argv: list[str]):
    """Run the command line ``argv`` of ``app`` and exit with its code."""
    reporter = _Reporter(app, argv)
    on_sigint = _InterruptHandler(reporter)
    previous = _install(on_sigint)
    stdout, stderr = sys.stdout, sys.stderr
    try:
        opened = _open_stderr()
        if opened is not None:
            sys.stderr = _QuietStderr(opened)
        if stdout is None:
            reporter.exit_with(EXIT_USAGE, "UsageError", "standard output is closed")
        sys.stdout = _GuardedStdout(stdout)
        _run(app, argv, reporter)
    except _Interrupted:
        on_sigint.report()
    except OutputError as e:
        _silence_stdout()
        if e.broken_pipe:       # the reader went away (`tapecli grad f | head`): stop quietly
            sys.exit(EXIT_BROKEN_PIPE)
        sys.stderr.write(f"tapecli: cannot write to standard output: {e}\n")
        sys.exit(EXIT_USAGE)
    finally:
        sys.stdout = stdout
        if stderr is not None:
            sys.stderr = stderr
        for signum, handler in previous.items():
            _signal.signal(signum, handler)


def _run(app, argv: list[str], reporter: _Reporter):
    from tapecli import environment
    from tapecli.errors import UsageError
    try:
        environment.check_all()
        # Under --json, Typer's own usage errors (an unknown option, a bad value) come back as exceptions,
        # to be written as a JSON document.
        code = app(prog_name="tapecli", args=argv, standalone_mode=not reporter.json)
    except UsageError as e:
        reporter.exit_with(EXIT_USAGE, "UsageError", str(e))
    except OutputError:
        raise
    except SystemExit:
        sys.stdout.flush()      # a failed write of buffered output surfaces here, not at interpreter exit
        raise
    except Exception as e:
        if isinstance(e, _click_exception()):
            reporter.exit_with(e.exit_code, "UsageError", e.format_message())
        if os.environ.get("TAPECLI_DEBUG"):
            raise
        reporter.exit_with(EXIT_INTERNAL, "InternalError",
                           f"internal error: {type(e).__name__}: {e}. This is a bug in tapecli; please report "
                           f"it (set TAPECLI_DEBUG=1 for the traceback).")
    sys.stdout.flush()
    sys.exit(code if isinstance(code, int) else EXIT_OK)


def _click_exception() -> type:
    """Click's ClickException, found through Typer (recent Typers carry their own copy of Click)."""
    import typer
    return next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")


def _silence_stdout() -> None:
    """Point the stdout descriptor at /dev/null, so the interpreter's last flush has nowhere to fail."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.__stdout__.fileno())
    except (OSError, ValueError, AttributeError):
        pass


# Modules whose exit handlers must run: they own worker processes, threads, compiled-code caches or open
# files that Python's normal shutdown closes.
_NEEDS_TEARDOWN = ("multiprocessing", "concurrent.futures", "distributed", "dask", "numba", "matplotlib", "plotext")


def end_without_teardown(exit: SystemExit) -> None:
    """End the process now with ``exit``'s code when the run loaded nothing that needs Python's shutdown:
    unloading every module costs a small run about a tenth of its time. Returns (for the usual exit)
    otherwise."""
    code = exit.code
    if code is not None and not isinstance(code, int):
        return                              # sys.exit("message") prints its message on the way out
    if any(name in sys.modules for name in _NEEDS_TEARDOWN):
        return
    threading = sys.modules.get("threading")
    if threading is not None and threading.active_count() > 1:
        return
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:          # None: closed when the process started
                stream.flush()
    except (OSError, ValueError):
        return                              # the usual exit reports what it can
    os._exit(code or 0)
