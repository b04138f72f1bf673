//! Which frames an export, or one part of it (`--segment K/N`), writes:
//! where its output timeline starts, where a part's lead-in ends and its
//! span stops, and which audio it copies.

use super::{ExportError, ExportJob};
use crate::video::source::SourceInfo;

/// What an export or a part of one writes, in source times.
#[derive(Clone, Debug)]
pub(super) struct Span {
    /// The time that becomes output time 0.
    pub(super) t0: f64,
    /// Frames before this time are only prepared (a part's lead-in);
    /// `-inf` for the first part and a whole export.
    pub(super) from: f64,
    /// Frames from this time on are left out.
    pub(super) to: f64,
    /// Where the last frame ends, when it is a part's cut rather than the
    /// range's or the video's end.
    pub(super) end: Option<f64>,
    /// The audio to copy (`None`: all of it).
    pub(super) audio: Option<crate::video::AudioWindow>,
}

/// The span of `job`: the whole range, or its part; `first` is the time
/// of the frame shown at `--from`.
pub(super) fn span_of(
    job: &ExportJob,
    info: &SourceInfo,
    first: Option<f64>,
    to: f64,
) -> Result<Span, ExportError> {
    use crate::video::AudioWindow;
    // The output starts at 0 with the frame at --from, else keeps the
    // video's own times.
    let t0 = match (job.from, first) {
        (Some(_), Some(t)) => t,
        _ => 0.0,
    };
    let ranged = job.from.is_some() || job.to.is_some();
    let mut span = Span {
        t0,
        from: f64::NEG_INFINITY,
        to,
        end: None,
        audio: ranged.then_some(AudioWindow {
            origin: t0,
            from: t0,
            to,
            split: false,
        }),
    };
    let Some(seg) = job.segment else {
        return Ok(span);
    };
    let begin = match (job.from, first) {
        (Some(_), Some(t)) => t,
        _ => info.start,
    };
    let stop = to.min(info.start + info.duration);
    if !(info.duration > 0.0 && stop.is_finite() && stop > begin) {
        return Err(ExportError::UnknownLength {
            input: job.input.clone(),
        });
    }
    // Every part computes every cut with the same expression.
    let cut = |i: u32| begin + (stop - begin) * f64::from(i) / f64::from(seg.count);
    if seg.index > 1 {
        span.from = cut(seg.index - 1);
    }
    if seg.index < seg.count {
        span.to = cut(seg.index);
        span.end = Some(span.to);
    }
    let audio_from = if seg.index > 1 {
        span.from
    } else if job.from.is_some() {
        t0
    } else {
        f64::NEG_INFINITY
    };
    span.audio = Some(AudioWindow {
        origin: t0,
        from: audio_from,
        to: span.to,
        split: seg.index > 1,
    });
    Ok(span)
}
