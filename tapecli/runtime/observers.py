"""What watches a run's op stream: the hooks the ops, the variable reads and the backward sweep call.

A run keeps its observers in one list, ``RunContext.observers`` (the provenance log for ``explain``, the
--check-numerics checks), made once when the context is; the hot paths test only whether it is empty, and
call each observer's hook when it is not. A hook an observer has no use for is this class's, which does
nothing.
"""
from __future__ import annotations


class Observer:
    def applied(self, op, inputs, output, line, tapes) -> None:
        """``op`` computed ``output`` from ``inputs`` (ops.apply) at ``line``; ``tapes``: those that recorded it."""

    def emitted(self, name, inputs, output, line, differentiable, tapes) -> None:
        """An op whose output was made another way (a fused kernel or gradient, a custom gradient's body)
        entered the op stream."""

    def read(self, var, tapes, line) -> None:
        """A variable was read while ``tapes`` (not empty) were open."""

    def backward(self, record, g, input_grads) -> None:
        """A backward sweep gave ``record``'s inputs ``input_grads`` from its output's gradient ``g``."""
