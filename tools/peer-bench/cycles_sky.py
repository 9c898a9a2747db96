"""Blender's Nishita sky (Cycles' spectral single-scattering atmosphere,
21 wavelengths) as the reference for scree's physical atmosphere: the
zenith's colour at noon and the sun's colour low down.

    blender -b -P tools/peer-bench/cycles_sky.py -- OUT.json

Renders tiny views straight up (the sun 70 degrees high) and into the sun
(its disc, 5 degrees high), linear Rec.709, and writes their mean
radiances. scree's `atmosphere` tests compare chromaticities with them.
"""

import json
import math
import sys

import bpy


def view(sun_elevation_deg, look_elevation_deg, look_azimuth_deg, sun_disc):
    scene = bpy.context.scene
    scene.render.engine = "CYCLES"
    scene.cycles.samples = 16
    scene.cycles.use_denoising = False
    scene.render.resolution_x = 8
    scene.render.resolution_y = 8
    scene.view_settings.view_transform = "Standard"
    world = scene.world or bpy.data.worlds.new("World")
    scene.world = world
    world.use_nodes = True
    nodes = world.node_tree.nodes
    nodes.clear()
    sky = nodes.new("ShaderNodeTexSky")
    sky.sky_type = "NISHITA"
    sky.sun_elevation = math.radians(sun_elevation_deg)
    sky.sun_rotation = 0.0
    sky.sun_disc = sun_disc
    sky.sun_size = math.radians(0.545)
    sky.altitude = 0.0
    sky.air_density = 1.0
    sky.dust_density = 1.0
    sky.ozone_density = 1.0
    bg = nodes.new("ShaderNodeBackground")
    out = nodes.new("ShaderNodeOutputWorld")
    world.node_tree.links.new(sky.outputs["Color"], bg.inputs["Color"])
    world.node_tree.links.new(bg.outputs["Background"], out.inputs["Surface"])
    for o in list(bpy.data.objects):
        bpy.data.objects.remove(o)
    cam_data = bpy.data.cameras.new("cam")
    cam_data.angle = math.radians(0.1)
    cam = bpy.data.objects.new("cam", cam_data)
    scene.collection.objects.link(cam)
    scene.camera = cam
    # Blender: z up; the sun at rotation 0 lies toward +y. A camera looks
    # along its local -z; aim it with a rotation.
    el, az = math.radians(look_elevation_deg), math.radians(look_azimuth_deg)
    d = (math.cos(el) * math.sin(az), math.cos(el) * math.cos(az), math.sin(el))
    import mathutils

    cam.rotation_euler = mathutils.Vector(d).to_track_quat("-Z", "Y").to_euler()
    path = "/tmp/cycles_sky.exr"
    scene.render.image_settings.file_format = "OPEN_EXR"
    scene.render.image_settings.color_depth = "32"
    scene.render.filepath = path
    bpy.ops.render.render(write_still=True)
    img = bpy.data.images.load(path)
    px = list(img.pixels)
    n = len(px) // 4
    mean = [sum(px[4 * k + c] for k in range(n)) / n for c in range(3)]
    bpy.data.images.remove(img)
    return mean


def main():
    out = sys.argv[sys.argv.index("--") + 1]
    result = {
        "zenith_sun70": view(70.0, 90.0, 0.0, False),
        "horizon_away_sun70": view(70.0, 2.0, 180.0, False),
        "sun_disc_5": view(5.0, 5.0, 0.0, True),
        "sun_disc_60": view(60.0, 60.0, 0.0, True),
    }
    with open(out, "w") as f:
        json.dump(result, f, indent=2)
    print(json.dumps(result))


main()
