//! The `scree` command line: parses arguments, runs one command, prints
//! errors once and turns them into exit codes (0 ok, 1 `diff` found a
//! difference, 2 bad input or failure). The arguments are in [`cli`], the
//! commands other than `render` in [`commands`]; the work is the library's.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

use clap::Parser;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use scree::error::{Error, Result};
use scree::{job, scene};

/// Prints one line of a command's report on standard output. A reader
/// that has gone away (`scree bench | head -1`) is no failure: the rest of
/// the report is dropped and the command ends as it would have.
macro_rules! say {
    ($($arg:tt)*) => {
        say_line(format_args!($($arg)*))
    };
}

mod cli;
mod commands;

use cli::{Cli, Command, RenderArgs};

/// Set by Ctrl-C / SIGTERM; renders poll it between tiles.
static CANCEL: AtomicBool = AtomicBool::new(false);

fn say_line(line: std::fmt::Arguments) -> Result<()> {
    use std::io::Write;
    match writeln!(std::io::stdout().lock(), "{line}") {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(Error::Io {
            path: "standard output".into(),
            source: e,
        }),
        _ => Ok(()),
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Both Ctrl-C and SIGTERM (what farm schedulers send) stop a render.
    let _ = ctrlc::set_handler(|| CANCEL.store(true, Ordering::SeqCst));
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Render(args) => render(args),
        Command::Compare(args) => commands::compare(args),
        Command::Diff(args) => commands::diff(args),
        Command::Texture(args) => commands::texture(args),
        Command::Terrain(args) => commands::terrain(args),
        Command::Merge(args) => commands::merge(args),
        Command::Bench(args) => commands::bench(args),
        Command::Preview(args) => preview(args),
        Command::Schema => {
            say!("{}", scene::schema::text())?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Check { scene } => check(scene),
    }
}

/// `scree render`: the job on its thread pool (every parallel step, from
/// decoding a heightmap to converting the image, runs on `--threads`).
fn render(args: RenderArgs) -> Result<ExitCode> {
    let job = args.job()?;
    let pool = thread_pool(args.threads)?;
    let progress = progress_bar(args.quiet);
    let summary = pool.install(|| job::run(&job, &progress, &CANCEL))?;
    if CANCEL.load(Ordering::SeqCst) {
        return Err(Error::Interrupted);
    }
    if !args.quiet {
        say!("{summary}")?;
    }
    for warning in &summary.warnings {
        eprintln!("warning: {warning}");
    }
    Ok(ExitCode::SUCCESS)
}

/// `scree preview`: serves the page until Ctrl-C.
fn preview(args: cli::PreviewArgs) -> Result<ExitCode> {
    if let Some(t) = args.threads {
        rayon::ThreadPoolBuilder::new()
            .num_threads(t as usize)
            .build_global()
            .map_err(|e| Error::Usage(format!("cannot start worker threads: {e}")))?;
    }
    let options = scree::preview::Options {
        scene: args.scene,
        addr: std::net::SocketAddr::new(args.bind, args.port),
        width: args.width,
    };
    let open = args.open;
    scree::preview::serve(
        options,
        |addr| {
            let url = format!("http://{addr}/");
            let _ = say!("scree preview: {url} (Ctrl-C to stop)");
            if open {
                open_in_browser(&url);
            }
        },
        &CANCEL,
    )?;
    Ok(ExitCode::SUCCESS)
}

/// Opens `url` with the desktop's opener, or says that it could not.
fn open_in_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else if cfg!(windows) {
        "explorer"
    } else {
        "xdg-open"
    };
    if let Err(e) = std::process::Command::new(opener).arg(url).spawn() {
        eprintln!("warning: cannot open a browser ({opener}: {e}); open {url} yourself");
    }
}

/// `scree check`: loads and validates the scene, prints a one-line summary.
fn check(path: PathBuf) -> Result<ExitCode> {
    let s = scene::load(&path)?;
    let [w, h] = s.terrain.resolution;
    let light = match s.integrator {
        scene::Integrator::Direct => "direct light".to_string(),
        scene::Integrator::Path { bounces, .. } => format!("path-traced, {bounces} bounces"),
    };
    let adaptive = if s.image.noise_threshold > 0.0 {
        format!(" (adaptive, threshold {})", s.image.noise_threshold)
    } else {
        String::new()
    };
    // The far field: rings of how many samples, out to what extent.
    let far = s.terrain.far_field.map_or(String::new(), |f| {
        let reach = (1u64 << f.rings) as f32;
        format!(
            " with {} far-field rings of {}×{} to {}×{}",
            f.rings,
            f.cells[0] + 1,
            f.cells[1] + 1,
            s.terrain.size[0] * reach,
            s.terrain.size[1] * reach
        )
    });
    say!(
        "{}: ok ({}×{} image, {} spp{adaptive}, {light}, {}×{} terrain{far}, {} projection, about {:.0} MiB)",
        path.display(),
        s.image.width,
        s.image.height,
        s.image.samples,
        w,
        h,
        s.camera.projection.name(),
        s.memory_estimate() as f64 / (1 << 20) as f64
    )?;
    Ok(ExitCode::SUCCESS)
}

/// A rayon pool with `threads` workers (default: one per core).
fn thread_pool(threads: Option<u32>) -> Result<rayon::ThreadPool> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads.unwrap_or(0) as usize)
        .build()
        .map_err(|e| Error::Usage(format!("cannot start worker threads: {e}")))
}

/// The progress bar on stderr (drawn only when stderr is a terminal), or a
/// hidden one.
fn progress_bar(quiet: bool) -> ProgressBar {
    stderr_progress(quiet, "{spinner} {msg} [{bar:40}] {percent}% eta {eta}")
}

/// `scree bench`'s progress on standard error: a spinner, redrawn by its
/// own thread while the file is read and the structure built, then a bar
/// over the passes, drawn only between them ([`scree::bench::run`]).
fn bench_progress(quiet: bool) -> ProgressBar {
    let bar = stderr_progress(quiet, "{spinner} {msg} {elapsed}");
    bar.enable_steady_tick(std::time::Duration::from_millis(120));
    bar
}

/// A progress display on stderr in `template` (drawn only when stderr is a
/// terminal), or a hidden one.
fn stderr_progress(quiet: bool, template: &str) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template(template)
            .expect("static template")
            .progress_chars("=> "),
    );
    bar
}
