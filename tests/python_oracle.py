"""The differential harness's two runners: a program through tapecli (its CPython-under-guards execution) and
through CPython itself, each giving (printed lines, error class name or None, error message, error line)."""
from __future__ import annotations

import contextlib
import decimal
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import types
from pathlib import Path

import numpy as np

from tapecli import api
from tapecli.errors import TdfError
from tapecli.interpreter.core import ErrorLine


def through_tapecli(source: str, filename: str = "prog.py"):
    try:
        result = api.run_source(source, filename)
    except TdfError as e:
        return getattr(e, "output", None), e.kind, e.message, e.line
    return result.output, None, None, None


def through_cpython(source: str, filename: str = "prog.py"):
    if re.search(r"^\s*(import|from)\s+matplotlib\b", source, re.MULTILINE):
        return _in_a_process(source, filename)
    return in_this_process(source, filename)


def in_this_process(source: str, filename: str = "prog.py"):
    out = io.StringIO()
    module = types.ModuleType("__main__")       # (as CPython runs a script: dataclasses and typing look it up)
    scope = module.__dict__
    limit, argv, main = sys.getrecursionlimit(), sys.argv, sys.modules["__main__"]
    sys.argv = [filename]
    sys.modules["__main__"] = module
    try:
        code = compile(source, filename, "exec", dont_inherit=True)
        with contextlib.redirect_stdout(out), decimal.localcontext(decimal.Context()), _numpy_state():  # a fresh process's
            exec(code, scope)
    except Exception as e:
        tb, line = e.__traceback__, None
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == filename:
                line = tb.tb_lineno
            tb = tb.tb_next
        message = repr(e.args[0]) if isinstance(e, KeyError) and len(e.args) == 1 else str(e)
        return _lines(out.getvalue()), type(e).__name__, message, line
    finally:
        sys.setrecursionlimit(limit)
        sys.argv = argv
        sys.modules["__main__"] = main
    return _lines(out.getvalue()), None, None, None


# (run by the child process of _in_a_process: this file's in_this_process, its outcome as JSON)
_CHILD = ("import json, sys\nsys.path.insert(0, sys.argv[1])\nfrom python_oracle import in_this_process\n"
          "json.dump(in_this_process(sys.stdin.read(), sys.argv[2]), sys.__stdout__)")


def _in_a_process(source: str, filename: str):
    """A program that plots, run by CPython in a process of its own with matplotlib's Agg backend (what a script
    run without a display draws with: nothing on standard output), in a folder of its own where its savefig
    writes and matplotlib keeps its configuration and font cache, so that neither this process nor the working
    directory is touched."""
    with tempfile.TemporaryDirectory() as folder:
        env = {**os.environ, "MPLBACKEND": "Agg", "MPLCONFIGDIR": str(Path(folder) / "config"),
               "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        done = subprocess.run([sys.executable, "-c", _CHILD, str(Path(__file__).parent), filename], input=source,
                              capture_output=True, text=True, cwd=folder, env=env)
    assert done.returncode == 0, done.stderr
    lines, kind, message, line = json.loads(done.stdout)
    return lines, kind, message, line


@contextlib.contextmanager
def _numpy_state():
    """NumPy as a run of tapecli starts it: the legacy global generator seeded 0 (tapecli's run seeds its own
    RandomState so), the print options and error handling as they were; all three restored afterwards."""
    options, errors, state = np.get_printoptions(), np.geterr(), np.random.get_state()
    np.random.seed(0)
    try:
        yield
    finally:
        np.set_printoptions(**options)
        np.seterr(**errors)
        np.random.set_state(state)


def addresses_masked(outcome):
    """An object's default repr names its address (``<reversed object at 0x...>``), which differs run to run."""
    def masked(text):
        return re.sub(r" at 0x[0-9a-f]+", " at 0x...", text) if isinstance(text, str) else text
    lines, *rest = outcome
    return ([masked(line) for line in lines or []], *(masked(part) for part in rest))


def _lines(text: str) -> list[str]:
    if not text:
        return []
    return text[:-1].split("\n") if text.endswith("\n") else text.split("\n")


def agree(source: str) -> None:
    """Assert that tapecli and CPython print the same lines and end with the same error (or none)."""
    ours, theirs = through_tapecli(source), through_cpython(source)
    assert ours == theirs, f"tapecli {ours!r}\nCPython {theirs!r}\nprogram:\n{source}"


def script_through_cpython(source: str, path) -> tuple[list[str], list[str]]:
    """A program run by CPython as a script, in a process of its own: its standard output and error."""
    path.write_text(source)
    done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, cwd=path.parent)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines(), done.stderr.splitlines()


def script_through_tapecli(source: str, path) -> tuple[list[str], list[str]]:
    """The same program through tapecli: its output and its standard error's lines."""
    output = api.run_source(source, str(path)).output
    return [line for line in output if type(line) is not ErrorLine], [line for line in output if type(line) is ErrorLine]


def without_library_frames(lines: list[str], program: str) -> list[str]:
    """CPython's tracebacks less their frames of code other than the program's (logging's own in a report of a
    logging error, a library's such as json's), which a run leaves out as its machinery; a traceback left without
    frames has no header, as CPython prints none for an empty stack. (An exception group's members are shown
    behind a margin of ``|``.)"""
    def body(line: str) -> str:
        return re.sub(r"^ *\| ", "", line)

    kept, skipping = [], False
    for line in lines:
        if body(line).startswith('  File "'):
            skipping = program not in line
        elif not body(line).startswith("    "):
            skipping = False
        if not skipping:
            kept.append(line)
    return [line for line, after in zip(kept, [*kept[1:], ""])
            if body(line) != "Traceback (most recent call last):" or body(after).startswith('  File "')]
