"""The pytest plugin, driven with pytester on a tiny bench of two tasks.

The bench: ``edit-quantize-swing`` (loose-groove; its checks read notes, its scope gate renders the Drums) and
``write-drum-groove`` (night-shift; one short render). The submission under test is the quantize oracle's
finished song: it solves edit-quantize-swing and, scored on write-drum-groove, breaks it (the starting
song's Bass, Keys and Hook are gone). Expected values come from ``score_path``, the same scorer
``overdub score`` prints, not from a second computation here.
"""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from pytest_overdub.bench.report import result_to_dict
from pytest_overdub.bench.tasks import Bench, bundled_bench, candidate_song, score_path, start_song
from pytest_overdub.bench.variants import templates
from pytest_overdub.song.model import dumps_song
from pytest_overdub.song.submission import load_submission, submission_from_data

pytest_plugins = ["pytester"]

QUANT, DRUMS = "edit-quantize-swing", "write-drum-groove"
#: Load the plugin by name unless its entry point (an installed package) already does.
PLUGIN = () if any(ep.name == "overdub" for ep in entry_points(group="pytest11")) else ("-p", "pytest_overdub.plugin")


def _make_bench(root: Path, task_ids: tuple[str, ...] = (QUANT, DRUMS)) -> Bench:
    src = bundled_bench()
    for name in ("tasks", "songs", "oracles", "near_misses"):
        (root / name).mkdir(exist_ok=True)
    for tid in task_ids:
        task = src.task(tid)
        shutil.copy(src.tasks_dir / f"{tid}.json", root / "tasks")
        shutil.copy(src.root / "songs" / f"{task.song}.json", root / "songs")
        shutil.copy(src.oracle_path(tid), root / "oracles")
        for p in src.near_miss_paths(tid):
            shutil.copy(p, root / "near_misses")
    return Bench(root)


@pytest.fixture(scope="module", autouse=True)
def _warm_scorer() -> None:
    """Score once in this process before any in-process pytester run.

    pytester restores ``sys.modules`` after each inner run; numpy's C extension cannot be imported twice in
    one process, so the scorer's imports must already be here (this also warms the stem cache).
    """
    src = bundled_bench()
    for tid in (QUANT, DRUMS):
        score_path(src.task(tid), src.oracle_path(tid), bench=src)


@pytest.fixture
def bench(pytester: pytest.Pytester) -> Bench:
    return _make_bench(pytester.path)


@pytest.fixture
def solved_song(bench: Bench, pytester: pytest.Pytester) -> Path:
    """The quantize oracle's finished song, as a whole-song submission."""
    start = start_song(bench.task(QUANT), bench=bench)
    oracle = submission_from_data(json.loads(bench.oracle_path(QUANT).read_text())["ops"])
    path = pytester.path / "answer.json"
    path.write_text(dumps_song(candidate_song(start, oracle)), encoding="utf-8")
    return path


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest(*PLUGIN, "-p", "no:cacheprovider", *args)


def _outcomes(result: pytest.RunResult) -> dict[str, str]:
    """node id -> PASSED/FAILED from ``-rA`` short summary lines."""
    out = {}
    for line in result.outlines:
        for word in ("PASSED", "FAILED", "ERROR"):
            if line.startswith(word + " "):
                out[line.split(" ")[1]] = word
    return out


def test_solves_one_task_breaks_another(pytester, bench, solved_song):
    report = pytester.path / "report.json"
    junit = pytester.path / "junit.xml"
    result = _run(pytester, f"--overdub-submission={solved_song}", f"--overdub-report={report}",
                  f"--junitxml={junit}", "-rA")
    want = {tid: score_path(bench.task(tid), solved_song, bench=bench) for tid in (QUANT, DRUMS)}
    assert want[QUANT].score >= 0.9 and want[DRUMS].score < 0.9  # the premise of this test
    outcomes = _outcomes(result)
    for tid, res in want.items():
        for c in res.checks:
            node = f"tasks/{tid}.json::{tid}::{c.id}"
            assert outcomes[node] == ("PASSED" if c.score >= 1 else "FAILED"), node
        assert outcomes[f"tasks/{tid}.json::{tid}::score"] == ("PASSED" if res.score >= 0.9 else "FAILED")
    assert result.ret == pytest.ExitCode.TESTS_FAILED

    data = json.loads(report.read_text())
    assert data["bench_version"] == "overdub-bench/1"
    assert data["submission"]["sha256"] == load_submission(solved_song).sha256
    assert data["mode"] == "submission" and data["pass_line"] == 0.9
    by_id = {t["id"]: t for t in data["tasks"]}
    assert set(by_id) == {QUANT, DRUMS}
    for tid, res in want.items():
        expected = result_to_dict(res)
        assert by_id[tid]["score"] == res.score
        assert by_id[tid]["passed"] is (res.score >= 0.9)
        assert by_id[tid]["checks"] == list(expected["checks"])
        assert by_id[tid]["grader_hash"] == res.grader_hash
        assert by_id[tid]["warnings"] == list(res.warnings)
        assert by_id[tid]["confinement"] is expected["confinement"] is None  # no song-defined device
    assert data["mean"] == round((want[QUANT].score + want[DRUMS].score) / 2, 3)

    # the failure explains itself: the check's line, the task score, the submission
    broken = next(c for c in want[DRUMS].checks if c.score < 1 and not c.error)
    text = result.stdout.str()
    assert broken.line() in text
    assert f"task {DRUMS} scores {want[DRUMS].score:.3f} (pass line 0.9)" in text
    assert f"submission: {solved_song}" in text
    assert "Traceback" not in text and "raise OverdubFailure" not in text
    # the terminal summary table
    result.stdout.fnmatch_lines([f"{QUANT}*{want[QUANT].score:.3f}  pass", "mean*over 2 task(s)"])

    # junit: one testcase per check (plus clean, scope and score), each with value/target/score properties
    root = ET.parse(junit).getroot()
    cases = root.iter("testcase")
    names = {}
    for case in cases:
        props = {p.get("name"): p.get("value") for p in case.iter("property")}
        names[(case.get("classname"), case.get("name"))] = props
    for tid, res in want.items():
        for c in res.checks:
            props = names[(f"tasks.{tid}.json.{tid}", c.id)]
            assert float(props["score"]) == c.score
            assert json.loads(props["target"]) == result_to_dict(res)["checks"][res.checks.index(c)]["target"]
            assert "value" in props
    assert len(names) == sum(len(r.checks) + 1 for r in want.values())


def test_k_selects_a_task_or_a_check_and_m_selects_gates(pytester, bench):
    sub = pytester.path / "ops.json"
    sub.write_text("[]", encoding="utf-8")
    res = _run(pytester, f"--overdub-submission={sub}", "--collect-only", "-q", "-k", QUANT)
    got = [line for line in res.outlines if "::" in line]
    assert got == [f"tasks/{QUANT}.json::{QUANT}::{c}" for c in
                   ("tight", "kept", "swing", "voiced", "bass", "clean", "scope", "score")]
    res = _run(pytester, f"--overdub-submission={sub}", "--collect-only", "-q", "-k", "backbeat")
    assert [line for line in res.outlines if "::" in line] == [f"tasks/{DRUMS}.json::{DRUMS}::backbeat"]
    res = _run(pytester, f"--overdub-submission={sub}", "--collect-only", "-q", "-m", "gate")
    gates = sorted(line for line in res.outlines if "::" in line)
    assert gates == sorted([f"tasks/{DRUMS}.json::{DRUMS}::{c}"
                            for c in ("kick", "backbeat", "busy", "heard", "voiced", "others", "clean", "scope")]
                           + [f"tasks/{QUANT}.json::{QUANT}::{c}" for c in ("tight", "kept", "voiced", "bass", "clean", "scope")])
    res = _run(pytester, f"--overdub-submission={sub}", "--collect-only", "-q", "-m", "editing")
    assert len([line for line in res.outlines if "::" in line]) == 8


def test_pass_line(pytester, bench, solved_song):
    task = bench.task(DRUMS)
    score = score_path(task, solved_song, bench=bench).score
    res = _run(pytester, f"--overdub-submission={solved_song}", "-k", f"{DRUMS} and score", "-rA",
               f"--overdub-pass={score}")
    res.assert_outcomes(passed=1)
    res = _run(pytester, f"--overdub-submission={solved_song}", "-k", f"{DRUMS} and score",
               f"--overdub-pass={min(1.0, score + 0.001)}")
    res.assert_outcomes(failed=1)
    res.stdout.fnmatch_lines([f"{DRUMS} scores {score:.3f}, under the pass line *"])
    res = _run(pytester, f"--overdub-submission={solved_song}", "--overdub-pass=1.5")
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    res.stderr.fnmatch_lines(["*--overdub-pass=1.5: want a task score between 0 and 1*"])


@pytest.mark.parametrize("content, message", [
    ("{not json", "*not valid JSON: Expecting property name enclosed in double quotes at line 1, column 2*"),
    (None, "*no such file*"),
    ('{"tracks": 3}', "*not a submission (an object with keys tracks); accepted forms:*"),
])
def test_bad_submission_is_one_usage_error(pytester, bench, content, message):
    path = pytester.path / "bad.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    res = _run(pytester, f"--overdub-submission={path}")
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    res.stderr.fnmatch_lines([f"ERROR: --overdub-submission={path}: {message}"])
    assert "Traceback" not in res.stderr.str()


def test_refused_submission_says_its_error_once_per_task(pytester, bench):
    path = pytester.path / "nobody.json"
    path.write_text(json.dumps([{"type": "track.set", "track": "Nobody", "patch": {"gain": -3}}]), encoding="utf-8")
    report = pytester.path / "report.json"
    res = _run(pytester, f"--overdub-submission={path}", "-k", QUANT, f"--overdub-report={report}")
    res.assert_outcomes(failed=8)
    text = res.stdout.str()
    first = f"tasks/{QUANT}.json::{QUANT}::tight"
    assert text.count('track = "Nobody"') == 1 and text.count("submission refused: transaction 0") == 1
    assert "tight: not scored: the submission was refused\n" in text
    for item in ("kept", "swing", "voiced", "bass", "clean", "scope", "score"):
        assert f"{item}: not scored: the submission was refused (see {first})" in text
    assert "NaN" not in text and "Traceback" not in text

    def refuse(name):
        raise AssertionError(f"{name} in the report")

    (task,) = json.loads(report.read_text(), parse_constant=refuse)["tasks"]
    assert task["score"] == 0.0 and task["error"].startswith("submission refused")
    assert [c["value"] for c in task["checks"]] == [None] * 7
    assert all(c["error"] == task["error"] for c in task["checks"])


def test_task_that_cannot_be_scored_says_why_once(pytester, bench):
    (pytester.path / "songs" / "loose-groove.json").unlink()
    sub = pytester.path / "ops.json"
    sub.write_text("[]", encoding="utf-8")
    report = pytester.path / "report.json"
    res = _run(pytester, f"--overdub-submission={sub}", "-k", QUANT, f"--overdub-report={report}")
    res.assert_outcomes(failed=8)
    text = res.stdout.str()
    assert text.count("song 'loose-groove': no file") == 1
    assert text.count(f"not scored: the task could not be scored (see tasks/{QUANT}.json::{QUANT}::tight)") == 7
    res.stdout.fnmatch_lines([f"{QUANT}*-  (not scored)"])
    (task,) = json.loads(report.read_text())["tasks"]
    assert task["score"] is None and "song 'loose-groove': no file" in task["error"]


@pytest.mark.parametrize("where, message", [
    ("out", "out is a folder; want a JSON report file ending in .json"),
    ("missing/report.json", "missing/report.json: the folder missing does not exist"),
    ("out/report.txt", "out/report.txt has extension '.txt'; want a JSON report file ending in .json"),
])
def test_report_path_is_checked_before_anything_is_scored(pytester, bench, solved_song, where, message):
    (pytester.path / "out").mkdir()
    res = _run(pytester, f"--overdub-submission={solved_song}", f"--overdub-report={where}")
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    assert res.stderr.lines[0] == f"ERROR: --overdub-report={where}: {message}"
    assert "Traceback" not in res.stderr.str() and "collected" not in res.stdout.str()


@pytest.mark.parametrize("args, message", [
    (("--overdub-submission=",), "--overdub-submission is empty; want a submission file"),
    (("--overdub-tasks=",), "--overdub-tasks is empty; want a tasks folder"),
    (("--overdub-self-check", "--overdub-report="), "--overdub-report is empty; want a JSON report file"),
    (("--overdub-submission=ops.json", "--overdub-self-check"),
     "--overdub-self-check scores the bench's own answers, --overdub-submission scores one answer; give one of them"),
    (("--overdub-submission=ops.json", "--overdub-report=./ops.json"),
     "--overdub-report=./ops.json would overwrite the submission; want another file"),
])
def test_options_that_cannot_mean_what_was_asked(pytester, bench, args, message):
    (pytester.path / "ops.json").write_text("[]", encoding="utf-8")
    res = _run(pytester, *args)
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    assert res.stderr.lines[0] == f"ERROR: {message}"


def test_a_report_with_nothing_to_report_on(pytester):
    pytester.makepyfile(test_x="def test_x():\n    pass\n")
    res = _run(pytester, "--overdub-report=report.json")
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    assert res.stderr.lines[0].startswith("ERROR: --overdub-report: nothing here to report on; give "
                                          "--overdub-submission=PATH, --overdub-self-check or --overdub-tasks=DIR")


def test_report_that_cannot_be_written_at_the_end_keeps_the_summary(pytester, bench, solved_song):
    (pytester.path / "out").mkdir()
    pytester.makeconftest("""
        import shutil, pytest

        @pytest.hookimpl(tryfirst=True)
        def pytest_sessionfinish(session):
            shutil.rmtree("out")  # the report's folder goes away while the tasks are scored
    """)
    res = _run(pytester, f"--overdub-submission={solved_song}", "--overdub-report=out/report.json", "-k", QUANT)
    res.stdout.fnmatch_lines([f"overdub: cannot write the report {pytester.path}/out/report.json: "
                              "No such file or directory", f"{QUANT}*pass", "*8 passed*"])
    assert res.ret == pytest.ExitCode.INTERNAL_ERROR
    assert "Traceback" not in res.stdout.str() + res.stderr.str()


def test_unknown_task_in_k(pytester, bench):
    sub = pytester.path / "ops.json"
    sub.write_text("[]", encoding="utf-8")
    res = _run(pytester, f"--overdub-submission={sub}", "-k", "no-such-task")
    assert res.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    res.stdout.fnmatch_lines([f"-k 'no-such-task' matched no task or check in * (tasks: {QUANT}, {DRUMS})"])


def test_task_file_with_a_bad_check_is_one_collection_error(pytester, bench):
    data = json.loads((pytester.path / "tasks" / f"{QUANT}.json").read_text())
    data["checks"][0]["kind"] = "loudnessish"
    (pytester.path / "tasks" / f"{QUANT}.json").write_text(json.dumps(data), encoding="utf-8")
    sub = pytester.path / "ops.json"
    sub.write_text("[]", encoding="utf-8")
    res = _run(pytester, f"--overdub-submission={sub}", "--collect-only", "-q")
    assert res.ret == pytest.ExitCode.INTERRUPTED
    res.stdout.fnmatch_lines([f"*ERROR collecting tasks/{QUANT}.json*", "*loudnessish*"])
    assert "Traceback" not in res.stdout.str()
    # the other task still collects, and runs with --continue-on-collection-errors
    assert len([line for line in res.outlines if line.startswith(f"tasks/{DRUMS}.json::")]) == 11


def test_self_check_items_and_the_bench_rule(pytester, bench):
    res = _run(pytester, "--collect-only", "-q")  # the rootdir is a bench checkout: self-check by default
    drawn = sorted({line.split("::")[0] for line in res.outlines if line.startswith("tasks/") and "@" in line})
    assert len(drawn) == 5  # the default draw of 5 variants, from this bench's two templates only
    assert all(f.startswith((f"tasks/{QUANT}@", f"tasks/{DRUMS}@")) for f in drawn), drawn
    res = _run(pytester, "--collect-only", "-q", "--overdub-variants=0")
    got = [line for line in res.outlines if "::" in line]
    assert got == [
        "tasks::bench",
        f"tasks/{QUANT}.json::{QUANT}::oracle", f"tasks/{QUANT}.json::{QUANT}::baseline",
        f"tasks/{QUANT}.json::{QUANT}::near-straight", f"tasks/{QUANT}.json::{QUANT}::repeat",
        f"tasks/{DRUMS}.json::{DRUMS}::oracle", f"tasks/{DRUMS}.json::{DRUMS}::baseline",
        f"tasks/{DRUMS}.json::{DRUMS}::near-four-on-floor", f"tasks/{DRUMS}.json::{DRUMS}::repeat",
    ]
    report = pytester.path / "self.json"
    res = _run(pytester, "-k", f"bench or ({QUANT} and (oracle or baseline))", f"--overdub-report={report}",
               "--overdub-variants=0")
    res.assert_outcomes(passed=2, failed=1)
    res.stdout.fnmatch_lines(["the bench is not valid:", "  2 tasks (want at least 12)"])
    data = json.loads(report.read_text())
    assert data["mode"] == "self-check" and data["bench"]["ok"] is False
    rules = {r["rule"]: r for r in data["tasks"][0]["rules"]}
    assert rules["oracle"]["ok"] and rules["oracle"]["score"] >= 0.9
    assert rules["baseline"]["ok"] and rules["baseline"]["score"] < 0.5


def test_self_check_has_an_item_per_alternative_and_cheat_named_for_its_file(pytester, bench):
    shutil.copy(bench.oracle_path(QUANT), bench.root / "oracles" / f"{QUANT}.alt-again.json")
    shutil.copy(bench.near_miss_paths(QUANT)[0], bench.root / "near_misses" / f"{QUANT}.cheat-straight.json")
    res = _run(pytester, "--collect-only", "-q", "-k", QUANT, "--overdub-variants=0")
    got = [line.split("::")[-1] for line in res.outlines if "::" in line]
    assert got == ["oracle", "baseline", "alt-again", "near-straight", "cheat-straight", "repeat"]
    res = _run(pytester, "-k", "alt- or cheat-", "--overdub-trust-kernels", "--overdub-variants=0")
    res.assert_outcomes(passed=2)


def test_checkout_runs_testpaths_and_self_check_but_explicit_args_only_those(pytester, bench):
    pytester.makeini("[pytest]\ntestpaths = tests\n")
    (pytester.path / "tests").mkdir()
    (pytester.path / "tests" / "test_a.py").write_text("def test_a():\n    assert 1 + 1 == 2\n")
    res = _run(pytester, "--collect-only", "-q", "--overdub-variants=0")
    got = [line for line in res.outlines if "::" in line]
    assert got[0] == "tests/test_a.py::test_a" and "tasks::bench" in got and len(got) == 10
    res = _run(pytester, "--collect-only", "-q", "tests/test_a.py")
    assert [line for line in res.outlines if "::" in line] == ["tests/test_a.py::test_a"]


def test_an_unrelated_project_collects_nothing_from_the_plugin(pytester):
    pytester.makepyfile(test_x="def test_x():\n    pass\n")
    (pytester.path / "tasks").mkdir()  # a tasks/ that is not a bench (no songs/, no oracles/)
    (pytester.path / "tasks" / "thing.json").write_text("{}")
    res = _run(pytester, "--collect-only", "-q")
    assert [line for line in res.outlines if "::" in line] == ["test_x.py::test_x"]
    # on purpose: the bundled self-check (its task files, and with --overdub-variants=1 one variant per
    # template of a published task; collection only: a template of no published task, such as an oracle run,
    # is run by its ids alone)
    shutil.rmtree(pytester.path / "tasks")
    res = _run(pytester, "--collect-only", "-q", "--overdub-self-check", "--overdub-variants=1", "-k", "oracle")
    n_tasks = len(bundled_bench().task_ids())
    n_templates = len(set(templates()) & set(bundled_bench().task_ids()))
    oracles = [line for line in res.outlines if line.endswith("::oracle")]
    assert (sum("@" not in o for o in oracles), sum("@" in o for o in oracles)) == (n_tasks, n_templates)


def test_xdist_report_equals_serial_apart_from_timings(pytester, bench, solved_song, monkeypatch):
    pytest.importorskip("xdist")
    if PLUGIN:  # not installed: let the child processes import the package from this checkout
        import pytest_overdub

        monkeypatch.setenv("PYTHONPATH", str(Path(pytest_overdub.__file__).parent.parent))
    reports = []
    for extra in ((), ("-n", "2", "-v")):
        path = pytester.path / f"report{len(reports)}.json"
        res = pytester.runpytest_subprocess(*PLUGIN, "-p", "no:cacheprovider", f"--overdub-submission={solved_song}",
                                            f"--overdub-report={path}", *extra)
        assert res.ret == pytest.ExitCode.TESTS_FAILED, res.stdout.str()[-2000:]
        if extra:
            res.stdout.fnmatch_lines(["*scheduling tests via LoadScopeScheduling*"])
        reports.append(json.loads(path.read_text()))
    for rep in reports:
        for task in rep["tasks"]:
            assert task.pop("timings")["seconds"] >= 0
    assert reports[0] == reports[1]
    assert [t["id"] for t in reports[0]["tasks"]] == [QUANT, DRUMS]


def test_tasks_dir_from_the_ini_option_or_the_command_line(pytester, bench):
    (pytester.path / "tasks").rename(pytester.path / "mytasks")
    sub = pytester.path / "ops.json"
    sub.write_text("[]", encoding="utf-8")
    pytester.makeini("[pytest]\noverdub_tasks = mytasks\n")
    res = _run(pytester, f"--overdub-submission={sub}", "--collect-only", "-q", "-k", "kept")
    assert [line for line in res.outlines if "::" in line] == [f"mytasks/{QUANT}.json::{QUANT}::kept"]
    res = _run(pytester, f"--overdub-submission={sub}", "--overdub-tasks=nowhere")
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    res.stderr.fnmatch_lines(["*--overdub-tasks=nowhere: * is not a directory of task files*"])


def test_a_folder_of_answers_scores_each_task_on_its_own(pytester, bench):
    answers = pytester.path / "answers"
    answers.mkdir()
    shutil.copy(bench.oracle_path(QUANT), answers / f"{QUANT}.json")
    (answers / f"{DRUMS}.json").write_text('{"tracks": 3}', encoding="utf-8")
    report = pytester.path / "report.json"
    res = _run(pytester, f"--overdub-submission={answers}", f"--overdub-report={report}", "-rA")
    outcomes = _outcomes(res)
    assert outcomes[f"tasks/{QUANT}.json::{QUANT}::score"] == "PASSED"
    assert outcomes[f"tasks/{DRUMS}.json::{DRUMS}::score"] == "FAILED"  # its own garbage, not QUANT's oracle
    res.stdout.fnmatch_lines([f"*{answers / DRUMS}.json: not a submission (an object with keys tracks)*"])
    by_id = {t["id"]: t for t in json.loads(report.read_text())["tasks"]}
    want = score_path(bench.task(QUANT), answers / f"{QUANT}.json", bench=bench)
    assert by_id[QUANT]["score"] == want.score >= 0.9
    assert by_id[QUANT]["submission"] == {"path": str(answers / f"{QUANT}.json"),
                                          "sha256": load_submission(answers / f"{QUANT}.json").sha256}


def test_a_task_without_an_answer_in_the_folder_is_skipped_naming_the_file(pytester, bench):
    answers = pytester.path / "answers"
    answers.mkdir()
    shutil.copy(bench.oracle_path(QUANT), answers / f"{QUANT}.json")
    res = _run(pytester, f"--overdub-submission={answers}", "-k", DRUMS, "-rs", "--overdub-variants=0")
    res.assert_outcomes(skipped=1)
    res.stdout.fnmatch_lines([f"SKIPPED * no answer for task {DRUMS}: no file {answers / DRUMS}.json"])


def test_a_notes_answer_scores_the_transcription_tasks_and_not_the_song_tasks(pytester, bench):
    """A MIDI answer (a transcription answer) given as the submission: the transcription task reads it for
    its parts and scores it; a song task says once it cannot be scored from notes; weight-0 figures are
    shown, never failed."""
    import mido

    src = bundled_bench()
    hook = "transcribe-solo-hook"
    for name, path in (("tasks", src.tasks_dir / f"{hook}.json"), ("songs", src.root / "songs" / "night-shift.json"),
                       ("oracles", src.oracle_path(hook))):
        shutil.copy(path, pytester.path / name)
    mid = mido.MidiFile(type=0, ticks_per_beat=480)  # the hook's first note: E5 for a beat at 92 bpm
    mid.tracks.append(mido.MidiTrack([mido.MetaMessage("track_name", name="hook"),
                                      mido.MetaMessage("set_tempo", tempo=mido.bpm2tempo(92)),
                                      mido.Message("note_on", note=76, velocity=90, time=0),
                                      mido.Message("note_off", note=76, velocity=0, time=480)]))
    answer = pytester.path / "answer.mid"
    mid.save(str(answer))
    report = pytester.path / "report.json"
    result = _run(pytester, f"--overdub-submission={answer}", f"--overdub-report={report}", "-rA")
    outcomes = _outcomes(result)
    node = f"tasks/{hook}.json::{hook}::"
    # 1 of 38 notes: precision 1 (shown, passes), recall 1/38 (shown, weight 0: passes), F1 and gate fail
    assert {k: outcomes[node + k] for k in ("precision-hook", "recall-hook", "f1-hook", "gate-hook", "score")} == {
        "precision-hook": "PASSED", "recall-hook": "PASSED", "f1-hook": "FAILED", "gate-hook": "FAILED",
        "score": "FAILED"}
    assert node + "clean" not in outcomes and node + "scope" not in outcomes  # no house gates
    assert outcomes[f"tasks/{QUANT}.json::{QUANT}::score"] == "FAILED"
    assert f"holds notes (a transcription answer); {QUANT} takes ops or a song" in result.stdout.str()
    data = json.loads(report.read_text())
    f1 = next(c for t in data["tasks"] if t["id"] == hook for c in t["checks"] if c["id"] == "f1-hook")
    assert f1["value"] == pytest.approx(2 / 39)  # 2PR/(P+R) with P = 1, R = 1/38


def test_a_folder_of_answers_skips_a_transcription_task_without_notes_and_scores_one_with_them(pytester, bench):
    src = bundled_bench()
    hook = "transcribe-solo-hook"
    for name, path in (("tasks", src.tasks_dir / f"{hook}.json"), ("songs", src.root / "songs" / "night-shift.json"),
                       ("oracles", src.oracle_path(hook))):
        shutil.copy(path, pytester.path / name)
    answers = pytester.path / "answers"
    answers.mkdir()
    shutil.copy(bench.oracle_path(QUANT), answers / f"{QUANT}.json")
    skipped = _run(pytester, f"--overdub-submission={answers}", "-k", hook, "-rs")
    skipped.stdout.fnmatch_lines([f"SKIPPED * no answer for task {hook}: *"])
    (answers / hook).mkdir()  # DIR/<task-id>/ holding notes.json: the task's answer
    (answers / hook / "notes.json").write_text(
        '{"time": "seconds", "parts": {"hook": [{"p": 76, "t": 0.0, "d": 0.5}]}}', encoding="utf-8")
    scored = _outcomes(_run(pytester, f"--overdub-submission={answers}", "-k", hook, "-rA"))
    assert scored[f"tasks/{hook}.json::{hook}::score"] == "FAILED"  # one note of many: scored, not skipped
