"""Shared helpers: run a program through the library, or the CLI through its real entry point."""
from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap

import numpy as np
import pytest

from tapecli.api import Options, run_source

# tests/data holds programs that tests run (the conformance copies): the .tdf plugin does not collect them
collect_ignore_glob = ["data/*"]


def pytest_configure(config):
    """Keep the parser and numba caches of the test run out of the user's cache, from before the test files are
    imported (a module's import may set up numba's cache). The workers of one run share the controller's folder,
    which they inherit with its environment: a kernel one compiled, the other loads, as two tapecli processes do
    (kernels/numba_support.py locks a compile). The controller removes it at the end."""
    if "TAPECLI_CACHE_DIR" not in os.environ:
        os.environ["TAPECLI_CACHE_DIR"] = config.tapecli_cache = tempfile.mkdtemp(prefix="tapecli-test-cache-")


def pytest_unconfigure(config):
    made = getattr(config, "tapecli_cache", None)
    if made is not None:
        shutil.rmtree(made, ignore_errors=True)
        del os.environ["TAPECLI_CACHE_DIR"]


@pytest.fixture(autouse=True)
def _a_context_of_its_own():
    """Each test starts in a fresh run context, as each run of the command line does: a run's context stays
    current after it for what reads its results, and a --device cuda run's would reach the next test's kernels
    (kernels.quiet() reads the current context's device)."""
    from tapecli.runtime.context import Mode, run_context
    with run_context(mode=Mode.of_run(strict=False)):
        yield


@contextlib.contextmanager
def open_tape(watch, name="t", persistent=True):
    """A library-level tape, open and watching every float tensor in ``watch``; closed on the way out."""
    from tapecli.runtime.tape import Tape
    from tapecli.runtime.context import current
    tape = Tape(name, persistent=persistent)
    tape.open = True
    current().tapes.append(tape)
    try:
        for x in watch:
            tape.watch_tensor(x, None, None)
        yield tape
    finally:
        current().tapes.remove(tape)
        tape.open = False


@pytest.fixture
def float64_state():
    """Library-level tests in float64, with no tape left open before or after."""
    from tapecli.runtime.context import run_context
    with run_context(float_dtype=np.float64):
        yield


# The tests of the fast paths themselves (that one ran, what it replayed or fused): nothing to test while
# TAPECLI_ACCEL=0 turns them off. Every other test runs on the reference path alone then.
@pytest.fixture
def on_the_interpreter(monkeypatch):
    """A test of the interpreter's own machinery written as a TensorFlow program (its loop plans, its fast paths):
    the interpreter runs the program, where CPython would by default (TAPECLI_TF_ON_CPYTHON)."""
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", "0")


fast_paths = pytest.mark.skipif(os.environ.get("TAPECLI_ACCEL") == "0",
                                reason="TAPECLI_ACCEL=0 turns the fast paths off")


def drawn(in_ci: int) -> int:
    """How many examples a property test draws: ``in_ci`` in the README's test command (sized so the suite stays
    short), TAPECLI_LONG_FUZZ's N in the long mode."""
    return int(os.environ.get("TAPECLI_LONG_FUZZ", in_ci))


def indent_markers(text: str) -> str:
    """Text drawn from the grammar by hypothesis, with the indenter's tokens drawn as markers
    (``\\x00`` newline, ``\\x01`` indent, ``\\x02`` dedent), as real lines and indentation."""
    out, depth, line_start = [], 0, True
    for ch in text:
        if ch == "\x00":
            out.append("\n")
            line_start = True
        elif ch == "\x01":
            depth += 1
        elif ch == "\x02":
            depth = max(0, depth - 1)
        elif not (line_start and ch == " "):
            if line_start:
                out.append("    " * depth)
                line_start = False
            out.append(ch)
    return "".join(out)


def run_program(source: str, **options):
    """Run TDF source (dedented) through the library API; returns the RunResult."""
    return run_source(textwrap.dedent(source).lstrip("\n"), "prog.tdf", Options(**options))


def value(result, name):
    """A top-level value as plain Python (nested lists, None) via the JSON renderer."""
    from tapecli.cli.render import to_json
    return to_json(result.scope.vars[name])


class CliResult:
    def __init__(self, code: int, stdout: str, stderr: str):
        self.code, self.stdout, self.stderr = code, stdout, stderr

    @property
    def json(self):
        return json.loads(self.stdout)


# Settings a command line may be given and still run inside the test's process: they change what it prints, not
# how the process runs. Any other (limits watched on the process's memory and clock, NUMBA_*, PYTHON*, schedulers)
# gets a process of its own, as do the commands that start processes.
IN_PROCESS_SETTINGS = frozenset({"COLUMNS", "LINES", "NO_COLOR"})
PROCESS_ARGUMENTS = frozenset({"bench", "--workers", "--scheduler", "--device", "--show-completion",
                               "--install-completion"})


def cli(*args, input: str | None = None, cwd=None, env=None, process: bool = False) -> CliResult:
    """Run the command line ``tapecli ARGS`` as a user would, through the console script's entry point: in this
    process (the CLI's run state is the run context's, so runs never see each other, and a process costs
    ~0.4 s of start-up), or, with ``process`` or a setting or argument that needs one, as ``python -m tapecli``."""
    args = [str(a) for a in args]
    if process or set(env or ()) - IN_PROCESS_SETTINGS or PROCESS_ARGUMENTS.intersection(args):
        return _cli_process(args, input, cwd, env)
    return _cli_here(args, input, cwd, env or {})


def _cli_process(args, input, cwd, env) -> CliResult:
    # not the NUMBA_CACHE_DIR tapecli sets in this process once a test has loaded numba here: a user's
    # process starts without it, and finds its cache from TAPECLI_CACHE_DIR
    full_env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"} | (env or {})
    proc = subprocess.run([sys.executable, "-m", "tapecli", *args], input=input, capture_output=True,
                          text=True, cwd=cwd, env=full_env, timeout=120)
    assert "Traceback" not in proc.stderr, proc.stderr
    return CliResult(proc.returncode, proc.stdout, proc.stderr)


def _cli_here(args, input, cwd, env) -> CliResult:
    from tapecli.cli.app import main
    streams = {name: io.TextIOWrapper(io.BytesIO(), encoding="utf-8") for name in ("stdout", "stderr")}
    saved = sys.stdin, sys.stdout, sys.stderr, sys.argv, os.getcwd(), dict(os.environ)
    sys.stdin = io.TextIOWrapper(io.BytesIO((input or "").encode()), encoding="utf-8")
    sys.stdout, sys.stderr, sys.argv = streams["stdout"], streams["stderr"], ["tapecli", *args]
    os.environ.update(env)
    try:
        if cwd is not None:
            os.chdir(cwd)
        main()
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    finally:
        sys.stdin, sys.stdout, sys.stderr, sys.argv, cwd_before, environ = saved
        os.chdir(cwd_before)
        os.environ.clear()
        os.environ.update(environ)
    text = {}
    for name, stream in streams.items():
        stream.flush()
        text[name] = stream.buffer.getvalue().decode("utf-8")
    assert "Traceback" not in text["stderr"], text["stderr"]
    return CliResult(code, text["stdout"], text["stderr"])


def on_a_terminal(*args, env=None, cwd=None, stdout_too=True) -> tuple[int, str, str]:
    """Run the CLI with stderr (and stdout, with ``stdout_too``) on a pseudo-terminal, outside any NO_COLOR or
    FORCE_COLOR of this process: (exit code, stdout where it was a pipe, what the terminal received)."""
    import pty
    master, slave = pty.openpty()
    full_env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE")}
    full_env.update({"TERM": "xterm", "COLUMNS": "80", **(env or {})})
    proc = subprocess.Popen([sys.executable, "-m", "tapecli", *map(str, args)],
                            stdout=slave if stdout_too else subprocess.PIPE, stderr=slave, env=full_env, cwd=cwd)
    os.close(slave)
    received = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:          # (the other end closed)
            break
        if not data:
            break
        received.append(data)
    out = "" if stdout_too else proc.stdout.read().decode()
    proc.wait(timeout=120)
    os.close(master)
    return proc.returncode, out, b"".join(received).decode(errors="replace")


def close(actual, expected, rtol=1e-5, atol=1e-6):
    np.testing.assert_allclose(np.asarray(actual, dtype=float), np.asarray(expected, dtype=float), rtol=rtol, atol=atol)
