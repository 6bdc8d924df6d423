"""tf.data's Dataset.rejection_resample (and tf.data.experimental.rejection_resample's transformation), as
TensorFlow 2.21 composes it of datasets (dataset_ops.py): each element paired with its class (``class_func``'s),
drawn either from the original dataset or from a filtered one, which accepts an element of class i with
probability a_i = (r_i - m) / (max r - m), r = target / (initial + tiny), m = min r, by a RandomUniform op of
its filter function (its kernel's Philox stream, seeded as TensorFlow seeds the op: kernels/tf_random.py). Which
of the two gives the next element is sample_from_datasets' draw from the weights (m, 1 - m); where the initial
distribution is given and m is 1 (or 0), the original (or the filtered) dataset alone. Without it, the initial
distribution is estimated from the classes seen, 32 at a time, each counted from 10."""
from __future__ import annotations

import itertools

import numpy as np

from tapecli import ops
from tapecli.errors import TdfValueError
from tapecli.interpreter.conversions import to_int
from tapecli.kernels.tf_random import philox_fill
from tapecli.library.core import _rng
from tapecli.library.data_elements import component, in_function, unpacked_call
from tapecli.library.data_sources import sample_from_datasets
from tapecli.library.draws import tensorflow_stream, tf_random_state
from tapecli.runtime.context import current
from tapecli.runtime.values import PythonTuple, Tensor

_ESTIMATION_BATCH = 32      # _estimate_initial_dist_ds's dist_estimation_batch_size
_SMOOTHING = 10             # and its smoothing_constant: each class's count starts there


def rejection_resample(self, interp, class_func, target_dist, initial_dist=None, seed=None, name=None):
    """TensorFlow's Dataset.rejection_resample: a dataset of (class, element) pairs."""
    target = _distribution(target_dist)
    if initial_dist is None:
        initial, static = None, None
    else:
        initial = _distribution(initial_dist)
        with np.errstate(divide="ignore", invalid="ignore"):
            static = np.min(target / initial)       # (_get_prob_original_static: no tiny added)

    def initials():
        """The initial distribution at each element: given, or estimated (from an iterator of the dataset's own,
        made now, as TensorFlow makes each of its datasets' iterators when the pipeline's is made)."""
        return itertools.repeat(initial) if initial is not None else \
            _estimated(interp, self, class_func, len(target))

    def mixings():
        """Each element's acceptance probabilities and probability of drawing from the original dataset."""
        return (_mixing(dist, target) for dist in initials())

    original = self.__class__(lambda: (PythonTuple([_class_of(interp, class_func, e), e]) for e in self.source()),
                              values=False, size=self.count)
    original.unknown, original.infinite = self.unknown, self.infinite
    if static == 1:
        return original
    draw = _acceptance_draw(interp, seed)       # (traced before sample_from_datasets' Dataset.random)

    def filtered():         # (TensorFlow's zip of the acceptances, the initial distributions and the dataset)
        return _accepted(interp, class_func, draw, zip(mixings(), initials()), self.source())
    accepted = self.__class__(filtered, values=False)
    accepted.unknown = True         # (a filter's size, even of an endless input)
    if static == 0:
        return accepted
    weights = self.__class__(lambda: (Tensor(np.array([m, np.float32(1.0) - m], np.float32))
                                      for _, m in mixings()), values=False)
    return sample_from_datasets(interp, [original, accepted], weights=weights, seed=seed, stop_on_empty_dataset=True)


def _accepted(interp, class_func, draw, mixings, elements):
    """_filter_ds: the (class, element) pairs whose draw falls below their class's acceptance probability."""
    for ((accept, _), dist), element in zip(mixings, elements):
        _warn_if_mostly_rejected(accept, dist)
        found = _class_of(interp, class_func, element)
        if draw() < ops.gather(Tensor(accept), found).value:
            yield PythonTuple([found, element])


def _distribution(value) -> np.ndarray:
    """A distribution as TensorFlow takes it: converted, then cast to float32."""
    t = ops.to_tensor(value)
    if t.ndim != 1:
        raise TdfValueError(f"rejection_resample: a distribution is a vector of class probabilities, got shape "
                            f"{list(t.shape)}")
    return np.asarray(ops.cast(ops.materialize(t) if t.weak else t, np.float32).value)


def _mixing(initial: np.ndarray, target: np.ndarray) -> tuple:
    """_calculate_acceptance_probs_with_mixing, in float32: the acceptance probabilities and the probability of
    drawing from the original dataset."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = target / (initial + np.finfo(np.float32).tiny)
        low, high = ratio.min(), ratio.max()
        return (ratio - low) / (high - low), low


def _estimated(interp, dataset, class_func, classes: int):
    """_estimate_initial_dist_ds: after each 32 classes (a batch, the last maybe shorter), the counts of each
    class seen (from 10) over their sum, as float32, once for each of 32 elements."""
    return _estimates((_class_of(interp, class_func, e) for e in dataset.source()), classes)


def _estimates(found, classes: int):
    counts = np.full(classes, _SMOOTHING, np.int64)
    while batch := list(itertools.islice(found, _ESTIMATION_BATCH)):
        values = np.array([int(c.value) for c in batch], np.int64)
        counts = counts + (values[:, None] == np.arange(classes)).sum(axis=0)      # (one_hot: others count nothing)
        dist = (counts / counts.sum()).astype(np.float32)
        yield from itertools.repeat(dist, _ESTIMATION_BATCH)


def _class_of(interp, class_func, element) -> Tensor:
    found = component(unpacked_call(interp, class_func, element))
    if found.ndim != 0 or found.dtype.kind not in "iu":
        raise TdfValueError(f"rejection_resample: class_func must return a scalar integer class, got "
                            f"{found.dtype.name} of shape {list(found.shape)}")
    return found


def _acceptance_draw(interp, seed):
    """The filter's ``random_uniform([], seed=seed)`` (float32): one RandomUniform kernel of the filter function
    in each iteration, its seeds TensorFlow's for the op (the run's generator's where TensorFlow's draws are not
    reproducible)."""
    op_seed = None if seed is None else to_int(seed, "seed")
    stream = tensorflow_stream(op_seed)
    seeds = stream.get_seed(op_seed) if stream is not None else \
        tuple(int(s) for s in _rng(interp, None).integers(1, 2**31, size=2))
    function = object()         # (the filter function: its kernels, one instantiation per iteration)

    def uniform():
        key, counter = tf_random_state().reserve("RandomUniform", np.float32, seeds, 256)
        return philox_fill("uniform", np.float32, key, counter, 1)[0]
    return lambda: in_function(function, uniform)


def _warn_if_mostly_rejected(accept: np.ndarray, dist: np.ndarray) -> None:
    """maybe_warn_on_large_rejection's message (its Print op's: the proportion, the initial distribution, the
    acceptance probabilities), where half the elements or more are rejected."""
    rejected = np.sum((np.float32(1) - accept) * dist, dtype=np.float32)
    if not rejected < 0.5:
        current().settings.warn_once("Proportion of examples rejected by sampler is high: " +
                                     "".join(_listed(v) for v in (np.atleast_1d(rejected), dist, accept)))


def _listed(values: np.ndarray) -> str:
    """A float32 vector as TensorFlow's Print writes it: each value's shortest of 6 or 9 digits that reads back."""
    return "[" + " ".join(f"{v:.6g}" if np.float32(f"{v:.6g}") == v else f"{v:.9g}"
                          for v in values.astype(np.float32)) + "]"
