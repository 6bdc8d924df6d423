"""What the compiled program calls at run time (guard.py compiles the calls in): attribute access by name, the
tick, weighed operators, the restricted builtins, imports and print. One :class:`Sandbox` per run holds its
state (the classes the program made, its output, its modules), so that two runs never see each other."""
from __future__ import annotations

import array
import builtins
import decimal
import functools
import io
import re
import string
import sys
import time
import types
import weakref

from tapecli.errors import LimitError, TdfError, TdfNameError
from tapecli.execution import guard, interfaces, weigh
from tapecli.execution.modules import ALLOWED, refused_name
from tapecli.interpreter.core import ErrorLine, Unterminated
from tapecli.library.keras.keras_tensor import KERAS_MASK, KerasTensor
from tapecli.execution.tf_values import LibraryObject, library_value
from tapecli.execution.tf_errors import is_catchable
from tapecli.runtime.limits import LIST_SLOT, Limits, admit_bytes, char_bytes, check_deadline, resident_within
from tapecli.runtime.numpy_gate import weighed_method
from tapecli.runtime.context import current

# `_`-names any object may be asked for: names, documentation, the protocol methods a program calls
# explicitly (``super().__init__(...)``, ``x.__len__()``). The rest (``__globals__``, ``__subclasses__``,
# ``__dict__`` of library objects, ``__code__``, ``__builtins__``...) lead out of the sandbox.
READABLE_PRIVATE = frozenset({
    "__name__", "__qualname__", "__doc__", "__class__", "__module__", "__init__", "__new__", "__call__",
    "__len__", "__iter__", "__next__", "__reversed__", "__contains__", "__getitem__", "__setitem__",
    "__delitem__", "__missing__", "__repr__", "__str__", "__format__", "__hash__", "__bool__", "__index__",
    "__int__", "__float__", "__complex__", "__round__", "__floor__", "__ceil__", "__trunc__", "__abs__", "__neg__",
    "__pos__", "__invert__",
    "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__enter__", "__exit__", "__post_init__",
    "__version__", "__all__", "__annotations__", "__slots__", "__origin__", "__args__", "__dataclass_fields__",
    "__match_args__", "__members__", "__get__", "__set__", "__delete__", "__set_name__",   # (descriptors')
    "__cause__", "__context__", "__suppress_context__", "__notes__", "__init_subclass__",   # (an exception's chain
    # and its add_note's notes: exceptions)
    "__stdout__", "__stderr__",     # (sys's: the run's own streams, as a program restores them)
    "_replace", "_asdict", "_fields", "_make", "_field_defaults",           # namedtuple's public API
    *(f"__{prefix}{op}__" for op in ("add", "sub", "mul", "matmul", "truediv", "floordiv", "mod", "divmod",
                                     "pow", "lshift", "rshift", "and", "or", "xor") for prefix in ("", "r", "i")),
})
UNREACHABLE = guard.UNREACHABLE
# An ArgumentParser's lists of its actions, which scripts read to list their options (data, no method).
_ARGPARSE_PRIVATE = frozenset({"_actions", "_option_string_actions"})
# A class's bases, read of any class, without those a program cannot name (Sandbox._lineage).
_LINEAGE = frozenset({"__mro__", "__bases__", "mro"})
# Python's attribute access itself, as ``object`` and ``super()`` give it: through the guard (Sandbox._attribute_hook).
_ATTRIBUTE_HOOKS = frozenset({"__setattr__", "__getattribute__", "__delattr__"})
_HINT = "programs cannot reach files, the environment or Python objects"
_CONTAINERS = frozenset({list, tuple, dict, set, frozenset, str, bytes, bytearray, memoryview})
_CHARACTER_LISTS = {"list": "list() of a string", "tuple": "tuple() of a string", "sorted": "sorted()",
                    "comprehension": "the characters of a string"}
_DICT_VIEWS = (type({}.keys()), type({}.values()), type({}.items()))
# Builtins that copy a container into a new one: bytes a slot (sorted's merge keeps up to half as many again).
_COPIES = {"list": LIST_SLOT, "tuple": LIST_SLOT, "sorted": LIST_SLOT * 3 // 2, "set": 4 * LIST_SLOT,
           "frozenset": 4 * LIST_SLOT, "dict": 6 * LIST_SLOT}
_INT_OBJECT = 32
_CO_OPTIMIZED = 0x1       # (a code object's flag: a function's, a lambda's or a comprehension's frame)


# CPython's default recursion limit: the frames a program of its own may stack
CPYTHON_RECURSION_LIMIT = 1000


def program_depth(limits: Limits) -> int:
    """How many frames a program may stack: CPython's default limit, or --max-depth if more (what the run's
    ``sys.getrecursionlimit()`` answers)."""
    return max(limits.max_depth, CPYTHON_RECURSION_LIMIT)


def consumer_word(consumer: str) -> str:
    return {"sorted": "list", "frozenset": "set"}.get(consumer, consumer)


class Sandbox:
    """One run's guards and state."""

    def __init__(self, limits: Limits, filename: str):
        self.limits = limits
        self.filename = filename
        self.classes: weakref.WeakSet = weakref.WeakSet()     # the classes the program's class statements made
        # (module, qualname) of the class statements being executed: their class, before its statement returns
        # it, is already the program's to __init_subclass__, __set_name__ and a metaclass's __init__
        self.building: list[tuple[str, str]] = []
        self.text: list[str] = []                            # what print() wrote, in pieces
        self.error_partial = ""                              # standard error's text after its last newline
        # the module proxies this run imported (weakly: a run's modules, its logging's loggers, go with the run)
        self.modules: weakref.WeakValueDictionary[str, types.ModuleType] = weakref.WeakValueDictionary()
        self.library: dict[int, tuple] = {}     # id of a NumPy function as the program has it -> (it, NumPy's own)
        self.steps = 0
        self.until_check = Limits.CHECK_EVERY
        self.memory_at = time.monotonic() + Limits.MEMORY_EVERY_S
        self.depth_base = 0
        self.decimal_context = decimal.Context()           # the run's decimal context (execution.run)
        self.eager = None           # a TensorFlow program's tensors' attributes (execution/tensorflow.py: Eager)
        self.muted_prints = 0       # calls of a tf.function running its traced graph (no Python print)
        self.stand_ins: dict[str, dict] = {}     # module -> name -> the run's own value (execution.run's state)
        # the process's standard error as the run starts: while it is sys.stderr, the program's is the run's own
        # (Sandbox.stderr); a program's contextlib.redirect_stderr puts its stream there instead
        self.process_stderr = sys.stderr

    def program_stderr(self):
        """The program's ``sys.stderr``: the run's standard error, or the stream its redirect_stderr put there."""
        return self.stderr if sys.stderr is self.process_stderr else sys.stderr

    def unwrapped(self, value):
        """NumPy's own function where ``value`` is the program's view of it (its result weighed), else ``value``:
        what a library that looks at a function (np.info) should see."""
        wrapper, original = self.library.get(id(value), (None, None))
        return original if wrapper is value else value

    # ---- output
    @property
    def output(self) -> list[str]:
        """The lines written, standard error's as ErrorLines, in the order they were written."""
        lines: list[str] = []
        pieces = [*self.text, *([ErrorLine(self.error_partial)] if self.error_partial else [])]
        ends = [i for i, piece in enumerate(pieces) if type(piece) is ErrorLine] + [len(pieces)]
        final = max((i for i, piece in enumerate(pieces) if type(piece) is not ErrorLine), default=-1)
        start = 0
        for end in ends:
            text = "".join(pieces[start:end])
            if text:
                lines += text[:-1].split("\n") if text.endswith("\n") else text.split("\n")
                if start <= final < end and not text.endswith("\n"):
                    lines[-1] = Unterminated(lines[-1])     # (standard output's last text, not ended)
            if end < len(pieces):
                lines.append(pieces[end])
            start = end + 1
        return lines

    def print(self, *values, sep=" ", end="\n", file=None, flush=False):
        if self.muted_prints:          # a tf.function's call that runs its traced graph (tf_calls._traced)
            return
        if file is None and not isinstance(sys.stdout, _Output):    # (contextlib.redirect_stdout of the program's)
            file = sys.stdout
        if file is not None:
            return builtins.print(*values, sep=sep, end=end, file=file, flush=flush)
        if sep is not None and not isinstance(sep, str):
            raise TypeError(f"sep must be None or a string, not {type(sep).__name__}")
        if end is not None and not isinstance(end, str):
            raise TypeError(f"end must be None or a string, not {type(end).__name__}")
        self.write((" " if sep is None else sep).join(weigh.str_of(v) for v in values) + ("\n" if end is None else end))

    def write(self, text: str, what: str = "print()'s output") -> int:
        admit_bytes(len(text), len(text), what)
        self.text.append(text)
        return len(text)

    def write_error(self, text: str, what: str = "the program's standard error") -> int:
        """Standard error's text: each whole line an ErrorLine among the output's pieces."""
        admit_bytes(len(text), len(text), what)
        *lines, self.error_partial = (self.error_partial + text).split("\n")
        self.text.extend(ErrorLine(line) for line in lines)
        return len(text)

    @functools.cached_property
    def stderr(self):
        """Standard error as the program's ``sys.stderr`` (and tf.print's stream): lines of the run's output
        that the command line writes to stderr."""
        return _ErrorOutput(self)

    @functools.cached_property
    def stdout(self):
        """The run's output as a text stream: sys.stdout while the program runs, for what the libraries it calls
        print (``np.info``), and the program's ``sys.stdout`` until it sets its own (``sys.__stdout__`` always)."""
        return _Output(self)

    # ---- the tick, at every loop iteration, call and comprehension element
    def tick(self):
        self.steps += 1
        self.until_check -= 1
        # (no comparison here: one at the recursion limit would make CPython's RecursionError "... in comparison")
        if not self.until_check:
            self.until_check = Limits.CHECK_EVERY
            self._checks()
        return False

    def charge(self, steps: int) -> None:
        """``steps`` ticks at once (a loop plan's iteration: the calls of the functions its plan took in), with
        the checks they would have made, once."""
        self.steps += steps
        self.until_check -= steps
        if self.until_check <= 0:
            self.until_check = self.until_check % Limits.CHECK_EVERY or Limits.CHECK_EVERY
            self._checks()

    def _checks(self) -> None:
        self.check_steps()
        check_deadline()
        now = time.monotonic()
        settings = current().settings
        if now >= self.memory_at and settings.max_memory is not None:
            self.memory_at = now + Limits.MEMORY_EVERY_S
            used = resident_within(settings.max_memory)
            if used > settings.max_memory:
                raise LimitError(f"the program's memory in use reached {used / 2**30:.2f} GiB, over the memory "
                                 f"limit of {settings.max_memory / 2**30:.2f} GiB",
                                 hint="raise it with TAPECLI_MAX_MEMORY=BYTES")

    def check_steps(self) -> None:
        """The steps against --max-steps (a loop plan's iterations count theirs too: execution/planned_loops.py)."""
        if self.steps > self.limits.max_steps:
            raise LimitError(f"the program ran more than {self.limits.max_steps:,} loop steps and calls",
                             hint="is a loop endless? raise the limit with --max-steps N")

    def iterable(self, value, consumer: str):
        """What a builtin (or a comprehension) is about to consume in one C call: a container as it is (a
        string's characters as a list weighed first); a range, its length charged to the steps; an integer
        (``bytes(n)``), weighed; any other iterable, drawn item by item with a tick each, so that an endless
        or huge iterator ends at the limits."""
        kind = type(value)
        if kind is str and consumer in _CHARACTER_LISTS:
            weigh.weigh_characters(value, _CHARACTER_LISTS[consumer])
            return value
        if kind in _CONTAINERS:
            if consumer in _COPIES and len(value) > 1 << 16:
                admit_bytes(len(value), len(value) * _COPIES[consumer], f"{consumer}()'s new {consumer_word(consumer)}")
            return value
        if kind is range:
            self.steps += len(value)
            self.until_check = 1
            self.tick()
            if consumer in _COPIES or consumer == "comprehension":      # an int object and a slot each
                admit_bytes(len(value), len(value) * (LIST_SLOT + _INT_OBJECT), f"a list of {len(value):,} items")
            return value
        if kind is int:
            if consumer in ("bytes", "bytearray"):
                admit_bytes(value, value, f"{consumer}()'s result")
            return value
        if consumer == "comprehension":
            return value                 # the comprehension's own loop ticks
        if hasattr(kind, "__len__") and kind.__module__ != "builtins" or isinstance(value, _DICT_VIEWS) \
                or not (hasattr(kind, "__iter__") or hasattr(kind, "__getitem__")):    # (CPython's TypeError)
            return value
        return self.drawn(value)

    def iterable_call(self, make, *args):
        """iter(callable, sentinel) drawn with a tick per call (its C loop would run unseen)."""
        made = make(*args)
        return self.drawn(made) if len(args) == 2 else made

    def pow(self, base, exp, mod=None):
        if mod is None:
            return weigh.binary("Pow", base, exp)
        return builtins.pow(base, exp, mod)

    def drawn(self, iterable):
        tick = self.tick
        for item in iterable:
            tick()
            yield item

    @staticmethod
    def caught():
        """First in every except handler: the run's own stops go on up (a library error that crossed into a
        TensorFlow program as the class it stands for is the program's to catch: tf_errors.catchable)."""
        error = sys.exc_info()[1]
        if not is_catchable(error):
            raise error

    # ---- attributes
    def program_made(self, obj) -> bool:
        """Whether ``obj`` is a class the program made, or an instance of one."""
        cls = obj if isinstance(obj, type) else type(obj)
        return cls in self.classes or self._being_built(cls)

    def _being_built(self, cls: type) -> bool:
        return bool(self.building) and (type.__getattribute__(cls, "__module__"),
                                        type.__getattribute__(cls, "__qualname__")) in self.building

    def readable(self, obj, name: str) -> bool:
        if name in UNREACHABLE:
            return name in guard.LIBRARY_WAYS_OUT and self._program_defines(obj, name)
        if name == "re" and isinstance(obj, re.Match):   # (its pattern: untimed, regex.py)
            return False
        if name in ("__cause__", "__context__", "__traceback__") and isinstance(obj, TdfError):  # (tapecli's internals)
            return False
        if not name.startswith("_") or name in READABLE_PRIVATE or name in _LINEAGE and isinstance(obj, type):
            return True
        if name == "__traceback__":     # (its frames are unreachable: the run's traceback shows the program's)
            return isinstance(obj, BaseException)
        if name == KERAS_MASK:          # (a tensor's Keras mask, or a Keras tensor's, as TensorFlow programs read it)
            return self.eager is not None and self.eager.owns(obj) or isinstance(obj, LibraryObject) and isinstance(
                library_value(obj), KerasTensor)
        if name == "__wrapped__":           # (functools.wraps's and lru_cache's: the program's own function)
            return self._program_function(builtins.getattr(obj, name, None))
        if name in ("__defaults__", "__kwdefaults__"):      # (a program function's: values its own text gave,
            return self._program_function(obj.__func__ if isinstance(obj, types.MethodType) else obj)  # or set)
        if name == "__closure__":           # (a program function's cells hold what its own code names)
            return self._program_function(obj) and not any(
                free.startswith("__tdf") for free in obj.__code__.co_freevars)
        if name in _ARGPARSE_PRIVATE and any(c.__module__ == "argparse" and c.__name__ == "ArgumentParser"
                                             for c in type(obj).__mro__):
            return True
        return self.program_made(obj) and name not in ("__globals__", "__code__", "__builtins__", "__closure__")

    def _program_defines(self, obj, name: str) -> bool:
        """Whether ``obj.name`` is found in a program's own instance or class before any class of Python's or a
        library's (a subclass of ndarray reaches ndarray's ``dump`` only where it defines none)."""
        if not self.program_made(obj):
            return False
        if not isinstance(obj, type) and name in builtins.getattr(obj, "__dict__", {}):
            return True
        for cls in (obj if isinstance(obj, type) else type(obj)).__mro__:
            if name in cls.__dict__:
                return cls in self.classes or self._being_built(cls)
        return False

    def _program_function(self, value) -> bool:
        return isinstance(value, types.FunctionType) and value.__code__.co_filename == self.filename

    def get(self, obj, name: str):
        if name in _ATTRIBUTE_HOOKS and (obj is object or isinstance(obj, super)):
            return self._attribute_hook(obj, name)
        if not self.readable(obj, name):
            raise _unreachable(obj, name)
        if name in ("format", "format_map") and isinstance(obj, str) or obj is str and name in ("format", "format_map"):
            return SafeFormatter(self).method(obj, name)
        if name in _LINEAGE and isinstance(obj, type):
            return self._lineage(obj, name)
        if name == "__class__" and self.eager is not None:      # (a library value's: TensorFlow's class)
            return self.eager.class_of(obj)
        if self.eager is not None and self.eager.owns(obj):
            return self.eager.attribute(obj, name)
        value = getattr(obj, name)
        return _weighed_method(value, obj, name)

    def _lineage(self, cls: type, name: str):
        """``cls.__mro__``, ``cls.__bases__`` and ``cls.mro()`` without the classes a program cannot name:
        tapecli's own (a caught library error's class is also tapecli's error's) and the CPython classes the
        run's stand-ins replace (``datetime.datetime`` reads the machine's clock; the run's derives from it), so
        that a class derived from the run's ``datetime`` shows the lineage CPython shows for one derived from
        its own."""
        def nameable(c: type) -> bool:
            stand_in = self.stand_ins.get(c.__module__, {}).get(c.__name__)
            return not c.__module__.startswith("tapecli.") and not issubclass(c, TdfError) and (
                stand_in is None or stand_in is c)
        def bases(c: type) -> list[type]:       # (a base left out stands for its own bases)
            return [b for base in c.__bases__ for b in ([base] if nameable(base) else bases(base))]
        if name == "mro":
            return lambda: [c for c in cls.mro() if nameable(c)]
        if name == "__mro__":
            return tuple(c for c in cls.__mro__ if nameable(c))
        found = list(dict.fromkeys(bases(cls)))
        return tuple(b for b in found if not any(b is not c and issubclass(c, b) for c in found))

    def _attribute_hook(self, owner, hook: str):
        """``object.__setattr__(self, name, value)`` (a frozen dataclass's ``__post_init__``) and
        ``super().__setattr__(name, value)`` (a class that overrides it), and their get and delete: Python's
        own attribute access on an object, asked of the guard as ``self.name`` would be."""
        if isinstance(owner, super):
            target, bound = owner.__self__, getattr(owner, hook)
            return lambda name, *value: self._hooked(hook, target, name, lambda: bound(name, *value))
        method = getattr(object, hook)
        return lambda target, name, *value: self._hooked(hook, target, name, lambda: method(target, name, *value))

    def _hooked(self, hook: str, target, name, call):
        if not isinstance(name, str):
            raise TypeError(f"attribute name must be string, not '{type(name).__name__}'")
        if hook == "__setattr__":
            self._may_set(target, name)
        elif hook == "__delattr__":
            self._may_delete(target, name)
        elif not self.readable(target, name) or self.eager is not None and self.eager.owns(target):
            raise _unreachable(target, name)
        return call()

    def _may_set(self, obj, name: str) -> None:
        if name in UNREACHABLE and not (name in guard.LIBRARY_WAYS_OUT and self.program_made(obj) and not isinstance(
                obj, type)) or (name.startswith("_") and not self.program_made(obj)
                                and not (name in _FUNCTION_NAMING and self._program_function(obj))) or (
                self.eager is not None and self.eager.owns(obj)):
            raise _unreachable(obj, name, "changed")
        if isinstance(obj, type) and name in interfaces.GETTERS:        # (sealed as its class statement made it)
            raise TdfNameError(f"{name} cannot be set on a class after its class statement in tapecli programs",
                               hint="define it in the class statement")

    def _program_function(self, obj) -> bool:
        """Whether ``obj`` is a function (or lambda) the program's text defines."""
        return isinstance(obj, types.FunctionType) and obj.__code__.co_filename == self.filename

    def _may_delete(self, obj, name: str) -> None:
        if name in UNREACHABLE or (name.startswith("_") and not self.program_made(obj)) or (
                isinstance(obj, type) and not self.program_made(obj)) or (self.eager is not None and self.eager.owns(obj)):
            raise _unreachable(obj, name, "deleted")

    def set(self, obj, name: str, value) -> None:
        self._may_set(obj, name)
        if self.eager is not None and self.program_made(obj):
            self.eager.run.attribute_set(obj, name, value)
        if isinstance(obj, type) and not self.program_made(obj):
            raise TdfNameError(f"the class {obj.__name__} is tapecli's or Python's, and a program cannot change it",
                               hint="derive a class of your own and change that")
        setattr(obj, name, value)

    def delete(self, obj, name: str) -> None:
        self._may_delete(obj, name)
        delattr(obj, name)

    # getattr, setattr, delattr and hasattr as builtins
    def getattr(self, obj, name, *default):
        if not isinstance(name, str):
            raise TypeError(f"attribute name must be string, not '{type(name).__name__}'")
        try:
            return self.get(obj, name)
        except AttributeError:
            if default:
                return default[0]
            raise

    def hasattr(self, obj, name) -> bool:
        if not isinstance(name, str):
            raise TypeError(f"attribute name must be string, not '{type(name).__name__}'")
        if self.eager is not None and self.eager.owns(obj):
            if not self.readable(obj, name):
                return False
            try:
                self.get(obj, name)
            except AttributeError:
                return False
            return True
        if isinstance(obj, types.ModuleType) and not self.readable(obj, name):
            return False        # (a module's __getattr__ may import what its name asks for)
        return builtins.hasattr(obj, name)      # (whether it exists, as CPython answers: reading it may be refused)

    def build_class(self, func, name, /, *bases, **kwargs):     # (a class keyword may be "name")
        self.building.append((func.__module__, func.__qualname__))
        try:
            cls = builtins.__build_class__(func, name, *bases, **kwargs)
        finally:
            self.building.pop()
        if isinstance(cls, type):
            interfaces.seal(cls)
            self.classes.add(cls)
        return cls

    def dir(self, *obj):
        """dir(), less the seal's descriptors (interfaces.py) on the program's classes."""
        if not obj:
            return sorted(program_frame(self.filename).f_locals)
        return [name for name in builtins.dir(*obj) if not interfaces.hidden(obj[0], name)]

    def locals(self):
        """locals() in a function of the program's: a snapshot of its names, as CPython 3.11's is there (less the
        guard's own temporaries). At module or class level CPython's is the namespace itself, which holds the
        run's own names (``__builtins__``, the guard's): refused there, as globals() is."""
        frame = program_frame(self.filename)
        if frame is None or not frame.f_code.co_flags & _CO_OPTIMIZED or frame.f_code.co_name.startswith("__tdf"):
            raise TdfNameError("locals() outside a function is not available in tapecli programs: there it is the "
                               "module's or class's namespace, which holds the interpreter's names",
                               hint="name the variables, or call locals() inside a function")
        return {name: value for name, value in frame.f_locals.items() if not name.startswith("__tdf")}

    def vars(self, *obj):
        """vars() of the program's own objects; of another object (argparse's Namespace, a SimpleNamespace), a
        copy of its public attributes. Classes and modules not the program's are out of reach (a class's
        dictionary holds descriptors such as type.__subclasses__)."""
        if not obj:
            raise TdfNameError("vars() without an argument is not available in tapecli programs", hint=_HINT)
        if self.program_made(obj[0]):
            return builtins.vars(obj[0])
        if isinstance(obj[0], (type, types.ModuleType)) or self.eager is not None and self.eager.owns(obj[0]):
            raise _unreachable(obj[0], "__dict__")          # (a tensor's, a tape's, an error's: the bridge's guard)
        return {k: v for k, v in builtins.vars(obj[0]).items() if not k.startswith("_")}


def program_frame(filename: str):
    """The program's innermost frame on the stack: the caller, as the library sees it, of a library function
    the program called (through the sandbox's wrappers)."""
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_filename == filename:
            return frame
        frame = frame.f_back
    return None


def program_line(filename: str) -> int | None:
    """The line of the program's innermost frame on the stack (where a library call or warning came from)."""
    frame = program_frame(filename)
    return None if frame is None else frame.f_lineno


class _Output(io.TextIOBase):
    """The run's output as a stream (``sys.stdout``): it holds the sandbox's write alone, never the sandbox, since
    a program reads any public attribute of what it holds (and any of an instance of a class it derives)."""

    standard_error = False          # (tf.print's output_stream=sys.stdout)
    name = "<stdout>"               # (CPython's stream's: a StreamHandler's repr shows it)
    encoding, errors = "utf-8", "strict"

    def __init__(self, sandbox: Sandbox):
        self._write = sandbox.write

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        return self._write(text, "the program's printed output")


class _ErrorOutput(_Output):
    """Standard error as a stream (``sys.stderr``), holding the sandbox's write_error alone."""

    standard_error = True
    name = "<stderr>"

    def __init__(self, sandbox: Sandbox):
        self._write = sandbox.write_error


# What a program may set on its own functions (a loss named for Keras's logs, a decorator's wrapper): their names,
# documentation and default values, never their code, globals or closure.
_FUNCTION_NAMING = frozenset({"__name__", "__qualname__", "__doc__", "__module__", "__defaults__", "__kwdefaults__",
                              "__annotations__"})


def _unreachable(obj, name: str, verb: str = "read") -> TdfNameError:
    if isinstance(obj, types.ModuleType) and name in ALLOWED.get(obj.__name__, {}):
        return refused_name(obj.__name__, name)      # a name its module's table refuses: the table's reason
    owner = obj.__name__ if isinstance(obj, type) else type(obj).__name__
    return TdfNameError(f"the attribute {name} of {owner} cannot be {verb} by tapecli programs", hint=_HINT)


_NO_POSITIONS = type("NoPositions", (tuple,), {})()     # format_map's positional arguments: none, not even ()


class GuardedFormatter(string.Formatter):
    """string.Formatter whose ``{0.attr}`` fields read attributes through the guard, its results weighed: it holds
    the guard's read alone, never the sandbox, as _Output holds its write. (The run's string.Formatter.)"""

    def __init__(self, sandbox: Sandbox):
        self._read = sandbox.get

    def get_field(self, field_name, args, kwargs):
        first, rest = _formatter_field_name_split(field_name)
        obj = self.get_value(first, args, kwargs)
        for is_attr, i in rest:
            obj = self._read(obj, i) if is_attr else obj[i]
        return obj, first

    def vformat(self, format_string, args, kwargs):
        self.total = len(format_string)
        return super().vformat(format_string, args, kwargs)

    def format_field(self, value, format_spec):
        weigh.weigh_spec(format_spec, "a field formatted with")
        weigh.weigh_text(value, "format()")
        self.total += len(value) if isinstance(value, str) else 0
        if self.total > 1 << 16:
            admit_bytes(self.total, self.total * char_bytes(format_spec, value if isinstance(value, str) else ""),
                        "format()'s result")
        return format(value, format_spec)


class SafeFormatter(GuardedFormatter):
    """str.format and format_map (and logging's ``{`` style) as CPython's C code formats: their fields' attributes
    read through the guard (GuardedFormatter), their messages and numbering str.format's."""

    def method(self, text, name: str):
        if text is str:          # str.format(template, ...)
            return lambda template, *args, **kwargs: self.method(template, name)(*args, **kwargs)
        if name == "format":
            return lambda *args, **kwargs: self.vformat(text, args, kwargs)
        return lambda mapping: self.vformat(text, _NO_POSITIONS, mapping)

    def get_value(self, key, args, kwargs):
        if args is _NO_POSITIONS and isinstance(key, int):
            raise ValueError("Format string contains positional fields")      # (format_map's, as CPython's)
        if isinstance(key, int) and key >= len(args):
            raise IndexError(f"Replacement index {key} out of range for positional args tuple")
        return super().get_value(key, args, kwargs)

    def _vformat(self, format_string, args, kwargs, used_args, recursion_depth, auto_arg_index=0):
        """string.Formatter's, its fields numbered as str.format numbers them: by the field name's first part
        (``{[0]}`` and ``{.real}`` are the next argument's item and attribute, ``{0[1]}`` a manual field), with
        str.format's two messages for mixing the two kinds."""
        if recursion_depth < 0:
            raise ValueError("Max string recursion exceeded")
        result = []
        for literal_text, field_name, format_spec, conversion in self.parse(format_string):
            if literal_text:
                result.append(literal_text)
            if field_name is None:
                continue
            first, _ = _formatter_field_name_split(field_name)
            if first == "":
                if auto_arg_index is False:
                    raise ValueError("cannot switch from manual field specification to automatic field numbering")
                field_name = f"{auto_arg_index}{field_name}"
                auto_arg_index += 1
            elif isinstance(first, int):
                if auto_arg_index:
                    raise ValueError("cannot switch from automatic field numbering to manual field specification")
                auto_arg_index = False
            obj, arg_used = self.get_field(field_name, args, kwargs)
            used_args.add(arg_used)
            obj = self.convert_field(obj, conversion)
            format_spec, auto_arg_index = self._vformat(format_spec, args, kwargs, used_args, recursion_depth - 1,
                                                        auto_arg_index=auto_arg_index)
            result.append(self.format_field(obj, format_spec))
        return "".join(result), auto_arg_index


def _formatter_field_name_split(name):
    import _string
    return _string.formatter_field_name_split(name)


# ---- methods that grow memory, weighed before they run
def _weighed_method(value, obj, name: str):
    if name not in guard.WEIGHED_METHODS or not callable(value):
        return value
    if isinstance(obj, str):
        weigher = _STRING_METHODS.get(name)
    elif isinstance(obj, list) and name == "extend":
        weigher = _weigh_extend
    elif type(obj).__module__ == "numpy":
        return weighed_method(obj, name)         # NumPy's rules, as a TensorFlow program's arrays are weighed
    elif isinstance(obj, (memoryview, array.array)) and name == "tolist":
        weigher = _weigh_buffer_list
    else:
        weigher = None
    if weigher is None:
        return value

    def weighed(*args, **kwargs):
        weigher(obj, *args, **kwargs)
        return value(*args, **kwargs)
    return weighed


def _weigh_buffer_list(buffer) -> None:
    """A memoryview's or an array's tolist: an object and a slot per item (a 100 MB buffer of bytes, 1.6 GB)."""
    items = len(buffer) if isinstance(buffer, array.array) else buffer.nbytes // max(buffer.itemsize, 1)
    if items > 1 << 16:
        admit_bytes(items, items * (LIST_SLOT + _INT_OBJECT), "a list of the buffer's items")


def _weigh_padding(text, width, fill=" ", *args):
    if isinstance(width, int) and width > 1 << 16:
        admit_bytes(width, width * char_bytes(text, fill if isinstance(fill, str) else ""), "a padded string")


def _weigh_expandtabs(text, tabsize=8):
    if isinstance(tabsize, int) and tabsize > 1:
        n = len(text) + text.count("\t") * tabsize
        admit_bytes(n, n * char_bytes(text), "expandtabs()")


def _weigh_join(separator, items):
    if isinstance(items, (list, tuple)) and len(items) > 1:
        strings = [i for i in items if isinstance(i, str)]
        n = len(separator) * (len(items) - 1) + sum(len(i) for i in strings)
        if n > 1 << 16:
            admit_bytes(n, n * char_bytes(separator, *strings[:64]), "join()")


def _weigh_replace(text, old, new, count=-1):
    if isinstance(old, str) and isinstance(new, str) and len(new) > len(old):
        times = text.count(old) if old else len(text) + 1
        if isinstance(count, int) and count >= 0:
            times = min(times, count)
        n = len(text) + times * (len(new) - len(old))
        admit_bytes(n, n * char_bytes(text, new), "replace()")


def _weigh_extend(items, more):
    if isinstance(more, (list, tuple, str, dict, set)):
        n = len(items) + len(more)
        admit_bytes(n, n * LIST_SLOT, "a list would grow by extend()")


_STRING_METHODS = {
    "zfill": _weigh_padding, "ljust": _weigh_padding, "rjust": _weigh_padding, "center": _weigh_padding,
    "expandtabs": _weigh_expandtabs, "join": _weigh_join, "replace": _weigh_replace,
    "split": lambda text, sep=None, *args, **kwargs: weigh.weigh_split(text, "split", kwargs.get("sep", sep)),
    "rsplit": lambda text, sep=None, *args, **kwargs: weigh.weigh_split(text, "split", kwargs.get("sep", sep)),
    "splitlines": lambda text, *args, **kwargs: weigh.weigh_split(text, "splitlines"),
}


