"""The epochs of fit, evaluate and predict as Keras 3's EpochIterator (keras/src/trainers/epoch_iterator.py) takes
them from its data, and a program's ``keras.utils.PyDataset`` subclass or Python generator as that data.

An epoch takes ``steps_per_epoch`` batches (else all): with it, the batches go on from where the last epoch left
them, a new pass starting once every batch was taken (one that runs out first warns, as Keras's does). A
PyDataset's batches are ``dataset[i]`` for ``i < len(dataset)`` (with fit's ``shuffle``, in an order Python's
``random.shuffle`` draws from the run's Python random, when a pass takes its first batch), as Keras's
PyDatasetAdapter gives them through TensorFlow's ``from_generator`` and ``prefetch``: the first two read before
anything else (the dataset's element spec), then each one read as the batch before it is taken, and its
``on_epoch_begin`` and ``on_epoch_end`` called around each epoch (fit and evaluate end one first, as their
iterator's reset does)."""
from __future__ import annotations

import itertools

import numpy as np

from tapecli.errors import TdfValueError
from tapecli.interpreter.objects import BoundMethod, Property
from tapecli.library.keras.common import integer
from tapecli.runtime.context import current
from tapecli.runtime.limits import tick
from tapecli.runtime.tape import type_word
from tapecli.runtime.values import PythonTuple, Tensor

# Keras's data_adapter_utils.NUM_BATCHES_FOR_TENSOR_SPEC: the batches read for the dataset's element spec
_SPEC_BATCHES = 2
_OPTIONS = {"workers": 1, "use_multiprocessing": False, "max_queue_size": 10}


def py_dataset_attribute(interp, instance, attr):
    """What a program's PyDataset subclass inherits: ``__init__(workers=1, use_multiprocessing=False,
    max_queue_size=10)`` (kept, changing nothing: the batches come in order either way), those options,
    ``on_epoch_begin`` and ``on_epoch_end`` that do nothing, ``num_batches`` (its ``len``)."""
    if attr == "super().__init__":
        def init(node, workers=1, use_multiprocessing=False, max_queue_size=10):
            instance.py_dataset_options = {"workers": workers, "use_multiprocessing": use_multiprocessing,
                                           "max_queue_size": max_queue_size}
        return BoundMethod(attr, init)
    if attr in _OPTIONS:
        return _options(instance)[attr]
    if attr in ("on_epoch_begin", "on_epoch_end"):
        return BoundMethod(attr, lambda node: None)
    if attr == "num_batches":
        return _call(interp, instance, "__len__")
    return None


def _options(instance) -> dict:
    """The options its ``super().__init__`` kept, else Keras's defaults (with Keras's warning)."""
    found = getattr(instance, "py_dataset_options", None)
    if found is None:
        super_not_called()
        found = instance.py_dataset_options = dict(_OPTIONS)
    return found


def super_not_called() -> None:
    """Keras's warning of a PyDataset whose ``__init__`` did not call ``super().__init__(**kwargs)``."""
    current().settings.warn("Your `PyDataset` class should call `super().__init__(**kwargs)` in its "
                            "constructor. `**kwargs` can include `workers`, `use_multiprocessing`, "
                            "`max_queue_size`. Do not pass these arguments to `fit()`, as they will be ignored.")


def check_data_cardinality(x, y, sample_weight=None) -> None:
    """Keras's data_adapter_utils.check_data_cardinality: the arrays of fit's and evaluate's ``x``, ``y`` (and
    ``sample_weight``) must have the same number of samples (its ValueError and message where they do not)."""
    if y is None:
        return
    parts = [("x", x), ("y", y)] + ([("sample_weight", sample_weight)] if sample_weight is not None else [])

    def leaves(value) -> list:
        if isinstance(value, (list, tuple)):
            return [t for v in value for t in leaves(v)]
        if isinstance(value, dict):
            return [t for k in sorted(value, key=str) for t in leaves(value[k])]
        return [] if value is None else [value]
    sizes = {label: [int(t.shape[0]) for t in leaves(value) if getattr(t, "shape", ())] for label, value in parts}
    if len({n for found in sizes.values() for n in found}) > 1:
        raise TdfValueError("Data cardinality is ambiguous. Make sure all arrays contain the same number of samples."
                            + "".join(f"'{label}' sizes: {', '.join(map(str, found))}\n"
                                      for label, found in sizes.items()))


def _call(interp, instance, name, *args):
    return interp.call_value(instance.get_attribute(interp, name, None), list(args))


class PyDatasetData:
    """A program's PyDataset as PyDatasetSource reads it: its ``num_batches``, its batch ``i`` (the library's
    values), its ``on_epoch_begin`` and ``on_epoch_end`` (the interpreter's instance: InterpretedPyDataset; one
    CPython runs: execution/keras_bases.py)."""

    def batch_count(self):
        raise NotImplementedError

    def item(self, i: int):
        raise NotImplementedError

    def hook(self, name: str) -> None:
        raise NotImplementedError


class InterpretedPyDataset(PyDatasetData):
    """A PyDataset subclass's instance that the interpreter runs."""

    def __init__(self, interp, instance):
        self.interp, self.instance = interp, instance
        _options(instance)

    def batch_count(self):
        found, _ = self.instance.cls.find("num_batches")
        return self.instance.get_attribute(self.interp, "num_batches", None) if isinstance(found, Property) \
            else _call(self.interp, self.instance, "__len__")

    def item(self, i: int):
        return _call(self.interp, self.instance, "__getitem__", Tensor(np.array(i, dtype=np.int64), weak=True))

    def hook(self, name: str) -> None:
        _call(self.interp, self.instance, name)


class PyDatasetSource:
    """A program's PyDataset (a PyDatasetData) as fit, evaluate and predict read it (Keras's PyDatasetAdapter);
    ``weigh`` makes the sample weights of a batch's targets (fit's ``class_weight``), or is None."""

    def __init__(self, dataset: PyDatasetData, shuffle=False, weigh=None):
        self.dataset, self.shuffle, self.weigh = dataset, shuffle, weigh
        self.num_batches = integer(dataset.batch_count(), "the PyDataset's length")
        if self.num_batches <= 0:
            raise TdfValueError("The PyDataset has length 0")
        for i in range(min(_SPEC_BATCHES, self.num_batches)):     # (the element spec's batches)
            self.batch(i)

    def batch(self, i: int) -> list:
        """``dataset[i]`` as Keras's _standardize_batch takes it: ``(x,)``, ``(x, y)`` or ``(x, y, sample_weight)``
        (an array alone is ``(x,)``), ``weigh``'s sample weights added to ``(x, y)``."""
        got = self.dataset.item(i)
        if isinstance(got, Tensor):
            got = [got]
        if not isinstance(got, (list, tuple)) or not 1 <= len(got) <= 3:
            raise TdfValueError("PyDataset.__getitem__() must return a tuple or a dict. If a tuple, it must be ordered "
                                "either (input,) or (inputs, targets) or (inputs, targets, sample_weights).")
        parts = list(got) + [None] * (3 - len(got))
        if self.weigh is not None and len(got) == 3:
            raise TdfValueError("You cannot specify `class_weight` and `sample_weight` at the same time.")
        if self.weigh is not None and len(got) == 2:
            parts[2] = self.weigh(parts[1])
        return parts

    def passes(self):
        """One pass over the batches (Keras's _finite_generator), each read as the one before it is taken (the
        dataset's prefetch); each a step of the run (limits.tick)."""
        order = list(range(self.num_batches))
        if self.shuffle:
            current().python_random().shuffle(order)
        ahead = self.batch(order[0])
        for k in range(len(order)):
            tick()
            taken, ahead = ahead, (self.batch(order[k + 1]) if k + 1 < len(order) else None)
            yield taken

    def on_epoch_begin(self) -> None:
        self.dataset.hook("on_epoch_begin")

    def on_epoch_end(self) -> None:
        self.dataset.hook("on_epoch_end")


class GeneratorData:
    """A program's Python generator as the library takes it (its view: execution/tf_values.py): ``next_item()``
    gives its next value as the library's, StopIteration at its end; iterated, its values (Dataset.from_generator's)."""

    kind_word = "generator"

    def next_item(self):
        raise NotImplementedError

    def __iter__(self):
        while True:
            try:
                yield self.next_item()
            except StopIteration:
                return


class GeneratorSource:
    """A program's generator as fit, evaluate and predict read it (Keras's GeneratorDataAdapter): its first two
    values read at once (the element spec's), each a tuple ``(x,)``, ``(x, y)`` or ``(x, y, sample_weight)``; every
    pass gives those two again, then what the generator yields next (Keras's peek_and_restore), its number of
    batches not known."""

    num_batches = None

    def __init__(self, generator: GeneratorData):
        self.generator = generator
        self.first = list(itertools.islice(generator, _SPEC_BATCHES))
        if not self.first:
            raise TdfValueError("When passing a Python generator to a Keras model, the generator must yield at least "
                                "one batch. Received an empty generator.")
        _batch_of(self.first[0])

    def passes(self):
        """One pass: the first values again, then the generator's next ones, each a step of the run."""
        for item in itertools.chain(self.first, self.generator):
            tick()
            yield _batch_of(item)

    def on_epoch_begin(self) -> None:       # (Keras's DataAdapter's: nothing for a generator)
        pass

    def on_epoch_end(self) -> None:
        pass


def _batch_of(item) -> list:
    """A generator's value as a batch ``[x, y, sample_weight]`` (None for those it does not give)."""
    if type(item) is not PythonTuple or not 1 <= len(item) <= 3:
        raise TdfValueError("When passing a Python generator to a Keras model, the generator must return a tuple, "
                            "either (input,) or (inputs, targets) or (inputs, targets, sample_weights). Received: "
                            f"{type_word(item)}")
    return list(item) + [None] * (3 - len(item))


class EpochIterator:
    """Keras's EpochIterator over ``passes`` (each call a new pass over the data) of ``num_batches`` batches (None:
    not known, a dataset's, with ``steps_per_epoch``), ``steps_per_epoch`` a time (None: a pass), calling a
    PyDataset's epoch hooks (``hooks``)."""

    def __init__(self, passes, num_batches: int | None, steps_per_epoch=None, hooks=None):
        self.passes, self.num_batches, self.hooks = passes, num_batches, hooks
        self.steps = None if steps_per_epoch is None else integer(steps_per_epoch, "steps_per_epoch")
        self.current, self.seen = None, 0

    @property
    def count(self) -> int | None:
        """Keras's num_batches of an epoch: ``steps_per_epoch`` where given, else the data's."""
        return self.steps or self.num_batches

    def reset(self) -> None:
        self.current, self.seen = None, 0
        if self.hooks is not None:
            self.hooks.on_epoch_end()

    def epoch(self):
        """One epoch's batches."""
        if self.hooks is not None:
            self.hooks.on_epoch_begin()
        if self.current is None or self.steps is None:
            self.current, self.seen = self.passes(), 0
        for _ in itertools.count() if self.count is None else range(self.count):   # (data of unknown length: to its end)
            if self.num_batches is not None and self.seen >= self.num_batches:
                if self.steps:
                    _ran_out()
                break
            self.seen += 1
            taken = next(self.current, None)
            if taken is None:       # (data of unknown length ran out: Keras's catch_stop_iteration counts it so)
                self.num_batches, self.current = self.seen, None
                _ran_out()
                break
            yield taken
        if self.num_batches is not None and self.seen >= self.num_batches:
            self.current, self.seen = self.passes(), 0
        if self.hooks is not None:
            self.hooks.on_epoch_end()


def _ran_out() -> None:
    current().settings.warn("Your input ran out of data; interrupting training. Make sure that your dataset or "
                            "generator can generate at least `steps_per_epoch * epochs` batches. You may need to use "
                            "the `.repeat()` function when building your dataset.")
