"""What the builtins a training loop calls most are to a loop plan (``interpreter/loop_plans.py``).

A builtin listed here computes its tensors by kernels from its arguments, reads none of their values into
Python and changes nothing (``interpreter.objects.PURE``). ``replay_data``: how many leading positional
arguments are the data its kernels take; the ones after them (an axis, a shape, a dtype) it reads into
Python, so a plan takes the call only where they come from no input of the plan. Every other builtin
leaves a loop that calls it to run as written.
"""
from __future__ import annotations

from tapecli.interpreter.objects import PURE
from tapecli.interpreter.registry import BUILTINS

# the data are all the arguments
_ELEMENTWISE = ("add", "subtract", "multiply", "divide", "negative", "pow", "square", "sqrt", "exp", "log",
                "abs", "tanh", "sigmoid", "relu", "maximum", "minimum", "matmul")
# they take lists as lists (the others pack a list of tensors into one array in Python: not a plan's)
_STRUCTURAL = ("zip", "list", "tuple", "len")
# the data are the first argument
_ONE_DATUM = ("reduce_mean", "reduce_sum", "mean", "softmax", "cast", "transpose", "reshape")

for _name in _ELEMENTWISE + _ONE_DATUM + _STRUCTURAL:
    _f = BUILTINS[_name]
    _f.replay = PURE
    _f.replay_data = 1 if _name in _ONE_DATUM else None
    _f.replay_lists = _name in _STRUCTURAL
