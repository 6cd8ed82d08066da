"""``overdub render`` writes a 24-bit WAV (and stems) of what the engine rendered; ``overdub devices``
prints every house device's table."""

import base64
import io
import json

import numpy as np
import pytest
import soundfile as sf

from pytest_overdub.errors import DeviceError
from pytest_overdub.render.cli import devices_main, main
from pytest_overdub.devices.params import HOUSE_SPECS


def _song_file(tmp_path):
    buf = io.BytesIO()
    pcm = np.zeros(4800)
    pcm[240] = 0.5
    sf.write(buf, pcm, 48000, format="WAV", subtype="FLOAT")
    song = {"format": "overdub/0", "id": "cli", "tempo": 120, "assets": {"a1": {"data": base64.b64encode(buf.getvalue()).decode()}},
            "tracks": [{"id": "t_au", "name": "Loop", "kind": "audio",
                        "clips": [{"id": "c_1", "kind": "audio", "start": 1, "length": 1, "asset": "a1"}]},
                       {"id": "t_x", "name": "Ghost", "instrument": {"device": "acme.none"}, "mute": True}]}
    path = tmp_path / "song.json"
    path.write_text(json.dumps(song))
    return path


def test_render_writes_a_24_bit_wav_and_stems(tmp_path, capsys):
    song = _song_file(tmp_path)
    assert main([str(song), "-o", str(tmp_path / "mix.wav"), "--stems", str(tmp_path / "stems")]) == 0
    info = sf.info(str(tmp_path / "mix.wav"))
    assert info.subtype == "PCM_24" and info.samplerate == 48000 and info.channels == 2
    assert info.frames == 3.5 * 48000                     # 1 bar (2 s at 120 bpm) + 1.5 s tail
    mix, _ = sf.read(str(tmp_path / "mix.wav"))
    assert np.flatnonzero(mix[:, 0]).tolist() == [24000 + 240]
    assert mix[24240, 0] == pytest.approx(0.5, abs=2 ** -23)
    assert sorted(p.name for p in (tmp_path / "stems").iterdir()) == ["00-Loop.wav"]   # muted track not heard


def test_render_named_tracks_warn_on_stderr(tmp_path, capsys):
    song = _song_file(tmp_path)
    assert main([str(song), "-o", str(tmp_path / "g.wav"), "--tracks", "Ghost"]) == 0
    err = capsys.readouterr().err
    assert "warning [bypass] tracks[1] Ghost instrument acme.none" in err


def test_devices_prints_every_house_table(capsys):
    assert devices_main([]) == 0
    out = capsys.readouterr().out
    for dev_id in HOUSE_SPECS:
        assert dev_id in out
    assert "0=FREE, 1=1/32" in out and "cutoff" in out
    assert devices_main(["--json", "core.limiter"]) == 0
    (lim,) = json.loads(capsys.readouterr().out)
    assert [p["key"] for p in lim["params"]] == ["gain", "ceiling", "release"]
    assert lim["params"][1]["default"] == -1.0 and lim["params"][1]["unit"] == "dBTP"
    with pytest.raises(DeviceError, match="core.nope"):
        devices_main(["core.nope"])
