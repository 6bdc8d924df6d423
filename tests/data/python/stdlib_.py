import dataclasses
from dataclasses import dataclass, field
from enum import Enum, auto
import random
import statistics
import string
import operator
from fractions import Fraction
from abc import ABC, abstractmethod
from typing import List, Optional
import argparse


@dataclass
class Config:
    lr: float = 0.1
    layers: List[int] = field(default_factory=lambda: [4, 2])
    name: Optional[str] = None


@dataclass(frozen=True)
class Pt:
    x: int
    y: int


cfg = Config(lr=0.01)
print(cfg, dataclasses.asdict(cfg), Pt(1, 2) == Pt(1, 2), dataclasses.replace(cfg, lr=1.0).lr)
try:
    Pt(1, 2).x = 5
except dataclasses.FrozenInstanceError as e:
    print("frozen", type(e).__name__)


class Color(Enum):
    RED = auto()
    GREEN = auto()


print(Color.RED, Color.GREEN.value, list(Color), Color["RED"].name)
random.seed(42)
print(random.random(), random.randint(1, 100), random.choice("abc"), random.sample(range(10), 3))
items = list(range(6))
random.shuffle(items)
print(items, random.gauss(0, 1), random.uniform(1, 2))
print(statistics.mean([1, 2, 3, 4]), statistics.median([3, 1, 2]), statistics.stdev([1.0, 2.0, 4.0]))
print(string.ascii_lowercase[:5], string.Template("$x!").substitute(x="hi"), string.capwords("a b"))
print(list(map(operator.itemgetter(1), [(1, 2), (3, 4)])), operator.add(1, 2), operator.attrgetter("real")(3))
print(Fraction(1, 3) + Fraction(1, 6), Fraction("0.25"))


class Shape(ABC):
    @abstractmethod
    def area(self):
        ...


class Square(Shape):
    def __init__(self, s):
        self.s = s

    def area(self):
        return self.s ** 2


try:
    Shape()
except TypeError as e:
    print("abstract:", e)
print(Square(3).area(), isinstance(Square(1), Shape))
parser = argparse.ArgumentParser(description="train")
parser.add_argument("--epochs", type=int, default=3)
parser.add_argument("--lr", type=float, default=0.5)
args = parser.parse_args()
print(args.epochs, args.lr, vars(args))
