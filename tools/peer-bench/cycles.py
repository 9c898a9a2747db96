#!/usr/bin/env python3
"""scree's path tracer against Blender Cycles on the same triangles.

    tools/peer-bench/cycles.py agree  [SCENE ...]   # 1 and 3 bounces, 256 samples: FLIP, means
    tools/peer-bench/cycles.py noise  [SCENE ...]   # equal-noise speed, 2 bounces vs Cycles' default

SCENE is a shipped scene's name (default: rocky-valley cobble-rocks). Each
scene's terrain (and rocks) are exported as OBJ and rendered 480x270 by both
renderers with albedo 0.5 everywhere, a uniform sky (0.4, 0.5, 0.7), the
scene's sun (white, 0.53 degrees), no fog, into linear EXR
(`../shared/bench/cycles/README.md`).

`agree` renders both at 1 and 3 bounces and prints mean FLIP (`scree diff`)
and the ratio of the mean radiance per channel.

`noise` renders 16- and 1024-sample frames with each renderer (scree
with 2 bounces, Cycles with its default bounces), then the 16-sample frames
in ROUNDS=3 rounds taking turns, and prints each renderer's RMS error of the
16-sample frame against its own 1024-sample frame, the median times (Cycles'
render_s against scree's tracing time, and both wall times) and the speed
at equal noise: (t_cycles * e_cycles^2) / (t_scree * e_scree^2).

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
ROUNDS = int(os.environ.get("ROUNDS", "3"))


def run(args):
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


def load(path):
    ch = OpenEXR.File(path).channels()
    key = "RGBA" if "RGBA" in ch else "RGB"
    return np.asarray(ch[key].pixels, dtype=np.float64)[..., :3]


def setup(name):
    """Exports the scene's geometry and returns (scree scene dict, Cycles job dict)."""
    src = os.path.join(ROOT, "scenes", f"{name}.json")
    scene = json.load(open(src))
    meshes = [{"obj": f"{name}-terrain.obj", "albedo": [0.5] * 3}]
    args = [SCREE, "terrain", src, "--obj", os.path.join(OUT, meshes[0]["obj"]), "-q"]
    if scene.get("rocks") or scene.get("scatter"):
        meshes.append({"obj": f"{name}-rocks.obj", "albedo": [0.5] * 3})
        args += ["--rocks-obj", os.path.join(OUT, meshes[1]["obj"])]
    run(args)
    scene.pop("$schema", None)
    for r in scene.get("rocks", []):
        r["material"] = {"type": "albedo", "color": [0.5] * 3}
        if "displacement" in r and "texture" in r["displacement"]:
            path = r["displacement"]["texture"]
            r["displacement"]["texture"] = os.path.normpath(os.path.join(ROOT, "scenes", path))
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
    j = dict(job, samples=samples, bounces=bounces, output=out + ".exr")
    path = os.path.join(OUT, out + ".cycles.json")
    json.dump(j, open(path, "w"))
    text = run(["blender", "-b", "--factory-startup", "--python",
                os.path.join(PEERS, "cycles_render.py"), "--", path])
    m = re.search(r"render_s=([0-9.]+) total_s=([0-9.]+)", text)
    return float(m.group(1)), float(m.group(2))


def agree(name):
    scene, job = setup(name)
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
    scree(scene, 1024, 2, f"{name}-s1024")
    cycles(job, 1024, "default", f"{name}-c1024")
    ts, tc = [], []
    for _ in range(ROUNDS):
        tc.append(cycles(job, 16, "default", f"{name}-c16"))
        ts.append(scree(scene, 16, 2, f"{name}-s16"))
    rms = lambda a, b: float(np.sqrt(((load(os.path.join(OUT, a)) - load(os.path.join(OUT, b))) ** 2).mean()))
    es, ec = rms(f"{name}-s16.exr", f"{name}-s1024.exr"), rms(f"{name}-c16.exr", f"{name}-c1024.exr")
    s_trace, s_wall = (statistics.median(t[k] for t in ts) for k in (0, 1))
    c_render, c_total = (statistics.median(t[k] for t in tc) for k in (0, 1))
    speed = lambda tc_, ts_: (tc_ * ec * ec) / (ts_ * es * es)
    print(f"{name}: RMS at 16 spp scree {es:.5f} Cycles {ec:.5f}; "
          f"time scree trace {s_trace:.2f} s wall {s_wall:.2f} s, Cycles render {c_render:.2f} s "
          f"total {c_total:.2f} s; at equal noise scree is {speed(c_render, s_trace):.2f}x "
          f"(render/trace), {speed(c_total, s_wall):.2f}x (wall)", flush=True)


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ("agree", "noise"):
        sys.exit(__doc__)
    os.makedirs(OUT, exist_ok=True)
    for name in sys.argv[2:] or ["rocky-valley", "cobble-rocks"]:
        {"agree": agree, "noise": noise}[sys.argv[1]](name)


if __name__ == "__main__":
    main()
