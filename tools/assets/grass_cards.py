#!/usr/bin/env python3
"""Writes assets/grass-cards/: a grass tuft of three crossed cards (OBJ),
its material (MTL) and its image (PNG, RGBA: the blades' colour, sRGB,
and their outline in the alpha channel), to show and test populations
cut out by `map_d`.

    python3 tools/assets/grass_cards.py      (needs Pillow)
"""
import math, os, random
from PIL import Image, ImageDraw

OUT = os.path.join(os.path.dirname(__file__), "..", "..", "assets", "grass-cards")
SIZE = 256
rng = random.Random(7)

img = Image.new("RGBA", (SIZE, SIZE), (60, 90, 30, 0))
draw = ImageDraw.Draw(img)
for _ in range(34):
    foot = rng.uniform(0.15, 0.85) * SIZE
    height = rng.uniform(0.55, 0.98) * SIZE
    lean = rng.uniform(-0.35, 0.35) * SIZE
    width = rng.uniform(4, 9)
    green = (rng.randint(70, 120), rng.randint(120, 170), rng.randint(30, 60))
    left, right = [], []
    for k in range(13):
        t = k / 12
        x = foot + lean * t * t
        y = SIZE - 1 - height * t
        w = width * (1 - t) ** 0.8
        left.append((x - w, y))
        right.append((x + w, y))
    shade = tuple(int(c * 0.8) for c in green)
    draw.polygon(left + right[::-1], fill=green + (255,), outline=shade + (255,))
img.save(os.path.join(OUT, "grass.png"))

# Three cards 0.6 wide and 0.6 high, crossed at 60 degrees, standing on
# the origin; texture coordinates (0, 0) at the image's bottom left.
lines = ["# scree: a grass tuft of three crossed cards (tools/assets/grass_cards.py)",
         "mtllib grass.mtl"]
for k in range(3):
    a = math.radians(60 * k)
    dx, dz = 0.3 * math.cos(a), 0.3 * math.sin(a)
    for x, y, z in ((-dx, 0, -dz), (dx, 0, dz), (dx, 0.6, dz), (-dx, 0.6, -dz)):
        lines.append(f"v {x:.6f} {y} {z:.6f}")
lines += ["vt 0 0", "vt 1 0", "vt 1 1", "vt 0 1", "usemtl blades"]
for k in range(3):
    b = 4 * k
    lines.append(f"f {b + 1}/1 {b + 2}/2 {b + 3}/3 {b + 4}/4")
open(os.path.join(OUT, "grass.obj"), "w").write("\n".join(lines) + "\n")
open(os.path.join(OUT, "grass.mtl"), "w").write(
    "newmtl blades\nKd 0.2 0.35 0.08\nmap_Kd grass.png\nmap_d grass.png\n")
