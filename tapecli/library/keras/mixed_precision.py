"""Keras 3's mixed precision (keras/src/dtype_policies/dtype_policy.py): a dtype policy names the dtype a layer
computes in and the dtype it keeps its variables in; the run's global policy (RunContext.keras_dtype_policy,
float32 at each run's start) is what a layer made without ``dtype=`` takes."""
from __future__ import annotations

import numpy as np

from tapecli import ops
from tapecli.errors import TdfTypeError, TdfValueError
from tapecli.library.keras.optimizers import Optimizer
from tapecli.library.keras.common import KerasObject, auto_name, flag, float_dtype, integer, scalar, tensor, written
from tapecli.runtime.context import current
from tapecli.runtime.tape import type_word
from tapecli.runtime.values import DType, Tensor, Variable, dtype_name

# a mixed policy's (compute, variable) dtypes
_MIXED = {"mixed_float16": ("float16", "float32"), "mixed_bfloat16": ("bfloat16", "float32")}
_FLOATS = ("float16", "float32", "float64", "bfloat16")


class DTypePolicy(KerasObject):
    kind_word = "a dtype policy"

    def __init__(self, name=None):
        name = global_policy().name if name is None else getattr(name, "name", name)
        if not isinstance(name, str):
            raise TdfTypeError(f"'name' must be a string, such as 'mixed_float16'. Received: name={name}")
        if name not in _MIXED and name not in _FLOATS:
            raise TdfValueError(f"Cannot convert '{name}' to a mixed precision DTypePolicy. Valid policies include "
                                "'mixed_float16', 'mixed_bfloat16', and the name of any float dtype such as "
                                "'float32'.")
        self.name = name
        self.compute_name, self.variable_name = _MIXED.get(name, (name, name))

    @property
    def compute_dtype(self) -> np.dtype:
        return DType(self.compute_name).np

    @property
    def variable_dtype(self) -> np.dtype:
        return DType(self.variable_name).np

    @property
    def mixed(self) -> bool:
        """Whether a layer of this policy casts its variables to another dtype to compute."""
        return self.compute_name != self.variable_name

    def attributes(self):
        return {"name": self.name, "compute_dtype": self.compute_name, "variable_dtype": self.variable_name,
                "quantization_mode": None}

    def methods(self):
        return {"get_config": lambda: {"name": self.name}}

    def python_class(self) -> str:
        return "keras.src.dtype_policies.dtype_policy.DTypePolicy"

    def python_text(self) -> str:
        return f'<DTypePolicy "{self.name}">'

    def __eq__(self, other):
        return isinstance(other, DTypePolicy) and other.name == self.name

    def __hash__(self):
        return hash(self.name)


def global_policy() -> DTypePolicy:
    """keras.mixed_precision.global_policy (keras.config.dtype_policy): the run's policy, made from floatx at
    its first reading as Keras makes it."""
    ctx = current()
    if ctx.keras_dtype_policy is None:
        ctx.keras_dtype_policy = DTypePolicy(dtype_name(float_dtype()))
    return ctx.keras_dtype_policy


def set_global_policy(policy) -> None:
    """keras.mixed_precision.set_global_policy (keras.config.set_dtype_policy)."""
    if not isinstance(policy, DTypePolicy):
        if not isinstance(policy, str):
            raise TdfValueError("Invalid `policy` argument. Expected the string name of a policy (such as "
                                "'mixed_float16') or a `DTypePolicy` instance.")
        policy = DTypePolicy(policy)
    current().keras_dtype_policy = policy


def layer_policy(dtype) -> DTypePolicy | None:
    """A layer's ``dtype=``: a policy, its name, a float DType or a serialized DTypePolicy (a config's); None
    (not given) is the global policy where a program set one, else None (floatx when it is read)."""
    if isinstance(dtype, dict):
        dtype = dtype.get("config", {}).get("name")
    if dtype is None:
        return current().keras_dtype_policy
    if isinstance(dtype, DTypePolicy):
        return dtype
    name = getattr(dtype, "name", dtype)
    if name not in _MIXED and name not in _FLOATS:
        raise TdfValueError(f"a layer's dtype is a float type (float16, float32, float64, bfloat16) or a mixed "
                            f"precision policy (mixed_float16, mixed_bfloat16), got {name!r}")
    return DTypePolicy(name)


def refuse_program_class(dtype, class_name: str) -> None:
    """A program's Layer or Model subclass made under a mixed policy: its call's own ops compute as written, not
    in the policy's compute dtype on inputs autocast to it as Keras's would: refused."""
    policy = layer_policy(dtype)
    if policy is not None and policy.mixed:
        raise TdfValueError(f"{class_name}, a program's Keras subclass, under the mixed precision policy "
                            f"{policy.name!r} is not in tapecli yet", hint='give it dtype="float32"')


FUNCTIONS = {f"{module}.{name}": fn for module in ("mixed_precision", "config")
             for name, fn in (("dtype_policy", global_policy), ("set_dtype_policy", set_global_policy))}
FUNCTIONS.update({"mixed_precision.global_policy": global_policy, "mixed_precision.set_global_policy": set_global_policy})
CLASSES = {"mixed_precision.DTypePolicy": DTypePolicy, "mixed_precision.Policy": DTypePolicy,
           "keras.DTypePolicy": DTypePolicy, "keras.FloatDTypePolicy": DTypePolicy,
           "dtype_policies.DTypePolicy": DTypePolicy, "dtype_policies.FloatDTypePolicy": DTypePolicy}


class LossScaleOptimizer(KerasObject):
    """Keras 3's LossScaleOptimizer (optimizers/loss_scale_optimizer.py): the loss is scaled by ``dynamic_scale``
    before its gradients are taken; a step with finite gradients divides them by it and steps the inner
    optimizer, doubling the scale after ``dynamic_growth_steps`` such steps in a row; a step with a nonfinite
    gradient is skipped and halves the scale."""

    kind_word = "an optimizer"
    prefix = "loss_scale_optimizer"
    # a step decides from the gradients' values (whether they are finite): a loop runs it as written
    replay_methods: dict = {}

    def __init__(self, interp, inner_optimizer, initial_scale=2.0 ** 15, dynamic_growth_steps=2000, name=None,
                 dynamic=True):
        if not flag(dynamic):
            raise TdfValueError("LossScaleOptimizer no longer supports `dynamic=False`. Instead, simply set "
                                "`loss_scale_factor` directly on the `inner_optimizer`.")
        if not isinstance(inner_optimizer, Optimizer):
            raise TdfTypeError(f"LossScaleOptimizer wraps an optimizer, got {type_word(inner_optimizer)}")
        self.inner = inner_optimizer
        self.initial_scale = written(initial_scale, "initial_scale")
        self.growth_steps = integer(dynamic_growth_steps, "dynamic_growth_steps")
        self.name = name or auto_name(interp, self.prefix)
        self.step_counter: Variable | None = None      # made by build, as Keras's
        self.dynamic_scale: Variable | None = None
        # Keras's Optimizer's own iteration and learning_rate (0), made with it and never stepped
        self.own = [Variable(f"{self.name}/iteration", np.array(0, np.int64), False, tf_name="iteration",
                             keras=f"{self.name}/iteration"),
                    Variable(f"{self.name}/learning_rate", np.array(0.0, np.float32), False, tf_name="learning_rate",
                             keras=f"{self.name}/learning_rate")]

    def built(self) -> bool:
        return self.dynamic_scale is not None

    def build(self, variables) -> None:
        self.step_counter = Variable(f"{self.name}/step_counter", np.array(0, np.int64), False,
                                     tf_name="step_counter", keras=f"{self.name}/step_counter")
        self.dynamic_scale = Variable(f"{self.name}/dynamic_scale", np.array(self.initial_scale, np.float32), False,
                                      tf_name="dynamic_scale", keras=f"{self.name}/dynamic_scale")
        self.inner.build(variables)

    def scale_loss(self, loss):
        """The loss times the scale (the initial scale, a Python float, until the optimizer is built)."""
        scale = self.dynamic_scale if self.built() else scalar(self.initial_scale)
        return ops.mul(tensor(loss, "the loss"), scale)

    def apply_gradients(self, grads_and_vars):
        pairs = list(grads_and_vars)
        return self.apply([p[0] for p in pairs], [p[1] for p in pairs])

    def apply(self, grads, trainable_variables=None):
        if not self.built():
            self.build(list(trainable_variables))
        present = [tensor(g, "a gradient") for g in grads if g is not None]
        if all(np.isfinite(g.value).all() for g in present):
            scale = self.dynamic_scale
            self.inner.apply([None if g is None else ops.div(tensor(g, "a gradient"), scale) for g in grads],
                             trainable_variables)
            count = int(self.step_counter.read().value)
            if count == self.growth_steps - 1:
                self.step_counter.assign(np.array(0, np.int64))
                self.dynamic_scale.assign(ops.mul(scale.read(), scalar(2.0)).value)
            else:
                self.step_counter.assign(np.array(count + 1, np.int64))
        else:
            self.step_counter.assign(np.array(0, np.int64))
            self.dynamic_scale.assign(ops.mul(self.dynamic_scale.read(), scalar(0.5)).value)
        return Tensor(np.array(self.inner.synced().iterations, np.int64))

    def attributes(self):
        out = {"name": self.name, "inner_optimizer": self.inner, "initial_scale": self.initial_scale,
               "dynamic_growth_steps": self.growth_steps, "built": self.built,
               "learning_rate": self.inner.learning_rate,
               "iterations": lambda: Tensor(np.array(self.inner.synced().iterations, np.int64)),
               "variables": lambda: self.own + ([self.step_counter, self.dynamic_scale] if self.built() else [])
               + self.inner.keras_variables()}
        if self.built():
            out.update({"dynamic_scale": self.dynamic_scale, "step_counter": self.step_counter})
        return out

    def set_attribute(self, interp, attr, value, node):
        if attr == "learning_rate":
            self.inner.set_learning_rate(value, interp)
            return
        super().set_attribute(interp, attr, value, node)

    def methods(self):
        return {"apply_gradients": self.apply_gradients, "apply": self.apply, "scale_loss": self.scale_loss,
                "build": self.build, "get_config": self.get_config,
                "finalize_variable_values": self.inner.finalize_variable_values}

    def finalize_variable_values(self, var_list):
        self.inner.finalize_variable_values(var_list)

    def get_config(self) -> dict:
        """Keras's: its inner optimizer serialized (serialize_keras_object's form)."""
        inner = {"module": "keras.optimizers", "class_name": self.inner.python_class_name(),
                 "config": self.inner.get_config(), "registered_name": None}
        return {"name": self.name, "inner_optimizer": inner, "initial_scale": self.initial_scale,
                "dynamic_growth_steps": self.growth_steps}

    def python_class(self) -> str:
        return "keras.src.optimizers.loss_scale_optimizer.LossScaleOptimizer"


def auto_scaled(interp, model_policy, optimizer):
    """Keras's compile under mixed_float16 (with ``auto_scale_loss``): the optimizer in a LossScaleOptimizer."""
    if model_policy is not None and model_policy.name == "mixed_float16" \
            and not isinstance(optimizer, LossScaleOptimizer):
        return LossScaleOptimizer(interp, optimizer, name="loss_scale_optimizer")
    return optimizer
OPTIMIZERS = {"mixed_precision.LossScaleOptimizer": LossScaleOptimizer,
              "optimizers.LossScaleOptimizer": LossScaleOptimizer}
