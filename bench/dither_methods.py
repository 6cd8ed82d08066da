"""What ``master-streaming-single``'s dither gates read for every dither ffmpeg's ``aresample`` makes.

The oracle's 24-bit master is turned into 16 bits by each ``dither_method`` ffmpeg knows, and each copy is
read by the task's own two dither checks: ``dither`` (the rms of the silent last 0.5 s) and
``dither-throughout`` (the quietest 100 ms of the copy minus the master, docs/checks.md ``dither``),
beside the targets. So the gates' figures in docs/audio-tasks.md come from here, and a method an engineer
would use that a gate refuses shows. Skipped, with a message, where ffmpeg is not installed.

Run: ``python3 bench/dither_methods.py``
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

TASK = "master-streaming-single"
METHODS = ("triangular", "triangular_hp", "rectangular", "lipshitz", "shibata", "low_shibata", "high_shibata",
           "f_weighted", "modified_e_weighted", "improved_e_weighted")


def main() -> int:
    if shutil.which("ffmpeg") is None:
        print("ffmpeg is not installed: skipping the dither methods")
        return 0
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import soundfile as sf

    from pytest_overdub.bench.audio.answers import make_answer
    from pytest_overdub.bench.audio.score import AudioContext
    from pytest_overdub.bench.checks import evaluate
    from pytest_overdub.bench.tasks import bundled_bench

    bench = bundled_bench()
    task = bench.task(TASK)
    checks = [c for c in task.checks if c.id in ("dither", "dither-throughout")]
    folder = make_answer(task, "streaming.oracle", bench)
    master, sr = sf.read(folder / "master.flac", always_2d=True)
    print(f"{TASK}: the oracle's master through ffmpeg aresample=osf=s16:dither_method=<method>")
    print(f"{'method':<22} " + "  ".join(f"{c.id} {list(c.target)}" for c in checks))
    with tempfile.TemporaryDirectory(prefix="overdub-dither-") as tmp:
        src = Path(tmp) / "master.wav"
        sf.write(src, master, sr, subtype="PCM_24")
        for method in METHODS:
            out = Path(tmp) / f"{method}.wav"
            run = subprocess.run(["ffmpeg", "-hide_banner", "-nostdin", "-loglevel", "error", "-y", "-i", str(src),
                                  "-af", f"aresample=osf=s16:dither_method={method}", "-c:a", "pcm_s16le", str(out)],
                                 capture_output=True, text=True)
            if run.returncode != 0:
                print(f"{method:<22} ffmpeg refused it: {run.stderr.strip().splitlines()[-1]}")
                continue
            q, _ = sf.read(out, always_2d=True)
            ctx = AudioContext(inputs={}, answer={"master.wav": master.T, "master-16.wav": q.T}, sr=sr)
            results = [evaluate(c, ctx) for c in checks]
            print(f"{method:<22} " + "  ".join(f"{r.value:>8.2f} ({r.score:.2f})" for r in results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
