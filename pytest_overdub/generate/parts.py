"""The parts of a generated song, one writer per role, each returning rows per section.

Conventions:

* A :class:`Row` is one note: MIDI pitch, ``t`` beats from its section's start (its clip's start), ``d``
  beats, velocity, its provenance ``tag`` (:mod:`.truth`) and its absolute ``bar``.
* Times are multiples of 1/4 beat and durations multiples of 1/20 beat, exact in binary or rounded to 2
  decimals; velocities are rounded to 2 decimals.
* Each writer writes a section of each distinct kind once: a repeated section (Verse 2, Chorus 2) copies
  the rows of the section it repeats, transposed by the section's ``shift`` for pitched parts.
* Strong beats (:attr:`.plan.Plan.strong_every`): every note of the bass, the chords and the lead that
  sounds on a strong beat is a tone of that beat's chord; the bass strikes the chord's root on every
  downbeat; the lead's other notes are scale tones of the section's key.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from functools import lru_cache

from .harmony import ChordSpec, KeySig
from .plan import Plan, SectionPlan

EPS = 1e-9
BASS_LO = 33  # A1: the lowest root; roots sit in A1..G#2
LEAD_LO, LEAD_HI, LEAD_CENTRE = 64, 84, 72
CHORD_LO, CHORD_HI, CHORD_CENTRE = 53, 74, 62


@dataclass(frozen=True)
class Row:
    p: int
    t: float
    d: float
    v: float
    tag: str
    bar: int


def vel(x: float) -> float:
    return round(min(max(x, 0.05), 1.0), 2)


def chord_at(plan: Plan, sec: SectionPlan, bar_in_section: int) -> ChordSpec:
    return sec.key.chord(sec.progression[bar_in_section % len(sec.progression)])


def _source(plan: Plan, sec: SectionPlan) -> SectionPlan | None:
    """The earlier section ``sec`` repeats (same kind), or None when it is the first of its kind."""
    for s in plan.sections:
        if s is sec:
            return None
        if s.chorus == sec.chorus:
            return s
    return None


def per_section(plan: Plan, write, *, pitched: bool) -> list[list[Row]]:
    """``write(sec)`` for the first section of each kind; later ones copy it (bars moved, pitch shifted)."""
    out: list[list[Row]] = []
    for sec in plan.sections:
        src = _source(plan, sec)
        if src is None:
            out.append(write(sec))
            continue
        rows = out[plan.sections.index(src)]
        shift = (sec.shift - src.shift) if pitched else 0
        out.append([replace(r, p=r.p + shift, bar=r.bar - src.first_bar + sec.first_bar) for r in rows])
    return out


# --- drums -----------------------------------------------------------------------------------------

KICK, SNARE, HAT, OPEN_HAT, CRASH = 36, 38, 42, 46, 49

#: meter -> kick choices (beats in the bar) for tier 1, denser parts and syncopation.
KICKS = {
    "4/4": {"plain": ((0, 2), (0, 2, 2.5), (0, 1.5, 2), (0, 2.5)),
            "dense": ((0, 1.5, 2, 2.5), (0, 0.5, 2, 2.5), (0, 1, 2, 3)),
            "sync": ((0, 0.75, 2.5), (0, 1.75, 2.5), (0, 0.75, 1.5, 2.75))},
    "3/4": {"plain": ((0,), (0, 2)), "dense": ((0, 1.5, 2), (0, 0.5, 2)), "sync": ((0, 1.5), (0, 0.75, 2.25))},
    "6/8": {"plain": ((0,), (0, 2)), "dense": ((0, 1, 2), (0, 0.5, 2)), "sync": ((0, 1, 2), (0, 2.5))},
}
SNARES = {"4/4": (1, 3), "3/4": (1, 2), "6/8": (1.5,)}
GHOSTS = {"4/4": (1.75, 3.25), "3/4": (2.5,), "6/8": (2.5,)}


def _kick_choice(plan: Plan, rng: random.Random) -> tuple[float, ...]:
    table = KICKS[plan.meter_name]
    return rng.choice(table["sync" if plan.syncopated else "dense" if plan.dense else "plain"])


def drums(plan: Plan, rng: random.Random) -> tuple[list[list[Row]], list[list[Row]]]:
    """(kick rows, kit rows) per section: kick pattern, snare backbeat, hats; the chorus adds a crash on
    its first downbeat and an open hat closing every second bar; denser tiers add 16th hats and ghosts."""
    kicks = _kick_choice(plan, rng)
    hat_step = 0.25 if plan.dense else 0.5
    bpb = plan.beats_per_bar
    meter = plan.meter_name

    def kick(sec: SectionPlan) -> list[Row]:
        rows = []
        for j in range(sec.bars):
            bar = sec.first_bar + j
            for k, t in enumerate(kicks):
                v = (0.95 if t == 0 else 0.82) + (0.03 if sec.chorus else 0.0)
                rows.append(Row(KICK, j * bpb + t, 0.5 if k + 1 == len(kicks) else min(0.5, kicks[k + 1] - t),
                                vel(v), "kick", bar))
        return rows

    def kit(sec: SectionPlan) -> list[Row]:
        rows = []
        lift = 0.06 if sec.chorus else 0.0
        for j in range(sec.bars):
            bar, b0 = sec.first_bar + j, j * bpb
            if sec.chorus and j == 0:
                rows.append(Row(CRASH, b0, 1.0, vel(0.72), "crash", bar))
            for t in SNARES[meter]:
                rows.append(Row(SNARE, b0 + t, 0.5, vel(0.86 + lift), "snare", bar))
            if plan.dense:
                rows += [Row(SNARE, b0 + t, 0.25, vel(0.28), "ghost", bar) for t in GHOSTS[meter]]
            steps = int(round(bpb / hat_step))
            for k in range(steps):
                t = k * hat_step
                if sec.chorus and j % 2 == 1 and k == steps - 1:
                    rows.append(Row(OPEN_HAT, b0 + t, hat_step, vel(0.6), "open-hat", bar))
                    continue
                on_beat = abs(t - round(t)) < EPS
                accent = (not on_beat) if plan.syncopated else on_beat
                rows.append(Row(HAT, b0 + t, hat_step, vel((0.66 if accent else 0.46) + lift), "hat", bar))
        rows.sort(key=lambda r: (r.t, r.p))
        return rows

    return per_section(plan, kick, pitched=False), per_section(plan, kit, pitched=False)


# --- bass ------------------------------------------------------------------------------------------

#: meter -> style -> bar patterns of (t, d, interval) with interval root / fifth / octave; every pattern
#: strikes the root on the downbeat.
BASS = {
    "4/4": {"plain": (((0, 1, "root"), (1.5, 0.5, "root"), (2, 1, "root"), (3, 0.5, "fifth"),
                       (3.5, 0.5, "octave")),
                      ((0, 1.5, "root"), (1.5, 0.5, "root"), (2, 1, "fifth"), (3, 1, "root")),
                      ((0, 1.9, "root"), (2, 1.4, "root"), (3.5, 0.5, "fifth")),
                      ((0, 0.9, "root"), (1, 0.9, "root"), (2, 0.9, "root"), (3, 0.9, "fifth"))),
            "dense": (tuple((k * 0.5, 0.45, "octave" if k == 3 else "fifth" if k == 7 else "root") for k in range(8)),
                      tuple((k * 0.5, 0.45, "root" if k % 2 == 0 else "octave") for k in range(8))),
            "sync": (((0, 0.7, "root"), (0.75, 0.5, "root"), (1.5, 0.5, "octave"), (2.5, 0.7, "root"),
                      (3.25, 0.25, "fifth"), (3.5, 0.5, "root")),
                     ((0, 1.2, "root"), (1.5, 0.25, "root"), (1.75, 0.75, "fifth"), (2.75, 0.7, "root"),
                      (3.5, 0.5, "octave")))},
    "3/4": {"plain": (((0, 2, "root"), (2, 1, "fifth")), ((0, 1, "root"), (1, 1, "fifth"), (2, 1, "octave"))),
            "dense": (tuple((k * 0.5, 0.45, "fifth" if k == 4 else "root") for k in range(6)),),
            "sync": (((0, 0.7, "root"), (0.75, 0.7, "root"), (1.5, 0.9, "fifth"), (2.5, 0.5, "octave")),)},
    "6/8": {"plain": (((0, 1.5, "root"), (1.5, 1.5, "fifth")),
                      ((0, 1, "root"), (1, 0.5, "root"), (1.5, 1, "fifth"), (2.5, 0.5, "octave"))),
            "dense": (tuple((k * 0.5, 0.45, "fifth" if k == 3 else "root") for k in range(6)),),
            "sync": (((0, 0.95, "root"), (1, 0.95, "root"), (2, 0.95, "fifth")),)},
}
INTERVAL = {"root": 0, "fifth": 7, "octave": 12}


def bass_root(pc: int) -> int:
    """The chord root's pitch in A1..G#2."""
    return BASS_LO + (pc - BASS_LO) % 12


def bass(plan: Plan, rng: random.Random) -> list[list[Row]]:
    style = "sync" if plan.syncopated else "dense" if plan.dense else "plain"
    verse_pat, chorus_pat = (rng.choice(BASS[plan.meter_name][style]) for _ in range(2))
    bpb = plan.beats_per_bar

    def write(sec: SectionPlan) -> list[Row]:
        pattern = chorus_pat if sec.chorus else verse_pat
        rows = []
        for j in range(sec.bars):
            root = bass_root(chord_at(plan, sec, j).root_pc)
            for t, d, kind in pattern:
                v = (0.9 if t == 0 else 0.74) + (0.04 if sec.chorus else 0.0)
                rows.append(Row(root + INTERVAL[kind], j * bpb + t, d, vel(v), kind, sec.first_bar + j))
        return rows

    return per_section(plan, write, pitched=True)


# --- chords ----------------------------------------------------------------------------------------

#: meter -> style -> the bar's hits (t, d); "push" hits (sync) play the next bar's chord.
CHORD_HITS = {
    "4/4": {"plain": (((0, 3.9),), ((0, 1.9), (2, 1.9))),
            "dense": (((0, 0.9), (1, 0.9), (2, 0.9), (3, 0.9)), ((0, 1.4), (1.5, 0.9), (2.5, 0.4), (3, 0.9))),
            "sync": (((0, 1.4), (1.5, 0.9), (2.5, 0.9)), ((0, 0.7), (0.75, 1.15), (2.5, 0.9)))},
    "3/4": {"plain": (((0, 2.9),), ((0, 0.9), (1, 0.9), (2, 0.9))),
            "dense": (((0, 0.9), (1, 0.45), (1.5, 0.45), (2, 0.9)),),
            "sync": (((0, 1.4), (1.5, 1.4)),)},
    "6/8": {"plain": (((0, 2.9),), ((0, 1.4), (1.5, 1.4))),
            "dense": (((0, 0.45), (1, 0.45), (1.5, 0.45), (2.5, 0.45)),),
            "sync": (((0, 0.95), (1, 0.95), (2, 0.95)),)},
}
#: The anticipation the chords play in the syncopated tiers: the next bar's chord, struck this long before
#: its downbeat and held to the middle of that bar.
PUSH_BEATS = 0.5


def voicings(chords: list[ChordSpec]) -> list[tuple[int, ...]]:
    """Close triads in CHORD_LO..CHORD_HI, each the inversion nearest the last (the first nearest the
    centre): smooth voice leading, as a keyboard player would."""
    out: list[tuple[int, ...]] = []
    prev_centre = CHORD_CENTRE
    for ch in chords:
        best = None
        for base in range(CHORD_LO, CHORD_HI - 6):
            if base % 12 not in ch.pcs:
                continue
            rest = sorted(p for pc in ch.pcs if pc != base % 12 for p in [base + (pc - base) % 12])
            voicing = (base, *rest)
            if voicing[-1] > CHORD_HI:
                continue
            cost = abs(sum(voicing) / 3 - prev_centre)
            if best is None or cost < best[0] - EPS:
                best = (cost, voicing)
        assert best is not None
        out.append(best[1])
        prev_centre = sum(best[1]) / 3
    return out


def chords(plan: Plan, rng: random.Random, *, pad: bool) -> list[list[Row]]:
    """Voice-led triads: a pad holds each bar; keys play a pattern (pushed into the next bar when syncopated)."""
    style = "sync" if plan.syncopated else "dense" if plan.dense else "plain"
    verse_hits, chorus_hits = (rng.choice(CHORD_HITS[plan.meter_name][style]) for _ in range(2))
    bpb = plan.beats_per_bar

    def write(sec: SectionPlan) -> list[Row]:
        specs = [chord_at(plan, sec, j) for j in range(sec.bars)]
        voiced = voicings(specs)
        hits = ((0, bpb - 0.1),) if pad else (chorus_hits if sec.chorus else verse_hits)
        push = plan.syncopated and not pad
        # a push holds until the bar's first hit after its downbeat
        hold = PUSH_BEATS + min((t for t, _ in hits if t > 0), default=bpb / 2) - 0.1
        rows = []
        for j, voicing in enumerate(voiced):
            bar = sec.first_bar + j
            lift = 0.06 if sec.chorus else 0.0
            for t, d in hits:
                if push and j > 0 and t == 0:
                    continue  # the downbeat was struck early, at the end of the bar before
                if push and j + 1 < sec.bars:
                    d = min(d, bpb - PUSH_BEATS - t)
                for i, p in enumerate(voicing):
                    rows.append(Row(p, j * bpb + t, round(d, 2), vel(0.56 + lift + (0.05 if i == 2 else 0)),
                                    "chord", bar))
            if push and j + 1 < sec.bars:
                for i, p in enumerate(voiced[j + 1]):
                    rows.append(Row(p, (j + 1) * bpb - PUSH_BEATS, round(hold, 2),
                                    vel(0.6 + lift), "chord", bar + 1))
        rows.sort(key=lambda r: (r.t, r.p))
        return rows

    return per_section(plan, write, pitched=True)


# --- lead ------------------------------------------------------------------------------------------

#: meter -> style -> one bar's rhythm (t, d); "verse" is the sparse melody, the rest the chorus hook.
LEAD_RHYTHMS = {
    "4/4": {"verse": (((0, 1.5), (1.5, 0.5), (2, 2)), ((0, 2), (2, 1), (3, 1)), ((0, 1), (1, 1), (2, 2)),
                      ((0, 3), (3, 1))),
            "plain": (((0, 1), (1, 0.5), (1.5, 0.5), (2, 1.5), (3.5, 0.5)),
                      ((0, 0.5), (0.5, 0.5), (1, 1), (2, 1), (3, 1)),
                      ((0, 1.5), (1.5, 0.5), (2, 0.5), (2.5, 0.5), (3, 1)), ((0, 2), (2, 0.5), (2.5, 0.5), (3, 1))),
            "dense": (tuple((k * 0.5, 0.5) for k in range(8)),
                      ((0, 0.25), (0.25, 0.25), (0.5, 0.5), (1, 0.5), (1.5, 0.5), (2, 0.5), (2.5, 0.25), (2.75, 0.25),
                       (3, 1)),
                      ((0, 0.5), (0.5, 0.25), (0.75, 0.25), (1, 1), (2, 0.5), (2.5, 0.5), (3, 0.5), (3.5, 0.5))),
            "sync": (((0, 0.75), (0.75, 0.75), (1.5, 1), (2.5, 0.5), (3, 0.5), (3.5, 1)),
                     ((0.5, 1), (1.5, 0.5), (2, 0.75), (2.75, 0.75), (3.5, 1)),
                     ((0, 0.5), (0.75, 0.75), (1.5, 0.5), (2, 0.25), (2.25, 0.75), (3, 0.5)))},
    "3/4": {"verse": (((0, 2), (2, 1)), ((0, 3),), ((0, 1), (1, 2))),
            "plain": (((0, 1), (1, 1), (2, 1)), ((0, 1.5), (1.5, 0.5), (2, 1)), ((0, 2), (2, 0.5), (2.5, 0.5))),
            "dense": (tuple((k * 0.5, 0.5) for k in range(6)),
                      ((0, 0.5), (0.5, 0.25), (0.75, 0.25), (1, 1), (2, 0.5), (2.5, 0.5))),
            "sync": (((0, 0.5), (0.5, 1), (1.5, 1), (2.5, 1)), ((0.5, 0.75), (1.25, 0.75), (2, 0.5), (2.5, 1)))},
    "6/8": {"verse": (((0, 1.5), (1.5, 1.5)), ((0, 3),), ((0, 1), (1, 0.5), (1.5, 1.5))),
            "plain": (((0, 1), (1, 0.5), (1.5, 1), (2.5, 0.5)), ((0, 0.5), (0.5, 0.5), (1, 0.5), (1.5, 1.5))),
            "dense": (tuple((k * 0.5, 0.5) for k in range(6)),
                      ((0, 0.25), (0.25, 0.25), (0.5, 0.5), (1, 0.5), (1.5, 0.5), (2, 0.5), (2.5, 0.5))),
            "sync": (((0, 1), (1, 1), (2, 0.5), (2.5, 1)), ((0.5, 1), (1.5, 0.5), (2, 0.5), (2.5, 1)))},
}
#: Steps (in semitones around the last pitch) the lead aims for on a chord tone, most often small.
LEAP_AIMS = (-4, -3, -2, -1, 0, 1, 2, 3, 4, -7, 5, 7)
#: Scale steps for a passing tone.
STEPS = (-2, -1, -1, 1, 1, 2)
PHRASE_BARS = 4


def _strong_beats(plan: Plan, start: float, end: float, limit: float) -> list[float]:
    """The strong beats b of the section with ``start <= b < end`` and ``b < limit``."""
    every = plan.strong_every
    first = -(-start // every) * every if start % every > EPS else start
    out, b = [], first
    while b < min(end, limit) - EPS:
        out.append(b)
        b += every
    return out


def _nearest(pcs, aim: int) -> int:
    """The pitch in LEAD_LO..LEAD_HI with a pitch class in ``pcs`` nearest ``aim`` (lower one on a tie)."""
    best = min((p for p in range(LEAD_LO, LEAD_HI + 1) if p % 12 in pcs), key=lambda p: (abs(p - aim), p))
    return best


@lru_cache(maxsize=64)
def _lead_scale(key: KeySig) -> tuple[int, ...]:
    return tuple(p for p in range(LEAD_LO, LEAD_HI + 1) if p % 12 in key.scale_pcs)


def _scale_step(sec: SectionPlan, prev: int, steps: int) -> int:
    scale = _lead_scale(sec.key)
    i = min(range(len(scale)), key=lambda k: (abs(scale[k] - prev), scale[k]))
    if prev > LEAD_CENTRE + 7:
        steps = -abs(steps)
    elif prev < LEAD_CENTRE - 7:
        steps = abs(steps)
    return scale[min(max(i + steps, 0), len(scale) - 1)]


def lead_phrase(plan: Plan, sec: SectionPlan, rng: random.Random, rhythms) -> list[Row]:
    """One PHRASE_BARS phrase over the section's first bars, repeated to fill the section."""
    bpb = plan.beats_per_bar
    section_end = sec.bars * bpb
    bars = [rng.choice(rhythms) for _ in range(PHRASE_BARS)]
    bars[2] = bars[0]  # a-b-a-c: the repeat that makes a hook
    onsets = [(j * bpb + t, d) for j, rhythm in enumerate(bars) for t, d in rhythm]
    rows: list[Row] = []
    prev = LEAD_CENTRE + rng.choice((-3, 0, 4))
    for t, d in onsets:
        covered = _strong_beats(plan, t, t + d, section_end)
        allowed = None
        for k, b in enumerate(covered):
            tones = set(chord_at(plan, sec, int(b // bpb + EPS)).pcs)
            if allowed is not None and not allowed & tones:
                d = b - t  # do not hold into a chord that does not share this note
                covered = covered[:k]
                break
            allowed = tones if allowed is None else allowed & tones
        bar = sec.first_bar + int((t + EPS) // bpb)
        if allowed:
            p = _nearest(allowed, prev + rng.choice(LEAP_AIMS))
            if t == 0 and sec.key.tonic_pc in allowed:
                p = _nearest({sec.key.tonic_pc}, prev)  # a phrase on the home chord starts on the tonic
            early = covered[0] > t + EPS and int((covered[0] + EPS) // bpb) != int((t + EPS) // bpb)
            tag = "anticipation" if early else "chord-tone"
            if early:
                bar = sec.first_bar + int((covered[0] + EPS) // bpb)
        else:
            p = _scale_step(sec, prev, rng.choice(STEPS))
            here = set(chord_at(plan, sec, int((t + EPS) // bpb)).pcs)
            tag = "chord-tone" if p % 12 in here else "passing"
        strong = abs(t / plan.strong_every - round(t / plan.strong_every)) < EPS
        rows.append(Row(p, t, round(d, 2), vel((0.84 if strong else 0.72) + rng.randrange(-3, 4) / 100), tag, bar))
        prev = p
    return rows


def lead(plan: Plan, rng: random.Random) -> list[list[Row]]:
    """A sparse verse melody and a busier chorus hook, each a 4-bar a-b-a-c phrase played twice."""
    style = "sync" if plan.syncopated else "dense" if plan.dense else "plain"
    table = LEAD_RHYTHMS[plan.meter_name]
    bpb = plan.beats_per_bar

    def write(sec: SectionPlan) -> list[Row]:
        phrase = lead_phrase(plan, sec, rng, table[style if sec.chorus else "plain" if plan.dense else "verse"])
        span = PHRASE_BARS * bpb
        rows = []
        for k in range(sec.bars // PHRASE_BARS):
            for r in phrase:
                row = replace(r, t=r.t + k * span, bar=r.bar + k * PHRASE_BARS,
                              v=vel(r.v + (0.04 if sec.chorus else 0.0)))
                if row.t + row.d > sec.bars * bpb + EPS:  # the section's last note ends with the section
                    j = int((row.t + EPS) // bpb)
                    here = chord_at(plan, sec, j).pcs
                    row = replace(row, d=round(sec.bars * bpb - row.t, 2), bar=sec.first_bar + j,
                                  tag="chord-tone" if row.p % 12 in here else "passing")
                rows.append(row)
        return rows

    return per_section(plan, write, pitched=True)
