# Keras fit workload with a program's own train_step and test_step (keras.io's "Customizing what happens in fit()",
# in straight-line code): fit.py's MLP (64 -> 128 relu -> 10), data, batches, epochs and validation pass, its loss
# (SparseCategoricalCrossentropy(from_logits=True)) and accuracy tracked by the steps' own metrics.
import numpy as np
import tensorflow as tf


class StepModel(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = tf.keras.layers.Dense(128, activation="relu")
        self.out = tf.keras.layers.Dense(10)
        self.loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        self.loss_tracker = tf.keras.metrics.Mean(name="loss")
        self.accuracy = tf.keras.metrics.SparseCategoricalAccuracy(name="accuracy")

    def call(self, x, training=False):
        return self.out(self.hidden(x))

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            logits = self(x, training=True)
            loss = self.loss_fn(y, logits)
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        self.loss_tracker.update_state(loss)
        self.accuracy.update_state(y, logits)
        return {"loss": self.loss_tracker.result(), "accuracy": self.accuracy.result()}

    def test_step(self, data):
        x, y = data
        logits = self(x, training=False)
        self.loss_tracker.update_state(self.loss_fn(y, logits))
        self.accuracy.update_state(y, logits)
        return {"loss": self.loss_tracker.result(), "accuracy": self.accuracy.result()}

    @property
    def metrics(self):
        return [self.loss_tracker, self.accuracy]


tf.keras.utils.set_random_seed(0)
rng = np.random.default_rng(1)
X = rng.standard_normal((8192, 64)).astype("float32")
Y = rng.integers(0, 10, size=8192)

model = StepModel()
model.build((None, 64))
model.compile(optimizer=tf.keras.optimizers.Adam(learning_rate=1e-3))
history = model.fit(X, Y, batch_size=32, epochs=2, validation_data=(X[:1024], Y[:1024]), verbose=0)
print(history.history)
