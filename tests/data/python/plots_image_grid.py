# A grid of images with titles, as a script shows samples of its data set: subplots' Axes shaped as
# matplotlib's squeeze shapes them, each titled and drawn on, and the numbers the script prints.
import numpy as np
from matplotlib import pyplot as plt

rng = np.random.default_rng(1)
images = rng.integers(0, 256, size=(6, 8, 8)).astype(np.uint8)
labels = [int(i.mean() > 127) for i in images]

fig, axes = plt.subplots(2, 3, figsize=(9, 6))
print(fig)
print(type(axes).__name__, axes.shape)
for i, ax in enumerate(axes.flat):
    im = ax.imshow(images[i], cmap="gray", vmin=0, vmax=255)
    ax.set_title(f"label {labels[i]}")
    ax.axis("off")
    ax.spines["top"].set_visible(False)
print(im)
print(repr(axes[0, 1]))
print(axes[1, 2])
fig.colorbar(im, ax=axes.ravel().tolist())
fig.suptitle("samples")
fig.tight_layout()
fig.savefig("samples.png")

fig, row = plt.subplots(1, 3)
print(row.shape, len(fig.axes))
fig, one = plt.subplots()
print(one)
fig, grid = plt.subplots(3, 1, squeeze=False, sharex=True)
print(grid.shape)
for ax in grid[:, 0]:
    ax.set_xlabel("x")
    ax.set_ylabel("y")
print(repr(grid[2, 0]))
ax = plt.subplot(2, 2, 4)
print(ax)
twin = ax.twinx()
print(twin)
plt.close(fig)
print("mean pixel", images.mean().round(3))
