"""Beats, seconds, frames and the song's end (docs/rendering.md), checked against hand-worked numbers."""

import pytest

from pytest_overdub.errors import SongError
from pytest_overdub.song.model import song_from_data
from pytest_overdub.song.timing import (
    TAIL_S, Span, Timeline, beats_to_seconds, content_end_beats, section_span, section_spans,
    seconds_to_beats, seconds_to_frames, song_end_beats,
)


def _song(tempo=120, meter=(4, 4), clips=(), sections=()):
    return song_from_data({
        "format": "overdub/0", "id": "s", "tempo": tempo, "meter": list(meter),
        "tracks": [{"id": "t_a", "name": "A", "clips": [{"id": f"c_{i}", "start": s, "length": n}
                                           for i, (s, n) in enumerate(clips)]}],
        "sections": [{"id": f"s_{i}", "name": name, "start": s, "length": n}
                     for i, (name, s, n) in enumerate(sections)],
    })


def test_beats_and_seconds_at_92_bpm():
    # 92 bpm: one beat is 60/92 s; 32 beats = 20.869565... s
    assert beats_to_seconds(32, tempo_bpm=92) == pytest.approx(32 * 60 / 92, abs=1e-12)
    assert seconds_to_beats(60 / 92 * 7, tempo_bpm=92) == pytest.approx(7.0, abs=1e-12)


def test_frames_round_half_up():
    # 1.5 frames rounds to 2 and 2.5 frames to 3 (banker's rounding would give 2 for both)
    assert seconds_to_frames(1.5 / 48000, sr=48000) == 2
    assert seconds_to_frames(2.5 / 48000, sr=48000) == 3
    assert seconds_to_frames(0.5, sr=48000) == 24000


def test_song_end_rounds_up_to_a_bar():
    assert song_end_beats(_song(clips=[(0, 32)])) == 32.0           # exactly 8 bars
    assert song_end_beats(_song(clips=[(0, 32.25)])) == 36.0        # a quarter beat more -> bar 9
    assert song_end_beats(_song(clips=[(1, 2)], sections=[("A", 0, 13)])) == 16.0   # section ends later
    assert song_end_beats(_song(meter=(3, 4), clips=[(0, 7)])) == 9.0               # 3-beat bars
    assert song_end_beats(_song(meter=(6, 8), clips=[(0, 4)])) == 6.0               # 6/8: 3 beats a bar
    assert song_end_beats(_song()) == 0.0


def test_end_tolerates_float_noise():
    # a clip placed by adding triplets 37 times ends at 32.00000000000001; it must stay 8 bars, not 9
    start = 0.0
    for _ in range(37):
        start += 1 / 3
    song = _song(clips=[(start, 59 / 3)])
    assert content_end_beats(song) > 32.0
    assert song_end_beats(song) == 32.0


def test_timeline_frames_include_the_tail():
    tl = Timeline.of(_song(tempo=92, clips=[(0, 30)]), sr=48000)
    assert tl.end_beats == 32.0
    assert tl.end_s == pytest.approx(32 * 60 / 92)
    # (20.8695652... + 1.5) s * 48000 = 1073739.13 -> 1073739 frames
    assert tl.n_frames == 1073739
    assert TAIL_S == 1.5
    assert tl.beats_to_frames(1) == 31304  # 48000 * 60 / 92 = 31304.35
    assert tl.frames_to_beats(48000) == pytest.approx(92 / 60)


def test_sections_to_spans():
    song = _song(tempo=92, sections=[("Verse", 0, 16), ("Chorus", 16, 16)])
    assert section_span(song, "chorus") == Span(16, 32)
    assert section_span(song, "s_0").length_beats == 16
    assert list(section_spans(song).values()) == [Span(0, 16), Span(16, 32)]
    tl = Timeline.of(song, sr=48000)
    assert tl.span_frames(Span(16, 32)) == (500870, 1001739)   # 16 * 31304.35 rounded, 32 * ...


def test_unknown_section_names_the_choices():
    song = _song(sections=[("Verse", 0, 16)])
    with pytest.raises(SongError, match=r"'Bridge'.*'Verse'"):
        section_span(song, "Bridge")
