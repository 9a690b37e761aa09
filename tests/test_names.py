"""Every spelling of a TensorFlow/Keras name reaches the same canonical name."""

from __future__ import annotations

import libcst as cst
import pytest

from tflint_perf.analysis.analyses import AnalysedModule
from tflint_perf.analysis.names import ImportTable


def resolved(source: str) -> str:
    module = cst.parse_module(source)
    model = AnalysedModule(module)
    last = module.body[-1].body[0].value  # the final expression statement
    return model.resolve(last.func if isinstance(last, cst.Call) else last)


@pytest.mark.parametrize(
    "source",
    [
        "import tensorflow as tf\ntf.data.Dataset\n",
        "import tensorflow\ntensorflow.data.Dataset\n",
        "from tensorflow.data import Dataset\nDataset\n",
        "from tensorflow import data as tfdata\ntfdata.Dataset\n",
        "import tensorflow as tf2\ntf2.data.Dataset\n",
        "import tensorflow.compat.v1 as tf\ntf.data.Dataset\n",
        "import tensorflow.compat.v2 as tf\ntf.data.Dataset\n",
        "import tensorflow as tf\nDS = tf.data.Dataset\nDS\n",  # a module-level alias
    ],
)
def test_dataset_spellings(source):
    assert resolved(source) == "tf.data.Dataset"


@pytest.mark.parametrize(
    "source",
    [
        "import tensorflow as tf\ntf.keras.layers.Dense\n",
        "from tensorflow import keras\nkeras.layers.Dense\n",
        "import keras\nkeras.layers.Dense\n",
        "from keras import layers\nlayers.Dense\n",
        "from tensorflow.keras.layers import Dense\nDense\n",
        "import tensorflow.compat.v1 as tf\ntf.keras.layers.Dense\n",
        "import tf_keras\ntf_keras.layers.Dense\n",
    ],
)
def test_keras_spellings(source):
    assert resolved(source) == "keras.layers.Dense"


@pytest.mark.parametrize(
    "source,expected",
    [
        ("import tensorflow as tf\ntf.data.experimental.AUTOTUNE\n", "tf.data.AUTOTUNE"),
        ("import tensorflow.compat.v1 as tf\ntf.py_func\n", "tf.py_func"),
        ("import tensorflow as tf\ntf.compat.v1.py_func\n", "tf.py_func"),
        ("import tensorflow as tf\ntf.compat.v1.Session\n", "tf.Session"),
        ("import tensorflow as tf\ntf.random_uniform\n", "tf.random.uniform"),
        ("import tensorflow_datasets as tfds\ntfds.load\n", "tfds.load"),
        ("from tensorflow.keras.layers.experimental.preprocessing import RandomFlip\nRandomFlip\n",
         "keras.layers.RandomFlip"),
    ],
)
def test_moved_and_compat_names(source, expected):
    assert resolved(source) == expected


@pytest.mark.parametrize(
    "source",
    [
        "tf.data.Dataset\n",  # never imported
        "import pandas as tf\ntf.data.Dataset\n",  # not TensorFlow at all
        "import tensorflow as tf\ntf = make_fake()\ntf.data.Dataset\n",  # rebound: ambiguous
        "from mylib import keras\nkeras.layers.Dense\n",
    ],
)
def test_unknown_or_ambiguous_names_resolve_to_nothing(source):
    assert resolved(source) is None


def _table(source: str) -> ImportTable:
    table = ImportTable()
    for statement in cst.parse_module(source).body:
        for small in getattr(statement, "body", ()):
            if isinstance(small, cst.Import):
                table.add_import(small)
            elif isinstance(small, cst.ImportFrom):
                table.add_import_from(small)
    return table


@pytest.mark.parametrize(
    "source,expected",
    [
        ("import tensorflow as tf\n", True),
        ("import tensorflow.compat.v1 as tf\n", True),
        ("from keras import layers\n", True),
        ("from tensorflow.keras.layers import *\n", True),
        ("import tf_keras\n", True),
        ("import tensorflow_datasets as tfds\n", True),
        ("import tensorflow as tf\ntf = None\n", True),  # rebinding the name does not make it non-TF code
        ("import numpy as np\nfrom functools import partial\nimport tqdm\n", False),
        ("from . import keras\nimport tensorflow_addons_like\nimport mytensorflow\n", False),
        ("# import tensorflow\ntext = 'keras'\n", False),
    ],
)
def test_imports_framework_is_any_tensorflow_or_keras_import(source, expected):
    assert _table(source).imports_framework is expected


def test_name_uses_counts_the_name_itself_not_attributes_keywords_or_shadowing_parameters():
    from tflint_perf.analysis.names import name_uses

    tree = cst.parse_module(
        "dataset = make()\n"
        "print(dataset)\n"
        "self.dataset = other\n"           # an attribute named like it
        "fit(dataset=other, x=dataset)\n"  # a keyword named like it, and one real use
        "def step(dataset):\n    return dataset.batch(2)\n"  # a parameter of that name
        "g = lambda dataset: dataset\n"
    )
    assert name_uses(tree, "dataset") == 3  # the assignment, the print, `x=dataset`
