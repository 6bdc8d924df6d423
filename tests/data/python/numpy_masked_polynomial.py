# numpy.ma and numpy.polynomial as data-science scripts use them, and a class's lineage (checked against CPython).
import datetime

import numpy as np
import numpy.ma as ma
from numpy.polynomial import Polynomial, chebyshev
from numpy.polynomial import polynomial as P

readings = np.array([3.5, -999.0, 4.25, 5.0, -999.0, 2.75])
masked = ma.masked_equal(readings, -999.0)
print(masked, masked.mean(), masked.count(), masked.filled(0.0))
print(ma.masked_where(readings < 3, readings).sum(), np.ma.array([1.5, 2.5], mask=[False, True]).tolist())
grid = ma.masked_invalid(np.array([[1.0, np.nan], [np.inf, 4.0]]))
print(grid.mean(axis=0), grid.mask, ma.getmaskarray(grid).sum())

x = np.linspace(0.0, 2.0, 9)
y = 1.0 + 2.0 * x - 0.5 * x ** 2
fit = Polynomial.fit(x, y, 2).convert()
print(np.round(fit.coef, 6), fit.degree(), np.round(fit(1.5), 6))
print(P.polyval(2.0, [1.0, 2.0, 3.0]), P.polyder([1.0, 2.0, 3.0]), P.polyroots([-2.0, 0.0, 1.0]))
print(np.round(chebyshev.chebfit(x, y, 2), 6), Polynomial([1, 2]) * Polynomial([0, 1]))


class Reading(datetime.datetime):
    pass


class SensorError(KeyError):
    pass


print([c.__name__ for c in Reading.__mro__], Reading.__bases__, Reading.mro()[-1])
print(SensorError.__mro__, ValueError.__bases__, int.__mro__, [c.__name__ for c in np.float64.__mro__])
print(issubclass(Reading, datetime.date), Reading(2024, 5, 1).isoformat())
