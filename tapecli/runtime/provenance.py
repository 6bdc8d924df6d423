"""A light log of what a run did, kept when a command needs to explain gradients.

Every op application (recorded on a tape or not), every assignment to a variable,
every rebinding of a variable's name, and each tape's scope, pauses, resets and
watches. `explain.py` walks it to say why a gradient is None or how it is connected.
The log holds ids and lines, not tensors, so it costs little memory.
"""
from __future__ import annotations

from tapecli.runtime.observers import Observer


class OpEvent:
    # A plain class, not a dataclass: making dataclasses at import costs every run's start-up.
    __slots__ = ("index", "op", "inputs", "output", "line", "differentiable", "float_output", "tapes")

    def __init__(self, index: int, op: str, inputs: tuple, output: int, line: int | None, differentiable: bool,
                 float_output: bool, tapes: tuple):
        self.index = index
        self.op = op
        self.inputs = inputs                  # input tensor ids
        self.output = output
        self.line = line
        self.differentiable = differentiable
        self.float_output = float_output
        self.tapes = tapes                    # ids of the tapes that recorded it


class TapeHistory:
    def __init__(self, name: str, line: int | None):
        self.name = name
        self.line = line
        self.opened = -1                      # event index at the start of its block
        self.closed: int | None = None        # event index at its end
        self.pauses: list = []                # [start, end, line] of stop_recording blocks
        self.resets: list = []                # (event index, line)
        self.stopped: tuple | None = None     # (event index, line): a non-persistent tape asked inside its block
        self.empty_watches: list = []         # (line, text): `watch` of an empty list
        self.unwatched: dict = {}             # variable name -> (line, why) read in scope, not watched


class Provenance(Observer):
    """The log (an observer of the run's op stream while ``enabled``: ``explain`` and --explain); what only it
    notes (tape blocks, pauses, resets, assignments, rebindings) is noted where it happens, if ``enabled``."""

    LIMIT = 2_000_000          # events kept; past it, explanations say the log is full

    def __init__(self, enabled: bool = False):
        self.enabled = enabled
        self.events: list[OpEvent] = []
        self.producer: dict[int, int] = {}           # tensor id -> index of the op that made it
        self.assigns: list[tuple] = []               # (event index, line, variable id, name, how, source ids)
        self.rebinds: dict[str, tuple] = {}          # name -> (line, variable name) where a variable became a tensor
        self.untaken: list[tuple] = []               # (line, names an untaken branch would have bound)
        self.tapes: dict[int, TapeHistory] = {}
        self.full = False

    @property
    def now(self) -> int:
        return len(self.events)

    def applied(self, op, inputs, output, line, tapes) -> None:
        self.emitted(op.name, inputs, output, line, op.differentiable, tapes)

    def emitted(self, name, inputs, output, line, differentiable, tapes) -> None:
        if len(self.events) >= self.LIMIT:
            self.full = True
            return
        event = OpEvent(len(self.events), name, tuple(t.id for t in inputs), output.id, line, differentiable,
                        output.dtype.kind == "f", tuple(id(t) for t in tapes))
        self.events.append(event)
        self.producer[output.id] = event.index

    def read(self, var, tapes, line) -> None:
        """A variable was read while ``tapes`` were open: note the open tapes that do not watch it."""
        for tape in tapes:
            if var.id in tape.watched_ids:
                continue
            unwatched = self.tape(tape).unwatched
            if var.name in unwatched:
                continue
            if var.dtype.kind != "f":
                why = f"it is {var.dtype.name}: integer variables are never watched"
            elif not var.trainable:
                why = "it is not trainable: watch it explicitly"
            elif not tape.watch_accessed_variables:
                why = "the tape has watch_accessed_variables=False: watch it explicitly"
            elif tape.paused:
                why = "it was read inside stop_recording"
            else:
                continue
            unwatched[var.name] = (line, why)

    def tape(self, tape) -> TapeHistory:
        key = id(tape)
        if key not in self.tapes:
            self.tapes[key] = TapeHistory(tape.name, tape.line)
        return self.tapes[key]


