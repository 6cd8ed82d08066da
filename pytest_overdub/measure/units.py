"""The unit of each figure ``measure()`` gives, by its metric name (``overdub measure`` prints them; the
studio returns them beside its figures); ``bandRel.<band>`` figures are dB. Pure data: no numpy."""

#: Metric name -> unit (empty: a ratio or a plain number).
UNITS = {
    "lufs": "LUFS",
    "lufsShortMax": "LUFS",
    "lra": "LU",
    "truePeak": "dBTP",
    "peak": "dBFS",
    "rms": "dBFS",
    "crest": "dB",
    "centroid": "Hz",
    "correlation": "",
    "sideDb": "dB",
    "onsetsPerSec": "/s",
    "keyConfidence": "r",
    "sr": "Hz",
    "durationS": "s",
}
