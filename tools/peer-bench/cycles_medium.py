"""Cycles against scree on a homogeneous medium: a slab of constant
density over a flat grey ground, lit by the sun alone, path-traced.

    python3 tools/peer-bench/cycles_medium.py [--scree target/release/scree] [--samples 1024]

Writes scree's scene (`scenes`-style JSON: a `uniform` cloud layer 10..14
units up, density 0.25, so an optical depth of 1 straight through, albedo
0.99, one Henyey-Greenstein lobe of g 0.7 through the layer's
`anisotropy`), exports the ground with `scree terrain --obj`, and renders
the same in Cycles through the shared harness (`cycles_render.py`),
adding before its render a box of the slab's size with the same medium:
one Volume Scatter closure (g 0.7, white) and a Volume Absorption (the
1 %, black). Both render 16 bounces and 256 volume bounces, a black sky,
a point sun.

One lobe, not the droplets' two: Cycles (3.4.1 and 4.2.23 alike) lights
a medium split into two Volume Scatter closures as if each held all the
scattering. A thin slab of two isotropic closures of half the density
each renders 2.1x the closed form below; one closure of the full density
renders it as scree does.

Prints mean radiance of each (linear EXR), their ratio, and
the mean FLIP of the two pictures as `scree diff` measures it (both
written through the same sRGB curve without a tone map).

    python3 tools/peer-bench/cycles_medium.py --thin

checks both renderers against the closed form instead: a black ground
under an optically thin slab (density 0.005, optical depth 0.02 straight
through), where the radiance at the view's centre is single scattering,
albedo * p(theta) * E * density * path length, less its attenuation;
higher orders add the rest (about 7 % at the centre here).
"""
import math
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PEERS = os.environ.get("PEERS", os.path.join(ROOT, "..", "shared", "bench", "cycles"))
HARNESS = os.path.join(PEERS, "cycles_render.py")

SLAB = {"bottom": 10.0, "top": 14.0, "density": float(os.environ.get("MEDIUM_DENSITY", "0.25")),
        "side": float(os.environ.get("MEDIUM_SIDE", "600"))}
CAMERA = {"position": [0, 30, -40], "look_at": [0, 0, 0], "fov": 50}
SUN = {"elevation": 50, "azimuth": 200, "irradiance": 3.0}
W, H = 240, 135
GROUND = 0.5


G = 0.7


def phase(cos_theta):
    return (1 - G * G) / (4 * math.pi * (1 + G * G - 2 * G * cos_theta) ** 1.5)


def closed_form():
    """Thin-slab single scattering at the view's centre, with its attenuation."""
    cx, cy, cz = CAMERA["position"]
    d = [-cx, -cy, -cz]
    n = math.sqrt(sum(v * v for v in d))
    d = [v / n for v in d]
    el, az = math.radians(SUN["elevation"]), math.radians(SUN["azimuth"])
    to_sun = [math.sin(az) * math.cos(el), math.sin(el), math.cos(az) * math.cos(el)]
    # The light travels along -to_sun and leaves toward the eye along -d.
    cos_theta = sum(a * b for a, b in zip(d, to_sun))
    mu_v, mu_s = -d[1], to_sun[1]
    tau = SLAB["density"] * (SLAB["top"] - SLAB["bottom"])
    k = 1 / mu_v + 1 / mu_s
    return 0.99 * phase(cos_theta) * SUN["irradiance"] * mu_s / (mu_s + mu_v) * (1 - math.exp(-tau * k))


def scree_scene(samples):
    return {
        "image": {"width": W, "height": H, "samples": samples, "tonemap": "none"},
        "camera": {
            "position": CAMERA["position"],
            "look_at": CAMERA["look_at"],
            "projection": {"type": "perspective", "fov": CAMERA["fov"]},
        },
        "terrain": {
            "size": [600, 600],
            "resolution": [9, 9],
            "height": 0,
            "material": {"type": "albedo", "color": [GROUND] * 3},
        },
        "sun": {
            "elevation": SUN["elevation"],
            "azimuth": SUN["azimuth"],
            "intensity": SUN["irradiance"],
            "color": [1, 1, 1],
            "angular_diameter": 0,
        },
        "sky": {"type": "gradient", "zenith": [0, 0, 0], "horizon": [0, 0, 0],
                "ground": [0, 0, 0], "ambient": 0},
        "sky_light": {"samples": 0},
        "fog": {"density": 0},
        "clouds": [{"type": "uniform", "altitude": SLAB["bottom"],
                    "thickness": SLAB["top"] - SLAB["bottom"], "density": SLAB["density"],
                    "anisotropy": G}],
        "integrator": {"type": "path", "bounces": 16, "volume_bounces": 256},
    }


VOLUME = '''
def _medium():
    import bpy
    sc = bpy.context.scene
    bpy.ops.mesh.primitive_cube_add(size=1.0)
    box = bpy.context.active_object
    # scree (x, y, z) -> Blender (x, z, y): the slab spans Blender z.
    box.scale = ({side}, {side}, {top} - {bottom})
    box.location = (0.0, 0.0, 0.5 * ({top} + {bottom}))
    mat = bpy.data.materials.new("medium")
    mat.use_nodes = True
    nodes = mat.node_tree.nodes
    nodes.clear()
    out = nodes.new("ShaderNodeOutputMaterial")
    add = nodes.new("ShaderNodeAddShader")
    links = mat.node_tree.links
    s = nodes.new("ShaderNodeVolumeScatter")
    s.inputs["Density"].default_value = {density} * 0.99
    s.inputs["Anisotropy"].default_value = {g}
    # The node's colour multiplies its density; its default is 0.8.
    s.inputs["Color"].default_value = (1.0, 1.0, 1.0, 1.0)
    a = nodes.new("ShaderNodeVolumeAbsorption")
    a.inputs["Density"].default_value = {density} * 0.01
    # Absorption's colour is what it lets through: black absorbs at the full density.
    a.inputs["Color"].default_value = (0.0, 0.0, 0.0, 1.0)
    links.new(s.outputs[0], add.inputs[0])
    links.new(a.outputs[0], add.inputs[1])
    links.new(add.outputs[0], out.inputs["Volume"])
    box.data.materials.append(mat)
    mat.cycles.homogeneous_volume = True
    cy = sc.cycles
    # max_bounces caps a path's bounces of every kind together: room for both.
    cy.diffuse_bounces = 16
    cy.max_bounces = 16 + 256
    cy.volume_bounces = 256
    cy.transparent_max_bounces = 16
    print(f"CYCLES_MEDIUM density={density} g={g} albedo=0.99 "
          f"max_bounces={{cy.max_bounces}} volume_bounces={{cy.volume_bounces}}", flush=True)
'''


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--scree", default=os.path.join(ROOT, "target", "release", "scree"))
    ap.add_argument("--samples", type=int, default=1024)
    ap.add_argument("--blender", default="blender")
    ap.add_argument("--keep", default=None, help="folder to keep the pictures in")
    ap.add_argument("--thin", action="store_true", help="a thin slab on black ground, against the closed form")
    args = ap.parse_args()
    global GROUND
    if args.thin:
        GROUND = 0.0
        SLAB["density"] = 0.005
    work = args.keep or tempfile.mkdtemp()
    os.makedirs(work, exist_ok=True)
    scene = os.path.join(work, "medium.json")
    json.dump(scree_scene(args.samples), open(scene, "w"), indent=1)
    run = lambda cmd: subprocess.run(cmd, check=True, capture_output=True, text=True)
    run([args.scree, "render", scene, "-q", "--format", "exr", "-o", os.path.join(work, "scree.exr")])
    run([args.scree, "render", scene, "-q", "-o", os.path.join(work, "scree.png")])
    run([args.scree, "terrain", scene, "--obj", os.path.join(work, "ground.obj")])
    job = {
        "meshes": [{"obj": "ground.obj", "albedo": [GROUND] * 3}],
        "camera": CAMERA, "width": W, "height": H,
        "sun": {**SUN, "color": [1, 1, 1], "angular_diameter": 0},
        "sky": {"color": [0, 0, 0]},
        "samples": args.samples, "bounces": 16, "threads": 2,
        "output": "cycles.exr",
    }
    json.dump(job, open(os.path.join(work, "job.json"), "w"))
    wrapper = os.path.join(work, "wrapper.py")
    with open(wrapper, "w") as f:
        f.write("import sys\n")
        f.write(VOLUME.format(g=G, **SLAB))
        f.write(f"source = open({HARNESS!r}).read()\n")
        f.write("RENDER = 'bpy.ops.render.render(write_still=True)'\n")
        f.write("source = source.replace(RENDER, '_medium()\\n' + RENDER)\n")
        f.write(f"exec(compile(source, {HARNESS!r}, 'exec'), "
                "{'__name__': '__main__', '__file__': " + repr(HARNESS) + ", '_medium': _medium})\n")
        # The means, and Cycles' picture through the sRGB curve as a PNG.
        f.write(f"""
import bpy
def mean(path):
    img = bpy.data.images.load(path)
    px = list(img.pixels)
    n = len(px) // 4
    w, h = img.size
    centre = [px[4 * (y * w + x)] for y in range(h // 2 - 4, h // 2 + 4) for x in range(w // 2 - 4, w // 2 + 4)]
    print('CENTRE', path.rsplit('/', 1)[-1], sum(centre) / len(centre), flush=True)
    return [sum(px[4 * k + c] for k in range(n)) / n for c in range(3)]
c = mean({os.path.join(work, 'cycles.exr')!r})
s = mean({os.path.join(work, 'scree.exr')!r})
print('MEANS cycles', c, 'scree', s, flush=True)
img = bpy.data.images.load({os.path.join(work, 'cycles.exr')!r})
sc = bpy.context.scene
sc.view_settings.view_transform = 'Standard'
sc.render.image_settings.file_format = 'PNG'
sc.render.image_settings.color_depth = '8'
sc.render.image_settings.color_mode = 'RGB'
img.save_render({os.path.join(work, 'cycles.png')!r}, scene=sc)
""")
    out = subprocess.run([args.blender, "-b", "--factory-startup", "--python", wrapper, "--", os.path.join(work, "job.json")],
                         capture_output=True, text=True)
    lines = [l for l in out.stdout.splitlines() if l.startswith(("CYCLES", "MEANS", "CENTRE"))]
    print("\n".join(lines))
    if out.returncode != 0 or not any(l.startswith("MEANS") for l in lines):
        sys.exit(out.stdout[-3000:] + out.stderr[-3000:])
    means = [l for l in lines if l.startswith("MEANS")][0]
    nums = [float(x.strip("[],")) for x in means.split() if x.strip("[],").replace(".", "", 1).replace("e-", "", 1).isdigit()]
    c, s = nums[:3], nums[3:6]
    lum = lambda v: 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2]
    print(f"mean radiance: cycles {lum(c):.5f} scree {lum(s):.5f} ratio {lum(s) / lum(c):.4f}")
    if args.thin:
        print(f"closed-form single scattering at the centre: {closed_form():.5f}")
    diff = subprocess.run([args.scree, "diff", os.path.join(work, "cycles.png"), os.path.join(work, "scree.png"),
                           "--threshold", "1", "--json", os.path.join(work, "diff.json")], capture_output=True, text=True)
    metrics = json.load(open(os.path.join(work, "diff.json")))["metrics"]
    print(f"FLIP mean {metrics['flip_mean']:.4f} max {metrics['flip_max']:.4f}  (pictures in {work})")


main()
