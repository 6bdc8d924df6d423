"""``keras.optimizers.Optimizer``, the base a program's optimizer derives from (on CPython:
execution/keras_derived.py): Keras 3's BaseOptimizer machinery, whose step calls the subclass's ``update_step``.

A step is Keras's ``apply``: the subclass's ``build(var_list)`` on the first call (``super().build`` indexes the
variables and makes the moving averages of ``use_ema``), the gradients accumulated and clipped, the decoupled
weight decay, then ``update_step(gradient, variable, learning_rate)`` of each variable (its learning rate
Keras's: the learning_rate variable, or the schedule's rate at the step); the averages, the variables'
constraints and the count after. The subclass's state is what ``add_variable`` and ``add_variable_from_reference``
make (not trainable, in ``variables`` after ``iteration`` and ``learning_rate``); its updates write it with
``assign``, ``assign_add`` and ``assign_sub``."""
from __future__ import annotations

import numpy as np

from tapecli.errors import TdfTypeError, TdfValueError, UndefinedMethod
from tapecli.library.core import assign_value
from tapecli.library.keras import initializers
from tapecli.library.keras.common import auto_name, dims
from tapecli.library.keras.mixed_precision import LossScaleOptimizer
from tapecli.library.keras.optimizers import Optimizer, slot_prefix
from tapecli.runtime.context import current
from tapecli.runtime.tape import type_word
from tapecli.runtime.values import DType, Tensor, Variable


class _AnyOptimizer(type):
    """``isinstance(x, keras.optimizers.Optimizer)``: whether ``x`` is any of Keras's optimizers (an Adam, a
    LossScaleOptimizer, a program's subclass of the base)."""

    def __instancecheck__(cls, value) -> bool:
        return isinstance(value, (Optimizer, LossScaleOptimizer))


class BaseOptimizer(Optimizer, metaclass=_AnyOptimizer):
    """``keras.optimizers.Optimizer``: its ``update_step`` the subclass's (the program's override, called back)."""

    elementwise = False             # (each variable stepped by the subclass's update_step, never laid end to end)
    called_back = frozenset({"apply_gradients", "apply", "build", "update_step"})
    not_called_back = frozenset({"stateless_apply"})
    planned_methods: dict = {}      # (a step calls the program back: a loop plan makes the call itself again)

    def __init__(self, interp, learning_rate, weight_decay=None, clipnorm=None, clipvalue=None, global_clipnorm=None,
                 use_ema=False, ema_momentum=0.99, ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name=None):
        if loss_scale_factor is not None:
            raise TdfValueError("tapecli's keras.optimizers.Optimizer takes no loss_scale_factor",
                                hint="scale the loss yourself, or use keras.optimizers.LossScaleOptimizer")
        super().__init__(interp, learning_rate, weight_decay, clipnorm, clipvalue, global_clipnorm,
                         name or auto_name(interp, "optimizer"), gradient_accumulation_steps, use_ema, ema_momentum,
                         ema_overwrite_frequency)
        self.rng = interp.rng               # (the run's: add_variable's random initializers draw from it)
        self.built = False
        self.indices: dict[int, int] = {}       # by variable id: its place in build's list (_get_variable_index)
        self.made: list[Variable] = []          # what add_variable made, in order
        self.accumulators: list[Variable] = []  # with gradient_accumulation_steps: the gradients summed, by index

    def python_class(self) -> str:
        return "keras.src.optimizers.optimizer.Optimizer"

    def attributes(self):
        return {**super().attributes(), "built": lambda: self.built}

    def methods(self):
        return {**super().methods(), "build": self.build, "update_step": self.update_step,
                "add_variable": self.add_variable, "add_variable_from_reference": self.add_variable_from_reference,
                "assign": self.assign, "assign_add": self.assign_add, "assign_sub": self.assign_sub}

    # --------------------------------------------------------------------- the subclass's state
    def build(self, variables):
        """Keras's ``super().build(var_list)``: each variable's place in the list, the moving averages."""
        if not isinstance(variables, (list, tuple)) or not all(isinstance(v, Variable) for v in variables):
            raise TdfTypeError("build takes a list of variables", hint="opt.build(model.trainable_variables)")
        self.build_averages(variables)
        self.indices = {v.id: i for i, v in enumerate(variables)}
        if self.accumulation is not None:
            self.accumulators = [self.add_variable_from_reference(v, "gradient_accumulator") for v in variables]
        self.built = True

    def variable_index(self, variable) -> int:
        """Keras's ``_get_variable_index``: the variable's place in the list the optimizer was built with."""
        found = self.indices.get(getattr(variable, "id", None))
        if found is None:
            raise TdfValueError(f"Unknown variable: {getattr(variable, 'name', variable)}. This optimizer can only "
                                "be called for the variables it was originally built with.")
        return found

    def add_variable(self, shape, initializer="zeros", dtype=None, aggregation="none", layout=None, name=None):
        """A variable of the optimizer's (not trainable), its path under the optimizer's name."""
        want = current().settings.float_dtype if dtype is None else \
            np.dtype((dtype if isinstance(dtype, DType) else DType(dtype)).np)
        return self._made(list(dims(shape)), initializer, want, name or "variable")

    def add_variable_from_reference(self, reference_variable, name=None, initializer="zeros"):
        """A variable of the reference variable's shape and dtype, named after its path (``dense_kernel_m``)."""
        reference = _variable(reference_variable, "add_variable_from_reference")
        return self._made(list(reference.shape), initializer, reference.dtype,
                          f"{slot_prefix(reference)}_{name or 'var'}")

    def _made(self, shape: list, initializer, dtype: np.dtype, name: str) -> Variable:
        value = initializers.get(initializer).make(shape, self.rng, dtype)
        made = Variable(f"{self.name}/{name}", np.asarray(value, dtype), trainable=False, tf_name=name,
                        keras=f"{self.name}/{name}")
        self.made.append(made)
        return made

    def keras_variables(self) -> list:
        """``iteration``, ``learning_rate`` (unless a schedule gives it), the moving averages, then the variables
        made by add_variable in order (the gradient accumulators of build, the subclass's own)."""
        counted = super().keras_variables()
        return counted + self.made

    def owned_variables(self):
        return list(self.made)

    def assign(self, variable, value):
        """Keras's ``self.assign(variable, value)``: the variable's own assign (those below likewise)."""
        assign_value(_variable(variable, "assign"), "assign", value)

    def assign_add(self, variable, value):
        assign_value(_variable(variable, "assign_add"), "assign_add", value)

    def assign_sub(self, variable, value):
        assign_value(_variable(variable, "assign_sub"), "assign_sub", value)

    def update_step(self, gradient, variable, learning_rate):
        raise UndefinedMethod(f"the optimizer {self.name!r} has no update_step(gradient, variable, learning_rate): a "
                              "subclass of keras.optimizers.Optimizer defines it")

    # --------------------------------------------------------------------- applying
    def accumulate(self, variables, arrays):
        """Keras's gradient accumulation (the base's), its sums the ``gradient_accumulator`` variables build made."""
        held = [self.accumulators[self.variable_index(v)] for v in variables]
        self.accumulated = {v.id: np.array(total.read().value) for v, total in zip(variables, held)}
        found = super().accumulate(variables, arrays)
        for v, total in zip(variables, held):
            total.assign(self.accumulated[v.id])
        return found

    def step(self, variables, grads, flat=None, row_squares=None, compiled=False):
        """Keras's apply of the gradients' arrays: see the module's docstring."""
        if not self.built:
            self.build(list(variables))         # (the subclass's, where it overrides it)
        arrays = [np.asarray(g, dtype=v.dtype) for g, v in zip(grads, variables)]
        if self.accumulation is not None:
            arrays = self.accumulate(variables, arrays)
            if arrays is None:
                return self.finished(variables)
        arrays = self.clip(arrays)
        lr = self.current_lr()
        for v in variables:
            if self.decays(v):
                v.assign(self.decayed(v.read().value, lr))
        rate = self.learning_rate()
        for g, v in zip(arrays, variables):
            self.update_step(Tensor(g), v, rate)
        return self.finished(variables)


def _variable(value, how: str) -> Variable:
    if not isinstance(value, Variable):
        raise TdfTypeError(f"an optimizer's {how} takes a variable, got {type_word(value)}")
    return value
