"""``overdub eval``'s plan and loop: which tasks, in which order, resumed where a run stopped.

The trials are every (task, trial) pair, task ids sorted and trials 0..K-1, shuffled by
``random.Random(seed)``: the same seed gives the same order. A trial whose folder holds a ``result.json``
is finished and skipped, so running the same command again resumes an interrupted run; an unfinished
trial's folder is emptied and the trial run again. ``run.json`` is written when a run starts; a resumed run
must have been started with the same agent, options (the number of workers and the executor aside) and
grader, else nothing runs and the one differing field is named.
"""

from __future__ import annotations

import json
import random
import signal
import sys
import threading
from collections import Counter, deque
from concurrent.futures import FIRST_COMPLETED, wait
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, TextIO

from ..errors import UsageError
from .records import FORMAT, run_record, write_json
from .trial import TrialSpec, run_trial
from .workspace import trial_dir

SPLITS = ("train", "test", "all")
#: Options that may change when a run is resumed: they change how fast it goes, not what it measures.
RESUMABLE = ("parallel", "executor")


@dataclass(frozen=True)
class EvalOptions:
    agent_id: str
    out: Path
    tasks: tuple[str, ...]
    agent_cmd: str | None = None
    replay_dir: str | None = None
    trials: int = 1
    parallel: int = 1
    seed: int = 0
    timeout_s: float = 600.0
    split: str = "train"
    infra_retries: int = 2
    env_pass: tuple[str, ...] = ()
    executor: str = "local"
    scheduler: str | None = None
    pass_line: float = 0.9
    env_values: dict[str, str] = field(default_factory=dict)

    def record(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """run.json's ``agent`` and ``options``."""
        agent = {"id": self.agent_id, "cmd": self.agent_cmd, "replay": self.replay_dir}
        options = {"tasks": list(self.tasks), "trials": self.trials, "parallel": self.parallel, "seed": self.seed,
                   "timeout_s": self.timeout_s, "split": self.split, "infra_retries": self.infra_retries,
                   "env_pass": list(self.env_pass), "executor": self.executor, "pass_line": self.pass_line}
        return agent, options

    def spec(self, task_id: str, trial: int) -> TrialSpec:
        return TrialSpec(task_id=task_id, trial=trial, out=str(self.out.resolve()), pass_line=self.pass_line,
                         agent_cmd=self.agent_cmd, replay_dir=self.replay_dir, timeout_s=self.timeout_s,
                         infra_retries=self.infra_retries,
                         env_pass=tuple((n, self.env_values[n]) for n in self.env_pass))


def select_tasks(bench: Any, text: str | None, *, split: str, variants: int | None = 0) -> tuple[str, ...]:
    """The task ids ``--tasks`` names (``ID,ID,…``, a family, or ``all``) in ``--split``, sorted. An id may
    be a variant's (``<task>@<seed>``) or a range of them (``<task>@A-B``). ``variants`` adds the fixed
    sample of that many train variants (None: all) of each template among the selected published tasks
    (:mod:`..bench.variant_sample`). A task named by id outside the split is an error (never silently
    dropped); so is an empty selection."""
    from ..bench.variant_sample import expand_ids, sample_ids

    every = bench.task_ids()
    named = text not in (None, "all") and text not in families()
    if not named:
        ids = [t for t in every if text in (None, "all") or bench.task(t).family == text]
    else:
        ids = sorted({v for t in str(text).split(",") if t.strip() for v in expand_ids(t.strip())})
        for tid in ids:
            bench.task(tid)  # an unknown id: a TaskError listing the known ones
    if variants != 0:
        if split == "test":
            raise UsageError("--variants samples the train split; name test variants by id "
                             "(--tasks write-bassline@1000-1009)")
        published = [t for t in ids if "@" not in t]
        ids = sorted(set(ids) | set(sample_ids(variants, published)))
    outside = [t for t in ids if split != "all" and bench.task(t).split != split]
    if named and outside:
        raise UsageError(f"--tasks: {', '.join(outside)} not in the {split} split; add --split all "
                         f"(or --split {bench.task(outside[0]).split})")
    ids = [t for t in ids if t not in outside]
    if not ids:
        raise UsageError(f"--tasks {text or 'all'} --split {split}: no task selected (tasks: {', '.join(every)})")
    return tuple(ids)


def families() -> tuple[str, ...]:
    """The task families, as the task model defines them."""
    from typing import get_args

    from ..bench.model import Task

    return get_args(Task.model_fields["family"].annotation)


def trial_order(tasks: tuple[str, ...] | list[str], trials: int, seed: int) -> list[tuple[str, int]]:
    """Every (task, trial) pair, shuffled by ``random.Random(seed)``."""
    plan = [(t, k) for t in sorted(tasks) for k in range(trials)]
    random.Random(seed).shuffle(plan)
    return plan


def start_run(opts: EvalOptions, bench: Any) -> dict[str, Any]:
    """Write run.json for a new run, or check that a resumed run is the same run; returns the record."""
    from ..bench.tasks import grader_hash

    agent, options = opts.record()
    record = run_record(agent=agent, options=options,
                        grader_hashes={t: grader_hash(bench.task(t)) for t in opts.tasks})
    path = opts.out / "run.json"
    if path.exists():
        _check_same_run(path, record)
        return record
    if opts.out.exists() and any(opts.out.iterdir()):
        raise UsageError(f"--out {opts.out}: the folder is not empty and holds no run.json; "
                         "want a new or empty folder, or a run to resume")
    opts.out.mkdir(parents=True, exist_ok=True)
    write_json(path, record)
    return record


def _check_same_run(path: Path, new: dict[str, Any]) -> None:
    try:
        old = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(f"{path}: cannot read the run to resume ({exc})") from None
    if not isinstance(old, dict) or old.get("format") != FORMAT:
        raise UsageError(f"{path}: not a run folder's record (want \"format\": \"{FORMAT}\")")
    agent, options = (old.get(k) if isinstance(old.get(k), dict) else {} for k in ("agent", "options"))
    wanted = [(f"agent.{k}", agent.get(k), v) for k, v in new["agent"].items()]
    wanted += [(f"--{k.replace('_', '-')}", options.get(k), v)
               for k, v in new["options"].items() if k not in RESUMABLE]
    for name, was, now in wanted:
        if was != now:
            raise UsageError(f"{path}: this run was started with {name} = {json.dumps(was)}, not {json.dumps(now)}; "
                             "resume it with the same options, or give another --out")
    if old.get("grader_hash") != new["grader_hash"]:
        raise UsageError(f"{path}: the grader changed since this run started (grader hash {old.get('grader_hash')}, "
                         f"now {new['grader_hash']}); finish it with the bench it started with, or give another --out")


def finished(out: Path, task_id: str, trial: int) -> dict[str, Any] | None:
    """The trial's result record when it is finished (its result.json exists and reads), else None."""
    path = trial_dir(out, task_id, trial) / "result.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def run_eval(opts: EvalOptions, *, bench: Any, stream: TextIO = sys.stderr) -> Counter:
    """Run every unfinished trial; returns the count of trials per status (the finished ones included)."""
    start_run(opts, bench)
    with _only_eval_on(opts.out / "run.json"):
        return _run_plan(opts, stream)


def _run_plan(opts: EvalOptions, stream: TextIO) -> Counter:
    from .executors import open_executor

    plan = trial_order(opts.tasks, opts.trials, opts.seed)
    statuses: Counter = Counter()
    todo: deque[tuple[str, int]] = deque()
    for task_id, trial in plan:
        rec = finished(opts.out, task_id, trial)
        if rec is None:
            todo.append((task_id, trial))
        else:
            statuses[rec.get("status")] += 1
    progress = Progress(total=len(plan), stream=stream)
    progress.show(statuses, running=0)
    with _sigterm_interrupts(), open_executor(opts.executor, parallel=opts.parallel,
                                              scheduler=opts.scheduler) as pool:
        if pool.executor is None:
            for task_id, trial in todo:
                progress.show(statuses, running=1)
                statuses[run_trial(opts.spec(task_id, trial))["status"]] += 1
        else:
            _run_pool(pool, todo, opts, statuses, progress)
    progress.show(statuses, running=0, final=True)
    return statuses


def _run_pool(pool: Any, todo: deque, opts: EvalOptions, statuses: Counter, progress: "Progress") -> None:
    """Keep ``pool.window`` trials in flight, started in plan order, until all are done."""
    running: dict[Any, tuple[str, int]] = {}
    while todo or running:
        while todo and len(running) < pool.window:
            task_id, trial = todo.popleft()
            running[pool.executor.submit(run_trial, opts.spec(task_id, trial))] = (task_id, trial)
        progress.show(statuses, running=len(running))
        done, _ = wait(list(running), timeout=1.0, return_when=FIRST_COMPLETED)
        for fut in done:
            task_id, trial = running.pop(fut)
            try:
                statuses[fut.result()["status"]] += 1
            except Exception as exc:  # a bug, or a lost worker: say which trial; resuming runs it again
                raise RuntimeError(f"trial {task_id}/{trial} did not finish: {type(exc).__name__}: {exc}") from exc


@contextmanager
def _only_eval_on(run_json: Path) -> Iterator[None]:
    """Hold an exclusive lock on run.json while trials run: two evals on one folder would run the same
    trials into the same folders."""
    import fcntl

    with open(run_json, "rb") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UsageError(f"{run_json.parent}: another overdub eval is running this run; wait for it, or "
                             "stop it and run this command again to resume") from None
        yield


@contextmanager
def _sigterm_interrupts() -> Iterator[None]:
    """SIGTERM stops the eval like Ctrl-C (agents killed, workers stopped), then the old handler returns."""
    from .agents import stop_on_sigterm

    if threading.current_thread() is not threading.main_thread():  # only the main thread may set handlers
        yield
        return
    old = signal.getsignal(signal.SIGTERM)
    stop_on_sigterm()
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


class Progress:
    """``overdub eval: 12/45 trials done, 2 running, 3 failed`` on stderr: rewritten in place on a terminal,
    a new line whenever the figures change elsewhere. ``failed`` counts every finished trial not scored."""

    def __init__(self, *, total: int, stream: TextIO) -> None:
        self.total, self.stream, self.last = total, stream, ""
        self.tty = hasattr(stream, "isatty") and stream.isatty()

    def show(self, statuses: Counter, *, running: int, final: bool = False) -> None:
        done = sum(statuses.values())
        line = f"overdub eval: {done}/{self.total} trials done, {running} running, {done - statuses['scored']} failed"
        if line != self.last:
            self.stream.write(f"\r{line}" if self.tty else f"{line}\n")
            self.last = line
        if final and self.tty:
            self.stream.write("\n")
        self.stream.flush()
