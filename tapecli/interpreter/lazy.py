"""The parts of the interpreter a straight-line program never uses, imported when a run first needs them
(docs/performance.md, "Start-up"): a loop's plans and its body's shape, the fused kernels of a large
elementwise expression, and the generated code of a statement run again. The one place such a module is named."""
from __future__ import annotations

from tapecli.lazymodule import LazyModule

loop_plans = LazyModule("tapecli.interpreter.loop_plans")      # a loop's iterations as kernel calls
loop_shape = LazyModule("tapecli.interpreter.loop_shape")      # what a loop's body does, for its plan
fusion = LazyModule("tapecli.fusion.core")                     # one kernel for a large elementwise expression
scalar_source = LazyModule("tapecli.interpreter.scalar_source")   # a scalar statement as generated code
