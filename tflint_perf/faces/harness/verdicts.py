"""Is the "after" faster than the "before", beyond this machine's noise? One module for ``verify`` and ``bench``.

The timings come in pairs (a before run and an after run, interleaved, so both see the same load).
The estimate is the geometric mean of the per-pair ratios ``before / after`` (ratios multiply, so
their logarithms are averaged); its 95% interval is a percentile bootstrap over the pairs: the
pairs are resampled with replacement ``RESAMPLES`` times from a generator with a fixed seed, so the
same timings always give the same interval. The verdict is a speed-up or a slow-down only when the
interval excludes 1; otherwise "no measurable difference on this machine", with the interval.

Fewer than ``MIN_DECIDING_PAIRS`` pairs never make a verdict (a bootstrap over three pairs that
happen to agree is not evidence). ``verify`` runs pairs until the interval excludes 1 (after at
least ``min_pairs``), the time budget is spent, or ``max_pairs`` ran:
``run_until_decided``. Pure Python: no NumPy, no TensorFlow, so the logic is tested on synthetic
timings.
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass
from typing import Callable, List, Optional, Sequence, Tuple

CONFIDENCE = 0.95
RESAMPLES = 2000
BOOTSTRAP_SEED = 20240607  # fixed: the same timings give the same interval on every run
FASTER, SLOWER, NO_DIFFERENCE = "faster", "slower", "no measurable difference"
# Why a sequence of paired runs stopped.
DECIDED, BUDGET_SPENT, MAX_PAIRS = "the interval excludes 1", "the time budget ran out", "the most paired runs ran"
MIN_DECIDING_PAIRS = 5  # fewer pairs never make a speed-up or a slow-down (all 5 agreeing by chance: 6%)
_TICK = 1e-9  # a run too short for the clock counts as one nanosecond, not as a division by zero


@dataclass(frozen=True)
class Verdict:
    ratio: float  # before / after: above 1 the after is faster
    low: float
    high: float
    pairs: int
    cores: int

    @property
    def kind(self) -> str:
        if self.pairs < MIN_DECIDING_PAIRS:
            return NO_DIFFERENCE  # a bootstrap over a few pairs that happen to agree is not evidence
        if self.low > 1:
            return FASTER
        if self.high < 1:
            return SLOWER
        return NO_DIFFERENCE

    @property
    def interval_text(self) -> str:
        return f"{self.low:.2f}-{self.high:.2f}"

    @property
    def text(self) -> str:
        """"1.62x (1.48-1.77, 9 paired runs)", "0.70x slower (...)" or "no measurable difference on
        this machine (0.91-1.12, 2 cores, 9 paired runs)"."""
        runs = f"{self.pairs} paired run{'s' if self.pairs != 1 else ''}"
        if self.kind == FASTER:
            return f"{self.ratio:.2f}x ({self.interval_text}, {runs})"
        if self.kind == SLOWER:
            return f"{self.ratio:.2f}x, slower ({self.interval_text}, {runs})"
        return f"no measurable difference on this machine ({self.interval_text}, {self.cores} cores, {runs})"

    def as_json(self) -> dict:
        return {"ratio": round(self.ratio, 4), "interval": [round(self.low, 4), round(self.high, 4)],
                "verdict": self.kind, "verdict_text": self.text, "paired_runs": self.pairs}


def paired_verdict(before: Sequence[float], after: Sequence[float], cores: int,
                   confidence: float = CONFIDENCE, resamples: int = RESAMPLES) -> Optional[Verdict]:
    """The verdict on paired timings (``before[i]`` with ``after[i]``); None without a usable pair."""
    logs = [math.log(max(b, _TICK) / max(a, _TICK)) for b, a in zip(before, after)]
    if not logs:
        return None
    rng = random.Random(BOOTSTRAP_SEED)
    count = len(logs)
    means = sorted(sum(rng.choice(logs) for _ in range(count)) / count for _ in range(resamples))
    tail = (1 - confidence) / 2
    low = means[int(math.floor(tail * (resamples - 1)))]
    high = means[int(math.ceil((1 - tail) * (resamples - 1)))]
    return Verdict(math.exp(sum(logs) / count), math.exp(low), math.exp(high), count, cores)


def stop_reason(verdict: Optional[Verdict], elapsed_s: float, budget_s: float, min_pairs: int,
                max_pairs: int) -> Optional[str]:
    """Why to stop after the pairs so far, or None to run another pair."""
    pairs = verdict.pairs if verdict is not None else 0
    if pairs >= min_pairs and verdict is not None and verdict.kind != NO_DIFFERENCE:
        return DECIDED
    if pairs >= max_pairs:
        return MAX_PAIRS
    if pairs >= min(min_pairs, 2) and elapsed_s >= budget_s:
        return BUDGET_SPENT  # at least two pairs, so that even a spent budget gives an interval
    return None


@dataclass
class PairedRuns:
    before: List[float]
    after: List[float]
    verdict: Verdict
    stopped: str


def run_until_decided(run_pair: Callable[[int], Tuple[float, float]], cores: int, min_pairs: int = 5,
                      max_pairs: int = 50, budget_s: float = 60.0,
                      clock: Callable[[], float] = time.monotonic) -> PairedRuns:
    """Call ``run_pair(index)`` (before and after once each, interleaved; their seconds) until
    ``stop_reason`` says stop. ``clock`` is injectable for tests."""
    start = clock()
    before: List[float] = []
    after: List[float] = []
    verdict: Optional[Verdict] = None
    while True:
        reason = stop_reason(verdict, clock() - start, budget_s, min_pairs, max_pairs)
        if reason is not None and verdict is not None:
            return PairedRuns(before, after, verdict, reason)
        old, new = run_pair(len(before))
        before.append(old)
        after.append(new)
        verdict = paired_verdict(before, after, cores)
