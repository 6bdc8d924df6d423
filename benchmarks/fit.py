# Keras fit workload: the train loop's MLP (64 -> 128 relu -> 10) trained by model.fit, batch 32, 2 epochs of 256
# batches with a held-out validation pass each epoch, SparseCategoricalCrossentropy(from_logits=True) and accuracy.
import numpy as np
import tensorflow as tf

tf.keras.utils.set_random_seed(0)
rng = np.random.default_rng(1)
X = rng.standard_normal((8192, 64)).astype("float32")
Y = rng.integers(0, 10, size=8192)

model = tf.keras.Sequential([
    tf.keras.Input((64,)),
    tf.keras.layers.Dense(128, activation="relu"),
    tf.keras.layers.Dense(10),
])
model.compile(optimizer=tf.keras.optimizers.Adam(learning_rate=1e-3),
              loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
history = model.fit(X, Y, batch_size=32, epochs=2, validation_data=(X[:1024], Y[:1024]), verbose=0)
print(history.history)
