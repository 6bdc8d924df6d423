"""tf.data's datasets that draw from several datasets: Dataset.interleave (InterleaveDataset's cycle of open
iterators), Dataset.choose_from_datasets (a selector dataset's choices), Dataset.sample_from_datasets (weighted
random choices, TensorFlow's: a stateless multinomial draw seeded by each pair of a random dataset's values),
Dataset.random and Dataset.counter; and Dataset.get_single_element, the one element of a dataset.
library/data.py installs them in Dataset's methods and constructors (``install``), giving its Dataset class:
this module cannot import it, data.py importing this one."""
from __future__ import annotations

import itertools
import os

import numpy as np

from tapecli import ops
from tapecli.errors import KernelValueError, TdfTypeError, TdfValueError
from tapecli.interpreter.conversions import to_int, truth
from tapecli.interpreter.objects import ProgramObject
from tapecli.interpreter.registry import register
from tapecli.library.control import flatten
from tapecli.library.core import _rng, to_dtype
from tapecli.library.data_elements import unpacked_call
from tapecli.library.data_iterators import op_message
from tapecli.runtime.specs import TensorSpec
from tapecli.runtime.values import DType, Tensor, dtype_name


def interleave(self, interp, map_func, cycle_length=None, block_length=None, num_parallel_calls=None,
               deterministic=None, name=None):
    """InterleaveDataset: ``cycle_length`` datasets of map_func's open at once, ``block_length`` elements taken
    from each in turn; an exhausted one gives its slot to the next input element's dataset. cycle_length's
    default (AUTOTUNE) is the machine's CPU count, as TensorFlow's."""
    cycle = (os.cpu_count() or 1) if cycle_length is None or to_int(cycle_length, "cycle_length") == -1 \
        else to_int(cycle_length, "cycle_length")
    block = 1 if block_length is None else to_int(block_length, "block_length")
    if cycle <= 0 or block <= 0:
        raise TdfValueError("Dataset.interleave: cycle_length and block_length must be positive")

    def source():
        inputs, slots = self.source(), [None] * cycle
        index = taken = opened = 0
        ended = False
        while not ended or opened:
            if slots[index] is not None:
                value = next(slots[index], None)
                if value is not None:
                    yield value
                    taken += 1
                    if taken == block:
                        taken, index = 0, (index + 1) % cycle
                    continue
                slots[index], opened, taken, index = None, opened - 1, 0, (index + 1) % cycle
            elif not ended:
                element = next(inputs, None)
                if element is None:
                    ended = True
                    continue
                inner = unpacked_call(interp, map_func, element)
                if not isinstance(inner, Dataset):
                    raise TdfTypeError(f"Dataset.interleave: the function must return a dataset, got "
                                       f"{type(inner).__name__}")
                slots[index], opened = iter(inner.source()), opened + 1
            else:
                taken, index = 0, (index + 1) % cycle
    return Dataset(source, values=False)


def choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset=True):
    """Each choice (an int64 scalar) takes the next element of that dataset; an exhausted one ends the dataset
    (stop_on_empty_dataset) or is passed over."""
    members = _datasets(datasets, "choose_from_datasets")
    stop = truth(stop_on_empty_dataset)

    def source():
        its = [iter(d.source()) for d in members]
        for choice in choice_dataset.source():
            c = _choice(choice, len(members))
            value = next(its[c], None)
            if value is not None:
                yield value
            elif stop:
                return
    return _unknown(Dataset(source, values=False, spec=members[0].element_spec))


def sample_from_datasets(interp, datasets, weights=None, seed=None, stop_on_empty_dataset=False,
                         rerandomize_each_iteration=None):
    """TensorFlow's: each element from the dataset that StatelessMultinomial draws from log(weights) (uniform
    without weights; a dataset of weights: each of its elements in turn), seeded by the next pair of
    ``Dataset.random(seed)``'s values; a dataset of weight 0 in a list is left out first. An exhausted dataset
    ends it with stop_on_empty_dataset, else its draws are passed over (DirectedInterleave) until every dataset is
    exhausted."""
    members = _datasets(datasets, "sample_from_datasets")
    if isinstance(weights, Dataset):
        return _sampled(interp, members, lambda: (_logits(w) for w in weights.source()), seed,
                        rerandomize_each_iteration, stop_on_empty_dataset)
    if weights is None:
        logits = Tensor(np.ones((1, len(members)), np.float32))
    else:
        given = ops.to_tensor(weights)
        if given.ndim != 1 or given.shape[0] != len(members):
            raise TdfValueError(f"Invalid `weights`. `weights` should have the same length as `datasets` but got "
                                f"`len(weights)={given.size}` vs. `len(datasets)={len(members)}`.")
        if not isinstance(weights, Tensor) or weights.weak:       # (a list's zero weights leave their datasets out)
            kept = [i for i, w in enumerate(given.value) if w > 0]
            if not kept:                # (TensorFlow's: the first dataset's take(0))
                return Dataset(lambda: iter(()), values=False, spec=members[0].element_spec)
            members = [members[i] for i in kept]
            given = ops.gather(given, Tensor(np.array(kept, np.int64)))
        given = ops.materialize(given) if given.weak else given
        if given.dtype not in (np.float32, np.float64):
            raise TdfTypeError(f"Invalid `weights`. `weights` type must be either `tf.float32` or `tf.float64` but "
                               f"is {dtype_name(given.dtype)}.")
        logits = ops.reshape(ops.log(given), (1, len(members)))
    if len(members) == 1:
        return members[0]
    return _sampled(interp, members, lambda: itertools.repeat(logits), seed, rerandomize_each_iteration,
                    stop_on_empty_dataset)


def _logits(weights) -> Tensor:
    """An element of a dataset of weights as TensorFlow's ``lambda *p: math_ops.log(p)`` takes it: its components
    packed into one tensor, which must be a matrix of one row of logits."""
    packed = _packed(list(weights) if isinstance(weights, list) else [weights])
    if packed.ndim != 2:
        raise TdfValueError(f"sample_from_datasets: logits should be a matrix, got shape {list(packed.shape)} (a "
                            f"dataset of weights gives a vector of weights per element)")
    return ops.log(packed)


def _packed(value) -> Tensor:
    return ops.stack([_packed(v) for v in value]) if isinstance(value, list) else ops.to_tensor(value)


def _sampled(interp, members: list, logits_of, seed, rerandomize_each_iteration, stop_on_empty_dataset):
    """The elements of the datasets drawn by the logits that ``logits_of()`` gives (one for each draw)."""
    from tapecli.library.tf_random import stateless_categorical
    seeds = random(interp, seed, rerandomize_each_iteration)
    stop = truth(stop_on_empty_dataset)

    def source():
        # (TensorFlow's DirectedInterleave makes its iterators when it is made: the selector's, then the datasets')
        logits, pairs = iter(logits_of()), iter(seeds.source())
        return drawn(logits, pairs, [iter(d.source()) for d in members])

    def drawn(all_logits, pairs, its):
        live = len(its)
        for logits in all_logits:
            first = next(pairs)
            pair = Tensor(np.array([first.value, next(pairs).value], np.int64))
            c = int(stateless_categorical(logits, 1, pair).value[0, 0])
            if its[c] is None:
                continue
            value = next(its[c], None)
            if value is not None:
                yield value
            elif stop:
                return
            else:
                its[c], live = None, live - 1
                if not live:
                    return
    made = Dataset(source, values=False, spec=members[0].element_spec)
    made.infinite = any(d.infinite for d in members)   # (DirectedInterleave's size: endless with an endless input)
    made.unknown = not made.infinite
    return made


def random(interp, seed=None, rerandomize_each_iteration=None, name=None):
    """tf.data.Dataset.random: RandomDataset's int64 values, each a uint32 of a SingleSampleAdapter over
    PhiloxRandom(seed, seed2) (random_seed.get_seed's pair), the same stream at each iteration; without a global
    or an op seed, seeds of the run's generator (TensorFlow's differ on every run)."""
    from tapecli.kernels.tf_random import philox_at, stateful_key_counter
    from tapecli.library.draws import tensorflow_stream
    if rerandomize_each_iteration is not None and truth(rerandomize_each_iteration):
        raise TdfValueError("Dataset.random(rerandomize_each_iteration=True) is not supported by tapecli")
    op_seed = None if seed is None else to_int(seed, "seed")
    state = tensorflow_stream(op_seed)
    if state is None:
        pair = tuple(int(s) for s in _rng(interp, None).integers(1, 2**31, size=2))
    else:
        pair = state.get_seed(op_seed)
    key, counter = stateful_key_counter(*pair)

    def source():
        for block in itertools.count(0, 64):
            for word in philox_at(key, counter, np.arange(block, block + 64, dtype=np.uint64)).reshape(-1):
                yield Tensor(np.array(int(word), np.int64))
    made = Dataset(source, values=False, spec=lambda: TensorSpec([], DType("int64")))
    made.infinite = True
    return made


def counter(start=0, step=1, dtype=None, name=None):
    """start, start + step, ... without end (cardinality INFINITE)."""
    want = np.dtype(np.int64) if dtype is None else to_dtype(dtype)
    first, by = to_int(start, "start"), to_int(step, "step")
    made = Dataset(lambda: (Tensor(np.array(first + by * i, want)) for i in itertools.count()),
                   spec=lambda: TensorSpec([], DType(dtype_name(want))))
    made.infinite = True
    return made


def get_single_element(self, interp=None, name=None):
    """The dataset's one element (DatasetToSingleElement: two are taken, to tell that there is no second)."""
    elements = list(itertools.islice(self.source(), 2))
    if len(elements) != 1:
        raise KernelValueError(op_message(self, "DatasetToSingleElement", "Dataset was empty." if not elements
                                          else "Dataset had more than one element."))
    return elements[0]


class _GetSingleElement(ProgramObject):
    """``tf.data.experimental.get_single_element(dataset)``: the dataset's get_single_element (deprecated for it)."""

    kind_word = "a function"

    def call(self, interp, args, kwargs, node):
        given = [*args, *kwargs.values()]
        if len(given) != 1 or kwargs.keys() - {"dataset"} or not isinstance(given[0], Dataset):
            raise TdfTypeError("tf.data.experimental.get_single_element() takes one tf.data.Dataset")
        return get_single_element(given[0])


register("data.experimental.get_single_element", _GetSingleElement())


def _datasets(datasets, what) -> list:
    members = flatten(datasets)
    if not members or not all(isinstance(d, Dataset) for d in members):
        raise TdfTypeError(f"Dataset.{what} takes a non-empty list of datasets")
    return members


def _choice(choice, n: int) -> int:
    t = ops.to_tensor(choice)
    if t.ndim or t.dtype != np.int64:
        raise TdfTypeError("Dataset.choose_from_datasets: choice_dataset must be a dataset of scalar tf.int64")
    c = int(t.value)
    if not 0 <= c < n:
        raise KernelValueError(f"Selector index out of range: {c} >= {n}")
    return c


def _unknown(made: Dataset) -> Dataset:
    made.unknown = True         # (how many elements the choices take is not known ahead)
    return made


Dataset = None          # library/data.py's class, given by install


def install(dataset_class, methods: dict, constructors: dict, calling: dict) -> None:
    """Add these to data.py's tables: its Dataset's methods, the constructors, those given the run."""
    global Dataset
    Dataset = dataset_class
    methods["interleave"] = interleave
    methods["get_single_element"] = get_single_element
    constructors.update(choose_from_datasets=choose_from_datasets, counter=counter)
    calling.update(sample_from_datasets=sample_from_datasets, random=random)
