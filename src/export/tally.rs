//! What the pipelines drew over a whole export, and the warnings a user
//! wants afterwards: nothing drawn at all, or none of the log's
//! instantaneous frames shown (both most often a wrong offset),
//! primitives that could not be drawn, or a floor mask its masker doubts.
//! The command line prints them; the viewer shows them under its export
//! dialog.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::draw::SkipReason;
use crate::mask::MaskDoubt;
use crate::pipeline::FrameStats;
use crate::video::TimeMap;

/// Counts over all frames, added to from every worker.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    frames: AtomicU64,
    /// Frames shown with an instantaneous log frame.
    with_instant: AtomicU64,
    drawn: AtomicU64,
    skipped: AtomicU64,
    /// Why the first refused primitive was refused.
    reason: Mutex<Option<SkipReason>>,
    /// Frames whose floor mask was doubtful, and the first doubt.
    doubtful: AtomicU64,
    doubt: Mutex<Option<MaskDoubt>>,
}

impl Tally {
    /// Counts one frame.
    pub(crate) fn add(&self, s: &FrameStats) {
        self.frames.fetch_add(1, Ordering::Relaxed);
        self.with_instant
            .fetch_add(u64::from(s.instant), Ordering::Relaxed);
        self.drawn.fetch_add(s.drawn as u64, Ordering::Relaxed);
        self.skipped.fetch_add(s.skipped as u64, Ordering::Relaxed);
        if let Some(r) = s.skip_reason
            && let Ok(mut first) = self.reason.lock()
        {
            first.get_or_insert(r);
        }
        if let Some(d) = s.mask_doubt {
            self.doubtful.fetch_add(1, Ordering::Relaxed);
            if let Ok(mut first) = self.doubt.lock() {
                first.get_or_insert(d);
            }
        }
    }

    /// The warnings for a log covering `log_range` with `instants`
    /// instantaneous frames, mapped to frames by `time`.
    pub(crate) fn warnings(
        &self,
        log_range: Option<(f64, f64)>,
        instants: usize,
        time: &TimeMap,
        empty_why: &[String],
    ) -> Vec<String> {
        let mut out = Vec::new();
        let (frames, with_instant, drawn, skipped) = (
            self.frames.load(Ordering::Relaxed),
            self.with_instant.load(Ordering::Relaxed),
            self.drawn.load(Ordering::Relaxed),
            self.skipped.load(Ordering::Relaxed),
        );
        let what = if drawn == 0 {
            "nothing was drawn"
        } else {
            "only the log's persistent drawings were shown, none of its instantaneous frames,"
        };
        // Nothing drawn only because what was selected could not be drawn
        // (text too large, say) is not a matter of the offset: the warning
        // below says why.
        let undrawable = drawn == 0 && skipped > 0;
        if frames > 0 && drawn == 0 && !undrawable && log_range.is_none() {
            // A log with no frame at all: no offset would help. Its reader
            // says why (a recording: each topic and why it is not drawn).
            let why = if empty_why.is_empty() {
                String::new()
            } else {
                format!(": {}", empty_why.join("; "))
            };
            out.push(format!(
                "nothing was drawn: the log has no drawing at any time{why}"
            ));
        } else if frames > 0 && !undrawable && (drawn == 0 || (instants > 0 && with_instant == 0)) {
            let range = match log_range {
                Some((a, b)) => format!(
                    "the log covers {a:.3}–{b:.3} s, which video times {:.3}–{:.3} s show with the offset {:.3} s",
                    time.video_time(crate::time::LogTime(a)),
                    time.video_time(crate::time::LogTime(b)),
                    time.offset
                ),
                None => "the log has no frame with a time".to_string(),
            };
            out.push(format!(
                "{what} on any of the {frames} frames: {range}; check the offset \
                 (in `underlay view`, align a log event with the video) and the entity and level filter"
            ));
        }
        if skipped > 0 {
            let why = self
                .reason
                .lock()
                .ok()
                .and_then(|r| *r)
                .map_or(String::new(), |r| format!(" (the first: {r})"));
            let nothing = if drawn == 0 { "nothing was drawn: " } else { "" };
            out.push(format!("{nothing}{skipped} primitives could not be drawn{why}"));
        }
        let doubtful = self.doubtful.load(Ordering::Relaxed);
        if let Some(d) = self.doubt.lock().ok().and_then(|d| *d) {
            out.push(format!(
                "the floor mask is doubtful on {doubtful} of the {frames} frames: {d}; {}",
                d.advice()
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 15, finding 6: when what was selected could not be drawn,
    /// the warning says so, not that the log has no time or the offset is
    /// wrong.
    #[test]
    fn nothing_drawable_is_not_blamed_on_the_offset() {
        let t = Tally::default();
        t.add(&FrameStats {
            skipped: 1,
            skip_reason: Some(SkipReason::TextSize),
            ..FrameStats::default()
        });
        let w = t.warnings(None, 0, &TimeMap::new(0.0), &[]);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].starts_with("nothing was drawn: 1 primitives could not be drawn"),
            "{w:?}"
        );
        assert!(
            w[0].contains("text is too large") && !w[0].contains("offset"),
            "{w:?}"
        );
    }

    /// Issue 47: a log with no drawing at all is not blamed on the offset;
    /// its reader's reasons are said instead.
    #[test]
    fn an_empty_log_says_why_it_is_empty() {
        let t = Tally::default();
        t.add(&FrameStats::default());
        let why = [
            "nothing is drawn from the recording's topics: /chatter (std_msgs/msg/String): not a \
                    message type underlay draws"
                .to_owned(),
        ];
        let w = t.warnings(None, 0, &TimeMap::new(0.0), &why);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("/chatter") && !w[0].contains("offset"), "{w:?}");
    }

    /// A mask its masker doubts is said once, with how many frames and
    /// what to try.
    #[test]
    fn a_doubtful_mask_is_said_once_with_its_frames() {
        let t = Tally::default();
        let doubt = MaskDoubt::GreyFloor {
            percent: 60,
            least: 8,
        };
        for k in 0..4 {
            t.add(&FrameStats {
                drawn: 1,
                instant: true,
                mask_doubt: (k % 2 == 0).then_some(doubt),
                ..FrameStats::default()
            });
        }
        let w = t.warnings(None, 1, &TimeMap::new(0.0), &[]);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].starts_with("the floor mask is doubtful on 2 of the 4 frames: the floor is nearly grey")
                && w[0].contains("60 %")
                && w[0].contains("min_chroma"),
            "{w:?}"
        );
    }

    #[test]
    fn warns_about_nothing_drawn_missed_instants_and_skips() {
        let t = Tally::default();
        t.add(&FrameStats::default());
        let w = t.warnings(Some((100.0, 110.0)), 3, &TimeMap::new(50.0), &[]);
        assert_eq!(w.len(), 1);
        assert!(
            w[0].contains("nothing was drawn") && w[0].contains("50.000–60.000"),
            "{w:?}"
        );
        t.add(&FrameStats {
            drawn: 2,
            skipped: 1,
            skip_reason: Some(SkipReason::NotFinite),
            ..FrameStats::default()
        });
        let w = t.warnings(Some((100.0, 110.0)), 3, &TimeMap::new(50.0), &[]);
        assert!(
            w[0].contains("persistent") && w[1].starts_with("1 primitives"),
            "{w:?}"
        );
        t.add(&FrameStats {
            drawn: 1,
            instant: true,
            ..FrameStats::default()
        });
        assert_eq!(t.warnings(None, 3, &TimeMap::new(0.0), &[]).len(), 1);
    }
}
