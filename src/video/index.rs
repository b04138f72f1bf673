//! Where a video's seeks start: the presentation times of its keyframes,
//! read once from the demuxer's packets (nothing decoded) on a thread of
//! its own, with the file opened a second time so that decoding goes on
//! meanwhile.
//!
//! A demuxer seeks to "the keyframe at or before a timestamp" by its own
//! index, which for MP4 holds decoding times and for MPEG-TS does not
//! exist: a seek may land on the keyframe after the frame wanted (then the
//! decoder must go further back and decode a whole group of pictures more)
//! or on one before it (a group decoded for nothing). With the keyframes'
//! presentation times known, the [`Decoder`](super::Decoder) asks for
//! the right keyframe the first time, and knows when reading on from
//! where it is reaches a frame without passing a keyframe (then no seek
//! at all, however far: long groups of pictures of 10 s are common).
//!
//! The index answers only about times it is sure of: keyframes come in
//! increasing presentation order, so every keyframe at or before a time is
//! known once a later one has been read (or the scan has ended). A scan
//! that fails part-way keeps what it read and says no more.
//!
//! Cost: the packets of the video stream are read once (others are
//! discarded unread where the container allows), at low priority; one
//! `i64` is kept per keyframe (at most [`MAX_KEYS`]).

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use ffmpeg_next::{Packet, ffi};

/// Keyframes kept at most (a keyframe a second for over 11 days).
pub const MAX_KEYS: usize = 1 << 20;

/// Frame times closer than this (seconds) are the same time.
const TIME_EPS: f64 = 1e-6;

/// The keyframes of a video stream, as far as they have been read; cheap
/// to clone (the clones share one index, still growing while its scan
/// runs).
#[derive(Clone)]
pub struct SeekIndex {
    shared: Arc<Mutex<Keys>>,
    /// Seconds per tick of the stream's time base.
    time_base: f64,
    /// The stream's start, in ticks (frame times count from it).
    start: i64,
}

impl std::fmt::Debug for SeekIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let k = self.lock();
        f.debug_struct("SeekIndex")
            .field("keys", &k.keys.len())
            .field("done", &k.done)
            .finish()
    }
}

#[derive(Debug, Default)]
struct Keys {
    /// Presentation times (ticks) of the keyframes read, increasing.
    keys: Vec<i64>,
    /// Every keyframe is known (the scan reached the end).
    done: bool,
    /// The scan stopped early (a read error, or too many keyframes):
    /// nothing is known past the last keyframe.
    failed: Option<String>,
}

impl Keys {
    fn add(&mut self, pts: i64) {
        // Keyframes come in presentation order; a timestamp out of order
        // (a damaged file) goes where it belongs, a repeated one once.
        let at = self.keys.partition_point(|&k| k < pts);
        if self.keys.get(at) != Some(&pts) {
            self.keys.insert(at, pts);
        }
    }

    /// Whether every keyframe at or before `ticks` is known.
    fn covers(&self, ticks: i64) -> bool {
        self.done || self.keys.last().is_some_and(|&l| l > ticks)
    }
}

/// The scan behind an index: stops when dropped (the decoder that
/// started it is done with the file).
pub(crate) struct IndexScan {
    index: SeekIndex,
    stop: Arc<AtomicBool>,
}

impl IndexScan {
    /// Starts reading the packets of stream `stream` of `path` on a thread
    /// of its own. `time_base` (seconds per tick) and `start` (ticks) are
    /// the stream's, as the decoder uses them. A thread that cannot be
    /// started leaves an index that knows nothing.
    pub(crate) fn start(path: &Path, stream: usize, time_base: f64, start: i64) -> IndexScan {
        let index = SeekIndex::empty(time_base, start);
        let stop = Arc::new(AtomicBool::new(false));
        let (shared, halt, path) = (Arc::clone(&index.shared), Arc::clone(&stop), path.to_owned());
        let spawned = std::thread::Builder::new()
            .name("underlay-index".into())
            .spawn(move || {
                lower_priority();
                scan(&path, stream, &shared, &halt);
            });
        if let Err(e) = spawned {
            index.lock().failed = Some(format!("cannot start the index thread: {e}"));
        }
        IndexScan { index, stop }
    }

    pub(crate) fn index(&self) -> &SeekIndex {
        &self.index
    }
}

impl Drop for IndexScan {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Runs the index thread below normal priority: it is background work
/// beside decoding and drawing (Linux sets a thread's niceness by its id).
fn lower_priority() {
    #[cfg(target_os = "linux")]
    // SAFETY: plain system calls on the calling thread's own id.
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        libc::setpriority(libc::PRIO_PROCESS, tid, 10);
    }
}

/// Reads every packet of `stream`, noting the keyframes' presentation
/// times, until the end, an error, or `stop`.
fn scan(path: &Path, stream: usize, shared: &Mutex<Keys>, stop: &AtomicBool) {
    let lock = || shared.lock().unwrap_or_else(|p| p.into_inner());
    let mut input = match super::open_input(path) {
        Ok(i) => i,
        Err(e) => {
            lock().failed = Some(crate::error::chain(&e));
            return;
        }
    };
    // SAFETY: an open format context; `discard` is a plain field of each
    // of its streams, read by the demuxer for the packets after it.
    unsafe {
        let ctx = input.as_mut_ptr();
        for i in 0..(*ctx).nb_streams as usize {
            let s = *(*ctx).streams.add(i);
            if i != stream {
                (*s).discard = ffi::AVDiscard::AVDISCARD_ALL;
            }
        }
    }
    let mut packet = Packet::empty();
    loop {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        // As in the decoder: the last packet's data is let go first.
        // SAFETY: a valid packet, left blank for the read.
        unsafe { ffi::av_packet_unref(ffmpeg_next::packet::Mut::as_mut_ptr(&mut packet)) };
        match packet.read(&mut input) {
            Ok(()) if packet.stream() == stream => {
                if packet.is_key()
                    && let Some(pts) = packet.pts().or(packet.dts())
                {
                    let mut k = lock();
                    if k.keys.len() >= MAX_KEYS {
                        k.failed = Some(format!("more than {MAX_KEYS} keyframes"));
                        return;
                    }
                    k.add(pts);
                }
            }
            Ok(()) => {}
            Err(ffmpeg_next::Error::Eof) => {
                lock().done = true;
                return;
            }
            Err(e) => {
                lock().failed = Some(format!("reading stopped: {e}"));
                return;
            }
        }
    }
}

impl SeekIndex {
    fn empty(time_base: f64, start: i64) -> SeekIndex {
        SeekIndex {
            shared: Arc::new(Mutex::new(Keys::default())),
            time_base,
            start,
        }
    }

    /// An index of keyframes at these presentation times (ticks of
    /// `time_base` seconds from `start`), complete: for tests and for
    /// sources that know their keyframes without scanning.
    pub fn from_keys(keys: &[i64], time_base: f64, start: i64) -> SeekIndex {
        let idx = SeekIndex::empty(time_base, start);
        {
            let mut k = idx.lock();
            for &p in keys {
                k.add(p);
            }
            k.done = true;
        }
        idx
    }

    fn lock(&self) -> MutexGuard<'_, Keys> {
        self.shared.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Video time (seconds from the stream's start) → ticks, rounding a
    /// time within [`TIME_EPS`] below a tick up to it.
    fn ticks(&self, t: f64) -> i64 {
        self.start
            .saturating_add(((t + TIME_EPS) / self.time_base).floor() as i64)
    }

    fn secs(&self, ticks: i64) -> f64 {
        (ticks - self.start) as f64 * self.time_base
    }

    /// The presentation time (ticks) of the keyframe that decoding the
    /// frame shown at `ticks` starts from: the last keyframe at or before
    /// it. `None` for a time before every keyframe, and while the index
    /// does not reach `ticks`.
    pub fn key_ticks_for(&self, ticks: i64) -> Option<i64> {
        let k = self.lock();
        if !k.covers(ticks) {
            return None;
        }
        let at = k.keys.partition_point(|&p| p <= ticks);
        at.checked_sub(1).map(|i| k.keys[i])
    }

    /// [`key_ticks_for`](Self::key_ticks_for) in video time (seconds).
    pub fn key_for(&self, t: f64) -> Option<f64> {
        if !t.is_finite() {
            return None;
        }
        self.key_ticks_for(self.ticks(t)).map(|p| self.secs(p))
    }

    /// Whether a keyframe lies after video time `a` and at or before `b`
    /// (reading on from the frame at `a` to the one at `b` passes one, so
    /// a seek there is shorter); `None` while the index does not reach `b`.
    pub fn key_between(&self, a: f64, b: f64) -> Option<bool> {
        if !(a.is_finite() && b.is_finite()) {
            return None;
        }
        let (ta, tb) = (self.ticks(a), self.ticks(b));
        let k = self.lock();
        if !k.covers(tb) {
            return None;
        }
        let i = k.keys.partition_point(|&p| p <= ta);
        Some(k.keys.get(i).is_some_and(|&p| p <= tb))
    }

    /// Keyframes known so far.
    pub fn len(&self) -> usize {
        self.lock().keys.len()
    }

    /// Whether no keyframe is known yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether every keyframe is known (the scan reached the end).
    pub fn is_complete(&self) -> bool {
        self.lock().done
    }

    /// Why the scan stopped before the end, if it did.
    pub fn failure(&self) -> Option<String> {
        self.lock().failed.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn idx(keys: &[i64], done: bool) -> SeekIndex {
        let i = SeekIndex::from_keys(keys, 0.01, 0);
        i.lock().done = done;
        i
    }

    #[test]
    fn the_keyframe_for_a_time_is_the_last_at_or_before_it() {
        let i = idx(&[0, 250, 500], true);
        assert_eq!(i.key_for(0.0), Some(0.0));
        assert_eq!(i.key_for(2.49), Some(0.0));
        assert_eq!(i.key_for(2.5), Some(2.5));
        // Within a hair below the tick is the tick.
        assert_eq!(i.key_for(2.5 - 1e-7), Some(2.5));
        assert_eq!(i.key_for(99.0), Some(5.0));
        assert_eq!(i.key_for(f64::NAN), None);
        assert_eq!(i.key_between(0.0, 2.49), Some(false));
        assert_eq!(i.key_between(0.0, 2.5), Some(true));
        assert_eq!(i.key_between(2.5, 4.0), Some(false));
        assert_eq!(i.key_between(4.0, 2.0), Some(false));
    }

    #[test]
    fn a_partial_index_answers_only_below_its_last_keyframe() {
        let i = idx(&[0, 250], false);
        assert_eq!(i.key_for(2.0), Some(0.0));
        assert_eq!(i.key_for(2.5), None, "a later keyframe may follow 2.5 s");
        assert_eq!(i.key_between(1.0, 2.4), Some(false));
        assert_eq!(i.key_between(1.0, 3.0), None);
        let empty = idx(&[], false);
        assert_eq!(empty.key_for(0.0), None);
        // Once complete, everything is known; before the first keyframe
        // there is none to start from.
        let later = idx(&[100], true);
        assert_eq!(later.key_for(0.5), None);
        assert_eq!(later.key_for(1.5), Some(1.0));
    }

    #[test]
    fn keys_out_of_order_or_repeated_are_sorted_once() {
        let i = idx(&[500, 0, 250, 250], true);
        assert_eq!(i.len(), 3);
        assert_eq!(i.key_for(3.0), Some(2.5));
    }

    #[test]
    fn answers_agree_with_a_list_of_keyframes_searched_by_hand() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(3);
        for _ in 0..crate::testing::fuzz_cases() / 10 {
            let n = rng.random_range(0..12);
            let keys: Vec<i64> = (0..n).map(|_| rng.random_range(-50..400)).collect();
            let done = rng.random_bool(0.5);
            let i = idx(&keys, done);
            let mut sorted = keys.clone();
            sorted.sort_unstable();
            sorted.dedup();
            let known = |t: i64| done || sorted.last().is_some_and(|&l| l > t);
            for _ in 0..20 {
                let (a, b) = (rng.random_range(-60..420), rng.random_range(-60..420));
                let want = known(a)
                    .then(|| sorted.iter().rev().find(|&&k| k <= a).copied())
                    .flatten();
                assert_eq!(i.key_ticks_for(a), want, "keys {sorted:?} done {done} at {a}");
                let between = known(b).then(|| sorted.iter().any(|&k| a < k && k <= b));
                assert_eq!(
                    i.key_between(a as f64 * 0.01, b as f64 * 0.01),
                    between,
                    "{sorted:?} {a} {b}"
                );
            }
        }
    }

    /// A 32×32 video of `n` frames at 10 fps with a keyframe every `gop`.
    fn encoded(dir: &Path, n: usize, gop: u32) -> std::path::PathBuf {
        let p = dir.join(format!("v{n}_{gop}.mp4"));
        let settings = crate::video::EncoderSettings {
            crf: 20,
            preset: "ultrafast".into(),
            keyframe_interval: gop,
            ..Default::default()
        };
        let mut e = crate::video::Encoder::create(&p, 32, 32, &settings).unwrap();
        for i in 0..n {
            let img = crate::image::RgbImage::from_elem((32, 32, 3), (i * 7 % 200) as u8);
            e.push(&img, i as f64 / 10.0).unwrap();
        }
        e.finish().unwrap();
        p
    }

    /// Runs a scan of `path`'s first stream to its end, here.
    fn scan_now(path: &Path) -> Keys {
        let shared = Mutex::new(Keys::default());
        scan(path, 0, &shared, &AtomicBool::new(false));
        shared.into_inner().unwrap()
    }

    #[test]
    fn a_scan_finds_every_keyframe_of_a_video() {
        let dir = tempfile::tempdir().unwrap();
        let p = encoded(dir.path(), 35, 10);
        let k = scan_now(&p);
        assert!(k.done && k.failed.is_none(), "{k:?}");
        // The decoder's own clock: 10 fps in a 1/12800 time base or such.
        let mut d = crate::video::Decoder::open(&p).unwrap();
        d.build_index();
        let index = d.seek_index().unwrap();
        let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while !index.is_complete() && std::time::Instant::now() < until {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert!(index.is_complete(), "{index:?}");
        assert_eq!(index.len(), 4);
        for (t, key) in [
            (0.0, 0.0),
            (0.95, 0.0),
            (1.0, 1.0),
            (2.5, 2.0),
            (3.4, 3.0),
            (9.0, 3.0),
        ] {
            let got = index.key_for(t).unwrap();
            assert!((got - key).abs() < 1e-6, "at {t}: {got}");
        }
        assert_eq!(index.key_between(0.2, 0.9), Some(false));
        assert_eq!(index.key_between(0.2, 1.1), Some(true));
        drop(d); // stops the thread, if it still ran
    }

    #[test]
    fn damaged_files_end_the_scan_with_what_it_read() {
        use rand::{Rng, SeedableRng};
        let dir = tempfile::tempdir().unwrap();
        let p = encoded(dir.path(), 30, 5);
        let bytes = std::fs::read(&p).unwrap();
        let mut rng = rand::rngs::StdRng::seed_from_u64(11);
        let bad = dir.path().join("bad.mp4");
        for case in 0..40 {
            let mut b = bytes.clone();
            match case % 3 {
                // Cut short.
                0 => b.truncate(rng.random_range(0..bytes.len())),
                // Bytes changed at random.
                1 => {
                    for _ in 0..rng.random_range(1..40) {
                        let at = rng.random_range(0..b.len());
                        b[at] = rng.random();
                    }
                }
                // Garbage.
                _ => b = (0..rng.random_range(0..5000)).map(|_| rng.random()).collect(),
            }
            std::fs::write(&bad, &b).unwrap();
            let k = scan_now(&bad);
            assert!(
                k.done || k.failed.is_some(),
                "case {case}: the scan neither ended nor failed"
            );
            assert!(
                k.keys.windows(2).all(|w| w[0] < w[1]),
                "case {case}: {:?}",
                k.keys
            );
        }
        let k = scan_now(&dir.path().join("missing.mp4"));
        assert!(
            k.failed.as_deref().is_some_and(|e| e.contains("missing.mp4")),
            "{k:?}"
        );
    }

    #[test]
    fn a_stream_starting_late_counts_from_its_start() {
        let i = SeekIndex::from_keys(&[1000, 1250], 0.01, 1000);
        assert_eq!(i.key_for(0.0), Some(0.0));
        assert_eq!(i.key_for(3.0), Some(2.5));
    }
}
