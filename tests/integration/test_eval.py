"""``overdub eval`` end to end, with tiny agents written here as shell scripts.

The agents copy the oracle, sleep past the time limit, exit 75 once, write garbage, crash, answer through
an MCP log, or only report what they were given. Every scored trial is on ``write-drum-groove`` (one
short render) and its expected score comes from ``score_task``, the scorer ``overdub score`` uses, never
from a second computation here. The run is driven in this process (``cli.main``), except the run that is
killed and resumed, which is a real process sent SIGTERM.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pytest_overdub.bench.tasks import bundled_bench, grader_hash, score_task, start_song
from pytest_overdub.cli import main
from pytest_overdub.evaluate.records import FORMAT, RESULT_FIELDS, combined_hash
from pytest_overdub.evaluate.runner import trial_order
from pytest_overdub.song.model import dumps_song
from pytest_overdub.song.submission import submission_from_data

BENCH = bundled_bench()
DRUMS, QUANT = "write-drum-groove", "edit-quantize-swing"
ORACLE = BENCH.oracle_path(DRUMS)
ORACLE_OPS = json.loads(ORACLE.read_text())["ops"]


@pytest.fixture(scope="module")
def oracle_score() -> float:
    """The oracle's score on DRUMS, as the scorer gives it (this also warms the scorer in this process)."""
    score = score_task(BENCH.task(DRUMS), submission_from_data(ORACLE_OPS), bench=BENCH).score
    assert score >= 0.9  # the premise of the tests that copy it
    return score


def agent(tmp_path: Path, body: str, name: str = "agent") -> str:
    """A shell-script agent in tmp_path; returns the command that runs it."""
    path = tmp_path / f"{name}.sh"
    path.write_text("#!/bin/sh\n" + body, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return f"/bin/sh {path}"


def run(*args: str) -> int:
    return main(["eval", *args])


def result(out: Path, task: str, trial: int) -> dict:
    return json.loads((out / task / str(trial) / "result.json").read_text())


def gone(pid: int) -> bool:
    """True when the process no longer runs (absent, or a zombie awaiting its reaper)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def wait_gone(pid: int, seconds: float = 10.0) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if gone(pid):
            return True
        time.sleep(0.05)
    return False


COPY_ORACLE = f'cp "{ORACLE}" answer.json\n'


def test_an_agent_that_copies_the_oracle_is_scored_and_the_run_recorded(tmp_path, oracle_score):
    out = tmp_path / "run"
    cmd = agent(tmp_path, f"""cat > "$OVERDUB_RUN_DIR/stdin.txt"
{COPY_ORACLE}printf '%s\\n' '{{"input_tokens": 100, "output_tokens": 20, "cost_usd": 0.25}}' \\
  '{{"input_tokens": 50, "output_tokens": 5, "cost_usd": 0.125}}' '{{"input_tokens": "many"}}' \\
  > "$OVERDUB_RUN_DIR/usage.jsonl"
sleep 30 &
echo $! > "$OVERDUB_RUN_DIR/background.pid"
echo done
""")
    assert run("--agent-cmd", cmd, "--agent-id", "copier", "--tasks", DRUMS, "--out", str(out), "--seed", "3") == 0
    rec = result(out, DRUMS, 0)
    assert tuple(rec) == RESULT_FIELDS
    task = BENCH.task(DRUMS)
    want = score_task(task, submission_from_data(ORACLE_OPS), bench=BENCH)
    assert rec["status"] == "scored" and rec["reason"] is None and rec["exit_code"] == 0
    assert rec["score"] == want.score == oracle_score and rec["passed"] is True and rec["pass_line"] == 0.9
    assert rec["answer_source"] == "answer.json"
    assert rec["answer_sha256"] == hashlib.sha256(ORACLE.read_bytes()).hexdigest()
    assert (out / DRUMS / "0" / "answer.json").read_bytes() == ORACLE.read_bytes()
    assert [c["id"] for c in rec["checks"]] == [c.id for c in want.checks]
    assert [c["score"] for c in rec["checks"]] == [c.score for c in want.checks]
    assert rec["gates_failed"] == [] and rec["grader_hash"] == grader_hash(task)
    assert (rec["family"], rec["split"], rec["trial"], rec["retries"]) == ("writing", "train", 0, 0)
    assert rec["usage"] == {"input_tokens": 150, "output_tokens": 25, "cost_usd": 0.375, "turns": 2}
    assert rec["warnings"] == ["usage.jsonl line 3: input_tokens = \"many\": want a number >= 0; line skipped"]
    assert rec["tool_calls"] is None  # no MCP session
    # what the agent was handed: the starting song, the instruction in a file and on stdin
    work = out / DRUMS / "0" / "workspace"
    song = start_song(task, bench=BENCH)
    song = song.model_copy(update={"meta": {**song.meta, "task": DRUMS, "instruction": task.instruction}})
    assert (work / "start.json").read_text() == dumps_song(song)
    assert (out / DRUMS / "0" / "stdin.txt").read_text() == (work / "instruction.md").read_text() \
        == task.instruction.rstrip() + "\n"
    assert (out / DRUMS / "0" / "agent.log").read_text() == "done\n"
    # what the agent left running was killed with its process group
    assert wait_gone(int((out / DRUMS / "0" / "background.pid").read_text()))

    data = json.loads((out / "run.json").read_text())
    assert data["format"] == FORMAT and data["seed"] == 3
    assert data["agent"] == {"id": "copier", "cmd": cmd, "replay": None}
    assert data["options"] == {"tasks": [DRUMS], "trials": 1, "parallel": 1, "seed": 3, "timeout_s": 600.0,
                               "split": "train", "infra_retries": 2, "env_pass": [], "executor": "local",
                               "pass_line": 0.9}
    assert data["grader_hashes"] == {DRUMS: grader_hash(task)}
    assert data["grader_hash"] == combined_hash([grader_hash(task)])
    assert data["bench_version"] == "overdub-bench/1" and data["packages"]["pytest-overdub"]


def test_a_timeout_kills_the_whole_process_group_and_fails_the_trial(tmp_path):
    out = tmp_path / "run"
    cmd = agent(tmp_path, """sleep 60 &
echo $! > "$OVERDUB_RUN_DIR/child.pid"
echo thinking
sleep 60
""")
    t0 = time.monotonic()
    assert run("--agent-cmd", cmd, "--agent-id", "slow", "--tasks", DRUMS, "--out", str(out), "--timeout", "1") == 0
    assert time.monotonic() - t0 < 30  # killed at the limit, not after the agent's 60 s
    rec = result(out, DRUMS, 0)
    assert rec["status"] == "timeout" and rec["exit_code"] is None
    assert rec["score"] == 0.0 and rec["passed"] is False and rec["checks"] == []
    assert rec["reason"] == "the agent ran past the time limit of 1 s and was killed (last output: thinking)"
    assert wait_gone(int((out / DRUMS / "0" / "child.pid").read_text()))


def test_exit_75_is_retried_in_a_fresh_workspace_and_recorded(tmp_path, oracle_score):
    out, marker = tmp_path / "run", tmp_path / "failed-once"
    cmd = agent(tmp_path, f"""if [ ! -e "{marker}" ]; then
  touch "{marker}" scratch.txt; echo "no GPU free"; exit 75
fi
test -e scratch.txt && exit 3
{COPY_ORACLE}""")
    assert run("--agent-cmd", cmd, "--agent-id", "flaky", "--tasks", DRUMS, "--out", str(out)) == 0
    rec = result(out, DRUMS, 0)
    assert rec["status"] == "scored" and rec["score"] == oracle_score
    assert rec["retries"] == 1 and rec["retry_reasons"] == ["attempt 1 exited 75: no GPU free"]


def test_exit_75_on_every_attempt_is_an_infrastructure_failure_not_a_score(tmp_path):
    out, attempts = tmp_path / "run", tmp_path / "attempts"
    cmd = agent(tmp_path, f'echo x >> "{attempts}"; echo "quota"; exit 75\n')
    assert run("--agent-cmd", cmd, "--agent-id", "down", "--tasks", DRUMS, "--out", str(out),
               "--infra-retries", "2") == 0
    rec = result(out, DRUMS, 0)
    assert attempts.read_text().count("x") == 3
    assert rec["status"] == "infra" and rec["exit_code"] == 75
    assert rec["score"] is None and rec["passed"] is None  # not counted as the agent's failure
    assert rec["retries"] == 2 and rec["retry_reasons"] == ["attempt 1 exited 75: quota", "attempt 2 exited 75: quota"]


def test_a_garbage_or_refused_answer_is_invalid(tmp_path):
    out = tmp_path / "run"
    refused = json.dumps([{"type": "track.set", "track": "Nobody", "patch": {"gain": -3}}])
    cmd = agent(tmp_path, f"""if [ "$OVERDUB_TRIAL" = 0 ]; then printf '[{{"type": ' > answer.json
else echo '{refused}' > answer.json; fi
""")
    assert run("--agent-cmd", cmd, "--agent-id", "sloppy", "--tasks", DRUMS, "--trials", "2", "--out", str(out)) == 0
    garbage, nobody = result(out, DRUMS, 0), result(out, DRUMS, 1)
    assert garbage["status"] == nobody["status"] == "invalid"
    assert garbage["score"] == nobody["score"] == 0.0 and garbage["passed"] is nobody["passed"] is False
    assert garbage["reason"].startswith("answer.json: not valid JSON")
    assert garbage["answer_sha256"] == hashlib.sha256(b'[{"type": ').hexdigest()
    assert nobody["reason"].startswith("submission refused") and "Nobody" in nobody["reason"]


def test_a_crash_or_no_answer_is_a_failed_trial_with_its_reason(tmp_path):
    out = tmp_path / "run"
    cmd = agent(tmp_path, """if [ "$OVERDUB_TRIAL" = 0 ]; then echo "Traceback: boom" >&2; exit 1; fi
echo "I am done"
""")
    assert run("--agent-cmd", cmd, "--agent-id", "crashy", "--tasks", DRUMS, "--trials", "2", "--out", str(out)) == 0
    crash, silent = result(out, DRUMS, 0), result(out, DRUMS, 1)
    assert crash["status"] == "failed" and crash["exit_code"] == 1 and crash["score"] == 0.0
    assert crash["reason"] == "the agent exited with code 1 (last output: Traceback: boom)"
    assert silent["status"] == "failed" and silent["exit_code"] == 0 and silent["reason"].startswith("no answer")
    assert crash["answer_source"] is silent["answer_source"] is None


def test_an_mcp_log_is_the_answer_when_there_is_no_answer_json(tmp_path, oracle_score):
    out = tmp_path / "run"
    calls = {"calls": [{"tool": "get_project", "input": {}}, {"tool": "apply_ops", "input": {"ops": ORACLE_OPS[:1]}},
                       {"tool": "render_and_measure", "input": {}},
                       {"tool": "apply_ops", "input": {"ops": ORACLE_OPS[1:]}}]}
    (tmp_path / "calls.json").write_text(json.dumps(calls))
    cmd = agent(tmp_path, f'cp "{tmp_path / "calls.json"}" "$OVERDUB_RUN_DIR/calls.json"\n')
    assert run("--agent-cmd", cmd, "--agent-id", "mcp", "--tasks", DRUMS, "--out", str(out)) == 0
    rec = result(out, DRUMS, 0)
    assert rec["status"] == "scored" and rec["answer_source"] == "calls.json" and rec["score"] == oracle_score
    assert rec["tool_calls"] == {"apply_ops": 2, "get_project": 1, "render_and_measure": 1}
    assert (out / DRUMS / "0" / "answer.json").read_bytes() == (tmp_path / "calls.json").read_bytes()


def test_the_agents_environment_is_scrubbed_unless_passed(tmp_path, monkeypatch):
    monkeypatch.setenv("OVERDUB_TEST_SECRET", "hunter2")
    monkeypatch.setenv("OVERDUB_TEST_PASSED", "yes")
    cmd = agent(tmp_path, 'env > "$OVERDUB_RUN_DIR/env.txt"\n')
    out = tmp_path / "run"
    assert run("--agent-cmd", cmd, "--agent-id", "env", "--tasks", DRUMS, "--out", str(out), "--trials", "2",
               "--env-pass", "OVERDUB_TEST_PASSED") == 0
    for trial in (0, 1):
        here = out / DRUMS / str(trial)
        env = dict(line.split("=", 1) for line in (here / "env.txt").read_text().splitlines() if "=" in line)
        assert "OVERDUB_TEST_SECRET" not in env and env["OVERDUB_TEST_PASSED"] == "yes"
        assert env["HOME"] == str(here / "home") and env["PATH"] == os.environ["PATH"]
        assert (env["OVERDUB_TASK"], env["OVERDUB_TRIAL"]) == (DRUMS, str(trial))
        assert env["OVERDUB_WORKSPACE"] == str(here / "workspace") and env["OVERDUB_RUN_DIR"] == str(here)
        assert f"{sys.executable} -m pytest_overdub.cli mcp --task {DRUMS} --log {here / 'calls.json'}" \
            in env["OVERDUB_MCP"]
        assert result(out, DRUMS, trial)["reason"].startswith("no answer")
    shell_own = {"PWD", "SHLVL", "_", "OLDPWD"}
    assert set(env) - shell_own == {"PATH", "HOME", "OVERDUB_TASK", "OVERDUB_TRIAL", "OVERDUB_WORKSPACE",
                                    "OVERDUB_RUN_DIR", "OVERDUB_MCP", "OVERDUB_TEST_PASSED"}


def test_replay_scores_stored_answers_per_task_or_per_trial(tmp_path, oracle_score):
    answers = tmp_path / "answers"
    (answers / DRUMS).mkdir(parents=True)
    (answers / f"{DRUMS}.json").write_text(json.dumps(ORACLE_OPS))
    (answers / DRUMS / "1.json").write_text('{"tracks": 3}')
    out = tmp_path / "run"
    assert run("--agent", f"replay:{answers}", "--tasks", f"{DRUMS},{QUANT}", "--trials", "2", "--out", str(out)) == 0
    assert [result(out, DRUMS, k)["status"] for k in (0, 1)] == ["scored", "invalid"]
    assert result(out, DRUMS, 0)["score"] == oracle_score and result(out, DRUMS, 0)["exit_code"] is None
    assert result(out, DRUMS, 1)["reason"] == "answer.json: not a submission (an object with keys tracks); " \
        "accepted forms: " + result(out, DRUMS, 1)["reason"].split("accepted forms: ")[1]
    missing = result(out, QUANT, 0)
    assert missing["status"] == "failed" and missing["reason"].startswith(f"no answer: none of {answers}/{QUANT}.json")
    run_json = json.loads((out / "run.json").read_text())
    assert run_json["agent"] == {"id": "replay", "cmd": None, "replay": str(answers)}
    # an earlier run's folder replays too: its <task>/<trial>/answer.json
    again = tmp_path / "again"
    assert run("--agent", f"replay:{out}", "--tasks", DRUMS, "--trials", "2", "--out", str(again)) == 0
    assert [result(again, DRUMS, k)["score"] for k in (0, 1)] == [oracle_score, 0.0]


def test_the_run_order_is_the_seeded_shuffle(tmp_path, monkeypatch):
    plan = trial_order([QUANT, DRUMS], 3, seed=7)
    assert plan == trial_order((DRUMS, QUANT), 3, seed=7)  # the same seed, the same order
    assert sorted(plan) == sorted((t, k) for t in (DRUMS, QUANT) for k in range(3))
    assert len({tuple(trial_order([QUANT, DRUMS], 3, seed=s)) for s in range(5)}) > 1
    log = tmp_path / "order.txt"
    monkeypatch.setenv("ORDER_LOG", str(log))
    cmd = agent(tmp_path, 'echo "$OVERDUB_TASK $OVERDUB_TRIAL" >> "$ORDER_LOG"\n')
    assert run("--agent-cmd", cmd, "--agent-id", "order", "--tasks", f"{QUANT},{DRUMS}", "--trials", "3",
               "--seed", "7", "--out", str(tmp_path / "run"), "--env-pass", "ORDER_LOG") == 0
    assert [tuple(line.split()) for line in log.read_text().splitlines()] == [(t, str(k)) for t, k in plan]


def test_a_run_killed_part_way_resumes_to_the_same_results(tmp_path, oracle_score):
    """SIGTERM during the third trial: two trials are finished, the third's folder is left unfinished.
    The same command again runs the remaining two, and every result equals an uninterrupted run's."""
    block, count, sleeping = tmp_path / "block", tmp_path / "count", tmp_path / "sleeping"
    block.touch()
    cmd = agent(tmp_path, f"""echo x >> "{count}"
if [ -e "{block}" ] && [ "$(wc -l < "{count}")" -ge 3 ]; then echo $$ > "{sleeping}"; sleep 60; fi
if [ "$OVERDUB_TRIAL" = 2 ]; then echo '[]' > answer.json; else {COPY_ORACLE}fi""")
    out = tmp_path / "run"
    args = ["--agent-cmd", cmd, "--agent-id", "resumable", "--tasks", DRUMS, "--trials", "4", "--out", str(out)]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    proc = subprocess.Popen([sys.executable, "-m", "pytest_overdub.cli", "eval", *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        end = time.monotonic() + 240
        while not sleeping.exists() and proc.poll() is None and time.monotonic() < end:
            time.sleep(0.1)
        assert sleeping.exists(), proc.communicate(timeout=30)
        time.sleep(0.2)  # the agent is inside its sleep
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert "interrupted" in err and "overdub eval: 2/4 trials done, 1 running, 0 failed" in err
    assert wait_gone(int(sleeping.read_text()))  # the stopped eval killed its running agent
    plan = trial_order([DRUMS], 4, seed=0)
    done_before = [k for _, k in plan[:2]]
    stopped = plan[2][1]
    assert sorted(p.parent.name for p in out.glob(f"{DRUMS}/*/result.json")) == sorted(map(str, done_before))
    assert (out / DRUMS / str(stopped)).is_dir()  # unfinished: no result.json
    before = {k: (out / DRUMS / str(k) / "result.json").stat().st_mtime_ns for k in done_before}

    block.unlink()
    assert run(*args) == 0  # the same command resumes
    assert count.read_text().count("x") == 5  # 3 agent runs before the kill, the 2 unfinished trials after
    assert {k: (out / DRUMS / str(k) / "result.json").stat().st_mtime_ns for k in done_before} == before

    fresh = tmp_path / "fresh"
    assert run(*args[:-1], str(fresh)) == 0
    keys = ("status", "score", "passed", "checks", "answer_sha256", "gates_failed")
    for k in range(4):
        assert {f: result(out, DRUMS, k)[f] for f in keys} == {f: result(fresh, DRUMS, k)[f] for f in keys}
    assert [result(out, DRUMS, k)["score"] for k in range(4)] == [oracle_score, oracle_score, 0.0, oracle_score]


def test_local_workers_and_a_dask_cluster_give_the_results_of_a_serial_run(tmp_path, oracle_score):
    import distributed  # the dev extra installs it: CI runs this test, never skips it
    answers = tmp_path / "answers"
    (answers / DRUMS).mkdir(parents=True)
    (answers / f"{DRUMS}.json").write_text(json.dumps(ORACLE_OPS))
    (answers / DRUMS / "1.json").write_text("[{")
    near_miss = json.loads(BENCH.near_miss_paths(DRUMS)[0].read_text())["ops"]
    (answers / DRUMS / "2.json").write_text(json.dumps(near_miss))
    common = ["--agent", f"replay:{answers}", "--tasks", DRUMS, "--trials", "3"]
    assert run(*common, "--out", str(tmp_path / "serial")) == 0
    assert run(*common, "--out", str(tmp_path / "local"), "--parallel", "2") == 0
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        assert run(*common, "--out", str(tmp_path / "dask"), "--executor", "dask",
                   "--scheduler", cluster.scheduler_address) == 0
    keys = ("status", "reason", "score", "passed", "checks", "answer_sha256", "grader_hash")
    serial = [{f: result(tmp_path / "serial", DRUMS, k)[f] for f in keys} for k in range(3)]
    assert [r["status"] for r in serial] == ["scored", "invalid", "scored"] and serial[0]["score"] == oracle_score
    assert serial[2]["score"] < 0.5  # a near miss: the trials differ, so a mix-up would show
    for where in ("local", "dask"):
        assert [{f: result(tmp_path / where, DRUMS, k)[f] for f in keys} for k in range(3)] == serial, where
    assert json.loads((tmp_path / "dask" / "run.json").read_text())["options"]["executor"] == "dask"


def test_dask_without_a_scheduler_address_is_one_usage_error(tmp_path, capsys):
    assert run("--agent", f"replay:{tmp_path}", "--tasks", DRUMS, "--executor", "dask", "--out",
               str(tmp_path / "run")) == 2
    assert "--executor dask needs --scheduler ADDR" in capsys.readouterr().err


def test_stopping_a_parallel_eval_kills_the_agents_its_workers_run(tmp_path):
    pids = tmp_path / "pids"
    cmd = agent(tmp_path, f'echo $$ >> "{pids}"\nsleep 60\n')
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    proc = subprocess.Popen([sys.executable, "-m", "pytest_overdub.cli", "eval", "--agent-cmd", cmd, "--agent-id", "s",
                             "--tasks", DRUMS, "--trials", "4", "--parallel", "2", "--out", str(tmp_path / "run")],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        end = time.monotonic() + 120
        while (not pids.exists() or len(pids.read_text().split()) < 2) and time.monotonic() < end:
            time.sleep(0.1)
        time.sleep(0.2)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130 and "interrupted" in err, err
    running = [int(p) for p in pids.read_text().split()]
    assert len(running) == 2 and all(wait_gone(pid) for pid in running)
    assert not list((tmp_path / "run").glob("*/*/result.json"))  # no trial finished


def test_a_retry_or_resume_clears_whatever_the_agent_made_of_its_folder(tmp_path, oracle_score):
    """Read-only folders (in HOME; they stop only a user who is not root), a workspace swapped for a symlink
    to elsewhere: the next attempt gets a fresh workspace anyway, and what the symlink pointed to is left
    alone."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("mine")
    marker = tmp_path / "failed-once"
    cmd = agent(tmp_path, f"""if [ ! -e "{marker}" ]; then
  touch "{marker}"; cd "$HOME"; mkdir -p locked/deeper; touch locked/deeper/f; chmod 500 locked/deeper locked
  cd "$OVERDUB_RUN_DIR"; rm -rf workspace; ln -s "{elsewhere}" workspace; exit 75
fi
{COPY_ORACLE}""")
    out = tmp_path / "run"
    assert run("--agent-cmd", cmd, "--agent-id", "messy", "--tasks", DRUMS, "--out", str(out)) == 0
    rec = result(out, DRUMS, 0)
    assert rec["status"] == "scored" and rec["score"] == oracle_score and rec["retries"] == 1
    assert not (out / DRUMS / "0" / "workspace").is_symlink()
    assert sorted(p.name for p in elsewhere.iterdir()) == ["keep.txt"]
