"""The shared Cycles harness with the light settings matched to scree's.

    blender -b --factory-startup --python cycles_matched.py -- job.json

Runs the harness (`cycles_render.py`, from $PEERS, default
../shared/bench/cycles) on the job unchanged, except that just before the
render it applies the job's "match" settings and prints what Cycles will
use, so that a comparison states them:

  "match": {"clamp": 0,                     # sample_clamp_direct/indirect (0: off, as scree)
            "terminator_geometry_offset": 0.1,  # per mesh object; Cycles' default 0.1
            "transparent": 256}                 # transparent_max_bounces (scree passes
                                                # cut-out surfaces without a limit)

prints  CYCLES_SETTINGS max_bounces=… diffuse=… glossy=… transmission=…
        transparent=… clamp_direct=… clamp_indirect=… terminator_offset=…
        terminator_geometry_offset=… caustics=…
before the harness's own CYCLES line. Bounces are the harness's (the job's
"bounces", all kinds set alike), transparent ones too unless "transparent"
says otherwise.
"""
import json, os, sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PEERS = os.environ.get("PEERS", os.path.join(ROOT, "..", "shared", "bench", "cycles"))
HARNESS = os.path.join(PEERS, "cycles_render.py")
RENDER = "bpy.ops.render.render(write_still=True)"

job = json.load(open(sys.argv[sys.argv.index("--") + 1]))
match = job.get("match", {})


def matched():
    import bpy

    sc = bpy.context.scene
    cy = sc.cycles
    if "clamp" in match:
        cy.sample_clamp_direct = cy.sample_clamp_indirect = float(match["clamp"])
    if "transparent" in match:
        cy.transparent_max_bounces = int(match["transparent"])
    meshes = [o for o in sc.objects if o.type == "MESH"]
    if "terminator_geometry_offset" in match:
        for o in meshes:
            o.cycles.shadow_terminator_geometry_offset = float(match["terminator_geometry_offset"])
    offsets = sorted({round(o.cycles.shadow_terminator_geometry_offset, 6) for o in meshes})
    shading = sorted({round(o.cycles.shadow_terminator_offset, 6) for o in meshes})
    print(
        f"CYCLES_SETTINGS max_bounces={cy.max_bounces} diffuse={cy.diffuse_bounces} "
        f"glossy={cy.glossy_bounces} transmission={cy.transmission_bounces} "
        f"transparent={cy.transparent_max_bounces} clamp_direct={cy.sample_clamp_direct:g} "
        f"clamp_indirect={cy.sample_clamp_indirect:g} "
        f"terminator_offset={','.join(f'{v:g}' for v in shading)} "
        f"terminator_geometry_offset={','.join(f'{v:g}' for v in offsets)} "
        f"caustics={int(cy.caustics_reflective)}{int(cy.caustics_refractive)}",
        flush=True,
    )


source = open(HARNESS).read()
if source.count(RENDER) != 1:
    sys.exit(f"{HARNESS}: expected one `{RENDER}` to run the matching before")
source = source.replace(RENDER, "_matched()\n" + RENDER)
exec(compile(source, HARNESS, "exec"), {"__name__": "__main__", "__file__": HARNESS, "_matched": matched})
