"""How much a training run costs as the code shows it: the steps loops run in all (``StepLoops.
runs_briefly``, TFP206), whether ``fit`` is fed from Python (``feeders.fed_by_python``, TFP209), and
the toy-set sizes ``DataSizes`` reads from NumPy and TensorFlow calls."""

from __future__ import annotations

import pytest

from tflint_perf.analysis.data_size import DataSizes
from tflint_perf.analysis.feeders import fed_by_python
from tests.conftest import model_of, site_named


_PIPELINES = (
    "features = tf.random.normal(shape=(1000, 2))\nlabels = features[:, 0] * 2.0\n"
    "toy = tf.data.Dataset.from_tensor_slices((features, labels))\ntoy = toy.shuffle(1000)\ntoy = toy.batch(10)\n"
    "toy_rows = tf.data.Dataset.from_tensor_slices(np.zeros(200)).map(f).batch(1)\n"
    "big = tf.data.Dataset.from_tensor_slices(np.zeros((60000, 784))).batch(32).prefetch(1)\n"
)


@pytest.mark.parametrize(
    "loops,brief",
    [
        ("for i in range(100):\n", True),
        ("for i in range(500):\n", True),
        ("for i in range(1000):\n", False),
        ("for epoch in range(20):\n    for j in range(25):\n", True),  # 500 in all
        ("for epoch in range(300):\n    for x in dataset:\n", False),  # the inner count is not shown
        ("while step < 100:\n", False),
        ("for i in range(STEPS):\n", True),  # a module constant
        ("for i in range(args.steps):\n", False),  # a flag: may differ at run time
        ("for epoch in range(1, STEPS // 100 + 1):\n", False),  # `//` is not read: unknown
        ("for epoch in range(1, 2 + 1):\n    for x, y in toy:\n", True),  # 3 x 100 batches of 10 rows
        ("for epoch in range(2):\n    for x, y in enumerate(toy_rows):\n", True),  # 2 x 200: rows <= numbers
        ("for epoch in range(6):\n    for x, y in toy:\n", False),  # 6 x 100 = 600 steps
        ("for epoch in range(3):\n    for x in big:\n", False),  # 60,000 rows by 32: 1,875 a pass
        ("for epoch in range(100):\n    for x in toy.repeat():\n", False),  # endless
        ("for x in big.take(300):\n", True),  # 300 batches taken
    ],
)
def test_runs_briefly_counts_the_steps_of_every_loop(loops, brief):
    depth = loops.count("\n")
    source = "import tensorflow as tf\nimport numpy as np\nSTEPS = 200\n" + _PIPELINES + loops + "    " * depth + "step(x)\n"
    model = model_of(source)
    site = site_named(model, "step(x)")
    assert model.step_loops.runs_briefly(site.loops) is brief


@pytest.mark.parametrize(
    "source,fed",
    [
        ("from tensorflow.keras.preprocessing.image import ImageDataGenerator\ngen = ImageDataGenerator(rescale=1/255)\n"
         "data = gen.flow_from_directory('train/')\n", True),
        ("from tensorflow.keras.preprocessing.image import ImageDataGenerator\n"
         "data = ImageDataGenerator().flow(x, y, batch_size=32)\n", True),
        ("def batches():\n    while True:\n        yield next_batch()\ndata = batches()\n", True),
        ("import tensorflow as tf\nclass Batches(tf.keras.utils.Sequence):\n    def __getitem__(self, i):\n"
         "        return load(i)\ndata = Batches()\n", True),
        # A function that returns (not yields) data, or whose nested def yields: not a generator.
        ("def load():\n    def inner():\n        yield 1\n    return arrays()\ndata = load()\n", False),
        ("import tensorflow as tf\ndata = tf.data.Dataset.from_tensor_slices((x, y)).batch(32)\n", False),
        # `flow` on something not known to be an ImageDataGenerator.
        ("data = augmenter.flow(x, y)\n", False),
    ],
)
def test_fed_by_python(source, fed):
    model = model_of(source + "model.fit(data, epochs=5)\n")
    site = site_named(model, "model.fit(data, epochs=5)")
    assert fed_by_python(model, site.node.args[0].value, site.function, site.place) is fed


@pytest.mark.parametrize(
    "source,toy",
    [
        ("import numpy as np\nX = np.arange(-100, 100, 4)\ndata = X[:40]\n", True),
        ("import numpy as np\nimport tensorflow as tf\nX = np.arange(0, 1000, 5)\ndata = tf.expand_dims(X[:150], axis=-1)\n", True),
        ("from sklearn.datasets import make_circles\nn = 1000\ndata, labels = make_circles(n, noise=0.03)\n", True),
        ("import numpy as np\ndata = np.arange(0, 10_000_000, 2)\n", False),  # 5 million numbers
        ("import tensorflow as tf\ndata = tf.cast(images, tf.float32)\n", False),  # of unknown size
        # `tf.constant` fills its `shape`: a scalar broadcast to 200,000 rows is not one number.
        ("import tensorflow as tf\ndata = tf.constant(0., shape=(200000, 20))\n", False),
        ("import tensorflow as tf\ndata = tf.constant(1., tf.float32, (50, 2))\n", True),
    ],
)
def test_toy_sets_made_by_numpy_and_tensorflow_calls(source, toy):
    model = model_of(source + "use(data)\n")
    site = site_named(model, "use(data)")
    assert DataSizes(model).is_toy_dataset(site.node.args[0].value, site.function, site.place) is toy
