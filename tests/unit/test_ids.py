"""Stable ids: every id the starting song didn't have is renamed by position; renaming is idempotent."""

from pathlib import Path

from pytest_overdub.song.ids import stable_ids
from pytest_overdub.song.model import dumps_song, load_song
from pytest_overdub.song.ops import apply_ops

FIXTURES = Path(__file__).resolve().parents[2] / "tests" / "fixtures"
TINY = load_song(FIXTURES / "tiny.json")

EDITS = [
    {"type": "track.add", "index": 0, "track": {"id": "t_random_9f3", "name": "Pad",
                                                 "inserts": [{"id": "fx_zz", "device": "core.verb"}],
                                                 "clips": [{"id": "c_q", "start": 0, "length": 4,
                                                            "notes": "C4@0 E4@1"}]}},
    {"type": "track.add", "track": {"name": "Lead"}},
    {"type": "insert.add", "track": "master", "index": 0, "insert": {"id": "fx_master_new", "device": "core.eq"}},
    {"type": "clip.add", "track": "Bass", "clip": {"id": "c_late", "start": 16, "length": 4,
                                                    "notes": [{"p": 40, "t": 0, "d": 1, "id": "weird"}]}},
    {"type": "section.add", "section": {"id": "s_rand", "name": "Outro", "start": 16, "length": 4}},
    {"type": "notes.add", "track": "Drums", "clip": "c_beat", "notes": "42@0.5:0.25"},
]


def _edited():
    return apply_ops(TINY, EDITS)


def _all_ids(song):
    ids = []
    for tr in song.tracks:
        ids.append(tr.id)
        ids += [i.id for i in tr.inserts]
        for c in tr.clips:
            ids.append(c.id)
            ids += [n.id for n in c.notes]
    ids += [i.id for i in song.master.inserts] + [s.id for s in song.sections]
    return ids


def test_new_ids_are_renamed_by_position():
    song = stable_ids(_edited(), start=TINY)
    assert [t.id for t in song.tracks] == ["t_nw0000", "t_drums", "t_bass", "t_nw0001"]
    assert song.tracks[0].inserts[0].id == "fx_nw0000"
    assert [i.id for i in song.master.inserts] == ["fx_nw0001", "fx_lim"]
    assert song.tracks[0].clips[0].id == "c_nw0000"
    assert [c.id for c in song.track("Bass").clips] == ["c_bass_a", "c_bass_b", "c_nw0001"]
    assert [s.id for s in song.sections] == ["s_verse", "s_chorus", "s_nw0000"]
    # notes in track, clip and note order: Pad's two notes, then Drums' new hat, then Bass's new note
    assert [n.id for n in song.tracks[0].clips[0].notes] == ["n_nw0000", "n_nw0001"]
    assert [n.id for n in song.track("Drums").clips[0].notes] == ["n_k0", "n_nw0002", "n_s0", "n_k1", "n_s1"]
    assert [n.id for n in song.track("Bass").clips[2].notes] == ["n_nw0003"]


def test_ids_the_start_had_are_kept():
    song = stable_ids(_edited(), start=TINY)
    assert set(_all_ids(TINY)) <= set(_all_ids(song))


def test_the_start_itself_is_unchanged():
    assert dumps_song(stable_ids(TINY, start=TINY)) == dumps_song(TINY)


def test_idempotent():
    once = stable_ids(_edited(), start=TINY)
    assert dumps_song(stable_ids(once, start=TINY)) == dumps_song(once)


def test_same_shape_different_random_ids_gives_the_same_song():
    a = apply_ops(TINY, [{"type": "track.add", "track": {"id": "t_8f2a", "name": "X",
                                                         "clips": [{"id": "c_1", "start": 0, "length": 4}]}}])
    b = apply_ops(TINY, [{"type": "track.add", "track": {"id": "t_c0ffee", "name": "X",
                                                         "clips": [{"id": "c_zz", "start": 0, "length": 4}]}}])
    assert dumps_song(a) != dumps_song(b)
    assert dumps_song(stable_ids(a, start=TINY)) == dumps_song(stable_ids(b, start=TINY))


def test_new_ids_never_collide_with_renamed_ids_the_start_already_had():
    start = stable_ids(apply_ops(TINY, [{"type": "track.add", "track": {"name": "One"}}]), start=TINY)
    assert start.track("One").id == "t_nw0000"
    later = apply_ops(start, [{"type": "track.add", "track": {"name": "Two"}}])
    song = stable_ids(later, start=start)
    assert [t.id for t in song.tracks] == ["t_drums", "t_bass", "t_nw0000", "t_nw0001"]
    assert song.track("Two").id == "t_nw0001"
    assert dumps_song(stable_ids(song, start=start)) == dumps_song(song)


def test_all_ids_unique_after_renaming():
    ids = _all_ids(stable_ids(_edited(), start=TINY))
    assert len(ids) == len(set(ids))
