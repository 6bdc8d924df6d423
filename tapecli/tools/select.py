"""Choosing which requests `grad`, `jacobian`, `hessian` and `explain` report: ``-k EXPR`` (pytest's ``-k``:
case-insensitive substrings of an entry's name, target, source and tape, joined by ``and``, ``or``, ``not``
and parentheses), ``--line N`` or ``--line A-B`` (requests made at those program lines) and ``--last`` (of the
requests made at one call site, as a loop makes them, only the last). A selection that keeps nothing is a
usage error naming what there is, never an empty success."""
from __future__ import annotations

import copy
import difflib
import re
from dataclasses import dataclass, field

from tapecli.errors import UsageError


# ------------------------------------------------------------------ -k expressions

_TOKEN = re.compile(r"[()]|[^\s()]+")


def parse_keyword(text: str):
    """``text`` as a predicate on a list of words (each word matched as a case-insensitive substring); an
    empty expression keeps everything. A malformed one is a UsageError saying where."""
    tokens = _TOKEN.findall(text)
    if not tokens:
        return lambda words: True
    pos = 0

    def peek():
        return tokens[pos] if pos < len(tokens) else None

    def take():
        nonlocal pos
        pos += 1
        return tokens[pos - 1]

    def fail(expected):
        found = f"{peek()!r}" if peek() is not None else "the end"
        raise UsageError(f"-k {text!r}: expected {expected}, found {found} (pytest's -k: names joined by "
                         f"and, or, not and parentheses)")

    def negation():
        token = peek()
        if token == "not":
            take()
            inner = negation()
            return lambda words: not inner(words)
        if token == "(":
            take()
            inner = alternatives()
            if peek() != ")":
                fail("')'")
            take()
            return inner
        if token is None or token in (")", "and", "or"):
            fail("a name")
        word = take().lower()
        return lambda words: any(word in w for w in words)

    def joined(word, operand, join):        # operand (word operand)*: all() of them for and, any() for or
        def parse():
            parts = [operand()]
            while peek() == word:
                take()
                parts.append(operand())
            return parts[0] if len(parts) == 1 else lambda words: join(p(words) for p in parts)
        return parse

    conjunction = joined("and", negation, all)
    alternatives = joined("or", conjunction, any)
    predicate = alternatives()
    if pos != len(tokens):
        fail("and, or or the end")
    return predicate


def keyword_words(text: str) -> list[str]:
    """The names an expression looks for (not its operators), for a did-you-mean."""
    return [t for t in _TOKEN.findall(text) if t not in ("and", "or", "not", "(", ")")]


def parse_lines(text: str) -> tuple[int, int]:
    """``N`` or ``A-B`` (inclusive) for --line."""
    m = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", text)
    if not m or int(m.group(1)) < 1 or (m.group(2) and int(m.group(2)) < int(m.group(1))):
        raise UsageError(f"--line {text!r}: expected a line number N or a range A-B (A <= B)")
    return int(m.group(1)), int(m.group(2) or m.group(1))


# ------------------------------------------------------------------ selections

@dataclass
class Selection:
    keyword: str | None = None
    lines: tuple[int, int] | None = None
    last: bool = False
    predicate: object = field(default=None, repr=False, compare=False)     # the parsed -k

    @classmethod
    def of(cls, keyword: str | None, line: str | None, last: bool) -> Selection | None:
        """The selection the options ask for (checked now, before the run), or None when none is."""
        if keyword is None and line is None and not last:
            return None
        return cls(keyword, parse_lines(line) if line is not None else None, last,
                   parse_keyword(keyword) if keyword is not None else None)

    def describe(self) -> str:
        parts = ([f"-k {self.keyword!r}"] if self.keyword is not None else []) + (
            [f"--line {self.lines[0]}" + (f"-{self.lines[1]}" if self.lines[1] != self.lines[0] else "")]
            if self.lines else []) + (["--last"] if self.last else [])
        return " ".join(parts)

    def to_json(self, kept: int, total: int) -> dict:
        """What a JSON document says of the selection: ``"selected": {...}``."""
        return {"k": self.keyword, "line": list(self.lines) if self.lines else None, "last": self.last,
                "entries": kept, "of": total}

    def _choose(self, items: list[tuple], what: str) -> list[int]:
        """The indices of ``items`` kept; each item is (site, line, words, label). Nothing kept: a UsageError."""
        chosen = list(range(len(items)))
        if self.last:
            final = {item[0]: i for i, item in enumerate(items)}
            chosen = [i for i in chosen if final[items[i][0]] == i]
        if self.lines:
            low, high = self.lines
            chosen = [i for i in chosen if items[i][1] is not None and low <= items[i][1] <= high]
        if self.predicate is not None:
            chosen = [i for i in chosen if self.predicate([w.lower() for w in items[i][2]])]
        if not chosen:
            raise UsageError(self._nothing(items, what))
        return chosen

    def _nothing(self, items: list[tuple], what: str) -> str:
        if not items:
            return f"{self.describe()}: the program made no {what} requests"
        lines = sorted({item[1] for item in items if item[1] is not None})
        words = list(dict.fromkeys(w for item in items for w in item[2]))
        labels = list(dict.fromkeys(item[3] for item in items))
        text = f"{self.describe()} matches none of the {len(items)} {what} entries"
        if self.keyword is not None:
            close = [c for word in keyword_words(self.keyword)
                     for c in difflib.get_close_matches(word, words, n=1, cutoff=0.5)]
            if close:
                text += f"; did you mean -k {close[0]}?"
            shown = ", ".join(labels[:20]) + (", ..." if len(labels) > 20 else "")
            text += f" (the entries: {shown})"
        if self.lines and lines:
            text += f" (requests at line{'s' if len(lines) > 1 else ''} {', '.join(map(str, lines))})"
        return text

    def requests(self, requests: list, what: str) -> list:
        """The requests kept, each narrowed to its entries kept (copies; the run's own are unchanged)."""
        items, owners = [], []
        for r, req in enumerate(requests):
            site = (req.line, req.tape, req.target_text, tuple(req.labels), getattr(req, "kind", None))
            names = req.names or [None] * len(req.values)
            second = getattr(req, "second", None) or [None] * len(req.values)
            for j, (name, label, label2) in enumerate(zip(names, req.labels, second)):
                words = [w for w in (name, req.target_text, label, label2, req.tape) if w is not None]
                items.append(((site, j), req.line, [str(w) for w in words],
                              name or f"d({req.target_text})/d({label})"))
                owners.append((r, j))
        kept: dict[int, list[int]] = {}
        for i in self._choose(items, what):
            r, j = owners[i]
            kept.setdefault(r, []).append(j)
        return [_narrowed(requests[r], js) for r, js in kept.items()]

    def entries(self, entries: list[dict], what: str) -> list[dict]:
        """The entries kept of dicts with "line", "tape", "target" and "source" (explain's)."""
        items = [((e.get("line"), e.get("tape"), e.get("target"), e.get("source")), e.get("line"),
                  [str(e[k]) for k in ("target", "source", "tape") if e.get(k) is not None],
                  f"d({e.get('target')})/d({e.get('source')}) on tape {e.get('tape')}") for e in entries]
        return [entries[i] for i in self._choose(items, what)]


_PER_ENTRY = ("names", "labels", "values", "why", "second", "leaves", "versions", "snapshots")


def _narrowed(request, keep: list[int]):
    if len(keep) == len(request.values):
        return request
    narrowed = copy.copy(request)
    for attr in _PER_ENTRY:
        items = getattr(request, attr, None)
        if items:
            setattr(narrowed, attr, [items[j] for j in keep])
    return narrowed
