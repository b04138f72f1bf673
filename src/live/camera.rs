//! The live camera: any input FFmpeg opens — `rtsp://`, `srt://`,
//! `udp://` (MPEG-TS), `rtmp://`, `http(s)://` (MJPEG, HLS), a V4L2
//! device (`/dev/videoN`) — or a file played at its own pace
//! (`--realtime`, for tests and rehearsals), decoded on a thread of its
//! own.
//!
//! - **Low latency.** Streams are opened with a short probe (half a
//!   second at most) and decoded with low delay, and frames are handed
//!   over as they are decoded: the drawing loop takes them from a slot of
//!   [`SLOT`] frames. When it cannot keep up, the oldest waiting frame is
//!   dropped and counted ([`CameraStatus::dropped`]), never silently. (A
//!   file read without `--realtime` is not live: it is read as fast as it
//!   is drawn, and nothing is dropped.)
//! - **From the first picture.** The packets FFmpeg reads while opening
//!   the stream (to learn its codec and size) are decoded, not dropped —
//!   FFmpeg's `nobuffer` flag dropped them, and with them the stream's
//!   first keyframe: a camera with a 10 s keyframe interval started 10 s
//!   late. Their pictures come at once when the opening ends, so each is
//!   dated back by its own time from then ([`crate::video::Backlog`]), and
//!   none of them is dropped for coming together. A stream joined between
//!   keyframes shows nothing until the next one; meanwhile
//!   [`CameraStatus::keyframe_wait`] says since when packets come without
//!   a picture ("waiting for a keyframe (N s)").
//! - **Stalls and drops.** A stream that sends nothing for
//!   [`CameraOptions::stall`] is abandoned (FFmpeg's interrupt callback
//!   cuts the blocking read) and opened again, after a back-off that grows
//!   from half a second to five; [`CameraStatus::no_signal_since`] says
//!   since when, and [`CameraStatus::last_error`] why. An input that
//!   *listens* for its camera ([`CameraOptions::listens`]: `udp://`,
//!   `srt://…?mode=listener`, `rtmp://…?listen`, `tcp://…?listen`) waits
//!   for it as long as it takes — nothing came, so nothing stalled — and
//!   listens again at once when a camera that sent goes silent: a camera
//!   starting meanwhile is not turned away, nor its first packets lost. A
//!   file ends at its end.
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

use super::error::LiveError;
use crate::video::{Decoder, SourceFrame};

/// Frames waiting for the drawing loop before the oldest is dropped.
pub const SLOT: usize = 3;

/// A segmented stream's frames this late on their pace take the present
/// as their new start.
const LATE_SEGMENT: Duration = Duration::from_millis(500);

/// A picture of the packets read while opening is dated back at most this
/// far (seconds) from the opening's end, whatever its time says.
const MAX_BACKDATE: f64 = 10.0;

/// The pictures of the opening's packets come together, faster than the
/// drawing loop takes them: they wait for it beside the slot, never
/// dropped, within this many bytes of pictures (half a second of 1080p60
/// is 180 MB); beyond, the camera waits for the loop. Meanwhile the camera
/// goes on reading, so the stream is not left waiting in FFmpeg's buffers.
const EARLY_BYTES: usize = 256 << 20;

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

    /// Whether the input waits for its camera to send (rather than
    /// connecting to it): `udp://` and `rtp://` (a port this machine
    /// binds), `srt://…?mode=listener`, `tcp://…?listen`, and
    /// `rtmp://…?listen` (an RTMP server the camera pushes to).
    pub fn listens(&self) -> bool {
        let Some((scheme, rest)) = self.input.split_once("://") else {
            return false;
        };
        let query = rest.split_once('?').map_or("", |(_, q)| q);
        let param = |key: &str| {
            query.split('&').find_map(|kv| {
                let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
                (k == key).then_some(v)
            })
        };
        match scheme {
            "udp" | "rtp" => true,
            "srt" => param("mode") == Some("listener"),
            "tcp" | "rtmp" => param("listen").is_some_and(|v| v != "0"),
            _ => false,
        }
    }

    /// The URL FFmpeg opens and its options: low latency, and for
    /// `rtmp://…?listen` (which FFmpeg's RTMP takes as an option, not in
    /// the URL) the URL without it and the option.
    fn opened_as(&self) -> (String, Vec<(&'static str, String)>) {
        let mut options = live_options(&self.input);
        let Some(rest) = self.input.strip_prefix("rtmp://") else {
            return (self.input.clone(), options);
        };
        let Some((path, query)) = rest.split_once('?') else {
            return (self.input.clone(), options);
        };
        let (listen, kept): (Vec<&str>, Vec<&str>) = query
            .split('&')
            .partition(|kv| kv.split_once('=').map_or(*kv, |(k, _)| k) == "listen");
        if listen.is_empty() || !self.listens() {
            return (self.input.clone(), options);
        }
        options.push(("listen", "1".to_owned()));
        let url = if kept.is_empty() {
            format!("rtmp://{path}")
        } else {
            format!("rtmp://{path}?{}", kept.join("&"))
        };
        (url, options)
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
    /// When the camera was started (Unix seconds).
    pub started: f64,
    /// Since when (Unix seconds) the input sends packets that give no
    /// picture: opened between keyframes, waiting for the next.
    pub keyframe_wait: Option<f64>,
}

impl CameraStatus {
    /// What the camera waits for, while it gives no picture: "waiting for
    /// a keyframe (N s)" (packets come, none decodes yet), or "waiting for
    /// the camera (N s)" before its first picture; `None` otherwise.
    pub fn waiting(&self, now: f64) -> Option<String> {
        let secs = |since: f64| (now - since).max(0.0).floor();
        match self.keyframe_wait {
            Some(since) => Some(format!("waiting for a keyframe ({:.0} s)", secs(since))),
            None if self.received == 0 && !self.ended => {
                Some(format!("waiting for the camera ({:.0} s)", secs(self.started)))
            }
            None => None,
        }
    }
}

/// How long to wait for a camera's first picture ([`LiveCamera::first_picture`]).
#[derive(Clone, Copy, Debug)]
pub struct FirstPicture {
    /// None within this is an error ([`LiveError::NoPicture`]).
    pub within: Duration,
    /// The whole run's end (`--timeout`), if any: reached first, a stop
    /// ([`LiveError::Stopped`]).
    pub deadline: Option<Instant>,
}

/// Frames waiting for the drawing loop, each with whether it is a picture
/// of the opening's packets (those are not dropped: see [`EARLY_BYTES`]).
type Waiting = VecDeque<(LiveFrame, bool)>;

struct Shared {
    slot: Mutex<(Waiting, CameraStatus)>,
    ready: Condvar,
    /// Signalled when the drawing loop takes a frame.
    taken: Condvar,
    stop: AtomicBool,
    /// Last sign of life from the input (ms on `clock`).
    alive_ms: AtomicU64,
    clock: Instant,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, (Waiting, CameraStatus)> {
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
    input: String,
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
        let input = opts.input.clone();
        let status = CameraStatus {
            started: now(),
            ..CameraStatus::default()
        };
        let shared = Arc::new(Shared {
            slot: Mutex::new((VecDeque::with_capacity(SLOT + 1), status)),
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
        LiveCamera {
            shared,
            thread,
            input,
        }
    }

    /// Waits for the camera's first picture, giving `tick` the camera's
    /// status about once a second meanwhile. A stop asked for (`cancel`)
    /// or the deadline reached first is [`LiveError::Stopped`]; none
    /// within `wait.within`, or the input ended, is [`LiveError::NoPicture`];
    /// either says what the camera was doing.
    pub fn first_picture(
        &self,
        wait: FirstPicture,
        cancel: &AtomicBool,
        tick: &mut dyn FnMut(&CameraStatus),
    ) -> Result<LiveFrame, LiveError> {
        let started = Instant::now();
        let mut ticked = Instant::now();
        loop {
            let why = if cancel.load(Ordering::Relaxed) {
                Some("asked to stop".to_owned())
            } else if wait.deadline.is_some_and(|d| Instant::now() >= d) {
                Some("--timeout reached".to_owned())
            } else {
                None
            };
            if let Some(why) = why {
                let st = self.status();
                return Err(LiveError::Stopped {
                    input: self.input.clone(),
                    why,
                    waited: started.elapsed().as_secs_f64(),
                    doing: doing(&st),
                });
            }
            if let Some(f) = self.next(Duration::from_millis(100)) {
                return Ok(f);
            }
            let st = self.status();
            if st.ended || started.elapsed() >= wait.within {
                return Err(LiveError::NoPicture {
                    input: self.input.clone(),
                    waited: started.elapsed().as_secs_f64(),
                    why: doing(&st),
                });
            }
            if ticked.elapsed() >= Duration::from_secs(1) {
                ticked = Instant::now();
                tick(&st);
            }
        }
    }

    /// The next frame, waiting at most `timeout`; `None` when none came
    /// (see [`status`](Self::status): ended, or no signal).
    pub fn next(&self, timeout: Duration) -> Option<LiveFrame> {
        let mut g = self.shared.lock();
        let deadline = Instant::now() + timeout;
        loop {
            if let Some((f, _)) = g.0.pop_front() {
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

/// What a camera without a picture was doing, for an error: waiting for
/// a keyframe, sending nothing, and its last error.
fn doing(st: &CameraStatus) -> Option<String> {
    let mut said = Vec::new();
    match st.keyframe_wait {
        Some(since) => said.push(format!(
            "packets came for {:.0} s but no keyframe yet: a camera with a long keyframe interval needs a \
             longer wait",
            (now() - since).max(0.0)
        )),
        None if st.received == 0 => said.push("nothing came from it".to_owned()),
        None => {}
    }
    said.extend(st.last_error.clone());
    (!said.is_empty()).then(|| said.join("; "))
}

/// FFmpeg's options for a live stream: a short probe. Not `nobuffer`: it
/// drops the packets the probe read, the stream's first keyframe among
/// them (see the module docs).
fn live_options(input: &str) -> Vec<(&'static str, String)> {
    let mut o = vec![
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
    let listens = opts.listens();
    let (url, options) = opts.opened_as();
    let mut backoff = Duration::from_millis(500);
    let mut first = true;
    // The last connection brought packets: a listener listens again at once.
    let mut sent = false;
    while !s.stop.load(Ordering::Relaxed) {
        if !first {
            s.status(|st| st.reconnects += 1);
            if !(listens && sent) {
                sleep_unless_stopped(s, backoff);
                backoff = (backoff * 2).min(Duration::from_secs(5));
            }
            if s.stop.load(Ordering::Relaxed) {
                break;
            }
        }
        first = false;
        sent = false;
        s.touch();
        // Packets read: the stream is alive while they come, even before
        // a picture decodes (joined between keyframes).
        let progress = Arc::new(AtomicU64::new(0));
        let opened = if stream {
            let watch = Arc::clone(s);
            let stall = opts.stall.as_millis() as u64;
            let packets = Arc::clone(&progress);
            let mut seen = 0;
            Decoder::open_live(Path::new(&url), &options, move || {
                let n = packets.load(Ordering::Relaxed);
                if n != seen {
                    seen = n;
                    watch.touch();
                }
                let now = watch.clock.elapsed().as_millis() as u64;
                // A listener waits for its camera as long as it takes:
                // until something came, nothing stalled.
                let stalled =
                    (!listens || n > 0) && now.saturating_sub(watch.alive_ms.load(Ordering::Relaxed)) > stall;
                watch.stop.load(Ordering::Relaxed) || stalled
            })
        } else {
            Decoder::open(&PathBuf::from(&opts.input))
        };
        let mut decoder = match opened {
            Ok(mut d) => {
                s.touch();
                d.set_progress(Arc::clone(&progress));
                // The pipeline masks and draws on the decoded planes and
                // the outputs encode them as they are (issue 48); the RGB
                // picture is still made, for the replay buffer and the
                // viewer.
                d.set_keep_yuv(true);
                if stream {
                    s.status(|st| st.keyframe_wait = Some(now()));
                }
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
        sent = progress.load(Ordering::Relaxed) > 0;
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
        st.keyframe_wait = None;
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
    // The packets the opening read: their pictures are dated back by their
    // own times from the opening's end (the newest had come by then).
    let mut backlog = decoder
        .backlog()
        .filter(|_| opts.is_stream() && !opts.realtime && !segmented)
        .map(|b| (b.newest, now() - b.opened.elapsed().as_secs_f64()));
    let mut last_arrival = f64::NEG_INFINITY;
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
        let mut arrival = now();
        let mut early = false;
        if let Some((newest, opened)) = backlog {
            if frame.time <= newest + 1e-6 {
                arrival = backdated(opened, newest, frame.time).min(arrival);
                early = true;
            } else {
                backlog = None;
            }
        }
        arrival = arrival.max(last_arrival);
        last_arrival = arrival;
        let (h, w, _) = frame.image.dim();
        let bytes = frame.image.len();
        let mut g = s.lock();
        // A file read as fast as it decodes waits for the drawing instead;
        // so do the opening's pictures beyond their room.
        let paced = opts.realtime || opts.is_stream();
        let full = |q: &Waiting| {
            if early {
                let held: usize = q
                    .iter()
                    .filter(|(_, e)| *e)
                    .map(|(f, _)| f.frame.image.len())
                    .sum();
                held > 0 && held + bytes > EARLY_BYTES
            } else {
                !paced && q.iter().filter(|(_, e)| !e).count() >= SLOT
            }
        };
        while full(&g.0) && !s.stop.load(Ordering::Relaxed) {
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
        st.keyframe_wait = None;
        if !early
            && queue.iter().filter(|(_, e)| !e).count() >= SLOT
            && let Some(oldest) = queue.iter().position(|(_, e)| !e)
        {
            queue.remove(oldest);
            st.dropped += 1;
        }
        queue.push_back((LiveFrame { frame, arrival }, early));
        drop(g);
        s.ready.notify_one();
    }
}

/// When a picture of the packets the opening read came, as far as can be
/// told: the opening ended at `opened` with the newest of them (time
/// `newest` in the stream), and the stream came at its own pace, so the
/// picture at `time` came `newest - time` before (at most
/// [`MAX_BACKDATE`]: a time gone wrong dates nothing hours back).
fn backdated(opened: f64, newest: f64, time: f64) -> f64 {
    opened - (newest - time).clamp(0.0, MAX_BACKDATE)
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
    fn inputs_that_listen_are_told_from_those_that_connect() {
        for (url, listens) in [
            ("udp://127.0.0.1:5000", true),
            ("udp://239.0.0.1:1234?pkt_size=1316", true),
            ("rtp://0.0.0.0:5004", true),
            ("srt://0.0.0.0:9000?mode=listener&latency=50000", true),
            ("srt://10.0.0.2:9000", false),
            ("srt://10.0.0.2:9000?mode=caller", false),
            ("tcp://0.0.0.0:9000?listen", true),
            ("tcp://0.0.0.0:9000?listen=1", true),
            ("tcp://0.0.0.0:9000?listen=0", false),
            ("tcp://10.0.0.2:9000", false),
            ("rtmp://0.0.0.0:1935/live/cam?listen", true),
            ("rtmp://server/live/cam", false),
            ("rtsp://cam/stream", false),
            ("http://cam/video.mjpg", false),
            ("/dev/video0", false),
            ("match.mp4", false),
        ] {
            assert_eq!(CameraOptions::new(url).listens(), listens, "{url}");
        }
    }

    #[test]
    fn an_rtmp_server_is_opened_with_ffmpegs_listen_option() {
        let (url, o) = CameraOptions::new("rtmp://0.0.0.0:1935/live/cam?listen").opened_as();
        assert_eq!(url, "rtmp://0.0.0.0:1935/live/cam");
        assert!(o.contains(&("listen", "1".to_owned())), "{o:?}");
        let (url, _) = CameraOptions::new("rtmp://0.0.0.0:1935/live/cam?listen=1&x=y").opened_as();
        assert_eq!(url, "rtmp://0.0.0.0:1935/live/cam?x=y");
        for other in [
            "rtmp://server/live/cam",
            "srt://0.0.0.0:9000?mode=listener",
            "udp://127.0.0.1:5000",
        ] {
            let (url, o) = CameraOptions::new(other).opened_as();
            assert_eq!(url, other);
            assert!(!o.iter().any(|(k, _)| *k == "listen"), "{o:?}");
            // The packets read while opening are kept (see the module docs).
            assert!(!o.iter().any(|(_, v)| v.contains("nobuffer")), "{o:?}");
        }
    }

    #[test]
    fn pictures_of_the_opening_are_dated_back_by_their_own_times() {
        let near = |a: f64, b: f64| (a - b).abs() < 1e-9;
        assert!(near(backdated(100.0, 0.6, 0.0), 99.4));
        assert!(near(backdated(100.0, 0.6, 0.36), 99.76));
        assert!(near(backdated(100.0, 0.6, 0.6), 100.0));
        // Never after the opening's end, never hours before it.
        assert!(near(backdated(100.0, 0.6, 0.7), 100.0));
        assert!(near(backdated(100.0, 1e9, 0.0), 100.0 - MAX_BACKDATE));
        assert!(near(backdated(100.0, f64::NAN, 0.0), 100.0) || backdated(100.0, f64::NAN, 0.0).is_nan());
    }

    #[test]
    fn what_the_camera_waits_for_is_said() {
        let waiting = CameraStatus {
            started: 100.0,
            ..CameraStatus::default()
        };
        assert_eq!(
            waiting.waiting(103.7).as_deref(),
            Some("waiting for the camera (3 s)")
        );
        assert_eq!(doing(&waiting).as_deref(), Some("nothing came from it"));
        let joined = CameraStatus {
            keyframe_wait: Some(102.0),
            last_error: Some("x: Connection refused".into()),
            ..waiting.clone()
        };
        assert_eq!(
            joined.waiting(106.2).as_deref(),
            Some("waiting for a keyframe (4 s)")
        );
        let said = doing(&joined).unwrap();
        assert!(
            said.contains("but no keyframe yet") && said.ends_with("; x: Connection refused"),
            "{said}"
        );
        let flowing = CameraStatus {
            received: 10,
            ..waiting.clone()
        };
        assert_eq!(flowing.waiting(110.0), None);
        assert_eq!(doing(&flowing), None);
        let ended = CameraStatus {
            ended: true,
            ..waiting
        };
        assert_eq!(ended.waiting(110.0), None);
    }

    #[test]
    fn a_stop_or_the_deadline_before_the_first_picture_is_said() {
        let port = std::net::UdpSocket::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let cam = LiveCamera::start(CameraOptions::new(&format!("udp://127.0.0.1:{port}")));
        let long = Duration::from_secs(60);
        let soon = Instant::now() + Duration::from_millis(300);
        let (asked, never) = (AtomicBool::new(true), AtomicBool::new(false));
        let e = cam
            .first_picture(
                FirstPicture {
                    within: long,
                    deadline: None,
                },
                &asked,
                &mut |_| {},
            )
            .unwrap_err();
        assert!(matches!(e, LiveError::Stopped { .. }), "{e}");
        assert!(
            e.to_string()
                .contains("stopped before the camera sent a picture (asked to stop after"),
            "{e}"
        );
        let e = cam
            .first_picture(
                FirstPicture {
                    within: long,
                    deadline: Some(soon),
                },
                &never,
                &mut |_| {},
            )
            .unwrap_err();
        assert!(e.to_string().contains("(--timeout reached after"), "{e}");
        let mut ticks = 0;
        let e = cam
            .first_picture(
                FirstPicture {
                    within: Duration::from_millis(1300),
                    deadline: None,
                },
                &never,
                &mut |st| {
                    ticks += 1;
                    assert!(
                        st.waiting(now())
                            .is_some_and(|w| w.starts_with("waiting for the camera"))
                    );
                },
            )
            .unwrap_err();
        assert!(matches!(e, LiveError::NoPicture { .. }), "{e}");
        assert!(e.to_string().contains("(nothing came from it)"), "{e}");
        assert_eq!(ticks, 1, "told about once a second");
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
        // A server that takes the connection and sends nothing.
        let server = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = server.local_addr().unwrap().port();
        let mut opts = CameraOptions::new(&format!("tcp://127.0.0.1:{port}"));
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
        drop(server);
    }

    #[test]
    fn a_listener_waits_for_its_camera_without_opening_again() {
        // Nothing sends to this port: the camera may not have started yet.
        let port = std::net::UdpSocket::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut opts = CameraOptions::new(&format!("udp://127.0.0.1:{port}"));
        opts.stall = Duration::from_millis(300);
        let cam = LiveCamera::start(opts);
        std::thread::sleep(Duration::from_millis(1500));
        let st = cam.status();
        assert!(
            st.reconnects == 0 && st.no_signal_since.is_none() && st.last_error.is_none() && !st.ended,
            "{st:?}"
        );
        assert!(
            st.waiting(now())
                .is_some_and(|w| w.starts_with("waiting for the camera ("))
        );
        let t = Instant::now();
        drop(cam);
        assert!(t.elapsed() < Duration::from_secs(3), "stopping waits for nothing");
    }
}
