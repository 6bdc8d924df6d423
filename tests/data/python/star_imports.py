# `from M import *` of an allowed module binds what CPython binds (math's public names, numpy's __all__ but the
# submodules no program may import): the program is Python's, whose names the star import gives.
from math import *
from numpy import *
import numpy as np

print(sqrt(16.0), floor(2.7), e, pi)
a = array([1.0, 4.0, 9.0])
print(a, type(a).__name__, sqrt(a), linspace(0, 1, 3), linalg.norm(a), fft.rfft(a).shape)
print(exp(1.0) == np.exp(1.0), log(a).round(3), sum(a), max(a), abs(-2))
print(zeros((2, 2)), dot(a, a), mean(a), random.default_rng(0).integers(5, size=2))
print(emath.sqrt(-1), ma.masked_equal(a, 4.0), isnan(nan), inf > 1)
