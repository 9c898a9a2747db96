#!/usr/bin/env bash
# Regenerates every reference image in renders/ from the scenes in scenes/,
# plus the README's projection grid and sky gallery. Run it after a change
# that is meant to alter pictures, then review (README, "Reference images").
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
scree=./target/release/scree
for scene in scenes/*.json; do
  name=$(basename "$scene" .json)
  $scree render "$scene" -o "renders/$name.png" --quiet
  echo "renders/$name.png"
done
# The flyover's sequence, small, as an animated PNG (frames in a temporary folder).
frames=$(mktemp -d)
$scree render scenes/flyover.json --frames 0..119 --width 320 -o "$frames/f-####.png" \
  --preview renders/flyover-preview.png --preview-width 160 --quiet
rm -r "$frames"
echo "renders/flyover-preview.png"
$scree compare scenes/rocky-valley.json -o renders/compare-rocky-valley.png --quiet
echo "renders/compare-rocky-valley.png"
$scree compare scenes/rocky-valley.json --overlay tissot -o renders/compare-tissot.png --quiet
echo "renders/compare-tissot.png"
# The sky at several sun elevations, seen all around (equirectangular).
for e in 60 20 7 1; do
  $scree render scenes/sunset.json -o "renders/sky-earth-$e.png" --width 480 --height 240 \
    --projection equirectangular --fov 360 --sun-elevation "$e" --spp 2 --quiet
  echo "renders/sky-earth-$e.png"
done
for e in 40 10 2; do
  $scree render scenes/mars.json -o "renders/sky-mars-$e.png" --width 480 --height 240 \
    --projection equirectangular --fov 360 --sun-elevation "$e" --spp 2 --quiet
  echo "renders/sky-mars-$e.png"
done
