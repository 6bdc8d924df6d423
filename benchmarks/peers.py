"""The workloads in JAX, PyTorch and TensorFlow, for ``benchmarks/run.py --peers``.

Each is written the way the framework's documentation shows it:

* JAX: ``jax.jit`` of ``jax.value_and_grad`` (``jax.jacrev`` for the jacobian, ``lax.fori_loop``
  for the unrecorded loop); JAX dispatches asynchronously, so each run ends with
  ``block_until_ready``. Compiling happens in the untimed warm-up runs.
* PyTorch eager: leaves with ``requires_grad``, ``torch.autograd.grad`` (which returns the
  gradients instead of accumulating them into ``.grad``), ``torch.func.jacrev`` for the jacobian,
  ``torch.no_grad()`` for the unrecorded loop. CPU kernels run synchronously.
* TensorFlow: ``tf.GradientTape`` (``tape.jacobian`` for the jacobian), eagerly and inside
  ``tf.function`` (traced in the warm-up; the unrecorded loop over ``tf.range`` becomes a while
  loop); each run ends by reading the results with ``.numpy()``.

The training loops (``train``: a Keras MLP 64 -> 128 relu -> 10 on a batch of 256, 200 Adam steps;
``cnn``: Conv2D 16 and 32 with max pooling and a Dense layer on 32 images of 28 x 28, 20 Adam steps;
SparseCategoricalCrossentropy from logits, learning rate 1e-3, epsilon 1e-7): JAX jits the step (a
hand-written Adam, as a JAX user without optax writes it) and calls it once a step; PyTorch steps
``torch.optim.Adam`` on an ``nn.Sequential``; TensorFlow runs the Keras program as written, eagerly
and with the step in a ``tf.function``. A run is the steps; the model is built once, before.

None of them is a dependency of tapecli: they are imported only here, only when installed. Each
peer's measurement runs in a process of its own (``python peers.py PEER WORKLOAD ...``, which
prints one JSON object), with the Python that has it: frameworks in one process would share, and
fight over, their thread pools.
"""
from __future__ import annotations

import argparse
import importlib
import json
import statistics
import sys
import time

import numpy as np

# name in the report -> the module it needs
PEERS = {"jax jit": "jax", "torch eager": "torch", "tf eager": "tensorflow", "tf.function": "tensorflow"}
TRAINING = {"train": 200, "train_long": 2000, "cnn": 20}       # the training loops and their steps
MLP_LOOPS = ("train", "train_long")        # (the same MLP: its short and its long loop)


def installed() -> dict[str, str | None]:
    """{peer: framework version, or None when it cannot be imported in this Python}."""
    versions = {}
    for module in dict.fromkeys(PEERS.values()):
        try:
            versions[module] = importlib.import_module(module).__version__
        except Exception:             # not installed, or broken: either way, not measured
            versions[module] = None
    return {peer: versions[module] for peer, module in PEERS.items()}


def runner(peer: str, workload: str, inputs):
    """A function running ``workload`` once with ``peer`` and waiting for its results.
    ``inputs``: the NumPy arrays of the workload, or the step count of a loop."""
    if workload in TRAINING:
        make = {"jax jit": _jax_train, "torch eager": _torch_train, "tf eager": _tf_train,
                "tf.function": _tf_train}[peer]
        return make(workload, inputs, peer)
    make = {"jax jit": _jax, "torch eager": _torch, "tf eager": _tf_eager, "tf.function": _tf_function}[peer]
    return make(workload, inputs)


def time_runs(fn, repeat: int, warmup: int, budget: float) -> dict:
    """Median seconds of ``fn()`` over ``repeat`` runs after ``warmup`` untimed ones; the timed runs stop
    early (after at least 3) once they have taken ``budget`` seconds."""
    for _ in range(warmup):
        fn()
    times = []
    while len(times) < repeat and (len(times) < 3 or sum(times) < budget):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return {"median_s": statistics.median(times), "runs": len(times), "times_s": times}


def measure(peer: str, workload: str, inputs, repeat: int, warmup: int, budget: float) -> dict:
    """{"median_s", "runs"}, or {"error": why} for a peer that fails on the workload."""
    try:
        return time_runs(runner(peer, workload, inputs), repeat, max(1, warmup), budget)
    except Exception as e:       # a peer that fails on this workload is reported, not fatal
        return {"error": f"{type(e).__name__}: {e}".splitlines()[0][:100]}


def main(argv=None) -> int:
    """``peers.py --installed``, or ``peers.py PEER WORKLOAD --steps N | --inputs A.npy ...``: one JSON object."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--installed", action="store_true")
    parser.add_argument("peer", nargs="?")
    parser.add_argument("workload", nargs="?")
    parser.add_argument("--steps", type=int)
    parser.add_argument("--inputs", nargs="*", default=[])
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--budget", type=float, default=20.0)
    args = parser.parse_args(argv)
    if args.installed:
        out = installed()
    else:
        inputs = args.steps if args.steps is not None else [np.load(path) for path in args.inputs]
        out = measure(args.peer, args.workload, inputs, args.repeat, args.warmup, args.budget)
    print(json.dumps(out))
    return 0


# ------------------------------------------------------------------ JAX

def _jax(workload, inputs):
    import jax
    import jax.numpy as jnp

    if workload == "elementwise":
        fn = jax.jit(jax.value_and_grad(lambda x: jnp.sum(jax.nn.sigmoid(x) * jnp.tanh(x * 1.5 + 0.5))))
        args = [jnp.asarray(inputs[0])]
    elif workload == "mlp":
        def loss(w1, w2, w3, xb):
            return jnp.mean((jax.nn.relu(jax.nn.relu(xb @ w1) @ w2) @ w3) ** 2)
        fn = jax.jit(jax.value_and_grad(loss, argnums=(0, 1, 2)))
        xb, w1, w2, w3 = (jnp.asarray(a) for a in inputs)
        args = [w1, w2, w3, xb]
    elif workload == "jacobian":
        fn = jax.jit(jax.jacrev(lambda x, M: jnp.sin(M @ x) * x))
        args = [jnp.asarray(inputs[1]), jnp.asarray(inputs[0])]
    elif workload == "scalar_loop":
        def scalar(x):
            y = x * 1.0
            for _ in range(inputs):
                y = jnp.sin(y) * 1.01
            return y
        fn = jax.jit(jax.value_and_grad(scalar))
        args = [jnp.float32(0.5)]
    else:
        fn = jax.jit(lambda y: jax.lax.fori_loop(0, inputs, lambda i, y: jnp.sin(y) * 1.01 + 0.001, y))
        args = [jnp.float32(0.5)]
    return lambda: jax.block_until_ready(fn(*args))


# -------------------------------------------------------------- PyTorch

def _torch(workload, inputs):
    import torch

    if workload == "elementwise":
        x = torch.from_numpy(inputs[0]).requires_grad_()

        def run():
            loss = torch.sum(torch.sigmoid(x) * torch.tanh(x * 1.5 + 0.5))
            return loss, torch.autograd.grad(loss, x)
    elif workload == "mlp":
        xb = torch.from_numpy(inputs[0])
        ws = [torch.from_numpy(a).requires_grad_() for a in inputs[1:]]

        def run():
            w1, w2, w3 = ws
            loss = torch.mean((torch.relu(torch.relu(xb @ w1) @ w2) @ w3) ** 2)
            return loss, torch.autograd.grad(loss, ws)
    elif workload == "jacobian":
        M, x = (torch.from_numpy(a) for a in inputs)
        jac = torch.func.jacrev(lambda x: torch.sin(M @ x) * x)

        def run():
            return jac(x)
    elif workload == "scalar_loop":
        x = torch.tensor(0.5, dtype=torch.float32, requires_grad=True)

        def run():
            y = x * 1.0
            for _ in range(inputs):
                y = torch.sin(y) * 1.01
            return y, torch.autograd.grad(y, x)
    else:
        def run():
            with torch.no_grad():
                y = torch.tensor(0.5, dtype=torch.float32)
                for _ in range(inputs):
                    y = torch.sin(y) * 1.01 + 0.001
            return y
    return run


# ------------------------------------------------------------ TensorFlow

def _tf_program(workload, steps, loop_range):
    """The workload as a TensorFlow function of its tensors (a GradientTape where there is a derivative)."""
    import tensorflow as tf

    if workload == "elementwise":
        def program(x):
            with tf.GradientTape() as tape:
                tape.watch(x)
                loss = tf.reduce_sum(tf.sigmoid(x) * tf.tanh(x * 1.5 + 0.5))
            return loss, tape.gradient(loss, x)
    elif workload == "mlp":
        def program(xb, w1, w2, w3):
            with tf.GradientTape() as tape:
                tape.watch([w1, w2, w3])
                loss = tf.reduce_mean((tf.nn.relu(tf.nn.relu(xb @ w1) @ w2) @ w3) ** 2)
            return loss, tape.gradient(loss, [w1, w2, w3])
    elif workload == "jacobian":
        def program(M, x):
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = tf.sin(tf.linalg.matvec(M, x)) * x
            return tape.jacobian(y, x)
    elif workload == "scalar_loop":
        def program(x):
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = x * 1.0
                for _ in range(steps):
                    y = tf.sin(y) * 1.01
            return y, tape.gradient(y, x)
    else:
        def program(y):
            for _ in loop_range(steps):
                y = tf.sin(y) * 1.01 + 0.001
            return y
    return program


def _tf(workload, inputs, compiled):
    import tensorflow as tf

    loops = workload in ("scalar_loop", "loop")
    program = _tf_program(workload, inputs if loops else None, tf.range if compiled else range)
    if compiled:
        program = tf.function(program)
    args = [tf.constant(0.5, dtype=tf.float32)] if loops else [tf.constant(a) for a in inputs]

    def run():
        return tf.nest.map_structure(lambda t: t.numpy(), program(*args))
    return run


def _tf_eager(workload, inputs):
    return _tf(workload, inputs, compiled=False)


def _tf_function(workload, inputs):
    return _tf(workload, inputs, compiled=True)


# ------------------------------------------------------- training loops

def _glorot(rng, fan_in, fan_out, shape):
    limit = np.sqrt(6.0 / (fan_in + fan_out))
    return rng.uniform(-limit, limit, shape).astype(np.float32)


def _initial_weights(workload):
    """The Keras layers' initial weights (glorot uniform kernels, zero biases), seeded, in NHWC/HWIO."""
    rng = np.random.default_rng(0)
    if workload in MLP_LOOPS:
        shapes = [(64, 128), (128,), (128, 10), (10,)]
    else:
        shapes = [(3, 3, 1, 16), (16,), (3, 3, 16, 32), (32,), (800, 10), (10,)]
    out = []
    for shape in shapes:
        if len(shape) == 1:
            out.append(np.zeros(shape, np.float32))
        else:
            field = int(np.prod(shape[:-2])) if len(shape) == 4 else 1
            out.append(_glorot(rng, field * shape[-2], field * shape[-1], shape))
    return out


def _jax_train(workload, inputs, peer):
    import jax
    import jax.numpy as jnp

    x, y = jnp.asarray(inputs[0]), jnp.asarray(inputs[1])

    def forward(p, x):
        if workload in MLP_LOOPS:
            return jax.nn.relu(x @ p[0] + p[1]) @ p[2] + p[3]
        for k, b in ((p[0], p[1]), (p[2], p[3])):
            x = jax.lax.conv_general_dilated(x, k, (1, 1), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC"))
            x = jax.nn.relu(x + b)
            x = jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        return x.reshape(x.shape[0], -1) @ p[4] + p[5]

    def loss(p):
        logp = jax.nn.log_softmax(forward(p, x))
        return -jnp.mean(jnp.take_along_axis(logp, y[:, None].astype(jnp.int32), axis=1))

    @jax.jit
    def step(p, m, v, t):
        g = jax.grad(loss)(p)
        m = [mi + (gi - mi) * 0.1 for mi, gi in zip(m, g)]
        v = [vi + (gi * gi - vi) * 0.001 for vi, gi in zip(v, g)]
        alpha = 1e-3 * jnp.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t)
        p = [pi - mi * alpha / (jnp.sqrt(vi) + 1e-7) for pi, mi, vi in zip(p, m, v)]
        return p, m, v

    state = {"p": [jnp.asarray(w) for w in _initial_weights(workload)], "t": 0}
    state["m"] = [jnp.zeros_like(w) for w in state["p"]]
    state["v"] = [jnp.zeros_like(w) for w in state["p"]]

    def run():
        p, m, v, t = state["p"], state["m"], state["v"], state["t"]
        for _ in range(TRAINING[workload]):
            t += 1
            p, m, v = step(p, m, v, jnp.float32(t))
        jax.block_until_ready(p)
        state.update(p=p, m=m, v=v, t=t)
    return run


def _torch_train(workload, inputs, peer):
    import torch

    x, y = torch.from_numpy(inputs[0]), torch.from_numpy(inputs[1]).long()
    if workload in MLP_LOOPS:
        model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
    else:
        x = x.permute(0, 3, 1, 2).contiguous()
        model = torch.nn.Sequential(torch.nn.Conv2d(1, 16, 3), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
                                    torch.nn.Conv2d(16, 32, 3), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
                                    torch.nn.Flatten(), torch.nn.Linear(800, 10))
    loss_fn = torch.nn.CrossEntropyLoss()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, eps=1e-7)

    def run():
        for _ in range(TRAINING[workload]):
            opt.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
        return loss.item()
    return run


def _tf_train(workload, inputs, peer):
    import tensorflow as tf

    x, y = tf.constant(inputs[0]), tf.constant(inputs[1])
    layers = tf.keras.layers
    if workload in MLP_LOOPS:
        model = tf.keras.Sequential([layers.Dense(128, activation="relu"), layers.Dense(10)])
    else:
        model = tf.keras.Sequential([layers.Conv2D(16, 3, activation="relu"), layers.MaxPooling2D(2),
                                     layers.Conv2D(32, 3, activation="relu"), layers.MaxPooling2D(2),
                                     layers.Flatten(), layers.Dense(10)])
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    opt = tf.keras.optimizers.Adam(learning_rate=1e-3)

    def step():
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss
    if peer == "tf.function":
        step = tf.function(step)

    def run():
        for _ in range(TRAINING[workload]):
            loss = step()
        return loss.numpy()
    return run


if __name__ == "__main__":
    sys.exit(main())
