"""The frameworks whose programs run on the interpreter (until the TensorFlow library moves to this room)."""
FRAMEWORKS = ("tensorflow", "keras", "tf_keras")
# The ones a program may import to run on CPython, where it uses only what execution/tensorflow.py gives
# (``keras`` is TensorFlow's ``tf.keras`` there).
TENSORFLOW = "tensorflow"
KERAS = "keras"
BRIDGED = (TENSORFLOW, KERAS)
