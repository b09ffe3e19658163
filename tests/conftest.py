"""What every test of the suite shares: a hermetic start.

Nothing of the developer's shell or folder reaches a test: the ``KGRAG_*``
and ``OPENAI_*`` variables are removed when the session starts (before any
test, so the commands the tests start see none either), except the
``KGRAG_TEST_*`` switches of the suite itself (``KGRAG_TEST_POSTGRES_DSN``);
and the session runs in an empty folder of its own, so that no ``.env`` of
the working directory is read and nothing is written beside the sources
(but Hypothesis's examples, kept in ``.hypothesis/`` of the checkout).
A test names the environment it needs (``tests.support.settings.FAKE_ENV``).

Shared helpers live in ``tests/support/`` (the scripted chat, the settings
helper, the fake OpenAI-compatible server, PostgreSQL); the fixtures of one
folder in that folder's ``conftest.py``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

LEAKY = ("KGRAG_", "OPENAI_")
SUITE_SWITCHES = "KGRAG_TEST_"


def pytest_configure(config: pytest.Config) -> None:
    for name in list(os.environ):
        if name.startswith(LEAKY) and not name.startswith(SUITE_SWITCHES):
            del os.environ[name]
    # Hypothesis keeps its examples in the checkout, not in the session's folder
    from hypothesis.configuration import set_hypothesis_home_dir

    set_hypothesis_home_dir(config.rootpath / ".hypothesis")


@pytest.fixture(scope="session", autouse=True)
def _empty_working_directory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Run the session in an empty folder (no ``.env`` read, nothing written in the checkout)."""
    here = os.getcwd()
    os.chdir(tmp_path_factory.mktemp("cwd"))
    try:
        yield
    finally:
        os.chdir(here)
