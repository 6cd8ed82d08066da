"""The pytest plugin: tasks as test items, the JSON report, junit properties and xdist (docs/scoring.md).

The plugin holds no maths: it asks :mod:`pytest_overdub.bench` to score and only arranges the answers as
pytest nodes. Importing this module touches neither numpy nor scipy; the layers load when a task runs.

Collection tree (so ``-k`` reaches a task or one check and junit has one testcase per check)::

    TasksDir (tasks/)                      -- the bench-level ``bench`` item in self-check mode
      TaskFile (tasks/<id>.json)
        Task (<id>)                        -- scores once, lazily, on its first item; the result is cached
          CheckItem (<check id>) ...       -- submission mode: one per check, plus ``clean``, ``scope`` and ``score``
          RuleItem (oracle, baseline, alt-<what>, near-<what>, cheat-<what>, repeat)   -- self-check mode
      VariantFile (tasks/<task>@<seed>.json: no such file; the sample of ``--overdub-variants``)
        VariantTask (<task>@<seed>)        -- a Task whose rules come from its template, not from files

When is the plugin active?

* ``--overdub-submission=PATH``: score that answer on the tasks of ``--overdub-tasks`` (or the ini option
  ``overdub_tasks``), else ``tasks/`` at the rootdir, else the bundled tasks. PATH may be a folder of
  answers, ``<task-id>.json`` each: every task is scored on its own answer, and a task without one is
  skipped, the reason naming the file it looked for.
* No submission: the bench's self-check, when a tasks directory is named, when ``--overdub-self-check`` is
  given (the bundled bench if the rootdir has no ``tasks/``), or when the rootdir is a bench checkout
  (it has ``tasks/``, ``songs/`` and ``oracles/``).
* Otherwise (someone else's project with the plugin installed) the plugin collects nothing.

How the tasks get collected: the tasks directory is appended to the session's arguments in
``pytest_configure`` when the arguments were not given explicitly (they came from ``testpaths`` or the
current directory) or when an ``--overdub-`` option asked for a run. So a plain ``pytest`` in a bench
checkout runs ``testpaths`` *and* the self-check, while ``pytest tests/unit/test_x.py`` runs just that file.

Data for junit and xdist rides on ``item.user_properties`` (set before a failure is raised): readable
``value``/``unit``/``target``/``score`` properties, and the exact records as JSON under ``overdub.*``. The
controller rebuilds the report from ``pytest_runtest_logreport`` and writes it once in
``pytest_sessionfinish``. Under xdist the distribution mode ``load`` is turned into ``loadscope`` so each
task renders on one worker.
"""

from __future__ import annotations

import functools
import json
import platform
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, NoReturn

import pytest

PASS_DEFAULT = 0.9
FAMILIES = ("mix", "writing", "device", "editing", "mastering", "mixdown", "transcription")
_PACKAGES = ("pytest-overdub", "pytest", "numpy", "scipy", "numba", "pydantic", "soundfile", "mido", "pytest-xdist")


class OverdubFailure(Exception):
    """A check, rule or task that did not hold; its message is the whole story (no traceback shown)."""


@dataclass
class Mode:
    """What this session does: ``submission`` (score an answer) or ``self-check`` (the validity rules)."""

    kind: str
    tasks_dir: Path
    submission_path: Path | None = None
    submission: Any = None  # pytest_overdub.song.submission.Submission; None when submission_path is a folder
    answers_dir: bool = False  # submission_path is a folder of <task-id>.json answers
    pass_line: float = PASS_DEFAULT
    trusted: bool | None = None
    report_path: Path | None = None
    variants: Any = 0  # train variants per template (None: all) or a Draw, see bench/variant_sample.py

    @property
    def self_check(self) -> bool:
        return self.kind == "self-check"

    def bench(self) -> Any:
        return _bench_for(self.tasks_dir)

    @property
    def submission_sha256(self) -> str:
        """The submission's sha256; for a notes answer, of its file (a folder: its files' names and bytes)."""
        if self.submission is not None:
            return self.submission.sha256
        import hashlib

        h = hashlib.sha256()
        path = self.submission_path
        for f in sorted(p for p in path.iterdir() if p.is_file()) if path.is_dir() else [path]:
            h.update((f.name.encode() + b"\0" if path.is_dir() else b"") + f.read_bytes())
        return h.hexdigest()


@dataclass
class Collected:
    """What the controller gathers from the run's reports, to write the JSON report and the summary."""

    tasks: dict[str, dict[str, Any]] = field(default_factory=dict)
    bench: dict[str, Any] | None = None
    selected: int = 0
    tasks_collected: bool = False
    report_error: str | None = None
    expected: set[str] = field(default_factory=set)  # the ids of the tasks the run selected
    crashed: dict[str, str] = field(default_factory=dict)  # task id -> how its xdist worker crashed

    def entry(self, task_id: str) -> dict[str, Any]:
        return self.tasks.setdefault(task_id, {"checks": [], "rules": []})


MODE_KEY = pytest.StashKey["Mode | None"]()
COLLECTED_KEY = pytest.StashKey[Collected]()


# --- options ---------------------------------------------------------------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("overdub", "pytest-overdub: score music-making agents")
    group.addoption("--overdub-submission", metavar="PATH", default=None,
                    help="score this submission (ops, {ops}, transactions, a tool-call log or a song) on the "
                         "tasks, or a folder of answers: <task-id>.json per song task, an audio task's answer files "
                         "in DIR/<task-id>/ (or DIR itself); a task without an answer is skipped")
    group.addoption("--overdub-tasks", metavar="DIR", default=None,
                    help="the tasks directory (or a bench directory holding tasks/); default: tasks/ at the rootdir, "
                         "else the bundled tasks")
    group.addoption("--overdub-self-check", action="store_true", default=False,
                    help="run the bench's validity rules (oracle, baseline, alternatives, near misses, cheats, "
                         "repeat) on purpose")
    group.addoption("--overdub-pass", metavar="SCORE", default=None,
                    help=f"the task score the `score` item must reach, 0..1 (default {PASS_DEFAULT})")
    group.addoption("--overdub-report", metavar="PATH", default=None, help="write the JSON report here")
    group.addoption("--overdub-trust-kernels", action="store_true", default=False,
                    help="run song-defined device kernels in-process instead of the sandbox "
                         "(also OVERDUB_TRUST_KERNELS=1)")
    group.addoption("--overdub-weak-sandbox", action="store_true", default=False,
                    help="run untrusted kernels even where a required sandbox layer cannot be applied "
                         "(also OVERDUB_WEAK_SANDBOX=1); the report says which layers ran")
    group.addoption("--overdub-variants", metavar="N|all", default=None,
                    help="also collect the fixed sample of N train variants (<task>@<seed>) of each task, or all 99 "
                         "(default: 10 for a folder of answers, none for one answer file, "
                         "the self-check's sample in the self-check; see the README)")
    parser.addini("overdub_tasks", "the tasks directory, relative to the ini file", default="")


def pytest_configure(config: pytest.Config) -> None:
    for name, text in (("overdub", "a pytest-overdub task item"), ("gate", "a pytest-overdub gate check"),
                       *((f, f"a pytest-overdub task of the {f} family") for f in FAMILIES)):
        config.addinivalue_line("markers", f"{name}: {text}")
    if _opt(config, "overdub_weak_sandbox"):
        from .render.trust import allow_weak_sandbox

        allow_weak_sandbox()
    mode = _resolve_mode(config)
    config.stash[MODE_KEY] = mode
    config.stash[COLLECTED_KEY] = Collected()
    if mode is None:
        return
    _enter_runtime()
    config.pluginmanager.register(Recorder(config), "overdub-recorder")
    if _should_add_tasks(config):
        target = str(mode.tasks_dir)
        if all(Path(a.split("::")[0]).resolve() != mode.tasks_dir for a in config.args):
            config.args.append(target)
    if getattr(config.option, "dist", "no") == "load":
        config.option.dist = "loadscope"  # each task renders on one worker
    _prestart_sandbox(config, mode)


def _enter_runtime() -> None:
    """This session may score: the scorer runtime owns the process-wide settings (see :mod:`.runtime`)."""
    from . import runtime
    from .errors import OverdubError

    try:
        runtime.enter("pytest")
    except OverdubError as exc:
        raise pytest.UsageError(str(exc)) from None


def _prestart_sandbox(config: pytest.Config, mode: Mode) -> None:
    """Start the kernel sandbox's fork server now, without waiting for it, when this process will score
    a submission that defines devices and kernels are not trusted: its start (numpy and scipy imported in
    a fresh process, about 2 s here) then overlaps this process's own imports and renders instead of
    holding up the first song-defined device. Not in an xdist controller, which scores nothing."""
    if mode.kind != "submission" or mode.trusted or not _defines_devices(mode.submission):
        return
    if getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput"):
        return
    from .render.trust import trust_kernels_default

    if trust_kernels_default():
        return
    from .render.sandbox import prestart

    prestart()


def _defines_devices(submission: Any) -> bool:
    """True when a submission's song or ops define a song-defined device."""
    if submission is None:
        return False
    if submission.song is not None:
        return bool(submission.song.devices)
    return any(isinstance(op, dict) and op.get("type") == "device.define"
               for ops in submission.transactions for op in ops)


def _opt(config: pytest.Config, name: str) -> Any:
    return config.getoption(name, default=None)


def _check_options(config: pytest.Config) -> None:
    """Refuse option combinations that cannot mean what was asked (a usage error, before any work)."""
    for name, want in (("submission", "a submission file"), ("tasks", "a tasks folder"),
                       ("report", "a JSON report file")):
        if _opt(config, f"overdub_{name}") == "":  # an unset CI variable: not the same as no option
            raise pytest.UsageError(f"--overdub-{name} is empty; want {want}")
    sub, report = _opt(config, "overdub_submission"), _opt(config, "overdub_report")
    if sub and _opt(config, "overdub_self_check"):
        raise pytest.UsageError("--overdub-self-check scores the bench's own answers, --overdub-submission "
                                "scores one answer; give one of them")
    if sub and report and Path(sub).resolve() == Path(report).resolve():
        raise pytest.UsageError(f"--overdub-report={report} would overwrite the submission; want another file")


def _resolve_mode(config: pytest.Config) -> Mode | None:
    _check_options(config)
    sub_arg = _opt(config, "overdub_submission")
    self_check = bool(_opt(config, "overdub_self_check"))
    tasks_dir = _named_tasks_dir(config)
    root = config.rootpath
    if tasks_dir is None:
        local = root / "tasks"
        has_local = local.is_dir() and any(local.glob("*.json"))
        checkout = has_local and (root / "songs").is_dir() and (root / "oracles").is_dir()
        if has_local and (sub_arg or self_check or checkout):
            tasks_dir = local.resolve()
        elif sub_arg or self_check:
            from .bench.tasks import bundled_bench

            tasks_dir = bundled_bench().tasks_dir.resolve()
        elif _opt(config, "overdub_report"):
            raise pytest.UsageError("--overdub-report: nothing here to report on; give --overdub-submission=PATH, "
                                    "--overdub-self-check or --overdub-tasks=DIR, or run in a bench checkout")
        else:
            return None
    mode = Mode(kind="submission" if sub_arg else "self-check", tasks_dir=tasks_dir,
                pass_line=_pass_line(_opt(config, "overdub_pass")),
                trusted=True if _opt(config, "overdub_trust_kernels") else None,
                variants=_variants(_opt(config, "overdub_variants"), self_check=not sub_arg,
                                   answers_folder=bool(sub_arg) and Path(sub_arg).is_dir()))
    report = _opt(config, "overdub_report")
    if report:
        mode.report_path = _report_path(config, report)
    if sub_arg:
        from .errors import OverdubError
        from .song.submission import load_submission

        mode.submission_path = Path(sub_arg).resolve()
        mode.answers_dir = mode.submission_path.is_dir()
        if mode.answers_dir:
            return mode  # each task reads its own answer when it scores (see Task.submission)
        try:
            mode.submission = load_submission(mode.submission_path)
        except OverdubError as exc:
            if not _notes_answer(mode.submission_path):
                raise pytest.UsageError(f"--overdub-submission={sub_arg}: {exc}") from None
            mode.submission = None  # notes: read by each transcription task for its parts
    return mode


def _notes_answer(path: Path) -> bool:
    """A transcription answer (a folder, a MIDI file, or a JSON object with ``parts``), not a song or ops."""
    if path.is_dir() or path.suffix.lower() in (".mid", ".midi"):
        return True
    try:
        return "parts" in json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, TypeError):
        return False


def _report_path(config: pytest.Config, text: str) -> Path:
    """``--overdub-report``'s path, checked now (a folder, a missing folder, a place that cannot be written,
    not ``.json``: a usage error before anything is scored). xdist workers never write it."""
    if not hasattr(config, "workerinput"):
        from .cliargs import output_file
        from .errors import UsageError

        try:
            output_file(text, what="JSON report file", suffixes=(".json",))
        except UsageError as exc:
            raise pytest.UsageError(f"--overdub-report={text}: {exc}") from None
    return Path(text).resolve()


def _named_tasks_dir(config: pytest.Config) -> Path | None:
    opt = _opt(config, "overdub_tasks")
    if opt:
        path, where = Path(opt), "--overdub-tasks"
        path = path if path.is_absolute() else Path(config.invocation_params.dir) / path
    else:
        ini = config.getini("overdub_tasks")
        if not ini:
            return None
        base = config.inipath.parent if config.inipath else config.rootpath
        path, where = base / ini, "ini option overdub_tasks"
    if (path / "tasks").is_dir():
        path = path / "tasks"
    if not path.is_dir() or not any(path.glob("*.json")):
        raise pytest.UsageError(f"{where}={opt or config.getini('overdub_tasks')}: {path} is not a directory "
                                "of task files (<id>.json), nor a bench directory holding tasks/")
    return path.resolve()


def _pass_line(text: str | None) -> float:
    if text is None:
        return PASS_DEFAULT
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0.0 <= value <= 1.0:
        raise pytest.UsageError(f"--overdub-pass={text}: want a task score between 0 and 1 (e.g. 0.9)")
    return value


def _variants(text: str | None, *, self_check: bool, answers_folder: bool) -> Any:
    """``--overdub-variants``: a number per template, ``all`` (None), or the mode's default sample
    (:func:`.bench.variant_sample.default_count`: the self-check's draw across templates, a folder of answers
    10 per template, one answer file none)."""
    from .bench.variant_sample import default_count, variant_count

    if text is None:
        return default_count(self_check=self_check, answers_folder=answers_folder)
    from .errors import OverdubError

    try:
        return variant_count(text, what="--overdub-variants")
    except OverdubError as exc:
        raise pytest.UsageError(str(exc)) from None


def _should_add_tasks(config: pytest.Config) -> bool:
    asked = any(_opt(config, n) for n in ("overdub_submission", "overdub_self_check", "overdub_tasks"))
    return asked or config.args_source != pytest.Config.ArgsSource.ARGS


def _bench_for(tasks_dir: Path) -> Any:
    from .bench.tasks import Bench

    if tasks_dir.name == "tasks":
        return Bench(tasks_dir.parent)
    return _named_bench_class()(tasks_dir.parent, tasks_dir)


@functools.lru_cache(maxsize=1)
def _named_bench_class() -> type:
    from dataclasses import dataclass as _dc

    from .bench.tasks import Bench

    @_dc(frozen=True)
    class NamedBench(Bench):
        """A bench whose tasks directory is not called ``tasks``."""

        tasks_path: Path = Path("tasks")

        @property
        def tasks_dir(self) -> Path:  # type: ignore[override]
            return self.tasks_path

    return NamedBench


# --- collection ------------------------------------------------------------------------------------


@pytest.hookimpl(tryfirst=True)
def pytest_collect_directory(path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    mode = parent.config.stash.get(MODE_KEY, None)
    if mode is not None and path.resolve() == mode.tasks_dir:
        return TasksDir.from_parent(parent, path=path)
    return None


class TasksDir(pytest.Directory):
    """The tasks directory: one TaskFile per ``<id>.json``, and the bench-level rule in self-check mode."""

    def collect(self) -> Iterator[pytest.Item | pytest.Collector]:
        mode: Mode = self.config.stash[MODE_KEY]
        self.config.stash[COLLECTED_KEY].tasks_collected = True
        if mode.self_check:
            yield BenchItem.from_parent(self, name="bench")
        for path in sorted(self.path.glob("*.json")):
            yield TaskFile.from_parent(self, path=path)
        if mode.variants != 0:
            from .bench.variant_sample import run_ids

            for vid in run_ids(mode.variants, [p.stem for p in self.path.glob("*.json")]):
                yield VariantFile.from_parent(self, path=self.path / f"{vid}.json")


class VariantFile(pytest.File):
    """A variant ``<task>@<seed>``, collected as if from ``tasks/<task>@<seed>.json`` (no such file: the
    variant is generated from its id), so its items' node ids read like a task file's. Collected from its id
    and template alone: the variant is built when its items need it (:class:`VariantTask`)."""

    def collect(self) -> Iterator[pytest.Collector]:
        from .bench.variants import parse_variant_id, templates
        from .errors import OverdubError

        vid = self.path.stem
        try:
            name, _ = parse_variant_id(vid)
        except OverdubError as exc:
            raise self.CollectError(str(exc)) from None
        yield VariantTask.from_parent(self, name=vid, template=templates()[name])


class TaskFile(pytest.File):
    """``tasks/<id>.json``: loads the task (a bad file is one collection error naming the problem)."""

    def collect(self) -> Iterator[pytest.Collector]:
        from .errors import OverdubError
        from .bench.tasks import load_task

        try:
            task = load_task(self.path)
        except OverdubError as exc:
            raise self.CollectError(str(exc)) from None
        yield Task.from_parent(self, name=task.id, task=task)


class Task(pytest.Collector):
    """One task (its name is the task's id); scores (or runs its validity rules) once, on the first item that
    needs it."""

    def __init__(self, *, task: Any, **kw: Any) -> None:
        super().__init__(**kw)
        self._task = task
        self.mode: Mode = self.config.stash[MODE_KEY]
        self._cache: dict[str, Any] = {}
        self.detail_sent = False
        self.error_item: str | None = None  # the node id of the item that reported the task's error
        self.add_marker("overdub")
        self.add_marker(self.family)

    @property
    def task(self) -> Any:
        return self._task

    @property
    def family(self) -> str:
        return self.task.family

    @property
    def is_audio(self) -> bool:
        return self.task.is_audio

    @property
    def answer_names(self) -> tuple[str, ...]:
        """An audio task's answer file names."""
        return tuple(a.name for a in self.task.answer)

    def collect(self) -> Iterator[pytest.Item]:
        if self.mode.self_check:
            bench = self.mode.bench()
            yield RuleItem.from_parent(self, name="oracle", rule="oracle")
            yield RuleItem.from_parent(self, name="baseline", rule="baseline")
            for kind, paths in (("alt", bench.alternative_paths(self.name)),
                                ("near", bench.near_miss_paths(self.name)),
                                ("cheat", bench.cheat_paths(self.name))):
                for path in paths:  # <task>.<what>.json, <task>.alt-<what>.json, <task>.cheat-<what>.json
                    what = path.name[len(self.name) + 1:-len(".json")]
                    what = what if kind == "near" else what[len(kind) + 1:]
                    yield RuleItem.from_parent(self, name=f"{kind}-{what}", rule=f"{kind}:{what}", path=path)
            yield RuleItem.from_parent(self, name="repeat", rule="repeat")
            return
        if self.mode.answers_dir and not self.has_answer():
            raise pytest.skip.Exception(f"no answer for task {self.name}: no file {self.submission_path()}")
        yield from self._check_items()

    def _check_items(self) -> Iterator[pytest.Item]:
        for check in self.task.checks:
            yield CheckItem.from_parent(self, name=check.id, check_id=check.id, gate=check.gate)
        for gate in self.task.house_gates:
            yield CheckItem.from_parent(self, name=gate, check_id=gate, gate=True)
        yield ScoreItem.from_parent(self, name="score")

    def has_answer(self) -> bool:
        """In a folder of answers: this task's file (a song task) or any of its answer files (an audio task)."""
        folder = self.mode.submission_path
        assert folder is not None
        if self.family == "transcription":
            from .transcribe.answer import FOLDER_NAMES

            return (folder / self.name).is_dir() or any((folder / n).is_file() for n in FOLDER_NAMES)
        if not self.is_audio:
            return self.submission_path().is_file()
        return (folder / self.name).is_dir() or any(any(folder.glob(n)) for n in self.answer_names)

    def submission_path(self) -> Path:
        """The file a song task's answer comes from: the submission, or ``<folder>/<task-id>.json``."""
        path = self.mode.submission_path
        assert path is not None
        return path / f"{self.name}.json" if self.mode.answers_dir else path

    def submission(self) -> Any:
        """This task's Submission (a folder's answer is read here; a bad one raises OverdubError)."""
        if not self.mode.answers_dir:
            return self.mode.submission
        if "submission" not in self._cache:
            from .song.submission import load_submission

            self._cache["submission"] = load_submission(self.submission_path())
        return self._cache["submission"]

    # the one scoring of a submission on this task
    def result(self) -> Any:
        """The TaskResult of the submission; a task that cannot be scored raises OverdubFailure each time."""
        if "result" not in self._cache:
            from .bench.tasks import score_task
            from .errors import OverdubError
            from .worker_crashes import ScoredBefore, crash_guard

            t0 = time.perf_counter()
            try:
                with crash_guard(getattr(self.config, "workerinput", None), self.name):
                    res = self._score(score_task)
                self._cache["result"] = (res, round(time.perf_counter() - t0, 3))
            except (OverdubError, ScoredBefore) as exc:
                self._cache["result"] = OverdubFailure(f"task {self.name}: {exc}")
        cached = self._cache["result"]
        if isinstance(cached, OverdubFailure):
            raise cached
        return cached[0]

    def _score(self, score_task: Any) -> Any:
        """Score this task's answer: the submission (a song task: the file, or ``DIR/<task-id>.json`` in a
        folder of answers), an audio task's answer files in the folder (``DIR/<task-id>/`` or ``DIR``), or a
        transcription task's notes for its parts (a notes file, a MIDI file, or a folder: ``DIR/<task-id>/``
        when there is one, else ``DIR``)."""
        from .errors import SubmissionError

        mode, bench = self.mode, self.mode.bench()
        if self.task.family == "transcription":
            if mode.submission is not None:  # a song or ops: the task refuses it in its result
                return score_task(self.task, mode.submission, bench=bench)
            from .transcribe.answer import read_answer

            path = mode.submission_path
            path = path / self.name if (path / self.name).is_dir() else path
            return score_task(self.task, read_answer(path, parts=self.task.parts), bench=bench)
        if self.task.is_audio:
            if not mode.answers_dir:
                raise SubmissionError(f"{mode.submission_path}: {self.name} is an audio task; its answer is "
                                      "a folder holding " + ", ".join(a.name for a in self.task.answer))
            from .bench.audio.score import score_audio_task

            return score_audio_task(self.task, mode.submission_path, bench=bench)
        if mode.submission is None and not mode.answers_dir:
            raise SubmissionError(f"{mode.submission_path} holds notes (a transcription answer); {self.name} "
                                  "takes ops or a song")
        return score_task(self.task, self.submission(), bench=bench, trusted=mode.trusted)

    def verdict(self, rule: str, path: Path | None) -> Any:
        """Run one validity rule (the oracle's result is reused by ``repeat``)."""
        from .bench import validity

        bench, trusted = self.mode.bench(), self.mode.trusted
        if rule == "oracle":
            self._cache["oracle"] = validity.check_oracle(self.task, bench, trusted=trusted)
            return self._cache["oracle"]
        if rule == "baseline":
            return validity.check_baseline(self.task, bench, trusted=trusted)
        if rule == "repeat":
            first = self._cache.get("oracle")
            return validity.check_repeat(self.task, bench, first=first.result if first else None, trusted=trusted)
        check = {"alt": validity.check_alternative, "cheat": validity.check_cheat}.get(rule.split(":")[0],
                                                                                      validity.check_near_miss)
        return check(self.task, path, bench, trusted=trusted)

    def task_detail(self, result: Any) -> dict[str, Any]:
        from .errors import OverdubError

        try:
            task = self.task
        except OverdubError:  # a variant that cannot be built: its items say why
            return {"id": self.name, "title": None, "family": self.family, "given": []}
        detail = {"id": self.name, "title": task.title, "family": task.family,
                  "given": list(getattr(task, "given", ()))}  # an oracle run's; [] blind
        if result is not None:
            seconds = self._cache["result"][1]
            detail.update(score=result.score, passed=result.score >= self.mode.pass_line,
                          grader_hash=result.grader_hash, warnings=list(result.warnings), error=result.error,
                          timings={**result.timings, "task_seconds": seconds}, confinement=result.confinement)
            if self.mode.answers_dir and not self.task.is_audio and self.task.family != "transcription":
                detail["submission"] = {"path": str(self.submission_path()), "sha256": self.submission().sha256}
        return detail


class VariantTask(Task):
    """A variant: scored like any task; in the self-check its rules are computed from its template (the
    oracle, doing nothing, each near miss and cheat, repeat) rather than read from answer files.

    Collected from its template (family, rule names, answer files: :class:`~.bench.templates.base.Template`):
    the variant is built on first use of :attr:`task`, when an item runs, in the worker that runs it, and
    kept by :func:`~.bench.variants.variant`'s cache for the variant's other items (xdist's ``loadscope``
    runs them together). Scored on an answer, its items are its task's checks, which can depend on the seed
    (a transcription variant's parts), so a variant that has an answer is built at collection; one without
    is skipped first. A build that fails fails the variant's items with its message."""

    def __init__(self, *, template: Any, **kw: Any) -> None:
        self.template = template
        super().__init__(task=None, **kw)

    @property
    def task(self) -> Any:
        error = self._build()
        if error is not None:
            raise error
        return self._cache["task"]

    def _build(self) -> Exception | None:
        """Build the variant's task (once): None, or the error the build raised (kept, not built again)."""
        if "task" not in self._cache:
            from .errors import OverdubError

            try:
                self._cache["task"] = self.mode.bench().task(self.name)
            except OverdubError as exc:
                self._cache["task"] = exc
        built = self._cache["task"]
        return built if isinstance(built, Exception) else None

    @property
    def family(self) -> str:
        return self.template.family

    @property
    def is_audio(self) -> bool:
        return self.template.is_audio

    @property
    def answer_names(self) -> tuple[str, ...]:
        return self.template.answer

    def collect(self) -> Iterator[pytest.Item]:
        if self.mode.self_check:
            from .bench.variant_rules import variant_rules

            for rule in variant_rules(self.name):
                yield RuleItem.from_parent(self, name=rule.replace(":", "-", 1), rule=rule)
            return
        if self.mode.answers_dir and not self.has_answer():
            raise pytest.skip.Exception(f"no answer for task {self.name}: no file {self.submission_path()}")
        if self._build() is not None:  # its score item fails with the build's message
            yield ScoreItem.from_parent(self, name="score")
            return
        yield from self._check_items()

    def verdict(self, rule: str, path: Path | None) -> Any:
        from .bench.variant_rules import variant_verdict

        error = self._build()
        if error is not None:  # raised as built, not built again by variant_verdict
            raise error
        first = self._cache.get("oracle")
        verdict = variant_verdict(self.name, rule, self.mode.bench(), trusted=self.mode.trusted,
                                  first=first.result if first is not None else None)
        if rule == "oracle":
            self._cache["oracle"] = verdict
        return verdict


class _OverdubItem(pytest.Item):
    parent: Task

    def _prop(self, name: str, value: Any) -> None:
        self.user_properties.append((name, value))

    def _send_detail(self, result: Any, *, always: bool = False) -> None:
        task = self.parent
        if always or not task.detail_sent:
            self._prop("overdub.task", json.dumps(task.task_detail(result), allow_nan=False))
            task.detail_sent = True

    def _result(self) -> Any:
        """The task's result; a task that cannot be scored fails here (see :meth:`_fail_task`)."""
        try:
            return self.parent.result()
        except OverdubFailure as exc:
            if not self.parent.detail_sent:
                detail = {**self.parent.task_detail(None), "score": None, "error": str(exc)}
                self._prop("overdub.task", json.dumps(detail, allow_nan=False))
                self.parent.detail_sent = True
            self._fail_task("the task could not be scored", str(exc))

    def _fail_task(self, what: str, story: str) -> NoReturn:
        """Fail because the task has an error (``story`` holds it): the task's first item to run tells the
        story, the others point to that item, so the error is said once per task."""
        task = self.parent
        if task.error_item is None:
            task.error_item = self.nodeid
            raise OverdubFailure(f"{self.name}: not scored: {what}\n{story}")
        raise OverdubFailure(f"{self.name}: not scored: {what} (see {task.error_item})")

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, OverdubFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, self.nodeid.split("::", 1)[-1]

    def _context(self, result: Any) -> str:
        mode = self.parent.mode
        lines = [f"task {result.task} scores {result.score:.3f} (pass line {mode.pass_line:g})"]
        if result.error:
            lines.append(f"error: {result.error}")
        lines += [f"render warning: {w}" for w in result.warnings]
        lines.append(f"submission: {self.parent.submission_path()}")
        return "\n".join(lines)


class CheckItem(_OverdubItem):
    """One check of the task on the submission: fails when the check scores under 1 (a figure with weight 0,
    reported beside the score, never fails)."""

    def __init__(self, *, check_id: str, gate: bool, **kw: Any) -> None:
        super().__init__(**kw)
        self.check_id = check_id
        if gate:
            self.add_marker("gate")

    def runtest(self) -> None:
        from .bench.report import result_to_dict

        result = self._result()
        self._send_detail(result)
        check = result.check(self.check_id)
        data = next(c for c in result_to_dict(result)["checks"] if c["id"] == self.check_id)
        if data["value"] is not None:
            self._prop("value", data["value"])
        self._prop("unit", data["unit"])
        self._prop("target", json.dumps(data["target"]))
        self._prop("score", data["score"])
        if data["error"]:
            self._prop("error", data["error"])
        self._prop("overdub.check", json.dumps({"task": result.task, **data}, allow_nan=False))
        if result.error:
            self._fail_task(_what(result), self._context(result))
        if check.score < 1.0 and (check.gate or check.weight != 0):  # a weight-0 figure is shown, not judged
            raise OverdubFailure(f"{self.check_id}: {check.line()}\n{self._context(result)}")


class ScoreItem(_OverdubItem):
    """The task's score against the pass line (``--overdub-pass``)."""

    def runtest(self) -> None:
        result = self._result()
        self._send_detail(result, always=True)
        self._prop("score", result.score)
        if result.error:
            self._fail_task(_what(result), self._context(result))
        line = self.parent.mode.pass_line
        if result.score < line:
            text = "\n".join(f"  {c.line()}" for c in result.checks)
            raise OverdubFailure(f"{result.task} scores {result.score:.3f}, under the pass line {line:g}\n"
                                 f"{text}\n{self._context(result)}")


def _what(result: Any) -> str:
    """Why a task with an error was not scored, in a few words."""
    refused = result.error.startswith("submission refused")
    return "the submission was refused" if refused else "the task could not be scored"


class RuleItem(_OverdubItem):
    """One validity rule of the self-check on one task."""

    def __init__(self, *, rule: str, path: Path | None = None, **kw: Any) -> None:
        super().__init__(**kw)
        self.rule, self.rule_path = rule, path

    def runtest(self) -> None:
        from .errors import OverdubError

        try:
            self._send_detail(None)
            verdict = self.parent.verdict(self.rule, self.rule_path)
        except OverdubError as exc:
            self._rule_props(ok=False, message=str(exc), score=None)
            raise OverdubFailure(f"{self.parent.name} {self.rule}: {exc}") from None
        score = verdict.result.score if verdict.result is not None else None
        self._rule_props(ok=verdict.ok, message=verdict.message, score=score)
        if not verdict.ok:
            text = verdict.result.text() if verdict.result is not None else ""
            raise OverdubFailure(f"{self.parent.name} {self.rule}: {verdict.message}\n{text}".rstrip())

    def _rule_props(self, *, ok: bool, message: str, score: float | None) -> None:
        self._prop("score", score)
        self._prop("overdub.rule", json.dumps({"task": self.parent.name, "rule": self.rule, "ok": ok,
                                               "message": message, "score": score}))


class BenchItem(pytest.Item):
    """The bench as a whole: at least 12 tasks, every family twice, an oracle, two cheats and an alternative per
    task, songs that build, no stray answer files."""

    def runtest(self) -> None:
        from .bench.validity import check_bench

        mode: Mode = self.config.stash[MODE_KEY]
        problems = check_bench(mode.bench())
        self.user_properties.append(("overdub.bench", json.dumps({"ok": not problems, "problems": problems})))
        if problems:
            raise OverdubFailure("the bench is not valid:\n" + "\n".join(f"  {p}" for p in problems))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, OverdubFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, "bench"


# --- reporting -------------------------------------------------------------------------------------


class Recorder:
    """Gathers the overdub records riding on the reports (on the controller under xdist)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.crash_dirs: list[str] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "call":
            return
        collected = self.config.stash[COLLECTED_KEY]
        for key, value in report.user_properties:
            if key == "overdub.bench":
                collected.bench = json.loads(value)
            elif key == "overdub.task":
                detail = json.loads(value)
                collected.entry(detail["id"]).update(detail)
            elif key in ("overdub.check", "overdub.rule"):
                data = json.loads(value)
                collected.entry(data.pop("task"))["checks" if key == "overdub.check" else "rules"].append(data)

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        collected = self.config.stash[COLLECTED_KEY]
        collected.selected = sum(isinstance(i, (_OverdubItem, BenchItem)) for i in items)
        collected.expected.update(i.parent.name for i in items if isinstance(i, _OverdubItem))

    # xdist's controller (see :mod:`.worker_crashes`)

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        from .worker_crashes import KEY, crash_dir

        node.workerinput[KEY] = crash_dir(self.crash_dirs)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        """The controller collects nothing itself: the tasks it expects come from the workers."""
        from .worker_crashes import task_of_nodeid

        expected = self.config.stash[COLLECTED_KEY].expected
        expected.update(t for t in map(task_of_nodeid, ids) if t is not None)

    @pytest.hookimpl(optionalhook=True)
    def pytest_handlecrashitem(self, crashitem: str, report: pytest.TestReport, sched: Any) -> None:
        """A worker died while running one of a task's items: the task is reported as faulted."""
        from .worker_crashes import task_of_nodeid

        task_id = task_of_nodeid(crashitem)
        if task_id is not None:
            self.config.stash[COLLECTED_KEY].crashed.setdefault(task_id, str(report.longrepr))

    def pytest_unconfigure(self) -> None:
        from .worker_crashes import remove_crash_dir

        remove_crash_dir(self.crash_dirs)


def fill_unscored(config: pytest.Config) -> None:
    """Make the report list every task the run selected: a task whose xdist worker crashed while
    running it scores 0 with an error naming the crash (whatever a rerun on a fresh worker gave), and a
    task with no result at all scores 0 with an error saying so."""
    mode: Mode = config.stash[MODE_KEY]
    collected = config.stash[COLLECTED_KEY]
    none = "no result was reported (the run stopped before it, or it failed: see the test output)"
    for tid in sorted(collected.expected | set(collected.crashed)):
        entry = collected.entry(tid)
        crash = collected.crashed.get(tid)
        if mode.self_check:
            if crash or not entry["rules"]:
                entry["error"] = f"not checked: {crash or none}"
        elif crash or "score" not in entry:
            entry.update(id=tid, score=0.0, passed=False, error=f"not scored: {crash or none}")


def build_report(config: pytest.Config) -> dict[str, Any]:
    """The session's JSON report (see module docstring); every number JSON-safe."""
    from importlib.metadata import PackageNotFoundError, version

    from . import BENCH_VERSION, __version__

    mode: Mode = config.stash[MODE_KEY]
    collected = config.stash[COLLECTED_KEY]
    packages = {}
    for name in _PACKAGES:
        try:
            packages[name] = version(name)
        except PackageNotFoundError:
            packages[name] = __version__ if name == "pytest-overdub" else None
    tasks = []
    for tid in sorted(collected.tasks):
        raw = dict(collected.tasks[tid])
        listed = raw.pop("rules") if mode.self_check else raw.pop("checks")
        raw.pop("checks" if mode.self_check else "rules")
        tasks.append({**raw, "id": tid, "rules" if mode.self_check else "checks": listed})
    scores = [t["score"] for t in tasks if isinstance(t.get("score"), (int, float))]
    hashes = sorted(t["grader_hash"] for t in tasks if t.get("grader_hash"))
    report = {
        "bench_version": BENCH_VERSION,
        "mode": mode.kind,
        "grader_hash": _combined_hash(hashes),
        "submission": None if mode.submission_path is None else {"path": str(mode.submission_path),
                                                                 "sha256": mode.submission_sha256},
        "pass_line": mode.pass_line,
        "python": platform.python_version(),
        "packages": packages,
        "tasks": tasks,
        "mean": round(sum(scores) / len(scores), 3) if scores else None,
    }
    if mode.self_check:
        report["bench"] = collected.bench
    return report


def _combined_hash(hashes: list[str]) -> str | None:
    if not hashes:
        return None
    import hashlib

    return hashlib.sha256("\n".join(hashes).encode()).hexdigest()[:16]


def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    mode = config.stash.get(MODE_KEY, None)
    if mode is None or hasattr(config, "workerinput"):
        return
    fill_unscored(config)
    if mode.report_path is None:
        return
    text = json.dumps(build_report(config), indent=2, allow_nan=False) + "\n"  # NaN is a bug: fail loudly
    try:
        mode.report_path.write_text(text, encoding="utf-8")
    except OSError as exc:  # checked at configure time, so something changed since: say so, keep the summary
        config.stash[COLLECTED_KEY].report_error = f"cannot write the report {mode.report_path}: {exc.strerror}"
        if session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.INTERNAL_ERROR


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """After a bench session the runtime freezes the heap, so pytest's five exit-time collections (and the
    interpreter's) skip the scorer's ~150 000 long-lived objects: 0.8 s of a one-task run (see
    :mod:`.runtime` and :mod:`.exiting`)."""
    if config.stash.get(MODE_KEY, None) is not None:
        from . import runtime

        runtime.end()


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    mode = config.stash.get(MODE_KEY, None)
    if mode is None or hasattr(config, "workerinput"):
        return
    collected = config.stash[COLLECTED_KEY]
    tr = terminalreporter
    if collected.report_error:
        tr.write_line(f"overdub: {collected.report_error}", red=True)
    keyword = config.getoption("keyword", default="")
    if collected.tasks_collected and not collected.selected and keyword:
        tr.write_sep("-", "overdub")
        known = ", ".join(sorted(p.stem for p in mode.tasks_dir.glob("*.json")))
        tr.write_line(f"-k {keyword!r} matched no task or check in {mode.tasks_dir} (tasks: {known})")
        return
    if not collected.tasks:
        return
    tr.write_sep("-", f"overdub {mode.kind}")
    if mode.self_check:
        for tid, entry in sorted(collected.tasks.items()):
            rules = "  ".join(f"{r['rule']} {'ok' if r['ok'] else 'FAIL'}"
                              + (f" {r['score']:.3f}" if isinstance(r["score"], (int, float)) else "")
                              for r in entry["rules"])
            tr.write_line(f"{tid:<28} {rules}")
        return
    scores = []
    for tid, entry in sorted(collected.tasks.items()):
        score = entry.get("score")
        if isinstance(score, (int, float)):
            scores.append(score)
            flag = "pass" if entry.get("passed") else "FAIL"
            tr.write_line(f"{tid:<28} {score:>6.3f}  {flag}")
        else:
            tr.write_line(f"{tid:<28} {'-':>6}  (not scored)")
    if scores:
        tr.write_line(f"{'mean':<28} {sum(scores) / len(scores):>6.3f}  over {len(scores)} task(s)")
    if mode.answers_dir:
        tr.write_line(f"answers from the folder {mode.submission_path} (<task-id>.json for a song task)")
    elif mode.submission_path is not None:
        tr.write_line(f"submission {mode.submission_path} (sha256 {mode.submission_sha256[:12]}...)")
