"""A stand-in for the parts of Typer that cli.py uses, so that a command can run without importing Typer.

Importing Typer (with the Click fork and the Pydantic and Rich modules it pulls in) costs
more than the rest of a small run together. cli.py writes ``from . import lazytyper as
typer`` and keeps declaring its commands the Typer way, so the command functions and their
``Annotated[..., typer.Option(...)]`` parameters stay the only definition of the command
line. This module records them and then, for an invocation:

* parses ``argv`` itself when it is plainly valid: a registered command, options that the
  command declares (``--opt VALUE``, ``--opt=VALUE``, flags, repeated list options, ``--``),
  values that convert to the declared type, every required parameter present. The command
  function is called with the same keyword arguments Typer would pass it.
* hands everything else (``--help``, ``--version``, no arguments, an unknown option, a bad
  value, a missing argument, shell completion, any parameter feature not listed above) to a
  real Typer app built from the same declarations, which prints Typer's help or error.

So the fast path never has an error message of its own: anything it does not accept is
decided by Typer.
"""
from __future__ import annotations

import os
import sys

__all__ = ["Typer", "Option", "Argument", "Exit", "Annotated"]

# ParamSpec keyword arguments that change nothing about parsing a valid command line.
_COSMETIC = frozenset(("help", "show_default", "metavar", "rich_help_panel", "hidden", "show_choices"))


def __getattr__(name: str):
    """Anything else of Typer's (typer.echo, typer.BadParameter ...) is Typer's own: imported then. A module's own
    names (``from lazytyper import X`` asks for ``__path__``) are not Typer's."""
    if name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import typer
    return getattr(typer, name)


class ParamSpec:
    """What ``typer.Option(...)`` / ``typer.Argument(...)`` was called with."""

    __slots__ = ("kind", "args", "kwargs")

    def __init__(self, kind: str, args: tuple, kwargs: dict):
        self.kind, self.args, self.kwargs = kind, args, kwargs

    def real(self, base=None):
        """The real typer.Option/Argument; ``base``, the parameter's type, gives it a plain metavar where it
        names none (Typer's own help shows types, as ``<bool>`` on a flag or ``<list[str]>``)."""
        import typer
        kwargs = self.kwargs
        if base is not None and "metavar" not in kwargs and self.kind == "option":
            kwargs = {**kwargs, "metavar": _plain_metavar(base)}
        return (typer.Option if self.kind == "option" else typer.Argument)(*self.args, **kwargs)

    def __repr__(self):
        return f"{self.kind.capitalize()}{self.args!r}"


class Annotated:
    """``Annotated[base, typer.Option(...)]`` as the commands declare their parameters, recorded as it is written:
    typing.Annotated makes each alias anew (its metadata differ), ~12 us apiece, a third of a millisecond of every
    start-up for app.py's. The real Typer app gets typing's (``_for_typer``)."""

    __slots__ = ("base", "metadata")

    def __init__(self, base, metadata: tuple):
        self.base, self.metadata = base, metadata

    def __class_getitem__(cls, params):
        base, *metadata = params
        return cls(base, tuple(metadata))


def Option(*args, **kwargs) -> ParamSpec:  # noqa: N802 - Typer's spelling
    return ParamSpec("option", args, kwargs)


def Argument(*args, **kwargs) -> ParamSpec:  # noqa: N802
    return ParamSpec("argument", args, kwargs)


class Exit(SystemExit):
    """``raise typer.Exit(code)``: a SystemExit, which Typer (Click) lets through unchanged."""

    def __init__(self, code: int = 0):
        super().__init__(code)

    @property
    def exit_code(self) -> int:
        return self.code


class Typer:
    def __init__(self, **kwargs):
        self._kwargs = kwargs
        self._commands: list[tuple[str | None, dict, object]] = []    # (a command declared apart: its name, {}, None)
        self._apart: dict[str, str] = {}        # a command declared in a module of its own -> that module
        self._callback: tuple[dict, object] | None = None
        self._real = None

    # -------------------------------------------------------------- declaring
    def command(self, name: str | None = None, **kwargs):
        def register(fn):
            key = name or _command_name(fn)
            at = next((i for i, (n, _, f) in enumerate(self._commands) if f is None and n == key), None)
            if at is None:
                self._commands.append((name, kwargs, fn))
            else:                                   # (in the place commands_in kept for it)
                self._commands[at] = (name, kwargs, fn)
            self._real = None
            return fn
        return register

    def commands_in(self, module: str, *names: str) -> None:
        """Commands that ``module`` declares, in this place of the command line's order: it is imported when one of
        them is run, or with every command where the real Typer app is built (a small run need not load them)."""
        for name in names:
            self._commands.append((name, {}, None))
            self._apart[name] = module

    def _load(self, names) -> None:
        """Import the modules that declare these commands apart; each must declare the commands it was named for."""
        import importlib
        for module in dict.fromkeys(self._apart[name] for name in names if name in self._apart):
            importlib.import_module(module)
            missing = [n for n, m in self._apart.items() if m == module and n not in self.commands()]
            if missing:
                raise RuntimeError(f"{module} declares no command {missing[0]!r}")
            self._apart = {n: m for n, m in self._apart.items() if m != module}

    def callback(self, **kwargs):
        def register(fn):
            self._callback = (kwargs, fn)
            self._real = None
            return fn
        return register

    def commands(self) -> dict[str, object]:
        """Command name -> function, as Typer names them (None for a command whose module is not imported yet)."""
        return {name or _command_name(fn): fn for name, _, fn in self._commands}

    def command_function(self, name: str):
        """The function of command ``name`` (None if there is none), its module imported where it is declared apart."""
        self._load((name,))
        return self.commands().get(name)

    # -------------------------------------------------------------- running
    def __call__(self, prog_name: str | None = None, args: list[str] | None = None, **real_options):
        """Run the command line; ``real_options`` (Click's standalone_mode) go to the real Typer app."""
        argv = list(sys.argv[1:] if args is None else args)
        plan = None if os.environ.get("TAPECLI_NO_FAST_CLI") else fast_parse(self, argv)
        if plan is None:
            return self.real()(prog_name=prog_name, args=argv, **real_options)
        fn, kwargs = plan
        # A failing stdout (a broken pipe, a full disk) is cli/process.py's: its guarded stdout raises it there.
        try:
            if self._callback is not None:
                _app_callback_call(self._callback[1])()
            fn(**kwargs)
        except EOFError:            # as Click does
            sys.stderr.write("\nAborted!\n")
            raise SystemExit(1) from None
        except KeyboardInterrupt:
            raise SystemExit(130) from None
        raise SystemExit(0)

    def real(self):
        """The Typer app, built from the recorded declarations (imports Typer)."""
        if self._real is None:
            self._load(list(self._apart))
            import typer
            _plain_flags()
            app = typer.Typer(**self._kwargs)
            if self._callback is not None:
                kwargs, fn = self._callback
                app.callback(**kwargs)(_for_typer(fn))
            for name, kwargs, fn in self._commands:
                app.command(name, **kwargs)(_for_typer(fn))
            self._real = app
        return self._real


def _command_name(fn) -> str:
    return fn.__name__.lower().replace("_", "-")


def _for_typer(fn):
    """A copy of ``fn`` whose annotations are typing's, with real typer.Option/Argument objects."""
    import functools
    import types
    import typing
    annotations = {}
    for pname, hint in fn.__annotations__.items():
        if hint.__class__ is Annotated:
            hint = typing.Annotated[(hint.base, *[m.real(hint.base) if isinstance(m, ParamSpec) else m
                                                  for m in hint.metadata])]
        annotations[pname] = hint
    copy = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    functools.update_wrapper(copy, fn, updated=())
    del copy.__wrapped__            # Typer must read the copy's signature, not fn's
    copy.__kwdefaults__ = fn.__kwdefaults__
    copy.__annotations__ = annotations
    return copy


def _plain_flags() -> None:
    """No type after a flag in --help, Typer's own flags included (--install-completion): Typer shows
    ``<bool>`` there, where Click shows nothing."""
    from typer.core import TyperOption
    shown = TyperOption.display_type_rich
    if getattr(shown, "plain_flags", False):
        return

    def display_type_rich(self, ctx):
        return None if self.is_flag and self.metavar is None else shown(self, ctx)
    display_type_rich.plain_flags = True
    TyperOption.display_type_rich = display_type_rich


def _plain_metavar(base) -> str:
    """Click's plain metavars for an option: nothing after a flag, else TEXT, INTEGER or FLOAT."""
    import typing
    if typing.get_origin(base) is typing.Union:           # Optional[X]
        base = next(a for a in typing.get_args(base) if a is not type(None))
    if typing.get_origin(base) is list:
        (base,) = typing.get_args(base) or (str,)
    if base is bool:
        return ""
    return {int: "INTEGER", float: "FLOAT"}.get(base, "TEXT")


# ------------------------------------------------------------------ the fast path

class _Param:
    __slots__ = ("name", "kind", "decls", "type", "multiple", "default", "required")


_NO_DEFAULT = object()
_VARIADIC = 0x04 | 0x08          # inspect.CO_VARARGS | inspect.CO_VARKEYWORDS


def _parameters(fn) -> list[tuple] | None:
    """(name, default or _NO_DEFAULT, annotation or _NO_DEFAULT) of each parameter of a plain function, in order;
    None for anything else (*args, **kwargs, positional-only, a wrapper). Read from its code: inspect.signature
    took ~0.1 ms for a command's 22 parameters, on every command line."""
    code = getattr(fn, "__code__", None)
    if code is None or code.co_flags & _VARIADIC or code.co_posonlyargcount or hasattr(fn, "__wrapped__") \
            or hasattr(fn, "__signature__"):
        return None
    count = code.co_argcount
    names = code.co_varnames[:count + code.co_kwonlyargcount]
    defaults = (_NO_DEFAULT,) * (count - len(fn.__defaults__ or ())) + (fn.__defaults__ or ())
    keyword_defaults = fn.__kwdefaults__ or {}
    annotations = fn.__annotations__
    return [(name, defaults[i] if i < count else keyword_defaults.get(name, _NO_DEFAULT),
             annotations.get(name, _NO_DEFAULT)) for i, name in enumerate(names)]


def _params(fn) -> list[_Param] | None:
    """The parameters of a command, or None if one uses a feature the fast path leaves to Typer."""
    import typing
    parameters = _parameters(fn)
    if parameters is None:
        return None
    out = []
    for name, default, hint in parameters:
        if hint.__class__ is not Annotated:
            return None
        base = hint.base
        specs = [m for m in hint.metadata if isinstance(m, ParamSpec)]
        if len(specs) != 1 or set(specs[0].kwargs) - _COSMETIC:
            return None
        spec = specs[0]
        param = _Param()
        param.name, param.kind = name, spec.kind
        param.default = default
        param.required = param.default is _NO_DEFAULT
        if typing.get_origin(base) is typing.Union:           # Optional[X]
            inner = [a for a in typing.get_args(base) if a is not type(None)]
            if len(inner) != 1:
                return None
            base = inner[0]
        param.multiple = typing.get_origin(base) is list
        if param.multiple:
            (base,) = typing.get_args(base) or (str,)
        if base not in (str, int, float, bool) or (base is bool and (param.multiple or spec.kind != "option")):
            return None
        param.type = base
        if spec.kind == "option":
            if not spec.args or not all(isinstance(d, str) and d.startswith("-") and "/" not in d
                                        for d in spec.args):
                return None
            param.decls = spec.args
        elif spec.args:
            return None
        out.append(param)
    return out


def _app_callback_call(fn):
    """How Typer runs the app's callback when the command line gives none of its options (they come before
    the command name): the options' own callbacks with their defaults, then the function with its defaults.
    None if a parameter has no default or an option callback wants more than its value."""
    calls = []
    parameters = _parameters(fn)
    if parameters is None:
        return None
    for _, default, hint in parameters:
        if default is _NO_DEFAULT:
            return None
        meta = hint.metadata if hint.__class__ is Annotated else ()
        for spec in (m for m in meta if isinstance(m, ParamSpec)):
            cb = spec.kwargs.get("callback")
            if cb is not None:
                if len(_parameters(cb) or ()) != 1:
                    return None
                calls.append((cb, default))

    def call():
        for cb, default in calls:
            cb(default)
        fn()
    return call


def _convert(param: _Param, text: str):
    if param.type is str:
        return text
    try:
        return param.type(text)
    except ValueError:
        return _NO_DEFAULT


def fast_parse(app: Typer, argv: list[str]):
    """(function, keyword arguments) for a plainly valid command line; None to let Typer decide."""
    if not argv or any(k.startswith("_TAPECLI_COMPLETE") for k in os.environ):
        return None
    fn = app.command_function(argv[0])
    if fn is None:
        return None
    if app._callback is not None and _app_callback_call(app._callback[1]) is None:
        return None
    params = _params(fn)
    if params is None:
        return None
    options = {decl: p for p in params if p.kind == "option" for decl in p.decls}
    values: dict[str, object] = {}
    positional: list[str] = []
    rest = argv[1:]
    i = 0
    while i < len(rest):
        token = rest[i]
        i += 1
        if token == "--":
            positional.extend(rest[i:])
            break
        if not token.startswith("-") or token == "-":
            positional.append(token)
            continue
        name, eq, text = token.partition("=")
        param = options.get(name)
        if param is None:                   # --help, an unknown option, "-qv", "-5": Typer's call
            return None
        if param.type is bool:
            if eq:
                return None
            values[param.name] = True
            continue
        if not eq:
            if i >= len(rest):
                return None
            text = rest[i]
            i += 1
        value = _convert(param, text)
        if value is _NO_DEFAULT:
            return None
        if param.multiple:
            values.setdefault(param.name, []).append(value)
        else:
            values[param.name] = value
    for param in params:
        if param.kind != "argument":
            continue
        if param.multiple:
            items = [_convert(param, t) for t in positional]
            positional = []
            if _NO_DEFAULT in items or (param.required and not items):
                return None
            if items:
                values[param.name] = items
        elif positional:
            value = _convert(param, positional.pop(0))
            if value is _NO_DEFAULT:
                return None
            values[param.name] = value
    if positional:
        return None
    for param in params:
        if param.name not in values:
            if param.required:
                return None
            values[param.name] = param.default
        elif param.multiple and param.kind == "option":
            values[param.name] = list(values[param.name])
    return fn, values
