#!/usr/bin/env bash
# Regenerates every reference image in renders/ from the scenes in scenes/,
# plus the README's projection grid. Run it after a change that is meant to
# alter pictures, then review with `git diff --stat renders/` and
# `scree diff` (see README, "Reference images").
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
for scene in scenes/*.json; do
  name=$(basename "$scene" .json)
  ./target/release/scree render "$scene" -o "renders/$name.png" --quiet
  echo "renders/$name.png"
done
./target/release/scree compare scenes/rocky-valley.json -o renders/compare-rocky-valley.png --quiet
echo "renders/compare-rocky-valley.png"
