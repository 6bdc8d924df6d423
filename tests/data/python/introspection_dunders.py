import copy
import functools
import math
from fractions import Fraction
from typing import Generic, TypeVar

import numpy as np


def logged(fn):
    @functools.wraps(fn)
    def wrapper(*args):
        return fn(*args) + 1
    return wrapper


@logged
def square(x):
    return x * x


@functools.lru_cache(maxsize=None)
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


print(square(3), square.__wrapped__(3), square.__name__, fib(20), fib.__wrapped__(10), fib.cache_info().hits)


def to_list(x):
    if hasattr(x, "__array__"):
        return np.asarray(x).tolist()
    return list(x)


print(to_list(np.arange(3)), to_list((1, 2)), hasattr(square, "__wrapped__"), hasattr(square, "__code__"),
      hasattr(3, "__index__"), hasattr([], "__array__"))
print((7.5).__floor__(), (7.5).__ceil__(), (-7.5).__trunc__(), Fraction(7, 2).__floor__(), (5).__ceil__(),
      math.floor(Fraction(-7, 2)))

T = TypeVar("T")


class Stack(Generic[T]):
    def __init__(self):
        self.items = []


alias = Stack[int]
print(alias.__origin__ is Stack, alias.__args__, list[int].__origin__, dict[str, int].__args__)

# the builtins a run answers with its own function are named, shown and documented as CPython's
own = [print, iter, getattr, hasattr, vars, dir, setattr, delattr, pow, len]
print([f.__name__ for f in own], [f.__qualname__ for f in own], {f.__module__ for f in own})
print({type(f).__name__ for f in own}, repr(print), str(setattr), iter, pow, print.__doc__.splitlines()[0])
print(copy.copy(print) is print, copy.deepcopy({"act": pow})["act"] is pow, callable(iter), type(print))

# a program function's default values, read as it may set them (an estimator's get_params, a config's defaults)


def fit(X, lr=0.1, *extra, epochs=3, **kw):
    pass


class Estimator:
    def __init__(self, alpha=1.0, *, tol=1e-4):
        pass


print(fit.__defaults__, fit.__kwdefaults__, Estimator.__init__.__defaults__, Estimator().__init__.__kwdefaults__)
print((lambda a, b=[1]: a).__defaults__, getattr(Estimator.__init__, "__kwdefaults__"), fit.__annotations__)
fit.__defaults__ = (0.5,)
print(fit.__defaults__, (lambda: 0).__defaults__, (lambda: 0).__kwdefaults__)
