"""Key detection over the 24 keys with synthesised I-IV-V / i-iv-v progressions."""

import numpy as np
import pytest

from pytest_overdub.measure import detect_key
from pytest_overdub.measure.key import PITCH_CLASSES

SR = 22050  # key detection needs nothing above 4.2 kHz; a lower rate keeps the test fast


def tone(midis, seconds):
    t = np.arange(int(seconds * SR)) / SR
    y = np.zeros_like(t)
    for m in midis:
        f = 440.0 * 2 ** ((m - 69) / 12)
        for h in range(1, 5):  # simple additive tone: four harmonics at 1/h
            y += np.sin(2 * np.pi * f * h * t) / h
    env = np.minimum(1.0, np.minimum(t / 0.01, (seconds - t) / 0.05))
    return 0.05 * y * env


def progression(root_pc, minor):
    third = 3 if minor else 4
    chords = []
    for degree in (0, 5, 7):  # I-IV-V or i-iv-v (natural minor: all minor triads)
        r = 48 + (root_pc + degree) % 12
        chords.append(tone([r - 12, r + 12, r + 12 + third, r + 19], 2.0))
    return np.concatenate(chords)


def relative(root_pc, minor):
    return ((root_pc + 3) % 12, "major") if minor else ((root_pc + 9) % 12, "minor")


def test_at_least_23_of_24_keys_right_or_relative():
    right = []
    for minor in (False, True):
        for root_pc in range(12):
            k = detect_key(progression(root_pc, minor), sr=SR)
            want = (root_pc, "minor" if minor else "major")
            right.append((k.root_pc, k.scale) in (want, relative(root_pc, minor)))
    assert sum(right) >= 23, [PITCH_CLASSES[i % 12] for i, ok in enumerate(right) if not ok]


def test_a_minor_progression_reads_a_minor_with_a_runner_up():
    k = detect_key(progression(9, True), sr=SR)
    assert k.name == "A minor"
    assert 0 < k.runner_up_confidence < k.confidence <= 1
    assert k.runner_up != k.name


def test_silence_has_zero_confidence():
    k = detect_key(np.zeros(SR), sr=SR)
    assert k.confidence == 0.0


@pytest.mark.parametrize("pc", [0, 7])
def test_single_major_triad_reads_its_major_key(pc):
    k = detect_key(tone([60 + pc, 64 + pc, 67 + pc], 3.0), sr=SR)
    assert (k.root, k.scale) == (PITCH_CLASSES[pc], "major")
