"""Key: spectral-peak chroma, Albrecht-Shanahan profiles, then the tonic heard in the bass.

Conventions (all rates; sizes in samples scale with the rate):

* STFT (float32: only relative weights matter) of the mono sum with periodic Hann frames of about 0.34 s
  (16384 points at 48 kHz, a power of two scaled with the rate) on a half-frame hop, zero-padded at the end.
* Only spectral peaks count (a bin louder than both neighbours): a tone is a peak, while broadband noise
  (hats, snares, reverb tails) spreads over every bin and adds little. Each peak's frequency is refined by
  fitting a parabola through the log magnitudes of its bin and the two neighbours (quadratic interpolation,
  J. O. Smith and X. Serra, "PARSHL", ICMC 1987), and its magnitude goes to the pitch class of the nearest
  equal-tempered note (A4 = 440 Hz).
* Profile step: peaks from 55 to 4200 Hz make one 12-bin chroma per frame, scaled to a maximum of 1 (silent
  frames are skipped, so a loud passage does not outvote a quiet one), summed over frames, and correlated
  (Pearson) with the 24 rotations of the Albrecht-Shanahan major and minor profiles (J. Albrecht and
  D. Shanahan, "The Use of Large Corpora to Train a New Type of Key-Finding Algorithm", Music Perception
  31(1), 2013). Fitted to a corpus, they weigh the third and the leading tone far more than the
  Krumhansl-Kessler probe-tone profiles, so a minor triad's minor third is not outvoted by the harmonics
  every tone adds at the major third (on generated i-iv-v-i progressions Krumhansl-Kessler reads 9 of 12
  minor keys as the parallel major).
* Tonic step: a key and its relative (A minor and C major) share their notes, and no profile can tell them
  apart on music that keeps to the shared scale (night-shift's Am-F-C-G7). The tonic is where the music
  rests, and the bass says where that is. Per frame, the peaks from 30 to 131 Hz (B0 to C3, the bass
  register) give a distribution over pitch classes; a frame has a bass when its bass peaks sum to within
  40 dB of the loudest frame's. The evidence for a tonic is its share of the bass over the whole excerpt plus
  its share over the opening: the frames that end within one second of the first frame with a bass (one
  second lies inside the first bar of 4/4 at any tempo under 240 bpm, and music starts on its tonic far
  more often than anywhere else). Of the best-correlated key and its relative, the one whose tonic has
  more evidence is the key; a tie (no bass at all) keeps the profile's choice.
* The reading: root, scale, confidence = the chosen key's correlation, runner-up = the best-correlated of
  the other 23 keys with its correlation (it can be higher than the confidence when the tonic step chose
  the relative). Silence reads C major with confidence 0 and runner-up C minor with confidence 0.
* Roots are spelled with sharps: C C# D D# E F F# G G# A A# B.
* A signal under 2 s (a bar of 4/4 at 120 bpm) is refused (:class:`~pytest_overdub.errors.TooShortError`):
  a key is heard over a few chords, not within one.

librosa has no key estimator; its ``chroma_stft`` spreads every bin (noise included) over neighbouring
pitch classes with a Gaussian, while this counts spectral peaks only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pytest_overdub.measure._input import as_signal
from pytest_overdub.measure.minimums import require

PITCH_CLASSES = ("C", "C#", "D", "D#", "E", "F", "F#", "G", "G#", "A", "A#", "B")
#: Albrecht and Shanahan (2013), tonic first.
MAJOR_PROFILE = (0.238, 0.006, 0.111, 0.006, 0.137, 0.094, 0.016, 0.214, 0.009, 0.080, 0.008, 0.081)
MINOR_PROFILE = (0.220, 0.006, 0.104, 0.123, 0.019, 0.103, 0.012, 0.214, 0.062, 0.022, 0.061, 0.052)
CHROMA_LO_HZ = 55.0
CHROMA_HI_HZ = 4200.0
BASS_LO_HZ = 30.0
BASS_HI_HZ = 131.0
#: A frame has a bass when its bass peaks sum to at least this far below the loudest frame's (dB).
BASS_PRESENT_DB = -40.0
OPENING_S = 1.0
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


@dataclass(frozen=True)
class PeakChroma:
    """Per-frame chroma of the spectral peaks: the profile band and the bass band, each ``(frames, 12)``."""

    full: np.ndarray
    bass: np.ndarray
    hop: int
    n_fft: int


def _fft_size(sr: int) -> int:
    return int(2 ** round(np.log2(16384 * sr / 48000)))


def mono_f32(x: np.ndarray) -> np.ndarray:
    """The float32 mono sum (channels added) of a validated ``(channels, n)`` signal, shared by key and onsets."""
    return (x[0] + x[1] if x.shape[0] == 2 else x.sum(axis=0)).astype(np.float32)


def _batch_peaks(mag: np.ndarray, k0: int, n_fft: int, sr: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(frame, frequency Hz, magnitude) of every peak in ``mag`` (frames x bins, bin 0 = FFT bin ``k0``)."""
    left, mid, right = mag[:, :-2], mag[:, 1:-1], mag[:, 2:]
    frame, k = np.nonzero((mid > left) & (mid >= right))
    a = np.log(np.maximum(left[frame, k].astype(np.float64), 1e-30))
    b = np.log(mid[frame, k].astype(np.float64))
    c = np.log(np.maximum(right[frame, k].astype(np.float64), 1e-30))
    offset = np.clip(0.5 * (a - c) / (a - 2.0 * b + c), -0.5, 0.5)  # a - 2b + c < 0 at a strict peak
    freq = (k0 + 1 + k + offset) * (sr / n_fft)
    return frame, freq, np.exp(b)


def _pc_rows(frame: np.ndarray, freq: np.ndarray, amp: np.ndarray, lo: float, hi: float, n: int) -> np.ndarray:
    sel = (freq >= lo) & (freq <= hi)
    pcs = (np.round(12.0 * np.log2(freq[sel] / 440.0)).astype(np.int64) + 9) % 12
    return np.bincount(frame[sel] * 12 + pcs, weights=amp[sel], minlength=n * 12).reshape(n, 12)


def peak_chroma(mono: np.ndarray, *, sr: int) -> PeakChroma:
    """Per-frame chroma of the spectral peaks of a float32 mono signal (see the module conventions)."""
    from scipy.fft import rfft

    from pytest_overdub.measure.spectrum import frames

    n_fft = _fft_size(sr)
    k0 = max(int(np.floor(BASS_LO_HZ * n_fft / sr)) - 1, 0)
    k1 = int(np.ceil(CHROMA_HI_HZ * n_fft / sr)) + 2  # one bin past the band either side: peaks need neighbours
    window = np.hanning(n_fft + 1)[:-1].astype(np.float32)
    view = frames(mono, n_fft=n_fft, hop=n_fft // 2)
    n = view.shape[0]
    full, bass = np.zeros((n, 12)), np.zeros((n, 12))
    for start in range(0, n, _FRAMES_PER_BATCH):
        mag = np.abs(rfft(view[start : start + _FRAMES_PER_BATCH] * window, axis=-1)[:, k0:k1])
        frame, freq, amp = _batch_peaks(mag, k0, n_fft, sr)
        rows = mag.shape[0]
        full[start : start + rows] = _pc_rows(frame, freq, amp, CHROMA_LO_HZ, CHROMA_HI_HZ, rows)
        bass[start : start + rows] = _pc_rows(frame, freq, amp, BASS_LO_HZ, BASS_HI_HZ, rows)
    return PeakChroma(full=full, bass=bass, hop=n_fft // 2, n_fft=n_fft)


def profile_chroma(pc: PeakChroma) -> np.ndarray:
    """The profile step's chroma: each sounding frame scaled to a maximum of 1, summed over frames."""
    peaks = pc.full.max(axis=1, keepdims=True)
    sounding = peaks[:, 0] > 0
    return (pc.full[sounding] / peaks[sounding]).sum(axis=0)


def tonic_evidence(pc: PeakChroma, *, sr: int) -> np.ndarray:
    """Per pitch class: its share of the bass over the whole excerpt plus its share over the opening."""
    totals = pc.bass.sum(axis=1)
    top = float(totals.max()) if totals.size else 0.0
    if top <= 0.0:
        return np.zeros(12)
    has_bass = np.flatnonzero(totals >= top * 10.0 ** (BASS_PRESENT_DB / 20.0))
    shares = pc.bass[has_bass] / totals[has_bass, np.newaxis]
    last = has_bass[0] + max((OPENING_S * sr - pc.n_fft) // pc.hop, 0)
    return shares.mean(axis=0) + shares[has_bass <= last].mean(axis=0)


def _profile_matrix() -> np.ndarray:
    """(24, 12): rows 0-11 major keys on C..B, rows 12-23 minor keys, each z-scored."""
    rows = [np.roll(MAJOR_PROFILE, r) for r in range(12)] + [np.roll(MINOR_PROFILE, r) for r in range(12)]
    m = np.array(rows, dtype=np.float64)
    m -= m.mean(axis=1, keepdims=True)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def relative_of(index: int) -> int:
    """The relative key's row: major row r (0-11) <-> minor row 12 + (r + 9) % 12."""
    return 12 + (index + 9) % 12 if index < 12 else (index + 3) % 12


def key_from_chroma(c: np.ndarray, tonic: np.ndarray | None = None) -> KeyEstimate:
    """The profile step on a 12-bin chroma, then the tonic step on ``tonic`` (12 evidence values, or None)."""
    centred = np.asarray(c, dtype=np.float64) - np.mean(c)
    norm = float(np.linalg.norm(centred))
    if norm == 0.0:
        return KeyEstimate("C", "major", 0.0, "C", "minor", 0.0)
    r = _profile_matrix() @ (centred / norm)
    order = np.argsort(-r, kind="stable")
    chosen = int(order[0])
    if tonic is not None and tonic[relative_of(chosen) % 12] > tonic[chosen % 12]:
        chosen = relative_of(chosen)
    other = int(next(i for i in order if i != chosen))

    def spell(i: int) -> tuple[str, str]:
        return PITCH_CLASSES[i % 12], "major" if i < 12 else "minor"

    return KeyEstimate(*spell(chosen), float(r[chosen]), *spell(other), float(r[other]))


def key_of_mono(mono: np.ndarray, *, sr: int) -> KeyEstimate:
    """The key of an already summed float32 mono signal (see :func:`mono_f32`)."""
    require("key", mono.shape[0], sr)
    pc = peak_chroma(mono, sr=sr)
    return key_from_chroma(profile_chroma(pc), tonic_evidence(pc, sr=sr))


def detect_key(x: np.ndarray, *, sr: int) -> KeyEstimate:
    """The key heard in a signal (peak chroma of the mono sum, profile step, tonic step)."""
    arr, rate = as_signal(x, sr)
    return key_of_mono(mono_f32(arr), sr=rate)
