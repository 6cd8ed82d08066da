"""Placing notes on the timeline and selecting them by track, span and pitch."""

import numpy as np
import pytest

from pytest_overdub.errors import TaskError
from pytest_overdub.notes.selection import PlacedNote, bar_range, mono_voice, placed_notes, resolve_tracks, select
from pytest_overdub.render import render
from pytest_overdub.render.heard import plays
from pytest_overdub.song.model import Clip, Instrument, Note, Song, Track


def _start_song() -> Song:
    bass = Track(id="t_bass", name="Bass", clips=(
        Clip(id="c_b1", start=0, length=4, notes=(
            Note(p=45, t=0, d=1, id="n1"),
            Note(p=41, t=3.5, d=2, id="n2"),   # cut by the clip end: heard 0.5 beats
            Note(p=40, t=4, d=1, id="n3"),     # t == length: never heard
        )),
        Clip(id="c_b2", start=4, length=4, mute=True, notes=(Note(p=48, t=0, d=1, id="n4"),)),
    ))
    keys = Track(id="t_keys", name="Keys", clips=(
        Clip(id="c_k1", start=8, length=8, notes=(
            Note(p=64, t=0, d=4, id="k1"), Note(p=57, t=0, d=4, id="k2"), Note(p=60, t=0, d=4, id="k3"),
        )),
    ))
    hook = Track(id="t_hook", name="Hook", mute=True, clips=(
        Clip(id="c_h2", start=8, length=4, notes=(Note(p=72, t=0, d=1, v=0.5, id="h2"),)),
        Clip(id="c_h1", start=0, length=4, notes=(Note(p=76, t=1, d=1, id="h1"),)),
    ))
    return Song(format="overdub/0", id="s", tempo=120, tracks=(bass, keys, hook))


START = _start_song()


def _with_tracks(*tracks: Track) -> Song:
    return START.model_copy(update={"tracks": tracks})


def _ids(tracks):
    return [t.id for t in tracks]


def test_placed_notes_cut_by_clip_and_unheard_and_muted_clip():
    got = placed_notes(START, START.track("Bass"))
    # 45 at 0 for 1 beat; 41 at 3.5 cut to 0.5 (length 4 - t 3.5); 40 at t=4 is past the clip's end;
    # the muted clip's 48 is not placed.
    assert got == [PlacedNote("t_bass", "c_b1", "n1", 45, 0.0, 1.0, 0.8),
                   PlacedNote("t_bass", "c_b1", "n2", 41, 3.5, 0.5, 0.8)]
    assert got[1].end_beats == 4.0


def test_placed_notes_are_absolute_and_sorted_by_start_then_pitch():
    keys = placed_notes(START, START.track("Keys"))
    assert [(n.p, n.start_beats) for n in keys] == [(57, 8.0), (60, 8.0), (64, 8.0)]
    # the clip listed first starts later; a muted TRACK still places its notes
    hook = placed_notes(START, START.track("Hook"))
    assert [(n.p, n.start_beats, n.v, n.clip_id) for n in hook] == [(76, 1.0, 0.8, "c_h1"),
                                                                     (72, 8.0, 0.5, "c_h2")]


def test_resolve_all_by_name_case_insensitive_and_by_id():
    assert _ids(resolve_tracks(START, None, start_song=START)) == ["t_bass", "t_keys", "t_hook"]
    assert _ids(resolve_tracks(START, ["bASS", "t_hook"], start_song=START)) == ["t_bass", "t_hook"]
    assert _ids(resolve_tracks(START, "Keys", start_song=START)) == ["t_keys"]
    # the same track named twice is listed once
    assert _ids(resolve_tracks(START, ["Bass", "t_bass"], start_song=START)) == ["t_bass"]


def test_renamed_track_is_found_by_starting_id_even_if_its_old_name_is_reused():
    bass, keys, hook = START.tracks
    impostor = Track(id="t_new", name="Bass")
    song = _with_tracks(bass.model_copy(update={"name": "Low End"}), keys, hook, impostor)
    assert _ids(resolve_tracks(song, ["Bass"], start_song=START)) == ["t_bass"]
    assert _ids(resolve_tracks(song, ["low end"], start_song=START)) == ["t_bass"]


def test_new_and_removed_and_added_by_name():
    bass, keys, hook = START.tracks
    pad = Track(id="t_pad", name="Pad")
    song = _with_tracks(bass, keys, pad)            # Hook removed, Pad added
    assert _ids(resolve_tracks(song, ["new"], start_song=START)) == ["t_pad"]
    assert _ids(resolve_tracks(song, ["Hook"], start_song=START)) == []
    assert _ids(resolve_tracks(song, ["Pad", "Bass"], start_song=START)) == ["t_pad", "t_bass"]
    assert _ids(resolve_tracks(START, ["new"], start_song=START)) == []


def test_unknown_track_names_the_ref_and_the_tracks():
    with pytest.raises(TaskError, match=r"'Nobody'.*'Bass' \(t_bass\).*'Hook'"):
        resolve_tracks(START, ["Nobody"], start_song=START)
    with pytest.raises(TaskError, match="track reference 3"):
        resolve_tracks(START, [3], start_song=START)


def test_select_span_boundaries_and_pitches():
    # Bass + Keys notes start at 0 (45), 3.5 (41), 8 (57, 60, 64)
    got = select(START, start_song=START, tracks=["Bass", "Keys"], from_beats=3.5, to_beats=8)
    assert [n.p for n in got] == [41]              # from is inclusive, to is exclusive
    got = select(START, start_song=START, tracks=["Bass", "Keys"], from_beats=3.5, to_beats=8.001)
    assert [n.p for n in got] == [41, 57, 60, 64]
    got = select(START, start_song=START, pitches=["A2", 60])   # A2 = MIDI 45
    assert [(n.track_id, n.p) for n in got] == [("t_bass", 45), ("t_keys", 60)]
    # every track, no bounds: 2 bass + 3 keys + 2 hook, merged in time order
    assert [n.start_beats for n in select(START, start_song=START)] == [0, 1, 3.5, 8, 8, 8, 8]
    # with the mix's rule the muted Hook is not read (placed_notes still places what it holds)
    assert [n.start_beats for n in select(START, start_song=START, track_plays=plays)] == [0, 3.5, 8, 8, 8]
    assert [n.start_beats for n in placed_notes(START, START.track("Hook"))] == [1, 8]


def test_select_leaves_out_notes_too_soft_to_be_played():
    """A silent root under an audible fifth is no root: velocity 0 and 0.05 are not read, 0.1 is."""
    soft = Track(id="t_new", name="Soft", clips=(Clip(id="c_s", start=0, length=4, notes=(
        Note(p=45, t=0, d=0.1, v=0.0, id="s0"), Note(p=45, t=1, d=0.1, v=0.05, id="s1"),
        Note(p=45, t=2, d=0.1, v=0.1, id="s2"), Note(p=52, t=0, d=1, v=0.85, id="s3"))),))
    song = _with_tracks(*START.tracks, soft)
    assert [(n.start_beats, n.p) for n in select(song, start_song=START, tracks=["new"])] == [(0, 52), (2, 45)]


def test_select_reads_only_what_the_mix_plays():
    """A helper track muted, soloed away or faded 30 dB down, or a clip at -96 dB, lends a heard line no
    notes: a one-note line beside a muted track of other pitches passed write-counter-melody (0.905)."""
    line = Clip(id="c_l", start=0, length=4, notes=(Note(p=57, t=0, d=1, id="l1"),))
    quiet = Clip(id="c_q", start=0, length=4, gain=-96, notes=(Note(p=60, t=1, d=1, id="q1"),))
    soft = Clip(id="c_s", start=0, length=4, gain=-12, notes=(Note(p=62, t=2, d=1, v=0.5, id="s1"),))
    heard = Track(id="t_line", name="Line", clips=(line, quiet, soft))
    muted = Track(id="t_m", name="Muted", mute=True, clips=(Clip(id="c_m", start=0, length=4, notes=(
        Note(p=64, t=3, d=1, id="m1"),)),))
    faded = Track(id="t_f", name="Faded", gain=-30, clips=(Clip(id="c_f", start=0, length=4, notes=(
        Note(p=65, t=3, d=1, id="f1"),)),))
    song = _with_tracks(*START.tracks, heard, muted, faded)
    # 0.5 at -12 dB is 0.126: played; the -96 dB clip, the muted and the faded track are not
    assert [n.p for n in select(song, start_song=START, tracks=["new"], track_plays=plays)] == [57, 62]
    soloed = _with_tracks(*START.tracks, heard.model_copy(update={"solo": True}), muted, faded)
    assert select(soloed, start_song=START, tracks=["Bass"], track_plays=plays) == []   # soloed away

def test_select_new_tracks_when_none_were_added_is_empty():
    assert select(START, start_song=START, tracks=["new"], from_beats=0, to_beats=32) == []


def test_bar_range():
    assert bar_range((0, 4)) == range(0, 4)
    assert bar_range([4, 8]) == range(4, 8)
    assert bar_range(range(1, 2)) == range(1, 2)


@pytest.mark.parametrize("bad", [(4, 4), (3, 1), "0-4", (0,), (-1, 2), (0.0, 4), range(0, 8, 2)])
def test_bar_range_rejects(bad):
    with pytest.raises(TaskError, match="bars"):
        bar_range(bad)


def _bass(*clips: Clip, mode: str = "LEGATO") -> Track:
    return Track(id="t_mono", name="Mono", instrument=Instrument(device="core.bass", params={"mode": mode}),
                 clips=clips)


def test_mono_bass_reads_a_legato_chain_at_its_first_notes_velocity():
    """core.bass plays a legato chain at its first note's velocity: a root at velocity 0 starting the chain
    silences the chain (the render is silent), so none of its notes is played; in RETRIG mode each note
    takes its own velocity again."""
    chain = Clip(id="c_c", start=0, length=4, notes=(
        Note(p=45, t=0, d=1, v=0.0, id="r"), Note(p=52, t=1, d=1, v=0.85, id="f"),
        Note(p=45, t=2, d=1, v=0.85, id="r2")))
    legato = _with_tracks(*START.tracks, _bass(chain))
    assert select(legato, start_song=START, tracks=["new"]) == []
    retrig = _with_tracks(*START.tracks, _bass(chain, mode="RETRIG"))
    assert [(n.p, n.v) for n in select(retrig, start_song=START, tracks=["new"])] == [(52, 0.85), (45, 0.85)]
    # the reading is the renderer's: the legato line is silent, the retriggered one is not
    peak = lambda song: float(np.max(np.abs(render(song, tracks=["t_mono"]).mix)))
    assert peak(legato) == 0.0
    assert peak(retrig) > 0.1
    # after a gap the voice starts a new chain at the new note's velocity
    gap = Clip(id="c_g", start=0, length=4, notes=(Note(p=45, t=0, d=0.5, v=0.0, id="r"),
                                                   Note(p=52, t=1, d=1, v=0.85, id="f")))
    assert [n.p for n in select(_with_tracks(*START.tracks, _bass(gap)), start_song=START, tracks=["new"])] == [52]


def test_mono_bass_cuts_a_note_where_the_next_starts():
    """One voice: a root taken over by a fifth 0.05 beats later is heard 0.05 beats; of two notes starting
    together the later in the track's order takes the voice, the other is not heard; clips of another gain
    play on their own voice."""
    line = Clip(id="c_l", start=0, length=4, notes=(
        Note(p=45, t=0, d=1, v=0.8, id="r"), Note(p=52, t=0.05, d=0.95, v=0.8, id="f"),
        Note(p=40, t=2, d=1, v=0.8, id="a"), Note(p=47, t=2, d=1, v=0.8, id="b")))
    other = Clip(id="c_o", start=0, length=4, gain=-6, notes=(Note(p=57, t=0.5, d=1, v=0.8, id="o"),))
    got = select(_with_tracks(*START.tracks, _bass(line, other)), start_song=START, tracks=["new"])
    assert [(n.p, n.start_beats, round(n.dur_beats, 9)) for n in got] == [
        (45, 0.0, 0.05), (52, 0.05, 0.95), (57, 0.5, 1.0), (47, 2.0, 1.0)]


def test_a_same_pitch_legato_restrike_is_one_held_note_when_repeats_are_joined():
    """In LEGATO mode core.bass strikes nothing for a note that starts while the last still holds: at the
    same pitch the voice just runs on, so the line renders sample for sample as the one long note, and a
    transcription hears one note. A new pitch is a new note; after a gap, or in RETRIG mode, a new strike."""
    struck = Clip(id="c_s", start=0, length=8, notes=(
        Note(p=45, t=0, d=1, id="a"), Note(p=45, t=1, d=1, id="b"),   # touching: legato, same pitch
        Note(p=45, t=1.5, d=1.5, id="c"),                            # overlapping: legato, same pitch
        Note(p=52, t=3, d=1, id="d"),                                # legato, new pitch
        Note(p=52, t=4.5, d=1, id="e")))                             # after a gap: struck again
    held = Clip(id="c_s", start=0, length=8, notes=(
        Note(p=45, t=0, d=3, id="a"), Note(p=52, t=3, d=1, id="d"), Note(p=52, t=4.5, d=1, id="e")))
    song = _with_tracks(*START.tracks, _bass(struck))
    joined = mono_voice(song.tracks[-1], placed_notes(song, song.tracks[-1]), join_repeats=True)
    assert [(n.p, n.start_beats, n.dur_beats) for n in joined] == [(45, 0, 3), (52, 3, 1), (52, 4.5, 1)]
    assert len(mono_voice(song.tracks[-1], placed_notes(song, song.tracks[-1]))) == 5
    one = _with_tracks(*START.tracks, _bass(held))
    assert np.array_equal(render(song, tracks=["t_mono"]).mix, render(one, tracks=["t_mono"]).mix)
    retrig = _with_tracks(*START.tracks, _bass(struck, mode="RETRIG"))
    assert len(mono_voice(retrig.tracks[-1], placed_notes(retrig, retrig.tracks[-1]), join_repeats=True)) == 5
