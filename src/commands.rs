//! The commands other than `render`: each takes its parsed arguments,
//! does its work through the library and prints its report.

use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::Instant;

use scree::error::{Error, Result};
use scree::scene::{overrides, Overrides, Source};
use scree::world::World;
use scree::{compare, diff, farm, job, output, scene};

use crate::cli::{self, BenchArgs, CompareArgs, DiffArgs, MergeArgs, TerrainArgs, TextureArgs};
use crate::{bench_progress, progress_bar, say_line, thread_pool, CANCEL};

pub fn merge(args: MergeArgs) -> Result<ExitCode> {
    if output::format_of(&args.output)? != output::Format::Png {
        return Err(Error::Usage(format!(
            "{}: merge writes PNG",
            args.output.display()
        )));
    }
    output::check_folder(&args.output)?;
    let parts = args
        .parts
        .iter()
        .map(|p| {
            let (image, texts) = output::read_png(p)?;
            let meta = output::Metadata::from_pairs(&texts).ok_or_else(|| {
                Error::Usage(format!(
                    "{}: has no scree render metadata (not a scree region render)",
                    p.display()
                ))
            })?;
            Ok(farm::Part {
                path: p.clone(),
                image,
                meta,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let (image, meta) = farm::merge(&parts)?;
    output::write_png_with(&image, &meta, &args.output)?;
    if !args.quiet {
        say!(
            "{}: {} parts merged into {}×{}",
            args.output.display(),
            parts.len(),
            image.width(),
            image.height()
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

pub fn compare(args: CompareArgs) -> Result<ExitCode> {
    let source = Source::read(args.scene.as_deref())?;
    let mut overrides = Overrides {
        samples: args.spp,
        ..Overrides::default()
    };
    let base = &source.file.camera.projection;
    let projections = args
        .projections
        .split(',')
        .map(|item| overrides::projection_item(item)?.projection_over(base))
        .collect::<Result<Vec<_>>>()?;
    let layout = compare::Layout::new(
        projections.len(),
        args.cell_width,
        &source.scene(&overrides)?,
    );
    (overrides.width, overrides.height) = (Some(layout.cell_width), Some(layout.cell_height));
    let scene = source.scene(&overrides)?;
    output::check_writable(&args.output)?;

    let pool = thread_pool(args.threads)?;
    let start = Instant::now();
    let progress = progress_bar(args.quiet);
    let frames: Vec<u32> = match args.frames {
        None => Vec::new(),
        Some((first, last)) => {
            let animation = scene
                .animation
                .as_ref()
                .ok_or_else(|| Error::Usage("--frames needs a scene with an `animation`".into()))?;
            if last >= animation.frames {
                return Err(Error::Usage(format!(
                    "frames {first}..{last}: the animation has frames 0..{}",
                    animation.frames - 1
                )));
            }
            (first..=last).collect()
        }
    };
    let overlay = args.overlay.map(Into::into);
    progress.set_length(layout.tiles(projections.len()) * frames.len().max(1) as u64);
    progress.set_message(scree::job::building(&scene));
    let grids = pool.install(|| -> Result<Vec<image::RgbaImage>> {
        let world = World::build(&scene);
        progress.set_message("tracing");
        let grid = |s: &scene::Scene| {
            compare::compare(s, &world, &projections, layout, overlay, &progress, &CANCEL)
        };
        if frames.is_empty() {
            return Ok(vec![grid(&scene)?]);
        }
        // The camera moves; each cell keeps its projection.
        frames
            .iter()
            .map(|&k| grid(&job::frame_scene(&source, &overrides, &scene, &world, k)?))
            .collect()
    })?;
    progress.finish_and_clear();
    if CANCEL.load(Ordering::SeqCst) {
        return Err(Error::Interrupted);
    }
    match (&grids[..], &scene.animation) {
        ([grid], _) if frames.is_empty() => {
            output::write_png(&image::DynamicImage::ImageRgba8(grid.clone()), &args.output)?
        }
        (_, Some(animation)) => output::write_apng(&grids, animation.fps, &args.output)?,
        _ => unreachable!("frames come with an animation"),
    }
    if !args.quiet {
        let (w, h) = layout.size();
        say!(
            "{}: {} projections in a {}×{} grid of {}×{} cells ({w}×{h} px), {:.2} s",
            args.output.display(),
            projections.len(),
            layout.columns,
            layout.rows,
            layout.cell_width,
            layout.cell_height,
            start.elapsed().as_secs_f64()
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

pub fn diff(args: DiffArgs) -> Result<ExitCode> {
    for out in [&args.heatmap, &args.json].into_iter().flatten() {
        output::check_folder(out)?;
    }
    let reference = diff::load(&args.reference)?;
    let result = diff::load(&args.result)?;
    let tolerance = diff::Tolerance {
        threshold: args.threshold,
        fail_percent: args.fail_percent,
        max_flip: args.max_flip,
    };
    let metrics = diff::measure(
        &reference,
        &result,
        &tolerance,
        (&args.reference, &args.result),
    )?;
    let channels = metrics.channels;
    let report = diff::judge(&args.reference, &args.result, tolerance, metrics);
    let needs_heatmap = args.heatmap.is_some() || args.report.is_some();
    let heat = needs_heatmap
        .then(|| image::DynamicImage::ImageRgba8(diff::heatmap(&reference, &result, channels)));
    if let (Some(path), Some(heat)) = (&args.heatmap, &heat) {
        output::write_png(heat, path)?;
    }
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&report).expect("a report serialises");
        output::write_bytes(format!("{text}\n").as_bytes(), path)?;
    }
    if let (Some(dir), Some(heat)) = (&args.report, &heat) {
        std::fs::create_dir_all(dir).map_err(|source| Error::Io {
            path: dir.clone(),
            source,
        })?;
        let copy = |from: &Path, name: &str| {
            let bytes = std::fs::read(from).map_err(|source| Error::Io {
                path: from.to_path_buf(),
                source,
            })?;
            output::write_bytes(&bytes, &dir.join(name))
        };
        copy(&args.reference, "reference.png")?;
        copy(&args.result, "result.png")?;
        output::write_png(heat, &dir.join("heatmap.png"))?;
        output::write_bytes(
            diff::html_report(&report).as_bytes(),
            &dir.join("index.html"),
        )?;
    }
    if !args.quiet {
        say!("{}", diff::summary(&report))?;
    }
    Ok(if report.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Writes an OBJ to `o` and its material library beside it (rocks.obj,
/// rocks.mtl): `make` gives both texts, and what it returns besides, for
/// the library's file name.
fn write_obj_and_mtl<T>(o: &Path, make: impl FnOnce(&str) -> (String, String, T)) -> Result<T> {
    let mtl = o.with_extension("mtl");
    let name = mtl
        .file_name()
        .map_or("materials.mtl".into(), |n| n.to_string_lossy().into_owned());
    let (obj_text, mtl_text, extra) = make(&name);
    output::write_bytes(mtl_text.as_bytes(), &mtl)?;
    output::write_bytes(obj_text.as_bytes(), o)?;
    Ok(extra)
}

pub fn terrain(args: TerrainArgs) -> Result<ExitCode> {
    if args.heightmap.is_none()
        && args.obj.is_none()
        && args.rocks_obj.is_none()
        && args.plants_obj.is_none()
        && args.populations_obj.is_none()
        && args.geotiff.is_none()
    {
        return Err(Error::Usage(
            "scree terrain: give --heightmap FILE.png, --geotiff FILE.tif, --obj FILE.obj, --rocks-obj FILE.obj, --plants-obj FILE.obj and/or --populations-obj FILE.obj"
                .into(),
        ));
    }
    let scene = Source::read(args.scene.as_deref())?.scene(&Overrides {
        resolution: args.resolution.map(|n| [n, n]),
        seed: args.seed,
        ..Overrides::default()
    })?;
    if let Some(h) = &args.heightmap {
        output::check_writable(h)?;
    }
    for o in [&args.obj, &args.rocks_obj, &args.plants_obj, &args.geotiff]
        .into_iter()
        .flatten()
    {
        output::check_folder(o)?;
    }
    let start = Instant::now();
    // The tile as the renderer places it: with a far field its outer band
    // joins the first ring, with a planet radius it curves.
    let land = scree::terrain::land(&scene.terrain.recipe(), scene.seed);
    let generate_time = start.elapsed();
    let grid = &land.tile;
    let water_note = land.waters.as_ref().map_or(String::new(), |w| {
        format!(
            "; {} lakes ({} samples), {} river samples",
            w.lakes, w.lake_samples, w.river_samples
        )
    });
    let (lo, hi) = grid.heights.range();
    if let Some(h) = &args.heightmap {
        let (img, _) = scree::terrain::import::to_png16(&grid.heights);
        output::write_png(&img, h)?;
    }
    if let Some(o) = &args.obj {
        output::write_bytes(scree::terrain::export::obj(grid).as_bytes(), o)?;
    }
    if let Some(t) = &args.geotiff {
        let bytes = scree::terrain::geotiff::encode(grid, scene.units)
            .map_err(scree::error::Error::Usage)?;
        output::write_bytes(&bytes, t)?;
    }
    if !args.quiet {
        say!(
            "{}×{} terrain generated in {:.0} ms; heights {lo} to {hi} (import with \"height\": {}){water_note}",
            grid.heights.width,
            grid.heights.height,
            generate_time.as_secs_f64() * 1e3,
            hi - lo
        )?;
    }
    if let Some(o) = &args.plants_obj {
        let placed = scree::plant::place::place(&scene.plants, &land.tile, land.waters.as_ref());
        let triangles = write_obj_and_mtl(o, |mtl| {
            scree::plant::export::obj_with_materials(&scene.plants, &placed, mtl)
        })?;
        if !args.quiet {
            let count: usize = placed.iter().map(|s| s.len()).sum();
            say!("{count} plants exported, {triangles} triangles")?;
        }
    }
    if let Some(o) = &args.populations_obj {
        let places: Vec<_> = scene
            .populations
            .iter()
            .map(|p| scree::population::place(p, &land.tile, land.waters.as_ref()))
            .collect();
        let triangles = write_obj_and_mtl(o, |mtl| {
            scree::population::export::obj_with_materials(&scene.populations, &places, mtl)
        })?;
        if !args.quiet {
            let count: usize = places.iter().map(Vec::len).sum();
            say!("{count} population instances exported, {triangles} triangles")?;
        }
    }
    if let Some(o) = &args.rocks_obj {
        let world = scree::world::World::build_on(&scene, land);
        let rocks = world.rock_exports();
        let folder = o
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        write_obj_and_mtl(o, |mtl| {
            let (obj, lib) = scree::rock::export::obj_with_materials(&rocks, mtl, folder);
            (obj, lib, ())
        })?;
        if !args.quiet {
            let triangles: usize = rocks.iter().map(|r| r.mesh.indices.len()).sum();
            let left_out = world.analytic.len();
            say!(
                "{} rocks exported, {triangles} triangles{}",
                rocks.len(),
                if left_out > 0 {
                    format!("; {left_out} analytic rocks left out (no triangles)")
                } else {
                    String::new()
                }
            )?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub fn bench(args: BenchArgs) -> Result<ExitCode> {
    let progress = bench_progress(args.quiet);
    let t0 = Instant::now();
    if let Some(file) = args.heightmap.as_ref().or(args.obj.as_ref()) {
        progress.set_message(format!("reading {}", file.display()));
    }
    let geometry = match (&args.heightmap, &args.obj) {
        (Some(h), _) => {
            scree::bench::Geometry::Grid(scree::bench::heightmap_grid(h, args.extent, args.height)?)
        }
        (None, Some(o)) => scree::bench::Geometry::Mesh(scree::bench::obj_mesh(o)?),
        (None, None) => {
            return Err(Error::Usage(
                "scree bench: give --heightmap FILE or --obj FILE".into(),
            ))
        }
    };
    let load = t0.elapsed();
    let all = thread_pool(args.threads)?;
    let r = scree::bench::run(geometry, &all, args.reps as usize, args.copies, &progress)?;
    progress.finish_and_clear();
    if args.json {
        say!(
            "{}",
            serde_json::to_string(&r).expect("a report serialises")
        )?;
    } else {
        say!(
            "{} triangles (loaded in {:.0} ms) | {} build {:.0} ms, {:.1} bytes/triangle, peak RSS {:.0} MiB | SIMD {}\n\
             primary: {:.2} Mrays/s on 1 thread, {:.2} on {} ({:.2}×) | shadow: {:.2} / {:.2} Mrays/s ({:.2}×) | diffuse: {:.2} / {:.2} Mrays/s ({:.2}×)\n\
             hits {} occluded {} diffuse hits {}{}",
            r.triangles,
            load.as_secs_f64() * 1e3,
            r.accel,
            r.build_ms,
            r.bytes_per_triangle,
            r.peak_rss_mib,
            r.simd,
            r.primary_mrays_1t,
            r.primary_mrays,
            r.threads,
            r.primary_mrays / r.primary_mrays_1t,
            r.shadow_mrays_1t,
            r.shadow_mrays,
            r.shadow_mrays / r.shadow_mrays_1t,
            r.diffuse_mrays_1t,
            r.diffuse_mrays,
            r.diffuse_mrays / r.diffuse_mrays_1t,
            r.hits,
            r.occluded,
            r.diffuse_hits,
            match (r.copies_primary_mrays, r.copies_shadow_mrays) {
                (Some(p), Some(s)) => format!(
                    "\ncopies, one thread each, {} at once: primary {:.2} Mrays/s ({:.2}×), shadow {:.2} ({:.2}×)",
                    r.threads,
                    p,
                    p / r.primary_mrays_1t,
                    s,
                    s / r.shadow_mrays_1t
                ),
                _ => String::new(),
            }
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

pub fn texture(args: TextureArgs) -> Result<ExitCode> {
    output::check_writable(&args.output)?;
    if let Some(a) = &args.albedo {
        output::check_writable(a)?;
    }
    use scree::texture::ground::{self, Ground};
    let kind = match args.kind {
        cli::TextureKind::Cobblestone => None,
        cli::TextureKind::Strata => Some(Ground::Strata),
        cli::TextureKind::Grass => Some(Ground::Grass),
        cli::TextureKind::Snow => Some(Ground::Snow),
    };
    if let Some(kind) = kind {
        if args.albedo.is_some() {
            return Err(Error::Usage(
                "--albedo is for cobblestone: a ground texture is its colour map, written to --output"
                    .into(),
            ));
        }
        let texels = kind.generate(args.size, args.seed);
        output::write_png(&ground::image(args.size, &texels), &args.output)?;
        return Ok(ExitCode::SUCCESS);
    }
    let maps = scree::texture::cobblestone::Cobblestone {
        size: args.size,
        seed: args.seed,
        stones: args.stones,
    }
    .generate();
    output::write_png(&maps.height_image(), &args.output)?;
    if let Some(a) = &args.albedo {
        output::write_png(&maps.albedo_image(), a)?;
    }
    Ok(ExitCode::SUCCESS)
}
