"""An adapter that runs Claude Code headless on one overdub task, with the overdub studio as its only tools.

Run by ``overdub eval --agent-cmd "python /path/to/examples/agents/claude_code.py" --env-pass ANTHROPIC_API_KEY``.
It starts ``claude -p`` in the trial's workspace with the instruction (read from stdin) as the brief, an MCP
config holding one server, ``overdub`` (started by the command in ``OVERDUB_MCP``, which logs the session's
edits into the trial folder: that log is the answer), ``--strict-mcp-config`` so no other MCP server is
loaded, no built-in tools (``--tools ""``: no shell, no file reads, so no task files, oracles or scorer) and
only the overdub tools allowed. From Claude Code's stream-json output it writes ``$OVERDUB_RUN_DIR/usage.jsonl``:
one line per model response (input tokens, cache reads and writes included, and output tokens), the
session's cost (reported once, at the end) on the last line.

Exit codes: 0 when Claude Code's session ended (done, out of turns, or stopped by an error of its own:
whatever it did is scored); 75 on an infrastructure failure (no ``claude`` on PATH, a rate limit, an
overloaded or unreachable API, a failed login: ``overdub eval`` retries the trial and does not count it
against the agent); 2 when not started by ``overdub eval``; Claude Code's own exit code when it ended
without a result. Options through the environment (pass them with ``--env-pass``):
``OVERDUB_CLAUDE_MODEL`` (``--model``), ``OVERDUB_CLAUDE_MAX_TURNS`` (``--max-turns``, default 60).
Not run in CI: it needs Claude Code and an API key.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

INFRA_EXIT = 75
TOOLS = ("get_task", "get_guide", "get_project", "list_devices", "get_device", "apply_ops", "define_device",
         "render_and_measure", "undo", "get_history", "export_song")
#: What Claude Code prints when the failure is the service's or the machine's, not the agent's.
INFRA_TEXT = re.compile(r"rate.?limit|\b429\b|overloaded|\b529\b|API Error: 5\d\d|ECONNRE|ETIMEDOUT|ENOTFOUND|"
                        r"EAI_AGAIN|invalid api key|/login|authentication_error|credit balance|unknown option",
                        re.IGNORECASE)
PROMPT = """You are working on a song in a headless music studio, through the overdub tools only.
Call get_task for your brief and get_guide with topic "etiquette" for how to work; read the song with
get_project, measure with render_and_measure before and after each edit, and change the song only with
apply_ops and define_device. The edits the studio logs are your answer: stop when the measurements say the
brief is met.

The brief (get_task gives the same text):

"""


def claude_command(*, mcp_config: Path, instruction: str) -> list[str]:
    cmd = ["claude", "-p", PROMPT + instruction.strip(), "--output-format", "stream-json", "--verbose",
           "--mcp-config", str(mcp_config), "--strict-mcp-config", "--tools", "",
           "--allowedTools", ",".join(f"mcp__overdub__{t}" for t in TOOLS),
           "--max-turns", os.environ.get("OVERDUB_CLAUDE_MAX_TURNS", "60")]
    if os.environ.get("OVERDUB_CLAUDE_MODEL"):
        cmd += ["--model", os.environ["OVERDUB_CLAUDE_MODEL"]]
    return cmd


def usage_lines(events: list[dict]) -> list[dict]:
    """One usage line per model response (stream-json repeats a response's usage on each of its content
    blocks, so responses are told apart by message id) and the session's cost on the last line."""
    lines: dict[str, dict] = {}
    for event in events:
        message = event.get("message") if event.get("type") == "assistant" else None
        usage = message.get("usage") if isinstance(message, dict) else None
        if isinstance(usage, dict):
            tokens_in = sum(int(usage.get(k) or 0) for k in
                            ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"))
            lines[str(message.get("id", len(lines)))] = {
                "input_tokens": tokens_in, "output_tokens": int(usage.get("output_tokens") or 0), "cost_usd": 0.0}
    out = list(lines.values())
    cost = next((e.get("total_cost_usd") for e in events if e.get("type") == "result"), None)
    if isinstance(cost, (int, float)) and cost >= 0:
        if not out:
            out.append({"input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0})
        out[-1]["cost_usd"] = float(cost)
    return out


def parse_events(stdout: str) -> list[dict]:
    events = []
    for line in stdout.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            events.append(event)
    return events


def infra_failure(events: list[dict], stderr: str) -> str | None:
    """Why the run failed for reasons outside the agent, or None."""
    result = next((e for e in events if e.get("type") == "result"), None)
    if result is not None and not result.get("is_error"):
        return None
    said = " ".join([stderr, json.dumps(result) if result else ""])
    if INFRA_TEXT.search(said):
        return f"Claude Code failed outside the agent: {' '.join(said.split())[:300]}"
    return None


def main() -> int:
    server_cmd, run_dir = os.environ.get("OVERDUB_MCP"), os.environ.get("OVERDUB_RUN_DIR")
    if not server_cmd or not run_dir:
        print("claude_code.py: OVERDUB_MCP or OVERDUB_RUN_DIR is not set: run me with overdub eval --agent-cmd",
              file=sys.stderr)
        return 2
    if shutil.which("claude") is None:
        print("claude_code.py: no claude on PATH (install Claude Code): an infrastructure failure", file=sys.stderr)
        return INFRA_EXIT
    config = Path(os.environ.get("HOME", run_dir)) / "overdub-mcp.json"
    config.write_text(json.dumps({"mcpServers": {"overdub": {"command": "/bin/sh", "args": ["-c", server_cmd]}}}),
                      encoding="utf-8")
    env = {**os.environ, "MCP_TIMEOUT": "120000", "MCP_TOOL_TIMEOUT": "600000"}  # the first render compiles
    cmd = claude_command(mcp_config=config, instruction=sys.stdin.read())
    with open(config.with_name("claude.stderr"), "w+", encoding="utf-8") as err:
        proc = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err,
                                text=True)
        transcript = []
        for line in proc.stdout:  # the transcript goes on to agent.log as it comes, and is read at the end
            sys.stdout.write(line)
            sys.stdout.flush()
            transcript.append(line)
        code = proc.wait()
        err.seek(0)
        stderr = err.read()
    sys.stderr.write(stderr)
    events = parse_events("".join(transcript))
    lines = usage_lines(events)
    if lines:
        with open(Path(run_dir) / "usage.jsonl", "w", encoding="utf-8") as f:
            f.writelines(json.dumps(line) + "\n" for line in lines)
    why = infra_failure(events, stderr)
    if why:
        print(f"claude_code.py: {why}", file=sys.stderr)
        return INFRA_EXIT
    if any(e.get("type") == "result" for e in events):
        return 0  # the session ran to its end (done, out of turns or stopped by an error): its edits are scored
    return code


if __name__ == "__main__":
    sys.exit(main())
