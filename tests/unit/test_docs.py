"""The project documents itself in ``docs/``, and the pages cannot drift from the code.

* Code cites only the project's own pages: no reference to a spec or design file outside the repository,
  and every ``docs/<page>.md`` it names exists.
* Every link between the pages (and from the README) reaches a page that exists and, with ``#anchor``, a
  heading on it; every source file a page names exists.
* Every JSON example in ``docs/ops.md`` applies to a bench song, and every op type has its section.
* ``docs/tasks.md`` is what ``tools/make_task_docs.py`` writes from ``tasks/``, and names every task and check.
* ``docs/checks.md`` covers every check kind, ``docs/meters.md`` every metric and band.
"""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

from pytest_overdub.bench.tasks import load_task

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
CODE_DIRS = ("pytest_overdub", "tests", "bench", "tools", "examples")
# Built from pieces so this file does not match its own patterns.
FOREIGN = re.compile(r"\b" + "SP" + r"EC\b|\b" + "DES" + r"IGN\b")
DOC_REF = re.compile(r"(?<![\"'/\w])docs/([A-Za-z0-9_.-]+\.md)")  # a citation, not a path literal like "docs/x.md"
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _code_files() -> list[Path]:
    files = [p for d in CODE_DIRS for p in (ROOT / d).rglob("*.py")]
    return sorted(files + [ROOT / "conftest.py", ROOT / "setup.py"])


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = heading.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    return {_slug(m.group(1)) for m in re.finditer(r"^#+ (.+)$", text, re.M)}


def test_code_cites_no_file_outside_the_repository():
    hits = [f"{p.relative_to(ROOT)}:{i}: {line.strip()}"
            for p in _code_files()
            for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
            if FOREIGN.search(line)]
    assert hits == [], "cite a page under docs/ instead:\n" + "\n".join(hits)


def test_every_docs_page_the_code_names_exists():
    missing = [f"{p.relative_to(ROOT)}: docs/{name}"
               for p in _code_files()
               for name in DOC_REF.findall(p.read_text(encoding="utf-8"))
               if not (DOCS / name).is_file()]
    assert missing == []


@pytest.mark.parametrize("page", sorted(DOCS.glob("*.md")) + [ROOT / "README.md"], ids=lambda p: p.name)
def test_links_reach_a_page_and_a_heading(page: Path):
    broken = []
    for target in LINK.findall(page.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target):  # https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            broken.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            broken.append(f"{target}: no heading #{anchor} in {dest.name}")
    assert broken == []


def test_every_source_file_a_page_names_exists():
    paths = {m for page in DOCS.glob("*.md")
             for m in re.findall(r"`((?:pytest_overdub|tests|tools|bench)/[\w/]+\.py)`", page.read_text(encoding="utf-8"))}
    assert paths and sorted(p for p in paths if not (ROOT / p).is_file()) == []


def test_the_index_lists_every_page_and_the_readme_links_it():
    index = (DOCS / "README.md").read_text(encoding="utf-8")
    pages = {p.name for p in DOCS.glob("*.md")} - {"README.md"}
    assert {p for p in pages if f"]({p})" not in index} == set()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "](docs/README.md)" in readme and "](docs/scoring.md)" in readme


# --- ops.md ----------------------------------------------------------------------------------------

def _ops_sections() -> list[tuple[str, list[dict]]]:
    """(op type of the ``### `type` `` heading, the ops of the JSON example under it)."""
    text = (DOCS / "ops.md").read_text(encoding="utf-8")
    out = []
    for part in re.split(r"^### ", text, flags=re.M)[1:]:
        name = re.match(r"`([a-z.]+)`", part)
        blocks = re.findall(r"```json\n(.*?)```", part, re.S)
        assert name and len(blocks) == 1, f"section {part.splitlines()[0]!r}: one ```json example wanted"
        data = json.loads(blocks[0])
        out.append((name.group(1), data if isinstance(data, list) else [data]))
    return out


def test_ops_page_has_one_section_per_op():
    from pytest_overdub.song.ops import OPS

    assert sorted(name for name, _ in _ops_sections()) == sorted(OPS)


@pytest.mark.parametrize("name,ops", _ops_sections(), ids=[n for n, _ in _ops_sections()])
def test_ops_page_example_applies_to_night_shift(name: str, ops: list[dict]):
    from pytest_overdub.song.model import load_song
    from pytest_overdub.song.ops import apply_ops

    song = load_song(ROOT / "songs" / "night-shift.json")
    types = [o["type"] for o in ops]
    assert name in types
    last = len(types) - 1 - types[::-1].index(name)
    before = apply_ops(song, ops[:last]) if last else song
    apply_ops(song, ops)  # the whole example applies
    assert apply_ops(song, ops[:last + 1]) != before  # the section's own op changes something


# --- tasks.md, checks.md, meters.md ----------------------------------------------------------------

def _make_task_docs():
    spec = importlib.util.spec_from_file_location("make_task_docs", ROOT / "tools" / "make_task_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_tasks_page_is_what_the_tool_writes():
    page = (DOCS / "tasks.md").read_text(encoding="utf-8")
    assert page == _make_task_docs().page(ROOT / "tasks"), "run python3 tools/make_task_docs.py"


def test_tasks_page_names_every_task_and_check():
    page = (DOCS / "tasks.md").read_text(encoding="utf-8")
    missing = []
    for path in sorted((ROOT / "tasks").glob("*.json")):
        task = json.loads(path.read_text(encoding="utf-8"))
        section = page.split(f"### `{task['id']}`", 1)
        if len(section) < 2:
            missing.append(task["id"])
            continue
        body = section[1].split("\n### ", 1)[0]
        ids = [c["id"] for c in task["checks"]] if "checks" in task else \
            [c.id for c in load_task(path).checks]  # a transcription task's checks are derived
        missing += [f"{task['id']}::{i}" for i in ids if f"- `{i}`:" not in body]
    assert missing == []


def _documented_kinds(page: str) -> list[str]:
    """The kinds checks.md documents: its ``### `kind` `` headings and the rows of its tables whose first
    column is headed ``kind``."""
    kinds = re.findall(r"^### `([A-Za-z]+)`$", page, re.M)
    for table in re.findall(r"^\| kind \|.*\n\|[-|]+\|\n((?:\|.*\n)+)", page, re.M):
        kinds += re.findall(r"^\| `([A-Za-z]+)` \|", table, re.M)
    return kinds


def test_checks_page_documents_exactly_the_registered_kinds():
    from pytest_overdub.bench.model import CHECK_KINDS

    page = (DOCS / "checks.md").read_text(encoding="utf-8")
    documented = _documented_kinds(page)
    assert sorted(documented) == sorted(CHECK_KINDS)  # each registered kind once, and nothing else
    assert f"each of the {len(CHECK_KINDS)} check kinds" in page


def test_meters_page_covers_every_metric_and_band():
    from pytest_overdub.measure.metrics import GATED_METRICS, MORE_LOUDNESS, SCALAR_METRICS
    from pytest_overdub.measure.spectrum import BANDS

    page = (DOCS / "meters.md").read_text(encoding="utf-8")
    assert [m for m in [*SCALAR_METRICS, *GATED_METRICS, *MORE_LOUDNESS] if f"`{m}`" not in page] == []
    rows = dict(re.findall(r"^\| `([a-z]+)` \| ([0-9]+)(?:-[0-9]+| and up) \|$", page, re.M))
    assert {name: float(lo) for name, lo in rows.items()} == {name: lo for name, (lo, _) in BANDS.items()}
