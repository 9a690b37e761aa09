"""Checking many files: cached results first, then the rest in worker processes (in-process when few).

Results come back in the order the files were given, whatever order the workers finish in, so the
output never depends on ``--jobs``. Each file is still checked by ``checker.process_file``; this
module only decides where and whether.

Whether: a file's cache key is computed from its project's manifest (``checking/manifest.py``): its
stat decides whether its recorded content digest and import edges hold, its neighbourhood digest
comes from the recorded graph, and the TensorFlow version is inferred once per directory. A warm run
over an unchanged project therefore reads no source file, resolves each directory once, and imports
neither the engine nor the rules (nor LibCST): those are imported when a file must be checked.
"""

from __future__ import annotations

import os
import stat as stat_module
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from tflint_perf.checking.cache import Cache
from tflint_perf.checking.config import Settings, with_inferred_version
from tflint_perf.checking.discovery import relative_to_root
from tflint_perf.checking.manifest import MARKERS, ProjectFiles, content_digest, manifest_name
from tflint_perf.checking.results import FileResult, Mode
from tflint_perf.project.index import project_for, project_root
from tflint_perf.project.tf_version import NOTEBOOK_SUFFIX, VersionSearch

# Below this much work (bytes of source that mentions TensorFlow/Keras, i.e. that gets parsed), starting
# workers costs more than it saves. Measured (docs/performance.md): checking costs 2.5-5 ms of CPU per KB;
# a pool of two costs about 10 ms to start with fork, about 0.5 s with spawn (each worker imports LibCST).
POOL_MIN_WORK = 64 * 1024
POOL_MIN_WORK_SPAWN = 512 * 1024
_CHUNK = 8  # at most this many files per task sent to a worker: fewer round trips, still balanced


@dataclass(frozen=True)
class Job:
    path: Path
    name: str  # as reported
    explicit: bool  # named on the command line rather than found in a directory
    real: Optional[str] = None  # its real path, when discovery resolved it (never for a link)


@dataclass(frozen=True)
class _Task:
    """A file to check, with what decides its result: its settings (the TensorFlow version inferred
    for it) and the cache key its result is stored under, for the bytes whose digest is ``content``."""

    job: Job
    settings: Settings
    key: Optional[str] = None  # None: not cached (no cache, or the file cannot be read)
    content: Optional[bytes] = None


def default_jobs() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def process_file(path: Path, name: str, settings: Settings, mode: Mode, explicit: bool) -> FileResult:
    """``checker.process_file``, imported only when a file must be checked (the engine imports LibCST
    and the rules, which a warm run never needs)."""
    from tflint_perf.checking.checker import process_file as process

    return process(path, name, settings, mode, explicit)


def check_files(
    jobs: Sequence[Job], settings: Settings, mode: Mode, cache: Optional[Cache], workers: int
) -> List[FileResult]:
    """One result per job, in the jobs' order."""
    plan = _Plan(settings, cache)
    worker = _Worker(mode, cache)
    results: List[Optional[FileResult]] = [None] * len(jobs)
    tasks: List[Optional[_Task]] = [None] * len(jobs)
    pending: List[Tuple[int, int]] = []  # (index, estimated work)
    for index, job in enumerate(jobs):
        task, work = plan.task(job)
        hit = worker.cached(task)
        if hit is not None:
            results[index] = hit
        else:
            tasks[index] = task
            pending.append((index, work))
    if pending:
        plan.prepare_checks()
    work = sum(size for _, size in pending)
    if workers > 1 and len(pending) > 1 and work >= _pool_threshold():
        # Largest first, so that no big file is left to run alone at the end.
        order = [index for index, _ in sorted(pending, key=lambda item: -item[1])]
        for index, result in zip(order, _in_pool([tasks[i] for i in order], worker, workers)):
            results[index] = result
    else:
        for index, _ in pending:
            results[index] = worker.check(tasks[index])  # type: ignore[arg-type]
    plan.finish(bool(pending))
    return results  # type: ignore[return-value]


@dataclass
class _Directory:
    real: str  # its real path, resolved once per run
    settings: Settings  # with the TensorFlow version inferred for the files in it
    project: Optional[ProjectFiles] = None


class _Plan:
    """One run's view of the files: each directory resolved once, each directory's TensorFlow version
    inferred once, each project's files known from its manifest; the key of each file from those."""

    def __init__(self, settings: Settings, cache: Optional[Cache]) -> None:
        self.settings = settings
        self.cache = cache
        self._started = time.time_ns()
        self._directories: Dict[str, _Directory] = {}
        self._versioned: Dict[str, Settings] = {}
        self._projects: Dict[Path, ProjectFiles] = {}
        remembered = cache.load_meta("versions") if cache is not None else None
        stamps = remembered.get("stamps") if remembered is not None else None
        self.versions = VersionSearch(stamps if isinstance(stamps, dict) else None)
        root = str(settings.root)
        self._root_prefix = root if root.endswith(os.sep) else root + os.sep
        # project_for's fallback root: the directory the command runs in, for the files below it.
        self._fallback = settings.root.resolve()
        self._fallback_text = str(self._fallback)
        self._fallback_prefix = self._fallback_text.rstrip(os.sep) + os.sep

    def task(self, job: Job) -> Tuple[_Task, int]:
        """The file's task (its key, when cached) and the work checking it would take."""
        given = str(job.path)
        if job.real is not None:  # found by discovery, which resolved its directory
            directory = self._real_directory(os.path.dirname(job.real))
            name = os.path.basename(job.real)
        else:
            parent, name = os.path.split(given)
            directory = self._directory(parent)
        if not job.path.suffix:  # searched from the path itself, as ``config.with_project_version`` does
            settings = self._settings_from(os.path.join(directory.real, name))
        elif name.endswith(NOTEBOOK_SUFFIX):  # a notebook's own declaration beats its directory's
            settings = self._notebook_settings(job.real or os.path.join(directory.real, name), directory.settings)
        else:
            settings = directory.settings
        if self.cache is None:
            data = _read(job.path)
            return _Task(job, settings), (len(data) if data is not None and any(m in data for m in MARKERS) else 0)
        try:
            status: os.stat_result = os.lstat(job.real or given)
            if stat_module.S_ISLNK(status.st_mode):
                real = os.path.realpath(given)
                status = os.stat(real)
                files = self._project_files(os.path.dirname(real), real)
            else:
                real = job.real or os.path.join(directory.real, name)
                if directory.project is None:
                    directory.project = self._project_files(directory.real, real)
                files = directory.project
        except OSError:
            return _Task(job, settings), 0  # process_file reports it
        state = files.state(real, status)
        if state is None:
            return _Task(job, settings), 0
        around = files.neighbourhood_digest(real)
        key = self.cache.key(state.digest, job.name, self._relative(real, job.path), job.explicit,
                             f"{settings.target_version!r}:{settings.target_version_guessed}:{settings.target_version_inferred}:{around}:"
                             f"{files.distributed}")
        return _Task(job, settings, key, state.digest), (status.st_size if state.marked else 0)

    def _directory(self, parent: str) -> _Directory:
        """A directory as named, resolved once."""
        known = self._directories.get(parent)
        if known is None:
            known = self._directories[parent] = self._real_directory(os.path.realpath(parent or os.curdir))
        return known

    def _real_directory(self, real: str) -> _Directory:
        known = self._directories.get(real)
        if known is None:
            known = self._directories[real] = _Directory(real, self._settings_from(real))
        return known

    def _settings_from(self, start: str) -> Settings:
        """The settings with the TensorFlow version of the project around ``start`` (a real path),
        when none is configured: ``config.with_project_version``, one search per directory."""
        if self.settings.target_version is not None:
            return self.settings
        known = self._versioned.get(start)
        if known is None:
            inferred = self.versions.infer(start)
            known = self.settings if inferred is None else with_inferred_version(self.settings, inferred)
            self._versioned[start] = known
        return known

    def _notebook_settings(self, real: str, around: Settings) -> Settings:
        """The settings of a notebook, when no version is configured: ``VersionSearch.for_notebook``'s
        answer (the one every entry point gives), or its directory's settings (``around``) where
        that answer is the directory's."""
        if self.settings.target_version is not None:
            return around
        inferred = self.versions.for_notebook(real, self._fallback)
        if inferred is None or inferred == self.versions.infer(os.path.dirname(real)):
            return around
        return with_inferred_version(self.settings, inferred)

    def _project_files(self, real_directory: str, real_file: str) -> ProjectFiles:
        """The project of the files in a directory (``project_for``'s answer, asked once per project)."""
        fallback = self._fallback if real_directory == self._fallback_text or real_directory.startswith(
            self._fallback_prefix) else None
        root = project_root(Path(real_directory), fallback)
        files = self._projects.get(root)
        if files is None:
            project = project_for(Path(real_file), self.settings.root)  # the index's own Project: shared with the checks
            files = self._projects.get(project.root)
            if files is None:
                assert self.cache is not None
                files = ProjectFiles(project, self.cache.load_meta(manifest_name(str(project.root))), self._started)
            self._projects[root] = self._projects[project.root] = files
        return files

    def _distinct_projects(self) -> List[ProjectFiles]:
        return list({id(files): files for files in self._projects.values()}.values())

    def _relative(self, real: str, path: Path) -> str:
        """``discovery.relative_to_root`` of a path whose real path is known."""
        if real.startswith(self._root_prefix) and os.sep == "/":
            return real[len(self._root_prefix):]
        return relative_to_root(path, self.settings, Path(real))

    def prepare_checks(self) -> None:
        """Before checking: the cache directory, and the imports known from the manifests handed to
        each project's index (checking a changed file then reads no other file's imports)."""
        if self.cache is not None:
            self.cache.prepare()
        for files in self._distinct_projects():
            files.seed()

    def finish(self, checked: bool) -> None:
        """Store what this run learned for the next: the manifests, the dependency files' stamps,
        the settings' fingerprint. Nothing is written where no cache directory exists or was needed."""
        cache = self.cache
        if cache is None or not (checked or cache.directory.is_dir()):
            return
        for files in self._distinct_projects():
            if files.changed:
                cache.save_meta(manifest_name(files.root), files.document())
        if self.versions.read:
            cache.save_meta("versions", {"stamps": self.versions.stamps})
        cache.flush()


class _Worker:
    """Checks one file, consulting and filling the cache. Sent once to each worker process."""

    def __init__(self, mode: Mode, cache: Optional[Cache]) -> None:
        self.mode = mode
        self.cache = cache

    def cached(self, task: _Task) -> Optional[FileResult]:
        """The cached result of checking these bytes; with --fix/--diff, only when there is nothing to fix."""
        if self.cache is None or task.key is None:
            return None
        result = self.cache.get(task.key)
        if result is not None and self.mode.fixing:
            from tflint_perf.fixes.fixer import applicable

            # Fixing a file that has no applicable fix changes nothing and reports what checking reports.
            if any(applicable(d, self.mode.unsafe) for d in result.diagnostics):
                return None
        return result

    def check(self, task: _Task) -> FileResult:
        job = task.job
        result = process_file(job.path, job.name, task.settings, self.mode, job.explicit)
        if task.key is not None and self._storable(result):
            data = _read(job.path)
            if data is not None and content_digest(data) == task.content:
                # The bytes the key was computed for are the bytes after the check: the result belongs to them.
                assert self.cache is not None
                self.cache.put(task.key, result)
        if not result.diagnostics:
            result.text = None  # only files with findings need their text (for snippets)
        return result

    def _storable(self, result: FileResult) -> bool:
        if result.internal_errors or result.fixed or result.fixed_text is not None or result.diff is not None:
            return False
        # When fixing, an error may come from writing (not from the content): only store clean no-ops.
        return not (self.mode.fixing and result.errors)

    def check_chunk(self, chunk: Sequence[_Task]) -> List[FileResult]:
        return [self.check(task) for task in chunk]


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


def _check_chunk(chunk: Sequence[_Task]) -> List[FileResult]:
    assert _PROCESS_WORKER is not None
    return _PROCESS_WORKER.check_chunk(chunk)


def _pool_threshold() -> int:
    return POOL_MIN_WORK if _context().get_start_method() == "fork" else POOL_MIN_WORK_SPAWN


def _context():
    # fork starts a worker in milliseconds with everything already imported; elsewhere use the default.
    import multiprocessing  # only when checking: a warm run starts no worker

    if sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context()


def _in_pool(tasks: Sequence[_Task], worker: _Worker, workers: int) -> List[FileResult]:
    from concurrent.futures import Future, ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    size = max(1, min(_CHUNK, len(tasks) // (workers * 4)))
    chunks = [list(tasks[i:i + size]) for i in range(0, len(tasks), size)]
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
        results.extend(outcome if outcome is not None else [_isolated(task, worker) for task in chunk])
    return results


def _isolated(task: _Task, worker: _Worker) -> FileResult:
    """Check one file in a process of its own, so that a crash loses only this file."""
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    pool = ProcessPoolExecutor(1, _context(), _start_worker, (worker,))
    try:
        return pool.submit(_check_chunk, [task]).result()[0]
    except BrokenProcessPool:
        return FileResult(task.job.name, internal_errors=[
            "internal error in tflint-perf: the process checking this file died (please report this)"
        ])
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
