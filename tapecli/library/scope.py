"""The TensorFlow/Keras symbols tapecli leaves out on purpose, each with its one-line reason
(docs/tf-surface.md lists the same table; tests/test_tf_surface.py checks that they agree). A program
that reaches one gets a NameError saying so, never "has no": it is a decision, not a gap.

Keys are the symbols as tests/data/tf_surface.tsv spells them (the ``tf.`` path).
"""
from __future__ import annotations

from tapecli.interpreter.registry import hook

OUT_OF_SCOPE: dict[str, str] = {
    "tf.AggregationMethod": "how tf.gradients aggregates in a graph; GradientTape's sums are fixed",
    "tf.CriticalSection": "a graph resource lock for concurrent execution",
    "tf.DeviceSpec": "device placement",
    "tf.device": "device placement",
    "tf.check_pinned": "device placement (pinned host memory)",
    "tf.Graph": "graph construction",
    "tf.Operation": "graph construction",
    "tf.import_graph_def": "graph construction from a serialized GraphDef",
    "tf.init_scope": "lifts code out of a graph being built",
    "tf.gradients": "graph mode only (TensorFlow refuses it under eager execution); use tf.GradientTape",
    "tf.hessians": "graph mode only (TensorFlow refuses it under eager execution); use nested tapes",
    "tf.nondifferentiable_batch_function": "batches calls across concurrent graph executions",
    "tf.load_library": "loads compiled op libraries from files",
    "tf.load_op_library": "loads compiled op libraries from files",
    "tf.make_tensor_proto": "protocol-buffer serialization",
    "tf.make_ndarray": "protocol-buffer serialization",
    "tf.register_tensor_conversion_function": "extends TensorFlow's Python type dispatch",
    "tf.variable_creator_scope": "intercepts variable creation (distribution strategies)",
    "tf.VariableSynchronization": "variable synchronization across replicas (distribution)",
    "tf.VariableAggregation": "variable aggregation across replicas (distribution)",
    "tf.variant": "an opaque handle dtype of graph internals",
    "tf.resource": "an opaque handle dtype of graph internals",
    "tf.string": "string tensors (tapecli's tensors are numeric)",
    "tf.as_string": "string tensors (tapecli's tensors are numeric)",
    "tf.fingerprint": "hashes of string or byte data",
    "tf.qint8": "quantized dtypes for quantized kernels",
    "tf.qint16": "quantized dtypes for quantized kernels",
    "tf.qint32": "quantized dtypes for quantized kernels",
    "tf.quint8": "quantized dtypes for quantized kernels",
    "tf.quint16": "quantized dtypes for quantized kernels",
    "tf.get_logger": "TensorFlow's own Python logger",
    "tf.nn.RNNCellDeviceWrapper": "device placement of an RNN cell",
    "tf.parallel_stack": "graph mode only (TensorFlow refuses it under eager execution); use tf.stack",
    "tf.RegisterGradient": "registers a gradient for a graph op type; use tf.custom_gradient",
    "tf.no_gradient": "declares a graph op type non-differentiable; use tf.stop_gradient",
}


@hook("out_of_scope")
def reason(path: str) -> str | None:
    """Why ``path`` (``tf.io.read_file``; ``keras.`` spellings as ``tf.keras.``) is out of scope, or None."""
    if not path.startswith("tf."):
        path = "tf." + path
    return OUT_OF_SCOPE.get(path)
