"""What the builtins a training loop calls most are to a loop plan (``interpreter/loop_plans.py``).

``print`` is an effect: a plan prints again, the values of its iteration. A builtin listed below computes
its tensors by kernels from its arguments and changes nothing (``interpreter.objects.PURE``). Its data are
the arguments its kernels take; the others (an axis, a shape, a dtype, a depth, labels whose range it
checks) it reads into Python, so a plan takes the call only where they come from no input of the plan
(``replay_data``: how many leading positional arguments are data, None for all, and which keywords).
``normal`` and ``uniform`` draw through ``kernels.drawn``, which a plan makes again at each iteration, in
order, from the same generator (or a generator made anew from the same seed). Every other builtin (another
draw, a value read into Python, a shape computed from values) leaves a loop that calls it to run as written.
"""
from __future__ import annotations

from tapecli import ops
from tapecli.interpreter.objects import EFFECT, PURE
from tapecli.interpreter.registry import BUILTINS, after_load


def _op_data() -> dict:
    """The builtins of the elementwise ops, from the op table (``Op.program``: of the families loaded): every argument
    of a binary one is data, the first of a unary one (the others, an ``alpha``, are read into Python)."""
    return {name: (None if op.grads is not None and len(op.grads) > 1 else 1, ())
            for op in ops.OPS.values() for name in op.program}


# the builtins that are no op's own: every argument is data
_ALL_DATA = ("add", "subtract", "multiply", "divide", "truediv", "floordiv", "mod", "matmul", "dot")
# the first argument is data
_FIRST_DATUM = (
    "negative", "swish", "silu", "round", "reciprocal", "elu", "gelu", "leaky_relu",
    "sum", "mean", "max", "min", "prod", "reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod",
    "reduce_logsumexp", "logsumexp", "norm", "argmax", "argmin", "softmax", "log_softmax", "l2_normalize",
    "reshape", "transpose", "expand_dims", "squeeze", "tile", "broadcast_to", "cast", "identity",
    "stop_gradient", "zeros_like", "ones_like", "one_hot", "clip", "clip_by_value", "concat", "stack")
# the logits are data; the labels (their range checked) are not
_LOGITS = ("sigmoid_cross_entropy_with_logits", "softmax_cross_entropy_with_logits",
           "sparse_softmax_cross_entropy_with_logits")
# lists are taken as lists, or their tensors added by kernels: not packed into one array in Python
_LISTS = ("zip", "list", "tuple", "len", "sum", "max", "min", "concat", "stack")
# draws (kernels.drawn: a plan draws again, in order): every argument is read into Python
_DRAWS = ("normal", "uniform")


@after_load
def _mark() -> None:
    """Mark the builtins listed here that are loaded (again after a family loads: ``registry.defer``)."""
    op_data = _op_data()
    for name in (*op_data, *_ALL_DATA, *_FIRST_DATUM, *_LOGITS, *_LISTS):
        f = BUILTINS.get(name)
        if f is not None:
            f.replay = PURE
            f.replay_data = (None, ()) if name in _ALL_DATA + _LISTS[:4] else (0, ("logits",)) \
                if name in _LOGITS else op_data.get(name, (1, ()))
            f.replay_lists = name in _LISTS
    for name in _DRAWS:
        if name in BUILTINS:
            BUILTINS[name].replay = PURE
            BUILTINS[name].replay_data = (0, ())
    if "print" in BUILTINS:
        BUILTINS["print"].replay = EFFECT
