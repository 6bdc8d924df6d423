"""NumPy arrays written in place inside TensorFlow programs (tests/library/test_numpy_writes.py): each case is a
program's body after ``import numpy as np`` and ``import tensorflow as tf``. What CPython with NumPy and
TensorFlow prints for each, and the error it ends with, is recorded in tests/data/numpy_writes_cpython.json by
running this file in a development venv that has TensorFlow (never tapecli's runtime):

    TFVENV/bin/python tests/numpy_writes_cases.py
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

HEADER = "import numpy as np\nimport tensorflow as tf\n"
STORE = Path(__file__).parent / "data" / "numpy_writes_cpython.json"

CASES = {
    "views_share_memory": """
a = np.arange(6.0)
v = a[1:]
v += 10
b = a
b *= 2
print(a, v)
c = a.reshape(2, 3)
c[0] = 0
print(a)
r = a.ravel()
r[-1] = -5
t = c.T
t[0, 1] = 9
w = a.view()
w[1] = 1
e = a[None, ..., ::2]
e[0, 0] = 42
print(a, c.T.shape)
s = c.transpose()
s[2, 1] += 0.5
print(c)
for row in c:
    row[0] = 7
print(a)
""",
    "item_assignment_indices": """
X = np.zeros((3, 4))
X[1, 2] = 5
X[0] = [1, 2, 3, 4]
X[-1, ::2] = 7
X[..., 3] = -1
X[X > 4] = 0
X[[0, 2], [1, 1]] = 8
X[tf.constant(1)] = 3
X[np.array([True, False, True]), 0] = np.array([10.0, 20.0])
X[:, None, 1] = [[6], [6], [6]]
X[tf.constant([0, 2]), 2] = tf.constant([1.5, 2.5], dtype=tf.float64)
print(X)
L = np.array([[1, 2], [3, 4]])
L[np.array([1, 0])] = L
print(L)
""",
    "numpy_casting": """
n = np.zeros(4, dtype=np.int64)
n[0] = 2.7
n[1] = True
n[2] = np.float32(-1.9)
n[3] = np.int8(-3)
f = np.zeros(2, dtype=np.float32)
f[0] = 1 / 3
f[1] = 2**40 + 1
b = np.zeros(2, dtype=bool)
b[0] = 5
u = np.zeros(2, dtype=np.uint8)
u[:] = [255, 0]
print(n, f, b, u, n.dtype, f.dtype)
""",
    "in_place_operators": """
a = np.arange(4)
a += 1
a *= 3
a //= 2
a -= np.array([1, 1, 1, 1])
a %= 5
a **= 2
a |= 1
a ^= 3
m = np.array([True, False])
m &= np.array([True, True])
print(a, a.dtype, m)
f = np.ones((2, 3))
f += np.arange(3.0)
f /= 2
f @= np.eye(3)
f -= [[1], [2]]
print(f)
g = np.ones(3, dtype=np.float32)
g *= 0.1
g += 2**30
print(g, g.dtype)
""",
    "tuple_targets_and_items": """
X = np.zeros((2, 3), dtype=int)
X[0, 0], X[1, 2] = (3, 4)
a, X[1] = 1, [7, 8, 9]
i, lo, hi = 0, 1, 2
X[i, lo], X[i, hi] = (5, 6) if a else (6, 5)
print(X, a)
Y = np.arange(12).reshape(3, 4)
Y[1] += 10
Y[:, 0] *= -1
Y[Y > 5] -= 100
Y[0, 1] += 1
Y[[0, 2], [3, 3]] += 1000
Y[tf.constant(2), 1] //= 3
print(Y)
""",
    "mutating_methods": """
f = np.array([3, 1, 2])
f.sort()
g = np.array([[3, 1], [0, 2]])
g[0].sort()
g.sort(axis=0)
h = np.array([5, 1, 4, 2, 3])
h.partition(2)
print(f, g, h[2])
f.fill(7)
p = np.arange(5)
p.put([0, 2], [-1, -2])
p.put(9, 1, mode="clip")
print(f, p)
r = np.zeros(3)
r.resize(5)
r2 = np.zeros((2, 2))
r2[:] = [[0, 1], [2, 3]]
r2.resize(3, 3)
print(r, r2)
bits = np.array([1.0, -2.0]).view(np.int64)
print(bits)
s = np.array([1, 256], dtype=np.int16)
s.byteswap(inplace=True)
print(s)
""",
    "mutating_functions": """
z = np.zeros(4)
np.copyto(z, [1, 2, 3, 4])
np.put(z, [0], [9])
np.place(z, z > 2, [0])
k = np.zeros((3, 3))
np.fill_diagonal(k, 2)
np.add(k, 1, out=k)
np.clip(k, 0, 2.5, out=k)
np.negative(z[::2], out=z[::2])
print(z, k)
a = np.zeros(4)
np.add.at(a, [0, 0, 1], 1)
np.maximum.at(a, [2], 5)
print(a, np.add.reduce(a), np.multiply.outer([1, 2], [3, 4]), np.add.accumulate(a))
np.random.seed(0)
d = np.arange(6)
np.random.shuffle(d)
l = [10, 20, 30, 40, 50]
np.random.shuffle(l)
rng = np.random.default_rng(3)
e = np.arange(8).reshape(4, 2)
rng.shuffle(e)
m = ["a", "b", "c", "d"]
rng.shuffle(m)
print(d, l, e.tolist(), m)
""",
    "scalars_stay_values": """
s = np.float64(1.5)
s2 = s
s += 1
a = np.arange(3.0)
x = a[0]
a[0] = 9
total = a.sum()
total += 1
print(s, s2, x, total, a.sum())
t = tf.constant([1.0, 2.0])
u = t
t += 1
print(t, u)
""",
    "tensorflow_copies_arrays": """
a = np.arange(4.0)
t1 = tf.constant(a)
t2 = tf.convert_to_tensor(a)
v = tf.Variable(a)
ds = tf.data.Dataset.from_tensor_slices(a)
t3 = tf.reshape(a, [2, 2])
t4 = tf.identity(a)
t5 = a * tf.constant(1.0, dtype=tf.float64)
t6 = tf.gather(a, [0, 1])
t7 = tf.concat([a[1:]], 0)
a[:] = -1
print(t1, t2, v.numpy(), list(ds.as_numpy_iterator()))
print(t3, t4, t5, t6, t7)
w = tf.Variable([1.0, 2.0])
with tf.GradientTape() as tape:
    b = np.array([2.0, 3.0], dtype=np.float32)
    y = tf.reduce_sum(w * b)
b[:] = 100
print(tape.gradient(y, w))
n = w.numpy()
n[0] = 50
tt = tf.constant([1.0, 2.0])
nn = tt.numpy()
nn += 1
print(w.numpy(), tt, nn)
c = np.zeros(2)
c += tf.constant([1.0, 2.0], dtype=tf.float64)
print(c)
""",
    "keras_copies_arrays": """
k = np.ones((2, 1), dtype=np.float32)
model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
model.set_weights([k, np.zeros(1, dtype=np.float32)])
init = tf.keras.initializers.Constant(k)
layer = tf.keras.layers.Dense(1, kernel_initializer=init)
X = np.ones((4, 2), dtype=np.float32)
y = np.zeros((4, 1), dtype=np.float32)
ds = tf.data.Dataset.from_tensor_slices((X, y)).batch(2)
k[:] = 7
X[:] = 3
print(model.get_weights()[0].ravel())
layer(np.ones((1, 2), dtype=np.float32))
print(layer.kernel.numpy().ravel())
for xb, yb in ds:
    print(xb.numpy().ravel())
p = model.predict(X, verbose=0)
X[:] = 0
print(p.ravel())
got = model.get_weights()
got[0][:] = 5
print(model.get_weights()[0].ravel())
""",
    "error_in_place_cast": "a = np.zeros(3, dtype=np.int64)\na += 1\na += 1.5\n",
    "error_set_out_of_bounds": "a = np.zeros(3)\na[5] = 1\n",
    "error_get_out_of_bounds": "a = np.zeros((2, 3))\nprint(a[1])\nprint(a[1, 3])\n",
    "error_float_index": "a = np.zeros(3)\na[1.5] = 2\n",
    "error_broadcast_item": "a = np.zeros((2, 3))\na[:] = [1, 2]\n",
    "error_scalar_item": "s = np.arange(3.0).sum()\ns[0] = 2\n",
    "error_string_to_float": "a = np.zeros(3)\na[0] = 'x'\n",
    "error_mask_length": "a = np.zeros(3)\na[[True, False]] = 1\n",
    "error_in_place_broadcast": "a = np.zeros(3)\na += np.ones(4)\n",
    "error_item_in_place_cast": "a = np.arange(3)\na[0] = 1\na[1:] /= 2\n",
    "error_resize_view": "w = np.arange(6)\nv = w[2:]\nv.resize(2)\n",
    "error_resize_viewed": "w = np.arange(6)\nv = w[2:]\nw.resize(9)\n",
}


# Runs in the subprocess: the program as CPython runs a script, then one line on stderr with how it ended.
_RUNNER = """
import json, sys
source = sys.stdin.read()
outcome = [None, None, None]
try:
    exec(compile(source, "prog.py", "exec"), {"__name__": "__main__"})
except Exception as e:
    tb, line = e.__traceback__, None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "prog.py":
            line = tb.tb_lineno
        tb = tb.tb_next
    outcome = [type(e).__name__, str(e), line]
sys.stdout.flush()
print("OUTCOME " + json.dumps(outcome), file=sys.stderr)
"""


def record() -> None:
    found = {}
    for name, body in CASES.items():
        program = HEADER + body.lstrip("\n")
        done = subprocess.run([sys.executable, "-c", _RUNNER], input=program, capture_output=True, text=True,
                              env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONHASHSEED": "0"})
        outcome = [line for line in done.stderr.splitlines() if line.startswith("OUTCOME ")]
        if not outcome:
            raise SystemExit(f"{name}: no outcome\n{done.stderr[-2000:]}")
        found[name] = {"program": program, "stdout": done.stdout, "error": json.loads(outcome[-1][8:])}
    STORE.write_text(json.dumps(found, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    record()
