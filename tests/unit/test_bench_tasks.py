"""Tasks: loading with clear errors, the starting song, scoring any submission form the same way."""

import json
from pathlib import Path

import pytest

from pytest_overdub.bench.tasks import Bench, bundled_bench, load_task, score_path, score_task, start_song
from pytest_overdub.bench.validity import check_bench, scramble_new_ids
from pytest_overdub.errors import TaskError
from pytest_overdub.song.submission import submission_from_data

BENCH = bundled_bench()
TASK = BENCH.task("write-bassline")
ORACLE = json.loads(BENCH.oracle_path("write-bassline").read_text())["ops"]


def test_the_bundled_bench_is_valid():
    assert check_bench(BENCH) == []
    ids = BENCH.task_ids()
    assert len(ids) == 26
    assert len([t for t in ids if t.startswith("transcribe-")]) == 3  # tiers 1-3


def test_start_song_applies_the_setup():
    start = start_song(TASK, bench=BENCH)
    assert start.track("Bass").clips == ()  # both Bass clips removed by the house
    assert len(start.track("Keys").clips) == 2


def test_a_bad_task_file_names_the_file_and_the_json_path(tmp_path):
    data = json.loads((BENCH.tasks_dir / "write-bassline.json").read_text())
    data["checks"][1]["soft"] = -1
    data["checks"][2]["kind"] = "vibes"
    path = tmp_path / "write-bassline.json"
    path.write_text(json.dumps(data))
    with pytest.raises(TaskError) as err:
        load_task(path)
    text = str(err.value)
    assert str(path) in text and "checks[1]" in text and "soft" in text and "checks[2]" in text


def test_a_task_id_must_equal_its_file_name(tmp_path):
    path = tmp_path / "other-name.json"
    path.write_text((BENCH.tasks_dir / "write-bassline.json").read_text())
    with pytest.raises(TaskError, match="must equal the file name 'other-name'"):
        load_task(path)


def test_an_unknown_task_lists_the_known_ones():
    with pytest.raises(TaskError, match="write-bassline"):
        BENCH.task("write-basline")


def test_every_submission_form_scores_the_same():
    ops = score_task(TASK, submission_from_data(ORACLE), bench=BENCH)
    wrapped = score_task(TASK, submission_from_data({"ops": ORACLE}), bench=BENCH)
    split = score_task(TASK, submission_from_data([{"ops": ORACLE[:1]}, {"ops": ORACLE[1:]}]), bench=BENCH)
    calls = score_task(TASK, submission_from_data({"calls": [
        {"tool": "get_project", "input": {}},
        {"tool": "apply_ops", "input": {"ops": ORACLE[:1]}},
        {"name": "apply_ops", "arguments": json.dumps({"ops": ORACLE[1:]})},
    ]}), bench=BENCH)
    values = [[c.value for c in r.checks] for r in (ops, wrapped, split, calls)]
    assert ops.score == 1.0 and all(v == values[0] for v in values)


def test_a_whole_song_with_fresh_random_ids_scores_like_the_ops():
    start = start_song(TASK, bench=BENCH)
    from pytest_overdub.song.ops import apply_ops

    song = scramble_new_ids(apply_ops(start, ORACLE), start=start, seed=7)
    a = score_task(TASK, submission_from_data(ORACLE), bench=BENCH)
    b = score_task(TASK, song, bench=BENCH)
    assert [c.value for c in a.checks] == [c.value for c in b.checks]


def test_an_op_on_a_track_that_does_not_exist_is_a_failed_submission():
    bad = ORACLE + [{"type": "track.set", "track": "Nobody", "patch": {"gain": -3}}]
    r = score_task(TASK, submission_from_data(bad), bench=BENCH)
    assert r.score == 0.0 and "Nobody" in r.error and "submission refused" in r.error
    assert all(c.score == 0.0 and "Nobody" in c.error for c in r.checks)
    assert r.check("clean").gate  # the house gate is there too, failed, so every item can report it


def test_overdub_score_refuses_an_unreadable_submission_with_exit_2(tmp_path, capsys):
    from pytest_overdub.cli import main

    assert main(["score", "write-bassline", str(tmp_path / "nope.json")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_a_missing_or_malformed_file_is_a_failed_result_not_a_raise(tmp_path):
    r = score_path(TASK, tmp_path / "nope.json", bench=BENCH)
    assert r.score == 0.0 and "no such file" in r.error
    bad = tmp_path / "bad.json"
    bad.write_text("[{\"type\": ")
    assert "not valid JSON" in score_path(TASK, bad, bench=BENCH).error


def test_a_check_that_raises_keeps_its_error_and_the_others_still_score(tmp_path):
    root = tmp_path / "bench"
    for d in ("tasks", "songs", "oracles", "near_misses"):
        (root / d).mkdir(parents=True)
    (root / "songs" / "night-shift.json").write_text((BENCH.root / "songs" / "night-shift.json").read_text())
    data = json.loads((BENCH.tasks_dir / "write-bassline.json").read_text())
    count = next(c for c in data["checks"] if c["id"] == "count")
    count["section"] = "Bridge"  # no such section in the song
    count.pop("from"), count.pop("to")
    (root / "tasks" / "write-bassline.json").write_text(json.dumps(data))
    bench = Bench(root)
    r = score_task(bench.task("write-bassline"), submission_from_data(ORACLE), bench=bench)
    broken = r.check("count")
    assert broken.score == 0.0 and "Bridge" in broken.error
    assert r.check("roots").score == 1.0 and r.check("clean").score == 1.0


def test_a_task_is_in_the_train_split_unless_it_says_test(tmp_path):
    data = json.loads((BENCH.tasks_dir / "write-bassline.json").read_text())
    assert load_task(BENCH.tasks_dir / "write-bassline.json").split == "train"
    for split in ("test", "holdout"):
        path = tmp_path / "write-bassline.json"
        path.write_text(json.dumps({**data, "split": split}))
        if split == "test":
            assert load_task(path).split == "test"
        else:
            with pytest.raises(TaskError, match="split"):
                load_task(path)


def test_the_split_is_not_part_of_the_grader_hash(tmp_path):
    from pytest_overdub.bench.tasks import grader_hash

    data = json.loads((BENCH.tasks_dir / "write-bassline.json").read_text())
    path = tmp_path / "write-bassline.json"
    path.write_text(json.dumps({**data, "split": "test"}))
    held_out = load_task(path)
    assert grader_hash(held_out) == grader_hash(TASK)
    path.write_text(json.dumps({**data, "title": "Another title"}))
    assert grader_hash(load_task(path)) != grader_hash(TASK)


def test_overdub_score_takes_a_folder_of_answers_and_picks_the_tasks_own(tmp_path, capsys):
    from pytest_overdub.cli import main

    (tmp_path / "write-bassline.json").write_text(json.dumps(ORACLE))
    (tmp_path / "write-drum-groove.json").write_text("[]")
    assert main(["score", "write-bassline", str(tmp_path), "--json"]) == 0
    want = score_path(TASK, tmp_path / "write-bassline.json", bench=BENCH).score
    assert json.loads(capsys.readouterr().out)["score"] == want >= 0.9
    assert main(["score", "write-counter-melody", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "no answer for task write-counter-melody" in err and str(tmp_path / "write-counter-melody.json") in err
