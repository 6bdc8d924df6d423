"""The frameworks whose programs run on the interpreter (until the TensorFlow library moves to this room)."""
FRAMEWORKS = ("tensorflow", "keras", "tf_keras")
# The one a program may import to run on CPython, where it uses only what execution/tensorflow.py gives.
TENSORFLOW = "tensorflow"
