"""Jupyter notebooks through the real command line: cells as one module, cell positions, fixes
written back into the right cells with every other byte unchanged, and broken notebooks.

The notebooks in tests/notebooks/ were written for these tests: a TF2 Keras notebook and a TF1
session notebook in Jupyter's own layout (with magics, shell lines, outputs and markdown), a
Colab-style one (ASCII escapes, two-space indentation, a source stored as one string, no final
newline), one with a Python 2 cell, one that is not valid JSON, and one as people write them
(automagics such as `pip install x`, an indented cell, a Python 2 cell, a `%%bash` cell, help).
"""

from __future__ import annotations

import difflib
import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import REPO, run_cli
from tflint_perf.text.diagnostics import Location
from tflint_perf.text.notebook import Notebook, NotebookError

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
        ("tf2_training.ipynb", 4, 2, 21, "TFP106"),
        ("tf2_training.ipynb", 4, 3, 36, "TFP101"),
    ]


def test_positions_count_rows_inside_the_cell_after_magics(notebooks):
    # tf1_session cell 3 starts with `%load_ext tensorboard`; the iterator is made in cell 4.
    assert findings("tf1_session.ipynb", cwd=notebooks) == [
        ("tf1_session.ipynb", 3, 4, 19, "TFP102"),
        ("tf1_session.ipynb", 3, 4, 19, "TFP106"),
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
        "dataset = dataset.batch(32).map(\n    lambda x: x * 2,\n    num_parallel_calls=tf.data.experimental.AUTOTUNE,\n)"
        ".repeat().prefetch(tf.data.experimental.AUTOTUNE)",
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
    # TFP106's finding in tf2_training has no fix (a shuffle sits between its map and batch).
    ignore = ["--ignore", "TFP106"] if name == "tf2_training.ipynb" else []
    result = run_cli("check", "--fix", *ignore, name, cwd=notebooks)
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

    again = run_cli("check", "--fix", *ignore, name, cwd=notebooks)
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
    assert names == {"tf2_training.ipynb", "tf1_session.ipynb", "colab_style.ipynb", "ipython_cells.ipynb",
                     "python2_cell.ipynb", "broken.ipynb"}


def test_invalid_json_is_a_finding_and_the_file_is_untouched(notebooks):
    before = (notebooks / "broken.ipynb").read_bytes()
    result = run_cli("check", "--fix", "--ignore", "TFP106", "broken.ipynb", "tf2_training.ipynb", cwd=notebooks)
    assert result.returncode == 1
    assert "broken.ipynb:13:1: TFP001 not a valid notebook: invalid JSON: Expecting value" in result.stdout
    assert (notebooks / "broken.ipynb").read_bytes() == before
    assert "Found 3 errors (2 fixed, 1 remaining)." in result.stdout  # the other notebook was still fixed


def test_invalid_json_is_reported_even_without_tensorflow(tmp_path):
    (tmp_path / "plots.ipynb").write_text('{"cells": [{"cell_type": "code", "source": ["import matplotlib"]}\n',
                                          encoding="utf-8")
    result = run_cli("check", "plots.ipynb", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout == "plots.ipynb:2:1: TFP001 not a valid notebook: invalid JSON: Expecting ',' delimiter\nFound 1 error.\n"


def test_a_cell_that_is_not_python_3_is_named_and_the_others_still_checked(notebooks):
    result = run_cli("check", "python2_cell.ipynb", cwd=notebooks)
    assert result.returncode == 1
    assert result.stdout.startswith("python2_cell.ipynb:cell 3:2:5: TFP002 SyntaxError: Missing parentheses in call "
                                    "to 'print'.")


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
    assert result.returncode == 1 and result.stdout.startswith("odd.ipynb:1:1: TFP001 ") and message in result.stdout


def test_a_notebook_in_another_language_is_skipped(tmp_path):
    document = {"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                           "source": ["library(tensorflow)\n", "ds <- tensor_slices_dataset(x)"]}],
                "metadata": {"kernelspec": {"language": "R", "name": "ir"}}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "r.ipynb").write_text(json.dumps(document), encoding="utf-8")
    result = run_cli("check", "r.ipynb", cwd=tmp_path)
    assert result.returncode == 0
    assert "r.ipynb: note: a r notebook, not Python: nothing to check" in result.stderr


# -- IPython as IPython reads it, and cells that do not parse -------------------------------------------
# The rules this notebook's cells are about (later rules may find more in them).
NOTEBOOK_RULES = "TFP002,TFP101,TFP102"
IPYTHON_CELLS = [
    # cell 3 is indented, cell 4 is Python 2; cell 2 has automagics, cell 5 is %%bash, cell 6 has help,
    # an automagic and `pip = 3` (Python) before the `model.fit` that makes cell 3's pipeline a training one.
    ("ipython_cells.ipynb", 3, 2, 13, "TFP102"),
    ("ipython_cells.ipynb", 3, 3, 13, "TFP101"),
    ("ipython_cells.ipynb", 4, 1, 1, "TFP002"),
]


def test_automagics_indented_cells_and_a_python_2_cell(notebooks):
    assert findings("--select", NOTEBOOK_RULES, "ipython_cells.ipynb", cwd=notebooks) == IPYTHON_CELLS
    concise = run_cli("check", "--select", NOTEBOOK_RULES, "ipython_cells.ipynb", cwd=notebooks)
    assert concise.returncode == 1
    assert concise.stdout.splitlines()[2] == ("ipython_cells.ipynb:cell 4:1:1: TFP002 SyntaxError: Missing parentheses "
                                              "in call to 'print'. Did you mean print(...)?")
    assert "Found 3 errors." in concise.stdout


def test_findings_are_ordered_by_cell_then_row(tmp_path):
    def code(text):
        return {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                "source": text.splitlines(keepends=True)}

    document = {"cells": [code("import tensorflow as tf\n\n\nds = tf.data.Dataset.range(8).map(f)"),
                          code("print 'old'"),
                          code("ds2 = tf.data.Dataset.range(8).batch(2)\nmodel.fit(ds)\nmodel.fit(ds2)")],
                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "order.ipynb").write_text(json.dumps(document, indent=1), encoding="utf-8")
    cells = [cell for _, cell, *_ in findings("order.ipynb", cwd=tmp_path)]
    assert cells == sorted(cells) and cells[0] == 1 and 2 in cells and cells[-1] == 3


def file_position(path: Path, needle: str, occurrence: str):
    """(line, column), 1-based, of ``occurrence`` inside the file line that contains ``needle``."""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if needle in line:
            return number, line.index(occurrence) + 1
    raise AssertionError(needle)


def test_github_and_sarif_point_at_the_line_of_the_notebook_file(notebooks):
    path = notebooks / "ipython_cells.ipynb"
    expected = {
        "TFP102": file_position(path, '"    ds = ds.map(lambda x: x * 2)\\n"', "map("),
        "TFP101": file_position(path, '"    ds = ds.batch(32)"', "batch("),
        "TFP002": file_position(path, '"print \\"dataset ready\\"\\n"', "print"),
    }
    github = run_cli("check", "--select", NOTEBOOK_RULES, "--output-format", "github", "ipython_cells.ipynb", cwd=notebooks).stdout.splitlines()
    assert len(github) == 3
    for line, (_, cell, row, column, code) in zip(github, IPYTHON_CELLS):
        file_line, file_column = expected[code]
        assert f",file=ipython_cells.ipynb,line={file_line},col={file_column}," in line, line
        assert line.endswith(f"::ipython_cells.ipynb:cell {cell}:{row}:{column}: {code} " + line.split(f" {code} ")[-1])
    sarif = json.loads(run_cli("check", "--select", NOTEBOOK_RULES, "--output-format", "sarif", "ipython_cells.ipynb", cwd=notebooks).stdout)
    results = sarif["runs"][0]["results"]
    assert [r["ruleId"] for r in results] == [code for *_, code in IPYTHON_CELLS]
    for result, (_, cell, row, column, code) in zip(results, IPYTHON_CELLS):
        region = result["locations"][0]["physicalLocation"]["region"]
        assert (region["startLine"], region["startColumn"]) == expected[code]
        assert result["properties"]["cell"] == cell
        assert result["properties"]["cellLocation"] == {"row": row, "column": column}


def test_a_cell_stored_as_one_string_maps_to_its_one_line(notebooks):
    path = notebooks / "colab_style.ipynb"
    line, column = file_position(path, "ds = Dataset.range(100)", "batch(")
    github = run_cli("check", "--output-format", "github", "colab_style.ipynb", cwd=notebooks).stdout
    assert f",file=colab_style.ipynb,line={line},col={column}," in github
    assert "::colab_style.ipynb:cell 2:1:25: TFP101 " in github


def test_file_positions_count_json_escapes():
    source = ['import tensorflow as tf\n', 'x = "\u00e9\\"q"; ds = tf.data.Dataset.range(3)\n']
    text = json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                                  "source": source}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)
    notebook = Notebook(text)
    column = source[1].index("ds =") + 1
    lines = text.splitlines()
    (row,) = [n for n, line in enumerate(lines, start=1) if "ds =" in line]
    assert "\\u00e9" in lines[row - 1] and '\\"' in lines[row - 1]  # escapes before the column
    assert notebook.file_location(1, Location(2, column)) == Location(row, lines[row - 1].index("ds =") + 1)
    assert notebook.file_location(1, Location(1, 1)) == Location(row - 1, lines[row - 2].index('"import') + 2)


def test_fix_keeps_an_indented_cell_indented_and_leaves_the_broken_cell(notebooks):
    path = notebooks / "ipython_cells.ipynb"
    before = cell_sources(path)
    result = run_cli("check", "--select", NOTEBOOK_RULES, "--fix", "ipython_cells.ipynb", cwd=notebooks)
    assert result.returncode == 1 and "Found 3 errors (2 fixed, 1 remaining)." in result.stdout
    after = cell_sources(path)
    assert after[2] == ("    ds = tf.data.Dataset.range(100)\n"
                        "    ds = ds.map(lambda x: x * 2, num_parallel_calls=tf.data.AUTOTUNE)\n"
                        "    ds = ds.batch(32).prefetch(tf.data.AUTOTUNE)")
    assert after[:2] + after[3:] == before[:2] + before[3:]
    again = run_cli("check", "--select", NOTEBOOK_RULES, "--fix", "ipython_cells.ipynb", cwd=notebooks)
    assert cell_sources(path) == after and "TFP002" in again.stdout


def notebook_of(*cells: str) -> Notebook:
    return Notebook(json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                                           "source": cell} for cell in cells],
                                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))


@pytest.mark.parametrize("line", [
    "pip install -q tensorflow", "cd ..", "cd /content/drive", "ls -la", "conda install -y numpy", "env FOO=1",
    "load_ext tensorboard", "time model.fit(ds)", "pwd .", "mkdir -p logs", "tensorboard --logdir logs",
    "tf.data.Dataset?", "tf.data.Dataset??", "?tf.data", "%matplotlib inline", "!nvidia-smi", "files = !ls",
])
def test_ipython_lines_are_not_python(line):
    notebook = notebook_of(f"import tensorflow as tf\n{line}\nx = 1\n")
    assert line not in notebook.module and "x = 1" in notebook.module


@pytest.mark.parametrize("line", [
    "pip = 3", "ls(x)", "ls (x)", "time.sleep(1)", "env[k] = v", "cd, ls = 1, 2", "time: int = 3", "pip += 1",
    "env if x else y", "pwd", "cd == 1", "run = tf.function(f)", "history = model.fit(ds)",
])
def test_python_lines_that_start_with_a_magic_name_stay_python(line):
    assert f"{line}\n" in notebook_of(f"import tensorflow as tf\n{line}\nx = 1\n").module


@pytest.mark.parametrize("magic,kept", [("%%time", True), ("%%timeit -n 3", True), ("%%capture out", True),
                                        ("%%prun", True), ("%%bash", False), ("%%writefile train.py", False),
                                        ("%%javascript", False)])
def test_cell_magics(magic, kept):
    notebook = notebook_of(f"{magic}\nmodel.fit(ds)\n")
    assert ("model.fit(ds)" in notebook.module) == kept


def test_an_indented_cell_is_dedented_as_ipython_does():
    notebook = notebook_of("\n    ds = tf.data.Dataset.range(3)\n    if ds:\n        pip install x\n  y = 1\n")
    (cell,) = notebook.cells
    assert cell.python.splitlines()[:3] == ["", "ds = tf.data.Dataset.range(3)", "if ds:"]
    assert cell.python.splitlines()[4] == "  y = 1"  # less indented than the first line: left as it is
    assert "pip install" not in cell.python
    assert notebook.cell_location(cell, 2, 6) == Location(2, 10)
    assert notebook.cell_location(cell, 5, 3) == Location(5, 3)


def test_a_cell_that_does_not_parse_is_left_out_and_the_rest_is_one_module(notebooks):
    notebook = Notebook((notebooks / "python2_cell.ipynb").read_text(encoding="utf-8"))
    ((cell, error),) = notebook.cells_that_do_not_parse()
    assert cell.number == 3 and (error.row, error.column) == (2, 5)
    notebook.without([3])
    assert [c.number for c in notebook.cells] == [2] and "print x" not in notebook.module
