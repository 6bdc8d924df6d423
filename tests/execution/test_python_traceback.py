"""A program's ``traceback`` is CPython's, the run's own: what it prints or returns of an exception or of the stack
is what CPython gives for the program's frames, line for line on standard output and standard error (CPython runs
each program as a script, in a process of its own, its oracle); a line is the run's text, never a file's; no
frame reaches the program."""
from __future__ import annotations

import types

import pytest

from tapecli import api
from tapecli.errors import TdfError

from python_oracle import script_through_cpython, script_through_tapecli, without_library_frames

PROGRAMS = {
    "an exception, every way": '''
import sys
import traceback


def inner(x):
    return 10 / x


def outer(x):
    return inner(x) + 1


try:
    outer(0)
except ZeroDivisionError as e:
    print("".join(traceback.format_exception_only(type(e), e)), end="")
    print(traceback.format_exception_only(e))
    print(traceback.format_exc(), end="")
    traceback.print_exc()
    traceback.print_exc(file=sys.stdout)
    traceback.print_exc(limit=1, file=sys.stdout)
    print("".join(traceback.format_exception(e)), end="")
    print("".join(traceback.format_exception(type(e), e, e.__traceback__)), end="")
    traceback.print_exception(e, file=sys.stdout)
    traceback.print_exception(type(e), e, e.__traceback__)
    shown = traceback.TracebackException.from_exception(e)
    print("".join(shown.format()), end="")
    print(shown.exc_type.__name__, str(shown), len(shown.stack), [f.name for f in shown.stack])
    for frame in shown.stack:
        print(frame.lineno, frame.name, repr(frame.line), frame.colno, frame.end_colno, frame.end_lineno, frame.locals)
        print(tuple(frame)[1:], frame[2], len(frame))
    print(traceback.format_tb(e.__traceback__))
    summary = traceback.extract_tb(e.__traceback__)
    print(type(summary).__name__, [tuple(f)[1:] for f in summary], summary)
    print(traceback.format_list(summary))
    traceback.print_tb(e.__traceback__, file=sys.stdout)
    traceback.print_list(summary, file=sys.stdout)
    for frame, lineno in traceback.walk_tb(e.__traceback__):
        print(lineno, type(frame).__name__, frame.f_lineno)
    print(traceback.StackSummary.extract(traceback.walk_tb(e.__traceback__)).format())
    print(e.__traceback__.tb_lineno, type(e.__traceback__).__name__)
''',
    "the stack": '''
import sys
import traceback


def where():
    print("".join(traceback.format_stack()), end="")
    traceback.print_stack(file=sys.stdout)
    traceback.print_stack()
    print([(f.lineno, f.name, f.line) for f in traceback.extract_stack()])
    print([lineno for _, lineno in traceback.walk_stack(None)])
    print(traceback.StackSummary.extract(traceback.walk_stack(None)).format())
    frame = [f for f, _ in traceback.walk_stack(None)][0]
    print(traceback.format_stack(frame), traceback.extract_stack(frame, limit=1))
    return traceback.format_stack(limit=1)


def deeper():
    return where()


def deepest():
    return deeper()


print(deepest())
''',
    "chains, groups, a library's frames": '''
import json
import sys
import traceback

try:
    try:
        {}["k"]
    except KeyError as k:
        raise ValueError("wrapped") from k
except ValueError:
    traceback.print_exc(file=sys.stdout)
try:
    try:
        [][1]
    except IndexError:
        int("x")
except ValueError:
    traceback.print_exc()
    traceback.print_exc(chain=False, file=sys.stdout)
try:
    raise ExceptionGroup("eg", [ValueError(1), TypeError("t")])
except ExceptionGroup:
    traceback.print_exc(file=sys.stdout)
try:
    json.loads("{")
except ValueError:
    traceback.print_exc(file=sys.stdout)
print(traceback.format_exception_only(None), traceback.format_exception_only(ValueError, None))
print(traceback.StackSummary.from_list([("a.py", 1, "g", "pass")]).format())
try:
    1 / 0
except Exception as error:
    caught = error
print(repr(traceback.format_exc()))
print("".join(traceback.format_exception(caught)), end="")
''',
    "a logging formatter's exception line": '''
import logging
import sys
import traceback


class OneLine(logging.Formatter):
    def formatException(self, exc_info):
        return "  -> " + "".join(traceback.format_exception_only(exc_info[0], exc_info[1])).strip()


handler = logging.StreamHandler(sys.stdout)
handler.setFormatter(OneLine("%(levelname)s %(funcName)s: %(message)s"))
log = logging.getLogger("train")
log.addHandler(handler)
try:
    int("x")
except ValueError:
    log.exception("parse failed")
    logging.exception("to the root")
''',
}


@pytest.mark.parametrize("source", PROGRAMS.values(), ids=PROGRAMS.keys())
def test_a_programs_traceback_prints_what_cpython_prints(source, tmp_path):
    path = tmp_path / "prog.py"
    out, err = script_through_cpython(source, path)
    assert script_through_tapecli(source, path) == (without_library_frames(out, str(path)),
                                                     without_library_frames(err, str(path)))


def test_a_frames_line_is_the_runs_text_and_no_files(tmp_path):
    """CPython reads a line from the file through linecache; a run reads its own text (whatever the file on disk
    holds) and no other file."""
    program, other = tmp_path / "prog.py", tmp_path / "other.py"
    program.write_text("on disk\n" * 3)
    other.write_text("another file\n")
    source = f"import traceback\nprint(traceback.FrameSummary({str(program)!r}, 2, 'f').line)\n" \
             f"print(repr(traceback.FrameSummary({str(other)!r}, 1, 'f').line))\n"
    assert api.run_source(source, str(program)).output == [source.splitlines()[1].strip(), "''"]


def test_a_walked_frame_is_no_frame():
    """walk_stack and walk_tb yield a stand-in of each of the program's frames: its line, and nothing a program
    could reach the frame or its globals by."""
    source = ("import copy, traceback\ndef f():\n    return [frame for frame, _ in traceback.walk_stack(None)]\n"
              "def g():\n    return f()\ndef h():\n    return g()\nframe = h()[0]\nprint(frame.f_lineno, type(frame))\n")
    assert api.run_source(source, "prog.py").output == ["7 <class 'frame'>"]
    for reach, kind in [("frame._frame", "NameError"), ("frame.f_back", "NameError"), ("frame.f_code", "NameError"),
                        ("frame.f_trace", "AttributeError"), ("type(frame)(1)", "TypeError"),
                        ("copy.copy(frame)", "TypeError")]:
        with pytest.raises(TdfError) as e:
            api.run_source(source + f"x = {reach}\n", "prog.py")
        assert e.value.kind == kind and e.value.line == 10, reach


def test_a_programs_own_traceback_leading_to_a_real_one_yields_no_frame():
    """A program's object walked as a traceback is its own data, walked as CPython walks it; where its ``tb_next``
    is a real traceback, what follows is walked as one: stand-ins of the program's frames."""
    source = ("import traceback\ntry:\n    1 / 0\nexcept Exception as e:\n    real = e\nclass T:\n"
              "    tb_lineno, tb_lasti, tb_frame = 7, -1, None\n    @property\n    def tb_next(self):\n"
              "        return real.__traceback__\nwalked = [(f, n) for f, n in traceback.walk_tb(T())]\n")
    walked = api.run_source(source, "prog.py").scope.vars["walked"]
    assert [(type(f).__name__, n) for f, n in walked] == [("NoneType", 7), ("frame", 3)]
    assert not any(isinstance(f, types.FrameType) for f, _ in walked)
