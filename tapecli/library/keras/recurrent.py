"""Keras 3's recurrent layers: the cells SimpleRNNCell, LSTMCell, GRUCell (one timestep each), a program's own cell
and StackedRNNCells, the layer RNN that runs a cell over a sequence (masks, ``go_backwards``, ``initial_state``), and
SimpleRNN, LSTM, GRU (an RNN of their cell, as Keras's). Composed from recorded ops so gradients flow as TensorFlow's do."""
from __future__ import annotations

import numpy as np

from tapecli import ops
from tapecli.errors import ShapeError, TdfTypeError, TdfValueError
from tapecli.library.keras import initializers
from tapecli.library.keras.configs import deserialize_layer, layer_config, serialize_held
from tapecli.library.keras.common import add, flag, float_dtype, integer, name_scope, scalar, tensor, weight_path
from tapecli.library.keras.layers import Layer, activation_fn, eager_mask, keep_mask
from tapecli.library.keras.keras_tensor import KerasTensor, mask_at
from tapecli.interpreter.classes import KERAS, Instance, call_method
from tapecli.interpreter.objects import Function
from tapecli.runtime.context import current
from tapecli.runtime.tape import type_word
from tapecli.runtime.values import PythonBool, PythonTuple, Tensor, Variable

_ALL = slice(None)


def _act(f, x):
    return x if f is None else f(x)


class _Cell(Layer):
    """One timestep of a recurrent layer: ``step(x_t, states)`` gives (output, new states), the states a list."""
    replayable = True
    gates = 1

    def _setup(self, units, activation, recurrent_activation, use_bias, inits, seed, generator_first=False,
               what="units"):
        """Keras's cell constructor, its draws of Python's random in its order: a SeedGenerator (for dropout,
        made whatever the rate, its seed drawn unless ``seed`` is given: before the initializers in SimpleRNNCell and
        ConvLSTMCell, after them in LSTMCell and GRUCell). ``what``: the argument giving the units (a ConvLSTMCell's
        filters)."""
        if generator_first:
            self.generator = initializers.SeedGenerator(seed)
        self.units = integer(units, what)
        if self.units <= 0:
            raise TdfValueError(f"Received an invalid value for argument `{what}`, expected a positive integer, "
                                f"got {self.units}.")
        self.activation = activation_fn(activation, self.interp)
        self.recurrent_activation = activation_fn(recurrent_activation, self.interp)
        self.use_bias = flag(use_bias)
        self.inits = [initializers.get(i) for i in inits]
        if not generator_first:
            self.generator = initializers.SeedGenerator(seed)

    def weight_names(self):
        return ("kernel", "recurrent_kernel", "bias")

    @property
    def state_size(self) -> list:
        return [self.units]

    def bias_shape(self):
        return (self.gates * self.units,)

    def kernel_shapes(self, shape) -> tuple:
        """The shapes of its kernel and recurrent kernel for a step's input shape."""
        g = self.gates * self.units
        return (shape[-1], g), (self.units, g)

    def bias_initializer(self):
        return self.inits[2]

    def build(self, shape, dtype):
        kernel, recurrent = self.kernel_shapes(shape)
        self.add_weight("kernel", kernel, self.inits[0], dtype)
        self.add_weight("recurrent_kernel", recurrent, self.inits[1], dtype)
        if self.use_bias:
            self.add_weight("bias", self.bias_shape(), self.bias_initializer(), dtype)

    def zero_state(self, batch, dtype) -> list:
        return [Tensor(np.zeros((batch, size), dtype=dtype)) for size in self.state_size]

    def call(self, interp, args, kwargs, node):
        """``cell(x_t, states)``: (output, new states), the states a list where they were given as one (Keras's)."""
        kwargs = dict(kwargs)
        kwargs.pop("training", None)
        given = list(args) + [kwargs.pop(k) for k in ("inputs", "states") if k in kwargs]
        if len(given) != 2 or kwargs:
            raise TdfTypeError(f"a {type(self).__name__} is called with an input and its states: cell(x, states)")
        x, states = tensor(given[0]), given[1]
        if x.ndim != 2:
            raise ShapeError(f"{type(self).__name__} takes inputs of shape [batch, features], got {list(x.shape)}")
        self.build_for(x.shape, float_dtype())
        listed = isinstance(states, (list, tuple))
        output, new = self.step(ops.cast(x, self.weights_["kernel"].dtype), self.given_states(states))
        return output, (new if listed or len(new) > 1 else new[0])

    def given_states(self, states) -> list:
        return [tensor(s) for s in states] if isinstance(states, (list, tuple)) else [tensor(states)]


class SimpleRNNCell(_Cell):
    prefix = "simple_rnn_cell"

    def __init__(self, interp, units, activation="tanh", use_bias=True, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros", seed=None, **kw):
        super().__init__(interp, **kw)
        self._setup(units, activation, None, use_bias, (kernel_initializer, recurrent_initializer, bias_initializer),
                    seed, generator_first=True)

    def step(self, x_t, states):
        w = self.weights_
        z = ops.matmul(x_t, w["kernel"])
        if not self.use_bias:
            z = ops.add(z, ops.matmul(states[0], w["recurrent_kernel"]))
        elif current().functions > 0 and z.dtype == np.float32:
            # In a tf.function Grappler's remapper fuses MatMul, BiasAdd and the Add after them into one
            # _FusedMatMul, which adds the other operand first: (x K + h U) + b (the gradients are the ops' own)
            z = add(ops.add(z, ops.matmul(states[0], w["recurrent_kernel"])), w["bias"])
        else:       # (keras.ops.add: a bias's is tf.nn.bias_add; Keras's + below is tf.add)
            z = ops.add(add(z, w["bias"]), ops.matmul(states[0], w["recurrent_kernel"]))
        out = _act(self.activation, z)
        return out, [out]


class LSTMCell(_Cell):
    prefix = "lstm_cell"
    gates = 4

    def __init__(self, interp, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal", bias_initializer="zeros",
                 unit_forget_bias=True, seed=None, **kw):
        super().__init__(interp, **kw)
        self._setup(units, activation, recurrent_activation, use_bias,
                    (kernel_initializer, recurrent_initializer, bias_initializer), seed)
        self.unit_forget_bias = flag(unit_forget_bias)

    @property
    def state_size(self):
        return [self.units, self.units]

    def bias_initializer(self):
        return _UnitForgetBias(self.inits[2]) if self.unit_forget_bias else self.inits[2]

    def given_states(self, states):
        if not isinstance(states, (list, tuple)) or len(states) != 2:
            raise TdfValueError("an LSTMCell's states are a list of two tensors: [h, c]")
        return super().given_states(states)

    def step(self, x_t, states):
        h, c = states
        w, u = self.weights_, self.units
        z = add(ops.matmul(x_t, w["kernel"]), ops.matmul(h, w["recurrent_kernel"]))     # (keras.ops.add's)
        if self.use_bias:
            z = add(z, w["bias"])
        return self.update([ops.getitem(z, (_ALL, slice(k * u, (k + 1) * u))) for k in range(4)], c)

    def update(self, z, c):
        """The new states (h, c) of the gates' inputs z (input, forget, cell, output) and the carry c."""
        ra = self.recurrent_activation
        i, f, o = _act(ra, z[0]), _act(ra, z[1]), _act(ra, z[3])
        c = ops.add(ops.mul(f, c), ops.mul(i, _act(self.activation, z[2])))
        h = ops.mul(o, _act(self.activation, c))
        return h, [h, c]


class _UnitForgetBias(initializers.Initializer):
    """An LSTM's bias with unit_forget_bias, as Keras makes it: the bias initializer's values for the input gate,
    ones for the forget gate, then its values (drawn again, from the same seed) for the cell and output gates."""
    seeded = False          # (no seed of its own: the initializer it wraps has its)

    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def make(self, shape, rng, dtype):
        units = shape[0] // 4
        return np.concatenate([self.inner.make((units,), rng, dtype), np.ones(units, dtype),
                               self.inner.make((2 * units,), rng, dtype)])


class GRUCell(_Cell):
    prefix = "gru_cell"
    gates = 3

    def __init__(self, interp, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal", bias_initializer="zeros",
                 reset_after=True, seed=None, **kw):
        super().__init__(interp, **kw)
        self._setup(units, activation, recurrent_activation, use_bias,
                    (kernel_initializer, recurrent_initializer, bias_initializer), seed)
        self.reset_after = flag(reset_after)

    def bias_shape(self):
        return (2, 3 * self.units) if self.reset_after else (3 * self.units,)

    def step(self, x_t, states):
        h = states[0]
        w, u = self.weights_, self.units

        def cols(t, k, n=1):
            return ops.getitem(t, (_ALL, slice(k * u, (k + n) * u)))
        mx = ops.matmul(x_t, w["kernel"])
        rk = w["recurrent_kernel"]
        rec_bias = None
        if self.use_bias:
            if self.reset_after:    # (Keras splits the bias each step: one gradient of it a step, its rows' joined)
                bias = ops.identity(w["bias"])
                mx = add(mx, ops.getitem(bias, 0))        # (keras.ops.add's; the recurrent bias's is +)
                rec_bias = ops.getitem(bias, 1)
            else:
                mx = add(mx, w["bias"])
        if self.reset_after:
            inner = ops.matmul(h, rk)
            if rec_bias is not None:
                inner = ops.add(inner, rec_bias)
        else:
            inner = ops.matmul(h, ops.getitem(rk, (_ALL, slice(0, 2 * u))))
        ra = self.recurrent_activation
        z = _act(ra, ops.add(cols(mx, 0), cols(inner, 0)))
        r = _act(ra, ops.add(cols(mx, 1), cols(inner, 1)))
        if self.reset_after:
            rh = ops.mul(r, cols(inner, 2))
        else:
            rh = ops.matmul(ops.mul(r, h), ops.getitem(rk, (_ALL, slice(2 * u, 3 * u))))
        hh = _act(self.activation, ops.add(cols(mx, 2), rh))
        one = scalar(1.0, hh.dtype)
        new = ops.add(ops.mul(z, h), ops.mul(ops.sub(one, z), hh))
        return new, [new]


class ProgramCell(Layer):
    """A program's Layer subclass as a cell (Keras's RNN takes any layer with ``call`` and ``state_size``): its
    ``state_size`` (an int or a list of them), ``output_size`` (else the first state's size), ``build(input_shape)``
    called once with a step's input shape, ``get_initial_state(batch_size)`` where it has one (else zeros), and
    ``call(inputs, states)`` giving ``(output, new_states)`` at each step, ``states`` a tuple as Keras's TensorFlow
    backend passes them."""
    replayable = False          # (the program's own code at each step)

    def __init__(self, interp, instance):       # (the instance keeps its own name)
        self.interp, self.instance = interp, instance
        self.given = self.bound = self.path = self.input_shape = None
        self.weights_, self.built, self.trainable, self.rng = {}, False, True, interp.rng
        found = self.attribute("state_size")
        if found is None:
            raise TdfValueError("The RNN cell should have a `state_size` attribute (single integer or list of "
                                "integers, one integer per RNN state). Received: cell=an object")
        sizes = found if isinstance(found, (list, tuple)) else [found]
        self.sizes = [integer(size, "state_size") for size in sizes]

    def attribute(self, name):
        if name in self.instance.attrs or self.instance.cls.find(name)[1] is not None:
            return self.instance.get_attribute(self.interp, name, None)
        return None

    def as_program(self):
        return self.instance

    def display(self) -> str:
        return self.instance.keras_name or self.instance.label

    @property
    def state_size(self) -> list:
        return list(self.sizes)

    @property
    def units(self) -> int:
        found = self.attribute("output_size")
        return self.sizes[0] if found is None else integer(found, "output_size")

    @property
    def weights(self):
        own = self.instance.owned_variables()
        return [v for v in own if v.trainable] + [v for v in own if not v.trainable]

    def build_for(self, shape, dtype) -> None:
        """Keras's RNN.build: the cell's ``build`` of a step's input shape (a tuple, None for an unknown size)."""
        if getattr(self.instance, "keras_built", False):
            return
        self.instance.keras_built = self.built = True
        build, owner = self.instance.cls.find("build")
        if isinstance(build, Function):
            dims = PythonTuple(None if d is None else Tensor(np.array(d, np.int64), weak=True) for d in shape)
            with name_scope(self.interp, self.display()):
                call_method(self.interp, build, owner, self.instance, [dims], {}, None)

    def zero_state(self, batch, dtype) -> list:
        if self.attribute("get_initial_state") is None:
            return [Tensor(np.zeros((batch, size), dtype=dtype)) for size in self.sizes]
        given = self.interp.call_value(self.attribute("get_initial_state"), [],
                                       {"batch_size": Tensor(np.array(batch, np.int64), weak=True)})
        return [tensor(s) for s in given] if isinstance(given, (list, tuple)) else [tensor(given)]

    def step(self, x_t, states):
        got = self.instance.call(self.interp, [x_t, PythonTuple(states)], {}, None)
        if not isinstance(got, (list, tuple)) or len(got) != 2:
            raise TdfTypeError("a cell's call(inputs, states) returns (output, new_states)")
        output, new = got
        return tensor(output), [tensor(s) for s in new] if isinstance(new, (list, tuple)) else [tensor(new)]


def _cell(value, interp):
    if isinstance(value, dict):             # (a serialized cell: from_config's)
        value = deserialize_layer(interp, value)
    if isinstance(value, (list, tuple)):
        return StackedRNNCells(interp, list(value))
    if isinstance(value, Layer):            # (a program's layer as a model holds it: its instance)
        value = value.as_program()
    if isinstance(value, Instance) and value.cls.framework == KERAS and value.cls.role is None \
            and value.cls.find("call")[1] is not None:
        return ProgramCell(interp, value)
    if not isinstance(value, (_Cell, StackedRNNCells)):
        raise TdfValueError(f"Argument `cell` should have a `call` method. Received: cell={type_word(value)}")
    return value


class StackedRNNCells(Layer):
    """Cells one over the other: each cell's output the next one's input; the states a list per cell."""
    replayable = True
    prefix = "stacked_rnn_cells"

    def __init__(self, interp, cells, **kw):
        super().__init__(interp, **kw)
        self.cells = [_cell(c, interp) for c in (cells if isinstance(cells, (list, tuple)) else [cells])]

    @property
    def state_size(self):
        return [c.state_size for c in self.cells]

    def get_config(self):
        return {**layer_config(self), "cells": [serialize_held(c) for c in self.cells]}

    @property
    def units(self):            # (its output's size: the last cell's)
        return self.cells[-1].units

    @property
    def weights(self):
        return [v for c in self.cells for v in c.weights]

    def sublayers(self) -> list:
        return self.cells

    def build(self, shape, dtype):
        with name_scope(self.interp, self.given or self.auto):
            for c in self.cells:
                c.build_for(shape, dtype)
                shape = (shape[0], c.units)

    def zero_state(self, batch, dtype):
        return [c.zero_state(batch, dtype) for c in self.cells]

    def step(self, x_t, states):
        new = []
        for c, s in zip(self.cells, states):
            x_t, s = c.step(x_t, s)
            new.append(s)
        return x_t, new


class _WhileLoopReads:
    """Inside a tf.function, Keras's TensorFlow backend runs the timesteps as a tf.while_loop, whose gradient
    (while_v2) passes each weight the body reads on from one iteration to the next: a weight's gradient is its
    steps' added one at a time, the last step's first (TensorFlow's eager tape sums them at once, in AddN's order).
    So there each step reads its cells' weights as the step before read them, passed on (an identity): the same
    sums. (A program's own cell reads its weights itself: its steps' gradients are summed as eager ones.)"""

    def __init__(self, cell):
        self.cells = _built_in_cells(cell)
        self.held = [c.weights_ for c in self.cells]

    def next_iteration(self) -> None:
        for c in self.cells:
            c.weights_ = {short: ops.identity(w) for short, w in c.weights_.items()}

    def restore(self) -> None:
        for c, held in zip(self.cells, self.held):
            c.weights_ = held


def _built_in_cells(cell) -> list:
    if isinstance(cell, StackedRNNCells):
        return [c for held in cell.cells for c in _built_in_cells(held)]
    return [cell] if isinstance(cell, _Cell) else []


def _masked(keep, new, old):
    """Where a step is masked, the old value (a state carried over, the previous output): Keras's tf.where."""
    if isinstance(new, list):
        return [_masked(keep, n, o) for n, o in zip(new, old)]
    return ops.where(Tensor(np.broadcast_to(keep, new.shape)), new, old)


def _step_mask(mask, ndim):
    """A mask [batch, timesteps, ...] as Keras's TensorFlow backend expands each step's to its output's rank (a
    Masking layer's mask of a ConvLSTM's [batch, timesteps, *spatial, channels] masks each pixel)."""
    return mask.reshape(mask.shape + (1,) * (ndim - mask.ndim))


def _flat(states) -> list:
    return [t for s in states for t in (_flat(s) if isinstance(s, list) else [s])]


class _Recurrent(Layer):
    """A layer running its cell over the timesteps of [batch, timesteps, features] (Keras's RNN.call)."""
    replayable = True
    takes_mask = True
    supports_masking = True
    runs_program = False            # its cell is a program's (ProgramCell), or holds one
    ndim = 3                        # its input's: [batch, timesteps, *a step's shape]

    def __init__(self, interp, return_sequences=False, return_state=False, go_backwards=False, unroll=False,
                 zero_output_for_mask=False, stateful=False, **kw):
        super().__init__(interp, **kw)
        # stateful: the final states of a call are the next call's initial ones, kept in variables (not weights)
        self.stateful, self.states = flag(stateful), None
        if self.stateful:
            self.replayable = False
        self.return_state = flag(return_state)
        if self.return_state:
            self.replayable = False        # (a list of results: a loop plan takes one tensor from a layer)
        self.return_sequences, self.go_backwards = flag(return_sequences), flag(go_backwards)
        self.zero_output_for_mask = flag(zero_output_for_mask)
        self.unroll = flag(unroll)         # (unrolled or not, the same steps; a program's cell is called once more)

    @property
    def weights(self):
        return self.cell.weights

    def sublayers(self) -> list:
        return [self.cell]

    @property
    def weights_(self):                 # (its weights are its cell's, named by the layer: lstm.kernel)
        return self.cell.weights_

    @weights_.setter
    def weights_(self, value):
        pass

    def weight_names(self):
        return self.cell.weight_names()

    def config(self):
        flags = {k: lambda k=k: PythonBool(np.array(getattr(self, k)))
                 for k in ("return_sequences", "return_state", "go_backwards", "zero_output_for_mask")}
        return {**flags, "cell": lambda: self.cell,
                "units": lambda: Tensor(np.array(self.cell.units, np.int64), weak=True)}

    def rename(self):
        for v in self.weights:
            v.name = f"{self.display()}.{v.name.rsplit('.', 1)[-1]}"

    def check_input(self, x, name=None):
        self.check_shape(x.shape, name)

    def check_shape(self, shape, name=None):
        if len(shape) != self.ndim:         # (Keras's InputSpec(ndim=...))
            raise TdfValueError(f"Input 0 with name 'None' of layer '{name or self.given or self.auto}' is "
                                f"incompatible with the layer: expected ndim={self.ndim}, found ndim={len(shape)}. Full shape "
                                f"received: {tuple(shape)}")

    def build(self, shape, dtype):
        self.check_shape(shape)
        with name_scope(self.interp, self.given or self.auto):
            self.cell.build_for((shape[0], *shape[2:]), dtype)
            if self.stateful:
                if shape[0] is None:
                    raise TdfValueError(f"When using `stateful=True` in a RNN, the batch size must be static. Found "
                                        f"dynamic batch size: sequence.shape={tuple(shape)}")
                self.states = [Variable(f"{self.display()}.rnn_state", np.asarray(s.value), trainable=False,
                                        tf_name="rnn_state", keras=weight_path(self.interp, self.given or self.auto, "rnn_state"))
                               for s in _flat(self.cell.zero_state(shape[0], dtype))]
        self.rename()

    def reset_states(self):
        """Keras's ``reset_states()`` (and ``reset_state()``): a stateful layer's states back to zeros."""
        for v in self.states or []:
            v.assign(np.zeros(v.shape, v.dtype))

    def methods(self):
        return {**super().methods(), "reset_states": self.reset_states, "reset_state": self.reset_states}

    def attributes(self):
        return {**super().attributes(), "states": lambda: self.states, "stateful": lambda: PythonBool(
            np.array(self.stateful))}

    def output_shape(self, shape):
        if self.return_state:
            raise TdfValueError(f"{type(self).__name__}(return_state=True) gives several outputs: call it on a "
                                "Keras tensor of a functional model, or on a tensor")
        return self.output_shapes(shape)[0]

    def output_shapes(self, shape) -> list:
        """The shapes of its output and, with return_state, of its final states."""
        if self.return_state and isinstance(self.cell, StackedRNNCells):
            raise TdfValueError("tapecli gives a StackedRNNCells' states (a list per cell) on tensors only",
                                hint="call the layer on a tensor")
        units = self.cell.units
        out = (shape[0], shape[1], units) if self.return_sequences else (shape[0], units)
        return [out, *[(shape[0], size) for size in _flat(self.cell.state_size)]] if self.return_state else [out]

    def compute_mask(self, x, mask):
        """Keras's RNN.compute_mask: the mask of its sequence output (none of a last step's), and none of each final
        state's."""
        mask = next(iter(_flat(mask)), None) if isinstance(mask, (list, tuple)) else mask
        out = mask if self.return_sequences else None
        return [out] + [None] * len(_flat(self.cell.state_size)) if self.return_state else out

    def replay_kind(self, args, kwargs, tracked):
        # (a mask or initial state is read into the steps: a loop plan does not replay such a call)
        return None if kwargs.get("mask") is not None or kwargs.get("initial_state") is not None else \
            Layer.replay_kind(self, args, kwargs, tracked)

    def call(self, interp, args, kwargs, node):
        """``layer(x, mask=None, initial_state=None, training=None)``, on tensors or on Keras tensors (also
        Bidirectional's)."""
        kwargs = dict(kwargs)
        extra = {k: kwargs.pop(k) for k in ("mask", "initial_state") if kwargs.get(k) is not None}
        training = kwargs.pop("training", None)
        x = args[0] if args else kwargs.pop("inputs", None)
        if x is None or len(args) > 1 or kwargs:
            raise TdfTypeError("a recurrent layer is called as layer(x, mask=None, initial_state=None)")
        if isinstance(x, KerasTensor):
            return self.symbolic_call(x, extra)
        if "mask" not in extra and eager_mask(interp, x) is not None:     # (the mask Keras attached to x)
            extra["mask"] = eager_mask(interp, x)
        out = self.apply(interp, x, None if training is None else flag(training), **extra)
        mask = self.output_mask(x, extra.get("mask"))
        for i, o in enumerate(out if isinstance(out, list) else [out]):
            keep_mask(interp, o, mask_at(mask, i))
        return out

    def symbolic_call(self, x, extra):
        """The Keras tensors of a call in a functional graph: its initial states are inputs of the call after x,
        and with return_state its outputs are several Keras tensors of the one call."""
        states = extra.get("initial_state")
        states = [] if states is None else list(states) if isinstance(states, (list, tuple)) else [states]
        if "mask" in extra or not all(isinstance(s, KerasTensor) for s in states):
            raise TdfValueError(f"{type(self).__name__}: in a functional model, the mask comes from the layers "
                                "before, and initial states are Keras tensors", hint="call the layer on tensors")
        floatx = float_dtype()
        self.build_for(x.shape, floatx)
        shapes = self.output_shapes(x.shape)
        outs = [KerasTensor(shape, floatx, self, [x, *states]) for shape in shapes]
        if len(outs) > 1:
            for i, out in enumerate(outs):
                out.index, out.siblings = i, outs
        self.symbolic = (x, outs if len(outs) > 1 else outs[0])
        return outs if len(outs) > 1 else outs[0]

    def forward(self, interp, x, training, mask=None, initial_state=None):
        steps = x.shape[1]
        if not steps:
            raise ShapeError(f"{type(self).__name__} needs at least one timestep")
        if self.stateful and x.shape[0] != self.states[0].shape[0]:
            raise TdfValueError(f"If an RNN is stateful, the batch size of the input sequences must be the same as the "
                                f"batch size of the initial state. \n- Expected batch size: "
                                f"{self.states[0].shape[0]}\n- Received batch size: {x.shape[0]}")
        if initial_state is None:
            states = self.initial([v.read() for v in self.states], x.dtype) if self.stateful else \
                self.cell.zero_state(x.shape[0], x.dtype)
        else:
            states = self.initial(initial_state, x.dtype)
        keep = None if mask is None else _step_mask(np.asarray(tensor(mask).value).astype(bool), x.ndim)
        order = range(steps - 1, -1, -1) if self.go_backwards else range(steps)
        if self.runs_program and not self.unroll:   # (Keras's TensorFlow while loop calls the cell once first, on
            self.cell.step(ops.getitem(x, (_ALL, order[0])), states)     # the first step, for its output's shape)
        outputs, previous = [], None
        loop = _WhileLoopReads(self.cell) if current().functions > 0 and not self.unroll else None
        try:
            for t in order:
                if loop is not None:
                    loop.next_iteration()
                output, new = self.cell.step(ops.getitem(x, (_ALL, t)), states)
                if keep is not None:
                    if previous is None or self.zero_output_for_mask:
                        previous = Tensor(np.zeros(output.shape, dtype=output.dtype))
                    output, new = _masked(keep[:, t], output, previous), _masked(keep[:, t], new, states)
                outputs.append(output)
                previous, states = output, new
        finally:
            if loop is not None:
                loop.restore()
        output = ops.stack(outputs, axis=1) if self.return_sequences else outputs[-1]
        if self.stateful:
            for v, state in zip(self.states, _flat(states)):
                v.assign(np.asarray(state.value, v.dtype))
        if self.return_state:           # the output, then the final states (an LSTM's: h, then the carry c)
            return [output, *states]
        return output

    def initial(self, given, dtype) -> list:
        """``initial_state=``: a tensor or a list of them, one per state of the cell, as the cell keeps them."""
        given = [ops.cast(tensor(s), dtype) for s in (given if isinstance(given, (list, tuple)) else [given])]
        sizes = self.cell.state_size
        if len(given) != len(_flat(sizes)):
            raise TdfValueError(f"{type(self).__name__} expects {len(_flat(sizes))} initial states, got "
                                f"{len(given)}")
        if isinstance(self.cell, StackedRNNCells):
            out = []
            for size in sizes:
                out.append(given[:len(size)])
                given = given[len(size):]
            return out
        return given


class RNN(_Recurrent):
    prefix = "rnn"

    def __init__(self, interp, cell, **kw):
        self.cell = _cell(cell, interp)
        super().__init__(interp, **kw)
        held = self.cell.cells if isinstance(self.cell, StackedRNNCells) else [self.cell]
        self.runs_program = any(isinstance(c, ProgramCell) for c in held)

    def get_config(self):
        return {**layer_config(self), "cell": serialize_held(self.cell)}


class SimpleRNN(_Recurrent):
    prefix = "simple_rnn"

    def __init__(self, interp, units, activation="tanh", use_bias=True, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros", **kw):
        self.cell = SimpleRNNCell(interp, units, activation, use_bias, kernel_initializer, recurrent_initializer,
                                  bias_initializer, kw.get("seed"), name="simple_rnn_cell")
        super().__init__(interp, **kw)


class LSTM(_Recurrent):
    prefix = "lstm"

    def __init__(self, interp, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal", bias_initializer="zeros",
                 unit_forget_bias=True, **kw):
        self.cell = LSTMCell(interp, units, activation, recurrent_activation, use_bias, kernel_initializer,
                             recurrent_initializer, bias_initializer, unit_forget_bias, kw.get("seed"), name="lstm_cell")
        super().__init__(interp, **kw)


class GRU(_Recurrent):
    prefix = "gru"

    def __init__(self, interp, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal", bias_initializer="zeros",
                 reset_after=True, **kw):
        self.cell = GRUCell(interp, units, activation, recurrent_activation, use_bias, kernel_initializer,
                            recurrent_initializer, bias_initializer, reset_after, kw.get("seed"), name="gru_cell")
        super().__init__(interp, **kw)


LAYERS = [SimpleRNN, LSTM, GRU, SimpleRNNCell, LSTMCell, GRUCell, StackedRNNCells, RNN]
