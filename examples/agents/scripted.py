"""A scripted agent with no model: it plays one overdub task through the studio's MCP server.

Run by ``overdub eval --agent-cmd "python /path/to/examples/agents/scripted.py"``: it starts the studio with
the command in ``OVERDUB_MCP`` (over stdio, through the MCP Python SDK's client, as any MCP client would),
reads the task, the etiquette guide and the song, measures, applies a few ops, measures again and exits.
It writes no answer file: the studio's log of its edits is its answer.

Its moves are a small rule set for the tasks it knows, each driven by the numbers in the instruction and by
what it measures, never by the task file, an oracle or the scorer (a fair run, as docs/agents.md says):

- ``mix-master-loudness``: the master to unity and a true-peak limiter on it, its ceiling under the
  instruction's, its gain the shortfall to the instruction's loudness, corrected from what it measures.
- ``mix-chorus-lift``: a width stage on the master whose gain and width are automated up from where the
  chorus starts, by the lift and widening the instruction asks for minus what it measures now.

On any other task it measures the song and stops, so its answer is the starting song. It is deterministic
(no randomness, no clock): the same studio gives the same calls. Its progress goes to stderr, one line a
call. Exit codes: 0 done; 2 not started by ``overdub eval`` (no ``OVERDUB_MCP``); 75 the studio could not be
started or reached (an infrastructure failure, which ``overdub eval`` retries).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from typing import Any

INFRA_EXIT = 75
PEAK_MARGIN_DB = 0.3  # how far under the instruction's true-peak ceiling it keeps the peaks
LOUDNESS_TOLERANCE_LU = 0.5  # how close to the loudness it aims at is close enough
LIFT_TOLERANCE_LU = 0.25  # how close to the chorus lift it aims at is close enough
CREST_MARGIN_DB = 0.5  # how far inside the instruction's allowed crest drop it stays
CORRECTIONS = 3  # at most this many measured corrections per play


class StudioRefused(Exception):
    """A tool call the studio answered with an error (its one-line message)."""


class Studio:
    """The MCP client session, one method per use: ``call(tool, **arguments)`` returns the result's data."""

    def __init__(self, client: Any) -> None:
        self.client = client

    async def call(self, tool: str, **arguments: Any) -> dict:
        result = await self.client.call_tool(tool, arguments)
        text = result.content[0].text if result.content else ""
        if result.is_error:
            say(f"{tool}: refused: {text}")
            raise StudioRefused(text)
        data = result.structured_content if result.structured_content is not None else json.loads(text)
        say(f"{tool}({_brief(arguments)}) ok")
        return data

    async def measure(self, **span: Any) -> dict[str, Any]:
        return (await self.call("render_and_measure", **span))["figures"]


def say(line: str) -> None:
    print(f"scripted: {line}", file=sys.stderr, flush=True)


def _brief(arguments: dict) -> str:
    text = json.dumps(arguments, sort_keys=True)
    return text if len(text) <= 120 else text[:117] + "..."


WORDS = {w: float(n) for n, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve".split())}


def number(pattern: str, text: str) -> float | None:
    """The first number captured by ``pattern`` in the instruction (digits, or a word up to twelve), or
    None when it does not say."""
    found = re.search(pattern, text, flags=re.IGNORECASE)
    if not found:
        return None
    word = found.group(1).lower()
    if word in WORDS:
        return WORDS[word]
    try:
        return float(word)
    except ValueError:
        return None


# --- the plays ------------------------------------------------------------------------------------------


async def master_loudness(studio: Studio, instruction: str, project: dict, before: dict) -> None:
    """A limiter on the master at unity gain: its gain is the loudness shortfall, corrected as measured.

    Every dB of limiting costs crest, so it aims at the quiet side of "around" the target and backs the
    limiter off when the crest it measures has dropped more than the instruction allows.
    """
    target = number(r"(-?\d+(?:\.\d+)?) LUFS", instruction)
    ceiling = number(r"(-?\d+(?:\.\d+)?) dBTP", instruction)
    crest_drop = number(r"drop by (\w+) dB", instruction)
    if target is None or ceiling is None:
        say("the instruction names no LUFS target or dBTP ceiling; stopping")
        return
    aim = target - LOUDNESS_TOLERANCE_LU
    at_unity = before["lufs"] - float(project["master"]["gain"])  # the master gain comes after its inserts
    gain = _clamp(aim - at_unity, 0.0, 24.0)
    await studio.call("apply_ops", label="master: unity gain, true-peak limiter", ops=[
        {"type": "master.set", "patch": {"gain": 0}},
        {"type": "insert.add", "track": "master", "insert": {
            "id": "fx_master_limiter", "device": "core.limiter",
            "params": {"gain": round(gain, 2), "ceiling": round(ceiling - PEAK_MARGIN_DB, 2)}}}])
    for _ in range(CORRECTIONS):
        now = await studio.measure()
        squash = before["crest"] - now["crest"]
        say(f"loudness {now['lufs']:.2f} LUFS (aim {aim:g}), true peak {now['truePeak']:.2f} dBTP, "
            f"crest down {squash:.2f} dB")
        step = aim - now["lufs"] if abs(aim - now["lufs"]) > LOUDNESS_TOLERANCE_LU else 0.0
        if crest_drop is not None and squash > crest_drop - CREST_MARGIN_DB:
            step = min(step, crest_drop - CREST_MARGIN_DB - squash)
        if step == 0.0:
            return
        gain = _clamp(gain + step, 0.0, 24.0)
        await studio.call("apply_ops", label="limiter gain to the loudness target", ops=[
            {"type": "insert.set", "track": "master", "insert": "fx_master_limiter",
             "patch": {"params": {"gain": round(gain, 2)}}}])
    await studio.measure()


async def chorus_lift(studio: Studio, instruction: str, project: dict, before: dict) -> None:
    """Master gain and width automated up from the chorus on, by what the instruction asks minus what is;
    then the gain taken back by what the peaks stand over the instruction's ceiling, if the lift allows."""
    lift = re.search(r"\((\d+(?:\.\d+)?) to (\d+(?:\.\d+)?) LU\)", instruction)
    wider_db = number(r"at least (\d+(?:\.\d+)?) dB above", instruction)
    ceiling = number(r"over (-?\d+(?:\.\d+)?) dBTP", instruction)
    sections = {s["name"].lower(): s for s in project["sections"]}
    if lift is None or wider_db is None or not {"verse", "chorus"} <= sections.keys():
        say("the instruction names no lift range or widening, or the song has no Verse and Chorus; stopping")
        return
    low_lift, want_lift = float(lift.group(1)), (float(lift.group(1)) + float(lift.group(2))) / 2
    want_wider = wider_db + 1.0  # a margin over "at least"
    chorus = sections["chorus"]
    start, end = float(chorus["start"]), float(chorus["start"]) + float(chorus["length"])
    verse, chorus_now = await studio.measure(section="Verse"), await studio.measure(section="Chorus")
    gain = _clamp(want_lift - (chorus_now["lufs"] - verse["lufs"]), 0.0, 12.0)
    width = _clamp(10 ** ((want_wider - (chorus_now["sideDb"] - verse["sideDb"])) / 20), 1.0, 2.0)
    await studio.call("apply_ops", label="chorus: master width stage, gain and width up", ops=[
        {"type": "insert.add", "track": "master", "insert": {"id": "fx_master_lift", "device": "core.width"}},
        _from_chorus("gain", 0.0, gain, start, end), _from_chorus("width", 1.0, width, start, end)])
    for _ in range(CORRECTIONS):
        now, whole = await studio.measure(section="Chorus"), await studio.measure()
        got = now["lufs"] - verse["lufs"]
        say(f"chorus minus verse {got:.2f} LU (want {want_lift:g}), side/mid "
            f"{now['sideDb'] - verse['sideDb']:.2f} dB (want {want_wider:g}), true peak {whole['truePeak']:.2f} dBTP")
        step = want_lift - got if abs(want_lift - got) > LIFT_TOLERANCE_LU else 0.0
        if ceiling is not None and whole["truePeak"] > ceiling - PEAK_MARGIN_DB:
            step = max(min(step, ceiling - PEAK_MARGIN_DB - whole["truePeak"]), low_lift + LIFT_TOLERANCE_LU - got)
        if abs(step) < 0.01:
            break
        gain = _clamp(gain + step, 0.0, 12.0)
        await studio.call("apply_ops", label="chorus gain", ops=[_from_chorus("gain", 0.0, gain, start, end)])
    await studio.measure(section="Verse")


def _from_chorus(param: str, low: float, high: float, start: float, end: float) -> dict:
    """Automation on the master width stage: ``low`` until the chorus starts, ``high`` through it."""
    points = f"0:{low:g} {start - 0.05:g}:{low:g} {start:g}:{round(high, 2):g} {end:g}:{round(high, 2):g}"
    return {"type": "auto.write", "track": "master", "insert": "fx_master_lift", "param": param, "points": points}


def _clamp(value: float, low: float, high: float) -> float:
    return min(high, max(low, value))


PLAYS = {"mix-master-loudness": master_loudness, "mix-chorus-lift": chorus_lift}


# --- the session ----------------------------------------------------------------------------------------


async def play(server_cmd: str) -> None:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command="/bin/sh", args=["-c", server_cmd])
    async with Client(params, mode="legacy") as client:
        studio = Studio(client)
        task = await studio.call("get_task")
        await studio.call("get_guide", topic="etiquette")
        project = await studio.call("get_project", detail="summary")
        before = await studio.measure()
        move = PLAYS.get(task["id"])
        if move is None:
            say(f"no rule for task {task['id']!r}: measured, changing nothing")
            return
        await move(studio, task["instruction"], project, before)
        history = await studio.call("get_history")
        say(f"done: {len(history.get('steps', []))} step(s) applied")


def main() -> int:
    server_cmd = os.environ.get("OVERDUB_MCP")
    if not server_cmd:
        print("scripted.py: OVERDUB_MCP is not set: run me with overdub eval --agent-cmd", file=sys.stderr)
        return 2
    try:
        asyncio.run(play(server_cmd))
    except Exception as exc:  # the SDK's task groups wrap what was raised in (nested) exception groups
        from mcp import MCPError

        leaves = list(_leaves(exc))
        refused = [e for e in leaves if isinstance(e, StudioRefused)]
        if refused:
            print(f"scripted.py: the studio refused a call: {refused[0]}", file=sys.stderr)
            return 1
        lost = [e for e in leaves if isinstance(e, (MCPError, OSError))]
        if not lost:
            raise
        print(f"scripted.py: lost the studio ({type(lost[0]).__name__}: {lost[0]}): an infrastructure failure",
              file=sys.stderr)
        return INFRA_EXIT
    return 0


def _leaves(exc: BaseException):
    """The exceptions inside (nested) exception groups, or ``exc`` itself."""
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            yield from _leaves(inner)
    else:
        yield exc


if __name__ == "__main__":
    sys.exit(main())
