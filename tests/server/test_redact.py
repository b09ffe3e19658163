"""What the server shows of operators' texts: no endpoint address, no path of this machine."""

from __future__ import annotations

from pathlib import Path

from kgrag.server.access.redact import client_text, scrubbed


def test_a_server_path_becomes_its_file_name_and_a_route_stays(tmp_path: Path) -> None:
    path = tmp_path / "inputs" / "report.pdf"
    path.parent.mkdir()
    text = f"{path}: the file contains no text; upload it again with POST /documents/upload."
    assert client_text(text) == (
        "report.pdf: the file contains no text; upload it again with POST /documents/upload."
    )


def test_job_records_are_scrubbed_throughout(tmp_path: Path) -> None:
    job = {
        "error": "ModelServerError: openai:gpt-4o@127.0.0.1:9999: connection failed",
        "result": {"failed": [{"error": f"{tmp_path}/a.txt: unreadable"}], "count": 3},
    }
    shown = scrubbed(job)
    assert shown["error"] == "ModelServerError: openai:gpt-4o: connection failed"
    assert shown["result"] == {"failed": [{"error": "a.txt: unreadable"}], "count": 3}
