"""Descriptors, __set_name__, __slots__, __init_subclass__, metaclasses, properties."""


class Typed:
    def __init__(self, kind, default=None):
        self.kind = kind
        self.default = default

    def __set_name__(self, owner, name):
        self.public = name
        self.private = "_" + name

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return getattr(obj, self.private, self.default)

    def __set__(self, obj, value):
        if not isinstance(value, self.kind):
            raise TypeError(f"{self.public} must be {self.kind.__name__}, got {type(value).__name__}")
        setattr(obj, self.private, value)


class Positive(Typed):
    def __set__(self, obj, value):
        super().__set__(obj, value)
        if value <= 0:
            raise ValueError(f"{self.public} must be > 0")


class LayerConfig:
    name = Typed(str, "layer")
    units = Positive(int, 1)
    dropout = Typed(float, 0.0)

    def __init__(self, name, units, dropout=0.0):
        self.name, self.units, self.dropout = name, units, dropout

    def __repr__(self):
        return f"LayerConfig({self.name!r}, units={self.units}, dropout={self.dropout})"


cfg = LayerConfig("dense1", 64, 0.1)
print(cfg, vars(cfg))
for bad in [("x", -3), ("x", 2.5)]:
    try:
        LayerConfig(*bad)
    except (TypeError, ValueError) as e:
        print(type(e).__name__, e)
print(LayerConfig.units.__class__.__name__, LayerConfig.units.private)


class Registry(type):
    classes = {}

    def __new__(mcls, name, bases, ns, **kw):
        cls = super().__new__(mcls, name, bases, ns)
        if bases:
            mcls.classes[name.lower()] = cls
        cls.created_by = mcls.__name__
        return cls

    def __call__(cls, *args, **kwargs):
        inst = super().__call__(*args, **kwargs)
        inst.instance_no = getattr(cls, "_count", 0) + 1
        cls._count = inst.instance_no
        return inst


class Activation(metaclass=Registry):
    def __call__(self, x):
        return [self.f(v) for v in x]


class ReLU(Activation):
    def f(self, v):
        return max(0.0, v)

class LeakyReLU(Activation):
    def __init__(self, slope=0.01):
        self.slope = slope

    def f(self, v):
        return v if v > 0 else self.slope * v


print(sorted(Registry.classes), type(ReLU).__name__, ReLU.created_by)
act = Registry.classes["leakyrelu"](0.1)
print(act([-2.0, 0.5, 3.0]), act.instance_no, LeakyReLU().instance_no, ReLU()([-1, 2]))


class Plugin:
    plugins = []

    def __init_subclass__(cls, *, priority=0, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.priority = priority
        Plugin.plugins.append(cls)


class Normalize(Plugin, priority=10): pass
class Augment(Plugin): pass
class Cache(Plugin, priority=5): pass

print([(p.__name__, p.priority) for p in sorted(Plugin.plugins, key=lambda c: -c.priority)])


class Point:
    __slots__ = ("x", "y")

    def __init__(self, x, y):
        self.x, self.y = x, y

    @property
    def norm(self):
        return (self.x ** 2 + self.y ** 2) ** 0.5


p = Point(3, 4)
print(p.norm, Point.__slots__, hasattr(p, "__dict__"))
try:
    p.z = 1
except AttributeError as e:
    print("AttributeError:", e)


class Lazy:
    def __init__(self, func):
        self.func = func

    def __get__(self, obj, cls):
        if obj is None:
            return self
        value = self.func(obj)
        obj.__dict__[self.func.__name__] = value
        return value


class Dataset:
    calls = 0

    @Lazy
    def stats(self):
        Dataset.calls += 1
        return {"mean": 2.5, "n": 4}


d = Dataset()
print(d.stats, d.stats, Dataset.calls, "stats" in vars(d))
print([c.__name__ for c in LeakyReLU.__mro__], isinstance(ReLU, Registry))
