"""Start-up: what a small run imports, and the fast paths that keep it small give what the slow ones give.

* the CLI parses common command lines without Typer (lazytyper.py): its result must be what
  Typer would pass the command, and every other command line must reach Typer;
* fastparse.py parses every program: its AST must be Lark's (tests/frontend/lark_oracle.py), positions
  included, and its syntax error the one Lark's failure gives;
* a table on a stdout that is not a terminal is laid out without Rich: the same text as Rich's.

No timings here: benchmarks/run.py measures them.
"""
from __future__ import annotations

import contextlib
import functools
import inspect
import io
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from conftest import cli, drawn, indent_markers

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.tdf")) + sorted((ROOT / "benchmarks").glob("*.tdf"))
TINY = "var x = 3.0\ntape t:\n    y = x ** 2\ndy_dx = t.gradient(y, x)\n"

# Runs the CLI's entry point, then reports on stderr which heavy modules were imported.
RUNNER = textwrap.dedent("""\
    import sys
    from tapecli.cli.app import main
    sys.argv = ["tapecli", *sys.argv[1:]]
    try:
        main()
        code = 0
    except SystemExit as e:
        code = e.code or 0
    heavy = sorted({m.split(".")[0] for m in sys.modules} & {"typer", "click", "rich", "numba", "lark", "pydantic", "ml_dtypes"})
    own = sorted(m for m in sys.modules if m.startswith("tapecli."))
    sys.stderr.write("\\ntapecli modules: %s" % ",".join(own))
    stdlib = {"difflib", "json", "string", "dataclasses", "copy", "signal", "threading"} & set(sys.modules)
    sys.stderr.write("\\nstandard library: %s" % ",".join(sorted(stdlib)))
    sys.stderr.write("\\nimported: %s\\n" % ",".join(heavy))
    sys.exit(code)
    """)


def imported_by(*args, tmp_path, env=None):
    program = tmp_path / "tiny.tdf"
    program.write_text(TINY)
    full_env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE")}
    full_env.update({"COLUMNS": "200", **(env or {})})
    proc = subprocess.run([sys.executable, "-c", RUNNER, *args, str(program)], capture_output=True, text=True,
                          env=full_env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    line = proc.stderr.strip().splitlines()[-1]
    return proc, set(filter(None, line.partition(":")[2].strip().split(",")))


@pytest.mark.parametrize("args", [("grad", "--json"), ("grad",), ("run", "--json"), ("run",), ("jacobian", "--json")])
def test_a_small_run_imports_no_heavy_module(args, tmp_path):
    proc, heavy = imported_by(*args, tmp_path=tmp_path)
    assert heavy == set(), heavy            # no Typer (nor Click, Pydantic), no Rich, no numba, no Lark, no ml_dtypes


@pytest.mark.parametrize("args", [("grad",), ("run",)])
def test_a_small_run_without_json_or_hints_imports_neither(args, tmp_path):
    proc, _ = imported_by(*args, tmp_path=tmp_path)
    line = next(line for line in proc.stderr.splitlines() if line.startswith("standard library: "))
    # json and difflib are imported where a document or hint needs them, string where an einsum's tangent does;
    # dataclasses and copy by no module a small run imports (api.py's classes are plain ones), signal and threading
    # where a signal comes or a time limit is set (the start-up takes _signal's and _thread's functions)
    assert line == "standard library: ", line


# Every part of tapecli a small grad imports, by room (docs/performance.md, "Start-up"). A module added to the start-up
# fails the test below: import it where it is first used (a function's import, tapecli/lazymodule.py, ops.DEFERRED,
# a deferred builtin family), or list it here if every small run needs it.
SMALL_RUN = {
    "tapecli", "tapecli.version", "tapecli.errors", "tapecli.environment", "tapecli.recursion", "tapecli.lazymodule",
    *(f"tapecli.frontend{m}" for m in ("", ".ast", ".fastparse", ".forms", ".parser",
                                       ".softkeywords", ".spellings", ".structure", ".tokens")),
    *(f"tapecli.runtime{m}" for m in ("", ".clock", ".context", ".limits", ".numerics", ".numpy_gate", ".observers",
                                      ".provenance", ".spelling", ".tape", ".values")),
    # the NumPy kernels, with TensorFlow's float32 math that the elementwise ops name (Eigen's pow and exp on
    # packets, tf_pow, load on first use)
    *(f"tapecli.kernels{m}" for m in ("", ".backends", ".interface", ".numpy_kernels", ".tf_float32")),
    # the elementwise ops, the builtins of the families deferred (builtin_families), and the remapper, where the
    # activations name their fused oneDNN ops (their kernels load on first use)
    *(f"tapecli.ops{m}" for m in ("", ".builtin_families", ".core", ".elementwise", ".promotion", ".remapper",
                                  ".scalar")),
    "tapecli.autodiff", "tapecli.autodiff.backward", "tapecli.autodiff.gradients",
    "tapecli.fusion", "tapecli.fusion.plan",
    *(f"tapecli.interpreter{m}" for m in ("", ".compiled", ".conversions", ".core", ".expressions", ".jsonvalue",
                                          ".objects", ".pyforms", ".registry", ".statements")),
    # the builtins' core and the index of the families deferred (families)
    *(f"tapecli.library{m}" for m in ("", ".core", ".families", ".replay_kinds")),
    "tapecli.api",
    *(f"tapecli.cli{m}" for m in ("", ".app", ".collector", ".lazytyper", ".process", ".render")),
}


# grad logs the ops (to say why a gradient is None), run does not: its backward pass is a plain one, which may run as
# a plan (autodiff/replay.py); run's table gives each value's type (documents.py's type_json)
RUN_ALONE = {"tapecli.autodiff.replay", "tapecli.documents"}
# --json writes a document (documents.py); a table of gradients needs none
JSON_ALONE = {"tapecli.documents"}


@pytest.mark.parametrize("args", [("grad",), ("grad", "--json"), ("run",), ("run", "--json"), ("jacobian", "--json")])
def test_a_small_run_imports_the_listed_parts_of_tapecli_alone(args, tmp_path):
    proc, _ = imported_by(*args, tmp_path=tmp_path)
    line = next(line for line in proc.stderr.splitlines() if line.startswith("tapecli modules: "))
    own = set(line.partition(": ")[2].split(",")) | {"tapecli"}
    alone = (RUN_ALONE if args[0] == "run" else set()) | (JSON_ALONE if "--json" in args else set())
    assert sorted(own - SMALL_RUN - alone) == []
    if args == ("grad",):
        assert sorted(SMALL_RUN - own) == []        # (the list is what a small grad imports, no more)


# Runs each program given in a new process, then says whether Keras-lite was imported, and the error if any.
KERAS_RUNNER = textwrap.dedent("""\
    import sys, tapecli
    from tapecli.errors import TdfError
    try:
        tapecli.run(sys.argv[1])
        error = ""
    except TdfError as e:
        error = f"{e} ({e.hint})"
    print("tapecli.library.keras_names" in sys.modules, error, sep="|")
    """)


@pytest.mark.parametrize("program, imported, error", [
    (TINY, False, ""),
    ("import tensorflow as tf\nd = tf.keras.layers.Dense(2)\n", True, ""),
    ("import tensorflow as tf\nm = tf.keras\nd = m.layers.add([tf.ones(2), tf.ones(2)])\n", True, ""),
    ("from tensorflow.keras import layers\nd = layers.Dense(2)\n", True, ""),
    ("a = Dense(3)\nloss = mse([1.0], [2.0])\n", True, ""),
    # a name no loaded family has: every family is imported, and the hint sees all their names
    ("x = Dens(3)\n", True, "name Dens is not defined (did you mean Dense?)"),
    # a name TensorFlow's module lacks: its error and TensorFlow's closest name, Keras's names not needed
    ("import tensorflow as tf\nx = tf.Dens(3)\n", False,
     "module 'tensorflow' has no attribute 'Dens' (did you mean tf.keras.layers.Dense?)"),
])
def test_keras_lite_is_imported_for_the_programs_that_may_use_it(program, imported, error):
    proc = subprocess.run([sys.executable, "-c", KERAS_RUNNER, program], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"{imported}|{error}"


def test_builtins_positional_ranges_read_from_code_are_inspects():
    """The registry reads each builtin's positional range from its code object (no inspect.signature at import):
    the same ranges inspect gives, and signatures made on demand."""
    import inspect
    from tapecli import library  # noqa: F401  (registers the builtins)
    from tapecli.interpreter.registry import BUILTINS, load_deferred, signature
    load_deferred()

    def by_inspect(f):
        params = list(inspect.signature(f).parameters.values())
        if any(p.kind is not p.POSITIONAL_OR_KEYWORD for p in params):
            return None
        return sum(p.default is p.empty for p in params), len(params)
    functions = [f for f in BUILTINS.values() if getattr(f, "is_builtin", False)]
    assert len(functions) > 100
    assert [f.positional for f in functions] == [by_inspect(f) for f in functions]
    assert any(f.positional is None for f in functions) and any(f.positional for f in functions)
    assert signature(functions[0]) == inspect.signature(functions[0]) and signature(functions[0]) is signature(functions[0])


def test_keras_constructors_check_their_arguments_on_first_use(tmp_path):
    program = tmp_path / "k.tdf"
    program.write_text("a = Dense(3)\nb = Dense(3, bogus=1)\n")
    for _ in range(2):
        r = cli("run", program)
        assert r.code == 3 and "Dense(): got an unexpected keyword argument 'bogus'" in r.stderr and "usage: Dense(" in r.stderr


def test_a_table_on_a_terminal_still_uses_rich(tmp_path):
    _, heavy = imported_by("grad", tmp_path=tmp_path, env={"FORCE_COLOR": "1"})
    assert "rich" in heavy and "typer" not in heavy


def test_a_syntax_error_uses_the_lark_parser_and_still_not_lark_itself(tmp_path):
    bad = tmp_path / "bad.tdf"
    bad.write_text("if x = 1:\n    y = 1\n")
    for _ in range(2):                      # the first run generates the parser into the cache
        r = cli("run", bad)
        assert r.code == 3 and "'=' binds a name; compare with '=='" in r.stderr


# ------------------------------------------------------------------- the CLI

PLAIN = [
    ["grad", "{tiny}"], ["grad", "--json", "{tiny}"], ["grad", "{tiny}", "--json"], ["grad", "--json", "--", "{tiny}"],
    ["run", "-q", "--no-color", "{tiny}"], ["run", "--json", "--set", "x=2.0", "{tiny}"],
    ["run", "--json", "--set", "x=2.0", "--set=x=5", "{tiny}"], ["run", "--json", "--dtype", "float64", "{tiny}"],
    ["run", "--json", "--max-steps=100", "--max-depth", "7", "{tiny}"], ["grad", "--json", "--of", "y", "{tiny}"],
    ["grad", "--json", "--of=y", "--wrt", "x", "--unconnected", "zero", "{tiny}"], ["watched", "--json", "{tiny}"],
    ["jacobian", "--json", "{tiny}"], ["explain", "--of", "y", "--wrt", "x", "{tiny}"],
    ["check", "--json", "{tiny}", "{tiny}"], ["lint", "{tiny}"], ["tape", "--json", "{tiny}"],
    ["bench", "--repeat", "2", "--warmup", "0", "{tiny}"], ["grad", "--full", "{tiny}"],
    ["plot", "--json", "--x", "x", "--y", "y", "--y=dy_dx", "-o", "p.svg", "--logy", "{tiny}"],
]
TYPER_ONLY = [   # help, errors, the version
    ["--help"], [], ["grad", "--help"], ["--version"], ["grad"], ["grad", "--bogus", "{tiny}"],
    ["grad", "--max-steps", "many", "{tiny}"], ["grad", "--json=1", "{tiny}"], ["grad", "--max-steps"],
    ["grad", "{tiny}", "{tiny}"], ["nosuchcommand"], ["explain", "{tiny}"], ["check"], ["grad", "-qx", "{tiny}"],
]


@pytest.mark.parametrize("argv", PLAIN + TYPER_ONLY, ids=lambda a: " ".join(a) or "(none)")
def test_the_fast_command_line_answers_as_typer_does(argv, tmp_path):
    tiny = tmp_path / "tiny.tdf"
    tiny.write_text(TINY)
    args = [a.format(tiny=tiny) for a in argv]
    fast = cli(*args, cwd=tmp_path)
    slow = cli(*args, cwd=tmp_path, env={"TAPECLI_NO_FAST_CLI": "1"})
    if "bench" in args:                     # timings and memory differ from run to run
        fast.stdout, slow.stdout = (re.sub(r"[0-9.]+", "N", out) for out in (fast.stdout, slow.stdout))
    assert (fast.code, fast.stdout, fast.stderr) == (slow.code, slow.stdout, slow.stderr)


def _typer_kwargs(argv):
    """The keyword arguments Typer passes the command for ``argv`` (the command is not run)."""
    from tapecli.cli import app as c
    from tapecli.cli import lazytyper
    calls = []
    made = lazytyper._for_typer

    def recording(fn):
        copy = made(fn)

        def record(**kwargs):
            calls.append((fn, kwargs))
        functools.update_wrapper(record, copy)
        del record.__wrapped__
        record.__signature__ = inspect.signature(copy)
        return record
    lazytyper._for_typer = recording
    c.app._real = None
    try:
        c.app.real()(args=argv, prog_name="tapecli", standalone_mode=False)
    finally:
        lazytyper._for_typer = made
        c.app._real = None
    return calls[-1]


@pytest.mark.parametrize("argv", PLAIN, ids=lambda a: " ".join(a))
def test_the_fast_parse_gives_typers_arguments(argv):
    from tapecli.cli import app as c
    from tapecli.cli import lazytyper
    args = [a.format(tiny="t.tdf") for a in argv]
    plan = lazytyper.fast_parse(c.app, args)
    assert plan is not None, "a plain command line should not need Typer"
    assert plan == _typer_kwargs(args)


COMMANDS = ["run", "grad", "jacobian", "hessian", "plot", "watched", "explain", "check", "diff", "lint", "bench", "tape",
            "warmup"]


def test_the_commands_declared_apart_are_their_modules_in_the_command_lines_order():
    """app.py names the commands a small run never takes (commands_in) and their module declares them: imported,
    it gives each in its place (Typer's --help lists them in this order), and none other."""
    script = ("from tapecli.cli.app import app\nprint(sorted(app._apart), ' '.join(app.commands()))\n"
              "app._load(list(app._apart))\nprint(app._apart, ' '.join(app.commands()), None in app.commands().values())")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    apart, everything = proc.stdout.splitlines()
    assert apart == f"{sorted(['plot', 'explain', 'check', 'diff', 'lint', 'bench', 'warmup'])} {' '.join(COMMANDS)}"
    assert everything == f"{{}} {' '.join(COMMANDS)} False", proc.stderr


@pytest.mark.parametrize("argv", [["--help"], [], ["grad", "--help"], ["--version"], ["grad"], ["grad", "--bogus", "f"],
                                  ["grad", "--max-steps", "x", "f"], ["grad", "--json=1", "f"], ["grad", "f", "g"],
                                  ["nope", "f"], ["explain", "f"], ["check"], ["grad", "-qx", "f"], ["grad", "--of"]])
def test_anything_else_goes_to_typer(argv):
    from tapecli.cli import app as c
    from tapecli.cli import lazytyper
    assert lazytyper.fast_parse(c.app, argv) is None


# ------------------------------------------------------------------- the parser

def _both(text: str):
    """(fastparse's outcome, the oracle's): the statements, or the error's class, message, hint, line and column."""
    from frontend.lark_oracle import parse_body
    from frontend.test_lalr import outcome
    from tapecli.frontend import fastparse
    return outcome(fastparse.parse, text), outcome(parse_body, text)


def assert_same_parse(text: str):
    text = text if text.endswith("\n") else text + "\n"
    fast, ref = _both(text)
    assert fast == ref, f"the parsers differ on:\n{text}"


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_fastparse_gives_larks_ast_on_the_examples(path):
    text = path.read_text()
    text = text if text.endswith("\n") else text + "\n"
    fast, ref = _both(text)
    assert isinstance(fast, list) and fast == ref


TRICKY = [
    "x = (a + b) * c\n", "y = -x ** -2 ** 3\n", "z = not a and b or not c\n", "e = a is not None\n",
    "r = x[1:, ::2, :3, 4][0]\n", "d = {1: [1, 2,], 'k': (3,)}\n", "t = (1, 2, 3,)\n", "t = ((1))\n",
    "f(a, b=2,)\nf()\n", "expect g ~= [1.0, 2.0], \"msg\"\n", "a, b, = f()\n",
    "def f(a, b=1, ):\n    return a, b,\n", "def f(a, *args, b=2, **kw):\n    return g(*args, **kw)\n",
    "def f(a: int, /, b, *, c: float = 1.0, **kw: int) -> int:\n    pass\n", "f = lambda *a, k=1, **kw: a\n",
    "def f(*, a):\n    pass\n", "h(1, *xs, k=2, **{'a': 1})\n", "@custom_gradient\n@other\ndef g(x):\n    return x\n",
    "if a:\n    pass\nelif b:\n    pass\nelse:\n    if c:\n        x = 1\n", "while x < 3:\n    x += 1\n",
    "for i, j in pairs:\n    continue\n", "tape t(persistent=True, watch_accessed_variables=False):\n    y = 1\n",
    "tape t():\n    y = 1\n", "stop_recording t:\n    y = 1\n", "expect_error TapeError:\n    g = 1\n",
    "var(trainable=False) s: float64 = 0.0\n", "const c: int32 = 1e3 + .5 + 3. + 1E-2\n", "watch x, y, in t\n",
    "reset t\n", "return\n", "print('a\\tb', \"c\\\"d\")\n", "x = 1  # comment\n\n   # indented comment\ny = 2\n",
    "f(a,\n  b,  # inside\n\tc)\n", "  x = 1\ny = 2\n", "x = [\n]\n", "x = a.b.c(d)[e].f\n", "x=1;y=2\n",
    "if x:\n    y = 1\n  z = 2\n", "x = 1\n\ty = 2\n", "x = 1 \\\n + 2\n", "var in = 1\n", "x = é\n", "x = 1\r\ny = 2\r\n",
    "f(a=1, 2)\n", "x = (1 +\n", "def f(x):\n    return x\nf(1)", "if x:\n\n    # c\n\n    y = 1\n\n",
    # Python's forms, and the soft keywords where they are names
    "var = 1\nvar(x)\nvar.y = 2\nwatch = 3\nexpect(1)\ntape.watch(x)\nreset[0] = 1\n",
    "var(trainable=False) s = 1\nvar(3)\n", "if x: watch y\nelse: expect z\n", "x = {a: b for a, b in c}\n",
    "y = [i * j for i in a if i for j in b]\nz = (v for v in w)\nf(v for v in w)\n", "q = lambda a, b=2: a if b else -a\n",
    "s = f'{x!r:>{w}.{p}} {{}} {y=}'\nt = rb'\\d'\nu = '''a\nb'''\n", "a, *b = c\n", "x: int\ny: int = 2\n",
    "with a as b, c:\n    pass\n", "class A(B, metaclass=M):\n    pass\n", "from . import x\n", "import a.b as c, d\n",
    "from a.b import (c as d, e,)\n", "x = 0x_1f + 1_0.5e1_0 + 3j\n", "x = a if b else c if d else e\n",
    "del a[0], b.c\n", "assert x, 'm'\n", "def f(*a, **k):\n    pass\n", "x = y @ z; x @= y\n", "x = ...\n",
    "x = {1, 2}\n", "x = not a in b\n", "x = a not in b is not c\n", "print(*a, sep='')\n", "x = ()\n",
    "@a.b(c)\n@d\ndef f(x) -> int:\n    return x\n", "try:\n    pass\nexcept E as e:\n    pass\n",
    # & | ^ ~ (tensors' logical and bitwise operators), Python's precedence; shifts stay refused
    "x = a & b | c ^ d & ~e | f\n", "y = ~x ** 2 + ~-a * ~b\n", "z = (a | b) & c == d ^ e\n", "w = a | b + c & d - e\n",
    "v = not a | b and c & d\n", "m = a & b << c\n", "n = a >> b | c\n", "k = ~~a\n",
    # the forms tapecli refuses, each refused once read (what is inside first), and where ~ and await begin
    "from a import b,\n", "from . import *\n", "from import x\n", "x = yield\n", "x += yield 1\n", "y = (yield)\n",
    "while x:\n    pass\nelse:\n    y = {1}\n", "for a in b:\n    pass\nelse:\n    pass\n",
    "class A(metaclass=M):\n    x = {1}\n", "async def f():\n    pass\n", "async for a in b:\n    pass\n",
    "x = [a async for a in b]\n", "x = await y ** 2\n", "x = {*a, b}\n", "x = {a for a in b}\n",
    "x = {a: b async for a in c}\n", "global a, b\n", "nonlocal a\n", "raise\n", "raise a from b\n",
    "try:\n    pass\nfinally:\n    pass\n", "try:\n    x = {1}\nexcept E as e:\n    pass\nelse:\n    pass\n",
    "x = a << b + c\n", "x = a & b >> c | d\n", "x &= m\nx |= m\nx ^= m\n", "x <<= 1\n", "x >>= 1\n",
    "x = a + b << c << {d}\n", "return ~x\n", "x[1:~a]\n",
    "(a), b += 1\n", "(a), b: int\n", "(*a) += 1\n", "yield from\n", "def f():\n    x = yield from y\n",
    "x = {a: 1, **b}\n", "x = {**b, a: 1}\n", "f(x for x in y, z)\n", "@d\nclass A(B):\n    pass\n",
    "x = f'{a b}'\n", "x = f'{a; b}'\n", "x = f'{yield}'\n", "x = {a: b, c}\n", "del ~a\n", "x = -await a\n",
    # the rare tokens: continuation lines, names and text outside ASCII, tabs
    "x = 1 \\\n    + 2\n", "é = 1\nƒ(é)  # ü\n", "x = (\n\t1)\n", "if x:\n\tpass\n", "x = 1 \\ y\n", "x = {1} + $\n",
    "x = (1 +\n\n", "if x:\n    y = (1\n", "x = 1\n  \\\n",
]



@pytest.mark.parametrize("text", TRICKY)
def test_fastparse_gives_larks_ast_or_gives_up(text):
    assert_same_parse(text)


_MUTATIONS = [
    lambda s, r, i: s[:i] + s[i + 1:],                                   # delete a character
    lambda s, r, i: s[:i] + r.choice(" ()[]{},:.=+-*/@#\n    xy01'\"") + s[i:],  # insert one
    lambda s, r, i: s[:i] + r.choice(["if ", "not ", "in ", "**", "\n    ", ", ", ":"]) + s[i:],
    lambda s, r, i: "\n".join(r.sample(s.split("\n"), len(s.split("\n")))),  # shuffle lines
]


@settings(max_examples=drawn(60), deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(st.sampled_from(EXAMPLES), st.randoms(use_true_random=False), st.integers(1, 4))
def test_fastparse_on_mutated_examples(path, rnd, count):
    text = path.read_text()
    for _ in range(count):
        text = rnd.choice(_MUTATIONS)(text, rnd, rnd.randrange(max(1, len(text))))
    assert_same_parse(text)


@functools.lru_cache(maxsize=1)
def _grammar_programs():
    """Programs drawn from grammar/tdf.lark itself (hypothesis.extra.lark)."""
    from hypothesis.extra.lark import from_lark
    from lark import Lark
    from tapecli.frontend.grammar import grammar_text
    from tapecli.frontend.softkeywords import SOFT_KEYWORDS
    grammar = Lark(grammar_text(), parser="lalr")
    explicit = {"_NEWLINE": st.sampled_from(["\x00", "  # c\x00", "\x00\x00"]), "_INDENT": st.just("\x01"),
                "_DEDENT": st.just("\x02"), "COMMENT": st.just(" "),
                "NAME": st.sampled_from([" x ", " y ", " t ", " f ", " in_ ", " nota "]),
                "NUMBER": st.sampled_from([" 1 ", " 2.0 ", " .5 ", " 3. ", " 1E-2 "]),
                "STRING": st.sampled_from([' "s" ', " 'z' ", r' "a\"b" ', ' f"{x}" ', " r'\\d' "])}
    explicit.update({f"_{word.upper()}": st.just(f" {word} ") for word in SOFT_KEYWORDS})
    for terminal in grammar.terminals:
        if terminal.pattern.type == "str" and terminal.pattern.value.isidentifier():
            explicit[terminal.name] = st.just(f" {terminal.pattern.value} ")
    return from_lark(grammar, start="start", explicit=explicit).map(indent_markers)


@settings(max_examples=drawn(60), deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(st.data())
def test_fastparse_on_programs_from_the_grammar(data):
    text = data.draw(_grammar_programs())
    if data.draw(st.booleans()):
        text = re.sub(r"(?<=[^\s\w]) +| +(?=[^\s\w])", "", text)     # and without the spaces
    assert_same_parse(text)


def test_the_parsers_can_be_compared_on_every_run(tmp_path):
    program = tmp_path / "p.tdf"
    program.write_text(TINY)
    r = cli("grad", "--json", program, env={"TAPECLI_PARSER": "compare"})
    assert r.code == 0 and r.json["gradients"][0]["value"] == 6.0


def test_ast_nodes_list_their_fields_in_constructor_order():
    from tapecli.frontend import ast
    for cls in vars(ast).values():
        if isinstance(cls, type) and issubclass(cls, ast.Node) and cls is not ast.Node:
            params = [p for p in inspect.signature(cls).parameters.values() if p.kind is p.POSITIONAL_OR_KEYWORD]
            assert [p.name for p in params] == list(cls._fields), cls
            node = cls(*[None] * len(params), line=3, end=9)
            assert (node.line, node.column, node.end) == (3, 0, 9)
            assert [getattr(cls(*range(len(params))), f) for f in cls._fields] == list(range(len(params)))
            assert node == cls(*[None] * len(params), line=3, end=9) and node != cls(*[None] * len(params))


# ------------------------------------------------------------------- the table

@contextlib.contextmanager
def plain_stdout(width):
    """A stdout that is not a terminal, a console ``width`` wide, no colour forced."""
    saved_env = {k: os.environ.pop(k, None) for k in ("COLUMNS", "FORCE_COLOR", "TTY_COMPATIBLE")}
    saved_out = sys.stdout
    os.environ["COLUMNS"] = str(width)
    sys.stdout = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    try:
        yield
    finally:
        sys.stdout = saved_out
        for k, v in saved_env.items():
            os.environ.pop(k, None)
            if v is not None:
                os.environ[k] = v


def _rich_table(title, columns, rows, width):
    import io
    from rich.console import Console
    from rich.table import Table
    buf = io.StringIO()
    table = Table(title=title, title_justify="left", show_lines=False)
    for col in columns:
        table.add_column(col, overflow="fold")
    for row in rows:
        table.add_row(*row)
    Console(file=buf, width=width, highlight=False, soft_wrap=True, force_terminal=False).print(table)
    return buf.getvalue()


_CELL = st.text(alphabet="abcxyz0123456789 .,-+=()[]{}'\"_*/<>#@:", max_size=25)


@settings(max_examples=300, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
@given(st.integers(1, 6).flatmap(lambda n: st.tuples(
    _CELL, st.lists(_CELL, min_size=n, max_size=n), st.lists(st.lists(_CELL, min_size=n, max_size=n), max_size=4))),
    st.sampled_from([20, 40, 80, 132]))
def test_the_plain_table_is_richs_table(table, width):
    from tapecli.cli.render import plain_table
    title, columns, rows = table
    with plain_stdout(width):
        plain = plain_table(title, columns, rows)
    if plain is None:
        return
    assert plain == _rich_table(title, columns, rows, width)


def test_the_plain_table_is_used_for_the_usual_tables():
    from tapecli.cli.render import plain_table
    rows = [["dy_dx", "4", "t", "y", "x", "6.0", "float32", "[]"], ["g[\"w\"]", "9", "t", "loss", "w",
                                                                      "[[1.0, 2.5]]", "float32", "[1, 2]"],
            ["grads[1]", "9", "t", "loss", "b", "None  (b is not watched by tape t)", "", ""]]
    columns = ["name", "line", "tape", "target", "source", "value", "dtype", "shape"]
    with plain_stdout(120):
        plain = plain_table("gradients of a.tdf", columns, rows)
    assert plain == _rich_table("gradients of a.tdf", columns, rows, 120)


def test_programs_run_with_young_collections_as_usual_and_full_ones_rare(tmp_path, monkeypatch):
    """main() slows the collector down for the imports; the program runs with young objects collected at the
    usual pace, the start-up heap frozen and full collections rare; after main, all is as it was."""
    import gc
    from tapecli import api
    from tapecli.cli import app as c, collector
    program = tmp_path / "p.tdf"
    program.write_text(TINY)
    seen = []
    real = api.run_source
    monkeypatch.setattr(api, "run_source", lambda *a, **k: seen.append((gc.get_threshold(), gc.get_freeze_count()))
                        or real(*a, **k))
    monkeypatch.setattr(sys, "argv", ["tapecli", "run", "--json", str(program)])
    before = gc.get_threshold()
    assert gc.get_freeze_count() == 0
    with contextlib.redirect_stdout(io.StringIO()), pytest.raises(SystemExit):
        c.main()
    ((during, frozen),) = seen
    assert during[:2] == before[:2] and during[2] >= collector.RARE_FULL_COLLECTIONS and frozen > 0
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


# A middle-generation collection made due (as Python's start-up may leave one), then the console script: every
# collection before the run freezes the start-up heap is written on stderr.
_COLLECTION_PROBE = """\
import gc, sys
for _ in range(gc.get_threshold()[1] + 1):
    gc.collect(0)
frozen, freeze = [], gc.freeze
gc.freeze = lambda: frozen.append(1) or freeze()        # (after the run, a first run's code cache store collects)
gc.callbacks.append(lambda phase, info: phase == "start" and not frozen
                    and sys.stderr.write("collected generation %d\\n" % info["generation"]))
from tapecli.cli import main
sys.argv = ["tapecli", "grad", sys.argv[1]]
main()
"""


def test_the_console_script_starts_without_collections(tmp_path):
    """The console script slows the collector down before it imports the command line: no collection (one of
    every object made so far, where a middle-generation one is due) before the run freezes the start-up heap."""
    program = tmp_path / "p.tdf"
    program.write_text(TINY)
    probe = tmp_path / "probe.py"
    probe.write_text(_COLLECTION_PROBE)
    r = subprocess.run([sys.executable, str(probe), str(program)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "dy_dx" in r.stdout, r.stderr
    assert "collected" not in r.stderr, r.stderr


_TEARDOWN_PROBE = """\
import atexit, sys
{preload}
atexit.register(lambda: sys.stderr.write("teardown ran\\n"))
from tapecli.cli import main
sys.argv = ["tapecli", "check", sys.argv[1]]
main()
"""


_FINISHED_THREAD = "import threading; threading.Thread(target=lambda: None).start()"
_LIVE_THREAD = "import threading, time; threading.Thread(target=time.sleep, args=(3,)).start()"   # alive all run long


@pytest.mark.parametrize("preload, teardown", [("", False), ("import multiprocessing", True), (_FINISHED_THREAD, False),
                                               (_LIVE_THREAD, True)])
def test_a_small_run_ends_without_teardown_unless_something_needs_it(tmp_path, preload, teardown):
    """The console script skips Python's shutdown (a tenth of a small run) only when no module that owns
    processes, threads or caches was loaded and no other thread is alive; the exit code is kept."""
    program = tmp_path / "p.tdf"
    program.write_text("var x = 3.0\ntape t:\n    y = x * x\ng = t.gradient(y, x)\nexpect g == 5.0\n")
    probe = tmp_path / "probe.py"
    probe.write_text(_TEARDOWN_PROBE.format(preload=preload))
    r = subprocess.run([sys.executable, str(probe), str(program)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 1, r.stderr                 # the failed expectation's exit code, either way
    assert "1 failed" in r.stdout
    assert ("teardown ran" in r.stderr) == teardown
