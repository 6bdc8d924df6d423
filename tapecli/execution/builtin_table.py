"""The builtins a program sees: CPython's own, less those that reach files, the environment, code or the
interpreter, with the attribute functions, print, import and class creation through the run's sandbox."""
from __future__ import annotations

import builtins

from tapecli.errors import TdfNameError

_FILES = "programs cannot reach files, the environment or Python objects"
REFUSED_BUILTINS = {
    "open": "it reaches files", "input": "it reads the terminal", "eval": "it runs code outside the guards",
    "exec": "it runs code outside the guards", "compile": "it makes code objects",
    "globals": "it reaches the interpreter's names",
    "breakpoint": "it starts a debugger", "help": "it reads the terminal", "copyright": "it prints to the terminal",
    "credits": "it prints to the terminal", "license": "it prints to the terminal",
    "aiter": "asynchronous iteration runs outside the limits", "anext": "asynchronous iteration runs outside the limits",
}
_OWN = ("getattr", "hasattr", "vars", "print", "dir", "locals")


def program_builtins(sandbox, modules) -> dict:
    table = {name: value for name, value in vars(builtins).items()
             if not name.startswith("_") and name not in REFUSED_BUILTINS}
    for name, reason in REFUSED_BUILTINS.items():
        table[name] = _refused(name, reason)
    for name in _OWN:
        table[name] = _own(name, getattr(sandbox, name))
    table["setattr"] = _own("setattr", sandbox.set)
    table["delattr"] = _own("delattr", sandbox.delete)
    table["iter"] = _own("iter", lambda *args: sandbox.iterable_call(builtins.iter, *args))
    table["pow"] = _own("pow", sandbox.pow)
    table["exit"], table["quit"] = Quitter("exit"), Quitter("quit")
    table["__import__"] = modules.import_
    table["__build_class__"] = sandbox.build_class
    table["__name__"] = "builtins"
    return table


class ProgramBuiltin:
    """A builtin the run answers with its own function (print, getattr, iter, ...), named, shown and documented
    as CPython's builtin is: ``print.__name__`` is "print", ``repr(print)`` "<built-in function print>",
    ``type(print).__name__`` "builtin_function_or_method". Each is an instance of a class of its own whose
    ``__call__`` is the run's function itself (no frame of the machinery's between the program and it)."""

    __module__ = "builtins"

    def __repr__(self) -> str:
        return f"<built-in function {self.__name__}>"

    def __copy__(self):             # (copy and deepcopy keep a builtin as it is, as CPython's do)
        return self

    def __deepcopy__(self, memo):
        return self


def _own(name: str, function) -> ProgramBuiltin:
    cls = type("builtin_function_or_method", (ProgramBuiltin,), {
        "__call__": staticmethod(function), "__doc__": getattr(builtins, name).__doc__, "__module__": "builtins"})
    own = cls()
    own.__name__ = own.__qualname__ = name
    return own


class Quitter:
    """``exit`` and ``quit`` as CPython's site module gives them to a script: each raises SystemExit with its code,
    which ends the run as ``sys.exit`` does (a status other than 0 or None is the run's error)."""

    def __init__(self, name: str):
        self.name, self.eof = name, "Ctrl-D (i.e. EOF)"

    def __repr__(self) -> str:
        return f"Use {self.name}() or {self.eof} to exit"

    def __call__(self, code=None):
        raise SystemExit(code)


Quitter.__module__ = "_sitebuiltins"


def underlying(f):
    """The run's function behind one of the program's builtins (``f`` itself for any other callable)."""
    return type(f).__call__ if isinstance(f, ProgramBuiltin) else f


def _refused(name: str, reason: str):
    def refused(*args, **kwargs):
        raise TdfNameError(f"{name}() is not available in tapecli programs: {reason}", hint=_FILES)
    refused.__name__ = refused.__qualname__ = name
    return refused
