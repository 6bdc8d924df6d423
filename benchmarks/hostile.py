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
    from tapecli.interpreter.registry import BUILTINS, load_deferred
    load_deferred()                   # and the families imported on first use
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


# Sizes around the limits: --max-elements (the fuzzer's 100,000, the default 1e8), int64, and absurd ones.
SIZES = ["-1", "0", "1", "99999", "100001", "30000000", "1000000000", "9223372036854775807", "10 ** 18"]
# Strings and lists grown by Python's methods and formatting, each from a size: refused (LimitError with a line)
# before anything is built, or built when small.
GROWTH = ["'%*d' % ({n}, 1)", "'%.*f' % ({n}, 1.5)", "'%*c' % ({n}, 120421)", "'%-{n}s|' % 'a'",
          "f'{{1:\U0001d465>{n}}}'", "f'{{2.5:.{n}f}}'", "'{{:>{n}}}'.format(1)", "'{{0:*^{n}}}'.format('ab')",
          "'\U0001d465' * {n}", "[1.0, 'a'] * {n}", "('a' * {k}).replace('', 'b' * {k})",
          "('ab' * {k}).replace('a', '\U0001d465' * {k})", "''.join(['ab' * {k}] * {k})", "('a ' * {k}).split()",
          "('a,' * {k}).split(',', {n})", "('a\\n' * {k}).splitlines()", "list('a' * {k})", "sorted('ba' * {k})",
          "[c for c in 'a' * {k}]", "('\u00df' * {k}).upper()", "('ab' * {k}) + ('\U0001d465' * {k})",
          "print('a' * {k}, 'b' * {k})", "str(['a' * {k}] * {k})"]


def growth_program(rng: random.Random) -> str:
    """Strings and lists grown through string methods and formatting, once or in a loop, in a Python program."""
    lines = ["import tensorflow as tf", "s = 'ab'", "l = ['a']"]
    for i in range(rng.randint(1, 3)):
        expr = rng.choice(GROWTH).format(n=rng.choice(SIZES), k=rng.choice(["1", "10", "1000", "5000", "400000"]))
        lines.append(f"q{i} = {expr}")
    if rng.random() < 0.4:
        grow = rng.choice(["s = s + s", "s = f'{s}{s}'", "s = s.replace('a', 'aa')", "s = '-'.join([s, s])",
                           "l.extend(l)", "l = l + l", "l = l * 2", "s = '%s%s' % (s, s)", "s = s * 2"])
        lines += [f"for i in range({rng.choice([10, 30, 64])}):", f"    {grow}"]
    return "\n".join(lines) + "\n"


# Self-containing and deep lists and dicts, and what a program does with them.
CYCLES = ["l = []\nl.append(l)", "l = [1.0]\nl.append(l)\nl.append([l, l])", "d = {{}}\nd['k'] = d\nl = [d]",
          "a = []\nb = [a]\na.append(b)\nl = [a, b]", "d = {{'x': []}}\nd['x'].append(d)\nl = d['x']",
          "l = [1.0]\nfor i in range({n}):\n    l = [l]", "d = {{}}\nfor i in range({n}):\n    d = {{'k': d}}\nl = [d]"]
USES = ["print(l)", "q = str(l)", "q = f'{l}'", "q = '%s' % l", "q = '{}'.format(l)", "q = repr(l)", "q = len(l)",
        "assert len(l) == 0, l", "q = l == l", "q = l[0] == l", "q = l * 2", "q = l + l", "q = list(l)", "q = sorted(l)",
        "q = l.count(l)", "q = l.index(l[0])", "q = l in l", "q = [v for v in l]", "q = tf.constant(l)",
        "q = len(str(l))", ""]


def cyclic_program(rng: random.Random) -> str:
    """A list or dict that contains itself (or each other), or nests thousands deep, then printed, formatted,
    compared, copied or left bound for the JSON document."""
    cycle = rng.choice(CYCLES).format(n=rng.choice([10, 250, 300, 5000, 20000]))
    uses = rng.sample(USES, rng.randint(1, 3))
    return "\n".join(["import tensorflow as tf", cycle, *uses]) + "\n"


# Work the library does on the program's behalf: tf.data pipelines (endless ones, huge batches) drawn by loops,
# builtins and comprehensions; Keras' fit/evaluate/predict over many epochs or rows; NumPy calls in a TensorFlow
# program whose results are huge. Each ends at the limits (a LimitError at its line), or runs when small.
DATASETS = ["tf.data.Dataset.from_tensor_slices([1.0, 2.0]).repeat()", "tf.data.Dataset.range({n})",
            "tf.data.Dataset.range({n}).batch({b})", "tf.data.Dataset.from_tensors([1.0]).repeat({n})",
            "tf.data.Dataset.range({n}).repeat().skip({n})", "tf.data.Dataset.range(3).repeat().filter(lambda v: v > 5)",
            "tf.data.Dataset.zip((tf.data.Dataset.range({n}), tf.data.Dataset.range(3).repeat()))",
            "tf.data.Dataset.range({n}).map(lambda v: v * 2).batch({b}, drop_remainder=True)",
            "tf.data.Dataset.range({n}).enumerate().take({n})", "tf.data.Dataset.range({n}).batch({b}).repeat()"]
CONSUMERS = ["l = list(ds)", "l = sorted(ds)", "d = dict(zip(ds, ds))", "l = [v for v in ds]", "l = tuple(ds)",
             "n = ds.cardinality()", "for v in ds:\n    pass", "it = iter(ds)\nq = next(it)", "s = sum(ds)",
             "l = list(ds.as_numpy_iterator())", "l = list(enumerate(ds))", "m = max(ds)", "l = [*ds]"]
KERAS = ["h = m.fit(tf.ones([{r}, 2]), tf.ones([{r}, 1]), epochs={n}, batch_size={b}, verbose=0)",
         "q = m.evaluate(tf.ones([{r}, 2]), tf.ones([{r}, 1]), batch_size={b}, verbose=0)",
         "p = m.predict(tf.ones([{r}, 2]), batch_size={b}, verbose=0)",
         "a = keras.metrics.AUC(num_thresholds={n})", "a = keras.metrics.SensitivityAtSpecificity(0.5, num_thresholds={n})"]
NUMPY = ["np.full(({n}, {n}), 1.0)", "np.repeat(np.arange(3, dtype='int8'), {n})", "np.full(2, 1, dtype='V{n}')",
         "np.random.choice({n}, 3, replace=False)", "np.random.default_rng(0).choice({n}, 3, replace=False)",
         "np.arange(0.0, 1.0, 1.0 / ({n}))", "np.arange(10).astype('U{n}')", "tf.zeros([{n}]).numpy().tolist()",
         "np.random.default_rng(0).normal(size={n})", "np.random.randn({n})", "np.outer(np.arange({n}), np.arange({n}))",
         "np.concatenate([np.arange({n}), np.arange({n})])", "np.meshgrid(np.arange({n}), np.arange({n}))",
         "np.tile(np.arange(3), {n})", "tf.ones([3]).numpy().astype('V{n}')"]
BATCHES = ["1", "3", "0", "-1", "1000000000", "200000000"]


def limits_program(rng: random.Random) -> str:
    """tf.data pipelines and their consumers, Keras' training loops, or NumPy calls, sized around the limits."""
    lines = ["import tensorflow as tf", "import numpy as np", "import keras"]
    kind = rng.randint(0, 2)
    for i in range(rng.randint(1, 2)):
        n, b = rng.choice(SIZES), rng.choice(BATCHES)
        if kind == 0:
            lines += [f"ds = {rng.choice(DATASETS).format(n=n, b=b)}", rng.choice(CONSUMERS)]
        elif kind == 1:
            if i == 0:
                lines += ["m = keras.Sequential([keras.layers.Dense(1)])", "m.compile(optimizer='sgd', loss='mse')"]
            lines.append(rng.choice(KERAS).format(r=rng.choice(["0", "8", "1000", "100001"]), n=n,
                                                  b=rng.choice(BATCHES[:4] + ["None"])))
        else:
            lines.append(f"q{i} = {rng.choice(NUMPY).format(n=n)}")
    return "\n".join(lines) + "\n"


def long_program(rng: random.Random) -> str:
    """One long line: a chain of thousands of operators, postfixes or items, in TDF or in Python."""
    # Past MAX_CHAIN (2,500) an operator chain is a SyntaxError at once; what a program runs stays short, as the
    # fuzzer runs each program a dozen times within its --timeout (grad, jacobian, hessian, explain, check), and
    # deeper postfix chains are tests/reliability/test_hostile.py's.
    n = rng.choice([500, 2501, 5000, 20000])
    head = "import tensorflow as tf\n" if rng.random() < 0.5 else ""
    kind = rng.randint(0, 5)
    if kind == 0:
        op = rng.choice([" + 1.0", " * 1.0", " - x", " / 1.0", " ** 1.0", " and 1.0", " < 2.0"])
        body = "q = 1.0" + op * (min(n, 2000) if op in (" and 1.0", " < 2.0") else n)    # and, <: flat, never refused
    elif kind == 1:
        body = "q = x" + rng.choice([".T", "[0:1]", "[...]", ".numpy()"]) * min(n, 2000)
    elif kind == 2:
        body = "q = [" + ", ".join(["1.0"] * min(n, 2000)) + "]"
    elif kind == 3:
        body = "q = 'a'" + " 'a'" * min(n, 2000)
    elif kind == 4:
        body = "q = " + "f(" * min(n, 300) + "x" + ")" * min(n, 300)
    else:
        body = "q = x" + " if True else x" * min(n, 2000)
    return head + "x = tf.Variable([1.0])\ndef f(a):\n    return a\n" * bool(head) + \
        ("var x = [1.0]\ndef f(a):\n    return a\n" if not head else "") + body + "\n"


def run_commands(source: str, options) -> None:
    """The other commands on a program that ran: the implicit jacobian and hessian of its first float
    value w.r.t. each of its first two vars, explain of each request, and check's finite differences. A TdfError or
    UsageError is a fine answer; anything else propagates (the fuzzer counts it as a failure)."""

    from tapecli import api
    from tapecli.errors import TdfError, UsageError
    from tapecli.frontend.ast import VarDecl, walk
    from tapecli.frontend.parser import parse
    from tapecli.tools.check import fd_check
    from tapecli.tools.sweep import hessians
    try:                # (a program of Python alone, which ran on CPython, is TDF's error here: a fine answer)
        program = parse(source)                  # once: every run below runs it again
        result = api.run_program(program, "fuzz.tdf", options)
    except (TdfError, UsageError):
        return
    declared = [n.name for n in walk(program) if isinstance(n, VarDecl)]
    targets = [k for k, v in result.scope.vars.items() if k not in declared and hasattr(v, "dtype")][:1]
    for target in targets:
        for wrt in declared[:2]:
            for request in ("gradient", "jacobian", "hessian"):
                implicit = options.replace(of=target, wrt=[wrt], request="gradient" if request == "hessian" else request)
                try:
                    ran = api.run_program(program, "fuzz.tdf", implicit)
                    if request == "hessian":
                        hessians(ran, implicit)
                except (TdfError, UsageError):
                    pass
            try:
                api.explain(source, "fuzz.tdf", options.replace(of=target, wrt=[wrt]))
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


# Output files onto special files: ``{dir}`` is the run's own temporary folder, where special_files made them.
# Each must be refused or written through (a symlink), never replaced; a FIFO must never be opened (it would hang).
OUTPUTS = [["check", "--junit", "{dir}/fifo.xml"], ["check", "--junit", "{dir}/link.xml"],
           ["check", "--junit", "{dir}/folder"], ["check", "--junit", "{dir}/missing/x.xml"],
           ["check", "--junit", "{dir}/socket.xml"], ["plot", "--y", "y", "-o", "{dir}/fifo.png"],
           ["plot", "--y", "y", "-o", "{dir}/folder"], ["plot", "--y", "y", "-o", "{dir}/" + "n" * 300 + ".png"]]


def special_files(folder) -> dict[str, str]:
    """A FIFO, a symlink to it, a folder and a socket in ``folder``; returns what each is (file_kinds)."""
    import os
    import socket
    os.mkfifo(f"{folder}/fifo.xml")
    os.mkfifo(f"{folder}/fifo.png")
    os.symlink(f"{folder}/fifo.xml", f"{folder}/link.xml")
    os.mkdir(f"{folder}/folder")
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(f"{folder}/socket.xml")
    return file_kinds(folder)


def file_kinds(folder) -> dict[str, str]:
    import os
    import stat
    kinds = {}
    for name in sorted(os.listdir(folder)):
        mode = os.lstat(f"{folder}/{name}").st_mode
        kinds[name] = next((k for k in ("S_ISFIFO", "S_ISLNK", "S_ISDIR", "S_ISSOCK", "S_ISREG")
                            if getattr(stat, k)(mode)), "other")
    return kinds


def cli_invocation(rng: random.Random, source: str, limits: list[str] = ()) -> tuple[list[str], dict[str, str], bytes]:
    """A command line (arguments before the file), environment and file bytes with one to three hostile
    parts: bad option values, bad environment values, an odd encoding. ``limits`` (options such as
    --max-steps) go to every command but lint, before the hostile options. One in five writes an output
    file onto a special file (OUTPUTS)."""
    args = list(rng.choice(OUTPUTS if rng.random() < 0.2 else COMMANDS))
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
