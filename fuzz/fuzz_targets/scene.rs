//! Scene parsing and validation must never panic, whatever the bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        // Relative texture paths resolve into a folder that does not exist.
        let _ = scree::scene::parse(text, "fuzz.json", std::path::Path::new("/nonexistent-scree-fuzz"));
    }
});
