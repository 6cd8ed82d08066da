"""The meters (docs/meters.md): arrays and a sample rate in, floats out.

Names are loaded lazily from their modules on first use, so importing this package is cheap; the
submodules import numpy and scipy.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "measure": "measurement",
    "Measurement": "measurement",
    "measure_metric": "metrics",
    "integrated_lufs": "loudness",
    "momentary_lufs": "loudness",
    "short_term_lufs": "loudness",
    "short_term_max_lufs": "loudness",
    "loudness_range": "loudness",
    "true_peak_db": "peak",
    "sample_peak_db": "peak",
    "rms_db": "peak",
    "crest_db": "peak",
    "band_rel_db": "spectrum",
    "band_abs_db": "spectrum",
    "centroid_hz": "spectrum",
    "BANDS": "spectrum",
    "correlation": "stereo",
    "side_db": "stereo",
    "measure_band_side": "stereo",
    "onsets_per_sec": "onsets",
    "onset_times": "onsets",
    "detect_key": "key",
    "KeyEstimate": "key",
    "FLOOR_DB": "_input",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
