"""The workloads written by hand, for benchmarks/run.py: NumPy (and CPython floats for the loop).

Each computes the same forward pass and the same derivatives as the .tdf program: the analytic
gradient for elementwise and mlp, diag(cos(Mx) * x) @ M + diag(sin(Mx)) for the jacobian, and for
the scalar loop a loop on NumPy float32 scalars that keeps its intermediates, then a hand-written
backward loop. The unrecorded loop has two: NumPy float32 scalars and CPython floats. The MLP training
loop's 200 Adam steps are written out too (the CNN's are not: a convolution by hand is not one line).
"""
from __future__ import annotations

import math

import numpy as np


def elementwise_numpy(x):
    s = 1 / (1 + np.exp(-x))
    th = np.tanh(x * np.float32(1.5) + np.float32(0.5))
    loss = np.sum(s * th)
    dx = th * s * (1 - s) + s * (1 - th * th) * np.float32(1.5)
    return loss, dx


def mlp_numpy(xb, w1, w2, w3):
    h1 = xb @ w1
    a1 = np.maximum(h1, 0)
    h2 = a1 @ w2
    a2 = np.maximum(h2, 0)
    out = a2 @ w3
    loss = np.mean(out ** 2)
    dout = out * np.float32(2 / out.size)
    dw3 = a2.T @ dout
    dh2 = (dout @ w3.T) * (h2 > 0)
    dw2 = a1.T @ dh2
    dh1 = (dh2 @ w2.T) * (h1 > 0)
    dw1 = xb.T @ dh1
    return loss, (dw1, dw2, dw3)


def jacobian_numpy(M, x):
    z = M @ x
    y = np.sin(z) * x
    jac = (np.cos(z) * x)[:, None] * M
    jac[np.diag_indices_from(jac)] += np.sin(z)
    return y, jac


def scalar_loop_numpy(steps):
    k = np.float32(1.01)
    ys = [np.float32(0.5) * np.float32(1.0)]
    for _ in range(steps):
        ys.append(np.sin(ys[-1]) * k)
    g = np.float32(1.0)
    for y in reversed(ys[:-1]):
        g = g * k * np.cos(y)
    return ys[-1], g * np.float32(1.0)


def loop_numpy(steps):
    y, k, c = np.float32(0.5), np.float32(1.01), np.float32(0.001)
    for _ in range(steps):
        y = np.sin(y) * k + c
    return y


def loop_cpython(steps):
    y = 0.5
    for _ in range(steps):
        y = math.sin(y) * 1.01 + 0.001
    return y


def train_numpy(x, y, steps=200):
    """The train workload's 200 steps by hand: Dense 64 -> 128 relu -> Dense 10, the mean sparse cross-entropy
    of the logits, Adam (Keras's update, epsilon 1e-7) on each variable, from the peers' initial weights."""
    from peers import _initial_weights

    f = np.float32
    params = _initial_weights("train")
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    rows = np.arange(x.shape[0])
    for t in range(1, steps + 1):
        w1, b1, w2, b2 = params
        h = x @ w1 + b1
        a = np.maximum(h, f(0))
        logits = a @ w2 + b2
        shifted = logits - logits.max(axis=1, keepdims=True)
        e = np.exp(shifted)
        total = e.sum(axis=1, keepdims=True)
        loss = np.mean(np.log(total[:, 0]) - shifted[rows, y])
        dlogits = e / total
        dlogits[rows, y] -= 1
        dlogits *= f(1 / x.shape[0])
        da = dlogits @ w2.T
        dh = np.where(h > 0, da, f(0))
        grads = [x.T @ dh, dh.sum(axis=0), a.T @ dlogits, dlogits.sum(axis=0)]
        alpha = f(1e-3) * np.sqrt(f(1) - f(0.999) ** f(t)) / (f(1) - f(0.9) ** f(t))
        for p, g, mi, vi in zip(params, grads, m, v):
            mi += (g - mi) * f(0.1)
            vi += (g * g - vi) * f(0.001)
            p -= mi * alpha / (np.sqrt(vi) + f(1e-7))
    return loss


# workload -> {baseline name: function of the workload's arrays (in INPUT_NAMES order) or of its step count}
BASELINES = {
    "elementwise": {"numpy": elementwise_numpy},
    "mlp": {"numpy": mlp_numpy},
    "jacobian": {"numpy": jacobian_numpy},
    "scalar_loop": {"numpy": scalar_loop_numpy},
    "loop": {"numpy": loop_numpy, "cpython": loop_cpython},
    "train": {"numpy": train_numpy},
    "train_long": {"numpy": lambda x, y: train_numpy(x, y, steps=2000)},
}
