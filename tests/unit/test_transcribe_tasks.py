"""The transcription tasks: their truth, their validity rules, the mix they hand out, and scoring an answer."""

import json

import pytest

from pytest_overdub.bench import validity
from pytest_overdub.bench.commands import score_main
from pytest_overdub.bench.tasks import bundled_bench, score_path, score_task
from pytest_overdub.errors import TaskError
from pytest_overdub.transcribe.matching import TimedNote
from pytest_overdub.transcribe.task import TranscriptionTask
from pytest_overdub.transcribe.truth import reference

BENCH = bundled_bench()
TASKS = [t for t in BENCH.task_ids() if t.startswith("transcribe-")]
BEAT_92 = 60 / 92


def test_the_bench_has_a_task_on_each_tier():
    assert sorted(BENCH.task(t).tier for t in TASKS) == [1, 2, 3]


def test_the_truth_is_the_songs_notes_in_seconds():
    truth = reference(BENCH.task("transcribe-solo-hook"), BENCH.song("night-shift"))
    assert list(truth) == ["hook"] and len(truth["hook"]) == 38
    # night-shift, 92 bpm: the hook opens E5 for a beat, D5 and C5 for half a beat each
    assert truth["hook"][:3] == [TimedNote(76.0, 0.0, BEAT_92), TimedNote(74.0, BEAT_92, 1.5 * BEAT_92),
                                 TimedNote(72.0, 1.5 * BEAT_92, 2 * BEAT_92)]


def test_a_bass_note_restruck_while_it_holds_is_one_note_of_the_truth():
    """night-shift's bass (core.bass, LEGATO) holds 8 of its 40 notes over a repeat of the same pitch: no
    attack is rendered there, so the truth is the 32 notes the ear can find, each held to the next."""
    song = BENCH.song("night-shift")
    bass = reference(BENCH.task("transcribe-full-band"), song)["bass"]
    assert len(sum((c.notes for c in song.track("Bass").clips), ())) == 40
    assert len(bass) == 32
    assert all(a.offset_s <= b.onset_s + 1e-9 for a, b in zip(bass, bass[1:]))
    assert all(a.pitch != b.pitch or a.offset_s < b.onset_s - 1e-9 for a, b in zip(bass, bass[1:]))


def _task(**kw):
    data = {"id": "transcribe-x", "family": "transcription", "tier": 1, "title": "t", "song": "night-shift",
            "instruction": "Write down the notes of the hook heard in this recording, please.",
            "parts": {"hook": ["Hook"]}, "gate": "hook", **kw}
    return TranscriptionTask.model_validate(data)


def test_an_excerpt_counts_from_its_start_and_cuts_notes_at_its_end():
    truth = reference(_task(**{"from": 6, "to": 9}), BENCH.song("night-shift"))["hook"]
    # hook notes starting in beats [6, 9): C5 at 6 for 2 beats, E5 at 8 for a beat (cut at 9 -> 1 beat)
    assert truth == [TimedNote(72.0, 0.0, 2 * BEAT_92), TimedNote(76.0, 2 * BEAT_92, 3 * BEAT_92)]


@pytest.mark.parametrize("kw, message", [
    ({"heard": ["Bass"]}, "parts.hook: track 'Hook' is not heard in the mix"),
    ({"parts": {"hook": ["Flute"]}}, "parts.hook: track 'Flute': no such track"),
])
def test_a_part_must_be_a_heard_track_of_the_song(kw, message):
    with pytest.raises(TaskError, match=message):
        reference(_task(**kw), BENCH.song("night-shift"))


@pytest.mark.parametrize("task_id", TASKS)
def test_the_validity_rules_hold(task_id):
    task = BENCH.task(task_id)
    oracle = validity.check_oracle(task, BENCH)
    verdicts = [oracle, validity.check_baseline(task, BENCH), validity.check_repeat(task, BENCH, first=oracle.result)]
    verdicts += [validity.check_alternative(task, p, BENCH) for p in BENCH.alternative_paths(task_id)]
    verdicts += [validity.check_near_miss(task, p, BENCH) for p in BENCH.near_miss_paths(task_id)]
    verdicts += [validity.check_cheat(task, p, BENCH) for p in BENCH.cheat_paths(task_id)]
    assert [v.message for v in verdicts if not v.ok] == []
    assert oracle.result.score == 1.0
    assert len(BENCH.cheat_paths(task_id)) >= 3 and len(BENCH.alternative_paths(task_id)) >= 3


def test_a_transcription_task_refuses_a_song_answer():
    task = BENCH.task("transcribe-solo-hook")
    r = score_task(task, BENCH.song("night-shift"), bench=BENCH)
    assert r.score == 0.0 and "answered with notes" in r.error
    assert [c.id for c in r.checks if c.kind in ("clean", "scope")] == []  # no song, no house gates


def test_overdub_score_reads_a_notes_answer(tmp_path, capsys):
    truth = reference(BENCH.task("transcribe-solo-hook"), BENCH.song("night-shift"))["hook"]
    half = [{"p": n.pitch, "t": n.onset_s, "d": n.duration_s} for n in truth[:19]]  # half the notes
    path = tmp_path / "answer.json"
    path.write_text(json.dumps({"time": "seconds", "parts": {"hook": half}}), encoding="utf-8")
    assert score_main(["transcribe-solo-hook", str(path), "--json"]) == 1  # under the pass line
    result = json.loads(capsys.readouterr().out)
    f1 = next(c for c in result["checks"] if c["id"] == "f1-hook")
    assert f1["value"] == pytest.approx(2 * 1 * 0.5 / 1.5)  # precision 1, recall 1/2
    assert result["score"] == pytest.approx(0.667)


def test_times_in_another_unit_than_stated_are_refused_in_one_line(tmp_path):
    # night-shift's hook at 92 bpm, its mix 22.37 s long (the song and its 1.5 s tail): the true notes in
    # beats, labelled seconds, put 10 of 38 notes after the mix's end; one 40 ms after it (within the
    # onset tolerance, where a careful player's note can fall) is still read
    task = BENCH.task("transcribe-solo-hook")
    truth = reference(task, BENCH.song("night-shift"))["hook"]
    beats = [{"p": n.pitch, "t": n.onset_s * 92 / 60, "d": n.duration_s} for n in truth]
    path = tmp_path / "answer.json"
    path.write_text(json.dumps({"time": "seconds", "parts": {"hook": beats}}), encoding="utf-8")
    r = score_path(task, path, bench=BENCH)
    assert r.score == 0.0 and r.error == (
        f"{path}: parts.hook: 10 of 38 notes start after the mix ends (22.37 s), the first at 24.00 s; want "
        "times from the mix's first sample in the unit stated (\"seconds\", or \"beats\" at the stated tempo): "
        "is the unit or the tempo wrong?")
    near_end = [{"p": n.pitch, "t": n.onset_s, "d": n.duration_s} for n in truth] + [{"p": 60, "t": 22.41, "d": 0.1}]
    path.write_text(json.dumps({"time": "seconds", "parts": {"hook": near_end}}), encoding="utf-8")
    r = score_path(task, path, bench=BENCH)
    assert r.error is None and r.check("precision-hook").value == pytest.approx(38 / 39)


@pytest.mark.slow
def test_the_mix_is_rendered_once_and_cached(tmp_path, monkeypatch):
    import soundfile as sf

    from pytest_overdub.transcribe.inputs import mix_wav

    monkeypatch.setenv("OVERDUB_CACHE_DIR", str(tmp_path))
    task = BENCH.task("transcribe-bass-under-drums")
    song = BENCH.song(task.song)
    path = mix_wav(task, song)
    assert path.parent == tmp_path / "audio" / "inputs"  # the audio tasks' cache
    stamp = path.stat().st_mtime_ns
    assert mix_wav(task, song) == path and path.stat().st_mtime_ns == stamp  # not rendered again
    info = sf.info(str(path))
    # loose-groove: 16 beats at 96 bpm = 10 s, plus the 1.5 s tail, at 48 kHz, stereo, 24-bit
    assert (info.samplerate, info.channels, info.frames, info.subtype) == (48000, 2, 552000, "PCM_24")
    excerpt = TranscriptionTask.model_validate({**task.model_dump(by_alias=True), "from": 4.0, "to": 12.0})
    assert sf.info(str(mix_wav(excerpt, song))).frames == 240000  # 8 beats = 5 s, cut at its end


@pytest.mark.slow
def test_overdub_start_hands_over_the_mix_and_never_the_song(tmp_path, monkeypatch, capsys):
    from pytest_overdub.bench.commands import start_main

    monkeypatch.setenv("OVERDUB_CACHE_DIR", str(tmp_path / "cache"))
    work = tmp_path / "work"
    assert start_main(["transcribe-bass-under-drums", "--out", str(work)]) == 0
    assert sorted(p.name for p in work.iterdir()) == ["INSTRUCTION.md", "mix.wav"]
    text = (work / "INSTRUCTION.md").read_text(encoding="utf-8")
    assert BENCH.task("transcribe-bass-under-drums").instruction in text and "`bass`" in text
    assert "96" not in text  # the tempo is not told
    assert start_main(["transcribe-bass-under-drums", "--out", str(tmp_path / "mix.wav")]) == 0
    assert (tmp_path / "mix.wav").read_bytes() == (work / "mix.wav").read_bytes()
    capsys.readouterr()
    assert start_main(["transcribe-bass-under-drums"]) == 0  # no --out: the cached file's path
    assert capsys.readouterr().out.strip().startswith(str(tmp_path / "cache"))


def _hook_answer(notes):
    from pytest_overdub.transcribe.answer import answer_from_data

    return answer_from_data({"time": "beats", "tempo": 92, "parts": {"hook": notes}}, parts=["hook"],
                            source="test")


def _first_hook_notes(k):
    """The first ``k`` notes of night-shift's hook in beats (E5 for a beat, D5 and C5 half a beat, ...)."""
    truth = reference(BENCH.task("transcribe-solo-hook"), BENCH.song("night-shift"))["hook"]
    return [{"p": n.pitch, "t": n.onset_s / BEAT_92, "d": n.duration_s / BEAT_92} for n in truth[:k]]


def test_a_hedged_hook_passes_the_f1_gate_and_fails_the_surplus_gate():
    """Each of the hook's 38 notes written at its pitch and an octave up: 38 of 76 notes right, F1 2/3,
    above the 0.5 F1 gate, but right minus wrong is 0: the surplus gate holds the task at 0."""
    task = BENCH.task("transcribe-solo-hook")
    notes = _first_hook_notes(38)
    hedged = notes + [dict(n, p=n["p"] + 12) for n in notes]
    r = score_task(task, _hook_answer(hedged), bench=BENCH)
    assert r.check("f1-hook").value == pytest.approx(2 / 3)
    assert r.check("gate-hook").score == 1.0
    assert r.check("surplus-hook").value == 0.0 and r.check("surplus-hook").score == 0.0
    assert r.score == 0.0


def test_an_honest_transcription_with_a_few_wrong_notes_clears_both_gates():
    """All 38 notes, 3 of them a semitone off: 35 right, 3 wrong (surplus 32), F1 35/38."""
    task = BENCH.task("transcribe-solo-hook")
    notes = _first_hook_notes(38)
    for i in (4, 17, 30):
        notes[i] = dict(notes[i], p=notes[i]["p"] + 1)
    r = score_task(task, _hook_answer(notes), bench=BENCH)
    assert r.check("surplus-hook").value == 32.0
    assert r.score == round(35 / 38, 3)  # a task score is given to 3 decimals
