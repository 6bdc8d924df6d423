# typing.get_type_hints: annotations that are values, forward references and ``from __future__ import
# annotations`` strings, evaluated in the program's namespaces as CPython evaluates them
from __future__ import annotations

import functools
from dataclasses import dataclass, field, fields
from typing import (Annotated, Callable, ClassVar, Dict, Generic, List, Literal, NamedTuple, Optional, TypedDict,
                    TypeVar, Union, get_type_hints)

import numpy as np

T = TypeVar("T")


@dataclass
class Node:
    value: float
    children: list[Node] = field(default_factory=list)
    parent: Optional[Node] = None
    meta: Dict[str, "np.ndarray"] = field(default_factory=dict)
    count: ClassVar[int] = 0


class Tree(Node):
    depth: int
    fn: Callable[[int, float], str]
    union: int | str | None
    mode: Literal["train", "eval"]
    w: Annotated[np.ndarray, "weights"]


class Batch(TypedDict, total=False):
    x: np.ndarray
    y: List[int]


class Point(NamedTuple):
    x: float
    y: float = 0.0


class Box(Generic[T]):
    item: T
    other: Box[int]


def train(model: Node, lr: float = 0.1, steps: int | None = None, *xs: np.float32, **kw: List[int]) -> dict[str, float]:
    pass


def traced(fn):
    @functools.wraps(fn)
    def wrapper(*args):
        return fn(*args)
    return wrapper


@traced
def step(p: Point, b: Union[int, "Box[str]"]) -> None:
    pass


@dataclass
class Config:
    lr: float = 0.1
    epochs: int = 1
    name: str = "run"


def from_strings(values: dict, cls):
    hints = get_type_hints(cls)
    return cls(**{k: hints[k](v) for k, v in values.items()})


Dynamic = type("Dynamic", (), {"__annotations__": {"z": "Point", "n": None}})
print(get_type_hints(Node))
print(get_type_hints(Tree))
print(get_type_hints(Tree, include_extras=True)["w"])
print(get_type_hints(Batch), get_type_hints(Point), get_type_hints(Box))
print(get_type_hints(train))
print(get_type_hints(step), get_type_hints(Node.__init__))
print(get_type_hints(Dynamic), get_type_hints(print), get_type_hints(lambda: 0), get_type_hints(np.zeros))
print(get_type_hints(train, localns={"Node": int})["model"])
print(from_strings({"lr": "0.5", "epochs": "3"}, Config), [f.type for f in fields(Config)])


def local_class():
    class Inner:
        a: "Missing"
    return Inner


for bad in (local_class(), 3):
    try:
        get_type_hints(bad)
    except (NameError, TypeError) as e:
        print(type(e).__name__, e)
