from __future__ import annotations

import dataclasses
from dataclasses import KW_ONLY, InitVar, dataclass, field, fields
from typing import ClassVar, Protocol, runtime_checkable


@dataclass
class Config:
    lr: float = 0.1
    registry: ClassVar[dict] = {}
    _: KW_ONLY
    epochs: int = 3
    seed: InitVar[int] = 0

    def __post_init__(self, seed):
        self.lr = self.lr * (seed + 1)


c = Config(0.5, epochs=2, seed=1)
print(c, [f.name for f in fields(Config)], Config.registry)


@dataclass(slots=True)
class Point:
    _x: int
    tags: list = field(default_factory=list)

    def bump(self):
        self._x += 1
        return self._x


p = Point(3)
print(p.bump(), p._x, Point.__slots__, p, hasattr(p, "__dict__"), dataclasses.is_dataclass(p))


@dataclass(frozen=True, slots=True)
class Frozen:
    a: int

    def __post_init__(self):
        object.__setattr__(self, "a", self.a * 2)


print(Frozen(2), hash(Frozen(2)) == hash(Frozen(2)))


@runtime_checkable
class SupportsClose(Protocol):
    def close(self) -> None: ...


@runtime_checkable
class HasSize(Protocol):
    size: int


class Resource:
    size = 3

    def close(self) -> None:
        pass


print(isinstance(Resource(), SupportsClose), issubclass(Resource, SupportsClose), isinstance(1, SupportsClose),
      isinstance(Resource(), HasSize), isinstance("x", HasSize))
