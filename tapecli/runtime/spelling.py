"""Hints and findings in the program's own spelling.

A message that shows a form to write spells it as the program does: TDF's ``cast(x, float32)``, ``watch x``,
``where(c, a, b)`` for a .tdf program; TensorFlow's ``tf.cast(x, tf.float32)``, ``t.watch(x)``,
``tf.where(c, a, b)`` for a Python program that imports tensorflow (``settings.python_spelling``). Every such
message takes its forms from here. ``python``: the spelling to use where no run is current (lint reads the
program's own flag); None asks the current run.
"""
from __future__ import annotations


def is_python(python: bool | None = None) -> bool:
    if python is not None:
        return python
    from tapecli.runtime.context import current
    return bool(current().settings.python_spelling)


def either(tdf: str, tensorflow: str, python: bool | None = None) -> str:
    """``tdf`` for a TDF program, ``tensorflow`` for a TensorFlow Python one."""
    return tensorflow if is_python(python) else tdf


def dtype(name: str, python: bool | None = None) -> str:
    """A dtype: ``float32``, or ``tf.float32``."""
    return f"tf.{name}" if is_python(python) else name


def call(function: str, *arguments: str, python: bool | None = None) -> str:
    """A call of a builtin: ``where(c, a, b)``, or ``tf.where(c, a, b)``."""
    return f"{'tf.' if is_python(python) else ''}{function}({', '.join(arguments)})"


def cast(operand: str, dtype_name: str, python: bool | None = None) -> str:
    """``cast(x, float32)``, or ``tf.cast(x, tf.float32)``."""
    return call("cast", operand, dtype(dtype_name, python), python=python)


def fixed_cast():
    """``cast`` in the current run's spelling, fixed now (an error's hint is written after the run ends)."""
    python = is_python()
    return lambda operand, dtype_name: cast(operand, dtype_name, python)


def declaration(kind: str, name: str, value: str, python: bool | None = None) -> str:
    """``var x = v`` / ``const c = v``, or ``x = tf.Variable(v)`` / ``c = tf.constant(v)``."""
    if is_python(python):
        return f"{name} = tf.{'Variable' if kind == 'var' else 'constant'}({value})"
    return f"{kind} {name} = {value}"


def tape_statement(statement: str, tape: str, argument: str = "", python: bool | None = None) -> str:
    """A tape statement: TDF's ``watch x``, ``reset t``, ``stop_recording t``; Python's ``t.watch(x)``,
    ``t.reset()``, ``with t.stop_recording():``."""
    if is_python(python):
        if statement == "stop_recording":
            return f"with {tape}.stop_recording():"
        return f"{tape}.{statement}({argument})"
    return f"{statement} {argument or tape}"
