//! All integration tests, in one binary: they run the real `scree` executable.

mod animation;
mod bad_input;
mod bench;
mod cli;
mod clouds;
mod diff;
mod farm;
mod fuzz_regressions;
mod horizon;
mod layering;
mod light;
mod plants;
mod preview;
mod projections;
mod references;
mod rivers;
mod rocks;
mod schema;
mod support;
mod terrain;
