"""``tf.train.Checkpoint``, ``tf.train.CheckpointManager`` and ``tf.train.latest_checkpoint``, kept in the run's
memory: programs never reach files, so a checkpoint a program saves lives as long as its run, under the path
TensorFlow would have written (``./ckpts/ckpt-1``). Saving, perturbing and restoring within a run, and restoring
into fresh objects of the same structure, give TensorFlow's values; a path this run did not save is TensorFlow's
error (TensorFlow's
NotFoundError).

A checkpoint holds the objects it was given by name (``Checkpoint(model=net, step=v)``), as TensorFlow's object
graph does; each object's variables are matched by their place in it (``model``'s first variable, ...) in the
order its framework lists them (``tf.Module.variables``, a Keras layer's ``weights``, an optimizer's
``variables``). Values are copied when saved. TensorFlow's deferred restoration (values kept for variables made
later) is not reproduced: a variable that does not exist when ``restore`` runs is left unresolved."""
from __future__ import annotations

import numpy as np

from tapecli.errors import CheckpointAssertionError, NoAttribute, TdfTypeError, TdfValueError
from tapecli.interpreter.objects import BoundMethod, ProgramObject
from tapecli.interpreter.printing import python_repr
from tapecli.interpreter.registry import builtin
from tapecli.runtime.context import current
from tapecli.runtime.limits import admit
from tapecli.runtime.values import Tensor, Variable

_TF = "tensorflow.python.checkpoint."


def _saved(ctx) -> dict:
    """The run's checkpoints: path -> {key: array}, and each directory's latest path (its ``checkpoint`` file)."""
    if ctx.checkpoints is None:
        ctx.checkpoints = {"paths": {}, "latest": {}}
    return ctx.checkpoints


def _variables(value) -> list:
    """The variables of one object a checkpoint holds, in its framework's order."""
    if isinstance(value, Variable):
        return [value]
    if isinstance(value, (list, tuple)):
        return [v for item in value for v in _variables(item)]
    if isinstance(value, dict):
        return [v for key in sorted(value, key=str) for v in _variables(value[key])]
    if isinstance(value, ProgramObject):        # (an optimizer's: its iterations, learning rate and slots)
        return list(value.keras_variables() if hasattr(value, "keras_variables") else value.owned_variables())
    held = getattr(value, "variables", None)      # (a program's tf.Module on CPython's run)
    return _variables(list(held)) if isinstance(held, (list, tuple)) else []


def _directory(path: str) -> str:
    return path.rpartition("/")[0] or "."


class Checkpoint(ProgramObject):
    kind_word = "a tf.train.Checkpoint"

    def __init__(self, objects: dict):
        self.objects = objects
        self.counter: Variable | None = None        # (made on first use, as TensorFlow's: write() saves none)

    @property
    def save_counter(self) -> Variable:
        if self.counter is None:
            self.counter = Variable("save_counter", np.array(0, dtype=np.int64), trainable=False,
                                    tf_name="save_counter")
        return self.counter

    def count(self) -> int:
        """The counter advanced by one save (Checkpoint.save, CheckpointManager.save): its new value."""
        self.save_counter.assign(self.save_counter.read().value + np.int64(1))
        return int(self.save_counter.read().value)

    def python_class(self) -> str:
        return _TF + "checkpoint.Checkpoint"

    def values(self) -> dict:
        """What a save writes: each variable's value under its object's name and place, and the counter's."""
        found = {} if self.counter is None else {"save_counter": self.counter}
        for name in sorted(self.objects):
            for i, variable in enumerate(_variables(self.objects[name])):
                found[f"{name}/{i}"] = variable
        return found

    def write(self, path) -> str:
        path = _path(path, "file_prefix")
        found = self.values()
        admit(sum(v.read().value.size for v in found.values()), 8, "the checkpoint's copy of its variables")
        _saved(current())["paths"][path] = {key: np.array(v.read().value) for key, v in found.items()}
        return path

    def save(self, file_prefix) -> str:
        """Checkpoint.save: the counter advanced, then written to ``prefix-N``, the directory's latest."""
        path = self.write(f"{_path(file_prefix, 'file_prefix')}-{self.count()}")
        _saved(current())["latest"][_directory(path)] = path
        return path

    def restore(self, save_path) -> "LoadStatus":
        """Each saved value into the variable at its place now; shapes must agree, as TensorFlow's."""
        if save_path is None:
            return LoadStatus(set(), set())
        path = _path(save_path, "save_path")
        stored = _saved(current())["paths"].get(path)
        if stored is None:
            raise TdfValueError(f"Error when restoring from checkpoint or SavedModel at {path}: Unsuccessful "
                                f"TensorSliceReader constructor: Failed to find any matching files for {path}",
                                hint="tapecli keeps checkpoints in the run's memory: restore what this run saved")
        self.save_counter          # (restored too, where the checkpoint has one)
        found = self.values()
        for key, variable in found.items():
            if key in stored:
                value = stored[key]
                if value.shape != variable.shape:
                    raise TdfValueError(f"Received incompatible tensor with shape {list(value.shape)} when "
                                        f"attempting to restore variable with shape {list(variable.shape)} and "
                                        f"name {key}.")
                variable.assign(value.astype(variable.dtype))
        return LoadStatus(sorted(set(stored) - set(found)), [v for k, v in found.items() if k not in stored])

    def get_attribute(self, interp, attr, node):
        if attr in self.objects:
            return self.objects[attr]
        if attr == "save_counter":
            return self.save_counter
        methods = {"save": self.save, "write": self.write, "restore": self.restore, "read": self.restore}
        if attr in methods:
            method = methods[attr]
            return BoundMethod(attr, lambda call_node, *a, **k: method(*a, **k))
        raise NoAttribute(f"'Checkpoint' object has no attribute '{attr}'")

    def set_attribute(self, interp, attr, value, node):
        self.objects[attr] = value


class LoadStatus(ProgramObject):
    """What ``restore`` returns: ``assert_consumed`` fails on a saved value no object took (or an object's
    variable no saved value reached); ``expect_partial`` and ``assert_existing_objects_matched`` accept it."""
    kind_word = "a CheckpointLoadStatus"

    def __init__(self, unresolved: list, unmatched: list):
        self.unresolved, self.unmatched = unresolved, unmatched

    def python_class(self) -> str:
        return _TF + "checkpoint.CheckpointLoadStatus"

    def assert_consumed(self):
        """TensorFlow's two checks, in its order: a saved value no object took, then variables left unbound."""
        if self.unresolved:
            raise CheckpointAssertionError(f"Unresolved object in checkpoint (root).{self.unresolved[0].split('/')[0]}")
        if self.unmatched:
            shown = ", ".join(python_repr(v) for v in self.unmatched[:10])
            raise CheckpointAssertionError(
                f"Found {len(self.unmatched)} Python objects that were not bound to checkpointed values, likely due "
                f"to changes in the Python program. Showing {min(10, len(self.unmatched))} of "
                f"{len(self.unmatched)} unmatched objects: [{shown}]")
        return self

    def get_attribute(self, interp, attr, node):
        if attr == "assert_consumed":
            return BoundMethod(attr, lambda call_node: self.assert_consumed())
        if attr in ("expect_partial", "assert_existing_objects_matched", "assert_nontrivial_match"):
            return BoundMethod(attr, lambda call_node: self)
        raise NoAttribute(f"'CheckpointLoadStatus' object has no attribute '{attr}'")


class CheckpointManager(ProgramObject):
    """``tf.train.CheckpointManager``: saves to ``directory/checkpoint_name-N`` (N the checkpoint's counter, or
    ``checkpoint_number``), keeping the newest ``max_to_keep``."""
    kind_word = "a tf.train.CheckpointManager"

    def __init__(self, checkpoint: Checkpoint, directory: str, max_to_keep, checkpoint_name: str):
        self.checkpoint, self.directory = checkpoint, directory
        self.max_to_keep, self.checkpoint_name = max_to_keep, checkpoint_name
        self.kept: list[str] = []

    def python_class(self) -> str:
        return _TF + "checkpoint_management.CheckpointManager"

    def save(self, checkpoint_number=None) -> str:
        counted = self.checkpoint.count()
        number = counted if checkpoint_number is None else _number(checkpoint_number)
        path = self.checkpoint.write(f"{self.directory}/{self.checkpoint_name}-{number}")
        self.kept = [p for p in self.kept if p != path] + [path]
        if self.max_to_keep is not None and len(self.kept) > self.max_to_keep:
            for old in self.kept[:-self.max_to_keep]:
                _saved(current())["paths"].pop(old, None)
            self.kept = self.kept[-self.max_to_keep:]
        _saved(current())["latest"][self.directory] = path
        return path

    def get_attribute(self, interp, attr, node):
        if attr == "save":
            return BoundMethod(attr, lambda call_node, checkpoint_number=None, **k: self.save(checkpoint_number))
        if attr == "latest_checkpoint":
            return self.kept[-1] if self.kept else None
        if attr == "checkpoints":
            return list(self.kept)
        if attr in ("directory", "checkpoint"):
            return getattr(self, attr)
        raise NoAttribute(f"'CheckpointManager' object has no attribute '{attr}'")


def _path(value, what: str) -> str:
    if isinstance(value, bytes):
        value = value.decode()
    if isinstance(value, Tensor) and value.dtype.hasobject and value.ndim == 0:
        value = value.value[()].decode()
    if not isinstance(value, str):
        raise TdfTypeError(f"tf.train.Checkpoint: {what} must be a string path")
    return value


def _number(value) -> int:
    if isinstance(value, Variable):
        value = value.read()
    if isinstance(value, Tensor) and value.ndim == 0 and value.dtype.kind in "iu":
        return int(value.value)
    raise TdfTypeError("checkpoint_number must be an integer")


@builtin("train.Checkpoint")
def checkpoint(root=None, **kwargs):
    """``tf.train.Checkpoint(**objects)``: the objects tracked under their names (``root=`` among them)."""
    objects = dict(kwargs)
    if root is not None:
        objects["root"] = root
    return Checkpoint(objects)


@builtin("train.CheckpointManager")
def checkpoint_manager(checkpoint, directory, max_to_keep=5, keep_checkpoint_every_n_hours=None,
                       checkpoint_name="ckpt", step_counter=None, checkpoint_interval=None, init_fn=None):
    if not isinstance(checkpoint, Checkpoint):
        raise TdfTypeError("tf.train.CheckpointManager takes a tf.train.Checkpoint")
    kept = None if max_to_keep is None else _number(max_to_keep)
    return CheckpointManager(checkpoint, _path(directory, "directory"), kept, _path(checkpoint_name,
                                                                                     "checkpoint_name"))


@builtin("train.latest_checkpoint")
def latest_checkpoint(checkpoint_dir, latest_filename=None):
    """The path the run last saved into ``checkpoint_dir`` (by Checkpoint.save or a manager), or None."""
    return _saved(current())["latest"].get(_path(checkpoint_dir, "checkpoint_dir").rstrip("/") or "/")


