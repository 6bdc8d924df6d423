"""tf.data in memory: ``tf.data.Dataset`` built from tensors (from_tensor_slices, from_tensors, range, zip)
and transformed (batch, unbatch, map, flat_map, filter, take, take_while, skip, repeat, enumerate, shuffle,
prefetch, cache, concatenate, scan, unique, group_by_window, apply, and tf.data.experimental's scan, unique and
group_by_window for apply), reduced (reduce), iterated by ``for``, ``list()``, ``iter()``/``next()`` and
``as_numpy_iterator()``.

A dataset is lazy, as TensorFlow's: each iteration runs its pipeline again from the source. TensorFlow runs
a dataset's functions as a graph, outside every tape: its elements are constants to the tapes here too
(``map``'s function runs with the tapes paused). A tuple is a structure whose components are sliced together,
as TensorFlow reads one; so is a list holding a tensor (or a list, a dict), while a list of numbers is one tensor.

``shuffle`` is TensorFlow's buffered shuffle drawing from the run's generator (as tf.random and Keras's
``fit(shuffle=True)`` do): the order is another than TensorFlow's own random stream gives.

Each element a source (from_tensor_slices, from_tensors, range) yields is a step of the run (limits.tick),
whatever draws it: a ``for`` loop, ``list``, ``sorted``, ``zip``, a comprehension, ``batch``, ``skip`` or
``cardinality``. An endless pipeline (``repeat()``) then ends at --max-steps or TAPECLI_MAX_SECONDS, and a
huge batch at the memory cap while its elements are gathered, before it is stacked."""
from __future__ import annotations

import contextlib
import itertools
import re

import numpy as np

from tapecli import ops
from tapecli.kernels import tf_random
from tapecli.errors import KernelPreconditionError, KernelValueError, ShapeError, TdfTypeError, TdfValueError
from tapecli.interpreter.classes import off_the_tape
from tapecli.interpreter.conversions import to_int, truth
from tapecli.interpreter.objects import BoundMethod, ProgramObject
from tapecli.interpreter.registry import builtin, register
from tapecli.library.control import flatten, pack_as
from tapecli.library.core import to_dtype
from tapecli.library.data_iterators import END, DatasetIterator, NumpyIterator, PythonIterator, op_message
from tapecli.library.data_elements import (as_element, component, counted, int64_of, predicate_holds, spec_map,
                                           spec_of, spec_text, structure_of, types_text, unpacked_call)
from tapecli.library.draws import tensorflow_stream
from tapecli.library.tf_ragged import from_tensor, int64_splits
from tapecli.library.tf_ragged_math import stacked
from tapecli.runtime.specs import DatasetSpec, RaggedTensorSpec, TensorSpec, static_shape
from tapecli.runtime.context import current
from tapecli.runtime.limits import tick
from tapecli.runtime.tape import type_word
from tapecli.runtime.values import DType, NumpyArray, PythonTuple, Tensor, dtype_name


@contextlib.contextmanager
def _ahead():
    """Within the block, a dataset runs for what TensorFlow knows without a pass (a length counted, a map's spec
    from its first element): no shuffle takes its next order for it, and its functions' random ops are its own
    iteration's (TensorFlow traces a function, which draws nothing)."""
    ctx = current()
    ctx.counting_datasets += 1
    outer, ctx.dataset_pass = ctx.dataset_pass, None
    try:
        yield
    finally:
        ctx.counting_datasets -= 1
        ctx.dataset_pass = outer


class _Pass:
    """One iteration of a dataset that a program starts (a ``for`` loop, an epoch, ``iter()``): the kernels of
    its functions' random ops, by the function (data_elements.unpacked_call)."""

    __slots__ = ("kernels",)

    def __init__(self):
        self.kernels: dict = {}


def _in_pass(source):
    """``source`` whose iterators draw their elements for an iteration: the one that draws from them (a
    repeat's next round, a zip's members), else one of their own."""
    def started():
        ctx = current()
        outer = ctx.dataset_pass
        run = outer or _Pass()
        ctx.dataset_pass = run
        try:
            elements = iter(source())
        finally:
            ctx.dataset_pass = outer
        return _drawn_in(ctx, run, elements)
    return started


def _drawn_in(ctx, run, elements):
    while True:
        outer = ctx.dataset_pass
        ctx.dataset_pass = run
        try:
            element = next(elements, END)
        finally:
            ctx.dataset_pass = outer
        if element is END:
            return
        yield element


class Dataset(ProgramObject):
    """A dataset: ``source()`` gives a new iterator over its elements (nests of tensors) each time.
    ``items_are_values``: no program function makes them (no map, no filter), so a loop may take them one
    ahead (a loop plan sees which is the last: ``interpreter/loop_plans.py``). ``spec()`` gives its
    ``element_spec``, TensorFlow's static one; without it, its first element's (a map's results)."""

    kind_word = "a tf.data.Dataset"

    def __init__(self, source, interp=None, values=True, spec=None, size=None):
        self.source = _in_pass(source)
        self.size = size                # how many elements it gives, found without running it (count)
        self.interp = interp
        self.items_are_values = values
        self.spec = spec
        self.kind = "_Dataset"          # TensorFlow's class of it, as its repr names it (_KINDS)
        self.unknown = self.infinite = False        # its size, as TensorFlow knows it ahead (_sized)

    def items(self):
        return self.source()

    def iterator(self) -> DatasetIterator:
        return DatasetIterator(self, "tensorflow.python.data.ops.iterator_ops.OwnedIterator")

    def count(self) -> int:
        """How many elements it gives: found ahead where its making tells (as TensorFlow's cardinality, which
        runs no pass: a shuffle's next order, a map's function), else by running it."""
        if self.size is not None:
            return self.size()
        with _ahead():
            return sum(1 for _ in self.source())

    def element_spec(self):
        return self.first_spec() if self.spec is None else self.spec()

    def first_spec(self, known_rows=True):
        """The spec of the first element (a map's or scan's: TensorFlow's traced function's)."""
        with _ahead():
            first = next(iter(self.source()), None)
        if first is None:
            raise TdfValueError("Dataset.element_spec: tapecli finds a map's or scan's spec from its first element, and "
                                "this dataset has none")
        return spec_of(first, known_rows)

    def _same_spec(self):
        """What a transformation that keeps the elements' shapes gives as its spec: this dataset's."""
        return self.element_spec

    def _rows_known(self) -> bool:
        return all(None not in s.shape[:1] for s in flatten(self.element_spec()))

    def get_attribute(self, interp, attr, node):
        if attr == "element_spec":
            return self.element_spec()
        method = _METHODS.get(attr)
        if method is None:
            raise TdfTypeError(f"tf.data.Dataset has no method {attr} in tapecli",
                               hint=f"tapecli's: {', '.join(sorted(_METHODS))}")
        return BoundMethod(attr, lambda call_node, *a, **k: self._sized(_named(method(self, interp, *a, **k), attr),
                                                                        attr, a, k))

    def _sized(self, made, method: str, args, kwargs):
        """A dataset a method made, with what TensorFlow knows of its size without running it: unknown after a
        filter (even of an endless input) and what cannot be counted ahead, infinite after an endless repeat."""
        if isinstance(made, Dataset) and made is not self and method not in _OWN_SIZE:
            others = [o for o in (*args, *kwargs.values()) if isinstance(o, Dataset)]
            made.unknown = method in _UNKNOWN_SIZE or self.unknown or any(o.unknown for o in others) or \
                method == "unbatch" and not _rows_known(self)
            count = args[0] if args else kwargs.get("count")
            endless = method == "repeat" and (count is None or to_int(count, "count") < 0)
            made.infinite = method not in _UNKNOWN_SIZE and (endless or (self.infinite and method != "take") or
                                                             method == "concatenate" and any(o.infinite for o in others))
        return made

    def python_class(self) -> str:
        """``type(dataset)``: TensorFlow's class of it, in its module (``prefetch_op._PrefetchDataset``)."""
        name = _OP_MODULES.get(self.kind) or \
            re.sub(r"(?<=[a-z])(?=[A-Z])", "_", self.kind.strip("_").removesuffix("Dataset")).lower() + "_op"
        return f"tensorflow.python.data.ops.{name}.{self.kind}"

    def python_text(self) -> str:
        """``print(dataset)``: TensorFlow's repr, its class and element_spec."""
        return f"<{self.kind} element_spec={spec_text(self.element_spec())}>"

    # ---------------------------------------------------------- transformations
    def batch(self, interp, batch_size, drop_remainder=False, num_parallel_calls=None, deterministic=None,
              name=None):
        return self._batched(batch_size, drop_remainder, "batch", dense_ragged=False)

    def ragged_batch(self, interp, batch_size, drop_remainder=False, row_splits_dtype=None, name=None):
        """batch, a component of elements whose shapes may differ (a dimension of its spec unknown) batched into a
        ragged tensor, as TensorFlow's _DenseToRaggedDataset makes them ragged before batch."""
        int64_splits(row_splits_dtype)
        return self._batched(batch_size, drop_remainder, "ragged_batch", dense_ragged=True)

    def _batched(self, batch_size, drop_remainder, method: str, dense_ragged: bool):
        """``size`` elements at a time, each component stacked: a tensor, or a ragged tensor one ragged dimension
        more where its elements are ragged (or, ``dense_ragged``, may differ in shape: _batched_ragged_rank)."""
        size, drop = to_int(batch_size, "batch_size"), truth(drop_remainder)
        if size <= 0:
            raise TdfValueError(f"Dataset.{method}: batch_size must be positive, got {size}")
        ranks = []

        def stacked_parts(parts, j, count):
            if not ranks:
                ranks.extend(_batched_ragged_rank(s, dense_ragged) for s in flatten(self.element_spec()))
            if dense_ragged and len({p.shape for p in parts}) > 1 and not any(getattr(p, "is_ragged", False)
                                                                             for p in parts):
                # (a map's spec is its first element's here, where TensorFlow's trace may know no dimension: the
                # dimensions seen to differ are unknown, from this batch on)
                differ = max(a for a, sizes in enumerate(zip(*(p.shape for p in parts))) if len(set(sizes)) > 1)
                ranks[j] = max(differ, ranks[j] or 0)
            rank = ranks[j]
            if rank is None:
                odd = next((i for i, p in enumerate(parts) if p.shape != parts[0].shape), None)
                if odd is not None:         # (TensorFlow's error, as its iterator's next raises it)
                    def text(p):
                        return "[" + ",".join(map(str, p.shape)) + "]"
                    raise KernelValueError(op_message(self, "IteratorGetNext", (
                        f"Cannot batch tensors with different shapes in component {j}. First element had shape "
                        f"{text(parts[0])} and element {odd} had shape {text(parts[odd])}.")))
                return ops.stack(parts)
            if rank:
                parts = [p if getattr(p, "is_ragged", False) else from_tensor(p, ragged_rank=rank) for p in parts]
            return stacked(parts, 0)

        def spec():
            given, made = self.element_spec(), []
            for s in flatten(given):
                rank, shape = _batched_ragged_rank(s, dense_ragged), [size if drop else None, *s.shape]
                made.append(TensorSpec(shape, s.dtype) if rank is None else RaggedTensorSpec(shape, s.dtype, rank + 1))
            return pack_as(given, made)
        return Dataset(self.batches(size, drop, stacked_parts), values=self.items_are_values, spec=spec,
                       size=self.batch_count(size, drop))

    def batch_count(self, size: int, drop: bool):
        """The size of batch's dataset."""
        return lambda: self.count() // size if drop else -(-self.count() // size)

    def batches(self, size: int, drop: bool, combine):
        """The source of batch's and padded_batch's datasets: ``size`` elements at a time (the last fewer unless
        ``drop``), each component combined by ``combine(parts, index, components)``. A pass starts its input's
        when it is made, as TensorFlow's iterator does (a shuffle's order is drawn then)."""
        def grouped(it):
            while True:
                group = list(itertools.islice(it, size))
                if not group or (drop and len(group) < size):
                    return
                count = len(flatten(group[0]))
                yield pack_as(group[0], [combine([flatten(e)[j] for e in group], j, count) for j in range(count)])
        return lambda: grouped(iter(self.source()))

    def padded_batch(self, interp, batch_size, padded_shapes=None, padding_values=None, drop_remainder=False,
                     name=None):
        """batch, each component padded at the end of each axis to the batch's longest (or to ``padded_shapes``,
        its None or -1 entries the longest) with ``padding_values`` (zeros): one shape and one value for a
        dataset of one component, or a tuple of them."""
        size, drop = to_int(batch_size, "batch_size"), truth(drop_remainder)
        if size <= 0:
            raise TdfValueError(f"Dataset.padded_batch: batch_size must be positive, got {size}")

        def of_component(given, j: int, count: int):
            return given if count == 1 or given is None else list(given)[j]

        def padded(parts: list, j: int, count: int) -> Tensor:
            longest = [max(p.shape[a] for p in parts) for a in range(parts[0].ndim)]
            given = _padded_dims(of_component(padded_shapes, j, count))
            want = longest if given is None else [n if g is None else g for g, n in zip(given, longest)]
            fill = of_component(padding_values, j, count)
            rows = []
            for p in parts:
                if any(n > w for n, w in zip(p.shape, want)):
                    raise TdfValueError(f"Dataset.padded_batch: an element of shape {list(p.shape)} is larger than "
                                        f"the padded shape {want}")
                rows.append(ops.pad(p, [[0, w - n] for n, w in zip(p.shape, want)],
                                    constant_values=0 if fill is None else ops.to_tensor(fill).value.item()))
            return ops.stack(rows)

        def spec():
            """The padded shapes' known dimensions, else the input's: those its elements all have (a map's spec
            here is its first element's, where TensorFlow's traced function may know less)."""
            components = flatten(self.element_spec())
            sizes = [set() for _ in components]
            for element in self.source():
                for j, t in enumerate(flatten(element)):
                    sizes[j].add(t.shape)
            made = []
            for j, s in enumerate(components):
                given = of_component(padded_shapes, j, len(components))
                dims = _padded_dims(given) if given is not None else [
                    d if d is not None and all(shape[a] == d for shape in sizes[j]) else None
                    for a, d in enumerate(s.shape)]
                made.append(TensorSpec([size if drop else None, *dims], s.dtype))
            return pack_as(self.element_spec(), made)
        return Dataset(self.batches(size, drop, padded), values=self.items_are_values, spec=spec,
                       size=self.batch_count(size, drop))

    def map(self, interp, map_func, num_parallel_calls=None, deterministic=None, name=None):
        mapped = Dataset(lambda: (as_element(unpacked_call(interp, map_func, e)) for e in self.source()),
                         values=False, size=self.count)
        # (TensorFlow traces the function on the input's spec: a batch's unknown first dimension stays unknown)
        mapped.spec = lambda: mapped.first_spec(self._rows_known())
        mapped.kind = "_MapDataset" if num_parallel_calls is None else "_ParallelMapDataset"
        return mapped

    def filter(self, interp, predicate, name=None):
        return Dataset(lambda: (e for e in self.source() if predicate_holds(interp, predicate, e, "filter")), values=False,
                       spec=self._same_spec())

    def take(self, interp, count, name=None):
        n = to_int(count, "count")
        return Dataset(lambda: iter(self.source()) if n < 0 else itertools.islice(self.source(), n),
                       values=self.items_are_values, spec=self._same_spec(),
                       size=lambda: self.count() if n < 0 else n if self.infinite else min(n, self.count()))

    def skip(self, interp, count, name=None):
        n = to_int(count, "count")
        return Dataset(lambda: iter(()) if n < 0 else itertools.islice(self.source(), n, None),
                       values=self.items_are_values, spec=self._same_spec(),
                       size=lambda: 0 if n < 0 else max(self.count() - n, 0))

    def shard(self, interp, num_shards, index, name=None):
        """Every ``num_shards``-th element from ``index`` on (a worker's part of the data)."""
        n, first = to_int(num_shards, "num_shards"), to_int(index, "index")
        if n <= 0:      # (TensorFlow's InvalidArgumentError: a ShapeError)
            raise ShapeError(f"Number of shards must be greater than zero (currently num_shards = {n}).")
        if not 0 <= first < n:
            raise ShapeError(f"Index must be between 0 and {n - 1} (currently index = {first}).")
        return Dataset(lambda: itertools.islice(self.source(), first, None, n), values=self.items_are_values,
                       spec=self._same_spec())

    def repeat(self, interp, count=None, name=None):
        n = -1 if count is None else to_int(count, "count")

        def rounds(first):      # (TensorFlow's RepeatDataset makes its first round's iterator when it is made)
            for i in itertools.count() if n < 0 else range(n):
                empty = True
                for e in first if i == 0 else self.source():
                    empty = False
                    yield e
                if empty:
                    return
        return Dataset(lambda: rounds(iter(self.source()) if n else iter(())), values=self.items_are_values,
                       spec=self._same_spec(), size=None if n < 0 else lambda: self.count() * n)

    def enumerate(self, interp, start=0, name=None):
        first = to_int(start, "start")
        return Dataset(lambda: (PythonTuple([Tensor(np.array(first + i, dtype=np.int64)), e])      # (a tuple)
                                for i, e in enumerate(self.source())), values=self.items_are_values,
                       size=self.count,
                       spec=lambda: PythonTuple([TensorSpec([], DType("int64")), self.element_spec()]))

    def shuffle(self, interp, buffer_size, seed=None, reshuffle_each_iteration=None, name=None):
        """TensorFlow's buffered shuffle: a buffer of ``buffer_size`` elements is filled, then each element given
        is drawn uniformly from it and its place taken by the next one read. The draws are the run's generator's
        (seeded 0; ``seed=`` a generator of the dataset's own), as tf.random's are, not TensorFlow's stream: the
        order is another than TensorFlow's. Each iteration draws a new order unless
        ``reshuffle_each_iteration=False``."""
        size = to_int(buffer_size, "buffer_size")
        if size < 1:
            raise TdfValueError(f"Dataset.shuffle: buffer_size must be greater than zero, got {size}")
        if seed is not None and to_int(seed, "seed") < 0:
            raise TdfValueError(f"Dataset.shuffle: a seed must be a non-negative integer, got {to_int(seed, 'seed')}")
        again = reshuffle_each_iteration is None or truth(reshuffle_each_iteration)
        state = tensorflow_stream(seed)
        if state is not None:
            return self._tensorflow_shuffle(state.get_seed(None if seed is None else to_int(seed, "seed")), size,
                                            again)
        rng = interp.rng if seed is None else np.random.default_rng(to_int(seed, "seed"))
        fixed = None if again else int(rng.integers(2**63))      # (one order, the same on every iteration)

        def source():
            draw = rng if fixed is None else np.random.default_rng(fixed)
            elements = iter(self.source())
            buffer = list(itertools.islice(elements, size))
            while buffer:
                i = int(draw.integers(len(buffer)))
                out = buffer[i]
                following = next(elements, END)
                if following is END:
                    buffer[i] = buffer[-1]
                    buffer.pop()
                else:
                    buffer[i] = following
                yield out
        return Dataset(source, values=self.items_are_values, spec=self._same_spec(), size=self.count)

    def _tensorflow_shuffle(self, seeds: tuple, size: int, again: bool):
        """A TensorFlow program's seeded shuffle: TensorFlow's order (ShuffleDatasetV3 with the op's seeds, drawn
        when ``shuffle`` is called; each pass its own with ``again``), bit for bit, reading the input as the
        buffer fills (an endless generator's too)."""
        passes = [0]

        def source():
            if current().counting_datasets:         # (a length counted is no pass: TensorFlow knows it ahead)
                return tf_random.dataset_shuffle(self.source(), size, *seeds, passes[0], again)
            passes[0] += 1
            return tf_random.dataset_shuffle(self.source(), size, *seeds, passes[0] - 1, again)
        return Dataset(source, values=self.items_are_values, spec=self._same_spec(), size=self.count)

    def prefetch(self, interp, buffer_size=None, name=None):     # (the same elements: an in-memory pipeline)
        return Dataset(self.source, values=self.items_are_values, spec=self._same_spec(), size=self.count)

    def cache(self, interp, filename="", name=None):
        """TensorFlow's in-memory cache: the elements of the first pass that runs to its end are kept, and every
        later pass gives them (no pass of the input: a shuffle before it keeps that order); a pass left before
        its end keeps nothing."""
        if filename:
            raise TdfValueError("Dataset.cache: tapecli keeps datasets in memory: a file name is out of scope")
        kept: list = []

        def filling(elements):
            taken = []
            for e in elements:
                taken.append(e)
                yield e
            if not kept:
                kept.append(taken)

        def source():
            return iter(kept[0]) if kept else filling(iter(self.source()))
        return Dataset(source, values=self.items_are_values, spec=self._same_spec(), size=self.count)

    def concatenate(self, interp, dataset, name=None):
        if not isinstance(dataset, Dataset):
            raise TdfTypeError(f"Dataset.concatenate takes a dataset, got {type_word(dataset)}")
        return Dataset(lambda: itertools.chain(self.source(), dataset.source()),
                       values=self.items_are_values and dataset.items_are_values,
                       spec=lambda: _most_specific(self.element_spec(), dataset.element_spec()))

    def unbatch(self, interp, name=None):
        def source():
            for element in self.source():
                leaves = flatten(element)
                if any(t.ndim == 0 for t in leaves):
                    raise TdfValueError("Dataset.unbatch: the elements must have at least one dimension")
                rows = [ops.rows(t) for t in leaves]
                for i in range(len(rows[0])):
                    yield pack_as(element, [r[i] for r in rows])
        return Dataset(source, values=self.items_are_values,
                       spec=lambda: spec_map(self.element_spec(), lambda shape: shape[1:]))

    def flat_map(self, interp, map_func, name=None):
        def inner_of(element) -> Dataset:
            inner = unpacked_call(interp, map_func, element)
            if not isinstance(inner, Dataset):
                raise TdfTypeError(f"Dataset.flat_map: the function must return a dataset, got {type_word(inner)}")
            return inner

        def source():
            for element in self.source():
                yield from inner_of(element).source()

        def spec():
            """The static spec of the dataset the function returns (its first element's: TensorFlow's traced one's),
            not that of its first element (a batch of a window: (None,), where the first batch is full)."""
            with _ahead():
                first = next(iter(self.source()), None)
                return self.first_spec() if first is None else inner_of(first).element_spec()
        return Dataset(source, values=False, spec=spec)

    def take_while(self, interp, predicate, name=None):
        return Dataset(lambda: itertools.takewhile(lambda e: predicate_holds(interp, predicate, e, "take_while"),
                                                   self.source()), values=False, spec=self._same_spec())

    def apply(self, interp, transformation_func):
        made = interp.call_value(transformation_func, [self])
        if not isinstance(made, Dataset):
            raise TdfTypeError(f"Dataset.apply: the function must return a dataset, got {type_word(made)}")
        return made

    def reduce(self, interp, initial_state, reduce_func, name=None):
        """TensorFlow's reduce: ``reduce_func(state, element)`` over the elements (the element whole, a tuple
        as one argument), the state converted to tensors as TensorFlow converts it."""
        state = as_element(initial_state)
        for element in self.source():
            state = as_element(off_the_tape(lambda s=state, e=element: interp.call_value(reduce_func, [s, e]),
                                             "a tf.data function", None, []))
        return state

    def window(self, interp, size, shift=None, stride=1, drop_remainder=False, name=None):
        """TensorFlow's windows: each a structure of datasets (one per component) of ``size`` elements taken
        every ``stride``, the windows ``shift`` elements apart (``size`` without a shift)."""
        n = to_int(size, "size")
        step = n if shift is None else to_int(shift, "shift")
        gap, drop = to_int(stride, "stride"), truth(drop_remainder)
        if min(n, step, gap) <= 0:
            raise TdfValueError("Dataset.window: size, shift and stride must be positive")

        def window_of(elements):
            columns = [[flatten(e)[j] for e in elements] for j in range(len(flatten(elements[0])))]
            return pack_as(elements[0], [Dataset(lambda c=c: iter(c)) for c in columns])

        def source():
            it, buffer, ended, skip = iter(self.source()), [], False, 0
            last = (n - 1) * gap
            while True:
                while not ended and len(buffer) <= last:
                    following = next(it, END)
                    if following is END:
                        ended = True
                    elif skip:                  # (a shift past the window's elements)
                        skip -= 1
                    else:
                        buffer.append(following)
                elements = buffer[:last + 1:gap]
                if not elements or drop and len(elements) < n:
                    return
                yield window_of(elements)
                skip = max(0, step - len(buffer))
                del buffer[:step]
        return Dataset(source, values=False,
                       spec=lambda: pack_as(self.element_spec(), [DatasetSpec(s) for s in flatten(self.element_spec())]))

    def scan(self, interp, initial_state, scan_func, name=None):
        """TensorFlow's scan: ``scan_func(state, element)`` gives ``(new_state, output)``; the outputs are the
        elements, and the state keeps its dtypes (TensorFlow's TypeError otherwise)."""
        initial = as_element(initial_state)

        def source():
            state = initial
            for element in self.source():
                pair = off_the_tape(lambda s=state, e=element: interp.call_value(scan_func, [s, e]),
                                    "a tf.data function", None, [])
                if not isinstance(pair, list) or len(pair) != 2:
                    raise TdfTypeError("Invalid `scan_func`. `scan_func` should return a pair consisting of new "
                                       "state and the output value but its return type is "
                                       f"{spec_text(spec_of(as_element(pair)))}.")
                state, output = as_element(pair[0]), as_element(pair[1])
                if [t.dtype for t in flatten(state)] != [t.dtype for t in flatten(initial)]:
                    raise TdfTypeError("Invalid `scan_func`. The element types for the new state must match the "
                                       f"initial state. Expected {types_text(initial)}, got {types_text(state)}.")
                yield output
        scanned = Dataset(source, values=False)
        scanned.spec = lambda: scanned.first_spec(self._rows_known())
        return scanned

    def unique(self, interp, name=None):
        """The elements not seen before, in their order (one component of int32, int64 or strings)."""
        specs = flatten(self.element_spec())
        if len(specs) != 1:
            raise ShapeError("UniqueDataset only supports inputs with a single component.")
        if specs[0].dtype.name not in ("int32", "int64", "string"):
            raise TdfTypeError(f"`tf.data.Dataset.unique` does not support type <dtype: '{specs[0].dtype.name}'> "
                               "-- only `tf.int32`, `tf.int64`, and `tf.string` are supported.")

        def source():
            seen = set()
            for element in self.source():
                t = flatten(element)[0]
                key = (t.shape, tuple(t.value.reshape(-1).tolist()))
                if key not in seen:
                    seen.add(key)
                    yield element
        return Dataset(source, values=self.items_are_values, spec=self._same_spec())

    def group_by_window(self, interp, key_func, reduce_func, window_size=None, window_size_func=None, name=None):
        """TensorFlow's GroupByWindowDataset: each element joins its key's group (``key_func``, an int64); a
        group of its key's window size (``window_size``, or ``window_size_func(key)`` at the key's first element)
        becomes the dataset ``reduce_func(key, window)``, whose elements are given before the input is read on;
        at the input's end the groups left follow in the order of their keys."""
        if (window_size is None) == (window_size_func is None):
            raise TdfValueError("Either the `window_size` argument or the `window_size_func` argument must be "
                                "specified.")

        def size_of(key):
            if window_size is None:
                size = int64_of(interp, window_size_func, Tensor(np.array(key, np.int64)), "window_size_func")
            else:
                size = to_int(window_size, "window_size")
            if size <= 0:
                raise ShapeError(f"Window size must be greater than zero, but got {size}.")
            return size

        def reduced(key, group):
            window = Dataset(lambda: iter(group), spec=self._same_spec())
            made = off_the_tape(lambda: interp.call_value(reduce_func, [Tensor(np.array(key, np.int64)), window]),
                                "a tf.data function", None, [])
            if not isinstance(made, Dataset):
                raise TdfTypeError("Invalid `reduce_func`. `reduce_func` must return a single `tf.data.Dataset` "
                                   f"object but its return type is {type_word(made)}.")
            return made

        def source():
            groups, sizes = {}, {}
            for element in self.source():
                key = int64_of(interp, key_func, element, "key_func")
                if key not in sizes:
                    sizes[key] = size_of(key)
                group = groups.setdefault(key, [])
                group.append(element)
                if len(group) == sizes[key]:
                    yield from reduced(key, groups.pop(key)).source()
            for key in sorted(groups):          # (TensorFlow's groups are a std::map, ordered by key)
                yield from reduced(key, groups[key]).source()

        def spec():
            """reduce_func's dataset's spec, traced on a window of the first element (of none for an empty input),
            as TensorFlow traces it on a window's spec."""
            first = list(itertools.islice(self.source(), 1))
            key = int64_of(interp, key_func, first[0], "key_func") if first else 0
            return reduced(key, first).element_spec()
        return Dataset(source, values=False, spec=spec)

    def bucket_by_sequence_length(self, interp, element_length_func, bucket_boundaries, bucket_batch_sizes,
                                  padded_shapes=None, padding_values=None, pad_to_bucket_boundary=False,
                                  no_padding=False, drop_remainder=False, name=None):
        """TensorFlow's composition of group_by_window: each element's bucket is the one of
        ``bucket_boundaries`` its length (``element_length_func``, an int32) falls in, and each bucket's window
        of its ``bucket_batch_sizes`` entry is batched (``no_padding``) or padded_batch'ed, to ``padded_shapes``
        or the input's shapes, whose unknown dimensions are the batch's longest, or one less than the bucket's
        boundary where ``pad_to_bucket_boundary``. At the input's end the buckets left follow in their order."""
        boundaries, sizes = _ints(bucket_boundaries, "bucket_boundaries"), _ints(bucket_batch_sizes, "bucket_batch_sizes")
        if len(sizes) != len(boundaries) + 1:
            raise TdfValueError(f"`len(bucket_batch_sizes)` must equal `len(bucket_boundaries) + 1` but "
                                f"`len(bucket_batch_sizes)={len(sizes)}` and `len(bucket_boundaries)="
                                f"{len(boundaries)}`.")
        lows, highs = [np.iinfo(np.int32).min, *boundaries], [*boundaries, np.iinfo(np.int32).max]

        def bucket_of(element) -> int:
            length = ops.to_tensor(unpacked_call(interp, element_length_func, element))
            if not length.weak and length.dtype != np.int32:
                raise TdfTypeError(f"Input 'y' of 'LessEqual' Op has type {dtype_name(length.dtype)} that does not "
                                   "match type int32 of argument 'x'.")
            n = int(length.value)
            return next(i for i, (low, high) in enumerate(zip(lows, highs)) if low <= n < high)

        def batched(bucket: int, group: list, traced: bool = False):
            """The bucket's batch of ``group`` (``traced``: as TensorFlow's trace sees it, a bucket's boundary
            unknown)."""
            window = Dataset(lambda: iter(group), spec=self._same_spec())
            if truth(no_padding):
                return window.batch(interp, sizes[bucket], drop_remainder)
            filler = None
            if truth(pad_to_bucket_boundary) and not traced:
                if bucket == len(boundaries):
                    raise KernelValueError("When pad_to_bucket_boundary=True, elements must have length < "
                                           "max(bucket_boundaries).")
                filler = boundaries[bucket] - 1
            given = [s.shape for s in flatten(self.element_spec())] if padded_shapes is None else list(
                padded_shapes) if isinstance(padded_shapes, (tuple, PythonTuple)) else [padded_shapes]
            shapes = [[filler if d is None else d for d in _padded_dims(shape)] for shape in given]
            return window.padded_batch(interp, sizes[bucket], shapes[0] if len(shapes) == 1 else PythonTuple(shapes),
                                       padding_values, drop_remainder)

        def source():
            groups = {}
            for element in self.source():
                bucket = bucket_of(element)
                group = groups.setdefault(bucket, [])
                group.append(element)
                if len(group) == sizes[bucket]:
                    yield from batched(bucket, groups.pop(bucket)).source()
            for bucket in sorted(groups):
                yield from batched(bucket, groups[bucket]).source()
        # (the batch size, a tensor of the bucket's, is unknown to the trace)
        return Dataset(source, values=False, spec=lambda: spec_map(batched(0, [], traced=True).element_spec(),
                                                                   lambda shape: [None, *shape[1:]]))

    def as_numpy_iterator(self, interp):
        """The elements with NumPy's arrays (and NumPy scalars) in place of the tensors."""
        return NumpyIterator(pack_as(e, [NumpyArray(t.value) for t in flatten(e)]) for e in self.source())

    def cardinality(self, interp):
        """TensorFlow's: INFINITE (-1) after an endless repeat, UNKNOWN (-2) where it cannot count ahead, else
        the count."""
        known = -1 if self.infinite else -2 if self.unknown else self.count()
        return Tensor(np.array(known, dtype=np.int64))

    def length(self) -> int:
        """``len(dataset)``: its elements, counted by running it; TensorFlow's TypeError where it cannot count
        ahead."""
        if self.infinite or self.unknown:
            raise TdfTypeError("The dataset is infinite." if self.infinite else "The dataset length is unknown.")
        return self.count()


def _padded_dims(shape) -> list | None:
    """A padded shape's dimensions, None where unknown (None or -1: the batch's longest)."""
    if shape is None:
        return None
    dims = shape.value.tolist() if isinstance(shape, Tensor) else [
        None if g is None else to_int(g, "padded_shapes") for g in shape]
    return [None if d is None or d < 0 else d for d in dims]


def _ints(values, what: str) -> list[int]:
    """A list of Python ints (a literal list arrives as a tensor)."""
    if isinstance(values, Tensor):
        return [int(v) for v in np.asarray(values.value).reshape(-1)]
    return [to_int(v, what) for v in values]


def _most_specific(a, b):
    """concatenate's spec: each dimension the two datasets' specs agree on, None where they differ."""
    def merged(x: TensorSpec, y: TensorSpec) -> TensorSpec:
        if x.dtype.name != y.dtype.name or len(x.shape) != len(y.shape):
            raise TdfTypeError(f"Dataset.concatenate: incompatible element specs {x!r} and {y!r}")
        return TensorSpec([d if d == e else None for d, e in zip(x.shape, y.shape)], x.dtype)
    return pack_as(a, [merged(x, y) for x, y in zip(flatten(a), flatten(b))])


def _named(made, method: str):
    """A dataset a method made, with TensorFlow's class of it (a map's it names itself)."""
    if isinstance(made, Dataset) and method in _KINDS and made.kind == "_Dataset":
        made.kind = _KINDS[method]
    return made


# What makes a dataset whose size TensorFlow does not know ahead (cardinality UNKNOWN)
_UNKNOWN_SIZE = frozenset({"filter", "flat_map", "take_while", "unique", "group_by_window", "interleave"})
_OWN_SIZE = frozenset({"rejection_resample", "apply"})     # (made with what TensorFlow knows of its size: apply's, by
# the methods its function calls)


def _rows_known(dataset) -> bool:
    """Whether TensorFlow knows how many rows each element has (its spec's first dimensions: not after a batch
    that may end short), which its unbatch's size needs."""
    return all(getattr(spec, "shape", None) and spec.shape.known and spec.shape[0] is not None
               for spec in flatten(dataset.element_spec()))
# TensorFlow's dataset classes, by what made them
_KINDS = {"batch": "_BatchDataset", "ragged_batch": "_BatchDataset", "padded_batch": "_PaddedBatchDataset",
          "filter": "_FilterDataset", "take": "_TakeDataset", "skip": "_SkipDataset",
          "shard": "_ShardDataset", "repeat": "_RepeatDataset", "enumerate": "_ZipDataset", "shuffle": "_ShuffleDataset",
          "prefetch": "_PrefetchDataset", "cache": "CacheDataset", "concatenate": "_ConcatenateDataset",
          "unbatch": "_UnbatchDataset", "flat_map": "_FlatMapDataset", "take_while": "_TakeWhileDataset",
          "window": "_WindowDataset", "from_tensor_slices": "_TensorSliceDataset", "from_tensors": "_TensorDataset",
          "range": "_RangeDataset", "zip": "_ZipDataset", "from_generator": "_FlatMapDataset", "scan": "_ScanDataset",
          "unique": "_UniqueDataset", "group_by_window": "_GroupByWindowDataset"}
# the modules of TensorFlow's dataset classes not named after them (the others': _RangeDataset in range_op)
_OP_MODULES = {"_TensorSliceDataset": "from_tensor_slices_op", "_TensorDataset": "from_tensors_op",
               "_Dataset": "dataset_ops"}
_METHODS = {name: getattr(Dataset, name) for name in (
    "batch", "map", "filter", "take", "skip", "repeat", "enumerate", "shuffle", "prefetch", "cache",
    "concatenate", "as_numpy_iterator", "cardinality", "unbatch", "flat_map", "take_while", "apply", "reduce",
    "window", "shard", "padded_batch", "ragged_batch", "scan", "unique", "group_by_window",
    "bucket_by_sequence_length")}


def _unknown_size(made: Dataset) -> Dataset:
    made.unknown = True         # (a generator's elements are not counted ahead)
    return made


class _DatasetClass(ProgramObject):
    """``tf.data.Dataset``: its constructors."""

    kind_word = "tf.data.Dataset"

    def get_attribute(self, interp, attr, node):
        if attr in _CALLING:        # (given the run: from_generator calls the program's generator back)
            return BoundMethod(attr, lambda call_node, *a, **k: _unknown_size(_named(_CALLING[attr](interp, *a, **k),
                                                                                      attr)))
        made = _CONSTRUCTORS.get(attr)
        if made is None:
            raise TdfTypeError(f"tf.data.Dataset has no constructor {attr} in tapecli",
                               hint=f"tapecli's: {', '.join(sorted([*_CONSTRUCTORS, *_CALLING]))}")
        return BoundMethod(attr, lambda call_node, *a, **k: _named(made(*a, **k), attr))


def from_tensor_slices(tensors, name=None):
    structure = structure_of(tensors)
    leaves = flatten(structure)
    if any(t.ndim == 0 for t in leaves):
        raise TdfValueError("Dataset.from_tensor_slices: the components must have at least one dimension to slice")
    n = leaves[0].shape[0]
    if any(t.shape[0] != n for t in leaves):
        raise TdfValueError(f"Dataset.from_tensor_slices: the components' first dimensions differ: "
                            f"{[t.shape[0] for t in leaves]}")
    rows = [t.items() if getattr(t, "is_ragged", False) else ops.rows(t) for t in leaves]
    return Dataset(lambda: counted(pack_as(structure, [r[i] for r in rows]) for i in range(n)),
                   spec=lambda: pack_as(structure, [_row_spec(t) for t in leaves]), size=lambda: n)


def _batched_ragged_rank(spec, dense_ragged: bool) -> int | None:
    """The ragged rank of a component's elements as batch stacks them (None: dense, a tensor): a ragged spec's; for
    ragged_batch, a tensor spec with unknown dimensions' last unknown axis (TensorFlow's _DenseToRaggedDataset)."""
    if isinstance(spec, RaggedTensorSpec):
        return spec.ragged_rank
    if dense_ragged and isinstance(spec, TensorSpec) and spec.shape.known and None in list(spec.shape):
        return max(axis for axis, n in enumerate(spec.shape) if n is None)
    return None


def _row_spec(t) -> TensorSpec | RaggedTensorSpec:
    """The spec of a component's rows: a ragged tensor's are ragged by one dimension less (a tensor, at 0)."""
    dtype = DType(dtype_name(t.dtype))
    if getattr(t, "is_ragged", False):
        return RaggedTensorSpec(t.shape[1:], dtype, t.ragged_rank - 1)
    return TensorSpec(t.shape[1:], dtype)


def from_tensors(tensors, name=None):
    element = structure_of(tensors)
    return Dataset(lambda: counted([element]), spec=lambda: spec_of(element))


def range_(*args, output_type=None, name=None):
    bounds = [to_int(a, "a bound") for a in args]
    if not 1 <= len(bounds) <= 3:
        raise TdfTypeError(f"Dataset.range takes 1 to 3 positional arguments, got {len(bounds)}")
    dtype = np.dtype(np.int64) if output_type is None else to_dtype(output_type)
    return Dataset(lambda: counted(Tensor(np.array(i, dtype=dtype)) for i in range(*bounds)),
                   spec=lambda: TensorSpec([], DType(dtype_name(dtype))), size=lambda: len(range(*bounds)))


def zip_(*datasets, name=None):
    if len(datasets) == 1 and isinstance(datasets[0], (list, dict)):
        structure = datasets[0]
    else:
        structure = list(datasets)
    members = flatten(structure)
    if not all(isinstance(d, Dataset) for d in members):
        raise TdfTypeError("Dataset.zip takes datasets (or a tuple or dict of them)")
    finite = [d for d in members if not d.infinite]
    made = Dataset(lambda: (pack_as(structure, list(group)) for group in zip(*(d.source() for d in members))),
                   values=all(d.items_are_values for d in members),
                   spec=lambda: pack_as(structure, [d.element_spec() for d in members]),
                   size=lambda: min(d.count() for d in finite))
    # (TensorFlow's ZipDataset's cardinality: unknown where a member's is, else its finite members' least, else
    # infinite)
    made.unknown = any(d.unknown for d in members)
    made.infinite = not made.unknown and not finite
    return made


def from_generator(interp, generator, output_types=None, output_shapes=None, args=None, output_signature=None,
                   name=None):
    """``Dataset.from_generator(gen, output_signature=...)`` (or the older ``output_types`` and
    ``output_shapes``): each iteration calls ``gen(*args)`` again, each argument a NumPy value as TensorFlow
    passes it, and converts what it yields, component by component, to its TensorSpec's dtype (as TensorFlow's
    ``py_function`` does), checking the shapes."""
    if output_signature is None:
        output_signature = _older_signature(output_types, output_shapes)
    specs = flatten(output_signature)
    if not all(isinstance(s, TensorSpec) for s in specs):
        raise TdfTypeError("Dataset.from_generator: output_signature must be a structure of tf.TensorSpec")
    arguments = [] if args is None else [NumpyArray(np.asarray(component(a).value))
                                         for a in (ops.rows(args) if isinstance(args, Tensor) else args)]

    def source():
        for value in interp.call_value(generator, arguments):
            tick()
            yield _yielded(output_signature, value)
    return Dataset(source, values=False, spec=lambda: output_signature)


def _yielded(spec, value):
    """What a generator yielded, in its signature's structure, each component converted to its TensorSpec's
    dtype (a list of numbers or tensors where a spec is one tensor) and its shape checked."""
    if isinstance(spec, TensorSpec):
        array = np.asarray(component(value).value, dtype=spec.dtype.name)
        if not spec.shape.is_compatible_with(array.shape):
            raise TdfValueError(f"`generator` yielded an element of shape {array.shape} where an element of "
                                f"shape {spec.shape} was expected.")
        return Tensor(array)
    if isinstance(spec, dict):
        if not isinstance(value, dict) or set(value) != set(spec):
            raise TdfTypeError("Dataset.from_generator: `generator` yielded an element that did not match the "
                               "expected structure (a dict of the signature's keys)")
        return {k: _yielded(s, value[k]) for k, s in spec.items()}
    items = list(value) if isinstance(value, (list, tuple)) else ops.rows(value) if isinstance(value, Tensor) \
        and value.ndim else None
    if items is None or len(items) != len(spec):
        raise TdfTypeError(f"Dataset.from_generator: `generator` yielded an element that did not match the "
                           f"expected structure of {len(spec)} components")
    return spec.__class__(_yielded(s, v) for s, v in zip(spec, items))


def _older_signature(output_types, output_shapes):
    """The TensorSpecs of ``from_generator``'s ``output_types`` and ``output_shapes`` (unknown shapes where
    none are given), in output_types' structure."""
    if output_types is None:
        raise TdfTypeError("Dataset.from_generator: give output_signature (or output_types, with output_shapes)")

    def spec(types, shapes):
        if isinstance(types, dict):
            return {k: spec(v, None if shapes is None else shapes[k]) for k, v in types.items()}
        if isinstance(types, (list, tuple)):
            if shapes is not None and (not isinstance(shapes, (list, tuple)) or len(shapes) != len(types)):
                raise TdfValueError("Dataset.from_generator: output_shapes must have the structure of output_types")
            return types.__class__(spec(t, None if shapes is None else shapes[i]) for i, t in enumerate(types))
        return TensorSpec(None if shapes is None else static_shape(shapes), types)
    return spec(output_types, output_shapes)


class _Experimental(ProgramObject):
    """``tf.data.experimental.scan``, ``unique``, ``group_by_window``, ``rejection_resample``: called, a
    transformation for ``Dataset.apply`` that calls the dataset's method of that name with the same arguments."""

    kind_word = "a function"

    def __init__(self, method: str):
        self.method = method

    def call(self, interp, args, kwargs, node):
        return _Transformation(self.method, args, kwargs)


class _Transformation(ProgramObject):
    kind_word = "a tf.data transformation"

    def __init__(self, method: str, args, kwargs):
        self.method, self.args, self.kwargs = method, args, kwargs

    def call(self, interp, args, kwargs, node):
        if len(args) != 1 or kwargs or not isinstance(args[0], Dataset):
            raise TdfTypeError(f"tf.data.experimental.{self.method}(...) takes one dataset (Dataset.apply's)")
        return args[0].get_attribute(interp, self.method, node).fn(node, *self.args, **self.kwargs)


for _method in ("scan", "unique", "group_by_window", "rejection_resample"):
    register(f"data.experimental.{_method}", _Experimental(_method))


class _AssertCardinality(ProgramObject):
    """``tf.data.experimental.assert_cardinality(expected_cardinality)``: a transformation for ``Dataset.apply``,
    the dataset of that cardinality (INFINITE_CARDINALITY, -1, for an endless one), whose pass fails as TensorFlow's
    does where it gives fewer elements or more."""

    kind_word = "a function"

    def call(self, interp, args, kwargs, node):
        given = [*args, *kwargs.values()]
        if len(given) != 1 or kwargs.keys() - {"expected_cardinality"}:
            raise TdfTypeError("assert_cardinality() takes one argument, expected_cardinality")
        return _Asserted(to_int(given[0], "expected_cardinality"))


class _Asserted(ProgramObject):
    kind_word = "a tf.data transformation"

    def __init__(self, expected: int):
        self.expected = expected

    def call(self, interp, args, kwargs, node):
        if len(args) != 1 or kwargs or not isinstance(args[0], Dataset):
            raise TdfTypeError("tf.data.experimental.assert_cardinality(...) takes one dataset (Dataset.apply's)")
        dataset, n = args[0], self.expected

        def checked():
            given = 0
            for element in dataset.source():
                given += 1
                if 0 <= n < given:
                    raise _mismatch(dataset, n, f"at least {given}")
                yield element
            if given < n:
                raise _mismatch(dataset, n, f"only {given}")
        made = Dataset(checked, values=dataset.items_are_values, spec=dataset._same_spec(), size=lambda: n)
        made.infinite = n == -1
        return made


register("data.experimental.assert_cardinality", _AssertCardinality())


def _mismatch(dataset, expected: int, given: str) -> KernelPreconditionError:
    """TensorFlow's FailedPreconditionError of the iterator's next element, as eager execution words it."""
    return KernelPreconditionError(op_message(dataset, "IteratorGetNext", f"Input dataset was expected to contain "
                                                                          f"{expected} elements but contained {given} elements."))
_CONSTRUCTORS = {"from_tensor_slices": from_tensor_slices, "from_tensors": from_tensors, "range": range_,
                 "zip": zip_}
_CALLING = {"from_generator": from_generator}
from tapecli.library import data_resampling, data_sources  # noqa: E402  (datasets built on Dataset above)
data_sources.install(Dataset, _METHODS, _CONSTRUCTORS, _CALLING)
_METHODS["rejection_resample"] = data_resampling.rejection_resample
register("Dataset", _DatasetClass())
# tf.data's constants, Python ints as TensorFlow's are: AUTOTUNE asks for a tuned number of parallel calls or
# buffered elements, which change nothing in an in-memory pipeline here
register("AUTOTUNE", Tensor(np.array(-1), weak=True))
register("INFINITE_CARDINALITY", Tensor(np.array(-1), weak=True))
register("UNKNOWN_CARDINALITY", Tensor(np.array(-2), weak=True))


@builtin("iter", interp=True)
def iter_(interp, iterable):
    if isinstance(iterable, PythonIterator):
        return iterable
    if isinstance(iterable, ProgramObject) and hasattr(iterable, "iterator"):    # (a dataset's: TensorFlow's object)
        return iterable.iterator()
    return PythonIterator(iter(interp.loop_items(iterable)))


@builtin("next")
def next_(iterator, default=None):
    if not isinstance(iterator, PythonIterator):
        raise TdfTypeError(f"next() takes an iterator (iter(x)), got {type_word(iterator)}")
    try:
        return next(iterator.it)
    except StopIteration:
        if default is None:
            raise TdfValueError("next(): the iterator is exhausted (StopIteration)") from None
        return default
