"""The audio templates: the eight audio-in tasks (docs/audio-tasks.md) on generated songs.

Each carries its published task (checks, answer form, instruction, the answers made by code) onto the
variant's song (:mod:`.published`): :mod:`.mastering` (``master-*``) and :mod:`.mixdown` (``mixdown-*``).
The inputs are rendered from the generated songs like any input, and cached under keys that hold the
song's JSON, so two seeds never share a file.
"""
