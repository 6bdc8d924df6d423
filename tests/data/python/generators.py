import types


def count(n):
    i = 0
    while i < n:
        yield i
        i += 1


def chain(*gens):
    for g in gens:
        yield from g


def pairs():
    x = yield "ready"
    while x is not None:
        x = yield x * 2


g = count(3)
print(list(g), list(g))
print(list(chain(count(2), "ab", [9])))
squares = (x * x for x in range(5))
print(sum(squares), sum(squares))
p = pairs()
print(next(p), p.send(3), p.send(5))
it = iter([1, 2, 3])
print(next(it), next(it, None), list(it), next(it, "end"))
print(list(zip(count(4), "abc")), list(enumerate("xy", start=1)))
print(any(x > 3 for x in count(10)), all(x < 3 for x in []))
gen = (i for i in range(3))
print(type(gen).__name__, list(map(lambda v: v + 1, gen)))
print(dict((k, v) for k, v in zip("ab", range(2))))


# coroutines driven by hand, without an event loop (types names their classes as it names the generator's)
class Pause:
    def __await__(self):
        got = yield "paused"
        return got * 2


async def doubled(n):
    return [await Pause() for _ in range(n)]


async def squares_of(n):
    for i in range(n):
        yield i * i


async def collected():
    return [x async for x in squares_of(4)]


c = doubled(2)
print(c.send(None), c.send(1))
try:
    c.send(5)
except StopIteration as e:
    print("returned", e.value)
c2 = collected()
try:
    c2.send(None)
except StopIteration as e:
    print("collected", e.value)
print(isinstance(c, types.CoroutineType), isinstance(squares_of(1), types.AsyncGeneratorType),
      isinstance(gen, types.GeneratorType), type(c).__name__)
