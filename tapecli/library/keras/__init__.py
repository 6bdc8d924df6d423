"""Keras-lite: layers, models, losses, optimizers, metrics and initializers that follow Keras 3's
formulas in float32. Each object is a ProgramObject; computations go through ``tapecli.ops`` so tapes
record them, and optimizer updates are state changes. The names are registered by
``library/keras_names.py``."""
