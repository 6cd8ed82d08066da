"""Audio-in tasks (families ``mastering`` and ``mixdown``, docs/audio-tasks.md): the bench hands the agent WAV
files rendered from a song, the agent hands back WAV or FLAC files, and the checks measure them.

* the task's inputs, answer form and audio check kinds are in :mod:`pytest_overdub.bench.model`;
* :mod:`.inputs`: rendering the inputs once into the cache (a variant's, in memory when scored);
* :mod:`.pcm`: what a 24-bit WAV or FLAC or a 16-bit file would hold, computed in memory;
* :mod:`.files`: reading an answer directory (one clear error per bad file);
* :mod:`.score`: scoring an answer directory; :mod:`.readings`: the duck, hit and sequence readings;
* :mod:`.validity`: the validity rules on audio tasks;
* :mod:`.answers`: the bench's own answers (oracle, alternatives, cheats), made by code from the inputs;
* :mod:`.chains`: the processing those answers use, written with the project's DSP.
"""
