"""What a piece of code is *for*: the purpose of a pipeline's consumer, a loop, a ``Session.run``.

A finding is worth a user's time only where the code runs often and its speed matters: training
(``fit``, a loop that applies gradients or runs a train op). Evaluation and inference loops matter
less and a rule that fires there says so; inspection (``ds.take(3)`` for plotting, ``next(iter(ds))``)
and one-off work (``adapt()``, materialising to NumPy, writing TFRecords) are never reported.
Rules declare the purposes they apply to (``Rule.purposes``); the analysis layer classifies.
"""

from __future__ import annotations

from enum import Enum


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
