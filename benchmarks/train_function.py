# Training loop workload: train.py's MLP and 200 Adam steps, the loop in a function, as TensorFlow's tutorials
# write it (``def train(epochs): for step in ...``): its names are the function's locals.
import tensorflow as tf


X = tf.random.normal((256, 64), seed=1)
Y = tf.random.uniform((256,), maxval=10, dtype=tf.int32, seed=2)

model = tf.keras.Sequential([
    tf.keras.layers.Dense(128, activation="relu"),
    tf.keras.layers.Dense(10),
])
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
opt = tf.keras.optimizers.Adam(learning_rate=1e-3)


def train(steps):
    for step in range(steps):
        with tf.GradientTape() as tape:
            logits = model(X, training=True)
            loss = loss_fn(Y, logits)
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
    return loss


loss = train(200)
