"""--check-numerics: the first statement whose forward or backward result holds NaN or Inf.

A NaN in a branch that `where` does not take is harmless forward but poisons the
backward pass (0 * NaN = NaN); such a finding is kept until the backward pass shows it.
"""
from __future__ import annotations

import numpy as np

from tapecli.errors import TdfValueError
from tapecli.runtime.observers import Observer


def _finite(a: np.ndarray) -> bool:
    return a.dtype.kind != "f" or bool(np.isfinite(a).all())


def summary(a: np.ndarray) -> str:
    if a.dtype.kind != "f" or a.size == 0:
        return f"shape {list(a.shape)}"
    finite = a[np.isfinite(a)]
    parts = [f"shape {list(a.shape)}"]
    if finite.size:
        parts.append(f"min {finite.min():.4g}, max {finite.max():.4g}")
    bad = a.size - finite.size
    if bad:
        parts.append(f"{bad} non-finite")
    if a.size and (a <= 0).any():
        parts.append(f"{int((a <= 0).sum())} <= 0")
    return ", ".join(parts)


def _what(a: np.ndarray) -> str:
    return "NaN" if np.isnan(a).any() else "Inf"


class Numerics(Observer):
    """The checks (an observer of the run's op stream while ``enabled``); a tape's records keep every input
    whole meanwhile, for the findings' summaries (ops.core._kept)."""

    def __init__(self, enabled: bool = False):
        self.enabled = enabled
        self.forward_findings: dict[int, dict] = {}     # output tensor id -> finding
        self.masked: dict[int, int] = {}                 # output id -> line of the `where` that discards it
        self.backward_finding: dict | None = None        # the first non-finite gradient from finite ones

    def applied(self, op, inputs, output, line, tapes) -> None:
        out = output.value
        if not _finite(out) and all(_finite(t.value) for t in inputs):
            self.forward_findings[output.id] = {
                "line": line, "op": op.name, "what": _what(out), "phase": "forward",
                "inputs": [summary(t.value) for t in inputs]}
        if op.name == "where":
            self._where(inputs, output, line)

    def _where(self, inputs, output, line) -> None:
        """``where(c, a, b)``: a non-finite value in the branch not taken is masked, forward."""
        cond, a, b = inputs
        for branch, taken in ((a, cond.value), (b, np.logical_not(cond.value))):
            if branch.id in self.forward_findings and _finite(np.where(taken, branch.value, 0)):
                self.masked[branch.id] = line
        if output.id in self.forward_findings and _finite(output.value):
            del self.forward_findings[output.id]

    def backward(self, record, g, input_grads) -> None:
        if self.backward_finding is not None or not _finite(g.value):
            return
        for inp, grad in zip(record.inputs, input_grads):
            if grad is not None and not _finite(grad.value):
                finding = {"line": record.line, "op": record.op.name, "what": _what(grad.value),
                           "phase": "backward", "inputs": [summary(t.value) for t in record.inputs]}
                poisoned = record.output.id in self.masked or inp.id in self.masked
                if poisoned:
                    finding["where_line"] = self.masked.get(record.output.id, self.masked.get(inp.id))
                self.backward_finding = finding
                return

    def check(self, python: bool) -> None:
        """Raise the first finding, if any (at the end of a run): forward ones come first in time; its hint
        spelled as the program is (``python``: TensorFlow Python)."""
        unmasked = [f for tid, f in self.forward_findings.items() if tid not in self.masked]
        finding = unmasked[0] if unmasked else self.backward_finding
        if finding is None:
            return
        text = (f"--check-numerics: {finding['op']} at line {finding['line']} gave {finding['what']} in the "
                f"{finding['phase']} pass; its inputs: " + "; ".join(finding["inputs"]))
        hint = None
        if finding.get("where_line"):
            tf = "tf." if python else ""          # (spelling.py reads the run context, which holds this object)
            where = f"{tf}where"
            text += (f". The `{where}` at line {finding['where_line']} does not take this branch, but the gradient "
                     f"still flows into it and 0 * {finding['what']} is NaN")
            hint = f"make the untaken branch safe too, e.g. {tf}where(x > 0, {tf}sqrt({tf}where(x > 0, x, 1.0)), 0.0)"
        raise TdfValueError(text, hint=hint, line=finding["line"])


