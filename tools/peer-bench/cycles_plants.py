"""Cycles against scree on a small forest: the plants exported with
`scree terrain --plants-obj`, rendered in both, path-traced at 1 bounce.

    python3 tools/peer-bench/cycles_plants.py [--scree target/release/scree] [--samples 256]
                                              [--bounces 1] [--keep DIR] [--cards | --sprigs]

With `--cards` the hills carry a population of cut-out grass cards
(`assets/grass-cards/`) instead, exported with `--populations-obj`: in
Cycles each card is a Diffuse BSDF of its colour image (`map_Kd`, sRGB,
linear interpolation, repeating, alpha kept apart: channel packed) mixed
with a Transparent BSDF by its opacity (`d` times the alpha of `map_d`),
which Cycles, like scree, decides at random per ray.

With `--sprigs` the forest is oaks whose leaves are cards of the beech
sprig image (`leaf_image`, `assets/leaf-cards/beech.png`), exported with
their `vt` and the image as `map_Kd` and `map_d`, and rendered in Cycles
as the grass cards are (no translucency and no brightness variation, so
that the image is the whole of the leaves' look in both).

Writes a scree scene (birches, oaks, shrubs and flowering herbs on
gentle hills of albedo 0.5, a uniform sky (0.4, 0.5, 0.7), a 0.53° sun),
exports its ground (`--obj`) and plants (`--plants-obj`: bark, leaves
and flowers with their albedos as `Kd`, a leaf's translucency as `Tf`),
and renders the same in Cycles through the shared harness
(`cycles_render.py`, with `cycles_matched.py`'s clamp off), importing
the plants before its render: every material a Diffuse BSDF of its `Kd`
(roughness 0), a leaf's mixed with a Translucent BSDF of the same colour
in the share `Tf`, which is scree's leaf: (1 - t) of a Lambertian albedo
reflected, t passed through. Cycles' shadow-terminator offsets stay at
its defaults (geometry 0.1, shading 0) and are printed. Prints the mean
radiance of each (linear EXR), their ratio, and the mean FLIP of the two
pictures as `scree diff` measures it (both through the same sRGB curve,
no tone map).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MATCHED = os.path.join(ROOT, "tools", "peer-bench", "cycles_matched.py")
SKY = [0.4, 0.5, 0.7]
CAMERA = {"position": [0, 9, -34], "look_at": [0, 4, 0], "fov": 55}
SUN = {"elevation": 35, "azimuth": 210, "irradiance": 6.0, "angular_diameter": 0.53}
W, H = 480, 270


def scree_scene(samples, bounces, cards, sprigs=False):
    scene = {
        "image": {"width": W, "height": H, "samples": samples, "tonemap": "none"},
        "seed": 4,
        "camera": {"position": CAMERA["position"], "look_at": CAMERA["look_at"],
                   "projection": {"type": "perspective", "fov": CAMERA["fov"]}},
        "terrain": {"size": [80, 80], "resolution": [129, 129], "height": 4,
                    "generator": {"type": "hills", "iterations": 60},
                    "material": {"type": "albedo", "color": [0.5, 0.5, 0.5]}},
        "plants": [
            {"species": "birch", "density": 0.5, "spacing": 9, "grow": {"height": [8, 11]}},
            {"species": "oak", "density": 0.5, "spacing": 12},
            {"species": "shrub", "density": 0.4},
            {"species": "herb", "density": 0.5, "understory": True, "spacing": 1.2},
        ],
        "sun": {"elevation": SUN["elevation"], "azimuth": SUN["azimuth"],
                "intensity": SUN["irradiance"], "color": [1, 1, 1],
                "angular_diameter": SUN["angular_diameter"]},
        "sky": {"type": "gradient", "zenith": SKY, "horizon": SKY, "ground": SKY},
        "fog": {"density": 0},
        "integrator": {"type": "path", "bounces": bounces},
    }
    if sprigs:
        scene["plants"] = [
            {"species": "oak", "density": 0.7, "spacing": 10,
             "leaf_image": os.path.join(ROOT, "assets", "leaf-cards", "beech.png"),
             "grow": {"translucency": 0, "leaf_color_var": 0,
                      "leaves": {"count": 3, "size": 0.9, "aspect": 0.5}}},
        ]
    if cards:
        del scene["plants"]
        scene["populations"] = [{"mesh": os.path.join(ROOT, "assets", "grass-cards", "grass.obj"),
                                 "count": 4000, "scale": [2, 4], "seed": 3}]
    return scene


PLANTS = '''
def _plants():
    import bpy
    from mathutils import Matrix
    # scree (x, y, z) -> Blender (x, z, y), as the harness places meshes.
    to_blender = Matrix(((1, 0, 0, 0), (0, 0, 1, 0), (0, 1, 0, 0), (0, 0, 0, 1)))
    looks = {{}}
    name = None
    for line in open({mtl!r}):
        w = line.split()
        if w and w[0] == "newmtl":
            name = w[1]
            looks[name] = [[0.5, 0.5, 0.5], 0.0, None, 1.0, None]
        elif w and w[0] == "Kd":
            looks[name][0] = [float(v) for v in w[1:4]]
        elif w and w[0] == "Tf":
            looks[name][1] = float(w[1])
        elif w and w[0] == "map_Kd":
            looks[name][2] = line.split(None, 1)[1].strip()
        elif w and w[0] == "d":
            looks[name][3] = float(w[1])
        elif w and w[0] == "map_d":
            looks[name][4] = line.split(None, 1)[1].strip()
    before = set(bpy.data.objects)
    bpy.ops.wm.obj_import(filepath={obj!r}, forward_axis="Y", up_axis="Z")
    made = {{}}
    for o in set(bpy.data.objects) - before:
        o.matrix_world = to_blender
        for slot in o.material_slots:
            key = slot.material.name.split(".")[0]
            if key not in made:
                kd, tf, kd_map, d, d_map = looks[key]
                m = bpy.data.materials.new("scree_" + key)
                m.use_nodes = True
                nodes = m.node_tree.nodes
                nodes.clear()
                out = nodes.new("ShaderNodeOutputMaterial")
                dif = nodes.new("ShaderNodeBsdfDiffuse")
                dif.inputs["Color"].default_value = (*kd, 1)
                dif.inputs["Roughness"].default_value = 0.0
                def image(path, colour):
                    node = nodes.new("ShaderNodeTexImage")
                    node.image = bpy.data.images.load(path)
                    node.image.colorspace_settings.name = "sRGB" if colour else "Non-Color"
                    node.image.alpha_mode = "CHANNEL_PACKED"
                    node.interpolation = "Linear"
                    node.extension = "REPEAT"
                    return node
                if kd_map:
                    m.node_tree.links.new(image(kd_map, True).outputs["Color"], dif.inputs["Color"])
                if d_map or d < 1:
                    mix = nodes.new("ShaderNodeMixShader")
                    mix.inputs["Fac"].default_value = d
                    if d_map:
                        tex = image(d_map, False)
                        scale = nodes.new("ShaderNodeMath")
                        scale.operation = "MULTIPLY"
                        scale.inputs[1].default_value = d
                        alpha = tex.outputs["Alpha"] if tex.image.channels == 4 else tex.outputs["Color"]
                        m.node_tree.links.new(alpha, scale.inputs[0])
                        m.node_tree.links.new(scale.outputs[0], mix.inputs["Fac"])
                    clear = nodes.new("ShaderNodeBsdfTransparent")
                    m.node_tree.links.new(clear.outputs[0], mix.inputs[1])
                    m.node_tree.links.new(dif.outputs[0], mix.inputs[2])
                    m.node_tree.links.new(mix.outputs[0], out.inputs["Surface"])
                    made[key] = m
                    slot.material = m
                    continue
                if tf > 0:
                    tr = nodes.new("ShaderNodeBsdfTranslucent")
                    tr.inputs["Color"].default_value = (*kd, 1)
                    mix = nodes.new("ShaderNodeMixShader")
                    mix.inputs["Fac"].default_value = tf
                    m.node_tree.links.new(dif.outputs[0], mix.inputs[1])
                    m.node_tree.links.new(tr.outputs[0], mix.inputs[2])
                    m.node_tree.links.new(mix.outputs[0], out.inputs["Surface"])
                else:
                    m.node_tree.links.new(dif.outputs[0], out.inputs["Surface"])
                made[key] = m
            slot.material = made[key]
    print(f"CYCLES_PLANTS materials={{len(made)}} translucent={{sum(1 for k in made if looks[k][1] > 0)}}", flush=True)
'''


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--scree", default=os.path.join(ROOT, "target", "release", "scree"))
    ap.add_argument("--samples", type=int, default=256)
    ap.add_argument("--bounces", type=int, default=1)
    ap.add_argument("--blender", default="blender")
    ap.add_argument("--keep", default=None, help="folder to keep the pictures in")
    ap.add_argument("--cards", action="store_true", help="cut-out grass cards instead of plants")
    ap.add_argument("--sprigs", action="store_true", help="oaks with leaf cards of an image")
    args = ap.parse_args()
    work = args.keep or tempfile.mkdtemp()
    os.makedirs(work, exist_ok=True)
    scene = os.path.join(work, "forest.json")
    json.dump(scree_scene(args.samples, args.bounces, args.cards, args.sprigs), open(scene, "w"), indent=1)
    run = lambda cmd: subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    print(run([args.scree, "render", scene, "--format", "exr", "-o", os.path.join(work, "scree.exr")]).strip())
    run([args.scree, "render", scene, "-q", "-o", os.path.join(work, "scree.png")])
    export = "--populations-obj" if args.cards else "--plants-obj"
    print(run([args.scree, "terrain", scene, "--obj", os.path.join(work, "ground.obj"),
               export, os.path.join(work, "plants.obj")]).strip())
    job = {
        "meshes": [{"obj": "ground.obj", "albedo": [0.5, 0.5, 0.5]}],
        "camera": CAMERA, "width": W, "height": H,
        "sun": {**SUN, "color": [1, 1, 1]},
        "sky": {"color": SKY},
        "samples": args.samples, "bounces": args.bounces, "threads": 2,
        "output": "cycles.exr",
        # Cut-out cards are passed without a limit in scree.
        "match": {"clamp": 0, **({"transparent": 256} if args.cards or args.sprigs else {})},
    }
    job_path = os.path.join(work, "job.json")
    json.dump(job, open(job_path, "w"))
    wrapper = os.path.join(work, "wrapper.py")
    with open(wrapper, "w") as f:
        f.write(PLANTS.format(obj=os.path.join(work, "plants.obj"), mtl=os.path.join(work, "plants.mtl")))
        f.write(f"source = open({MATCHED!r}).read()\n")
        # The plants go in before the matching, so their objects are matched too.
        f.write("source = source.replace('source.replace(RENDER, \"_matched()\\\\n\" + RENDER)', "
                "'source.replace(RENDER, \"_plants()\\\\n_matched()\\\\n\" + RENDER)')\n")
        f.write("source = source.replace('\"_matched\": matched}', '\"_matched\": matched, \"_plants\": _plants}')\n")
        f.write(f"exec(compile(source, {MATCHED!r}, 'exec'), "
                "{'__name__': '__main__', '__file__': " + repr(MATCHED) + ", '_plants': _plants})\n")
        f.write(f"""
import bpy
def mean(path):
    img = bpy.data.images.load(path)
    px = list(img.pixels)
    n = len(px) // 4
    return [sum(px[4 * k + c] for k in range(n)) / n for c in range(3)]
print('MEANS cycles', mean({os.path.join(work, 'cycles.exr')!r}), 'scree', mean({os.path.join(work, 'scree.exr')!r}), flush=True)
img = bpy.data.images.load({os.path.join(work, 'cycles.exr')!r})
sc = bpy.context.scene
sc.view_settings.view_transform = 'Standard'
sc.render.image_settings.file_format = 'PNG'
sc.render.image_settings.color_depth = '8'
sc.render.image_settings.color_mode = 'RGB'
img.save_render({os.path.join(work, 'cycles.png')!r}, scene=sc)
""")
    out = subprocess.run([args.blender, "-b", "--factory-startup", "--python", wrapper, "--", job_path],
                         capture_output=True, text=True)
    lines = [l for l in out.stdout.splitlines() if l.startswith(("CYCLES", "MEANS"))]
    print("\n".join(lines))
    if out.returncode != 0 or not any(l.startswith("MEANS") for l in lines):
        sys.exit(out.stdout[-3000:] + out.stderr[-3000:])
    means = [l for l in lines if l.startswith("MEANS")][0]
    nums = [float(x.strip("[],")) for x in means.split()[1:] if x.strip("[],") not in ("cycles", "scree")]
    c, s = nums[:3], nums[3:6]
    lum = lambda v: 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2]
    print(f"mean radiance: cycles {lum(c):.5f} scree {lum(s):.5f} ratio {lum(s) / lum(c):.4f}")
    print("per channel scree / cycles: " + " ".join(f"{a / b:.4f}" for a, b in zip(s, c)))
    subprocess.run([args.scree, "diff", os.path.join(work, "cycles.png"), os.path.join(work, "scree.png"),
                    "--threshold", "1", "--json", os.path.join(work, "diff.json")], capture_output=True)
    metrics = json.load(open(os.path.join(work, "diff.json")))["metrics"]
    print(f"FLIP mean {metrics['flip_mean']:.4f} max {metrics['flip_max']:.4f}  (pictures in {work})")


main()
