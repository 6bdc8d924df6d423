"""The parts of the interpreter a straight-line program never uses, imported when a run first needs them
(docs/performance.md, "Start-up"): a loop's plans and its body's shape, and the fused kernels of a large
elementwise expression. The one place such a module is named; tests/project/test_architecture.py reads these names as
imports of this module, so the rooms' order still holds for them."""
from __future__ import annotations

import importlib


class LazyModule:
    """A module imported on the first read of one of its attributes."""

    __slots__ = ("name", "module")

    def __init__(self, name: str):
        self.name = name
        self.module = None

    def __getattr__(self, attr):
        if self.module is None:
            self.module = importlib.import_module(self.name)
        return getattr(self.module, attr)


loop_plans = LazyModule("tapecli.interpreter.loop_plans")      # a loop's iterations as kernel calls
loop_shape = LazyModule("tapecli.interpreter.loop_shape")      # what a loop's body does, for its plan
fusion = LazyModule("tapecli.fusion.core")                     # one kernel for a large elementwise expression
