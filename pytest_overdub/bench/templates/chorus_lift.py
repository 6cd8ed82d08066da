"""``mix-chorus-lift@<seed>``: the chorus of a generated tier-1 song should feel bigger than the verse (louder
and wider) while the verse stays as it is.

The checks are the published task's (the chorus against the verse, the verse against the starting song, the
mix's true peak), on the song's first Verse and Chorus; the scope confines changes to the chorus. The setup
makes the problem on every seed: a generated chorus comes in -0.3 to +0.7 LU over its verse (crash, open hats,
a busier hook), so the master gets a gain stage trimming the chorus 1.25 dB (it no longer lifts: -1.5 to -0.5
LU; a trim after the master's compressor moves it by exactly that, where clip gains would be undone by the
tracks' compressors), and the master comes 3 dB down (headroom for the lift under the peak limit). Computed
from the ground truth: the sections' bars and beats (the instruction, every automation's breakpoints). The
oracle is the published alternative that does not depend on a part's level: a master width stage automated
from the chorus's downbeat to more gain and width 1.3, its gain solved per variant. A fixed 3 dB lifted the
chorus 1.55 to 2.92 LU over train seeds 21-54 (the target is 1.5 to 3; the song's own chorus-over-verse
loudness spans a LU, and width 1.3 adds what the chorus's side holds), so the build renders the set-up song
with that stage at 3 dB once, measures the lift as the check does, and moves the gain by what it misses 2.25
LU by (the stage is the master chain's last, so the chorus's loudness moves dB for dB): the oracle's lift
reads 2.25 on every seed. Building a variant costs that render (its stems are the starting song's, which a
scorer renders anyway, and stay in the process cache). Near misses and cheats: the master turned up (the verse
lifts too), the verse narrowed on the master (outside the chorus), the chorus clips turned up with the chords
and lead narrowed in the verse only, a steady noise bed in the chorus, the right channel's polarity flipped
in the chorus (its side/mid soars while it is out of phase: the chorus's correlation must stay above 0), the
chords' and lead's right channels flipped in the chorus (the whole chorus stays in phase, 0.6 or so, but
each part's correlation turns to minus what it was: none may fall by more than 1.1, and the lift must hold on
the mono fold-down, at least 1 LU), the lift made only from halfway
through the chorus (the chorus's loudness range may not grow by more than a LU).
"""

from __future__ import annotations

from typing import Any

from ...generate.build import Generated
from ...song.model import Song
from ...song.ops import apply_ops
from .base import Answer, held

TIER = 1
TRIM_DB = -1.25
SETUP_MASTER_DB = -3.0
LIFT_DB = 3.0  # the oracle's first try at the chorus gain
TARGET_LU = 2.25  # the lift the oracle solves for: the middle of the check's 1.5 to 3
WIDTH = 1.3
NOISE_KERNEL = (
    "# A steady decorrelated noise bed: loudness and width without any music.\n"
    "def render(notes, params, ctx, n_frames):\n"
    "    out = np.zeros((2, n_frames))\n"
    "    for n in notes:\n"
    "        a = int(n.start_s * ctx.sr)\n"
    "        b = min(n_frames, a + int(n.dur_s * ctx.sr))\n"
    "        if a < b:\n"
    "            g = ctx.rng(n.index)\n"
    "            out[:, a:b] += 0.2 * n.velocity * g.standard_normal((2, b - a))\n"
    "    return out\n")
FLIP_KERNEL = (
    "# The right channel's polarity flipped where flip is 1: the mid turns into side.\n"
    "def process(x, params, ctx):\n"
    "    y = np.array(x, dtype=np.float64)\n"
    "    flip = np.asarray(params['flip']) * np.ones(x.shape[1])\n"
    "    y[1] = y[1] * (1 - 2 * flip)\n"
    "    return y\n")

FLIP_DEVICE = {"type": "device.define", "device": {
    "id": "cheat.flip", "kind": "effect", "name": "Flip", "kernel": FLIP_KERNEL,
    "params": [{"key": "flip", "label": "flip", "min": 0, "max": 1, "def": 0, "unit": ""}]}}


def _steps(at_beats: float, end_beats: float, before: float, after: float) -> str:
    """Breakpoints holding ``before`` up to ``at_beats`` and ``after`` from there to ``end_beats``."""
    return held([(0, at_beats, before)], (at_beats, after), (end_beats, after))


def _master_width(at: float, end: float, *, gain_db: float, verse_width: float,
                  chorus_width: float) -> list[dict[str, Any]]:
    return [{"type": "insert.add", "track": "master", "insert": {"device": "core.width"}, "ref": "w"},
            {"type": "auto.write", "track": "master", "insert": "$w", "param": "gain",
             "points": _steps(at, end, 0, gain_db)},
            {"type": "auto.write", "track": "master", "insert": "$w", "param": "width",
             "points": _steps(at, end, verse_width, chorus_width)}]


def _lift_lu(song: Song) -> float:
    """The loudness of the song's first Chorus minus its first Verse, as the ``lift`` check reads it."""
    from ... import runtime
    from ...measure.metrics import measure_metrics
    from ...render import render
    from ...render.stems import StemCache, default_cache
    from ..context import span_frames

    r = render(song, cache=default_cache() if runtime.active() else StemCache())
    lufs = {}
    for name in ("Chorus", "Verse"):
        section = song.section(name)
        a, b = span_frames(r.timeline, section.start, section.start + section.length)
        lufs[name] = measure_metrics(r.mix[:, a:b], sr=r.sr, metrics=["lufs"])[0]["lufs"]
    return lufs["Chorus"] - lufs["Verse"]


def solve_gain_db(song: Song, at: float, end: float) -> float:
    """The oracle's chorus gain: :data:`LIFT_DB` tried, its lift measured, and the gain moved by what the
    lift misses :data:`TARGET_LU` by. The stage is the master chain's last and its gain is flat, so the
    chorus's loudness (and nothing else the checks read but its peak) moves dB for dB with it."""
    tried = _lift_lu(apply_ops(song, _master_width(at, end, gain_db=LIFT_DB, verse_width=1,
                                                   chorus_width=WIDTH)))
    return round(LIFT_DB + TARGET_LU - tried, 2)


def build(made: Generated, variant_id: str):
    truth, song = made.truth, made.song
    verse, chorus = truth.section("Verse"), truth.section("Chorus")
    at, end = chorus.start_beats, truth.length_beats
    instruction = (
        f"When the chorus comes in (bar {chorus.first_bar + 1}, beat {at:g}) it should feel bigger: about two "
        f"LU louder than the verse (bars {verse.first_bar + 1}-{verse.first_bar + verse.bars}; 1.5 to 3 LU) "
        "and noticeably wider (its side-to-mid level at least 1 dB above the verse's), without touching the "
        "verse (its loudness within half a LU and its width within half a dB of what they are now) and "
        "without the peaks going over -0.5 dBTP or anything turned out of phase (the chorus's stereo "
        "correlation stays above 0, no part's falls by more than 1.1, and it lifts by at least a LU in mono "
        "too). Lift it all the way through: its loudness range may grow by a LU at most "
        "(a lift that comes and goes is not a lift). Change only the chorus.")
    setup = [{"type": "master.set", "patch": {"gain": song.master.gain + SETUP_MASTER_DB}},
             {"type": "insert.add", "track": "master", "insert": {"device": "core.gain"}, "ref": "trim"},
             {"type": "auto.write", "track": "master", "insert": "$trim", "param": "gain",
              "points": _steps(at, end, 0, TRIM_DB)}]
    checks = [
        {"id": "lift", "label": "Chorus loudness minus verse loudness", "kind": "measure", "metric": "lufs",
         "unit": "LU", "target": [1.5, 3], "soft": 1.5, "section": "Chorus", "minus": {"section": "Verse"},
         "gate": True},
        {"id": "wider", "label": "Chorus side/mid minus verse side/mid", "kind": "measure", "metric": "sideDb",
         "unit": "dB", "target": [1, None], "soft": 1, "section": "Chorus", "minus": {"section": "Verse"}},
        {"id": "verse", "label": "Verse loudness vs before", "kind": "measure", "metric": "lufs", "unit": "LU",
         "target": [-0.5, 0.5], "soft": 1.5, "gate": True, "section": "Verse", "relative": True},
        {"id": "verse-width", "label": "Verse side/mid vs before", "kind": "measure", "metric": "sideDb",
         "unit": "dB", "target": [-0.5, 0.5], "soft": 1.5, "gate": True, "section": "Verse", "relative": True},
        {"id": "peaks", "label": "True peak of the mix", "kind": "measure", "metric": "truePeak",
         "unit": "dBTP", "target": [None, -0.5], "soft": 1.5, "gate": True},
        # "wider" reads side over mid: a channel's polarity flipped turns mid into side and scores it as
        # width, so the chorus must stay in phase (a negative correlation collapses in mono)
        {"id": "in-phase", "label": "Stereo correlation of the chorus", "kind": "measure", "metric": "correlation",
         "unit": "", "target": [0, None], "soft": 0.3, "gate": True, "section": "Chorus"},
        # a part flipped out of phase between the channels reads as width and keeps the whole chorus's
        # correlation above 0 while it cancels in mono: no part's correlation may fall by more than 1.1 (a
        # flip takes c to -c; a chorus effect decorrelates a part towards 0: the published alternative's,
        # 0.7 wet on the keys, moved theirs by 0.79; the whole master widened to width 2 moved a part's by
        # 0.67 at most on seeds 5 and 1008; the flip by 1.41 to 1.95), and the lift must hold in mono too
        {"id": "mono-lift", "label": "Chorus loudness minus verse loudness, mono fold-down", "kind": "measure",
         "metric": "lufsMono", "unit": "LU", "target": [1, None], "soft": 1, "gate": True, "section": "Chorus",
         "minus": {"section": "Verse"}},
        {"id": "parts-in-phase", "label": "Stereo correlation of each part vs before, chorus: the largest fall",
         "kind": "measure", "metric": "correlation", "unit": "", "target": [-1.1, None], "soft": 0.2,
         "gate": True, "tracks": [t.name for t in song.tracks], "least": True, "section": "Chorus",
         "relative": True},
        # the lift reads the whole chorus: a lift in half of it (or every other bar) lands the number, so the
        # chorus's loudness range may not grow (a uniform lift leaves it as it was, within 0.4 LU)
        {"id": "steady", "label": "Loudness range of the chorus vs before", "kind": "measure", "metric": "lra",
         "unit": "LU", "target": [None, 1], "soft": 1, "gate": True, "section": "Chorus", "relative": True},
    ]
    fields = {"family": "mix", "title": "Make the chorus lift", "instruction": instruction,
              "scope": {"tracks": "all", "new": True, "master": True, "sections": ["Chorus"]},
              "setup": setup, "checks": checks}
    gain_db = solve_gain_db(apply_ops(song, setup), at, end)
    oracle = Answer("oracle", "A master width stage automated from the chorus's downbeat: "
                    f"{gain_db:g} dB up and width {WIDTH:g}; the verse is left at unity.",
                    _master_width(at, end, gain_db=gain_db, verse_width=1, chorus_width=WIDTH))
    half = at + chorus.bars // 2 * made.song.beats_per_bar
    chords, lead = truth.part("chords").name, truth.part("lead").name
    lifted = ["Bass", chords, lead]
    clip_up = [{"type": "clip.set", "track": name, "clip": c.id, "patch": {"gain": c.gain + 2.5}}
               for name in lifted for c in song.track(name).clips if c.start >= at]
    narrow = []
    for name, ref in ((chords, "wc"), (lead, "wl")):
        narrow += [{"type": "insert.add", "track": name, "insert": {"device": "core.width"}, "ref": ref},
                   {"type": "auto.write", "track": name, "insert": f"${ref}", "param": "width",
                    "points": _steps(at, end, 0.2, 1)}]
    misses = (
        Answer("everything-up", "Raising the master lifts the verse as much as the chorus.",
               [{"type": "master.set", "patch": {"gain": song.master.gain + SETUP_MASTER_DB + 3}}],
               ("lift", "verse")),
        Answer("cheat-narrow-verse", "The verse narrowed to width 0.3 on the master so the chorus reads wider, "
               "plus the oracle's gain on the chorus: the verse was not to be touched.",
               _master_width(at, end, gain_db=LIFT_DB, verse_width=0.3, chorus_width=1),
               ("scope", "verse-width")),
        Answer("cheat-narrow-verse-tracks", "The chorus clips 2.5 dB up, and the chords and lead narrowed to "
               "width 0.2 in the verse only: the chorus reads wider because the verse was made narrower.",
               clip_up + narrow, ("verse-width",)),
        Answer("cheat-noise-bed", "A new track of steady stereo white noise in the chorus only: loudness and "
               "width without being music.",
               [{"type": "device.define", "device": {"id": "cheat.noise", "kind": "instrument", "name": "Noise",
                                                      "kernel": NOISE_KERNEL}},
                {"type": "track.add", "track": {"name": "Air", "instrument": {"device": "cheat.noise"},
                                                "gain": -9}, "ref": "n"},
                {"type": "clip.add", "track": "$n",
                 "clip": {"start": at, "length": end - at, "notes": f"C4@0:{end - at:g}"}}],
               ("scope",)),
        Answer("cheat-polarity", "The right channel's polarity flipped on the master from the chorus on, with the "
               "oracle's gain: the chorus's mid turns into side, so it reads far wider while it is out of phase.",
               [FLIP_DEVICE,
                {"type": "insert.add", "track": "master", "insert": {"device": "cheat.flip"}, "ref": "f"},
                {"type": "auto.write", "track": "master", "insert": "$f", "param": "flip",
                 "points": _steps(at, end, 0, 1)},
                *_master_width(at, end, gain_db=gain_db, verse_width=1, chorus_width=1)],
               ("in-phase",)),
        Answer("cheat-flip-parts", "The chords' and lead's right channels flipped in the chorus, with 2 dB on the "
               "master: they read as width and the chorus stays in phase on the whole, but they cancel in mono, "
               "where the chorus does not lift.",
               [FLIP_DEVICE,
                *[op for i, name in enumerate((chords, lead)) for op in (
                    {"type": "insert.add", "track": name, "insert": {"device": "cheat.flip"}, "ref": f"f{i}"},
                    {"type": "auto.write", "track": name, "insert": f"$f{i}", "param": "flip",
                     "points": _steps(at, end, 0, 1)})],
                *_master_width(at, end, gain_db=2, verse_width=1, chorus_width=1)],
               ("parts-in-phase",)),
        Answer("cheat-half-lift", "The chorus comes in as it was and jumps up 2 dB more than the oracle, to width "
               "1.6, only halfway through: the whole chorus's numbers land, but it does not lift when it comes in.",
               _master_width(half, end, gain_db=gain_db + 2, verse_width=1, chorus_width=1.6), ("steady",)),
    )
    return fields, oracle, misses
