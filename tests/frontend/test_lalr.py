"""The parser's error path (tapecli/frontend/lalr.py over lalr_tables.py, worded by syntaxerrors.py) against Lark
itself (lark_oracle.py): the shipped tables are the grammar's, every syntax error is the one Lark's failure gives
(message, hint, line, column), and no run imports Lark."""
from __future__ import annotations

import random
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from frontend import lark_oracle
from tapecli.errors import TdfError, TdfSyntaxError
from tapecli.frontend import fastparse

ROOT = Path(__file__).resolve().parents[2]
CORPUS = sorted((ROOT / "examples").glob("*.tdf")) + sorted((ROOT / "benchmarks").glob("*.tdf"))


def test_the_shipped_tables_are_the_grammars():
    assert lark_oracle.TABLES.read_text(encoding="utf-8") == lark_oracle.tables_source(), \
        "grammar/tdf.lark's tables changed: run python tests/frontend/lark_oracle.py"


def test_the_parsers_tokens_are_the_grammars_terminals():
    """tokens.py's keywords, operators and augmented assignments are the grammar's terminals (lalr_tables.py)."""
    from tapecli.frontend import lalr_tables, tokens
    assert tokens.KEYWORDS == set(lalr_tables.KEYWORDS)
    augmented = dict(lalr_tables.TERMINALS)["AUGOP"]
    assert augmented.startswith("(?:") and augmented.endswith(")")
    alternatives = re.split(r"(?<!\\)\|", augmented[3:-1])          # (at the bars not escaped)
    assert tokens._AUGOPS == {alternative.replace("\\", "") for alternative in alternatives}
    for literal in lalr_tables.LITERALS.values():
        if not literal.isidentifier():
            text = {")": "(x)\n", "]": "[x]\n", "}": "{x}\n"}.get(literal, f"x {literal} y\n")
            assert [t.type for t in tokens.tokens(text) if t.value == literal] == [literal], literal


def outcome(parse, text: str):
    """The statements, or the error's class, message, hint, line and column."""
    try:
        return parse(text)
    except TdfError as e:
        return (type(e).__name__, e.message, e.hint, e.line, e.column)


# Ways to break a program: a token or character deleted, inserted or doubled, a line cut or moved
_INSERTS = [" ", "(", ")", "[", "]", "{", "}", ",", ":", ".", "=", "+", "*", "**", "@", "#", "\n", "\n    ", "    ",
            "x", "1", "'", '"', "\t", "\\", "\\\n", "$", "é", "if ", "not ", "in ", "var ", "tape ", "watch ",
            "expect ", "def ", "lambda ", "else", "return ", "for ", "-> ", ";"]


def _mutate(text: str, rnd: random.Random) -> str:
    at = rnd.randrange(max(1, len(text)))
    lines = text.split("\n")
    line = rnd.randrange(len(lines))
    kind = rnd.randrange(6)
    if kind == 0:
        return text[:at] + text[at + 1:]
    if kind == 1:
        return text[:at] + rnd.choice(_INSERTS) + text[at:]
    if kind == 2:                           # a word or operator doubled
        end = at
        while end < len(text) and not text[end].isspace():
            end += 1
        return text[:end] + " " + text[at:end] + text[end:]
    if kind == 3:                           # a line cut short
        lines[line] = lines[line][:rnd.randrange(len(lines[line]) + 1)]
    elif kind == 4:                         # a line moved
        lines.insert(rnd.randrange(len(lines)), lines.pop(line))
    else:                                   # a line deleted
        del lines[line]
    return "\n".join(lines)


def broken_programs(seed: int, count: int) -> list[str]:
    """``count`` programs from the examples, each changed in one to three places."""
    rnd = random.Random(seed)
    out = []
    for _ in range(count):
        text = rnd.choice(CORPUS).read_text(encoding="utf-8")
        for _ in range(rnd.randint(1, 3)):
            text = _mutate(text, rnd)
        out.append(text if text.endswith("\n") else text + "\n")
    return out


@pytest.mark.parametrize("seed", range(8))
def test_every_syntax_error_is_the_one_larks_failure_gives(seed):
    """On 8 x 150 changed programs: the parser's outcome is the oracle's, the AST or the whole error; over 40 of
    each 150 are errors (about 380 in all)."""
    errors = 0
    for text in broken_programs(seed, 150):
        mine, lark = outcome(fastparse.parse, text), outcome(lark_oracle.parse_body, text)
        assert mine == lark, text
        errors += isinstance(mine, tuple)
    assert errors > 40


# The constructs the parser once left to Lark: tabs, backslash continuations, text outside ASCII, the Python
# forms tapecli refuses; and syntax errors of each kind (the lexer's, the indenter's, the parser's).
NO_LARK = ["x = 1 \\\n    + 2\n", "é = 1\nƒ = é * 2\n", "s = 'ü'  # ä\n", "x = (1,\n\t2)\n", "x = 1\n\ty = 2\n",
           "try:\n    pass\nexcept E:\n    pass\n", "x = {1, 2}\n", "y = a << 1\n", "if x > 0\n    y = 1\n",
           "y = (x + 1\n", "x = $\n", "if x:\n    y = 1\n  z = 2\n", "tap t:\n    y = 1\n", "s = f'{x x}'\n"]
RUNNER = textwrap.dedent("""\
    import sys
    sys.modules["lark"] = None          # importing it fails
    from tapecli.errors import TdfError
    from tapecli.frontend.parser import parse
    for text in sys.argv[1:]:
        try:
            parse(text)
            print("ok")
        except TdfError as e:
            print(e.message, e.hint, e.line, e.column, sep="|")
    print(sorted(m for m in sys.modules if m.startswith("lark")))
    """)


def test_no_run_imports_lark():
    proc = subprocess.run([sys.executable, "-c", RUNNER, *NO_LARK], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    *lines, imported = proc.stdout.splitlines()
    assert imported == "['lark']"           # (only the name this test blocked)
    expected = []
    for text in NO_LARK:
        result = outcome(lark_oracle.parse_body, text)
        expected.append("ok" if isinstance(result, list) else "|".join(str(part) for part in result[1:]))
    assert lines == expected


def test_the_error_of_a_large_program_is_found_past_its_statements():
    body = "".join(f"v{i} = {i} * 2.0 + {i}\n" for i in range(10_000))
    with pytest.raises(TdfSyntaxError) as e:
        fastparse.parse(body + "y = (x + 1\n")
    assert (e.value.message, e.value.line, e.value.column) == ("this ( is never closed", 10_001, 5)
    with pytest.raises(TdfSyntaxError) as e:     # a refused form early, a syntax error late: the syntax error
        fastparse.parse("s = {1}\n" + body + "y = x x\n")
    assert (e.value.message, e.value.line) == ("unexpected 'x'", 10_002)
