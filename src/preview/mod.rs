//! `scree preview`: a local web page that refines the picture while the
//! scene file is edited.
//!
//! A worker thread renders the scene in rounds: a quarter-size pass at one
//! sample, then the full preview size at 1, 2, 4, … samples up to the
//! scene's own count (the last round is the image `scree render` makes at
//! that size). Each round is pushed to the page over Server-Sent Events.
//! A change to the scene file, or to a file it names (a heightmap, a
//! texture), starts the rounds again; the built world (terrain, rocks,
//! acceleration structures) is kept when only the camera, sun, sky, fog or
//! image change. The page's controls (sun, exposure, projection, look-at)
//! are kept here, applied on top of the file's text, and never written to
//! it: "Copy JSON" shows the edited scene and "Save as…" writes a new file
//! beside it.
//!
//! The server (axum, bound to 127.0.0.1 unless told otherwise) reads no
//! file named by a request: it answers its own routes and 404 to anything
//! else, so no request path can reach outside the scene's folder.

mod session;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Query, State};
use axum::http::{header, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use futures_util::StreamExt;
use tokio_stream::wrappers::WatchStream;

use crate::camera::ProjectionFile;
use crate::error::{Error, Result};
pub use session::{Controls, Session, Status};

/// The page: one static file, no build step, nothing fetched from
/// elsewhere.
const PAGE: &str = include_str!("page.html");

/// What `scree preview` was asked for.
#[derive(Debug, Clone)]
pub struct Options {
    /// The scene file.
    pub scene: PathBuf,
    /// Where to listen (port 0: any free port).
    pub addr: SocketAddr,
    /// Width of the preview image (the height keeps the scene's aspect
    /// ratio); None: the scene's width, at most 960.
    pub width: Option<u32>,
}

/// Serves the preview until `cancel` is set (Ctrl-C); `ready` gets the
/// address it listens on once it does. Nothing is left behind: no file
/// is written unless the page's "Save as…" asks for one.
pub fn serve(
    options: Options,
    ready: impl FnOnce(SocketAddr),
    cancel: &'static AtomicBool,
) -> Result<()> {
    let session = Session::start(&options.scene, options.width, cancel)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Usage(format!("cannot start the preview server: {e}")))?;
    let result = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(options.addr)
            .await
            .map_err(|e| Error::Usage(format!("cannot listen on {}: {e}", options.addr)))?;
        let addr = listener
            .local_addr()
            .map_err(|e| Error::Usage(format!("cannot listen on {}: {e}", options.addr)))?;
        ready(addr);
        let stop = async move {
            while !cancel.load(Ordering::SeqCst) {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        };
        axum::serve(listener, router(session.clone()))
            .with_graceful_shutdown(stop)
            .await
            .map_err(|e| Error::Usage(format!("the preview server stopped: {e}")))
    });
    session.stop();
    result
}

/// The server's routes; anything else is 404.
pub fn router(session: Arc<Session>) -> Router {
    Router::new()
        .route("/", get(|| async { Html(PAGE) }))
        .route("/events", get(events))
        .route("/frame.png", get(frame))
        .route("/state", get(state))
        .route("/scene.json", get(scene_json))
        .route("/projections.json", get(projections))
        .route("/control", post(control))
        .route("/look", post(look))
        .route("/reset", post(reset))
        .route("/save", post(save))
        .fallback(|| async { (StatusCode::NOT_FOUND, "not found\n") })
        .with_state(session)
}

type Shared = State<Arc<Session>>;

/// Each new round's status (and the first one at once), as JSON events.
async fn events(State(session): Shared) -> impl IntoResponse {
    let stream = WatchStream::new(session.frames()).map(|frame| {
        Ok::<_, std::convert::Infallible>(
            Event::default()
                .json_data(&frame.status)
                .expect("a status serialises"),
        )
    });
    Sse::new(stream).keep_alive(KeepAlive::default())
}

/// The latest image, PNG.
async fn frame(State(session): Shared) -> Response {
    match session.latest().png {
        Some(png) => (
            [
                (header::CONTENT_TYPE, "image/png"),
                (header::CACHE_CONTROL, "no-store"),
            ],
            png.as_ref().clone(),
        )
            .into_response(),
        None => (StatusCode::NOT_FOUND, "no image yet\n").into_response(),
    }
}

async fn state(State(session): Shared) -> Response {
    axum::Json(session.latest().status).into_response()
}

/// The scene as the page shows it: the file's text with the controls.
async fn scene_json(State(session): Shared) -> Response {
    match session.edited_text() {
        Ok(text) => ([(header::CONTENT_TYPE, "application/json")], text).into_response(),
        Err(e) => (StatusCode::CONFLICT, format!("{e}\n")).into_response(),
    }
}

/// The projections the menu offers: each one's tag and default field of
/// view (null for one without), as [`ProjectionFile::all`] lists them.
async fn projections() -> Response {
    let list: Vec<serde_json::Value> = ProjectionFile::all()
        .iter()
        .map(|p| serde_json::json!({ "type": p.name(), "fov": p.fov() }))
        .collect();
    (
        [(header::CONTENT_TYPE, "application/json")],
        serde_json::Value::from(list).to_string(),
    )
        .into_response()
}

fn refused(e: impl std::fmt::Display) -> Response {
    (StatusCode::BAD_REQUEST, format!("{e}\n")).into_response()
}

/// Sets controls from the query (`sun_elevation`, `sun_azimuth`,
/// `exposure`, `projection`, `fov`): all of them or, if one is malformed
/// or makes the scene invalid, none.
async fn control(State(session): Shared, Query(query): Query<HashMap<String, String>>) -> Response {
    match session.set_controls(&query) {
        Ok(controls) => axum::Json(controls).into_response(),
        Err(e) => refused(e),
    }
}

/// Sets `look_at` to the surface seen at pixel (`x`, `y`) of the current
/// image.
async fn look(State(session): Shared, Query(query): Query<HashMap<String, String>>) -> Response {
    let number = |k: &str| query.get(k).and_then(|v| v.parse::<f64>().ok());
    let (Some(x), Some(y)) = (number("x"), number("y")) else {
        return refused("look needs x and y, pixel coordinates of the image");
    };
    match session.look_at_pixel(x, y) {
        Ok(controls) => axum::Json(controls).into_response(),
        Err(e) => refused(e),
    }
}

async fn reset(State(session): Shared) -> Response {
    axum::Json(session.reset_controls()).into_response()
}

/// Writes the edited scene to a new file `name` beside the scene.
async fn save(State(session): Shared, Query(query): Query<HashMap<String, String>>) -> Response {
    let Some(name) = query.get("name") else {
        return refused("save needs a file name: /save?name=NAME.json");
    };
    match session.save_as(name) {
        Ok(path) => axum::Json(serde_json::json!({ "saved": path })).into_response(),
        Err(session::SaveError::Exists(p)) => (
            StatusCode::CONFLICT,
            format!("{p} exists; choose another name\n"),
        )
            .into_response(),
        Err(session::SaveError::Refused(e)) => refused(e),
    }
}
