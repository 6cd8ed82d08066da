"""The audio tasks' variants (``master-*@<seed>``, ``mixdown-*@<seed>``): the published task carried onto
generated songs (stems read by role), each seed its own input files and answers, and the hand-off paths
(``overdub start``, an eval workspace, the studio's ``get_task``) writing a variant's WAVs. The validity
rules on every template are tests/unit/test_variants.py's."""

from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf

from pytest_overdub.bench.audio.answers import answer_key
from pytest_overdub.bench.audio.inputs import ensure_inputs
from pytest_overdub.bench.tasks import bundled_bench
from pytest_overdub.bench.templates.audio.published import carried_inputs
from pytest_overdub.bench.variants import variant
from pytest_overdub.cli import main
from pytest_overdub.errors import TaskError

SR = 48000


def test_a_variant_keeps_the_published_checks_and_reads_its_stems_by_role():
    bench = bundled_bench()
    v = variant("mixdown-stems-null@5")  # seed 5's chords part is a Pad, not Keys
    tracks = {i.name: i.tracks for i in v.task.inputs}
    assert tracks == {"master.wav": ["Kick", "Kit", "Bass", "Pad", "Hook"], "stems/drums.wav": ["Kick", "Kit"],
                      "stems/music.wav": ["Bass", "Pad"], "stems/hook.wav": ["Hook"]}
    assert {i.song for i in v.task.inputs} == {"gen-t1-5"} and v.task.song == "gen-t1-5"
    published = bench.task("mixdown-stems-null")
    assert v.task.checks == published.checks and v.task.answer == published.answer
    assert v.task.inputs[0].chain == published.inputs[0].chain
    side = variant("mixdown-sidechain-bass@5").task.inputs
    assert [(i.name, i.tracks) for i in side] == [("stems/kick.wav", ["Kick"]), ("stems/bass.wav", ["Bass"])]


def test_the_ep_is_three_songs_of_the_seed_several_db_apart_one_mastered_loud():
    inputs = variant("master-ep-sequence@7").task.inputs
    assert [i.song for i in inputs] == ["gen-t1-7", "gen-t2-7", "gen-t3-7"]
    gains = sorted(i.gain_db for i in inputs)
    assert gains[-1] <= 0 and gains[1] - gains[0] >= 3 and gains[2] - gains[1] >= 3
    chains = sorted([ins.device for ins in i.chain] for i in inputs)
    assert chains == [[], [], ["core.limiter"]]  # one song mastered loud: peaks equal is not loudness equal


def test_the_reference_is_another_song_tilted_by_opposite_shelves():
    for seed in (1, 2, 3, 4):
        ref = variant(f"master-match-reference@{seed}").task.inputs[1]
        assert ref.name == "reference.wav" and ref.song == f"gen-t2-{seed}"
        shelves = ref.chain[-1].params
        assert 5 <= abs(shelves["low"]) <= 9 and shelves["high"] == -shelves["low"]


def test_a_published_input_the_template_cannot_map_is_an_error():
    with pytest.raises(TaskError, match=r"inputs\[0\]\.song = 'lab'"):
        carried_inputs("t", [{"name": "a.wav", "song": "lab"}], songs={"night-shift": "gen-t1-1"}, tracks={})
    with pytest.raises(TaskError, match=r"inputs\[0\]\.tracks: \['Vox'\]"):
        carried_inputs("t", [{"name": "a.wav", "song": "night-shift", "tracks": ["Vox"]}],
                       songs={"night-shift": "gen-t1-1"}, tracks={"Kick": "Kick"})


def test_two_seeds_never_share_an_input_or_an_answer():
    bench = bundled_bench()
    a, b = variant("mixdown-clear-mud@3").task, variant("mixdown-clear-mud@4").task
    pa, pb = ensure_inputs(a, bench)["mix.wav"], ensure_inputs(b, bench)["mix.wav"]
    assert pa != pb and pa.read_bytes() != pb.read_bytes()
    assert answer_key(a, "mud.oracle", bench) != answer_key(b, "mud.oracle", bench)


def test_overdub_start_writes_a_variants_inputs(tmp_path):
    out = tmp_path / "work"
    assert main(["start", "master-streaming-single@3", "--out", str(out)]) == 0
    task = variant("master-streaming-single@3").task
    assert (out / "mix.wav").read_bytes() == ensure_inputs(task, bundled_bench())["mix.wav"].read_bytes()
    x, sr = sf.read(str(out / "mix.wav"), always_2d=True)
    length_s = variant("master-streaming-single@3").made.truth.length_s
    assert sr == SR and x.shape[1] == 2 and x.shape[0] >= round((length_s + 1.0) * SR)
    assert np.abs(x[-SR:]).max() == 0.0 and np.abs(x[: -SR]).max() > 0.1  # the 1 s pad, then the song
    assert "master-streaming-single@3" in (out / "INSTRUCTION.md").read_text(encoding="utf-8")


def test_an_eval_workspace_and_the_studio_hand_over_a_variants_wavs(tmp_path):
    from pytest_overdub.evaluate.workspace import prepare_workspace
    from pytest_overdub.studio.files import open_file_task

    bench = bundled_bench()
    task = bench.task("mixdown-sidechain-bass@6")
    (tmp_path / "run").mkdir()
    work = prepare_workspace(tmp_path / "run", task, bench=bench)
    cached = ensure_inputs(task, bench)
    for name in ("stems/kick.wav", "stems/bass.wav"):
        assert (work / name).read_bytes() == cached[name].read_bytes()
    assert "bass.wav" in (work / "instruction.md").read_text(encoding="utf-8")
    session = open_file_task("mixdown-sidechain-bass@6", bench=bench, inputs_dir=tmp_path / "in", log_path=None)
    listed = session.get_task()
    assert listed["id"] == "mixdown-sidechain-bass@6"
    assert {i["name"]: open(i["path"], "rb").read() == cached[i["name"]].read_bytes()
            for i in listed["inputs"]} == {"stems/kick.wav": True, "stems/bass.wav": True}


def test_a_variant_is_scored_from_memory_on_inputs_equal_to_the_handed_files(tmp_path, monkeypatch):
    """Scoring a variant's answer writes nothing into the cache (thousands of variants, 10-25 MB an input);
    its inputs made in memory are the WAVs ``overdub start`` hands over, bit for bit, so an agent's answer
    is compared with exactly what it was handed."""
    from pytest_overdub.bench.audio.inputs import load_inputs, read_wav
    from pytest_overdub.bench.audio.validity import score_made
    from pytest_overdub.bench.handoff import write_inputs

    monkeypatch.setenv("OVERDUB_CACHE_DIR", str(tmp_path / "cache"))
    bench, v = bundled_bench(), variant("mixdown-sidechain-bass@3")
    assert score_made(v.task, v.oracle.make, bench).score >= 0.9
    made = load_inputs(v.task, bench)
    assert not (tmp_path / "cache").exists()
    handed = write_inputs(v.task, bench, tmp_path / "work")
    assert sorted(handed) == sorted(made) == ["stems/bass.wav", "stems/kick.wav"]
    for name, x in made.items():
        assert read_wav(handed[name]).tobytes() == x.tobytes(), name


def test_every_audio_variants_answers_are_registered_makers_and_name_their_checks():
    from pytest_overdub.bench.audio.answers import MAKERS
    from pytest_overdub.bench.variants import templates

    audio = [name for name in templates() if variant(f"{name}@1").task.is_audio]
    assert len(audio) == 8
    for name in audio:
        v = variant(f"{name}@1")
        ids = {c.id for c in v.task.checks}
        assert v.oracle.make in MAKERS and v.oracle.ops == []
        for miss in v.near_misses:
            assert miss.make in MAKERS and miss.fails and set(miss.fails) <= ids, (name, miss.name)


def test_the_match_oracle_reaches_an_octave_far_under_the_mix():
    """``master-match-reference@14``: a dark reference tilted darker puts its 8 kHz octave's share 17 dB under
    the mix's; the oracle's bells stopped at 15 dB and left it 4.1 dB off (0.000). Here a reference with a
    22 dB cut at 8 kHz: the 15 dB bells left 2.75 dB there."""
    from pytest_overdub.bench.audio.chains import match_spectrum, octave_bells
    from pytest_overdub.measure.compare import OCTAVES_HZ, octave_levels_db

    x = np.random.default_rng(14).standard_normal((2, 2 * SR)) * 0.1
    ref = octave_bells(x, [0.0] * 7 + [-22.0], centres_hz=OCTAVES_HZ)
    off = octave_levels_db(match_spectrum(x, ref), sr=SR) - octave_levels_db(ref, sr=SR)
    assert np.abs(off).max() < 1.5, off
