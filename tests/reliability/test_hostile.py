"""Hostile input, bounded for CI: every builtin called with bad arguments, nesting near and past the
limits, the other commands on programs that ran, and bad options, environment variables and file
encodings through the real command line. The oracle: a program error or a usage error, never another
exception, an exit code 4 or a traceback.

Longer runs: ``python benchmarks/fuzz.py --count 20000 --hostile 0.35`` (benchmarks/hostile.py).
"""
from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path

import pytest

from conftest import cli

ROOT = Path(__file__).resolve().parents[2]


def _load(name):
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


hostile = _load("hostile")
fuzz = _load("fuzz")


def _assert_handled(source: str, commands: bool = False) -> dict:
    result = fuzz.check_program(source, commands=commands)
    assert result["outcome"] != "FAILURE", f"{result['signature']}\n{source}\n{result['traceback']}"
    return result


def _builtin_names():
    return sorted(hostile._builtins())


@pytest.mark.parametrize("chunk", range(8))
def test_every_builtin_with_hostile_arguments(chunk):
    names = _builtin_names()[chunk::8]
    rng = random.Random(chunk)
    for name in names:
        for _ in range(4):
            call = hostile.hostile_call(rng, name)
            _assert_handled("\n".join(hostile.PREAMBLE) + f"\nq = {call}\n")


def test_the_hostile_generator_reaches_every_builtin():
    rng = random.Random(0)
    called = {hostile.hostile_call(rng).split("(", 1)[0] for _ in range(40 * len(_builtin_names()))}
    assert called == set(_builtin_names())


@pytest.mark.parametrize("seed", range(6))
def test_hostile_programs_and_the_other_commands(seed):
    rng = random.Random(100 + seed)
    for _ in range(25):
        _assert_handled(hostile.hostile_program(rng), commands=True)


@pytest.mark.parametrize("seed", range(4))
def test_hostile_python_programs(seed):
    """TensorFlow-style Python: every builtin through tf. with hostile arguments, under a GradientTape,
    in a tf.Module and through Python's own forms (f-strings, comprehensions, float(), ...)."""
    rng = random.Random(200 + seed)
    for _ in range(15):
        _assert_handled(hostile.python_program(rng), commands=True)


@pytest.mark.parametrize("seed", range(4))
def test_nesting_near_and_past_the_limits(seed):
    rng = random.Random(seed)
    for _ in range(10):
        _assert_handled(hostile.nested_program(rng))


@pytest.mark.parametrize("seed", range(3))
def test_growth_through_string_methods_and_formatting(seed):
    """Strings and lists grown by methods and formatting (hostile.growth_program): built when small,
    a LimitError with a line when not, never an allocation past the cap."""
    rng = random.Random(400 + seed)
    outcomes = {_assert_handled(hostile.growth_program(rng))["outcome"] for _ in range(12)}
    assert "LimitError" in outcomes, outcomes


def test_work_on_the_programs_behalf_ends_at_the_limits():
    """tf.data pipelines and their consumers, Keras' training loops and NumPy calls sized around the limits
    (hostile.limits_program): each runs when small, or ends at a limit (a LimitError with a line), within the
    fuzzer's time limit."""
    rng = random.Random(700)
    outcomes = {_assert_handled(hostile.limits_program(rng))["outcome"] for _ in range(10)}
    assert "LimitError" in outcomes, outcomes


@pytest.mark.parametrize("seed", range(3))
def test_cyclic_and_deep_data(seed):
    rng = random.Random(500 + seed)
    for _ in range(10):
        _assert_handled(hostile.cyclic_program(rng))


@pytest.mark.parametrize("seed", range(2))
def test_long_one_line_expressions(seed):
    rng = random.Random(600 + seed)
    for _ in range(4):
        _assert_handled(hostile.long_program(rng))


@pytest.mark.parametrize("source, outcome", [
    ("s = '%*d' % (600000000, 1)\n", "LimitError"), ("s = f'{1:\U0001d465>45000000}'\n", "LimitError"),
    ("s = ('a' * 30000).replace('', 'b' * 20000)\n", "LimitError"), ("s = ''.join(['ab' * 50000] * 3)\n", "LimitError"),
    ("s = ('a ' * 60000).split()\n", "LimitError"), ("s = sorted('ba' * 60000)\n", "LimitError"),
    ("s = '%5d|%-3s|%c' % (3, 'ab', 65)\nt = ('a,b' * 10).split(',')\n", "ok"),
    ("a = []\nb = [a]\na.append(b)\nq = a == b\nprint(a)\n", None),
    ("const k = [[0 -0.2], [-0.3, 0.4]]\n", "ValueError"),
    ("q1 = str(['a' * 50000] * 50000)\n", "LimitError"),
])
def test_round_three_classes_in_process(source, outcome):
    """The fuzzer's in-process oracle on one case of each class (its small --max-elements, 100,000, is what
    refuses the strings here); None: any handled outcome."""
    result = _assert_handled(source)
    assert outcome is None or result["outcome"] == outcome, result


@pytest.mark.parametrize("args", hostile.OUTPUTS)
def test_output_files_onto_special_files_leave_them_as_they_were(args):
    """--junit and plot -o onto a FIFO (never opened: it would hang), a symlink to it, a folder, a socket,
    a missing folder or a too-long name: refused or written through, the special files unchanged."""
    source = "const x = linspace(0.0, 1.0, 50)\ny = sin(x)\nexpect 1.0 == 1.0\n"
    result = fuzz.check_cli(source, args=[*args, "--json"], timeout=60)
    assert result["outcome"] == "cli-ok", result.get("traceback")


# --------------------------------------------------------------- the command line

PROGRAM = "var x = 2.0\ntape t:\n    y = x * x\ng = t.gradient(y, x)\nexpect g == 4.0\n"


@pytest.mark.parametrize("args", [
    ["run", "--max-steps", "0"], ["run", "--max-steps", "-5"], ["run", "--max-elements", "abc"],
    ["run", "--max-depth", "99999999999999999999999"], ["run", "--dtype", "int8"], ["run", "--device", "tpu"],
    ["run", "--set", "x"], ["run", "--set", "=1"], ["run", "--set", "x=[1,"], ["run", "--set", "x=1e999"],
    ["run", "--set", "x=@"], ["run", "--set", "x=@/nonexistent.npy"], ["run", "--set", "nope=1"],
    ["grad", "--of", "y"], ["grad", "--wrt", "x"], ["grad", "--of", "nope", "--wrt", "x"], ["grad", "--of", "y", "--wrt", "t"],
    ["jacobian", "--of", "g", "--wrt", "x", "--mode", "sideways"], ["hessian"], ["hessian", "--of", "y", "--wrt", "nope"],
    ["explain", "--of", "y"], ["explain", "--of", "", "--wrt", "x"], ["check", "--rtol", "-1"],
    ["check", "--workers", "0"], ["lint", "--select", "ZZ999"], ["run", "--unconnected", "maybe"],
])
def test_bad_options_are_usage_errors(tmp_path, args):
    path = tmp_path / "p.tdf"
    path.write_text(PROGRAM)
    r = cli(*args, path)
    assert r.code in (0, 1, 2, 3), (r.code, r.stdout, r.stderr)
    assert "internal error" not in r.stderr + r.stdout


@pytest.mark.parametrize("name, value", [
    ("TAPECLI_MAX_MEMORY", "-1"), ("TAPECLI_MAX_MEMORY", "abc"), ("TAPECLI_MAX_MEMORY", "1e400"),
    ("TAPECLI_MAX_SECONDS", "-1"), ("TAPECLI_MAX_SECONDS", "nan"), ("TAPECLI_PARSER", "bogus"),
    ("TAPECLI_CACHE_DIR", "/dev/null/x"), ("NO_COLOR", "1"), ("COLUMNS", "-3"), ("COLUMNS", "abc"),
])
def test_bad_environment_values_never_crash(tmp_path, name, value):
    path = tmp_path / "p.tdf"
    path.write_text(PROGRAM)
    r = cli("run", path, env={name: value})
    assert r.code in (0, 2, 3), (r.code, r.stdout, r.stderr)
    assert "internal error" not in r.stderr + r.stdout


@pytest.mark.parametrize("seed", range(3))
def test_random_commands_under_hostile_options_environments_and_encodings(seed):
    """The fuzzer's command lines (hostile.cli_invocation): a random command with bad option values,
    bad environment values or an odd encoding exits 0 to 3, without a traceback or an internal error."""
    rng = random.Random(300 + seed)
    for _ in range(3):
        args, env, raw = hostile.cli_invocation(rng, PROGRAM, fuzz.CLI_LIMITS)
        result = fuzz.check_cli(PROGRAM, args=args, env=env, raw=raw)
        assert result["outcome"] == "cli-ok", result["traceback"]


@pytest.mark.parametrize("raw", [
    b"\xef\xbb\xbf" + PROGRAM.encode(),                       # a byte order mark
    PROGRAM.replace("\n", "\r\n").encode(),                    # CRLF line ends
    PROGRAM.encode() + b"# \xff\xfe not UTF-8\n",              # not UTF-8
    PROGRAM.encode().replace(b"2.0", b"2.0\x00"),              # a NUL byte
    b"\xef\xbb\xbf" + PROGRAM.replace("\n", "\r\n").encode(),  # both
    "x = \"h\u00e9llo\u2028\"\n".encode(),                     # a line separator inside a string
])
def test_encodings_and_line_ends(tmp_path, raw):
    path = tmp_path / "p.tdf"
    path.write_bytes(raw)
    for command in ("run", "lint", "check"):
        r = cli(command, "--json", path)
        valid = (0, 1, 2, 3, 5) if command == "check" else (0, 1, 2, 3)     # check: 5, no expectations found
        assert r.code in valid, (command, r.code, r.stdout, r.stderr)
        assert "internal error" not in r.stderr + r.stdout


# Round 3: cyclic and deep data, long one-line expressions (each once crashed the process or ended in exit 4).
@pytest.mark.parametrize("source, code, expected", [
    ("l = []\nl.append(l)\nprint(l)\n", 0, '"output": ["[[...]]"]'),
    ("d = {}\nd['k'] = d\nprint(d)\ns = str(d)\n", 0, '"d": {"k": "{...}"}'),
    ("l = []\nl.append(l)\n", 0, '"l": ["[...]"]'),
    ("l = [1.0]\nfor i in range(20000):\n    l = [l]\ns = str(l)\n", 3, "maximum recursion depth exceeded"),  # CPython's
    ("l = [1.0]\nfor i in range(5000):\n    l = [l]\n", 3, "cannot be written as JSON"),
    ("y = 1.0" + " + 1.0" * 20000 + "\n", 3, "chains more than 2,500 operators"),
    ("import tensorflow as tf\nq = 1.0" + " * 2.0" * 30000 + "\n", 3, "chains more than 2,500 operators"),
    # a postfix chain the fast parser leaves to Lark (the Ellipsis): once a C stack overflow in Lark's transformer
    ("import tensorflow as tf\nx = tf.Variable([1.0])\nq = x" + "[...]" * 20000 + "\n", 3, "nests too deeply"),
    ("import tensorflow as tf\nq = 1.0" + " ** 1.0" * 20000 + "\n", 3, "chains more than 2,500"),     # once exit 4
])
@pytest.mark.parametrize("caller_limit", [None, 100_000])
def test_cyclic_deep_and_long_values_end_as_python_or_as_a_clear_error(tmp_path, source, code, expected,
                                                                        caller_limit):
    """Whatever recursion limit the calling process has set (tapecli.run in a program of the user's), the
    program meets tapecli's limits: once a raised limit let CPython's parser take a 20,000-operator chain."""
    program = tmp_path / "p.py"
    program.write_text(source)
    limit = sys.getrecursionlimit()
    if caller_limit:
        sys.setrecursionlimit(caller_limit)
    try:
        r = cli("run", "--json", program)
    finally:
        sys.setrecursionlimit(limit)
    assert r.code == code and expected in r.stdout, (r.code, r.stdout[:300], r.stderr[-300:])


def test_a_sum_python_still_compiles_is_taken(tmp_path):
    program = tmp_path / "p.py"
    program.write_text("y = 1.0" + " + 1.0" * 999 + "\n")
    r = cli("run", "--json", program)
    assert r.code == 0 and r.json["values"]["y"] == 1000.0


def test_a_builtin_the_library_calls_with_arguments_it_does_not_take_is_a_type_error_naming_it():
    # tf.while_loop calls its cond, here the builtin bool, with the loop's two values: no call of the program's
    # names it, so the error names the builtin itself (it was an internal AttributeError)
    proc = cli("run", "-", input="var x = 3.0\nq = while_loop(bool, bool, [1.0, 2.0])\n")
    assert proc.code == 3, proc.stderr
    assert "TypeError: bool(): too many positional arguments" in proc.stderr and "Traceback" not in proc.stderr
