"""Fuzzing, bounded for CI: generated, raw, grammar-derived and mutated programs must finish or fail
with a TdfError that has a line (or a UsageError), never another exception, never hang.

Longer runs: ``python benchmarks/fuzz.py --count 10000 --seed 1``. The generators, mutations and
the checks live there; these tests import them.

KNOWN_BUGS lists the bugs that fuzzing found and that are not fixed yet, each with the exception it
raises, a function on its traceback and a minimal program. The fuzz tests tolerate them; each
minimal program runs in ``test_known_bug`` as a strict xfail. When a bug is fixed, its xfail passes
(and so fails, being strict): delete its entry.
"""
from __future__ import annotations

import functools
import importlib.util
import json
import random
import signal
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest
from conftest import drawn, indent_markers
from hypothesis import HealthCheck, given, settings, strategies as st

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("tdf_fuzz", ROOT / "benchmarks" / "fuzz.py")
fuzz = importlib.util.module_from_spec(_spec)
sys.modules["tdf_fuzz"] = fuzz
_spec.loader.exec_module(fuzz)

EXAMPLES = sorted((ROOT / "examples").glob("*.tdf"))
TIMEOUT_S = 5

class Bug:
    """A known bug: the exception it raises, a tapecli function on its traceback (names survive edits
    better than line numbers), and a minimal program."""

    def __init__(self, what, exception, function, program, phase="run"):
        self.what, self.exception, self.function, self.program, self.phase = what, exception, function, program, phase

    def matches(self, result: dict) -> bool:
        return (result.get("exception") == self.exception and self.function in result.get("frames", ())
                and result.get("phase", "run") == self.phase)


KNOWN_BUGS = [
]


def known_bug(result: dict) -> Bug | None:
    return next((bug for bug in KNOWN_BUGS if bug.matches(result)), None)


class Hang(BaseException):
    """Raised by the alarm: not an Exception, so check_program does not catch it."""


@contextmanager
def time_bound(seconds: float):
    def alarm(signum, frame):
        raise Hang(f"no result after {seconds} s")
    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def check(source: str) -> dict:
    try:
        with time_bound(TIMEOUT_S):
            return fuzz.check_program(source)
    except Hang as e:
        return {"outcome": "FAILURE", "signature": "hang", "traceback": str(e)}


def assert_no_new_failure(source: str, result: dict) -> None:
    if result["outcome"] == "FAILURE" and known_bug(result) is None:
        pytest.fail(f"{result['signature']}\n--- program:\n{source}\n--- traceback:\n{result['traceback']}")


def fuzz_settings(max_examples: int) -> settings:
    """Deterministic in CI (derandomize), no example database on disk, no deadline per example."""
    return settings(max_examples=max_examples, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck))


# ------------------------------------------------------------- generated

class DrawChooser(fuzz.Chooser):
    """The generator's choices as Hypothesis draws, so failing programs shrink."""

    def __init__(self, draw):
        self.draw = draw

    def choice(self, seq):
        return self.draw(st.sampled_from(seq))

    def randint(self, a, b):
        return self.draw(st.integers(a, b))

    def chance(self, p):
        return self.draw(st.integers(0, 99)) < p * 100


@st.composite
def programs(draw):
    return fuzz.generate(DrawChooser(draw))


@fuzz_settings(drawn(120))
@given(programs())
def test_generated_programs(source):
    assert_no_new_failure(source, check(source))


def test_the_generator_makes_programs_that_run():
    """Not only syntax errors: a fair share of generated programs parse, and some run to the end."""
    rng = random.Random(0)
    outcomes = [check(fuzz.generate(rng))["outcome"] for _ in range(100)]
    assert outcomes.count("SyntaxError") < 30
    assert outcomes.count("ok") >= 5


# ---------------------------------------------------------------- raw text

TDF_TEXT = st.text(alphabet=fuzz.ALPHABET + "\t\\&$;?" + "é→", max_size=80)
TOKEN_SOUP = st.lists(st.sampled_from(fuzz.TOKENS + ["x", "t", "1", "2.0", "y = ", "\n", "    "]),
                      max_size=25).map("".join)


@fuzz_settings(drawn(100))
@given(st.one_of(TDF_TEXT, TOKEN_SOUP))
def test_raw_text(source):
    assert_no_new_failure(source, check(source))


# ---------------------------------------------------- from the grammar itself

def _grammar_strategy():
    """hypothesis.extra.lark.from_lark on the TDF grammar. The indenter's _INDENT/_DEDENT/_NEWLINE
    are drawn as markers that ``indent_markers`` turns into lines and indentation; keywords and names get
    spaces around them, since from_lark glues tokens together."""
    from hypothesis.extra.lark import from_lark
    from lark import Lark
    from tapecli.frontend.grammar import grammar_text
    from tapecli.frontend.softkeywords import SOFT_KEYWORDS
    grammar = Lark(grammar_text(), parser="lalr")
    explicit = {"_NEWLINE": st.just("\x00"), "_INDENT": st.just("\x01"), "_DEDENT": st.just("\x02"),
                "COMMENT": st.just(" "), "NAME": st.sampled_from([" x ", " y ", " t ", " f ", " sin ", " w "]),
                "NUMBER": st.sampled_from([" 1 ", " 2.0 ", " 0 ", " 1e30 ", " .5 "]),
                "STRING": st.sampled_from([' "s" ', " 'zero' "])}
    explicit.update({f"_{word.upper()}": st.just(f" {word} ") for word in SOFT_KEYWORDS})
    for terminal in grammar.terminals:
        pattern = terminal.pattern
        if pattern.type == "str" and pattern.value.isidentifier():
            explicit[terminal.name] = st.just(f" {pattern.value} ")
    return from_lark(grammar, start="start", explicit=explicit).map(indent_markers)


@fuzz_settings(drawn(40))
@given(_grammar_strategy())
def test_programs_from_the_grammar(source):
    assert_no_new_failure(source, check(source))


def test_grammar_programs_are_mostly_well_formed():
    from tapecli.errors import TdfSyntaxError
    from tapecli.frontend.parser import parse
    samples = []

    @fuzz_settings(30)
    @given(_grammar_strategy())
    def collect(source):
        samples.append(source)
    collect()
    parsed = 0
    for source in samples:
        try:
            parse(source)
            parsed += 1
        except TdfSyntaxError:
            pass
    assert parsed >= len(samples) // 2, samples[:5]


# --------------------------------------------------------------- mutations

def test_mutations_are_seeded_and_change_the_program():
    source = fuzz.strip_comments(EXAMPLES[0].read_text())
    a = [fuzz.mutate(source, random.Random(7)) for _ in range(3)]
    b = [fuzz.mutate(source, random.Random(7)) for _ in range(3)]
    assert a == b
    rng = random.Random(1)
    assert sum(fuzz.mutate(source, rng) != source for _ in range(50)) >= 45


@pytest.mark.parametrize("mutation", list(dict.fromkeys(fuzz.MUTATIONS)), ids=lambda m: m.__name__)
def test_each_mutation_on_every_example(mutation):
    rng = random.Random(mutation.__name__)
    for path in EXAMPLES:
        source = fuzz.strip_comments(path.read_text(encoding="utf-8"))
        mutated = mutation(source, rng)
        assert_no_new_failure(mutated, check(mutated))


def test_mutated_examples():
    rng = random.Random(20240601)
    corpus = fuzz.seed_sources([ROOT / "examples"])
    outcomes = {}
    count = drawn(200)
    for _ in range(count):
        name, source = rng.choice(corpus)
        mutated = fuzz.mutate(source, rng)
        result = check(mutated)
        assert_no_new_failure(mutated, result)
        outcomes[result["outcome"]] = outcomes.get(result["outcome"], 0) + 1
    assert outcomes.get("ok", 0) >= count // 20, outcomes      # the mutants are not all syntax errors


# ------------------------------------------------------------------ the CLI

@functools.lru_cache(maxsize=1)
def _cli_programs() -> list[str]:
    fixed = [
        "var x = 3.0\ntape t:\n    y = x * x\ng = t.gradient(y, x)\n",        # fine
        "var x = 3.0\ny = (x +\n",                                            # syntax error at the end
        "var x = 3.0\ny = x +",                                               # ... without a final newline
        "tape t:\n",                                                          # a block with no body
        "var x = 3.0\nwhile True:\n    x = x + 1.0\n",                        # --max-steps
        "y = sigmod(2.0)\n",                                                  # name error
        "\t\x00é\n",                                                          # odd characters
    ]
    rng = random.Random(5)
    corpus = fuzz.seed_sources([ROOT / "examples"])
    chosen = []
    while len(chosen) < 6:
        source = fuzz.mutate(rng.choice(corpus)[1], rng) if len(chosen) % 2 else fuzz.generate(rng)
        if check(source)["outcome"] != "FAILURE":     # known library bugs exit 4; they have their own tests
            chosen.append(source)
    return fixed + chosen


@pytest.mark.parametrize("index", range(13))
def test_cli_contract_on_fuzzed_programs(index):
    source = _cli_programs()[index]
    result = fuzz.check_cli(source)
    assert result["outcome"] == "cli-ok", f"{result['signature']}\n--- program:\n{source}\n{result['traceback']}"


def test_cli_syntax_error_at_the_end_names_the_last_line(tmp_path):
    path = tmp_path / "end.tdf"
    path.write_text("var x = 3.0\ntape t:\n    y = x * (x +\n")
    import subprocess
    proc = subprocess.run([sys.executable, "-m", "tapecli", "run", "--json", *fuzz.CLI_LIMITS, str(path)],
                          capture_output=True, text=True, timeout=60)
    doc = json.loads(proc.stdout)
    assert proc.returncode == 3 and doc["error"]["kind"] == "SyntaxError"
    assert doc["error"]["line"] == 3 and "Traceback" not in proc.stderr


# --------------------------------------------------------------- the minimizer

def test_minimize_keeps_the_failure_and_drops_the_rest():
    def fails(source):
        bad = "boom" in source
        return {"outcome": "FAILURE", "signature": "s"} if bad else {"outcome": "ok"}
    source = "a = 1\nif a:\n    b = 2\n    c = boom\nd = 4\ne = 5\n"
    assert fuzz.minimize(source, "s", fails) == "    c = boom\n"


# --------------------------------------------------------------- known bugs

@pytest.mark.parametrize("bug", [pytest.param(bug, id=bug.what.split(":")[0], marks=pytest.mark.xfail(
    strict=True, reason=bug.what)) for bug in KNOWN_BUGS])
def test_known_bug(bug):
    """Each known bug's minimal program must finish or end in a TdfError with a line."""
    result = check(bug.program)
    assert result["outcome"] != "FAILURE", f"{result['signature']}\n{result['traceback']}"


def test_known_bugs_are_recognised():
    """The programs of the known bugs fail the way their entries say (or are fixed: then the strict
    xfail above reports it)."""
    for bug in KNOWN_BUGS:
        result = check(bug.program)
        assert result["outcome"] != "FAILURE" or bug.matches(result), (bug.what, result["signature"])
