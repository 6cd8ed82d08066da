"""One trial, start to finish: run the agent (or take a stored answer), score the answer, write result.json.

:func:`run_trial` is the unit every executor runs (in this process, a local worker process or a Dask
worker): it takes a picklable :class:`TrialSpec`, writes only its own folder ``OUT/<task>/<trial>/`` and
returns the result record it wrote. An agent that exits 75 is run again, in a fresh workspace, up to
``infra_retries`` more times; each retry is recorded with the last line the agent printed.
"""

from __future__ import annotations

import hashlib
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..bench.handoff import is_file_task
from .records import result_record, write_json
from .files import ANSWER_DIR
from .workspace import ANSWER, LOG, agent_env, fresh_trial_dir, prepare_workspace, remove, trial_dir


@dataclass(frozen=True)
class TrialSpec:
    """What one trial needs; ``agent_cmd`` or ``replay_dir`` says where the answer comes from."""

    task_id: str
    trial: int
    out: str
    pass_line: float
    agent_cmd: str | None = None
    replay_dir: str | None = None
    timeout_s: float = 600.0
    infra_retries: int = 2
    env_pass: tuple[tuple[str, str], ...] = ()


def run_trial(spec: TrialSpec) -> dict[str, Any]:
    """Run the trial and write its result.json (atomically, last); returns the record."""
    from ..bench.tasks import bundled_bench, grader_hash

    bench = bundled_bench()
    task = bench.task(spec.task_id)
    run_dir = trial_dir(Path(spec.out), spec.task_id, spec.trial)
    fresh_trial_dir(run_dir)
    base = {"task": task, "trial": spec.trial, "pass_line": spec.pass_line, "grader_hash": grader_hash(task)}
    if spec.replay_dir is not None and is_file_task(task):
        found = replay_folder(Path(spec.replay_dir), spec.task_id, spec.trial)
        if found is None:
            d = spec.replay_dir
            rec = result_record(**base, status="failed", reason=f"no answer: none of {d}/{spec.task_id}/"
                                f"{spec.trial}/answer/, {d}/{spec.task_id}/{spec.trial}/, {d}/{spec.task_id}/")
        else:
            rec = score_folder_answer(base, task, bench, found, run_dir=run_dir, fields={})
    elif spec.replay_dir is not None:
        found = replay_answer(Path(spec.replay_dir), spec.task_id, spec.trial)
        if found is None:
            d = spec.replay_dir
            rec = result_record(**base, status="failed", reason=f"no answer: none of {d}/{spec.task_id}.json, "
                                f"{d}/{spec.task_id}/{spec.trial}.json, {d}/{spec.task_id}/{spec.trial}/answer.json")
        else:
            rec = score_answer(base, task, bench, found, source=ANSWER, run_dir=run_dir, fields={})
    else:
        rec = _agent_trial(spec, base, task, bench, run_dir)
    write_json(run_dir / "result.json", rec)
    return rec


def replay_answer(folder: Path, task_id: str, trial: int) -> Path | None:
    """A stored answer: ``DIR/<task>/<trial>.json``, ``DIR/<task>/<trial>/answer.json`` (an earlier run's
    folder) or ``DIR/<task>.json`` (one answer for every trial), the first that exists."""
    here = folder / task_id
    for path in (here / f"{trial}.json", here / str(trial) / ANSWER, folder / f"{task_id}.json"):
        if path.is_file():
            return path
    return None


def replay_folder(folder: Path, task_id: str, trial: int) -> Path | None:
    """A stored answer folder of a file task: ``DIR/<task>/<trial>/answer/`` (an earlier run's trial
    folder), ``DIR/<task>/<trial>/`` (one holding no ``result.json``), or ``DIR/<task>/`` (one answer for
    every trial; only when it holds no folder named by a trial number), the first that exists."""
    here, mine = folder / task_id, folder / task_id / str(trial)
    if (mine / ANSWER_DIR).is_dir():
        return mine / ANSWER_DIR
    if mine.is_dir() and not (mine / "result.json").exists():
        return mine
    if here.is_dir() and not any(p.is_dir() and p.name.isdigit() for p in here.iterdir()):
        return here
    return None


def _agent_trial(spec: TrialSpec, base: dict, task: Any, bench: Any, run_dir: Path) -> dict[str, Any]:
    from . import outputs
    from .agents import INFRA_EXIT, last_line, run_agent

    assert spec.agent_cmd is not None
    env = agent_env(task_id=spec.task_id, trial=spec.trial, run_dir=run_dir, passed=dict(spec.env_pass),
                    file_task=is_file_task(task))
    log = run_dir / LOG
    retry_reasons: list[str] = []
    while True:
        workspace = prepare_workspace(run_dir, task, bench=bench)
        end = run_agent(spec.agent_cmd, workspace=workspace, env=env, timeout_s=spec.timeout_s, log=log)
        if end.exit_code != INFRA_EXIT or len(retry_reasons) >= spec.infra_retries:
            break
        said = last_line(log)
        retry_reasons.append(f"attempt {len(retry_reasons) + 1} exited {INFRA_EXIT}" + (f": {said}" if said else ""))
        with open(log, "a", encoding="utf-8") as f:
            f.write(f"\n[overdub eval: exit {INFRA_EXIT}, an infrastructure failure; retry {len(retry_reasons)} "
                    f"of {spec.infra_retries} in a fresh workspace]\n")
    calls, call_warnings = outputs.tool_calls(run_dir)
    used, usage_warnings = outputs.usage(run_dir)
    fields = {"exit_code": end.exit_code, "seconds": end.seconds, "tool_calls": calls, "usage": used,
              "retries": len(retry_reasons), "retry_reasons": retry_reasons, "warnings": call_warnings + usage_warnings}
    said = last_line(log)
    tail = f" (last output: {said})" if said else ""
    if end.timed_out:
        return result_record(**base, status="timeout", reason=f"the agent ran past the time limit of "
                             f"{spec.timeout_s:g} s and was killed{tail}", **fields)
    if end.exit_code == INFRA_EXIT:
        return result_record(**base, status="infra", reason=f"the agent exited {INFRA_EXIT} (an infrastructure "
                             f"failure) on all {len(retry_reasons) + 1} attempts{tail}", **fields)
    if end.exit_code != 0:
        return result_record(**base, status="failed", reason=f"the agent exited with code {end.exit_code}{tail}",
                             **fields)
    if is_file_task(task):
        answer = run_dir / "workspace" / ANSWER_DIR
        if not (answer.exists() or answer.is_symlink()):
            return result_record(**base, status="failed", reason="no answer: the agent wrote no "
                                 "workspace/answer/ folder", **fields)
        return score_folder_answer(base, task, bench, answer, run_dir=run_dir, fields=fields)
    found = outputs.find_answer(run_dir)
    if found is None:
        return result_record(**base, status="failed", reason="no answer: the agent wrote no workspace/answer.json "
                             "and made no change through its MCP session (no calls.json)", **fields)
    return score_answer(base, task, bench, found[0], source=found[1], run_dir=run_dir, fields=fields)


def score_answer(base: dict, task: Any, bench: Any, path: Path, *, source: str, run_dir: Path,
                 fields: dict[str, Any]) -> dict[str, Any]:
    """Copy the answer to ``answer.json`` in the trial folder and score it; an answer that cannot be read
    as a submission, or whose ops are refused, is ``invalid`` with the reason."""
    from ..bench.tasks import score_task
    from ..errors import OverdubError
    from ..song.limits import check_file_size
    from ..song.submission import load_submission

    fields = {**fields, "answer_source": source}
    try:
        if not path.is_file():
            raise OverdubError(f"{path.name} is not a regular file")
        check_file_size(path.stat().st_size, source=path.name, error=OverdubError)
        kept = run_dir / ANSWER
        remove(kept)  # never write through a link the agent may have put there
        shutil.copyfile(path, kept)
        fields["answer_sha256"] = hashlib.sha256(kept.read_bytes()).hexdigest()
        submission = load_submission(kept)
        scored = score_task(task, submission, bench=bench)
    except OverdubError as exc:
        return result_record(**base, status="invalid", reason=_one_line(str(exc).replace(str(run_dir) + "/", "")),
                             **fields)
    if scored.error:
        return result_record(**base, status="invalid", reason=_one_line(scored.error), scored=scored, **fields)
    return result_record(**base, status="scored", scored=scored, **fields)


def score_folder_answer(base: dict, task: Any, bench: Any, path: Path, *, run_dir: Path,
                        fields: dict[str, Any]) -> dict[str, Any]:
    """Copy a file task's answer folder to ``answer/`` in the trial folder and score the copy; an answer
    that cannot be read is ``invalid`` with the reader's reason."""
    from ..errors import OverdubError
    from .files import SOURCE, copy_answer, folder_sha256, score_folder

    fields = {**fields, "answer_source": SOURCE}
    kept = run_dir / ANSWER_DIR
    try:
        remove(kept)
        copy_answer(path, kept)
        fields["answer_sha256"] = folder_sha256(kept)
        scored = score_folder(task, kept, bench=bench)
    except OverdubError as exc:
        return result_record(**base, status="invalid", reason=_one_line(str(exc).replace(str(run_dir) + "/", "")),
                             **fields)
    if scored.error:
        return result_record(**base, status="invalid", reason=_one_line(scored.error.replace(str(run_dir) + "/", "")),
                             scored=scored, **fields)
    return result_record(**base, status="scored", scored=scored, **fields)


def _one_line(text: str, limit: int = 500) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[:limit - 1] + "…"
