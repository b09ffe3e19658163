"""Signing in to the web UI in headless Chromium: an account (POST /login) or an API key.

The credential lives in the tab's sessionStorage and goes with every call;
a call refused with 401 brings the sign-in form back. Skipped without
Debian's Chromium or Playwright, as the other browser tests.
"""

from __future__ import annotations

import pytest

from .served import ADMIN, KEY_ALL
from .webui_page import CHROMIUM, Ui

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(),
    reason="needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)",
)
sync_api = pytest.importorskip(
    "playwright.sync_api", reason="needs playwright (pip install playwright; in the dev extra)"
)


@pytest.mark.parametrize("server", ["accounts"], indirect=True)
def test_signs_in_with_an_account_and_keeps_the_token_for_the_tab(ui: Ui) -> None:
    ui.open()
    sync_api.expect(ui.page.locator("#login")).to_be_visible()
    sync_api.expect(ui.page.locator("#app")).to_be_hidden()
    ui.page.fill("#login-user", ADMIN[0])
    ui.page.fill("#login-password", "not the password")
    ui.page.locator("#account-form").get_by_role("button", name="Sign in").click()
    sync_api.expect(ui.page.locator("#login-error")).to_contain_text("Wrong user name or password")
    ui.page.fill("#login-user", ADMIN[0])
    ui.page.fill("#login-password", ADMIN[1])
    ui.page.locator("#account-form").get_by_role("button", name="Sign in").click()
    sync_api.expect(ui.page.locator("#app")).to_be_visible()
    sync_api.expect(ui.page.locator("#docs-page")).to_contain_text("0 document(s)")
    token = ui.page.evaluate("sessionStorage.getItem('kgrag.credential')")
    assert token and token.count(".") == 2  # a JWT, in sessionStorage only
    assert ui.page.evaluate("localStorage.getItem('kgrag.credential')") is None
    ui.page.click("#logout")
    sync_api.expect(ui.page.locator("#login")).to_be_visible()
    assert ui.page.evaluate("sessionStorage.getItem('kgrag.credential')") is None
    ui.assert_clean()


@pytest.mark.parametrize("server", ["key"], indirect=True)
def test_uses_an_api_key_and_asks_again_when_it_is_refused(ui: Ui) -> None:
    ui.open()
    sync_api.expect(ui.page.locator("#account-form")).to_be_hidden()  # keys only: no accounts
    ui.page.fill("#login-key", "a-key-this-server-never-heard-of-000")
    ui.page.get_by_role("button", name="Use key").click()
    sync_api.expect(ui.page.locator("#login-error")).to_contain_text("not accepted")
    ui.page.fill("#login-key", KEY_ALL)
    ui.page.get_by_role("button", name="Use key").click()
    sync_api.expect(ui.page.locator("#app")).to_be_visible()
    ui.page.evaluate("sessionStorage.setItem('kgrag.credential', 'revoked-key-0000000000000000')")
    ui.page.click("#docs-refresh")  # the next call is refused: back to sign-in
    sync_api.expect(ui.page.locator("#login")).to_be_visible()
    ui.assert_clean()
