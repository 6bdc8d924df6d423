"""Hostile inputs for the fuzzer (benchmarks/fuzz.py): every builtin called with bad arguments, in TDF
and in TensorFlow-style Python (through ``tf.``); nesting near and past the limits; the other commands
(grad, jacobian, hessian, explain, check) run in process on each program; and command lines with bad
option values, bad environment values and odd encodings (BOM, CRLF, not UTF-8, UTF-16, NUL).

A builtin call draws its arguments from values a hostile user would try: negative, zero, huge,
inf and nan, empty and enormous shapes, wrong types, strings, None, nested lists; by position
and by the builtin's own keyword names. The program around the call binds the usual names
(x, y, w, b, L, f) so that the hostile value meets real tensors too.
"""
from __future__ import annotations

import inspect
import random

# Numbers, shapes and tensors (drawn most often: they get past the type checks to the kernels) ...
NUMERIC = ["-1", "0", "1", "2", "-0.0", "1e400", "-1e400", "1e400 - 1e400", "1e-320", "2147483648", "-2147483649",
           "9223372036854775807", "4611686018427387904", "0.5", "[]", "[0]", "[0, 0]", "[-1]", "[-1, 2]",
           "[100000, 100000]", "[3, 0, 2]", "[1.0, 2.0]", "[[1.0, 2.0], [3.0, 4.0]]", "x", "y", "w", "b",
           "zeros([0])", "ones([2, 0])", "zeros([1, 1, 1, 1, 1])", "[1e400, -1e400]", "[[1, 2], [3, 4]]"]
# ... and everything else a program can write.
OTHER = ["True", "None", '""', '"relu"', '"nope"', "[[]]", "[1, [2]]", "[None]", "L", "f", "int32", "float64",
         "bool", "range(0)", "range(3)", "{}", '{"a": 1.0}', "(1.0, 2.0)"]

PREAMBLE = ["var x = 3.0", "var y = [1.0, 2.0]", "var w = [[1.0, 2.0], [3.0, 4.0]]", "var b = 0.5",
            "L = Dense(2, seed=1)", "def f(a):", "    return a * a"]


def _builtins():
    from tapecli import library  # noqa: F401 (registers every builtin)
    from tapecli.interpreter.registry import BUILTINS
    return BUILTINS


def _keywords(fn) -> list[str]:
    try:
        params = list(fn.signature.parameters.values())
    except AttributeError:
        return []
    if getattr(fn, "wants_interp", False):
        params = params[1:]
    return [p.name for p in params if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)]


def hostile_call(rng: random.Random, name: str | None = None) -> str:
    """``name(args)`` (a random builtin if None) with hostile arguments, by position and keyword."""
    builtins = _builtins()
    name = name or rng.choice(sorted(builtins))
    keywords = _keywords(builtins[name])
    value = lambda: rng.choice(NUMERIC if rng.random() < 0.8 else OTHER)  # noqa: E731
    arity = getattr(builtins[name], "positional", None)
    low, high = arity if arity and rng.random() < 0.8 else (0, 4)
    args = [value() for _ in range(rng.randint(min(low, 5), min(high, 5)))]
    if keywords and rng.random() < 0.5:
        args += [f"{k}={value()}" for k in rng.sample(keywords, rng.randint(1, min(2, len(keywords))))]
    return f"{name}({', '.join(args)})"


def hostile_program(rng: random.Random) -> str:
    """A program that calls builtins with hostile arguments, at top level, on a tape, and in a loop."""
    lines = list(PREAMBLE)
    where = rng.random()
    calls = [hostile_call(rng) for _ in range(rng.randint(1, 3))]
    if where < 0.5:
        lines += [f"q{i} = {call}" for i, call in enumerate(calls)]
    elif where < 0.8:
        lines += ["tape t(persistent=True):", *[f"    q{i} = {call} * x" for i, call in enumerate(calls)],
                  "g = t.gradient(q0, [x, y, w])"]
    else:
        lines += ["for i in range(2):", *[f"    q{i} = {call}" for i, call in enumerate(calls)]]
    return "\n".join(lines) + "\n"


PYTHON_PREAMBLE = ["import tensorflow as tf", "import numpy as np", "import math", "x = tf.Variable(3.0)",
                   "y = tf.Variable([1.0, 2.0])", "w = tf.Variable([[1.0, 2.0], [3.0, 4.0]])", "b = tf.Variable(0.5)",
                   "L = tf.keras.layers.Dense(2)", "def f(a):", "    return a * a"]
# Python's own forms around a hostile value: comprehensions, f-strings, lambda, classes, conversions.
PYTHON_FORMS = ["[v for v in {}]", "f'{{{}:>8}}'", "(lambda t: t * 2)({})", "float({})", "int({})", "len({})",
                "sorted({})", "sum({})", "max({}, 1)", "list(zip({}, [1, 2]))", "str({})", "{}.numpy()", "{}.shape",
                "'{{}}'.format({})", "'%d' % {}", "np.array({})", "math.sqrt({})", "tf.constant({})"]


def python_program(rng: random.Random) -> str:
    """A TensorFlow-style Python program (§11) calling builtins through ``tf.`` with hostile arguments,
    at top level, under a GradientTape, in a class and through Python's own forms."""
    lines = list(PYTHON_PREAMBLE)
    calls = ["tf." + hostile_call(rng) for _ in range(rng.randint(1, 3))]
    calls += [rng.choice(PYTHON_FORMS).format(rng.choice(NUMERIC + OTHER)) for _ in range(rng.randint(0, 2))]
    rng.shuffle(calls)
    where = rng.random()
    if where < 0.4:
        lines += [f"q{i} = {call}" for i, call in enumerate(calls)]
    elif where < 0.75:
        lines += ["with tf.GradientTape(persistent=True) as t:", *[f"    q{i} = {call} * x" for i, call in enumerate(calls)],
                  "g = t.gradient(q0, [x, y, w])"]
    elif where < 0.9:
        lines += ["class M(tf.Module):", "    def __call__(self, v):",
                  *[f"        r{i} = {call}" for i, call in enumerate(calls)], "        return v", "q = M()(x)"]
    else:
        lines += ["for i in range(2):", *[f"    q{i} = {call}" for i, call in enumerate(calls)]]
    return "\n".join(lines) + "\n"


def nested_program(rng: random.Random) -> str:
    """Nesting near and past the limits (200 brackets, 100 blocks) and deep chains of operators."""
    kind = rng.randint(0, 5)
    n = rng.choice([50, 150, 199, 200, 201, 300, 1000])
    if kind == 0:
        return "q = " + "[" * n + "1.0" + "]" * n + "\n"
    if kind == 1:
        return "x = 1.0\nq = " + "(" * n + "x + 1.0" + ")" * n + "\n"
    if kind == 2:
        depth = rng.choice([50, 99, 100, 101, 150])
        return "".join("    " * i + "if True:\n" for i in range(depth)) + "    " * depth + "q = 1.0\n"
    if kind == 3:
        return "q = " + rng.choice(["-", "not ", "+"]) * (n * 3) + "1.0\n"
    if kind == 4:
        return "q = 1.0" + rng.choice([" ** 1.0", " + 1.0", " * 1.0", " if True else 2.0"]) * (n * 3) + "\n"
    return "def f(a):\n    return f(a)\nq = f(" + "[" * min(n, 60) + "1.0" + "]" * min(n, 60) + ")\n"


def run_commands(source: str, options) -> None:
    """The other commands on a program that ran: the implicit jacobian and hessian of its first float
    value w.r.t. each of its first two vars, explain of each request, and check's finite differences. A TdfError or
    UsageError is a fine answer; anything else propagates (the fuzzer counts it as a failure)."""
    from dataclasses import replace

    from tapecli import api
    from tapecli.errors import TdfError, UsageError
    from tapecli.frontend.ast import VarDecl, walk
    from tapecli.frontend.parser import parse
    from tapecli.tools.check import fd_check
    from tapecli.tools.sweep import hessians
    declared = [n.name for n in walk(parse(source)) if isinstance(n, VarDecl)]
    result = api.run_source(source, "fuzz.tdf", options)
    targets = [k for k, v in result.scope.vars.items() if k not in declared and hasattr(v, "dtype")][:1]
    for target in targets:
        for wrt in declared[:2]:
            for request in ("gradient", "jacobian", "hessian"):
                implicit = replace(options, of=target, wrt=[wrt], request="gradient" if request == "hessian" else request)
                try:
                    ran = api.run_source(source, "fuzz.tdf", implicit)
                    if request == "hessian":
                        hessians(ran, implicit)
                except (TdfError, UsageError):
                    pass
            try:
                api.explain(source, "fuzz.tdf", replace(options, of=target, wrt=[wrt]))
            except (TdfError, UsageError):
                pass
    try:
        fd_check(source, "fuzz.tdf", options)
    except (TdfError, UsageError):
        pass


# ------------------------------------------------------------ the command line

# A command, with the options that make it do something on a program binding x and y.
COMMANDS = [["run"], ["grad"], ["grad", "--of", "y", "--wrt", "x"], ["jacobian", "--of", "y", "--wrt", "x"],
            ["hessian", "--of", "y", "--wrt", "x"], ["explain", "--of", "y", "--wrt", "x"], ["check"], ["lint"],
            ["watched"], ["tape"]]
BAD_OPTIONS = [["--max-steps", "0"], ["--max-steps", "-5"], ["--max-steps", "1e3"], ["--max-elements", "abc"],
               ["--max-elements", "0"], ["--max-depth", "99999999999999999999999"], ["--max-depth", "-1"],
               ["--dtype", "int8"], ["--device", "tpu"], ["--set", "x"], ["--set", "=1"], ["--set", "x=[1,"],
               ["--set", "x=1e999"], ["--set", "x=NaN"], ["--set", "x=" + "[" * 1000 + "1" + "]" * 1000],
               ["--set", "x=@"], ["--set", "x=@/nonexistent.npy"], ["--set", "nope=1"], ["--set", "x=[1, 2j]"],
               ["--set", 'x="s"'], ["--set", "x=4294967296"], ["--set", "x=99999999999999999999999"],
               ["--set", 'x={"a": 1}'], ["--set", "x=[[1.0], [1.0, 2.0]]"], ["--rtol", "-1"], ["--rtol", "nan"],
               ["--workers", "0"], ["--workers", "-3"], ["--select", "ZZ999"], ["--unconnected", "maybe"],
               ["--mode", "sideways"], ["--of", ""], ["--wrt", ""], ["--of", "y", "--wrt", ""], ["--nope"],
               ["--json", "--json"], ["--"]]
BAD_ENVIRONMENT = {"TAPECLI_MAX_MEMORY": ["-1", "abc", "1e400", "0", "nan", ""],
                   "TAPECLI_MAX_SECONDS": ["-1", "nan", "abc", "0", "1e400"],
                   "TAPECLI_NUMBA_THRESHOLD": ["abc", "-1", "1e400"], "TAPECLI_FUSION_THRESHOLD": ["abc", "-1"],
                   "TAPECLI_PARSER": ["bogus", ""], "TAPECLI_BACKEND": ["bogus"], "TAPECLI_FUSION": ["maybe"],
                   "TAPECLI_SCHEDULER": ["bogus"], "TAPECLI_SCHEDULER_TIMEOUT": ["abc", "-1"],
                   "TAPECLI_CACHE_DIR": ["/dev/null/x", ""], "COLUMNS": ["-3", "abc", "0"], "NO_COLOR": ["1"],
                   "PYTHONIOENCODING": ["ascii", "latin-1"]}
# Ways a file's bytes can differ from plain UTF-8 with LF line ends.
ENCODINGS = {"bom": lambda b: b"\xef\xbb\xbf" + b, "crlf": lambda b: b.replace(b"\n", b"\r\n"),
             "cr": lambda b: b.replace(b"\n", b"\r"), "latin-1": lambda b: b + b"# \xff\xfe not UTF-8\n",
             "nul": lambda b: b.replace(b"\n", b"\x00\n", 1), "utf-16": lambda b: b.decode("utf-8", "replace").encode("utf-16"),
             "truncated": lambda b: b[: len(b) // 2] + "\u00e9".encode()[:1]}


def cli_invocation(rng: random.Random, source: str, limits: list[str] = ()) -> tuple[list[str], dict[str, str], bytes]:
    """A command line (arguments before the file), environment and file bytes with one to three hostile
    parts: bad option values, bad environment values, an odd encoding. ``limits`` (options such as
    --max-steps) go to every command but lint, before the hostile options."""
    args = list(rng.choice(COMMANDS))
    if args[0] != "lint":
        args += limits
    if rng.random() < 0.7:
        args.append("--json")
    env: dict[str, str] = {}
    raw = source.encode()
    for _ in range(rng.randint(1, 3)):
        part = rng.random()
        if part < 0.5:
            args += rng.choice(BAD_OPTIONS)
        elif part < 0.8:
            name = rng.choice(sorted(BAD_ENVIRONMENT))
            env[name] = rng.choice(BAD_ENVIRONMENT[name])
        else:
            raw = rng.choice(list(ENCODINGS.values()))(raw)
    return args, env, raw
