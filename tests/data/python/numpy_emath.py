# np.emath (numpy.lib.scimath): the real functions' complex forms, where a negative argument gives nan otherwise.
import numpy as np
from numpy.lib import scimath

print(np.emath.sqrt(-4), np.emath.log(-1), np.emath.power(-2, 0.5), np.emath.logn(2, -8))
print(np.emath.sqrt(np.array([-1.0, 4.0])), np.emath.arcsin(2.0), scimath.log10(-100))
print(np.lib.scimath.arccos(np.array([2.0, 0.5])), np.emath.log2(np.array([-4.0, 8.0])), np.emath.arctanh(2.0))
print(np.emath.__name__, sorted(np.emath.__all__))
roots = [np.emath.sqrt(d) for d in (9.0, 0.0, -9.0)]
print(roots, [type(r).__name__ for r in roots])
