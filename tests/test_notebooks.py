"""Jupyter notebooks through the real command line: cells as one module, cell positions, fixes
written back into the right cells with every other byte unchanged, and broken notebooks.

The notebooks in tests/notebooks/ were written for these tests: a TF2 Keras notebook and a TF1
session notebook in Jupyter's own layout (with magics, shell lines, outputs and markdown), a
Colab-style one (ASCII escapes, two-space indentation, a source stored as one string, no final
newline), one with a Python 2 cell and one that is not valid JSON.
"""

from __future__ import annotations

import difflib
import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import REPO, run_cli
from tflint_perf.notebook import Notebook, NotebookError

NOTEBOOKS = REPO / "tests" / "notebooks"


@pytest.fixture
def notebooks(tmp_path) -> Path:
    for path in NOTEBOOKS.glob("*.ipynb"):
        shutil.copy(path, tmp_path / path.name)
    return tmp_path


def findings(*args: str, cwd: Path):
    result = run_cli("check", "--output-format", "json", *args, cwd=cwd)
    assert result.returncode in (0, 1), result.stderr
    return [(d["filename"], d["cell"], d["location"]["row"], d["location"]["column"], d["code"])
            for d in json.loads(result.stdout)]


def cell_sources(path: Path):
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return ["".join(c["source"]) if isinstance(c["source"], list) else c["source"] for c in cells]


# -- findings -------------------------------------------------------------------------------------------
def test_a_pipeline_built_in_one_cell_and_trained_on_in_another_is_one_pipeline(notebooks):
    # tf2_training: the pipeline is built in cell 4 and consumed by `model.fit` in cell 8, a
    # `%%time` cell; cell 6 only looks at `take(1)` after a `tf.data.Dataset?` help line.
    assert findings("tf2_training.ipynb", cwd=notebooks) == [
        ("tf2_training.ipynb", 4, 2, 21, "TFP102"),
        ("tf2_training.ipynb", 4, 3, 36, "TFP101"),
    ]


def test_positions_count_rows_inside_the_cell_after_magics(notebooks):
    # tf1_session cell 3 starts with `%load_ext tensorboard`; the iterator is made in cell 4.
    assert findings("tf1_session.ipynb", cwd=notebooks) == [
        ("tf1_session.ipynb", 3, 4, 19, "TFP102"),
        ("tf1_session.ipynb", 3, 4, 50, "TFP101"),
    ]
    concise = run_cli("check", "tf1_session.ipynb", cwd=notebooks).stdout
    assert concise.startswith("tf1_session.ipynb:cell 3:4:19: TFP102 ")


def test_without_the_consuming_cell_there_is_no_training_pipeline(notebooks):
    path = notebooks / "tf2_training.ipynb"
    document = json.loads(path.read_text(encoding="utf-8"))
    fit_cell = document["cells"][7]
    assert "model.fit" in "".join(fit_cell["source"])
    fit_cell["source"] = ["%%bash\n", "echo model.fit is not Python here\n"]
    path.write_text(json.dumps(document, indent=1), encoding="utf-8")
    # Only the `take(1)` inspection consumes the pipeline now: neither prefetch nor map is worth a finding.
    assert [code for *_, code in findings("tf2_training.ipynb", cwd=notebooks)] == []


def test_ipython_lines_become_placeholders_row_for_row():
    notebook = Notebook((NOTEBOOKS / "tf1_session.ipynb").read_text(encoding="utf-8"))
    for cell in notebook.cells:
        assert len(cell.python.splitlines()) == len(cell.source.splitlines())
    module = notebook.module
    for line in ("%load_ext tensorboard", "!echo step", "files = !ls"):
        assert line not in module
    assert "    value = sess.run(loss)\n" in module
    rows = notebook.rows(module)
    (row,) = [i for i, line in enumerate(module.splitlines(), start=1) if line.startswith("dataset = dataset.map")]
    assert rows[row] == (3, 4)


def test_percent_and_bang_inside_a_statement_are_python():
    source = [
        'import tensorflow as tf\n',
        'message = ("%d elements"\n',
        '           % 3)\n',
        'text = """\n',
        '!important\n',
        '"""\n',
    ]
    notebook = Notebook(json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "outputs": [],
                                               "execution_count": None, "source": source}],
                                    "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    assert notebook.module == "".join(source)


def test_fixed_text_that_moved_a_cell_boundary_or_a_magic_is_refused():
    notebook = Notebook((NOTEBOOKS / "tf1_session.ipynb").read_text(encoding="utf-8"))
    boundary = f"# {notebook.token}\n"
    with pytest.raises(NotebookError, match="crossed a cell boundary"):
        notebook.changed_sources(notebook.module.replace(boundary, "", 1))
    with pytest.raises(NotebookError, match="changed IPython lines in cell 3"):
        notebook.changed_sources(notebook.module.replace(f"pass  # {notebook.token} 0\n", "", 1))
    assert notebook.changed_sources(notebook.module) == {}


# -- fixes ----------------------------------------------------------------------------------------------
EXPECTED_FIXES = {
    "tf2_training.ipynb": {
        3: "ds_train, ds_info = tfds.load('mnist', split='train', as_supervised=True, with_info=True)\n"
        "ds_train = ds_train.map(normalize, num_parallel_calls=tf.data.AUTOTUNE)\n"
        "ds_train = ds_train.shuffle(10000).batch(128).prefetch(tf.data.AUTOTUNE)",
    },
    "tf1_session.ipynb": {
        2: "%load_ext tensorboard\n"
        "features = np.random.rand(1000, 10).astype('float32')\n"
        "dataset = tf.data.Dataset.from_tensor_slices(features)\n"
        "dataset = dataset.map(\n    lambda x: x * 2,\n    num_parallel_calls=tf.data.experimental.AUTOTUNE,\n)"
        ".batch(32).repeat().prefetch(tf.data.experimental.AUTOTUNE)",
    },
    "colab_style.ipynb": {
        0: "%pip install -q tensorflow\nimport tensorflow as tf\nfrom tensorflow.data import Dataset\n"
        "# caf\u00e9 \u2615 data",
        1: "ds = Dataset.range(100).batch(10).prefetch(tf.data.AUTOTUNE)  # \u00e9tape 1\nmodel.fit(ds)",
    },
}


@pytest.mark.parametrize("name", sorted(EXPECTED_FIXES))
def test_fix_rewrites_only_the_changed_cells(notebooks, name):
    path = notebooks / name
    before = path.read_text(encoding="utf-8")
    result = run_cli("check", "--fix", name, cwd=notebooks)
    assert result.returncode == 0, result.stdout + result.stderr
    after = path.read_text(encoding="utf-8")

    expected_sources = cell_sources(NOTEBOOKS / name)
    for index, source in EXPECTED_FIXES[name].items():
        expected_sources[index] = source
    assert cell_sources(path) == expected_sources

    # Everything but the sources is the same data...
    old, new = json.loads(before), json.loads(after)
    for cell in old["cells"] + new["cells"]:
        cell.pop("source")
    assert old == new
    # ...and the same bytes: each line of the file that changed spells a fixed cell's source or one
    # of its lines (before the fix for a removed line, after it for an added one).
    fixed = EXPECTED_FIXES[name]
    original = cell_sources(NOTEBOOKS / name)
    spelled = {
        "- ": {piece for i in fixed for piece in [original[i], *original[i].splitlines(True)]},
        "+ ": {piece for i in fixed for piece in [fixed[i], *fixed[i].splitlines(True)]},
    }
    changed = [line for line in difflib.ndiff(before.splitlines(True), after.splitlines(True)) if line[:2] in spelled]
    assert changed
    for line in changed:
        value = json.loads(line[2:].strip().removeprefix('"source": ').rstrip(","))
        assert value in spelled[line[:2]], line
    assert after.endswith("\n") == before.endswith("\n")

    again = run_cli("check", "--fix", name, cwd=notebooks)
    assert again.returncode == 0 and path.read_text(encoding="utf-8") == after, "a second --fix changed the notebook"


def test_fix_keeps_a_cell_magic_first_and_imports_below_shell_lines(tmp_path):
    def code(text):
        return {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                "source": text.splitlines(keepends=True)}

    document = {"cells": [code("!pip install -q tensorflow\nfrom tensorflow.data import Dataset"),
                          code("\n%%time\nmodel.fit(Dataset.range(10).batch(2))")],
                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "magic.ipynb"
    path.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    assert run_cli("check", "--fix", "magic.ipynb", cwd=tmp_path).returncode == 0
    assert cell_sources(path) == [
        "!pip install -q tensorflow\nimport tensorflow as tf\nfrom tensorflow.data import Dataset",
        "\n%%time\nmodel.fit(Dataset.range(10).batch(2).prefetch(tf.data.AUTOTUNE))",
    ]


def test_windows_line_endings_and_form_feeds_keep_rows_and_bytes(tmp_path):
    source = ["import tensorflow as tf\n", "# section \x0c two\n", "ds = tf.data.Dataset.range(8).batch(2)\n",
              "model.fit(ds)"]
    document = {"cells": [{"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": [], "source": source}],
                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    text = json.dumps(document, indent=1, ensure_ascii=False).replace("\n", "\r\n") + "\r\n"
    path = tmp_path / "windows.ipynb"
    path.write_bytes(text.encode("utf-8"))
    assert findings("windows.ipynb", cwd=tmp_path) == [("windows.ipynb", 1, 3, 31, "TFP101")]
    assert run_cli("check", "--fix", "windows.ipynb", cwd=tmp_path).returncode == 0
    fixed = path.read_bytes().decode("utf-8")
    assert fixed == text.replace("batch(2)\\n", "batch(2).prefetch(tf.data.AUTOTUNE)\\n")


def test_diff_shows_one_diff_per_changed_cell_and_writes_nothing(notebooks):
    before = (notebooks / "tf2_training.ipynb").read_bytes()
    result = run_cli("check", "--diff", "tf2_training.ipynb", cwd=notebooks)
    assert result.returncode == 1
    assert result.stdout == (
        "--- a/tf2_training.ipynb:cell 4\n"
        "+++ b/tf2_training.ipynb:cell 4\n"
        "@@ -1,3 +1,3 @@\n"
        " ds_train, ds_info = tfds.load('mnist', split='train', as_supervised=True, with_info=True)\n"
        "-ds_train = ds_train.map(normalize)\n"
        "-ds_train = ds_train.shuffle(10000).batch(128)\n"
        "+ds_train = ds_train.map(normalize, num_parallel_calls=tf.data.AUTOTUNE)\n"
        "+ds_train = ds_train.shuffle(10000).batch(128).prefetch(tf.data.AUTOTUNE)\n"
    )
    assert (notebooks / "tf2_training.ipynb").read_bytes() == before


def test_stdin_notebook_is_fixed_to_stdout(notebooks):
    text = (notebooks / "tf1_session.ipynb").read_text(encoding="utf-8")
    result = run_cli("check", "--fix", "--stdin-filename", "session.ipynb", "-", cwd=notebooks, stdin=text)
    assert result.returncode == 0, result.stderr
    fixed = json.loads(result.stdout)
    assert "".join(fixed["cells"][2]["source"]) == EXPECTED_FIXES["tf1_session.ipynb"][2]


# -- discovery and broken notebooks ---------------------------------------------------------------------
def test_directories_include_notebooks_but_not_checkpoints(notebooks):
    checkpoints = notebooks / ".ipynb_checkpoints"
    checkpoints.mkdir()
    shutil.copy(notebooks / "tf2_training.ipynb", checkpoints / "tf2_training-checkpoint.ipynb")
    names = {name for name, *_ in findings(".", cwd=notebooks)}
    assert names == {"tf2_training.ipynb", "tf1_session.ipynb", "colab_style.ipynb"}


def test_invalid_json_is_a_clear_error_and_the_file_is_untouched(notebooks):
    before = (notebooks / "broken.ipynb").read_bytes()
    result = run_cli("check", "--fix", "broken.ipynb", "tf2_training.ipynb", cwd=notebooks)
    assert result.returncode == 1
    assert "broken.ipynb: error: not a valid notebook: invalid JSON at line 13, column 1" in result.stderr
    assert (notebooks / "broken.ipynb").read_bytes() == before
    assert "Found 2 errors (2 fixed, 0 remaining)." in result.stdout  # the other notebook was still fixed


def test_a_cell_that_is_not_python_3_is_named(notebooks):
    result = run_cli("check", "python2_cell.ipynb", cwd=notebooks)
    assert result.returncode == 1
    assert "python2_cell.ipynb: error: cell 3: syntax error at line 2" in result.stderr


@pytest.mark.parametrize(
    "document,message",
    [
        ({"cells": "tensorflow"}, "not a valid notebook: no list of cells"),
        ({"nbformat": 3, "worksheets": [{"cells": [{"input": "import tensorflow"}]}]}, "nbformat 3 notebooks"),
        ({"cells": [{"cell_type": "code", "source": 3}], "tensorflow": 1}, "cell 1 has no source text"),
    ],
)
def test_notebooks_without_a_usable_shape_are_errors(tmp_path, document, message):
    (tmp_path / "odd.ipynb").write_text(json.dumps(document), encoding="utf-8")
    result = run_cli("check", "--fix", "odd.ipynb", cwd=tmp_path)
    assert result.returncode == 1 and message in result.stderr


def test_a_notebook_in_another_language_is_skipped(tmp_path):
    document = {"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                           "source": ["library(tensorflow)\n", "ds <- tensor_slices_dataset(x)"]}],
                "metadata": {"kernelspec": {"language": "R", "name": "ir"}}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "r.ipynb").write_text(json.dumps(document), encoding="utf-8")
    result = run_cli("check", "r.ipynb", cwd=tmp_path)
    assert result.returncode == 0
    assert "r.ipynb: note: a r notebook, not Python: nothing to check" in result.stderr
