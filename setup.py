"""Build hook: a plain (not editable) wheel carries the bench's data as ``pytest_overdub/data``.

The bench lives at the top of the checkout (``tasks/``, ``songs/``, ``oracles/``, ``near_misses/``);
``bundled_bench()`` reads them there in a checkout or an editable install, and from
``pytest_overdub/data/<dir>`` in an installed wheel; ``docs/*.md`` travel as ``pytest_overdub/data/docs``
for the studio's guides. Everything else is in pyproject.toml.
"""

from pathlib import Path
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py

BENCH_DIRS = ("tasks", "songs", "oracles", "near_misses")


class BuildPyWithBench(build_py):
    """build_py that also copies the bench's JSON files into the built package."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return  # an editable install reads the checkout's own directories
        root = Path(__file__).resolve().parent
        data = Path(self.build_lib) / "pytest_overdub" / "data"
        for name in BENCH_DIRS:
            target = data / name
            target.mkdir(parents=True, exist_ok=True)
            for src in sorted((root / name).glob("*.json")):
                shutil.copyfile(src, target / src.name)
        (data / "docs").mkdir(parents=True, exist_ok=True)
        for src in sorted((root / "docs").glob("*.md")):  # the studio's guides read them (studio/guide.py)
            shutil.copyfile(src, data / "docs" / src.name)


setup(cmdclass={"build_py": BuildPyWithBench})
