"""The calls of a loop plan that are not kernels (``interpreter/loop_plans.py``): an effect made again as the
interpreter makes it, a variable's array after one, a gradient request added again, random draws and a
state's update made again; the templates of their arguments (each tensor as the spec of its array, made anew
on each iteration's arrays); and what the compiled plan calls besides kernels."""
from __future__ import annotations

from sys import getrefcount
from types import BuiltinMethodType

import numpy as np

from tapecli.autodiff import gradients
from tapecli.interpreter.objects import BoundMethod, Request
from tapecli.kernels.trace import Const, Sequence, resolve, same_specs, same_value
from tapecli.runtime.context import current
from tapecli.runtime.values import Variable, make_tensor


def maker(spec):
    """A function of an iteration's slots giving the value a template stands for, with new tensors on the
    iteration's arrays (the template walked once, not at every iteration)."""
    cls = spec.__class__
    if cls is int:                  # (an input that is a Python number: a loop's item)
        return lambda values: values[spec]
    if cls is TensorSpec:
        array, weak = spec.spec, spec.weak
        if array.__class__ is int:
            return lambda values: make_tensor(values[array], weak)
        return lambda values: make_tensor(array.resolve(values), weak)
    if cls is Sequence:
        kind, items = spec.kind, [maker(s) for s in spec.items]
        return lambda values: kind([make(values) for make in items])
    if cls is DictSpec:
        keys, items = spec.keys, [maker(s) for s in spec.items]
        return lambda values: {key: make(values) for key, make in zip(keys, items)}
    value = spec.value
    return lambda values: value


def _leaves(template):
    """The specs of a template (of a pair of them), depth first."""
    if template.__class__ in (tuple, list):
        for t in template:
            yield from _leaves(t)
    elif template.__class__ in (Sequence, DictSpec):
        yield from _leaves(template.items)
    else:
        yield template


def array_pairs(template):
    """[(array spec, variable)] from the template of a list of (tensor, variable) pairs (an optimizer's
    ``zip(grads, variables)``), or None for any other (a weak tensor, a None among them)."""
    if template.__class__ is not Sequence or not all(p.__class__ is Sequence and len(p.items) == 2
                                                     for p in template.items):
        return None
    return paired([p.items[0] for p in template.items], [p.items[1] for p in template.items])


def paired(tensors, variables):
    """[(array spec, variable)] from the templates of tensors and of as many variables, or None for others."""
    if not tensors or len(tensors) != len(variables) \
            or any(t.__class__ is not TensorSpec or t.weak for t in tensors) \
            or any(v.__class__ is not Const or not isinstance(v.value, Variable) for v in variables):
        return None
    return [(t.spec, v.value) for t, v in zip(tensors, variables)]


def same_template(a, b) -> bool:
    if a.__class__ is not b.__class__:
        return False
    if a.__class__ is int:
        return a == b
    if a.__class__ is TensorSpec:
        return a.weak == b.weak and same_specs([a.spec], [b.spec])
    if a.__class__ is Sequence:
        return a.kind is b.kind and len(a.items) == len(b.items) and all(map(same_template, a.items, b.items))
    if a.__class__ is DictSpec:
        return a.keys == b.keys and all(map(same_template, a.items, b.items))
    return a.value is b.value or same_value(a.value, b.value)


class TensorSpec:
    __slots__ = ("spec", "weak")

    def __init__(self, spec, weak):
        self.spec, self.weak = spec, weak

    @property
    def parts(self):
        return (self.spec,)


class DictSpec:
    __slots__ = ("keys", "items")

    def __init__(self, keys, items):
        self.keys, self.items = keys, items

    @property
    def parts(self):
        return self.items


class EffectStep:
    """A call that changes state (an optimizer's step, an assign, an append, a print), made again as the
    interpreter makes it, at its statement's line (a warning it gives names it). ``callee``: what names the call
    to a plan (the library's method behind the function a program holds on CPython), ``f`` itself by default."""

    def __init__(self, f, node, args, kwargs, callee=None):
        self.f, self.node, self.args, self.kwargs = f, node, args, kwargs
        self.callee = f if callee is None else callee
        self.line = current().settings.line
        self.made_args, self.made_kwargs = maker(args), maker(kwargs)

    def specs(self):
        return self.args, self.kwargs

    def make(self, interp, values):
        interp.ctx.settings.line = self.line
        interp.call(self.f, self.made_args(values), self.made_kwargs(values), self.node)

    def planned_make(self, compiled=False):
        """``make`` by the callee's own call for plans (``BoundMethod.planned``: no tensors made, no checks
        that the traced calls passed; ``compiled``: by compiled kernels where it has them), or None where it
        offers none."""
        planned = getattr(self.callee, "planned", None)
        call = planned(self.args, self.kwargs, compiled) if planned is not None else None
        if call is None:
            return None
        line, node = self.line, self.node

        def make(interp, values):
            interp.ctx.settings.line = line
            try:
                call(values)
            except Exception as e:          # (located as the call as written locates it)
                raise interp.call_error(e, node) from None
        return make

    def same_as(self, other) -> bool:
        return other.__class__ is EffectStep and self.node is other.node and self.line == other.line \
            and _same_callee(self.callee, other.callee) \
            and same_template(self.args, other.args) and same_template(self.kwargs, other.kwargs)


def _same_callee(a, b) -> bool:
    if a.__class__ is BuiltinMethodType:      # (a list's append, read again at each call)
        return b.__class__ is BuiltinMethodType and a.__self__ is b.__self__ and a.__name__ == b.__name__
    if a.__class__ is BoundMethod:
        return b.__class__ is BoundMethod and a.name == b.name and a.replay == b.replay \
            and getattr(a.fn, "__code__", None) is getattr(b.fn, "__code__", None) \
            and _closure(a.fn) == _closure(b.fn)
    return a is b


def _closure(fn) -> list:
    """The objects a bound method's function closes over, by identity (the same method of the same object)."""
    return [id(c.cell_contents) for c in (getattr(fn, "__closure__", None) or ())]


class CheckStep:
    """A check of a traced value (``kernels.checked``: a loss's labels in range), made again on each
    iteration's value; it raises what the call as written would."""

    def __init__(self, check, spec, params):
        self.check, self.spec, self.params = check, spec, params

    def specs(self):
        return self.spec

    def make(self, interp, values):
        self.check(resolve(self.spec, values), *self.params)

    def same_as(self, other) -> bool:
        return other.__class__ is CheckStep and other.check is self.check and same_specs([self.spec], [other.spec]) \
            and same_value(self.params, other.params)


class DrawStep:
    """Random draws (``kernels.drawn``: a dropout layer's), made again from the same generator at each
    iteration, in the order the loop as written makes them; their array is the step's result."""

    def __init__(self, draw, params):
        self.draw, self.params = draw, params

    def specs(self):
        return ()

    def make(self, interp, values):
        return self.draw(*self.params)

    def same_as(self, other) -> bool:
        return other.__class__ is DrawStep and other.draw is self.draw and same_value(self.params, other.params)


class UpdateStep:
    """A variable's update from an iteration's array (``kernels.updated``: a batch normalization's moving
    statistics), made again on each iteration's array; the variable's new array is the next step's."""

    def __init__(self, update, variable, spec, params):
        self.update, self.variable, self.spec, self.params = update, variable, spec, params

    def specs(self):
        return self.spec

    def make(self, interp, values):
        self.update(self.variable, resolve(self.spec, values), *self.params)

    def same_as(self, other) -> bool:
        return other.__class__ is UpdateStep and other.update is self.update and other.variable is self.variable \
            and same_specs([self.spec], [other.spec]) and same_value(self.params, other.params)


class VariableStep:
    """A variable's array after the effect before it: what the iteration's later calls read of it."""

    def __init__(self, variable):
        self.variable = variable

    def specs(self):
        return ()

    def make(self, interp, values):
        return self.variable.read().value

    def same_as(self, other) -> bool:
        return other.__class__ is VariableStep and other.variable is self.variable


class RequestStep:
    """A tape's gradient request, added again with this iteration's gradients (``grad --json`` lists one per
    call; ``tapecli check`` differentiates its objective). ``values``, ``result``, ``args``, ``kwargs``: the
    templates of the request's gradients, of what the call returned and of the call's arguments."""

    def __init__(self, request, values, result, args, kwargs):
        self.request = request
        self.values, self.result, self.args, self.kwargs = values, result, args, kwargs
        # whether its objective's target or seeds hold a variable (read at the request: a variable may change)
        self.reads_variables = any(isinstance(getattr(t, "value", None), Variable) for t in _leaves(_objective(args, kwargs)))
        self.made = [maker(t) for t in (values, result, args, kwargs)]

    def specs(self):
        return self.values, self.result, self.args, self.kwargs

    def make(self, interp, values):
        traced = self.request
        made_values, made_result, made_args, made_kwargs = self.made
        objective = None
        if traced.kind == "gradient":
            args, kwargs = made_args(values), made_kwargs(values)
            target, seeds = _objective(args, kwargs)
            if self.reads_variables:        # read now: a variable may change (as the tape's request reads it)
                objective = gradients.objective(target, seeds)
            else:                           # a plan's tensors never change: read when asked
                objective = lambda: gradients.objective(target, seeds)()    # noqa: E731
        request = Request(traced.kind, traced.line, traced.tape, traced.target_text, traced.labels,
                          made_values(values), made_result(values), traced.why, traced.leaves,
                          objective)
        request.names = traced.names
        interp.requests.append(request)

    def same_as(self, other) -> bool:
        a, b = self.request, other.request
        return other.__class__ is RequestStep and (a.kind, a.line, a.tape, a.target_text, a.labels, a.why) == (
            b.kind, b.line, b.tape, b.target_text, b.labels, b.why) \
            and len(a.leaves) == len(b.leaves) and all(x is y for x, y in zip(a.leaves, b.leaves)) \
            and all(same_template(x, y) for x, y in ((self.values, other.values), (self.result, other.result),
                                                      (self.args, other.args), (self.kwargs, other.kwargs)))


def _objective(args, kwargs) -> tuple:
    """The target and the output gradients of a gradient call's arguments (its values, or their templates)."""
    if args.__class__ is Sequence:
        args, kwargs = args.items, dict(zip(kwargs.keys, kwargs.items))
    target = args[0] if args else kwargs.get("target")
    return target, kwargs.get("output_gradients", args[2] if len(args) > 2 else None)


# ------------------------------------------------------------------ what a compiled plan calls

def alone(array) -> bool:
    """Whether nothing holds ``array`` but a plan's local ``o``, and nothing holds its base but ``array`` (a
    reshape's view): its memory is free for a kernel's result."""
    base = array.base
    return getrefcount(array) == _ALONE[0] and (base is None or base.__class__ is np.ndarray and base.base is None
                                                and getrefcount(base) == _ALONE[1])


def _alone_counts() -> tuple[int, int]:
    """What :func:`alone` counts for an array held by its caller's local alone, and for the base of such a view
    (measured the same way: an interpreter may borrow some references and count fewer)."""
    def counts(array):
        base = array.base
        return getrefcount(array), getrefcount(base)
    o = np.empty(2).reshape(1, 2)
    return counts(o)


_ALONE = _alone_counts()


def as_array(out):
    """A kernel's result as ``kernels.run`` gives it: an array or a NumPy scalar."""
    return out if out.__class__ is np.ndarray or isinstance(out, np.generic) else np.asarray(out)
