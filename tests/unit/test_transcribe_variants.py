"""Transcription variants (``transcribe-*@<seed>``) and the oracle-run field ``given``: the truth of a variant
is the generated song's own notes of its parts, a blind task hands over the mix and names no tempo, an
oracle run hands over what it names and its results say so apart from blind runs."""

from __future__ import annotations

import json

import pytest

from pytest_overdub.bench.handoff import hand_back, input_files, instruction
from pytest_overdub.bench.tasks import bundled_bench, score_path, score_task
from pytest_overdub.bench.variants import variant
from pytest_overdub.cli import main
from pytest_overdub.transcribe.answers import MadeAnswer
from pytest_overdub.transcribe.handover import given_facts
from pytest_overdub.transcribe.task import TranscriptionTask
from pytest_overdub.transcribe.truth import reference

BENCH = bundled_bench()
BLIND = ("transcribe-solo-hook", "transcribe-bass-under-drums", "transcribe-full-band")
ORACLE = "transcribe-full-band-oracle"


def _written_notes(made, track_name: str, lo: float, hi: float) -> list[tuple[float, float]]:
    """(pitch, onset s from ``lo``) of every note written on the track, read straight off the song's clips."""
    song = made.song
    track = next(t for t in song.tracks if t.name == track_name)
    sec = 60.0 / song.tempo
    out = [(float(n.p), round((c.start + n.t - lo) * sec, 9)) for c in track.clips if not c.mute
           for n in c.notes if lo <= c.start + n.t < hi]
    return sorted(out)


@pytest.mark.parametrize("name", [*BLIND, ORACLE])
@pytest.mark.parametrize("seed", [7, 1001])
def test_a_variants_truth_is_the_generated_notes_of_its_parts_by_role(name, seed):
    v = variant(f"{name}@{seed}")
    truth = v.made.truth
    assert v.task.tier == truth.tier == {"transcribe-solo-hook": 1, "transcribe-bass-under-drums": 2}.get(name, 3)
    roles = {"hook": "lead", "bass": "bass", "keys": "chords", "pad": "chords"}
    ref = reference(v.task, v.made.song)
    assert set(ref) == set(v.task.parts) and v.task.gate in ref
    lo, hi = v.task.from_beats, v.task.to_beats
    assert (lo, hi) == (0.0, truth.section("Chorus").end_beats)
    for part, notes in ref.items():
        track = truth.part(roles[part])
        assert v.task.parts[part] == [track.name]
        got = sorted((n.pitch, round(n.onset_s, 9)) for n in notes)
        assert got == _written_notes(v.made, track.name, lo, hi) and got
        # the excerpt is the first verse and chorus: the whole song at tiers 1-2 (every note of the part),
        # the first verse and chorus at tier 3 (8 bars, of 16: the notes whose provenance puts them there)
        in_bars = [n for n in truth.notes if n.track_id == track.track_id and n.bar < 8]
        assert len(notes) == (track.notes if truth.tier < 3 else len(in_bars))


@pytest.mark.parametrize("name", BLIND)
def test_a_blind_variant_hands_over_the_mix_alone_and_names_no_tempo(name):
    v = variant(f"{name}@7")
    song = v.made.song
    assert v.task.given == [] and not v.task.oracle_run and given_facts(v.task, song) == {}
    text = instruction(v.task, bench=BENCH)
    for told in (f"{song.tempo:g}", "bpm", "stems/", "oracle run", "tracks:"):
        assert told not in text and told not in v.task.instruction
    assert "oracle run" not in v.task.title


def test_an_oracle_run_variant_states_what_it_gives():
    v = variant(f"{ORACLE}@7")
    song, truth = v.made.song, v.made.truth
    assert v.task.oracle_run and v.task.given == ["tempo", "stems", "tracks"] and "oracle run" in v.task.title
    facts = given_facts(v.task, song)
    assert facts["tempo_bpm"] == truth.tempo_bpm and facts["meter"] == "4/4"
    assert facts["tracks"] == [p.name for p in truth.parts]  # every track plays in the full band
    assert facts["stems"] == {p: f"stems/{p}.wav" for p in v.task.parts}
    text = instruction(v.task, bench=BENCH)
    assert f"{truth.tempo_bpm:g} bpm, meter 4/4" in text and "stems/hook.wav" in text
    assert f"the mix holds {len(truth.parts)} tracks" in text
    # the blind task on the same seed is the same task but for what it gives
    blind = variant("transcribe-full-band@7").task
    assert blind.model_dump(exclude={"id", "title", "given"}) == v.task.model_dump(exclude={"id", "title", "given"})


def test_an_oracle_run_must_say_so_in_its_title_and_names_each_thing_once():
    data = {"id": "transcribe-x", "family": "transcription", "tier": 1, "title": "Write down the hook",
            "song": "night-shift", "instruction": "Write down the notes of the hook heard in this recording.",
            "parts": {"hook": ["Hook"]}, "gate": "hook"}
    with pytest.raises(ValueError, match="says so in its title"):
        TranscriptionTask.model_validate({**data, "given": ["tempo"]})
    with pytest.raises(ValueError, match="at most once"):
        TranscriptionTask.model_validate({**data, "title": "t (oracle run)", "given": ["tempo", "tempo"]})
    with pytest.raises(ValueError):
        TranscriptionTask.model_validate({**data, "title": "t (oracle run)", "given": ["key"]})
    assert TranscriptionTask.model_validate({**data, "title": "t (oracle run)", "given": ["stems"]}).oracle_run


def test_a_stem_is_its_part_alone_over_the_excerpt(tmp_path, monkeypatch):
    import soundfile as sf

    monkeypatch.setenv("OVERDUB_CACHE_DIR", str(tmp_path))
    base = {"family": "transcription", "tier": 3, "song": "night-shift", "from": 4, "to": 8, "gate": "hook",
            "instruction": "Write down the notes of the bass and the hook in this recording.",
            "parts": {"bass": ["Bass"], "hook": ["Hook"]}}
    oracle = TranscriptionTask.model_validate({**base, "id": "transcribe-o", "title": "o (oracle run)",
                                               "given": ["stems"]})
    solo = TranscriptionTask.model_validate({**base, "id": "transcribe-s", "title": "s", "heard": ["Hook"],
                                             "parts": {"hook": ["Hook"]}})
    files = input_files(oracle, BENCH)
    assert list(files) == ["mix.wav", "stems/bass.wav", "stems/hook.wav"] == [f.name for f in oracle.inputs]
    stem, mix = sf.read(files["stems/hook.wav"])[0], sf.read(files["mix.wav"])[0]
    assert (stem == sf.read(input_files(solo, BENCH)["mix.wav"])[0]).all()  # the hook alone, as a solo mix
    assert stem.shape == mix.shape and abs(stem).max() > 0.01 and not (stem == mix).all()
    assert list(input_files(solo, BENCH)) == ["mix.wav"]


def test_start_workspace_and_get_task_of_an_oracle_run_variant(tmp_path, monkeypatch, capsys):
    from pytest_overdub.studio.files import open_file_task

    monkeypatch.setenv("OVERDUB_CACHE_DIR", str(tmp_path / "cache"))
    vid = f"{ORACLE}@3"
    assert main(["start", vid, "--out", str(tmp_path / "work")]) == 0
    names = sorted(p.relative_to(tmp_path / "work").as_posix() for p in (tmp_path / "work").rglob("*.*"))
    assert names == ["INSTRUCTION.md", "mix.wav", "stems/bass.wav", "stems/hook.wav", "stems/keys.wav"]
    assert "## Given (oracle run)" in (tmp_path / "work" / "INSTRUCTION.md").read_text(encoding="utf-8")
    assert main(["start", vid, "--out", str(tmp_path / "mix.wav")]) == 2
    assert "gives stems too" in capsys.readouterr().err
    session = open_file_task(vid, bench=None, inputs_dir=tmp_path / "in", log_path=None)
    got = session.get_task()
    assert got["oracle_run"] is True and got["given"] == given_facts(variant(vid).task, variant(vid).made.song)
    assert [i["name"] for i in got["inputs"]] == ["mix.wav", "stems/bass.wav", "stems/keys.wav", "stems/hook.wav"]
    blind = open_file_task("transcribe-solo-hook@3", bench=None, inputs_dir=tmp_path / "in2", log_path=None)
    got = blind.get_task()
    assert (got["oracle_run"], got["given"], [i["name"] for i in got["inputs"]]) == (False, {}, ["mix.wav"])


@pytest.mark.parametrize("name", BLIND)
def test_the_alternative_answers_score_as_the_oracle_on_a_variant(name):
    v = variant(f"{name}@1002")
    for make in ("beats", "midi", "played"):
        assert score_task(v.task, MadeAnswer(make, make), bench=BENCH).score >= 0.9, make


def test_a_report_keeps_oracle_runs_apart_from_blind_runs(tmp_path, capsys):
    from evaldirs import write_run

    run = write_run(tmp_path / "run", {"mix-a": [1.0, 1.0], "mix-b": [0.0, 0.0]})
    for k in range(2):
        path = run / "mix-a" / str(k) / "result.json"
        data = json.loads(path.read_text(encoding="utf-8"))
        path.write_text(json.dumps({**data, "given": ["stems"]}), encoding="utf-8")
    assert main(["report", str(run), "--no-reference", "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["tasks"]["mix-a"]["given"] == ["stems"] and s["tasks"]["mix-b"]["given"] == []
    assert (s["overall"]["tasks"], s["overall"]["mean_score"]) == (1, 0.0)  # the blind task alone
    assert (s["oracle_runs"]["tasks"], s["oracle_runs"]["mean_score"]) == (1, 1.0)
    assert s["families"]["mix"]["mean_score"] == 0.0 and s["splits"]["train"]["mean_score"] == 0.0
    assert main(["report", str(run), "--no-reference"]) == 0
    text = capsys.readouterr().out
    assert "overall (blind runs)" in text and "oracle runs (given stems), apart: 1 task" in text


def test_a_transcription_task_names_its_files_as_an_audio_task_does():
    task = BENCH.task("transcribe-full-band")  # a published task file: its files are derived, not written
    assert [f.name for f in task.inputs] == ["mix.wav"] and [f.name for f in task.answer] == ["notes.json", "notes.mid"]
    assert hand_back(task) == [{"name": f.name, "what": f.what} for f in task.answer]
    assert all(t not in f.what for f in task.inputs for t in ("Bass", "Keys", "Hook", "track"))  # no count told
    assert "- `mix.wav`: the recording" in instruction(task, bench=BENCH)


def test_a_result_carries_the_oracle_run_label(tmp_path, capsys):
    vid = f"{ORACLE}@7"
    scored = score_task(variant(vid).task, MadeAnswer("truth", "t"), bench=BENCH)
    assert scored.given == ("tempo", "stems", "tracks") and "oracle run: given tempo, stems, tracks" in scored.text()
    assert score_task(variant("transcribe-full-band@7").task, None, bench=BENCH).given == ()
    bad = tmp_path / "notes.json"
    bad.write_text('{"time": "seconds", "parts": {"drums": []}}', encoding="utf-8")
    assert score_path(variant(vid).task, bad, bench=BENCH).given == ("tempo", "stems", "tracks")  # failed too
    empty = tmp_path / "empty.json"
    empty.write_text('{"time": "seconds", "parts": {}}', encoding="utf-8")
    assert main(["score", vid, str(empty), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["given"] == ["tempo", "stems", "tracks"]


def test_an_eval_of_a_variant_hands_the_workspace_its_files_and_records_what_was_given(tmp_path, monkeypatch):
    monkeypatch.setenv("OVERDUB_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "out"
    for vid in ("transcribe-solo-hook@11", f"{ORACLE}@11"):
        v = variant(vid)
        ref = reference(v.task, v.made.song)
        notes = tmp_path / f"{vid}.json"
        notes.write_text(json.dumps({"time": "seconds", "parts": {
            k: [{"p": n.pitch, "t": n.onset_s, "d": n.duration_s} for n in ns] for k, ns in ref.items()}}))
        script = tmp_path / f"{vid}.sh"  # lists what the workspace holds, then hands back the true notes
        script.write_text(f'#!/bin/sh\nfind . -type f | sort > ../seen.txt\nmkdir answer && cp "{notes}" '
                          'answer/notes.json\n', encoding="utf-8")
        assert main(["eval", "--agent-cmd", f"/bin/sh {script}", "--agent-id", "t", "--tasks", vid,
                     "--out", str(out / vid)]) == 0
        rec = json.loads((out / vid / vid / "0" / "result.json").read_text(encoding="utf-8"))
        assert (rec["status"], rec["score"], rec["given"]) == ("scored", 1.0, v.task.given), rec["reason"]
        seen = (out / vid / vid / "0" / "seen.txt").read_text(encoding="utf-8").split()
        assert seen == sorted(["./instruction.md", *(f"./{f.name}" for f in v.task.inputs)])
