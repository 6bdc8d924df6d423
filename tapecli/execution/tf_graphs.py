"""TensorFlow 1's graphs through ``tf.compat.v1`` on CPython's run: a layer of symbolic nodes over the eager ops.

Inside ``graph.as_default()`` (or a Session's block) a call of a tf function makes an :class:`Operation` of the
graph (the function, its arguments, its name) instead of a value, and its outputs are :class:`GraphTensor` s; a
Session (tf_sessions.py) computes an output by running the same eager function on its inputs' values, so the
numbers are the eager ops' own. A node's static shape and dtype come from running the function on stand-in values
twice, a placeholder's unknown dimensions once of :data:`STAND_INS` [0] and once of [1] elements: a dimension that
differs between the two is unknown. ``tf.gradients`` and ``tf.hessians`` are nodes whose value the run's tape
computes: their targets evaluated again under a tape that watches their sources. The default-graph stack is the
run's (``RunContext.tf1_graphs``)."""
from __future__ import annotations

import collections

import numpy as np

from tapecli import ops
from tapecli.autodiff.gradients import gradient
from tapecli.autodiff.jacobians import hessian
from tapecli.errors import TdfNameError, TdfTypeError, TdfValueError
from tapecli.execution.tf_values import _library_call, to_library
from tapecli.kernels import tf_onednn_eltwise
from tapecli.runtime.context import current
from tapecli.runtime.specs import Shape
from tapecli.autodiff.backward import backward
from tapecli.runtime.tape import Tape, as_tensor, check_unconnected, none_recording, recording
from tapecli.runtime.values import DType, Tensor, Variable, dtype_name

# The sizes an unknown dimension takes in a node's two stand-in runs.
STAND_INS = (11, 13)
# TensorFlow's op types of the tf functions most graphs call (a node's default name); another function's type is
# its name in CamelCase.
OP_TYPES = {"matmul": "MatMul", "reduce_mean": "Mean", "reduce_sum": "Sum", "reduce_max": "Max", "reduce_min": "Min",
            "argmax": "ArgMax", "argmin": "ArgMin", "constant": "Const", "bias_add": "BiasAdd", "relu": "Relu",
            "sparse_softmax_cross_entropy_with_logits": "SparseSoftmaxCrossEntropyWithLogits",
            "softmax_cross_entropy_with_logits": "softmax_cross_entropy_with_logits", "cast": "Cast"}
# Graph collections' keys (tf.compat.v1.GraphKeys).
GLOBAL_VARIABLES, TRAINABLE_VARIABLES, GLOBAL_STEP = "variables", "trainable_variables", "global_step"


class Graphs:
    """The run's TF1 graphs: the default-graph stack (``as_default`` blocks, sessions' blocks; empty: eager)."""

    def __init__(self):
        self.stack: list[Graph] = []
        self.global_graph = None        # ops.get_default_graph() where no graph is the default, made when asked

    def default(self):
        return self.stack[-1] if self.stack else None

    def library_op(self, f, spelled: str, node, args, kwargs):
        """A tf function called while a graph is the default: a node of that graph."""
        graph = self.stack[-1]
        if spelled in GRAPH_VERSIONS:
            return GRAPH_VERSIONS[spelled](*args, **kwargs)
        # what draws from the run's generators or calls the program back (wants the run), Keras's, and the
        # stateful ops: an eager value of theirs is not a graph node's
        if getattr(f, "wants_interp", False) or getattr(f, "__module__", "").startswith("tapecli.library.keras") \
                or spelled in _STATEFUL:
            raise TdfNameError(f"{spelled} inside a TF1 graph: tapecli's graphs take the ops of tf.compat.v1's "
                               "family (placeholders, get_variable and its initializers, ops, gradients, optimizers)",
                               hint="docs/tf-surface.md, \"TensorFlow 1's graphs\"")
        word = spelled.rpartition(".")[2]
        kwargs = dict(kwargs)
        name = kwargs.pop("name", None)         # (the node's name; tapecli's eager functions take none)
        made = graph.make_op(OP_TYPES.get(word, _camel(word)), name if isinstance(name, str) else None,
                             (args, kwargs), lambda a, k: _library_call(f, current().bridge.run, node, a, k))
        if word in _FUSED_ACTIVATIONS:
            _fuse_activation(made, _FUSED_ACTIVATIONS[word])
        return made


_STATEFUL = frozenset({"tf.print"})
# The tf functions whose meaning in a graph is a graph's own (tf.group's NoOp, tf.Variable's resource variable):
# what a call of one makes while a graph is the default, by its spelling (tf_variables.py adds tf.Variable).
GRAPH_VERSIONS: dict = {}


# the activations Grappler's remapper fuses into a MatMul, by their functions' names: oneDNN's kernels
_FUSED_ACTIVATIONS = {"sigmoid": tf_onednn_eltwise.logistic, "tanh": tf_onednn_eltwise.tanh,
                      "elu": tf_onednn_eltwise.elu}


def _fuse_activation(output: "GraphTensor", kernel) -> None:
    """Grappler's remapper on an x86 CPU runs MatMul, its bias add and Sigmoid (Tanh, Elu) as one oneDNN kernel,
    whose activation is oneDNN's: where this activation's input is the add of a float32 MatMul's output and a 1-D
    bias, and neither of those is read by another op of the graph or fetched, its value is ``kernel`` of the same
    pre-activation (written into the eager op's output, which the tape's SigmoidGrad, TanhGrad or EluGrad reads, as
    TensorFlow's gradient reads the fused op's)."""
    op = output.op
    add = op.inputs[0] if len(op.inputs) == 1 else None
    if not (isinstance(add, GraphTensor) and add.op.type in ("add", "AddV2", "BiasAdd") and len(add.op.inputs) == 2):
        return
    product, bias = add.op.inputs if add.op.inputs[0].op.type in _MATMULS else add.op.inputs[::-1]
    if not (product.op.type in _MATMULS and product._dtype == np.float32 and len(product.shape) == 2
            and bias.shape.known and len(bias.shape) == 1):
        return
    compute, graph = op._compute, op.graph

    def fused(evaluation):
        outputs = compute(evaluation)
        if graph.consumers(add) == 1 and graph.consumers(product) == 1 and not evaluation.fetches(add, product):
            pre = np.asarray(_tensor(evaluation.value(add)).value)
            if pre.dtype == np.float32 and tf_onednn_eltwise.known():
                outputs[0].value = kernel(pre)
        return outputs
    op._compute = fused


_MATMULS = frozenset({"MatMul", "matmul"})


def graphs() -> Graphs:
    ctx = current()
    if ctx.tf1_graphs is None:
        ctx.tf1_graphs = Graphs()
    return ctx.tf1_graphs


def default_graph(what: str) -> "Graph":
    """The default graph, for ``what`` (an error as TensorFlow's where none is: eager execution)."""
    graph = graphs().default()
    if graph is None:
        raise RuntimeError(f"{what} is not compatible with eager execution.")
    return graph


def _camel(word: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in word.split("_"))


class _DefaultBlock:
    """``graph.as_default()``: the graph is the default for the block (tf.executing_eagerly() False in it)."""

    def __init__(self, graph):
        self._graph = graph

    def __enter__(self):
        graphs().stack.append(self._graph)
        return self._graph

    def __exit__(self, *exc):
        graphs().stack.pop()
        return False


class Graph:
    """``tf.Graph()``: its operations in the order made, names made unique as TensorFlow's unique_name does,
    collections, the graph-level seed and the variable and name scopes open in it."""

    def __init__(self):
        self._operations: list[Operation] = []
        self._names: dict[str, int] = {}
        self._collections: dict[str, list] = collections.defaultdict(list)
        self._name_stack: list[str] = []
        self._variable_stack: list[tuple[str, object]] = []     # (scope name, reuse)
        self._variables: dict[str, GraphVariable] = {}
        self._op_seeds = 0          # the op seeds drawn for random ops given none (random_seed.get_seed)
        self._control: list[list] = []      # the open control_dependencies blocks' ops
        self.seed = None

    def as_default(self):
        return _DefaultBlock(self)

    def get_operations(self) -> list:
        return list(self._operations)

    def get_collection(self, name, scope=None) -> list:
        items = self._collections.get(name, [])
        if scope is None:
            return list(items)
        return [item for item in items if getattr(item, "name", "").startswith(scope)]

    def get_collection_ref(self, name) -> list:
        return self._collections[name]

    def add_to_collection(self, name, value) -> None:
        self._collections[name].append(value)

    def get_operation_by_name(self, name: str):
        found = next((op for op in self._operations if op.name == name), None)
        if found is None:
            raise KeyError(f"The name '{name}' refers to an Operation not in the graph.")
        return found

    def get_tensor_by_name(self, name: str):
        op_name, _, index = name.rpartition(":")
        if not op_name or not index.isdigit():
            raise ValueError(f"The name '{name}' looks a like an Operation name, not a Tensor name. Tensor names "
                             "must be of the form \"<op_name>:<output_index>\".")
        op = self.get_operation_by_name(op_name)
        if int(index) >= len(op.outputs):
            raise KeyError(f"The name '{name}' refers to a Tensor which does not exist. The operation, "
                           f"'{op_name}', exists but only has {len(op.outputs)} outputs.")
        return op.outputs[int(index)]

    # ---- names
    def unique_name(self, name: str) -> str:
        """TensorFlow's Graph.unique_name: the name under the open name scopes, ``_1``, ``_2``... where taken."""
        return self.claim("/".join([*self._name_stack, name]))

    def claim(self, name: str) -> str:
        """The whole name ``name``, or with ``_1``, ``_2``... where it is taken (case aside), now taken."""
        key = name.lower()
        count = self._names.get(key, 0)
        self._names[key] = count + 1
        if count:
            while f"{key}_{count}" in self._names:
                count += 1
            self._names[key] = count + 1
            name = f"{name}_{count}"
            self._names[name.lower()] = 1
        return name

    def control_dependencies(self, control_inputs):
        """``tf.control_dependencies``: the ops made in the block run after these (tensors' ops)."""
        return _ControlBlock(self, [_op_of(c) for c in control_inputs or ()])

    def consumers(self, tensor) -> int:
        """How many of the graph's ops read ``tensor``."""
        return sum(any(i is tensor for i in op.inputs) for op in self._operations)

    def next_op_seed(self) -> int:
        seed = self._op_seeds
        self._op_seeds += 1
        return seed

    # ---- nodes
    def add_operation(self, op_type: str, name: str | None, inputs, compute, outputs=(), whole: str | None = None):
        """A new operation whose ``compute(evaluation)`` gives its outputs' values; ``outputs``: their
        (dtype, shape, stand-ins); named ``name`` under the name scopes, or ``whole`` (a name claimed already)."""
        op = Operation(self, op_type, whole or self.unique_name(name or op_type), inputs, compute)
        op.control_inputs.extend(ops_run for block in self._control for ops_run in block)
        op.outputs = [GraphTensor(op, i, *spec) for i, spec in enumerate(outputs)]
        self._operations.append(op)
        return op

    def make_op(self, op_type: str, name: str | None, arguments, fn):
        """An operation of the eager function ``fn(args, kwargs)`` on ``arguments`` (graph values among them):
        its outputs the structure of ``fn``'s value on the stand-ins."""
        inputs = list(graph_values(arguments))
        for value in inputs:
            if value.graph is not self:
                raise TdfValueError(f"Tensor {value.name} must be from the same graph as the operation's other "
                                    "inputs (tapecli ran it with the default graph's)")
        # a name ending in "/" is a name scope's, taken whole (xw_plus_b's bias_add, named as its scope)
        whole = name[:-1] if name and name.endswith("/") else self.unique_name(name or op_type)
        # each variable read by a ReadVariableOp of its own, named under the op's name, as TensorFlow's
        arguments = substitute(arguments, lambda v: v.read_op(self.claim(f"{whole}/ReadVariableOp"))
                               if isinstance(v, GraphVariable) else v)
        inputs = list(graph_values(arguments))
        unknown_rank = any(not v.shape.known for v in inputs)
        runs = [fn(*substitute(arguments, lambda v, i=i: v.stand_ins[i])) for i in range(2)]
        leaves = [_leaves(run) for run in runs]
        specs = []
        for a, b in zip(*leaves):
            a, b = _tensor(a), _tensor(b)
            shape = None if unknown_rank else [x if x == y else None for x, y in zip(a.shape, b.shape)]
            specs.append((a.dtype, shape, (a, b)))

        def compute(evaluation):
            return [_tensor(t) for t in _leaves(fn(*substitute(arguments, evaluation.value)))]
        op = self.add_operation(op_type, None, inputs, compute, specs, whole=whole)
        return _rebuilt(runs[0], iter(op.outputs))


class _ControlBlock:
    def __init__(self, graph: Graph, ops_run: list):
        self._graph, self._ops = graph, ops_run

    def __enter__(self):
        self._graph._control.append(self._ops)

    def __exit__(self, *exc):
        self._graph._control.pop()
        return False


def _op_of(value) -> "Operation":
    if isinstance(value, Operation):
        return value
    if isinstance(value, (GraphTensor, GraphVariable)):
        return value.op
    raise TypeError(f"Can not convert a {type(value).__name__} into a Tensor or Operation.")


def group(*inputs, name=None) -> "Operation":
    """``tf.group`` in a graph: a NoOp that runs the inputs' ops."""
    graph = default_graph("tf.group()")
    op = graph.add_operation("NoOp", name, (), lambda evaluation: [])
    op.control_inputs.extend(_op_of(i) for i in inputs)
    return op


def tuple_(tensors, control_inputs=None, name=None) -> list:
    """``tf.tuple`` in a graph: each tensor again (an Identity), once all of them and ``control_inputs`` ran."""
    graph = default_graph("tf.tuple()")
    gate = group(*tensors, *(control_inputs or ()))
    outputs = []
    for t in tensors:
        op = graph.add_operation("Identity", None, (t,), lambda evaluation, t=t: [evaluation.value(t)],
                                 [(t._dtype, None if not t.shape.known else list(t.shape), t.stand_ins)])
        op.control_inputs.append(gate)
        outputs.append(op.outputs[0])
    return outputs


GRAPH_VERSIONS.update({"tf.group": group, "tf.tuple": tuple_,
                       "tf.control_dependencies": lambda control_inputs: default_graph(
                           "tf.control_dependencies()").control_dependencies(control_inputs)})


def _leaves(value) -> list:
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in _leaves(v)]
    if isinstance(value, (Tensor, Variable, int, float, bool, np.ndarray, np.generic)):
        return [value]
    raise TdfTypeError(f"a TF1 graph's node gave a {type(value).__name__}, which tapecli's graphs do not hold")


def _rebuilt(structure, outputs):
    if isinstance(structure, (list, tuple)):
        return type(structure)(_rebuilt(v, outputs) for v in structure)
    return next(outputs)


def _tensor(value) -> Tensor:
    if isinstance(value, Variable):
        return value.read()
    t = ops.to_tensor(to_library(value))
    return ops.materialize(t) if t.weak else t


def graph_values(structure):
    """The graph tensors and variables in an argument structure (lists, tuples, dicts), in order."""
    if isinstance(structure, (GraphTensor, GraphVariable)):
        yield structure
    elif isinstance(structure, (list, tuple)):
        for item in structure:
            yield from graph_values(item)
    elif isinstance(structure, dict):
        for item in structure.values():
            yield from graph_values(item)


def substitute(structure, value_of):
    """The structure with each graph tensor or variable replaced by ``value_of(it)``."""
    if isinstance(structure, (GraphTensor, GraphVariable)):
        return value_of(structure)
    if isinstance(structure, (list, tuple)):
        return type(structure)(substitute(item, value_of) for item in structure)
    if isinstance(structure, dict):
        return {key: substitute(item, value_of) for key, item in structure.items()}
    return structure


class Operation:
    """``tf.Operation``: a node of a graph, its type, unique name, inputs and outputs."""

    def __init__(self, graph: Graph, op_type: str, name: str, inputs, compute):
        self.graph, self.type, self.name = graph, op_type, name
        self.inputs = tuple(inputs)
        self.outputs: list[GraphTensor] = []
        self._compute = compute
        self.control_inputs: list[Operation] = []

    def values(self) -> tuple:
        return tuple(self.outputs)

    def run(self, feed_dict=None, session=None):
        return _session_of(session).run(self, feed_dict=feed_dict)

    def __repr__(self):
        return f"<tf.Operation '{self.name}' type={self.type}>"


def _session_of(session):
    if session is not None:
        return session
    found = current().tf1_sessions[-1] if current().tf1_sessions else None
    if found is None:
        raise ValueError("Cannot evaluate tensor using `eval()`: No default session is registered. Use `with "
                         "sess.as_default()` or pass an explicit session to `eval(session=sess)`")
    return found


_BINARY_NAMES = {"add": "add", "sub": "sub", "mul": "mul", "truediv": "truediv", "floordiv": "floordiv",
                 "mod": "mod", "pow": "pow", "matmul": "matmul", "lt": "Less", "le": "LessEqual", "gt": "Greater",
                 "ge": "GreaterEqual", "and": "and", "or": "or", "xor": "xor"}


def _binary(name: str, reflected: bool):
    def operator(self, other):
        graph = self.graph
        return graph.make_op(_BINARY_NAMES[name], None, ([self, other], {}),
                             lambda args, _: _apply_operator(name, reflected, *args))
    return operator


def _unary(name: str, op_type: str):
    def operator(self):
        return self.graph.make_op(op_type, None, ([self], {}), lambda args, _: _apply_operator(name, False, *args))
    return operator


def _apply_operator(name: str, reflected: bool, mine, other=None):
    """The eager operator on the operands' values (Python's operators on tapecli's tensors)."""
    eager = current().bridge
    mine = _tensor(mine)
    if other is None:
        return eager.operator(name, mine)
    return eager.operator(("r" if reflected else "") + name, mine, other)


class _Operators:
    """What graph tensors and variables share: Python's operators (each a node of the graph), the dtype and the
    static shape."""

    __array_ufunc__ = None          # (a NumPy array's operator with one defers to ours)
    __array_priority__ = 100
    _dtype: np.dtype
    _shape: Shape

    @property
    def dtype(self) -> DType:
        return DType(dtype_name(self._dtype))

    @property
    def shape(self) -> Shape:
        return self._shape

    def get_shape(self) -> Shape:
        return self._shape

    def __getitem__(self, key):
        return self.graph.make_op("strided_slice", None, ([self], {}),
                                  lambda args, _: current().bridge.getitem(_tensor(args[0]), key))


for _name in _BINARY_NAMES:
    setattr(_Operators, f"__{_name}__", _binary(_name, False))
    if _name not in ("lt", "le", "gt", "ge"):
        setattr(_Operators, f"__r{_name}__", _binary(_name, True))
_Operators.__neg__ = _unary("neg", "Neg")
_Operators.__abs__ = _unary("abs", "Abs")


class GraphTensor(_Operators):
    """A graph's ``tf.Tensor``: output ``index`` of ``op``, its dtype and static shape (None: unknown rank)."""

    def __init__(self, op: Operation, index: int, dtype, shape, stand_ins):
        self.op, self.value_index = op, index
        self._dtype, self._shape = np.dtype(dtype), Shape(shape)
        self.stand_ins = stand_ins

    @property
    def name(self) -> str:
        return f"{self.op.name}:{self.value_index}"

    @property
    def graph(self) -> Graph:
        return self.op.graph

    def eval(self, feed_dict=None, session=None):
        return _session_of(session).run(self, feed_dict=feed_dict)

    def __repr__(self):
        return f'Tensor("{self.name}", shape={self._shape}, dtype={dtype_name(self._dtype)})'

    def __bool__(self):
        raise TypeError("Using a symbolic `tf.Tensor` as a Python `bool` is not allowed in Graph execution. Use "
                        "Eager execution or decorate this function with @tf.function.")

    def __iter__(self):
        raise TypeError("Iterating over a symbolic `tf.Tensor` is not allowed in Graph execution. Use Eager "
                        "execution or decorate this function with @tf.function.")

    def __len__(self):
        raise TypeError(f"len is not well defined for a symbolic Tensor ({self.name}). Please call `x.shape` rather "
                        "than `len(x)` for shape information.")


def placeholder(dtype, shape=None, name=None) -> GraphTensor:
    """``tf.compat.v1.placeholder``: a value a session's feed_dict gives."""
    graph = default_graph("tf.placeholder()")
    np_dtype = DType(str(getattr(dtype, "name", dtype))).np
    dims = None if shape is None else [None if d is None or d == -1 else int(d) for d in Shape(shape)]
    stand_ins = tuple(Tensor(np.zeros(() if dims is None else [size if d is None else d for d in dims], np_dtype))
                      for size in STAND_INS)

    def compute(evaluation):
        raise evaluation.unfed(op)
    op = graph.add_operation("Placeholder", name, (), compute, [(np_dtype, dims, stand_ins)])
    return op.outputs[0]


# ------------------------------------------------------------------ variables
class GraphVariable(_Operators):
    """A graph's resource variable (``get_variable``, ``tf.Variable``): its value is a session's, set by its
    initializer op; ``name`` is its op's, claimed already (its initializer's ops are named under it)."""

    def __init__(self, graph: Graph, name: str, shape, dtype, initial: GraphTensor, trainable: bool):
        self._graph, self._shape, self._dtype = graph, Shape(shape), np.dtype(dtype)
        self.trainable = trainable
        self.initial_value = initial
        variable = self

        def assign(evaluation):
            evaluation.session.assign(variable, _tensor(evaluation.value(initial)))
            return []
        self.stand_ins = (Tensor(np.zeros(self._shape, self._dtype)),) * 2
        # the ops ResourceVariable makes, named under the variable's whole name (name scopes aside)
        self.op = graph.add_operation("VarHandleOp", None, (), lambda evaluation: [None], whole=name)
        self._initialized = graph.add_operation(
            "VarIsInitializedOp", None, (), lambda evaluation: [Tensor(np.asarray(evaluation.session.holds(self)))],
            [(np.dtype(bool), [], (Tensor(np.asarray(False)),) * 2)],
            whole=graph.claim(f"{name}/IsInitialized/VarIsInitializedOp")).outputs[0]
        self.initializer = graph.add_operation("AssignVariableOp", None, (initial,), assign,
                                               whole=graph.claim(f"{name}/Assign"))
        self._snapshot = self.read_op(graph.claim(f"{name}/Read/ReadVariableOp"))

    def read_op(self, whole: str) -> GraphTensor:
        """A ReadVariableOp of this variable named ``whole``: its value in a session."""
        return self._graph.add_operation("ReadVariableOp", None, (self,), lambda evaluation: [evaluation.value(self)],
                                         [(self._dtype, list(self._shape), self.stand_ins)], whole=whole).outputs[0]

    def is_initialized(self, name=None) -> GraphTensor:
        return self._initialized

    @property
    def name(self) -> str:
        return f"{self.op.name}:0"

    @property
    def graph(self) -> Graph:
        return self._graph

    def value(self) -> GraphTensor:
        return self._snapshot

    read_value = value

    def eval(self, session=None):
        return _session_of(session).run(self)

    def assign(self, value, use_locking=None, name=None, read_value=True):
        return self.update("AssignVariableOp", value, lambda old, new: new, name, read_value=read_value)

    def assign_add(self, delta, use_locking=None, name=None, read_value=True):
        return self.update("AssignAddVariableOp", delta, ops.add, name, read_value=read_value)

    def assign_sub(self, delta, use_locking=None, name=None, read_value=True):
        return self.update("AssignSubVariableOp", delta, ops.sub, name, read_value=read_value)

    def update(self, op_type: str, value, combine, name=None, whole=None, read_value=False):
        """An op setting the variable to ``combine(its value, value)`` (named ``name``, or ``whole``); with
        ``read_value``, its output, the value it set (what TensorFlow's unread variable gives a fetch)."""
        variable, dtype = self, self._dtype

        def compute(evaluation):
            new = _tensor(substitute(value, evaluation.value))
            if new.dtype != dtype:
                new = ops.cast(new, dtype)
            new = combine(evaluation.session.read(variable), new)
            evaluation.session.assign(variable, new)
            return [new] if read_value else []
        outputs = [(dtype, list(self._shape), self.stand_ins)] if read_value else []
        op = self._graph.add_operation(op_type, name, [self, *graph_values(value)], compute, outputs, whole=whole)
        return op.outputs[0] if read_value else op

    def __repr__(self):
        return f"<tf.Variable '{self.name}' shape={self._shape} dtype={dtype_name(self._dtype)}>"


# ------------------------------------------------------------------ gradients
def _as_list(value) -> list:
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _reaches(source, targets) -> bool:
    """Whether ``source`` is a target or an input, near or far, of a target's operation."""
    seen, stack = set(), list(targets)
    while stack:
        value = stack.pop()
        if value is source:
            return True
        if isinstance(value, GraphTensor) and id(value.op) not in seen:
            seen.add(id(value.op))
            stack.extend(value.op.inputs)
    return False


def gradients(ys, xs, grad_ys=None, name="gradients", gate_gradients=False, aggregation_method=None,
              stop_gradients=None, unconnected_gradients="none", colocate_gradients_with_ops=False):
    """``tf.gradients``: per source, the gradient of the targets' sum (None where no target reads it), a node
    that evaluates the targets again on a tape watching the sources."""
    tape = function_tape()
    if tape is not None:
        return _function_gradients(tape, _as_list(ys), _as_list(xs), grad_ys, stop_gradients, unconnected_gradients)
    graph = default_graph_or_refuse("tf.gradients")
    ys, xs = _as_list(ys), _as_list(xs)
    seeds = None if grad_ys is None else _as_list(grad_ys)
    connected = [_reaches(x, ys) for x in xs]
    inputs = [*ys, *xs, *(s for s in seeds or () if isinstance(s, (GraphTensor, GraphVariable)))]

    reached = [x for x, keep in zip(xs, connected) if keep]

    def compute(evaluation):
        tape = Tape("gradients")
        taped = evaluation.taped(tape, reached)
        with recording(tape):
            for x in reached:           # (a variable's value watched before the targets read it)
                if isinstance(x, GraphVariable):
                    taped.value(x)
            targets = [_tensor(taped.value(y)) for y in ys]
        sources = [_tensor(taped.value(x)) for x in reached]
        given = None if seeds is None else [_tensor(substitute(s, evaluation.value)) for s in seeds]
        return gradient(tape, targets, sources, output_gradients=given, unconnected_gradients="zero")[0]
    specs = [(x._dtype, list(x.shape), x.stand_ins) for x, keep in zip(xs, connected) if keep]
    op = graph.add_operation("SymbolicGradient", name, inputs, compute, specs)
    outputs = iter(op.outputs)
    return [next(outputs) if keep else None for keep in connected]


def hessians(ys, xs, gate_gradients=False, aggregation_method=None, name="hessians"):
    """``tf.hessians``: per source, the second derivatives of the targets' sum, shaped source.shape * 2."""
    tape = function_tape()
    if tape is not None:
        target = _function_target(_as_list(ys))
        with none_recording([tape]):        # (its second pass unrecorded: a graph's hessians, not their gradients)
            return [hessian(tape, target, to_library(x))[0] for x in _as_list(xs)]
    graph = default_graph_or_refuse("tf.gradients")
    ys, xs = _as_list(ys), _as_list(xs)
    results = []
    for x in xs:
        if not _reaches(x, ys):
            results.append(None)
            continue

        def compute(evaluation, x=x):
            return [_hessian(evaluation, ys, x)]
        shape = list(x.shape) * 2
        stand_in = Tensor(np.zeros([d or 1 for d in shape], x._dtype))
        results.append(graph.add_operation("Hessians", name, [*ys, x], compute,
                                           [(x._dtype, shape, (stand_in, stand_in))]).outputs[0])
    return results


def _hessian(evaluation, ys, x) -> Tensor:
    """The second derivatives of the targets' sum w.r.t. ``x``, shaped x.shape * 2, on a persistent tape."""
    tape = Tape("hessians", persistent=True)
    taped = evaluation.taped(tape, [x])
    with recording(tape):
        if isinstance(x, GraphVariable):
            taped.value(x)
        targets = [_tensor(taped.value(y)) for y in ys]
        target = ops.add_n(targets) if len(targets) > 1 else targets[0]
    return hessian(tape, target, _tensor(taped.value(x)), unconnected_gradients="zero")[0]


def function_tape() -> Tape | None:
    """Inside a ``tf.function`` of a program that names tf.gradients or tf.hessians (outside a TensorFlow 1 graph):
    the tape that records the function's body (tf_calls._run_graph), as TensorFlow's graph holds its ops."""
    if graphs().default() is not None:
        return None
    tapes = getattr(getattr(current().eager, "run", None), "function_tapes", None)
    return tapes[-1] if tapes else None


def _function_target(ys: list) -> Tensor:
    targets = [as_tensor(to_library(y)) for y in ys]
    return ops.add_n([ops.reduce_sum(t) for t in targets]) if len(targets) > 1 else targets[0]


def _function_gradients(tape: Tape, ys: list, xs: list, grad_ys, stop_gradients, unconnected_gradients) -> list:
    """``tf.gradients`` in a ``tf.function``: the backward pass of the function's tape from the targets to each
    source (None, or zeros, where none reaches it), recorded on that tape (tf.gradients of it gives the second
    derivatives); a tensor of ``stop_gradients`` passes no gradient back to what it was computed from."""
    unconnected = check_unconnected(unconnected_gradients)
    targets = [as_tensor(to_library(y)) for y in ys]
    sources = [to_library(x) for x in xs]
    seeds = [ops.ones_like(t) for t in targets] if grad_ys is None else \
        [ops.materialize(to_library(g), t.dtype) for g, t in zip(_as_list(grad_ys), targets)]
    wanted = [x.id for x in sources]
    stops = {to_library(s).id for s in _as_list(stop_gradients or [])}
    path = None
    if stops:
        tape.split_records()
        reach, kept = set(wanted) & tape.watched_ids, []
        for rec in tape.op_records(current().tapes):
            if rec.output.id not in stops and any(inp.id in reach for inp in rec.inputs):
                reach.add(rec.output.id)
                kept.append(rec)
        path = (kept, reach)
    with recording(tape):
        grads = backward(tape, targets, seeds, wanted, release=False, path=path)
    results = []
    for x in sources:
        g = grads.get(x.id)
        results.append(ops.zeros_like(as_tensor(x)) if g is None and unconnected == "zero" else g)
    return results


def default_graph_or_refuse(what: str) -> Graph:
    graph = graphs().default()
    if graph is None:
        raise RuntimeError(f"{what} is not supported when eager execution is enabled. Use tf.GradientTape instead.")
    return graph
