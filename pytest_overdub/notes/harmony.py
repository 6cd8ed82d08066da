"""Harmony readings: ``clashes``, ``doubling``, ``roots``, ``chordTones``, ``chordsUnder`` (docs/checks.md).

Conventions:

* Beats are 0-based and absolute; bar ``i`` starts at ``i * beats_per_bar`` (its downbeat).
* A note *sounds* at beat ``b`` when ``start <= b < start + dur`` (heard duration; a note that ends exactly
  on ``b`` is silent there). Comparisons allow :data:`EPS` for floating-point noise only.
* "Starts at" a beat means the onset is within ``tol_beats`` of it, either side (the bench passes its one
  on-beat tolerance, 30 ms at the starting song's tempo: :func:`.selection.on_beat_tol_beats`).
* Strong beats are every ``strong_every`` beats from each bar's downbeat: beats 0 and 2 of a 4/4 bar
  (the musician's "1 and 3"), so every 2 beats of the song.
* A chord is 3 to 5 pitch classes with no cluster: no three of its sounding pitches in a row (sorted)
  each within 2 semitones of the next (B3 C4 D4 is a cluster; A3 C4 E4 G4 and F3 A3 C4 E4 are not).
* A clash is an interval whose size mod 12 is 1 or 11: a minor 2nd, major 7th or minor 9th (and their
  compounds), in either direction.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..errors import TaskError
from .selection import PlacedNote, bar_range
from .theory import parse_chord, scale_pcs

EPS = 1e-6
CLASH_INTERVALS = frozenset({1, 11})


def sounding_at(note: PlacedNote, beat: float) -> bool:
    """True when the note is heard at ``beat``: ``start <= beat < start + dur``."""
    return note.start_beats <= beat + EPS and note.end_beats > beat + EPS


def strong_beats_under(note: PlacedNote, *, beats_per_bar: float, strong_every: float) -> list[float]:
    """The strong beats (see the module docstring) at which ``note`` sounds."""
    per_bar = math.ceil(beats_per_bar / strong_every - EPS)
    first_bar = math.floor((note.start_beats + EPS) / beats_per_bar)
    last_bar = math.floor((note.end_beats - EPS) / beats_per_bar)
    beats = (bar * beats_per_bar + k * strong_every for bar in range(first_bar, last_bar + 1)
             for k in range(per_bar))
    return [b for b in beats if sounding_at(note, b)]


def clashes(notes: Sequence[PlacedNote], against: Sequence[PlacedNote], *, beats_per_bar: float = 4,
            strong_every: float = 2) -> float:
    """How many strong beats have a selected note and an ``against`` note sounding a clash together.

    Each strong beat counts once however many pairs clash there. Infinity with no selected notes (an
    empty part cannot be judged clash-free).
    """
    if beats_per_bar <= 0 or strong_every <= 0:
        raise TaskError(f"clashes: beats_per_bar {beats_per_bar} and strong_every {strong_every} "
                        f"must both be > 0")
    if not notes:
        return math.inf
    beats = sorted({b for n in notes
                    for b in strong_beats_under(n, beats_per_bar=beats_per_bar, strong_every=strong_every)})
    hits = 0
    for b in beats:
        ours = {n.p for n in notes if sounding_at(n, b)}
        theirs = {n.p for n in against if sounding_at(n, b)}
        if any(abs(a - c) % 12 in CLASH_INTERVALS for a in ours for c in theirs):
            hits += 1
    return float(hits)


def doubling(notes: Sequence[PlacedNote], against: Sequence[PlacedNote], *, tol_beats: float) -> float:
    """Share of selected notes that start within ``tol_beats`` of an ``against`` note of the same pitch class.

    0.0 with no selected notes.
    """
    if not notes:
        return 0.0
    doubled = sum(1 for n in notes
                  if any(abs(n.start_beats - a.start_beats) <= tol_beats + EPS and (n.p - a.p) % 12 == 0
                         for a in against))
    return doubled / len(notes)


#: The shortest root that counts, in beats before the on-beat tolerance is taken off: a sixteenth note.
ROOT_MIN_BEATS = 0.25


def roots(notes: Sequence[PlacedNote], *, chords: Sequence[str], bars: range | Sequence[int], tol_beats: float,
          beats_per_bar: float = 4) -> float:
    """Share of bars whose downbeat has an onset (within ``tol_beats``) on the pitch class of the bar's chord
    root, sounding at least a sixteenth note (:data:`ROOT_MIN_BEATS` less ``tol_beats``: a click of the root
    under another note is not a root the ear hears).

    ``chords`` are cycled over the bars: bar ``i`` plays ``chords[(i - first_bar) % len(chords)]``. The root
    of a slash chord is its named root (A for ``Am/C``), not its bass.
    """
    span = bar_range(bars)
    root_pcs = [c.root_pc for c in _chords(chords, "roots")]
    shortest = ROOT_MIN_BEATS - tol_beats - EPS
    hit = 0
    for i in span:
        downbeat = i * beats_per_bar
        want = root_pcs[(i - span.start) % len(root_pcs)]
        if any(abs(n.start_beats - downbeat) <= tol_beats + EPS and n.p % 12 == want and n.dur_beats >= shortest
               for n in notes):
            hit += 1
    return hit / len(span)


def chord_tones(notes: Sequence[PlacedNote], *, chords: Sequence[str], bars: range | Sequence[int],
                tol_beats: float, beats_per_bar: float = 4, strong_every: float = 2) -> float:
    """Share of the notes sounding on the strong beats of ``bars`` that are tones of the bar's chord.

    Strong beats as for :func:`clashes` (beats 1 and 3 of a 4/4 bar); a note sounds on one when it starts
    at most ``tol_beats`` after it and ends after it. Each (strong beat, sounding note) pair counts once;
    a strong beat with nothing sounding (a rest) does not count. ``chords`` cycle over the bars as in
    :func:`roots`; a chord's tones are its pitch classes (the slash bass included). 0.0 when nothing
    sounds on any strong beat.
    """
    span = bar_range(bars)
    parsed = _chords(chords, "chordTones")
    if beats_per_bar <= 0 or strong_every <= 0:
        raise TaskError(f"chordTones: beats_per_bar {beats_per_bar} and strong_every {strong_every} "
                        f"must both be > 0")
    per_bar = math.ceil(beats_per_bar / strong_every - EPS)
    pairs = good = 0
    for i in span:
        tones = parsed[(i - span.start) % len(parsed)].pcs
        for k in range(per_bar):
            beat = i * beats_per_bar + k * strong_every
            for n in notes:
                if _under(n, beat, tol_beats):
                    pairs += 1
                    good += n.p % 12 in tones
    return good / pairs if pairs else 0.0


def _chords(chords: Sequence[str], kind: str):
    if not chords:
        raise TaskError(f"{kind}: chords is empty; expected at least one chord symbol (Am, F, C, G7)")
    return [parse_chord(c) for c in chords]


def is_chord(pitches: Sequence[int], *, min_voices: int = 3, max_voices: int = 5) -> bool:
    """True when ``pitches`` (MIDI, sounding together) hold ``min_voices`` to ``max_voices`` pitch classes
    and no cluster (three sorted pitches in a row each within 2 semitones of the next)."""
    pcs = {p % 12 for p in pitches}
    if not min_voices <= len(pcs) <= max_voices:
        return False
    ps = sorted(set(pitches))
    return not any(ps[j + 1] - ps[j] <= 2 and ps[j + 2] - ps[j + 1] <= 2 for j in range(len(ps) - 2))


def chords_under(notes: Sequence[PlacedNote], melody: Sequence[PlacedNote], *, bars: range | Sequence[int],
                 key_root: str | int | None, key_scale: str | None, tol_beats: float, voices: int = 3,
                 max_voices: int = 5, hold: float = 2, beats_per_bar: float = 4) -> float:
    """Share of bars where the selection holds a chord under the melody's downbeat note.

    In bar ``i`` with downbeat ``D``, the chord is the selected notes that sound at ``D`` (start at most
    ``tol_beats`` after ``D``, end after ``D``) and last until at least ``D + hold`` (``tol_beats`` of
    slack). The bar counts when the chord is a chord (:func:`is_chord`: ``voices`` to ``max_voices``
    pitch classes, no cluster), all of its pitch classes are in the key (no key = chromatic), and it
    contains the pitch class of at least one melody note sounding at ``D`` (start at most ``tol_beats``
    after ``D``); a bar where the melody is silent needs only the chord.
    """
    span = bar_range(bars)
    if voices < 1 or max_voices < voices or hold < 0:
        raise TaskError(f"chordsUnder: voices {voices} must be >= 1 and <= maxVoices {max_voices}, "
                        f"and hold {hold} beats >= 0")
    in_key = scale_pcs(key_root, key_scale) if key_root is not None else frozenset(range(12))
    good = 0
    for i in span:
        d = i * beats_per_bar
        held = [n.p for n in notes if _under(n, d, tol_beats) and n.end_beats >= d + hold - tol_beats - EPS]
        chord = {p % 12 for p in held}
        tune = {n.p % 12 for n in melody if _under(n, d, tol_beats)}
        if (is_chord(held, min_voices=voices, max_voices=max_voices) and chord <= in_key
                and (not tune or chord & tune)):
            good += 1
    return good / len(span)


def _under(note: PlacedNote, downbeat: float, tol_beats: float) -> bool:
    """Sounding at the downbeat, allowing an onset up to ``tol_beats`` late."""
    return note.start_beats <= downbeat + tol_beats + EPS and note.end_beats > downbeat + EPS
