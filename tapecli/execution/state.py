"""The run's own values for what allowed modules keep at module level (so that two runs never see each other,
and a run's draws are reproducible), and for their functions that reach attributes by name, print, or read the
command line."""
from __future__ import annotations

import argparse
import array
import dataclasses
import os
import decimal
import itertools
import operator
import random
import struct
import sys
import types

from tapecli.errors import TdfError, TdfNameError
from tapecli.execution import interfaces, regex
from tapecli.execution.tf_errors import is_catchable
from tapecli.runtime.context import current
from tapecli.runtime import numpy_gate
from tapecli.runtime.limits import admit_bytes

# A run's NumPy generator starts from this seed, as tapecli's own default generator does (docs/language.md):
# a program gives the same numbers on every run; ``np.random.seed(n)`` changes them (random's: RunContext's).
NUMPY_RANDOM_SEED = 0


def run_replacements(sandbox) -> dict[str, dict]:
    """module -> name -> the run's own value; each module's made when the run first asks for it (a program imports
    few of these modules, a TensorFlow program none: it pays for none it does not import)."""
    made: dict = {}

    def run_re():
        if "re" not in made:            # (string's Template reads the run's re)
            made["re"] = regex.module(sandbox)
        return made["re"]
    return _Made({
        "itertools": lambda: _itertools(sandbox), "random": _random, "operator": lambda: _operator(sandbox),
        "string": lambda: _string(sandbox, run_re()),
        "decimal": _decimal, "argparse": lambda: _argparse(sandbox), "pprint": lambda: _pprint(sandbox),
        "warnings": lambda: _warnings(sandbox), "numpy": lambda: _numpy(sandbox), "numpy.random": _numpy_random,
        "time": lambda: _time(sandbox), "os": lambda: _os(sandbox), "sys": lambda: _sys(sandbox), "re": run_re,
        "datetime": lambda: _datetime(sandbox), "struct": _struct, "array": lambda: _array(sandbox),
        # the library's makers of objects and classes that take any attribute name: sealed (interfaces.py)
        "types": lambda: {"SimpleNamespace": interfaces.SimpleNamespace}, "typing": lambda: _typing(sandbox),
        "dataclasses": lambda: {"make_dataclass": interfaces.make_dataclass, "dataclass": _dataclass(sandbox)}})


class _Made(dict):
    """A run's replacements, each module's made by its maker the first time it is asked for (then kept: the run's
    own for the rest of the run)."""

    def __init__(self, makers: dict):
        super().__init__()
        self.makers = makers

    def __missing__(self, module: str) -> dict:
        made = self[module] = self.makers[module]()
        return made

    def get(self, module: str, default=None):
        return self[module] if module in self.makers else default


def _struct() -> dict:
    """struct's packers, the bytes they make weighed first: their size is the format's (``"1000000000x"`` would be
    a gigabyte of padding)."""
    def pack(format, /, *values):
        size = struct.calcsize(format)
        admit_bytes(size, size, "struct.pack's result")
        return struct.pack(format, *values)

    class Struct(struct.Struct):
        def pack(self, *values):
            admit_bytes(self.size, self.size, "Struct.pack's result")
            return super().pack(*values)
    Struct.__module__ = "struct"
    return {"pack": pack, "Struct": Struct}


def _array(sandbox) -> dict:
    """array.array, its initializer consumed as a builtin's iterable is (a huge range or endless iterator ends at
    the limits) and weighed by its length."""
    class Array(array.array):
        def __new__(cls, typecode, initializer=None, /):
            if initializer is None:
                return super().__new__(cls, typecode)
            initializer = sandbox.iterable(initializer, "array")
            if hasattr(initializer, "__len__"):
                admit_bytes(len(initializer), len(initializer) * array.array(typecode).itemsize, "an array")
            return super().__new__(cls, typecode, initializer)
    Array.__name__ = Array.__qualname__ = "array"
    Array.__module__ = "array"
    return {"array": Array, "ArrayType": Array}


def _typing(sandbox) -> dict:
    """typing.get_type_hints as CPython's: an annotation string (``"Node"``, each annotation of a module that
    imports ``from __future__ import annotations``) is evaluated, but by the run's evaluator of annotations
    (_Annotation) in place of CPython's ``eval``, which would run the string as code outside the guards. The
    namespaces are the program's: a function's globals where they are the program's scope, a class's own and the
    program's scope for the program's classes, or what the program passes; a string of a library's is refused.
    The classes are those of ``__mro__`` a program reads (Sandbox._lineage); the rest is typing's own."""
    import functools
    import typing

    def forward(ref, globalns, localns, recursive_guard):
        """ForwardRef._evaluate, through the run's evaluator."""
        if ref.__forward_arg__ in recursive_guard:
            return ref
        if not ref.__forward_evaluated__ or localns is not globalns:
            if globalns is None and localns is None:
                globalns = localns = {}
            elif globalns is None:
                globalns = localns
            elif localns is None:
                localns = globalns
            if ref.__forward_module__ is not None:     # (a TypedDict's: the module of its class statement)
                if ref.__forward_module__ != "__main__":
                    raise _unevaluated(ref.__forward_arg__, "its module= names a library module's namespace")
                globalns = program_scope()
            value = typing._type_check(_Annotation(sandbox, globalns, localns).value(ref.__forward_arg__),
                                       "Forward references must evaluate to types.",
                                       is_argument=ref.__forward_is_argument__,
                                       allow_special_forms=ref.__forward_is_class__)
            ref.__forward_value__ = evaluate(value, globalns, localns, recursive_guard | {ref.__forward_arg__})
            ref.__forward_evaluated__ = True
        return ref.__forward_value__

    def evaluate(t, globalns, localns, recursive_guard=frozenset()):
        """typing._eval_type (CPython 3.11's), its forward references evaluated by forward()."""
        if isinstance(t, typing.ForwardRef):
            return forward(t, globalns, localns, recursive_guard)
        if isinstance(t, (typing._GenericAlias, types.GenericAlias, types.UnionType)):
            if isinstance(t, types.GenericAlias):
                args = tuple(typing.ForwardRef(arg) if isinstance(arg, str) else arg for arg in t.__args__)
                is_unpacked = t.__unpacked__
                if typing._should_unflatten_callable_args(t, args):
                    t = t.__origin__[(args[:-1], args[-1])]
                else:
                    t = t.__origin__[args]
                if is_unpacked:
                    t = typing.Unpack[t]
            evaluated = tuple(evaluate(a, globalns, localns, recursive_guard) for a in t.__args__)
            if evaluated == t.__args__:
                return t
            if isinstance(t, types.GenericAlias):
                return types.GenericAlias(t.__origin__, evaluated)
            if isinstance(t, types.UnionType):
                return functools.reduce(operator.or_, evaluated)
            return t.copy_with(evaluated)
        return t

    def program_scope():
        return sys.modules["__main__"].__dict__

    def get_type_hints(obj, globalns=None, localns=None, include_extras=False):
        if isinstance(obj, type):
            hints = {}
            for base in reversed(sandbox.get(obj, "__mro__")):
                ann = base.__dict__.get("__annotations__", {})
                if isinstance(ann, types.GetSetDescriptorType):
                    ann = {}
                # (CPython's namespace is the class's module's: the program's is __main__, a library's is refused)
                own = base.__module__ == "__main__"
                base_globals = globalns if globalns is not None else program_scope() if own else _LIBRARY
                base_locals = localns if localns is not None else dict(vars(base)) if own else _LIBRARY
                if localns is None and globalns is None:
                    base_globals, base_locals = base_locals, base_globals
                for name, value in ann.items():
                    if value is None:
                        value = type(None)
                    if isinstance(value, str):
                        value = typing.ForwardRef(value, is_argument=False, is_class=True)
                    hints[name] = evaluate(value, base_globals, base_locals)
            return hints if include_extras else {k: typing._strip_annotations(t) for k, t in hints.items()}
        if globalns is None:
            # the function's globals where they are the program's scope (its own function's, or the __init__ a
            # dataclass made there); a library's function's, or a module's, are not the program's
            globalns = _LIBRARY if isinstance(obj, types.ModuleType) else {}
            if not isinstance(obj, types.ModuleType):
                unwrapped = obj
                while hasattr(unwrapped, "__wrapped__"):
                    unwrapped = unwrapped.__wrapped__
                if hasattr(unwrapped, "__globals__"):
                    found = unwrapped.__globals__
                    globalns = found if found is program_scope() else _LIBRARY
            if localns is None:
                localns = globalns
        elif localns is None:
            localns = globalns
        hints = sandbox.getattr(obj, "__annotations__", None)
        if hints is None:
            from tapecli.execution.builtin_table import ProgramBuiltin
            if isinstance(obj, (*typing._allowed_types, ProgramBuiltin)):     # (the run's print is a builtin)
                return {}
            raise TypeError(f"{obj!r} is not a module, class, method, or function.")
        hints = dict(hints)
        for name, value in hints.items():
            if value is None:
                value = type(None)
            if isinstance(value, str):
                value = typing.ForwardRef(value, is_argument=not isinstance(obj, types.ModuleType), is_class=False)
            hints[name] = evaluate(value, globalns, localns)
        return hints if include_extras else {k: typing._strip_annotations(t) for k, t in hints.items()}
    get_type_hints.__qualname__, get_type_hints.__module__ = "get_type_hints", "typing"
    get_type_hints.__doc__ = typing.get_type_hints.__doc__
    return {"get_type_hints": get_type_hints}


# The namespace of a library's class, function or module, in which the run evaluates no annotation string.
_LIBRARY = types.MappingProxyType({})


def _unevaluated(text: str, why: str) -> TdfNameError:
    return TdfNameError(f"typing.get_type_hints cannot evaluate the annotation {text!r} in tapecli programs: {why}",
                        hint="annotate with names of the program's, their attributes, subscripts and |")


class _Annotation:
    """An annotation string's value as CPython's ``eval`` finds it in the namespaces get_type_hints gives (its
    locals, its globals, then the run's builtins), of the forms annotations take: names, attributes (read through
    the guard, as the program reads them), subscripts, ``|`` (weighed as the program's), tuples, lists and
    constants. A name the run keeps for itself and a namespace that is not the program's are refused, and so is
    any other form (a call, a lambda, a comprehension): evaluating it would run code no guard rewrote."""

    def __init__(self, sandbox, globalns, localns):
        self.sandbox, self.globalns, self.localns = sandbox, globalns, localns

    def value(self, text: str):
        import ast
        if self.globalns is _LIBRARY or self.localns is _LIBRARY:
            raise _unevaluated(text, "it is a library's, whose namespace is not the program's")
        return self.node(ast.parse(f"({text},)[0]" if text.startswith("*") else text, mode="eval").body, text)

    def node(self, node, text: str):
        import ast
        from tapecli.execution import weigh
        if isinstance(node, ast.Name):
            name = node.id
            if name.startswith("__"):       # (the run's __builtins__ and __tdf_* names, a sealed class's hidden ones)
                raise _unevaluated(text, f"the name {name} is Python's or tapecli's")
            found = self.globalns.get("__builtins__") if isinstance(self.globalns, dict) else None
            builtins = found if isinstance(found, dict) else sys.modules["__main__"].__dict__["__builtins__"]
            for namespace in (self.localns, self.globalns, builtins):
                if name in namespace:
                    return namespace[name]
            raise NameError(f"name '{name}' is not defined")
        if isinstance(node, ast.Attribute):
            return self.sandbox.get(self.node(node.value, text), node.attr)
        if isinstance(node, ast.Subscript):
            return self.node(node.value, text)[self.node(node.slice, text)]
        if isinstance(node, (ast.Tuple, ast.List)):
            items = [self.node(item, text) for item in node.elts]
            return tuple(items) if isinstance(node, ast.Tuple) else items
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            return weigh.binary("BitOr", self.node(node.left, text), self.node(node.right, text))
        raise _unevaluated(text, f"it holds {type(node).__name__}, a form tapecli evaluates only as the program's "
                                 "own code")


def _dataclass(sandbox):
    """dataclasses.dataclass, whose ``slots=True`` makes a new class in place of the program's: the program's
    too (its private names readable, sealed as its class statement's was)."""
    def dataclass(cls=None, /, **options):
        def made(original):
            result = dataclasses.dataclass(original, **options)
            if result is not original and isinstance(result, type) and sandbox.program_made(original):
                interfaces.seal(result)
                sandbox.classes.add(result)
            return result
        return made if cls is None else made(cls)
    return dataclass


def _itertools(sandbox) -> dict:
    """itertools' endless iterators as generators with a tick per item: consumed by a C call (list, sum), the
    originals would run past every limit unseen."""
    return {"count": lambda start=0, step=1: sandbox.drawn(itertools.count(start, step)),
            "cycle": lambda iterable: sandbox.drawn(itertools.cycle(iterable)),
            "repeat": lambda obj, *times: sandbox.drawn(itertools.repeat(obj)) if not times else itertools.repeat(
                obj, *times)}


def _random() -> dict:
    generator = current().python_random()       # (the run's: Keras's default seeds draw from it too)
    names = [n for n in dir(random) if not n.startswith("_")
             and getattr(getattr(random, n), "__self__", None) is random._inst]
    return {name: getattr(generator, name) for name in names}


def _operator(sandbox) -> dict:
    def attrgetter(*names):
        for name in names:
            if not isinstance(name, str):
                raise TypeError("attribute name must be a string")

        def read(obj, name):
            for part in name.split("."):
                obj = sandbox.get(obj, part)
            return obj

        if len(names) == 1:
            return lambda obj: read(obj, names[0])
        return lambda obj: tuple(read(obj, n) for n in names)

    def methodcaller(name, /, *args, **kwargs):
        if not isinstance(name, str):
            raise TypeError("method name must be a string")
        return lambda obj: sandbox.get(obj, name)(*args, **kwargs)

    return {"attrgetter": attrgetter, "methodcaller": methodcaller,
            "getitem": operator.getitem}


def _string(sandbox, run_re: dict) -> dict:
    """string's Formatter (GuardedFormatter) and Template: CPython's own string module executed afresh on the run's
    ``re``, so that a Template's pattern (a subclass's, compiled as the class is made) searches under the run's
    timer and its substitutions are weighed."""
    from tapecli.execution.fresh_module import executed
    from tapecli.execution.sandbox import GuardedFormatter

    class Formatter(GuardedFormatter):
        """string.Formatter, its fields' attributes read through the guard, its results weighed."""

        def __init__(self):
            super().__init__(sandbox)

    own = executed("string", {"re": types.SimpleNamespace(**run_re)})
    return {"Formatter": Formatter, "Template": own.Template}


def _decimal() -> dict:
    """decimal's context is the run's own (Sandbox.decimal_context), made the thread's current context while
    the program runs (execution.run): ``getcontext().prec = N`` changes the program's arithmetic, as in
    CPython, and no other run's; ``localcontext`` works on it as CPython's does. The module's shared contexts
    (``DefaultContext``, which seeds every new context, ...) are the run's own copies."""
    shared = {name: getattr(decimal, name).copy() for name in ("DefaultContext", "BasicContext", "ExtendedContext")}
    return {"getcontext": decimal.getcontext, "setcontext": _refuse_setcontext,
            "localcontext": decimal.localcontext, **shared}   # the module's shared contexts: the run's copies


def _refuse_setcontext(context):
    raise TdfError("decimal.setcontext() is not available in tapecli programs: it changes the whole process's "
                   "context", hint="change the run's own context: decimal.getcontext().prec = N")


def _argparse(sandbox) -> dict:
    class ArgumentParser(argparse.ArgumentParser):
        """argparse reading no arguments: a program is run with its defaults (tapecli's --set changes
        declarations); its name is the program file's. Its help goes to standard output (or the file the program
        gives), its usage and errors to the program's standard error, as CPython's."""

        def __init__(self, prog=None, *args, **kwargs):
            super().__init__(os.path.basename(sandbox.filename) if prog is None else prog, *args, **kwargs)

        def parse_known_args(self, args=None, namespace=None):
            return super().parse_known_args([] if args is None else args, namespace)

        def _print_message(self, message, file=None):
            if message:
                file = file or sys.stderr
                if file is sandbox.process_stderr:      # (argparse's own sys's: the program's is the run's)
                    file = sandbox.stderr
                try:
                    file.write(message)
                except (AttributeError, OSError):
                    pass

        def exit(self, status=0, message=None):
            if message:
                self._print_message(message, sys.stderr)
            raise SystemExit(status)

        def _read_args_from_files(self, arg_strings):
            if self.fromfile_prefix_chars and any(a[:1] and a[0] in self.fromfile_prefix_chars for a in arg_strings):
                from tapecli.execution.modules import refused_name
                raise refused_name("argparse", "ArgumentParser(fromfile_prefix_chars=...)", "it reads files")
            return arg_strings

    return {"ArgumentParser": ArgumentParser}


def _pprint(sandbox) -> dict:
    import pprint

    def pprint_(obj, stream=None, *args, **kwargs):
        if stream is not None:
            return pprint.pprint(obj, stream, *args, **kwargs)
        sandbox.print(pprint.pformat(obj, *args, **kwargs))

    return {"pprint": pprint_, "pp": lambda obj, *args, sort_dicts=False, **kwargs: pprint_(
        obj, *args, sort_dicts=sort_dicts, **kwargs)}


def _warnings(sandbox) -> dict:
    """warnings' filters and records, the run's own (the real module's are the process's: two runs in two threads
    would share them), with CPython's rules (Lib/warnings.py): the newest matching filter decides; "error" raises
    the warning, "ignore" drops it, "always" shows it, "default"/"module" once per text, category and line
    (module: and per module), "once" once per text and category; ``catch_warnings`` saves and restores the
    filters and with ``record=True`` collects WarningMessages. A warning shown is the run's, at the program's
    line, or the program's own ``warnings.showwarning``, where it set one, is called with it as CPython calls a
    replaced one (with the program's path as run was given it). ``formatwarning``, CPython's ``showwarning`` and
    ``warn_explicit`` are left out: they read source files."""
    import re
    import warnings

    from tapecli.execution.sandbox import program_frame
    from tapecli.runtime.context import current

    filters: list[tuple] = []       # (action, message pattern or None, category, module pattern or None, lineno)
    records: list[list | None] = [None]
    shown: set[tuple] = set()
    actions = ("error", "ignore", "always", "default", "module", "once")

    def add(action, message, category, module, lineno, append):
        if action not in actions:
            raise ValueError(f"invalid action: {action!r}")
        if not (isinstance(category, type) and issubclass(category, Warning)):
            raise TypeError("category must be a Warning subclass")
        if not isinstance(lineno, int) or lineno < 0:
            raise ValueError("lineno must be an int >= 0")
        entry = (action, message, category, module, lineno)
        if entry in filters:
            filters.remove(entry)
        filters.append(entry) if append else filters.insert(0, entry)

    def filterwarnings(action, message="", category=Warning, module="", lineno=0, append=False):
        add(action, re.compile(message, re.I) if message else None, category,
            re.compile(module) if module else None, lineno, append)

    def simplefilter(action, category=Warning, lineno=0, append=False):
        add(action, None, category, None, lineno, append)

    def resetwarnings():
        filters.clear()

    def warn(message, category=None, stacklevel=1, source=None, *, skip_file_prefixes=()):
        if isinstance(message, Warning):
            category = message.__class__
        category = UserWarning if category is None else category
        if not (isinstance(category, type) and issubclass(category, Warning)):
            raise TypeError(f"category must be a Warning subclass, not '{type(category).__name__}'")
        frame = program_frame(sandbox.filename)
        for _ in range(max(stacklevel, 1) - 1):
            frame = frame.f_back if frame is not None else None
        line = frame.f_lineno if frame is not None and frame.f_code.co_filename == sandbox.filename else None
        module = "__main__" if line is not None else "sys"
        text = str(message)
        action = next((f[0] for f in filters if (f[1] is None or f[1].match(text)) and issubclass(category, f[2])
                       and (f[3] is None or f[3].match(module)) and f[4] in (0, line)), _default(category))
        if action == "error":
            raise message if isinstance(message, Warning) else category(message)
        key = {"once": (text, category), "module": (text, category, module)}.get(action, (text, category, line))
        if action == "ignore" or action != "always" and (action, key) in shown:
            return
        shown.add((action, key))
        made = message if isinstance(message, Warning) else category(message)
        if records[-1] is not None:
            records[-1].append(warnings.WarningMessage(made, category, sandbox.filename, line or 0, None, source))
        elif replaced() is not None:
            replaced()(made, category, sandbox.filename, line or 0, None, None)
        else:
            current().settings.warn(f"{category.__name__}: {text}", line)

    def replaced():
        """The program's own ``warnings.showwarning``, where it set one."""
        module = sandbox.modules.get("warnings")
        return module.__dict__.get("showwarning") if module is not None else None

    class catch_warnings:
        """``with warnings.catch_warnings(record=..., action=...)``: the filters as they were, after the block."""

        def __init__(self, *, record=False, module=None, action=None, category=Warning, lineno=0, append=False):
            self._record, self._action = record, (action, category, lineno, append)

        def __enter__(self):
            self._saved = list(filters)
            self._hook = replaced()
            if self._action[0] is not None:
                simplefilter(*self._action)
            records.append([] if self._record else records[-1])
            return records[-1] if self._record else None

        def __exit__(self, *exc):
            filters[:] = self._saved
            records.pop()
            module = sandbox.modules.get("warnings")
            if module is not None:          # (a showwarning the block set is undone, as CPython's block undoes it)
                module.__dict__.pop("showwarning", None)
                if self._hook is not None:
                    module.__dict__["showwarning"] = self._hook
            return False

    return {"warn": warn, "simplefilter": simplefilter, "filterwarnings": filterwarnings,
            "resetwarnings": resetwarnings, "catch_warnings": catch_warnings, "filters": filters,
            "WarningMessage": warnings.WarningMessage}


def _default(category) -> str:
    """CPython's default filters (without -W): these categories are ignored; the rest shown once a line."""
    return "ignore" if issubclass(category, (PendingDeprecationWarning, ImportWarning, ResourceWarning)) \
        else "default"


def _numpy(sandbox) -> dict:
    """NumPy's functions that look outside their arguments, as they would from the program: ``np.bmat('A, B')``
    reads the names of the program's frame (NumPy's own reads its caller's, here the sandbox's wrapper);
    ``np.info`` looks names up in NumPy alone (its ``toplevel`` imports any module), describes NumPy's own function
    where the program hands it the weighed view of one, and prints to the run's output (execution.run makes that
    sys.stdout)."""
    import numpy as np

    from tapecli.execution.modules import refused_name
    from tapecli.execution.sandbox import program_frame

    def bmat(obj, ldict=None, gdict=None):
        if isinstance(obj, str) and gdict is None:
            frame = program_frame(sandbox.filename)
            ldict, gdict = frame.f_locals, frame.f_globals
        return np.bmat(obj, ldict, gdict)

    def info(object=None, maxwidth=76, output=None, toplevel="numpy"):
        if toplevel != "numpy":
            raise refused_name("numpy", f"info(toplevel={toplevel!r})", "it imports the module it names")
        return np.info(sandbox.unwrapped(object), maxwidth, output, toplevel)

    bmat.__doc__, info.__doc__ = np.bmat.__doc__, np.info.__doc__
    return {"bmat": bmat, "info": info,
            **{name: _in_memory(getattr(np, name), name) for name in numpy_gate.IN_MEMORY}}


# NumPy's readers and writers of text and .npy/.npz data (numpy_gate.IN_MEMORY), which take a program's own stream
# (io.StringIO, io.BytesIO) or lines (a list, a generator) as well as a file's name: they run on those, and refuse a
# path. A pickle is neither written nor read (loading one runs code): allow_pickle is False, its default for
# np.load (np.save's is True: an object array is then NumPy's ValueError where CPython would have pickled it).


def _in_memory(function, name: str):
    from tapecli.execution.modules import refused_name

    def run(file, *args, **kwargs):
        if isinstance(file, (str, bytes, os.PathLike)) or hasattr(type(file), "__fspath__"):
            raise refused_name("numpy", f"{name}() of a path", "it reaches files (a program's io.StringIO or io.BytesIO, "
                                                              "or a list of lines, is read and written)")
        if name in ("load", "save", "savez", "savez_compressed"):     # (allow_pickle: load's and save's second)
            given = args[1] if name in ("load", "save") and len(args) > 1 else kwargs.get("allow_pickle", False)
            if given:
                raise refused_name("numpy", f"{name}(allow_pickle=True)", "a pickle runs code where it is loaded")
            if not (name in ("load", "save") and len(args) > 1):
                kwargs["allow_pickle"] = False
        return function(file, *args, **kwargs)
    run.__name__ = run.__qualname__ = name
    run.__doc__ = function.__doc__
    return run


def _numpy_random() -> dict:
    import numpy as np
    state = np.random.RandomState(NUMPY_RANDOM_SEED)
    names = [n for n in dir(np.random) if not n.startswith("_")
             and getattr(getattr(np.random, n), "__self__", None) is np.random.mtrand._rand]
    own = {name: getattr(state, name) for name in names}
    own.update(seed=state.seed, ranf=state.random_sample, sample=state.random_sample)
    return own


def _clock(sandbox):
    """A reading of the run's clock (runtime/clock.py), its first warning at the program's line."""
    from tapecli.execution.sandbox import program_frame
    from tapecli.runtime.context import current

    def read() -> float:
        frame = program_frame(sandbox.filename)
        ctx = current()
        return ctx.clock.read(ctx.settings, frame.f_lineno if frame is not None else None)
    return read


def _time(sandbox) -> dict:
    """time on the run's clock (runtime/clock.py)."""
    import calendar
    import time

    from tapecli.runtime.clock import CLOCK_START
    from tapecli.runtime.context import current

    read = _clock(sandbox)

    def sleep(seconds):
        if not isinstance(seconds, (int, float)) or isinstance(seconds, bool):
            raise TypeError(f"'{type(seconds).__name__}' object cannot be interpreted as an integer or float")
        current().clock.sleep(seconds)

    def since_start() -> float:
        return read() - CLOCK_START

    def broken_down(seconds=None):      # the run's clock is UTC: localtime is gmtime (no machine time zone)
        return time.gmtime(read() if seconds is None else seconds)

    def strftime(form, moment=None):
        return time.strftime(form, broken_down() if moment is None else moment)

    def asctime(moment=None):
        return time.asctime(broken_down() if moment is None else moment)

    return {"time": read, "time_ns": lambda: round(read() * 1e9), "sleep": sleep,
            "perf_counter": since_start, "monotonic": since_start, "process_time": since_start,
            "thread_time": since_start, "perf_counter_ns": lambda: round(since_start() * 1e9),
            "monotonic_ns": lambda: round(since_start() * 1e9), "process_time_ns": lambda: round(since_start() * 1e9),
            "gmtime": broken_down, "localtime": broken_down, "mktime": lambda moment: float(calendar.timegm(moment)),
            "strftime": strftime, "asctime": asctime,
            "ctime": lambda seconds=None: time.asctime(broken_down(seconds)),
            "timezone": 0, "altzone": 0, "daylight": 0, "tzname": ("UTC", "UTC")}


class Environment(dict):
    """``os.environ`` of a run: its own, empty at the start (a program never reads the process's environment),
    holding what the program sets, strings only as in CPython."""

    def __setitem__(self, key, value):
        for part in (key, value):
            if not isinstance(part, str):
                raise TypeError(f"str expected, not {type(part).__name__}")
        super().__setitem__(key, value)

    def setdefault(self, key, default=None):
        if key not in self:
            self[key] = default
        return self[key]

    def update(self, *args, **kwargs):
        for key, value in dict(*args, **kwargs).items():
            self[key] = value


def _os(sandbox) -> dict:
    environment = Environment()
    return {"environ": environment, "getenv": lambda key, default=None: environment.get(key, default)}


def _sys(sandbox) -> dict:
    from tapecli.execution.sandbox import program_depth
    room = program_depth(sandbox.limits)
    limits = {"asked": room, "given": room}     # what the program asked for, and the frames it is given

    def getrecursionlimit():
        """The program's recursion limit (the process's counts the frames of the run's machinery too)."""
        return limits["asked"]

    def setrecursionlimit(limit):
        """CPython's, within the run's room: a program may lower its limit, or raise it up to what the run gives
        (CPython's 1,000 frames, or --max-depth if more); past that it recurses as deep as the run lets it, and is
        warned (a script's ``sys.setrecursionlimit(10**6)`` before a search that goes a few hundred deep runs)."""
        from tapecli.execution.sandbox import program_frame
        from tapecli.recursion import move_recursion_limit
        from tapecli.runtime.context import current
        limit = operator.index(limit)
        if limit < 1:
            raise ValueError("recursion limit must be greater or equal than 1")
        given = min(limit, room)
        process = sys.getrecursionlimit()
        try:
            move_recursion_limit(process, process - limits["given"] + given)
        except RecursionError:      # (CPython's words, in the program's frames)
            raise RecursionError(f"cannot set the recursion limit to {limit} at the recursion depth "
                                 f"{_program_depth(sandbox.filename)}: the limit is too low") from None
        limits["asked"], limits["given"] = limit, given
        if limit > room:
            frame = program_frame(sandbox.filename)
            current().settings.warn_once_at(f"sys.setrecursionlimit({limit}): a program recurses at most {room:,} "
                                            "frames deep in tapecli (raise it with --max-depth)",
                                            frame.f_lineno if frame is not None else None)

    def exception():
        """The exception being handled, as the program's ``e`` in ``except ... as e`` is (its traceback's frames
        unreachable as that of ``e.__traceback__`` is); none while one of the run's own stops goes up (a limit
        met, in a ``finally`` block), which no handler of the program's sees either."""
        error = sys.exception()
        return error if error is not None and is_catchable(error) else None

    def exc_info():
        error = exception()
        return (None, None, None) if error is None else (type(error), error, error.__traceback__)
    from tapecli.execution.modules import Current
    return {"argv": [sandbox.filename], "stdout": Current(lambda: sys.stdout), "stderr": Current(sandbox.program_stderr),
            "__stdout__": sandbox.stdout, "__stderr__": sandbox.stderr,
            "getrecursionlimit": getrecursionlimit, "setrecursionlimit": setrecursionlimit, "exception": exception,
            "exc_info": exc_info}


def _program_depth(filename: str) -> int:
    """The recursion depth CPython would report in the program (its frames, and the call being made)."""
    frame, n = sys._getframe(), 1       # (CPython's count holds the call of setrecursionlimit itself)
    while frame is not None:
        n += frame.f_code.co_filename == filename
        frame = frame.f_back
    return n


def _datetime(sandbox) -> dict:
    """datetime on the run's clock, in UTC as time's (no machine time zone): ``now``, ``today`` and ``utcnow``
    read it; ``fromtimestamp``, ``timestamp`` and ``astimezone`` take local time to be UTC. The classes derive
    from CPython's (``isinstance`` of a date holds; arithmetic and formatting are CPython's)."""
    import datetime as real

    read, utc = _clock(sandbox), real.timezone.utc

    # The clocked methods live in bases a program cannot name (``__mro__`` and ``__bases__`` leave them out),
    # so that super(datetime.datetime, d).now() finds them too, never CPython's reading of the machine's clock.
    class ClockedDate(real.date):
        __slots__ = ()

        @classmethod
        def today(cls):
            return cls.fromtimestamp(read())

        @classmethod
        def fromtimestamp(cls, t):
            moment = real.datetime.fromtimestamp(t, utc)
            return cls(moment.year, moment.month, moment.day)

        def __repr__(self):         # (CPython's repr names the class by its type's name: ours has no module)
            return "datetime." + real.date.__repr__(self)

    class date(ClockedDate):
        __slots__ = ()

    class ClockedDatetime(real.datetime, date):
        __slots__ = ()

        @classmethod
        def now(cls, tz=None):
            return cls.fromtimestamp(read(), tz)

        @classmethod
        def today(cls):
            return cls.now()

        @classmethod
        def utcnow(cls):
            return cls.utcfromtimestamp(read())

        @classmethod
        def fromtimestamp(cls, t, tz=None):
            moment = super(ClockedDatetime, cls).fromtimestamp(t, utc if tz is None else tz)
            return moment.replace(tzinfo=None) if tz is None else moment

        def __repr__(self):
            return "datetime." + real.datetime.__repr__(self)

        def timestamp(self):
            return real.datetime.timestamp(self.replace(tzinfo=utc) if self.tzinfo is None else self)

        def astimezone(self, tz=None):
            return real.datetime.astimezone(self.replace(tzinfo=utc) if self.tzinfo is None else self,
                                            utc if tz is None else tz)

    class datetime(ClockedDatetime):
        __slots__ = ()

    for cls in (date, datetime):           # (named as CPython's are: datetime.date, not a local class of ours)
        cls.__module__, cls.__qualname__ = "datetime", cls.__name__
    return {"date": date, "datetime": datetime}
