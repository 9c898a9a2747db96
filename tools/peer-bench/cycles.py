#!/usr/bin/env python3
"""scree's path tracer against Blender Cycles on the same triangles, with
matched settings.

    tools/peer-bench/cycles.py agree  [SCENE ...]   # 1 and 3 bounces, 256 samples: FLIP, means
    tools/peer-bench/cycles.py noise  [SCENE ...]   # whole frames and marginal cost per sample

SCENE is a shipped scene's name or a scene file (default: rocky-valley,
cobble-rocks and tools/peer-bench/dem-rocks.json, 600 scattered rocks on
the Jacksboro DEM). Each scene's terrain (and rocks) are exported as OBJ
and rendered 480x270 by both renderers with albedo 0.5 everywhere, a uniform sky (0.4, 0.5, 0.7), the
scene's sun (white, 0.53 degrees), no fog, into linear EXR
(`../shared/bench/cycles/README.md`).

Cycles runs through `cycles_matched.py`, which applies the matched light
settings before the shared harness renders and prints what Cycles used:
every kind of bounce at the same count as scree's (Cycles' own defaults are
12 in all, 4 diffuse, 4 glossy), no sample clamping (Cycles clamps indirect
light at 10 by default; scree never clamps), and its shadow-terminator
geometry offset (TERMINATOR=x sets it; the harness leaves Cycles' default
0.1, which moves low-sun scenes with rocks by about a percent).

`agree` renders both at 1 and 3 bounces and prints mean FLIP (`scree diff`)
and the ratio of the mean radiance per channel.

`noise` renders each renderer at BOUNCES (default 3) bounces: a REF-sample
frame (default 1024), then LOW- and HIGH-sample frames (default 64 and 256)
in ROUNDS rounds (default 2) taking turns. Each renderer's variance per
sample v comes from its LOW and HIGH frames' RMS error against its own
REF frame (e^2 = v (1/N + 1/REF)). It prints the times of both as whole
processes (wall) and as render phases (scree's tracing, Cycles' render_s),
then two figures: whole LOW-sample frames, as a time ratio and at equal
noise (t_cycles v_cycles / t_scree v_scree), and the marginal cost per
sample at equal noise, (dt_cycles v_cycles) / (dt_scree v_scree) with dt
the slope of time from LOW to HIGH samples, which set-up time cannot
flatter.

Needs blender (apt-get install blender) and the OpenEXR Python module
(pip install OpenEXR numpy); work files go to tools/peer-bench/out/cycles/.
"""
import json, os, re, statistics, subprocess, sys, time

import numpy as np
import OpenEXR

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCREE = os.path.join(ROOT, "target", "release", "scree")
PEERS = os.environ.get("PEERS", os.path.join(ROOT, "..", "shared", "bench", "cycles"))
OUT = os.path.join(ROOT, "tools", "peer-bench", "out", "cycles")
SKY = [0.4, 0.5, 0.7]
# Terrain alone, terrain with rocks, and scattered rocks on a real DEM.
DEFAULT = ["rocky-valley", "cobble-rocks", os.path.join(ROOT, "tools", "peer-bench", "dem-rocks.json")]
ROUNDS = int(os.environ.get("ROUNDS", "2"))
BOUNCES = int(os.environ.get("BOUNCES", "3"))
LOW, HIGH, REF = (int(os.environ.get(k, d)) for k, d in (("LOW", "64"), ("HIGH", "256"), ("REF", "1024")))
MATCH = {"clamp": 0}
if "TERMINATOR" in os.environ:
    MATCH["terminator_geometry_offset"] = float(os.environ["TERMINATOR"])


def run(args):
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


def load(path):
    ch = OpenEXR.File(path).channels()
    key = "RGBA" if "RGBA" in ch else "RGB"
    return np.asarray(ch[key].pixels, dtype=np.float64)[..., :3]


def source(name):
    """The scene file of SCENE: a path ending in .json, or a shipped scene's name."""
    if name.endswith(".json"):
        return os.path.abspath(name)
    return os.path.join(ROOT, "scenes", f"{name}.json")


def setup(name):
    """Exports the scene's geometry and returns (scree scene dict, Cycles job dict)."""
    src = source(name)
    name = os.path.splitext(os.path.basename(src))[0]
    here = os.path.dirname(src)
    scene = json.load(open(src))
    meshes = [{"obj": f"{name}-terrain.obj", "albedo": [0.5] * 3}]
    args = [SCREE, "terrain", src, "--obj", os.path.join(OUT, meshes[0]["obj"]), "-q"]
    if scene.get("rocks") or scene.get("scatter"):
        meshes.append({"obj": f"{name}-rocks.obj", "albedo": [0.5] * 3})
        args += ["--rocks-obj", os.path.join(OUT, meshes[1]["obj"])]
    run(args)
    scene.pop("$schema", None)
    # The scene is written beside the work files: its own files' paths
    # made absolute, every material grey.
    gen = scene["terrain"].get("generator", {})
    if "path" in gen:
        gen["path"] = os.path.normpath(os.path.join(here, gen["path"]))
    for r in scene.get("rocks", []) + ([scene["scatter"]] if "scatter" in scene else []):
        r["material"] = {"type": "albedo", "color": [0.5] * 3}
        if "displacement" in r and "texture" in r["displacement"]:
            path = r["displacement"]["texture"]
            r["displacement"]["texture"] = os.path.normpath(os.path.join(here, path))
    scene["terrain"]["material"] = {"type": "albedo", "color": [0.5] * 3}
    scene["sky"] = {"type": "gradient", "zenith": SKY, "horizon": SKY, "ground": SKY}
    scene["fog"] = {"density": 0}
    sun = scene.get("sun", {})
    sun = {"elevation": sun.get("elevation", 35), "azimuth": sun.get("azimuth", 210),
           "intensity": sun.get("intensity", 6), "color": [1, 1, 1], "angular_diameter": 0.53}
    scene["sun"] = sun
    cam = scene["camera"]
    job = {"meshes": meshes,
           "camera": {"position": cam["position"], "look_at": cam["look_at"],
                      "fov": cam.get("projection", {}).get("fov", 60)},
           "width": 480, "height": 270,
           "sun": {"elevation": sun["elevation"], "azimuth": sun["azimuth"],
                   "irradiance": sun["intensity"], "color": [1, 1, 1], "angular_diameter": 0.53},
           "sky": {"color": SKY}, "threads": 2}
    return scene, job


def scree(scene, samples, bounces, out):
    s = dict(scene, image={"width": 480, "height": 270, "samples": samples, "tonemap": "none"},
             integrator={"type": "path", "bounces": bounces})
    path = os.path.join(OUT, out + ".json")
    json.dump(s, open(path, "w"))
    t0 = time.time()
    summary = run([SCREE, "render", path, "-o", os.path.join(OUT, out + ".exr")])
    wall = time.time() - t0
    trace = float(re.search(r"in ([0-9.]+) s = ", summary).group(1))
    return trace, wall


def cycles(job, samples, bounces, out):
    """(render_s, total_s, wall_s) of one Cycles frame; prints its settings once."""
    j = dict(job, samples=samples, bounces=bounces, output=out + ".exr", match=MATCH)
    path = os.path.join(OUT, out + ".cycles.json")
    json.dump(j, open(path, "w"))
    t0 = time.time()
    text = run(["blender", "-b", "--factory-startup", "--python",
                os.path.join(ROOT, "tools", "peer-bench", "cycles_matched.py"), "--", path])
    wall = time.time() - t0
    settings = re.search(r"CYCLES_SETTINGS (.*)", text).group(1)
    if settings not in SEEN:
        SEEN.add(settings)
        print(f"  Cycles: {settings}", flush=True)
    m = re.search(r"render_s=([0-9.]+) total_s=([0-9.]+)", text)
    return float(m.group(1)), float(m.group(2)), wall


SEEN = set()


def agree(name):
    scene, job = setup(name)
    name = os.path.splitext(os.path.basename(source(name)))[0]
    for b in (1, 3):
        scree(scene, 256, b, f"{name}-b{b}")
        cycles(job, 256, b, f"{name}-b{b}-cycles")
        a, c = (os.path.join(OUT, f"{name}-b{b}{x}.exr") for x in ("-cycles", ""))
        flip = re.search(r"FLIP mean: ([0-9.]+)", run_diff(a, c)).group(1)
        ratio = load(c).reshape(-1, 3).mean(0) / load(a).reshape(-1, 3).mean(0)
        print(f"{name} bounces {b}: FLIP mean {flip}, mean radiance scree/Cycles "
              + " ".join(f"{r:.4f}" for r in ratio), flush=True)


def run_diff(a, b):
    return subprocess.run([SCREE, "diff", a, b], capture_output=True, text=True).stdout


def noise(name):
    scene, job = setup(name)
    name = os.path.splitext(os.path.basename(source(name)))[0]
    print(f"{name}: {BOUNCES} bounces both, {LOW}/{HIGH} samples against {REF}", flush=True)
    scree(scene, REF, BOUNCES, f"{name}-s{REF}")
    cycles(job, REF, BOUNCES, f"{name}-c{REF}")
    ts = {LOW: [], HIGH: []}
    tc = {LOW: [], HIGH: []}
    for _ in range(ROUNDS):
        for n in (LOW, HIGH):
            tc[n].append(cycles(job, n, BOUNCES, f"{name}-c{n}"))
            ts[n].append(scree(scene, n, BOUNCES, f"{name}-s{n}"))
    rms = lambda a, b: float(np.sqrt(((load(os.path.join(OUT, a)) - load(os.path.join(OUT, b))) ** 2).mean()))
    err = {(r, n): rms(f"{name}-{r}{n}.exr", f"{name}-{r}{REF}.exr") for r in "sc" for n in (LOW, HIGH)}
    var = {r: statistics.mean(err[r, n] ** 2 / (1 / n + 1 / REF) for n in (LOW, HIGH)) for r in "sc"}
    med = lambda runs, k: statistics.median(t[k] for t in runs)
    # Times: scree (trace, wall), Cycles (render_s, wall of the process).
    s_t = {n: (med(ts[n], 0), med(ts[n], 1)) for n in (LOW, HIGH)}
    c_t = {n: (med(tc[n], 0), med(tc[n], 2)) for n in (LOW, HIGH)}
    for label, r, t in (("scree", "s", s_t), ("Cycles", "c", c_t)):
        phase = "trace" if r == "s" else "render"
        print(f"  {label}: RMS {err[r, LOW]:.5f} at {LOW}, {err[r, HIGH]:.5f} at {HIGH}; "
              f"{phase} {t[LOW][0]:.2f} / {t[HIGH][0]:.2f} s, wall {t[LOW][1]:.2f} / {t[HIGH][1]:.2f} s; "
              f"variance a sample {var[r]:.5f}", flush=True)
    for k, what in ((0, "render phase"), (1, "whole process")):
        frame = c_t[LOW][k] / s_t[LOW][k]
        equal = frame * var["c"] / var["s"]
        ds = (s_t[HIGH][k] - s_t[LOW][k]) / (HIGH - LOW)
        dc = (c_t[HIGH][k] - c_t[LOW][k]) / (HIGH - LOW)
        marginal = (dc * var["c"]) / (ds * var["s"]) if ds > 0 else float("inf")
        print(f"  {what}: {LOW}-sample frames {frame:.2f}x faster ({equal:.2f}x at equal noise); "
              f"a sample costs scree {ds * 1e3:.2f} ms, Cycles {dc * 1e3:.2f} ms: "
              f"{marginal:.2f}x cheaper at equal noise", flush=True)


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ("agree", "noise"):
        sys.exit(__doc__)
    os.makedirs(OUT, exist_ok=True)
    for name in sys.argv[2:] or DEFAULT:
        {"agree": agree, "noise": noise}[sys.argv[1]](name)


if __name__ == "__main__":
    main()
