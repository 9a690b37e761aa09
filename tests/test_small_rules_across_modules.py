"""Small rules' classes that need the project around a file (issue 22, from the dragen1860 tutorials):
a model class defined in another module of the project is a Keras model (TFP203), and sequences
padded in one module to the length its filter keeps have one shape where another module trains (TFP207).

Each test runs the real CLI on a project written to disk."""

from __future__ import annotations

from tests.conftest import project_findings as _findings, run_cli, write_project as _project

# dragen1860/TensorFlow-2.x-Tutorials 06-CIFAR-VGG: `class VGG16(models.Model)` in network.py, and
# main.py predicting on each 256-image batch of the test set inside the 250-epoch loop.
_NETWORK = (
    "from tensorflow.keras import layers, models\n\n"
    "class VGG16({base}):\n    def __init__(self, input_shape):\n        super().__init__()\n"
    "        self.dense = layers.Dense(10)\n\n    def call(self, x):\n        return self.dense(x)\n"
)
_MAIN = (
    "import tensorflow as tf\nfrom tensorflow.keras import datasets\nfrom network import VGG16\n\n"
    "def main():\n    (x, y), (x_test, y_test) = datasets.cifar10.load_data()\n"
    "    test_loader = tf.data.Dataset.from_tensor_slices((x_test, y_test)).batch(256)\n"
    "    model = VGG16([32, 32, 3])\n    metric = tf.keras.metrics.CategoricalAccuracy()\n"
    "    for epoch in range(250):\n        for x, y in test_loader:\n"
    "            logits = model.predict(x)\n            metric.update_state(y, logits)\n"
)




def test_predict_on_a_model_class_of_another_module_in_a_loop_is_reported(tmp_path):
    root = _project(tmp_path, {"network.py": _NETWORK.format(base="models.Model"), "main.py": _MAIN})
    assert _findings(root, "TFP203") == {("main.py", 12)}


def test_predict_on_another_modules_class_that_is_no_keras_model_is_silent(tmp_path):
    # A class of the same name that derives from no Keras model (a scikit-learn-like wrapper).
    root = _project(tmp_path, {"network.py": _NETWORK.format(base="object"), "main.py": _MAIN})
    assert _findings(root, "TFP203") == set()


# dragen1860/TensorFlow-2.x-Tutorials 21-CN-EN-Translation-BERT: tokenizer.py builds the pipeline,
# bert_train.py iterates it in its epoch loop and calls a `tf.function` on each batch.
_TOKENIZER = (
    "import numpy as np\nimport tensorflow as tf\n\n"
    "def get_tokenizer(tokenizer, MAX_SEQ_LENGTH, BATCH_SIZE):\n    examples = tf.data.TFRecordDataset('train.tfrecord')\n\n"
    "    def encode(zh, en, seq_length=MAX_SEQ_LENGTH):\n        lang1 = tokenizer.encode(zh.numpy())\n"
    "        if len(lang1) < seq_length:\n            lang1 = lang1 + list(np.zeros(seq_length - len(lang1), 'int32'))\n"
    "        lang2 = tokenizer.encode(en.numpy())\n"
    "        if len(lang2) < seq_length:\n            lang2 = lang2 + list(np.zeros(seq_length - len(lang2), 'int32'))\n"
    "        return lang1, lang2\n\n"
    "    def filter_max_length(x, y, max_length={bound}):\n"
    "        return tf.logical_and(tf.size(x) <= max_length, tf.size(y) <= max_length)\n\n"
    "    ds = examples.map(lambda zh, en: tf.py_function(encode, [zh, en], [tf.int32, tf.int32]))\n"
    "    ds = ds.filter(filter_max_length).cache()\n"
    "    return ds.shuffle(20000).padded_batch(BATCH_SIZE, padded_shapes=([-1], [-1]), drop_remainder=True)\n"
)
_BERT_TRAIN = (
    "import tensorflow as tf\nfrom tokenizer import get_tokenizer\n\n"
    "train_dataset = get_tokenizer(tokenizer, 128, 64)\n\n"
    "@tf.function\ndef train_step(inp, tar):\n    return model(inp, tar)\n\n"
    "for epoch in range(4):\n    for (batch, (inp, tar)) in enumerate(train_dataset):\n        train_step(inp, tar)\n"
)


def test_sequences_padded_in_another_module_to_the_filtered_length_trace_once(tmp_path):
    root = _project(tmp_path, {"tokenizer.py": _TOKENIZER.format(bound="MAX_SEQ_LENGTH"), "bert_train.py": _BERT_TRAIN})
    assert _findings(root, "TFP207") == set()


def test_sequences_filtered_to_another_length_than_their_padding_are_reported(tmp_path):
    root = _project(tmp_path, {"tokenizer.py": _TOKENIZER.format(bound="40"), "bert_train.py": _BERT_TRAIN})
    assert _findings(root, "TFP207") == {("bert_train.py", 12)}


# bert4keras' decoders: the library's base class runs the decoding loop and calls `self.predict`,
# which each example's subclass (another module) defines with one `model.predict` per token.
_DECODING = (
    "import numpy as np\nfrom tensorflow import keras\n\nclass AutoRegressiveDecoder:\n"
    "    def __init__(self, maxlen):\n        self.maxlen = maxlen\n\n"
    "    def predict(self, inputs, output_ids):\n        raise NotImplementedError\n\n"
    "    def greedy(self, inputs):\n        output_ids = np.zeros((1, 0), dtype=int)\n"
    "        for step in range(self.maxlen):\n            probas = self.predict(inputs, output_ids)\n"
    "            output_ids = np.concatenate([output_ids, probas.argmax(1)[:, None]], 1)\n"
    "        return output_ids\n"
)
# The same base calling it once, with no loop.
_ONE_CALL = _DECODING.replace("        for step in range(self.maxlen):\n            probas", "        probas").replace(
    "            output_ids = np.concatenate", "        output_ids = np.concatenate")
_GENERATOR = (
    "import numpy as np\nfrom tensorflow import keras\nfrom decoding import AutoRegressiveDecoder\n\n"
    "model = keras.models.load_model('lm.keras')\n\nclass Generator(AutoRegressiveDecoder):\n"
    "    def predict(self, inputs, output_ids):\n        token_ids = np.array([inputs + list(output_ids[0])])\n"
    "        return model.predict(token_ids)\n\nprint(Generator(64).greedy([101]))\n"
)


def test_an_override_called_from_a_base_class_loop_in_another_module_is_reported(tmp_path):
    root = _project(tmp_path, {"decoding.py": _DECODING, "main.py": _GENERATOR})
    assert _findings(root, "TFP203") == {("main.py", 10)}


def test_an_override_the_base_class_calls_once_is_silent(tmp_path):
    assert "for step" not in _ONE_CALL
    root = _project(tmp_path, {"decoding.py": _ONE_CALL, "main.py": _GENERATOR})
    assert _findings(root, "TFP203") == set()


def test_an_override_that_calls_back_the_base_class_loop_is_still_reported(tmp_path):
    # Guarded recursion between the two modules: the override restarts the base's `greedy` on a
    # long input, and `greedy`'s loop calls the override. The walk over callers must end (it once
    # bounced between the modules until Python's recursion limit, losing the finding to TFP002).
    recursive = _GENERATOR.replace(
        "    def predict(self, inputs, output_ids):\n",
        "    def predict(self, inputs, output_ids):\n        if len(inputs) > 512:\n"
        "            return self.greedy(inputs[-512:])\n",
    )
    assert "self.greedy" in recursive
    root = _project(tmp_path, {"decoding.py": _DECODING, "main.py": recursive})
    result = run_cli("check", "--no-cache", "--select", "TFP002,TFP203", ".", cwd=root)
    assert "TFP002" not in result.stdout, result.stdout
    assert _findings(root, "TFP203") == {("main.py", 12)}


# keras-YOLOv3-model-set's ImageNet trainer: the backbone builder lives in another module of the
# project and returns a tf.keras functional `Model(...)`; the trainer fits it with `fit_generator`.
_BACKBONE = (
    "from {keras}.models import Model\nfrom {keras}.layers import Input, Dense\n\n"
    "def ShuffleNet(input_shape, include_top=True):\n    inputs = Input(shape=input_shape)\n"
    "    model = Model(inputs, Dense(10)(inputs), name='shufflenet')\n    return model\n"
)
_TRAINER = (
    "import tensorflow as tf\nfrom shufflenet import ShuffleNet\n\n"
    "model = ShuffleNet(input_shape=(224, 224, 3))\nmodel.compile(optimizer='adam', loss='categorical_crossentropy')\n"
    "model.fit_generator(train_generator, steps_per_epoch=100, epochs=10)\n"
)


def test_fit_generator_on_a_tf_keras_model_another_module_builds_is_reported(tmp_path):
    root = _project(tmp_path, {"shufflenet.py": _BACKBONE.format(keras="tensorflow.keras"), "train.py": _TRAINER,
                               "requirements.txt": "tensorflow>=2.4\n"})
    assert _findings(root, "TFP402") == {("train.py", 6)}


def test_fit_generator_on_a_standalone_keras_model_of_another_module_needs_a_known_version(tmp_path):
    # Standalone Keras follows TensorFlow's version only from 2.6: with no version known, silent.
    root = _project(tmp_path, {"shufflenet.py": _BACKBONE.format(keras="keras"), "train.py": _TRAINER})
    assert _findings(root, "TFP402") == set()
