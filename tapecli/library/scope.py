"""The TensorFlow/Keras symbols tapecli leaves out on purpose, each with its one-line reason
(docs/tf-surface.md lists the same table; tests/conformance/test_tf_surface.py checks that they agree). A program
that reaches one gets a NameError saying so, never "has no": it is a decision, not a gap.

Keys are the symbols as tests/data/tf_surface.tsv spells them (the ``tf.`` path).
"""
from __future__ import annotations

import functools
from pathlib import Path

from tapecli.interpreter.registry import hook

OUT_OF_SCOPE: dict[str, str] = {
    "tf.AggregationMethod": "how tf.gradients aggregates in a graph; GradientTape's sums are fixed",
    "tf.CriticalSection": "a graph resource lock for concurrent execution",
    "tf.DeviceSpec": "device placement",
    "tf.check_pinned": "device placement (pinned host memory)",
    "tf.Operation": "graph construction",
    "tf.import_graph_def": "graph construction from a serialized GraphDef",
    "tf.nondifferentiable_batch_function": "batches calls across concurrent graph executions",
    "tf.load_library": "loads compiled op libraries from files",
    "tf.load_op_library": "loads compiled op libraries from files",
    "tf.register_tensor_conversion_function": "extends TensorFlow's Python type dispatch",
    "tf.variable_creator_scope": "intercepts variable creation (distribution strategies)",
    "tf.VariableSynchronization": "variable synchronization across replicas (distribution)",
    "tf.VariableAggregation": "variable aggregation across replicas (distribution)",
    "tf.variant": "an opaque handle dtype of graph internals",
    "tf.resource": "an opaque handle dtype of graph internals",
    "tf.strings.unicode_script": "ICU's table of Unicode scripts, which Python's unicodedata lacks (an exact table, "
                                 "of the ICU TensorFlow builds with, would be a new dependency)",
    "tf.qint8": "quantized dtypes for quantized kernels",
    "tf.qint16": "quantized dtypes for quantized kernels",
    "tf.qint32": "quantized dtypes for quantized kernels",
    "tf.quint8": "quantized dtypes for quantized kernels",
    "tf.quint16": "quantized dtypes for quantized kernels",
    "tf.nn.RNNCellDeviceWrapper": "device placement of an RNN cell",
    "tf.parallel_stack": "graph mode only (TensorFlow refuses it under eager execution); use tf.stack",
    "tf.RegisterGradient": "registers a gradient for a graph op type; use tf.custom_gradient",
    "tf.no_gradient": "declares a graph op type non-differentiable; use tf.stop_gradient",
}
# Families left out for one reason each.
_FAMILIES: list[tuple[str, str]] = [
    ("a raw kernel of TensorFlow's ragged ops (its value row ids and a reverse index map); tf.RaggedTensor and "
     "tf.ragged are there",
     "tf.ragged_fill_empty_rows tf.ragged_fill_empty_rows_grad"),
    ("crosses string feature columns into strings or their fingerprint hashes (feature-column preprocessing)",
     "tf.sparse.cross tf.sparse.cross_hashed"),
    ("sparse gradient slices; tapecli's gradients are dense tensors (the values of tf.convert_to_tensor of "
     "TensorFlow's)",
     "tf.IndexedSlicesSpec"),
    ("type specs of composite tensors and tf.function signatures (graph tracing internals)",
     "tf.NoneTensorSpec tf.OptionalSpec tf.SparseTensorSpec tf.TensorArraySpec tf.type_spec_from_value"),
    ("complex numbers (tapecli's tensors are real)",
     "tf.complex tf.complex64 tf.complex128 tf.math.conj tf.math.real tf.math.imag tf.math.angle "
     "tf.keras.ops.view_as_complex tf.keras.ops.view_as_real tf.keras.ops.polar tf.experimental.numpy.complex64 "
     "tf.experimental.numpy.complex128 tf.experimental.numpy.complex_"),
    ("N-d Fourier transforms give complex tensors (tapecli's tensors are real)",
     "tf.fftnd tf.ifftnd tf.rfftnd tf.irfftnd"),
    ("approximate top-k of accelerator kernels (TensorFlow's CPU lacks a float kernel for it); use "
     "tf.math.top_k",
     "tf.approx_top_k tf.math.approx_max_k tf.math.approx_min_k tf.nn.approx_max_k tf.nn.approx_min_k"),
    ("circulant operators are defined by a complex spectrum (tapecli's tensors are real)",
     "tf.linalg.LinearOperatorCirculant tf.linalg.LinearOperatorCirculant2D tf.linalg.LinearOperatorCirculant3D"),
    ("the abstract base of operator classes (a subclass implements TensorFlow's private _matmul/_shape pro"
     "tocol); use the concrete LinearOperator classes",
     "tf.linalg.LinearOperator"),
    ("changes Keras's global configuration; tapecli's Keras keeps these defaults (epsilon 1e-7, channels_last; "
     "set_floatx takes float32 or float64)",
     "tf.keras.backend.set_epsilon tf.keras.backend.set_image_data_format"),
    ("the Keras package's version string (tapecli is not Keras)",
     "tf.keras.version"),
    ("Keras's callbacks that write files (checkpoints, CSV logs, TensorBoard's event files): file I/O, which "
     "tapecli programs never reach",
     "tf.keras.callbacks.BackupAndRestore tf.keras.callbacks.CSVLogger tf.keras.callbacks.ModelCheckpoint "
     "tf.keras.callbacks.OrbaxCheckpoint tf.keras.callbacks.TensorBoard"),
    ("sends each epoch's logs to a server over HTTP (network I/O, which tapecli programs never reach)",
     "tf.keras.callbacks.RemoteMonitor"),
    ("complex eigenvalues and eigenvectors (tapecli's tensors are real); use tf.linalg.eigh for symmetric "
     "matrices",
     "tf.eig tf.eigvals tf.linalg.eig tf.linalg.eigvals tf.keras.ops.eig"),
    ("takes complex matrices only (tapecli's tensors are real)",
     "tf.linalg.logm"),
    ("a whole preprocessing pipeline over dicts of features (Keras's FeatureSpace); its layers (Normalization, "
     "StringLookup, Hashing, HashedCrossing...) are there",
     "tf.keras.utils.FeatureSpace"),
    ("wraps a model of another framework (JAX, Flax, PyTorch)",
     "tf.keras.layers.FlaxLayer tf.keras.layers.JaxLayer tf.keras.layers.TorchModuleWrapper"),
    ("loads a SavedModel from files",
     "tf.keras.layers.TFSMLayer"),
    ("random image augmentation beyond flips, rotations, zooms, translations, crops, contrast and brightness "
     "(mixing images, colour jitter, blur, elastic and perspective warps, policies of augmentations)",
     "tf.keras.layers.AugMix tf.keras.layers.CutMix tf.keras.layers.MixUp tf.keras.layers.RandAugment "
     "tf.keras.layers.RandomColorDegeneration tf.keras.layers.RandomColorJitter "
     "tf.keras.layers.RandomElasticTransform "
     "tf.keras.layers.RandomErasing tf.keras.layers.RandomGaussianBlur "
     "tf.keras.layers.RandomGrayscale tf.keras.layers.RandomHue tf.keras.layers.RandomInvert "
     "tf.keras.layers.RandomPerspective tf.keras.layers.RandomPosterization "
     "tf.keras.layers.RandomSaturation tf.keras.layers.RandomSharpness tf.keras.layers.RandomShear"),
    ("image preprocessing of input pipelines (histogram equalization, bounding boxes, pipelines of augmentations)",
     "tf.keras.layers.AutoContrast tf.keras.layers.ContrastLimitedAdaptiveHistogramEqualization "
     "tf.keras.layers.Equalization tf.keras.layers.Solarization tf.keras.layers.MaxNumBoundingBoxes "
     "tf.keras.layers.Pipeline"),
    ("audio preprocessing: short-time Fourier transforms are complex-valued",
     "tf.keras.layers.MelSpectrogram tf.keras.layers.STFTSpectrogram tf.keras.initializers.STFT "
     "tf.keras.initializers.STFTInitializer tf.keras.initializers.stft"),
    ("reads files from a directory",
     "tf.keras.utils.audio_dataset_from_directory tf.keras.utils.image_dataset_from_directory "
     "tf.keras.utils.text_dataset_from_directory"),
    ("file and network I/O (downloads a file)",
     "tf.keras.utils.get_file"),
    ("image files and PIL images (file I/O)",
     "tf.keras.utils.load_img tf.keras.utils.save_img tf.keras.utils.array_to_img"),
    ("draws the model with Graphviz (file output)",
     "tf.keras.utils.model_to_dot tf.keras.utils.plot_model"),
    ("a console progress bar (terminal output, not computation)",
     "tf.keras.utils.Progbar"),
    ("Keras object serialization (saving and loading configs)",
     "tf.keras.losses.serialize tf.keras.losses.deserialize tf.keras.metrics.serialize "
     "tf.keras.metrics.deserialize tf.keras.optimizers.serialize tf.keras.optimizers.deserialize "
     "tf.keras.optimizers.schedules.serialize tf.keras.optimizers.schedules.deserialize "
     "tf.keras.initializers.serialize "
     "tf.keras.initializers.deserialize tf.keras.regularizers.serialize tf.keras.regularizers.deserialize "
     "tf.keras.constraints.serialize tf.keras.constraints.deserialize "
     "tf.keras.utils.serialize_keras_object tf.keras.utils.deserialize_keras_object "
     "tf.keras.utils.get_custom_objects tf.keras.utils.custom_object_scope "
     "tf.keras.utils.CustomObjectScope tf.keras.utils.Config tf.keras.saving.serialize_keras_object "
     "tf.keras.saving.deserialize_keras_object tf.keras.saving.get_custom_objects "
     "tf.keras.saving.custom_object_scope tf.keras.saving.CustomObjectScope"),
    ("Keras model and weight files (file I/O: tapecli runs a program, it does not save or load one)",
     "tf.keras.saving.save_model tf.keras.saving.load_model tf.keras.saving.save_weights "
     "tf.keras.saving.load_weights tf.keras.saving.KerasFileEditor"),
    ("quantization of weights and activations",
     "tf.keras.Quantizer"),
    ("Keras's backend-internal scopes (stateless JAX-style execution, symbolic tracing)",
     "tf.keras.StatelessScope tf.keras.SymbolicScope"),
    ("Keras's symbolic operation graph (backend internals)",
     "tf.keras.Function tf.keras.Operation"),
    ("a graph-optimization hint, not for public use (TensorFlow defines no gradient for it)",
     "tf.guarantee_const"),
    ("AutoGraph's rewrite of a function into graph code; tapecli runs a tf.function's Python as written, so there "
     "is no converted code to give",
     "tf.autograph.to_code tf.autograph.to_graph"),
]
OUT_OF_SCOPE.update({name: reason for reason, names in _FAMILIES for name in names.split()})


# tf.distribute beyond its one-replica strategies (library/tf_distribute.py)
_SEVERAL_DEVICES = ("distributes over several devices or machines (TPUs, workers, parameter servers, clusters); "
                    "tapecli has one CPU device, where MirroredStrategy and OneDeviceStrategy run one replica")
OUT_OF_SCOPE.update({name: _SEVERAL_DEVICES for name in (
    "tf.distribute.MultiWorkerMirroredStrategy tf.distribute.ParameterServerStrategy tf.distribute.TPUStrategy "
    "tf.distribute.CrossDeviceOps tf.distribute.HierarchicalCopyAllReduce tf.distribute.NcclAllReduce "
    "tf.distribute.ReductionToOneDevice tf.distribute.Server tf.distribute.experimental_set_strategy").split()})

# Whole modules tapecli leaves out: every function of theirs is out of scope for the same reason.
MODULES = {"tf.saved_model.": "SavedModel files (file I/O: tapecli runs a program, it does not save or load one)",
           "tf.summary.": "TensorBoard's event files (file I/O)",
           "tf.io.": "files and serialized strings (file I/O)",
           "tf.distribute.cluster_resolver.": _SEVERAL_DEVICES, "tf.distribute.coordinator.": _SEVERAL_DEVICES,
           "tf.distribute.experimental.": _SEVERAL_DEVICES}
# What those modules have that reads no file: tf.io.decode_csv parses string tensors, encode_png and decode_png
# turn an image into PNG bytes and back.
IN_SCOPE = frozenset(("tf.io.decode_csv", "tf.io.encode_png", "tf.io.decode_png"))


@hook("out_of_scope")
def reason(path: str) -> str | None:
    """Why ``path`` (``tf.io.read_file``; ``keras.`` spellings as ``tf.keras.``) is out of scope, or None."""
    if not path.startswith("tf."):
        path = "tf." + path
    if path in IN_SCOPE:
        return None
    return OUT_OF_SCOPE.get(path) or next((why for module, why in MODULES.items() if path.startswith(module)), None)


@hook("tensorflow_lacks")
def lacking(path: str, attr: str) -> tuple[str, str | None] | None:
    """TensorFlow's error and a hint where its module ``path`` has no name ``attr`` (``tf.math.matmul``:
    TensorFlow has ``tf.matmul`` and ``tf.linalg.matmul``; ``tf.clip_by_valu``: did you mean
    ``tf.clip_by_value``?), or None where it has it or where ``path`` is not one of the modules recorded in
    library/tf_names.txt (nor are ``_`` names: ``tf.__version__``)."""
    names = public_names().get(path)
    if names is None or attr in names or attr.startswith("_"):
        return None
    module = "tensorflow" + path[2:] if path.startswith("tf") else path
    message = f"module '{module}' has no attribute '{attr}'"
    where = _modules_having(attr, path)
    if where:
        return message, "TensorFlow has it as " + ", ".join(f"{p}.{attr}" for p in where[:3])
    import difflib      # (at first use, as errors.py's: only a missing name needs it)
    close = difflib.get_close_matches(attr, names, n=1, cutoff=0.8) or difflib.get_close_matches(
        attr, {n for p, found in public_names().items() if p[:2] == path[:2] for n in found}, n=1, cutoff=0.8)
    return message, f"did you mean {path if close[0] in names else _modules_having(close[0], path)[0]}.{close[0]}?" \
        if close else None


def _modules_having(attr: str, path: str) -> list[str]:
    """The modules of ``path``'s framework (tf, keras) that have ``attr``: its own kind first, then the shallower."""
    return sorted((p for p, found in public_names().items() if attr in found and p[:2] == path[:2]),
                  key=lambda p: ("keras" in p and "keras" not in path, p.count("."), p))


@functools.cache
def public_names() -> dict[str, frozenset[str]]:
    """Each module's names; ``tf.keras``'s are Keras's as well (the surface spells Keras ``tf.keras.``, and
    Keras 3's own ``keras.losses.mean_squared_error`` is missing from TensorFlow 2.21's ``tf.keras.losses``)."""
    rows = (line.split() for line in (Path(__file__).parent / "tf_names.txt").read_text().splitlines()
            if line and not line.startswith("#"))
    names = {row[0]: frozenset(row[1:]) for row in rows}
    return {path: found | names.get(path[3:], frozenset()) if path.startswith("tf.keras") else found
            for path, found in names.items()}
