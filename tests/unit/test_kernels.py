"""The kernel API (in-process): definitions, params, the contract's checks, and the worked examples of
``docs/devices.md`` run exactly as printed, against analytic answers."""

from __future__ import annotations

import json
import math
import re
import textwrap
from pathlib import Path

import numpy as np
import pytest

from pytest_overdub.devices.base import NoteEvent
from pytest_overdub.errors import KernelError, OverdubError
from pytest_overdub.render.kernels import (KernelEffect, KernelInstrument, build_kernel_device,
                                           kernel_seed, trust_kernels_default, validate_definition)

SR = 48000
DOC = Path(__file__).resolve().parents[2] / "docs" / "devices.md"


def effect(src: str, params=(), dev_id="test.fx") -> dict:
    return {"id": dev_id, "kind": "effect", "name": "t", "kernel": textwrap.dedent(src),
            "params": list(params), "version": 1}


def local(defn, **kw):
    kw.setdefault("tempo_bpm", 120.0)
    kw.setdefault("seed", 1)
    return build_kernel_device(defn, sr=SR, trusted=True, **kw)


PASS = "def process(x, params, ctx):\n    return x\n"


# ---- definitions


@pytest.mark.parametrize("patch,said", [
    ({"id": "core.echo"}, "core."),
    ({"id": "A"}, "'A'"),
    ({"id": "has space"}, "'has space'"),
    ({"kind": "synth"}, "'synth'"),
    ({"kernel": ""}, "non-empty"),
    ({"kernel": "#" * (256 * 1024 + 1)}, "262145 bytes"),
    ({"version": 0}, "version 0"),
    ({"colour": "red"}, "colour"),
    ({"params": [{"key": "gain", "min": 0, "max": 1, "def": 2}]}, "def 2 is outside min 0 .. max 1"),
    ({"params": [{"key": "1x"}]}, "'1x'"),
    ({"params": [{"key": "a"}, {"key": "a"}]}, "duplicate param key(s) ['a']"),
    ({"params": [{"key": "a", "max": "big"}]}, "max 'big'"),
])
def test_bad_definitions_name_what_was_wrong(patch, said):
    with pytest.raises(KernelError) as info:
        validate_definition({**effect(PASS), **patch})
    assert said in str(info.value)
    assert isinstance(info.value, OverdubError)


def test_definition_accepts_the_song_json_and_fills_defaults():
    d = validate_definition({"id": "bench.dotted-echo", "kind": "effect", "kernel": PASS,
                             "params": [{"key": "mix", "label": "Mix", "min": 0, "max": 1, "def": 0.25}]})
    assert d.name == "bench.dotted-echo" and d.version == 1
    assert d.spec.defaults() == {"mix": 0.25}
    assert d.spec.param("mix").allowed() == "0..1"
    assert d.to_json()["params"][0]["def"] == 0.25


def test_trust_default_reads_the_environment(monkeypatch):
    monkeypatch.delenv("OVERDUB_TRUST_KERNELS", raising=False)
    assert trust_kernels_default() is False
    monkeypatch.setenv("OVERDUB_TRUST_KERNELS", "1")
    assert trust_kernels_default() is True
    monkeypatch.setenv("OVERDUB_TRUST_KERNELS", "0")
    assert trust_kernels_default() is False


def test_a_kernel_gets_the_seed_the_engine_gives_its_device_pinned_across_processes():
    from pytest_overdub.render import device_seed

    # pinned: printed by a separate Python process (another PYTHONHASHSEED); a change reseeds every render
    assert kernel_seed("bench.echo", "t_bass") == device_seed("bench.echo", "t_bass") == 22460301049177087
    assert kernel_seed("bench.echo", "t_keys") == 7525743433597651261


# ---- the contract


def test_params_are_resolved_and_clamped_and_unknown_keys_refused():
    src = "def process(x, params, ctx):\n    return x * params['g']\n"
    dev = local(effect(src, [{"key": "g", "label": "g", "min": 0, "max": 2, "def": 0.5}]))
    x = np.ones((2, 4))
    assert dev.process(x, {}).tolist() == [[0.5] * 4] * 2  # default
    assert dev.process(x, {"g": 7.0})[0, 0] == 2.0  # clamped to max
    ramp = np.array([-1.0, 0.5, 1.0, 3.0])
    assert dev.process(x, {"g": ramp})[1].tolist() == [0.0, 0.5, 1.0, 2.0]  # per-sample, clipped
    with pytest.raises(KernelError, match="no parameter 'gain'"):
        dev.process(x, {"gain": 1.0})


def test_state_carries_so_segments_equal_one_call():
    src = """
    def process(x, params, ctx):
        hist = ctx.state.get("hist", np.zeros((2, 100)))
        buf = np.concatenate([hist, x], axis=1)
        ctx.state["hist"] = buf[:, buf.shape[1] - 100:]
        return x - 0.5 * buf[:, :x.shape[1]]
    """
    x = np.random.default_rng(5).standard_normal((2, 8259))
    whole = local(effect(src)).process(x)
    dev = local(effect(src))
    parts = [dev.process(x[:, a:b]) for a, b in ((0, 1), (1, 66), (66, 8259))]
    assert np.array_equal(np.concatenate(parts, axis=1), whole)


@pytest.mark.parametrize("ret,said", [
    ("x.astype(np.int64)", "dtype int64"),
    ("x[0]", "shape (8,)"),
    ("x.tolist()", "returned list"),
    ("x * np.inf", "inf"),
])
def test_bad_outputs_are_faults(ret, said):
    dev = local(effect(f"def process(x, params, ctx):\n    return {ret}\n"))
    with pytest.raises(KernelError) as info:
        dev.process(np.ones((2, 8)))
    assert said in str(info.value)


def test_syntax_error_and_missing_entry_point_fail_the_build():
    with pytest.raises(KernelError, match=r'does not compile: SyntaxError.*\n.*line 2'):
        local(effect("def process(x, params, ctx):\n    return x +\n"))
    with pytest.raises(KernelError, match=r"must define `def process"):
        local(effect("def proces(x, params, ctx):\n    return x\n"))
    with pytest.raises(KernelError, match=r"must define `def render"):
        local({**effect(PASS), "kind": "instrument"})
    with pytest.raises(KernelError, match=r"TAIL_S = -1"):
        local(effect("TAIL_S = -1\n" + PASS))


def test_context_fields():
    src = """
    def process(x, params, ctx):
        ctx.state["seen"] = (ctx.sr, ctx.tempo, ctx.beat_s, ctx.seed, ctx.np is np, ctx.dsp is dsp)
        return x + ctx.rng(3).standard_normal(x.shape)
    """
    a, b = local(effect(src), tempo_bpm=90.0, seed=42), local(effect(src), tempo_bpm=90.0, seed=42)
    ya, yb = a.process(np.zeros((2, 16))), b.process(np.zeros((2, 16)))
    assert np.array_equal(ya, yb) and np.std(ya) > 0.1
    assert a._backend.runtime.ctx.state["seen"] == (48000, 90.0, 60 / 90, 42, True, True)
    assert isinstance(a, KernelEffect)


def test_stdlib_is_read_only_and_says_where_names_come_from():
    from pytest_overdub.dsp.stdlib import stdlib

    dsp = stdlib()
    assert float(dsp.mtof(69)) == 440.0
    assert dsp.origin("mtof") == "pytest_overdub.dsp.signals.mtof"
    assert float(dsp.db(-6.0)) == pytest.approx(10 ** (-6 / 20))
    with pytest.raises(AttributeError):
        dsp.mtof = None
    with pytest.raises(AttributeError, match="has no 'nope'"):
        dsp.nope


# ---- the worked examples in docs/devices.md, run as printed


def doc_examples() -> list[dict]:
    text = DOC.read_text()
    out = []
    for section in re.split(r"^### ", text, flags=re.M)[1:]:
        code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
        op = json.loads(re.search(r"```json\n(.*?)```", section, re.S).group(1))
        out.append({**op["device"], "kernel": code})
    return out


def test_the_doc_has_three_examples():
    kinds = [d["kind"] for d in doc_examples()]
    assert kinds == ["effect", "instrument", "effect"]


def test_doc_echo_repeats_a_click_at_a_dotted_eighth():
    dev = local(doc_examples()[0])
    x = np.zeros((2, SR))
    x[:, 0] = 1.0
    y = np.concatenate([dev.process(x[:, :20000]), dev.process(x[:, 20000:])], axis=1)
    d = 18000  # 0.75 beat at 120 bpm
    assert y[0, 0] == 1.0
    assert y[0, d] == pytest.approx(0.5)
    assert y[0, 2 * d] == pytest.approx(0.5 * 0.35)
    y[:, [0, d, 2 * d]] = 0
    assert np.abs(y).max() < 1e-12


def test_doc_struck_bar_decays_by_its_t60():
    dev = local(doc_examples()[1])
    assert isinstance(dev, KernelInstrument) and dev.tail_s == 3.0
    notes = [NoteEvent(start_s=0.5, dur_s=0.2, pitch=57, velocity=1.0, index=0, params={"decay": 1.0})]
    y = dev.render(notes, n_frames=3 * SR)
    start = SR // 2
    assert np.all(y[:, :start] == 0) and np.array_equal(y[0], y[1])
    # RMS over one period-aligned window right after the onset and one second (= T60) later: the
    # fundamental (220 Hz) falls 60 dB; the faster partials are far below by then.
    w = int(SR / 220) * 20

    def rms_db(a):
        return 20 * math.log10(np.sqrt(np.mean(a ** 2)))

    drop = rms_db(y[0, start:start + w]) - rms_db(y[0, start + SR:start + SR + w])
    assert 55 < drop < 66


def test_doc_rumble_filter_response():
    dev = local(doc_examples()[2])

    def gain_db(freq_hz):
        t = np.arange(2 * SR) / SR
        x = np.tile(np.sin(2 * np.pi * freq_hz * t), (2, 1))
        y = dev.process(x)
        tail = slice(SR, 2 * SR)  # steady state, a whole number of periods
        return 20 * math.log10(np.sqrt(np.mean(y[0, tail] ** 2)) / np.sqrt(np.mean(x[0, tail] ** 2)))

    r = 40.0 / 120.0  # 2nd-order Butterworth high-pass: |H| = r^2 / sqrt(1 + r^4)
    assert gain_db(40.0) == pytest.approx(20 * math.log10(r * r / math.sqrt(1 + r ** 4)), abs=0.1)
    assert abs(gain_db(1000.0)) < 0.05


def test_output_is_checked_the_same_way_whatever_the_process_has_imported():
    """A process that has not loaded the compiled loops checks a kernel's output with them all the same
    (once the check depended on whether ``pytest_overdub.dsp.compiled`` happened to be imported)."""
    import subprocess
    import sys

    code = textwrap.dedent('''
        import sys, numpy as np
        from pytest_overdub.errors import KernelError
        from pytest_overdub.render.kernels import build_kernel_device
        src = "def process(x, params, ctx):\\n    y = x.copy()\\n    y[1, 17] = np.inf\\n    return y\\n"
        dev = build_kernel_device({"id": "t.inf", "kind": "effect", "kernel": src}, sr=48000, tempo_bpm=120.0,
                                  seed=1, trusted=True)
        before = "pytest_overdub.dsp.compiled" in sys.modules
        try:
            dev.process(np.zeros((2, 64)))
        except KernelError as e:
            print(before, "pytest_overdub.dsp.compiled" in sys.modules, str(e).splitlines()[0])
    ''')
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ("False True kernel t.inf returned inf at channel 1, frame 17; "
                                  "output must be finite (no NaN or inf)")
