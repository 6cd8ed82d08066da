"""Assemble a generated song and its ground truth from a plan and the parts (see :mod:`pytest_overdub.generate`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..song.model import Song, song_from_data
from . import parts as P
from .mix import master, mix
from .plan import GENERATOR, Plan, make_plan, stream
from .truth import ChordTruth, GroundTruth, KeyTruth, NoteTruth, PartTruth, SectionTruth

ADJECTIVES = ("Amber", "Paper", "Silver", "Quiet", "Neon", "Late", "Hollow", "Golden", "Little", "Northern",
              "Velvet", "Open", "Glass", "Borrowed", "Lucky", "Slow")
NOUNS = ("Signal", "Harbour", "Window", "Summer", "Engine", "Orbit", "Letters", "Highway", "Garden", "Static",
         "Lanterns", "Tide", "Weather", "Station", "Mirrors", "Parade")
COLORS = {"kick": "#e0603a", "kit": "#e0a03a", "bass": "#3a8ee0", "chords": "#8e5ae0", "lead": "#3ac08e"}


@dataclass(frozen=True)
class Generated:
    """A generated song and its ground truth."""

    song: Song
    truth: GroundTruth


def _key_truth(key) -> KeyTruth:
    return KeyTruth(tonic=key.tonic, tonic_pc=key.tonic_pc, mode=key.mode)


def _clips(stem: str, plan: Plan, rows_per_section: list[list[P.Row]], name: str) -> list[dict[str, Any]]:
    clips = []
    bpb = plan.beats_per_bar
    for sec, rows in zip(plan.sections, rows_per_section):
        notes = [{"p": r.p, "t": r.t, "d": r.d, "v": r.v, "id": f"n_{stem}_{sec.id[2:]}_{i:03d}"}
                 for i, r in enumerate(rows)]
        clips.append({"id": f"c_{stem}_{sec.id[2:]}", "name": f"{name} {sec.name.lower()}",
                      "start": sec.first_bar * bpb, "length": sec.bars * bpb, "notes": notes})
    return clips


def generate(seed: int, tier: int = 1) -> Generated:
    """The song of ``(seed, tier)`` and its ground truth; the same arguments give the same song, bit for bit."""
    rng = stream(seed, tier)
    plan = make_plan(seed, tier, rng)
    pad = rng.random() < 0.4
    pluck = rng.random() < 0.6
    settings = mix(rng, pad=pad, pluck=pluck)
    kick_rows, kit_rows = P.drums(plan, rng)
    written = {"kick": kick_rows, "kit": kit_rows, "bass": P.bass(plan, rng),
               "chords": P.chords(plan, rng, pad=pad), "lead": P.lead(plan, rng)}
    names = {"kick": "Kick", "kit": "Kit", "bass": "Bass", "chords": "Pad" if pad else "Keys", "lead": "Hook"}
    roles = {"kick": "drums", "kit": "drums", "bass": "bass", "chords": "chords", "lead": "lead"}
    tracks, part_truths, note_truths = [], [], []
    for stem, rows in written.items():
        tid = f"t_{stem}"
        tracks.append({"id": tid, "name": names[stem], "color": COLORS[stem], **settings[stem],
                       "clips": _clips(stem, plan, rows, names[stem])})
        part_truths.append(PartTruth(track_id=tid, name=names[stem], role=roles[stem],
                                     device=settings[stem]["instrument"]["device"],
                                     notes=sum(len(r) for r in rows)))
        for sec, sec_rows in zip(plan.sections, rows):
            # plain dicts: pydantic-core builds and checks the NoteTruth models in one pass when the truth is
            # validated, several times faster than a Python-level constructor per note
            note_truths += [{"id": f"n_{stem}_{sec.id[2:]}_{i:03d}", "track_id": tid, "bar": r.bar, "tag": r.tag}
                            for i, r in enumerate(sec_rows)]
    title = f"{rng.choice(ADJECTIVES)} {rng.choice(NOUNS)}"
    song_id = f"gen-t{tier}-{seed}"
    bpb = plan.beats_per_bar
    data = {"format": "overdub/0", "id": song_id, "title": title, "tempo": float(plan.tempo_bpm),
            "meter": list(plan.meter), "key": {"root": plan.key.tonic, "scale": plan.key.mode},
            "tracks": tracks,
            "sections": [{"id": s.id, "name": s.name, "start": s.first_bar * bpb, "length": s.bars * bpb}
                         for s in plan.sections],
            "master": master(),
            "meta": {"generated": {"generator": GENERATOR, "seed": seed, "tier": tier}}}
    song = song_from_data(data, source=f"generated song {song_id}")
    chords = []
    for sec in plan.sections:
        for j in range(sec.bars):
            ch = P.chord_at(plan, sec, j)
            chords.append(ChordTruth(bar=sec.first_bar + j, start_beats=(sec.first_bar + j) * bpb,
                                     root=sec.key.name_of(ch.root_pc), root_pc=ch.root_pc, quality=ch.quality,
                                     symbol=ch.symbol, degree=ch.degree))
    truth = GroundTruth(
        generator=GENERATOR, seed=seed, tier=tier, difficulties=plan.difficulties, song_id=song_id,
        tempo_bpm=float(plan.tempo_bpm), meter=plan.meter, beats_per_bar=bpb, strong_every_beats=plan.strong_every,
        length_beats=plan.length_beats, key=_key_truth(plan.key), chords=tuple(chords),
        sections=tuple(SectionTruth(id=s.id, name=s.name, start_beats=s.first_bar * bpb,
                                    end_beats=(s.first_bar + s.bars) * bpb, first_bar=s.first_bar, bars=s.bars,
                                    key=_key_truth(s.key), progression=s.progression) for s in plan.sections),
        parts=tuple(part_truths), notes=tuple(note_truths))
    return Generated(song=song, truth=truth)
