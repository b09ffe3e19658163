"""Load time and peak memory of large generated files (PDF, DOCX).

    python scripts/bench_loaders.py [--pdf-mb 50] [--docx-mb 20]

Builds a multi-page text PDF (uncompressed content streams, by hand) and a
DOCX of many paragraphs (python-docx) of about the given sizes, then loads
each with ``kgrag.ingest.loaders.load_file`` in a fresh subprocess and
prints one JSON line per file: size, seconds, text characters, pages or
blocks, and the subprocess's peak RSS.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

WORDS = (
    "river",
    "council",
    "harbour",
    "ledger",
    "winter",
    "archive",
    "signal",
    "orchard",
    "meridian",
    "lantern",
    "treaty",
    "foundry",
    "glacier",
    "pilgrim",
    "quarry",
    "velvet",
)


def sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(8, 16))]
    return " ".join(words).capitalize() + f" {rng.randint(1000, 9999)}."


def _page_stream(rng: random.Random, page: int) -> bytes:
    ops = ["BT", "/F1 10 Tf", "50 760 Td", "12 TL", f"(Annual report - page {page}) Tj", "T*"]
    ops += [f"({sentence(rng)}) Tj T*" for _ in range(60)]
    ops.append("ET")
    return "\n".join(ops).encode("latin-1")


def write_pdf(path: Path, target_mb: float) -> int:
    """A text PDF of about ``target_mb`` MB; returns its page count."""
    rng, streams = random.Random(7), []
    while sum(len(s) for s in streams) < target_mb * 1e6:
        streams.append(_page_stream(rng, len(streams) + 1))
    n = len(streams)
    kids = " ".join(f"{4 + 2 * i} 0 R" for i in range(n)).encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [" + kids + b"] /Count %d >>" % n,
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    for i, stream in enumerate(streams):
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            b"/Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>" % (5 + 2 * i)
        )
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    path.write_bytes(bytes(out))
    return n


def write_docx(path: Path, target_mb: float) -> int:
    """A DOCX of headings and paragraphs of about ``target_mb`` MB; returns paragraphs."""
    import docx

    rng, document, count = random.Random(11), docx.Document(), 0
    while True:
        document.add_heading(f"Section {count // 50 + 1}", level=1)
        for _ in range(50):
            document.add_paragraph(" ".join(sentence(rng) for _ in range(6)))
            count += 1
        if count % 25000 == 0:
            document.save(path)
            if path.stat().st_size >= target_mb * 1e6:
                return count


PROBE = """
import json, resource, sys, time
from kgrag.ingest.loaders import load_file
started = time.perf_counter()
doc = load_file(sys.argv[1])
seconds = time.perf_counter() - started
print(json.dumps({"seconds": round(seconds, 2), "chars": len(doc.content),
                  "blocks": len(doc.blocks or []),
                  "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}))
"""


def measure(path: Path) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", PROBE, str(path)], capture_output=True, text=True, check=True
    )
    row = json.loads(out.stdout)
    row.update(
        file=path.name,
        mb=round(path.stat().st_size / 1e6, 1),
        mb_per_s=round(path.stat().st_size / 1e6 / max(row["seconds"], 1e-9), 2),
    )
    return row


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--pdf-mb", type=float, default=50)
    p.add_argument("--docx-mb", type=float, default=20)
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        pdf, docx_path = Path(tmp) / "big.pdf", Path(tmp) / "big.docx"
        pages = write_pdf(pdf, a.pdf_mb)
        print(json.dumps({**measure(pdf), "pages": pages}), flush=True)
        paragraphs = write_docx(docx_path, a.docx_mb)
        print(json.dumps({**measure(docx_path), "paragraphs": paragraphs}), flush=True)


if __name__ == "__main__":
    main()
