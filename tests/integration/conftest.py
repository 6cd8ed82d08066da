"""The plugin's own runs under pytester, as a user's terminal shows them.

pytest prints each failure's whole message again in its short summary when it runs on CI (``CI`` or
``BUILD_NUMBER`` set), and only the first line elsewhere; the tests that count how often a message is
shown mean the plugin's own output, so the inner runs never take the CI form.
"""

import pytest


@pytest.fixture(autouse=True)
def _inner_runs_are_not_on_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("BUILD_NUMBER", raising=False)

