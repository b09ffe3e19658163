"""Delete and supersede on a benchmark index, beside a full re-index.

    python scripts/bench_lifecycle.py --corpus RUN/corpus --workdir RUN/kgrag/workdir

``RUN`` is a ``run_bench.py --run-dir`` folder (its 200-document corpus and
the kgrag index built from it). The index is copied, never changed. Each
operation runs as the CLI a user would run, against a fresh synth_llm
(``../shared/bench/synth_llm.py``), and reports wall seconds and the LLM
calls the server counted:

- delete one document;
- supersede one document edited in its first paragraph (one more
  sentence: with token-window chunks every later chunk shifts), then the
  same document edited once more at its end (only the last chunk changes);
  the file is restored afterwards;
- ``kgrag status``, for the start-up cost every CLI call pays;
- a full index of the remaining documents into an empty workdir (what a
  user without delete / supersede would have to do).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

SYNTH = Path(__file__).resolve().parents[2] / "shared" / "bench" / "synth_llm.py"
KGRAG = [sys.executable, "-m", "kgrag.cli.main"]


def start_synth() -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(
        [sys.executable, str(SYNTH), "--port", "0"],
        stdout=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    info = json.loads(proc.stdout.readline())  # type: ignore[union-attr]
    return proc, f"http://{info.get('host', '127.0.0.1')}:{info['port']}/v1"


def stats(base: str) -> dict:
    with urllib.request.urlopen(f"{base}/stats", timeout=10) as r:
        return json.loads(r.read())


def chat_calls(base: str) -> dict[str, int]:
    return {k: v for k, v in stats(base).get("calls", {}).items() if v}


def reset(base: str) -> None:
    urllib.request.urlopen(urllib.request.Request(f"{base}/stats/reset", method="POST"), timeout=10)


def run(env: dict, *args: str) -> tuple[float, str]:
    started = time.perf_counter()
    out = subprocess.run([*KGRAG, *args], env=env, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"kgrag {' '.join(args)} failed:\n{out.stderr}")
    return time.perf_counter() - started, out.stdout


def measure(label: str, base: str, env: dict, *args: str) -> dict:
    reset(base)
    seconds, out = run(env, *args)
    row = {"operation": label, "wall_s": round(seconds, 2), "llm_calls": chat_calls(base)}
    if args[0] == "delete":  # the CLI says how long the operation itself took
        row["operation_s"] = json.loads(out)["seconds"]
    print(json.dumps(row), flush=True)
    return row


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--corpus", type=Path, required=True)
    p.add_argument("--workdir", type=Path, required=True)
    a = p.parse_args()
    proc, base = start_synth()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KGRAG_", "OPENAI_"))}
    env.update(OPENAI_BASE_URL=base, OPENAI_API_KEY="synth-key")
    tmp = Path(tempfile.mkdtemp(prefix="kgrag-lifecycle-"))
    files = sorted(a.corpus.resolve().glob("*"))
    victim, edited = files[0], files[1]
    original = edited.read_text()
    try:
        work = tmp / "idx"
        shutil.copytree(a.workdir, work)
        rows = [
            measure(
                "delete one document",
                base,
                env,
                "delete",
                "--json",
                "--workdir",
                str(work),
                str(victim),
            )
        ]
        first, sep, rest = original.partition("\n\n")
        edited.write_text(first + " A later report corrected this account." + sep + rest)
        rows.append(
            measure(
                "supersede one document (one chunk edited)",
                base,
                env,
                "index",
                "--no-progress",
                "--workdir",
                str(work),
                str(edited),
            )
        )
        edited.write_text(edited.read_text().rstrip("\n") + " A second note was added.\n")
        rows.append(
            measure(
                "supersede it again (its last chunk edited instead)",
                base,
                env,
                "index",
                "--no-progress",
                "--workdir",
                str(work),
                str(edited),
            )
        )
        rows.append(
            measure(
                "status (start-up cost of one CLI call)",
                base,
                env,
                "status",
                "--workdir",
                str(work),
            )
        )
        rows.append(
            measure(
                f"full index of the remaining {len(files) - 1} documents",
                base,
                env,
                "index",
                "--no-progress",
                "--workdir",
                str(tmp / "full"),
                *map(str, files[1:]),
            )
        )
        _, out = run(env, "check", "--workdir", str(work))
        print(out.strip())
    finally:
        edited.write_text(original)
        proc.terminate()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
