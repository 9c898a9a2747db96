//! GeoTIFF elevation models (DEMs): one band of int16, uint16, int32 or
//! float32 heights in metres, uncompressed, LZW or Deflate (decoded by the
//! `tiff` crate), north-up like the PNG heightmaps.
//!
//! Cells equal to the file's `GDAL_NODATA` value (tag 42113) are filled
//! from their valid neighbours, ring by ring inward, and counted. With a
//! georeference (ModelPixelScale, tag 33550) the samples' spacing gives
//! the terrain's size: metres in a projected model, degrees in a
//! geographic one, converted at the map's mid latitude (from
//! ModelTiepoint, tag 33922) on a sphere of the Earth's mean radius.

use std::path::Path;

use tiff::decoder::{Decoder, DecodingResult, Limits};
use tiff::tags::Tag;

use super::import::{Dem, Imported, MAX_DECODED_BYTES};

/// GDAL's nodata tag: the value, as ASCII text.
const GDAL_NODATA: u16 = 42113;
/// GeoKey of the model type: 1 projected, 2 geographic, 3 geocentric.
const GT_MODEL_TYPE: u16 = 1024;
/// The Earth's mean radius, metres.
const EARTH_RADIUS: f64 = 6_371_000.0;

/// Whether `path` names a GeoTIFF (by its extension).
pub fn is_geotiff(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("tif") || e.eq_ignore_ascii_case("tiff"))
}

/// Reads a GeoTIFF DEM at `path`.
pub fn load(path: &Path) -> Result<Imported, String> {
    let file = crate::texture::open_image_file(path)?;
    decode_from(std::io::BufReader::new(file), path)
}

/// Decodes GeoTIFF bytes (named `path` in messages).
pub fn decode(bytes: &[u8], path: &Path) -> Result<Imported, String> {
    decode_from(std::io::Cursor::new(bytes), path)
}

fn decode_from<R: std::io::Read + std::io::Seek>(
    input: R,
    path: &Path,
) -> Result<Imported, String> {
    let name = path.display();
    let cannot = |e: &dyn std::fmt::Display| format!("cannot read {name}: {e}");
    let mut limits = Limits::default();
    limits.decoding_buffer_size = MAX_DECODED_BYTES;
    limits.intermediate_buffer_size = MAX_DECODED_BYTES;
    let mut dec = Decoder::new(input)
        .map_err(|e| cannot(&e))?
        .with_limits(limits);
    let (w, h) = dec.dimensions().map_err(|e| cannot(&e))?;
    let (w, h) = (w as usize, h as usize);
    if w < 2 || h < 2 {
        return Err(format!(
            "{name} is {w}×{h}: a DEM needs at least 2×2 samples"
        ));
    }
    let compression = match dec.get_tag_u32(Tag::Compression).unwrap_or(1) {
        1 => "uncompressed",
        5 => "LZW",
        8 | 32946 => "Deflate",
        other => {
            return Err(format!(
            "{name} uses TIFF compression {other}; scree reads uncompressed, LZW and Deflate DEMs"
        ))
        }
    };
    let nodata: Option<f64> = match dec.get_tag_ascii_string(Tag::Unknown(GDAL_NODATA)) {
        Ok(text) => {
            let text = text.trim_matches(char::from(0)).trim();
            match text.parse::<f64>() {
                Ok(v) => Some(v),
                Err(_) if text.eq_ignore_ascii_case("nan") => Some(f64::NAN),
                Err(_) => {
                    return Err(format!(
                        "{name}: its GDAL_NODATA tag (42113) holds {text:?}, not a number"
                    ))
                }
            }
        }
        Err(_) => None,
    };
    let scale = dec.get_tag_f64_vec(Tag::ModelPixelScaleTag).ok();
    let tiepoint = dec.get_tag_f64_vec(Tag::ModelTiepointTag).ok();
    let model = dec
        .get_tag_u16_vec(Tag::GeoKeyDirectoryTag)
        .ok()
        .and_then(|keys| model_type(&keys));
    let image = dec.read_image().map_err(|e| cannot(&e))?;
    let (values, kind): (Vec<f64>, &str) = match image {
        DecodingResult::I16(v) => (v.into_iter().map(f64::from).collect(), "int16"),
        DecodingResult::U16(v) => (v.into_iter().map(f64::from).collect(), "uint16"),
        DecodingResult::I32(v) => (v.into_iter().map(f64::from).collect(), "int32"),
        DecodingResult::F32(v) => (v.into_iter().map(f64::from).collect(), "float32"),
        _ => {
            return Err(format!(
                "{name} is not a one-band int16, uint16, int32 or float32 DEM"
            ))
        }
    };
    if values.len() != w * h {
        return Err(format!(
            "{name} has {} samples for {w}×{h}: a DEM has one band",
            values.len()
        ));
    }
    let missing =
        |v: f64| !v.is_finite() || nodata.is_some_and(|n| v == n || (n.is_nan() && v.is_nan()));
    let mut grid: Vec<Option<f64>> = values.iter().map(|&v| (!missing(v)).then_some(v)).collect();
    let filled = fill_nodata(&mut grid, w, h)
        .ok_or_else(|| format!("{name} holds no valid height: every sample is nodata"))?;
    // North-up rows: file row r is grid row h − 1 − r.
    let mut samples = vec![0.0f32; w * h];
    for (r, row) in grid.chunks(w).enumerate() {
        let out = &mut samples[(h - 1 - r) * w..][..w];
        for (o, v) in out.iter_mut().zip(row) {
            *o = v.expect("filled") as f32;
        }
    }
    let size = match (scale, model) {
        (Some(s), model) if s.len() >= 2 && s[0] > 0.0 && s[1] > 0.0 => {
            let extent = [s[0] * (w - 1) as f64, s[1] * (h - 1) as f64];
            match model {
                Some(2) => {
                    let Some(top) = tiepoint.as_ref().filter(|t| t.len() >= 6).map(|t| t[4]) else {
                        return Err(format!(
                            "{name} is in degrees but has no tiepoint to say where: give terrain.size in world units"
                        ));
                    };
                    let lat = (top - 0.5 * extent[1]).to_radians();
                    let metres = EARTH_RADIUS * std::f64::consts::PI / 180.0;
                    Some([extent[0] * metres * lat.cos(), extent[1] * metres])
                }
                Some(3) => None,
                _ => Some(extent),
            }
        }
        _ => None,
    };
    let top = samples.iter().fold(f32::MIN, |a, &b| a.max(b)) as f64;
    Ok(Imported::dem(
        w,
        h,
        samples,
        Dem {
            format: format!("{kind}, {compression}"),
            filled,
            size,
            top,
        },
    ))
}

/// The model type from a GeoKeyDirectory: its header (version, revision,
/// minor revision, key count), then four shorts a key (id, location,
/// count, value).
fn model_type(keys: &[u16]) -> Option<u16> {
    let count = *keys.get(3)? as usize;
    keys.get(4..4 + 4 * count)?
        .chunks(4)
        .find(|k| k[0] == GT_MODEL_TYPE && k[1] == 0)
        .map(|k| k[3])
}

/// `grid` as a GeoTIFF DEM: one band of float32 heights in metres (world
/// units times `units`), LZW, north row first, its sample spacing in
/// metres as ModelPixelScale and a projected model type (no coordinate
/// system: scree's world has no place on Earth). Reads back with [`load`].
pub fn encode(grid: &super::TerrainGrid, units: f64) -> Result<Vec<u8>, String> {
    use tiff::encoder::{colortype, Compression, TiffEncoder};
    let (w, h) = (grid.heights.width, grid.heights.height);
    let mut data = Vec::with_capacity(w * h);
    for r in (0..h).rev() {
        data.extend(
            grid.heights.data()[r * w..][..w]
                .iter()
                .map(|&v| (v as f64 * units) as f32),
        );
    }
    let scale = [
        grid.size[0] as f64 / (w - 1) as f64 * units,
        grid.size[1] as f64 / (h - 1) as f64 * units,
        0.0,
    ];
    let fail = |e: tiff::TiffError| format!("cannot encode the GeoTIFF: {e}");
    let mut bytes = std::io::Cursor::new(Vec::new());
    let mut enc = TiffEncoder::new(&mut bytes)
        .map_err(fail)?
        .with_compression(Compression::Lzw);
    let mut image = enc
        .new_image::<colortype::Gray32Float>(w as u32, h as u32)
        .map_err(fail)?;
    let e = image.encoder();
    e.write_tag(Tag::ModelPixelScaleTag, &scale[..])
        .map_err(fail)?;
    let corner = [
        0.0,
        0.0,
        0.0,
        -0.5 * scale[0] * (w - 1) as f64,
        0.5 * scale[1] * (h - 1) as f64,
        0.0,
    ];
    e.write_tag(Tag::ModelTiepointTag, &corner[..])
        .map_err(fail)?;
    e.write_tag(
        Tag::GeoKeyDirectoryTag,
        &[1u16, 1, 0, 1, GT_MODEL_TYPE, 0, 1, 1][..],
    )
    .map_err(fail)?;
    image.write_data(&data).map_err(fail)?;
    Ok(bytes.into_inner())
}

/// Fills each missing cell with the mean of its valid neighbours (of
/// eight), ring by ring inward from the valid ones; how many were filled,
/// or None when no cell is valid.
pub fn fill_nodata(grid: &mut [Option<f64>], w: usize, h: usize) -> Option<usize> {
    let missing = grid.iter().filter(|v| v.is_none()).count();
    if missing == grid.len() {
        return None;
    }
    let mut left: Vec<usize> = (0..grid.len()).filter(|&k| grid[k].is_none()).collect();
    while !left.is_empty() {
        let mut ring = Vec::new();
        let mut rest = Vec::new();
        for &k in &left {
            let (i, j) = ((k / w) as isize, (k % w) as isize);
            let (mut sum, mut n) = (0.0, 0);
            for di in -1..=1 {
                for dj in -1..=1 {
                    let (a, b) = (i + di, j + dj);
                    if (di, dj) != (0, 0)
                        && a >= 0
                        && b >= 0
                        && (a as usize) < h
                        && (b as usize) < w
                    {
                        if let Some(v) = grid[a as usize * w + b as usize] {
                            sum += v;
                            n += 1;
                        }
                    }
                }
            }
            if n > 0 {
                ring.push((k, sum / n as f64));
            } else {
                rest.push(k);
            }
        }
        for (k, v) in ring {
            grid[k] = Some(v);
        }
        left = rest;
    }
    Some(missing)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tiff::encoder::{colortype, Compression, DeflateLevel, TiffEncoder};

    /// A GeoTIFF of `w` × `h` samples `data` (file order, north row
    /// first), written with `compression`, with optional nodata text, a
    /// pixel scale and a model type (1 projected, 2 geographic, with a
    /// tiepoint at 46° N).
    fn write<C: colortype::ColorType>(
        data: &[C::Inner],
        (w, h): (u32, u32),
        compression: Compression,
        nodata: Option<&str>,
        geo: Option<([f64; 3], u16)>,
    ) -> Vec<u8>
    where
        [C::Inner]: tiff::encoder::TiffValue,
    {
        let mut bytes = std::io::Cursor::new(Vec::new());
        let mut enc = TiffEncoder::new(&mut bytes)
            .unwrap()
            .with_compression(compression);
        let mut image = enc.new_image::<C>(w, h).unwrap();
        if let Some(text) = nodata {
            image
                .encoder()
                .write_tag(Tag::Unknown(GDAL_NODATA), text)
                .unwrap();
        }
        if let Some((scale, model)) = geo {
            let e = image.encoder();
            e.write_tag(Tag::ModelPixelScaleTag, &scale[..]).unwrap();
            e.write_tag(Tag::ModelTiepointTag, &[0.0, 0.0, 0.0, 7.0, 46.0, 0.0][..])
                .unwrap();
            e.write_tag(
                Tag::GeoKeyDirectoryTag,
                &[1u16, 1, 0, 1, GT_MODEL_TYPE, 0, 1, model][..],
            )
            .unwrap();
        }
        image.write_data(data).unwrap();
        bytes.into_inner()
    }

    /// Every sample type and compression reads back to its heights, rows
    /// flipped into grid order, with the nodata cell filled and counted
    /// and the extent from the pixel scale.
    #[test]
    fn every_type_and_compression_reads_back() {
        let (w, h) = (7usize, 5usize);
        // File order (north row first); cell (1, 2) of the file is nodata.
        let value = |r: usize, c: usize| (r * 10 + c) as i32 - 20;
        let hole = w + 2; // file row 1, column 2
        let compressions = [
            (Compression::Uncompressed, "uncompressed"),
            (Compression::Lzw, "LZW"),
            (Compression::Deflate(DeflateLevel::Balanced), "Deflate"),
        ];
        for (compression, name) in compressions {
            let cells: Vec<i32> = (0..w * h).map(|k| value(k / w, k % w)).collect();
            let geo = Some(([30.0, 25.0, 0.0], 1));
            let size = (w as u32, h as u32);
            let files: Vec<(Vec<u8>, &str)> = vec![
                {
                    let d: Vec<i16> = cells
                        .iter()
                        .enumerate()
                        .map(|(k, &v)| if k == hole { -9999 } else { v as i16 })
                        .collect();
                    (
                        write::<colortype::GrayI16>(&d, size, compression, Some("-9999"), geo),
                        "int16",
                    )
                },
                {
                    let d: Vec<u16> = cells
                        .iter()
                        .enumerate()
                        .map(|(k, &v)| if k == hole { 0 } else { (v + 100) as u16 })
                        .collect();
                    (
                        write::<colortype::Gray16>(&d, size, compression, Some("0"), geo),
                        "uint16",
                    )
                },
                {
                    let d: Vec<i32> = cells
                        .iter()
                        .enumerate()
                        .map(|(k, &v)| if k == hole { -32768 } else { v * 1000 })
                        .collect();
                    (
                        write::<colortype::GrayI32>(&d, size, compression, Some("-32768"), geo),
                        "int32",
                    )
                },
                {
                    let d: Vec<f32> = cells
                        .iter()
                        .enumerate()
                        .map(|(k, &v)| if k == hole { f32::NAN } else { v as f32 + 0.25 })
                        .collect();
                    (
                        write::<colortype::Gray32Float>(&d, size, compression, Some("nan"), geo),
                        "float32",
                    )
                },
            ];
            for (bytes, kind) in files {
                let m = decode(&bytes, Path::new("t.tif")).unwrap();
                let dem = m.dem.clone().unwrap();
                assert_eq!(dem.format, format!("{kind}, {name}"));
                assert_eq!(dem.filled, 1, "{kind} {name}");
                assert_eq!(dem.size, Some([180.0, 100.0]));
                let expect = |r: usize, c: usize| -> f64 {
                    let v = value(r, c) as f64;
                    match kind {
                        "int16" => v,
                        "uint16" => v + 100.0,
                        "int32" => v * 1000.0,
                        _ => v + 0.25,
                    }
                };
                for r in 0..h {
                    for c in 0..w {
                        let got = m.value(h - 1 - r, c) * m.full_scale;
                        if r * w + c == hole {
                            continue;
                        }
                        assert!(
                            (got - expect(r, c)).abs() < 1e-3,
                            "{kind} {name} ({r}, {c}): {got}"
                        );
                    }
                }
                // The hole: the mean of its eight neighbours, all valid.
                let around: f64 = [
                    (0, 1),
                    (0, 2),
                    (0, 3),
                    (1, 1),
                    (1, 3),
                    (2, 1),
                    (2, 2),
                    (2, 3),
                ]
                .iter()
                .map(|&(r, c)| expect(r, c))
                .sum::<f64>()
                    / 8.0;
                let got = m.value(h - 2, 2) * m.full_scale;
                assert!(
                    (got - around).abs() < 1e-3,
                    "{kind} {name} hole: {got} vs {around}"
                );
            }
        }
    }

    #[test]
    fn degrees_convert_at_the_maps_latitude_and_no_scale_gives_no_size() {
        let d = vec![0i16; 9 * 5];
        // 0.001° a pixel, 8 × 4 spans; mid latitude 46 − 0.002.
        let bytes = write::<colortype::GrayI16>(
            &d,
            (9, 5),
            Compression::Lzw,
            None,
            Some(([0.001, 0.001, 0.0], 2)),
        );
        let m = decode(&bytes, Path::new("g.tif")).unwrap();
        let metres = EARTH_RADIUS * std::f64::consts::PI / 180.0;
        let [x, z] = m.dem.unwrap().size.unwrap();
        assert!((z - 0.004 * metres).abs() < 1e-6);
        assert!((x - 0.008 * metres * (46.0f64 - 0.002).to_radians().cos()).abs() < 1e-6);
        let plain = write::<colortype::GrayI16>(&d, (9, 5), Compression::Uncompressed, None, None);
        let m = decode(&plain, Path::new("p.tif")).unwrap();
        assert_eq!(m.dem.unwrap().size, None);
    }

    #[test]
    fn an_exported_grid_reads_back_to_its_heights_and_size() {
        let heights: Vec<f32> = (0..6 * 4)
            .map(|k| (k * 7 % 11) as f32 * 0.5 - 1.0)
            .collect();
        let grid = super::super::TerrainGrid {
            heights: super::super::Heightmap::new(6, 4, heights.clone()),
            size: [50.0, 30.0],
        };
        let m = decode(&encode(&grid, 2.0).unwrap(), Path::new("e.tif")).unwrap();
        assert_eq!(m.dem.as_ref().unwrap().size, Some([100.0, 60.0]));
        for i in 0..4 {
            for j in 0..6 {
                assert_eq!(
                    m.value(i, j) * m.full_scale,
                    heights[i * 6 + j] as f64 * 2.0
                );
            }
        }
    }

    #[test]
    fn bad_files_say_what_is_wrong() {
        let all = write::<colortype::GrayI16>(
            &[5i16; 4],
            (2, 2),
            Compression::Uncompressed,
            Some("5"),
            None,
        );
        let e = decode(&all, Path::new("a.tif")).unwrap_err();
        assert!(e.contains("every sample is nodata"), "{e}");
        let e = decode(b"not a tiff", Path::new("b.tif")).unwrap_err();
        assert!(e.starts_with("cannot read b.tif"), "{e}");
        let rgb = {
            let mut bytes = std::io::Cursor::new(Vec::new());
            TiffEncoder::new(&mut bytes)
                .unwrap()
                .write_image::<colortype::RGB8>(2, 2, &[0u8; 12])
                .unwrap();
            bytes.into_inner()
        };
        let e = decode(&rgb, Path::new("c.tif")).unwrap_err();
        assert!(e.contains("one-band"), "{e}");
    }

    #[test]
    fn a_hole_fills_from_its_rim_inward() {
        // 5 × 5 of 1.0 with a 3 × 3 hole: the hole's ring takes the means
        // of its valid neighbours, its centre then the mean of the ring.
        let mut g: Vec<Option<f64>> = (0..25)
            .map(|k| {
                let (i, j) = (k / 5, k % 5);
                (!(1..4).contains(&i) || !(1..4).contains(&j)).then_some(if j == 0 {
                    4.0
                } else {
                    1.0
                })
            })
            .collect();
        assert_eq!(fill_nodata(&mut g, 5, 5), Some(9));
        // Cell (1, 1): valid neighbours (0,0)=4, (0,1)=1, (0,2)=1, (1,0)=4, (2,0)=4.
        assert_eq!(g[6], Some(14.0 / 5.0));
        // Cell (2, 2), filled last, from its eight filled neighbours.
        let ring: f64 = [6, 7, 8, 11, 13, 16, 17, 18]
            .iter()
            .map(|&k| g[k].unwrap())
            .sum();
        assert_eq!(g[12], Some(ring / 8.0));
        let mut none = vec![None; 4];
        assert_eq!(fill_nodata(&mut none, 2, 2), None);
    }

    #[test]
    fn the_model_type_is_read_from_the_key_directory() {
        let keys = [1, 1, 0, 2, 1025, 0, 1, 1, 1024, 0, 1, 2];
        assert_eq!(model_type(&keys), Some(2));
        assert_eq!(model_type(&[1, 1, 0, 0]), None);
    }
}
