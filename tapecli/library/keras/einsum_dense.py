"""Keras 3's EinsumDense (keras/src/layers/core/einsum_dense.py): einsum(equation, x, kernel) + bias, then an
activation, its kernel's and bias's shapes found from the equation as Keras finds them; MultiHeadAttention's
projections are four of them."""
from __future__ import annotations

import math
import re

from tapecli import ops
from tapecli.errors import TdfValueError
from tapecli.library.keras import initializers
from tapecli.library.keras.common import add, integer
from tapecli.library.keras.layers import Layer, activation_fn
from tapecli.runtime.values import PythonTuple


def _analyze(equation, bias_axes, input_shape, output_shape):
    """Keras's _analyze_einsum_string: the kernel's shape, the bias's (None without bias_axes), the full output
    shape, and which of the kernel's axes are contracted with the input's (the rest are the output's)."""
    plain = re.sub(r"\.\.\.", "0", equation)
    for pattern, left in (("([a-zA-Z]+),([a-zA-Z]+)->([a-zA-Z]+)", False), ("0([a-zA-Z]+),([a-zA-Z]+)->0([a-zA-Z]+)", True),
                          ("([a-zA-Z]{2,})0,([a-zA-Z]+)->([a-zA-Z]+)0", False)):
        found = re.match(pattern, plain)
        if found:
            return _split(*found.groups(), bias_axes, input_shape, output_shape, left)
    raise TdfValueError(f"Invalid einsum equation '{equation}'. Equations must be in the form [X],[Y]->[Z], "
                        "...[X],[Y]->...[Z], or [X]...,[Y]->[Z]....")


def _split(input_spec, weight_spec, output_spec, bias_axes, input_shape, output_shape, left_elided):
    """Keras's _analyze_split_string."""
    elided = len(input_shape) - len(input_spec)
    output_shape = [input_shape[0], *output_shape]
    if elided > 0 and left_elided:
        for i in range(1, elided):
            output_shape.insert(1, input_shape[i])
    elif elided > 0:
        output_shape.extend(input_shape[len(input_shape) - elided:])
    shift = elided if left_elided else 0
    input_at = {d: i + shift - (len(input_shape) if left_elided else 0) for i, d in enumerate(input_spec)}
    output_at = {d: i + shift for i, d in enumerate(output_spec)}
    for d in input_spec:
        if d in output_at and output_shape[output_at[d]] is not None \
                and output_shape[output_at[d]] != input_shape[input_at[d]]:
            raise TdfValueError(f"Input shape and output shape do not match at shared dimension '{d}'. Input shape "
                                f"is {input_shape[input_at[d]]}, and output shape is {output_shape[output_at[d]]}.")
    for d in output_spec:
        if d not in input_spec and d not in weight_spec:
            raise TdfValueError(f"Dimension '{d}' was specified in the output '{output_spec}' but has no "
                                f"corresponding dim in the input spec '{input_spec}' or weight spec '{output_spec}'")
    kernel, contracted = [], []
    for i, d in enumerate(weight_spec):
        if d in output_at:
            kernel.append(output_shape[output_at[d]])
        elif d in input_at:
            kernel.append(input_shape[input_at[d]])
            contracted.append(i)
        else:
            raise TdfValueError(f"Weight dimension '{d}' did not have a match in either the input spec "
                                f"'{input_spec}' or the output spec '{output_spec}'. For this layer, the weight must "
                                "be fully specified.")
    bias = None
    if bias_axes is not None:
        for c in bias_axes:
            if c not in output_spec:
                raise TdfValueError(f"Bias dimension '{c}' was requested, but is not part of the output spec "
                                    f"'{output_spec}'")
        sizes = {c: output_shape[i + shift] for i, c in enumerate(output_spec)}
        first = min(output_spec.find(c) for c in bias_axes)
        bias = [sizes[c] if c in bias_axes else 1 for c in output_spec[first:]]
        bias += [] if left_elided else [1] * elided
    return kernel, bias, output_shape, contracted


class _ByFans(initializers.Initializer):
    """An initializer's values for a kernel made at the 2-D shape [its input axes' size, its output axes'],
    then reshaped: Keras's EinsumDense gives a VarianceScaling initializer those axes, so its fans are theirs."""
    default_seed = False        # (it draws no seed of its own: the wrapped initializer's)

    def __init__(self, init, contracted):
        super().__init__()
        self.init, self.contracted = init, contracted

    def make(self, shape, rng, dtype):
        fan_in = math.prod(d for i, d in enumerate(shape) if i in self.contracted)
        return self.init.make((fan_in, math.prod(shape) // max(fan_in, 1)), rng, dtype).reshape(shape)


class EinsumDense(Layer):
    prefix = "einsum_dense"
    replayable = True

    def __init__(self, interp, equation, output_shape, activation=None, bias_axes=None,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros", **kw):
        super().__init__(interp, **kw)
        if not isinstance(equation, str) or bias_axes is not None and not isinstance(bias_axes, str):
            raise TdfValueError("EinsumDense's equation and bias_axes are strings")
        self.equation, self.bias_axes = equation, bias_axes
        shape = output_shape if isinstance(output_shape, (list, tuple)) else [output_shape]
        self.partial_output_shape = tuple(None if d is None else integer(d, "output_shape") for d in shape)
        self.activation = activation_fn(activation, interp)
        self.inits = initializers.get(kernel_initializer), initializers.get(bias_initializer)

    def weight_names(self):
        return ("kernel", "bias")

    def config_values(self):
        return {"output_shape": PythonTuple(self.partial_output_shape)}

    def build(self, shape, dtype):
        kernel, bias, _, contracted = _analyze(self.equation, self.bias_axes, shape, self.partial_output_shape)
        if None in kernel or bias is not None and None in bias:
            raise TdfValueError("Shapes used to initialize variables must be fully-defined (no `None` dimensions). "
                                f"Received: shape={tuple(kernel if None in kernel else bias)}")
        self.add_weight("kernel", tuple(kernel), _ByFans(self.inits[0], contracted), dtype)
        if bias is not None:
            self.add_weight("bias", tuple(bias), self.inits[1], dtype)

    def output_shape(self, shape):
        return tuple(_analyze(self.equation, self.bias_axes, shape, self.partial_output_shape)[2])

    def forward(self, interp, x, training):
        y = ops.einsum(self.equation, x, self.weights_["kernel"])
        if "bias" in self.weights_:
            y = add(y, self.weights_["bias"])
        return y if self.activation is None else self.activation(y)


LAYERS = [EinsumDense]
