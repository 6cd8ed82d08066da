"""mix-darken-keys variants: a shelf automated to cut only the verse must fail wherever the verse carries
most of the keys' presence (seed 55: it scored 0.938 on the whole-song presence check alone)."""

from __future__ import annotations

from pytest_overdub.bench.variant_checks import check_variant


def test_the_verse_only_cut_fails_where_the_verse_carries_the_presence():
    rows = {rule: (ok, msg, result) for rule, ok, msg, result in check_variant("mix-darken-keys@55", trusted=True)}
    ok, msg, result = rows["cheat:verse-only"]
    assert ok, msg
    assert result.check("presence-chorus").score == 0.0
    assert rows["oracle"][0], rows["oracle"][1]
