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

None of them is a dependency of tapecli: they are imported only here, only when installed.
"""
from __future__ import annotations

import importlib

# name in the report -> the module it needs
PEERS = {"jax jit": "jax", "torch eager": "torch", "tf eager": "tensorflow", "tf.function": "tensorflow"}


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
    make = {"jax jit": _jax, "torch eager": _torch, "tf eager": _tf_eager, "tf.function": _tf_function}[peer]
    return make(workload, inputs)


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
