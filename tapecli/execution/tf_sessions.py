"""TensorFlow 1's sessions and optimizers through ``tf.compat.v1`` on CPython's run (client/session.py,
training/optimizer.py, gradient_descent.py, momentum.py), over the graphs of tf_graphs.py.

A :class:`Session` holds its graph's variable values and its random kernels' states; ``run`` computes the fetches
in one :class:`Evaluation` (each node once, the feeds given). An optimizer's ``minimize`` is a gradients node and
a train op that applies TensorFlow's kernels' updates in float32 (ResourceApplyGradientDescent: ``var -= grad *
lr``; ResourceApplyMomentum: ``accum = accum * momentum + grad; var -= accum * lr``), then adds one to the global
step. ``module`` is the program's ``tf.compat.v1``: what of it this family gives, the rest refused by name."""
from __future__ import annotations

import types

import numpy as np

from tapecli import ops
from tapecli.errors import KernelPreconditionError, KernelValueError, TdfNameError, TdfTypeError
from tapecli.execution import tf_graphs, tf_variables
from tapecli.execution.tf_graphs import (GLOBAL_STEP, GLOBAL_VARIABLES, TRAINABLE_VARIABLES, Graph, GraphTensor,
                                         GraphVariable, Operation, default_graph, graphs)
from tapecli.execution.tf_values import as_tensorflow
from tapecli.runtime.context import current
from tapecli.runtime.values import DType, Tensor, dtype_name

TRAIN_OP = "train_op"
# TensorFlow's names of dtypes in its kernels' messages (DataTypeString).
_KERNEL_DTYPES = {"float32": "float", "float64": "double", "float16": "half"}


class Session:
    """``tf.compat.v1.Session(graph=)``: the graph's variables' values and random kernels, for this session."""

    def __init__(self, target="", graph=None, config=None):
        self.graph = graph if graph is not None else _default_or_global()
        self._values: dict[int, Tensor] = {}
        self._kernels: dict[int, object] = {}
        self._closed = False
        self._blocks: list = []

    # ---- state
    def read(self, variable: GraphVariable) -> Tensor:
        found = self._values.get(id(variable))
        if found is None:
            name = variable.op.name
            why = (f"Resource localhost/{name}/N10tensorflow3VarE does not exist." if self._values else
                   f"Container localhost does not exist. (Could not find resource: localhost/{name})")
            raise KernelPreconditionError(f"Could not find variable {name}. This could mean that the variable has "
                                          f"been deleted. In TF1, it can also mean the variable is uninitialized. "
                                          f"Debug info: container=localhost, status error message={why}")
        return found

    def holds(self, variable: GraphVariable) -> bool:
        return id(variable) in self._values

    def assign(self, variable: GraphVariable, value: Tensor) -> None:
        if value.shape != tuple(variable.shape):
            raise KernelValueError(f"Trying to assign to variable with tensor with wrong shape. Expected "
                                   f"{list(variable.shape)} got {list(value.shape)}")
        self._values[id(variable)] = value

    def kernel(self, op: Operation, make):
        """A stateful op's kernel in this session (a random op's Philox state), made at its first run."""
        found = self._kernels.get(id(op))
        if found is None:
            found = self._kernels[id(op)] = make()
        return found

    # ---- running
    @as_tensorflow
    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        feeds = {}
        for key, value in (feed_dict or {}).items():
            tensor = self._feed_key(key)
            if isinstance(value, (GraphTensor, GraphVariable)):
                raise TypeError(f"The value of a feed cannot be a tf.Tensor object. Acceptable feed values include "
                                f"Python scalars, strings, lists, numpy ndarrays, or TensorHandles. For reference, "
                                f"the tensor object was {value!r} which was passed to the argument `feed_dict` with "
                                f"key {tensor!r}.")
            array = np.asarray(value, dtype=tensor._dtype)
            if not tensor.shape.is_compatible_with(array.shape):
                raise ValueError(f"Cannot feed value of shape {array.shape} for Tensor {tensor.name}, which has "
                                 f"shape {tensor.shape}")
            feeds[tensor] = Tensor(array)
        found = [self._fetch(f) for f in _flattened(fetches)]
        evaluation = Evaluation(self, feeds, fetched=found)
        # the tensors first, then the ops: a train op's updates come after the values fetched beside it are read
        # (TensorFlow computes them from the variables' reads its gradients need, before the updates)
        values = {id(f): evaluation.fetch(f) for f in found if not isinstance(f, Operation)}
        for op in found:
            if isinstance(op, Operation):
                evaluation.fetch(op)
        return _structured(fetches, iter(values.get(id(f)) for f in found))

    def _feed_key(self, key) -> GraphTensor:
        if isinstance(key, str):
            try:
                key = self.graph.get_tensor_by_name(key)
            except (KeyError, ValueError) as e:
                raise TypeError(f"Cannot interpret feed_dict key as Tensor: {e.args[0]}") from None
        if isinstance(key, GraphVariable):
            raise TdfTypeError(f"tapecli feeds no variable ({key.name}): TensorFlow feeds its resource handle, which "
                               "leaves its value as it is", hint="feed a placeholder, or assign the variable")
        if not isinstance(key, GraphTensor):
            raise TypeError(f"Cannot interpret feed_dict key as Tensor: Can not convert a {type(key).__name__} into "
                            "a Tensor.")
        if key.graph is not self.graph:
            raise ValueError(f"Cannot interpret feed_dict key as Tensor: Tensor {key!r} is not an element of this "
                             "graph.")
        return key

    def _fetch(self, fetch):
        if isinstance(fetch, str):
            try:
                return self.graph.get_tensor_by_name(fetch) if ":" in fetch else \
                    self.graph.get_operation_by_name(fetch)
            except (KeyError, ValueError) as e:
                raise ValueError(f"Argument `fetch` = {fetch} cannot be interpreted as a Tensor. "
                                 f"(\"{e.args[0]}\")") from None
        if isinstance(fetch, (GraphTensor, GraphVariable, Operation)):
            if fetch.graph is not self.graph:
                raise ValueError(f"Fetch argument {fetch!r} cannot be interpreted as a Tensor. ({fetch!r} is not "
                                 "an element of this graph.)")
            return fetch
        raise TypeError(f"Fetch argument {fetch!r} has invalid type {type(fetch)}, must be a string or Tensor. "
                        "(Can not convert a {type(fetch).__name__} into a Tensor or Operation.)")

    def close(self) -> None:
        self._closed = True

    def as_default(self):
        return _SessionBlock(self, graph=False)

    def __enter__(self):
        block = _SessionBlock(self, graph=True)
        self._blocks.append(block)
        block.__enter__()
        return self

    def __exit__(self, *exc):
        self._blocks.pop().__exit__(*exc)
        self.close()
        return False


class _SessionBlock:
    """A session's block: it is the default session, and (for ``with Session() as s``) its graph the default."""

    def __init__(self, session: Session, graph: bool):
        self._session, self._graph = session, graph

    def __enter__(self):
        current().tf1_sessions.append(self._session)
        if self._graph:
            graphs().stack.append(self._session.graph)
        return self._session

    def __exit__(self, *exc):
        current().tf1_sessions.pop()
        if self._graph:
            graphs().stack.pop()
        return False


def _default_or_global() -> Graph:
    """The default graph, or (eager: none is) the run's global default graph, TensorFlow's ops.get_default_graph."""
    return graphs().default() or _global_graph()


def _global_graph() -> Graph:
    found = graphs()
    if found.global_graph is None:
        found.global_graph = Graph()
    return found.global_graph


def _flattened(fetches) -> list:
    if isinstance(fetches, (list, tuple)):
        return [leaf for f in fetches for leaf in _flattened(f)]
    if isinstance(fetches, dict):
        return [leaf for f in fetches.values() for leaf in _flattened(f)]
    return [fetches]


def _structured(fetches, values):
    """sess.run's result: the fetches' structure (lists, tuples, named tuples, dicts), each fetch's value in its
    place (``values``: in the order of _flattened)."""
    if isinstance(fetches, (list, tuple)):
        items = [_structured(f, values) for f in fetches]
        return type(fetches)(*items) if hasattr(fetches, "_fields") else type(fetches)(items)
    if isinstance(fetches, dict):
        return {key: _structured(f, values) for key, f in fetches.items()}
    return next(values)


class Evaluation:
    """One ``Session.run``: each node's value once, the feeds given. ``taped`` is a second evaluation for a
    gradients node: its targets again, each value its tape records, the sources watched."""

    def __init__(self, session: Session, feeds: dict, tape=None, watched=(), fetched=()):
        self.session, self.feeds = session, feeds
        self._values: dict[int, list] = {}
        self._tape, self._watched = tape, {id(x) for x in watched}
        self._fetched = {id(f) for f in fetched}

    def taped(self, tape, sources) -> "Evaluation":
        taped = Evaluation(self.session, self.feeds, tape, sources)
        taped._fetched = self._fetched
        return taped

    def fetches(self, *tensors) -> bool:
        """Whether this run fetches one of ``tensors`` (Grappler keeps a fetched node as it is)."""
        return any(id(t) in self._fetched for t in tensors)

    def fetch(self, fetch):
        if isinstance(fetch, Operation):
            self.outputs(fetch)
            return None
        return _numpy(tf_graphs._tensor(self.value(fetch)))

    def value(self, tensor):
        if isinstance(tensor, GraphVariable):
            found = self.session.read(tensor)
        elif tensor in self.feeds:
            found = self.feeds[tensor]
        else:
            found = self.outputs(tensor.op)[tensor.value_index]
        if self._tape is not None and id(tensor) in self._watched:
            self._tape.watch_tensor(tf_graphs._tensor(found), None, None)
        return found

    def outputs(self, op: Operation) -> list:
        found = self._values.get(id(op))
        if found is None:
            for control in op.control_inputs:
                self.outputs(control)
            found = self._values[id(op)] = op._compute(self)
        return found

    def unfed(self, op: Operation) -> KernelValueError:
        t = op.outputs[0]
        dtype = _KERNEL_DTYPES.get(dtype_name(t._dtype), dtype_name(t._dtype))
        shape = "" if not t.shape.known else " and shape [" + ",".join(
            "?" if d is None else str(d) for d in t.shape) + "]"
        return KernelValueError(f"You must feed a value for placeholder tensor '{op.name}' with dtype {dtype}{shape}")


def _numpy(t: Tensor):
    array = np.array(t.value, copy=True)
    return array[()] if array.ndim == 0 else array


# ------------------------------------------------------------------ variables' collections, initializers
def _collection(key: str, scope=None) -> list:
    return _default_or_global().get_collection(key, scope)


def global_variables(scope=None) -> list:
    return _collection(GLOBAL_VARIABLES, scope)


def trainable_variables(scope=None) -> list:
    return _collection(TRAINABLE_VARIABLES, scope)


def variables_initializer(var_list, name="init") -> Operation:
    """``tf.compat.v1.variables_initializer``: one op running each variable's initializer."""
    return _group(default_graph("tf.compat.v1.variables_initializer()"), [v.initializer for v in var_list], name)


def _group(graph: Graph, ops_run: list, name=None, whole=None) -> Operation:
    """A NoOp that runs ``ops_run`` (tf.group's)."""
    op = graph.add_operation("NoOp", name, (), lambda evaluation: [], whole=whole)
    op.control_inputs.extend(ops_run)
    return op


def _constant(graph: Graph, name: str, value) -> GraphTensor:
    made = Tensor(np.asarray(value))
    return graph.add_operation("Const", name, (), lambda evaluation: [made],
                               [(made.dtype, [], (made, made))]).outputs[0]


def global_variables_initializer() -> Operation:
    return variables_initializer(global_variables())


def get_or_create_global_step(graph=None) -> GraphVariable:
    """``tf.compat.v1.train.get_or_create_global_step``: the graph's int64 step counter, zero at first."""
    graph = graph or default_graph("tf.compat.v1.train.get_or_create_global_step()")
    found = graph.get_collection(GLOBAL_STEP)
    if found:
        return found[0]
    with graph.as_default():
        return tf_variables.get_variable(GLOBAL_STEP, shape=[], dtype=DType("int64"),
                                      initializer=tf_variables.zeros_initializer(), trainable=False,
                                      collections=[GLOBAL_VARIABLES, GLOBAL_STEP])


def get_global_step(graph=None):
    found = (graph or _default_or_global()).get_collection(GLOBAL_STEP)
    return found[0] if found else None


# ------------------------------------------------------------------ optimizers
class Optimizer:
    """training/optimizer.py's Optimizer: minimize is compute_gradients (a gradients node of the loss w.r.t. the
    trainable variables) and apply_gradients (one train op applying each variable's update, then the step's)."""

    _slots: tuple[str, ...] = ()

    def __init__(self, learning_rate, use_locking=False, name="Optimizer"):
        self._learning_rate, self._name = learning_rate, name
        self._slot_variables: dict[tuple[str, int], GraphVariable] = {}

    def get_name(self) -> str:
        return self._name

    def get_slot_names(self) -> list:
        return sorted(self._slots)

    def get_slot(self, var, name):
        return self._slot_variables.get((name, id(var)))

    def minimize(self, loss, global_step=None, var_list=None, gate_gradients=1, aggregation_method=None,
                 colocate_gradients_with_ops=False, name=None, grad_loss=None):
        pairs = self.compute_gradients(loss, var_list=var_list, grad_loss=grad_loss)
        variables = [v for g, v in pairs if g is not None]
        if not variables:
            raise ValueError(f"No gradients provided for any variable, check your graph for ops that do not support "
                             f"gradients, between variables {[v.name for _, v in pairs]} and loss {loss!r}.")
        return self.apply_gradients(pairs, global_step=global_step, name=name)

    def compute_gradients(self, loss, var_list=None, gate_gradients=1, aggregation_method=None,
                          colocate_gradients_with_ops=False, grad_loss=None):
        graph = default_graph("Optimizer.compute_gradients()")
        variables = list(var_list) if var_list is not None else graph.get_collection(TRAINABLE_VARIABLES)
        if not variables:
            raise ValueError("No variables to optimize.")
        grads = tf_graphs.gradients(loss, variables, grad_ys=grad_loss)
        return list(zip(grads, variables))

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """One update op per variable (``<name>/update_<variable>/<kernel>``), then the train op named ``name``:
        their group, or (with a global step) the step's assign_add after them."""
        graph = default_graph("Optimizer.apply_gradients()")
        pairs = [(g, v) for g, v in grads_and_vars if g is not None]
        if not pairs:
            raise ValueError(f"No gradients provided for any variable: {[v.name for _, v in grads_and_vars]}.")
        self._create_slots(graph, [var for _, var in pairs])
        whole = graph.unique_name(name or self._name)
        scopes, graph._name_stack = graph._name_stack, whole.split("/")
        try:
            constants = {key: _constant(graph, key, value) for key, value in self._hyperparameters().items()}
            updates = [self._update_op(graph, grad, var, constants) for grad, var in pairs]
            updates += self._finish(graph, updates, constants)
            if global_step is None:
                step = _group(graph, updates, whole=whole)
                graph.add_to_collection(TRAIN_OP, step)
                return step
            done = _group(graph, updates, name="update")
            step = global_step.update("AssignAddVariableOp", _constant(graph, "Const", np.int64(1)), ops.add,
                                      whole=whole)
        finally:
            graph._name_stack = scopes
        step.control_inputs.append(done)
        graph.add_to_collection(TRAIN_OP, step)
        return step

    def _hyperparameters(self) -> dict:
        return {"learning_rate": np.float32(self._learning_rate)}

    def _update_op(self, graph: Graph, grad, var, constants) -> Operation:
        optimizer = self

        def compute(evaluation):
            values = {key: tf_graphs._tensor(evaluation.value(c)).value.astype(var._dtype)
                      for key, c in constants.items()}
            optimizer._apply(evaluation.session, var, tf_graphs._tensor(evaluation.value(grad)), **values)
            return []
        return graph.add_operation(self._kernel, f"update_{var.op.name}/{self._kernel}", [grad, var], compute)

    def _create_slots(self, graph: Graph, variables: list) -> None:
        """Each variable's slots, zeros named ``<variable>/<optimizer>`` (``_1``, ``_2``... for the next ones)."""
        for var in variables:
            for index, slot in enumerate(self._slots):
                if (slot, id(var)) in self._slot_variables:
                    continue
                with graph.as_default():
                    self._slot_variables[(slot, id(var))] = tf_variables.get_variable(
                        f"{var.op.name}/{self._name}" + (f"_{index}" if index else ""), shape=list(var.shape),
                        dtype=var.dtype, initializer=tf_variables.zeros_initializer(), trainable=False,
                        collections=[GLOBAL_VARIABLES])

    def _finish(self, graph: Graph, updates: list, constants: dict) -> list:
        """The ops that run after the variables' updates (Adam's powers of its betas)."""
        return []

    def _apply(self, session: Session, var: GraphVariable, grad: Tensor, learning_rate, **hyperparameters) -> None:
        raise NotImplementedError


class GradientDescentOptimizer(Optimizer):
    """ResourceApplyGradientDescent: ``var -= grad * lr``."""

    _kernel = "ResourceApplyGradientDescent"

    def __init__(self, learning_rate, use_locking=False, name="GradientDescent"):
        super().__init__(learning_rate, use_locking, name)

    def _apply(self, session, var, grad, learning_rate):
        session.assign(var, Tensor(np.asarray(session.read(var).value - grad.value * learning_rate)))


class MomentumOptimizer(Optimizer):
    """ResourceApplyMomentum: ``accum = accum * momentum + grad``, then ``var -= accum * lr`` (Nesterov:
    ``var -= grad * lr + accum * momentum * lr``)."""

    _slots = ("momentum",)
    _kernel = "ResourceApplyMomentum"

    def __init__(self, learning_rate, momentum, use_locking=False, name="Momentum", use_nesterov=False):
        super().__init__(learning_rate, use_locking, name)
        self._momentum, self._nesterov = momentum, use_nesterov

    def _hyperparameters(self) -> dict:
        return {"learning_rate": np.float32(self._learning_rate), "momentum": np.float32(self._momentum)}

    def _apply(self, session, var, grad, learning_rate, momentum):
        slot = self._slot_variables[("momentum", id(var))]
        accum = np.asarray(session.read(slot).value * momentum + grad.value)
        session.assign(slot, Tensor(accum))
        step = grad.value * learning_rate + accum * momentum * learning_rate if self._nesterov else \
            accum * learning_rate
        session.assign(var, Tensor(np.asarray(session.read(var).value - step)))


class AdamOptimizer(Optimizer):
    """ResourceApplyAdam (ApplyAdamNonCuda): ``alpha = lr * sqrt(1 - beta2_power) / (1 - beta1_power)``, ``m +=
    (grad - m) * (1 - beta1)``, ``v += (grad^2 - v) * (1 - beta2)``, ``var -= m * alpha / (sqrt(v) + epsilon)``;
    after the updates each beta's power (a global variable, ``beta1_power``) times the beta."""

    _slots = ("m", "v")
    _kernel = "ResourceApplyAdam"

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-08, use_locking=False, name="Adam"):
        super().__init__(learning_rate, use_locking, name)
        self._betas, self._epsilon = (beta1, beta2), epsilon
        self._powers: dict[int, tuple] = {}         # a graph's beta powers, by the graph's id

    def _hyperparameters(self) -> dict:
        return {"learning_rate": np.float32(self._learning_rate), "beta1": np.float32(self._betas[0]),
                "beta2": np.float32(self._betas[1]), "epsilon": np.float32(self._epsilon)}

    def _create_slots(self, graph, variables):
        if id(graph) not in self._powers:
            with graph.as_default():
                self._powers[id(graph)] = tuple(tf_variables.get_variable(
                    f"beta{i + 1}_power", dtype=DType("float32"), initializer=np.float32(beta), trainable=False,
                    collections=[GLOBAL_VARIABLES]) for i, beta in enumerate(self._betas))
        super()._create_slots(graph, variables)

    def _finish(self, graph, updates, constants):
        finished = []
        for power, beta in zip(self._powers[id(graph)], ("beta1", "beta2")):
            product = graph.make_op("Mul", "mul", ([power, constants[beta]], {}), lambda a, k: ops.mul(a[0], a[1]))
            finished.append(power.update("AssignVariableOp", product, lambda old, new: new))
            finished[-1].control_inputs.extend(updates)
        return finished

    def _apply(self, session, var, grad, learning_rate, beta1, beta2, epsilon):
        m, v = (self._slot_variables[(slot, id(var))] for slot in self._slots)
        beta1_power, beta2_power = (session.read(p).value for p in self._powers[id(var.graph)])
        one = np.float32(1)
        alpha = learning_rate * np.sqrt(one - beta2_power) / (one - beta1_power)
        m_value, v_value, g = session.read(m).value, session.read(v).value, grad.value
        m_value = np.asarray(m_value + (g - m_value) * (one - beta1))
        v_value = np.asarray(v_value + (np.square(g) - v_value) * (one - beta2))
        session.assign(m, Tensor(m_value))
        session.assign(v, Tensor(v_value))
        session.assign(var, Tensor(np.asarray(session.read(var).value - m_value * alpha / (np.sqrt(v_value) + epsilon))))


# ------------------------------------------------------------------ tf.compat.v1
class GraphKeys:
    """``tf.compat.v1.GraphKeys``: the collections' names this family fills."""
    GLOBAL_VARIABLES = GLOBAL_VARIABLES
    TRAINABLE_VARIABLES = TRAINABLE_VARIABLES
    GLOBAL_STEP = GLOBAL_STEP
    VARIABLES = GLOBAL_VARIABLES
    TRAIN_OP = TRAIN_OP
    LOSSES = "losses"
    UPDATE_OPS = "update_ops"


def set_random_seed(seed) -> None:
    """``tf.compat.v1.set_random_seed``: the default graph's seed (eager: ``tf.random.set_seed``'s)."""
    graph = graphs().default()
    if graph is None:
        current().bridge.tf.random.set_seed(seed)
    else:
        graph.seed = seed


def get_default_graph() -> Graph:
    return _default_or_global()


def get_collection(key, scope=None) -> list:
    return _collection(key, scope)


def add_to_collection(name, value) -> None:
    _default_or_global().add_to_collection(name, value)


def xw_plus_b(x, weights, biases, name=None):
    """``tf.compat.v1.nn.xw_plus_b``: ``bias_add(matmul(x, weights), biases)``."""
    tf = current().bridge.tf
    if graphs().default() is None:
        return tf.nn.bias_add(tf.matmul(x, weights), biases)
    with tf_variables.NameScope(name, "xw_plus_b") as scope:
        return tf.nn.bias_add(tf.matmul(x, weights), biases, name=scope)


def disable_eager_execution() -> None:
    """``tf.compat.v1.disable_eager_execution``: the global default graph is the default from now on, under any
    other (TensorFlow 1's graph mode at the program's top level)."""
    found = graphs()
    if not found.stack or found.stack[0] is not _global_graph():
        found.stack.insert(0, _global_graph())


def executing_eagerly() -> bool:
    return graphs().default() is None


_OWN = {"placeholder": tf_graphs.placeholder, "get_variable": tf_variables.get_variable,
        "variable_scope": tf_variables.VariableScope, "name_scope": tf_variables.NameScope,
        "AUTO_REUSE": tf_variables.AUTO_REUSE,
        "set_random_seed": set_random_seed, "gradients": tf_graphs.gradients, "hessians": tf_graphs.hessians,
        "global_variables_initializer": global_variables_initializer,
        "variables_initializer": variables_initializer, "global_variables": global_variables,
        "trainable_variables": trainable_variables, "Session": Session, "GraphKeys": GraphKeys,
        "get_collection": get_collection, "add_to_collection": add_to_collection,
        "get_default_graph": get_default_graph, "Graph": Graph, "executing_eagerly": executing_eagerly,
        "disable_eager_execution": disable_eager_execution,
        **{name: getattr(tf_variables, name) for name in (
            "random_normal_initializer", "truncated_normal_initializer", "random_uniform_initializer",
            "zeros_initializer", "ones_initializer", "constant_initializer", "glorot_uniform_initializer",
            "glorot_normal_initializer", "variance_scaling_initializer")}}
_TRAIN = {"GradientDescentOptimizer": GradientDescentOptimizer, "MomentumOptimizer": MomentumOptimizer,
          "AdamOptimizer": AdamOptimizer,
          "get_or_create_global_step": get_or_create_global_step, "get_global_step": get_global_step}
# tf.compat.v1's names that are TensorFlow 2's own (the same function), given as the program's tf gives them.
SHARED = frozenset({
    "float16", "float32", "float64", "int32", "int64", "bool", "string", "matmul", "add", "subtract", "multiply",
    "divide", "square", "sqrt", "exp", "log", "abs", "maximum", "minimum", "pow", "reduce_sum", "reduce_mean",
    "reduce_max", "reduce_min", "cast", "equal", "argmax", "argmin", "reshape", "transpose", "identity", "constant",
    "zeros", "ones", "zeros_like", "ones_like", "concat", "stack", "shape", "sigmoid", "tanh", "one_hot", "where",
    "clip_by_value", "group", "Tensor", "Variable", "GradientTape", "TensorShape"})
SHARED_NN = frozenset({"relu", "sigmoid", "tanh", "softmax", "log_softmax", "bias_add", "l2_loss",
                       "sparse_softmax_cross_entropy_with_logits", "sigmoid_cross_entropy_with_logits"})


# The names of tf (TensorFlow 2's module) that are TensorFlow 1's graphs' (graph mode only, but for
# executing_eagerly, which is False while a graph is the default, and tuple, eager's tensors as they are).
TF2_NAMES = {"Graph": Graph, "gradients": tf_graphs.gradients, "hessians": tf_graphs.hessians,
             "executing_eagerly": executing_eagerly, "tuple": lambda tensors, control_inputs=None, name=None: (
                 tf_graphs.tuple_(tensors, control_inputs) if graphs().default() is not None else list(tensors))}
COMPAT = "compat"


def supported(path: list[str]) -> bool:
    """Whether ``tf.compat.<path>`` is a name this family gives (a module alone is none)."""
    if len(path) < 2 or path[0] != "v1":
        return False
    rest = path[1:]
    if len(rest) == 1:
        return rest[0] in _OWN or rest[0] in SHARED
    if len(rest) == 2:
        return rest[1] in _TRAIN if rest[0] == "train" else rest[0] == "nn" and (
            rest[1] == "xw_plus_b" or rest[1] in SHARED_NN) or rest[0] == "GraphKeys" and hasattr(GraphKeys, rest[1])
    return False


def module() -> types.ModuleType:
    """The program's ``tf.compat`` (its ``v1``: this family's names, TensorFlow 2's where they are the same, the
    rest refused by name)."""
    tf = current().bridge.tf
    v1 = _namespace("tensorflow.compat.v1", _OWN, tf, SHARED, {
        "train": _namespace("tensorflow.compat.v1.train", _TRAIN, None, frozenset(), {}),
        "nn": _namespace("tensorflow.compat.v1.nn", {"xw_plus_b": xw_plus_b}, tf.nn, SHARED_NN, {})})
    compat = types.ModuleType("tensorflow.compat")
    compat.v1 = v1
    return compat


class _NotInFamily(TdfNameError, AttributeError):
    """A name of tf.compat.v1 this family does not give: refused by name, and no attribute to hasattr."""


def _namespace(name: str, own: dict, tf, shared: frozenset, submodules: dict) -> types.ModuleType:
    made = types.ModuleType(name)
    made.__dict__.update(own)
    made.__dict__.update(submodules)
    path = name.replace("tensorflow", "tf")

    def resolve(attr: str):
        if attr.startswith("_"):
            raise AttributeError(attr)
        if attr in shared:
            value = getattr(tf, attr)
            made.__dict__[attr] = value
            return value
        raise _NotInFamily(f"tapecli has no {path}.{attr}: its tf.compat.v1 is TensorFlow 1's graphs (placeholders, "
                           "get_variable, sessions, gradients, optimizers) as docs/tf-surface.md lists them",
                           hint="docs/tf-surface.md, \"TensorFlow 1's graphs\"")
    made.__getattr__ = resolve
    return made
