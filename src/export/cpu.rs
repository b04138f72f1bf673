//! CPU time by stage of an export ([`StageCpu`], `export --stats`), read
//! from each thread's own CPU clock and the process's.

use std::time::Duration;

/// CPU time by stage over an export. The reading and encoding threads see
/// the frames in order, so their own time bounds a machine with many
/// cores; the workers run in parallel; FFmpeg's decoding and x264's
/// encoding threads are the rest of the process's time.
///
/// Of the in-order time, part is spent inside FFmpeg's calls — the
/// demuxer and the decoder's intake on the reading thread, x264's intake
/// (its copy of the picture, its look-ahead analysis) and the muxer on the
/// encoding thread — which any program running the same decoder and
/// encoder (ffmpeg itself) pays in order too; the rest is underlay's own
/// ([`StageCpu::own_ordered_share`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StageCpu {
    /// The whole process over the export, user + system.
    pub process: Duration,
    /// The reading thread: demuxing, waiting on FFmpeg's decoding threads,
    /// and the in-order preparation (the pictures' conversion to RGB runs
    /// on the workers where the video allows).
    pub reading: Duration,
    /// Of `reading`, the time inside the frame source's read (FFmpeg's
    /// demuxer and decoder, for a video).
    pub decoding: Duration,
    /// Of `reading`, the in-order preparation (the mask's running model).
    pub prepare: Duration,
    /// All workers together: conversions, masking and drawing.
    pub workers: Duration,
    /// The encoding thread: frames put back in order, handed to the
    /// encoder, written (x264's own threads not counted).
    pub encoder: Duration,
    /// Of `encoder`, the time inside the encoder's calls (x264's intake,
    /// the muxer).
    pub encoding: Duration,
}

impl StageCpu {
    /// The share of the process's CPU spent in frame order (the reading
    /// and encoding threads).
    pub fn ordered_share(&self) -> f64 {
        self.share(self.reading + self.encoder)
    }

    /// The share of the process's CPU spent in frame order outside
    /// FFmpeg's calls: what underlay itself does in order.
    pub fn own_ordered_share(&self) -> f64 {
        let own = (self.reading.saturating_sub(self.decoding)) + (self.encoder.saturating_sub(self.encoding));
        self.share(own)
    }

    fn share(&self, d: Duration) -> f64 {
        let p = self.process.as_secs_f64();
        if p > 0.0 { d.as_secs_f64() / p } else { 0.0 }
    }
}

/// CPU time of the calling thread (user + system).
pub(super) fn thread_cpu() -> Duration {
    cpu_clock(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// CPU time of the whole process (user + system, all threads).
pub(super) fn process_cpu() -> Duration {
    cpu_clock(libc::CLOCK_PROCESS_CPUTIME_ID)
}

fn cpu_clock(clock: libc::clockid_t) -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid clock id and a timespec to write into.
    let ok = unsafe { libc::clock_gettime(clock, &mut ts) } == 0;
    if ok && ts.tv_sec >= 0 && ts.tv_nsec >= 0 {
        Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
    } else {
        Duration::ZERO
    }
}
