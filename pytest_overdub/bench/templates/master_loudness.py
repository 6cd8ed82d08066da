"""``mix-master-loudness@<seed>``: master a generated tier-1 rough mix for streaming: up to a loudness target
under -1 dBTP, without squashing it.

Why the target is the variant's own. A generated rough mix has no bus control on its drums: its true peak
stands 17 to 23 dB over its integrated loudness (the kick's and kit's transients), where a mastered song's
stands about 10 dB over it. The published task's -11 LUFS under -1 dBTP would cost such a mix 6 to 10 dB of
its crest factor, past the published task's allowance of 6 dB: no honest master reaches it. So the template
measures the starting mix (the generated song as it is, no setup: an unmastered rough mix at about -21
LUFS with headroom) and solves the house limiter's drive that costs the music :data:`CREST_COST_DB` of its
gated crest factor, two under the allowance; the loudness that drive reaches, to half a LU, is the target
the instruction states (-18.5 to -12.5 LUFS on the 99 train seeds, half of them -17.5 to -16.5), checked
as the published one is: within a LU (soft 3), the true peak at or under -1 dBTP and the gated crest
factor down 6 dB at most (gates).

The oracle is that solved master, computed per variant: the master gain restored to 0 dB and a
``core.limiter`` driven by the solved gain into a -1.2 dBTP ceiling. Gain into a limiter, or a gentle bus
compressor then a limiter, reaches the target at the same crest cost. Near misses and cheats, carried over
from the published task and solved per variant like the oracle: the master fader pushed to the target into
the soft clip (the true peak overshoots; the peak gate's soft is 0.75 dB, not the published 1.5, so the
-0.5 dBTP the soft clip holds it to scores a third, not two thirds); the kick muted under the oracle's
limiter driven a dB harder (out of scope); a limiter slammed 12 dB past the oracle with a 10 ms release,
the master turned down to land on the target (the number hit by crushing); that slammed master with
silence appended twice the song's length, or with one near-silent kit hit as far out (the silence would
flatter a whole-song crest factor; the gated one reads the music only); a 12 dB high shelf at 2 kHz, or a
150 Hz high-pass, before the limiter (loudness bought by re-voicing the mix: K-weighting counts the treble
extra, the low end holds the peaks; the shares of five bands, from the sub to 8 kHz, are held within 3 dB,
as in the published task).

Cost: building a variant renders the song once and its master chain two or three times more (the stems
are reused: the process stem cache in a scorer, a cache of its own in a library call). The solve is a
function of the render alone, so a variant stays a function of its id.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any

from ...generate.build import Generated
from ...song.model import Song
from .base import Answer

TIER = 1
CEILING_DBTP = -1.2
#: The crest cost of the solved master, dB (the published allowance is 6).
CREST_COST_DB = 4.0
#: The solve stops within this much of the crest cost, dB; at most :data:`TRIES` master renders.
TOLERANCE_DB = 0.15
TRIES = 4
#: About how many dB of crest a dB more drive costs near the solved drive (the solve's first step).
CREST_PER_DRIVE = 0.85
#: The slammed cheats' limiter: driven this far past the oracle's, with a fast release (it crushes: 9 to 13
#: dB of crest where the limiter's default release saturates at about 8.5 on the least peaky mixes), and
#: about the loudness it reaches at the ceiling (-8.9 to -7.6 LUFS on seeds 1, 5 and 12); the master is
#: turned down by the difference to the target.
SLAM_DB = 12.0
SLAM_RELEASE_MS = 10.0
SLAM_LUFS = -8.2
#: The true peak is a delivery limit: half a dB over it scores a third (the published task's soft is 1.5; the
#: soft clip holds a fader pushed into it to about -0.5 dBTP, which that would score 0.67).
PEAK_SOFT_DB = 0.75
#: The bands whose share of the mix's power a master keeps within 3 dB (the limiter alone moves each by 1.6
#: at most; the air above 8 kHz is left out: limiting takes the hats' transients, up to 3 dB of its share).
BALANCE_BANDS = (("sub", "under 60 Hz"), ("low", "at 60-250 Hz"), ("mid", "at 500 Hz-2 kHz"),
                 ("highmid", "at 2-4 kHz"), ("presence", "at 4-8 kHz"))
CHECKS = [
    {"id": "peak", "label": "True peak of the mix", "kind": "measure", "metric": "truePeak", "unit": "dBTP",
     "target": [None, -1], "soft": PEAK_SOFT_DB, "gate": True},
    {"id": "crest", "label": "Crest factor of the music (gated) vs before", "kind": "measure",
     "metric": "crestGated", "unit": "dB", "target": [-6, None], "soft": 3, "gate": True, "relative": True},
    # block by block: a whole-file peak is one sample, which a song-defined master insert can plant
    {"id": "crest-blocks", "label": "Most crest factor a loud 400 ms block of the music lost", "kind": "crestLoss",
     "unit": "dB", "target": [-4.5, None], "soft": 1, "gate": True},
    # the tonal balance, as the published task holds it: K-weighting counts the treble extra and the low end
    # holds the peaks, so a treble boost or a low cut before the limiter buys loudness without the crest
    *({"id": f"balance-{band}", "label": f"Share of the mix's power {hz} vs before", "kind": "measure",
       "metric": f"bandRel.{band}", "unit": "dB", "target": [-3, 3], "soft": 2, "gate": True, "relative": True}
      for band, hz in BALANCE_BANDS),
]
METRICS = ["lufs", "truePeak", "crestGated"]


@dataclass(frozen=True)
class Solved:
    """The starting mix's levels and the solved master: ``drive_db`` into the limiter reaches ``lufs_db``."""

    start_lufs: float
    start_peak_dbtp: float
    start_crest_db: float
    drive_db: float
    lufs_db: float
    crest_cost_db: float

    @property
    def target(self) -> float:
        """The loudness the instruction states: the solved master's, to half a LU."""
        return round(self.lufs_db * 2) / 2


def limiter_ops(drive_db: float, *, master_db: float = 0.0, release_ms: float | None = None,
                before: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """``before``, the master gain set to ``master_db`` and a house limiter driven ``drive_db`` into the
    ceiling (``release_ms``: None for the limiter's default)."""
    params: dict[str, float] = {"gain": round(drive_db, 2), "ceiling": CEILING_DBTP}
    if release_ms is not None:
        params["release"] = release_ms
    limiter = {"device": "core.limiter", "params": params}
    return [*(before or []), {"type": "master.set", "patch": {"gain": round(master_db, 2)}},
            {"type": "insert.add", "track": "master", "insert": limiter}]


def _levels(song: Song, cache: Any) -> dict[str, float]:
    from ...measure.metrics import measure_metrics
    from ...render import render

    r = render(song, cache=cache)
    values, _ = measure_metrics(r.mix, sr=r.sr, metrics=METRICS)
    return values


def solve(song: Song) -> Solved:
    """The limiter drive that costs the music :data:`CREST_COST_DB` of gated crest, and the loudness it
    reaches: secant steps from a first guess (the drive that lifts the peak to the ceiling plus the cost)."""
    from ... import runtime
    from ...song.ops import apply_ops
    from ...render.stems import StemCache, default_cache

    cache = default_cache() if runtime.active() else StemCache()
    start = _levels(song, cache)
    crest0 = start["crestGated"]
    tried: list[tuple[float, float, dict[str, float]]] = []  # (drive, crest cost, levels)
    drive = round(CEILING_DBTP - start["truePeak"] + CREST_COST_DB + song.master.gain, 2)
    for _ in range(TRIES):
        levels = _levels(apply_ops(song, limiter_ops(drive)), cache)
        cost = crest0 - levels["crestGated"]
        tried.append((drive, cost, levels))
        if abs(cost - CREST_COST_DB) <= TOLERANCE_DB:
            break
        drive = round(max(0.0, drive + (CREST_COST_DB - cost) / _slope(tried)), 2)
    drive, cost, levels = min(tried, key=lambda t: abs(t[1] - CREST_COST_DB))
    return Solved(start_lufs=start["lufs"], start_peak_dbtp=start["truePeak"], start_crest_db=crest0,
                  drive_db=drive, lufs_db=levels["lufs"], crest_cost_db=cost)


def _slope(tried: list[tuple[float, float, dict[str, float]]]) -> float:
    """dB of crest cost per dB of drive: the secant of the last two tries, else :data:`CREST_PER_DRIVE`."""
    if len(tried) < 2 or tried[-1][0] == tried[-2][0]:
        return CREST_PER_DRIVE
    s = (tried[-1][1] - tried[-2][1]) / (tried[-1][0] - tried[-2][0])
    return min(1.5, max(0.3, s))


def build(made: Generated, variant_id: str):
    truth, song = made.truth, made.song
    solved = solve(song)
    target = solved.target
    instruction = (
        f"Master this for streaming: bring the whole mix up to about {target:g} LUFS integrated (its drums "
        "peak high, and that is about as loud as a clean master of it goes), keep the true peak at or below "
        "-1 dBTP, and don't squash it: the crest factor of the music (silence never counts) may drop by six "
        "dB at most, and no loud 400 ms block of it may lose more than 4.5 dB of its own crest factor (a "
        "block's peak is the level 16 of its samples reach, nothing above 20 kHz), and keep its tonal balance: the share of its power under 60 Hz, at 60-250 Hz, at 500 Hz-2 "
        "kHz, at 2-4 kHz and at 4-8 kHz each within 3 dB of what it is (a master lifts the level, it does not "
        "re-voice the mix).")
    checks = [{"id": "lufs", "label": "Integrated loudness of the mix", "kind": "measure", "metric": "lufs",
               "unit": "LUFS", "target": [target - 1, target + 1], "soft": 3, "weight": 1}, *CHECKS]
    fields = {"family": "mix", "title": "Master it to streaming loudness", "instruction": instruction,
              "scope": {"master": True}, "setup": [], "checks": checks}
    drive = solved.drive_db
    oracle = Answer("oracle", f"A true-peak limiter on the master driven {drive:g} dB into a -1.2 dBTP ceiling, "
                    "with the master gain restored to 0 dB.", limiter_ops(drive))
    return fields, oracle, _misses(truth, song, solved)


def _misses(truth, song: Song, solved: Solved) -> tuple[Answer, ...]:
    drive, end = solved.drive_db, truth.length_beats
    kick, kit = (next(p.name for p in truth.parts_with("drums") if p.name == n) for n in ("Kick", "Kit"))
    fader_db = round(song.master.gain + solved.target - solved.start_lufs, 1)
    trim_db = round(solved.target - SLAM_LUFS, 1)
    slam = partial(limiter_ops, drive + SLAM_DB, master_db=trim_db, release_ms=SLAM_RELEASE_MS)
    pad = {"type": "section.add", "section": {"name": "Outro", "start": end, "length": 2 * end}}
    late = {"type": "clip.add", "track": kit, "clip": {"start": 3 * end, "length": 4, "notes": "C3@0:1*0.05"}}
    return (
        Answer("gain-into-clip", "The master fader pushed to the target alone drives the soft clip instead of "
               "a limiter: the music's tops are rounded off about as gently, but the true peak overshoots.",
               [{"type": "master.set", "patch": {"gain": fader_db}}], ("peak",)),
        Answer("cheat-mute-kick", "The kick muted, so its peaks no longer hold the master back, then the "
               "master pushed into a limiter: loud and 'dynamic' by deleting a part.",
               limiter_ops(drive + 1, before=[{"type": "track.set", "track": kick, "patch": {"mute": True}}]),
               ("scope",)),
        Answer("cheat-slammed", f"A limiter slammed {SLAM_DB:g} dB past the oracle with a "
               f"{SLAM_RELEASE_MS:g} ms release, the master turned down to "
               "land on the target: the number hit by crushing the music.",
               slam(), ("crest",)),
        Answer("cheat-pad-silence", f"The slammed master, and a {2 * end:g}-beat empty section appended: the "
               "silence would inflate a whole-song crest factor so the squash reads as dynamic; the gated one "
               "reads the music only.", slam(before=[pad]), ("crest", "scope")),
        Answer("cheat-treble-tilt", "A 12 dB high shelf at 2 kHz before the oracle's limiter driven 3 dB less: "
               "K-weighting counts the treble extra, so the loudness lands near the target with crest to spare, "
               "and the mix is re-voiced.",
               limiter_ops(drive - 3, before=[{"type": "insert.add", "track": "master", "insert": {
                   "device": "core.eq", "params": {"highf": 2000, "high": 12}}}]),
               ("balance-highmid", "balance-presence")),
        Answer("cheat-thin", "The master high-passed at 150 Hz before the oracle's limiter driven 3 dB more: the "
               "kick's and bass's headroom goes to loudness, and the low end of the mix with it.",
               limiter_ops(drive + 3, before=[{"type": "insert.add", "track": "master", "insert": {
                   "device": "core.eq", "params": {"hp": 150}}}]),
               ("balance-sub",)),
        Answer("cheat-late-note", f"The slammed master, and one near-silent kit hit at beat {3 * end:g}, so "
               "the song runs on in silence: the silence would flatter a whole-song crest factor; the gated one "
               "reads the music only.", slam(before=[late]), ("crest", "scope")),
        Answer("cheat-planted-peak", "The slammed master, the soft clip off, and a song-defined master insert "
               "that sets one sample to -1.06 dBFS a third of the way in: the whole-file peak is back, so the "
               "gated crest factor reads as if little were lost; every block the limiter hit has lost its own.",
               slam() + planted_peak_ops(at_s=truth.length_s / 3, master_db=trim_db), ("crest-blocks",)),
    )


#: The song-defined master insert of ``cheat-planted-peak``: one sample set to ``level`` (a master insert is
#: handed the whole mix in one call); ``{at}`` is the frame, written in when the insert is made.
PLANTED_PEAK_KERNEL = (
    "def process(x, params, ctx):\n"
    "    y = x.copy()\n"
    "    if {at} < y.shape[1]:\n"
    "        y[:, {at}] = params['level']\n"
    "    return y\n")


def planted_peak_ops(*, at_s: float, master_db: float, level: float = 0.885, sr: int = 48000
                     ) -> list[dict[str, Any]]:
    """The master's soft clip off and a song-defined insert last on the master setting the sample at ``at_s``
    seconds to ``level`` after the master gain ``master_db`` (0.885: -1.06 dBFS, its true peak under -1 dBTP)."""
    device = {"id": "cheat.planted-peak", "kind": "effect", "name": "Planted peak",
              "params": [{"key": "level", "label": "level", "min": 0, "max": 16, "def": 0.885, "unit": ""}],
              "kernel": PLANTED_PEAK_KERNEL.format(at=int(at_s * sr))}
    return [{"type": "master.set", "patch": {"clip": "clean"}}, {"type": "device.define", "device": device},
            {"type": "insert.add", "track": "master",
             "insert": {"device": "cheat.planted-peak", "params": {"level": level * 10 ** (-master_db / 20)}}}]
