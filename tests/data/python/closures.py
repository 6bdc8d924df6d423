import functools


def counter():
    count = 0

    def inc(step=1):
        nonlocal count
        count += step
        return count
    return inc


c = counter()
c(); c(); print(c(5))

total = 0


def add(v):
    global total
    total += v


add(3); add(4)
print(total)


def append(v, seq=[]):
    seq.append(v)
    return seq


append(1)
print(append(2))
fns = [lambda: i for i in range(3)]
bound = [lambda i=i: i for i in range(3)]
print([f() for f in fns], [f() for f in bound])


def logged(func):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        print("calling", func.__name__, args, kwargs)
        return func(*args, **kwargs)
    return wrapper


@logged
def area(w, h=1, *, scale=1):
    """Area."""
    return w * h * scale


print(area(2, 3, scale=2), area.__name__, area.__doc__)


def star(a, *args, b=2, **kwargs):
    return a, args, b, sorted(kwargs.items())


print(star(1, 2, 3, c=4, b=5), star(*[1, 2], **{"z": 1}))
print(functools.reduce(lambda a, b: a * b, range(1, 6)), functools.partial(pow, 2)(10))


@functools.lru_cache(maxsize=None)
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


print(fib(80))


# locals() in a function: a snapshot of its names (a config's hyperparameters, str.format(**locals()))
class Model:
    def __init__(self, lr=0.1, layers=(4, 2), *, act="relu"):
        hp = dict(locals())
        hp.pop("self")
        self.hparams = hp

    def forward(self, x):
        h = x * 2
        return super().__repr__ is not None, sorted(locals())


def fmt(name, value):
    unit = "ms"
    return "{name}={value:.2f}{unit}".format(**locals())


def enclosing():
    a = 1

    def inner():
        b = a + 1
        return sorted(locals().items())
    return inner()


def stages():
    x = 1
    yield sorted(locals())
    y = x + 1
    yield sorted(locals())


print(Model().hparams, Model(0.5, act="tanh").forward(3), fmt("loss", 0.12345), enclosing(), list(stages()))
print([sorted(locals()) for _ in range(1)], (lambda q=1: locals())())
