"""``tf.Module`` of a TensorFlow program that CPython runs (execution/tensorflow.py): a real Python class the
program derives from, collecting the variables and modules its instances hold as TensorFlow's
``tensorflow/python/module/module.py`` does (classes.module_leaves, which the interpreter's tf.Module shares)."""
from __future__ import annotations

import functools

from tapecli.execution.tf_values import as_tensorflow, to_program
from tapecli.interpreter.classes import module_leaves, module_name
from tapecli.runtime.context import current
from tapecli.runtime.values import Variable


class Module:
    """``tf.Module``: a named container of variables and other modules."""

    @as_tensorflow
    def __init__(self, name=None):
        from tapecli.library.tf_scopes import NameScope      # (a family loaded on first use)
        self._name = module_name(type(self).__name__, name)
        self._scope = NameScope("/".join([*current().name_scopes, self._name]) + "/")   # (where it is made)

    @property
    def name(self) -> str:
        return self._name

    @property
    def name_scope(self):
        """``with module.name_scope:``: the variables made inside are named in the module's scope, the one open
        where it was made and its name ("mlp/dense/w:0")."""
        return to_program(self._scope)

    @property
    def variables(self) -> tuple:
        return tuple(_flatten(self, lambda v: isinstance(v, Variable)))

    @property
    def trainable_variables(self) -> tuple:
        return tuple(_flatten(self, lambda v: isinstance(v, Variable) and v.trainable))

    @property
    def non_trainable_variables(self) -> tuple:
        return tuple(_flatten(self, lambda v: isinstance(v, Variable) and not v.trainable))

    @property
    def submodules(self) -> tuple:
        return tuple(_flatten(self, lambda v: isinstance(v, Module)))

    @classmethod
    def with_name_scope(cls, method):
        """``@tf.Module.with_name_scope``: the method, run inside its module's name scope."""
        @functools.wraps(method)
        def scoped(self, *args, **kwargs):
            with self.name_scope:
                return method(self, *args, **kwargs)
        return scoped


def _flatten(module: Module, predicate):
    return module_leaves(module, vars, lambda v: isinstance(v, Module), predicate)
