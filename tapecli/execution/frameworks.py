"""The frameworks whose programs run on the interpreter (until the TensorFlow library moves to this room)."""
FRAMEWORKS = ("tensorflow", "keras", "tf_keras")
