"""Markup in the data never runs, nor even becomes markup, anywhere in the web UI.

A document whose text carries ``<script>`` and ``onerror=`` payloads (so
chunks, entity descriptions and answers carry them), uploaded under a
hostile file name, plus an entity and a relation created with hostile
names: every tab shows them, and the test checks three things after each
step: no payload ran (the flag it would set, no native dialog), no element
was parsed from the data (no img/svg/iframe, no script but the page's two),
and no Content-Security-Policy violation was reported (CSP would block an
inline handler, so a violation is the sign of markup parsed from data).
Skipped without Debian's Chromium or Playwright.
"""

from __future__ import annotations

import pytest

from .served import Served
from .webui_page import CHROMIUM, Ui, api, get

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(),
    reason="needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)",
)
sync_api = pytest.importorskip(
    "playwright.sync_api", reason="needs playwright (pip install playwright; in the dev extra)"
)

SET_FLAG = "window.__xss=1;alert(document.domain)"
SCRIPT = f"<script>{SET_FLAG}</script>"
IMG = f'<img src=x onerror="{SET_FLAG}">'
SVG = f'<svg onload="{SET_FLAG}"></svg>'
FRAME = f'"><iframe srcdoc="<script>parent.{SET_FLAG}</script>"></iframe>'
TEXT = (
    f"Mallory Evil wrote {IMG} to Alice Smith in Paris. "
    f"Alice Smith answered {SCRIPT} and Mallory Evil replied {SVG} from Paris. "
    f"Mallory Evil signed {FRAME} for Alice Smith."
)
FILE_NAME = '<img src=x onerror="window.__xss=1">.txt'
HOSTILE_ENTITY = f'<img src=x onerror="{SET_FLAG}"> Mallory'
INJECTED = "img, svg, iframe, object, embed, video, audio"


def assert_inert(ui: Ui, where: str) -> None:
    """Nothing ran and nothing was parsed from data, at this point of the test."""
    assert ui.page.evaluate("window.__xss") is None, where
    assert ui.page.evaluate(f"document.querySelectorAll({INJECTED!r}).length") == 0, where
    assert ui.page.evaluate("document.scripts.length") == 2, where  # cytoscape and app.js
    ui.assert_clean()


def hostile_graph(server: Served) -> None:
    """An entity named with markup, linked to a real one, descriptions with markup."""
    entity = {"entity_name": HOSTILE_ENTITY, "entity_data": {"description": SCRIPT + IMG}}
    api(server, "POST", "/graph/entity/create", json=entity)
    relation = {
        "source_entity": HOSTILE_ENTITY,
        "target_entity": "Alice Smith",
        "relation_data": {"description": SVG, "keywords": IMG},
    }
    api(server, "POST", "/graph/relation/create", json=relation)


def upload_through_the_page(ui: Ui) -> None:
    payload = {"name": FILE_NAME, "mimeType": "text/plain", "buffer": TEXT.encode()}
    ui.page.set_input_files("#file-input", payload)
    done = ui.page.locator("#docs-rows tr", has_text="<img src=x")
    sync_api.expect(done).to_have_attribute("data-status", "processed")
    sync_api.expect(ui.page.locator("#uploads")).to_contain_text(FILE_NAME)  # shown as text
    assert_inert(ui, "documents")


def browse_the_graph(ui: Ui) -> None:
    ui.tab("graph")
    ui.page.fill("#graph-label", "Alice")
    ui.page.locator("#graph-matches button", has_text="Alice Smith").click()
    details = ui.page.locator("#graph-details")
    sync_api.expect(details.locator(".entity-name")).to_have_text("Alice Smith")
    sync_api.expect(details).to_contain_text("onerror=")  # its description, as text
    ui.page.get_by_text("Nodes in view").click()
    ui.page.locator("#graph-nodes button", has_text="Mallory").first.click()
    ui.page.locator("#graph-nodes button", has_text=HOSTILE_ENTITY).click()
    sync_api.expect(details.locator(".entity-name")).to_have_text(HOSTILE_ENTITY)
    sync_api.expect(details).to_contain_text(SCRIPT)
    ui.page.fill("#graph-label", "<img")
    sync_api.expect(ui.page.locator("#graph-matches")).to_contain_text(HOSTILE_ENTITY)
    ui.page.locator("#dedupe-form").get_by_role("button", name="Find duplicates").click()
    sync_api.expect(ui.page.locator("#dedupe-groups li").first).to_be_visible()
    assert_inert(ui, "graph")


def merge_the_hostile_entity(ui: Ui) -> None:
    ui.page.fill("#merge-from", HOSTILE_ENTITY)
    ui.page.fill("#merge-into", "Mallory Evil")
    ui.page.locator("#merge-form").get_by_role("button", name="Merge").click()
    sync_api.expect(ui.page.locator("#confirm-text")).to_contain_text(HOSTILE_ENTITY)
    ui.confirm()
    sync_api.expect(ui.page.locator("#notice")).to_contain_text(HOSTILE_ENTITY)
    assert get(ui.server, "/graph/entity/exists", name=HOSTILE_ENTITY)["exists"] is False
    assert_inert(ui, "merge")


def ask_about_it(ui: Ui) -> None:
    ui.tab("retrieval")
    ui.page.fill("#q-text", "What did Mallory Evil write to Alice Smith?")
    ui.page.check("#q-trace")
    ui.page.click("#q-send")
    sync_api.expect(ui.page.locator("#q-trace-section")).to_be_visible()
    sync_api.expect(ui.page.locator("#q-answer")).to_contain_text("onerror=")
    for summary in ui.page.locator("#q-refs summary").all():
        summary.click()
    sync_api.expect(ui.page.locator("#q-refs")).to_contain_text(SCRIPT)
    sync_api.expect(ui.page.locator("#q-trace-out")).to_contain_text("Mallory Evil")
    assert_inert(ui, "retrieval")


def test_markup_in_documents_and_names_never_runs(ui: Ui) -> None:
    ui.open()
    upload_through_the_page(ui)
    hostile_graph(ui.server)
    browse_the_graph(ui)
    merge_the_hostile_entity(ui)
    ask_about_it(ui)
    ui.page.select_option("#lang", "zh")  # everything drawn again in the other language
    ui.tab("documents")
    sync_api.expect(ui.page.locator("#docs-rows")).to_contain_text("已处理")
    assert_inert(ui, "after switching the language")
