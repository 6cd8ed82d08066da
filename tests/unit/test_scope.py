"""The house gate ``scope``: each way of passing a task by touching what it never named fails the gate,
and an honest answer done another way passes it.

Most cases read the gate alone (:func:`scope_result` on a context of the two songs); the ones that used to
score 1.000 are scored whole, so the test shows the gate is what now fails them.
"""

import json

import numpy as np
import pytest

from pytest_overdub.bench.checks import Context
from pytest_overdub.bench.model import ChangeScope
from pytest_overdub.bench.scope import describe, is_music, scope_result
from pytest_overdub.bench.tasks import bundled_bench, candidate_song, load_task, score_task, start_song
from pytest_overdub.errors import TaskError
from pytest_overdub.song.model import Song
from pytest_overdub.song.submission import submission_from_data

BENCH = bundled_bench()
SR = 48000


def oracle(task_id: str) -> list:
    return json.loads(BENCH.oracle_path(task_id).read_text())["ops"]


def gate(task_id: str, answer, *, scope: ChangeScope | None = None):
    """The scope gate's result for ``answer`` (ops, or a whole Song) on the task."""
    task = BENCH.task(task_id)
    start = start_song(task, bench=BENCH)
    song = answer if isinstance(answer, Song) else candidate_song(start, submission_from_data(answer))
    return scope_result(scope or task.scope, Context(start=start, song=song, trusted=True))


def failed(result, *findings: str) -> bool:
    return result.score == 0.0 and all(f in result.detail for f in findings)


def score(task_id: str, ops):
    return score_task(BENCH.task(task_id), submission_from_data(ops), bench=BENCH, trusted=True)


# --- collateral damage: tracks the task never named --------------------------------------------------

def test_muting_an_unnamed_track_fails_and_says_what_the_task_allows():
    r = score("mix-bass-under-kick", oracle("mix-bass-under-kick")
              + [{"type": "track.set", "track": "Keys", "patch": {"mute": True}}])
    assert all(c.score == 1.0 for c in r.checks if c.id != "scope")  # every other check is fooled
    assert r.score == 0.0
    assert r.check("scope").detail == "Keys muted; this task may change: Bass (sound only, not notes)"
    assert "Keys muted; this task may change: Bass" in r.check("scope").line()


def test_deleting_an_unnamed_track_fails():
    r = gate("mix-bass-under-kick", oracle("mix-bass-under-kick") + [{"type": "track.remove", "track": "Hook"}])
    assert r.value == 1 and failed(r, "Hook removed")


def test_soloing_the_named_track_solos_the_others_away():
    r = gate("mix-bass-under-kick", [{"type": "track.set", "track": "Bass", "patch": {"solo": True}}])
    assert r.value == 4 and failed(r, "Kick soloed away (Bass soloed)", "Hook soloed away (Bass soloed)")


def test_a_master_eq_on_a_one_track_task_touches_every_track():
    cheat = [{"type": "insert.add", "track": "master",
              "insert": {"device": "core.eq", "params": {"highf": 4000, "high": -7}}}]
    r = score("mix-darken-keys", cheat)
    assert r.check("presence").value == 0.0  # the keys are read on their own stem: the master EQ is not theirs
    assert r.score == 0.0 and failed(r.check("scope"), "master chain changed (it touches every track)")


def test_an_eq_on_an_unnamed_track_fails_and_names_the_part_changed():
    r = gate("mix-darken-keys", [{"type": "insert.add", "track": "Hook",
                                  "insert": {"device": "core.eq", "params": {"high": -7}}}])
    assert failed(r, "Hook changed (inserts)")


def test_a_change_to_an_unnamed_track_that_makes_no_sound_passes():
    # an EQ with every band at 0 dB and an insert switched off: the stems null (residual >= 60 dB under)
    r = gate("mix-darken-keys", oracle("mix-darken-keys") + [
        {"type": "insert.add", "track": "Hook", "insert": {"device": "core.eq"}},
        {"type": "insert.add", "track": "Kick", "insert": {"device": "core.verb", "on": False}},
        {"type": "track.move", "track": "Kit", "index": 0},
        {"type": "track.set", "track": "Bass", "patch": {"name": "Low"}}])
    assert r.score == 1.0 and r.value == 0 and r.detail is None


# --- a mix changes how parts sound, not what they play ------------------------------------------------

def test_deleting_notes_in_a_mix_task_fails():
    r = gate("mix-bass-under-kick", [{"type": "clip.remove", "track": "Bass", "clip": "c_bass_verse"}])
    assert failed(r, "Bass plays other notes (20 notes differ")


def test_making_the_named_track_inaudible_fails():
    r = gate("mix-hook-in-front", [{"type": "track.set", "track": "Bass", "patch": {"gain": -96}}])
    assert failed(r, "Bass made inaudible")


def test_darkening_the_keys_with_the_instrument_instead_of_an_eq_passes():
    r = gate("mix-darken-keys", [{"type": "instrument.set", "track": "Keys", "params": {"bright": 0.2}}])
    assert r.score == 1.0


# --- sections: "without touching the verse" ------------------------------------------------------------

def _width(track: str, verse: float, chorus: float) -> list:
    return [{"type": "insert.add", "track": track, "insert": {"device": "core.width"}, "ref": "w"},
            {"type": "auto.write", "track": track, "insert": "$w", "param": "width",
             "points": [{"t": 0, "v": verse}, {"t": 16, "v": verse}, {"t": 16.001, "v": chorus}]}]


def test_narrowing_the_verse_fails_the_chorus_lift():
    r = gate("mix-chorus-lift", oracle("mix-chorus-lift") + _width("Keys", 0.0, 1.0))
    assert failed(r, "Keys changed outside Chorus")


def test_widening_the_keys_in_the_chorus_only_passes():
    r = gate("mix-chorus-lift", oracle("mix-chorus-lift") + _width("Keys", 1.0, 2.0))
    assert r.score == 1.0, r.detail


def test_a_new_part_playing_in_the_verse_fails_the_chorus_lift():
    ops = oracle("mix-chorus-lift")
    ops[1] = {**ops[1], "clip": {**ops[1]["clip"], "start": 0}}  # the pad's clip moved into the verse
    assert failed(gate("mix-chorus-lift", ops), "new track 'Lift Pad' plays outside Chorus")


# --- padding, tempo, key ---------------------------------------------------------------------------------

def test_appending_an_empty_480_beat_section_changes_the_length():
    squash = [{"type": "master.set", "patch": {"gain": 8}}]
    pad = [{"type": "section.add", "section": {"name": "Nothing", "start": 32, "length": 480}}]
    r = score("mix-master-loudness", squash + pad)
    assert r.score == 0.0 and failed(r.check("scope"), "length changed (32 -> 512 beats)")
    assert gate("mix-master-loudness", squash).score == 1.0  # the master alone is the task's to change


def test_the_key_and_tempo_stay_unless_the_task_allows_them():
    r = gate("write-bassline", oracle("write-bassline")
             + [{"type": "project.set", "patch": {"key": {"root": "A", "scale": "chromatic"}, "tempo": 120}}])
    assert r.value == 2 and failed(r, "key changed (A minor -> A chromatic)", "tempo/meter changed (92 bpm")
    assert gate("write-bassline", oracle("write-bassline"),
                scope=ChangeScope(tracks=["Bass"], notes=True, key=True, tempo=True)).score == 1.0


# --- what an answer adds must be music ---------------------------------------------------------------------

NOISE = """
def render(notes, params, ctx, n_frames):
    out = np.zeros((2, n_frames))
    rng = ctx.rng(0)
    for note in notes:
        a = int(round(note.start_s * ctx.sr))
        b = min(n_frames, a + int(round(note.dur_s * ctx.sr)))
        if a < b:
            out[:, a:b] += 0.1 * rng.standard_normal((2, b - a))
    return out
"""


SINE = """
def render(notes, params, ctx, n_frames):
    out = np.zeros((2, n_frames))
    for n in notes:
        a = int(n.start_s * ctx.sr)
        b = min(n_frames, a + int(n.dur_s * ctx.sr))
        if a < b:
            ph = 2 * np.pi * 440 * 2 ** ((n.pitch - 69) / 12) * np.arange(a, b) / ctx.sr
            out[0, a:b] += 0.3 * n.velocity * np.sin(ph)
            out[1, a:b] += 0.3 * n.velocity * np.cos(ph)
    return out
"""


def _noise_bed(name: str = "Air") -> list:
    return [{"type": "device.define", "device": {"id": "bench.air", "kind": "instrument", "kernel": NOISE}},
            {"type": "track.add", "track": {"name": name, "instrument": {"device": "bench.air"}}, "ref": "n"},
            {"type": "clip.add", "track": "$n", "clip": {"start": 16, "length": 16, "notes": [
                {"p": 60, "t": float(t), "d": 4.0} for t in range(0, 16, 4)]}}]


def test_a_steady_noise_bed_is_not_a_new_part():
    r = gate("mix-chorus-lift", oracle("mix-chorus-lift") + _noise_bed())
    assert r.value == 1 and failed(r, "new track 'Air' is a steady noise bed")


def test_a_new_track_needs_a_task_that_asks_for_one():
    assert failed(gate("mix-master-loudness", oracle("mix-master-loudness") + _noise_bed("Bed")),
                  "new track 'Bed' added; this task may change: the master chain")


def _stereo(x):
    return np.vstack([x, x])


def test_is_music_pitched_or_rhythmic_never_steady_noise():
    rng = np.random.default_rng(1)
    n = 4 * SR
    t = np.arange(n) / SR
    noise = 0.1 * rng.standard_normal((2, n))
    assert not is_music(noise, sr=SR, span_frames=None)
    assert not is_music(np.vstack([noise[0], -noise[0]]), sr=SR, span_frames=None)  # all side: width
    tune = 220 * 2 ** (np.array([0, 2, 4, 5, 7, 5, 4, 2]) / 12)[(t * 2).astype(int) % 8]  # eighths at 120 bpm
    assert is_music(_stereo(0.1 * np.sin(2 * np.pi * np.cumsum(tune) / SR)), sr=SR, span_frames=None)
    gated = noise * (np.floor(t * 4) % 2 == 0)  # noise on and off every eighth at 120 bpm: a shaker
    assert is_music(gated, sr=SR, span_frames=None)
    # a quiet tone hidden in the bed (a tenth of its power) does not make the bed a part
    assert not is_music(noise + _stereo(0.1 * np.sqrt(0.2) * np.sin(2 * np.pi * 440 * t)), sr=SR,
                        span_frames=None)


def test_audio_not_from_the_starting_song_fails():
    import base64
    import io

    import soundfile as sf

    buf = io.BytesIO()
    sf.write(buf, np.zeros((SR, 2)), SR, format="WAV")
    start = start_song(BENCH.task("mix-chorus-lift"), bench=BENCH)
    data = start.model_dump(mode="json", by_alias=True)
    data["assets"] = {"a_loop": {"data": base64.b64encode(buf.getvalue()).decode()}}
    data["tracks"][2]["clips"].append({"id": "c_x", "kind": "audio", "start": 16, "length": 4, "asset": "a_loop"})
    r = gate("mix-chorus-lift", Song.model_validate(data))
    assert failed(r, "Bass plays audio that is not from the starting song")


# --- another song -------------------------------------------------------------------------------------------

def test_a_whole_song_that_is_not_an_edit_of_the_tasks_song_fails_with_its_own_message():
    lab = BENCH.song("lab")
    r = gate("mix-bass-under-kick", lab)
    assert r.value == 1 and r.detail.startswith("this is another song (id 'lab'), not an edit of the task's")
    start = start_song(BENCH.task("mix-bass-under-kick"), bench=BENCH)
    data = start.model_dump(mode="json", by_alias=True)
    for i, tr in enumerate(data["tracks"]):
        tr["id"] = f"t_other{i}"
    r = gate("mix-bass-under-kick", Song.model_validate(data))
    assert r.value == 1 and "shares no track with the task's song 'night-shift'" in r.detail


# --- the declaration ------------------------------------------------------------------------------------------

def test_every_task_declares_its_scope_and_a_task_without_one_is_refused(tmp_path):
    data = json.loads((BENCH.tasks_dir / "write-bassline.json").read_text())
    assert data["scope"] == {"tracks": ["Bass"], "notes": True}
    del data["scope"]
    path = tmp_path / "write-bassline.json"
    path.write_text(json.dumps(data))
    with pytest.raises(TaskError, match="scope: missing"):
        load_task(path)


def test_a_scope_naming_an_unknown_track_is_the_gates_error_not_a_pass():
    r = gate("mix-bass-under-kick", [], scope=ChangeScope(tracks=["Cowbell"]))
    assert r.score == 0.0 and "'Cowbell' is not a track of the starting song" in r.error


def test_notes_without_tracks_is_refused():
    with pytest.raises(ValueError, match="name them in tracks"):
        ChangeScope(notes=True)


def test_the_task_page_says_each_scope_as_the_gate_does():
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_task_docs", BENCH.root / "tools" / "make_task_docs.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    for tid in BENCH.task_ids():
        data = json.loads((BENCH.tasks_dir / f"{tid}.json").read_text())
        if data.get("inputs") or data.get("family") == "transcription":  # no scope: an audio task
            continue  # (docs/audio-tasks.md) or a transcription task (docs/transcription.md) changes no song
        assert tool.scope_text(data["scope"]) == describe(BENCH.task(tid).scope)
    assert describe(BENCH.task("mix-chorus-lift").scope) == (
        "every track (sound only, not notes), new tracks, the master chain, in Chorus only")


def test_silencing_a_named_track_in_one_section_only_is_made_inaudible_too():
    duck = [{"type": "insert.add", "track": "Keys", "insert": {"device": "core.width"}, "ref": "w"},
            {"type": "auto.write", "track": "Keys", "insert": "$w", "param": "gain",
             "points": [{"t": 0, "v": 0}, {"t": 16, "v": 0}, {"t": 16.001, "v": -36}]}]
    r = gate("mix-hook-in-front", duck)
    assert failed(r, "Keys made inaudible in Chorus")


def test_the_bench_check_names_a_scope_that_does_not_fit_the_starting_song(tmp_path):
    from pytest_overdub.bench.tasks import Bench
    from pytest_overdub.bench.validity import check_bench

    root = tmp_path / "bench"
    for d in ("tasks", "songs", "oracles", "near_misses"):
        (root / d).mkdir(parents=True)
    for name in ("night-shift", "lab", "loose-groove"):
        (root / "songs" / f"{name}.json").write_text((BENCH.root / "songs" / f"{name}.json").read_text())
    for tid in BENCH.task_ids():
        data = json.loads((BENCH.tasks_dir / f"{tid}.json").read_text())
        if tid == "mix-chorus-lift":
            data["scope"]["sections"] = ["Bridge"]
        (root / "tasks" / f"{tid}.json").write_text(json.dumps(data))
        (root / "oracles" / f"{tid}.json").write_text(BENCH.oracle_path(tid).read_text())
        for answers in ("oracles", "near_misses"):  # the adversarial set the bench check asks for too
            for path in (BENCH.root / answers).glob(f"{tid}.*.json"):
                (root / answers / path.name).write_text(path.read_text())
    assert check_bench(Bench(root)) == [
        "mix-chorus-lift: scope.sections: 'Bridge' is not a section of the starting song (sections: Verse, Chorus)"]


def test_a_sub_bass_and_a_low_saw_that_move_are_pitched():
    t = np.arange(4 * SR) / SR
    low = np.where(t < 2, 41.2, 55.0)  # E1 then A1, two seconds each
    assert is_music(_stereo(0.3 * np.sin(2 * np.pi * np.cumsum(low) / SR)), sr=SR, span_frames=None)
    saw = ((np.cumsum(low * 1.5) / SR) % 1.0) * 2 - 1  # B1 then E2
    assert is_music(_stereo(0.3 * saw), sr=SR, span_frames=None)


def test_a_steady_tone_or_a_held_chord_is_a_drone_not_a_part():
    t = np.arange(8 * SR) / SR
    sine = 0.2 * np.sin(2 * np.pi * 440 * t)
    assert not is_music(_stereo(sine), sr=SR, span_frames=None)
    assert not is_music(np.vstack([sine, 0.2 * np.cos(2 * np.pi * 440 * t)]), sr=SR, span_frames=None)  # wide
    chord = sum(0.1 * np.sin(2 * np.pi * f * t) for f in (220.0, 277.2, 329.6))
    assert not is_music(_stereo(chord), sr=SR, span_frames=None)
    vibrato = 0.2 * np.sin(2 * np.pi * 440 * t + 8 * np.sin(2 * np.pi * 5 * t))
    assert not is_music(_stereo(vibrato), sr=SR, span_frames=None)
    # a siren: its pitch glides a semitone either way every 4 s, its spectrum moves, but it has no second note
    siren = 0.2 * np.sin(2 * np.pi * np.cumsum(440 * 2 ** (np.sin(2 * np.pi * 0.25 * t) / 12)) / SR)
    assert not is_music(_stereo(siren), sr=SR, span_frames=None)
    # the same chord moving a step a bar (2 s at 120 bpm) is a part
    steps = 2 ** (np.array([0, 2, 3, 5]) / 12)[(t // 2).astype(int)]
    moving = sum(0.1 * np.sin(2 * np.pi * f * np.cumsum(steps) / SR) for f in (220.0, 277.2, 329.6))
    assert is_music(_stereo(moving), sr=SR, span_frames=None)


def test_a_steady_sine_in_the_chorus_is_not_a_lift():
    ops = [{"type": "device.define", "device": {"id": "bench.sine", "kind": "instrument", "kernel": SINE}},
           {"type": "track.add", "track": {"name": "Tone", "instrument": {"device": "bench.sine"}, "gain": -3},
            "ref": "n"},
           {"type": "clip.add", "track": "$n", "clip": {"start": 16, "length": 16, "notes": "A4@0:16"}}]
    assert failed(gate("mix-chorus-lift", ops), "new track 'Tone' is a steady noise bed")


def test_a_house_part_is_music_by_construction():
    crash = [{"type": "track.add", "track": {"name": "Wash", "instrument": {"device": "core.drums",
                                                                             "params": {"decay": 2.5}}}, "ref": "c"},
             {"type": "clip.add", "track": "$c", "clip": {"start": 16, "length": 16, "notes": [
                 {"p": 49, "t": float(t), "d": 1.0} for t in range(16)]}}]
    assert gate("mix-chorus-lift", oracle("mix-chorus-lift") + crash).score == 1.0


def test_deleting_every_track_is_an_edit_that_removes_them_not_another_song():
    names = ("Kick", "Kit", "Bass", "Keys", "Hook")
    r = gate("mix-master-loudness", [{"type": "track.remove", "track": n} for n in names])
    assert r.value == 5 and failed(r, "Kick removed", "Hook removed")


def test_a_scorer_keeps_the_starting_stems_levels_and_reads_them_as_fresh(monkeypatch):
    """In a scorer the starting stems' levels (whole and per section) are measured once per process; a
    context reading them kept finds what a fresh measurement finds."""
    from pytest_overdub import runtime
    from pytest_overdub.bench.context import PROCESS_MEMO, clear_process_caches

    duck = [{"type": "insert.add", "track": "Keys", "insert": {"device": "core.width"}, "ref": "w"},
            {"type": "auto.write", "track": "Keys", "insert": "$w", "param": "gain",
             "points": [{"t": 0, "v": 0}, {"t": 16, "v": 0}, {"t": 16.001, "v": -36}]}]
    fresh = gate("mix-hook-in-front", duck)
    monkeypatch.setattr(runtime, "active", lambda: True)
    clear_process_caches()
    try:
        first = gate("mix-hook-in-front", duck)
        kept = [k for k in PROCESS_MEMO._values if k[0] == "scope.level"]
        assert kept
        second = gate("mix-hook-in-front", duck)
        assert [k for k in PROCESS_MEMO._values if k[0] == "scope.level"] == kept
    finally:
        clear_process_caches()
    assert fresh.detail == first.detail == second.detail and failed(second, "Keys made inaudible in Chorus")
