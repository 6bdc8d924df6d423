"""The expected values of the Keras examples (examples/5*_keras_*.tdf), recomputed here from Keras 3's
formulas in NumPy, independently of tapecli: the sidecars must agree with these references (the
examples themselves are run against the sidecars by test_examples.py)."""
import json
from pathlib import Path

import numpy as np

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
f = np.float32


def sidecar(name):
    return json.loads((EXAMPLES / f"{name}.expected.json").read_text())["values"]


def log_softmax(z):
    m = z - z.max(-1, keepdims=True)
    return m - np.log(np.exp(m).sum(-1, keepdims=True))


def classifier_reference():
    """Five steps of Adam(0.05) on softmax cross-entropy from logits, replayed in float32 with manual
    backpropagation through Dense(4, relu) -> Dense(3)."""
    x = np.array([[1.0, 0.5], [-0.5, 1.0], [-1.0, -1.0], [0.8, 0.2], [-0.2, 0.9], [-0.6, -0.8]], f)
    y = np.array([0, 1, 2, 0, 1, 2])
    params = [np.array([[0.5, -0.3, 0.2, 0.4], [0.1, 0.6, -0.5, 0.3]], f), np.full(4, 0.1, f),
              np.array([[0.3, -0.2, 0.1], [-0.1, 0.4, 0.2], [0.2, 0.1, 0.5], [0.4, 0.3, -0.3]], f), np.zeros(3, f)]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    onehot = np.eye(3, dtype=f)[y]
    losses = []
    for step in range(5):
        k1, b1, k2, b2 = params
        a = x @ k1 + b1
        h = np.maximum(a, 0)
        z = h @ k2 + b2
        ls = log_softmax(z)
        losses.append(float(-(onehot * ls).sum(-1).mean()))
        dz = (np.exp(ls) - onehot) / f(len(x))
        dk2, db2 = h.T @ dz, dz.sum(0)
        da = (dz @ k2.T) * (a > 0)
        dk1, db1 = x.T @ da, da.sum(0)
        t = f(step + 1)
        alpha = f(0.05) * np.sqrt(f(1) - np.power(f(0.999), t)) / (f(1) - np.power(f(0.9), t))
        for i, g in enumerate([dk1, db1, dk2, db2]):
            m[i] = m[i] + (g - m[i]) * f(1 - 0.9)
            v[i] = v[i] + (g * g - v[i]) * f(1 - 0.999)
            params[i] = params[i] - (m[i] * alpha) / (np.sqrt(v[i]) + f(1e-7))
    k1, b1, k2, b2 = params
    final = np.maximum(x @ k1 + b1, 0) @ k2 + b2
    accuracy = float((final.argmax(-1) == y).mean())
    return {"losses": losses, "accuracy": accuracy, "iterations": 5, "final_kernel": k2.tolist()}


def pinn_reference():
    """u, u', u'' in closed form; the loss's gradients by complex steps (exact to rounding)."""
    xs = np.array([0.0, 0.5, 1.0])
    w0, b0 = np.array([0.8, -1.2, 0.5]), np.array([0.1, 0.3, -0.2])
    v0, c0 = np.array([1.0, 0.5, -0.7]), 0.2

    def parts(w, b, v, c):
        h = np.tanh(np.outer(xs, w) + b)
        u = h @ v + c
        du = ((1 - h ** 2) * w) @ v
        d2u = (-2 * h * (1 - h ** 2) * w ** 2) @ v
        return u, du, d2u, np.mean((d2u + u) ** 2)

    flat = np.concatenate([w0, b0, v0, [c0]]).astype(complex)

    def loss_of(p):
        return parts(p[0:3], p[3:6], p[6:9], p[9])[3]
    grads = []
    for i in range(10):
        p = flat.copy()
        p[i] += 1e-30j
        grads.append(loss_of(p).imag / 1e-30)
    u, du, d2u, loss = parts(w0, b0, v0, c0)
    return {"u": u[:, None].tolist(), "du": du[:, None].tolist(), "d2u": d2u[:, None].tolist(),
            "loss": float(loss), "dw": [grads[0:3]], "db": grads[3:6], "dv": [[g] for g in grads[6:9]],
            "dc": [grads[9]]}


def fgsm_reference():
    x = np.array([0.2, -0.4, 0.9])
    k = np.array([[0.5, -0.2], [-0.3, 0.4], [0.8, -0.1]])
    b = np.array([0.0, 0.1])

    def loss(x):
        return -log_softmax(x @ k + b)[1]
    z = x @ k + b
    p = np.exp(log_softmax(z))
    grad = (p - [0.0, 1.0]) @ k.T
    adv = np.clip(x + 0.1 * np.sign(grad), -1, 1)
    return {"loss": float(loss(x)), "grad": [grad.tolist()], "signed": [np.sign(grad).tolist()],
            "adversarial": [adv.tolist()], "adversarial_loss": float(loss(adv))}


def close(actual, expected, rtol):
    np.testing.assert_allclose(np.array(actual, dtype=float), np.array(expected, dtype=float), rtol=rtol, atol=1e-6)


def test_classifier_sidecar_matches_the_numpy_replay():
    got, ref = sidecar("50_keras_classifier"), classifier_reference()
    for key, want in ref.items():
        close(got[key], want, 1e-5)


def test_pinn_sidecar_matches_the_closed_forms():
    got, ref = sidecar("51_keras_pinn_residual"), pinn_reference()
    for key, want in ref.items():
        close(got[key], want, 1e-6)


def test_fgsm_sidecar_matches_the_formula():
    got, ref = sidecar("52_keras_fgsm"), fgsm_reference()
    for key, want in ref.items():
        close(got[key], want, 1e-6)
    assert got["adversarial_loss"] > got["loss"]


if __name__ == "__main__":      # prints the references, to write the sidecars
    for name, ref in [("50_keras_classifier", classifier_reference()), ("51_keras_pinn_residual", pinn_reference()),
                      ("52_keras_fgsm", fgsm_reference())]:
        print(name, json.dumps(ref))
