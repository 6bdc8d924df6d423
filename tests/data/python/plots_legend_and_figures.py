# A script's figures and legends: pyplot's figure numbers, subplot on the current figure, ax.set, and the
# handles and labels a legend would show (what a script prints of them is matplotlib's with the Agg backend).
import numpy as np
import matplotlib.pyplot as plt

history = {"loss": [0.9, 0.5, 0.3], "val_loss": [1.0, 0.6, 0.4], "acc": [0.5, 0.7, 0.8]}
plt.figure(figsize=(12, 4))
plt.subplot(1, 2, 1)
plt.plot(history["loss"], label="loss")
plt.plot(history["val_loss"], label="val_loss")
plt.legend(loc="best")
plt.subplot(1, 2, 2)
plt.plot(history["acc"], "o-")
print(plt.gcf(), plt.gca())
plt.show()

cm = np.array([[5, 1], [2, 7]])
fig, ax = plt.subplots(figsize=(5, 5))
im = ax.imshow(cm, interpolation="nearest", cmap=plt.cm.Blues)
ax.figure.colorbar(im, ax=ax)
ax.set(xticks=np.arange(2), yticks=np.arange(2), xticklabels=["a", "b"], yticklabels=["a", "b"],
       title="Confusion", ylabel="True", xlabel="Pred")
print(repr(ax))
thresh = cm.max() / 2.0
for i in range(2):
    for j in range(2):
        ax.text(j, i, format(cm[i, j], "d"), ha="center", color="white" if cm[i, j] > thresh else "black")
fig.tight_layout()
h, l = ax.get_legend_handles_labels()
print(h, l)
fig, (ax1, ax2) = plt.subplots(1, 2, sharey=True)
ax1.plot([1, 2], [3, 4], label="a")
ax2.scatter([1, 2], [3, 4], label="pts")
h, l = ax1.get_legend_handles_labels()
print(len(h), l)
print(ax2.get_legend_handles_labels()[1])
ax = fig.add_subplot(111)
print(ax)
for k in range(3):
    plt.figure()
    plt.close()
print(plt.get_fignums())
fig = plt.figure(num="named")
print(fig.number, plt.get_fignums())
print(plt.figure(2) is plt.figure(2))
plt.close("all")
print(plt.get_fignums())
x = np.linspace(0, 1, 5)
lines = plt.plot(x, np.c_[x, x ** 2])
print(len(lines), lines[1].get_label())
print(plt.axvline(0.5).get_label())
fig, ax = plt.subplots()
ax.hist(np.arange(10), bins=3, label="data")
ax.bar([1, 2], [3, 4], label="bars")
ax.errorbar([1, 2], [1, 2], yerr=0.1, label="err")
ax.plot([1, 2], label="_hidden")
ax.plot([1, 2])
l, = ax.plot([1, 2])
print(l)
print(ax.get_legend_handles_labels()[1])
n, b, p = ax.hist(np.ones((5, 2)), bins=2, label=["a", "b"])
print(len(p), ax.get_legend_handles_labels()[1])
print(ax.set(title="T", xlim=(0, 2)))
print(repr(ax))
