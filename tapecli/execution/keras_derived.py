"""A program's class derived from a concrete Keras class of the library's, on CPython (``class
GCRMSprop(keras.optimizers.RMSprop)``, ``class IoU(keras.metrics.Mean)``, ``class ScaledDense(keras.layers.Dense)``):
the class statement derives from a class made for it (tf_values.LibraryKind.__mro_entries__), whose instance holds
the library's object made from the arguments of ``super().__init__(...)`` and gives its attributes and methods.
A layer's is a program's layer (keras_classes.Layer: Keras calls its ``build`` and ``call``, which are the held
layer's unless the class overrides them; ``super().call(x)`` reaches the held layer's). The methods that Keras calls on the
object itself and the library calls by the same names with Keras's arguments (the library class's ``called_back``:
an optimizer's apply_gradients and apply, a metric's update_state, result and reset_state) are the program's where
its class overrides them: the object calls them back (fit's apply_gradients, compile's metrics, a metric called),
and ``super()`` reaches the library's own. A class that overrides one Keras calls and the library does not
(``not_called_back``: a concrete optimizer's update_step) is refused where it is made: the override would go
uncalled. The base ``keras.optimizers.Optimizer`` is derived from the same way (its library class calls back the
subclass's build and update_step: library/keras/optimizer_base.py)."""
from __future__ import annotations

from tapecli.execution.keras_classes import Layer
from tapecli.execution.tf_values import DERIVED_BASE, LibraryDerived, LibraryKind, ProgramCallable, as_tensorflow, \
    call_library, library_attribute, library_value, program_method, set_library_attribute
from tapecli.interpreter.classes import LAYER
from tapecli.library.keras.common import auto_name, method, snake_case
from tapecli.library.keras.optimizer_base import BaseOptimizer
from tapecli.runtime.context import current


def derived_base(kind: LibraryKind) -> type:
    """The class ``kind`` stands for as a base: one per class statement, named as Keras's."""
    made = getattr(kind._of, "makes", None)
    if not isinstance(made, type) or getattr(made, "derivable", False) is not True:
        raise TypeError(f"tapecli cannot derive a class from {kind.__name__}: a program's class derives from "
                        "Keras's concrete layers, optimizers and metrics, and from its base classes "
                        "(keras.layers.Layer, keras.Model, keras.losses.Loss, keras.metrics.Metric, "
                        "keras.callbacks.Callback...)")
    base = DerivedLayer if LAYER in made.keras_bases else DerivedOptimizer if made is BaseOptimizer else KerasDerived
    return type(kind.__name__, (base,), {"_keras_kind": kind, "__module__": base.__module__})


class DerivedLayer(Layer):
    """The base of the class made for a library layer (``_keras_kind``: its LibraryKind): a program's layer
    holding the library's layer (``_keras_held``), made from ``super().__init__``'s arguments with the program
    layer's name (Keras's, from the program's class: ``scaled_dense``)."""

    _keras_kind: LibraryKind

    def __init__(self, *args, name=None, trainable=True, **kwargs):
        super().__init__(name=name, trainable=trainable, input_shape=kwargs.get("input_shape"))
        self._keras_held = type(self)._keras_kind(*args, name=self.name, trainable=trainable, **kwargs)

    def get_config(self) -> dict:
        """The held layer's (Keras's Dense.get_config, where the class writes none)."""
        return self._keras_held.get_config()

    def build(self, input_shape):
        """The held layer's build; its weights become the layer's own, in the order Keras makes them."""
        held = library_value(self._keras_held)
        if not held.built:
            _build(held, tuple(None if d is None else int(d) for d in input_shape))
            for weight in held.weights:
                self._own_weights.append(weight)
                if weight.trainable:
                    self.__dict__.setdefault("_trainable_made", set()).add(id(weight))
        self.built = True

    def call(self, *args, **kwargs):
        return self._keras_held(*args, **kwargs)

    def __getattr__(self, name: str):
        """The held layer's attributes (``units``, ``kernel``, ``activation``) where the instance has none."""
        held = vars(self).get("_keras_held")
        if held is None or name.startswith("_"):
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        return getattr(held, name)


@as_tensorflow
def _build(held, shape: tuple) -> None:
    held.build_for(shape, held.compute_dtype)


class KerasDerived(LibraryDerived):
    """The base of the class made for a library class (``_keras_kind``: its LibraryKind)."""

    _keras_kind: LibraryKind

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if not hasattr(cls, "_keras_kind"):         # (a base of tapecli's own: DerivedOptimizer)
            return
        base = _made_base(cls)
        if base is cls:
            return
        library_class = base._keras_kind._of.makes
        for name, value in vars(cls).items():
            if not callable(value) or name.startswith("__"):
                continue
            if name in library_class.not_called_back:
                raise TypeError(f"tapecli cannot run {cls.__name__}.{name}: Keras's {base.__name__} calls {name} "
                                f"itself, which tapecli's does not call back (it calls "
                                f"{', '.join(sorted(library_class.called_back))})")
            if name not in vars(base):              # (super().name: the library's own)
                setattr(base, name, _forwarding(name))

    def __init__(self, *args, **kwargs):
        of = library_value(type(self)._keras_kind(*args, **kwargs))
        object.__setattr__(self, "_keras_of", of)
        current().library_views[id(of)] = self          # (the library's object, handed back, is this instance)
        mro = type(self).__mro__
        overridden = {name for cls in mro[:mro.index(_made_base(type(self)))] for name in vars(cls)}
        for name in type(of).called_back & overridden:
            vars(of)[name] = _called_back(getattr(self, name))
        vars(of).pop("_methods", None)          # (KerasObject.get_attribute's, made before the overrides)

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        return library_attribute(self.held(), name)

    def __setattr__(self, name: str, value) -> None:
        """An attribute of the library's object (``learning_rate``) set on it; any other the instance's own."""
        of = vars(self).get("_keras_of")
        if of is not None and not name.startswith("_") and name in of.attributes():
            set_library_attribute(of, name, value)
        else:
            object.__setattr__(self, name, value)

    def __call__(self, *args, **kwargs):
        return call_library(self.held(), args, kwargs)


class DerivedOptimizer(KerasDerived):
    """The base of a program's subclass of ``keras.optimizers.Optimizer`` (optimizer_base.py): named after its
    class where ``super().__init__`` gives no name (Keras's ``my_lion``), with Keras's ``_get_variable_index`` and
    ``from_config``."""

    def __init__(self, *args, name=None, **kwargs):
        super().__init__(*args, name=name or auto_name(current().bridge.run, snake_case(type(self).__name__)),
                         **kwargs)

    def _get_variable_index(self, variable) -> int:
        return self.held().variable_index(library_value(variable))

    @classmethod
    def from_config(cls, config: dict):
        return cls(**config)


def _made_base(cls: type) -> type:
    return next(c for c in cls.__mro__ if "_keras_kind" in vars(c))


def _called_back(bound):
    """A program's override as the library's object calls it: with the library's values, on the program's side."""
    callee = ProgramCallable(bound)
    return lambda *args, **kwargs: callee.call(current().bridge.run, list(args), kwargs, None)


def _forwarding(name: str):
    """``super().name(...)`` of a program's class: the library's own method (not the override it calls back)."""
    def forward(self, *args, **kwargs):
        of = self.held()
        if name in type(of).called_back:
            return program_method(method(name, getattr(type(of), name).__get__(of)), name)(*args, **kwargs)
        return library_attribute(of, name)(*args, **kwargs)
    forward.__name__ = forward.__qualname__ = name
    return forward


DERIVED_BASE.append(derived_base)
