"""tf.test.compute_gradient: the theoretical and numeric Jacobians of a program's function as TensorFlow's
gradient_checker_v2 computes them. The theoretical one is a row at a time, each the gradient of a fresh run of the
function with a one-hot output gradient; the numeric one a column at a time, the central difference of two runs
with one element of the argument moved by ``delta`` in its own dtype (NumPy's in-place arithmetic, as TensorFlow's
checker moves it). The function runs as many times as in TensorFlow, so what it prints is printed as often."""
from __future__ import annotations

import numpy as np

from tapecli import ops
from tapecli.autodiff import gradients
from tapecli.errors import TdfAssertionError, TdfValueError
from tapecli.interpreter.registry import builtin
from tapecli.library.core import to_float
from tapecli.runtime.tape import Tape, as_tensor, recording
from tapecli.runtime.values import NumpyArray, PythonTuple, Tensor, Variable, dtype_name

_ALLOWED = ("float16", "bfloat16", "float32", "float64")      # (and TensorFlow's complex types, which tapecli lacks)


@builtin("test.compute_gradient", interp=True)
def compute_gradient(interp, f, x, delta=None):
    """((theoretical Jacobian of each argument), (numeric Jacobian of each)): 2-D NumPy arrays of f(x)'s size
    by the argument's, in the argument's dtype."""
    if not isinstance(x, list):
        raise TdfValueError("`x` must be a list or tuple of values convertible to a Tensor (arguments to `f`), "
                            f"not a {_kind(x)}")
    step = 1.0 / 1024 if delta is None else to_float(delta, "delta")
    xs = [_argument(v) for v in x]
    y = _output(interp.call_value(f, list(xs)))
    theoretical, numeric = [], []
    for param in range(len(xs)):
        for t, what in ((xs[param], f"argument {param}"), (y, "y")):
            if dtype_name(t.dtype) not in _ALLOWED:
                raise TdfAssertionError(f"Cannot compute gradient for unsupported type {dtype_name(t.dtype)} of "
                                        + what)
        theoretical.append(NumpyArray(_theoretical(interp, f, y, xs, param)))
        numeric.append(NumpyArray(_numeric(interp, f, y, xs, param, step)))
    return PythonTuple([PythonTuple(theoretical), PythonTuple(numeric)])


def _kind(value) -> str:
    return "<class 'tensorflow.python.framework.ops.EagerTensor'>" if isinstance(value, (Tensor, Variable)) \
        else f"<class '{type(value).__name__}'>"


def _argument(value) -> Tensor:
    t = as_tensor(value) if isinstance(value, (Tensor, Variable)) else ops.to_tensor(value)
    return ops.materialize(t) if t.weak else Tensor(t.value)


def _output(value) -> Tensor:
    t = as_tensor(value) if isinstance(value, (Tensor, Variable)) else ops.to_tensor(value)
    return ops.materialize(t) if t.weak else t


def _theoretical(interp, f, y, xs, param) -> np.ndarray:
    """Row r: the gradient with respect to xs[param] of a run whose output gradient is one at element r."""
    x = xs[param]
    jacobian = np.zeros((y.size, x.size), dtype=x.dtype)
    for row in range(y.size):
        seed = np.zeros(y.shape, dtype=y.dtype)
        seed.reshape(-1)[row] = 1
        tape = Tape("compute_gradient", persistent=False)
        with recording(tape):
            tape.watch_tensor(x, None, None)
            out = _output(interp.call_value(f, list(xs)))
        grad = gradients.gradient(tape, out, [x], output_gradients=[Tensor(seed)])[1][0]
        if grad is not None:
            jacobian[row, :] = np.asarray(grad.value).reshape(-1).view(jacobian.dtype)
    return jacobian


def _numeric(interp, f, y, xs, param, delta) -> np.ndarray:
    """Column c: (f(x + delta at c) - f(x - delta at c)) / (2 * delta), the steps taken in x's dtype."""
    arrays = [np.array(t.value) for t in xs]
    flat = arrays[param].reshape(-1)
    scale = np.asarray(2 * delta, dtype=y.dtype)[()]
    jacobian = np.zeros((y.size, flat.size), dtype=flat.dtype)

    def run():
        return np.asarray(_output(interp.call_value(f, [Tensor(a.copy()) for a in arrays])).value)

    for col in range(flat.size):
        original = flat[col]
        flat[col] += delta
        y_pos = run()
        flat[col] = original
        flat[col] -= delta
        y_neg = run()
        flat[col] = original
        jacobian[:, col] = ((y_pos - y_neg) / scale).reshape(-1).view(y.dtype)
    return jacobian


compute_gradient.item_lists = True      # (x's items are the arguments, each its own tensor, where CPython runs)
