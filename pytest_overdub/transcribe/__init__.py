"""The transcription family (``transcribe-*``, docs/transcription.md): the agent hears a mix rendered from a
song and writes down the notes of named parts; the song's own notes are the truth.

Modules, left to right: :mod:`.matching` (precision, recall and F1 as mir_eval computes them, octave
errors, rhythm; pure Python), :mod:`.task` (the task model and its derived checks), :mod:`.truth` (the
song's notes per part, in seconds), :mod:`.answer` and :mod:`.midi` (reading an answer), :mod:`.inputs`
(the mix WAV, cached), :mod:`.score` (a result like every task's) and :mod:`.answers` (the bench's own
answers, made from the truth). Importing this package imports no numpy.
"""
