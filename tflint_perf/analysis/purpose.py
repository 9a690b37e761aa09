"""What a piece of code is *for*: the purpose of a pipeline's consumer, a loop, a ``Session.run``.

A finding is worth a user's time only where the code runs often and its speed matters: training
(``fit``, a loop that applies gradients or runs a train op). Evaluation and inference loops matter
less and a rule that fires there says so; inspection (``ds.take(3)`` for plotting, ``next(iter(ds))``)
and one-off work (``adapt()``, materialising to NumPy, writing TFRecords) are never reported.
Rules declare the purposes they apply to (``Rule.purposes``); the analysis layer classifies.
"""

from __future__ import annotations

import re
from enum import Enum
from typing import Iterable


class Purpose(str, Enum):
    TRAINING = "training"
    EVALUATION = "evaluation"
    INFERENCE = "inference"
    INSPECTION = "inspection"
    ONE_OFF = "one-off"
    UNKNOWN = "unknown"

    @property
    def runs_often(self) -> bool:
        """Code whose speed a performance finding can be about."""
        return self in (Purpose.TRAINING, Purpose.EVALUATION, Purpose.INFERENCE)

    @property
    def in_message(self) -> str:
        """How a message names this purpose: "" for training (the default a user expects)."""
        return "" if self is Purpose.TRAINING else f" (seen in {self.value})"


# Names in a loop body or around a pipeline (called functions, the functions passed to them, the
# function and class that build it) that say what it is for. Checked per name, inspection first:
# `test_step` is evaluation although it ends in `step`.
_INSPECTION_NAME = re.compile(
    r"(?:^|_)(?:visuali[sz]\w*|show\w*|plot\w*|imshow|savefig|display\w*|numpy|to_numpy|inspect\w*|"
    r"print\w*|write|serialize\w*|SerializeToString)(?:_|\d|$)",
    re.IGNORECASE,
)
_EVALUATION_NAME = re.compile(
    r"(?:^|_)(?:test\w*|eval\w*|valid\w*|val|predict\w*|infer\w*|metrics?|accuracy|update_state|result|"
    r"generate\w*|sample\w*|decode|detokeni[sz]e\w*|translate|benchmark\w*)(?:_|\d|$)",
    re.IGNORECASE,
)
_TRAINING_NAME = re.compile(
    r"(?:^|_)(?:train\w*|fit|apply_gradients|minimi[sz]e|gradient|GradientTape|backward|optimi[sz]e\w*|"
    r"partial_fit|learn|step|step_fn|run_step)(?:_|\d|$)",
    re.IGNORECASE,
)

# A name that joins training to evaluation trains first: `train_and_evaluate` (a notebook's helper that fits
# and validates, Estimator's own), `train_and_test`, `train_then_eval`. Not `eval_train_ds`: evaluation first.
_TRAINING_THEN_EVALUATION_NAME = re.compile(
    r"(?:^|_)train\w*?_(?:and|then)_(?:eval\w*|test\w*|valid\w*)(?:_|\d|$)", re.IGNORECASE)


# The names of a function or variable that builds a pipeline say less: `generate_dataset`,
# `sample_batches` and `decode_records` build training input as often as not.
_BUILDER_EVALUATION_NAME = re.compile(
    r"(?:^|_)(?:test|eval\w*|valid\w*|val|predict\w*|infer\w*|detokeni[sz]e\w*|update_state|metrics?)(?:_|\d|$)",
    re.IGNORECASE
)
_BUILDER_INSPECTION_NAME = re.compile(
    r"(?:^|_)(?:visuali[sz]\w*|show\w*|plot\w*|display\w*|draw\w*|to_numpy|summary|serialize\w*)(?:_|\d|$)",
    re.IGNORECASE,
)


def purpose_of_builder(names: Iterable[str]) -> Purpose:
    """What the names around a pipeline's construction (its function, class, assigned variable) say:
    `eval_input_fn`, `val_ds`, `dataset_to_numpy_util` are not training; `train_ds` is; others say nothing.
    A helper named for both (`get_train_and_test_datasets`, `train_and_evaluate`) may build either set:
    its name says nothing of which, and the pipeline's own name (`test_ds`) decides."""
    return _classify(names, _BUILDER_INSPECTION_NAME, _BUILDER_EVALUATION_NAME, joined_trains=False)


def purpose_of_names(names: Iterable[str]) -> Purpose:
    """What a block of code is for, from the names it calls or is called: training when any says it
    trains (`train_step`, `apply_gradients`, `GradientTape`, `distributed_step`), else evaluation or
    inference when one says so (`test_step`, `predict`, `update_state`, `generate`), else inspection
    (`plot`, `show`, `to_numpy`, writing records), else unknown."""
    return _classify(names, _INSPECTION_NAME, _EVALUATION_NAME)


def _classify(names: Iterable[str], inspection: "re.Pattern[str]", evaluation: "re.Pattern[str]",
              joined_trains: bool = True) -> Purpose:
    """Per name, inspection first, then evaluation, then training (`test_step` is evaluation although
    it ends in `step`); any training name decides, and a name that trains and then evaluates
    (`train_and_evaluate`) is a training name (``joined_trains``) or says nothing."""
    evaluates = inspects = False
    for name in names:
        if inspection.search(name):
            inspects = True
        elif _TRAINING_THEN_EVALUATION_NAME.search(name):
            if joined_trains:
                return Purpose.TRAINING
        elif evaluation.search(name):
            evaluates = True
        elif _TRAINING_NAME.search(name):
            return Purpose.TRAINING
    if evaluates:
        return Purpose.EVALUATION
    return Purpose.INSPECTION if inspects else Purpose.UNKNOWN
