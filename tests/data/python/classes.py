class A:
    kind = "a"

    def __init__(self, x):
        self.x = x

    def __repr__(self):
        return f"A({self.x!r})"

    def __eq__(self, other):
        return isinstance(other, A) and self.x == other.x

    def __lt__(self, other):
        return self.x < other.x

    def __hash__(self):
        return hash(self.x)


class B(A):
    kind = "b"

    def __init__(self, x, y=0):
        super().__init__(x)
        self.y = y

    @staticmethod
    def make(n):
        return B(n, n * 2)

    @classmethod
    def named(cls, n):
        return cls(n)

    @property
    def total(self):
        return self.x + self.y

    @total.setter
    def total(self, value):
        self.y = value - self.x


class C(object):
    __slots__ = ("v",)

    def __init__(self):
        self.v = 1


b = B.make(3)
print(isinstance(b, A), isinstance(b, (int, A)), issubclass(B, A), issubclass(A, B))
print(b, b.total, B.named(4).kind, type(b).__name__, b.__class__.__name__)
b.total = 10
print(b.y, sorted([A(3), A(1), A(2)]), A(1) == A(1), len({A(1), A(1), A(2)}))
print(C().v, isinstance(C(), object))


class Counter:
    def __init__(self):
        self.items = []

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]

    def __iter__(self):
        return iter(self.items)

    def __call__(self, v):
        self.items.append(v)
        return self

    def __contains__(self, v):
        return v in self.items

    def __str__(self):
        return "Counter" + str(self.items)


c = Counter()
c(1)(2)(3)
print(len(c), c[1], list(c), 2 in c, f"{c}", str(c), [x * 2 for x in c])


class Private:
    def __init__(self):
        self.__secret = 42
        self._shown = 1

    def secret(self):
        return self.__secret


p = Private()
print(p.secret(), p._shown, p._Private__secret, vars(p))


# a class type() makes is the program's module's, as a class statement's is
Made = type("Made", (), {"x": 2})


def make_layer(kind, **attrs):
    return type(kind.title() + "Layer", (object,), attrs)


Dense = make_layer("dense", units=4)
print(Made, Made.__module__, Dense, Dense.__module__, Dense.units, type("Own", (), {"__module__": "mine"}))
