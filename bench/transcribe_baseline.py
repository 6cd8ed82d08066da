"""A naive transcriber on the transcription tasks, its figures printed beside the oracle's (issue 19).

    python3 bench/transcribe_baseline.py              # tier 1 (transcribe-solo-hook)
    python3 bench/transcribe_baseline.py --all        # every transcribe-* task of the bundled bench
    python3 bench/transcribe_baseline.py --variants transcribe-solo-hook@1-3 transcribe-full-band@7
                                                      # variants on generated songs (<task>@A-B: seeds A..B)

The transcriber is written here with numpy and scipy only, the plainest thing that works on a clean
monophonic line: it hears the task's mix WAV (the file an agent gets), finds onsets by spectral flux
(log-magnitude STFT, half-wave rectified, peaks over a moving median), and at each onset takes the pitch
whose harmonics (1 to 5, weights 1/h) hold the most energy in the 100 ms after it, between MIDI 28 and
96; a note lasts until the next onset or until its fundamental's bin falls 25 dB under its peak. It
answers every part of the task with the same notes (it cannot tell parts apart), so on tier 2 and 3 its
figures show how far "a spectral peak picker" is from a transcription. On an oracle run given stems
(``transcribe-full-band-oracle@<seed>``) it transcribes each part from its own stem instead. What it
prints is what an agent has to beat: its F1 beside the oracle's.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
from scipy.ndimage import median_filter  # noqa: E402
from scipy.signal import find_peaks, stft  # noqa: E402

from pytest_overdub.bench.tasks import bundled_bench, score_task  # noqa: E402
from pytest_overdub.bench.validity import load_answer  # noqa: E402
from pytest_overdub.transcribe.answer import answer_from_data  # noqa: E402
from pytest_overdub.transcribe.inputs import mix_wav, stem_wav  # noqa: E402

N_FFT, HOP = 4096, 256
MIDI_LO, MIDI_HI = 28, 96


def _spectrum(x: np.ndarray, sr: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    f, t, z = stft(x, fs=sr, nperseg=N_FFT, noverlap=N_FFT - HOP, boundary="zeros", padded=True)
    return f, t, np.abs(z)  # frame k is centred on k * HOP / sr


def onsets(mag: np.ndarray, times: np.ndarray) -> np.ndarray:
    """Onset times (s): peaks of the positive spectral flux above a moving median plus a margin."""
    logm = np.log1p(100.0 * mag)
    flux = np.maximum(0.0, np.diff(logm, axis=1)).sum(axis=0)
    flux = np.concatenate([[0.0], flux])
    floor = median_filter(flux, size=31, mode="nearest")
    margin = 0.1 * flux.max()
    peaks, _ = find_peaks(flux, height=floor + margin, distance=max(1, int(0.06 / (times[1] - times[0]))))
    # the flux peaks when the attack reaches the window's centre, a hop after the frame before it
    return np.maximum(0.0, times[peaks] - HOP / 48000)


def pitch_at(mag: np.ndarray, freqs: np.ndarray, frames: slice) -> tuple[float, int]:
    """(MIDI pitch, fundamental bin) over ``frames``: the lowest spectral peak within 15 dB of the
    strongest, between MIDI 28 and 96, its frequency refined by a parabola through the peak's bins."""
    spec = mag[:, frames].mean(axis=1)
    df = freqs[1] - freqs[0]
    lo = int(440.0 * 2 ** ((MIDI_LO - 69) / 12) / df)
    hi = int(440.0 * 2 ** ((MIDI_HI - 69) / 12) / df) + 1
    peaks, _ = find_peaks(spec[lo:hi], height=spec[lo:hi].max() * 10 ** (-15 / 20))
    if peaks.size == 0:
        return float(MIDI_LO), lo
    k = lo + int(peaks[0])
    a, b, c = np.log(spec[k - 1:k + 2] + 1e-12)
    shift = 0.5 * (a - c) / (a - 2 * b + c) if a - 2 * b + c < 0 else 0.0
    f0 = (k + shift) * df
    return float(round(69 + 12 * np.log2(f0 / 440.0))), k


def transcribe(path: Path) -> list[dict[str, float]]:
    import soundfile as sf

    x, sr = sf.read(str(path), always_2d=True)
    lead = N_FFT  # silence before the first sample, so a note at 0 s has a rising edge to be found on
    mono = np.concatenate([np.zeros(lead), x.mean(axis=1)])
    freqs, times, mag = _spectrum(mono, sr)
    starts = onsets(mag, times)
    frame_s = HOP / sr
    notes = []
    for i, t0 in enumerate(starts):
        a = max(0, int(round(t0 / frame_s)))
        b = a + max(1, int(0.1 / frame_s))
        p, k = pitch_at(mag, freqs, slice(a, b))
        end_limit = starts[i + 1] if i + 1 < len(starts) else len(mono) / sr
        line = mag[max(0, k - 1):k + 2, a:].max(axis=0)
        if line.size == 0 or line.max() <= 0:
            continue
        peak = line[:max(1, b - a)].max()
        below = np.nonzero(line < peak * 10 ** (-25 / 20))[0]
        end = t0 + (below[0] * frame_s if below.size else end_limit - t0)
        end = min(end, end_limit)
        if end - t0 > 0.03 and t0 >= lead / sr - 0.03:
            notes.append({"p": p, "t": max(0.0, float(t0) - lead / sr), "d": float(end - t0)})
    return notes


def variant_ids(specs: list[str]) -> list[str]:
    """``<task>@<seed>`` as given, ``<task>@A-B`` as every seed from A to B."""
    out = []
    for spec in specs:
        m = re.fullmatch(r"(.+)@([0-9]+)-([0-9]+)", spec)
        out += [f"{m.group(1)}@{s}" for s in range(int(m.group(2)), int(m.group(3)) + 1)] if m else [spec]
    return out


def tasks_and_oracles(args: argparse.Namespace, bench) -> list[tuple]:
    """(task, the oracle's result) for each task asked for."""
    if args.variants:
        from pytest_overdub.bench.variant_rules import score_answer
        from pytest_overdub.bench.variants import variant

        out = []
        for vid in variant_ids(args.variants):
            v = variant(vid)
            out.append((v.task, score_answer(v, v.oracle, bench)))
        return out
    ids = [t for t in bench.task_ids() if t.startswith("transcribe-")]
    out = []
    for task in (bench.task(t) for t in ids):
        if args.all or task.tier == 1:
            oracle_sub, _ = load_answer(bench.oracle_path(task.id), task_id=task.id, kind="oracle")
            out.append((task, score_task(task, oracle_sub, bench=bench)))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all", action="store_true", help="every transcription task, not just tier 1")
    parser.add_argument("--variants", nargs="+", metavar="ID",
                        help="variants instead of the bench's tasks: <task>@<seed> or <task>@A-B")
    args = parser.parse_args()
    bench = bundled_bench()
    width = max([30, *(len(v) + 1 for v in variant_ids(args.variants or []))])
    print(f"{'task':<{width}} {'tier':>4}  {'part':<6} {'oracle F1':>9} {'naive F1':>8} {'naive P':>7} {'naive R':>7} "
          f"{'naive F1+off':>12} {'octaves':>7}  {'oracle score':>12} {'naive score':>11}")
    for task, oracle in tasks_and_oracles(args, bench):
        song = bench.song(task.song)
        if "stems" in task.given:  # an oracle run: each part from its own stem
            parts = {p: transcribe(stem_wav(task, song, p)) for p in task.parts}
        else:
            notes = transcribe(mix_wav(task, song))
            parts = {p: notes for p in task.parts}
        answer = answer_from_data({"time": "seconds", "parts": parts}, parts=task.parts,
                                  source=f"naive transcriber on {task.id}")
        naive = score_task(task, answer, bench=bench)
        for part in task.parts:
            v = {c.id: c.value for c in naive.checks}
            print(f"{task.id:<{width}} {task.tier:>4}  {part:<6} {oracle.check(f'f1-{part}').value:>9.3f} "
                  f"{v[f'f1-{part}']:>8.3f} {v[f'precision-{part}']:>7.3f} {v[f'recall-{part}']:>7.3f} "
                  f"{v[f'f1-offsets-{part}']:>12.3f} {int(v[f'octaves-{part}']):>7}  {oracle.score:>12.3f} "
                  f"{naive.score:>11.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
