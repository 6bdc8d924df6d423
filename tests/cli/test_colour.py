"""Colour on a terminal (cli/colour.py): ANSI styles on an error's kind and carets, `warning:`, `hint:`, check's
PASS/FAIL and lint's codes when the stream is a terminal; none in a pipe, with --no-color, NO_COLOR or TERM=dumb;
FORCE_COLOR forces it. The text is the same with colour as without, but for the SGR sequences."""
from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

import conftest
from conftest import cli
from tapecli.cli import colour

SGR = re.compile(r"\x1b\[[0-9;]*m")
BAD = "var x = 2.0\nconst n = 3\ny = x\ny = sin(y)\nz = x\nx = x * 2.0\nw = x * n\n"
CHECKED = "var x = 2.0\ntape t:\n    y = x * x\ng = t.gradient(y, x)\nexpect g == 4.0\nexpect g == 5.0\n"


def on_a_terminal(*args, env=None) -> tuple[int, str]:
    """Run the CLI with stdout and stderr on one pseudo-terminal: (exit code, what the terminal received)."""
    code, _, text = conftest.on_a_terminal(*args, env={"COLUMNS": "100", **(env or {})})
    return code, text.replace("\r\n", "\n")


def piped(*args, env=None) -> tuple[int, str]:
    full_env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE")}
    full_env.update({"TERM": "xterm", "COLUMNS": "100", **(env or {})})
    proc = subprocess.run([sys.executable, "-m", "tapecli", *map(str, args)], capture_output=True, text=True,
                          env=full_env, timeout=120)
    return proc.returncode, proc.stderr + proc.stdout


@pytest.fixture
def bad(tmp_path):
    path = tmp_path / "bad.tdf"
    path.write_text(BAD)
    return path


def test_an_error_and_its_warning_are_coloured_on_a_terminal(bad):
    code, text = on_a_terminal("run", bad)
    assert code == 3
    assert f"{bad}:6: \x1b[1;35mwarning:\x1b[0m x was a variable" in text
    assert f"{bad}:7:5: \x1b[1;31mTypeError\x1b[0m: mul got tensors" in text
    assert "    7 \x1b[34m|\x1b[0m w = x * n\n      \x1b[34m|\x1b[0m     \x1b[1;31m^^^^^\x1b[0m\n" in text
    assert "\x1b[1;36mhint:\x1b[0m convert n with cast(n, float32)" in text
    _, plain = piped("run", bad)
    assert SGR.sub("", text) == plain          # the same text, but for the styles


@pytest.mark.parametrize("how", [{"env": {"NO_COLOR": "1"}}, {"env": {"TERM": "dumb"}}, {"args": ["--no-color"]}])
def test_no_colour_with_no_color_term_dumb_or_the_option(bad, how):
    code, text = on_a_terminal("run", *how.get("args", ()), bad, env=how.get("env"))
    assert code == 3 and "TypeError: mul got tensors" in text and "\x1b[" not in text


def test_no_colour_in_a_pipe_unless_forced(bad):
    code, text = piped("run", bad)
    assert code == 3 and "TypeError: mul got tensors" in text and "\x1b[" not in text
    code, forced = piped("run", bad, env={"FORCE_COLOR": "1"})
    assert code == 3 and "\x1b[1;31mTypeError\x1b[0m" in forced and SGR.sub("", forced) == text
    code, both = piped("run", bad, env={"FORCE_COLOR": "1", "NO_COLOR": "1"})        # NO_COLOR wins
    assert "\x1b[" not in both


def test_an_empty_no_color_is_unset(bad):
    code, text = on_a_terminal("run", bad, env={"NO_COLOR": ""})
    assert "\x1b[1;31mTypeError\x1b[0m" in text


def test_check_colours_pass_fail_and_its_totals(tmp_path):
    path = tmp_path / "c.tdf"
    path.write_text(CHECKED)
    code, text = on_a_terminal("check", path)
    assert code == 1
    assert f"{path}:5: \x1b[32mPASS\x1b[0m g == 4.0" in text and f"{path}:6: \x1b[1;31mFAIL\x1b[0m g == 5.0" in text
    assert "\x1b[32m1 passed\x1b[0m, \x1b[1;31m1 failed\x1b[0m\n" in text
    code, plain = on_a_terminal("check", path, env={"NO_COLOR": "1"})
    report = plain.split("\x1b[2K")[-1]              # after the progress bar (erased) on stderr
    assert "\x1b[" not in report and f"{path}:6: FAIL g == 5.0" in report and "1 passed, 1 failed\n" in report


def test_lint_colours_its_codes(tmp_path):
    path = tmp_path / "l.tdf"
    path.write_text("var x = 2.0\ntape t:\n    y = x * x\nx = x - 0.1 * t.gradient(y, x)\n")
    code, text = on_a_terminal("lint", path)
    assert code == 1 and f"{path}:4:1: \x1b[1;35mTDF007\x1b[0m x is a variable" in text
    _, plain = on_a_terminal("lint", "--no-color", path)
    assert f"{path}:4:1: TDF007 x is a variable" in plain and "\x1b[" not in plain


def test_a_table_on_a_terminal_has_styles_and_none_with_no_color(tmp_path):
    path = tmp_path / "t.tdf"
    path.write_text("var x = 2.0\n")
    _, styled = on_a_terminal("run", path)
    assert "\x1b[1m" in styled and "name" in styled         # Rich's bold header
    _, plain = on_a_terminal("run", path, env={"NO_COLOR": "1"})
    assert "\x1b[" not in plain and SGR.sub("", styled) == plain


def test_the_colour_layer_only_adds_styles():
    text = ("f.tdf:3: warning: y was a variable, now a tensor\nf.tdf:7:5: TypeError: a: TypeError: b\n"
            "    7 | w = x * n\n      |     ^^^^^\nhint: convert n")
    painted = colour.error_text(text, "TypeError", colour.paint)
    assert SGR.sub("", painted) == text
    assert painted.count("\x1b[1;31mTypeError\x1b[0m") == 1          # the kind, not a word of the message
    assert colour.error_text(text, "TypeError", None) == text
    assert colour.warning_text("f.tdf:3: warning: hint: x", colour.paint) == "f.tdf:3: \x1b[1;35mwarning:\x1b[0m hint: x"


@pytest.mark.parametrize("env, flag, tty, expected", [
    ({}, None, True, True), ({}, None, False, False), ({}, False, True, False), ({"NO_COLOR": "1"}, None, True, False),
    ({"NO_COLOR": ""}, None, True, True), ({"TERM": "dumb"}, None, True, False), ({"FORCE_COLOR": "1"}, None, False, True),
    ({"FORCE_COLOR": "1", "TERM": "dumb"}, None, False, True), ({"FORCE_COLOR": "1"}, False, True, False),
])
def test_when_colour_is_on(monkeypatch, env, flag, tty, expected):
    for name in ("NO_COLOR", "FORCE_COLOR", "TERM"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)

    class Stream:
        def isatty(self):
            return tty
    assert colour.enabled(Stream(), flag) is expected


def test_plain_text_is_what_it_was(bad):
    # tests elsewhere compare the text: colour off keeps it exactly
    res = cli("run", bad, env={"NO_COLOR": ""})
    assert "\x1b[" not in res.stderr and res.stderr.splitlines()[1] == f"{bad}:7:5: TypeError: mul got tensors of " \
                                                                          "different dtypes: float32 and int32"
