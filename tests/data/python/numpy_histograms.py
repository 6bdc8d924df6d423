# NumPy's histograms and counts, weighed from their bins before NumPy makes them
import numpy as np
x = np.array([1.0, 2.0, 2.5, 9.0])
print(np.histogram(x, bins=4))
print(np.histogram(x, bins=[0, 2, 10]))
print(np.histogram(x, bins="auto")[0])
print(np.bincount([1, 3, 3], minlength=6))
print(np.histogram2d(x, x, bins=2)[0])
print(np.histogram_bin_edges(x, bins=3))
