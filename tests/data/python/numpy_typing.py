# numpy.typing: the annotations of array code (NDArray[np.float64], ArrayLike, DTypeLike), NumPy's own aliases.
import numpy as np
import numpy.typing as npt
from numpy.typing import NDArray, ArrayLike, DTypeLike
from typing import get_type_hints


def scale(v: NDArray[np.float64], k: float = 2.0) -> NDArray[np.float64]:
    return v * k


def as_array(a: ArrayLike, dtype: DTypeLike = float) -> npt.NDArray:
    return np.asarray(a, dtype=dtype)


x: npt.NDArray[np.int64] = np.arange(3)
print(scale(np.ones(2)), as_array([1, 2]), x)
print(NDArray[np.float64], npt.NDArray, np.typing.NDArray is NDArray)
print(scale.__annotations__)
print(get_type_hints(scale)["return"])


def norm2(v: NDArray[np.float64]) -> float:
    return float(v @ v)


print(norm2(np.array([3.0, 4.0])), norm2.__annotations__["v"] == NDArray[np.float64])
