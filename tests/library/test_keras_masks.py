"""Keras masks through the library's layers: what each layer class does with a mask, as Keras 3.15 says."""
import inspect

import pytest

from conftest import run_program
from tapecli.errors import TdfValueError
from tapecli.library.keras.layers import Layer

# Keras 3.15's answer for each layer class (recorded from Keras, each made with ARGUMENTS' arguments): whether it
# supports masking (``layer.supports_masking``: its output keeps or computes a mask), whether its call takes a mask
# (``mask`` or a ``NAME_mask`` other than attention_mask among ``layer.call``'s parameters: it consumes one), and
# whether it computes its output's mask itself (``not keras.src.utils.is_default(layer.compute_mask)``)
KERAS = {
    "Dense": (True, False, False),
    "Activation": (True, False, False),
    "Flatten": (False, False, False),
    "Dropout": (True, False, False),
    "Embedding": (False, False, True),
    "Masking": (True, False, True),
    "SimpleRNN": (True, True, True),
    "LSTM": (True, True, True),
    "GRU": (True, True, True),
    "SimpleRNNCell": (False, False, False),
    "LSTMCell": (False, False, False),
    "GRUCell": (False, False, False),
    "StackedRNNCells": (False, False, False),
    "RNN": (True, True, True),
    "Add": (True, False, True),
    "Subtract": (True, False, True),
    "Multiply": (True, False, True),
    "Maximum": (True, False, True),
    "Minimum": (True, False, True),
    "Average": (True, False, True),
    "Concatenate": (True, False, True),
    "Dot": (True, False, True),
    "Normalization": (True, False, False),
    "GroupNormalization": (True, False, False),
    "RMSNormalization": (False, False, False),
    "PReLU": (True, False, False),
    "Rescaling": (True, False, False),
    "UnitNormalization": (True, False, False),
    "ReLU": (True, False, False),
    "LeakyReLU": (True, False, False),
    "ELU": (True, False, False),
    "Softmax": (True, True, False),
    "Reshape": (False, False, False),
    "Permute": (False, False, False),
    "RepeatVector": (False, False, False),
    "GlobalAveragePooling1D": (True, True, True),
    "GlobalAveragePooling2D": (False, False, False),
    "GlobalAveragePooling3D": (False, False, False),
    "GlobalMaxPooling1D": (False, False, False),
    "GlobalMaxPooling2D": (False, False, False),
    "GlobalMaxPooling3D": (False, False, False),
    "ZeroPadding1D": (False, False, False),
    "ZeroPadding2D": (False, False, False),
    "ZeroPadding3D": (False, False, False),
    "Cropping1D": (False, False, False),
    "Cropping2D": (False, False, False),
    "Cropping3D": (False, False, False),
    "UpSampling1D": (False, False, False),
    "UpSampling2D": (False, False, False),
    "UpSampling3D": (False, False, False),
    "Lambda": (False, True, True),
    "GaussianNoise": (True, False, False),
    "GaussianDropout": (True, False, False),
    "SpatialDropout1D": (True, False, False),
    "SpatialDropout2D": (True, False, False),
    "SpatialDropout3D": (True, False, False),
    "EinsumDense": (False, False, False),
    "Attention": (True, True, True),
    "AdditiveAttention": (True, True, True),
    "MultiHeadAttention": (True, True, False),
    "Bidirectional": (True, True, True),
    "TimeDistributed": (True, True, False),
    "LayerNormalization": (True, False, False),
    "BatchNormalization": (True, True, False),
    "SpectralNormalization": (False, False, False),
    "CategoryEncoding": (False, False, False),
    "Discretization": (False, False, False),
    "Resizing": (False, False, False),
    "CenterCrop": (False, False, False),
    "RandomFlip": (False, False, False),
    "RandomRotation": (False, False, False),
    "RandomZoom": (False, False, False),
    "RandomTranslation": (False, False, False),
    "RandomContrast": (False, False, False),
    "RandomBrightness": (False, False, False),
    "RandomCrop": (False, False, False),
    "ActivityRegularization": (True, False, False),
    "AlphaDropout": (True, False, False),
    "StringLookup": (False, False, False),
    "IntegerLookup": (False, False, False),
    "TextVectorization": (False, False, False),
    "Hashing": (False, False, False),
    "HashedCrossing": (False, False, False),
    "Conv1D": (False, False, False),
    "Conv2D": (False, False, False),
    "Conv3D": (False, False, False),
    "Conv1DTranspose": (False, False, False),
    "Conv2DTranspose": (False, False, False),
    "Conv3DTranspose": (False, False, False),
    "DepthwiseConv1D": (False, False, False),
    "DepthwiseConv2D": (False, False, False),
    "SeparableConv1D": (False, False, False),
    "SeparableConv2D": (False, False, False),
    "ConvLSTM1D": (True, True, True),
    "ConvLSTM2D": (True, True, True),
    "ConvLSTM3D": (True, True, True),
    "MaxPooling1D": (False, False, False),
    "MaxPooling2D": (False, False, False),
    "MaxPooling3D": (False, False, False),
    "AveragePooling1D": (False, False, False),
    "AveragePooling2D": (False, False, False),
    "AveragePooling3D": (False, False, False),
    "GroupQueryAttention": (True, True, False),
    "Identity": (True, False, False),
    "InputLayer": (False, False, False),
    **dict.fromkeys((f"Adaptive{kind}Pooling{rank}D" for kind in ("Average", "Max") for rank in (1, 2, 3)),
                    (False, False, False)),
}

ARGUMENTS = {
    "Dense": "2", "Activation": "'relu'", "Dropout": "0.5", "Embedding": "10, 4", "SimpleRNN": "2", "LSTM": "2",
    "GRU": "2", "SimpleRNNCell": "2", "LSTMCell": "2", "GRUCell": "2", "StackedRNNCells": "[keras.layers.LSTMCell(2)]",
    "RNN": "keras.layers.LSTMCell(2)", "Dot": "1", "Reshape": "(2,)", "Permute": "(1,)", "RepeatVector": "2",
    "Lambda": "lambda x: x", "GaussianNoise": "0.1", "GaussianDropout": "0.1", "SpatialDropout1D": "0.1",
    "SpatialDropout2D": "0.1", "SpatialDropout3D": "0.1", "EinsumDense": "'ab,bc->ac', 2",
    "MultiHeadAttention": "2, 2", "Bidirectional": "keras.layers.LSTM(2)", "TimeDistributed": "keras.layers.Dense(2)",
    "SpectralNormalization": "keras.layers.Dense(2)", "CategoryEncoding": "3", "Resizing": "2, 2",
    "CenterCrop": "2, 2", "RandomRotation": "0.1", "RandomZoom": "0.1", "RandomTranslation": "0.1, 0.1",
    "RandomContrast": "0.1", "RandomBrightness": "0.1", "RandomCrop": "2, 2", "AlphaDropout": "0.1",
    "HashedCrossing": "3", "Hashing": "3", "Rescaling": "1.0", "AveragePooling1D": "2", "AveragePooling2D": "2",
    "AveragePooling3D": "2", "DepthwiseConv1D": "2", "DepthwiseConv2D": "2", "GroupQueryAttention": "2, 2, 1",
    "Discretization": "bin_boundaries=[0.0]", "GroupNormalization": "groups=1", "InputLayer": "shape=(2,)",
    **{f"Adaptive{kind}Pooling{rank}D": "2" for kind in ("Average", "Max") for rank in (1, 2, 3)},
    **{name: "2, 2" for name in ("Conv1D Conv2D Conv3D Conv1DTranspose Conv2DTranspose Conv3DTranspose "
                                 "SeparableConv1D SeparableConv2D ConvLSTM1D ConvLSTM2D ConvLSTM3D").split()}}


def _consumes(layer) -> bool:
    run = type(layer).run
    return bool(layer.takes_mask) or run is not None and any(
        p == "mask" or p.endswith("_mask") and p != "attention_mask" for p in inspect.signature(run).parameters)


def test_each_layer_class_supports_consumes_and_computes_masks_as_keras():
    names = sorted(KERAS)
    program = "import keras\n" + "".join(f"l{i} = keras.layers.{n}({ARGUMENTS.get(n, '')})\n"
                                         for i, n in enumerate(names))
    r = run_program(program)
    got = {}
    for i, n in enumerate(names):
        layer = r.scope.vars[f"l{i}"]
        got[n] = (bool(layer.supports_masking), _consumes(layer), type(layer).compute_mask is not Layer.compute_mask)
    assert {n: v for n, v in got.items() if v != KERAS[n]} == {}


def test_every_registered_layer_class_has_keras_mask_behaviour_recorded():
    """A layer class added later is in the table of Keras's mask behaviour (else its masks go untested)."""
    from tapecli.interpreter.registry import BUILTINS
    from tapecli.library.keras.models import Model
    import tapecli.library.keras_names  # noqa: F401  (registers the Keras names)
    missing = sorted(name for name, registered in BUILTINS.items()
                     if isinstance(getattr(registered, "makes", None), type) and issubclass(registered.makes, Layer)
                     and not issubclass(registered.makes, Model) and "." not in name and name not in KERAS
                     and registered.makes.__name__ not in KERAS)
    assert missing == []


@pytest.mark.parametrize("source, message", [
    ("keras.layers.Add().compute_mask([a, a], m)", "`mask` should be a list"),
    ("keras.layers.Concatenate().compute_mask([a, a], [m])", "should have the same length"),
    ("keras.layers.Softmax()(a, mask=m)", "Each mask dimension must be 1 or match"),
    ("keras.layers.TimeDistributed(keras.layers.Dense(2))(a, mask=m[0])", "must be at least 2D"),
    ("keras.layers.BatchNormalization()(a, mask=m[0], training=True)", "one dimension less than the inputs"),
])
def test_a_mask_keras_refuses_is_refused_with_its_message(source, message):
    with pytest.raises(TdfValueError, match=message):
        run_program("import keras\nimport numpy as np\na = np.ones((2, 3, 4), 'float32')\n"
                    f"m = np.array([[True, True, False], [True, False, False]])\ny = {source}\n")
