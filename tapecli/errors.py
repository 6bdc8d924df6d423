"""The one exception family of tapecli: every error a program can cause.

Each error carries the docs/spec/LANGUAGE.md kind (``SyntaxError``, ``TapeError`` ...), a
message, an optional hint and, once known, the file position of the node that
caused it. The CLI turns a :class:`TdfError` into exit code 3 and a caret snippet.
"""
from __future__ import annotations


class TdfError(Exception):
    """An error in a TDF program; ``kind`` is the name users see."""

    kind = "Error"

    def __init__(self, message: str, *, hint: str | None = None, line: int | None = None,
                 column: int | None = None, end_column: int | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.line = line
        self.column = column
        self.end_column = end_column

    def locate(self, node) -> "TdfError":
        """Attach ``node``'s position unless a more precise one is already known."""
        if self.line is None and node is not None and getattr(node, "line", None):
            self.line = node.line
            self.column = node.column
            if node.end_line == node.line:
                self.end_column = node.end_column
        return self

    def about(self, name: str | None) -> "TdfError":
        """The error of writing the value of ``name`` (its JSON, its table cell): the message names it where
        no line is known."""
        if name and self.line is None:
            self.message = f"{name}: {self.message}"
            self.args = (self.message,)
        return self


class TdfSyntaxError(TdfError):
    kind = "SyntaxError"


class TdfNameError(TdfError):
    kind = "NameError"


class RefusedImport(TdfNameError):
    """``import module`` of a module the interpreter does not give (CPython's run of a program may)."""

    def __init__(self, message: str, *, module: str, **details):
        super().__init__(message, **details)
        self.module = module


class UndefinedNameError(TdfNameError):
    """``name X is not defined``; its "did you mean" hint is searched for only when it is read: a program that
    meets the error again and again (``expect_error`` in a loop) must not pay a search over every name each time."""

    def __init__(self, message: str, *, name: str = "", candidates=None, python: bool = False, **position):
        """``python``: the program is spelled as TensorFlow Python (its hint says so)."""
        super().__init__(message, **position)
        self._name, self._candidates = name, candidates
        self._python = python

    @property
    def hint(self) -> str | None:
        if self._candidates is not None:
            import difflib
            close = difflib.get_close_matches(self._name, self._candidates, n=1, cutoff=0.75)
            self._hint = f"did you mean {close[0]}?" if close else (
                f"bind it first ({self._name or 'x'} = ...)" if self._python else "declare it with var, const or =")
            self._candidates = None
        return self._hint

    @hint.setter
    def hint(self, value: str | None) -> None:
        self._hint, self._candidates = value, None


class TdfTypeError(TdfError):
    kind = "TypeError"


class NoAttribute(TdfTypeError):
    """A library value read for an attribute it lacks: Python's AttributeError to a program CPython runs (so
    ``hasattr`` and ``getattr`` with a default answer as Python's do)."""


class DtypeMismatch(TdfTypeError):
    """Tensors of different dtypes met in one op. The hint converts one of them: an integer (or bool) one to the
    float one's dtype, else the later one to the first's; once the expression is known (:meth:`name_operands`),
    by its text, as the program spells it."""

    def __init__(self, message: str, *, dtypes: list, convert: int, inputs: list, spell_cast, **position):
        """``dtypes``: the two that met; ``convert``: which of them to convert (0 or 1); ``inputs``: the
        positions of the two among the op's inputs; ``spell_cast(operand, dtype)``: a cast as the program
        spells it (runtime/spelling.py)."""
        super().__init__(message, **position)
        self.dtypes, self.convert, self.inputs, self.spell_cast = dtypes, convert, inputs, spell_cast
        self.hint = self._hint_for(None)

    def _hint_for(self, operand: str | None) -> str:
        to, have = self.dtypes[1 - self.convert], self.dtypes[self.convert]
        if operand is None:
            return f"convert the {have} one with {self.spell_cast('...', to)}"
        return f"convert {operand} with {self.spell_cast(operand, to)}"

    def name_operands(self, texts: list) -> "DtypeMismatch":
        """Name the operand to convert by its text, from the texts of the op's inputs in order."""
        at = self.inputs[self.convert]
        if at < len(texts) and texts[at]:
            self.hint = self._hint_for(texts[at])
        return self


class ShapeError(TdfError):
    kind = "ShapeError"


class TapeError(TdfError):
    kind = "TapeError"


class GradientError(TdfError):
    kind = "GradientError"


class TdfValueError(TdfError):
    kind = "ValueError"


class UndefinedMethod(TdfError):
    """A method a subclass of a Keras base is to define and does not (an optimizer's ``update_step``): Python's
    NotImplementedError in Keras."""
    kind = "NotImplementedError"


class KernelValueError(TdfValueError):
    """A value an op's kernel refuses as it runs (an index out of range, a singular matrix): TensorFlow raises
    InvalidArgumentError for it, which a TensorFlow program catches it as (execution/tf_errors.py)."""


class KernelPreconditionError(TdfValueError):
    """An input an op's kernel refuses for its state or layout (RGBToHSV's channels): TensorFlow raises
    FailedPreconditionError for it."""


class EndOfSequence(TdfValueError):
    """An iterator's ``get_next()`` past its last element: TensorFlow raises OutOfRangeError for it."""


class LimitError(TdfError):
    kind = "LimitError"


class TdfAssertionError(TdfError):
    """A failed ``assert`` (docs/spec/LANGUAGE.md §11)."""
    kind = "AssertionError"


class CheckpointAssertionError(TdfAssertionError):
    """A restored checkpoint that did not match its objects (``status.assert_consumed()``): Python's
    AssertionError in TensorFlow, where a failed tf.debugging assertion is an InvalidArgumentError."""


ERROR_KINDS = {cls.kind: cls for cls in (TdfSyntaxError, TdfNameError, TdfTypeError, ShapeError,
                                         TapeError, GradientError, TdfValueError, LimitError, TdfAssertionError)}


class UsageError(Exception):
    """Bad command-line input (exit 2): an unknown --set name, a missing file."""


def plural(n: int, noun: str, nouns: str | None = None) -> str:
    """A count in a message: ``1 error``, ``2 errors`` (``nouns``: the plural where it is not ``noun + "s"``;
    ``1 entry``, ``3 entries``)."""
    return f"{n} {noun if n == 1 else nouns or noun + 's'}"


def closest(name: str, names, cutoff: float = 0.6) -> str | None:
    """The name of ``names`` most like ``name`` (for a "did you mean"): difflib's closest above ``cutoff``, else
    one a single edit away (a letter changed, added, dropped or two swapped: ``w3`` and ``w1``, as CPython's
    NameError suggests), the first in sorted order; None where none is."""
    import difflib
    names = [n for n in names if n != name]
    close = difflib.get_close_matches(name, names, n=1, cutoff=cutoff)
    if close:
        return close[0]
    if len(name) < 2:
        return None
    return next((n for n in sorted(names) if _one_edit(name, n)), None)


def _one_edit(a: str, b: str) -> bool:
    if abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]]
                                  and a[diff[1]] == b[diff[0]])
    short, long = (a, b) if len(a) < len(b) else (b, a)
    i = next((k for k in range(len(short)) if short[k] != long[k]), len(short))
    return short[i:] == long[i + 1:]


# Control characters as `cat -v` shows them (ESC ^[, BEL ^G, CR ^M, DEL ^?, the C1 CSI M-^[): text for a
# terminal never carries a program's escape sequences (a title, the clipboard, a cleared screen) raw. A tab
# stays (cat -v's too); a newline stays where the text is several lines (documents.terminal_text).
_CONTROLS = {c: "^" + chr(c + 64) for c in range(32) if c not in (9, 10)}
_CONTROLS |= {127: "^?", **{c: "M-^" + chr(c - 128 + 64) for c in range(128, 160)}}
_CONTROLS_TOO = {**_CONTROLS, 10: "^J"}


def escape_controls(text: str, newlines: bool = False) -> str:
    """``text`` with its control characters shown as ``cat -v`` shows them (``newlines``: but a newline)."""
    if text.isprintable():
        return text
    return text.translate(_CONTROLS if newlines else _CONTROLS_TOO)
