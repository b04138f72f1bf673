//! The viewer: an egui window that plays a run's video with the overlay
//! drawn by the shared pipeline, and lets the user filter, sync, calibrate
//! and export.
//!
//! Split as in egui's and Rerun's apps: state (what is saved and what is
//! open), logic (playback clock, background player, entity filters, time
//! sync, calibration editing: all testable without a window) and ui
//! (panels that show the state and record commands).

pub mod bench;
pub mod calibrate;
pub mod entities;
pub mod export;
pub mod field_view;
pub mod find_offset;
pub mod gpu;
pub mod history;
pub mod inspect;
pub mod legend;
pub mod live;
pub mod mask_tuning;
pub mod playback;
pub mod player;
pub mod screen;
pub mod state;
pub mod sync;
pub mod ui;
mod window;

mod app;

use std::sync::{Arc, Mutex};

pub use app::{
    Command, EntitiesUi, FrameMeta, OpenKind, ScreenshotRequest, ShotError, SyntheticSpec, VideoView,
    ViewerApp, ViewerOptions,
};

/// Opens the viewer window and runs it until it is closed. With a
/// screenshot request, returns once the screenshot is written (or failed).
pub fn run(opts: ViewerOptions) -> anyhow::Result<()> {
    let live_shot = opts.live.as_ref().is_some_and(|l| l.screenshot.is_some());
    let shot =
        opts.screenshot.is_some() || opts.bench_play.is_some() || opts.bench_export.is_some() || live_shot;
    check_display()?;
    let [w, h] = opts.size.unwrap_or([1280, 800]);
    let mut viewport = eframe::egui::ViewportBuilder::default()
        .with_title("underlay")
        .with_app_id("underlay")
        .with_inner_size([w as f32, h as f32])
        .with_min_inner_size([640.0, 400.0])
        .with_resizable(true)
        .with_drag_and_drop(true);
    if shot {
        viewport = viewport.with_resizable(false);
    }
    let native = eframe::NativeOptions {
        viewport,
        // The size it had last is kept, unless one is asked for.
        persist_window: !shot && opts.size.is_none(),
        ..Default::default()
    };
    let opts_screenshot = opts.screenshot.is_some() || live_shot;
    let result: Arc<Mutex<Option<Result<(), ShotError>>>> = Arc::new(Mutex::new(None));
    let r2 = Arc::clone(&result);
    eframe::run_native(
        "underlay",
        native,
        Box::new(move |cc| {
            let persisted = if shot {
                state::Persisted::default()
            } else {
                cc.storage
                    .and_then(|s| eframe::get_value(s, eframe::APP_KEY))
                    .unwrap_or_default()
            };
            let mut app = ViewerApp::new(cc.egui_ctx.clone(), persisted);
            if let Some(gl) = &cc.gl {
                // Painted with OpenGL: videos go to the screen as their
                // planes, converted by a shader (unless the renderer is
                // the CPU itself, or asked otherwise).
                let (planes, why) = gpu::shows_planes(gl, opts.display);
                if let Some(why) = why {
                    eprintln!("note: {why}");
                }
                if planes {
                    app = app.with_planes(gpu::PlaneView::default());
                }
            }
            app.start(&opts, r2);
            Ok(Box::new(app))
        }),
    )
    .map_err(|e| anyhow::anyhow!("cannot open the viewer window: {e}"))?;
    if opts_screenshot {
        let r = result.lock().unwrap_or_else(|p| p.into_inner()).take();
        match r {
            Some(Ok(())) => Ok(()),
            Some(Err(e)) => Err(anyhow::Error::new(e).context("screenshot failed")),
            None => Err(anyhow::anyhow!(
                "the window closed before the screenshot was taken"
            )),
        }
    } else {
        Ok(())
    }
}

/// Refuses to start without a display to open a window on, saying what
/// to do instead (rather than the windowing library's own error).
fn check_display() -> anyhow::Result<()> {
    if !has_display() {
        anyhow::bail!("{NO_DISPLAY}");
    }
    Ok(())
}

/// Whether there is a display to open a window on (on Linux, `DISPLAY`
/// or `WAYLAND_DISPLAY` set).
pub fn has_display() -> bool {
    #[cfg(target_os = "linux")]
    {
        let set = |v: &str| std::env::var_os(v).is_some_and(|s| !s.is_empty());
        set("DISPLAY") || set("WAYLAND_DISPLAY")
    }
    #[cfg(not(target_os = "linux"))]
    {
        true
    }
}

/// What `view` says when there is no display.
pub const NO_DISPLAY: &str =
    "no display: set DISPLAY, or use `underlay export` / `--screenshot` under xvfb-run";
