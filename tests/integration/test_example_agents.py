"""The agents in examples/agents/: the scripted agent end to end through ``overdub eval`` and ``overdub report``,
and the Claude Code adapter against a stand-in ``claude`` (a shell script; the real one is not run here).

The scripted agent plays mix-master-loudness (it knows it) and write-drum-groove (it does not: it measures
and stops, so its answer is the starting song), two trials each, through the real ``overdub mcp`` over stdio.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_overdub.cli import main

ROOT = Path(__file__).resolve().parents[2]
SCRIPTED = ROOT / "examples" / "agents" / "scripted.py"
ADAPTER = ROOT / "examples" / "agents" / "claude_code.py"
KNOWN, UNKNOWN = "mix-master-loudness", "write-drum-groove"


def result(out: Path, task: str, trial: int) -> dict:
    return json.loads((out / task / str(trial) / "result.json").read_text())


@pytest.fixture(scope="module")
def scripted_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("runs") / "scripted"
    code = main(["eval", "--agent-cmd", f"{sys.executable} {SCRIPTED}", "--agent-id", "scripted",
                 "--tasks", f"{KNOWN},{UNKNOWN}", "--trials", "2", "--out", str(out)])
    assert code == 0
    return out


@pytest.mark.slow
@pytest.mark.parametrize("trial", [0, 1])
def test_scripted_agent_masters_the_mix_through_the_studio_and_passes(scripted_run, trial):
    rec = result(scripted_run, KNOWN, trial)
    assert (rec["status"], rec["exit_code"], rec["answer_source"]) == ("scored", 0, "calls.json"), rec["reason"]
    # the log counts the changes the agent says it made, call by call (its own stderr, in agent.log)
    made = (scripted_run / KNOWN / str(trial) / "agent.log").read_text().count("scripted: apply_ops(")
    assert made >= 2 and rec["tool_calls"] == {"apply_ops": made}
    assert rec["passed"] and rec["score"] >= rec["pass_line"] == 0.9
    checks = {c["id"]: c for c in rec["checks"]}
    assert checks["peak"]["value"] <= -1.0 and checks["crest"]["value"] >= -6.0  # the gates the move must keep
    assert -12.5 <= checks["lufs"]["value"] <= -10.0


@pytest.mark.slow
def test_scripted_agent_is_deterministic(scripted_run):
    first, second = (result(scripted_run, KNOWN, t) for t in (0, 1))
    assert first["answer_sha256"] == second["answer_sha256"] and first["score"] == second["score"]


@pytest.mark.slow
def test_scripted_agent_on_a_task_it_does_not_know_measures_and_changes_nothing(scripted_run):
    for trial in (0, 1):
        rec = result(scripted_run, UNKNOWN, trial)
        assert (rec["status"], rec["answer_source"], rec["tool_calls"]) == ("scored", "calls.json", {})
        assert json.loads((scripted_run / UNKNOWN / str(trial) / "calls.json").read_text()) == {"calls": []}
        assert "render_and_measure" in (scripted_run / UNKNOWN / str(trial) / "agent.log").read_text()


@pytest.mark.slow
def test_report_on_the_scripted_run(scripted_run, capsys):
    capsys.readouterr()
    assert main(["report", str(scripted_run), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    known, unknown = summary["tasks"][KNOWN], summary["tasks"][UNKNOWN]
    assert (known["n"], known["successes"], known["pass_at_1"]) == (2, 2, 1.0)
    assert known["pass_hat_k"] == {"1": 1.0, "2": 1.0}
    assert (unknown["n"], unknown["successes"]) == (2, 0)
    assert unknown["mean_score"] == unknown["baseline_score"]  # the starting song, scored as the baseline
    assert summary["overall"]["trials"] == 4 and summary["reference_grader_differs"] == []
    assert json.loads((scripted_run / "summary.json").read_text()) == summary


@pytest.mark.parametrize("server_cmd, want, said", [
    ("echo no studio here >&2; exit 3", 75, "lost the studio"),  # an infrastructure failure: eval retries it
    (None, 2, "OVERDUB_MCP is not set"),
])
def test_scripted_agent_without_a_studio(tmp_path, server_cmd, want, said):
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path)}
    if server_cmd is not None:
        env["OVERDUB_MCP"] = server_cmd
    proc = subprocess.run([sys.executable, str(SCRIPTED)], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == want and said in proc.stderr and "Traceback" not in proc.stderr


# --- the Claude Code adapter, against a stand-in claude -------------------------------------------------


def fake_claude(tmp_path: Path, *, stdout: list[dict], code: int = 0, stderr: str = "") -> Path:
    """A folder holding a ``claude`` that records its arguments and prints ``stdout`` as stream-json."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    lines = "".join(json.dumps(e) + "\n" for e in stdout)
    (tmp_path / "out.jsonl").write_text(lines)
    script = bin_dir / "claude"
    script.write_text(f"#!/bin/sh\n{sys.executable} -c 'import json,sys; json.dump(sys.argv[1:], "
                      f"open(\"{tmp_path}/argv.json\", \"w\"))' \"$@\"\ncat {tmp_path}/out.jsonl\n"
                      f"printf '%s' '{stderr}' >&2\nexit {code}\n")
    script.chmod(0o755)
    return bin_dir


def run_adapter(tmp_path: Path, path: str) -> subprocess.CompletedProcess:
    run_dir = tmp_path / "trial"
    (run_dir / "home").mkdir(parents=True, exist_ok=True)
    env = {"PATH": path, "HOME": str(run_dir / "home"), "OVERDUB_RUN_DIR": str(run_dir),
           "OVERDUB_MCP": "overdub mcp --task mix-chorus-lift --log /tmp/calls.json"}
    return subprocess.run([sys.executable, str(ADAPTER)], input="Make the chorus lift.", env=env,
                          capture_output=True, text=True, timeout=60)


def test_claude_code_adapter_without_claude_is_an_infrastructure_failure(tmp_path):
    proc = run_adapter(tmp_path, path=str(tmp_path))
    assert proc.returncode == 75 and "no claude on PATH" in proc.stderr


def test_claude_code_adapter_runs_claude_on_the_overdub_tools_only_and_writes_usage(tmp_path):
    turn = {"type": "assistant", "message": {"id": "m1", "usage": {
        "input_tokens": 10, "cache_creation_input_tokens": 5, "cache_read_input_tokens": 100, "output_tokens": 7}}}
    events = [{"type": "system", "subtype": "init"}, turn, turn,  # two content blocks of one response
              {"type": "assistant", "message": {"id": "m2", "usage": {"input_tokens": 3, "output_tokens": 4}}},
              {"type": "result", "subtype": "success", "is_error": False, "total_cost_usd": 0.0125}]
    bin_dir = fake_claude(tmp_path, stdout=events)
    proc = run_adapter(tmp_path, path=f"{bin_dir}:/usr/bin:/bin")
    assert proc.returncode == 0, proc.stderr
    usage = [json.loads(line) for line in (tmp_path / "trial" / "usage.jsonl").read_text().splitlines()]
    assert usage == [{"input_tokens": 115, "output_tokens": 7, "cost_usd": 0.0},
                     {"input_tokens": 3, "output_tokens": 4, "cost_usd": 0.0125}]
    argv = json.loads((tmp_path / "argv.json").read_text())
    assert argv[0] == "-p" and argv[1].endswith("Make the chorus lift.")
    assert argv[argv.index("--tools") + 1] == "" and "--strict-mcp-config" in argv
    allowed = argv[argv.index("--allowedTools") + 1].split(",")
    assert "mcp__overdub__apply_ops" in allowed and all(t.startswith("mcp__overdub__") for t in allowed)
    config = json.loads(Path(argv[argv.index("--mcp-config") + 1]).read_text())
    assert config == {"mcpServers": {"overdub": {"command": "/bin/sh", "args": [
        "-c", "overdub mcp --task mix-chorus-lift --log /tmp/calls.json"]}}}


@pytest.mark.parametrize("events, stderr, code, want", [
    ([{"type": "result", "subtype": "success", "is_error": True, "result": "API Error: 429 rate_limit_error"}],
     "", 1, 75),
    ([], "API Error: 529 overloaded_error", 1, 75),
    ([], "something else broke", 3, 3),  # no result and not the service: Claude Code's own exit code
    ([{"type": "result", "subtype": "error_max_turns", "is_error": True, "total_cost_usd": 0.5}], "", 1, 0),
])
def test_claude_code_adapter_exit_codes(tmp_path, events, stderr, code, want):
    bin_dir = fake_claude(tmp_path, stdout=events, code=code, stderr=stderr)
    assert run_adapter(tmp_path, path=f"{bin_dir}:/usr/bin:/bin").returncode == want
