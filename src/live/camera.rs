//! The live camera: any input FFmpeg opens — `rtsp://`, `srt://`,
//! `udp://` (MPEG-TS), `rtmp://`, `http(s)://` (MJPEG, HLS), a V4L2
//! device (`/dev/videoN`) — or a file played at its own pace
//! (`--realtime`, for tests and rehearsals), decoded on a thread of its
//! own.
//!
//! - **Low latency.** Streams are opened with FFmpeg's `nobuffer` and
//!   `low_delay` flags and a short probe (half a second at most, enough for
//!   a keyframe of a usual stream), and frames are handed over as they are
//!   decoded: the drawing loop takes them from a slot of
//!   [`SLOT`] frames. When it cannot keep up, the oldest waiting frame is
//!   dropped and counted ([`CameraStatus::dropped`]), never silently. (A
//!   file read without `--realtime` is not live: it is read as fast as it
//!   is drawn, and nothing is dropped.)
//! - **Stalls and drops.** A stream that sends nothing for
//!   [`CameraOptions::stall`] is abandoned (FFmpeg's interrupt callback
//!   cuts the blocking read) and opened again, after a back-off that grows
//!   from half a second to five; [`CameraStatus::no_signal_since`] says
//!   since when, and [`CameraStatus::last_error`] why. A file ends at its
//!   end.
//! - **Segments.** HLS and DASH bring a segment at a time (seconds of
//!   frames in a burst): their frames are handed on at their own pace, as
//!   a file played live is, so none is dropped for coming all at once.
//! - **Times.** Each frame carries its arrival time on this machine's
//!   clock (seconds since the Unix epoch), which is what the live logs are
//!   matched against; a file played at its own pace arrives when its
//!   presentation time comes.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::video::{Decoder, SourceFrame};

/// Frames waiting for the drawing loop before the oldest is dropped.
pub const SLOT: usize = 3;

/// A segmented stream's frames this late on their pace take the present
/// as their new start.
const LATE_SEGMENT: Duration = Duration::from_millis(500);

/// How the camera is read.
#[derive(Clone, Debug, PartialEq)]
pub struct CameraOptions {
    /// A URL FFmpeg opens, a device, or a file.
    pub input: String,
    /// Play a file at its own pace (frames arrive when their time comes).
    pub realtime: bool,
    /// A stream silent this long is opened again.
    pub stall: Duration,
}

impl CameraOptions {
    /// `input` read with the defaults (a 3 s stall).
    pub fn new(input: &str) -> Self {
        CameraOptions {
            input: input.to_owned(),
            realtime: false,
            stall: Duration::from_secs(3),
        }
    }

    /// Whether the input is a stream or a device (reopened when it drops)
    /// rather than a file (which ends).
    pub fn is_stream(&self) -> bool {
        let i = self.input.as_str();
        (i.contains("://") && !i.starts_with("file://")) || i.starts_with("/dev/")
    }
}

/// A decoded camera frame and when it came.
#[derive(Debug)]
pub struct LiveFrame {
    /// The picture; its `time` is the stream's own presentation time.
    pub frame: SourceFrame,
    /// Arrival on this machine's clock, seconds since the Unix epoch.
    pub arrival: f64,
}

/// What the camera is doing, for the status line.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CameraStatus {
    /// Frames decoded.
    pub received: u64,
    /// Frames dropped because the drawing loop was behind.
    pub dropped: u64,
    /// Times the input was opened again after a stall or a drop.
    pub reconnects: u64,
    /// The picture's size, once known.
    pub size: Option<(usize, usize)>,
    /// The stream's frame rate as it says (0 when it does not).
    pub fps: f64,
    /// Since when (Unix seconds) no picture came, while there is none.
    pub no_signal_since: Option<f64>,
    /// The last thing that went wrong.
    pub last_error: Option<String>,
    /// The input ended (a file at its end, or a stop asked for).
    pub ended: bool,
}

struct Shared {
    slot: Mutex<(VecDeque<LiveFrame>, CameraStatus)>,
    ready: Condvar,
    /// Signalled when the drawing loop takes a frame.
    taken: Condvar,
    stop: AtomicBool,
    /// Last sign of life from the input (ms on `clock`).
    alive_ms: AtomicU64,
    clock: Instant,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, (VecDeque<LiveFrame>, CameraStatus)> {
        self.slot
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn touch(&self) {
        self.alive_ms
            .store(self.clock.elapsed().as_millis() as u64, Ordering::Relaxed);
    }

    fn status(&self, f: impl FnOnce(&mut CameraStatus)) {
        f(&mut self.lock().1);
    }
}

/// The camera being read; stops its thread when dropped.
pub struct LiveCamera {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

/// Seconds since the Unix epoch on this machine's clock.
pub fn now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

impl LiveCamera {
    /// Starts reading `opts.input` on a thread of its own.
    pub fn start(opts: CameraOptions) -> LiveCamera {
        let shared = Arc::new(Shared {
            slot: Mutex::new((VecDeque::with_capacity(SLOT + 1), CameraStatus::default())),
            ready: Condvar::new(),
            taken: Condvar::new(),
            stop: AtomicBool::new(false),
            alive_ms: AtomicU64::new(0),
            clock: Instant::now(),
        });
        let s = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("live camera".into())
            .spawn(move || read_camera(&opts, &s))
            .ok();
        if thread.is_none() {
            shared.status(|st| {
                st.ended = true;
                st.last_error = Some("cannot start the camera's thread".into());
            });
        }
        LiveCamera { shared, thread }
    }

    /// The next frame, waiting at most `timeout`; `None` when none came
    /// (see [`status`](Self::status): ended, or no signal).
    pub fn next(&self, timeout: Duration) -> Option<LiveFrame> {
        let mut g = self.shared.lock();
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(f) = g.0.pop_front() {
                self.shared.taken.notify_one();
                return Some(f);
            }
            if g.1.ended {
                return None;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return None;
            }
            g = self
                .shared
                .ready
                .wait_timeout(g, left)
                .map(|(g, _)| g)
                .unwrap_or_else(|e| e.into_inner().0);
        }
    }

    /// What the camera is doing.
    pub fn status(&self) -> CameraStatus {
        self.shared.lock().1.clone()
    }
}

impl Drop for LiveCamera {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        self.shared.ready.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// FFmpeg's options for a live stream: no buffering, a short probe.
fn live_options(input: &str) -> Vec<(&'static str, String)> {
    let mut o = vec![
        ("fflags", "nobuffer".to_string()),
        ("flags", "low_delay".to_string()),
        ("probesize", "500000".to_string()),
        ("analyzeduration", "500000".to_string()),
    ];
    if input.starts_with("udp://") {
        // A burst larger than the socket's buffer is lost, not fatal.
        o.push(("overrun_nonfatal", "1".to_string()));
        o.push(("fifo_size", "50000".to_string()));
    }
    o
}

fn read_camera(opts: &CameraOptions, s: &Arc<Shared>) {
    let stream = opts.is_stream();
    let mut backoff = Duration::from_millis(500);
    let mut first = true;
    while !s.stop.load(Ordering::Relaxed) {
        if !first {
            s.status(|st| st.reconnects += 1);
            sleep_unless_stopped(s, backoff);
            backoff = (backoff * 2).min(Duration::from_secs(5));
            if s.stop.load(Ordering::Relaxed) {
                break;
            }
        }
        first = false;
        s.touch();
        // Packets read: the stream is alive while they come, even before
        // a picture decodes (joined between keyframes).
        let progress = Arc::new(AtomicU64::new(0));
        let opened = if stream {
            let watch = Arc::clone(s);
            let stall = opts.stall.as_millis() as u64;
            let packets = Arc::clone(&progress);
            let mut seen = 0;
            Decoder::open_live(Path::new(&opts.input), &live_options(&opts.input), move || {
                let n = packets.load(Ordering::Relaxed);
                if n != seen {
                    seen = n;
                    watch.touch();
                }
                let now = watch.clock.elapsed().as_millis() as u64;
                watch.stop.load(Ordering::Relaxed)
                    || now.saturating_sub(watch.alive_ms.load(Ordering::Relaxed)) > stall
            })
        } else {
            Decoder::open(&PathBuf::from(&opts.input))
        };
        let mut decoder = match opened {
            Ok(mut d) => {
                s.touch();
                d.set_progress(progress);
                // The pipeline masks and draws on the decoded planes and
                // the outputs encode them as they are (issue 48); the RGB
                // picture is still made, for the replay buffer and the
                // viewer.
                d.set_keep_yuv(true);
                d
            }
            Err(_) if s.stop.load(Ordering::Relaxed) => break,
            Err(e) => {
                let e = stalled(opts, s).unwrap_or_else(|| crate::error::chain(&e));
                lost_signal(s, e);
                if stream {
                    continue;
                }
                break;
            }
        };
        let fps = decoder.info().avg_fps;
        s.status(|st| st.fps = fps);
        let outcome = pump(&mut decoder, opts, s, &mut backoff);
        if s.stop.load(Ordering::Relaxed) {
            // Stopped on purpose: the read cut short says nothing.
        } else if let Err(e) = outcome {
            lost_signal(s, stalled(opts, s).unwrap_or(e));
        } else if stream && !s.stop.load(Ordering::Relaxed) {
            lost_signal(s, format!("{}: the stream ended", opts.input));
        }
        if !stream {
            break;
        }
    }
    s.status(|st| st.ended = true);
    s.ready.notify_all();
}

/// What to say when a stream's read was cut for its silence (FFmpeg
/// says only "Immediate exit requested"); `None` when it was not.
fn stalled(opts: &CameraOptions, s: &Shared) -> Option<String> {
    let silent = (s.clock.elapsed().as_millis() as u64).saturating_sub(s.alive_ms.load(Ordering::Relaxed));
    (opts.is_stream() && !s.stop.load(Ordering::Relaxed) && silent > opts.stall.as_millis() as u64).then(
        || {
            format!(
                "{}: nothing came for {:.1} s (the stall limit)",
                opts.input,
                opts.stall.as_secs_f64()
            )
        },
    )
}

/// Notes that the picture is gone, and why.
fn lost_signal(s: &Shared, why: String) {
    s.status(|st| {
        st.last_error = Some(why);
        st.no_signal_since.get_or_insert_with(now);
    });
}

fn sleep_unless_stopped(s: &Shared, d: Duration) {
    let end = Instant::now() + d;
    while !s.stop.load(Ordering::Relaxed) {
        let left = end.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return;
        }
        std::thread::sleep(left.min(Duration::from_millis(50)));
    }
}

/// Decodes frames into the slot until the input ends or fails.
fn pump(
    decoder: &mut Decoder,
    opts: &CameraOptions,
    s: &Shared,
    backoff: &mut Duration,
) -> Result<(), String> {
    // Segmented streams (HLS, DASH) come a segment at a time, seconds of
    // frames at once: they are handed on at their own pace, as a file
    // played live is, else all but the slot's last few would be dropped.
    let segmented = matches!(decoder.container().as_str(), "hls" | "applehttp" | "dash");
    let mut pace: Option<(Instant, f64)> = None;
    loop {
        if s.stop.load(Ordering::Relaxed) {
            return Ok(());
        }
        let mut frame = SourceFrame::empty();
        match decoder.read_into(&mut frame) {
            Ok(true) => {}
            Ok(false) => return Ok(()),
            Err(e) => return Err(crate::error::chain(&e)),
        }
        if opts.realtime || segmented {
            let (start, t0) = *pace.get_or_insert((Instant::now(), frame.time));
            let due = start + Duration::from_secs_f64((frame.time - t0).max(0.0));
            let late = Instant::now().saturating_duration_since(due);
            if segmented && (late > LATE_SEGMENT || frame.time < t0) {
                // A segment came late (or the stream jumped): its time
                // from now on, rather than its frames hurried through.
                pace = Some((Instant::now(), frame.time));
            }
            sleep_unless_stopped(s, due.saturating_duration_since(Instant::now()));
        }
        *backoff = Duration::from_millis(500);
        let arrival = now();
        let (h, w, _) = frame.image.dim();
        let mut g = s.lock();
        // A file read as fast as it decodes waits for the drawing instead.
        let paced = opts.realtime || opts.is_stream();
        while !paced && g.0.len() >= SLOT && !s.stop.load(Ordering::Relaxed) {
            g = s
                .taken
                .wait_timeout(g, Duration::from_millis(50))
                .map(|(g, _)| g)
                .unwrap_or_else(|e| e.into_inner().0);
        }
        let (queue, st) = &mut *g;
        st.received += 1;
        st.size = Some((w, h));
        st.no_signal_since = None;
        if queue.len() >= SLOT {
            queue.pop_front();
            st.dropped += 1;
        }
        queue.push_back(LiveFrame { frame, arrival });
        drop(g);
        s.ready.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_told_from_files() {
        assert!(CameraOptions::new("udp://127.0.0.1:5000").is_stream());
        assert!(CameraOptions::new("/dev/video0").is_stream());
        assert!(!CameraOptions::new("match.mp4").is_stream());
        assert!(!CameraOptions::new("file://match.mp4").is_stream());
    }

    #[test]
    fn a_missing_file_ends_with_its_error() {
        let cam = LiveCamera::start(CameraOptions::new("/nonexistent/cam.mp4"));
        assert!(cam.next(Duration::from_secs(10)).is_none());
        let st = cam.status();
        assert!(st.ended);
        assert!(st.last_error.unwrap().contains("/nonexistent/cam.mp4"));
    }

    #[test]
    fn a_silent_stream_is_said_and_retried_until_stopped() {
        // Nothing sends to this port.
        let port = std::net::UdpSocket::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut opts = CameraOptions::new(&format!("udp://127.0.0.1:{port}"));
        opts.stall = Duration::from_millis(300);
        let cam = LiveCamera::start(opts);
        let t = Instant::now();
        while cam.status().reconnects < 1 {
            assert!(t.elapsed() < Duration::from_secs(20), "{:?}", cam.status());
            std::thread::sleep(Duration::from_millis(50));
        }
        let st = cam.status();
        assert!(
            st.no_signal_since.is_some() && st.last_error.is_some() && !st.ended,
            "{st:?}"
        );
        let t = Instant::now();
        drop(cam);
        assert!(t.elapsed() < Duration::from_secs(3), "stopping waits for nothing");
    }
}
