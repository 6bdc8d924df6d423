"""No object a program makes answers for NumPy's raw-memory interfaces.

NumPy turns any object with an ``__array_interface__`` into an array over the memory it names, and that dict
may name a raw address: reading or writing the array then reads or writes whatever lies there. So the
program's classes are sealed as their class statement makes them: a class may not define the names, each
gets a data descriptor that answers AttributeError for them (it shadows an entry in an instance's own
dictionary), and a class's own ``__getattr__``/``__getattribute__`` answers AttributeError for them too. The
guard refuses the names to attribute reads and writes (guard.UNREACHABLE), and the library's own objects that
take any attribute name (types.SimpleNamespace, argparse.Namespace) are given the same descriptors."""
from __future__ import annotations

import abc
import argparse
import dataclasses
import enum
import functools
import sys
import types
import typing

from tapecli.errors import TdfNameError
from tapecli.execution.guard import UNREACHABLE
from tapecli.runtime.context import current

RAW_MEMORY = UNREACHABLE & {"__array_interface__", "__array_struct__", "__cuda_array_interface__"}
GETTERS = ("__getattr__", "__getattribute__")
_HINT = "programs cannot reach raw memory: give NumPy a list or an array (np.asarray) instead"


class _Absent:
    """A data descriptor answering AttributeError: NumPy's lookup then finds no interface."""

    def __init__(self, name: str):
        self.name = name

    def __get__(self, obj, owner=None):
        raise AttributeError(self.name)

    def __set__(self, obj, value):
        raise refused(self.name, "set")

    def __delete__(self, obj):
        raise AttributeError(self.name)


ABSENT = {name: _Absent(name) for name in RAW_MEMORY}
# typing's runtime protocol checks take every name in a protocol class's dictionary for a member, the seal's
# descriptors too, which no instance answers (isinstance(x, P) was always False): they are not members. (typing
# reads this global at each check; the names are the ones no program may define.)
typing.EXCLUDED_ATTRIBUTES = (typing.EXCLUDED_ATTRIBUTES + sorted(RAW_MEMORY)
                              if isinstance(typing.EXCLUDED_ATTRIBUTES, list)
                              else frozenset(typing.EXCLUDED_ATTRIBUTES) | RAW_MEMORY)


def refused(name: str, verb: str = "defined") -> TdfNameError:
    return TdfNameError(f"{name} cannot be {verb} by tapecli programs: NumPy would read raw memory through it",
                        hint=_HINT)


def seal(cls: type) -> None:
    """Seals a class the program's class statement made (its metaclass's own __setattr__ is not asked)."""
    own = type.__getattribute__(cls, "__dict__")
    for name in RAW_MEMORY & own.keys():
        if own[name] is not ABSENT[name]:
            raise refused(name)
    metaclass = issubclass(cls, type)
    for name in RAW_MEMORY if not metaclass else ():    # (a metaclass's would refuse its classes' own)
        type.__setattr__(cls, name, ABSENT[name])
    for name in GETTERS:
        if name in own:
            type.__setattr__(cls, name, _refusing(own[name]))
    if metaclass and not getattr(own.get("__new__"), "seals", False):
        type.__setattr__(cls, "__new__", _sealing_new(cls, own.get("__new__")))


def _sealing_new(metaclass: type, own_new):
    """A program's metaclass makes sealed classes, called by a class statement or directly."""
    make = own_new.__func__ if isinstance(own_new, staticmethod) else own_new

    def __new__(mcls, *args, **kwargs):
        made = make(mcls, *args, **kwargs) if make is not None else super(metaclass, mcls).__new__(
            mcls, *args, **kwargs)
        if isinstance(made, type):
            seal(made)
        return made
    __new__.seals = True
    return staticmethod(__new__)


def hidden(obj, name: str) -> bool:
    """Whether ``name`` is one of the seal's descriptors on ``obj``'s class (dir() does not list them)."""
    cls = obj if isinstance(obj, type) else type(obj)
    for klass in type.__getattribute__(cls, "__mro__"):
        found = type.__getattribute__(klass, "__dict__").get(name)
        if found is not None:
            return found is ABSENT.get(name)
    return False


def _refusing(getter):
    if not callable(getter) or isinstance(getter, (staticmethod, classmethod)) or getattr(getter, "refuses", False):
        return getter

    @functools.wraps(getter)
    def refusing(self, name, *rest):
        if name in RAW_MEMORY:
            raise AttributeError(name)
        return getter(self, name, *rest)
    refusing.refuses = True
    return refusing


def _refusing_namespaces(metaclass: type) -> None:
    """``metaclass`` refuses a namespace holding the names while a program runs, however its class is made: a
    class statement (sealed anyway), or the metaclass called with a namespace (``abc.ABCMeta('P', (), ns)``,
    enum's functional form), which makes the class in C, where no guard runs. (Outside a run the library's own
    classes may name them: PIL's SupportsArrayInterface protocol, imported by matplotlib for ``tapecli plot``.)"""
    own = metaclass.__dict__["__new__"]
    make = own.__func__ if isinstance(own, staticmethod) else own

    def __new__(mcls, name, bases, namespace, /, **kwargs):
        named = RAW_MEMORY.intersection(namespace)
        if named and current().program_running:
            raise refused(min(named))
        return make(mcls, name, bases, namespace, **kwargs)
    type.__setattr__(metaclass, "__new__", staticmethod(__new__))


# The library's metaclasses a program may call with a namespace of its own.
for _metaclass in (abc.ABCMeta, enum.EnumType):
    _refusing_namespaces(_metaclass)


# The library's objects that take any attribute name from their constructor's keywords.
for _cls in (argparse.Namespace,):
    for _name in RAW_MEMORY:
        setattr(_cls, _name, ABSENT[_name])


class SimpleNamespace(types.SimpleNamespace):
    """types.SimpleNamespace as a program has it: sealed (the C type itself takes no attribute), printed as
    CPython prints its own."""

    def __repr__(self):
        text = types.SimpleNamespace.__repr__(self)
        return "namespace" + text.removeprefix("SimpleNamespace") if type(self) is SimpleNamespace else text


SimpleNamespace.__module__ = "types"
seal(SimpleNamespace)


def make_dataclass(*args, **kwargs):
    """dataclasses.make_dataclass, its class sealed (its fields are names the program chose)."""
    cls = dataclasses.make_dataclass(*args, **kwargs)
    seal(cls)
    return cls


def made(maker, *args, **kwargs):
    """``type(name, bases, namespace)`` as a program writes it (guard.MADE): the class sealed as a class
    statement's is (``maker`` is whatever the name ``type`` is where the call is)."""
    if maker is type and len(args) == 3 and isinstance(args[2], dict) and "__module__" not in args[2]:
        # (CPython names the class's module after the globals of the frame that calls type: the program's, not
        # this function's)
        args = (*args[:2], {**args[2], "__module__": sys._getframe(1).f_globals.get("__name__")})
    result = maker(*args, **kwargs)
    if maker is type and isinstance(result, type):
        seal(result)
    return result
