# A histogram whose counts and edges the script prints: hist gives NumPy's histogram as matplotlib computes it.
import numpy as np
import matplotlib.pyplot as plt

rng = np.random.default_rng(2)
data = rng.normal(loc=1.0, scale=2.0, size=500)

counts, edges, patches = plt.hist(data, bins=8)
print(counts)
print(np.round(edges, 4))
print(patches, len(patches))
for count, patch in zip(counts, patches):
    if count > 100:
        patch.set_facecolor("red")
print(int(counts.sum()))

n, bins, _ = plt.hist([1, 2, 2, 3, 3, 3, 4])
print(n, bins)
density, bins, _ = plt.hist(data, bins=5, density=True, range=(-5, 5))
print(np.round(density, 5), bins)
cumulative, _, _ = plt.hist(data, bins=4, cumulative=True)
print(cumulative)
weighted, _, _ = plt.hist([0.5, 1.5, 1.5], bins=2, weights=[1, 2, 3])
print(weighted)
two = rng.normal(size=(50, 2))
stacked, bins, bars = plt.hist(two, bins=3)
print(stacked.shape, np.round(bins, 4), len(bars))
fig, ax = plt.subplots()
print(ax.hist(np.arange(10), bins=3)[0])
bars = ax.bar(["a", "b", "c"], [3, 1, 2])
print(bars)
print(ax.set_xlim(0, 3), plt.xlim(-1, 1))
print(plt.title("counts"), ax.set_ylabel("n"))
print(repr(ax))
plt.savefig("hist.png")
