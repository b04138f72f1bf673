//! The picture a live output shows while its camera has no signal: the
//! last picture written, dimmed, saying since when the camera is silent.
//!
//! A stream that simply stops makes a viewer (OBS, a player) freeze or
//! give up; a card at the camera's rate keeps the output alive and says
//! what happened. The drawings' clock never stops (a frame's log time is
//! its arrival on this machine's clock), so they are where they belong as
//! soon as the camera is back.

use crate::draw::{Overlay, Painter};
use crate::geom::Vec2;
use crate::log::Rgba;
use crate::video::SourceFrame;

/// How much of the last picture's brightness the card keeps, in 256ths.
const DIM: u16 = 90;

/// The card for a camera silent since `since` (seconds since the Unix
/// epoch) at `now`, made from the last picture written.
pub fn card(last: &SourceFrame, since: f64, now: f64) -> SourceFrame {
    // The picture as drawn: from its planes when it was drawn on them.
    let mut image = match &last.yuv {
        Some(yuv) if yuv.rgb_pending() => {
            let mut rgb = crate::image::RgbImage::zeros((0, 0, 3));
            yuv.planes().to_rgb(&mut rgb);
            rgb
        }
        _ => last.image.clone(),
    };
    image.mapv_inplace(|v| ((v as u16 * DIM) >> 8) as u8);
    let (h, w, _) = image.dim();
    let text = caption(since, now);
    if w >= 16 && h >= 16 {
        let mut painter = Painter::new(w, h);
        let mut overlay = Overlay::new(w, h);
        let size = (h as f64 / 14.0).max(10.0);
        let (tw, _) = painter.measure_text(&text, size).unwrap_or((0.0, 0.0));
        let x = ((w as f64 - tw) / 2.0).max(size * 0.3);
        painter.text(
            &mut overlay,
            Vec2::new(x, h as f64 / 2.0 + size * 0.35),
            &text,
            size,
            Rgba::WHITE,
        );
        // Sizes match by construction: nothing to refuse.
        let _ = overlay.composite(&mut image, None);
    }
    SourceFrame {
        index: last.index,
        time: last.time,
        image,
        yuv: None,
        clock: last.clock,
        mask: None,
        calibration: last.calibration.clone(),
    }
}

/// "NO SIGNAL since 12:04:31 UTC (8 s)".
pub fn caption(since: f64, now: f64) -> String {
    let secs = if since.is_finite() {
        since.max(0.0) as u64
    } else {
        0
    };
    let day = secs % 86_400;
    let silent = if (now - since).is_finite() {
        (now - since).max(0.0)
    } else {
        0.0
    };
    format!(
        "NO SIGNAL since {:02}:{:02}:{:02} UTC ({:.0} s)",
        day / 3600,
        day % 3600 / 60,
        day % 60,
        silent.floor()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(w: usize, h: usize, v: u8) -> SourceFrame {
        SourceFrame {
            index: 7,
            time: 1.5,
            image: crate::image::RgbImage::from_elem((h, w, 3), v),
            yuv: None,
            clock: None,
            mask: None,
            calibration: None,
        }
    }

    #[test]
    fn the_caption_says_since_when_in_utc_and_for_how_long() {
        // 2026-11-28 12:04:31 UTC.
        let since = 1_795_867_471.25;
        assert_eq!(caption(since, since + 8.9), "NO SIGNAL since 12:04:31 UTC (8 s)");
        assert_eq!(caption(f64::NAN, 3.0), "NO SIGNAL since 00:00:00 UTC (0 s)");
    }

    #[test]
    fn the_card_dims_the_last_picture_and_writes_in_its_middle() {
        let last = frame(320, 240, 200);
        let c = card(&last, 100.0, 105.0);
        assert_eq!(c.image.dim(), (240, 320, 3));
        // A corner: dimmed, nothing written.
        assert_eq!(c.image[[2, 2, 0]], ((200u16 * DIM) >> 8) as u8);
        // The middle rows hold white text; the top rows none.
        let white = |rows: std::ops::Range<usize>| {
            rows.flat_map(|y| (0..320).map(move |x| (y, x)))
                .filter(|&(y, x)| c.image[[y, x, 0]] > 240)
                .count()
        };
        assert!(white(100..130) > 50, "{}", white(100..130));
        assert_eq!(white(0..60), 0);
        assert!(c.yuv.is_none() && c.mask.is_none());
        // A picture too small for text is only dimmed.
        let tiny = card(&frame(8, 8, 255), 0.0, 1.0);
        assert!(tiny.image.iter().all(|&v| v == ((255u16 * DIM) >> 8) as u8));
    }
}
