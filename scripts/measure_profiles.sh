#!/usr/bin/env bash
# Install size and time of each kgrag install profile (pip extra), each in a fresh
# virtual environment under /tmp, downloading from the package index with no pip
# cache; then the import time of `kgrag` in the base profile.
#
# Usage: scripts/measure_profiles.sh [PYTHON]      (default: python3)
#
# Size is the environment's size minus that of an empty environment; time is the
# wall time of `pip install` (download, build of kgrag's wheel, install), so it
# depends on the network and the machine. Profiles: base (no extra), local,
# office, all, dev (the development tools, on top of base).
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
PYTHON=${1:-python3}
ROOT=$(mktemp -d /tmp/kgrag-profiles.XXXXXX)
trap 'rm -rf "$ROOT"' EXIT

# A copy of what a wheel is built from, so no build output lands in the checkout.
mkdir "$ROOT/kgrag"
cp -r "$REPO/pyproject.toml" "$REPO/README.md" "$REPO/src" "$ROOT/kgrag/"

kib() { du -sk "$1" | cut -f1; }

"$PYTHON" -m venv "$ROOT/empty"
empty=$(kib "$ROOT/empty")
echo "$("$PYTHON" --version), $("$ROOT/empty/bin/pip" --version | cut -d' ' -f1-2)"
printf '%-7s %9s %9s\n' profile MiB seconds
for profile in base local office all dev; do
  spec="$ROOT/kgrag"
  [ "$profile" = base ] || spec="$ROOT/kgrag[$profile]"
  venv="$ROOT/$profile"
  "$PYTHON" -m venv "$venv"
  start=$(date +%s.%N)
  if ! "$venv/bin/pip" install -q --no-cache-dir --disable-pip-version-check "$spec" \
    >"$ROOT/$profile.log" 2>&1; then
    cat "$ROOT/$profile.log" >&2
    exit 1
  fi
  end=$(date +%s.%N)
  size=$(( $(kib "$venv") - empty ))
  printf '%-7s %9.1f %9.1f\n' "$profile" "$(echo "$size / 1024" | bc -l)" "$(echo "$end - $start" | bc -l)"
done

# -X importtime: the sum of every imported module's own time, less that of an empty
# interpreter start (site, encodings); the best of three runs.
import_us() {
  (cd "$ROOT" && "$ROOT/base/bin/python" -X importtime -c "$1" 2>&1) \
    | awk -F'|' '/^import time: +[0-9]/ {sub(/import time: +/, "", $1); total += $1} END {print total}'
}
best_us() {
  local best="" us
  for _ in 1 2 3; do
    us=$(import_us "$1")
    if [ -z "$best" ] || [ "$us" -lt "$best" ]; then best=$us; fi
  done
  echo "$best"
}
empty_us=$(best_us "pass")
for module in kgrag kgrag.cli.main; do
  us=$(( $(best_us "import $module") - empty_us ))
  printf 'import %s (base profile): %.0f ms\n' "$module" "$(echo "$us / 1000" | bc -l)"
done
