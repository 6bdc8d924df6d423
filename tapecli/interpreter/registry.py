"""The builtin registry: every name a program can call, registered with ``@builtin`` by the modules
of ``tapecli.interpreter.library`` (the core names in ``builtins``, families beside it)."""
from __future__ import annotations

import inspect

from tapecli.errors import TdfTypeError

BUILTINS: dict = {}


def builtin(*names, interp=False):
    """Register a builtin under one or more names; ``interp=True`` passes the interpreter first."""
    def deco(f):
        f.is_builtin = True
        f.wants_interp = interp
        f.signature = inspect.signature(f)
        f.positional = _positional_range(f.signature)
        for name in names or (f.__name__.rstrip("_"),):
            BUILTINS[name] = f
        return f
    return deco


def _positional_range(sig) -> tuple[int, int] | None:
    """(fewest, most) positional arguments that always bind, for a signature of plain parameters."""
    params = list(sig.parameters.values())
    if any(p.kind is not inspect.Parameter.POSITIONAL_OR_KEYWORD for p in params):
        return None
    return sum(p.default is inspect.Parameter.empty for p in params), len(params)


def call_builtin(f, interp, node, args, kwargs):
    fast = f.positional
    if fast is not None and not kwargs and not f.wants_interp and fast[0] <= len(args) <= fast[1]:
        return f(*args)       # the arguments bind: skip inspect's (slow) check
    full = [interp, *args] if f.wants_interp else list(args)
    if fast is not None and not kwargs and fast[0] <= len(full) <= fast[1]:
        return f(*full)
    hidden = next((k for k in kwargs if k.startswith("_")), None)
    if hidden is not None:                  # the implementation's own parameters (e.g. _op) are not the program's
        name = interp.text(node.func) or f.__name__
        raise TdfTypeError(f"{name}() got an unexpected keyword argument '{hidden}'", hint=f"usage: {name}{_usage(f)}")
    try:
        f.signature.bind(*full, **kwargs)
    except TypeError as e:
        name = interp.text(node.func) or f.__name__
        raise TdfTypeError(f"{name}(): {e}", hint=f"usage: {name}{_usage(f)}") from None
    return f(*full, **kwargs)


def _usage(f) -> str:
    params = list(f.signature.parameters.values())
    if f.wants_interp:
        params = params[1:]
    return "(" + ", ".join(str(p) for p in params if not p.name.startswith("_")) + ")"
