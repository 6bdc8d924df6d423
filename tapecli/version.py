"""The package version, in a module of its own so that any room can read it without importing the API."""
__version__ = "0.1.0"
# The TensorFlow release whose semantics tapecli follows (docs/tf-surface.md): a program's ``tf.__version__``.
TENSORFLOW_VERSION = "2.21.0"
# The Keras release whose semantics tapecli's Keras follows (docs/keras.md): a program's ``keras.__version__``.
KERAS_VERSION = "3.15.1"
