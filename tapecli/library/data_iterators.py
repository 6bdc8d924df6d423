"""What iterates a dataset or a Python iterable: ``iter(x)``'s iterator, a dataset's TensorFlow iterator object
(``get_next``, ``get_next_as_optional``) and its Optional."""
from __future__ import annotations

import numpy as np

from tapecli.errors import EndOfSequence, KernelValueError, NoAttribute
from tapecli.interpreter.objects import BoundMethod, ProgramObject
from tapecli.library.control import flatten
from tapecli.runtime.values import Tensor

END = object()


class PythonIterator(ProgramObject):
    """``iter(x)``: Python's iterator over what a ``for`` loop takes from x; ``next(it)`` advances it."""

    kind_word = "an iterator"

    def __init__(self, it):
        self.it = it

    def items(self):
        return self.it


class NumpyIterator(PythonIterator):
    """``dataset.as_numpy_iterator()``: TensorFlow's NumpyIterator, its elements with NumPy's arrays."""

    def python_class(self) -> str:
        return "tensorflow.python.data.ops.dataset_ops.NumpyIterator"


class DatasetIterator(PythonIterator):
    """``iter(dataset)``: TensorFlow's iterator object (an OwnedIterator; of a distributed dataset, a
    DistributedIterator), which ``next()`` advances as Python's and ``get_next()`` as TensorFlow's."""

    def __init__(self, dataset, python_class: str):
        super().__init__(iter(dataset.items()))
        self.dataset, self.class_name = dataset, python_class

    def python_class(self) -> str:
        return self.class_name

    def get_next(self):
        """The next element; past the last, TensorFlow's OutOfRangeError (StopIteration is ``next()``'s)."""
        item = next(self.it, END)
        if item is END:
            raise EndOfSequence(self._op_message("IteratorGetNext", "End of sequence"))
        return item

    def _op_message(self, op: str, message: str) -> str:
        return op_message(self.dataset, op, message)

    def get_attribute(self, interp, attr, node):
        if attr == "element_spec":
            return self.dataset.element_spec()
        methods = {"get_next": self.get_next, "get_next_as_optional": lambda: OptionalValue(
            next(self.it, END), self._op_message("OptionalGetValue", "The given optional does not have a value."))}
        if attr in methods:
            method = methods[attr]
            return BoundMethod(attr, lambda call_node: method())
        raise NoAttribute(f"'{self.class_name.rpartition('.')[2]}' object has no attribute '{attr}'")


class OptionalValue(ProgramObject):
    """``get_next_as_optional()``'s result: an element or none (tf.experimental.Optional)."""

    kind_word = "a tf.experimental.Optional"

    def __init__(self, value, empty_message: str):
        self.value, self.empty_message = value, empty_message

    def python_class(self) -> str:
        return "tensorflow.python.data.ops.optional_ops._OptionalImpl"

    def get_value(self):
        if self.value is END:
            raise KernelValueError(self.empty_message)
        return self.value

    def get_attribute(self, interp, attr, node):
        methods = {"has_value": lambda: Tensor(np.array(self.value is not END)), "get_value": self.get_value}
        if attr in methods:
            method = methods[attr]
            return BoundMethod(attr, lambda call_node, name=None: method())
        raise NoAttribute(f"'_OptionalImpl' object has no attribute '{attr}'")


def op_message(dataset, op: str, message: str) -> str:
    """TensorFlow's message of an error of ``op`` on an iterator of ``dataset``, as eager execution words it."""
    outputs = len(flatten(dataset.element_spec()))
    return (f"{{{{function_node __wrapped__{op}_output_types_{outputs}_device_/job:localhost/replica:0/task:0/"
            f"device:CPU:0}}}} {message} [Op:{op}] name: ")
