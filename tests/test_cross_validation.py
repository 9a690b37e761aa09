"""Cross-validation loops (analysis/cross_validation.py): how many folds a loop over a scikit-learn
splitter's ``split`` runs (``StepLoops.count``), and that ``x[test]`` is a whole fold of ``x`` (``Rows``),
written from the k-fold and bootstrap notebooks of jeffheaton/t81_558_deep_learning."""

from __future__ import annotations

import libcst as cst
import pytest

from tflint_perf.analysis.analyses import AnalysedModule
from tflint_perf.analysis.loops import StepLoops
from tflint_perf.analysis.rows import FEW, MANY, UNKNOWN, Rows

_HEAD = (
    "import numpy as np\nfrom tensorflow.keras.models import Sequential\n"
    "from sklearn.model_selection import KFold, StratifiedKFold, ShuffleSplit, StratifiedShuffleSplit\n"
    "from sklearn.model_selection import RepeatedKFold, LeaveOneOut, TimeSeriesSplit\n"
    "import sklearn.model_selection as ms\n\n"
)


def model_of(source: str) -> AnalysedModule:
    return AnalysedModule(cst.parse_module(_HEAD + source))


def counts(source: str):
    """The count of every loop around ``step(...)`` calls, in source order."""
    model = model_of(source)
    loops = StepLoops(model)
    sites = [site for site in model.calls if model.module.code_for_node(site.node.func) == "step"]
    assert sites
    return [loops.count(site.loops[-1]) for site in sites]


@pytest.mark.parametrize(
    "source,expected",
    [
        ("kf = KFold(5, shuffle=True, random_state=42)\nfor train, test in kf.split(x):\n    step(train)\n", 5),
        ("kf = StratifiedKFold(n_splits=10)\nfor train, test in kf.split(x, y):\n    step(train)\n", 10),
        ("kf = KFold()\nfor train, test in kf.split(x):\n    step(train)\n", 5),  # scikit-learn's default
        ("for k, (train, test) in enumerate(KFold(3).split(x)):\n    step(train)\n", 3),
        ("K = 4\nfor train, test in ms.KFold(n_splits=K).split(x):\n    step(train)\n", 4),
        ("boot = ShuffleSplit(n_splits=SPLITS, test_size=0.1)\nfor train, test in boot.split(x):\n    step(train)\n", None),
        ("boot = StratifiedShuffleSplit(test_size=0.1)\nfor train, test in boot.split(x, y):\n    step(train)\n", 10),
        ("cv = RepeatedKFold(n_splits=5, n_repeats=10)\nfor train, test in cv.split(x):\n    step(train)\n", 50),
        ("cv = TimeSeriesSplit(n_splits=args.folds)\nfor train, test in cv.split(x):\n    step(train)\n", None),
        # Not a splitter: as many pieces as the text holds, and as many folds as the rows.
        ("for a, b in line.split(','):\n    step(a)\n", None),
        ("for train, test in LeaveOneOut().split(x):\n    step(train)\n", None),
        # A splitter made in one of two branches: either count may run.
        ("kf = KFold(5)\nif big:\n    kf = KFold(20)\nfor train, test in kf.split(x):\n    step(train)\n", None),
    ],
)
def test_the_count_of_a_loop_over_a_splitters_folds(source, expected):
    assert counts(source) == [expected]


def test_each_notebook_cell_counts_the_splitter_and_constant_it_makes():
    """The bootstrap notebook: three cells each make `boot`, with `SPLITS` = 50, 50 and 100."""
    cell = ("SPLITS = {n}\nboot = StratifiedShuffleSplit(n_splits=SPLITS, test_size=0.1)\n"
            "for train, test in boot.split(x, y):\n    step(x[train])\n")
    source = cell.format(n=50) + cell.format(n=50) + cell.format(n=100)
    assert counts(source) == [50, 50, 100]


def test_a_function_reads_the_splitter_it_makes():
    source = ("def cross_validate(x, y, folds=5):\n    kf = KFold(folds)\n    for train, test in kf.split(x):\n"
              "        step(x[train])\n\ndef validate(x):\n    kf = KFold(4)\n    for train, test in kf.split(x):\n"
              "        step(x[train])\n")
    assert counts(source) == [None, 4]  # a parameter's default may be overridden; the literal is known


def sizes(source: str):
    """What ``Rows`` says of the input of every ``model.predict(...)``."""
    model = model_of("model = Sequential()\n" + source)
    rows = Rows(model)
    found = []
    for site in model.calls:
        func = site.node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "predict":
            found.append(rows.of(site.node.args[0].value, site))
    return found


_FOLD_LOOP = "{make}\nfor train, test in {cv}.split(x):\n    x_test = x[test]\n    model.fit(x[train], y[train])\n    pred = model.predict(x_test)\n"


@pytest.mark.parametrize(
    "make,cv,expected",
    [
        # A whole fold (a fifth of x) or the 10% a bootstrap split holds out: never a sample, and no larger
        # than x is known to be (here x's size is not written).
        ("kf = KFold(5, shuffle=True)", "kf", UNKNOWN),
        ("boot = ShuffleSplit(n_splits=50, test_size=0.1)", "boot", UNKNOWN),
        ("TEST = 0.2\nboot = StratifiedShuffleSplit(n_splits=100, test_size=TEST)", "boot", UNKNOWN),
        # A fold of an array evidently large is large.
        ("x = np.zeros((100000, 8))\nkf = KFold(5)", "kf", MANY),
        # One row per fold, or a count of rows the source gives (or may give): as before, a sample.
        ("loo = LeaveOneOut()", "loo", FEW),
        ("boot = ShuffleSplit(n_splits=50, test_size=1)", "boot", FEW),
        ("boot = ShuffleSplit(n_splits=50, test_size=n_test)", "boot", FEW),
        # Not a splitter at all: `test` is one item of what the loop iterates.
        ("kf = make_folds(5)", "kf", FEW),
    ],
)
def test_an_array_indexed_by_a_folds_indices_is_a_whole_fold(make, cv, expected):
    assert sizes(_FOLD_LOOP.format(make=make, cv=cv)) == [expected]


def test_fold_indices_through_enumerate_and_an_index_from_elsewhere():
    source = ("kf = KFold(5)\nfor fold, (train_idx, val_idx) in enumerate(kf.split(x)):\n"
              "    model.predict(x[val_idx])\n    i = np.random.randint(len(x))\n    model.predict(x[i])\n")
    assert sizes(source) == [UNKNOWN, FEW]
