"""The modules a Python program may import: CPython's own pure modules and NumPy itself, each seen through a
proxy that holds only what the table allows (docs/language.md, "Modules"). A module left out is refused by
name with its reason.

A proxy is a fresh module object per run, filled on first use from the real module: a name that leads out of
the sandbox (another module not in the table, a function that reaches files, a private name) is refused.
What keeps state across calls in the real module (``random``'s and ``numpy.random``'s global generators,
``decimal``'s context, ``warnings``' filters, print to ``sys.stdout``) is replaced by the run's own; ``logging``,
whose state is the whole module, and ``traceback``, which reads frames and source files, are modules of the run's
own (run_logging.py, run_traceback.py)."""
from __future__ import annotations

import builtins
import importlib
import sys
import types

from tapecli.errors import TdfNameError
from tapecli.execution.frameworks import FRAMEWORKS
from tapecli.runtime import numpy_gate
from tapecli.runtime.numpy_gate import weighed

# module -> names refused in it, with the reason; a module absent from this table cannot be imported.
ALLOWED: dict[str, dict[str, str]] = {
    "math": {}, "cmath": {}, "copy": {}, "functools": {}, "itertools": {}, "operator": {},
    "collections": {}, "collections.abc": {}, "heapq": {}, "bisect": {}, "statistics": {}, "numbers": {},
    "fractions": {}, "decimal": {}, "string": {}, "textwrap": {}, "dataclasses": {}, "enum": {}, "abc": {},
    "contextlib": {"chdir": "it changes the working directory"},
    "typing": {},
    "json": {"load": "it reads a file object", "dump": "it writes a file object"},
    "re": {},
    "datetime": {},
    "csv": {"field_size_limit": "it changes the whole process's limit", "register_dialect": "it changes the "
            "whole process's dialects (a program passes its own Dialect class to reader and writer)",
            "unregister_dialect": "it changes the whole process's dialects"},
    "calendar": {"setfirstweekday": "it changes the whole process's first weekday (a Calendar(firstweekday=) is "
                 "the program's own)", "LocaleTextCalendar": "it reads the machine's locale",
                 "LocaleHTMLCalendar": "it reads the machine's locale", "different_locale": "it changes the locale",
                 "main": "it is calendar's command line"},
    "random": {"SystemRandom": "it reads the operating system's entropy"},
    "argparse": {"FileType": "it opens files"},
    "pprint": {}, "warnings": {}, "io": {}, "types": {}, "time": {}, "os": {}, "os.path": {}, "sys": {},
    "__future__": {},
    "colorsys": {}, "keyword": {}, "graphlib": {}, "html": {}, "unicodedata": {}, "reprlib": {}, "difflib": {},
    "struct": {}, "array": {},
    "zlib": {},                     # (its checksums alone: crc32, adler32)
    "binascii": {}, "base64": {"encode": "it reads and writes file objects", "decode": "it reads and writes file "
                               "objects", "main": "it is base64's command line"},
    "hashlib": {"file_digest": "it reads a file object"},
    "logging": {"FileHandler": "it writes files", "handlers": "its handlers write files, sockets and mail",
                "config": "it runs code its configuration names and listens on a socket",
                "captureWarnings": "the run's warnings are tapecli's to show, not a logger's"},
    "traceback": {"clear_frames": "it clears the frames of the run's machinery too"},
    "shlex": {"shlex": "without a stream it reads standard input (shlex.split and shlex.quote take strings)"},
    # numpy.lib for its views alone: sliding windows, and as_strided within its array's memory (numpy_gate)
    "numpy": {name: why for name, why in numpy_gate.REFUSED["numpy"].items()
              if name not in ("lib", "testing", *numpy_gate.IN_MEMORY)},
    "numpy.random": numpy_gate.REFUSED["numpy.random"], "numpy.linalg": {}, "numpy.fft": {}, "numpy.exceptions": {},
    "numpy.lib": {}, "numpy.lib.stride_tricks": {}, "numpy.lib.recfunctions": {}, "numpy.testing": {},
    "numpy.typing": {},             # (the annotations of array code: NDArray[np.float64], ArrayLike)
    "numpy.lib.scimath": {},        # (np.emath: its functions give complex results where the real ones give nan)
    "numpy.rec": {"fromfile": "it reads files"},
    "numpy.char": numpy_gate.STRING_REFUSED, "numpy.strings": numpy_gate.STRING_REFUSED,
    "numpy.ma": {**dict.fromkeys(("dump", "load"), "it reads or writes files"),      # (NumPy 1.x has these four)
                 **dict.fromkeys(("dumps", "loads"), "it pickles, and loading a pickle runs code")},
    **dict.fromkeys(("numpy.polynomial", *(f"numpy.polynomial.{kind}" for kind in (
        "polynomial", "chebyshev", "legendre", "hermite", "hermite_e", "laguerre", "polyutils"))), {}),
}
# Only these names of these modules (each with why the rest are left out): the rest reach files, the environment,
# processes, the interpreter or the clock, or make code and frames. time's clock and os.environ are the run's own
# (state.py).
_ONLY = {"io": {"StringIO", "BytesIO", "UnsupportedOperation"},
         "types": {"SimpleNamespace", "MappingProxyType", "GenericAlias", "NoneType", "FunctionType",
                   "LambdaType", "MethodType", "BuiltinFunctionType", "GeneratorType", "CoroutineType",
                   "AsyncGeneratorType"},
         "time": {"time", "time_ns", "sleep", "perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns",
                  "process_time", "process_time_ns", "thread_time", "gmtime", "localtime", "mktime", "strftime",
                  "asctime", "ctime", "struct_time", "timezone", "altzone", "daylight", "tzname"},
         "os": {"environ", "getenv", "path", "sep", "altsep", "extsep", "pathsep", "linesep", "curdir", "pardir",
                "devnull", "name", "fspath", "PathLike"},
         "os.path": {"join", "basename", "dirname", "split", "splitext", "splitdrive", "normpath", "normcase",
                     "isabs", "commonprefix", "commonpath", "sep", "extsep", "curdir", "pardir"},
         "sys": {"argv", "exit", "stdout", "stderr", "version", "version_info", "hexversion", "implementation",
                 "maxsize", "maxunicode", "float_info", "int_info", "hash_info", "float_repr_style", "byteorder",
                 "platform", "getrecursionlimit", "setrecursionlimit", "getsizeof", "getdefaultencoding", "exc_info",
                 "exception"},
         "array": {"array", "ArrayType", "typecodes"},
         "zlib": {"crc32", "adler32", "error"},
         "numpy.lib": {"stride_tricks", "recfunctions", "scimath"},
         "numpy.typing": {"ArrayLike", "DTypeLike", "NDArray"},        # (NBitBase: deprecated, for type checkers)
         "numpy.lib.scimath": {"sqrt", "log", "log2", "logn", "log10", "power", "arccos", "arcsin", "arctanh"},
         # (its comparisons of arrays alone: a gradient check's assert_allclose)
         "numpy.testing": {"assert_", "assert_allclose", "assert_almost_equal", "assert_approx_equal",
                           "assert_array_almost_equal", "assert_array_almost_equal_nulp", "assert_array_equal",
                           "assert_array_less", "assert_array_max_ulp", "assert_equal", "assert_string_equal"},
         "numpy.lib.stride_tricks": {"sliding_window_view", "as_strided"},
         "re": {"compile", "search", "match", "fullmatch", "findall", "finditer", "split", "sub", "subn", "escape",
                "purge", "Pattern", "Match", "error", "RegexFlag", "A", "ASCII", "DEBUG", "I", "IGNORECASE", "L",
                "LOCALE", "M", "MULTILINE", "NOFLAG", "S", "DOTALL", "U", "UNICODE", "X", "VERBOSE"},
         "datetime": {"date", "datetime", "time", "timedelta", "timezone", "tzinfo", "MINYEAR", "MAXYEAR", "UTC"},
         "logging": {"BASIC_FORMAT", "BufferingFormatter", "CRITICAL", "DEBUG", "ERROR", "FATAL", "Filter",
                     "Filterer", "Formatter", "Handler", "INFO", "LogRecord", "Logger", "LoggerAdapter", "Manager",
                     "NOTSET", "NullHandler", "PercentStyle", "PlaceHolder", "RootLogger", "StrFormatStyle",
                     "StreamHandler", "StringTemplateStyle", "WARN", "WARNING", "addLevelName", "basicConfig",
                     "critical", "debug", "disable", "error", "exception", "fatal", "getLevelName",
                     "getLevelNamesMapping", "getLogRecordFactory", "getLogger", "getLoggerClass", "info",
                     "lastResort", "log", "logMultiprocessing", "logProcesses", "logThreads", "makeLogRecord",
                     "raiseExceptions", "root", "setLogRecordFactory", "setLoggerClass", "shutdown", "warn",
                     "warning"},
         "traceback": {"FrameSummary", "StackSummary", "TracebackException", "extract_stack", "extract_tb",
                       "format_exc", "format_exception", "format_exception_only", "format_list", "format_stack",
                       "format_tb", "print_exc", "print_exception", "print_last", "print_list", "print_stack",
                       "print_tb", "walk_stack", "walk_tb"},
         "warnings": {"warn", "simplefilter", "filterwarnings", "resetwarnings", "catch_warnings", "filters",
                      "WarningMessage"}}
_ONLY_REASON = {"io": "it reaches files", "types": "it makes code objects and frames",
                "time": "it reads the machine's clock", "os": "it reaches files, the environment or processes",
                "os.path": "it reaches files", "sys": "it reaches the interpreter itself",
                "re": "it searches without the time limit (template, Scanner: use compile)",
                "datetime": "it reads the machine's clock or time zone",
                "zlib": "its (de)compressed results are not weighed before they are made yet (crc32 and adler32 are "
                        "allowed)",
                "warnings": "it reads source files (the lines a warning is shown with)",
                "logging": "it reaches the interpreter's frames or the modules logging imports",
                "traceback": "it is one of the modules traceback imports",
                "numpy.lib": "it reaches raw memory or the host", "numpy.lib.stride_tricks": "it reaches raw memory",
                "numpy.testing": "it reaches files, processes, the interpreter's frames or compiled code (a program "
                                 "reads its assert_ comparisons of arrays)"}
REFUSED = {
    "subprocess": "it runs processes", "shutil": "it reaches files", "pathlib": "it reaches files",
    "glob": "it reaches files", "tempfile": "it reaches files", "pickle": "loading a pickle runs code",
    "marshal": "it makes code objects", "ctypes": "it reaches raw memory", "importlib": "it imports any module",
    "inspect": "it reaches frames and code", "gc": "it reaches every object", "builtins": "it reaches every builtin",
    "socket": "it reaches the network", "urllib": "it reaches the network", "http": "it reaches the network",
    "threading": "threads run outside the limits", "multiprocessing": "it runs processes",
    "queue": "its get waits for another thread, and threads run outside the limits",
    "asyncio": "its event loop runs outside the limits", "signal": "it changes the process's signals",
    "weakref": "it reaches objects being collected",
    "secrets": "it reads the operating system's entropy", "uuid": "it reads the machine's identity",
    "platform": "it reads the machine's identity", "code": "it runs code outside the sandbox",
    "types.CodeType": "it makes code objects",
    "logging.handlers": "its handlers write files, sockets and mail",
    "logging.config": "it runs code its configuration names and listens on a socket",
}


# Modules the run stands in for with its own (run_matplotlib.py: a program's plots are drawn nowhere, and the
# library itself is never imported); any public name of theirs is the stand-in's to answer.
# (matplotlib's modules besides pyplot: those training scripts import to style their plots)
MATPLOTLIB_SUBMODULES = ("figure", "axes", "lines", "patches", "text", "colors", "cm", "ticker", "gridspec",
                         "animation", "style", "collections", "image", "legend", "colorbar", "markers")
STAND_INS = ("matplotlib", "matplotlib.pyplot", *(f"matplotlib.{name}" for name in MATPLOTLIB_SUBMODULES))


def importable(module: str) -> bool:
    """Whether a program may import ``module``."""
    return module in ALLOWED or module in STAND_INS


class Refused(TdfNameError):
    pass


def refusal(module: str) -> Refused:
    top = module.split(".")[0]
    reason = REFUSED.get(module) or REFUSED.get(top)
    if top in FRAMEWORKS:
        return Refused(f"programs that import {top} run on tapecli's TensorFlow library",
                       hint="this Python-only run cannot import it")
    if reason:
        return Refused(f"programs cannot import {module}: {reason}",
                       hint="the modules programs may import are listed in docs/language.md")
    return Refused(f"programs cannot import {module}: it is not one of the modules tapecli allows",
                   hint="the modules programs may import are listed in docs/language.md")


class Modules:
    """One run's module proxies."""

    def __init__(self, sandbox, replacements: dict[str, dict], frameworks: dict | None = None,
                 makers: dict | None = None):
        self.sandbox = sandbox
        self.replacements = replacements        # module -> name -> the run's own value
        self.proxies: dict[str, types.ModuleType] = {}
        self.frameworks = frameworks            # a TensorFlow program's: its module of a name (Bridge.module)
        self.makers = makers or {}              # module -> the maker of the run's own module (run_logging.py)
        self.made: dict[str, types.ModuleType] = {}

    def import_(self, name, globals=None, locals=None, fromlist=(), level=0):
        """The program's import statements. NumPy's C code imports its own modules through the builtins of the
        frame that called it (``PyImport_Import``, whose from-list is a list; an import statement's is a
        tuple or None, and a program cannot name ``__import__`` itself): those are the library's imports."""
        if isinstance(fromlist, list):
            return builtins.__import__(name, globals, locals, fromlist, level)
        if level:
            raise Refused("relative imports have no package to come from in a program")
        if self.frameworks is not None and name.split(".")[0] in FRAMEWORKS:
            return self.frameworks(name.split(".")[0] if not fromlist else name)
        if not importable(name):
            raise refusal(name)
        proxy = self.proxy(name)
        if fromlist:
            # (``from numpy.lib import recfunctions`` imports the submodule as CPython's from-list does: a
            # package need not hold its submodules as attributes until they are imported)
            for item in fromlist:
                if f"{name}.{item}" in ALLOWED and name not in self.makers:
                    importlib.import_module(f"{name}.{item}")
            return proxy
        top = name.split(".")[0]
        return self.proxy(top) if importable(top) else proxy

    def module(self, name: str) -> types.ModuleType:
        """The module behind a proxy: the run's own where the run makes one, else the process's."""
        if name not in self.makers:
            return importlib.import_module(name)
        if name not in self.made:
            self.made[name] = self.makers[name]()
        return self.made[name]

    def proxy(self, name: str) -> types.ModuleType:
        found = self.proxies.get(name)
        if found is None:
            real = self.module(name)
            kind = _OwnModule if name in self.makers else _SysModule if name == "sys" else types.ModuleType
            found = self.proxies[name] = kind(name, getattr(real, "__doc__", None))
            if name in self.makers:
                types.ModuleType.__setattr__(found, "_own", real)
            found.__getattr__ = self._resolver(name, real, found)
            self.sandbox.modules[name] = found      # (what the program sets in it: warnings.showwarning, state.py)
        return found

    def _resolver(self, name: str, real, proxy):
        own = self.replacements.get(name, {})

        def resolve(attr: str):
            if attr == "__all__":
                value = star_names(name, real)
            elif attr in own:
                value = own[attr]
                if isinstance(value, Current):      # (read afresh each time, never kept in the proxy)
                    return value.read()
            elif not allows(name, attr):
                if attr not in ALLOWED.get(name, {}) and not any(n in vars(real) for n in (attr, "__getattr__")):
                    # (a name the module lacks: CPython's AttributeError, so that hasattr answers False)
                    raise AttributeError(f"module '{name}' has no attribute '{attr}'")
                raise refused_name(name, attr)
            else:
                value = getattr(real, attr)          # AttributeError: as CPython says it
                if isinstance(value, types.ModuleType):
                    full = submodule_name(name, attr, value)
                    if not importable(full):
                        raise refused_name(name, attr, "it is a module tapecli does not allow")
                    value = self.proxy(full)
            if name.split(".")[0] == "numpy" and not isinstance(value, types.ModuleType):
                gated = weighed(name, attr, value)
                self.sandbox.library[id(gated)] = (gated, value)
                value = gated
            proxy.__dict__[attr] = value
            return value
        return resolve


class _OwnModule(types.ModuleType):
    """The proxy of a module the run made its own: what the program sets in it is set in the module too
    (``logging.raiseExceptions = False`` changes what logging does, as in CPython). Named as the class of
    modules is (``type(logging)`` prints as CPython's)."""

    def __setattr__(self, name: str, value) -> None:
        if allows(self.__name__, name):
            setattr(self._own, name, value)
        super().__setattr__(name, value)


_OwnModule.__module__, _OwnModule.__name__, _OwnModule.__qualname__ = "builtins", "module", "module"


class Current:
    """A module's attribute the run answers afresh at each reading (``sys.stdout``)."""

    def __init__(self, read):
        self.read = read


class _SysModule(types.ModuleType):
    """The proxy of ``sys``: its ``stdout`` is the process's while the program runs (the run's output, or what the
    program's ``contextlib.redirect_stdout`` put there), and ``sys.stdout = stream`` puts the program's stream
    there, so that ``print()``, what a library prints and the program's own ``sys.stdout`` agree as under
    CPython (a Tee of the program's, ``sys.stdout = io.StringIO()``); the run puts its own back when it ends."""

    def __setattr__(self, name: str, value) -> None:
        if name == "stdout":
            sys.stdout = value
            return
        super().__setattr__(name, value)


_SysModule.__module__, _SysModule.__name__, _SysModule.__qualname__ = "builtins", "module", "module"


def star_names(module: str, real=None) -> list[str]:
    """The names ``from module import *`` binds in a program: CPython's (the module's ``__all__``, else its public
    names) that the table allows, less the submodules no program may import (``from numpy import *`` binds
    ``linalg`` and ``fft``, not ``ctypeslib``)."""
    real = importlib.import_module(module) if real is None else real
    names = getattr(real, "__all__", None)
    names = [n for n in dir(real) if not n.startswith("_")] if names is None else names
    return [n for n in names if allows(module, n) and not _refused_submodule(module, n, getattr(real, n, None))]


def _refused_submodule(module: str, attr: str, value) -> bool:
    """Whether the resolver refuses ``module.attr``, a module."""
    return isinstance(value, types.ModuleType) and not importable(submodule_name(module, attr, value))


def submodule_name(module: str, attr: str, value: types.ModuleType) -> str:
    """The name by which the table allows the module ``module.attr``: that, or the module's own name where it is
    another of the same package's (``np.emath`` is ``numpy.lib.scimath``, and no ``numpy.emath`` imports); a
    module another module imported (``dataclasses.sys``) is read by its attribute's name, and refused."""
    full = f"{module}.{attr}"
    own = value.__name__
    if not importable(full) and own.startswith(module.split(".")[0] + ".") and importable(own):
        return own
    return full


def allows(module: str, attr: str) -> bool:
    """Whether a program may read ``attr`` of the allowed ``module``'s proxy."""
    only = _ONLY.get(module)
    if attr == "__version__":               # (a string: scripts print their libraries' versions first)
        return True
    return not attr.startswith("_") and attr not in ALLOWED.get(module, {}) and (only is None or attr in only)


def refused_name(module: str, attr: str, reason: str | None = None) -> Refused:
    """The refusal of ``module.attr``, with the table's reason."""
    reason = reason or ALLOWED.get(module, {}).get(attr) or _ONLY_REASON.get(
        module, "it is not part of what tapecli allows of the module")
    return Refused(f"{module}.{attr} is not available in tapecli programs: {reason}",
                   hint="the modules programs may import are listed in docs/language.md")
