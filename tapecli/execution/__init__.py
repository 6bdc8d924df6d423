"""Execution: a program's Python run by CPython under guards (docs/architecture.md, "Execution").

``python_only`` says whether a program is one this room runs whole: Python's syntax, imports from the module
table, and no name but its own and Python's builtins (TDF's statements and the TensorFlow library run on the
interpreter until they move here). ``run`` compiles it with the guards (guard.py) and executes it with the
run's sandbox (sandbox.py): its builtins, modules (modules.py) and limits."""
from __future__ import annotations

import ast
import builtins
import contextlib
import sys
import warnings

from tapecli.errors import DtypeMismatch, LimitError, TdfError, TdfSyntaxError
from tapecli.execution.frameworks import BRIDGED, FRAMEWORKS
from tapecli.frontend.parser import deep_recursion
from tapecli.recursion import frames, recursion_limit
from tapecli.runtime.context import current
from tapecli.runtime.limits import Limits, resident_bytes
from tapecli.runtime.numpy_gate import numpy_settings_kept

PROGRAM_MODULE = "__main__"


# CPython's syntax tree and compilation take up to ~300 bytes a character of source at their peak (a 10 MB
# one-line list literal: 2.1 GB to parse), weighed against the memory cap before parsing.
_PARSE_BYTES_PER_CHAR = 300


def python_only(source: str, filename: str = "<input>", max_memory: int | None = None,
                free_names: bool = False) -> ast.Module | None:
    """The program's syntax tree if this room runs it whole, else None. A source too large to parse under
    the memory cap (``max_memory`` bytes) is a LimitError. With ``free_names``, a name the program never
    binds does not make it another language's: it is Python's NameError when the line runs (what run_source
    asks when TDF's parser refuses the program; a TensorFlow program may then run here by default too)."""
    need = len(source) * _PARSE_BYTES_PER_CHAR
    if max_memory is not None and need > 1 << 20 and resident_bytes() + need > max_memory:
        raise LimitError(f"the program's {len(source):,} characters would take about {need / 2**30:.2f} GiB to parse, "
                         f"over the memory limit of {max_memory / 2**30:.2f} GiB",
                         hint="raise it with TAPECLI_MAX_MEMORY=BYTES, or read large data with --set NAME=@file.npy")
    try:
        with warnings.catch_warnings(record=True) as warned:     # (a SyntaxWarning is the run's, not stderr's)
            warnings.simplefilter("always")
            with _cpython_recursion():      # how deep a program CPython parses: never the caller's limit
                tree = ast.parse(source, filename)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    tree.parse_warnings = warned
    bound, loaded, tensorflow, refused, unknown = set(), set(), False, False, False
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (loaded if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            module = node.module if isinstance(node, ast.ImportFrom) else None
            for alias in node.names:
                full = module or alias.name
                if full.split(".")[0] in BRIDGED:
                    from tapecli.execution.tensorflow import interpreter_refuses
                    from tapecli.execution.training_loops import enabled
                    if not tensorflow:
                        refused = free_names or interpreter_refuses(tree)      # (the interpreter cannot run it)
                        tensorflow = enabled(tree, refused)
                    if not tensorflow:
                        return None
                elif (full or "").split(".")[0] in FRAMEWORKS:
                    return None
                if alias.name == "*":
                    names = _star_names(module)
                    unknown = unknown or names is None
                    bound.update(names or ())
                else:
                    bound.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            bound.add(node.rest)
    # (a star import of a module no program may import binds names none can know: the run refuses it at its line)
    free = set() if unknown else loaded - bound - set(dir(builtins)) - {"__name__", "__doc__", "__file__"}
    tree.free_names = free
    if tensorflow:
        from tapecli.execution.modules import ALLOWED, STAND_INS
        from tapecli.execution.tensorflow import bridgeable
        # A program TDF's parser refused (``free_names``) that imports a module no program may: CPython's run
        # refuses the import at its line, with its reason, rather than TDF at a form it could not read.
        allowed = {m.split(".")[0] for m in (*ALLOWED, *STAND_INS)} | (_imported(tree) if free_names else set())
        return tree if (free_names or not free) and bridgeable(tree, allowed, interpreter_can_run=not refused) \
            else None
    return None if free and not free_names else tree


def _star_names(module: str) -> list[str] | None:
    """What ``from module import *`` binds, for a module a program may import (modules.star_names); None for
    another, whose import the run refuses at its line (matplotlib's stand-ins: what their star import binds is
    theirs to answer)."""
    from tapecli.execution.modules import STAND_INS, importable, star_names
    if module in STAND_INS:
        return []
    return star_names(module) if importable(module) else None


def imports(tree: ast.Module) -> bool:
    return any(isinstance(node, (ast.Import, ast.ImportFrom)) for node in ast.walk(tree))


def imports_a_framework(tree: ast.Module) -> bool:
    """Whether the program imports TensorFlow or Keras (any spelling of them)."""
    return any((getattr(node, "module", None) or alias.name).split(".")[0] in FRAMEWORKS for node in ast.walk(tree)
               if isinstance(node, (ast.Import, ast.ImportFrom)) and not getattr(node, "level", 0)
               for alias in node.names)


def _imported(tree: ast.Module) -> set[str]:
    return {(getattr(node, "module", None) or alias.name).split(".")[0] for node in ast.walk(tree)
            if isinstance(node, (ast.Import, ast.ImportFrom)) and not getattr(node, "level", 0)
            for alias in node.names} - set(FRAMEWORKS)


class PythonRun:
    """What a run of this room leaves: the program's globals, its output and its asserts as expectations (the
    shape of the interpreter's results that the api reads: no tapes or requests in a Python-only program)."""

    def __init__(self, scope: dict, output: list[str], expectations: list[dict], requests=(), tapes=(), steps=0):
        self.globals = _Scope({k: v for k, v in scope.items() if not k.startswith("__")})
        self.steps = steps                          # the loop steps and calls it counted against --max-steps
        self.output = output
        self.requests: list = list(requests)       # a TensorFlow program's gradient requests and tapes
        self.tapes: list = list(tapes)
        self.expectation_results = expectations


class _Scope:
    def __init__(self, values):
        self.vars = values

    def get(self, name: str, default=None):
        """The value bound to ``name``, else ``default`` (as the interpreter's Scope answers)."""
        return self.vars.get(name, default)


def run(tree: ast.Module, source: str, filename: str, limits: Limits) -> PythonRun:
    """Run the program; a Python exception it does not catch becomes a TdfError of its class, at its line.
    (The guards, the sandbox and the module table are imported here: a TDF run has no use for them.)"""
    from tapecli.execution import guard, run_logging, run_traceback
    from tapecli.execution.asserts import Assertions
    from tapecli.execution.builtin_table import program_builtins
    from tapecli.execution.modules import STAND_INS, Modules
    from tapecli.execution.sandbox import Sandbox
    sandbox = Sandbox(limits, filename)
    current().settings.step = sandbox.tick      # what iteration on the program's behalf charges (limits.tick)
    code, analysis = _program(tree, filename, source)
    bridge = _bridge(analysis, sandbox, filename, source)
    # (``__file__`` is the program's path as run was given it, as sys.argv[0] is: CPython's is absolute, and a
    # program does not read the working directory)
    scope = {"__name__": PROGRAM_MODULE, "__doc__": ast.get_docstring(tree, clean=False), "__file__": filename}
    state = sandbox.stand_ins = _run_state(sandbox)
    modules = Modules(sandbox, state, bridge and bridge.module, makers={
        "traceback": lambda: run_traceback.make(sandbox, source.splitlines()),
        "logging": lambda: run_logging.make(sandbox, state["warnings"]["warn"], modules.module("traceback"),
                                            tensorflow=bridge is not None),
        **{name: (lambda name=name: _plots(name, filename, modules)) for name in STAND_INS}})
    current().run_logging = lambda: modules.module("logging")
    scope["__builtins__"] = program_builtins(sandbox, modules)
    scope.update(runtime_names(sandbox))
    if bridge:
        from tapecli.execution.tf_calls import type_of
        scope.update(bridge.names(scope))
        scope["__builtins__"]["type"] = type_of      # (a tensor's class as TensorFlow names it)
    asserted = scope[guard.ASSERT] = Assertions()
    warned = list(getattr(tree, "parse_warnings", ()))
    with _process_state(limits), _main_module(scope), _decimal_context(sandbox.decimal_context), warnings.catch_warnings(), \
            contextlib.redirect_stdout(sandbox.stdout), _eager(bridge):     # what a library prints (np.info) is the run's output
        warnings.simplefilter("always")
        warnings.showwarning = _shown(state["warnings"]["warn"], warned, filename, bridge)
        try:
            exec(code, scope)
        except SystemExit as e:
            if e.code not in (None, 0):
                error = _program_error(e, filename, f"the program exited with status {e.code}")
                error.output, error.expectations = sandbox.output, asserted.results
                raise error from None
        except TdfError as e:
            _locate(e, e.__traceback__, filename)
            if isinstance(e, DtypeMismatch):
                _name_operands(e, source)
            e.output, e.expectations = sandbox.output, asserted.results
            raise
        except (Exception, RecursionError) as e:
            error = _program_error(e, filename)
            if isinstance(e, AssertionError):
                _assertion(error, tree, source)
                asserted.failed(e, error.line)
            error.output, error.expectations = sandbox.output, asserted.results    # those that ran: `check` reports them
            raise error from None
        finally:
            _report(warned, filename)
            current().run_logging = current().tf_logger = None     # (the run's logging goes with it)
    run = bridge.eager.run if bridge else None
    if bridge:
        from tapecli.execution.tf_values import library_value
        scope = {k: library_value(v) for k, v in scope.items()}
    return PythonRun(scope, sandbox.output, asserted.results, run.requests if run else (), run.tapes if run else (),
                     sandbox.steps)


def _plots(name: str, filename: str, modules):
    """The run's stand-in of matplotlib or matplotlib.pyplot (run_matplotlib.py), made at its first import, which
    warns once that no figure is drawn."""
    from tapecli.execution import run_matplotlib
    from tapecli.execution.sandbox import program_line
    return run_matplotlib.make(name, lambda message: current().settings.warn_once_at(
        message, program_line(filename)), modules)


def _bridge(analysis, sandbox, filename: str, source: str):
    """What a TensorFlow program runs with (execution/tensorflow.py), or None for a program of Python alone."""
    if analysis is None:
        return None
    from tapecli.execution.tensorflow import Bridge
    return Bridge(analysis, sandbox, filename, source)


# What a program's text compiles to, by (source, filename): its code and, for a TensorFlow program, its Analysis.
# Both are of the text alone (``tree`` is ``source`` parsed), and no run changes them, so every run of the same
# text takes them from here: ``tapecli bench`` runs a program again and again in one process. Kept for programs of
# up to _KEPT_CHARS characters (a larger one's code, its constants, is compiled at each run rather than held),
# _KEPT_PROGRAMS at most (a long-lived process's many programs: it starts again).
_PROGRAMS: dict = {}
_KEPT_PROGRAMS = 32
_KEPT_CHARS = 100_000


def _program(tree: ast.Module, filename: str, source: str):
    """(the program's code, its TensorFlow Analysis or None)."""
    key = (source, filename)
    found = _PROGRAMS.get(key)
    if found is None:
        analysis = None
        if getattr(tree, "tf_aliases", None):
            from tapecli.execution.tensorflow import Analysis
            analysis = Analysis(tree, source)
        found = _compiled(tree, filename, source, analysis and analysis.transform), analysis
        if len(source) <= _KEPT_CHARS:
            if len(_PROGRAMS) >= _KEPT_PROGRAMS:
                _PROGRAMS.clear()
            _PROGRAMS[key] = found
    return found


@contextlib.contextmanager
def _eager(bridge):
    """Tensors have their Python operators while a TensorFlow program runs (RunContext.eager), and its training
    loops may run as plans where the run's mode allows them (planned_loops.py: on no device)."""
    ctx = current()
    ctx.eager = ctx.bridge = bridge.eager if bridge else None
    try:
        with ctx.mode.interpreting(False, bridge is not None and ctx.device is None):
            yield
    finally:
        ctx.eager = ctx.bridge = None


def _shown(run_warn, warned: list, filename: str, bridge):
    """Where a warning Python's ``warnings`` shows goes: one the program's own call gave (NumPy's RuntimeWarning
    of ``np.log(0.0)``) meets the run's filters and records (``simplefilter('error')``, ``catch_warnings(record=
    True)``), as CPython's would; one of tapecli's library inside a TensorFlow call is the run's warning, once a
    line."""
    def show(message, category, file, line, *rest):
        if bridge is None or current().eager is not None:
            run_warn(message, category)
            return
        from tapecli.execution.sandbox import program_line
        line = program_line(filename) or line
        if not any(w.lineno == line and str(w.message) == str(message) for w in warned):
            warned.append(warnings.WarningMessage(message, category, file, line))
    return show


def _report(warned: list, filename: str) -> None:
    """Python's warnings (NumPy's RuntimeWarning of a division by zero, a SyntaxWarning) become the run's
    warnings, at the program's line that gave them."""
    settings = current().settings
    for w in warned:
        settings.warn(f"{w.category.__name__}: {w.message}", w.lineno)


def runtime_names(sandbox) -> dict:
    from tapecli.execution import guard, interfaces, weigh

    def texted(value):
        weigh.weigh_text(value, None)
        return value
    return {guard.GET: sandbox.get, guard.SET: sandbox.set, guard.DELETE: sandbox.delete,
            guard.TICK: sandbox.tick, guard.BINARY: weigh.binary, guard.CAUGHT: sandbox.caught,
            guard.ITER: sandbox.iterable, guard.FIELD: weigh.field, guard.JOINED: weigh.joined,
            guard.TEXTED: texted, guard.MADE: interfaces.made}


def _compiled(tree: ast.Module, filename: str, source: str = "", transform=None):
    from tapecli.execution import guard
    try:
        with deep_recursion():          # the transform recurses with the program's nesting, as CPython's compiler does
            return guard.compile_program(tree, filename, source, transform)
    except SyntaxError as e:        # what only the compiler finds (a return outside a function, ...)
        raise TdfSyntaxError(e.msg, line=e.lineno, column=e.offset) from None
    except (RecursionError, MemoryError):
        raise LimitError("the program is nested too deeply to compile",
                         hint="split the deepest expression into several statements") from None


def _run_state(sandbox) -> dict[str, dict]:
    """The run's own values for the module-level state of allowed modules."""
    from tapecli.execution.state import run_replacements
    return run_replacements(sandbox)


class _process_state(numpy_settings_kept):
    """The recursion limit the program runs under: as much room as CPython gives a program of its own
    (``sys.getrecursionlimit()`` frames from the program's first), or --max-depth if more; NumPy's settings
    kept."""

    def __init__(self, limits: Limits):
        from tapecli.execution.sandbox import program_depth
        self.depth = program_depth(limits)

    def __enter__(self):
        self.limit = recursion_limit(frames() + self.depth)
        self.limit.__enter__()
        super().__enter__()

    def __exit__(self, *exc):
        self.limit.__exit__(*exc)
        super().__exit__(*exc)


def _cpython_recursion():
    """CPython's default recursion limit above the caller's frames, as a program of its own would have."""
    from tapecli.execution.sandbox import CPYTHON_RECURSION_LIMIT
    return recursion_limit(frames() + CPYTHON_RECURSION_LIMIT)


class _ProgramModule:
    """The program's namespace where a library looks its module up (its ``__dict__`` is the program's scope)."""


@contextlib.contextmanager
def _main_module(scope: dict):
    """``sys.modules["__main__"]`` is the program's module while it runs, as under CPython: dataclasses reads
    string annotations (``from __future__ import annotations``) there to tell ClassVar, InitVar and KW_ONLY
    fields, and typing.get_type_hints resolves them there. The caller's comes back when the run ends. (The
    run's context says meanwhile that a program runs: interfaces.py.)"""
    module = _ProgramModule()
    module.__dict__ = scope
    saved = sys.modules.get(PROGRAM_MODULE)
    sys.modules[PROGRAM_MODULE] = module
    current().program_running = True
    try:
        yield
    finally:
        current().program_running = False
        if saved is None:
            sys.modules.pop(PROGRAM_MODULE, None)
        else:
            sys.modules[PROGRAM_MODULE] = saved


@contextlib.contextmanager
def _decimal_context(context):
    """The run's decimal context is the thread's current one while the program runs (Decimal arithmetic reads
    the current context, not the one getcontext() handed out); the caller's comes back when the run ends."""
    import decimal
    saved = decimal.getcontext()
    decimal.setcontext(context)
    try:
        yield
    finally:
        decimal.setcontext(saved)


def _program_error(error: BaseException, filename: str, message: str | None = None) -> TdfError:
    out = TdfError(message or _message(error))
    out.kind = type(error).__name__
    _locate(out, error.__traceback__, filename, caller=isinstance(error, RecursionError))
    return out


def _assertion(error: TdfError, tree: ast.Module, source: str) -> None:
    """A failed ``assert`` is shown at its statement, and one without a message says what it asserted."""
    statement = next((node for node in ast.walk(tree) if isinstance(node, ast.Assert)
                      and node.lineno <= (error.line or 0) <= (node.end_lineno or node.lineno)), None)
    if statement is None:
        return
    error.line, error.column, error.end_column = statement.lineno, statement.col_offset + 1, None
    if not error.message:
        error.message = ast.get_source_segment(source, statement.test) or ""


def _message(error: BaseException) -> str:
    if isinstance(error, KeyError) and len(error.args) == 1:
        return repr(error.args[0])
    return str(error)


def _name_operands(error: DtypeMismatch, source: str) -> None:
    """A dtype mismatch at a binary operator (``x * n``, ``y *= n``) names the operand to convert by its text in
    its hint, as the interpreter's does."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.BinOp, ast.AugAssign)) and (node.lineno, node.col_offset + 1, node.end_col_offset + 1) \
                == (error.line, error.column, error.end_column):
            pair = (node.left, node.right) if isinstance(node, ast.BinOp) else (node.target, node.value)
            error.name_operands([ast.get_source_segment(source, n) for n in pair])
            return


def _locate(error: TdfError, tb, filename: str, caller: bool = False) -> None:
    """The position of the innermost line of the program in the traceback (with ``caller``, of the call that
    made the innermost frame: where a RecursionError's recursion is, not the guard it ran out in)."""
    if error.line is not None:
        return
    frames = []
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            frames.append(tb)
        tb = tb.tb_next
    if not frames:
        return
    found = frames[-2] if caller and len(frames) > 1 else frames[-1]
    positions = list(found.tb_frame.f_code.co_positions())
    index = found.tb_lasti // 2
    line, end_line, column, end_column = positions[index] if index < len(positions) else (found.tb_lineno,) * 2 + (None, None)
    error.line = line or found.tb_lineno
    if column is not None:
        error.column = column + 1
        if end_line == line and end_column is not None:
            error.end_column = end_column + 1


