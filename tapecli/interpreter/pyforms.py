"""The interpreter's Python forms (docs/spec/LANGUAGE.md §11): imports, classes, assignment to
attributes, items and nested targets, comprehensions, lambda, del, assert, conditional expressions
and f-strings. Mixed into :class:`Interpreter` beside the TDF statements and expressions."""
from __future__ import annotations

import re

import numpy as np

from tapecli.errors import RefusedImport, TdfAssertionError, TdfError, TdfNameError, TdfTypeError, TdfValueError
from tapecli.frontend import ast
from tapecli.interpreter.conversions import format_value, joined, truth
from tapecli.interpreter.objects import _Break, _Continue, Function, ProgramObject, Scope
from tapecli.interpreter.registry import BUILTINS, HOOKS
from tapecli.runtime.context import current
from tapecli.runtime.limits import admit_text
from tapecli.runtime.tape import type_word
from tapecli.runtime.values import NumpyArray, PythonTuple, Tensor, Variable
from tapecli.lazymodule import LazyModule

# Imported by the first import, class, f-string or % format a run makes
classes = LazyModule("tapecli.interpreter.classes", globals())
printing = LazyModule("tapecli.interpreter.printing", globals())

# The modules a program may import, and the namespace each binds (§11).
_MODULES = {"tensorflow": "tf", "keras": "keras", "numpy": "np", "math": "math", "tensorflow.keras": "keras",
            "tf_keras": "keras", "time": "time"}
_FROM = {"tensorflow.keras": "keras", "keras": "keras", "tensorflow": "tf", "tensorflow.keras.layers": "keras.layers",
         "keras.layers": "keras.layers", "tensorflow.keras.losses": "keras.losses", "keras.losses": "keras.losses",
         "tensorflow.keras.optimizers": "keras.optimizers", "keras.optimizers": "keras.optimizers",
         "tensorflow.keras.models": "keras.models", "keras.models": "keras.models", "numpy": "np", "math": "math",
         "time": "time", "tensorflow.experimental": "tf.experimental",
         "tensorflow.experimental.numpy": "tf.experimental.numpy"}


def importable(module: str) -> bool:
    """Whether the interpreter gives ``import module`` (or ``from a.b import c``: ``a.b.c``)."""
    return module in _MODULES or module.rpartition(".")[0] in _FROM


class PythonForms:
    """``exec_<node>`` / ``eval_<node>`` for the nodes of the Python forms (§11)."""

    # ------------------------------------------------------------ statements
    def exec_Import(self, node, scope):
        for module, bound in node.names:
            top = module.rpartition(".")[0]
            leaf = module.rpartition(".")[2]
            if not importable(module):
                raise RefusedImport(f"programs cannot import {module}", module=module,
                                    hint="tapecli programs may import tensorflow, keras, numpy and math")
            value = classes.Namespace(_MODULES[module]) if module in _MODULES else \
                classes.Namespace(_FROM[top]).get_attribute(self, leaf, node)
            self.bind(scope, bound, value, node)

    def assign_targets(self, node, scope):
        """An assignment that simple_names does not take (attributes, items, nested targets, a = b = v)."""
        first_request = self.requests.mark()
        value = self.eval(node.value, scope)
        for target in node.targets:
            self.assign_target(target, value, scope, node)
        if scope is self.globals and self.requests.mark() > first_request:
            names = [self.text(t) for t in node.targets]
            self._name_requests(first_request, value, names[0] if len(names) == 1 else names)

    def assign_target(self, target, value, scope, node):
        cls = target.__class__
        if cls is ast.Name:
            self.bind(scope, target.id, value, node)
        elif cls in (ast.TupleDisplay, ast.ListDisplay):
            items = self._destructure(value, len(target.items))
            for sub, item in zip(target.items, items):
                self.assign_target(sub, item, scope, node)
        elif cls is ast.Attribute:
            obj = self.eval(target.value, scope)
            if isinstance(obj, ProgramObject):
                obj.set_attribute(self, target.attr, value, target)
            else:
                raise TdfTypeError(f"cannot set attribute {target.attr} of {type_word(obj)}").locate(target)
        elif cls is ast.Subscript:
            obj = self.eval(target.value, scope)
            if obj.__class__ is NumpyArray:         # NumPy's item assignment, in place
                self.numpy_mutated()
                try:
                    return HOOKS["numpy_set_item"](obj, self.index_values(target.items, scope), value)
                except TdfError as e:
                    raise e.locate(target)
            if len(target.items) != 1:
                raise TdfTypeError("one index to assign to").locate(target)
            key = self.eval(target.items[0], scope)
            if isinstance(obj, list) and obj.__class__ is not PythonTuple:
                obj[self._int_index(key, target)] = value
            elif isinstance(obj, dict):
                obj[_key(key)] = value
            else:
                raise TdfTypeError(f"{type_word(obj)} does not support item assignment",
                                   hint=None if isinstance(obj, list) else
                                   "tensors are immutable: use a variable's assign, or tensor_scatter_nd_update"
                                   ).locate(target)
        else:
            raise TdfTypeError("cannot assign to this expression").locate(target)

    def aug_assign_target(self, node, scope):
        """An augmented assignment that simple_names does not take (x.attr += v, x[i] -= v, x //= v)."""
        target = node.target
        if target.__class__ is ast.Subscript:       # (its object and index evaluated once, as Python does)
            obj = self.eval(target.value, scope)
            if obj.__class__ is NumpyArray:         # X[i] += v: NumPy's item, its in-place operator, written back
                items = self.index_values(target.items, scope)
                try:
                    old = HOOKS["numpy_item"](obj, items)
                    new = self.augmented(node.op, old, self.eval(node.value, scope), node)
                    self.numpy_mutated()
                    return HOOKS["numpy_set_item"](obj, items, new)
                except TdfError as e:
                    raise e.locate(target)
        old = self.eval(target, scope)
        self.assign_target(target, self.augmented(node.op, old, self.eval(node.value, scope), node), scope, node)

    def augmented(self, op, old, value, node):
        """``old op= value``'s result: a NumPy array changed in place by NumPy's operator, as Python calls
        ``__iadd__`` first; any other value's binary operation (a tensor is immutable: the name is rebound)."""
        if old.__class__ is NumpyArray:
            found = HOOKS["numpy_in_place"](op, old, value)
            if found is not NotImplemented:
                self.numpy_mutated()
                return found
        return self.binary(op, old, value, node)

    def numpy_mutated(self):
        """A NumPy array changes in place: a loop plan, which makes again only kernel calls, cannot."""
        observer = self.ctx.mode.observer
        if observer is not None:
            observer.refuse("a NumPy array changed in place")

    def for_each(self, node, scope):
        """A ``for`` whose target simple_names does not take (nested, attributes, items)."""
        for item in self.loop_items(self.eval(node.iter, scope)):
            self._step()
            self.assign_target(node.target, item, scope, node)
            try:
                self.exec_block(node.body, scope)
            except _Break:
                break
            except _Continue:
                continue

    def exec_Delete(self, node, scope):
        for target in node.targets:
            if target.__class__ is ast.Name:
                s = scope
                while s is not None and target.id not in s.vars:
                    s = s.parent
                if s is None:
                    raise TdfNameError(f"name {target.id} is not defined").locate(target)
                del s.vars[target.id]
            elif target.__class__ is ast.Subscript:
                obj = self.eval(target.value, scope)
                key = self.eval(target.items[0], scope)
                try:
                    if isinstance(obj, list) and obj.__class__ is not PythonTuple:
                        del obj[self._int_index(key, target)]
                    elif isinstance(obj, dict):
                        del obj[_key(key)]
                    else:
                        raise TdfTypeError(f"{type_word(obj)} does not support item deletion").locate(target)
                except (IndexError, KeyError):
                    raise TdfValueError(f"no item {self.text(target.items[0])} to delete").locate(target) from None
            else:
                raise TdfTypeError("del takes names and items").locate(target)

    def exec_Assert(self, node, scope):
        """``assert test, message``: an expectation (`check` and the pytest plugin count it), and on failure
        the AssertionError that ends the run. A comparison's sides are evaluated once and kept, to show."""
        test = node.test
        if isinstance(test, ast.Compare) and len(test.ops) == 1:
            left, right = self.eval(test.left, scope), self.eval(test.comparators[0], scope)
            try:
                ok = truth(self.compare(test.ops[0], left, right))
            except TdfError as e:
                raise e.locate(test)
            shown = f"assert {format_value(left)} {test.ops[0]} {format_value(right)}"     # values, as pytest shows them
        else:
            value = self.eval(test, scope)
            ok, left, right = truth(value), value, True
            shown = f"assert {format_value(value)}"
        message = self.eval(node.message, scope) if node.message is not None and not ok else None
        if message is not None:
            message = message if isinstance(message, str) else format_python(message)
        self.expectations.assertion(node, ok, left, right,
                                    None if ok else shown if message is None else f"{message}: {shown}")
        if not ok:
            raise TdfAssertionError(message if message is not None else self.text(test))

    def exec_ClassDef(self, node, scope):
        bases = []
        for b in node.bases:
            base = self.eval(b, scope)
            if base is BUILTINS.get("Model") or base is BUILTINS.get("Sequential"):
                base = classes.FrameworkBase(classes.KERAS_MODEL, classes.KERAS)
            made = getattr(base, "makes", None)         # (a class of the library's)
            if getattr(made, "derivable", False) is True:
                raise TdfTypeError(f"the interpreter cannot derive a class from Keras's {base.__name__}",
                                   hint="a program that derives from Keras's concrete layers, optimizers and metrics "
                                   "runs on CPython (TAPECLI_TF_ON_CPYTHON=1 or auto)").locate(b)
            if made is not None:
                raise TdfTypeError(f"tapecli cannot derive a class from {base.__name__}",
                                   hint="a program's class derives from a program class, tf.Module, Keras's base "
                                   "classes (keras.layers.Layer, keras.Model, keras.losses.Loss, keras.metrics.Metric, "
                                   "keras.callbacks.Callback...) and, on CPython, Keras's concrete layers, optimizers "
                                   "and metrics").locate(b)
            if not isinstance(base, (classes.ProgramClass, classes.FrameworkBase)):
                raise TdfTypeError(f"cannot derive from {type_word(base)}",
                                   hint="derive from a program class, tf.Module, keras.Model or keras.layers.Layer"
                                   ).locate(b)
            bases.append(base)
        body_scope = Scope(scope)
        self.exec_block(node.body, body_scope)
        self.bind(scope, node.name, classes.ProgramClass(node.name, bases, dict(body_scope.vars)), node)

    # ------------------------------------------------------------ expressions
    def eval_Comprehension(self, node, scope):
        local = Scope(scope)
        out_list, out_dict = [], {}
        self._comprehend(node, 0, local, out_list, out_dict)
        return out_dict if node.kind == "dict" else out_list

    def _comprehend(self, node, depth, scope, out_list, out_dict):
        target, iterable, conditions = node.generators[depth]
        for item in self.loop_items(self.eval(iterable, scope), collected=True):
            self._step()
            self.assign_target(target, item, scope, node)
            if not all(truth(self.eval(c, scope)) for c in conditions):
                continue
            if depth + 1 < len(node.generators):
                self._comprehend(node, depth + 1, scope, out_list, out_dict)
            elif node.kind == "dict":
                out_dict[_key(self.eval(node.key, scope))] = self.eval(node.element, scope)
            else:
                out_list.append(self.eval(node.element, scope))

    def eval_Lambda(self, node, scope):
        func = ast.FuncDef("<lambda>", node.params, [ast.Return(node.body, line=node.line, column=node.column,
                                                                  start=node.start, end=node.end)], [],
                           line=node.line, column=node.column, start=node.start, end=node.end)
        return Function(func, scope, self)

    def eval_IfExp(self, node, scope):
        return self.eval(node.body if truth(self.eval(node.test, scope)) else node.orelse, scope)

    def eval_FString(self, node, scope):
        parts = [p.value if p.__class__ is ast.String else self.eval(p, scope) for p in node.parts]
        return joined("", parts, "an f-string")

    def eval_FormattedValue(self, node, scope):
        value = self.eval(node.value, scope)
        observer = self.ctx.mode.observer
        if observer is not None and observer.tracked(value):
            observer.read()         # (a loop plan's value as text: Python's, which no plan makes again)
        spec = self.eval(node.spec, scope) if node.spec is not None else ""
        if node.conversion in ("r", "a"):
            value = printing.program_repr(value)
        elif node.conversion == "s":
            value = printing.program_str(value)
        return format_with(value, spec)

    def eval_Starred(self, node, scope):
        raise TdfTypeError("*value only in a call's arguments").locate(node)


def _key(k):
    """A dict key from a program value: strings, and numbers as Python numbers."""
    if isinstance(k, (str, int, float)):          # (a key a library dict gave back: a Python number)
        return k
    if isinstance(k, Tensor) and k.ndim == 0:
        return k.value.item()
    raise TdfTypeError(f"a dict key must be a string or a number, got {type_word(k)}")


def python_scalar(value):
    """A scalar tensor or variable as a Python number; anything else unchanged."""
    if isinstance(value, (Tensor, Variable)):
        v = classes.numpy_value(value)
        return v if not isinstance(v, np.ndarray) else value
    return value


def format_python(value) -> str:
    return printing.program_str(value)


# Both compiled on first use (re's cache): a program without %-formatting never needs them.
_NUMBERS = r"\d+"
# A %-conversion: its mapping key, flags, width and precision (digits or * from the arguments), type.
_PERCENT_SPEC = r"(?s)%(?:\([^)]*\))?[-+ #0]*(\*|\d*)(?:\.(\*|\d*))?[hlL]?(.)"
# Past this many digits a width or precision is not read as a number (Python refuses it anyway).
_HUGE = 10 ** 30
# The longest text of a number a conversion with no width makes ('%f' % 1e308: 316 characters).
_NUMBER_TEXT = 330


def _size(digits: str) -> int:
    return int(digits) if len(digits) < 30 else _HUGE


def percent_format(fmt: str, values) -> str:
    """Python's ``fmt % values`` on numbers and strings, weighed before Python builds it: each conversion's
    width and precision (``*`` takes them from the arguments) and its argument's text make an upper bound
    on the length; a ``%c`` may make a 4-byte character."""
    kinds = _argument_kinds(fmt)
    args = tuple(_percent_argument(v, kinds[i] if i < len(kinds) else "")
                 for i, v in enumerate(values if isinstance(values, list) else [values]))
    if not all(isinstance(a, (str, int, float, bool)) for a in args):
        raise TdfTypeError("'%' formats numbers and strings")
    length, taken, width = len(fmt), 0, 1

    def take():
        nonlocal taken
        taken += 1
        return args[taken - 1] if taken <= len(args) else ""

    for digits, precision, kind in re.findall(_PERCENT_SPEC, fmt):
        if kind == "%":
            continue
        for n in (digits, precision):
            if n == "*":
                arg = take()
                length += min(abs(arg), _HUGE) if isinstance(arg, int) else 0
            elif n:
                length += _size(n)
        value = take()
        length += len(value) if isinstance(value, str) else _NUMBER_TEXT
        width = 4 if kind == "c" else width
    admit_text(length, "a string formatted with '%'", fmt, *(a for a in args if isinstance(a, str)), width=width)
    try:
        return fmt % args
    except TypeError as e:                  # (Python's kind: too few or too many values, a number for %d)
        raise TdfTypeError(f"'%' formatting: {e}") from None
    except (ValueError, OverflowError, MemoryError) as e:
        raise TdfValueError(f"'%' formatting: {e or 'the result is too large'}") from None


def _argument_kinds(fmt: str) -> list[str]:
    """The conversion each of ``fmt % args``'s arguments meets, in order (``*`` for a width or precision)."""
    kinds = []
    for digits, precision, kind in re.findall(_PERCENT_SPEC, fmt):
        if kind != "%":
            kinds += [n for n in (digits, precision) if n == "*"] + [kind]
    return kinds


def _percent_argument(value, kind: str):
    """An argument of ``%`` as Python takes it: ``%s`` of a Python program's tensor is its text (str), ``%r``
    its repr, any other conversion takes a number."""
    if isinstance(value, str):
        return value
    if kind in ("s", "r") and current().settings.python_spelling:
        return printing.program_str(value) if kind == "s" else _Repr(printing.program_repr(value))
    return python_scalar(value)


class _Repr(str):
    """A value's repr as ``%r`` takes it: its text as it is (``%r`` of a plain str would quote it again)."""

    def __repr__(self):
        return str(self)


def format_length(value, spec: str) -> int:
    """An upper bound on the length of ``format(value, spec)``: the spec's width and precision, and the
    value's own text."""
    numbers = sum(_size(digits) for digits in re.findall(_NUMBERS, spec))
    return numbers + (len(value) if isinstance(value, str) else _NUMBER_TEXT)


def format_with(value, spec: str) -> str:
    """``format(value, spec)`` on the program value: numbers with Python's format mini-language; never a
    Python object's own __format__ beyond numbers and strings."""
    if not spec and current().settings.python_spelling:
        return printing.python_format(value)
    value = python_scalar(value)
    if isinstance(value, (bool, int, float, str)):
        if spec:
            admit_text(format_length(value, spec), f"a field formatted with {spec[:40]!r}", spec,
                       *([value] if isinstance(value, str) else []), width=4 if spec.endswith("c") else 1)
        try:
            return format(value, spec)
        except (ValueError, TypeError) as e:
            raise TdfValueError(f"format spec {spec!r}: {e}") from None
    if spec:
        raise TdfTypeError(f"format spec {spec!r} needs a number or a string, got {type_word(value)}")
    return format_python(value)
