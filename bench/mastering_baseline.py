"""Where the bar is on ``master-streaming-single``: ffmpeg's ``loudnorm`` beside the bench's oracle.

A plain reference a user could run in one line: ffmpeg's two-pass ``loudnorm`` (EBU R128, I=-14 LUFS,
TP=-1 dBTP, linear mode when it can), written as 24-bit at 48 kHz, then a 16-bit copy with ffmpeg's
triangular dither (``aresample``). Both folders are scored by the bench's own scorer and printed with
each check's value, so "better than a naive tool" has a number. Skipped, with a message, where ffmpeg is
not installed.

Run: ``python3 bench/mastering_baseline.py``
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TASK = "master-streaming-single"
TARGET = "I=-14:TP=-1:LRA=20"


def _ffmpeg(*args: str) -> str:
    out = subprocess.run(["ffmpeg", "-hide_banner", "-nostdin", "-y", *args], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"ffmpeg failed: {out.stderr.strip().splitlines()[-1]}")
    return out.stderr


def loudnorm(mix: Path, folder: Path) -> None:
    """Two-pass loudnorm into ``folder/master.wav`` and a dithered ``folder/master-16.wav``."""
    first = _ffmpeg("-i", str(mix), "-af", f"loudnorm={TARGET}:print_format=json", "-f", "null", "-")
    m = json.loads(re.findall(r"\{[^{}]*\}", first)[-1])
    measured = (f"measured_I={m['input_i']}:measured_TP={m['input_tp']}:measured_LRA={m['input_lra']}:"
                f"measured_thresh={m['input_thresh']}:offset={m['target_offset']}:linear=true")
    _ffmpeg("-i", str(mix), "-af", f"loudnorm={TARGET}:{measured}", "-ar", "48000", "-c:a", "pcm_s24le",
            str(folder / "master.wav"))
    _ffmpeg("-i", str(folder / "master.wav"), "-af", "aresample=osf=s16:dither_method=triangular",
            "-c:a", "pcm_s16le", str(folder / "master-16.wav"))


def main() -> int:
    if shutil.which("ffmpeg") is None:
        print("ffmpeg is not installed: skipping the loudnorm baseline")
        return 0
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from pytest_overdub.bench.audio.answers import make_answer
    from pytest_overdub.bench.audio.inputs import ensure_inputs
    from pytest_overdub.bench.audio.score import score_audio_task
    from pytest_overdub.bench.tasks import bundled_bench

    bench = bundled_bench()
    task = bench.task(TASK)
    mix = ensure_inputs(task, bench)["mix.wav"]
    rows = []
    with tempfile.TemporaryDirectory(prefix="overdub-loudnorm-") as tmp:
        t0 = time.perf_counter()
        loudnorm(mix, Path(tmp))
        made = time.perf_counter() - t0
        rows.append(("ffmpeg loudnorm", score_audio_task(task, Path(tmp), bench=bench), made))
    oracle = json.loads(bench.oracle_path(TASK).read_text())["make"]
    t0 = time.perf_counter()
    folder = make_answer(task, oracle, bench)
    rows.append((f"oracle ({oracle})", score_audio_task(task, folder, bench=bench), time.perf_counter() - t0))
    ids = [c.id for c in rows[0][1].checks]
    print(f"{TASK}: {task.title}")
    print(f"{'answer':<32} {'score':>6}  " + "  ".join(f"{i:>8}" for i in ids))
    for name, r, _ in rows:
        print(f"{name:<32} {r.score:>6.3f}  " + "  ".join(f"{c.value:>8.2f}" for c in r.checks))
    for name, r, _ in rows:
        failed = [c.line() for c in r.checks if c.score < 1.0]
        if failed:
            print(f"\n{name} misses:\n  " + "\n  ".join(failed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
