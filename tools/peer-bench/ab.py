#!/usr/bin/env python3
"""Whole frames of the peer workload from two or more builds (or settings),
taking turns run by run, so that the shared host's slow spells fall on all
of them alike; then the medians of each one's summary phases.

    tools/peer-bench/ab.py SIZE ROUNDS VARIANT [VARIANT ...]

SIZE is 1025, 2049 or 4097 (tools/peer-bench/workload-SIZE.json); a VARIANT is a
space-separated list of settings: bin=PATH (default target/release/scree)
and environment variables, e.g.

    tools/peer-bench/ab.py 4097 8 "bin=/tmp/scree-before" "bin=target/release/scree"
    tools/peer-bench/ab.py 1025 8 "RAYON_NUM_THREADS=1" ""

Frames are written to a temporary file, not kept.
"""
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PHASES = [
    ("total", r"([0-9.]+) s total", 1.0),
    ("scene", r"scene ([0-9]+) ms", 1e-3),
    ("build", r"build ([0-9]+) ms", 1e-3),
    ("view", r"view ([0-9]+) ms", 1e-3),
    ("trace", r"in ([0-9.]+) s =", 1.0),
    ("output", r"output written in ([0-9]+) ms", 1e-3),
]


def settings(variant):
    binary, env = os.path.join(ROOT, "target/release/scree"), dict(os.environ)
    for item in variant.split():
        key, value = item.split("=", 1)
        if key == "bin":
            binary = os.path.abspath(value)
        else:
            env[key] = value
    return binary, env


def frame(binary, env, scene, out):
    run = subprocess.run(
        [binary, "render", scene, "-o", out],
        cwd=os.path.join(ROOT, "tools", "peer-bench"),
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        check=True,
    )
    line = [l for l in run.stdout.splitlines() if " s total" in l][-1]
    # A phase an older binary does not print (the view's build) counts 0.
    found = [re.search(p, line) for _, p, _ in PHASES]
    return [float(m.group(1)) * scale if m else 0.0 for m, (_, _, scale) in zip(found, PHASES)]


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    size, rounds, variants = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    scene = f"workload-{size}.json"
    runs = {v: [] for v in variants}
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "frame.png")
        for _ in range(rounds):
            for v in variants:
                runs[v].append(frame(*settings(v), scene, out))
    for v in variants:
        medians = [statistics.median(c) for c in zip(*runs[v])]
        phases = "  ".join(
            f"{name} {m:.3f} s" if scale == 1.0 else f"{name} {m * 1e3:.0f} ms"
            for (name, _, scale), m in zip(PHASES, medians)
        )
        print(f"{v or '(default)'}: medians of {rounds}: {phases}")


if __name__ == "__main__":
    main()
