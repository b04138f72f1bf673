//! `--screenshot`: waiting for the asked frame to be on screen, then
//! taking the window's picture and saving it.

use super::*;

/// State of a `--screenshot` run.
pub(super) struct ScreenshotJob {
    pub(super) req: ScreenshotRequest,
    /// The video time of the picture asked for.
    pub(super) at: f64,
    pub(super) started: Instant,
    /// Frames painted since the wanted frame is on screen.
    pub(super) painted: u32,
    pub(super) requested: bool,
    pub(super) result: Arc<Mutex<Option<Result<(), crate::viewer::ShotError>>>>,
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
            *job.result.lock().unwrap_or_else(|p| p.into_inner()) =
                Some(Err(crate::viewer::ShotError::Timeout {
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
pub(super) fn save_color_image(
    path: &std::path::Path,
    img: &egui::ColorImage,
) -> Result<(), crate::viewer::ShotError> {
    let [w, h] = img.size;
    let mut rgb = crate::image::RgbImage::zeros((h, w, 3));
    for (i, c) in img.pixels.iter().enumerate() {
        let (y, x) = (i / w, i % w);
        rgb[[y, x, 0]] = c.r();
        rgb[[y, x, 1]] = c.g();
        rgb[[y, x, 2]] = c.b();
    }
    crate::video::still::save_rgb(path, &rgb).map_err(crate::viewer::ShotError::Write)
}
