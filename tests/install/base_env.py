"""A fresh virtual environment holding only kgrag's base install, built offline.

``python -m venv --without-pip`` makes an empty environment; each
distribution of the base closure (:mod:`closure`) is then linked into its
site-packages from where it is installed here (one symlink per top-level
file or folder the distribution's RECORD lists), and kgrag's ``src`` is
added with a ``.pth`` file. Nothing is downloaded, and nothing outside the
closure is importable: a base module that imports a package of an extra
fails there.
"""

from __future__ import annotations

import subprocess
import sys
from importlib import metadata
from pathlib import Path

from .closure import closure, project_requirements

REPO = Path(__file__).resolve().parents[2]


def _top_levels(dist: metadata.Distribution) -> set[Path]:
    """The top-level entries a distribution installed into its site-packages."""
    root = Path(str(dist.locate_file("")))
    tops = set()
    for file in dist.files or []:
        parts = Path(file).parts
        if parts and parts[0] not in ("..", "__pycache__") and not str(file).endswith(".pth"):
            tops.add(root / parts[0])
    return {top for top in tops if top.exists()}


def site_packages(venv: Path) -> Path:
    """The site-packages folder of ``venv``."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    return venv / "lib" / version / "site-packages"


def base_distributions() -> dict[str, metadata.Distribution]:
    """The base closure of kgrag's pyproject, kgrag itself left out (its src is linked)."""
    found = closure(project_requirements(REPO / "pyproject.toml"))
    found.pop("kgrag", None)
    return found


def build_base_env(venv: Path) -> Path:
    """Create ``venv`` with the base closure only; return its python."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    target = site_packages(venv)
    for dist in base_distributions().values():
        for top in _top_levels(dist):
            link = target / top.name
            if not link.exists():
                link.symlink_to(top, target_is_directory=top.is_dir())
    (target / "kgrag-src.pth").write_text(f"{REPO / 'src'}\n", encoding="utf-8")
    return venv / "bin" / "python"
