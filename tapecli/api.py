"""The library API: run a TDF program and collect what the commands report.

The library never prints: it returns a :class:`RunResult` or raises a
:class:`~tapecli.errors.TdfError` (program errors) or
:class:`~tapecli.errors.UsageError` (bad options).
"""
from __future__ import annotations

import ast
import contextlib
import math
import sys
import warnings
from pathlib import Path

import numpy as np

from tapecli.autodiff import gradients
from tapecli.errors import RefusedImport, TdfError, TdfSyntaxError, UsageError, closest
from tapecli.interpreter.core import Interpreter
from tapecli.kernels import backends
from tapecli import library  # noqa: F401 (registers every builtin and the interpreter's hooks)
from tapecli.interpreter.objects import Request
from tapecli.runtime.limits import Limits
from tapecli.frontend.ast import Program, identifiers
from tapecli.interpreter.registry import BUILTINS, load_deferred
from tapecli.frontend.parser import deep_recursion, parse, universal_newlines
from tapecli.runtime.context import RunContext, begin_run, current
from tapecli.runtime.tape import Tape, as_tensor, recording
from tapecli.runtime.values import DTYPES, Tensor, Variable, dtype_name
from tapecli.lazymodule import LazyModule
from tapecli.runtime.numpy_gate import numpy_settings_kept

jacobians = LazyModule("tapecli.autodiff.jacobians", globals())    # (an --of/--wrt jacobian alone)
# (CPython's room: a small TDF program, which CPython's parser refuses, never loads it: _cpython_refuses)
execution = LazyModule("tapecli.execution", globals())


# Options, RunResult and Result are plain classes where dataclasses would do: making a dataclass compiles the
# source of its methods, and with the dataclasses module's import the three took a small run about 2 ms.
class Options:
    """How a run goes: its --set values, --of/--wrt, limits and device."""

    __slots__ = ("dtype", "overrides", "of", "wrt", "unconnected", "request", "explain", "check_numerics",
                 "jacobian_mode", "limits", "device", "runs_after", "keep_requests")

    def __init__(self, dtype: str | None = None, overrides: dict | None = None, of: str | None = None,
                 wrt: list[str] | None = None, unconnected: str = "none", request: str = "gradient",
                 explain: bool = False, check_numerics: bool = False, jacobian_mode: str = "auto",
                 limits: Limits | None = None, device: str = "cpu", runs_after: int = 0, keep_requests: bool = True):
        self.dtype = dtype                   # "float64" makes float literals and declarations float64
        self.overrides = {} if overrides is None else overrides
        self.of = of
        self.wrt = [] if wrt is None else wrt
        self.unconnected = unconnected
        self.request = request               # what --of/--wrt computes: "gradient" or "jacobian"
        self.explain = explain               # keep the provenance log, to say why a gradient is None
        self.check_numerics = check_numerics   # stop at the first NaN/Inf made from finite values
        self.jacobian_mode = jacobian_mode   # how jacobians are computed: "auto", "rev" or "fwd"
        self.limits = Limits() if limits is None else limits
        self.device = device                 # where kernels run: "cpu" or "cuda" (kernels.backends.get)
        self.runs_after = runs_after         # runs of the same program this process makes after this one (bench)
        # False where the caller reports no gradient request (run, bench): the run holds a loop's last step's
        # gradients, not every step's (interpreter/objects.py RequestLog)
        self.keep_requests = keep_requests

    def replace(self, **changes) -> Options:
        """These options with ``changes``, as a new object (what dataclasses.replace gives)."""
        return Options(**{**{name: getattr(self, name) for name in self.__slots__}, **changes})


class RunResult:
    """One run: its interpreter (the program's values, requests and output) and its run context."""

    def __init__(self, filename: str, interpreter: Interpreter, implicit: list[Request], context: RunContext,
                 selected: list | None = None, selected_json: dict | None = None):
        self.filename = filename
        self.interpreter = interpreter
        self.implicit = implicit             # --of/--wrt requests
        self.context = context               # the run's state: warnings, provenance, tapes
        self.selected = selected             # the requests a selection kept (-k, --line, --last), else None
        self.selected_json = selected_json   # what the JSON document says of that selection

    @property
    def scope(self):
        return self.interpreter.globals

    @property
    def requests(self) -> list[Request]:
        return self.interpreter.requests

    @property
    def warnings(self) -> list[dict]:
        return self.context.settings.warnings

    @property
    def output(self) -> list[str]:
        return self.interpreter.output

    @property
    def expectations(self) -> list[dict]:
        return self.interpreter.expectation_results

    @property
    def tapes(self) -> list[Tape]:
        return self.interpreter.tapes


def requests_of(result, kinds: tuple[str, ...]) -> list:
    """The requests a command reports: those a selection kept (-k, --line, --last), else those of --of/--wrt,
    else the program's of these kinds."""
    if getattr(result, "selected", None) is not None:
        return result.selected
    return result.implicit or [r for r in result.requests if r.kind in kinds]


def request_entries(requests, convert) -> list[dict]:
    """The entries of a grad/jacobian/hessian JSON document (docs/spec/CLI.md), each value passed through
    ``convert`` (JSON lists for the CLI, NumPy arrays for the library)."""
    entries = []
    for req in requests:
        names = req.names or [None] * len(req.values)
        second = getattr(req, "second", None) or [None] * len(req.values)
        for name, label, label2, value, why in zip(names, req.labels, second, req.values, req.why):
            entry = {"name": name, "line": req.line, "tape": req.tape, "target": req.target_text,
                     "source": label, **({"source2": label2} if label2 is not None else {}),
                     "value": None if value is None else convert(value),
                     "dtype": None if value is None else dtype_name(value.dtype),
                     "shape": None if value is None else list(value.shape)}
            if value is None:
                entry["why"] = why
            entries.append(entry)
    return entries


def read_source(path: str) -> tuple[str, str]:
    """(source text, display name); ``-`` reads standard input. Both are decoded as strict UTF-8 (standard
    input's own decoding would turn bad bytes into lone surrogates), with Python's universal newlines."""
    if path == "-":
        if sys.stdin is None:               # closed when the process started (`<&-`)
            raise UsageError("standard input is closed: give the program as a file, or on standard input")
        stream = getattr(sys.stdin, "buffer", None)
        try:
            if stream is None:              # a text stream put in its place (tests)
                return sys.stdin.read(), "<stdin>"
            data, name, shown = stream.read(), "<stdin>", "standard input"
        except OSError as e:                # (a directory as standard input: `< /`)
            raise UsageError(f"cannot read standard input: {e.strerror or e}") from None
    else:
        p = Path(path)
        if p.is_dir():
            raise UsageError(f"{path} is a directory, not a program file")
        if not p.is_file():
            raise UsageError(f"no such file: {path}")
        try:
            data, name, shown = p.read_bytes(), path, path
        except OSError as e:
            raise UsageError(f"cannot read {path}: {e.strerror}") from None
    try:
        return universal_newlines(data.decode("utf-8")), name
    except UnicodeDecodeError:
        raise UsageError(f"{shown} is not UTF-8 text") from None


def parse_set(item: str, limits: Limits | None = None) -> tuple[str, object]:
    """``NAME=VALUE`` from --set: a number, a JSON array, ``@file.npy`` or ``@file.json``; checked against
    ``limits`` (elements and memory) before it is loaded."""
    limits = limits or Limits()
    name, sep, text = item.partition("=")
    name = name.strip()
    if not sep or not name.isidentifier():
        raise UsageError(f"--set {item!r}: expected NAME=VALUE")
    text = text.strip()
    if text.startswith("@"):
        return name, read_array_file(Path(text[1:]), f"--set {name}", limits)
    return name, _json_value(text, f"--set {name}", limits, shown=f"--set {name}={text if len(text) < 80 else text[:60] + '…'}")


MAX_DIMS = 32     # NumPy makes arrays of up to 64 dimensions, but its ufuncs and iterators take at most 32
# What parsing JSON can cost per byte of its text: a list slot and a float object for "1.0," (8 bytes a byte),
# an empty list and its slot for "[]," (21).
JSON_BYTES_PER_CHAR = 24


def read_array_file(path: Path, what: str, limits: Limits) -> np.ndarray:
    """The array of ``@path`` (for ``what``: ``--set x``, ``--sweep x``): a .npy file, else JSON; weighed
    against ``limits`` before it is read. No error shows the file's contents (it may be anything the user
    can read): they say where it stops being what it should be."""
    if not path.is_file():
        raise UsageError(f"{what}: no such file: {path}")
    try:
        if path.stat().st_size == 0:
            raise UsageError(f"{what}: {path} is empty")
        if path.suffix == ".npy":
            return _load_npy(path, what, limits)
        _check_bytes(path.stat().st_size * JSON_BYTES_PER_CHAR, f"{what}: reading {path}", limits)
        data = path.read_bytes()
    except OSError as e:
        raise UsageError(f"{what}: cannot read {path}: {e.strerror or type(e).__name__}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"{what}: {path} is neither a .npy file nor UTF-8 text (a JSON array)") from None
    return _json_value(text, what, limits, path=path)


def _json_value(text: str, what: str, limits: Limits, path: Path | None = None, shown: str | None = None):
    import json     # (at first use: a run without --set reads no JSON)
    _check_json_depth(text, what)
    try:
        value = json.loads(text, parse_float=_finite_float)
    except _Overflow as e:
        raise UsageError(f"{what}: {e.text} does not fit float64 (its largest finite value is 1.7976931e+308); "
                         "an infinity is written Infinity") from None
    except ValueError as e:
        where = f" (line {e.lineno}, column {e.colno})" if hasattr(e, "lineno") else ""
        raise UsageError(f"{what}: {path}{where}: not a number or a JSON array" if path is not None
                         else f"{shown or what}: not a number or a JSON array") from None
    arr = _json_array(value, what)
    _check_npy_size(arr.shape, arr.dtype, what, limits)
    return arr


class _Overflow(Exception):
    def __init__(self, text: str):
        super().__init__(text)
        self.text = text if len(text) <= 40 else text[:37] + "..."


def _finite_float(text: str) -> float:
    """A JSON number as a float; one too large for float64 (``1e400``) is an _Overflow, where Python's JSON
    would make it inf without a word. (NaN, Infinity and -Infinity, written as such, are JSON's constants.)"""
    value = float(text)
    if math.isinf(value):
        raise _Overflow(text)
    return value


def _check_json_depth(text: str, what: str) -> None:
    """JSON nested deeper than a tensor can be is refused before the decoder recurses into it."""
    import re
    depth = deepest = 0
    for char in re.sub(r"[^\[\]{}]+", "", text):
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    if deepest > MAX_DIMS:
        raise UsageError(f"{what}: arrays nested {deepest} deep; a tensor has at most {MAX_DIMS} dimensions")


def _load_npy(path: Path, what: str, limits: Limits) -> np.ndarray:
    """A .npy file, its header checked (a numeric dtype, a size within the limits, as many bytes as it
    claims) before its data is read."""
    from numpy.lib import format as npy
    try:
        with path.open("rb") as f:
            version = npy.read_magic(f)
            read_header = npy.read_array_header_1_0 if version == (1, 0) else npy.read_array_header_2_0
            shape, fortran_order, dtype = read_header(f)
            offset = f.tell()
    except OSError:
        raise
    except Exception:       # (NumPy's messages quote the bytes it read)
        raise UsageError(f"{what}: {path} is not a .npy file, or its header is damaged") from None
    if dtype.kind == "c":
        raise UsageError(f"{what}: {path} holds complex numbers; tensors here are real")
    if dtype.kind not in "iufb" or dtype.hasobject:
        raise UsageError(f"{what}: {path} is not a numeric array (dtype {dtype})")
    if len(shape) > MAX_DIMS:
        raise UsageError(f"{what}: {path} holds an array of {len(shape)} dimensions; a tensor has at most {MAX_DIMS}")
    _check_npy_size(shape, dtype, what, limits, path)
    if path.stat().st_size - offset < math.prod(shape) * dtype.itemsize:
        raise UsageError(f"{what}: {path} is truncated: its header claims shape {list(shape)}")
    try:
        return np.load(path, allow_pickle=False)
    except OSError:
        raise
    except Exception:
        raise UsageError(f"{what}: {path}: NumPy cannot read its data") from None


def _check_npy_size(shape, dtype, what: str, limits: Limits, path: Path | None = None) -> None:
    size = math.prod(shape)
    holds = f"{path} holds" if path else "the value has"
    if size > limits.max_elements:
        raise UsageError(f"{what}: {holds} {size:,} elements, over the limit of {limits.max_elements:,} "
                         "(raise it with --max-elements N)")
    _check_bytes(size * dtype.itemsize, f"{what}: {holds}", limits)


def _check_bytes(nbytes: int, what: str, limits: Limits) -> None:
    from tapecli.runtime.limits import before_large_array, resident_within
    before_large_array(nbytes)          # (the data is read after this)
    if nbytes > limits.max_memory - resident_within(limits.max_memory - nbytes):
        raise UsageError(f"{what} {nbytes / 2**30:.2f} GiB, more than the memory limit leaves "
                         "(raise it with TAPECLI_MAX_MEMORY=BYTES)")


def _json_array(value, what):
    if not isinstance(value, (int, float, list)):        # bool is an int: true and false bind a bool var
        raise UsageError(f"{what}: expected a number or a (nested) array of numbers")
    try:
        arr = np.asarray(value)
    except (ValueError, OverflowError):
        arr = np.asarray(value, dtype=object)
    if arr.dtype == object or arr.dtype.kind not in "iufb":
        big = any(isinstance(v, int) and abs(v) > 2**63 - 1 for v in _leaves(value))
        raise UsageError(f"{what}: " + ("an integer out of range for int64" if big else "a ragged or non-numeric array"))
    return arr.astype(np.float64) if arr.dtype.kind == "f" else arr


def _leaves(value):
    if isinstance(value, list):
        for item in value:
            yield from _leaves(item)
    else:
        yield value


def run_source(source: str, filename: str = "<input>", options: Options | None = None) -> RunResult:
    options = options or Options()
    _check_dtype(options)
    python = not (options.of or options.overrides or _cpython_refuses(source, filename))
    tree = execution.python_only(source, filename, options.limits.max_memory) if python else None
    if tree is None and python:
        tree = _python_with_a_name_error(source, filename, options)
    if tree is not None:
        return run_python(tree, source, filename, options)
    try:
        program = parse(source, filename)
    except TdfSyntaxError as e:
        # Python that names something it never binds (CPython's NameError at that line), not TDF
        tree = None if options.of or options.overrides else execution.python_only(
            source, filename, options.limits.max_memory, free_names=True)
        if tree is not None:
            load_deferred(tree.free_names)          # the builtin families whose names it may use
        if tree is None and not (options.of or options.overrides):
            _say_why_not_on_cpython(e, source)
        if tree is None or tree.free_names & BUILTINS.keys():     # it names TDF's builtins: TDF's error stands
            raise
        return run_python(tree, source, filename, options)
    try:
        return run_program(program, filename, options)
    except RefusedImport as e:
        from tapecli.execution.modules import ALLOWED
        if e.module.split(".")[0] in ALLOWED:       # (CPython's run gives it: say why this run is not CPython's)
            _say_why_not_on_cpython(e, source)
        raise


# A text this short is parsed without weighing it against the memory cap (execution.python_only weighs longer ones).
_SHORT_TEXT = 2_000


def _cpython_refuses(source: str, filename: str) -> bool:
    """Whether CPython's parser refuses a short program's text with a SyntaxError: then execution.python_only,
    which parses it the same way first, finds no program of Python's (a TDF program), and that room need not load.
    False where it takes it, fails otherwise (null bytes, nesting past the recursion limit) or the text is long."""
    if len(source) > _SHORT_TEXT:
        return False
    try:
        with warnings.catch_warnings():            # (a SyntaxWarning is the run's, on the room's own parse)
            warnings.simplefilter("ignore")
            compile(source, filename, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError:
        return True
    except (ValueError, MemoryError, RecursionError):
        return False
    return False


def _python_with_a_name_error(source: str, filename: str, options: Options):
    """A Python program (importing a module, not TensorFlow or Keras) naming something it never binds and that no
    builtin family has (a typo, a name a later edit removed): CPython's, whose NameError comes at that line after
    what ran before it printed, never TDF's run of a program that is not TDF."""
    tree = execution.python_only(source, filename, options.limits.max_memory, free_names=True)
    if tree is None or not tree.free_names or not execution.imports(tree) or execution.imports_a_framework(tree):
        return None         # (TDF's own programs import nothing; TensorFlow's go to the interpreter first)
    load_deferred(tree.free_names)          # the builtin families whose names it may use
    return None if tree.free_names & BUILTINS.keys() else tree


def _say_why_not_on_cpython(error: TdfError, source: str) -> None:
    """A form (or an import) the interpreter refuses, in a TensorFlow program that CPython would run but for
    something else it uses: the hint names that (execution.tensorflow.refusal), so that the user sees both sides."""
    from tapecli.execution.tensorflow import why_not_on_cpython
    from tapecli.execution.training_loops import enabled
    reason = why_not_on_cpython(source) if enabled() else None
    if reason is not None:
        error.hint = f"CPython runs this {'import' if isinstance(error, RefusedImport) else 'form'} in a TensorFlow " \
                     f"program, but not in this one: {reason}"


def run_python(tree, source: str, filename: str, options: Options) -> RunResult:
    """A program of Python alone (execution.python_only), run by CPython under the sandbox's guards."""
    ctx = begin_run(float_dtype=DTYPES[options.dtype or "float32"], max_elements=options.limits.max_elements,
                    max_memory=options.limits.max_memory, max_seconds=options.limits.max_seconds,
                    explain=options.explain, check_numerics=options.check_numerics,
                    jacobian_mode=options.jacobian_mode, device=_device(options.device),
                    runs_after=options.runs_after)
    ctx.settings.python_spelling = True
    ctx.settings.keep_requests = options.keep_requests
    try:
        ran = execution.run(tree, source, filename, options.limits)
        if options.check_numerics:
            try:
                _numerics_checked(ctx, source)
            except TdfError as e:
                e.output, e.expectations = ran.output, ran.expectation_results       # (what ran before it)
                raise
    except TdfError as e:
        e.warnings = list(ctx.settings.warnings)
        raise
    return RunResult(filename, ran, [], ctx)


def _numerics_checked(ctx: RunContext, source: str) -> None:
    """--check-numerics's first finding, at the end of a run, pointing at its statement's first character."""
    try:
        ctx.numerics.check(ctx.settings.python_spelling)
    except TdfError as e:
        text = source.splitlines()[e.line - 1]
        e.column = len(text) - len(text.lstrip()) + 1
        raise


def _check_dtype(options: Options) -> None:
    if options.dtype is not None and options.dtype not in ("float32", "float64"):
        raise UsageError(f"--dtype must be float32 or float64, got {options.dtype}")


def run_program(program: Program, filename: str = "<input>", options: Options | None = None) -> RunResult:
    """Run a parsed program: run_source after parsing (``tapecli bench`` runs one program many times)."""
    options = options or Options()
    _check_dtype(options)
    declared = program.declared_names()
    unknown = sorted(set(options.overrides) - declared)
    if unknown:
        raise UsageError(f"--set {unknown[0]}: the program declares no var or const of that name"
                         + (f" (it declares {', '.join(sorted(declared))})" if declared else ""))
    ctx = begin_run(float_dtype=DTYPES[options.dtype or "float32"], max_elements=options.limits.max_elements,
                    max_memory=options.limits.max_memory, max_seconds=options.limits.max_seconds,
                    explain=options.explain, check_numerics=options.check_numerics,
                    jacobian_mode=options.jacobian_mode, device=_device(options.device),
                    runs_after=options.runs_after)
    ctx.settings.python_spelling = program.python
    ctx.settings.keep_requests = options.keep_requests
    words = program.words()
    load_deferred(None if words is None else words | identifiers(" ".join([options.of or "", *options.wrt])))
    implicit_tape = Tape("(implicit)", persistent=True) if options.of else None
    interp = Interpreter(program, overrides=options.overrides, limits=options.limits,
                         implicit_wrt=set(options.wrt), implicit_tape=implicit_tape)
    try:
        with numpy_settings_kept():
            implicit = _run(program, interp, ctx, implicit_tape, options)
    except TdfError as e:
        e.warnings = list(ctx.settings.warnings)     # gathered before it: often the explanation of the error
        interp.output.close()
        e.output = list(interp.output)               # printed before it, as Python's would have been
        if getattr(e, "explain_none", False) and not ctx.provenance.enabled:
            _explain_none(e, program, filename, options)
        raise
    for exp in _plain_messages(interp.expectation_results):
        if not exp["ok"]:
            ctx.settings.warn(f"expectation failed: {exp['expr']}", exp["line"])
    return RunResult(filename, interp, implicit, ctx)


def _explain_none(error: TdfError, program: Program, filename: str, options: Options) -> None:
    """A None gradient used as a value, in a run that kept no provenance log: run the program again with the
    log (as `tapecli explain` does) for the reason it was None, which becomes the error's hint."""
    try:
        run_program(program, filename, options.replace(explain=True))
    except TdfError as again:
        if (again.line, again.column, again.message) == (error.line, error.column, error.message):
            error.hint = again.hint


def _run(program: Program, interp: Interpreter, ctx: RunContext, implicit_tape: Tape | None,
         options: Options) -> list[Request]:
    with deep_recursion():
        try:
            with contextlib.nullcontext() if implicit_tape is None else recording(implicit_tape, noted=True):
                interp.run()
        except TdfError as e:
            e.expectations = _plain_messages(interp.expectation_results)   # those that ran before it: `check` reports them
            raise
        finally:
            ctx.tapes.clear()       # (those a program entered by hand and never left too)
        implicit = _implicit_requests(interp, implicit_tape, options) if implicit_tape else []
        if options.check_numerics:
            _numerics_checked(ctx, program.source)
    return implicit


def _plain_messages(results: list[dict]) -> list[dict]:
    """Each expectation's message as text (``expect x == 2.0, x``: a tensor, a list or a variable, written as
    its JSON, at most 200 characters), as every report needs it: JSON, JUnit, a worker's pickled reply."""
    from tapecli.interpreter.jsonvalue import to_json
    for result in results:
        message = result.get("message")
        if message is None or isinstance(message, str):
            continue
        import json     # (at first use: most runs have no expectation with a message)
        try:
            text = json.dumps(to_json(message), allow_nan=False)
        except (TdfError, TypeError, ValueError, RecursionError):
            text = f"<{type(message).__name__}>"
        result["message"] = text if len(text) <= 200 else text[:197] + "..."
    return results


def _device(name: str):
    """The run context's backend for ``device`` (None on the cpu: the default dispatch)."""
    backend = backends.get(name)
    if backend is not None:
        backend.begin_run()
    return backend


def device_doc(ctx: RunContext) -> dict:
    """Where a run's kernels ran, for its JSON documents: ``{"kind": "cpu"}`` or ``{"kind": "cuda", "name": ...}``."""
    return {"kind": "cpu"} if ctx.device is None else ctx.device.describe()


def _lookup_global(interp: Interpreter, name: str, flag: str):
    try:
        return interp.globals.lookup(name)
    except KeyError:
        close = closest(name, interp.globals.names())
        raise UsageError(f"{flag} {name}: the program binds no such name"
                         + (f"; did you mean {close}?" if close else "")) from None


def _implicit_requests(interp: Interpreter, tape: Tape, options: Options) -> list[Request]:
    """--of T --wrt S on the implicit persistent tape around the whole program."""
    target = _lookup_global(interp, options.of, "--of")
    if not isinstance(target, (Tensor, Variable)):
        raise UsageError(f"--of {options.of}: expected a tensor, the program binds it to something else")
    if options.wrt:
        sources = [_lookup_global(interp, name, "--wrt") for name in options.wrt]
        labels = list(options.wrt)
    else:
        sources = [v for v in tape.watched_variables() if v.trainable]
        labels = [v.name for v in sources]
    for label, src in zip(labels, sources):
        if not isinstance(src, (Tensor, Variable)):
            raise UsageError(f"--wrt {label}: expected a tensor or a variable")
    requests = [_implicit_request(tape, options, target, src, label) for src, label in zip(sources, labels)]
    if not options.wrt:   # every trainable variable the target depends on
        requests = [r for r in requests if r.values[0] is not None]
    return requests


def _implicit_request(tape, options, target, source, label) -> Request:
    compute = jacobians.jacobian if options.request == "jacobian" else gradients.gradient
    _, values, whys = compute(tape, target, [source], unconnected_gradients=options.unconnected)
    targets = [as_tensor(target)]
    if current().provenance.enabled and values[0] is None:
        from tapecli.autodiff.explain import diagnose
        whys = [diagnose(tape, targets, options.of, source, label)]
    req = Request(options.request, None, tape.name, options.of, [label], values, values, whys, [source],
                  targets=targets, tape_obj=tape)
    req.names = [f"d({options.of})/d({label})"]
    return req


def explain(source: str, filename: str, options: Options) -> list[dict]:
    """How the gradient of ``options.of`` w.r.t. ``options.wrt[0]`` is connected, or why it is None: for
    each of the program's requests of that pair, else on the implicit tape of --of/--wrt."""
    target, wanted = options.of, options.wrt[0]
    result = run_source(source, filename, options.replace(explain=True, of=None, wrt=[]))
    pairs = [(req, i) for req in result.requests if req.target_text == target
             for i, label in enumerate(req.labels) if label == wanted]
    if not pairs:
        result = run_source(source, filename, options.replace(explain=True))
        pairs = [(req, 0) for req in result.implicit]
    from tapecli.autodiff.explain import chain
    lines = source.splitlines()
    out = []
    for req, i in pairs:
        entry = {"tape": req.tape, "line": req.line, "target": target, "source": wanted,
                 "connected": req.values[i] is not None, "why": req.why[i], "chain": []}
        if req.values[i] is not None:
            entry["chain"] = [{"line": line, "ops": ops, "text": lines[line - 1].strip() if line else ""}
                              for line, ops in chain(req.tape_obj, req.targets, req.leaves[i])]
        out.append(entry)
    return out


# ------------------------------------------------------------ the public API

class TdfWarning(UserWarning):
    """A warning of a program run by :func:`run` (also in ``Result.warnings``), issued through Python's
    ``warnings``, so that ``warnings.simplefilter("error", tapecli.TdfWarning)`` or pytest's ``-W`` apply."""


class Result:
    """What :func:`run` returns: the program's values, its gradient and jacobian requests (the entries of
    the JSON documents, values as NumPy arrays), its printed output, warnings and expectations.

    ``r["dy_dx"]`` is a value the program bound (or, failing that, the gradient or jacobian entry of that
    name, such as ``d(y)/d(x)`` for ``of``/``wrt``); ``r.gradient("dy_dx")`` and ``r.jacobian("j")`` read
    the entries only (None for a None gradient)."""

    def __init__(self, values: dict, gradients: list[dict], jacobians: list[dict], warnings: list[dict],
                 output: list[str], expectations: list[dict], run: RunResult):
        self.values, self.gradients, self.jacobians = values, gradients, jacobians
        self.warnings, self.output, self.expectations, self.run = warnings, output, expectations, run

    def gradient(self, name: str):
        return self._entry(self.gradients, name, "gradient")["value"]

    def jacobian(self, name: str):
        return self._entry(self.jacobians, name, "jacobian")["value"]

    def _entry(self, entries: list[dict], name: str, what: str) -> dict:
        for entry in entries:
            if entry["name"] == name:
                return entry
        raise KeyError(_not_found(name, [e["name"] for e in entries if e["name"]], f"no {what} named"))

    def __getitem__(self, name: str):
        if name in self.values:
            return self.values[name]
        for entry in self.gradients + self.jacobians:
            if entry["name"] == name:
                return entry["value"]
        names = list(self.values) + [e["name"] for e in self.gradients + self.jacobians if e["name"]]
        raise KeyError(_not_found(name, names, "the program bound no value and asked for no gradient named"))

    def __contains__(self, name: str) -> bool:
        return name in self.values or any(e["name"] == name for e in self.gradients + self.jacobians)

    def __repr__(self) -> str:
        def names(items, most=6):
            items = list(items)
            return ", ".join(items[:most]) + (f", ... ({len(items)} in all)" if len(items) > most else "")
        parts = [f"{self.run.filename!r}", f"values=[{names(self.values)}]"]
        if self.gradients:
            parts.append(f"gradients=[{names(str(e['name'] or e['source']) for e in self.gradients)}]")
        if self.jacobians:
            parts.append(f"jacobians=[{names(str(e['name'] or e['source']) for e in self.jacobians)}]")
        if self.expectations:
            failed = sum(not e["ok"] for e in self.expectations)
            parts.append(f"expectations={len(self.expectations) - failed} passed, {failed} failed")
        if self.warnings:
            parts.append(f"warnings={len(self.warnings)}")
        return f"<tapecli.Result {' '.join(parts)}>"


def _not_found(name: str, names: list[str], what: str) -> str:
    close = closest(name, names)
    return f"{what} {name!r}" + (f"; did you mean {close!r}?" if close else "")


def numpy_value(value):
    """A program value as NumPy: tensors and variables as arrays, lists and dicts of them as lists and
    dicts; None, strings and numbers as they are; anything else (functions, tapes, layers) is None."""
    if isinstance(value, Variable):
        return np.array(value.read().value)
    if isinstance(value, Tensor):
        from tapecli.ops import materialize
        return np.array((materialize(value) if value.weak else value).value)
    if isinstance(value, (np.ndarray, np.generic)):     # a NumPy value of a program CPython ran
        return np.array(value)
    if isinstance(value, (list, tuple)):
        return [numpy_value(v) for v in value]
    if isinstance(value, dict):
        return {k: numpy_value(v) for k, v in value.items()}
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    return None


def run(path_or_source, *, sets: dict | None = None, dtype: str | None = None, device: str = "cpu",
        of: str | None = None, wrt: list[str] | None = None, limits: Limits | None = None) -> Result:
    """Run a program given as a path (``str`` or ``Path`` of an existing file: TDF, or TensorFlow code as
    written, such as a ``.py`` file) or as source text.

    ``sets`` overrides declarations like ``--set`` (name -> number, nested list or NumPy array);
    ``dtype="float64"`` is ``--dtype float64``; ``of``/``wrt`` ask for gradients as ``--of/--wrt``.
    Program errors raise :class:`tapecli.TdfError` subclasses (with ``line`` and ``column``), bad
    arguments :class:`tapecli.UsageError`; the program's warnings are issued as :class:`TdfWarning`. Each
    call runs in a fresh context of the calling thread, so runs in different threads do not see each other."""
    backends.check(device)
    text, filename = _source_of(path_or_source)
    overrides = {}
    for name, value in (sets or {}).items():
        arr = np.asarray(value)
        if arr.dtype == object or arr.dtype.kind not in "iufb":
            raise UsageError(f"sets[{name!r}]: expected a number or a numeric array")
        overrides[name] = arr.astype(np.float64) if arr.dtype.kind == "f" else arr
    options = Options(dtype=dtype, overrides=overrides, of=of, wrt=list(wrt or []),
                      limits=limits or Limits(), device=device)
    result = run_source(text, filename, options)
    if result.warnings:
        import warnings
        for w in result.warnings:
            where = f"{filename}:{w['line']}: " if w.get("line") else f"{filename}: "
            warnings.warn(where + w["message"], TdfWarning, stacklevel=2)
    requests = result.implicit or result.requests
    return Result(
        values={k: numpy_value(v) for k, v in result.scope.vars.items()
                if numpy_value(v) is not None or v is None},
        gradients=request_entries([r for r in requests if r.kind == "gradient"], numpy_value),
        jacobians=request_entries([r for r in requests if r.kind in ("jacobian", "batch_jacobian")], numpy_value),
        warnings=list(result.warnings), output=list(result.output),
        expectations=list(result.expectations), run=result)


PROGRAM_SUFFIXES = (".tdf", ".py")


def _source_of(path_or_source) -> tuple[str, str]:
    """A path (a ``Path``, or a one-line string naming an existing file, or ending in .tdf or .py) is read;
    any other string is the program's text."""
    if isinstance(path_or_source, Path):
        return read_source(str(path_or_source))
    text = str(path_or_source)
    if "\n" not in text and (text.endswith(PROGRAM_SUFFIXES) or Path(text).is_file()):
        return read_source(text)
    return text, "<source>"
