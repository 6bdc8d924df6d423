# Training loop workload: a Keras MLP (64 -> 128 relu -> 10), batch 256, 2,000 Adam steps (the long loop), TF as written.
import tensorflow as tf


X = tf.random.normal((256, 64), seed=1)
Y = tf.random.uniform((256,), maxval=10, dtype=tf.int32, seed=2)

model = tf.keras.Sequential([
    tf.keras.layers.Dense(128, activation="relu"),
    tf.keras.layers.Dense(10),
])
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
opt = tf.keras.optimizers.Adam(learning_rate=1e-3)

for step in range(2000):
    with tf.GradientTape() as tape:
        logits = model(X, training=True)
        loss = loss_fn(Y, logits)
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))

