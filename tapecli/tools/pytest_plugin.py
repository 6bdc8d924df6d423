"""The pytest plugin (entry point ``pytest11``, name ``tapecli``): ``*.tdf`` files that hold ``expect`` lines
are collected as tests, one item per ``expect`` / ``expect_error`` / ``assert`` statement, named by its line and
expression (item_name), so ``-k``, ``-x``, ``-q``, ``--junitxml`` and pytest-xdist work as for any test.

A file is run once, by the first of its items that runs, through ``tapecli check``'s own code
(tools/check.py: ``check_file`` and ``FileReport.outcome``); each item then reports its expectation:
passed, failed (``file:line:`` and the values compared), skipped (a program error or a branch kept it from
running) or the program's error (on the first expectation that did not run).

Loaded at every pytest start-up in an environment where tapecli is installed, so it imports only pytest
and the standard library until a ``.tdf`` file is collected. ``tapecli_collect = false`` in the ini file
(``[tool.pytest.ini_options]``) turns collection off; ``-p no:tapecli`` removes the plugin. A ``.py`` program is
collected (its ``assert`` statements as tests) only when it matches a glob of the ini option
``tapecli_python_files`` (none by default): a test suite's own ``.py`` files are pytest's, never collected here.
"""
from __future__ import annotations

import os
import re

import pytest

# A line that starts an expect, expect_error or assert statement (a quick test before the file is parsed).
_HAS_EXPECT = re.compile(rb"^[ \t]*(expect(_error)?|assert)[ \t]", re.MULTILINE)


def pytest_addoption(parser):
    parser.addini("tapecli_collect", type="bool", default=True,
                  help="collect *.tdf files holding expect lines as tests (tapecli)")
    parser.addini("tapecli_dtype", default="",
                  help="run collected .tdf files with this float dtype (float32 or float64; tapecli)")
    parser.addini("tapecli_python_files", type="args", default=[],
                  help="glob patterns of .py programs whose assert statements are tests, as .tdf files' expect "
                       "lines are (default none; choose patterns python_files does not match; tapecli)")


def pytest_collect_file(file_path, parent):
    if not parent.config.getini("tapecli_collect"):
        return None
    if file_path.suffix != ".tdf" and not (
            file_path.suffix == ".py" and any(file_path.match(g) for g in parent.config.getini("tapecli_python_files"))):
        return None
    try:
        data = file_path.read_bytes()
    except OSError:
        return None
    if not _HAS_EXPECT.search(data):
        return None
    return TdfFile.from_parent(parent, path=file_path)


def item_name(line: int, expr: str) -> str:
    """An expectation's test name: ``line 12: x == (1.0, 2.0)``, its line and its text with what pytest reads in
    a node id replaced: brackets (a parametrisation: ``--lf``, ``--ff`` and a node id given on the command line
    would not find the item again) become parentheses, and ``::`` (a child's separator) ``: :``. The failure's
    header keeps the statement as written."""
    return f"line {line}: " + expr.translate(_ID_SAFE).replace("::", ": :")


_ID_SAFE = str.maketrans("[]", "()")


class TdfFailure(Exception):
    """An expectation that failed, or the program's error: the text pytest shows."""


class TdfFile(pytest.File):
    """A .tdf file: an item per expectation, the program run once for all of them."""

    def collect(self):
        from tapecli.tools.check import expectation_lines
        self.source = self.path.read_text(encoding="utf-8")
        self.expectations = expectation_lines(self.source, self.shown)
        for line, expr in self.expectations:
            yield TdfItem.from_parent(self, name=item_name(line, expr), line=line, expr=expr)

    @property
    def shown(self) -> str:
        """The file as messages name it: relative to where pytest was started, when it is below it."""
        try:
            return os.path.relpath(self.path, self.config.invocation_params.dir)
        except ValueError:          # another drive
            return str(self.path)

    def report(self):
        """``tapecli check``'s report of the file (computed by the first item that asks)."""
        if getattr(self, "_report", None) is None:
            from tapecli.api import Options
            from tapecli.tools.check import check_file
            dtype = self.config.getini("tapecli_dtype") or None
            self._report = check_file(self.shown, Options(dtype=dtype), source=self.source)
        return self._report


class TdfItem(pytest.Item):
    def __init__(self, *, line: int, expr: str, **kwargs):
        super().__init__(**kwargs)
        self.line, self.expr = line, expr

    def runtest(self):
        outcome, text = self.parent.report().outcome(self.line, self.parent.expectations)
        if outcome == "skipped":
            pytest.skip(f"{self.parent.shown}:{self.line}: {text}")
        if outcome == "error":
            raise TdfFailure(f"{self.parent.shown}:{self.line}: not run: the program stopped with an error\n{text}")
        if outcome == "failed":
            raise TdfFailure(text)

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, TdfFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        keyword = "assert" if self.path.suffix == ".py" else "expect"
        statement = self.expr if self.expr.startswith("expect_error ") else f"{keyword} {self.expr}"
        return self.path, self.line - 1, f"{self.parent.shown}:{self.line}: {statement}"
