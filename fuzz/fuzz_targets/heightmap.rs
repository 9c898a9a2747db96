//! Heightmap and texture decoding must never panic, whatever the bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = std::path::Path::new("fuzz.png");
    if let Ok(map) = scree::terrain::import::decode(data, path) {
        let _ = scree::terrain::import::resample(&map, 17, 9);
    }
});
