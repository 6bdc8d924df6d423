"""``tf.GradientTape`` on CPython: a context manager over a runtime tape (runtime/tape.py), whose methods are the
library's (its gradient, jacobian, watch...), called with their call site in the program."""
from __future__ import annotations

from tapecli.execution.sandbox import program_line
from tapecli.execution.tf_values import Node, as_tensorflow, to_library, to_program
from tapecli.interpreter.conversions import truth
from tapecli.interpreter.objects import TapeObject
from tapecli.interpreter.registry import HOOKS
from tapecli.runtime.context import current
from tapecli.runtime.tape import Tape, paused, recording


class GradientTape(TapeObject):
    """``tf.GradientTape(...)``: a context manager whose block records on a runtime tape; its methods are the
    library's (HOOKS["attribute"]), called with their call site."""

    def __init__(self, persistent=False, watch_accessed_variables=True):
        run = current().eager.run
        line = program_line(run.sandbox.filename)
        super().__init__(Tape("tape", persistent=truth(to_library(persistent)),
                              watch_accessed_variables=truth(to_library(watch_accessed_variables)), line=line), run)
        self.named = False
        self._block = None

    def __enter__(self):
        if self._block is not None:         # (TensorFlow's GradientTape._push_tape)
            raise ValueError("Tape is still recording, This can happen if you try to re-enter an already-active tape.")
        self.interp.tapes.append(self.tape)
        self._block = recording(self.tape, noted=True)
        self._block.__enter__()
        return self

    def __exit__(self, *exc):
        block, self._block = self._block, None
        return block.__exit__(*exc)

    def method(self, attr: str, node: Node | None):
        if attr == "stop_recording":
            return lambda: paused(self.tape, node.line if node is not None else program_line(
                self.interp.sandbox.filename))
        if attr == "persistent":
            return self.tape.persistent
        found = HOOKS["attribute"](self.interp, self, attr, node)
        if isinstance(found, str) or not hasattr(found, "fn"):
            return to_program(found)
        node = node or Node(attr, line=program_line(self.interp.sandbox.filename))

        requests = self.interp.requests

        @as_tensorflow
        def call(*args, **kwargs):
            current().settings.line = node.line
            asked = requests.mark()
            result = found.fn(node, *(to_library(a) for a in args), **{k: to_library(v) for k, v in kwargs.items()})
            value = to_program(result)
            if requests.mark() > asked and requests[-1].result is result:
                requests[-1].result = value         # (what the program binds names the request)
            return value
        return call

