"""The ops language: one application and one refusal per op type, and the rules every op shares."""

from pathlib import Path

import pytest

from pytest_overdub.errors import OpError
from pytest_overdub.song.model import dumps_song, load_song
from pytest_overdub.song.ops import OPS, apply_ops, apply_transactions, known_op_types

FIXTURES = Path(__file__).resolve().parents[2] / "tests" / "fixtures"
TINY = load_song(FIXTURES / "tiny.json")
DEFINED = load_song(FIXTURES / "defined.json")


def _apply(*ops, song=TINY):
    return apply_ops(song, list(ops))


def _refused(*ops, song=TINY) -> str:
    before = dumps_song(song)
    with pytest.raises(OpError) as info:
        apply_ops(song, list(ops))
    assert dumps_song(song) == before
    return str(info.value)


def _notes(song, track, clip):
    tr = song.track(track)
    return [(n.p, n.t, n.d, n.v) for c in tr.clips if c.id == clip for n in c.notes]


def test_there_are_26_op_types():
    assert len(OPS) == 26
    assert known_op_types() == sorted(OPS)


# --- one application per op type ---------------------------------------------------------------

def test_project_set():
    song = _apply({"type": "project.set", "patch": {"title": "Renamed", "tempo": 100, "meter": [3, 4],
                                                    "key": {"root": "C", "scale": "major"},
                                                    "loop": {"on": True, "start": 0, "length": 8}}})
    assert (song.title, song.tempo, song.meter) == ("Renamed", 100.0, (3, 4))
    assert (song.key.root, song.key.scale) == ("C", "major")
    assert song.loop.on and song.loop.length == 8.0
    assert song.beats_per_bar == 3.0


def test_track_add_with_everything_and_ref():
    song = _apply(
        {"type": "track.add", "ref": "pad", "index": 1,
         "track": {"name": "Pad", "gain": -6, "pan": 0.25, "instrument": {"device": "core.pad",
                                                                          "params": {"attack": 1.5}},
                   "inserts": [{"device": "core.verb", "params": {"mix": 0.4}}],
                   "clips": [{"start": 0, "length": 4, "notes": "A3@0:4 C4@0:4 E4@0:4"}]}},
        {"type": "track.set", "track": "$pad", "patch": {"mute": True}})
    pad = song.tracks[1]
    assert [t.name for t in song.tracks] == ["Drums", "Pad", "Bass"]
    assert (pad.gain, pad.pan, pad.mute) == (-6.0, 0.25, True)
    assert pad.instrument.device == "core.pad" and pad.instrument.params == {"attack": 1.5}
    assert pad.inserts[0].device == "core.verb" and pad.inserts[0].params == {"mix": 0.4}
    assert [n.p for n in pad.clips[0].notes] == [57, 60, 64]
    assert pad.id == "t_x0000" and pad.clips[0].id == "c_x0000" and pad.inserts[0].id == "fx_x0000"


def test_track_remove_by_case_insensitive_name():
    song = _apply({"type": "track.remove", "track": "dRuMs"})
    assert [t.id for t in song.tracks] == ["t_bass"]


def test_track_move_by_id():
    song = _apply({"type": "track.move", "track": "t_bass", "index": 0})
    assert [t.name for t in song.tracks] == ["Bass", "Drums"]


def test_track_set():
    song = _apply({"type": "track.set", "track": "bass",
                   "patch": {"name": "Sub", "color": "#000000", "gain": -12, "pan": -1, "solo": True}})
    tr = song.track("t_bass")
    assert (tr.name, tr.color, tr.gain, tr.pan, tr.solo) == ("Sub", "#000000", -12.0, -1.0, True)


def test_instrument_set_merges_and_removes_params():
    song = _apply({"type": "instrument.set", "track": "Bass", "params": {"reso": 0.6, "cutoff": None}})
    assert song.track("Bass").instrument.params == {"reso": 0.6}
    song = _apply({"type": "instrument.set", "track": "Bass", "device": "core.poly",
                   "params": {"wave": "square"}})
    assert song.track("Bass").instrument.device == "core.poly"
    assert song.track("Bass").instrument.params == {"wave": 1.0}  # a switch option by name -> its index


def test_insert_add_on_master_at_index():
    song = _apply({"type": "insert.add", "track": "master", "index": 0, "ref": "eq",
                   "insert": {"device": "core.eq", "params": {"high": -4}, "on": False}},
                  {"type": "insert.set", "track": "MASTER", "insert": "$eq", "patch": {"on": True}})
    assert [i.device for i in song.master.inserts] == ["core.eq", "core.limiter"]
    assert song.master.inserts[0].params == {"high": -4.0} and song.master.inserts[0].on is True


def test_insert_remove_by_device_id_used_once():
    song = _apply({"type": "insert.remove", "track": "Bass", "insert": "core.comp"})
    assert [i.id for i in song.track("Bass").inserts] == ["fx_eq"]


def test_insert_move_by_index():
    song = _apply({"type": "insert.move", "track": "Bass", "insert": 0, "index": 1})
    assert [i.id for i in song.track("Bass").inserts] == ["fx_comp", "fx_eq"]


def test_insert_set_params_merge():
    song = _apply({"type": "insert.set", "track": "Bass", "insert": "fx_eq",
                   "patch": {"params": {"high": 3, "low": None}, "on": False}})
    ins = song.track("Bass").inserts[0]
    assert ins.params == {"high": 3.0} and ins.on is False


def test_clip_add_with_drum_grid():
    song = _apply({"type": "clip.add", "track": "Drums", "ref": "fill",
                   "clip": {"start": 8, "length": 4, "name": "fill",
                            "grid": {"kick": "X...x...", "snare": "....O..o", "hat": "x-x-"}}},
                  {"type": "clip.set", "track": "Drums", "clip": "$fill", "patch": {"gain": -2}})
    clip = song.track("Drums").clips[1]
    assert (clip.start, clip.length, clip.name, clip.gain) == (8.0, 4.0, "fill", -2.0)
    assert [(n.p, n.t, n.d, n.v) for n in clip.notes] == [
        (36, 0.0, 0.25, 1.0), (42, 0.0, 0.25, 0.8), (42, 0.5, 0.25, 0.8), (36, 1.0, 0.25, 0.8),
        (38, 1.0, 0.25, 0.6), (38, 1.75, 0.25, 0.45)]


def test_clip_add_grid_with_custom_step():
    song = _apply({"type": "clip.add", "track": "Drums",
                   "clip": {"start": 8, "length": 4, "grid": {"39": "X.X"}, "step": 0.5}})
    assert [(n.p, n.t, n.d) for n in song.track("Drums").clips[1].notes] == [(39, 0.0, 0.5), (39, 1.0, 0.5)]


def test_clip_remove_by_name():
    song = _apply({"type": "clip.remove", "track": "Bass", "clip": "Chorus"})
    assert [c.id for c in song.track("Bass").clips] == ["c_bass_a"]


def test_clip_set_resorts_clips():
    song = _apply({"type": "clip.set", "track": "Bass", "clip": "c_bass_a",
                   "patch": {"start": 16, "length": 0.25, "name": "late", "mute": True}})
    clips = song.track("Bass").clips
    assert [c.id for c in clips] == ["c_bass_b", "c_bass_a"]
    assert (clips[1].start, clips[1].length, clips[1].name, clips[1].mute) == (16.0, 0.25, "late", True)


def test_clip_move_to_another_track():
    song = _apply({"type": "clip.move", "track": "Bass", "clip": "c_bass_b", "toTrack": "drums", "start": 12})
    assert [c.id for c in song.track("Bass").clips] == ["c_bass_a"]
    moved = song.track("Drums").clips[1]
    assert moved.id == "c_bass_b" and moved.start == 12.0 and len(moved.notes) == 2


def test_notes_add_text_and_objects():
    song = _apply({"type": "notes.add", "track": "Bass", "clip": "c_bass_a",
                   "notes": ["A2@1:1/2*100", {"p": "E2", "t": 3, "d": 0.5}]})
    assert _notes(song, "Bass", "c_bass_a") == [
        (45, 0.0, 2.0, 0.9), (45, 1.0, 0.5, round(100 / 127, 6)), (40, 3.0, 0.5, 0.8), (41, 4.0, 2.0, 0.9)]
    new_ids = sorted(n.id for n in song.track("Bass").clips[0].notes if n.id.startswith("n_x"))
    assert new_ids == ["n_x0000", "n_x0001"]


def test_notes_remove():
    song = _apply({"type": "notes.remove", "track": "Bass", "clip": "c_bass_a", "ids": ["n_b0"]})
    assert [n.id for n in song.track("Bass").clips[0].notes] == ["n_b1"]


def test_notes_set_changes_only_named_fields():
    song = _apply({"type": "notes.set", "track": "Bass", "clip": "c_bass_a",
                   "notes": [{"id": "n_b1", "t": 0.5, "v": 0.3}]})
    assert [(n.id, n.p, n.t, n.d, n.v) for n in song.track("Bass").clips[0].notes] == [
        ("n_b0", 45, 0.0, 2.0, 0.9), ("n_b1", 41, 0.5, 2.0, 0.3)]


def test_notes_keep_the_order_sorting_after_every_op_gives():
    # Notes are kept by (t, p), ties in the order a stable sort leaves them: a note whose time grows onto
    # others goes before them, one whose time shrinks onto others goes after them; appended notes go last.
    add = {"type": "notes.replace", "track": "Bass", "clip": "c_bass_a",
           "notes": [{"p": 40, "t": t, "d": 1, "id": i} for i, t in (("a", 0), ("b", 1), ("c", 2), ("d", 3))]}
    ops = [add,
           {"type": "notes.set", "track": "Bass", "clip": "c_bass_a", "notes": [{"id": "a", "t": 1}]},
           {"type": "notes.set", "track": "Bass", "clip": "c_bass_a", "notes": [{"id": "d", "t": 2}]},
           {"type": "notes.add", "track": "Bass", "clip": "c_bass_a",
            "notes": [{"p": 40, "t": 1, "d": 1, "id": "e"}]},
           {"type": "notes.set", "track": "Bass", "clip": "c_bass_a", "notes": [{"id": "b", "t": 2}, {"id": "c", "t": 1}]}]
    order = ["a", "e", "c", "b", "d"]  # t=1: a, e, then c (shrank onto them); t=2: b (grew onto d), d
    assert [n.id for n in _apply(*ops).track("Bass").clips[0].notes] == order
    step = TINY
    for o in ops:
        step = apply_ops(step, [o])
    assert [n.id for n in step.track("Bass").clips[0].notes] == order


def test_notes_replace_with_text_and_comments():
    song = _apply({"type": "notes.replace", "track": "Bass", "clip": "c_bass_a",
                   "notes": "#root-and-fifth\nA1@0:1; E2@1:1/3*0.5, #tail\n"})
    assert _notes(song, "Bass", "c_bass_a") == [(33, 0.0, 1.0, 0.8), (40, 1.0, 1 / 3, 0.5)]


def test_notes_replace_with_grid():
    song = _apply({"type": "notes.replace", "track": "Drums", "clip": "c_beat", "grid": {"kick": "X"}})
    assert _notes(song, "Drums", "c_beat") == [(36, 0.0, 0.25, 1.0)]


def test_section_add_with_ref():
    song = _apply({"type": "section.add", "ref": "b", "section": {"name": "Bridge", "start": 16, "length": 8}},
                  {"type": "section.set", "section": "$b", "patch": {"length": 4}})
    assert [(s.name, s.start, s.length) for s in song.sections][-1] == ("Bridge", 16.0, 4.0)
    assert song.sections[-1].id == "s_x0000"


def test_section_set_by_name_resorts():
    song = _apply({"type": "section.set", "section": "verse", "patch": {"name": "Outro", "start": 16}})
    assert [(s.name, s.start) for s in song.sections] == [("Chorus", 8.0), ("Outro", 16.0)]


def test_section_remove():
    song = _apply({"type": "section.remove", "section": "s_chorus"})
    assert [s.id for s in song.sections] == ["s_verse"]


def test_master_set():
    song = _apply({"type": "master.set", "patch": {"gain": -8, "clip": "clean"}})
    assert (song.master.gain, song.master.clip) == (-8.0, "clean")


def test_device_define_and_redefine_bumps_version():
    dev = {"id": "my.echo", "kind": "effect", "kernel": "def process(x, p):\n    return x\n",
           "params": [{"key": "time", "min": 0, "max": 2, "def": 0.75, "unit": "beats"}]}
    song = _apply({"type": "device.define", "device": dev},
                  {"type": "insert.add", "track": "Bass", "insert": {"device": "my.echo", "params": {"time": 1.5}}})
    assert song.devices["my.echo"].version == 1
    assert song.devices["my.echo"].params[0].default == 0.75
    assert song.track("Bass").inserts[-1].params == {"time": 1.5}
    same = apply_ops(song, [{"type": "device.define", "device": dev}])
    assert same.devices["my.echo"].version == 1
    changed = apply_ops(song, [{"type": "device.define", "device": {**dev, "kernel": "# v2\n"}}])
    assert changed.devices["my.echo"].version == 2


def test_device_remove():
    song = _apply({"type": "device.remove", "id": "my.fold"}, song=DEFINED)
    assert song.devices == {}


def test_auto_write_text_points_on_instrument():
    song = _apply({"type": "auto.write", "track": "Bass", "param": "cutoff", "points": "0:200 16:4000"})
    assert [(p.t, p.v) for p in song.track("Bass").instrument.auto["cutoff"]] == [(0.0, 200.0), (16.0, 4000.0)]


def test_auto_write_replaces_points_inside_its_span():
    song = _apply({"type": "auto.write", "track": "Bass", "insert": "fx_eq", "param": "high",
                   "points": [{"t": 0, "v": -6}, {"t": 8, "v": 0}, {"t": 16, "v": 6}]},
                  {"type": "auto.write", "track": "Bass", "insert": "fx_eq", "param": "high",
                   "points": "4:-3 10:3"})
    points = song.track("Bass").inserts[0].auto["high"]
    assert [(p.t, p.v) for p in points] == [(0.0, -6.0), (4.0, -3.0), (10.0, 3.0), (16.0, 6.0)]


def test_auto_clear_a_span():
    song = _apply({"type": "auto.write", "track": "Bass", "param": "cutoff", "points": "0:200 8:400 16:800"},
                  {"type": "auto.clear", "track": "Bass", "insert": "instrument", "param": "cutoff",
                   "from": 4, "to": 12})
    assert [p.t for p in song.track("Bass").instrument.auto["cutoff"]] == [0.0, 16.0]
    cleared = apply_ops(song, [{"type": "auto.clear", "track": "Bass"}])
    assert cleared.track("Bass").instrument.auto == {}


# --- one refusal per op type, by the exact text -------------------------------------------------

REFUSALS = [
    ({"type": "project.set", "patch": {"tempo": 500}},
     "op 0 (project.set): patch.tempo = 500: allowed 20..400 bpm"),
    ({"type": "track.add", "track": {"name": "Loud", "gain": 30}},
     "op 0 (track.add): track.gain = 30: allowed -96..24 dB"),
    ({"type": "track.remove", "track": "Nobody"},
     "op 0 (track.remove): track = \"Nobody\": allowed an existing track: 'Drums' (t_drums), 'Bass' (t_bass)"),
    ({"type": "track.move", "track": "Bass", "index": 5},
     "op 0 (track.move): index = 5: allowed a whole number 0..1"),
    ({"type": "track.set", "track": "Bass", "patch": {"gain": 30}},
     "op 0 (track.set): patch.gain = 30: allowed -96..24 dB"),
    ({"type": "instrument.set", "track": "Bass", "params": {"cutoff": 9000}},
     "op 0 (instrument.set): params.cutoff = 9000: allowed core.bass cutoff: 40..8000 Hz"),
    ({"type": "insert.add", "track": "master", "insert": {"device": "core.eq", "params": {"high": 20}}},
     "op 0 (insert.add): insert.params.high = 20: allowed core.eq high: -15..15 dB"),
    ({"type": "insert.remove", "track": "Bass", "insert": "fx_nope"},
     "op 0 (insert.remove): insert = \"fx_nope\": allowed an insert id, a device id used once, or an index; "
     "this chain has fx_eq (core.eq), fx_comp (core.comp)"),
    ({"type": "insert.move", "track": "Bass", "insert": "fx_eq", "index": 9},
     "op 0 (insert.move): index = 9: allowed a whole number 0..1"),
    ({"type": "insert.set", "track": "Bass", "insert": "fx_eq", "patch": {"on": "yes"}},
     "op 0 (insert.set): patch.on = \"yes\": allowed true or false"),
    ({"type": "clip.add", "track": "Bass", "clip": {"start": 0, "length": 0.1}},
     "op 0 (clip.add): clip.length = 0.1: allowed >= 0.25 beats"),
    ({"type": "clip.remove", "track": "Bass", "clip": "c_nope"},
     "op 0 (clip.remove): clip = \"c_nope\": allowed a clip id, name or index on track 'Bass': c_bass_a, c_bass_b"),
    ({"type": "clip.set", "track": "Bass", "clip": "c_bass_a", "patch": {"length": 0.1}},
     "op 0 (clip.set): patch.length = 0.1: allowed >= 0.25 beats"),
    ({"type": "clip.move", "track": "Bass", "clip": "c_bass_a", "toTrack": "Nobody"},
     "op 0 (clip.move): toTrack = \"Nobody\": allowed an existing track"),
    ({"type": "notes.add", "track": "Bass", "clip": "c_bass_a", "notes": "H4@0"},
     "op 0 (notes.add): notes = \"H4@0\": allowed pitch 'H4': expected a MIDI number 0..127 or a name like C4"),
    ({"type": "notes.remove", "track": "Bass", "clip": "c_bass_a", "ids": ["n_b0", "n_zz"]},
     "op 0 (notes.remove): ids[1] = \"n_zz\": allowed a note id in clip c_bass_a"),
    ({"type": "notes.set", "track": "Bass", "clip": "c_bass_a", "notes": [{"id": "n_b0", "v": 2}]},
     "op 0 (notes.set): notes[0].v = 2: allowed 0..1"),
    ({"type": "notes.replace", "track": "Bass", "clip": "c_bass_a", "notes": [{"p": 200, "t": 0, "d": 1}]},
     "op 0 (notes.replace): notes[0].p = 200: allowed a MIDI pitch 0..127"),
    ({"type": "section.add", "section": {"name": "Bridge", "start": 16, "length": 0}},
     "op 0 (section.add): section.length = 0.0: allowed more than 0 beats"),
    ({"type": "section.set", "section": "Outro", "patch": {"name": "x"}},
     "op 0 (section.set): section = \"Outro\": allowed an existing section: 'Verse' (s_verse), 'Chorus' (s_chorus)"),
    ({"type": "section.remove", "section": "Outro"},
     "op 0 (section.remove): section = \"Outro\": allowed an existing section"),
    ({"type": "master.set", "patch": {"clip": "hard"}},
     "op 0 (master.set): patch.clip = \"hard\": allowed \"soft\" or \"clean\""),
    ({"type": "device.define", "device": {"id": "core.mine", "kind": "effect", "kernel": "x"}},
     "op 0 (device.define): device.id = \"core.mine\": allowed ids starting with 'core.' are reserved"),
    ({"type": "device.remove", "id": "my.none"},
     "op 0 (device.remove): id = \"my.none\": allowed a song-defined device id: none"),
    ({"type": "auto.write", "track": "Bass", "param": "cutoff", "points": "0:10 4:800"},
     "op 0 (auto.write): points[0].v = 10.0: allowed core.bass cutoff: 40..8000 Hz"),
    ({"type": "auto.clear", "track": "Drums", "insert": "fx_x"},
     "op 0 (auto.clear): insert = \"fx_x\": allowed an insert id, a device id used once, or an index; "
     "this chain has no inserts"),
]


def test_every_op_type_has_a_refusal_case():
    assert sorted({op["type"] for op, _ in REFUSALS}) == known_op_types()


@pytest.mark.parametrize("op, fragment", REFUSALS, ids=[op["type"] for op, _ in REFUSALS])
def test_refusal_message(op, fragment):
    msg = _refused(op)
    assert msg.startswith("transaction 0, ")
    assert fragment in msg


# --- rules shared by every op --------------------------------------------------------------------

def test_unknown_type_lists_known_ones_and_the_closest():
    msg = _refused({"type": "track.ad", "track": {}})
    assert msg.startswith('transaction 0, op 0 (track.ad): type = "track.ad": allowed one of auto.clear, ')
    assert ", ".join(known_op_types()) in msg
    assert msg.endswith("(did you mean 'track.add'?)")


def test_missing_type():
    msg = _refused({"track": "Bass"})
    assert "type = null: allowed one of auto.clear" in msg


def test_missing_required_field_says_missing_and_lists_fields():
    msg = _refused({"type": "track.set", "track": "Bass"})
    assert msg == ("transaction 0, op 0 (track.set): patch is missing: track.set requires it "
                   "(fields: type, track, patch)")


def test_null_required_field():
    msg = _refused({"type": "clip.add", "track": "Bass", "clip": None})
    assert "op 0 (clip.add): clip is null: clip.add requires it (fields: type, track, clip, ref?)" in msg


def test_unknown_field_lists_the_ops_fields():
    msg = _refused({"type": "track.set", "track": "Bass", "patch": {}, "colour": "red"})
    assert 'op 0 (track.set): colour = "red": allowed the fields of track.set: type, track, patch' in msg


def test_unknown_patch_key():
    msg = _refused({"type": "master.set", "patch": {"volume": 3}})
    assert "patch.volume = 3: allowed one of the fields clip, gain" in msg


def test_op_that_is_not_an_object():
    assert 'op 0 (?): op = "track.add": allowed an object' in _refused("track.add")


def test_ops_that_are_not_a_list():
    with pytest.raises(OpError, match="transaction 0: expected a list of ops, got dict"):
        apply_ops(TINY, {"type": "track.remove", "track": "Bass"})


def test_refusal_names_the_op_index_and_leaves_the_song_alone():
    msg = _refused({"type": "track.set", "track": "Bass", "patch": {"gain": -3}},
                   {"type": "track.remove", "track": "Drums"},
                   {"type": "track.set", "track": "Drums", "patch": {"gain": 0}})
    assert msg.startswith("transaction 0, op 2 (track.set): track = \"Drums\": allowed an existing track: "
                          "'Bass' (t_bass)")


def test_apply_transactions_names_the_transaction():
    txs = [[{"type": "track.set", "track": "Bass", "patch": {"gain": -3}}],
           [{"type": "track.set", "track": "Bass", "patch": {"pan": 2}}]]
    with pytest.raises(OpError, match=r"^transaction 1, op 0 \(track.set\): patch.pan = 2: allowed -1..1$"):
        apply_transactions(TINY, txs)
    assert apply_transactions(TINY, txs[:1]).track("Bass").gain == -3.0


def test_unknown_ref():
    msg = _refused({"type": "track.add", "track": {"name": "A"}, "ref": "a"},
                   {"type": "track.set", "track": "$b", "patch": {"gain": 1}})
    assert 'op 1 (track.set): track = "$b": allowed a ref made earlier in this transaction ($a)' in msg


def test_refs_do_not_outlive_their_transaction():
    with pytest.raises(OpError, match=r"transaction 1, op 0 .*none yet"):
        apply_transactions(TINY, [[{"type": "track.add", "track": {"name": "A"}, "ref": "a"}],
                                  [{"type": "track.remove", "track": "$a"}]])


def test_unknown_param_lists_the_devices_params():
    msg = _refused({"type": "instrument.set", "track": "Bass", "params": {"cutof": 900}})
    assert ("params.cutof = 900: allowed a param of core.bass: wave, sub, cutoff, reso, envamt, fdecay, drive, "
            "glide, release, mode") in msg


def test_switch_param_gives_the_options():
    msg = _refused({"type": "instrument.set", "track": "Drums", "params": {"kit": 9}})
    assert "params.kit = 9: allowed core.drums kit: an option index 0..5 (FIELD=0, MACHINE=1, DUST=2" in msg


def test_song_defined_device_params_are_validated_against_their_declaration():
    msg = _refused({"type": "insert.set", "track": "Lead", "insert": "fx_fold", "patch": {"params": {"amount": 3}}},
                   song=DEFINED)
    assert "patch.params.amount = 3: allowed my.fold amount: 0..1" in msg
    msg = _refused({"type": "insert.set", "track": "Lead", "insert": "fx_fold", "patch": {"params": {"amt": 1}}},
                   song=DEFINED)
    assert "patch.params.amt = 1: allowed a param of my.fold: amount" in msg


def test_unknown_device_is_accepted_with_numeric_params():
    song = _apply({"type": "insert.add", "track": "Bass", "insert": {"device": "vst.thing", "params": {"x": 5}}})
    assert song.track("Bass").inserts[-1].params == {"x": 5.0}
    msg = _refused({"type": "insert.add", "track": "Bass", "insert": {"device": "vst.thing", "params": {"x": "a"}}})
    assert 'insert.params.x = "a": allowed a finite number' in msg


def test_explicit_duplicate_id_is_refused():
    msg = _refused({"type": "clip.add", "track": "Bass", "clip": {"id": "c_beat", "start": 0, "length": 4}})
    assert 'clip.id = "c_beat": allowed an id not already used in the song' in msg


def test_non_finite_and_huge_numbers_are_refused():
    assert "patch.start = Infinity: allowed a finite number >= 0 beats" in _refused(
        {"type": "clip.set", "track": "Bass", "clip": 0, "patch": {"start": float("inf")}})
    assert "patch.gain = NaN: allowed a finite number -96..24 dB" in _refused(
        {"type": "track.set", "track": "Bass", "patch": {"gain": float("nan")}})
    assert "allowed a finite number >= 0 beats" in _refused(
        {"type": "clip.move", "track": "Bass", "clip": 0, "start": 10 ** 400})


def test_invalid_key_is_refused_with_the_op_and_field():
    msg = _refused({"type": "project.set", "patch": {"key": {"root": "H", "scale": "minor"}}})
    assert msg.startswith('transaction 0, op 0 (project.set): patch.key.root = "H": allowed \'C\', \'C#\'')


def test_apply_ops_is_pure():
    before = dumps_song(TINY)
    song = _apply({"type": "track.remove", "track": "Bass"})
    assert dumps_song(TINY) == before
    assert song is not TINY and len(song.tracks) == 1


def test_empty_transaction_is_the_same_song():
    assert dumps_song(apply_ops(TINY, [])) == dumps_song(TINY)


# Inputs that once escaped apply_ops as TypeError or OverflowError (found by the hypothesis fuzz test).
ESCAPES = [
    ({"type": "device.remove", "id": []}, 'id = []: allowed a song-defined device id'),
    ({"type": "device.remove", "id": {"a": 1}}, 'id = {"a": 1}: allowed a song-defined device id'),
    ({"type": "auto.clear", "track": "Bass", "param": []}, 'param = []: allowed a param name like "cutoff"'),
    ({"type": "auto.write", "track": "Bass", "param": {"x": 1}, "points": "0:100"},
     'param = {"x": 1}: allowed a param name'),
    ({"type": "auto.write", "track": "Bass", "param": "cutoff", "points": [{"t": 0, "v": {"a": 1}}]},
     'points[0].v = {"a": 1}: allowed a finite number'),
    ({"type": "section.add", "section": {"id": [1], "start": 0, "length": 4}},
     "section.id = [1]: allowed a string id"),
    ({"type": "insert.add", "track": "Bass", "insert": {"id": [None], "device": "core.eq"}},
     "insert.id = [null]: allowed a string id"),
    ({"type": "clip.add", "track": "Bass", "clip": {"id": 7, "start": 0, "length": 4}},
     "clip.id = 7: allowed a string id"),
    ({"type": "track.add", "track": {"id": {"x": 1}}}, 'track.id = {"x": 1}: allowed a string id'),
    ({"type": "notes.set", "track": "Bass", "clip": 0, "notes": [{"id": {"x": 1}, "p": 40}]},
     'notes[0].id = {"x": 1}: allowed a note id in clip c_bass_a'),
    ({"type": "track.add", "track": {"name": "X", "inserts": 0.5}}, "track.inserts = 0.5: allowed a list"),
    ({"type": "insert.add", "track": "Bass", "insert": {"device": "vst.x", "params": {"k": 10 ** 400}}},
     "insert.params.k = 1000000"),
    ({"type": "instrument.set", "track": "Bass", "params": {"cutoff": 10 ** 400}},
     "params.cutoff = 1000000"),
    ({"type": "clip.set", "track": "Bass", "clip": 0, "patch": {"start": 10 ** 400}},
     "patch.start = 1000000"),
    ({"type": "notes.add", "track": "Bass", "clip": 0, "notes": "C4@1e999"},
     "start '1e999' is not a number"),
]


@pytest.mark.parametrize("op, fragment", ESCAPES, ids=[f"{op['type']}-{i}" for i, (op, _) in enumerate(ESCAPES)])
def test_bad_values_are_op_errors(op, fragment):
    assert fragment in _refused(op)
