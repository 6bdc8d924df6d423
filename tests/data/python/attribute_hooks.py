# Python's attribute access itself on a program's objects: a frozen dataclass's __post_init__,
# a class overriding __setattr__ / __getattr__ and calling object's or super()'s.
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Config:
    lr: float
    tag: str = field(init=False)

    def __post_init__(self):
        object.__setattr__(self, "tag", f"lr={self.lr}")


c = Config(0.1)
print(c, c.tag)
try:
    c.lr = 0.2
except Exception as e:
    print(type(e).__name__, e)


class Module:
    def __init__(self):
        super().__setattr__("params", {})

    def __setattr__(self, key, value):
        if isinstance(value, float):
            self.params[key] = value
        super().__setattr__(key, value)

    def __delattr__(self, key):
        self.params.pop(key, None)
        object.__delattr__(self, key)


m = Module()
m.w = 1.5
m.n = 3
print(m.params, m.w, m.n)
del m.w
print(m.params, hasattr(m, "w"))


class Lazy:
    x = 1

    def __getattr__(self, name):
        return f"missing {name}: {super().__getattribute__('x')}"


print(object.__getattribute__(Lazy(), "x"), Lazy().y)
try:
    object.__getattribute__(Lazy(), "nope")
except AttributeError as e:
    print("AttributeError", e)
