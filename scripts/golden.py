"""Write the golden files that pin kgrag's behaviour (docs/golden.md).

    python scripts/golden.py --write tests/golden/data            # every section
    python scripts/golden.py --write tests/golden/data --only cli-help
    python scripts/golden.py --list
    python scripts/golden.py --build-saved-index   # rewrite tests/golden/saved_index/workdir

Runs against whichever ``kgrag`` is importable, so the goldens of an older
tree are written with ``PYTHONPATH=OLD/src`` (the generating code lives in
``tests/golden`` of this repository and uses public entry points only).
Regenerate only for an intended change of behaviour, never over a regression.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # tests.golden (kgrag itself comes from PYTHONPATH or the venv)

from tests.golden.saved_index import SAVED, build_saved_index  # noqa: E402
from tests.golden.sections import sections  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write kgrag's golden files.")
    parser.add_argument(
        "--write", metavar="DIR", type=Path, help="folder to write the sections into"
    )
    parser.add_argument("--only", nargs="+", metavar="SECTION", help="write only these sections")
    parser.add_argument("--list", action="store_true", help="list the sections and exit")
    parser.add_argument(
        "--build-saved-index",
        action="store_true",
        help=f"first rebuild the committed saved index ({SAVED.relative_to(REPO)}) with this kgrag",
    )
    args = parser.parse_args(argv)
    known = sections()
    if args.build_saved_index:
        build_saved_index()
        print(f"wrote {SAVED}", file=sys.stderr)
    if args.list or not args.write:
        print("\n".join(known))
        return 0
    unknown = set(args.only or ()) - set(known)
    if unknown:
        parser.error(f"unknown sections: {', '.join(sorted(unknown))}")
    for name in args.only or known:
        target = args.write / name
        shutil.rmtree(target, ignore_errors=True)
        known[name](target)
        print(f"wrote {target}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
