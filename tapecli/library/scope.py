"""The TensorFlow/Keras symbols tapecli leaves out on purpose, each with its one-line reason
(docs/tf-surface.md lists the same table; tests/test_tf_surface.py checks that they agree). A program
that reaches one gets a NameError saying so, never "has no": it is a decision, not a gap.

Keys are the symbols as tests/data/tf_surface.tsv spells them (the ``tf.`` path).
"""
from __future__ import annotations

from tapecli.interpreter.registry import hook

OUT_OF_SCOPE: dict[str, str] = {
    "tf.gradients": "graph mode only: TensorFlow raises it under eager execution; use tf.GradientTape",
    "tf.hessians": "graph mode only: TensorFlow raises it under eager execution; use nested tf.GradientTape",
    "tf.RegisterGradient": "registers a gradient for a graph op type; use tf.custom_gradient",
    "tf.no_gradient": "declares a graph op type non-differentiable; use tf.stop_gradient",
}


@hook("out_of_scope")
def reason(path: str) -> str | None:
    """Why ``path`` (``tf.io.read_file``; ``keras.`` spellings as ``tf.keras.``) is out of scope, or None."""
    if not path.startswith("tf."):
        path = "tf." + path
    return OUT_OF_SCOPE.get(path)
