//! The measuring modes (`--bench-play`, `--bench-export`): play or export
//! from the window and report timings.

use super::*;

/// A `--bench-export` run: the window's frame intervals while exporting.
pub(super) struct ExportBench {
    pub(super) output: PathBuf,
    pub(super) started: Option<Instant>,
    pub(super) ui_frames: Vec<f64>,
    pub(super) last: Option<Instant>,
}

impl ViewerApp {
    pub(super) fn export_bench_logic(&mut self, ctx: &egui::Context) {
        let current = self.frame_is_current();
        let Some(b) = &mut self.export_bench else {
            return;
        };
        // Repaint continuously, like a window being used.
        ctx.request_repaint();
        let now = Instant::now();
        let Some(started) = b.started else {
            if current {
                b.started = Some(now);
                self.export.options.output = b.output.clone();
                if let Err(e) = self.start_export() {
                    println!("export bench: cannot export: {}", crate::error::chain(&e));
                    ctx.send_viewport_cmd(egui::ViewportCommand::Close);
                }
            }
            return;
        };
        if let Some(l) = b.last {
            b.ui_frames.push((now - l).as_secs_f64() * 1e3);
        }
        b.last = Some(now);
        if self.export.running.is_some() {
            return;
        }
        let took = started.elapsed().as_secs_f64();
        let result = match &self.export.last {
            Some(Ok(report)) => crate::viewer::export::summary(report, &b.output),
            Some(Err(e)) => format!("failed: {}", crate::error::chain(e)),
            None => "no result".into(),
        };
        println!(
            "export bench: {result}\nexport wall time in the viewer: {took:.1} s\n\
             window frame interval during the export ({} frames): {}",
            b.ui_frames.len(),
            fmt_ms(crate::viewer::bench::spread(&mut b.ui_frames)),
        );
        self.export_bench = None;
        ctx.send_viewport_cmd(egui::ViewportCommand::Close);
    }

    pub(super) fn bench_logic(&mut self, ctx: &egui::Context) {
        let current = self.frame_is_current();
        let Some(b) = &mut self.bench else {
            return;
        };
        if b.done || self.player.is_none() {
            return;
        }
        if b.continuous {
            ctx.request_repaint();
        } else {
            // The app repaints when a frame is due or ready; this only
            // keeps the run going should nothing else wake it.
            ctx.request_repaint_after(Duration::from_millis(100));
        }
        let Some(started) = b.started else {
            // Start once the first frame is on screen.
            if current {
                b.started = Some(Instant::now());
                b.start_time = self.playback.time;
                self.perf = Perf::default();
                if let Some(p) = &self.planes {
                    p.take_times();
                }
                self.playback.playing = true;
                self.playback.speed = 1.0;
            }
            return;
        };
        if b.played_samples.is_none() {
            if self.playback.playing {
                if let Some(f) = &self.frame {
                    b.shown.insert(f.time.to_bits());
                }
                if started.elapsed() < b.play && self.playback.time < self.playback.end() {
                    return;
                }
                self.playback.playing = false;
            }
            // Playing ended: asked for, or the video ran out first (then the
            // player stopped by itself). Either way the samples so far are
            // the frames played, and the seeks' samples come after them.
            b.play = started.elapsed();
            b.played_samples = Some((
                self.perf.worker.len(),
                self.perf.ui_frames.len(),
                self.perf.ui_build.len(),
            ));
        }
        // Random seeks, one at a time, each waiting for its frame.
        if b.seek_target.is_some() && !current {
            return;
        }
        if b.seeks_left > 0 {
            b.seeks_left -= 1;
            let t = b.random_time(self.playback.start(), self.playback.end());
            b.seek_target = Some(t);
            b.targets.push(t);
            self.playback.seek(t);
            self.request_frame();
            return;
        }
        b.done = true;
        let report = self.bench_report();
        println!("{report}");
        ctx.send_viewport_cmd(egui::ViewportCommand::Close);
    }

    /// The measurements of a `--bench-play` run, as text.
    pub fn bench_report(&self) -> String {
        let Some(b) = &self.bench else {
            return String::new();
        };
        let info = self.info().cloned();
        let fps = info.as_ref().map_or(0.0, |i| i.fps);
        let (w, h) = info.as_ref().map_or((0, 0), |i| (i.width, i.height));
        let played = b.play.as_secs_f64();
        let expected = (played * fps).floor();
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        // Frames played, not the seeks after them.
        let (n_worker, n_ui, n_build) = b.played_samples.unwrap_or((usize::MAX, usize::MAX, usize::MAX));
        let mut ui: Vec<f64> = self
            .perf
            .ui_frames
            .iter()
            .take(n_ui)
            .map(|&s| s as f64 * 1e3)
            .collect();
        let mut build: Vec<f64> = self.perf.ui_build.iter().take(n_build).map(|&d| ms(d)).collect();
        let pick = |f: &dyn Fn(&FrameTiming) -> Duration| -> Vec<f64> {
            self.perf.worker.iter().take(n_worker).map(|t| ms(f(t))).collect()
        };
        let mut total = pick(&|t| t.total());
        let mut decode = pick(&|t| t.decode);
        let mut process = pick(&|t| t.process);
        let mut mask = pick(&|t| t.mask);
        let mut draw = pick(&|t| t.draw);
        let mut composite = pick(&|t| t.composite);
        let mut convert = pick(&|t| t.convert);
        let mut seeks: Vec<f64> = self.perf.seeks.iter().map(|&d| ms(d)).collect();
        let mut first: Vec<f64> = self.perf.seeks_first.iter().map(|&d| ms(d)).collect();
        // Each seek in order: its target, first picture and frame.
        let each: Vec<String> = b
            .targets
            .iter()
            .zip(first.iter().zip(&seeks))
            .map(|(t, (f, s))| format!("{t:.2} s {f:.0}/{s:.0}"))
            .collect();
        let [planes, rgb] = self.perf.pictures;
        let gpu = self
            .planes
            .as_ref()
            .map(crate::viewer::gpu::PlaneView::take_times);
        let gpu = match gpu {
            Some(t) if !t.draw.is_empty() => {
                let mut up: Vec<f64> = t.upload.iter().map(|&d| ms(d)).collect();
                let mut draw: Vec<f64> = t.draw.iter().map(|&d| ms(d)).collect();
                format!(
                    "\n  on the GPU (finished; all frames, seeks too): uploading the planes ({} pictures): {}; drawing ({} paints): {}",
                    up.len(),
                    fmt_ms(crate::viewer::bench::spread(&mut up)),
                    draw.len(),
                    fmt_ms(crate::viewer::bench::spread(&mut draw)),
                )
            }
            _ => String::new(),
        };
        let load = std::fs::read_to_string("/proc/loadavg")
            .ok()
            .and_then(|l| l.split_whitespace().next().map(str::to_owned))
            .unwrap_or_else(|| "unknown".into());
        format!(
            "viewer bench: {w}×{h} at {fps:.2} fps, played {played:.2} s at 1× (load average {load})\n\
             pictures on screen: {planes} as the video's planes (converted on the GPU), {rgb} as RGB{gpu}\n\
             frames on screen: {} of {expected} ({:.1}%)\n\
             UI frame interval while playing: {}\n\
             \x20 of which building the UI: {}\n\
             worker per frame played: {}\n\
             \x20 decode wait: {}\n\
             \x20 pipeline: {}\n\
             \x20   of which mask: {}\n\
             \x20   of which drawing: {}\n\
             \x20   of which compositing: {}\n\
             \x20 picture for the screen (planes: the drawing put in them; RGB: converted): {}\n\
             seek to a random time (request → on screen, {} seeks): {}\n\
             \x20 first picture (the keyframe before it, or the frame): {}\n\
             \x20 each (target: first picture / frame, ms): {}",
            b.shown.len(),
            100.0 * b.shown.len() as f64 / expected.max(1.0),
            fmt_ms(crate::viewer::bench::spread(&mut ui)),
            fmt_ms(crate::viewer::bench::spread(&mut build)),
            fmt_ms(crate::viewer::bench::spread(&mut total)),
            fmt_ms(crate::viewer::bench::spread(&mut decode)),
            fmt_ms(crate::viewer::bench::spread(&mut process)),
            fmt_ms(crate::viewer::bench::spread(&mut mask)),
            fmt_ms(crate::viewer::bench::spread(&mut draw)),
            fmt_ms(crate::viewer::bench::spread(&mut composite)),
            fmt_ms(crate::viewer::bench::spread(&mut convert)),
            seeks.len(),
            fmt_ms(crate::viewer::bench::spread(&mut seeks)),
            fmt_ms(crate::viewer::bench::spread(&mut first)),
            each.join(", "),
        )
    }
}
