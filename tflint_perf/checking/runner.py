"""Checking many files: cached results first, then the rest in worker processes (in-process when few).

Results come back in the order the files were given, whatever order the workers finish in, so the
output never depends on ``--jobs``. Each file is still checked by ``checker.process_file``; this
module only decides where and whether.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

from tflint_perf.checking.cache import Cache
from tflint_perf.checking.checker import FileResult, Mode, process_file
from tflint_perf.checking.config import Settings, with_project_version
from tflint_perf.checking.discovery import relative_to_root
from tflint_perf.fixes.fixer import applicable
from tflint_perf.project.index import project_for

# Below this much work (bytes of source that mentions TensorFlow/Keras, i.e. that gets parsed), starting
# workers costs more than it saves. Measured (docs/performance.md): checking costs 2.5-5 ms of CPU per KB;
# a pool of two costs about 10 ms to start with fork, about 0.5 s with spawn (each worker imports LibCST).
POOL_MIN_WORK = 64 * 1024
POOL_MIN_WORK_SPAWN = 512 * 1024
_MARKERS = (b"tensorflow", b"keras")
_CHUNK = 8  # at most this many files per task sent to a worker: fewer round trips, still balanced


@dataclass(frozen=True)
class Job:
    path: Path
    name: str  # as reported
    explicit: bool  # named on the command line rather than found in a directory


def default_jobs() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def check_files(
    jobs: Sequence[Job], settings: Settings, mode: Mode, cache: Optional[Cache], workers: int
) -> List[FileResult]:
    """One result per job, in the jobs' order."""
    worker = _Worker(settings, mode, cache)
    results: List[Optional[FileResult]] = [None] * len(jobs)
    pending: List[Tuple[int, int]] = []  # (index, estimated work)
    for index, job in enumerate(jobs):
        data = _read(job.path)
        hit = worker.cached(job, data) if data is not None else None
        if hit is not None:
            results[index] = hit
        else:
            pending.append((index, len(data) if data is not None and any(m in data for m in _MARKERS) else 0))
    if cache is not None and pending:
        cache.prepare()
    work = sum(size for _, size in pending)
    threshold = POOL_MIN_WORK if _context().get_start_method() == "fork" else POOL_MIN_WORK_SPAWN
    if workers > 1 and len(pending) > 1 and work >= threshold:
        # Largest first, so that no big file is left to run alone at the end.
        order = [index for index, _ in sorted(pending, key=lambda item: -item[1])]
        for index, result in zip(order, _in_pool([jobs[i] for i in order], worker, workers)):
            results[index] = result
    else:
        for index, _ in pending:
            results[index] = worker.check(jobs[index])
    return results  # type: ignore[return-value]


class _Worker:
    """Checks one file, consulting and filling the cache. Sent once to each worker process."""

    def __init__(self, settings: Settings, mode: Mode, cache: Optional[Cache]) -> None:
        self.settings = settings
        self.mode = mode
        self.cache = cache

    def _settings(self, job: Job) -> Settings:
        return with_project_version(self.settings, job.path)

    def _key(self, job: Job, data: bytes) -> str:
        assert self.cache is not None
        # The version inferred from the project's dependency files changes results, so it is part of the key.
        inferred = self._settings(job).target_version
        # So are the modules around it in its project (imported, importing): a changed helper re-checks its users.
        around = project_for(job.path, self.settings.root).neighbourhood_digest(job.path)
        return self.cache.key(data, job.name, relative_to_root(job.path, self.settings), job.explicit,
                              f"{inferred!r}:{around}")

    def cached(self, job: Job, data: bytes) -> Optional[FileResult]:
        """The cached result of checking these bytes; with --fix/--diff, only when there is nothing to fix."""
        if self.cache is None:
            return None
        result = self.cache.get(self._key(job, data))
        if result is not None and self.mode.fixing:
            # Fixing a file that has no applicable fix changes nothing and reports what checking reports.
            if any(applicable(d, self.mode.unsafe) for d in result.diagnostics):
                return None
        return result

    def check(self, job: Job) -> FileResult:
        data = _read(job.path) if self.cache is not None else None
        result = process_file(job.path, job.name, self._settings(job), self.mode, job.explicit)
        if data is not None and self._storable(result) and _read(job.path) == data:
            # The bytes were the same before and after: the result belongs to them.
            assert self.cache is not None
            self.cache.put(self._key(job, data), result)
        if not result.diagnostics:
            result.text = None  # only files with findings need their text (for snippets)
        return result

    def _storable(self, result: FileResult) -> bool:
        if result.internal_errors or result.fixed or result.fixed_text is not None or result.diff is not None:
            return False
        # When fixing, an error may come from writing (not from the content): only store clean no-ops.
        return not (self.mode.fixing and result.errors)

    def check_chunk(self, chunk: Sequence[Job]) -> List[FileResult]:
        return [self.check(job) for job in chunk]


def _read(path: Path) -> Optional[bytes]:
    try:
        return path.read_bytes()
    except OSError:
        return None  # process_file reports it


# -- worker processes ----------------------------------------------------------------------------
_PROCESS_WORKER: Optional[_Worker] = None


def _start_worker(worker: _Worker) -> None:
    global _PROCESS_WORKER
    _PROCESS_WORKER = worker


def _check_chunk(chunk: Sequence[Job]) -> List[FileResult]:
    assert _PROCESS_WORKER is not None
    return _PROCESS_WORKER.check_chunk(chunk)


def _context():
    # fork starts a worker in milliseconds with everything already imported; elsewhere use the default.
    if sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context()


def _in_pool(jobs: Sequence[Job], worker: _Worker, workers: int) -> List[FileResult]:
    size = max(1, min(_CHUNK, len(jobs) // (workers * 4)))
    chunks = [list(jobs[i:i + size]) for i in range(0, len(jobs), size)]
    outcomes: List[Optional[List[FileResult]]] = [None] * len(chunks)
    pool = ProcessPoolExecutor(min(workers, len(chunks)), _context(), _start_worker, (worker,))
    try:
        futures: List[Future] = [pool.submit(_check_chunk, chunk) for chunk in chunks]
        for position, future in enumerate(futures):
            try:
                outcomes[position] = future.result()
            except BrokenProcessPool:
                pass  # a worker died (a crash in native code, out of memory): retried one by one below
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    results: List[FileResult] = []
    for chunk, outcome in zip(chunks, outcomes):
        results.extend(outcome if outcome is not None else [_isolated(job, worker) for job in chunk])
    return results


def _isolated(job: Job, worker: _Worker) -> FileResult:
    """Check one file in a process of its own, so that a crash loses only this file."""
    pool = ProcessPoolExecutor(1, _context(), _start_worker, (worker,))
    try:
        return pool.submit(_check_chunk, [job]).result()[0]
    except BrokenProcessPool:
        return FileResult(job.name, internal_errors=[
            "internal error in tflint-perf: the process checking this file died (please report this)"
        ])
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
