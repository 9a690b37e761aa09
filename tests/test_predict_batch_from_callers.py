"""TFP203 on a batch whose size a method's callers give: the Hands-On Image Generation GANs draw the
generator's input inside the discriminator step from a `batch_size` parameter that `train` passes on
from the module constant the notebook sets."""

from __future__ import annotations

import pytest

from tests.conftest import lint

_GAN = (
    "import tensorflow as tf\nfrom tensorflow.keras import layers, Model\n\n"
    "class CGAN():\n"
    "    def __init__(self, z_dim):\n        self.z_dim = z_dim\n"
    "        z = layers.Input(shape=(z_dim,))\n        self.generator = Model(z, layers.Dense(784)(z))\n"
    "        x = layers.Input(shape=(784,))\n        self.discriminator = Model(x, layers.Dense(1)(x))\n\n"
    "    def train_discriminator(self, real_images, batch_size):\n"
    "        fake_images = self.generator.predict(tf.random.normal((batch_size, self.z_dim)))\n"
    "        with tf.GradientTape() as tape:\n"
    "            loss = tf.reduce_mean(self.discriminator(fake_images) - self.discriminator(real_images))\n"
    "        grads = tape.gradient(loss, self.discriminator.trainable_variables)\n"
    "        self.opt.apply_gradients(zip(grads, self.discriminator.trainable_variables))\n\n"
    "    def train(self, data_generator, batch_size{default}, steps=5000):\n"
    "        for i in range(steps):\n"
    "            self.train_discriminator(next(data_generator), batch_size)\n\n"
    "BATCH_SIZE = {size}\ngan = CGAN(100)\n{call}\n"
)


@pytest.mark.parametrize("default,size,call", [
    ("", 400, "gan.train(data, BATCH_SIZE)"),
    ("", 400, "gan.train(data, batch_size=BATCH_SIZE, steps=2000)"),
    ("=64", 400, "gan.train(data)"),
])
def test_a_step_batch_whose_size_the_callers_pass_is_a_small_batch(default, size, call):
    found = lint(_GAN.format(default=default, size=size, call=call), ["TFP203"])
    assert [d.code for d in found] == ["TFP203"]


@pytest.mark.parametrize("default,size,call", [
    ("", 200000, "gan.train(data, BATCH_SIZE)"),  # a shard predict batches well
    ("", 400, "gan.train(data, batch_size=int(sys.argv[1]))"),  # a size the source does not show
    ("", 400, "pass"),  # nobody in the file calls train: the size is unknown
    # a lambda's parameter, not the module's `batch_size = 1`
    ("", 200000, "batch_size = 1\nrun = lambda batch_size: gan.train(data, batch_size)\nrun(BATCH_SIZE)"),
    # also handed to a thread, which may pass anything
    ("", 200000, "gan.train(data, 1)\nthreading.Thread(target=gan.train, args=(data, BATCH_SIZE)).start()"),
])
def test_a_step_batch_of_unknown_or_large_size_stays_silent(default, size, call):
    assert lint(_GAN.format(default=default, size=size, call=call), ["TFP203"]) == []
