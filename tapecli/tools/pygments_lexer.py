"""A Pygments lexer for .tdf programs (entry point ``pygments.lexers``: ``tdf``), so Pygments, Sphinx,
MkDocs and Rich highlight them: ``pygments.lexers.get_lexer_by_name("tdf")``.

The language is Python's syntax plus soft keywords that start a statement (``var const tape watch
stop_recording reset expect expect_error``) and the operator ``~=``. Pygments comes with Rich, which tapecli
depends on; this module is the only one that imports it, and nothing of tapecli.
"""
from __future__ import annotations

from pygments.lexer import bygroups, inherit
from pygments.lexers.python import PythonLexer
from pygments.token import Keyword, Operator, Whitespace

SOFT_KEYWORDS = ("expect_error", "stop_recording", "expect", "const", "var", "tape", "watch", "reset")

# A soft keyword at the start of a statement, followed by what a statement of it has next (a name, a
# bracket, a literal, `(` or `:`), so that `var = 3` or `tape.attr` stay a name.
STATEMENT = r"^([ \t]*)(" + "|".join(SOFT_KEYWORDS) + r""")\b(?=[ \t]*[(:]|[ \t]+[\w\[("'-])"""


class TdfLexer(PythonLexer):
    """.tdf programs: Python with tapecli's statements."""

    name = "TDF"
    aliases = ["tdf", "tapecli"]
    filenames = ["*.tdf"]
    mimetypes = ["text/x-tdf"]
    url = "https://pypi.org/project/tapecli/"

    tokens = {
        "root": [
            (STATEMENT, bygroups(Whitespace, Keyword)),
            (r"~=", Operator),
            inherit,
        ],
    }
