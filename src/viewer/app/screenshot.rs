//! `--screenshot`: waiting for the asked frame to be on screen, then
//! taking the window's picture and saving it.

use super::*;

/// Why a `--screenshot` run has no picture.
#[derive(Debug, thiserror::Error)]
pub enum ShotError {
    /// What was asked to be shown could not be opened.
    #[error("cannot open what was asked for")]
    Open(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The frames could not be read or drawn.
    #[error("the frame could not be shown")]
    Frame(#[source] crate::viewer::player::PlayerError),
    /// The moment asked for is not in the video.
    #[error("--at {at} s is outside the video, which runs from {start:.3} s to {end:.3} s")]
    OutOfRange { at: f64, start: f64, end: f64 },
    /// The frame did not come in time.
    #[error("timed out after {secs} s waiting for the frame at {at} s")]
    Timeout { secs: u64, at: f64 },
    /// The picture could not be written.
    #[error("cannot write the screenshot")]
    Write(#[source] crate::image::ImageError),
}

/// Where a screenshot run's outcome goes, for `run` to say once the
/// window has closed.
pub(super) type ShotSlot = Arc<Mutex<Option<Result<(), ShotError>>>>;

/// State of a `--screenshot` run.
pub(super) struct ScreenshotJob {
    pub(super) req: ScreenshotRequest,
    /// The video time of the picture asked for.
    pub(super) at: f64,
    pub(super) started: Instant,
    /// Frames painted since the wanted frame is on screen.
    pub(super) painted: u32,
    pub(super) requested: bool,
    pub(super) result: Arc<Mutex<Option<Result<(), ShotError>>>>,
}

/// How long a screenshot run waits for its frame.
pub(super) const SCREENSHOT_TIMEOUT: Duration = Duration::from_secs(120);

impl ViewerApp {
    pub(super) fn screenshot_logic(&mut self, ctx: &egui::Context) {
        let current = self.frame_is_current();
        let Some(job) = &mut self.screenshot else {
            return;
        };
        if job.requested {
            return;
        }
        if job.started.elapsed() > SCREENSHOT_TIMEOUT {
            *job.result.lock().unwrap_or_else(|p| p.into_inner()) = Some(Err(ShotError::Timeout {
                secs: SCREENSHOT_TIMEOUT.as_secs(),
                at: job.at,
            }));
            ctx.send_viewport_cmd(egui::ViewportCommand::Close);
            job.requested = true;
            return;
        }
        if !current {
            job.painted = 0;
            ctx.request_repaint_after(Duration::from_millis(10));
            return;
        }
        // Let the texture be painted (twice, for layouts that settle).
        job.painted += 1;
        if job.painted < 3 {
            ctx.request_repaint();
            return;
        }
        job.requested = true;
        let path = job.req.path.clone();
        let result = Arc::clone(&job.result);
        let ctx2 = ctx.clone();
        ctx.request_screenshot(move |img| {
            let r = save_color_image(&path, &img);
            *result.lock().unwrap_or_else(|p| p.into_inner()) = Some(r);
            ctx2.send_viewport_cmd(egui::ViewportCommand::Close);
            ctx2.request_repaint();
        });
        ctx.request_repaint();
    }
}

/// Saves a screenshot (RGBA, alpha dropped) as PNG.
pub(super) fn save_color_image(path: &std::path::Path, img: &egui::ColorImage) -> Result<(), ShotError> {
    let [w, h] = img.size;
    let mut rgb = crate::image::RgbImage::zeros((h, w, 3));
    for (i, c) in img.pixels.iter().enumerate() {
        let (y, x) = (i / w, i % w);
        rgb[[y, x, 0]] = c.r();
        rgb[[y, x, 1]] = c.g();
        rgb[[y, x, 2]] = c.b();
    }
    crate::video::still::save_rgb(path, &rgb).map_err(ShotError::Write)
}
