"""Syntax highlighting: the Pygments lexer `tdf` (an entry point) and the TextMate grammar for VS Code."""
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
VSCODE = ROOT / "editors" / "vscode"
pygments = pytest.importorskip("pygments")

SAMPLE = """\
var(trainable=False) step = 0.0
var = 3
tape t(persistent=True):
    watch x
    y = x * x
stop_recording t:
    reset t
expect g ~= [1.0, 2.0], "close"
expect_error TapeError:
    again = t.gradient(y, x)
tape.gradient = 1
"""


def test_the_lexer_is_found_by_name_and_by_file_name():
    from pygments.lexers import get_lexer_by_name, get_lexer_for_filename
    from tapecli.tools.pygments_lexer import TdfLexer
    assert isinstance(get_lexer_by_name("tdf"), TdfLexer) and isinstance(get_lexer_for_filename("m.tdf"), TdfLexer)


def test_soft_keywords_start_statements_and_approx_is_one_operator():
    from pygments.token import Keyword, Name, Operator
    from tapecli.tools.pygments_lexer import TdfLexer
    tokens = list(TdfLexer().get_tokens(SAMPLE))
    keywords = [v for t, v in tokens if t is Keyword]
    assert keywords == ["var", "tape", "watch", "stop_recording", "reset", "expect", "expect_error"]
    assert (Operator, "~=") in tokens
    assert (Name, "var") in tokens and (Name, "tape") in tokens         # `var = 3`, `tape.gradient = 1`


def test_the_lexer_module_imports_only_pygments():
    code = ("import sys, tapecli.tools.pygments_lexer\n"
            "print(sorted(m for m in sys.modules if m.startswith(('numpy', 'tapecli.api', 'tapecli.interpreter'))))")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "[]"


def test_the_textmate_grammar_matches_the_lexer_and_the_vscode_extension_names_it():
    from tapecli.tools.pygments_lexer import STATEMENT
    grammar = json.loads((VSCODE / "syntaxes" / "tdf.tmLanguage.json").read_text())
    assert grammar["scopeName"] == "source.tdf"
    assert grammar["repository"]["statement"]["match"] == STATEMENT      # one definition of a statement's start
    statement = re.compile(STATEMENT, re.MULTILINE)
    assert [m.group(2) for m in statement.finditer(SAMPLE)] == \
        ["var", "tape", "watch", "stop_recording", "reset", "expect", "expect_error"]
    assert re.fullmatch(grammar["repository"]["approx"]["match"], "~=")
    package = json.loads((VSCODE / "package.json").read_text())
    (language,) = package["contributes"]["languages"]
    (entry,) = package["contributes"]["grammars"]
    assert language["extensions"] == [".tdf"] and entry["scopeName"] == "source.tdf"
    assert (VSCODE / entry["path"]).is_file() and (VSCODE / language["configuration"]).is_file()
    json.loads((VSCODE / language["configuration"]).read_text())
