"""A program's ``keras.Model`` subclass built as a functional model, as Keras 3 builds it:
``CustomModel(inputs, outputs)`` (a subclass without ``__init__``) or ``super().__init__(inputs, outputs)``
in the subclass's ``__init__`` makes a functional model of that graph, whose methods the subclass may
override (``train_step``, ``test_step``, ``metrics``). The instance holds it as its ``inner`` object
(interpreter/classes.py): calling the instance runs the graph, its weights come first in its variables,
and it answers ``layers``, ``get_layer``, ``get_weights``, ``set_weights``, ``summary``, ``inputs``, ...
A subclass's ``super().__init__()`` without inputs and outputs (a Layer's, or a Model's that defines
``call``) sets nothing up, as before."""
from __future__ import annotations

from tapecli.errors import TdfTypeError
from tapecli.library.keras import models, training
from tapecli.library.keras.common import method


def program_attribute(interp, instance, attr):
    """HOOKS["keras_model"]: the base's ``__init__``, else what training.program_attribute answers."""
    if attr == "__init__" and instance.cls.role is None:
        return method(attr, lambda *args, **kwargs: init(interp, instance, *args, **kwargs))
    return training.program_attribute(interp, instance, attr)


def init(interp, instance, *args, inputs=None, outputs=None, name=None, trainable=True, **ignored):
    """keras.Model.__init__: with inputs and outputs, a functional model; otherwise nothing to set up (the
    keywords a Layer takes, such as ``dtype`` or ``autocast``, change nothing here)."""
    if len(args) > 2:
        raise TdfTypeError(f"Model.__init__ takes inputs and outputs, got {len(args)} positional arguments")
    inputs = args[0] if args else inputs
    outputs = args[1] if len(args) > 1 else outputs
    if inputs is None and outputs is None:
        return None
    if inputs is None or outputs is None:
        raise TdfTypeError("a functional model takes both inputs and outputs: Model(inputs, outputs)")
    instance.inner = models.Functional(interp, inputs, outputs, name=name, trainable=trainable)
    instance.keras_built = True
    return None
