# NumPy's own warnings (floating-point errors) meet the program's warnings filters, as in CPython.
import warnings

import numpy as np

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    for _ in range(2):
        np.log(np.array([0.0, 1.0]))
    np.sqrt(np.array([-1.0]))
print(len(caught), [w.category.__name__ for w in caught], [str(w.message) for w in caught])

with warnings.catch_warnings():
    warnings.simplefilter("error")
    try:
        np.array([1.0]) / 0.0
        print("no exception")
    except RuntimeWarning as e:
        print("RuntimeWarning:", e)

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("ignore", RuntimeWarning)
    np.log(np.array([0.0]))
print(len(caught))

with np.errstate(divide="raise"):
    try:
        np.array([1.0]) / 0.0
    except FloatingPointError as e:
        print("FloatingPointError:", e)
