"""The web UI's files over HTTP, and what their source promises (no browser needed).

Served at ``/webui/`` (``/`` and ``/webui`` redirect there, inside a
workspace prefix too), public while the API stays gated, only the files
of ``kgrag/server/ui``; the page loads nothing from elsewhere, no script
renders data as HTML, every text key has both languages, and the package
ships every file.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path, PurePosixPath

import httpx
import pytest

from kgrag.server.access.security import CSP
from kgrag.server.routes.webui import FILES, UI

from .served import KEY_ALL, Served

REPO = Path(__file__).resolve().parents[2]
OWN = [p for p in UI.rglob("*") if p.is_file() and "vendor" not in p.parts]
SCRIPTS = [p for p in OWN if p.suffix == ".js"]


def test_root_and_bare_path_redirect_to_the_ui(server: Served) -> None:
    with httpx.Client(base_url=server.base_url, follow_redirects=False) as client:
        for path, target in [
            ("/", "/webui/"),
            ("/webui", "/webui/"),
            ("/w/alpha/", "/w/alpha/webui/"),
            ("/w/alpha/webui", "/w/alpha/webui/"),
        ]:
            answer = client.get(path)
            assert (answer.status_code, answer.headers["location"]) == (307, target), path


@pytest.mark.parametrize("server", ["key"], indirect=True)
def test_ui_files_are_public_and_the_api_is_not(server: Served) -> None:
    with httpx.Client(base_url=server.base_url) as client:
        page = client.get("/webui/")
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        assert page.headers["content-security-policy"] == CSP
        for name in FILES:
            assert client.get(f"/webui/{name}").status_code == 200, name
        assert client.get("/", follow_redirects=True).url.path == "/webui/"
        assert client.get("/documents/status_counts").status_code == 401
        keyed = client.get("/documents/status_counts", headers={"X-API-Key": KEY_ALL})
        assert keyed.status_code == 200


def test_scripts_and_styles_have_their_types(server: Served) -> None:
    with httpx.Client(base_url=server.base_url) as client:
        for name, kind in [
            ("app.js", "text/javascript"),
            ("vendor/cytoscape.min.js", "text/javascript"),
            ("app.css", "text/css"),
            ("vendor/LICENSE", "text/plain"),
        ]:
            answer = client.get(f"/webui/{name}")
            assert answer.headers["content-type"].startswith(kind), name
            assert answer.headers["x-content-type-options"] == "nosniff"


def test_only_the_ui_files_are_served(server: Served) -> None:
    with httpx.Client(base_url=server.base_url) as client:
        for path in [
            "/webui/missing.js",
            "/webui/%2e%2e/routes/webui.py",
            "/webui/..%2fgate.py",
            "/webui/vendor/%2e%2e/%2e%2e/app.py",
            "/webui/__init__.py",
        ]:
            assert client.get(path).status_code == 404, path


def _references(html: str) -> list[str]:
    return re.findall(r'(?:src|href)="([^"]+)"', html)


def test_the_page_loads_only_its_own_files() -> None:
    html = (UI / "index.html").read_text(encoding="utf-8")
    refs = [r for r in _references(html) if not r.startswith("#")]
    assert refs and all(r in FILES for r in refs), refs
    imports = {m for p in SCRIPTS for m in re.findall(r"from '\./([\w.]+)'", p.read_text())}
    assert imports and imports <= set(FILES), imports - set(FILES)
    for path in OWN:
        text = re.sub(r'xmlns="[^"]*"', "", path.read_text(encoding="utf-8"))  # a name, not a load
        assert not re.search(r"https?://|//[a-z0-9.-]+\.[a-z]{2,}/", text), path.name


def test_no_script_renders_data_as_html() -> None:
    """Text goes in with textContent; these would parse it (the CSP forbids eval too)."""
    parsing = re.compile(
        r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|\bFunction\("
    )
    for path in SCRIPTS:
        found = parsing.findall(path.read_text(encoding="utf-8"))
        assert not found, f"{path.name}: {found}"
    assert not re.search(r"\sstyle=|<style", (UI / "index.html").read_text(encoding="utf-8"))


def _table(source: str, name: str) -> set[str]:
    block = source.split(f"const {name} = {{", 1)[1].split("\n};", 1)[0]
    return set(re.findall(r"^\s+'([\w.-]+)':", block, re.M))


def test_every_text_key_has_both_languages() -> None:
    source = (UI / "i18n.js").read_text(encoding="utf-8")
    english, chinese = _table(source, "EN"), _table(source, "ZH")
    assert english == chinese and len(english) > 100
    html = (UI / "index.html").read_text(encoding="utf-8")
    used = set(re.findall(r'data-i18n(?:-label)?="([\w.-]+)"', html))
    for path in SCRIPTS:
        used |= set(re.findall(r"\bt\('([\w.-]+)'", path.read_text(encoding="utf-8")))
    assert used and used <= english, sorted(used - english)


def test_the_package_ships_every_ui_file() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"]["kgrag"]
    package = UI.parent.parent
    for path in UI.rglob("*"):
        if path.is_file() and "__pycache__" not in path.parts:
            name = PurePosixPath(path.relative_to(package).as_posix())
            assert any(_globbed(name, p) for p in patterns), name


def _globbed(name: PurePosixPath, pattern: str) -> bool:
    """Whether setuptools' glob ``pattern`` (``*`` within one folder) takes ``name``."""
    return len(name.parts) == len(PurePosixPath(pattern).parts) and name.match(pattern)
