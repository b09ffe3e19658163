"""Peak RSS and time of ``load_file`` on hostile archives, at the sizes of issue 20.

Files (built in a temporary folder with ``tests/ingest/forged_zip.py``):

* forged bombs: a real .docx, .odt, .xlsx, .epub and .pptx whose main XML
  member inflates 1.5 GiB (``--inflate``) past the size and CRC-32 its
  directory declares;
* a large legal .docx whose ``document.xml`` is 240 MiB (``--xml-mib``)
  of varied paragraphs (about 100 MB on disk, within every zip budget).

Each file is loaded under the default budgets in a fresh interpreter with
its address space capped (``--cap-gib``) and a time limit (``--timeout``);
the parent samples the child's ``VmHWM`` (its own peak RSS since exec) so
a run stopped at the limit still has a figure.

    .venv/bin/python scripts/bench_hostile_files.py
    # the same files against another checkout's sources (e.g. before a fix):
    git archive <commit> src | tar -x -C /tmp/old
    .venv/bin/python scripts/bench_hostile_files.py --src /tmp/old/src
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]

from tests.ingest.forged_zip import MiB, forge, large_docx  # noqa: E402

_CHILD = """
import json, resource, sys, time
cap = int(sys.argv[2])
resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
import openpyxl, pptx
from kgrag.errors import LoaderError
from kgrag.ingest.loaders import load_file
started = time.perf_counter()
try:
    outcome = {"read": len(load_file(sys.argv[1]).content)}
except LoaderError as exc:
    outcome = {"refused": exc.reason}
except MemoryError:
    outcome = {"crashed": "MemoryError"}
outcome["seconds"] = round(time.perf_counter() - started, 3)
print(json.dumps(outcome))
"""


def _hwm_mib(pid: int) -> float | None:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    return int(status.split("VmHWM:")[1].split()[0]) / 1024 if "VmHWM:" in status else None


def measure(path: Path, src: str | None, cap: int, timeout: float) -> dict:
    """Load ``path`` in a child; its outcome, seconds and peak RSS (MiB)."""
    env = dict(os.environ, **({"PYTHONPATH": src} if src else {}))
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(path), str(cap)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    started, peak = time.monotonic(), 0.0
    while child.poll() is None:
        peak = max(peak, _hwm_mib(child.pid) or 0.0)
        if time.monotonic() - started > timeout:
            child.kill()
            child.wait()
            return {"stopped": f"still running after {timeout:.0f} s", "rss_mib": round(peak)}
        time.sleep(0.05)
    out, err = child.communicate()
    outcome = json.loads(out) if out.strip() else {"crashed": err.strip().splitlines()[-1:]}
    outcome["rss_mib"] = round(peak)  # sampled; the child's own VmHWM at its last sample
    return outcome


def build(folder: Path, inflate: int, xml_mib: int) -> dict[str, Path]:
    from test_formats import docx_file
    from test_formats_more import epub_file, odt_file, pptx_file, xlsx_file

    members = {
        ".docx": (docx_file, "word/document.xml"),
        ".odt": (odt_file, "content.xml"),
        ".xlsx": (xlsx_file, "xl/worksheets/sheet1.xml"),
        ".epub": (epub_file, "OEBPS/text/ch1.xhtml"),
        ".pptx": (pptx_file, "ppt/slides/slide1.xml"),
    }
    files = {}
    for suffix, (make, member) in members.items():
        real, bomb = folder / f"real{suffix}", folder / f"forged{suffix}"
        make(real)
        forge(real, bomb, member, inflate)
        files[f"forged {suffix}"] = bomb
    files["legal .docx"] = folder / "legal.docx"
    large_docx(files["legal .docx"], xml_mib * MiB)
    return files


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--src", help="PYTHONPATH of the kgrag sources to measure")
    parser.add_argument("--inflate", type=int, default=1536, help="MiB past the claim")
    parser.add_argument("--xml-mib", type=int, default=240)
    parser.add_argument("--cap-gib", type=float, default=6.0)
    parser.add_argument("--timeout", type=float, default=60.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        files = build(Path(tmp), args.inflate * MiB, args.xml_mib)
        for label, path in files.items():
            outcome = measure(path, args.src, int(args.cap_gib * 1024 * MiB), args.timeout)
            size = path.stat().st_size / 1e6
            print(json.dumps({"file": label, "mb_on_disk": round(size, 1), **outcome}))


if __name__ == "__main__":
    main()
