"""The parts of the interpreter a straight-line program never uses, imported when a run first needs them
(docs/performance.md, "Start-up"): a loop's plans and its body's shape, and the fused kernels of a large
elementwise expression. The one place such a module is named."""
from __future__ import annotations

from tapecli.lazymodule import LazyModule

loop_plans = LazyModule("tapecli.interpreter.loop_plans")      # a loop's iterations as kernel calls
loop_shape = LazyModule("tapecli.interpreter.loop_shape")      # what a loop's body does, for its plan
fusion = LazyModule("tapecli.fusion.core")                     # one kernel for a large elementwise expression
