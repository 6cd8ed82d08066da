"""Write ``docs/tasks.md`` from ``tasks/*.json``: every task, what it asks, its setup and its checks.

Run ``python3 tools/make_task_docs.py`` after changing a task; ``tests/unit/test_docs.py`` fails while the
page differs from what this script writes, so the page cannot drift from the task files. Pure Python
(json only): it reads the task files as data and imports nothing of the package.

The notation of a check line (the same as ``docs/scoring.md``): ``[lo, hi]`` the target (``…`` = no bound),
``±soft`` the fall-off, ``wN`` a goal's weight, ``G`` a gate.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TASKS_DIR = ROOT / "tasks"
PAGE = ROOT / "docs" / "tasks.md"

HEAD = """\
# The tasks

<!-- Written by tools/make_task_docs.py from tasks/*.json; do not edit by hand. -->

Song tasks in four families (`mix`, `writing`, `device`, `editing`), each a request a musician would
make on one of three starting songs (`songs/`): an agent is given the instruction and the starting
song (`overdub start <task> --out start.json`), nothing else. Audio tasks in two more families
(`mastering`, `mixdown`): the agent is given WAV files rendered from the songs (`overdub start <task> --out
DIR`) and hands back the files the task names ([audio tasks](audio-tasks.md)). The
[transcription](#transcription) tasks come last: the agent hears a mix and writes down notes. How a check
line reads: [scoring](scoring.md); what each kind measures: [checks](checks.md) and
[audio tasks](audio-tasks.md).

Notation: `[lo, hi]` is the target (`…` = no bound on that side), `±soft` the distance over which the
score falls from 1 to 0 outside it (none = pass/fail), `wN` a goal's weight, `G` a gate. Every task also
has the house gates `clean` and `scope` ([scoring](scoring.md)); "may change" is the task's `scope`, what
an answer may touch: everything else must stay as it was. Beats and bars are 0-based (bar 0 is beats
0-4); a span "beats 0-16" holds the notes or audio from beat 0 up to, not including, beat 16; "bars 0-3"
are bars 0, 1, 2 and 3.

| task | family | song | may change | checks |
|---|---|---|---|---|
"""

AUDIO_HEAD = """
## Audio tasks

Inputs are 24-bit 48 kHz stereo WAVs the bench renders from a song ("tracks": those tracks' stems summed
before the master; "chain": house effects it runs them through); the answer is a folder holding the files
listed. A file a check reads is an answer file by name, or an input as `input:<name>`. Every audio task
has the house gate `files` (the answer's files are there, in an allowed form).

| task | family | inputs | hand back | checks |
|---|---|---|---|---|
"""


def _num(v: float | None) -> str:
    if v is None:
        return "…"
    return f"{v:g}"


def _tracks(tracks, *, notes: bool = False) -> str:
    if tracks is None:
        return "every track" if notes else "the mix"
    if tracks == "new":
        return "new tracks"
    return ", ".join(tracks)


def _span(c: dict) -> str:
    if c.get("section"):
        return f" in {c['section']}"
    lo, hi = c.get("from"), c.get("to")
    if lo is None and hi is None:
        return ""
    return f", beats {_num(lo) if lo is not None else 0}-{_num(hi) if hi is not None else 'end'}"


def _scope(c: dict, *, notes: bool = False) -> str:
    return _tracks(c.get("tracks"), notes=notes) + _span(c)


def _bars(c: dict) -> str:
    first, last = c["bars"]
    return f"bars {first}-{last - 1}" if last - 1 > first else f"bar {first}"


def _audio_what(c: dict) -> str | None:
    """What an audio check reads, in a few words; None for a song check."""
    kind = c["kind"]
    against = f" vs `{c['against']}`" if c.get("against") else ""
    band = f" {_num(c['band'][0])}-{_num(c['band'][1])} Hz" if c.get("band") else ""
    if kind in ("loudness", "truePeak", "plr", "loudnessChange", "clippedAdded", "tonalBalance", "dither"):
        return f"{kind} of `{c['file']}`{against}"
    if kind in ("bandChange", "sideBand"):
        per = (", 9 in 10 100 ms frames" if c.get("per") == "block" else "") + (", mid" if c.get("of") == "mid" else "")
        return f"{kind}{band}{per} of `{c['file']}`{against}"
    if kind == "tailRms":
        return f"tailRms of `{c['file']}`, last {_num(c.get('tail', 0.5))} s"
    if kind == "residual":
        files = " + ".join(f"`{f}`" for f in c["files"]) if c.get("files") else f"`{c['file']}`"
        return f"residual of {files}{against}"
    if kind == "likeness":
        per = ", lowest 50 ms block" if c.get("per") == "block" else ""
        return f"likeness ({c.get('how', 'waveform')}{per}) of `{c['file']}`{against}"
    if kind == "duck":
        return f"duck {c['measure']} of `{c['file']}` over `{c['source']}`, hits of `{c['hits']}`"
    if kind == "hits":
        return f"hits {c['measure']} of `{c['file']}` vs `{c['source']}`"
    if kind == "sequence":
        return (f"sequence {c['measure']} of `{c['file']}` as {', '.join(f'`{p}`' for p in c['parts'])}, "
                f"gaps {_num(c['gap'])} s")
    return None


def _input_text(i: dict) -> str:
    text = f"`{i['name']}`: `{i['song']}`" + (f" ({', '.join(i['tracks'])})" if i.get("tracks") else " mix")
    if i.get("chain"):
        text += " through " + ", ".join(f"{x['device']} {json.dumps(x.get('params', {}), separators=(', ', ': '))}"
                                        for x in i["chain"])
    if i.get("gain_db"):
        text += f", {_num(i['gain_db'])} dB"
    if i.get("pad_s"):
        text += f", {_num(i['pad_s'])} s of silence after"
    return text


def _answer_text(a: dict) -> str:
    bits = f", {a['bits']}-bit" if a.get("bits") else ""
    gap = f", {_num(a['gap_s'])} s gaps" if a.get("gap_s") else ""
    return f"`{a['name']}` ({a['what']}; from {', '.join(a['from'])}{gap}{bits})"


def _what(c: dict) -> str:
    """What the check reads, in a few words, from its kind and fields."""
    audio = _audio_what(c)
    if audio is not None:
        return audio
    kind = c["kind"]
    pitches = f", pitches {'/'.join(str(p) for p in c['pitches'])}" if c.get("pitches") else ""
    if kind == "measure":
        text = f"`{c['metric']}` of {_scope(c)}" + (" (own track, before the master)" if c.get("stem") else "")
        minus = c.get("minus")
        if minus is not None:
            each = "the loudest of each alone: " if minus.get("each") else ""
            text += f" minus {each}{_scope(minus)}"
        if c.get("relative"):
            text += ", relative to the start"
        return text
    if kind == "key":
        return f"key of {_scope(c)} is {c['expect']} (or its relative)"
    sel = _scope(c, notes=True) + pitches
    if kind in ("count", "inKey", "span", "unchanged", "distinct", "turns"):
        return f"{kind} of {sel}"
    if kind == "within":
        return f"within {c['lo']}..{c['hi']} of {sel}"
    if kind in ("clashes", "doubling", "copied"):
        return f"{kind} of {sel} against {', '.join(c['against'])}"
    if kind == "transposed":
        return f"{sel} transposed {c['semitones']:+d}"
    if kind == "roots":
        return f"roots of {' '.join(c['chords'])} in {sel}, {_bars(c)}"
    if kind == "chordTones":
        return f"chordTones of {' '.join(c['chords'])} in {sel}, {_bars(c)}"
    if kind == "quantized":
        return f"quantized of {sel}, grid {_num(c.get('grid', 0.25))}"
    if kind == "pattern":
        return f"pattern of {sel} at beats {', '.join(_num(a) for a in c['at'])} of {_bars(c)}"
    if kind == "differs":
        return f"bar {c['a']} differs from bar {c['b']} in {sel}"
    if kind == "chordsUnder":
        return (f"chordsUnder of {sel} under {', '.join(c['melody'])}, {_bars(c)}, "
                f"voices {c.get('voices', 3)}-{c.get('maxVoices', 5)}, hold {_num(c.get('hold', 2))}")
    if kind in ("jitter", "swing"):
        return f"{kind} of {sel}, grid {_num(c.get('grid', 0.25))}"
    if kind == "defined":
        return f"the agent's own {c['deviceKind']} on {c['track']} (song-defined, new or changed)"
    if kind in ("echoTime", "echoLevel", "dryKept"):
        tempos = "/".join(_num(t) for t in c.get("tempos", [100]))
        if kind == "dryKept":
            tempos = _num(c.get("tempos", [100])[0])
        elif c.get("draws"):
            lo, hi = c.get("tempoRange", [70, 170])
            tempos += f" and {c['draws']} drawn in {_num(lo)}-{_num(hi)}"
        beats = f", {_num(c['beats'])} beats" if c.get("beats") is not None else ""
        click = ", drawn click" if c.get("draws") else ""
        return f"{kind} of {c['track']} at {tempos} bpm{beats}{click}"
    if kind in ("decayTime", "decayPeak", "notePitch", "noteLength"):
        notes = ", ".join(f"{n['p']} ({_num(n['d'])} beats)" for n in c["notes"])
        which = f" ({c.get('which', 'loudest')})" if kind == "decayPeak" else ""
        drawn = _drawn(c)
        threshold = f", threshold {_num(c.get('threshold', -60))} dBFS" if kind == "decayTime" else ""
        return f"{kind}{which} of {c['track']}, notes {notes}{drawn}{threshold}"
    if kind == "toneGain":
        return f"toneGain of {c['track']} at MIDI {c['pitch']}{_drawn(c)}"
    if kind == "trackBand":
        return f"trackBand of {c['track']}, {_num(c['band'][0])}-{_num(c['band'][1])} Hz"
    if kind in ("trackEchoTime", "trackEchoLevel"):
        return f"{kind} of {c['track']}, {_num(c['beats'])} beats"
    if kind == "trackDecay":
        return f"trackDecay of {c['track']}, threshold {_num(c.get('threshold', -60))} dBFS"
    if kind in ("trackDryKept", "trackPitch", "trackLength"):
        return f"{kind} of {c['track']}"
    return kind


def _drawn(c: dict) -> str:
    """The seeded family: `` (drawn: ±2 semitones, velocity 0.3-1)``, or nothing."""
    parts = []
    if c.get("spread"):
        parts.append(f"±{c['spread']} semitones")
    for key, name in (("velocities", "velocity"), ("stretch", "length ×")):
        lo, hi = c.get(key, [0, 0])
        if lo != hi:
            parts.append(f"{name} {_num(lo)}-{_num(hi)}")
    return f" (drawn: {', '.join(parts)})" if parts else ""


def check_line(c: dict) -> str:
    """``lift``: `lufs` of the mix in Chorus minus the mix in Verse [1.5, 3] ±1.5 LU w3."""
    lo, hi = c["target"]
    text = f"`{c['id']}`: {_what(c)} [{_num(lo)}, {_num(hi)}]"
    if c.get("soft"):
        text += f" ±{_num(c['soft'])}"
    if c.get("unit"):
        text += f" {c['unit']}"
    text += " G" if c.get("gate") else f" w{_num(c.get('weight') or 1)}"
    return text


def scope_text(scope: dict) -> str:
    """``Bass (sound only, not notes), the master chain, in Chorus only`` (as the gate prints it)."""
    parts = []
    tracks = scope.get("tracks", [])
    if tracks:
        names = "every track" if tracks == "all" else ", ".join(tracks)
        parts.append(names + ("" if scope.get("notes") else " (sound only, not notes)"))
    if scope.get("new"):
        parts.append("new tracks")
    for flag, words in (("master", "the master chain"), ("tempo", "the tempo"), ("key", "the key"),
                        ("length", "the song's length")):
        if scope.get(flag):
            parts.append(words)
    text = ", ".join(parts) or "nothing"
    if scope.get("sections"):
        text += f", in {', '.join(scope['sections'])} only"
    return text


def _setup(task: dict) -> str:
    if not task["setup"]:
        return "none"
    return "; ".join(f"`{json.dumps(op, separators=(', ', ': '))}`" for op in task["setup"])


TRANSCRIPTION_HEAD = """
## Transcription

The agent is given the instruction and the task's mix, a WAV (`overdub start <task> --out mix.wav`), and
nothing else: no tempo, no stems, no track count. It answers notes per part
([transcription](transcription.md)). Every part has the same figures: `f1-<part>` (note F1, onsets within 50 ms and pitch
within 50 cents; weighted, the score is their weighted mean) and, shown but not scored (w0),
`precision-`, `recall-`, `f1-offsets-`, `octaves-` and `rhythm-<part>`; the gate `gate-<part>` holds the
named part's F1 at 0.5 or more, and the gate `surplus-<part>` more of its written notes right than wrong (no
hedging). No house gates: nothing is rendered from the answer.

| task | tier | song | heard | parts (tracks) | gate |
|---|---|---|---|---|---|
"""

FIGURES = (("precision", "note precision"), ("recall", "note recall"),
           ("f1-offsets", "note F1 with offsets (within 20% of the note, at least 50 ms)"),
           ("octaves", "notes heard an octave off"), ("rhythm", "matched notes on the right grid step and length"))


def _excerpt(t: dict) -> str:
    lo, hi = t.get("from", 0), t.get("to")
    return "the whole song" if not lo and hi is None else f"beats {_num(lo)}-{_num(hi) if hi is not None else 'end'}"


def transcription_page(tasks: list[dict]) -> str:
    if not tasks:
        return ""
    rows = [f"| `{t['id']}` | {t['tier']} | `{t['song']}` ({_excerpt(t)}) | "
            f"{', '.join(t['heard']) if t.get('heard') else 'every track'} | "
            f"{'; '.join(f'{k} ({chr(44).join(v)})' for k, v in t['parts'].items())} | {t['gate']} |" for t in tasks]
    details = []
    for t in tasks:
        details.append(f"### `{t['id']}`: {t['title']}\n")
        details.append(f"> {t['instruction']}\n")
        details.append(f"Tier {t['tier']}; song `{t['song']}`, {_excerpt(t)}; grid {_num(t.get('grid', 0.25))} "
                       f"beats (for rhythm).\n")
        for part in t["parts"]:
            w = t.get("weights", {}).get(part, 1)
            details.append(f"- `f1-{part}`: {part}: note F1 (onset within 50 ms, pitch within 50 cents) "
                           f"[1, …] ±1 w{_num(w)}")
            details += [f"- `{ident}-{part}`: {part}: {text} w0" for ident, text in FIGURES]
        details.append(f"- `gate-{t['gate']}`: {t['gate']}: note F1 [0.5, …] G")
        details.append(f"- `surplus-{t['gate']}`: {t['gate']}: notes written right minus notes written wrong "
                       "[1, …] G\n")
    return TRANSCRIPTION_HEAD + "\n".join(rows) + "\n\n" + "\n".join(details)


def page(tasks_dir: Path = TASKS_DIR) -> str:
    every = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(tasks_dir.glob("*.json"))]
    tasks = [t for t in every if not t.get("inputs") and t.get("family") != "transcription"]
    audio = [t for t in every if t.get("inputs")]
    rows = []
    for t in tasks:
        checks = " · ".join(check_line(c).replace("|", "\\|") for c in t["checks"])
        rows.append(f"| `{t['id']}` | {t['family']} | `{t['song']}` | {scope_text(t['scope'])} | {checks} |")
    audio_rows = []
    for t in audio:
        checks = " · ".join(check_line(c).replace("|", "\\|") for c in t["checks"])
        audio_rows.append(f"| `{t['id']}` | {t['family']} | {'; '.join(_input_text(i) for i in t['inputs'])} | "
                          f"{'; '.join(_answer_text(a) for a in t['answer'])} | {checks} |")
    audio_details = []
    for t in audio:
        details = audio_details
        details.append(f"### `{t['id']}`: {t['title']}\n")
        details.append(f"> {t['instruction']}\n")
        details += [f"- input {_input_text(i)}" for i in t["inputs"]]
        details += [f"- hand back {_answer_text(a)}" for a in t["answer"]]
        details += [f"- {check_line(c)}" for c in t["checks"]]
        details.append("- `files`: the answer's files are there, in an allowed form [0, 0] G\n")
    details = []
    for t in tasks:
        details.append(f"### `{t['id']}`: {t['title']}\n")
        details.append(f"> {t['instruction']}\n")
        details.append(f"Song `{t['song']}`; setup (ops the house applies before the agent sees it): "
                       f"{_setup(t)}.\n")
        details += [f"- {check_line(c)}" for c in t["checks"]]
        details.append("- `clean`: no render problems (faults, NaN) [0, 0] G")
        details.append(f"- `scope`: changes nothing but what this task may change: {scope_text(t['scope'])} "
                       f"[0, 0] G\n")
    table = HEAD + "\n".join(rows) + "\n"
    if audio_rows:
        table += AUDIO_HEAD + "\n".join(audio_rows) + "\n"
    return (table + "\n## Each task\n\n" + "\n".join(details + audio_details)
            + transcription_page([t for t in every if t.get("family") == "transcription"]))


def main(argv: list[str]) -> int:
    text = page()
    if argv == ["--check"]:
        current = PAGE.read_text(encoding="utf-8") if PAGE.exists() else ""
        if current != text:
            print(f"{PAGE} is out of date: run python3 tools/make_task_docs.py", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(text, encoding="utf-8")
    print(f"wrote {PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
