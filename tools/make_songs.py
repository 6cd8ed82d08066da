"""Write the bench's three starting songs to ``songs/`` (docs/tasks.md).

Run ``python3 tools/make_songs.py`` only to change a song on purpose: task ids are forever, and the
songs' notes and ids (ids seed devices) are part of every task's sound. The script is deterministic:
the only "human" timing comes from ``numpy.random.default_rng(LOOSE_SEED)``.

Conventions:

* Beats are 0-based, bars are 4 beats (4/4); a note's ``t`` is beats from its clip's start.
* Times are rounded to 1e-4 beat and velocities to 1e-2, so the JSON stays readable.
* Swing (loose-groove): the bench's figure is ``swing = mean lateness of odd 1/16 steps / 0.25 beat``.
  The musician's "swing percent" is where the odd 1/16 sits inside its 1/8 pair:
  ``percent = (0.25 + lateness) / 0.5``; a lateness of 0.055 beat is swing 0.22, i.e. 61 %.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from pytest_overdub.song.model import (  # noqa: E402
    Clip, Insert, Instrument, Key, Master, Note, Section, Song, Track, dump_song,
)

SONGS_DIR = ROOT / "songs"
META = {"made_by": "tools/make_songs.py"}

# --- night-shift ----------------------------------------------------------------------------------
#: One chord per bar, Am F C G7, once per 4-bar section.
NIGHT_CHORDS = ("Am", "F", "C", "G7")
#: Keys voicings (MIDI), mid register, smooth voice leading: A3 C4 E4 | A3 C4 F4 | C4 E4 G4 | B3 D4 F4 G4.
NIGHT_VOICINGS = {"Am": (57, 60, 64), "F": (57, 60, 65), "C": (60, 64, 67), "G7": (59, 62, 65, 67)}
#: Bass per chord: (root, fifth, octave) in A1..C3 (MIDI 29..48).
NIGHT_BASS = {"Am": (33, 40, 45), "F": (29, 36, 41), "C": (36, 43, 48), "G7": (31, 38, 43)}
#: The hook, a 4-bar phrase in A minor (pitch, beat in the phrase, beats, velocity). Beats 0 and 2 of
#: every bar land on a chord tone: E A | F C | E G | D G. Bars 1-2 answer bar 0 with the same falling
#: figure a step up, then back; bar 3 walks down to G under G7 and hands back to the E on the Am.
NIGHT_HOOK = (
    (76, 0.0, 1.0, 0.85), (74, 1.0, 0.5, 0.7), (72, 1.5, 0.5, 0.72), (69, 2.0, 1.5, 0.8),
    (72, 3.5, 0.5, 0.68),
    (77, 4.0, 1.0, 0.88), (76, 5.0, 0.5, 0.72), (74, 5.5, 0.5, 0.72), (72, 6.0, 2.0, 0.8),
    (76, 8.0, 1.0, 0.85), (74, 9.0, 0.5, 0.7), (72, 9.5, 0.5, 0.72), (67, 10.0, 1.0, 0.78),
    (72, 11.0, 0.5, 0.7), (74, 11.5, 0.5, 0.72),
    (74, 12.0, 1.0, 0.84), (72, 13.0, 0.5, 0.7), (71, 13.5, 0.5, 0.72), (67, 14.0, 2.0, 0.8),
)


def _notes(prefix: str, rows, *, start: int = 0) -> tuple[Note, ...]:
    """Notes from ``(p, t, d, v)`` rows, ids ``{prefix}_000`` upwards."""
    return tuple(
        Note(p=int(p), t=round(float(t), 4), d=round(float(d), 4), v=round(float(v), 2),
             id=f"{prefix}_{start + i:03d}")
        for i, (p, t, d, v) in enumerate(rows)
    )


def _clip(cid: str, name: str, start: float, length: float, notes: tuple[Note, ...]) -> Clip:
    return Clip(id=cid, name=name, start=start, length=length, notes=notes)


def _kick_rows(bars: int):
    """Kick on beats 1 and 3 of every bar, a pickup on the 'and' of 4 closing each 2-bar phrase."""
    rows = []
    for bar in range(bars):
        b = 4.0 * bar
        rows += [(36, b, 0.5, 0.95), (36, b + 2.0, 0.5, 0.86)]
        if bar % 2 == 1:
            rows.append((36, b + 3.5, 0.25, 0.62))
    return rows


def _kit_rows(bars: int):
    """Snare on 2 and 4, closed hats on every eighth; an open hat on the last eighth of bars 2 and 4."""
    hat_v = (0.72, 0.46, 0.6, 0.48, 0.66, 0.46, 0.6, 0.5)
    rows = []
    for bar in range(bars):
        b = 4.0 * bar
        for k in range(8):
            open_hat = k == 7 and bar % 2 == 1
            rows.append((46 if open_hat else 42, b + 0.5 * k, 0.5 if open_hat else 0.25,
                         0.58 if open_hat else hat_v[k]))
        rows += [(38, b + 1.0, 0.5, 0.88), (38, b + 3.0, 0.5, 0.9)]
    return sorted(rows, key=lambda r: (r[1], r[0]))


def _bass_rows():
    """Per bar: root (1 beat), root push on 1.5, root on 3, fifth on 4, octave on the 'and' of 4."""
    rows = []
    for bar, chord in enumerate(NIGHT_CHORDS):
        root, fifth, octave = NIGHT_BASS[chord]
        b = 4.0 * bar
        rows += [(root, b, 1.0, 0.9), (root, b + 1.5, 0.5, 0.68), (root, b + 2.0, 1.0, 0.84),
                 (fifth, b + 3.0, 0.5, 0.74), (octave, b + 3.5, 0.5, 0.66)]
    return rows


def _keys_rows():
    """Each chord struck on the downbeat and held for nearly the whole bar; the top voice a bit louder."""
    rows = []
    for bar, chord in enumerate(NIGHT_CHORDS):
        voicing = NIGHT_VOICINGS[chord]
        for i, p in enumerate(voicing):
            rows.append((p, 4.0 * bar, 3.9, 0.6 if i < len(voicing) - 1 else 0.66))
    return rows


def _two_section_clips(stem: str, name: str, rows) -> tuple[Clip, ...]:
    """The same 16-beat part as a verse clip (0-16) and a chorus clip (16-32)."""
    return (
        _clip(f"c_{stem}_verse", f"{name} verse", 0.0, 16.0, _notes(f"n_{stem}", rows)),
        _clip(f"c_{stem}_chorus", f"{name} chorus", 16.0, 16.0,
              _notes(f"n_{stem}", rows, start=len(rows))),
    )


def night_shift() -> Song:
    """92 bpm, A minor, Verse 0-16 and Chorus 16-32 playing the same Am F C G7 and the same hook."""
    # A long, driven kick and a driven kit: more body per transient, so the starting mix is not so
    # peaky that mastering it to -11 LUFS must crush the crest factor by more than 6 dB.
    kick = Instrument(device="core.drums", params={"drive": 0.7, "decay": 2.0})
    kit = Instrument(device="core.drums", params={"drive": 0.6})
    tracks = (
        Track(id="t_kick", name="Kick", color="#e0603a", instrument=kick, gain=2.0,
              clips=(_clip("c_kick", "Kick", 0.0, 32.0, _notes("n_kick", _kick_rows(8))),)),
        Track(id="t_kit", name="Kit", color="#e0a03a", instrument=kit,
              clips=(_clip("c_kit", "Kit", 0.0, 32.0, _notes("n_kit", _kit_rows(8))),)),
        Track(id="t_bass", name="Bass", color="#3a8ee0", instrument=Instrument(device="core.bass"),
              gain=-1.5, clips=_two_section_clips("bass", "Bass", _bass_rows())),
        Track(id="t_keys", name="Keys", color="#8e5ae0", instrument=Instrument(device="core.keys"),
              gain=-3.0, pan=-0.15, inserts=(Insert(id="fx_keys_verb", device="core.verb"),),
              clips=_two_section_clips("keys", "Keys", _keys_rows())),
        Track(id="t_hook", name="Hook", color="#3ac08e", instrument=Instrument(device="core.pluck"),
              gain=3.0, pan=0.15, inserts=(Insert(id="fx_hook_delay", device="core.delay"),),
              clips=_two_section_clips("hook", "Hook", NIGHT_HOOK)),
    )
    sections = (Section(id="s_verse", name="Verse", start=0.0, length=16.0),
                Section(id="s_chorus", name="Chorus", start=16.0, length=16.0))
    # The kick sits 2 dB up so the low end starts as a real bass-versus-kick fight, and the master
    # sits at -4 dB so the starting mix leaves headroom (about -19 LUFS) instead of riding the clip.
    return Song(format="overdub/0", id="night-shift", title="Night Shift", tempo=92.0, key=Key(root="A", scale="minor"),
                tracks=tracks, sections=sections, master=Master(gain=-4.0), meta=META)


# --- lab ------------------------------------------------------------------------------------------
#: Room: low triads C F G C (C2 E2 G2 | C2 F2 A2 | B1 D2 G2 | C2 E2 G2), one per bar.
LAB_ROOM = ((36, 40, 43), (36, 41, 45), (35, 38, 43), (36, 40, 43))
#: Bell: one sustained chord tone per bar: C5 over C, A4 over F, B4 over G, C5 over C.
LAB_BELL = (72, 69, 71, 72)


def lab() -> Song:
    """100 bpm, C major, 4 bars, no sections: claps on 2 and 4, a sustained bell line, low chords."""
    claps = [(39, 4.0 * bar + beat, 0.25, 0.85) for bar in range(4) for beat in (1.0, 3.0)]
    bell = [(p, 4.0 * bar, 3.5, 0.7) for bar, p in enumerate(LAB_BELL)]
    room = [(p, 4.0 * bar, 3.75, 0.7) for bar, chord in enumerate(LAB_ROOM) for p in chord]
    tracks = (
        Track(id="t_snaps", name="Snaps", color="#e0603a", instrument=Instrument(device="core.drums"),
              gain=-3.0, clips=(_clip("c_snaps", "Snaps", 0.0, 16.0, _notes("n_snaps", claps)),)),
        Track(id="t_bell", name="Bell", color="#e0c03a", instrument=Instrument(device="core.pad"),
              gain=-4.0, clips=(_clip("c_bell", "Bell", 0.0, 16.0, _notes("n_bell", bell)),)),
        Track(id="t_room", name="Room", color="#5a7ae0", instrument=Instrument(device="core.poly"),
              gain=-6.0, clips=(_clip("c_room", "Room", 0.0, 16.0, _notes("n_room", room)),)),
    )
    return Song(format="overdub/0", id="lab", title="Lab", tempo=100.0, key=Key(root="C", scale="major"), tracks=tracks,
                meta=META)


# --- loose-groove ---------------------------------------------------------------------------------
LOOSE_SEED = 20240596
#: Lateness of every odd 1/16 (beats): swing 0.055 / 0.25 = 0.22, i.e. 61 % swing.
LOOSE_SWING_BEATS = 0.055
#: Human timing error: Gaussian, sigma 9 ms, clipped to +-20 ms; the snare lays back 5 ms on average.
LOOSE_SIGMA_MS = 9.0
LOOSE_CLIP_MS = 20.0
LOOSE_SNARE_DRAG_MS = 5.0
LOOSE_TEMPO = 96.0
#: Extra kicks (bar, 1/16 step): the 'and' of 3 in bars 1 and 3, a swung 'a' of 2 in bar 2, the
#: 'and' of 4 in bar 4 pushing into the loop.
LOOSE_EXTRA_KICKS = ((0, 10), (1, 7), (2, 10), (3, 14))


def _loose_grid():
    """(pitch, step, base velocity) for 4 bars: 64 hats, 8 + 4 kicks, 8 snares (84 hits)."""
    hits = []
    for bar in range(4):
        for s in range(16):
            accent = 0.7 if s % 4 == 0 else (0.58 if s % 2 == 0 else 0.38)
            hits.append((42, 16 * bar + s, accent))
        hits += [(36, 16 * bar, 0.92), (36, 16 * bar + 8, 0.85)]
        hits += [(38, 16 * bar + 4, 0.88), (38, 16 * bar + 12, 0.9)]
    hits += [(36, 16 * bar + s, 0.66) for bar, s in LOOSE_EXTRA_KICKS]
    return sorted(hits, key=lambda h: (h[1], h[0]))


def _loose_drum_rows():
    """The grid, swung and played by a person: seeded timing error and velocity spread."""
    import numpy as np

    rng = np.random.default_rng(LOOSE_SEED)
    grid = _loose_grid()
    ms_per_beat = 60000.0 / LOOSE_TEMPO
    err_ms = np.clip(rng.normal(0.0, LOOSE_SIGMA_MS, len(grid)), -LOOSE_CLIP_MS, LOOSE_CLIP_MS)
    vel_jit = np.clip(rng.normal(0.0, 0.05, len(grid)), -0.1, 0.1)
    rows = []
    for (p, step, v), e, dv in zip(grid, err_ms, vel_jit):
        drag = LOOSE_SNARE_DRAG_MS if p == 38 else 0.0
        t = 0.25 * step + (LOOSE_SWING_BEATS if step % 2 else 0.0) + (e + drag) / ms_per_beat
        d = 0.2 if p == 42 else 0.5
        rows.append((p, max(round(t, 4), 0.0), d, min(max(v + dv, 0.2), 1.0)))
    return sorted(rows, key=lambda r: (r[1], r[0]))


#: E minor bassline, chords Em G C D (one per bar): (root, fifth below, approach to the next root).
LOOSE_BASS = ((40, 35, 42), (43, 38, 35), (36, 31, 40), (38, 33, 42))


def _loose_bass_rows():
    """Per bar, on the swung grid (odd 1/16 late by the groove's swing), no random error."""
    sw = LOOSE_SWING_BEATS
    rows = []
    for bar, (root, fifth, approach) in enumerate(LOOSE_BASS):
        b = 4.0 * bar
        rows += [(root, b, 0.7, 0.9), (root, b + 0.75 + sw, 0.2, 0.55), (fifth, b + 1.5, 0.5, 0.72),
                 (root, b + 2.5, 0.5, 0.82), (root, b + 3.25 + sw, 0.2, 0.5),
                 (approach, b + 3.5, 0.45, 0.7)]
    return rows


def loose_groove() -> Song:
    """96 bpm, E minor, 4 bars: a swung, hand-played 16th groove and a bassline over Em G C D."""
    tracks = (
        Track(id="t_drums", name="Drums", color="#e0603a", instrument=Instrument(device="core.drums"),
              clips=(_clip("c_drums", "Drums", 0.0, 16.0, _notes("n_drums", _loose_drum_rows())),)),
        Track(id="t_bass", name="Bass", color="#3a8ee0", instrument=Instrument(device="core.bass"),
              gain=-2.0, clips=(_clip("c_bass", "Bass", 0.0, 16.0,
                                      _notes("n_bass", _loose_bass_rows())),)),
    )
    return Song(format="overdub/0", id="loose-groove", title="Loose Groove", tempo=LOOSE_TEMPO,
                key=Key(root="E", scale="minor"), tracks=tracks, meta=META)


SONGS = {"night-shift": night_shift, "lab": lab, "loose-groove": loose_groove}


def build_songs() -> dict[str, Song]:
    """Every starting song by file name (without ``.json``)."""
    return {name: make() for name, make in SONGS.items()}


def main() -> None:
    SONGS_DIR.mkdir(exist_ok=True)
    for name, song in build_songs().items():
        dump_song(song, SONGS_DIR / f"{name}.json")
        print(f"wrote songs/{name}.json")


if __name__ == "__main__":
    main()
