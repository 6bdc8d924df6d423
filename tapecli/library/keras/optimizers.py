"""Keras 3 optimizers: SGD, Adam, AdamW, RMSprop, Adagrad, with clipping, decoupled weight decay and
learning-rate schedules. ``apply_gradients`` is a state change (like ``assign_sub``): nothing is
recorded, and the slot variables are not trainable. Arithmetic follows Keras's update_step in the
variable's dtype, Python constants rounded to it as TensorFlow converts them (:func:`converted`).

An update writes its slots in place (``slot += step`` computes ``slot + step``: the same bits as a new
array). While no tape is open those are the slots' own arrays where nothing else holds them (the fast
path, counted in the run context's ``updated_in_place``); otherwise copies that become their values.
On the fast path, variables of ``FLAT_ELEMENTS`` elements or fewer in all are stepped together, laid end
to end (``Optimizer.step_flat``): the same bits in a dozen NumPy calls, not a dozen per variable; their
slots stay laid end to end from step to step (``_LaidOut``), written in place while nothing else holds them."""
from __future__ import annotations

import re
import sys

import numpy as np

from tapecli.errors import ShapeError, TdfTypeError, TdfValueError
from tapecli.interpreter.conversions import python_number
from tapecli.interpreter.loop_steps import array_pairs, paired
from tapecli.interpreter.classes import KERAS, FrameworkBase, Instance
from tapecli.interpreter.objects import EFFECT
from tapecli.kernels import tf_sums
from tapecli.kernels.trace import Sequence, resolve
from tapecli.library.keras import penalties
from tapecli.library.keras.weight_averages import WeightAverages
from tapecli.library.keras.common import (KerasObject, auto_name, flag, float_dtype, integer, num, opt_num, scalar, snake_case,
                                         tensor)
from tapecli.runtime.context import current
from tapecli.runtime.tape import type_word
from tapecli.runtime.values import Tensor, Variable, keras_path, tensorflow_name
from tapecli.kernels.tf_float32 import pow_ as tf_pow      # (TensorFlow's float32 pow: glibc's powf)


def converted(value, dtype):
    """``ops.cast(value, variable.dtype)`` of a Python number, as Keras's updates convert some hyperparameters
    (and its Constant initializer the slots' initial values): TensorFlow makes a float a float32 tensor first,
    so a float64 variable gets the float32 rounding (0.9 as 0.8999999761581421). The numbers Keras passes to an
    op beside a tensor (``ops.multiply(x, 1 - beta_1)``) are rounded to the tensor's dtype once: ``dtype(value)``."""
    return dtype(np.float32(value))


def slot_prefix(v: Variable) -> str:
    """The start of a slot variable's name in Keras: its variable's path, or a TensorFlow variable's name."""
    if v.keras:
        return keras_path(v).replace("/", "_")
    return tensorflow_name(v).replace("/", "_").replace(":", "_")


def plain(value):
    """A program's argument as the Python value Keras keeps: a number, a bool, a list of them, a string, None."""
    if isinstance(value, Variable):
        value = value.read()
    if isinstance(value, Tensor):
        return value.value.item() if value.ndim == 0 else value.value.tolist()
    if isinstance(value, (list, tuple)):
        return type(value)(plain(v) for v in value) if isinstance(value, list) else tuple(plain(v) for v in value)
    return value


class Schedule(KerasObject):
    """A learning-rate schedule: ``value(step)`` in float32, callable as ``schedule(step)``."""
    kind_word = "a schedule"
    keras_bases = ("keras.LearningRateSchedule",)

    def value(self, step) -> np.float32:
        raise NotImplementedError

    config: dict = {}               # the arguments as given (Keras's get_config), set by given()

    def given(self, arguments: dict) -> None:
        """Keep the constructor's arguments (``locals()`` on its first line) as the program gave them."""
        self.config = {k: plain(v) for k, v in arguments.items() if k not in ("self", "__class__")}

    def get_config(self) -> dict:
        return dict(self.config)

    def serialized(self) -> dict:
        """keras.saving.serialize_keras_object of the schedule (an optimizer's config holds it)."""
        return {"module": "keras.optimizers.schedules", "class_name": type(self).__name__,
                "config": self.get_config(), "registered_name": None}

    def methods(self):
        return {"get_config": self.get_config}

    def python_class(self) -> str:
        """``type(schedule)``: Keras's class, in its module."""
        return f"keras.src.optimizers.schedules.learning_rate_schedule.{type(self).__name__}"

    def call(self, interp, args, kwargs, node):
        step = args[0] if args else kwargs.get("step")
        if step is None:
            raise TdfTypeError("a schedule is called with a step: schedule(step)")
        return scalar(self.value(num(step, "step")))


_SCHEDULE_BASE = "keras.LearningRateSchedule"        # (library/keras/bases.py registers it)


class ProgramSchedule(Schedule):
    """A program's subclass of ``keras.optimizers.schedules.LearningRateSchedule``: its ``__call__`` of the
    optimizer's step (an int64 tensor, as Keras passes its iterations), as a float32 rate."""

    def __init__(self, interp, instance):
        self.interp, self.instance = interp, instance

    def value(self, step) -> np.float32:
        rate = self.interp.call_value(self.callee(), [Tensor(np.array(step, np.int64))])
        return np.float32(np.asarray(rate.value if isinstance(rate, Tensor) else rate))

    def callee(self):
        """The program's schedule as the run calls it (the interpreter's instance itself)."""
        return self.instance


class ExponentialDecay(Schedule):

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase=False, name="ExponentialDecay"):
        self.given(locals())
        self.initial = num(initial_learning_rate, "initial_learning_rate")
        self.decay_steps = num(decay_steps, "decay_steps")
        if self.decay_steps <= 0:
            raise TdfValueError(f"Argument `decay_steps` must be > 0. Received: decay_steps={self.decay_steps:g}")
        self.decay_rate = num(decay_rate, "decay_rate")
        self.staircase = flag(staircase)
        self.name = name

    def value(self, step) -> np.float32:
        f = np.float32
        p = f(step) / f(self.decay_steps)
        if self.staircase:
            p = np.floor(p)
        return f(f(self.initial) * tf_pow(f(self.decay_rate), p))

    def attributes(self):
        # (Keras keeps the Python numbers it was given)
        return {"initial_learning_rate": lambda: python_number(float(self.initial)),
                "decay_rate": lambda: python_number(float(self.decay_rate)),
                "decay_steps": lambda: python_number(int(self.decay_steps)),
                "staircase": lambda: python_number(bool(self.staircase))}


# Up to this many elements in all, an update steps its variables laid end to end (Optimizer.step_flat): the
# copies cost less than a dozen NumPy calls per variable; above it, each variable's slots are updated in place.
FLAT_ELEMENTS = 1 << 16


class Optimizer(KerasObject):
    kind_word = "an optimizer"
    prefix = "optimizer"
    hyper: dict = {}
    elementwise = True      # update() computes each element from that element alone (Lamb's norms do not)
    # a step changes the variables and slots, deciding from the gradients' values (clipping) and its own count:
    # a loop plan makes the call itself again on each iteration's gradients
    replay_methods = {"apply_gradients": EFFECT, "apply": EFFECT}
    planned_methods = {"apply_gradients": "planned_apply_gradients", "apply": "planned_apply"}
    called_back = frozenset({"apply_gradients", "apply"})
    not_called_back = frozenset({"build", "update_step", "stateless_apply"})
    derivable = True

    # Keras's order of the slot variables in ``variables``: group by group, each variable's slots of the group in
    # turn (None: one group of them all, as most of Keras's build methods make them)
    slot_groups: tuple | None = None

    def __init__(self, interp, learning_rate=0.001, weight_decay=None, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, name=None, gradient_accumulation_steps=None, use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, **hyper):
        self.name = name or auto_name(interp, snake_case(type(self).__name__))
        self.counters = None            # the iteration and learning_rate variables, once read or built
        self.counter_versions: list[int] = []       # their versions when they last agreed with the counts
        self.lr_type = float_dtype().type       # Keras's learning_rate variable: floatx's when it was made
        self.set_learning_rate(learning_rate, interp)
        self.weight_decay = opt_num(weight_decay, "weight_decay")
        self.clipnorm, self.clipvalue = opt_num(clipnorm, "clipnorm"), opt_num(clipvalue, "clipvalue")
        self.global_clipnorm = opt_num(global_clipnorm, "global_clipnorm")
        if sum(c is not None for c in (self.clipnorm, self.clipvalue, self.global_clipnorm)) > 1:
            raise TdfValueError("Only one of `clipnorm`, `clipvalue` and `global_clipnorm` can be set. Received: "
                                f"clipnorm={self.clipnorm}, clipvalue={self.clipvalue}, "
                                f"global_clipnorm={self.global_clipnorm}")
        for key, value in hyper.items():
            setattr(self, key, flag(value) if isinstance(self.hyper[key], bool) else num(value, key))
        # (Keras's attributes and config of them: the program's Python values, as given)
        self.given_hyper = {key: plain(hyper[key]) for key in self.hyper}
        self.accumulation = None if not gradient_accumulation_steps else integer(
            gradient_accumulation_steps, "gradient_accumulation_steps")
        if self.accumulation is not None and self.accumulation < 2:
            raise TdfValueError("`gradient_accumulation_steps` must be an integer >= 2. Received: "
                                f"gradient_accumulation_steps={self.accumulation}")
        self.ema_config = {"use_ema": flag(use_ema), "ema_momentum": plain(ema_momentum),
                           "ema_overwrite_frequency": plain(ema_overwrite_frequency)}
        # (the base arguments as Keras keeps them: the program's Python values)
        self.given_base = {"weight_decay": plain(weight_decay), "clipnorm": plain(clipnorm),
                           "clipvalue": plain(clipvalue), "global_clipnorm": plain(global_clipnorm), **self.ema_config}
        self.averages = WeightAverages(ema_momentum, ema_overwrite_frequency) if flag(use_ema) else None
        self.excluded_ids: set[int] = set()         # exclude_from_weight_decay's variables, and names' pattern
        self.excluded_pattern: re.Pattern | None = None
        self.accumulated: dict[int, np.ndarray] = {}     # by variable id: the gradients summed since the last step
        self.calls = 0                  # apply's calls (Keras's _iterations); ``iterations`` counts the steps
        self.iterations = 0
        self.slots: dict[int, dict[str, Variable]] = {}
        self.slot_list: list[Variable] = []
        self.laid_out: _LaidOut | None = None

    def set_learning_rate(self, value, interp=None):
        if isinstance(value, Schedule):
            self.lr = value
        elif isinstance(value, Instance) and value.cls.derives_from(FrameworkBase(_SCHEDULE_BASE, KERAS)):
            self.lr = ProgramSchedule(interp, value)           # (a program's subclass of the base)
        elif isinstance(getattr(self, "lr", None), Schedule):
            raise TdfTypeError("This optimizer was created with a `LearningRateSchedule` object as its `learning_rate` "
                               "constructor argument, hence its learning rate is not settable. If you need the "
                               "learning rate to be settable, you should instantiate the optimizer with a float "
                               "`learning_rate` argument.")
        else:
            self.lr = self.lr_type(num(value, "learning_rate"))

    def learning_rate(self):
        """Keras 3's ``optimizer.learning_rate``: its learning_rate variable, or a schedule's rate now."""
        if isinstance(self.lr, Schedule):
            return scalar(self.current_lr())
        self.keras_variables()
        return self.synced().counters[1]

    def current_lr(self) -> np.float32:
        self.synced()
        return self.lr.value(self.calls) if isinstance(self.lr, Schedule) else self.lr

    # --------------------------------------------------------------------- program interface
    def attributes(self):
        out = {"name": self.name, "learning_rate": self.learning_rate,
               "iterations": lambda: Tensor(np.array(self.synced().iterations, np.int64)),
               "variables": self.keras_variables, "built": lambda: bool(self.slots)}
        for key, value in self.given_base.items():
            out[key] = lambda v=value: python_number(v)
        for key, value in self.given_hyper.items():
            out[key] = lambda v=value: python_number(v)
        return out

    def set_attribute(self, interp, attr, value, node):
        if attr == "learning_rate":
            self.set_learning_rate(value, interp)
            return
        super().set_attribute(interp, attr, value, node)

    def methods(self):
        return {"apply_gradients": self.apply_gradients, "apply": self.apply, "get_config": self.get_config,
                "build": self.build, "finalize_variable_values": self.finalize_variable_values,
                "exclude_from_weight_decay": self.exclude_from_weight_decay}

    def finalize_variable_values(self, var_list):
        """Keras's: with ``use_ema``, the variables take their moving averages (fit calls it at its end)."""
        if self.averages is not None:
            self.averages.overwrite(list(var_list))

    def exclude_from_weight_decay(self, var_list=None, var_names=None):
        """Keras's: the variables listed, and those whose TensorFlow name (``dense/bias:0``) holds one of
        ``var_names``, are stepped without the weight decay."""
        self.excluded_ids = {v.id for v in var_list or ()}
        self.excluded_pattern = re.compile("|".join(set(var_names))) if var_names else None

    def decays(self, v: Variable) -> bool:
        """Whether the weight decay steps ``v`` (Keras's _use_weight_decay)."""
        if self.weight_decay is None or v.id in self.excluded_ids:
            return False
        name = f"{keras_path(v)}:0" if v.keras else tensorflow_name(v)
        return self.excluded_pattern is None or self.excluded_pattern.search(name) is None

    def build(self, variables):
        """Keras's ``optimizer.build(var_list)``: the slots of each variable, made before the first step (a
        built optimizer builds no more)."""
        if not isinstance(variables, (list, tuple)) or not all(isinstance(v, Variable) for v in variables):
            raise TdfTypeError("build takes a list of variables", hint="opt.build(model.trainable_variables)")
        if not self.slots:
            self.build_averages(variables)
            for v in variables:
                self.slots_of(v)
        self.keras_variables()

    def build_averages(self, variables) -> None:
        if self.averages is not None:
            self.averages.build(variables, lambda v: f"{slot_prefix(v)}_average", self.name)

    def keras_variables(self) -> list:
        """Keras 3's ``optimizer.variables``: ``iteration``, ``learning_rate`` (unless a schedule gives it), then
        the slots, each named after its variable's path (``dense_kernel_momentum``, ``Variable_0_momentum``)."""
        if self.counters is None:
            self.counters = [Variable(f"{self.name}/iteration", np.array(self.iterations, np.int64), False,
                                      tf_name="iteration", keras=f"{self.name}/iteration")]
            if not isinstance(self.lr, Schedule):
                self.counters.append(Variable(f"{self.name}/learning_rate", np.array(self.lr), False,
                                              tf_name="learning_rate", keras=f"{self.name}/learning_rate"))
            self.counter_versions = [v.version for v in self.counters]
        self.synced()
        held = list(self.slots.values())
        names = [name for name, _ in self.slot_specs()]
        groups = self.slot_groups or (tuple(names),)
        averages = [] if self.averages is None else self.averages.variables()
        return self.counters + averages + [slots[name] for group in groups for slots in held for name in group
                                           if name in slots] + self.extra_variables()

    def synced(self) -> Optimizer:
        """The step count and learning rate agree with their variables (Keras keeps them in those): a variable
        assigned since they last agreed (a program's restored snapshot, a checkpoint's restore) gives its value,
        else it takes the optimizer's."""
        if not self.counters:
            return self
        counts = self.counters[0]
        if counts.version != self.counter_versions[0]:
            self.iterations = int(counts.read().value)
            self.calls = self.iterations * (self.accumulation or 1)
        elif int(counts.read().value) != self.iterations:
            counts.assign(np.array(self.iterations, np.int64))
        if len(self.counters) > 1 and not isinstance(self.lr, Schedule):
            rate = self.counters[1]
            if rate.version != self.counter_versions[1]:
                self.lr = self.lr_type(rate.read().value)
            elif self.lr_type(rate.read().value) != self.lr:
                rate.assign(np.array(self.lr))
        self.counter_versions = [v.version for v in self.counters]
        return self

    def extra_variables(self) -> list:
        """The variables Keras's optimizer makes after its slots (Nadam's u_product)."""
        return []

    def get_config(self) -> dict:
        """Keras 3's get_config of an optimizer: its base arguments, then its own."""
        lr = self.lr.serialized() if isinstance(self.lr, Schedule) else float(self.lr)
        out = {"name": self.name, "learning_rate": lr, "weight_decay": self.weight_decay, "clipnorm": self.clipnorm,
               "global_clipnorm": self.global_clipnorm, "clipvalue": self.clipvalue, **self.ema_config,
               "loss_scale_factor": None,
               "gradient_accumulation_steps": self.accumulation}
        out.update(self.given_hyper)
        return out

    def owned_variables(self):
        return list(self.slot_list)

    def python_class(self) -> str:
        """``type(opt)``: Keras's class, in its own module (``keras.src.optimizers.sgd.SGD``)."""
        return f"keras.src.optimizers.{type(self).__name__.lower()}.{type(self).__name__}"

    # --------------------------------------------------------------------- applying
    def apply_gradients(self, grads_and_vars):
        if isinstance(grads_and_vars, (Tensor, Variable)) or isinstance(grads_and_vars, (str, dict)):
            raise TdfTypeError(f"apply_gradients takes pairs (gradient, variable), got {type_word(grads_and_vars)}",
                               hint="opt.apply_gradients(zip(grads, variables))")
        pairs = list(grads_and_vars)
        for p in pairs:
            if not isinstance(p, (list, tuple)) or len(p) != 2:
                raise TdfTypeError(f"apply_gradients takes pairs (gradient, variable), got an entry that is "
                                   f"{type_word(p)}", hint="opt.apply_gradients(zip(grads, variables))")
        return self.apply([p[0] for p in pairs], [p[1] for p in pairs])

    def apply(self, grads, trainable_variables=None):
        """A step from the gradients; a tf.IndexedSlices one (a gathered variable's, tape.gradient's) steps with
        its dense sum, whose square Keras's updates take row by row (``step``'s ``row_squares``)."""
        if not isinstance(grads, (list, tuple)) or not isinstance(trainable_variables, (list, tuple)):
            raise TdfTypeError("apply takes a list of gradients and a list of variables",
                               hint="opt.apply(grads, model.trainable_variables)")
        grads, variables = list(grads), list(trainable_variables)
        if len(grads) != len(variables):
            raise TdfValueError(f"apply: {len(grads)} gradients for {len(variables)} variables")
        for v in variables:
            if not isinstance(v, Variable):
                raise TdfTypeError(f"an optimizer updates variables, got {type_word(v)}",
                                   hint="apply gradients to variables (var, or a layer's weights), not tensors")
        if not grads:
            return Tensor(np.array(self.iterations, np.int64))
        row_squares = {v.id: _row_squares(g) for g, v in zip(grads, variables) if getattr(g, "is_indexed_slices", False)}
        missing = [v.name for g, v in zip(grads, variables) if g is None]
        kept = [(tensor(g, "a gradient"), v) for g, v in zip(grads, variables) if g is not None]
        if not kept:
            raise TdfValueError("No gradients provided for any variable.")
        if missing:
            current().settings.warn(f"Gradients do not exist for variables {missing} when minimizing the loss. "
                                    "If using `model.compile()`, did you forget to provide a `loss` argument?")
        for g, v in kept:
            if g.shape != v.shape:
                raise ShapeError(f"the gradient for {v.name} has shape {list(g.shape)}, the variable "
                                 f"{list(v.shape)}")
        return self.step([v for _, v in kept], [g.value for g, _ in kept], row_squares=row_squares or None)

    def planned_apply_gradients(self, args, kwargs, compiled=False):
        """``apply_gradients(zip(grads, variables))`` in a loop plan (``BoundMethod.planned``): a function of
        the plan's arrays that steps the traced call's variables from the gradients' arrays (the call's
        checks are the traced calls': a plan's layouts are theirs), by :meth:`compiled_update` where the
        plan compiles its kernels (``compiled``). None for a call it does not take (a missing gradient, which
        warns at every call as written)."""
        if len(args.items) != 1 or kwargs.items:
            return None
        return self._planned(array_pairs(args.items[0]), compiled)

    def planned_apply(self, args, kwargs, compiled=False):
        """``apply(grads, variables)`` in a loop plan: as :meth:`planned_apply_gradients`."""
        if len(args.items) != 2 or kwargs.items or not all(a.__class__ is Sequence for a in args.items):
            return None
        return self._planned(paired(args.items[0].items, args.items[1].items), compiled)

    def _planned(self, pairs, compiled):
        if pairs is None:
            return None
        specs, variables = [spec for spec, _ in pairs], [v for _, v in pairs]
        flat = self._flat(variables)        # (a plan's variables keep the traced call's shapes and dtypes)
        return lambda values: self.step(variables, [resolve(spec, values) for spec in specs], flat,
                                        compiled=compiled)

    def step(self, variables, grads, flat=None, row_squares=None, compiled=False):
        """One step of ``variables`` from the arrays of their gradients (each of its variable's shape); ``flat``:
        :meth:`_flat` of these variables, where the caller knows it; ``row_squares``: by variable id, the sum of the
        squares of the rows its gradient sums (a tf.IndexedSlices'), which Keras's updates square row by row;
        ``compiled``: a flat step may take :meth:`compiled_update` (a loop plan that compiles its kernels)."""
        arrays = [np.asarray(g, dtype=v.dtype) for g, v in zip(grads, variables)]
        self.build_averages(variables)
        if self.accumulation is not None:
            arrays = self.accumulate(variables, arrays)
            if arrays is None:          # (not a step: the gradients are summed until the next one)
                return self.finished(variables)
            flat = row_squares = None
        arrays = self.clip(arrays)
        if row_squares and not self.clips():
            arrays = [SummedRows.of(a, row_squares[v.id]) if v.id in row_squares else a
                      for a, v in zip(arrays, variables)]
            flat = False
        lr = self.current_lr()          # (synced: the step counts from a restored iteration variable)
        self.before_steps(variables[0].dtype.type)
        ctx = current()
        in_place = not ctx.tapes
        if in_place and (self._flat(variables) if flat is None else flat) and not ctx.constraints:
            self.step_flat(arrays, variables, lr, compiled)
            ctx.updated_in_place += len(variables)
            return self.finished(variables)
        for g, v in zip(arrays, variables):
            dtype = v.dtype.type
            value = v.read().value
            if self.decays(v):
                value = self.decayed(value, lr)
            slots, own = {}, True
            for slot, holder in self.slots_of(v).items():
                slots[slot], mine = holder.writable(in_place)
                own = own and mine
            if not v.shape:         # a scalar's update is written into arrays: one-element views of them
                g, value = g.reshape(1), value.reshape(1)
                slots = {slot: a.reshape(1) for slot, a in slots.items()}
            new = self.update(g, value, slots, dtype(lr), dtype)
            v.assign(np.asarray(new, dtype=v.dtype).reshape(v.shape))
            ctx.updated_in_place += in_place and own
        return self.finished(variables)

    def finished(self, variables) -> Tensor:
        """After a call's updates, as Keras's apply ends: the moving averages (``use_ema``), the variables'
        constraints, the count."""
        if self.averages is not None:
            self.averages.update(self.iterations)
        penalties.constrain(variables)
        return self.counted()

    def counted(self) -> Tensor:
        """One more call of apply: Keras's ``iterations`` counts the steps (every call, or every
        ``gradient_accumulation_steps``-th)."""
        self.calls += 1
        self.iterations = self.calls // (self.accumulation or 1)
        return Tensor(np.array(self.iterations, np.int64))

    def accumulate(self, variables, arrays):
        """Keras's gradient accumulation: a call that is not a step adds its gradients to the sums and gives None;
        the step's call gives ``(gradient + sum) / steps`` and clears the sums."""
        sums = [self.accumulated.setdefault(v.id, np.zeros(v.shape, v.dtype)) for v in variables]
        if (self.calls + 1) % self.accumulation:
            for total, g in zip(sums, arrays):
                np.add(total, g, out=total)
            return None
        out = [(g + total) / g.dtype.type(self.accumulation) for g, total in zip(arrays, sums)]
        for total in sums:
            total[...] = 0
        return out

    def _flat(self, variables) -> bool:
        """Whether an in-place step takes ``variables`` laid end to end (``step_flat``): an elementwise update
        of few elements in all, one dtype, the weight decay on all or none, and no variable listed twice
        (stepped twice, the second step from the first's result: one at a time)."""
        return self.elementwise and sum(v.read().value.size for v in variables) <= FLAT_ELEMENTS \
            and all(v.dtype == variables[0].dtype for v in variables) \
            and len({v.id for v in variables}) == len(variables) and len({self.decays(v) for v in variables}) == 1

    def decayed(self, value, lr):
        """``value`` after the decoupled weight decay ``v - v * wd * lr``, in its dtype."""
        dtype = value.dtype.type
        return (value - value * converted(self.weight_decay, dtype) * dtype(lr)).astype(value.dtype)

    def step_flat(self, grads, variables, lr, compiled=False) -> None:
        """One step of every variable at once, on their arrays laid end to end: an elementwise update gives
        each variable its own step's bits, in one set of NumPy calls instead of one per variable. The
        variables take views of the new values; the slots are views of one array a slot (``_LaidOut``),
        written in place from step to step while nothing else holds them."""
        dtype = variables[0].dtype
        g = np.concatenate(grads, axis=None)
        laid = self.laid_out
        if laid is None or not laid.intact(variables):
            laid = self.laid_out = _LaidOut(variables, [self.slots_of(v) for v in variables])
        value = laid.values(variables)
        if self.decays(variables[0]):
            value = self.decayed(value, lr)
        new = self.compiled_update(g, value, laid.slots, dtype.type(lr), dtype.type) if compiled else None
        if new is None:
            new = np.asarray(self.update(g, value, laid.slots, dtype.type(lr), dtype.type), dtype=dtype)
        laid.step(variables, new)

    def clips(self) -> bool:
        return any(c is not None and c > 0 for c in (self.clipnorm, self.global_clipnorm, self.clipvalue))

    def clip(self, arrays):
        if self.clipnorm is not None and self.clipnorm > 0:
            out = []
            for g in arrays:        # tf.clip_by_norm
                dtype = g.dtype.type
                l2sum = _sum(g * g)
                l2norm = np.sqrt(l2sum) if l2sum > 0 else l2sum
                out.append((g * dtype(self.clipnorm)) / np.maximum(l2norm, dtype(self.clipnorm)))
            return out
        if self.global_clipnorm is not None and self.global_clipnorm > 0:
            dtype = arrays[0].dtype.type
            norm = np.sqrt(_sum(np.stack([_sum(np.square(g)) for g in arrays])))
            with np.errstate(divide="ignore", invalid="ignore"):
                scale = dtype(self.global_clipnorm) * np.minimum(dtype(1.0) / norm, dtype(1.0 / self.global_clipnorm))
                scale = scale + (norm - norm)
            return [(g * scale).astype(g.dtype) for g in arrays]
        if self.clipvalue is not None and self.clipvalue > 0:
            return [np.minimum(np.maximum(g, g.dtype.type(-self.clipvalue)), g.dtype.type(self.clipvalue))
                    for g in arrays]
        return arrays

    def slots_of(self, v: Variable) -> dict:
        if v.id not in self.slots:
            made = {}
            for slot, initial in self.slot_specs():
                keras = f"{slot_prefix(v)}_{slot}"
                start = np.full(v.shape, converted(initial, v.dtype.type), dtype=v.dtype)   # (Keras's Constant)
                s = Variable(f"{self.name}/{v.name}/{slot}", start, trainable=False, tf_name=keras,
                             keras=f"{self.name}/{keras}")
                made[slot] = s
                self.slot_list.append(s)
            self.slots[v.id] = made
        return self.slots[v.id]

    def slot_specs(self) -> list:
        return []

    def update(self, g, value, slots, lr, dtype):
        """The variable's new value (a new array: ``value`` is its current one, kept as it is) from its
        gradient, updating ``slots`` (slot name: writable array) in place."""
        raise NotImplementedError

    def compiled_update(self, g, value, slots, lr, dtype):
        """:meth:`update` of flat arrays by a compiled kernel giving its bits (``kernels.plan_kernels``), or None
        where none does (the update then runs as NumPy calls)."""
        return None

    def before_steps(self, dtype) -> None:
        """What one apply computes once, before its variables' steps (Nadam's u_product)."""


class _LaidOut:
    """The slots of one list of variables laid end to end, one array a slot, of which the slot variables
    hold views; and the views of the last step's new values that the variables took. While the slot
    variables alone hold those views (and nothing else a view of those arrays), a step writes the slots in
    place: no copies in, none out. While the variables' values are those views, the array they are views
    of is their values laid end to end."""

    __slots__ = ("ids", "bounds", "holders", "slots", "slot_views", "counts", "value_views", "laid_values")

    def __init__(self, variables, holders):
        self.ids = [v.id for v in variables]
        self.bounds, end = [], 0            # each variable's (start, end, shape) (a variable keeps its shape)
        for v in variables:
            start, end = end, end + v.read().value.size
            self.bounds.append((start, end, v.shape))
        self.holders = [h[slot] for slot in holders[0] for h in holders]
        self.slots = {slot: np.concatenate([h[slot].read().value.reshape(-1) for h in holders]) for slot in holders[0]}
        self.slot_views = [view for flat in self.slots.values() for view in self._parts(flat)]
        for holder, view in zip(self.holders, self.slot_views):
            holder.assign(view)
        self.counts = [sys.getrefcount(flat) for flat in self.slots.values()]
        self.value_views = self.laid_values = None

    def intact(self, variables) -> bool:
        if [v.id for v in variables] != self.ids or [sys.getrefcount(a) for a in self.slots.values()] != self.counts:
            return False
        views = self.slot_views      # (indexed, not bound to a name: each view's count is the list's and the tensor's)
        return all(h.read().value is views[k] and h.holds_alone(kept=1) for k, h in enumerate(self.holders))

    def values(self, variables) -> np.ndarray:
        """The variables' values laid end to end."""
        if self.value_views is not None and all(v.read().value is view for v, view in zip(variables, self.value_views)):
            return self.laid_values
        return np.concatenate([v.read().value.reshape(-1) for v in variables])

    def step(self, variables, new) -> None:
        """The variables take views of ``new``; the slots, written in place, count as assigned."""
        self.value_views = self._parts(new)
        self.laid_values = new
        for v, view in zip(variables, self.value_views):
            v.assign(view)
        for holder in self.holders:
            holder.version += 1

    def _parts(self, flat) -> list:
        """The views of ``flat`` that are each variable's, in order."""
        return [flat[start:end].reshape(shape) for start, end, shape in self.bounds]


def _row_squares(slices) -> np.ndarray:
    """The sum over a tf.IndexedSlices' rows of each row's square, at its index (its dense shape)."""
    values = np.asarray(slices.values.value)
    total = np.zeros(tuple(int(d) for d in np.asarray(slices.dense_shape.value)), values.dtype)
    np.add.at(total, np.asarray(slices.indices.value), values * values)
    return total


class SummedRows(np.ndarray):
    """A gradient summed from rows (a tf.IndexedSlices') whose square is the sum of the rows' squares, as
    Keras squares TensorFlow's IndexedSlices gradient row by row before it is summed; every other operation is
    the plain array's."""

    @classmethod
    def of(cls, summed: np.ndarray, squares: np.ndarray) -> SummedRows:
        made = summed.view(cls)
        made.squares = np.asarray(squares, dtype=summed.dtype)
        return made

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if ufunc is np.square and method == "__call__" and len(inputs) == 1 and "out" not in kwargs:
            return self.squares.copy()
        plain = [x.view(np.ndarray) if isinstance(x, SummedRows) else x for x in inputs]
        if "out" in kwargs:
            kwargs["out"] = tuple(x.view(np.ndarray) if isinstance(x, SummedRows) else x for x in kwargs["out"])
        return getattr(ufunc, method)(*plain, **kwargs)


def _moving_average(average, x, rate):
    """``average + (x - average) * rate``, into ``average``; returns the step's array (free to reuse)."""
    step = x - average
    step *= rate
    average += step
    return step


class SGD(Optimizer):
    prefix = "SGD"
    hyper = {"momentum": 0.0, "nesterov": False}

    def __init__(self, interp, learning_rate=0.01, momentum=0.0, nesterov=False, **kw):
        super().__init__(interp, learning_rate, momentum=momentum, nesterov=nesterov, **kw)
        if not 0.0 <= self.momentum <= 1.0:
            raise TdfValueError("`momentum` must be a float between [0, 1].")

    def slot_specs(self):
        return [("momentum", 0.0)] if self.momentum != 0 else []

    def update(self, g, value, slots, lr, dtype):
        if self.momentum == 0:
            return value - g * lr
        mom = converted(self.momentum, dtype)
        m, step = slots["momentum"], g * lr
        m *= mom
        m -= step                               # m * momentum - g * lr
        if self.nesterov:
            ahead = m * mom
            ahead -= step
            return value + ahead                # value + (m * momentum - g * lr)
        return value + m


class Adam(Optimizer):
    prefix = "adam"
    hyper = {"beta_1": 0.9, "beta_2": 0.999, "epsilon": 1e-7, "amsgrad": False}
    slot_groups = (("momentum", "velocity"), ("velocity_hat",))

    def __init__(self, interp, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, amsgrad=False, **kw):
        super().__init__(interp, learning_rate, beta_1=beta_1, beta_2=beta_2, epsilon=epsilon, amsgrad=amsgrad,
                         **kw)

    def slot_specs(self):
        return [("momentum", 0.0), ("velocity", 0.0)] + ([("velocity_hat", 0.0)] if self.amsgrad else [])

    def _alpha(self, lr, dtype):
        """The step's learning rate, corrected for the moments' bias: lr * sqrt(1 - beta_2^t) / (1 - beta_1^t)."""
        t = dtype(self.iterations + 1)
        b1p = tf_pow(converted(self.beta_1, dtype), t)
        b2p = tf_pow(converted(self.beta_2, dtype), t)
        one = dtype(1)
        return lr * np.sqrt(one - b2p) / (one - b1p)

    def compiled_update(self, g, value, slots, lr, dtype):
        if self.amsgrad:
            return None
        from tapecli.kernels import plan_kernels
        return plan_kernels.adam(g, value, slots["momentum"], slots["velocity"], dtype(1 - self.beta_1),
                                 dtype(1 - self.beta_2), self._alpha(lr, dtype), dtype(self.epsilon))

    def update(self, g, value, slots, lr, dtype):
        alpha = self._alpha(lr, dtype)
        m, v = slots["momentum"], slots["velocity"]
        step = _moving_average(m, g, dtype(1 - self.beta_1))
        _moving_average(v, np.square(g), dtype(1 - self.beta_2))
        if self.amsgrad:
            v = np.maximum(slots["velocity_hat"], v, out=slots["velocity_hat"])
        np.multiply(m, alpha, out=step)
        denominator = np.sqrt(v)
        denominator += dtype(self.epsilon)
        step /= denominator                     # (m * alpha) / (sqrt(v) + epsilon)
        return np.subtract(value, step, out=step)


class AdamW(Adam):
    prefix = "adamw"

    def __init__(self, interp, learning_rate=0.001, weight_decay=0.004, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
                 amsgrad=False, **kw):
        if weight_decay is None:
            raise TdfValueError("Argument `weight_decay` must be a float. Received: weight_decay=None")
        super().__init__(interp, learning_rate, beta_1, beta_2, epsilon, amsgrad, weight_decay=weight_decay, **kw)


class RMSprop(Optimizer):
    prefix = "rmsprop"
    hyper = {"rho": 0.9, "momentum": 0.0, "epsilon": 1e-7, "centered": False}
    slot_groups = (("velocity",), ("momentum",), ("average_gradient",))

    def __init__(self, interp, learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7, centered=False, **kw):
        super().__init__(interp, learning_rate, rho=rho, momentum=momentum, epsilon=epsilon, centered=centered, **kw)

    def slot_specs(self):
        return [("velocity", 0.0)] + ([("momentum", 0.0)] if self.momentum > 0 else []) + \
            ([("average_gradient", 0.0)] if self.centered else [])

    def update(self, g, value, slots, lr, dtype):
        rho, rest = dtype(self.rho), dtype(1 - self.rho)
        vel = slots["velocity"]
        vel *= rho
        vel += np.multiply(np.square(g), rest)          # rho * vel + (1 - rho) * square(g)
        if self.centered:
            ag = slots["average_gradient"]
            ag *= rho
            ag += np.multiply(g, rest)
            denominator = np.square(ag)
            np.subtract(vel, denominator, out=denominator)
            denominator += dtype(self.epsilon)          # vel - square(ag) + epsilon
        else:
            denominator = vel + dtype(self.epsilon)
        increment = np.multiply(g, lr)
        increment /= np.sqrt(denominator, out=denominator)      # (lr * g) / sqrt(denominator)
        if self.momentum > 0:
            mom = slots["momentum"]
            mom *= dtype(self.momentum)
            mom += increment
            return value - mom
        return np.subtract(value, increment, out=increment)


class Adagrad(Optimizer):
    prefix = "adagrad"
    hyper = {"initial_accumulator_value": 0.1, "epsilon": 1e-7}

    def __init__(self, interp, learning_rate=0.001, initial_accumulator_value=0.1, epsilon=1e-7, **kw):
        super().__init__(interp, learning_rate, initial_accumulator_value=initial_accumulator_value,
                         epsilon=epsilon, **kw)

    def slot_specs(self):
        return [("accumulator", self.initial_accumulator_value)]

    def update(self, g, value, slots, lr, dtype):
        acc = slots["accumulator"]
        acc += np.square(g)
        denominator = acc + dtype(self.epsilon)
        increment = np.multiply(g, lr)
        increment /= np.sqrt(denominator, out=denominator)      # (lr * g) / sqrt(acc + epsilon)
        return np.subtract(value, increment, out=increment)


OPTIMIZERS = [SGD, Adam, AdamW, RMSprop, Adagrad]


class _Moments(Optimizer):
    """The optimizers configured by (learning_rate, beta_1, beta_2, epsilon) alone."""
    hyper = {"beta_1": 0.9, "beta_2": 0.999, "epsilon": 1e-7}

    def __init__(self, interp, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, **kw):
        super().__init__(interp, learning_rate, beta_1=beta_1, beta_2=beta_2, epsilon=epsilon, **kw)


class Adamax(_Moments):
    prefix = "adamax"

    def slot_specs(self):
        return [("momentum", 0.0), ("norm", 0.0)]

    def update(self, g, value, slots, lr, dtype):
        b1p = tf_pow(converted(self.beta_1, dtype), dtype(self.iterations + 1))
        m, u = slots["momentum"], slots["norm"]
        _moving_average(m, g, dtype(1 - self.beta_1))
        u *= dtype(self.beta_2)
        np.maximum(u, np.abs(g), out=u)
        return value - (lr * m) / ((dtype(1) - b1p) * (u + dtype(self.epsilon)))


class Nadam(Optimizer):
    prefix = "nadam"
    hyper = {"beta_1": 0.9, "beta_2": 0.999, "epsilon": 1e-7}

    def __init__(self, interp, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, **kw):
        super().__init__(interp, learning_rate, beta_1=beta_1, beta_2=beta_2, epsilon=epsilon, **kw)
        self.u_product = None

    def slot_specs(self):
        return [("momentum", 0.0), ("velocity", 0.0)]

    def extra_variables(self):
        if not self.slots:
            return []
        held = self.__dict__.get("u_product_variable")
        dtype = next(iter(next(iter(self.slots.values())).values())).dtype
        if held is None:
            held = self.u_product_variable = Variable(f"{self.name}/u_product", np.array(1.0, dtype), False,
                                                      tf_name="variable", keras=f"{self.name}/variable")
        held.assign(np.array(1.0 if self.u_product is None else self.u_product, dtype))
        return [held]

    def before_steps(self, dtype):
        if self.u_product is None:
            self.u_product = dtype(1.0)
        p = tf_pow(dtype(0.96), dtype(self.iterations + 1))
        self.u_product = self.u_product * dtype(self.beta_1) * (dtype(1.0) - dtype(0.5) * p)

    def update(self, g, value, slots, lr, dtype):
        one, half, decay = dtype(1.0), dtype(0.5), converted(0.96, dtype)
        beta_1, beta_2 = converted(self.beta_1, dtype), converted(self.beta_2, dtype)
        step, following = dtype(self.iterations + 1), dtype(self.iterations + 2)
        u_t = beta_1 * (one - half * tf_pow(decay, step))
        u_t_1 = beta_1 * (one - half * tf_pow(decay, following))
        u_product_t = dtype(self.u_product)
        u_product_t_1 = u_product_t * u_t_1
        beta_2_power = tf_pow(beta_2, step)
        m, v = slots["momentum"], slots["velocity"]
        _moving_average(m, g, one - beta_1)
        _moving_average(v, np.square(g), one - beta_2)
        m_hat = (u_t_1 * m) / (one - u_product_t_1) + ((one - u_t) * g) / (one - u_product_t)
        v_hat = v / (one - beta_2_power)
        return value - (m_hat * lr) / (np.sqrt(v_hat) + dtype(self.epsilon))


class Adadelta(Optimizer):
    prefix = "adadelta"
    hyper = {"rho": 0.95, "epsilon": 1e-7}

    def __init__(self, interp, learning_rate=0.001, rho=0.95, epsilon=1e-7, **kw):
        super().__init__(interp, learning_rate, rho=rho, epsilon=epsilon, **kw)

    def slot_specs(self):
        return [("accumulated_grad", 0.0), ("accumulated_delta_var", 0.0)]

    def update(self, g, value, slots, lr, dtype):
        rho, rest, eps = dtype(self.rho), dtype(1 - self.rho), dtype(self.epsilon)
        acc, delta_acc = slots["accumulated_grad"], slots["accumulated_delta_var"]
        acc *= rho
        acc += np.multiply(np.square(g), rest)          # rho * acc + (1 - rho) * square(g)
        delta = -((np.sqrt(delta_acc + eps) * g) / np.sqrt(acc + eps))
        delta_acc *= rho
        delta_acc += np.multiply(np.square(delta), rest)
        return value + lr * delta


class Lion(Optimizer):
    prefix = "lion"
    hyper = {"beta_1": 0.9, "beta_2": 0.99}

    def __init__(self, interp, learning_rate=0.001, beta_1=0.9, beta_2=0.99, **kw):
        super().__init__(interp, learning_rate, beta_1=beta_1, beta_2=beta_2, **kw)
        if self.beta_1 <= 0 or self.beta_1 > 1:
            raise TdfValueError(f"Argument `beta_1` must be in the [0, 1] range. Otherwise, the optimizer "
                                f"degenerates to SignSGD. Received: beta_1={self.beta_1}.")

    def slot_specs(self):
        return [("momentum", 0.0)]

    def update(self, g, value, slots, lr, dtype):
        one, beta_1, beta_2 = dtype(1.0), converted(self.beta_1, dtype), converted(self.beta_2, dtype)
        m = slots["momentum"]
        new = value - lr * np.sign(m * beta_1 + g * (one - beta_1))
        m *= beta_2
        m += g * (one - beta_2)
        return new


def _sum(x: np.ndarray):
    """ops.sum of all of ``x``: TensorFlow's order for float32 (kernels/tf_sums.py), NumPy's elsewhere."""
    found = tf_sums.reduce_sum(x)
    return x.dtype.type(np.sum(x, dtype=x.dtype) if found is None else found)


class Lamb(_Moments):
    """Adam's moments, the step scaled by the trust ratio ||w|| / ||update|| (1 where either is 0)."""
    prefix = "lamb"
    elementwise = False

    def slot_specs(self):
        return [("momentum", 0.0), ("velocity", 0.0)]

    def update(self, g, value, slots, lr, dtype):
        t = dtype(self.iterations + 1)
        one = dtype(1.0)
        b1p, b2p = tf_pow(converted(self.beta_1, dtype), t), tf_pow(converted(self.beta_2, dtype), t)
        m, v = slots["momentum"], slots["velocity"]
        _moving_average(m, g, dtype(1 - self.beta_1))
        _moving_average(v, np.square(g), dtype(1 - self.beta_2))
        step = (m / (one - b1p)) / (np.sqrt(v / (one - b2p)) + dtype(self.epsilon))
        w_norm = np.sqrt(_sum(tf_pow(value, dtype(2))))
        g_norm = np.sqrt(_sum(tf_pow(step, dtype(2))))
        ratio = w_norm / g_norm if w_norm > 0 and g_norm > 0 else one
        return value - ratio * lr * step


class Ftrl(Optimizer):
    """Follow-the-regularized-leader (Keras 3's update_step, its Python constants rounded to the dtype)."""
    prefix = "ftrl"
    # its pow of the accumulators is TensorFlow's on each variable, whose packets and tail depend on an element's
    # place in its variable (kernels/tf_pow.py): each variable is stepped alone, never laid end to end
    elementwise = False
    hyper = {"learning_rate_power": -0.5, "initial_accumulator_value": 0.1, "l1_regularization_strength": 0.0,
             "l2_regularization_strength": 0.0, "l2_shrinkage_regularization_strength": 0.0, "beta": 0.0}

    def __init__(self, interp, learning_rate=0.001, learning_rate_power=-0.5, initial_accumulator_value=0.1,
                 l1_regularization_strength=0.0, l2_regularization_strength=0.0,
                 l2_shrinkage_regularization_strength=0.0, beta=0.0, **kw):
        super().__init__(interp, learning_rate, learning_rate_power=learning_rate_power,
                         initial_accumulator_value=initial_accumulator_value,
                         l1_regularization_strength=l1_regularization_strength,
                         l2_regularization_strength=l2_regularization_strength,
                         l2_shrinkage_regularization_strength=l2_shrinkage_regularization_strength, beta=beta, **kw)
        if self.learning_rate_power > 0:
            raise TdfValueError("`learning_rate_power` needs to be negative or zero. Received: "
                                f"learning_rate_power={self.learning_rate_power}.")
        for key in ("initial_accumulator_value", "l1_regularization_strength", "l2_regularization_strength",
                    "l2_shrinkage_regularization_strength"):
            if getattr(self, key) < 0:
                raise TdfValueError(f"`{key}` needs to be positive or zero. Received: {key}={getattr(self, key)}.")

    def slot_specs(self):
        return [("accumulator", self.initial_accumulator_value), ("linear", 0.0)]

    def update(self, g, value, slots, lr, dtype):
        power = dtype(-self.learning_rate_power)
        l2 = dtype(self.l2_regularization_strength) + dtype(self.beta) / (dtype(2.0) * lr)
        grad = g + dtype(2 * self.l2_shrinkage_regularization_strength) * value
        accum, linear = slots["accumulator"], slots["linear"]
        new_accum = accum + np.square(g)
        linear += grad - (tf_pow(new_accum, power) - tf_pow(accum, power)) / lr * value
        quadratic = tf_pow(new_accum, power) / lr + dtype(2) * l2
        l1 = dtype(self.l1_regularization_strength)
        accum[...] = new_accum
        return (np.clip(linear, -l1, l1) - linear) / quadratic


OPTIMIZERS += [Adamax, Nadam, Adadelta, Lion, Lamb, Ftrl]


def from_config(construct, schedules: dict):
    """Keras's ``Optimizer.from_config(config, custom_objects=None)``: the class made of its config, a learning
    rate schedule's config (one of ``schedules``, by class name) made into the schedule first."""
    def made(interp, config, custom_objects=None):
        config = dict(config)
        if config.pop("loss_scale_factor", None) is not None:
            raise TdfValueError("tapecli's optimizers take no loss_scale_factor")
        entry = config.get("learning_rate")
        if isinstance(entry, dict):
            if entry.get("class_name") not in schedules:
                raise TdfValueError(f"Could not locate class '{entry.get('class_name')}': tapecli makes Keras's "
                                    "learning rate schedules from their configs")
            config["learning_rate"] = schedules[entry["class_name"]](**entry.get("config", {}))
        return construct(interp, **config)
    return made
