"""Fuzz tapecli with mutated and generated TDF programs.

    python benchmarks/fuzz.py --count 10000 --seed 1 [--cli-every 200] [--workers 2] [--out fuzz-failures]

Each program runs through the library (``tapecli.api.run_source`` with small limits, then the
JSON renderers and the linter) in a worker process. A program must either finish or raise a
``TdfError`` that has a line (or a ``UsageError``); any other exception is a failure, and so is a
program that runs longer than ``--timeout`` seconds (a hang: the limits should have stopped it).
Every ``--cli-every``-th program also runs through the real command line twice: ``python -m tapecli
run --json``, which must exit 0, 1 or 3 with one JSON document on stdout and no traceback; and a
random command (run, grad, jacobian, hessian, explain, check, lint, ...) with bad option values, bad
environment values or an odd encoding (BOM, CRLF, not UTF-8; ``hostile.cli_invocation``), which must
exit 0 to 3 without a traceback or an internal error.

Programs are the files under ``examples/`` (and any ``--corpus`` folders) mutated with a seeded
``random.Random``: lines deleted, duplicated, swapped or re-indented, characters deleted or
inserted, numbers replaced with 0, -1, 1e30 or big integers, names replaced with other names of
the file, operators replaced; plus programs generated from a small model of the grammar
(``generate``); and (``--hostile``) programs that call every builtin with hostile arguments, in TDF
and in TensorFlow-style Python, nest near the limits, grow strings and lists through methods and
formatting, build cyclic or deep data, drive tf.data pipelines, Keras' fit/evaluate/predict and NumPy calls
to the limits, or run one long line (benchmarks/hostile.py); the command
lines also write output files onto FIFOs, symlinks, folders and sockets, which must stay as they were. Failures are
minimized (lines, then characters) and saved under ``--out`` with their tracebacks; the summary
counts outcomes by error kind.

The test suite (tests/reliability/test_fuzz.py) imports ``mutate``, ``generate`` and ``check_program`` from
here, so a bounded run happens in CI.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for folder in (ROOT, ROOT / "benchmarks"):          # the package, and hostile.py beside this file
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

# The fuzzer's own memory cap (2 GB), in process and through the command line: a hostile program that slips
# past a gate fails as a LimitError past the cap, never by taking the machine's memory.
MAX_MEMORY = 2_000_000_000
# The time limit (3 s) stays under the default --timeout (5 s): a program still running at the timeout slipped
# past TAPECLI_MAX_SECONDS (a hang), one within the limits ends at one of them.
LIMITS = dict(max_steps=10_000, max_elements=100_000, max_depth=50, max_memory=MAX_MEMORY, max_seconds=3.0)
CLI_LIMITS = ["--max-steps", "10000", "--max-elements", "100000", "--max-depth", "50"]

# Characters and tokens a TDF program is made of, for insertions and raw text.
ALPHABET = "abcfgtwxyz_019.()[]{}:,=+-*/%@<>!~#\"' \n"
TOKENS = ["tape ", "watch ", "var ", "const ", "reset ", "stop_recording ", "def ", "return ", "if ", "elif ",
          "else:", "while ", "for ", " in ", "break", "continue", "expect ", "expect_error ", " and ", " or ",
          "not ", " is ", "True", "False", "None", ".gradient(", ".jacobian(", ".batch_jacobian(", "(", ")",
          "[", "]", ":", "\n    ", "@custom_gradient\n", "persistent=True", "**", "//", "~=", ", "]
NUMBERS = ["0", "-1", "1e30", "-1e30", "99999999999999999999", "2147483648", "1e-45", "0.0", "3", "100000"]
OPERATORS = ["+", "-", "*", "/", "//", "%", "**", "@", "<", "<=", ">", ">=", "==", "!=", "~="]
_NUMBER_RE = re.compile(r"(?<![\w.])(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?(?![\w.])")
_NAME_RE = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")
_OP_RE = re.compile(r"\*\*|//|<=|>=|==|!=|~=|[+\-*/%@<>]")


# ------------------------------------------------------------------ mutations

def _lines(src):
    return src.split("\n")


def _m_delete_line(src, rng):
    lines = _lines(src)
    del lines[rng.randrange(len(lines))]
    return "\n".join(lines)


def _m_duplicate_line(src, rng):
    lines = _lines(src)
    i = rng.randrange(len(lines))
    lines.insert(rng.randrange(len(lines) + 1), lines[i])
    return "\n".join(lines)


def _m_swap_lines(src, rng):
    lines = _lines(src)
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    lines[i], lines[j] = lines[j], lines[i]
    return "\n".join(lines)


def _m_indent(src, rng):
    lines = _lines(src)
    i = rng.randrange(len(lines))
    line = lines[i]
    how = rng.choice(["more", "less", "odd", "tab", "strip"])
    if how == "more":
        line = "    " + line
    elif how == "less":
        line = line[4:] if line.startswith("    ") else line.lstrip(" ")
    elif how == "odd":
        line = " " * rng.randint(1, 3) + line
    elif how == "tab":
        line = "\t" + line.lstrip(" ")
    else:
        line = line.lstrip()
    lines[i] = line
    return "\n".join(lines)


def _m_delete_chars(src, rng):
    if not src:
        return src
    i = rng.randrange(len(src))
    return src[:i] + src[i + rng.randint(1, 3):]


def _m_insert_chars(src, rng):
    i = rng.randrange(len(src) + 1)
    text = rng.choice(TOKENS) if rng.random() < 0.5 else "".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 3)))
    return src[:i] + text + src[i:]


def _m_number(src, rng):
    found = list(_NUMBER_RE.finditer(src))
    if not found:
        return _m_insert_chars(src, rng)
    m = rng.choice(found)
    return src[:m.start()] + rng.choice(NUMBERS) + src[m.end():]


def _m_name(src, rng):
    code = [m for m in _NAME_RE.finditer(src) if not _in_comment(src, m.start())]
    if len(code) < 2:
        return _m_delete_chars(src, rng)
    m = rng.choice(code)
    other = rng.choice(code).group()
    return src[:m.start()] + other + src[m.end():]


def _m_operator(src, rng):
    found = [m for m in _OP_RE.finditer(src) if not _in_comment(src, m.start())]
    if not found:
        return _m_insert_chars(src, rng)
    m = rng.choice(found)
    return src[:m.start()] + rng.choice(OPERATORS) + src[m.end():]


def _in_comment(src, pos):
    start = src.rfind("\n", 0, pos) + 1
    return "#" in src[start:pos]


MUTATIONS = [_m_delete_line, _m_duplicate_line, _m_swap_lines, _m_indent, _m_delete_chars, _m_insert_chars,
             _m_number, _m_number, _m_number, _m_name, _m_name, _m_name, _m_operator, _m_operator,
             _m_delete_line, _m_duplicate_line]


def strip_comments(src: str) -> str:
    """Drop comment-only lines (the seeds' prose), so mutations hit code."""
    return "\n".join(line for line in src.split("\n") if not line.lstrip().startswith("#"))


def mutate(src: str, rng: random.Random, count: int | None = None) -> str:
    """``src`` with 1 to 4 (or ``count``) random mutations."""
    for _ in range(count if count is not None else rng.randint(1, 4)):
        src = rng.choice(MUTATIONS)(src, rng)
    return src


# ------------------------------------------------------------- generation

VARS = ["x", "y", "z", "w", "b"]
TAPES = ["t", "g"]
FUNCS = ["f", "h"]
UNARY = ["sin", "cos", "exp", "log", "sqrt", "tanh", "sigmoid", "relu", "abs", "square", "softplus", "sum",
         "mean", "max", "norm", "softmax", "stop_gradient", "round", "sign", "transpose", "len", "shape", "print",
         "logsumexp", "gelu", "elu", "leaky_relu", "argmax", "size", "squeeze", "erf", "tensor", "prod", "rsqrt"]
BINARY = ["matmul", "maximum", "minimum", "pow", "dot", "stack", "concat", "cast", "reshape", "expand_dims",
          "clip_by_norm", "sum", "fill"]
LEAVES = ["1", "2.0", "0", "-1", "0.5", "1e30", "3", ".5", "1e-3", "[1.0, 2.0]", "[[1.0, 2.0], [3.0, 4.0]]",
          "[1, 2]", "[]", "True", "None", '"s"', "float64", "int32", "range(3)", "zeros([2, 2])", "ones([3])",
          "linspace(0.0, 1.0, 5)", "normal([2, 2], seed=1)", "eye(2)", "[x, y]", '{"a": x}', "L", "f"]


class Chooser:
    """The random choices a generator makes; ``random.Random`` or Hypothesis' ``draw`` behind it."""

    def __init__(self, rng: random.Random):
        self.rng = rng

    def choice(self, seq):
        return self.rng.choice(seq)

    def randint(self, a, b):
        return self.rng.randint(a, b)

    def chance(self, p):
        return self.rng.random() < p


def _expr(c: Chooser, depth: int) -> str:
    if depth <= 0 or c.chance(0.3):
        return c.choice(LEAVES + VARS * 3)
    kind = c.randint(0, 9)
    e = lambda: _expr(c, depth - 1)  # noqa: E731
    if kind == 0:
        return f"({e()} {c.choice(OPERATORS + ['and', 'or', 'is', 'is not'])} {e()})"
    if kind == 1:
        return f"{c.choice(['-', 'not ', '+'])}{e()}"
    if kind == 2:
        return f"{c.choice(UNARY)}({e()})"
    if kind == 3:
        return f"{c.choice(BINARY)}({e()}, {e()})"
    if kind == 4:
        method = c.choice(["gradient", "gradient", "jacobian", "batch_jacobian"])
        extra = c.choice(["", "", ', unconnected_gradients="zero"', ', unconnected_gradients="bad"',
                          f", output_gradients={e()}"]) if method == "gradient" else ""
        if c.chance(0.1):
            return f"{c.choice(TAPES)}.watched_variables()"
        source = c.choice(VARS + SOURCES)
        return f"{c.choice(TAPES)}.{method}({e()}, {source}{extra})"
    if kind == 5:
        return f"{c.choice(VARS)}.{c.choice(['assign', 'assign_add', 'assign_sub'])}({e()})"
    if kind == 6:
        return f"{e()}[{c.choice(INDEXES)}]"
    if kind == 7:
        return f"{c.choice(VARS + ['L'])}.{c.choice(['shape', 'dtype', 'T', 'kernel', 'variables', 'name'])}"
    if kind == 8:
        return f"{c.choice(FUNCS + ['L', 'Dense'])}({e()})"
    return c.choice(["where", "clip", "gradcheck", "allclose"]) + f"({e()}, {e()}, {e()})"


def _block(c: Chooser, indent: int, depth: int, size: int) -> list[str]:
    return [line for _ in range(size) for line in _stmt(c, indent, depth)]


def _stmt(c: Chooser, indent: int, depth: int) -> list[str]:
    pad = "    " * indent
    e = lambda: _expr(c, 2)  # noqa: E731
    simple = depth <= 0 or c.chance(0.55)
    if simple:
        kind = c.randint(0, 11)
        if kind == 0:
            ann = c.choice(["", "", ": float64", ": int32", ": f32"])
            keyword = c.choice(["var", "var", "const", "var(trainable=False)"])
            return [f"{pad}{keyword} {c.choice(VARS)}{ann} = {e()}"]
        if kind in (1, 2):
            return [f"{pad}{c.choice(VARS)} = {e()}"]
        if kind == 3:
            return [f"{pad}{c.choice(VARS)}, {c.choice(VARS)} = {e()}"]
        if kind == 4:
            return [f"{pad}{c.choice(VARS)} {c.choice(['+=', '-=', '*=', '/='])} {e()}"]
        if kind == 5:
            return [f"{pad}watch {e()}" + (f" in {c.choice(TAPES)}" if c.chance(0.3) else "")]
        if kind == 6:
            return [f"{pad}reset {c.choice(TAPES)}"]
        if kind == 7:
            return [f"{pad}expect {e()}" + (', "why"' if c.chance(0.3) else "")]
        if kind == 8:
            # break/continue/return outside a loop or function are syntax errors: keep them rare
            return [f"{pad}{c.choice(['pass'] * 6 + ['break', 'continue', 'return ' + e()])}"]
        if kind == 9:
            return [f"{pad}L = Dense({c.choice(['2', '1', '0', '-1', '3'])}{c.choice(LAYER_OPTIONS)})"]
        return [f"{pad}{e()}"]
    kind = c.randint(0, 7)
    body = lambda: _block(c, indent + 1, depth - 1, c.randint(1, 3))  # noqa: E731
    if kind == 0:
        opts = c.choice(["", "", "(persistent=True)", "(watch_accessed_variables=False)", "(nope=1)"])
        return [f"{pad}tape {c.choice(TAPES)}{opts}:"] + body()
    if kind == 1:
        return [f"{pad}stop_recording {c.choice(TAPES)}:"] + body()
    if kind == 2:
        lines = [f"{pad}if {e()}:"] + body()
        if c.chance(0.3):
            lines += [f"{pad}elif {e()}:"] + body()
        if c.chance(0.5):
            lines += [f"{pad}else:"] + body()
        return lines
    if kind == 3:
        return [f"{pad}while {e()}:"] + body()
    if kind == 4:
        return [f"{pad}for {c.choice(['i', 'x', 'i, j'])} in {c.choice(['range(3)', e()])}:"] + body()
    if kind == 5:
        deco = [f"{pad}@custom_gradient"] if c.chance(0.2) else []
        params = c.choice(["", "a", "a, b=1.0", "x"])
        return deco + [f"{pad}def {c.choice(FUNCS)}({params}):"] + body() + [f"{pad}    return {e()}"]
    if kind == 6:
        kind_name = c.choice(["TapeError", "TypeError", "ShapeError", "NameError", "ValueError", "Nope"])
        return [f"{pad}expect_error {kind_name}:"] + body()
    return [f"{pad}{e()}"]


SOURCES = ["[x, y]", '{"w": w}', "L.variables", "L.trainable_variables"]
INDEXES = ["0", "1", "-1", "1:", ":, 0", "::2", '"a"', "x"]
LAYER_OPTIONS = ["", ', activation="relu"', ', activation="nope"', ", seed=1", ", use_bias=False"]

PREAMBLE = ["var x = 3.0", "var y = [1.0, 2.0]", "var w = [[1.0, 2.0], [3.0, 4.0]]", "var b = 0.5",
            "const z = 2.0", "L = Dense(2, seed=1)", "def f(a):", "    return a * a", "def h(a, b=1.0):",
            "    return a + b", "tape g(persistent=True):", "    q = x * y", "tape t:", "    r = sum(w * x)"]


def generate(c: Chooser | random.Random) -> str:
    """A program from a small model of the grammar: statements, blocks, indentation."""
    if isinstance(c, random.Random):
        c = Chooser(c)
    lines = list(PREAMBLE) if c.chance(0.85) else []
    lines += _block(c, 0, 3, c.randint(1, 6))
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------ checking

def check_program(source: str, commands: bool = False) -> dict:
    """Run ``source`` through the linter, the library and the renderers, then (``commands``) through
    grad/jacobian/hessian/explain/check in process (benchmarks/hostile.py).

    Returns ``{"outcome": "ok" | "<ErrorKind>" | "UsageError"}``, or ``{"outcome": "FAILURE",
    "signature", "traceback"}`` for any other exception, a TdfError without a line, or a TdfError
    raised while rendering a finished run (the CLI would exit 4 on it).
    """
    from tapecli.cli import render
    from tapecli.api import Options, run_source
    from tapecli.errors import TdfError, UsageError
    from tapecli.runtime.limits import Limits
    from tapecli.tools.lint import lint_source
    phase = "lint"
    try:
        try:
            lint_source(source, "fuzz.tdf")
        except TdfError:
            pass
        phase = "run"
        try:
            result = run_source(source, "fuzz.tdf", Options(limits=Limits(**LIMITS)))
        except TdfError as e:
            text = render.format_error(e, "fuzz.tdf", source)
            render.dumps(render.error_doc("run", "fuzz.tdf", e))
            if not isinstance(e.line, int) or e.line < 1:
                return {"outcome": "FAILURE", "signature": f"{e.kind} without a line: {e.message[:50]}",
                        "traceback": text, "exception": type(e).__name__,
                        "frames": [f.name for f in _own_frames(e)], "phase": phase}
            return {"outcome": e.kind}
        phase = "render"
        try:
            render.dumps(render.run_doc(result))
        except TdfError:          # a value too large to render within the limits: the CLI reports it
            pass
        render.dumps(render.requests_doc("grad", result, ("gradient",)))
        render.dumps(render.requests_doc("jacobian", result, ("jacobian", "batch_jacobian")))
        render.dumps(render.watched_doc(result))
        if commands:
            phase = "commands"
            from hostile import run_commands
            run_commands(source, Options(limits=Limits(**LIMITS)))
        return {"outcome": "ok"}
    except UsageError:
        return {"outcome": "UsageError"}
    except Exception as e:  # any other exception is what we are looking for
        return {"outcome": "FAILURE", "signature": signature(e, phase), "traceback": traceback.format_exc(),
                "exception": type(e).__name__, "frames": [f.name for f in _own_frames(e)], "phase": phase}


def _own_frames(e: BaseException) -> list:
    """The traceback's frames inside the tapecli package, outermost first."""
    import tapecli
    package = Path(tapecli.__file__).resolve().parent
    return [f for f in traceback.extract_tb(e.__traceback__) if Path(f.filename).resolve().is_relative_to(package)]


def _module(filename: str) -> str:
    import tapecli
    rel = Path(filename).resolve().relative_to(Path(tapecli.__file__).resolve().parent).with_suffix("")
    parts = [p for p in rel.parts if p != "__init__"]
    return ".".join(parts) or "tapecli"


def signature(e: BaseException, phase: str = "run") -> str:
    """The exception type and the innermost tapecli function it came from: one bug, one signature
    (function names, unlike line numbers, survive edits elsewhere in the file)."""
    frames = _own_frames(e)
    named = [f for f in frames if not f.name.startswith("<")] or frames     # not <lambda>, <dictcomp>
    where = f"{_module(named[-1].filename)}.{named[-1].name}" if named else "?"
    return f"{type(e).__name__} in {where}" + (f" ({phase})" if phase != "run" else "")


def check_cli(source: str, timeout: float = 60, args: list[str] | None = None, env: dict | None = None,
              raw: bytes | None = None) -> dict:
    """Run ``python -m tapecli run --json`` on ``source`` (or ``args`` before the file, with ``env`` added to
    the environment and ``raw`` as the file's bytes); what the contract of CLI.md demands: exit 0 to 3
    (0, 1 or 3 for a plain run; ``check`` also 5, nothing to check), no traceback, no internal error, one
    JSON document under ``--json``."""
    from hostile import file_kinds, special_files
    plain = args is None
    args = ["run", "--json", *CLI_LIMITS] if plain else args
    with tempfile.TemporaryDirectory() as folder:
        special = special_files(folder) if any("{dir}" in a for a in args) else None
        args = [a.replace("{dir}", folder) for a in args]
        path = Path(folder) / "fuzz.tdf"
        path.write_bytes(source.encode() if raw is None else raw)
        try:
            proc = subprocess.run([sys.executable, "-m", "tapecli", *args, str(path)], capture_output=True,
                                  timeout=timeout, cwd=str(ROOT),
                                  env={**os.environ, "TAPECLI_MAX_MEMORY": str(MAX_MEMORY), **(env or {})})
        except subprocess.TimeoutExpired:
            return {"outcome": "FAILURE", "signature": "cli hang",
                    "traceback": f"tapecli {' '.join(args)} FILE\nenvironment: {env}\nover {timeout} s"}
        changed = special and {k: v for k, v in file_kinds(folder).items() if k in special and special[k] != v}
    stdout, stderr = (proc.stdout.decode(errors="replace"), proc.stderr.decode(errors="replace"))
    problems = []
    if proc.returncode not in ((0, 1, 3) if plain else (0, 1, 2, 3, 5) if args[0] == "check" else (0, 1, 2, 3)):
        problems.append(f"exit code {proc.returncode}")
    if "Traceback" in stderr:
        problems.append("a traceback on stderr")
    if "internal error" in stdout + stderr:
        problems.append("an internal error")
    if changed:
        problems.append(f"special files replaced: {changed}")
    if "--json" in args and proc.returncode != 2:
        try:
            doc = json.loads(stdout)
            if doc.get("schema") != "tapecli/1":
                problems.append("no schema tapecli/1")
            if "error" in doc:
                line = doc["error"].get("line")
                if not isinstance(line, int) or isinstance(line, bool) or line < 1:
                    problems.append(f"error.line is {line!r}")
        except ValueError:
            problems.append("stdout is not one JSON document")
    if problems:
        what = "" if plain else f" ({args[0]})"
        return {"outcome": "FAILURE", "signature": "cli: " + ", ".join(problems) + what,
                "traceback": f"tapecli {' '.join(args)} FILE\nenvironment: {env}\nexit {proc.returncode}\n"
                             f"stdout: {stdout[:2000]}\nstderr: {stderr[-4000:]}"}
    return {"outcome": "cli-ok"}


def seed_sources(folders) -> list[tuple[str, str]]:
    """(name, source without comment lines) of every .tdf file in the folders."""
    out = []
    for folder in folders:
        for path in sorted(Path(folder).glob("*.tdf")):
            out.append((path.name, strip_comments(path.read_text(encoding="utf-8"))))
    return out


# ------------------------------------------------------- worker processes

def _worker(conn):
    import signal
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.environ.setdefault("NUMBA_NUM_THREADS", "1")
    while True:
        source = conn.recv()
        if source is None:
            return
        conn.send(check_program(source, commands=True))


class Pool:
    """Worker processes that each run one program at a time; a worker that takes longer than
    ``timeout`` is killed (the program is a hang) and replaced."""

    def __init__(self, workers: int, timeout: float):
        import multiprocessing as mp
        self.ctx = mp.get_context("spawn")
        self.timeout = timeout
        self.slots = [self._start() for _ in range(workers)]

    def _start(self):
        parent, child = self.ctx.Pipe()
        proc = self.ctx.Process(target=_worker, args=(child,), daemon=True)
        proc.start()
        return {"proc": proc, "conn": parent, "job": None, "since": 0.0}

    def map(self, jobs):
        """Yields (job, result) for each (key, source) job, in completion order."""
        from multiprocessing.connection import wait
        jobs = iter(jobs)
        busy = 0
        exhausted = False
        while True:
            for slot in self.slots:
                if slot["job"] is None and not exhausted:
                    job = next(jobs, None)
                    if job is None:
                        exhausted = True
                        continue
                    slot["job"], slot["since"] = job, time.monotonic()
                    slot["conn"].send(job[1])
                    busy += 1
            if busy == 0:
                return
            ready = wait([s["conn"] for s in self.slots if s["job"] is not None], timeout=0.2)
            now = time.monotonic()
            for i, slot in enumerate(self.slots):
                if slot["job"] is None:
                    continue
                if slot["conn"] in ready:
                    try:
                        result = slot["conn"].recv()
                    except EOFError:
                        result = {"outcome": "FAILURE", "signature": "worker died",
                                  "traceback": f"exit code {slot['proc'].exitcode}"}
                        self.slots[i] = self._replace(slot)
                elif now - slot["since"] > self.timeout:
                    result = {"outcome": "FAILURE", "signature": "hang",
                              "traceback": f"no result after {self.timeout:g} s"}
                    self.slots[i] = self._replace(slot)
                else:
                    continue
                job = slot["job"]
                slot["job"] = None
                busy -= 1
                yield job, result

    def _replace(self, slot):
        slot["proc"].kill()
        slot["proc"].join()
        return self._start()

    def run_one(self, source: str) -> dict:
        return next(r for _, r in self.map([(0, source)]))

    def close(self):
        for slot in self.slots:
            try:
                slot["conn"].send(None)
            except OSError:
                pass
            slot["proc"].join(timeout=2)
            if slot["proc"].is_alive():
                slot["proc"].kill()


# ------------------------------------------------------------ minimizing

def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _reductions(lines: list[str]):
    """Smaller programs: without a statement and its indented block, without halves, pairs and single
    lines, and with a block's lines dedented."""
    n = len(lines)
    for i in range(n):
        j = i + 1
        while j < n and _indent(lines[j]) > _indent(lines[i]):
            j += 1
        if j > i + 1:
            yield lines[:i] + lines[j:]
    for size in sorted({n // 2, n // 4, 2, 1}, reverse=True):
        if size >= 1:
            for i in range(0, n - size + 1):
                yield lines[:i] + lines[i + size:]


def minimize(source: str, signature: str, still_fails, budget: int = 600) -> str:
    """Greedy delta debugging on lines: keep the first smaller program (see ``_reductions``) that
    ``still_fails`` with the same failure signature, until none does; at most ``budget`` runs."""
    runs = 0
    lines = [line for line in source.split("\n") if line.strip()]
    progress = True
    while progress and runs < budget:
        progress = False
        for candidate in _reductions(lines):
            if not candidate or runs >= budget:
                continue
            runs += 1
            r = still_fails("\n".join(candidate) + "\n")
            if r.get("outcome") == "FAILURE" and r.get("signature") == signature:
                lines, progress = candidate, True
                break
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------- main

def programs(count: int, seed: int, corpus: list[tuple[str, str]], generated_share: float,
             hostile_share: float = 0.0):
    import hostile
    kinds = [(0.4, "hostile", hostile.hostile_program), (0.22, "hostile-python", hostile.python_program),
             (0.07, "nested", hostile.nested_program), (0.09, "growth", hostile.growth_program),
             (0.07, "cyclic", hostile.cyclic_program), (0.1, "limits", hostile.limits_program),
             (0.05, "long", hostile.long_program)]
    rng = random.Random(seed)
    for n in range(count):
        draw = rng.random()
        if draw < hostile_share:
            kind = rng.random()
            for share, origin, make in kinds:
                kind -= share
                if kind < 0 or origin == "long":
                    yield n, origin, make(rng)
                    break
        elif not corpus or draw < hostile_share + generated_share:
            yield n, "generated", generate(rng)
        else:
            name, src = rng.choice(corpus)
            yield n, name, mutate(src, rng)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cli-every", type=int, default=200, help="also run every K-th program through the CLI "
                                                                   "(0: never)")
    parser.add_argument("--workers", type=int, default=max(1, min(2, os.cpu_count() or 1)))
    parser.add_argument("--timeout", type=float, default=5.0, help="seconds before a program counts as a hang")
    parser.add_argument("--generated", type=float, default=0.25, help="share of generated (not mutated) programs")
    parser.add_argument("--hostile", type=float, default=0.35, help="share of programs calling builtins with hostile "
                                                                  "arguments or nesting past the limits")
    parser.add_argument("--corpus", action="append", default=[], help="more folders of .tdf files to mutate")
    parser.add_argument("--out", default="fuzz-failures", help="folder for failing programs and tracebacks")
    parser.add_argument("--no-minimize", action="store_true")
    args = parser.parse_args(argv)

    corpus = seed_sources([ROOT / "examples", *args.corpus])
    started = time.monotonic()
    pool = Pool(args.workers, args.timeout)
    outcomes: Counter = Counter()
    failures: dict[str, dict] = {}        # one (the first) per signature
    failure_counts: Counter = Counter()
    sources: dict[int, tuple[str, str]] = {}
    cli_runs = 0
    try:
        jobs = []
        for n, origin, src in programs(args.count, args.seed, corpus, args.generated, args.hostile):
            sources[n] = (origin, src)
            jobs.append((n, src))
        for (n, src), result in pool.map(jobs):
            outcomes[result["outcome"]] += 1
            if result["outcome"] == "FAILURE":
                failure_counts[result["signature"]] += 1
                failures.setdefault(result["signature"], {"n": n, "origin": sources[n][0], "source": src, **result})
            done = sum(outcomes.values())
            if done % 1000 == 0:
                print(f"  {done} programs, {time.monotonic() - started:.0f} s, "
                      f"{sum(failure_counts.values())} failures", file=sys.stderr, flush=True)
        if args.cli_every:
            from hostile import cli_invocation
            rng = random.Random(args.seed)
            for n in range(0, args.count, args.cli_every):
                # the program as it is, then under hostile options, environment values and encodings
                argv, env, raw = cli_invocation(rng, sources[n][1], CLI_LIMITS)
                for result in (check_cli(sources[n][1]), check_cli(sources[n][1], args=argv, env=env, raw=raw)):
                    cli_runs += 1
                    outcomes[result["outcome"]] += 1
                    if result["outcome"] == "FAILURE":
                        failure_counts[result["signature"]] += 1
                        failures.setdefault(result["signature"], {"n": n, "origin": sources[n][0],
                                                                  "source": sources[n][1], **result})
        out = Path(args.out)
        if failures:
            out.mkdir(parents=True, exist_ok=True)
        for i, (signature, f) in enumerate(sorted(failures.items())):
            if not args.no_minimize and not signature.startswith("cli"):
                f["minimal"] = minimize(f["source"], signature, pool.run_one)
                f["minimal_traceback"] = pool.run_one(f["minimal"]).get("traceback", "")
            stem = out / f"failure-{i:03d}"
            stem.with_suffix(".tdf").write_text(f["source"], encoding="utf-8")
            if "minimal" in f:
                (out / f"failure-{i:03d}.min.tdf").write_text(f["minimal"], encoding="utf-8")
            stem.with_suffix(".txt").write_text(
                f"{signature}\nprogram #{f['n']} (from {f['origin']}), {failure_counts[signature]} like it\n\n"
                f"{f['traceback']}\n" + (f"\nminimal program:\n{f['minimal']}\n\n{f['minimal_traceback']}\n"
                                         if "minimal" in f else ""), encoding="utf-8")
    finally:
        pool.close()

    elapsed = time.monotonic() - started
    print(f"fuzz: {args.count} programs (seed {args.seed}), {cli_runs} runs of the CLI, "
          f"{elapsed:.1f} s, {args.workers} worker(s), timeout {args.timeout:g} s per program")
    print("outcomes:")
    for outcome, n in sorted(outcomes.items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"  {outcome:<14} {n}")
    if failures:
        print(f"{sum(failure_counts.values())} failures, {len(failures)} distinct (saved under {args.out}/):")
        for i, (signature, f) in enumerate(sorted(failures.items())):
            print(f"  failure-{i:03d}: {signature} ({failure_counts[signature]}x)")
            shown = f.get("minimal", f["source"])
            for line in shown.strip("\n").split("\n")[:12]:
                print(f"      | {line}")
        return 1
    print("no failures")
    return 0


if __name__ == "__main__":
    sys.exit(main())
