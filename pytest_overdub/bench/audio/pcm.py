"""What an audio file would hold, in memory: the float64 samples that writing an array with soundfile
(libsndfile) and reading it back as float64 gives, without the file. A variant's inputs and made answers
are scored from these (docs/audio-tasks.md); a published task's still go through the files.

The conventions, those of libsndfile 1.2.2 (held against a real round trip, random samples and the edges,
by ``tests/unit/test_audio_pcm.py``, so a libsndfile that quantises otherwise fails there, not in a score):

* **24-bit FLAC** (:func:`flac24`): ``q = rint(x * 2**23)`` (half to even), held to ``[-2**23, 2**23 - 1]``
  (so 1.0 and above read back as ``1 - 2**-23``, -1 and below as -1); read back as ``q / 2**23``.
* **24-bit WAV** (:func:`wav24`): libsndfile takes a double through its 32-bit path: ``v = rint(x * 2**31)``
  held to the int32 range, then the top 24 bits, ``v >> 8`` (towards minus infinity); read back as
  ``(v >> 8) / 2**23``. So 1.5 LSB is 1 LSB in a WAV and 2 in a FLAC, -0.5 LSB is -1 and 0: the two formats
  differ by one LSB in about half the samples of real audio.
* **16-bit PCM from int16** (:func:`pcm16`): each sample as it is, read back as ``q / 2**15``.

A zero reads back as +0.0 (never -0.0). A NaN cannot be written to a FLAC file (soundfile's write fails):
:func:`flac24` keeps it NaN, for the reader's finite-samples rule to name; a WAV holds -1.0 for it, and
:func:`wav24` gives that. Infinities are held at full scale like any value over it.
"""

from __future__ import annotations

from typing import Any

FULL24 = 2.0 ** 23


def flac24(x: Any):
    """``x`` as a 24-bit PCM FLAC file written from it would read back (float64, a new array)."""
    import numpy as np

    with np.errstate(over="ignore"):  # a huge value scales to inf, held at full scale below
        y = np.multiply(x, FULL24, dtype=np.float64)
    np.rint(y, out=y)
    np.clip(y, -FULL24, FULL24 - 1.0, out=y)
    y *= 1.0 / FULL24
    y += 0.0  # -0.0 -> +0.0
    return y


def wav24(x: Any):
    """``x`` as a 24-bit PCM WAV file written from it would read back (float64, a new array)."""
    import numpy as np

    with np.errstate(over="ignore"):
        y = np.multiply(x, 2.0 ** 31, dtype=np.float64)
    np.rint(y, out=y)
    y *= 2.0 ** -8
    np.floor(y, out=y)  # v >> 8 on the int32 (exact: v has at most 32 significant bits)
    np.clip(y, -FULL24, FULL24 - 1.0, out=y)
    y *= 1.0 / FULL24
    y += 0.0
    if y.size and np.isnan(y.min()):  # min() is NaN when any sample is
        y[np.isnan(y)] = -1.0
    return y


def pcm16(x: Any):
    """An int16 array as a 16-bit PCM file written from it reads back (float64, a new array)."""
    import numpy as np

    return np.multiply(x, 2.0 ** -15, dtype=np.float64)
