"""Exact fixed text of each fix shape, idempotence, and byte preservation (CRLF, BOM, encodings)."""

from __future__ import annotations

import textwrap

import pytest

from tests.conftest import fix, run_cli
from tflint_perf.text.parsing import parse


def fixed(source: str, unsafe: bool = False) -> str:
    return fix(textwrap.dedent(source), unsafe=unsafe)


def test_multiline_parenthesised_chain_keeps_layout_and_comments():
    source = """\
        import tensorflow as tf
        ds = (
            tf.data.TFRecordDataset(files)  # raw records
            .map(parse, num_parallel_calls=tf.data.AUTOTUNE)
            .batch(64)  # batches
        )
        model.fit(ds)
    """
    assert fixed(source) == textwrap.dedent(
        """\
        import tensorflow as tf
        ds = (
            tf.data.TFRecordDataset(files)  # raw records
            .map(parse, num_parallel_calls=tf.data.AUTOTUNE)
            .batch(64)  # batches
            .prefetch(tf.data.AUTOTUNE)
        )
        model.fit(ds)
        """
    )


def test_multiline_map_call_gets_the_keyword_after_its_last_argument():
    source = """\
        import tensorflow as tf
        ds = tf.data.Dataset.range(4).map(
            lambda x: x + 1,
        )
    """
    assert fixed(source) == textwrap.dedent(
        """\
        import tensorflow as tf
        ds = tf.data.Dataset.range(4).map(
            lambda x: x + 1,
            num_parallel_calls=tf.data.AUTOTUNE,
        )
        """
    )


def test_nested_fixes_are_both_applied_in_one_run():
    source = """\
        import tensorflow as tf
        model.fit(tf.data.Dataset.range(4).map(lambda x: x + 1))
    """
    assert fixed(source) == textwrap.dedent(
        """\
        import tensorflow as tf
        model.fit(tf.data.Dataset.range(4).map(
            lambda x: x + 1,
            num_parallel_calls=tf.data.AUTOTUNE,
        ).prefetch(tf.data.AUTOTUNE))
        """
    )


def test_module_alias_for_autotune_is_used():
    source = """\
        import tensorflow as tf
        AUTOTUNE = tf.data.experimental.AUTOTUNE
        ds = tf.data.Dataset.range(4).batch(2)
        model.fit(ds)
    """
    assert ".prefetch(AUTOTUNE)" in fixed(source)


@pytest.mark.parametrize(
    "imports,expected",
    [
        ("import tensorflow.compat.v1 as tf\n", "tf.data.experimental.AUTOTUNE"),
        ("import tensorflow as tfx\n", "tfx.data.AUTOTUNE"),
    ],
)
def test_spelling_follows_the_modules_alias(imports, expected):
    source = imports + f"ds = {imports.split(' as ')[1].strip()}.data.Dataset.range(4).batch(2)\nmodel.fit(ds)\n"
    assert f".prefetch({expected})" in fix(source)


def test_no_fix_when_tf_means_something_else():
    source = "from tensorflow.data import Dataset\nimport mylib as tf\nmodel.fit(Dataset.range(4))\n"
    assert fix(source) == source


def test_import_is_added_once_after_docstring_and_imports():
    source = '"""Train."""\nfrom tensorflow.data import Dataset\n\nmodel.fit(Dataset.range(4).map(f))\nmodel.fit(Dataset.range(8))\n'
    result = fix(source, unsafe=True)
    assert result.count("import tensorflow as tf") == 1
    assert result.startswith('"""Train."""\nfrom tensorflow.data import Dataset\nimport tensorflow as tf\n')
    parse(result)


def test_second_fix_changes_nothing_and_safe_only_leaves_unsafe():
    source = "import tensorflow as tf\ndef f(x):\n    return tf.random.uniform([]) + x\nds = tf.data.Dataset.range(4).map(f)\nmodel.fit(ds)\n"
    once = fix(source)
    assert "prefetch" in once and "num_parallel_calls" not in once
    assert fix(once) == once
    assert "num_parallel_calls" in fix(once, unsafe=True)


def _write(tmp_path, name, data: bytes):
    path = tmp_path / name
    path.write_bytes(data)
    return path


def test_crlf_is_kept(tmp_path):
    path = _write(tmp_path, "crlf.py", b"import tensorflow as tf\r\nds = tf.data.Dataset.range(4).batch(2)\r\nmodel.fit(ds)\r\n")
    result = run_cli("check", "--fix", str(path))
    assert result.returncode == 0, result.stderr
    assert path.read_bytes() == b"import tensorflow as tf\r\nds = tf.data.Dataset.range(4).batch(2).prefetch(tf.data.AUTOTUNE)\r\nmodel.fit(ds)\r\n"


def test_crlf_is_kept_for_added_imports(tmp_path):
    path = _write(tmp_path, "crlf_import.py", b"from tensorflow.data import Dataset\r\nmodel.fit(Dataset.range(4))\r\n")
    run_cli("check", "--fix", str(path))
    assert path.read_bytes() == (
        b"from tensorflow.data import Dataset\r\nimport tensorflow as tf\r\n"
        b"model.fit(Dataset.range(4).prefetch(tf.data.AUTOTUNE))\r\n"
    )


def test_bom_and_non_ascii_are_kept(tmp_path):
    text = "# Entraînement\nimport tensorflow as tf\nds = tf.data.Dataset.range(4)\nmodel.fit(ds)\n"
    path = _write(tmp_path, "bom.py", b"\xef\xbb\xbf" + text.encode("utf-8"))
    run_cli("check", "--fix", str(path))
    data = path.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf# Entra\xc3\xaenement\n")
    assert b".prefetch(tf.data.AUTOTUNE)" in data


def test_latin1_source_keeps_its_encoding(tmp_path):
    text = "# -*- coding: latin-1 -*-\n# café\nimport tensorflow as tf\nmodel.fit(tf.data.Dataset.range(4))\n"
    path = _write(tmp_path, "latin.py", text.encode("latin-1"))
    run_cli("check", "--fix", str(path))
    assert path.read_bytes() == text.replace("range(4))", "range(4).prefetch(tf.data.AUTOTUNE))").encode("latin-1")


def test_file_mode_is_kept(tmp_path):
    path = _write(tmp_path, "mode.py", b"import tensorflow as tf\nmodel.fit(tf.data.Dataset.range(4))\n")
    path.chmod(0o751)
    run_cli("check", "--fix", str(path))
    assert path.stat().st_mode & 0o777 == 0o751
    assert list(tmp_path.iterdir()) == [path], "a temporary file was left behind"


def test_files_without_fixes_are_byte_identical(tmp_path):
    data = b"import tensorflow as tf  \r\n\r\nx = 1\t# tabs\r\n"
    path = _write(tmp_path, "clean.py", data)
    run_cli("check", "--fix", str(path))
    assert path.read_bytes() == data


def test_read_only_file_is_reported_and_kept(tmp_path):
    data = b"import tensorflow as tf\nmodel.fit(tf.data.Dataset.range(4))\n"
    path = _write(tmp_path, "ro.py", data)
    path.chmod(0o444)
    result = run_cli("check", "--fix", str(path))
    assert result.returncode == 1
    assert "ro.py: error: file is read-only" in result.stderr
    assert path.read_bytes() == data


def test_module_alias_defined_later_is_not_used_at_module_level():
    source = (
        "import tensorflow as tf\n"
        "model.fit(tf.data.Dataset.range(4))\n"
        "AUTOTUNE = tf.data.AUTOTUNE\n"
        "def train():\n"
        "    model.fit(tf.data.Dataset.range(8))\n"
    )
    result = fix(source)
    assert "model.fit(tf.data.Dataset.range(4).prefetch(tf.data.AUTOTUNE))" in result
    assert "model.fit(tf.data.Dataset.range(8).prefetch(AUTOTUNE))" in result
