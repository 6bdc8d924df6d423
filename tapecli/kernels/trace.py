"""Kernel traces: the kernel calls of a computation, recorded once and run again on new inputs.

While a :class:`Recorder` is installed (``kernels.tracing``), every ``kernels.run`` is computed as
usual and written down: its kernel, and each argument as where it came from — one of the trace's
inputs, an earlier call's result, a view of either (a reshape, a transpose: its offset, shape and
strides), or a constant. :meth:`Trace.run` makes the same calls again on other inputs, with
nothing of the code that made them: no ops, no tensors, no rules. Small-tensor shortcuts that
compute outside ``kernels.run`` are off while a recorder is installed (``numpy_quiet``).

A trace knows nothing of what the calls meant; whoever records one decides when running it again
is right (``autodiff/replay.py`` checks it first). Two traces of one computation can be compared
(:meth:`Trace.same_as`): an argument that is a constant in both must hold the same bits.
"""
from __future__ import annotations

import numpy as np

from tapecli.runtime.values import SEQUENCES

_as_strided = np.lib.stride_tricks.as_strided


class Mismatch(Exception):
    """Running a trace met an array laid out otherwise than when it was recorded."""


class Const:
    """An argument the trace passes as it was: made by the code, from no input."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def resolve(self, values):
        return self.value

    def same_as(self, other) -> bool:
        return other.__class__ is Const and same_value(self.value, other.value)


class View:
    """A view of an input or a result: ``offset`` bytes into it, with ``shape`` and ``strides``."""

    __slots__ = ("slot", "base_layout", "offset", "shape", "strides", "how")

    def __init__(self, slot, base, view):
        self.slot = slot
        self.base_layout = (base.shape, base.strides, base.dtype)
        self.offset = (view.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // base.itemsize
        self.shape, self.strides = view.shape, view.strides
        # the common views, made as they were: a reshape, a transpose (as_strided costs ten times more)
        whole = self.offset == 0 and view.size == base.size
        if whole and view.flags.c_contiguous:
            self.how = "reshape"
        elif whole and view.ndim == base.ndim and (view.shape, view.strides) == (base.T.shape, base.T.strides):
            self.how = "transpose"
        else:
            self.how = None

    def resolve(self, values):
        base = values[self.slot]
        if base.__class__ is not np.ndarray or (base.shape, base.strides, base.dtype) != self.base_layout:
            raise Mismatch
        if self.how == "reshape":
            return base.reshape(self.shape)
        if self.how == "transpose":
            return base.T
        return _as_strided(base.reshape(-1)[self.offset:], self.shape, self.strides, writeable=False)

    def same_as(self, other) -> bool:
        return other.__class__ is View and (self.slot, self.base_layout, self.offset, self.shape, self.strides) == (
            other.slot, other.base_layout, other.offset, other.shape, other.strides)


class Sequence:
    """A list or tuple argument, its items each resolved."""

    __slots__ = ("kind", "items")

    def __init__(self, kind, items):
        self.kind, self.items = kind, items

    @property
    def parts(self):
        return self.items

    def resolve(self, values):
        return self.kind(resolve(s, values) for s in self.items)

    def same_as(self, other) -> bool:
        return other.__class__ is Sequence and self.kind is other.kind and same_specs(self.items, other.items)


def same_value(a, b) -> bool:
    """Whether two constants are the same bits (NaN equals NaN, 0.0 is not -0.0)."""
    if a.__class__ is not b.__class__:
        return False
    if isinstance(a, (np.ndarray, np.generic)):
        return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    if isinstance(a, float):
        return repr(a) == repr(b)
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
    return a == b


def same_specs(a, b) -> bool:
    """Whether two lists of argument specs (slot numbers, views, sequences, constants) are the same."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x.__class__ is int or y.__class__ is int:
            if x != y:
                return False
        elif not x.same_as(y):
            return False
    return True


def same_call(a, b) -> bool:
    """Whether two recorded kernel calls, ``(name, argument specs, attribute specs or None)``, are the same."""
    (name, specs, attrs), (name2, specs2, attrs2) = a, b
    if name != name2 or not same_specs(specs, specs2) or (attrs is None) != (attrs2 is None):
        return False
    return attrs is None or attrs.keys() == attrs2.keys() and same_specs(list(attrs.values()), list(attrs2.values()))


def of_constants(spec, constant) -> bool:
    """Whether a spec reads constants alone: ``Const``s, and the slots of ``constant`` (made of constants only)."""
    cls = spec.__class__
    if cls is int:
        return spec in constant
    if cls is View:
        return spec.slot in constant
    if cls is Sequence:
        return all(of_constants(item, constant) for item in spec.items)
    return cls is Const


def slots_read(spec):
    """The slots a spec, or a collection of specs, reads (a spec made of others lists them as ``parts``)."""
    cls = spec.__class__
    if cls is int:
        yield spec
    elif cls is View:
        yield spec.slot
    elif cls in SEQUENCES:
        for item in spec:
            yield from slots_read(item)
    elif cls is dict:
        yield from slots_read(list(spec.values()))
    elif hasattr(spec, "parts"):
        yield from slots_read(spec.parts)


def released(n_inputs: int, reads: list, kept) -> dict:
    """{step k: the slots no step after k reads}, of the slots of a list of steps (``reads``: per step, the
    slots it reads; step k's result is slot ``n_inputs + k``), but for ``kept`` and the inputs no step reads
    (which the caller never held)."""
    last = {n_inputs + k: k for k in range(len(reads))}
    for k, slots in enumerate(reads):
        for slot in slots:
            last[slot] = k
    out: dict = {}
    for slot, k in last.items():
        if slot not in kept:
            out.setdefault(k, []).append(slot)
    return out


def resolve(spec, values):
    """The value of an argument spec, given every slot's value."""
    return values[spec] if spec.__class__ is int else spec.resolve(values)


class Trace:
    """Kernel calls over ``n_inputs`` input slots; call k's result is slot ``n_inputs + k``."""

    __slots__ = ("n_inputs", "steps", "functions", "drops")

    def __init__(self, n_inputs: int, steps: list):
        self.n_inputs = n_inputs
        self.steps = steps           # (kernel name, argument specs, attribute specs or None)
        self.functions = None        # per step, the function to call itself or None (see bind)
        self.drops = None            # per step, the slots let go of after it (see bind)

    def run(self, inputs: list, run, direct: bool = False) -> list:
        """Every slot's value with ``inputs`` in the input slots, each call made through ``run(name, args,
        attrs)`` (``kernels.run``), or with ``direct``, by the functions :meth:`bind` found, where it found
        one, and each slot let go of (None) after the last call that reads it, but for those bind keeps.
        Raises :class:`Mismatch` where an input is laid out otherwise."""
        values = list(inputs)
        append = values.append
        bound = direct and self.functions is not None
        functions, drops = (self.functions, self.drops) if bound else ((None,) * len(self.steps),) * 2
        for (name, specs, attr_specs), function, dropped in zip(self.steps, functions, drops):
            args = [values[s] if s.__class__ is int else s.resolve(values) for s in specs]
            attrs = {} if attr_specs is None else {k: values[s] if s.__class__ is int else s.resolve(values)
                                                   for k, s in attr_specs.items()}
            if function is None:
                append(run(name, args, attrs))
            else:
                out = function(*args, **attrs)
                append(out if out.__class__ is np.ndarray or isinstance(out, np.generic) else np.asarray(out))
            if dropped:
                for slot in dropped:
                    values[slot] = None
        return values

    def bind(self, values: list, pick, kept) -> None:
        """Find, for each call, the function ``pick(name, args)`` (``kernels.direct``) says ``run`` calls for
        the arguments of ``values`` (a run's slots): the same layouts every time a trace runs. ``kept``: the
        slots a caller reads after the run (its outputs); every other is let go of after its last reader,
        so that an array no call needs is freed, and its memory reused while still in the cache."""
        functions = []
        for name, specs, _ in self.steps:
            functions.append(pick(name, [resolve(s, values) for s in specs]))
        self.functions = functions
        schedule = released(self.n_inputs, [list(slots_read((specs, attrs))) for _, specs, attrs in self.steps],
                            set(kept))
        self.drops = [schedule.get(k) for k in range(len(self.steps))]

    def same_as(self, other: Trace) -> bool:
        """The same calls, on the same slots, with the same constants."""
        if self.n_inputs != other.n_inputs or len(self.steps) != len(other.steps):
            return False
        return all(map(same_call, self.steps, other.steps))


class Recorder:
    """Writes down the kernel calls made while it is installed (``kernels.tracing``). ``inputs``: the
    arrays of the input slots. Every array it sees is kept alive, so that no two share an ``id``."""

    def __init__(self, inputs):
        self.slots: dict[int, int] = {}
        self.held = list(inputs)
        for i, a in enumerate(inputs):
            self.slots.setdefault(id(a), i)
        self.n_inputs = len(inputs)
        self.steps: list = []

    def spec(self, value):
        """Where ``value`` comes from: a slot number, or a :class:`View`, :class:`Sequence` or :class:`Const`."""
        slot = self.slots.get(id(value))
        if slot is not None:
            return slot
        cls = value.__class__
        if cls in SEQUENCES:
            return Sequence(cls, tuple(self.spec(v) for v in value))
        self.held.append(value)
        if cls is np.ndarray:
            base = value.base
            if base is not None and base.__class__ is np.ndarray and id(base) in self.slots \
                    and base.dtype == value.dtype and base.flags.c_contiguous:
                return View(self.slots[id(base)], base, value)
        return Const(value)

    def follows(self, value) -> bool:
        """Whether ``value`` is an input or a result of the trace, or a view of one."""
        if id(value) in self.slots:
            return True
        base = getattr(value, "base", None)
        return base is not None and id(base) in self.slots

    def check(self, check, value, params) -> None:
        """A check of a traced value (``kernels.checked``): a trace of kernel calls alone cannot make it again,
        so recording one fails (a backward plan then leaves its pass to the ordinary path)."""
        raise NotImplementedError("a check in a kernel trace")

    def draw(self, draw, params, value) -> None:
        """Random draws (``kernels.drawn``): a trace of kernel calls alone cannot make them again, so recording
        one fails, as a check does."""
        raise NotImplementedError("a draw in a kernel trace")

    def update(self, update, state, value, params) -> None:
        """A state's update (``kernels.updated``): not a kernel call either."""
        raise NotImplementedError("a state's update in a kernel trace")

    def call(self, name, args, attrs, run):
        """``run(name, args, attrs)``'s result, with the call written down."""
        specs = tuple(self.spec(a) for a in args)
        attr_specs = {k: self.spec(v) for k, v in attrs.items()} if attrs else None
        out = run(name, args, attrs)
        self.slots[id(out)] = self.n_inputs + len(self.steps)
        self.held.append(out)
        self.steps.append((name, specs, attr_specs))
        return out

    def traced_values(self) -> list | None:
        """The traced arrays by slot (None for a step that is no kernel call: a loop's effect or request), or
        None where a kernel's is not known (a kernel that gave back an array made before: its slot is the later
        one)."""
        values = self.held[:self.n_inputs] + [None] * len(self.steps)
        for value in self.held[self.n_inputs:]:
            slot = self.slots.get(id(value))
            if slot is not None and slot >= self.n_inputs:
                values[slot] = value
        if any(values[self.n_inputs + k] is None for k, step in enumerate(self.steps) if step[0] is not None):
            return None
        return values

    def trace(self) -> Trace:
        return Trace(self.n_inputs, self.steps)
