"""tapecli: gradients of small tensor programs, with tf.GradientTape's semantics."""
__version__ = "0.1.0"
