"""``model.summary()`` as Keras 3 prints it (``keras/src/utils/summary_utils.py``): a rich table of the layers,
their output shapes and parameter counts, then the counts and their sizes in bytes. Keras sizes the table
by the terminal, at most 88 columns less 4; tapecli's output is no terminal, so it is sized as Keras sizes it
where there is none (80 columns: a line of 76), the same on every machine."""
from __future__ import annotations

import math

import numpy as np

from tapecli.errors import TdfValueError
from tapecli.library.keras.common import integer, num
from tapecli.library.keras.optimizers import Schedule

_NO_TERMINAL_LINE = 76


def summary_text(model, line_length=None, positions=None, title=None) -> str:
    """The summary of the library's model, under the model's name (or ``title``: a program's subclass's)."""
    layers, connected = _layers(model)
    shapes = dict(zip(map(id, model.layers), model.layer_shapes()))
    rows = [library_row(layer, shapes.get(id(layer)), connected.get(id(layer), "-") if connected else None)
            for layer in layers]
    trainable = model.trainable_weights
    others = [v for v in model.weights if v not in trainable]
    return table_text(_name(model) if title is None else title, rows, trainable, others,
                      getattr(model, "trainer", None), line_length, positions)


def library_row(layer, shape, connected=None) -> LayerRow:
    """The row of one of the library's layers whose output shape is ``shape``."""
    return LayerRow(_name(layer), _class(layer), shape, layer.weights if layer.built else None, connected)


class LayerRow:
    """A summary's row: the layer's name and class, its output shape (None: unknown, "?"), its weights (None:
    unbuilt) and, in a functional model that is no chain, what it is connected to (else None)."""

    def __init__(self, name: str, class_name: str, shape, weights, connected=None):
        self.name, self.class_name, self.shape, self.weights, self.connected = \
            name, class_name, shape, weights, connected


def table_text(title: str, rows: list, trainable: list, others: list, trainer, line_length=None,
               positions=None) -> str:
    """Keras's table of the rows, then the parameter counts (the compiled optimizer's once it has stepped)."""
    import rich.console
    import rich.markup
    import rich.table

    if any(row.connected is not None for row in rows):
        header, alignment, default = ["Layer (type)", "Output Shape", "Param #", "Connected to"], \
            ["left", "left", "right", "left"], [0.3, 0.56, 0.74, 1.0]
    else:
        header, alignment, default = ["Layer (type)", "Output Shape", "Param #"], ["left", "left", "right"], \
            [0.45, 0.80, 1.0]
    line_length = integer(line_length, "line_length") if line_length is not None else _NO_TERMINAL_LINE
    positions = [num(p, "a position") for p in positions] if positions is not None else default
    widths, at = [], 0
    for position in positions:
        width = int(position * line_length) - at
        if width < 4:
            raise TdfValueError("Insufficient console width to print summary.")
        widths.append(width)
        at += width
    table = rich.table.Table(*[rich.table.Column(name, justify=align, width=width)
                               for name, align, width in zip(header, alignment, widths)],
                             width=line_length, show_lines=True)
    for row in rows:
        cells = [f"{rich.markup.escape(row.name)} ({rich.markup.escape(row.class_name)})",
                 "?" if row.shape is None else _shape_text(row.shape),
                 "0 (unbuilt)" if row.weights is None else f"{_count(row.weights):,}"]
        table.add_row(*cells, *([] if row.connected is None else [row.connected]))
    console = rich.console.Console(highlight=False, force_terminal=False, color_system=None)
    with console.capture() as captured:
        console.print(f'[bold]Model: "{rich.markup.escape(title)}"[/]')
        console.print(table)
        optimizer = _optimizer_weights(trainer)
        counts = [(" Total params: ", trainable + others + (optimizer or [])), (" Trainable params: ", trainable),
                  (" Non-trainable params: ", others)] + ([(" Optimizer params: ", optimizer)] if optimizer else [])
        for heading, weights in counts:
            console.print(f"[bold]{heading}[/]{_count(weights):,} ({_readable(_bytes(weights))})")
    return captured.get()


class _Scalar:
    """A scalar variable of Keras's optimizer that tapecli keeps as a number (iterations, learning_rate)."""

    shape = ()

    def __init__(self, dtype):
        self.dtype = np.dtype(dtype)


def _optimizer_weights(trainer) -> list | None:
    """A compiled model's optimizer's variables once it has stepped (Keras counts them then): its iteration
    count (int64), its learning rate (float32, unless a schedule gives it) and its slots."""
    optimizer = getattr(trainer, "optimizer", None)
    if optimizer is None or not (optimizer.iterations or optimizer.slot_list):
        return None
    return [_Scalar(np.int64)] + ([] if isinstance(optimizer.lr, Schedule) else [_Scalar(np.float32)]) + \
        list(optimizer.slot_list)


def _layers(model) -> tuple[list, dict]:
    """The layers a summary lists, and for a functional model that is no chain each layer's inputs
    (``name[0][0]``, Keras's node and tensor index), else an empty dict."""
    order = getattr(model, "order", None)
    if order is None:                   # Sequential, or a program's subclass: its layers in order
        return list(model.layers), {}
    chain = all(len(t.inputs) == 1 for t in order) and len(model.inputs) == 1 and len(model.outputs) == 1 \
        and len({id(t.layer) for t in order}) == len(order) and _is_chain(model, order)
    if chain:
        return list(model.layers), {}
    calls, history = model.keras_histories()       # (each call's inputs, as Keras's node and tensor indices)
    connected = {layer: ", ".join(f"{name}[{call}][{index}]" for t in made for name, call, index in map(history, t.inputs))
                 for layer, made in calls.items()}
    return list(model.layers), connected


def _is_chain(model, order) -> bool:
    """Each layer call takes the previous one's output (Keras's ``sequential_like``: one node per depth)."""
    previous = model.inputs[0]
    for t in order:
        if t.inputs[0] is not previous:
            return False
        previous = t
    return True


def _name(layer) -> str:
    found = getattr(layer, "instance", None)          # a program's layer: its Keras name
    if found is not None:
        return found.keras_name or found.label
    return layer.given or layer.auto


def _class(layer) -> str:
    found = getattr(layer, "instance", None)
    return found.cls.name if found is not None else layer.python_class_name()


def _shape_text(shape) -> str:
    if isinstance(shape, list):         # (a layer's several outputs)
        return "[" + ", ".join(map(_shape_text, shape)) + "]"
    return "(" + ", ".join("None" if d is None else str(d) for d in shape) + ")"


def _count(weights) -> int:
    return int(sum(math.prod(v.shape) for v in weights))


def _bytes(weights) -> float:
    unique = {id(v): v for v in weights}.values()
    return sum(math.prod(v.shape) * np.dtype(v.dtype).itemsize * 8 for v in unique) / 8


def _readable(size: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB", "PB"):
        if size / 1024 < 1:
            return f"{size:.2f} {unit}"
        size /= 1024
    return f"{size:.2f} PB"
