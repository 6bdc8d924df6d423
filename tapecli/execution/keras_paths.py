"""The Keras classes that CPython's run of a TensorFlow program gives as Python classes, by their tf paths: the
bases a program derives from (keras_classes.py, keras_bases.py) and the legacy text preprocessing tf.keras keeps
(keras_text.py)."""
from __future__ import annotations

from tapecli.execution import keras_bases, keras_text
from tapecli.execution.keras_classes import Layer as KerasLayer
from tapecli.execution.keras_classes import Model as KerasModel

KERAS_CLASSES = {("keras", "layers", "Layer"): KerasLayer, ("keras", "Layer"): KerasLayer,
                 ("keras", "Model"): KerasModel, ("keras", "models", "Model"): KerasModel,
                 ("keras", "losses", "Loss"): keras_bases.Loss, ("keras", "Loss"): keras_bases.Loss,
                 ("keras", "metrics", "Metric"): keras_bases.Metric, ("keras", "Metric"): keras_bases.Metric,
                 ("keras", "callbacks", "Callback"): keras_bases.Callback,
                 ("keras", "callbacks", "LambdaCallback"): keras_bases.LambdaCallback,
                 ("keras", "optimizers", "schedules", "LearningRateSchedule"): keras_bases.LearningRateSchedule,
                 ("keras", "regularizers", "Regularizer"): keras_bases.Regularizer,
                 ("keras", "Regularizer"): keras_bases.Regularizer,
                 ("keras", "constraints", "Constraint"): keras_bases.Constraint,
                 ("keras", "initializers", "Initializer"): keras_bases.Initializer,
                 ("keras", "Initializer"): keras_bases.Initializer,
                 ("keras", "Constraint"): keras_bases.Constraint,
                 ("keras", "utils", "PyDataset"): keras_bases.PyDataset,
                 ("keras", "utils", "Sequence"): keras_bases.PyDataset,      # (Keras 3's Sequence is PyDataset)
                 ("keras", "preprocessing", "text", "Tokenizer"): keras_text.Tokenizer,
                 ("keras", "preprocessing", "text", "text_to_word_sequence"): keras_text.text_to_word_sequence}
