"""TensorFlow 1's variables in a graph (ops/variable_scope.py, ops/init_ops.py): ``variable_scope`` and
``name_scope``, ``get_variable`` (a scope's variable, made or reused) and the v1 initializers, whose ops are
TensorFlow's: a random initializer's raw kernel (RandomStandardNormal, RandomUniform, TruncatedNormal: Philox from
the seeds random_seed.get_seed gives in a graph, its state each session's), then its scaling ops."""
from __future__ import annotations

import math

import numpy as np

from tapecli import ops
from tapecli.errors import TdfNameError
from tapecli.execution.tf_graphs import (GLOBAL_VARIABLES, GRAPH_VERSIONS, TRAINABLE_VARIABLES, Graph, GraphTensor,
                                         GraphVariable, default_graph)
from tapecli.execution.tf_values import to_library
from tapecli.kernels.tf_random import StatefulRandom, philox_fill
from tapecli.runtime.values import DType, Tensor, dtype_name


class VariableScope:
    """``tf.compat.v1.variable_scope(name, reuse=None)``: a prefix of get_variable's names and a name scope."""

    def __init__(self, name_or_scope, default_name=None, values=None, initializer=None, reuse=None, dtype=None):
        if name_or_scope is None and default_name is None:
            raise TypeError("If default_name is None then name_or_scope is required")
        self._name, self._default, self._reuse = name_or_scope, default_name, reuse
        self._graph = None

    def __enter__(self):
        graph = self._graph = default_graph("tf.variable_scope()")
        outer = graph._variable_stack[-1] if graph._variable_stack else ("", None)
        name = self._name if self._name is not None else _unique_scope(graph, self._default)
        full = f"{outer[0]}/{name}" if outer[0] else name
        reuse = self._reuse if self._reuse is not None else outer[1]
        graph._variable_stack.append((full, reuse))
        scoped = graph.unique_name(name)
        graph._name_stack.append(scoped.rpartition("/")[2])
        return self

    def __exit__(self, *exc):
        self._graph._variable_stack.pop()
        self._graph._name_stack.pop()
        return False

    @property
    def name(self) -> str:
        return self._graph._variable_stack[-1][0] if self._graph else self._name


def _unique_scope(graph: Graph, default: str) -> str:
    prefix = graph._variable_stack[-1][0] + "/" if graph._variable_stack else ""
    used = {name.rpartition("/")[0] for name in graph._variables}
    count, name = 0, default
    while f"{prefix}{name}" in used:
        count += 1
        name = f"{default}_{count}"
    return name


class NameScope:
    """``tf.compat.v1.name_scope(name)``: a prefix of the ops' names (not of get_variable's)."""

    def __init__(self, name, default_name=None, values=None):
        self._name = name if name is not None else default_name
        self._graph = None

    def __enter__(self):
        self._graph = default_graph("tf.compat.v1.name_scope()")
        scoped = self._graph.unique_name(self._name)
        self._graph._name_stack.append(scoped.rpartition("/")[2])
        return "/".join(self._graph._name_stack) + "/"

    def __exit__(self, *exc):
        self._graph._name_stack.pop()
        return False


AUTO_REUSE = "AUTO_REUSE"


def get_variable(name, shape=None, dtype=None, initializer=None, regularizer=None, trainable=None,
                 collections=None, validate_shape=True, use_resource=None):
    """``tf.compat.v1.get_variable``: the scope's variable of this name, made (or, under reuse, found)."""
    graph = default_graph("tf.compat.v1.get_variable()")
    scope, reuse = graph._variable_stack[-1] if graph._variable_stack else ("", None)
    full = f"{scope}/{name}" if scope else name
    found = graph._variables.get(full)
    if found is not None:
        if reuse is None or reuse is False:
            raise ValueError(f"Variable {full} already exists, disallowed. Did you mean to set reuse=True or "
                             "reuse=tf.AUTO_REUSE in VarScope?")
        return found
    if reuse is True:
        raise ValueError(f"Variable {full} does not exist, or was not created with tf.get_variable(). Did you mean "
                         "to set reuse=tf.AUTO_REUSE in VarScope?")
    if regularizer is not None:
        raise TdfNameError("get_variable's regularizer: tapecli's TF1 graphs have no regularization losses")
    np_dtype = DType(str(getattr(dtype, "name", dtype))).np if dtype is not None else None
    whole = graph.claim(full)
    saved, graph._name_stack = graph._name_stack, [*full.split("/"), "Initializer"]    # (its initializer's ops)
    try:
        if isinstance(initializer, (GraphTensor, GraphVariable)):
            initial = initializer
        elif isinstance(initializer, Initializer):
            if shape is None:
                raise ValueError(f"The initializer passed is not valid. It should be a callable with no arguments "
                                 f"and the shape should not be provided or an instance of `tf.keras.initializers.*' "
                                 f"and `shape` should be fully defined. (variable {full})")
            initial = initializer(graph, [int(d) for d in shape], np_dtype or np.dtype(np.float32))
        elif initializer is None:
            if shape is None:
                raise ValueError(f"Shape of a new variable ({full}) must be fully defined, but instead was <unknown>.")
            dtype_now = np_dtype or np.dtype(np.float32)
            initial = (glorot_uniform_initializer() if dtype_now.kind == "f" else zeros_initializer())(
                graph, [int(d) for d in shape], dtype_now)
        else:
            value = Tensor(np.asarray(initializer, dtype=np_dtype))
            initial = graph.make_op("Const", None, ((), {}), lambda a, k: value)
    finally:
        graph._name_stack = saved
    if np_dtype is not None and initial._dtype != np_dtype:
        raise ValueError(f"Initializer type '{dtype_name(initial._dtype)}' and explicit dtype "
                         f"'{dtype_name(np_dtype)}' don't match.")
    if shape is not None and initial.shape.known and list(initial.shape) != [int(d) for d in shape]:
        raise ValueError(f"Shape of a new variable ({full}) must be fully defined or match its initializer's")
    variable = GraphVariable(graph, whole, list(initial.shape), initial._dtype, initial,
                             True if trainable is None else bool(trainable))
    graph._variables[full] = variable
    for key in collections if collections is not None else (
            [GLOBAL_VARIABLES, TRAINABLE_VARIABLES] if variable.trainable else [GLOBAL_VARIABLES]):
        graph.add_to_collection(key, variable)
    return variable


# ------------------------------------------------------------------ TF1 initializers (init_ops.py)
class Initializer:
    """An init_ops (v1) initializer: called by get_variable with the graph, shape and dtype, it makes the
    initial value's node."""

    def __call__(self, graph: Graph, shape: list, dtype):
        raise NotImplementedError


class _Constant(Initializer):
    def __init__(self, value, name: str):
        self._value, self._name = value, name

    def __call__(self, graph, shape, dtype):
        value = Tensor(np.broadcast_to(np.asarray(self._value, dtype=dtype), shape).copy())
        return _const(graph, self._name, value)


def _const(graph: Graph, name: str, value: Tensor) -> GraphTensor:
    return graph.add_operation("Const", name, (), lambda evaluation: [value],
                               [(value.dtype, list(value.shape), (value, value))]).outputs[0]


def zeros_initializer(dtype=None):
    return _Constant(0, "zeros")


def ones_initializer(dtype=None):
    return _Constant(1, "ones")


def constant_initializer(value=0, dtype=None, verify_shape=False):
    return _Constant(value, "Const")


class _Random(Initializer):
    """A random initializer: RandomStandardNormal, RandomUniform or TruncatedNormal scaled as random_ops.py does,
    from the seeds random_seed.get_seed gives in a graph (its graph seed; an op seed given none counted per
    graph); the kernel's Philox state is each session's."""

    def __init__(self, kind: str, seed, **parameters):
        self._kind, self._seed, self._parameters = kind, seed, parameters

    def parameters(self, shape) -> dict:
        return self._parameters

    def __call__(self, graph, shape, dtype):
        dtype = np.dtype(dtype)
        if dtype.kind != "f":
            raise ValueError(f"Expected float dtype, got {dtype_name(dtype)}")
        op_seed = self._seed
        if graph.seed is not None and op_seed is None:
            op_seed = graph.next_op_seed()
        seeds = StatefulRandom(graph.seed).get_seed(op_seed)
        scope = _RANDOM_SCOPES[self._kind]
        whole = graph.unique_name(scope)        # (the last op's name: math_ops.add(..., name=scope))
        graph._name_stack.append(scope)
        try:
            _const(graph, "shape", Tensor(np.asarray(shape, np.int32)))
            if self._kind == "uniform":
                last = self._uniform(graph, shape, dtype, seeds)
            else:
                mean, stddev = (_const(graph, key, Tensor(np.asarray(value, dtype)))
                                for key, value in self.parameters(shape).items())
                raw = _random_op(graph, _RANDOM_TYPES[self._kind], self._kind, shape, dtype, seeds)
                last = ("AddV2", ops.add, _binary_op(graph, "Mul", ops.mul, raw, stddev, "mul"), mean)
        finally:
            graph._name_stack.pop()
        return last if isinstance(last, GraphTensor) else _binary_op(graph, *last, whole=whole)

    def _uniform(self, graph, shape, dtype, seeds):
        """random_ops.random_uniform: ``rnd`` for minval 0 and maxval 1 (Python ints), ``rnd * maxval`` for minval
        0, else ``rnd * (maxval - minval) + minval``: the raw tensor, or the last op's (type, function, inputs)."""
        parameters = self.parameters(shape)
        low, high = parameters["minval"], parameters["maxval"]
        high = 1 if high is None else high
        low_zero = isinstance(low, int) and low == 0
        if low_zero and isinstance(high, int) and high == 1:
            return _random_op(graph, "RandomUniform", "uniform", shape, dtype, seeds)
        low, high = (_const(graph, key, Tensor(np.asarray(value, dtype))) for key, value in (("min", low),
                                                                                            ("max", high)))
        raw = _random_op(graph, "RandomUniform", "uniform", shape, dtype, seeds)
        if low_zero:
            return "Mul", ops.mul, raw, high
        width = _binary_op(graph, "Sub", ops.sub, high, low, "sub")
        return "AddV2", ops.add, _binary_op(graph, "Mul", ops.mul, raw, width, "mul"), low


def _binary_op(graph: Graph, op_type: str, f, a: GraphTensor, b: GraphTensor, name=None, whole=None) -> GraphTensor:
    """The op ``f`` of two graph tensors, named ``name`` under the scopes or ``whole`` (claimed already)."""
    return graph.add_operation(op_type, name, (a, b), lambda evaluation: [f(evaluation.value(a), evaluation.value(b))],
                               [(a._dtype, list(a.shape), a.stand_ins)], whole=whole).outputs[0]


def _random_op(graph: Graph, op_type: str, kind: str, shape, dtype, seeds) -> GraphTensor:
    """A stateful random kernel's raw values (random_ops.py's gen_random_ops call): each session's kernel holds
    its Philox state, which each run moves on."""
    size = math.prod(shape)

    def compute(evaluation):
        key, counter = evaluation.session.kernel(op, StatefulRandom).reserve(op_type, dtype, seeds, size * 256)
        return [Tensor(philox_fill(kind, dtype, key, counter, size).reshape(shape))]
    zeros = Tensor(np.zeros(shape, dtype))
    op = graph.add_operation(op_type, op_type, (), compute, [(dtype, list(shape), (zeros, zeros))])
    return op.outputs[0]


_RANDOM_SCOPES = {"normal": "random_normal", "uniform": "random_uniform", "truncated_normal": "truncated_normal"}
_RANDOM_TYPES = {"normal": "RandomStandardNormal", "uniform": "RandomUniform", "truncated_normal": "TruncatedNormal"}


def random_normal_initializer(mean=0.0, stddev=1.0, seed=None, dtype=None):
    return _Random("normal", seed, mean=mean, stddev=stddev)


def truncated_normal_initializer(mean=0.0, stddev=1.0, seed=None, dtype=None):
    return _Random("truncated_normal", seed, mean=mean, stddev=stddev)


def random_uniform_initializer(minval=0, maxval=None, seed=None, dtype=None):
    return _Random("uniform", seed, minval=minval, maxval=maxval)


class variance_scaling_initializer(_Random):
    """init_ops.VarianceScaling (v1): the scale over the fans (_compute_fans), then a uniform in +-sqrt(3 scale),
    a truncated normal of stddev sqrt(scale) / .87962566103423978, or a normal of stddev sqrt(scale)."""

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None, dtype=None):
        if distribution not in ("uniform", "truncated_normal", "untruncated_normal", "normal"):
            raise ValueError(f"Invalid `distribution` argument: {distribution}")
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise ValueError(f"Invalid `mode` argument: {mode}")
        kind = {"uniform": "uniform", "untruncated_normal": "normal"}.get(distribution, "truncated_normal")
        super().__init__(kind, seed)
        self._scale, self._mode = scale, mode

    def parameters(self, shape) -> dict:
        fan_in, fan_out = _fans(shape)
        scale = self._scale / max(1.0, {"fan_in": fan_in, "fan_out": fan_out,
                                        "fan_avg": (fan_in + fan_out) / 2.0}[self._mode])
        if self._kind == "uniform":
            limit = math.sqrt(3.0 * scale)
            return {"minval": -limit, "maxval": limit}
        stddev = math.sqrt(scale) / (.87962566103423978 if self._kind == "truncated_normal" else 1.0)
        return {"mean": 0.0, "stddev": stddev}


def _fans(shape) -> tuple[float, float]:
    if len(shape) < 1:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    if len(shape) == 2:
        return shape[0], shape[1]
    receptive = math.prod(shape[:-2])
    return shape[-2] * receptive, shape[-1] * receptive


def glorot_uniform_initializer(seed=None, dtype=None):
    return variance_scaling_initializer(1.0, "fan_avg", "uniform", seed)


def glorot_normal_initializer(seed=None, dtype=None):
    return variance_scaling_initializer(1.0, "fan_avg", "truncated_normal", seed)


def variable(initial_value=None, trainable=None, validate_shape=True, caching_device=None, name=None,
             variable_def=None, dtype=None, import_scope=None, constraint=None, synchronization=None,
             aggregation=None, shape=None, experimental_enable_variable_lifting=True):
    """``tf.Variable`` in a graph: a resource variable named under the name scopes (``Variable``, made unique),
    its initial value a constant (``Variable/Initializer/initial_value``) or a graph tensor."""
    graph = default_graph("tf.Variable()")
    if initial_value is None:
        raise ValueError("The `initial_value` arg (None) must be specified.")
    whole = graph.unique_name(name or "Variable")
    np_dtype = DType(str(getattr(dtype, "name", dtype))).np if dtype is not None else None
    if isinstance(initial_value, (GraphTensor, GraphVariable)):
        initial = initial_value
    else:
        value = ops.to_tensor(to_library(initial_value))
        value = ops.materialize(value, np_dtype) if value.weak else value if np_dtype is None else ops.cast(value, np_dtype)
        saved, graph._name_stack = graph._name_stack, [*whole.split("/"), "Initializer"]
        try:
            initial = graph.add_operation("Const", "initial_value", (), lambda evaluation: [value],
                                          [(value.dtype, list(value.shape), (value, value))]).outputs[0]
        finally:
            graph._name_stack = saved
    made = GraphVariable(graph, whole, list(initial.shape), initial._dtype, initial,
                         True if trainable is None else bool(trainable))
    for key in [GLOBAL_VARIABLES, TRAINABLE_VARIABLES] if made.trainable else [GLOBAL_VARIABLES]:
        graph.add_to_collection(key, made)
    return made


GRAPH_VERSIONS["tf.Variable"] = variable

