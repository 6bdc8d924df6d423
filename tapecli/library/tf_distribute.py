"""``tf.distribute`` on the one CPU device tapecli has, as TensorFlow behaves on a CPU-only machine: every strategy
(the default one, ``MirroredStrategy()``, ``OneDeviceStrategy("/cpu:0")``) runs one replica. ``run`` calls the
function once, in a replica context; what it returns is the plain value (TensorFlow's PerReplica of one replica is
its value); ``reduce`` with ``axis=None`` gives it back, with an axis sums (or averages) along it as TensorFlow's
reduce does; ``experimental_local_results`` is a tuple of the one value; a distributed dataset gives the dataset's
own elements. A variable made in a MirroredStrategy's scope is TensorFlow's MirroredVariable (its type and repr);
its values are a plain variable's. Strategies of several devices or machines are out of scope (library/scope.py).

The scopes entered and the replica context a ``run`` opens are the run's (``RunContext.distribution``)."""
from __future__ import annotations

import numpy as np

from tapecli import ops
from tapecli.errors import NoAttribute, TdfTypeError, TdfValueError
from tapecli.interpreter.conversions import to_int
from tapecli.interpreter.objects import BoundMethod, ProgramObject
from tapecli.interpreter.registry import builtin, register
from tapecli.library.data_iterators import DatasetIterator
from tapecli.runtime.context import current
from tapecli.runtime.values import PythonTuple, Tensor, Variable

_LIB = "tensorflow.python.distribute."


class _Distribution:
    """The run's tf.distribute state: its default strategy, the strategies whose scopes are entered (innermost
    last), and the strategies whose ``run`` is calling its function (innermost last)."""

    def __init__(self):
        self.default = Strategy("default")
        self.scopes: list[Strategy] = []
        self.replicas: list[Strategy] = []

    def entered(self) -> bool:
        """tf.distribute.has_strategy(): a scope (or a run's replica context) is open."""
        return bool(self.scopes or self.replicas)


def _state() -> _Distribution:
    ctx = current()
    if ctx.distribution is None:
        ctx.distribution = _Distribution()
    return ctx.distribution


def _mirroring(state: _Distribution) -> None:
    """Variables made now are mirrored where the innermost scope is a MirroredStrategy's, outside any ``run``."""
    ctx = current()
    mirrored = bool(state.scopes) and state.scopes[-1].kind == "mirrored" and not state.replicas
    if mirrored and ctx.mirrored_variables is None:
        ctx.mirrored_variables = {}
    ctx.mirroring = mirrored


class ReduceOp(ProgramObject):
    """``tf.distribute.ReduceOp.SUM`` / ``.MEAN``: printed ``ReduceOp.SUM``, its repr ``<ReduceOp.SUM: 'SUM'>``."""

    kind_word = "a tf.distribute.ReduceOp"

    def __init__(self, name: str):
        self.name = name

    def python_class(self) -> str:
        return _LIB + "reduce_util.ReduceOp"

    def python_text(self) -> str:
        return f"<ReduceOp.{self.name}: '{self.name}'>"

    def own_text(self, *names: str) -> str | None:
        return f"ReduceOp.{self.name}" if names[0] == "__str__" else None

    def get_attribute(self, interp, attr, node):
        if attr in ("name", "value"):
            return self.name
        return super().get_attribute(interp, attr, node)


REDUCE_OPS = {name: ReduceOp(name) for name in ("SUM", "MEAN")}     # (one object a member, as Python's enums)


class _ReduceOpClass(ProgramObject):
    """``tf.distribute.ReduceOp``: its members, and ``ReduceOp("SUM")``."""

    kind_word = "tf.distribute.ReduceOp"

    def get_attribute(self, interp, attr, node):
        if attr in REDUCE_OPS:
            return REDUCE_OPS[attr]
        raise NoAttribute(f"type object 'ReduceOp' has no attribute '{attr}'")

    def call(self, interp, args, kwargs, node):
        return _reduce_op(args[0] if args else kwargs.get("value"))


def _reduce_op(value) -> ReduceOp:
    """A ReduceOp, or its name in any case (``"sum"``), as Strategy.reduce takes it."""
    if isinstance(value, ReduceOp):
        return value
    if isinstance(value, str) and value.upper() in REDUCE_OPS:
        return REDUCE_OPS[value.upper()]
    raise TdfValueError(f"{value!r} is not a valid ReduceOp" if isinstance(value, str) else
                        f"Expected `reduce_op` to be a `tf.distribute.ReduceOp`, not: {value!r}")


def _mapped(f, value):
    """``f`` of each leaf of a nest of lists, tuples and dicts, as tf.nest.map_structure."""
    if isinstance(value, PythonTuple):
        return PythonTuple(_mapped(f, v) for v in value)
    if isinstance(value, list):
        return [_mapped(f, v) for v in value]
    if isinstance(value, dict):
        return {k: _mapped(f, v) for k, v in value.items()}
    return f(value)


def _python_int(n: int) -> Tensor:
    """A Python int as the interpreter holds one."""
    return Tensor(np.array(n, dtype=np.int64), weak=True)


def _tensor(value) -> Tensor:
    """A value as a tensor of its own, a Python number as tf.convert_to_tensor makes it."""
    t = ops.to_tensor(value.read() if isinstance(value, Variable) else value)
    return ops.materialize(t) if t.weak else t


class Strategy(ProgramObject):
    """One of TensorFlow's strategies of one replica: ``kind`` "default" (tf.distribute.get_strategy() outside
    any scope), "mirrored" or "one_device"."""

    _CLASSES = {"default": "distribute_lib._DefaultDistributionStrategy",
                "mirrored": "mirrored_strategy.MirroredStrategy", "one_device": "one_device_strategy.OneDeviceStrategy"}

    def __init__(self, kind: str):
        self.kind = kind

    @property
    def kind_word(self):
        return "a " + self._CLASSES[self.kind].rpartition(".")[2]

    def python_class(self) -> str:
        return _LIB + self._CLASSES[self.kind]

    def scope(self) -> "StrategyScope":
        return StrategyScope(self)

    def run(self, interp, fn, args=(), kwargs=None, options=None):
        """``fn(*args, **kwargs)`` once, in this strategy's replica context."""
        state = _state()
        state.replicas.append(self)
        _mirroring(state)
        try:
            return interp.call_value(fn, list(args or ()), dict(kwargs or {}))
        finally:
            state.replicas.pop()
            _mirroring(state)

    def reduce(self, reduce_op, value, axis):
        """Strategy.reduce of one replica: the value itself across replicas (a MirroredStrategy's made tensors),
        and along ``axis`` TensorFlow's reduce_sum, or for MEAN that sum over the axis' length cast to its dtype."""
        op = _reduce_op(reduce_op)
        if axis is None:
            return _mapped(_tensor, value) if self.kind == "mirrored" and op.name == "SUM" else value
        if isinstance(value, (list, dict)):
            raise TdfTypeError("Strategy.reduce with an axis takes one tensor")
        t = _tensor(value)
        axes = [to_int(a, "axis") for a in axis] if isinstance(axis, list) else [to_int(axis, "axis")]
        for a in axes:
            if not -t.ndim <= a < t.ndim:
                raise TdfValueError(f"`axis` = {a} out of range for `value` with rank {t.ndim}")
        total = ops.reduce_sum(t, axis=axes if isinstance(axis, list) else axes[0])
        if op.name == "SUM":
            return total
        count = int(np.prod([t.shape[a] for a in axes], dtype=np.int64))
        return ops.div(total, ops.cast(Tensor(np.array(count, dtype=np.int64)), total.dtype))

    def get_attribute(self, interp, attr, node):
        if attr == "num_replicas_in_sync":
            return _python_int(1)
        if attr == "run":
            return BoundMethod(attr, lambda call_node, fn, args=(), kwargs=None, options=None:
                               self.run(interp, fn, args, kwargs, options))
        methods = {
            "scope": lambda: self.scope(),
            "reduce": lambda reduce_op, value, axis=None: self.reduce(reduce_op, value, axis),
            "experimental_local_results": lambda value: PythonTuple([value]),
            "gather": lambda value, axis: value,
            "experimental_distribute_dataset": lambda dataset, options=None: DistributedDataset(dataset, False),
            "distribute_datasets_from_function": lambda dataset_fn, options=None:
                DistributedDataset(interp.call_value(dataset_fn, [InputContext(1, 0, 1)]), True),
        }
        if attr in methods:
            method = methods[attr]
            bound = BoundMethod(attr, lambda call_node, *a, **k: method(*a, **k))
            bound.item_lists = attr == "reduce"     # (a list's items are values of their own: reduced each)
            return bound
        raise NoAttribute(f"'{self._CLASSES[self.kind].rpartition('.')[2]}' object has no attribute '{attr}'",
                           hint="tapecli's strategies run one replica on the CPU: scope, run, reduce, gather, "
                                "experimental_local_results, experimental_distribute_dataset, "
                                "distribute_datasets_from_function, num_replicas_in_sync")


class StrategyScope(ProgramObject):
    """``with strategy.scope():``: the strategy is tf.distribute.get_strategy() inside (variables made there are
    its: a MirroredStrategy's mirrored)."""

    kind_word = "a strategy's scope"

    def __init__(self, strategy: Strategy):
        self.strategy = strategy

    def python_class(self) -> str:
        return _LIB + "distribute_lib._CurrentDistributionContext"

    def enter(self):
        state = _state()
        state.scopes.append(self.strategy)
        _mirroring(state)
        return self.strategy

    def exit(self):
        state = _state()
        state.scopes.pop()
        _mirroring(state)


class ReplicaContext(ProgramObject):
    """The replica context inside ``run`` (or the default strategy's, outside any scope): replica 0 of 1."""

    kind_word = "a tf.distribute.ReplicaContext"

    def __init__(self, strategy: Strategy):
        self.strategy = strategy

    def python_class(self) -> str:
        return _LIB + ("distribute_lib._DefaultReplicaContext" if self.strategy.kind == "default" and
                       not _state().replicas else "distribute_lib.ReplicaContext")

    def get_attribute(self, interp, attr, node):
        if attr == "num_replicas_in_sync":
            return _python_int(1)
        if attr == "replica_id_in_sync_group":
            return Tensor(np.array(0, dtype=np.int32))
        if attr == "strategy":
            return self.strategy
        if attr == "all_reduce":        # (one replica: each value as it is)
            return BoundMethod(attr, lambda call_node, reduce_op, value, options=None:
                               (_reduce_op(reduce_op), _mapped(_tensor, value))[1])
        raise NoAttribute(f"'ReplicaContext' object has no attribute '{attr}'")


class InputContext(ProgramObject):
    """``tf.distribute.InputContext``: what distribute_datasets_from_function passes its function."""

    kind_word = "a tf.distribute.InputContext"

    def __init__(self, pipelines: int, pipeline_id: int, replicas: int):
        self.pipelines, self.pipeline_id, self.replicas = pipelines, pipeline_id, replicas

    def python_class(self) -> str:
        return _LIB + "distribute_lib.InputContext"

    def python_text(self) -> str:
        return f"tf.distribute.InputContext(input pipeline id {self.pipeline_id}, total: {self.pipelines})"

    def per_replica_batch_size(self, global_batch_size) -> int:
        size = to_int(global_batch_size, "global_batch_size")
        if size % self.replicas:
            raise TdfValueError(f"The `global_batch_size` {size} is not divisible by `num_replicas_in_sync` "
                                f"{self.replicas}")
        return size // self.replicas

    def get_attribute(self, interp, attr, node):
        fields = {"num_input_pipelines": self.pipelines, "input_pipeline_id": self.pipeline_id,
                  "num_replicas_in_sync": self.replicas}
        if attr in fields:
            return _python_int(fields[attr])
        if attr == "get_per_replica_batch_size":
            return BoundMethod(attr, lambda call_node, global_batch_size: _python_int(self.per_replica_batch_size(
                global_batch_size)))
        raise NoAttribute(f"'InputContext' object has no attribute '{attr}'")


class DistributedDataset(ProgramObject):
    """A dataset distributed over one replica: its elements are the dataset's."""

    kind_word = "a distributed dataset"

    def __init__(self, dataset, from_function: bool):
        if not hasattr(dataset, "items") or not hasattr(dataset, "element_spec"):
            raise TdfTypeError("a strategy distributes a tf.data.Dataset")
        self.dataset, self.from_function = dataset, from_function

    def python_class(self) -> str:
        return _LIB + ("input_lib.DistributedDatasetsFromFunction" if self.from_function else
                       "input_lib.DistributedDataset")

    def items(self):
        return self.dataset.items()

    def iterator(self) -> DatasetIterator:
        return DatasetIterator(self, _LIB + "input_lib.DistributedIterator")

    def element_spec(self):
        return self.dataset.element_spec()

    def get_attribute(self, interp, attr, node):
        if attr == "element_spec":
            return self.element_spec()
        raise NoAttribute(f"'{self.python_class().rpartition('.')[2]}' object has no attribute '{attr}'")


@builtin("distribute.MirroredStrategy")
def mirrored_strategy(devices=None, cross_device_ops=None):
    """TensorFlow's MirroredStrategy on a CPU-only machine: the CPU, one replica (``devices`` may name it)."""
    for device in devices or ():
        if not isinstance(device, str) or device.lower().replace("device:", "") not in _CPU:
            raise TdfValueError(f"MirroredStrategy: tapecli has one device, the CPU; got {device!r}",
                                hint='MirroredStrategy() or MirroredStrategy(devices=["/cpu:0"])')
    return Strategy("mirrored")


@builtin("distribute.OneDeviceStrategy")
def one_device_strategy(device):
    if not isinstance(device, str) or device.lower().replace("device:", "") not in _CPU:
        raise TdfValueError(f"OneDeviceStrategy: tapecli has one device, the CPU; got {device!r}",
                            hint='OneDeviceStrategy("/cpu:0")')
    return Strategy("one_device")


_CPU = ("/cpu:0", "cpu:0", "/job:localhost/replica:0/task:0/cpu:0")


@builtin("distribute.get_strategy")
def get_strategy():
    state = _state()
    return state.replicas[-1] if state.replicas else state.scopes[-1] if state.scopes else state.default


@builtin("distribute.has_strategy")
def has_strategy():
    return _state().entered()


@builtin("distribute.in_cross_replica_context")
def in_cross_replica_context():
    state = _state()
    return bool(state.scopes) and not state.replicas


@builtin("distribute.get_replica_context")
def get_replica_context():
    """The replica context of a ``run`` (or the default one outside any scope); None in a scope's cross-replica
    context, as TensorFlow's."""
    state = _state()
    if state.replicas:
        return ReplicaContext(state.replicas[-1])
    return None if state.scopes else ReplicaContext(state.default)


@builtin("distribute.InputContext")
def input_context(num_input_pipelines=1, input_pipeline_id=0, num_replicas_in_sync=1):
    return InputContext(to_int(num_input_pipelines, "num_input_pipelines"),
                        to_int(input_pipeline_id, "input_pipeline_id"),
                        to_int(num_replicas_in_sync, "num_replicas_in_sync"))


register("distribute.ReduceOp", _ReduceOpClass())
