#!/usr/bin/env python3
"""Writes assets/leaf-cards/beech.png: a beech-like sprig (a twig with
alternate ovate leaves, veined, lighter at the margins) on a clear
background, RGBA, the colour sRGB and the outline in the alpha channel;
the twig's foot is the bottom edge's middle. A plants entry shows it on
its leaves with `"leaf_image"`.

    python3 tools/assets/leaf_card.py      (needs Pillow)
"""
import math, os, random
from PIL import Image, ImageDraw

OUT = os.path.join(os.path.dirname(__file__), "..", "..", "assets", "leaf-cards")
W, H = 128, 256
rng = random.Random(11)

img = Image.new("RGBA", (W, H), (70, 100, 40, 0))
draw = ImageDraw.Draw(img)

def leaf(base, angle, length, width, green):
    """An ovate leaf from `base` along `angle` (radians from up)."""
    d = (math.sin(angle), -math.cos(angle))
    n = (-d[1], d[0])
    left, right = [], []
    for k in range(17):
        t = k / 16
        w = width * math.sin(math.pi * t) ** 0.8 * (1.0 - 0.35 * t)
        x = base[0] + d[0] * length * t
        y = base[1] + d[1] * length * t
        left.append((x + n[0] * w, y + n[1] * w))
        right.append((x - n[0] * w, y - n[1] * w))
    dark = tuple(int(c * 0.75) for c in green)
    draw.polygon(left + right[::-1], fill=green + (255,), outline=dark + (255,))
    tip = (base[0] + d[0] * length, base[1] + d[1] * length)
    draw.line([base, tip], fill=dark + (255,), width=1)
    for k in range(1, 6):
        t = k / 6
        x = base[0] + d[0] * length * t
        y = base[1] + d[1] * length * t
        w = 0.8 * width * math.sin(math.pi * t) ** 0.8 * (1.0 - 0.35 * t)
        for s in (1, -1):
            end = (x + s * n[0] * w + d[0] * 0.25 * w, y + s * n[1] * w + d[1] * 0.25 * w)
            draw.line([(x, y), end], fill=dark + (255,), width=1)

# The twig, bending a little, and leaves on alternate sides.
twig = [(W / 2 + 6 * math.sin(3.0 * t), H - 1 - t * (H - 24)) for t in [k / 20 for k in range(21)]]
for k in range(7):
    t = 0.12 + 0.8 * k / 6
    i = min(int(t * 20), 19)
    base = twig[i]
    side = 1 if k % 2 == 0 else -1
    green = (rng.randint(60, 95), rng.randint(110, 150), rng.randint(25, 50))
    length = (1.0 - 0.45 * t) * rng.uniform(62, 78)
    leaf(base, side * rng.uniform(0.7, 1.0), length, 0.36 * length, green)
leaf(twig[-1], rng.uniform(-0.15, 0.15), 54, 19, (80, 135, 40))
draw.line(twig, fill=(70, 55, 35, 255), width=3)
img.save(os.path.join(OUT, "beech.png"))
