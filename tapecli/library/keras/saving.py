"""keras.saving's registry of a program's classes and functions (also keras.utils'): ``register_keras_serializable``
as a decorator, ``get_registered_name`` and ``get_registered_object``, as Keras 3's
object_registration gives them, the registry kept by the run. A program that uses them runs on CPython: the
interpreter takes a class decorator as the class itself (frontend/forms.py), so its registry would stay empty, and
these refuse it rather than answer as if nothing were registered. Saving and loading files stay out of scope
(library/scope.py)."""
from __future__ import annotations

import types

from tapecli.errors import TdfTypeError, TdfValueError
from tapecli.interpreter.registry import builtin_function
from tapecli.runtime.context import current


class Registry:
    """The run's registered objects: by their registered name (``package>name``), and each object's name."""

    def __init__(self):
        self.objects: dict = {}
        self.names: dict = {}


def _registry() -> Registry:
    ctx = current()
    if ctx.bridge is None:
        raise TdfTypeError("the interpreter keeps no registry of Keras's serializable objects (it takes a class "
                           "decorator as the class itself)",
                           hint="a program that uses keras.saving's registry runs on CPython "
                           "(TAPECLI_TF_ON_CPYTHON=1 or auto)")
    if ctx.keras_registry is None:
        ctx.keras_registry = Registry()
    return ctx.keras_registry


def register_keras_serializable(package="Custom", name=None):
    """A decorator that registers a class or function under ``package>name`` (``name``: its own by default)."""
    registry = _registry()

    def decorator(arg):
        own = getattr(arg, "fn", arg)           # (the program's class or function, as the library holds it)
        registered = f"{package}>{name if name is not None else own.__name__}"
        if isinstance(arg, type) and not hasattr(arg, "get_config"):
            raise TdfValueError("Cannot register a class that does not have a get_config() method.")
        registry.objects[registered] = arg
        registry.names[own] = registered
        return arg
    return builtin_function(decorator)      # (called as the library's: its argument as the library holds it)


def get_registered_name(obj):
    """The name an object is registered under, else its own ``__name__`` (a program's function as the program
    holds it: the library's view of it has it as ``fn``)."""
    obj = getattr(obj, "fn", obj)
    return _registry().names.get(obj, getattr(obj, "__name__", None))


def registered_name(obj, name: str) -> str:
    """The registered name of a program's function or of its object's class, else ``name`` (the interpreter
    keeps no registry: its objects have their own names)."""
    registry = current().keras_registry
    if registry is None:
        return name
    obj = getattr(obj, "fn", obj)
    return registry.names.get(obj if isinstance(obj, types.FunctionType) else type(obj), name)


def get_registered_object(name, custom_objects=None, module_objects=None):
    """The object registered (or in ``custom_objects``, or ``module_objects``) under ``name``, else None."""
    _registry()             # (refused on the interpreter, which keeps no registry)
    found = registered_object(name, custom_objects)
    return found if found is not None else (module_objects or {}).get(name)


def registered_object(name: str, custom_objects=None):
    """What Keras's deserialization finds under ``name``: the registered object, else ``custom_objects``'s, else
    None (the interpreter keeps no registry: its custom objects only)."""
    registry = current().keras_registry
    for found in (registry.objects if registry is not None else {}, custom_objects or {}):
        if name in found:
            return found[name]
    return None


FUNCTIONS = {"register_keras_serializable": register_keras_serializable, "get_registered_name": get_registered_name,
             "get_registered_object": get_registered_object}
