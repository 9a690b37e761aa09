"""The TensorFlow a notebook declares in its own cells (project/notebook_version.py): a pinned install,
the saved output of `tf.__version__`; how they rank with the directory's dependency files, is remembered
by the notebook's stat, and reaches the rules and --show-settings."""

import json
import os

import pytest

from tests.conftest import run_cli
from tflint_perf.project.notebook_version import notebook_version
from tflint_perf.project.tf_version import VersionSearch

OLD = 1_500_000_000  # a modification time long past: not "racily clean"

# czy36mengfei/tensorflow2_tutorials_chinese 021-MLP/001-MLP.ipynb: a small MLP fitted in steps of 32,
# on the TensorFlow 2.0 alpha its first cell printed (TFP209: no `steps_per_execution` there).
MLP = (
    "model = tf.keras.Sequential([tf.keras.layers.Dense(64, activation='relu'), tf.keras.layers.Dense(10)])\n"
    "model.compile(optimizer='adam', loss='sparse_categorical_crossentropy')\n"
    "model.fit(x_train, y_train, batch_size=32, epochs=10)\n"
)


def notebook(*cells) -> str:
    """A notebook of code cells, each ``source`` or ``(source, outputs)``."""
    made = []
    for cell in cells:
        source, outputs = cell if isinstance(cell, tuple) else (cell, [])
        made.append({"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": outputs,
                     "source": source.splitlines(keepends=True)})
    return json.dumps({"cells": made, "metadata": {}, "nbformat": 4, "nbformat_minor": 2}, indent=1)


def stdout(text: str) -> list:
    return [{"name": "stdout", "output_type": "stream", "text": text.splitlines(keepends=True)}]


def result(text: str) -> list:
    return [{"data": {"text/plain": [text]}, "execution_count": 1, "metadata": {}, "output_type": "execute_result"}]


@pytest.mark.parametrize(
    "cells, version",
    [
        # Installs (czy36mengfei 020-Eager, 032-Text; dlaicourse S+P notebooks).
        (["!pip install -q tensorflow==2.0.0-alpha0\nimport tensorflow as tf"], (2, 0)),
        (["!pip install tensorflow-gpu==2.0.0-beta1"], (2, 0)),
        (["%pip install 'tensorflow>=2.4,<3'"], (2, 4)),
        (["pip install tensorflow==1.15.5"], (1, 15)),
        (["!pip install -U tf-nightly-2.0-preview"], (2, 0)),
        (["%tensorflow_version 1.x\nimport tensorflow as tf"], (1, 15)),
        # Selecting Colab's 2.x: needed only while Colab's default was 1.x (to March 2020), so 2.0 or 2.1;
        # weaker than a printed version or an install (dlaicourse's TF Datasets course, trekhleb's experiments).
        (["%tensorflow_version 2.x\nimport tensorflow as tf"], (2, 0)),
        (["try:\n  %tensorflow_version 2.x\nexcept Exception:\n  pass"], (2, 0)),
        (["%tensorflow_version 2.x", ("print(tf.__version__)", stdout("2.2.0\n"))], (2, 2)),
        (["%tensorflow_version 2.x", "!pip install tensorflow==2.4.1"], (2, 4)),
        (["# %tensorflow_version 2.x\nimport tensorflow as tf"], None),
        # Saved outputs of `tf.__version__` (a keras version printed beside it is not TensorFlow's).
        ([("import tensorflow as tf\nprint(tf.__version__)", stdout("2.0.0-alpha0\n"))], (2, 0)),
        ([("print(tf.__version__)\nprint(tf.keras.__version__)", stdout("2.0.0\n2.2.4-tf\n"))], (2, 0)),
        ([("import tensorflow as tf\ntf.__version__", result("'2.0.0-dev20190428'"))], (2, 0)),
        ([("print('tf version:', tf.__version__)", stdout("tf version: 2.0.0-alpha0\neager execution: True\n"))], (2, 0)),
        ([("print(tf.__version__)\nmodel.fit(x, y)", stdout("1.12.0\nEpoch 1/10\n60000/60000 [====] - loss: 0.4\n"))], (1, 12)),
        # Other versions printed beside it: the outputs answer the prints in order; unpaired, only a line naming TensorFlow.
        ([("print(np.__version__)\nprint(tf.__version__)", stdout("1.15.4\n2.3.0\n"))], (2, 3)),
        ([("for m in (np, tf):\n    print(m.__name__, m.__version__)\nprint(tf.__version__)", stdout("numpy 1.15.4\ntensorflow 2.3.0\n2.3.0\n"))], (2, 3)),
        ([("print(np.__version__, tf.__version__)", stdout("1.15.4 2.3.0\n"))], None),
        # Only a line that shows `tf.__version__` asks for an output: an assert or an assignment shows nothing,
        # so NumPy's version printed below it answers no TensorFlow question.
        ([("assert tf.__version__ >= '2'\nprint(np.version.version)", stdout("1.15.4\n"))], None),
        ([("v = tf.__version__\nprint(np.version.version)", stdout("1.15.4\n"))], None),
        ([("assert tf.__version__ >= '2'\nprint(tf.__version__)", stdout("2.3.0\n"))], (2, 3)),
        ([("print(np.__version__)\ntf.__version__", result("'2.3.0'"))], None),  # two lines, one output: unpaired
        ([("np.__version__\ntf.__version__;", result("'1.15.4'"))], None),  # `;` displays nothing
        # Two declarations: the oldest TensorFlow the notebook must run on; an install before a saved output.
        (["!pip install tensorflow==2.3.0", "!pip install tensorflow-gpu==2.1.0"], (2, 1)),
        ([("print(tf.__version__)", stdout("2.8.0\n")), "!pip install tensorflow==2.6.0"], (2, 6)),
        # An install read as a requirements line is (one parser): extras, the macOS/Intel builds, any lower
        # bound; pip's options before `install`; each command of a chained line; a shell comment is no argument.
        (["!pip install tensorflow[and-cuda]==2.15.0"], (2, 15)),
        (["!pip install tensorflow-macos==2.9"], (2, 9)),
        (["!pip install -q tensorflow-intel==2.10.0"], (2, 10)),
        (["!pip install tensorflow>2.3"], (2, 3)),
        (["!pip -q install tensorflow==2.0"], (2, 0)),
        (["!pip uninstall -y tensorflow && pip install tensorflow==2.0"], (2, 0)),
        (["!pip install -r requirements.txt; pip install tensorflow-gpu==1.14.0"], (1, 14)),
        (["!{sys.executable} -m pip install \\\n    tensorflow==2.5.0"], (2, 5)),
        (["!pip install tensorflow==2.3.0  # not tensorflow==1.15"], (2, 3)),
        (["!pip install tensorflow-datasets  # tensorflow==1.15 is preinstalled"], None),
        (["x = 'pip install tensorflow==1.15'"], None),
        # Nothing declared.
        (["#!pip install tensorflow==2.0.0-beta0\nimport tensorflow as tf"], None),
        (["try:\n  !pip install tf-nightly\nexcept Exception:\n  pass"], None),
        (["!pip install tensorflow-datasets==4.0.1 tensorflow-addons==0.8"], None),
        ([("print(tf.__version__)", [])], None),
        ([("print(np.__version__)", stdout("1.16.4\n"))], None),
        ([("print(tf.__version__)", [{"name": "stderr", "output_type": "stream", "text": ["1.13.1\n"]}])], None),
        ([("print(tf.__version__)", stdout("9.9.0\n"))], None),  # no such TensorFlow
    ],
)
def test_what_a_notebook_declares(cells, version):
    found = notebook_version(notebook(*cells))
    assert (found.version if found else None) == version


def test_text_that_is_not_a_notebook_declares_nothing():
    assert notebook_version("{ not json: tensorflow==2.0") is None
    assert notebook_version('{"cells": "tensorflow==2.0"}') is None


def test_a_notebooks_install_outranks_the_directorys_files_and_show_settings_says_how(tmp_path):
    (tmp_path / "requirements.txt").write_text("tensorflow==2.16.1\n")
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "course"\n')
    (tmp_path / "old.ipynb").write_text(notebook("!pip install -q tensorflow==2.0.0-alpha0\nimport tensorflow as tf", MLP))
    (tmp_path / "new.ipynb").write_text(notebook("import tensorflow as tf", MLP))
    found = run_cli("check", "--isolated", "--no-cache", "--select", "TFP209", "--output-format", "json", ".", cwd=tmp_path)
    assert sorted(d["filename"] for d in json.loads(found.stdout)) == ["new.ipynb"]
    shown = run_cli("check", "--isolated", "--show-settings", "old.ipynb", "new.ipynb", cwd=tmp_path)
    assert "old.ipynb: target-version 2.0 (" in shown.stdout
    assert "installs `tensorflow==2.0.0-alpha0` (cell 1)" in shown.stdout
    assert "new.ipynb: target-version 2.16 (" in shown.stdout and "requirements.txt" in shown.stdout
    configured = run_cli("check", "--isolated", "--no-cache", "--select", "TFP209", "--target-version", "2.15",
                         "--output-format", "json", "old.ipynb", cwd=tmp_path)
    assert [d["code"] for d in json.loads(configured.stdout)] == ["TFP209"]  # a configured version beats the notebook


def test_a_saved_output_counts_only_where_no_dependency_file_declares_tensorflow(tmp_path):
    # handson-ml2: chapter 10 printed 2.4.1, and requirements.txt now asks for 2.6; an install in the
    # notebook is what it runs, whatever the directory says.
    (tmp_path / "requirements.txt").write_text("tensorflow~=2.6.0\n")
    (tmp_path / "ran.ipynb").write_text(notebook(("import tensorflow as tf\nprint(tf.__version__)", stdout("2.4.1\n"))))
    (tmp_path / "installs.ipynb").write_text(notebook("!pip install -q tensorflow-gpu==2.0.0-beta1"))
    shown = run_cli("check", "--isolated", "--show-settings", "ran.ipynb", "installs.ipynb", cwd=tmp_path).stdout
    assert "ran.ipynb: target-version 2.6 (" in shown and "installs.ipynb: target-version 2.0 (" in shown
    (tmp_path / "requirements.txt").write_text("numpy\n")
    shown = run_cli("check", "--isolated", "--show-settings", "ran.ipynb", cwd=tmp_path).stdout
    assert "ran.ipynb: target-version 2.4 (" in shown and "printed `tf.__version__` as 2.4.1 (cell 1)" in shown


def test_an_edited_declaration_changes_cached_results(tmp_path):
    (tmp_path / "train.ipynb").write_text(notebook("!pip install tensorflow==2.0.0\nimport tensorflow as tf", MLP))
    args = ("check", "--isolated", "--select", "TFP209", "--output-format", "json", "train.ipynb")
    assert json.loads(run_cli(*args, cwd=tmp_path).stdout) == []
    (tmp_path / "train.ipynb").write_text(notebook("!pip install tensorflow==2.15.0\nimport tensorflow as tf", MLP))
    assert [d["code"] for d in json.loads(run_cli(*args, cwd=tmp_path).stdout)] == ["TFP209"]


def test_a_notebooks_declaration_is_remembered_by_its_stat(tmp_path):
    path = tmp_path / "nb.ipynb"
    path.write_text(notebook("!pip install tensorflow-gpu==2.0.0-beta1"))
    plain = tmp_path / "plain.ipynb"
    plain.write_text(notebook("import tensorflow as tf"))
    for written in (path, plain):
        os.utime(written, (OLD, OLD))
    search = VersionSearch()
    first = search.notebook(str(path))
    assert first.version == (2, 0) and "installs `tensorflow-gpu==2.0.0-beta1` (cell 1)" in first.where()
    assert search.notebook(str(plain)) is None
    remembered = VersionSearch(json.loads(json.dumps(search.stamps)))
    assert remembered.notebook(str(path)) == first and remembered.notebook(str(plain)) is None
    assert remembered.read == []  # neither notebook read again
    path.write_text(notebook("!pip install tensorflow==2.15.0"))
    os.utime(path, (OLD + 10, OLD + 10))
    changed = VersionSearch(remembered.stamps)
    assert changed.notebook(str(path)).version == (2, 15) and changed.read == [str(path)]


def _codes_by_file(tmp_path, *names):
    found = run_cli("check", "--isolated", "--no-cache", "--select", "TFP209", "--output-format", "json", *names, cwd=tmp_path)
    return sorted(d["filename"] for d in json.loads(found.stdout))


def test_a_notebook_declaring_nothing_takes_the_version_its_siblings_agree_on(tmp_path):
    # dlaicourse's S+P course: half its notebooks install `tf-nightly-2.0-preview` or printed 2.0.0-beta1;
    # Week 2 Lesson 3 declares nothing, and fits its small windowed MLP on the same TensorFlow 2.0.
    course = tmp_path / "course"
    course.mkdir()
    (course / "week1.ipynb").write_text(notebook("!pip install tf-nightly-2.0-preview\nimport tensorflow as tf"))
    (course / "week4.ipynb").write_text(notebook(("import tensorflow as tf\nprint(tf.__version__)", stdout("2.0.0-beta1\n"))))
    (course / "week2.ipynb").write_text(notebook("import tensorflow as tf", MLP))
    assert _codes_by_file(course, "week2.ipynb") == []
    shown = run_cli("check", "--isolated", "--show-settings", "week2.ipynb", cwd=course).stdout
    assert "week2.ipynb: target-version 2.0 (" in shown and "2 notebooks beside it declare 2.0" in shown
    # A dependency file of the directory outranks the siblings, as it outranks a saved output.
    (course / "requirements.txt").write_text("tensorflow>=2.15\n")
    assert _codes_by_file(course, "week2.ipynb") == ["week2.ipynb"]


def test_one_declaring_sibling_or_siblings_that_disagree_say_nothing(tmp_path):
    # tensorflow/docs' migration guides: one of twenty pins 2.9 for its own need; Hvass-Labs' tutorials
    # printed 1.1 to 2.1 over the years.
    lone, mixed = tmp_path / "lone", tmp_path / "mixed"
    for folder in (lone, mixed):
        folder.mkdir()
        (folder / "train.ipynb").write_text(notebook("import tensorflow as tf", MLP))
        (folder / "pinned.ipynb").write_text(notebook("!pip install tensorflow==2.0.0\nimport tensorflow as tf"))
    (mixed / "later.ipynb").write_text(notebook("!pip install tensorflow==2.1.0\nimport tensorflow as tf"))
    assert _codes_by_file(tmp_path, "lone/train.ipynb", "mixed/train.ipynb") == ["lone/train.ipynb", "mixed/train.ipynb"]
    search = VersionSearch()
    assert search.sibling_version(str(lone / "train.ipynb")) is None
    assert search.sibling_version(str(mixed / "train.ipynb")) is None
    # The declaring notebooks themselves keep their own declaration.
    assert search.notebook(str(mixed / "later.ipynb")).version == (2, 1)


def test_siblings_version_does_not_override_a_notebooks_own_tensorflow_1_code(tmp_path):
    # A course whose other notebooks install 2.3: one that runs `tf.Session` through a plain `import
    # tensorflow` runs on TensorFlow 1, so its `tf.py_func` is not "broken on 2.3", and `--fix` must
    # not respell it as `tf.numpy_function` (which TensorFlow 1 releases before 1.14 lack).
    course = tmp_path / "course"
    course.mkdir()
    for name in ("setup.ipynb", "intro.ipynb"):
        (course / name).write_text(notebook("!pip install tensorflow==2.3.0", "import tensorflow as tf"))
    tf1 = notebook("import tensorflow as tf\nsess = tf.Session()\ny = tf.py_func(f, [x], tf.float32)\n")
    tf2 = notebook("import tensorflow as tf\ny = tf.py_func(f, [x], tf.float32)\n")
    (course / "graph.ipynb").write_text(tf1)
    (course / "eager.ipynb").write_text(tf2)
    found = run_cli("check", "--isolated", "--no-cache", "--select", "TFP402", "--output-format", "json", ".", cwd=course)
    assert [(d["filename"], "2.3, the target" in d["message"]) for d in json.loads(found.stdout)] == [
        ("eager.ipynb", True)]  # the code that may run on TensorFlow 2 takes the siblings' version
    run_cli("check", "--isolated", "--no-cache", "--select", "TFP402", "--fix", "graph.ipynb", cwd=course)
    assert (course / "graph.ipynb").read_text() == tf1


def test_selecting_colabs_2x_is_a_saved_output_that_dependency_files_outrank(tmp_path):
    # handson-ml2's notebooks select Colab's 2.x, but its requirements.txt asks for 2.6: the file decides.
    found = notebook_version(notebook("%tensorflow_version 2.x\nimport tensorflow as tf"))
    assert found.saved_output and "`%tensorflow_version 2.x`, cell 1" in found.evidence
    (tmp_path / "chapter.ipynb").write_text(notebook("try:\n  %tensorflow_version 2.x\nexcept Exception:\n  pass",
                                                     "import tensorflow as tf", MLP))
    assert _codes_by_file(tmp_path, "chapter.ipynb") == []  # 2.0: no `steps_per_execution`
    (tmp_path / "requirements.txt").write_text("tensorflow>=2.6\n")
    assert _codes_by_file(tmp_path, "chapter.ipynb") == ["chapter.ipynb"]


def _course(tmp_path, declarations):
    """dlaicourse's shape: a first lesson at the top that declares nothing, and week folders whose
    notebooks declare (``declarations``: one notebook's first cell each)."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "Course 1 - Lesson 2.ipynb").write_text(notebook("import tensorflow as tf", MLP))
    for number, cell in enumerate(declarations):
        week = tmp_path / "In Practice" / f"Week {number}"
        week.mkdir(parents=True)
        (week / f"Week{number}.ipynb").write_text(notebook(cell, "import tensorflow as tf"))


def test_a_notebook_whose_directory_says_nothing_takes_what_its_projects_notebooks_agree_on(tmp_path):
    # dlaicourse: its top-level lessons declare nothing; its week notebooks select Colab's 2.x or
    # install the 2.0 previews, and one kept from a TensorFlow 1 edition printed 1.12.
    _course(tmp_path, ["%tensorflow_version 2.x", ("print(tf.__version__)", stdout("2.0.0-beta1\n")),
                       "%tensorflow_version 2.x", "%tensorflow_version 2.x", ("print(tf.__version__)", stdout("1.12.0\n"))])
    assert _codes_by_file(tmp_path, "Course 1 - Lesson 2.ipynb") == []
    shown = run_cli("check", "--isolated", "--show-settings", "Course 1 - Lesson 2.ipynb", cwd=tmp_path).stdout
    assert "target-version 2.0 (" in shown and "4 of the 5 notebooks of the project" in shown
    search = VersionSearch()
    lesson = str((tmp_path / "Course 1 - Lesson 2.ipynb").resolve())
    assert search.project_version(lesson, str(tmp_path.resolve())).version == (2, 0)
    # The one-file entry points (the language server, flake8) find the same project by its marker.
    from tflint_perf.project.tf_version import infer_for_file
    assert infer_for_file(tmp_path / "Course 1 - Lesson 2.ipynb").version == (2, 0)


@pytest.mark.parametrize("declarations", [
    ["%tensorflow_version 2.x"],  # one declaring notebook: may be its own need
    [("print(tf.__version__)", stdout("2.3.0\n")), ("print(tf.__version__)", stdout("1.15.0\n"))],  # split majors
    # tensorflow/docs' migration guides pin 2.9, 2.10, 2.11 for their own needs: a pin is the notebook's own.
    ["!pip install tensorflow==2.9", "!pip install tensorflow==2.10", "!pip install tensorflow==2.11"],
])
def test_a_project_whose_notebooks_do_not_agree_says_nothing(tmp_path, declarations):
    _course(tmp_path, declarations)
    assert _codes_by_file(tmp_path, "Course 1 - Lesson 2.ipynb") == ["Course 1 - Lesson 2.ipynb"]


def test_one_printed_version_speaks_for_a_small_book(tmp_path):
    # Packt's TF 2.0 Quick Start Guide: Chapter 1 printed 2.0.0-alpha0, its other notebooks declare nothing;
    # the book was written on that TensorFlow, so TFP209 (steps_per_execution, 2.4+) stays silent on its fits.
    _course(tmp_path, [("print(tf.__version__)", stdout("2.0.0-alpha0\n"))])
    lesson = str((tmp_path / "Course 1 - Lesson 2.ipynb").resolve())
    found = VersionSearch().project_version(lesson, str(tmp_path.resolve()))
    assert found.version == (2, 0) and found.from_siblings
    assert _codes_by_file(tmp_path, "Course 1 - Lesson 2.ipynb") == []


def test_a_lone_colab_selection_in_a_small_book_says_nothing(tmp_path):
    # Colab's `%tensorflow_version 2.x` may be that notebook's own line (copied into notebooks run on
    # later releases): alone, it does not speak for the book as a printed version does.
    _course(tmp_path, ["%tensorflow_version 2.x"])
    lesson = str((tmp_path / "Course 1 - Lesson 2.ipynb").resolve())
    assert VersionSearch().project_version(lesson, str(tmp_path.resolve())) is None


def test_one_printed_version_among_many_notebooks_says_nothing(tmp_path, monkeypatch):
    # A project of more notebooks than one book holds may be many books: one print is that notebook's own.
    from tflint_perf.project import tf_version

    _course(tmp_path, [("print(tf.__version__)", stdout("2.0.0\n")), "import tensorflow as tf", "import tensorflow as tf"])
    monkeypatch.setattr(tf_version, "_ONE_BOOK", 3)
    lesson = str((tmp_path / "Course 1 - Lesson 2.ipynb").resolve())
    assert VersionSearch().project_version(lesson, str(tmp_path.resolve())) is None


def test_the_projects_notebooks_answer_the_oldest_of_the_major_they_agree_on(tmp_path):
    # ml-design-patterns: one chapter's notebook printed 2.2, another 2.3; the others declare nothing.
    _course(tmp_path, [("print(tf.__version__)", stdout("2.3.0\n")), ("print(tf.__version__)", stdout("2.2.0\n"))])
    search = VersionSearch()
    found = search.project_version(str((tmp_path / "Course 1 - Lesson 2.ipynb").resolve()), str(tmp_path.resolve()))
    assert found.version == (2, 2) and found.from_siblings and found.saved_output


def test_a_printed_version_outranks_a_copied_colab_selection(tmp_path):
    # Two chapters printed 2.8.0 and 2.9.0; a third kept the `%tensorflow_version 2.x` line of an older
    # notebook. The line votes for TensorFlow 2, but its 2.0 must not become the whole course's target.
    _course(tmp_path, [("print(tf.__version__)", stdout("2.8.0\n")), ("print(tf.__version__)", stdout("2.9.0\n")),
                       "%tensorflow_version 2.x"])
    lesson = str((tmp_path / "Course 1 - Lesson 2.ipynb").resolve())
    found = VersionSearch().project_version(lesson, str(tmp_path.resolve()))
    assert found.version == (2, 8) and "3 of the 3 notebooks" in found.evidence and "printed" in found.evidence
    assert _codes_by_file(tmp_path, "Course 1 - Lesson 2.ipynb") == ["Course 1 - Lesson 2.ipynb"]  # 2.8 has it


def test_colab_selections_alone_still_answer_2_0(tmp_path):
    _course(tmp_path, ["%tensorflow_version 2.x", "%tensorflow_version 2.x"])
    lesson = str((tmp_path / "Course 1 - Lesson 2.ipynb").resolve())
    assert VersionSearch().project_version(lesson, str(tmp_path.resolve())).version == (2, 0)


def test_show_settings_and_check_give_an_unmarked_projects_notebook_one_version(tmp_path):
    # No marker anywhere: the project is the directory the command runs in, for --show-settings (and
    # every entry point asking `with_project_version`) as for the check itself.
    for folder, printed in (("a", "2.8.0"), ("b", "2.9.0")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "n.ipynb").write_text(notebook(("import tensorflow as tf\nprint(tf.__version__)",
                                                             stdout(printed + "\n"))))
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "target.ipynb").write_text(notebook(
        "import tensorflow as tf", "model = tf.keras.Sequential([tf.keras.layers.Dense(10)])\n"
        "model.compile('adam', 'mse')\nmodel.fit_generator(gen, epochs=10)\n"))
    shown = run_cli("check", "--isolated", "--show-settings", "d/target.ipynb", cwd=tmp_path).stdout
    assert "d/target.ipynb: target-version 2.8 (" in shown
    found = run_cli("check", "--isolated", "--no-cache", "--select", "TFP402", "--output-format", "json",
                    "d/target.ipynb", cwd=tmp_path)
    assert ["TensorFlow 2.8, the target" in d["message"] for d in json.loads(found.stdout)] == [True]


def test_the_projects_notebooks_are_found_by_the_index_walk_and_within_its_bound(tmp_path, monkeypatch):
    # Notebooks of a virtual environment or of node_modules are no part of the course; a project of
    # more directories than the index walks says nothing rather than walking them on every run.
    from tflint_perf.project import index

    _course(tmp_path, [("print(tf.__version__)", stdout("2.8.0\n")), ("print(tf.__version__)", stdout("2.9.0\n"))])
    for vendored in ("venv/share", "node_modules/pkg"):
        (tmp_path / vendored).mkdir(parents=True)
        for number in range(2):
            (tmp_path / vendored / f"old{number}.ipynb").write_text(
                notebook(("import tensorflow as tf\nprint(tf.__version__)", stdout("1.15.0\n"))))
    lesson = str((tmp_path / "Course 1 - Lesson 2.ipynb").resolve())
    assert VersionSearch().project_version(lesson, str(tmp_path.resolve())).version == (2, 8)
    walked = index.walk_files(str(tmp_path), (".ipynb",), 100)
    assert walked is not None and not any("venv" in path or "node_modules" in path for path in walked)
    directories = 1 + len(list((tmp_path / "In Practice").iterdir())) + 1  # the top, "In Practice", its weeks
    monkeypatch.setattr(index, "MAX_PROJECT_DIRECTORIES", directories)
    assert index.walk_files(str(tmp_path), (".ipynb",), 100) is not None
    monkeypatch.setattr(index, "MAX_PROJECT_DIRECTORIES", directories - 1)
    assert index.walk_files(str(tmp_path), (".ipynb",), 100) is None
    assert VersionSearch().project_version(lesson, str(tmp_path.resolve())) is None
