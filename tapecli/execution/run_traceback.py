"""A run's own ``traceback``: CPython's module itself, its code executed afresh into a new module object for each
run that imports it (and for the run's ``logging``, which prints its tracebacks and stacks with it), so that its
text is CPython's for the program's frames.

What CPython's module reads outside itself is the run's: ``sys.stderr`` is the run's standard error, a line of
a frame is read from the run's text (``linecache``: a program reads no file), and every walk over frames (a
traceback's, the stack's) yields the program's frames alone, as CPython shows a script's (tapecli's and the
libraries' between them are the run's machinery, their paths the machine's), its path as the run was given it.
No frame reaches the program: ``walk_tb`` and ``walk_stack`` yield a :class:`FrameView` of each, which holds
the frame's names and line, and which ``extract_stack(f=...)`` and ``print_stack(f=...)`` take back (a
program's own object passed as a frame or traceback is walked as CPython walks it, each a step); the reprs
of a frame's variables (``capture_locals=True``, where tapecli's own names are the module's) and clearing a
traceback's frames are refused."""
from __future__ import annotations

import functools
import sys
import types

from tapecli.execution.fresh_module import executed, source_file


def make(sandbox, source_lines: list[str]) -> types.ModuleType:
    """The run's ``traceback`` module."""
    from tapecli.execution.modules import refused_name

    filename = sandbox.filename

    def getline(name, lineno, module_globals=None):
        known = name == filename and isinstance(lineno, int) and 0 < lineno <= len(source_lines)
        return source_lines[lineno - 1] + "\n" if known else ""

    stand_ins = {
        "sys": types.SimpleNamespace(stderr=sandbox.stderr, exc_info=sys.exc_info, _getframe=sys._getframe),
        "linecache": types.SimpleNamespace(getline=getline, lazycache=lambda *args: None,
                                           checkcache=lambda *args: None),
    }

    module = executed("traceback", stand_ins)
    frames = ProgramFrames(filename)

    def walk_stack(f):
        # (without a frame, CPython's starts four frames out from its own, where StackSummary.extract's caller is:
        # frames of the program's and of traceback's alone are counted, as they alone are between them in CPython)
        f = f if f is not None else frames.out(sys._getframe(), 4)
        while f is not None:
            f = f._frame if isinstance(f, FrameView) else f
            if not isinstance(f, types.FrameType):      # (a program's own object, walked as CPython walks it)
                sandbox.tick()
                yield f, f.f_lineno
            elif f.f_code.co_filename == filename:
                yield _view(f), f.f_lineno
            f = f.f_back

    def entries(tb):
        """A traceback's entries in the program's frames, each with what walk_tb yields of it."""
        while tb is not None:
            if not isinstance(tb, types.TracebackType):     # (a program's own object, as for walk_stack)
                sandbox.tick()
                yield tb, tb.tb_frame
            elif tb.tb_frame.f_code.co_filename == filename:
                yield tb, _view(tb.tb_frame)
            tb = tb.tb_next

    def walk_tb(tb):
        for entry, frame in entries(tb):
            yield frame, entry.tb_lineno

    def walk_tb_with_full_positions(tb):
        for entry, frame in entries(tb):
            positions = module._get_code_position(entry.tb_frame.f_code, entry.tb_lasti)
            yield frame, positions if positions[0] is not None else (entry.tb_lineno, *positions[1:])

    real_extract = module.StackSummary._extract_from_extended_frame_gen.__func__

    def extract(klass, frame_gen, *, limit=None, lookup_lines=True, capture_locals=False):
        if capture_locals:
            raise refused_name("traceback", "capture_locals=True", _LOCALS)
        return real_extract(klass, frame_gen, limit=limit, lookup_lines=lookup_lines)

    def clear_frames(tb):
        raise refused_name("traceback", "clear_frames", "it clears the frames of the run's machinery too")

    functools.update_wrapper(walk_stack, module.walk_stack)
    functools.update_wrapper(walk_tb, module.walk_tb)
    module.walk_stack, module.walk_tb, module._walk_tb_with_full_positions = walk_stack, walk_tb, \
        walk_tb_with_full_positions
    module.StackSummary._extract_from_extended_frame_gen = classmethod(extract)
    module.clear_frames = clear_frames
    return module


_LOCALS = "it shows the reprs of a frame's variables, tapecli's own among a module's"


class ProgramFrames:
    """The program's frames, those of tapecli and the libraries between them left out."""

    def __init__(self, filename: str):
        self.filename = filename

    def on_stack(self, frame) -> list:
        """The program's frames from ``frame`` outwards, innermost first."""
        found = []
        while frame is not None:
            if frame.f_code.co_filename == self.filename:
                found.append(frame)
            frame = frame.f_back
        return found

    def out(self, frame, steps: int):
        """The frame ``steps`` frames out from ``frame``, counting the program's and traceback's alone."""
        for _ in range(steps):
            frame = frame.f_back
            while frame is not None and frame.f_code.co_filename not in (self.filename, source_file("traceback")):
                frame = frame.f_back
        return frame


class FrameView:
    """What ``walk_tb`` and ``walk_stack`` yield of a program's frame: its file, function and line (what
    StackSummary.extract reads of a frame), never the frame (its ``f_back``, ``f_globals``, ``f_trace``...). As a
    frame, a program can neither make one nor derive a class from it (a class of its own would read the slot that
    holds the frame)."""

    __slots__ = ("_frame", "f_code", "f_globals")

    def __new__(cls, *args, **kwargs):
        raise TypeError("cannot create 'frame' instances")

    def __init_subclass__(cls, **kwargs):
        raise TypeError("type 'frame' is not an acceptable base type")

    @property
    def f_lineno(self) -> int:
        return self._frame.f_lineno         # (the line it runs now, as a frame's)

    def __reduce_ex__(self, protocol):
        raise TypeError("cannot pickle 'frame' object")     # (as a frame: copy.copy refuses it too)

    def __repr__(self) -> str:
        return f"<frame at {hex(id(self))}, file {self.f_code.co_filename!r}, line {self.f_lineno}, " \
               f"code {self.f_code.co_name}>"


def _view(frame) -> FrameView:
    view = object.__new__(FrameView)
    view._frame, view.f_globals = frame, {}
    view.f_code = _CodeNames(frame.f_code.co_filename, frame.f_code.co_name)
    return view


FrameView.__module__, FrameView.__name__, FrameView.__qualname__ = "builtins", "frame", "frame"


class _CodeNames:
    __slots__ = ("co_filename", "co_name")

    def __init__(self, filename: str, name: str):
        self.co_filename, self.co_name = filename, name
