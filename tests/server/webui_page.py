"""Driving the web UI in headless Chromium (Debian's ``/usr/bin/chromium``) with Playwright.

:class:`Ui` wraps one page of one fresh browser context, recording what a
test must never see: page errors, Content-Security-Policy violations and
dialogs (the UI asks with an HTML ``<dialog>``, never ``alert``/``confirm``,
so any native dialog is a script that should not have run).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .served import Served

CHROMIUM = Path("/usr/bin/chromium")
TIMEOUT_MS = 20_000


@dataclass
class Ui:
    """A page on the served UI and what went wrong on it."""

    page: Any
    server: Served
    errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)

    def watch(self) -> None:
        from playwright.sync_api import expect

        expect.set_options(timeout=TIMEOUT_MS)
        self.page.set_default_timeout(TIMEOUT_MS)
        self.page.on("pageerror", lambda exc: self.errors.append(f"page error: {exc}"))
        self.page.on("console", self._console)
        self.page.on("dialog", self._dialog)

    def _console(self, message: Any) -> None:
        if "Content Security Policy" in message.text or message.type == "assert":
            self.errors.append(f"console: {message.text}")

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    def open(self, path: str = "/") -> None:
        """Load the UI (``/`` redirects to ``/webui/``) and wait until it is ready."""
        self.page.goto(self.server.base_url + path)
        self.page.wait_for_selector("#app:not([hidden]), #login:not([hidden])")

    def tab(self, name: str) -> None:
        self.page.click(f"#tab-{name}")
        self.page.wait_for_selector(f"#panel-{name}:not([hidden])")

    def confirm(self) -> None:
        """Answer OK in the UI's confirmation dialog."""
        self.page.wait_for_selector("#confirm[open]")
        self.page.click("#confirm-ok")

    def assert_clean(self) -> None:
        assert not self.errors, self.errors
        assert not self.dialogs, self.dialogs


def index_text(server: Served, text: str, name: str = "notes.txt") -> str:
    """Upload ``text`` as a file through the API and wait until it is indexed; its doc id."""
    with server.client() as client:
        answer = client.post(
            "/documents/upload", files=[("file", (name, text.encode(), "text/plain"))]
        )
        answer.raise_for_status()
        job = client.get(f"/jobs/{answer.json()['job_id']}", params={"wait": 30}).json()
    assert job["status"] == "succeeded", job
    return str(job["result"]["processed"][0])


def api(server: Served, method: str, path: str, **kwargs: Any) -> Any:
    with server.client() as client:
        response = client.request(method, path, **kwargs)
    response.raise_for_status()
    return response.json()


def get(server: Served, path: str, **params: Any) -> Any:
    return api(server, "GET", path, params=params)


@contextmanager
def launched() -> Iterator[Any]:
    """Debian's Chromium, headless, driven by Playwright (no browser download)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        try:
            yield browser
        finally:
            browser.close()


@contextmanager
def opened(browser: Any, server: Served) -> Iterator[Ui]:
    """A :class:`Ui` in a fresh browser context (empty storage) on ``server``."""
    context = browser.new_context()
    try:
        ui = Ui(context.new_page(), server)
        ui.watch()
        yield ui
    finally:
        context.close()
