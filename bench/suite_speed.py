"""How long the plugin's runs take on this machine (issue 7's speed targets).

Times, each in a fresh process:

1. the self-check over every task, serially:       pytest tasks --overdub-self-check
2. the same with two xdist workers:                 ... -n 2      (target: under 60 s on 2 cores)
3. one submission on one task, cold:                pytest tasks --overdub-submission=oracles/mix-chorus-lift.json
                                                         -k mix-chorus-lift   (target: under 3 s incl. start-up)

4. the same from a directory outside the checkout (the bundled tasks; no repo conftest.py), then with
   hypothesis's own pytest plugin turned off, then through ``overdub score`` (the scorer without pytest),

and, as the reference measured in the same run, the bare interpreter start-up with pytest imported.
Run from anywhere: ``python3 bench/suite_speed.py`` (``--quick`` skips the two full self-checks). Each
short command runs ``--repeats`` times (5) and prints its best and median: on this virtual machine the
same process (the same function-call counts) takes from 2.7 to 4.8 s of CPU from one run to the next.

Where run 3's time goes (measured on the 2-core machine, no bytecode cache: PYTHONDONTWRITEBYTECODE=1):
pytest with its plugins ~0.3 s; our modules and pydantic's model building ~0.5 s; numba's first cached
kernel ~0.4 s (its CPU target initialises; numba.np.arraymath imports scipy.linalg for its BLAS check,
0.2 s of it) and ~5 ms for each further kernel; rendering and measuring the two songs ~1.1 s;
hypothesis's own plugin imports hypothesis in its terminal summary, ~0.2 s. Costs removed so far (see
``git log``): scipy.signal/scipy.ndimage on the scoring path (1.0-1.5 s; compiled sosfilt/lfilter and
numpy peak picking give the same numbers), assertion rewriting of this package under a wheel install
(0.2-0.3 s), and the full-heap garbage collections at exit (0.7 s; :mod:`pytest_overdub.exiting`).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from importlib.metadata import entry_points
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _pytest(*args: str) -> list[str]:
    installed = any(ep.name == "overdub" for ep in entry_points(group="pytest11"))
    plugin = [] if installed else ["-p", "pytest_overdub.plugin"]
    return [sys.executable, "-m", "pytest", *plugin, "-p", "no:cacheprovider", "-q", *args]


def _time(cmd: list[str], cwd: Path) -> tuple[float, int, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    t0 = time.perf_counter()
    out = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    tail = (out.stdout.strip().splitlines() or [""])[-1]
    return seconds, out.returncode, tail


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="only the one-task run and the reference")
    parser.add_argument("--repeats", type=int, default=5,
                        help="runs of each short command (best and median printed; default 5)")
    args = parser.parse_args()
    outside = Path(tempfile.mkdtemp(prefix="overdub-speed-"))
    oracle = ROOT / "oracles" / "mix-chorus-lift.json"
    runs = [("reference: python -c 'import pytest'", [sys.executable, "-c", "import pytest"], ROOT)]
    if not args.quick:
        runs += [("self-check, serial", _pytest("tasks", "--overdub-self-check"), ROOT),
                 ("self-check, -n 2", _pytest("tasks", "--overdub-self-check", "-n", "2"), ROOT)]
    runs += [("one submission, one task (cold)",
              _pytest("tasks", f"--overdub-submission={oracle}", "-k", "mix-chorus-lift"), ROOT),
             ("the same outside the checkout",
              _pytest(f"--overdub-submission={oracle}", "-k", "mix-chorus-lift"), outside),
             # hypothesis (a dev extra) registers a pytest plugin that imports hypothesis (~0.2 s here,
             # assertion-rewritten) into every pytest run; a scoring environment without the dev extra
             # does not pay it
             ("the same, hypothesis plugin off",
              _pytest(f"--overdub-submission={oracle}", "-k", "mix-chorus-lift", "-p", "no:hypothesispytest"),
              outside),
             ("overdub score (no pytest)",
              [sys.executable, "-m", "pytest_overdub.cli", "score", "mix-chorus-lift", str(oracle)], outside)]
    ref = None
    for label, cmd, cwd in runs:
        n = 1 if label.startswith("self-check") else args.repeats
        timed = [_time(cmd, cwd) for _ in range(n)]
        secs = sorted(t[0] for t in timed)
        best, median = secs[0], statistics.median(secs)
        code, tail = max(t[1] for t in timed), timed[-1][2]
        ref = ref or best
        spread = f"best {best:6.2f} s, median {median:6.2f} s of {n}" if n > 1 else f"{best:6.2f} s"
        print(f"{label:<36} {spread}  ({best / ref:5.1f}x reference)  exit {code}  {tail}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
