//! Finding the log ↔ video time map by itself, from motion: `underlay
//! sync` and the viewer's "Find offset".
//!
//! The log's moving objects ([`movers`]: robots, balls — circles and
//! markers that move from frame to frame) are projected through the
//! calibration and compared with where the video's picture changes
//! ([`motion`]); [`score`] says how well they agree under one offset and
//! rate, [`search`] finds the best and how sure it is, [`plot`] draws the
//! agreement curve. Log time = rate × video time + offset, as everywhere.

pub mod motion;
pub mod movers;
pub mod plot;
pub mod refine;
pub mod score;
pub mod search;

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use crate::calib::Calibration;
use crate::log::Log;

pub use motion::{Motion, MotionError};
pub use movers::Movers;
pub use search::{Drift, Found, SearchError};

/// Seconds searched on either side of a given offset when no range is
/// asked for.
pub const DEFAULT_SEARCH: f64 = 60.0;

/// What to synchronise.
#[derive(Clone, Copy, Debug)]
pub struct Request<'a> {
    pub video: &'a Path,
    pub log: &'a Log,
    pub calibration: &'a Calibration,
    /// The starting guess (log time at video time 0), if there is one.
    pub guess: Option<f64>,
    /// The rate assumed (log seconds per video second).
    pub rate: f64,
    /// Seconds tried on either side of the guess (default: the whole
    /// overlap of the two time ranges without a guess,
    /// [`DEFAULT_SEARCH`] with one).
    pub search: Option<f64>,
    /// The part of the video compared (seconds from its start).
    pub from: Option<f64>,
    pub to: Option<f64>,
    /// Also measure the clock drift.
    pub drift: bool,
}

/// What a synchronisation found.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    pub found: Found,
    /// Offsets tried, from and to.
    pub searched: (f64, f64),
    /// The video compared: first and last frame times.
    pub video: (f64, f64),
    /// The log's times with moving objects.
    pub log: (f64, f64),
    /// Moving objects followed in the log.
    pub objects: usize,
    /// Video frames compared.
    pub frames: usize,
    /// Seconds the whole took.
    pub elapsed: f64,
}

/// Errors of a synchronisation.
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    #[error("reading the video's motion")]
    Motion(#[from] MotionError),
    #[error(
        "the log has no moving objects to compare with the video (circles or markers whose positions change from \
         frame to frame)"
    )]
    NothingMoves,
    #[error("the search range must be a positive number of seconds, not {0}")]
    BadSearch(f64),
    #[error("the offset to start from must be a finite number of seconds, not {0}")]
    BadGuess(f64),
    #[error(
        "the log ({log_from:.3} … {log_to:.3} s) and the video ({video_from:.3} … {video_to:.3} s) cannot overlap \
         with enough time to compare"
    )]
    NoOverlap {
        log_from: f64,
        log_to: f64,
        video_from: f64,
        video_to: f64,
    },
    #[error(transparent)]
    Search(#[from] SearchError),
}

impl SyncError {
    /// Whether the work was stopped by its cancel flag.
    pub fn is_cancelled(&self) -> bool {
        matches!(
            self,
            SyncError::Motion(MotionError::Cancelled) | SyncError::Search(SearchError::Cancelled)
        )
    }
}

/// Finds the time map (see the module docs); `progress` gets the fraction
/// done, and setting `cancel` stops the work.
pub fn find(
    req: &Request<'_>,
    cancel: &AtomicBool,
    progress: &mut dyn FnMut(f64),
) -> Result<Report, SyncError> {
    let started = Instant::now();
    if let Some(s) = req.search
        && !(s.is_finite() && s > 0.0)
    {
        return Err(SyncError::BadSearch(s));
    }
    if let Some(g) = req.guess
        && !g.is_finite()
    {
        return Err(SyncError::BadGuess(g));
    }
    let movers = Movers::from_log(req.log);
    if movers.is_empty() {
        return Err(SyncError::NothingMoves);
    }
    let motion = Motion::read(req.video, req.from, req.to, cancel, &mut |f| progress(0.7 * f))?;
    find_in(
        req,
        &movers,
        &motion,
        cancel,
        &mut |f| progress(0.7 + 0.3 * f),
        started,
    )
}

/// [`find`] once the log's objects and the video's motion are read.
pub fn find_in(
    req: &Request<'_>,
    movers: &Movers,
    motion: &Motion,
    cancel: &AtomicBool,
    progress: &mut dyn FnMut(f64),
    started: Instant,
) -> Result<Report, SyncError> {
    let rate = if req.rate.is_finite() && req.rate > 0.0 {
        req.rate
    } else {
        1.0
    };
    let Some(log) = movers.time_range() else {
        return Err(SyncError::NothingMoves);
    };
    let video = motion.span();
    let (lo, hi) = search_range(req, rate, log, video)?;
    let scorer = score::Scorer {
        motion,
        movers,
        calibration: req.calibration,
    };
    let found = search::run(
        &scorer,
        search::Search {
            lo,
            hi,
            rate,
            drift: req.drift,
        },
        cancel,
        progress,
    )?;
    Ok(Report {
        found,
        searched: (lo, hi),
        video,
        log,
        objects: movers.objects(),
        frames: motion.frames.len(),
        elapsed: started.elapsed().as_secs_f64(),
    })
}

/// The offsets to try (see [`Request::search`]).
fn search_range(
    req: &Request<'_>,
    rate: f64,
    log: (f64, f64),
    video: (f64, f64),
) -> Result<(f64, f64), SyncError> {
    let no_overlap = || SyncError::NoOverlap {
        log_from: log.0,
        log_to: log.1,
        video_from: video.0,
        video_to: video.1,
    };
    let (v0, v1) = (rate * video.0, rate * video.1);
    // At least a quarter of the shorter of the two must overlap.
    let least = 0.25 * (v1 - v0).min(log.1 - log.0);
    let (lo, hi) = (log.0 - v1 + least, log.1 - v0 - least);
    match (req.guess, req.search) {
        (Some(g), s) => {
            let s = s.unwrap_or(DEFAULT_SEARCH);
            Ok((g - s, g + s))
        }
        (None, Some(s)) => {
            let g = log.0 - v0;
            Ok((g - s, g + s))
        }
        (None, None) if lo < hi => Ok((lo, hi)),
        (None, None) => Err(no_overlap()),
    }
}

#[cfg(test)]
pub(crate) mod tests;
