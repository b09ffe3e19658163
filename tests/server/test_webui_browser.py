"""The web UI in headless Chromium against a real server with the fake models.

Each test drives the page as a user would (clicks, typing, file inputs,
drops) and checks both what the page shows and what the server then
holds. Skipped when Debian's Chromium (``/usr/bin/chromium``) or
Playwright is missing; nothing is downloaded (the system browser is used).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .conftest import StartServer
from .webui_page import CHROMIUM, Ui, api, get, index_text, opened

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(),
    reason="needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)",
)
sync_api = pytest.importorskip(
    "playwright.sync_api", reason="needs playwright (pip install playwright; in the dev extra)"
)

BOOK = (
    "Ada Lovelace worked with Charles Babbage on the Analytical Engine in London. "
    "Charles Babbage designed the Difference Engine. Ada Lovelace wrote the first program."
)


def drop_file(ui: Ui, name: str, text: str) -> None:
    """Drop a file on the drop zone, as a drag from the desktop does."""
    ui.page.evaluate(
        """([name, text]) => {
            const data = new DataTransfer();
            data.items.add(new File([text], name, { type: 'text/plain' }));
            const drop = new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true });
            document.getElementById('dropzone').dispatchEvent(drop);
        }""",
        [name, text],
    )


def row(ui: Ui, name: str) -> Any:
    return ui.page.locator("#docs-rows tr", has_text=name)


def test_uploads_several_files_and_watches_them_reach_processed(ui: Ui, tmp_path: Path) -> None:
    ui.open()
    assert ui.page.url.endswith("/webui/")
    first, second = tmp_path / "babbage.txt", tmp_path / "lovelace.md"
    first.write_text(BOOK, encoding="utf-8")
    second.write_text("# Notes\n\nAda Lovelace met Mary Somerville in London.", encoding="utf-8")
    ui.page.set_input_files("#file-input", [str(first), str(second)])
    drop_file(ui, "engine.txt", "Charles Babbage built the Difference Engine in London.")
    for name in ("babbage.txt", "lovelace.md", "engine.txt"):
        sync_api.expect(row(ui, name)).to_have_attribute("data-status", "processed")
    uploads = ui.page.locator("#uploads > li")
    sync_api.expect(uploads).to_have_count(2)  # one line per upload request
    sync_api.expect(uploads.first).to_have_attribute("data-status", "succeeded")
    assert (
        ui.page.locator("#uploads > li[data-progress='1']").count() == 2
    )  # XHR upload progress seen
    listed = api(ui.server, "POST", "/documents/paginated", json={"page": 1, "page_size": 10})
    assert listed["status_counts"]["processed"] == 3
    ui.assert_clean()


MOSTLY_UTF8 = (
    "Ada Lovelace — café, naïve, Zürich, São Paulo, façade; ".encode() + b"\xff" + b" the end."
)


def test_refused_file_and_warnings_are_shown_then_filtered_and_deleted(
    ui: Ui, tmp_path: Path
) -> None:
    ui.open()
    broken, damaged = tmp_path / "broken.pdf", tmp_path / "damaged.txt"
    broken.write_bytes(b"%PDF-1.4 this is not really a PDF")
    damaged.write_bytes(MOSTLY_UTF8)
    ui.page.set_input_files("#file-input", [str(broken), str(damaged)])
    upload = ui.page.locator("#uploads li.upload")
    refused = upload.locator(".upload-files li", has_text="broken.pdf")
    sync_api.expect(refused).to_have_attribute("data-status", "failed")
    sync_api.expect(refused).to_contain_text("corrupt PDF")  # the loader's reason, per file
    warned = row(ui, "damaged.txt")
    sync_api.expect(warned).to_have_attribute("data-status", "processed")
    warned.locator("details.warnings summary").click()
    listed = api(ui.server, "POST", "/documents/paginated", json={"search": "damaged"})
    (warning,) = listed["documents"][0]["warnings"]  # the loader's, about the bad byte
    sync_api.expect(warned.locator("details.warnings li")).to_have_text(warning)
    ui.page.get_by_label("failed (1)").check()  # the status filter: the refused file is listed
    rows = ui.page.locator("#docs-rows tr[data-doc-id]")
    sync_api.expect(rows).to_have_count(1)
    sync_api.expect(row(ui, "broken.pdf")).to_have_attribute("data-status", "failed")
    sync_api.expect(row(ui, "broken.pdf")).to_contain_text("corrupt PDF")
    ui.page.get_by_label("processed (1)").check()  # either status
    sync_api.expect(rows).to_have_count(2)
    warned.get_by_role("button", name="Delete damaged.txt").click()
    ui.confirm()
    sync_api.expect(rows).to_have_count(1)
    row(ui, "broken.pdf").get_by_role("button", name="Delete broken.pdf").click()
    ui.confirm()
    sync_api.expect(rows).to_have_count(0)
    assert get(ui.server, "/documents/status_counts")["status_counts"]["all"] == 0
    ui.assert_clean()


def test_supersede_replaces_a_document_with_a_new_file(ui: Ui, tmp_path: Path) -> None:
    old = index_text(ui.server, BOOK, "book.txt")
    ui.open()
    newer = tmp_path / "book-v2.txt"
    newer.write_text("Grace Hopper wrote the first compiler in Philadelphia.", encoding="utf-8")
    with ui.page.expect_file_chooser() as chooser:
        row(ui, "book.txt").get_by_role("button", name="Replace book.txt with a new file").click()
    chooser.value.set_files(str(newer))
    sync_api.expect(row(ui, "book-v2.txt")).to_have_attribute("data-status", "processed")
    sync_api.expect(ui.page.locator(f"#docs-rows tr[data-doc-id='{old}']")).to_have_count(0)
    assert get(ui.server, "/graph/entity/exists", name="Grace Hopper")["exists"] is True
    ui.assert_clean()


def open_entity(ui: Ui, typed: str, name: str) -> None:
    ui.tab("graph")
    ui.page.fill("#graph-label", typed)
    ui.page.locator("#graph-matches button", has_text=name).click()
    sync_api.expect(ui.page.locator("#graph-details .entity-name")).to_have_text(name)


def test_finds_an_entity_draws_its_graph_and_edits_its_description(ui: Ui) -> None:
    index_text(ui.server, BOOK, "book.txt")
    ui.open()
    open_entity(ui, "lovel", "Ada Lovelace")
    sync_api.expect(ui.page.locator("#graph-summary")).to_contain_text("5 node(s)")
    assert ui.page.locator("#graph-canvas canvas").count() > 0  # cytoscape drew
    details = ui.page.locator("#graph-details")
    sync_api.expect(details).to_contain_text("book.txt")  # its source file
    sync_api.expect(details).to_contain_text("chunk-")  # and chunk
    ui.page.get_by_text("Nodes in view").click()  # the list of nodes: the keyboard's way in
    ui.page.locator("#graph-nodes button", has_text="Charles Babbage").click()
    sync_api.expect(details.locator(".entity-name")).to_have_text("Charles Babbage")
    ui.page.fill("#edit-description", "Designer of the Analytical Engine.")
    details.get_by_role("button", name="Save").click()
    sync_api.expect(ui.page.locator("#notice")).to_contain_text("saved")
    graph = get(ui.server, "/graphs", label="Charles Babbage", max_depth=1, max_nodes=10)
    node = next(n for n in graph["nodes"] if n["id"] == "Charles Babbage")
    assert node["properties"]["description"] == "Designer of the Analytical Engine."
    ui.assert_clean()


def test_merges_two_entities(ui: Ui) -> None:
    index_text(ui.server, BOOK, "book.txt")
    ui.open()
    open_entity(ui, "analyt", "Analytical Engine")
    ui.page.fill("#merge-from", "Difference Engine")
    ui.page.fill("#merge-into", "Analytical Engine")
    ui.page.locator("#merge-form").get_by_role("button", name="Merge").click()
    ui.confirm()
    sync_api.expect(ui.page.locator("#notice")).to_contain_text("merged into Analytical Engine")
    sync_api.expect(ui.page.locator("#graph-summary")).to_contain_text("4 node(s)")
    assert get(ui.server, "/graph/entity/exists", name="Difference Engine")["exists"] is False
    assert len(get(ui.server, "/graph/merges")["merges"]) == 1
    ui.assert_clean()


def test_dedupe_review_accepts_one_group_and_rejects_another(ui: Ui) -> None:
    text = (
        "Charles Babbage designed engines. Babbage wrote notes in London. "
        "Mary Somerville met Charles Babbage. Somerville wrote books in London."
    )
    index_text(ui.server, text, "dupes.txt")
    report = get(ui.server, "/graph/dedupe", min_score=0.3)["groups"]
    assert len(report) == 2  # Babbage, Somerville: each a shorter name of one person
    ui.open()
    ui.tab("graph")
    ui.page.fill("#dedupe-score", "0.3")
    ui.page.locator("#dedupe-form").get_by_role("button", name="Find duplicates").click()
    groups = ui.page.locator("#dedupe-groups li.group")
    sync_api.expect(groups).to_have_count(2)
    first, second = report[0], report[1]
    sync_api.expect(groups.nth(0)).to_contain_text(f"{first['target']} ⇐ {first['members'][0]}")
    groups.nth(1).get_by_text("Evidence").click()
    sync_api.expect(groups.nth(1)).to_contain_text(second["links"][0]["for"][0])
    groups.nth(1).get_by_role("button", name="Reject").click()
    sync_api.expect(groups.nth(1)).to_contain_text("Rejected")
    groups.nth(0).get_by_role("button", name="Accept").click()
    sync_api.expect(groups.nth(0)).to_contain_text("Merged")
    merges = get(ui.server, "/graph/merges")["merges"]
    assert [(m["target"], m["sources"]) for m in merges] == [(first["target"], first["members"])]
    names = get(ui.server, "/graph/label/list")
    assert first["members"][0] not in names and second["members"][0] in names
    ui.assert_clean()


def test_streams_an_answer_with_references_coverage_and_trace(ui: Ui) -> None:
    index_text(ui.server, BOOK, "book.txt")
    ui.open()
    ui.tab("retrieval")
    ui.page.fill("#q-text", "Who worked with Charles Babbage?")
    ui.page.select_option("#q-mode", "local")
    ui.page.fill("#q-topk", "10")
    ui.page.check("#q-trace")
    with ui.page.expect_response(lambda r: r.url.endswith("/query/stream")) as streamed:
        ui.page.click("#q-send")
    response = streamed.value
    assert response.headers["content-type"].startswith("application/x-ndjson")
    body = response.request.post_data_json
    assert (body["mode"], body["top_k"], body["query"]) == (
        "local",
        10,
        "Who worked with Charles Babbage?",
    )
    sync_api.expect(ui.page.locator("#q-trace-section")).to_be_visible()
    answer = ui.page.locator("#q-answer")
    sync_api.expect(answer).to_contain_text("Ada Lovelace worked with Charles Babbage")
    lines = [line for line in response.text().splitlines() if line.strip()]
    assert len(lines) > 3  # references, several pieces, the final line
    refs = ui.page.locator("#q-refs li")
    assert refs.count() >= 1
    sync_api.expect(refs.first).to_contain_text("book.txt")
    sync_api.expect(refs.first).to_contain_text("chars 0–")
    answer.locator("a.cite").first.click()  # a citation opens its reference
    sync_api.expect(ui.page.locator("#q-refs details[open] .ref-text")).to_contain_text(
        "Analytical Engine"
    )
    sync_api.expect(ui.page.locator("#q-coverage")).to_contain_text("Charles Babbage (object)")
    sync_api.expect(ui.page.locator("#q-coverage")).to_contain_text("covered")
    trace = ui.page.locator("#q-trace-out")
    sync_api.expect(trace).to_contain_text("What each route found")
    sync_api.expect(trace.locator("td", has_text="local").first).to_be_visible()
    sync_api.expect(ui.page.locator("#q-meta")).to_contain_text("mode local")
    ui.assert_clean()


def test_switches_language_and_remembers_it(ui: Ui) -> None:
    index_text(ui.server, BOOK, "book.txt")
    ui.open()
    sync_api.expect(ui.page.locator("#tab-documents")).to_have_text("Documents")
    ui.page.select_option("#lang", "zh")
    sync_api.expect(ui.page.locator("#tab-documents")).to_have_text("文档")
    sync_api.expect(ui.page.locator("#tab-graph")).to_have_text("知识图谱")
    sync_api.expect(row(ui, "book.txt")).to_contain_text("已处理")  # dynamic text too
    assert ui.page.evaluate("document.documentElement.lang") == "zh-CN"
    ui.page.reload()
    sync_api.expect(ui.page.locator("#tab-retrieval")).to_have_text("检索")
    assert ui.page.input_value("#lang") == "zh"
    missing = ui.page.evaluate(
        """async () => {
            const { TABLES } = await import('./i18n.js');
            const en = Object.keys(TABLES.en), zh = Object.keys(TABLES.zh);
            return [en.filter((k) => !zh.includes(k)), zh.filter((k) => !en.includes(k))];
        }"""
    )
    assert missing == [[], []]
    ui.page.select_option("#lang", "en")
    sync_api.expect(ui.page.locator("#tab-retrieval")).to_have_text("Retrieval")
    ui.assert_clean()


def test_tabs_are_reachable_with_the_keyboard(ui: Ui) -> None:
    ui.open()
    ui.page.focus("#tab-documents")
    ui.page.keyboard.press("ArrowRight")
    sync_api.expect(ui.page.locator("#panel-graph")).to_be_visible()
    assert ui.page.evaluate("document.activeElement.id") == "tab-graph"
    ui.page.keyboard.press("End")
    sync_api.expect(ui.page.locator("#panel-retrieval")).to_be_visible()
    ui.page.keyboard.press("Tab")  # from the tab into the panel: the question
    assert ui.page.evaluate("document.activeElement.id") == "q-text"
    ui.assert_clean()


def test_workspace_prefix_serves_that_workspace(start_server: StartServer, browser: Any) -> None:
    server = start_server()
    index_text(server, BOOK, "default.txt")
    with opened(browser, server) as ui:
        ui.open("/w/alpha/")
        assert ui.page.url.endswith("/w/alpha/webui/")
        sync_api.expect(ui.page.locator("#docs-page")).to_contain_text("0 document(s)")
        ui.page.set_input_files(
            "#file-input", {"name": "alpha.txt", "mimeType": "text/plain", "buffer": BOOK.encode()}
        )
        sync_api.expect(row(ui, "alpha.txt")).to_have_attribute("data-status", "processed")
        ui.assert_clean()
    alpha = api(server, "POST", "/documents/paginated", json={}, headers={"X-Workspace": "alpha"})
    listed = alpha["documents"]
    assert [d["metadata"]["original_name"] for d in listed] == ["alpha.txt"]
    default = api(server, "POST", "/documents/paginated", json={})["documents"]
    assert [d["metadata"]["original_name"] for d in default] == ["default.txt"]
