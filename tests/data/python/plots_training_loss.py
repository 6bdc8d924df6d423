# A training loop that records its losses, plots them as it goes and at the end, and prints the final loss:
# tapecli's matplotlib draws nothing, and the printed output is CPython's with the Agg backend.
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

rng = np.random.default_rng(0)
X = rng.normal(size=(64, 3))
true_w = np.array([1.5, -2.0, 0.5])
y = X @ true_w + 0.1 * rng.normal(size=64)

w = np.zeros(3)
losses = []
for epoch in range(40):
    pred = X @ w
    loss = float(np.mean((pred - y) ** 2))
    losses.append(loss)
    grad = 2 * X.T @ (pred - y) / len(y)
    w -= 0.1 * grad
    if epoch % 10 == 0:
        print(f"epoch {epoch:2d} loss {loss:.6f}")

plt.rcParams.update({"font.size": 12})
plt.rcParams["figure.figsize"] = (8, 4)
fig = plt.figure()
print(fig)
line, = plt.plot(losses, label="train")
print(line)
plt.plot(range(len(losses)), losses, "r--", range(len(losses)), np.log(losses))
plt.xlabel("epoch")
plt.ylabel("MSE")
plt.title("training loss")
plt.yscale("log")
plt.grid(True)
plt.legend()
plt.tight_layout()
plt.savefig("loss.png", dpi=150)
plt.show()
plt.close()
plt.close("all")
print("weights", np.round(w, 3))
print(f"final loss {losses[-1]:.6f}")
