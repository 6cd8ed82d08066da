"""Key: chroma of the mono sum and Krumhansl-Schmuckler correlation with the Krumhansl-Kessler profiles.

Conventions (docs/meters.md):

* STFT (float32: only relative pitch-class weights matter) of the mono sum with periodic Hann frames of about 0.34 s (16384 points at 48 kHz, a power of two
  scaled with the rate) on a half-frame hop, zero-padded at the end.
* Each bin from 55 to 4200 Hz adds its magnitude to the pitch class of the nearest equal-tempered note
  (A4 = 440 Hz). Each frame's chroma is scaled to a maximum of 1 (silent frames are skipped), so a loud
  passage does not outvote a quiet one, and the frames are summed.
* The summed chroma is correlated (Pearson) with the 24 rotations of the Krumhansl-Kessler major and minor
  profiles; the best is the key, its correlation the confidence, the second best the runner-up.
  Silence reads C major with confidence 0 and runner-up C minor with confidence 0.
* Roots are spelled with sharps: C C# D D# E F F# G G# A A# B.

librosa has no key estimator; its ``chroma_stft`` spreads each bin over neighbouring pitch classes with a
Gaussian, while this assigns each bin to its nearest pitch class.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pytest_overdub.measure._input import as_signal

PITCH_CLASSES = ("C", "C#", "D", "D#", "E", "F", "F#", "G", "G#", "A", "A#", "B")
MAJOR_PROFILE = (6.35, 2.23, 3.48, 2.33, 4.38, 4.09, 2.52, 5.19, 2.39, 3.66, 2.29, 2.88)
MINOR_PROFILE = (6.33, 2.68, 3.52, 5.38, 2.60, 3.53, 2.54, 4.75, 3.98, 2.69, 3.34, 3.17)
CHROMA_LO_HZ = 55.0
CHROMA_HI_HZ = 4200.0
_FRAMES_PER_BATCH = 64


@dataclass(frozen=True)
class KeyEstimate:
    """A key reading: root (sharps), scale ("major"/"minor"), confidence (Pearson r), and the runner-up."""

    root: str
    scale: str
    confidence: float
    runner_up_root: str
    runner_up_scale: str
    runner_up_confidence: float

    @property
    def root_pc(self) -> int:
        """The root's pitch class, 0 = C."""
        return PITCH_CLASSES.index(self.root)

    @property
    def name(self) -> str:
        """E.g. ``"A minor"``."""
        return f"{self.root} {self.scale}"

    @property
    def runner_up(self) -> str:
        """E.g. ``"C major"``."""
        return f"{self.runner_up_root} {self.runner_up_scale}"


def _fft_size(sr: int) -> int:
    return int(2 ** round(np.log2(16384 * sr / 48000)))


def mono_f32(x: np.ndarray) -> np.ndarray:
    """The float32 mono sum (channels added) of a validated ``(channels, n)`` signal, shared by key and onsets."""
    return (x[0] + x[1] if x.shape[0] == 2 else x.sum(axis=0)).astype(np.float32)


def chroma(x: np.ndarray, *, sr: int) -> np.ndarray:
    """Summed, frame-normalised 12-bin chroma (index 0 = C) of a validated signal's mono sum."""
    return chroma_of_mono(mono_f32(x), sr=sr)


def chroma_of_mono(mono: np.ndarray, *, sr: int) -> np.ndarray:
    """:func:`chroma` of an already summed float32 mono signal (see :func:`mono_f32`)."""
    from scipy.fft import rfft

    from pytest_overdub.measure.spectrum import frames

    n_fft = _fft_size(sr)
    freqs = np.arange(n_fft // 2 + 1) * (sr / n_fft)
    band = np.flatnonzero((freqs >= CHROMA_LO_HZ) & (freqs <= CHROMA_HI_HZ))
    pcs = (np.round(12.0 * np.log2(freqs[band] / 440.0)).astype(np.int64) + 9) % 12
    onehot = np.zeros((band.size, 12), dtype=np.float32)
    onehot[np.arange(band.size), pcs] = 1.0
    lo, hi = int(band[0]), int(band[-1]) + 1  # the band is one contiguous run of bins: slice, no gather
    window = np.hanning(n_fft + 1)[:-1].astype(np.float32)
    view = frames(mono, n_fft=n_fft, hop=n_fft // 2)
    total = np.zeros(12)
    for start in range(0, view.shape[0], _FRAMES_PER_BATCH):
        mag = np.abs(rfft(view[start : start + _FRAMES_PER_BATCH] * window, axis=-1)[:, lo:hi])
        per_frame = (mag @ onehot).astype(np.float64)
        peaks = per_frame.max(axis=1, keepdims=True)
        total += (per_frame[peaks[:, 0] > 0] / peaks[peaks[:, 0] > 0]).sum(axis=0)
    return total


def _profile_matrix() -> np.ndarray:
    """(24, 12): rows 0-11 major keys on C..B, rows 12-23 minor keys, each z-scored."""
    rows = [np.roll(MAJOR_PROFILE, r) for r in range(12)] + [np.roll(MINOR_PROFILE, r) for r in range(12)]
    m = np.array(rows, dtype=np.float64)
    m -= m.mean(axis=1, keepdims=True)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def key_from_chroma(c: np.ndarray) -> KeyEstimate:
    """Krumhansl-Schmuckler: the best and second-best of the 24 profile rotations for a 12-bin chroma."""
    centred = np.asarray(c, dtype=np.float64) - np.mean(c)
    norm = float(np.linalg.norm(centred))
    if norm == 0.0:
        return KeyEstimate("C", "major", 0.0, "C", "minor", 0.0)
    r = _profile_matrix() @ (centred / norm)
    first, second = np.argsort(-r, kind="stable")[:2]

    def spell(i: int) -> tuple[str, str]:
        return PITCH_CLASSES[i % 12], "major" if i < 12 else "minor"

    return KeyEstimate(*spell(first), float(r[first]), *spell(second), float(r[second]))


def detect_key(x: np.ndarray, *, sr: int) -> KeyEstimate:
    """The key heard in a signal (chroma of the mono sum, Krumhansl-Schmuckler)."""
    arr, rate = as_signal(x, sr)
    return key_from_chroma(chroma(arr, sr=rate))
