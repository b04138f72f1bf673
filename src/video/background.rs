//! The background picture of a fixed camera's video: each pixel's median
//! over frames spread across the video. Players, the ball and passing
//! shadows stand at any one place in few of the frames, so the median shows
//! the floor and its painted lines with the players taken out (as B-Human's
//! VideoAnalysis does for its calibration). A camera that pans or zooms has
//! no such picture: the frames are compared with the median, and when most
//! of them differ from it over much of the picture, the result says the
//! camera moves.

use crate::image::RgbImage;

use super::source::{FrameSource, SourceError};

/// Why a background could not be made.
#[derive(Debug, thiserror::Error)]
pub enum BackgroundError {
    #[error(transparent)]
    Source(#[from] SourceError),
    #[error(
        "{name}: the frame at {time:.3} s is {got}, the first {first}: a background needs frames of one size"
    )]
    Sizes {
        name: String,
        time: f64,
        got: String,
        first: String,
    },
    #[error("{0}: no frames to make a background of")]
    Empty(String),
}

/// Most frames a background is made of (the per-pixel median sorts this
/// many values on the stack; the frames are held in memory).
pub const MAX_FRAMES: usize = 31;

/// A pixel whose three channels differ from the median by this much in
/// sum is one the frame changes.
const CHANGED_LEVELS: u32 = 60;
/// A frame changing more than this share of the picture is not of the same
/// view as the median…
const FRAME_CHANGED: f64 = 0.35;
/// …nor one whose edges the median keeps less than this share of (a pan
/// over a uniform floor changes few pixels' colour but moves every line).
const EDGES_KEPT: f64 = 0.5;
/// A luma step across three pixels this large is an edge.
const EDGE_LEVELS: i32 = 48;
/// …and when more than this share of the frames is not, the camera moves.
const MOVING_FRAMES: f64 = 0.3;

/// A background picture and what it was made from.
#[derive(Debug)]
pub struct Background {
    pub image: RgbImage,
    /// The times of the frames it is the median of, seconds.
    pub times: Vec<f64>,
    /// Per frame, the share of the picture where it differs from the median.
    pub changed: Vec<f64>,
    /// Per frame, the share of its edges the median has too (`None`: the
    /// frame has almost none).
    pub edges_kept: Vec<Option<f64>>,
}

impl Background {
    /// Whether the frames show different views (a panning or zooming
    /// camera): their median is then no picture of the field.
    pub fn camera_moves(&self) -> bool {
        self.moved_frames() as f64 > MOVING_FRAMES * self.changed.len() as f64
    }

    /// How many of the frames show another view than the median.
    pub fn moved_frames(&self) -> usize {
        self.changed
            .iter()
            .zip(&self.edges_kept)
            .filter(|&(&c, &e)| c > FRAME_CHANGED || e.is_some_and(|e| e < EDGES_KEPT))
            .count()
    }
}

/// The times of `n` frames spread evenly over `[start, end]` (the middle of
/// `n` equal parts).
pub fn spread(start: f64, end: f64, n: usize) -> Vec<f64> {
    let n = n.max(1);
    let span = (end - start).max(0.0);
    (0..n)
        .map(|k| start + span * (k as f64 + 0.5) / n as f64)
        .collect()
}

/// The median of `count` frames (at most [`MAX_FRAMES`]) spread over
/// `source`. Frames of another size than the first are an error: the
/// median of different pictures is none.
pub fn background(source: &mut dyn FrameSource, count: usize) -> Result<Background, BackgroundError> {
    let info = source.info().clone();
    let count = count.clamp(1, MAX_FRAMES);
    let mut frames: Vec<RgbImage> = Vec::with_capacity(count);
    let mut times = Vec::with_capacity(count);
    for t in spread(info.start, info.end(), count) {
        let Some(f) = source.frame_at(t)? else { break };
        // A source may hand out the same frame for two nearby times (a
        // short video): count it once.
        if times.last() == Some(&f.time) {
            continue;
        }
        if let Some(first) = frames.first()
            && first.dim() != f.image.dim()
        {
            let size = |d: (usize, usize, usize)| format!("{}×{}", d.1, d.0);
            return Err(BackgroundError::Sizes {
                name: info.name.clone(),
                time: f.time,
                got: size(f.image.dim()),
                first: size(first.dim()),
            });
        }
        times.push(f.time);
        frames.push(f.image);
    }
    from_frames(&info.name, times, frames)
}

/// The background picture of `frames` (taken at `times`, all of one size)
/// of the source named `name`: frames grabbed from a live stream, say.
pub fn from_frames(
    name: &str,
    times: Vec<f64>,
    frames: Vec<RgbImage>,
) -> Result<Background, BackgroundError> {
    if frames.is_empty() {
        return Err(BackgroundError::Empty(name.to_owned()));
    }
    if let Some((i, f)) = frames
        .iter()
        .enumerate()
        .find(|(_, f)| f.dim() != frames[0].dim())
    {
        let size = |d: (usize, usize, usize)| format!("{}×{}", d.1, d.0);
        return Err(BackgroundError::Sizes {
            name: name.to_owned(),
            time: times.get(i).copied().unwrap_or(f64::NAN),
            got: size(f.dim()),
            first: size(frames[0].dim()),
        });
    }
    let image = median(&frames);
    let changed = frames.iter().map(|f| changed_share(f, &image)).collect();
    let edges_kept = frames.iter().map(|f| edges_kept(f, &image)).collect();
    Ok(Background {
        image,
        times,
        changed,
        edges_kept,
    })
}

/// Each value's median over `frames` (all of one shape; the lower middle
/// value for an even count), on the machine's cores.
pub fn median(frames: &[RgbImage]) -> RgbImage {
    let Some(first) = frames.first() else {
        return RgbImage::zeros((0, 0, 3));
    };
    let dim = first.dim();
    let slices: Vec<std::borrow::Cow<'_, [u8]>> = frames
        .iter()
        .map(|f| match f.as_slice() {
            Some(s) => std::borrow::Cow::Borrowed(s),
            None => std::borrow::Cow::Owned(f.iter().copied().collect()),
        })
        .collect();
    let len = dim.0 * dim.1 * dim.2;
    let mut out = vec![0u8; len];
    let n = slices.len().min(MAX_FRAMES);
    let threads = std::thread::available_parallelism()
        .map_or(1, std::num::NonZeroUsize::get)
        .clamp(1, 64);
    let chunk = len.div_ceil(threads).max(1);
    std::thread::scope(|scope| {
        for (k, part) in out.chunks_mut(chunk).enumerate() {
            let slices = &slices;
            scope.spawn(move || {
                let base = k * chunk;
                let mut values = [0u8; MAX_FRAMES];
                for (i, o) in part.iter_mut().enumerate() {
                    for (v, s) in values.iter_mut().zip(slices.iter().take(n)) {
                        *v = s[base + i];
                    }
                    let vals = &mut values[..n];
                    insertion_sort(vals);
                    *o = vals[(n - 1) / 2];
                }
            });
        }
    });
    RgbImage::from_shape_vec(dim, out).unwrap_or_else(|_| RgbImage::zeros(dim))
}

/// Sorts a few values in place (faster than a general sort for ≤ 31).
fn insertion_sort(v: &mut [u8]) {
    for i in 1..v.len() {
        let x = v[i];
        let mut j = i;
        while j > 0 && v[j - 1] > x {
            v[j] = v[j - 1];
            j -= 1;
        }
        v[j] = x;
    }
}

/// The share of the pixels of `frame` (every 4th of every 4th row) whose
/// channels differ from `median`'s by [`CHANGED_LEVELS`] in sum.
fn changed_share(frame: &RgbImage, median: &RgbImage) -> f64 {
    let (h, w, _) = frame.dim();
    let (mut changed, mut all) = (0usize, 0usize);
    for v in (0..h).step_by(4) {
        for u in (0..w).step_by(4) {
            let d: u32 = (0..3)
                .map(|c| u32::from(frame[[v, u, c]].abs_diff(median[[v, u, c]])))
                .sum();
            changed += usize::from(d >= CHANGED_LEVELS);
            all += 1;
        }
    }
    if all == 0 {
        0.0
    } else {
        changed as f64 / all as f64
    }
}

/// The share of `frame`'s edge pixels (every 2nd of every 2nd row) where
/// `median` has an edge too, at half the strength; `None` when the frame
/// has fewer than a thousandth of its samples on edges.
fn edges_kept(frame: &RgbImage, median: &RgbImage) -> Option<f64> {
    let (h, w, _) = frame.dim();
    let luma = |img: &RgbImage, v: usize, u: usize| {
        (299 * i32::from(img[[v, u, 0]]) + 587 * i32::from(img[[v, u, 1]]) + 114 * i32::from(img[[v, u, 2]]))
            / 1000
    };
    let edge = |img: &RgbImage, v: usize, u: usize| {
        (luma(img, v, u + 1) - luma(img, v, u - 1)).abs() + (luma(img, v + 1, u) - luma(img, v - 1, u)).abs()
    };
    let (mut edges, mut kept, mut all) = (0usize, 0usize, 0usize);
    for v in (1..h.saturating_sub(1)).step_by(2) {
        for u in (1..w.saturating_sub(1)).step_by(2) {
            all += 1;
            if edge(frame, v, u) >= EDGE_LEVELS {
                edges += 1;
                kept += usize::from(edge(median, v, u) >= EDGE_LEVELS / 2);
            }
        }
    }
    (edges * 1000 >= all && edges > 0).then(|| kept as f64 / edges as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::video::source::{SourceFrame, SourceInfo};

    /// Frames of a grey floor with a white line at row 20, a dark "player"
    /// at a different place in each, and optionally the whole picture
    /// shifted sideways by `pan` px a frame.
    struct Scene {
        info: SourceInfo,
        pan: usize,
        next: usize,
    }

    impl Scene {
        fn picture(&self, k: usize) -> RgbImage {
            let (w, h) = (self.info.width, self.info.height);
            RgbImage::from_shape_fn((h, w, 3), |(v, u, _)| {
                let x = u + k * self.pan;
                if (8 * k..8 * k + 6).contains(&u) && (10..40).contains(&v) {
                    20
                } else if v == 20 || (self.pan > 0 && x % 10 < 5) {
                    230
                } else {
                    90
                }
            })
        }
    }

    impl FrameSource for Scene {
        fn info(&self) -> &SourceInfo {
            &self.info
        }
        fn next_frame(&mut self) -> Result<Option<SourceFrame>, SourceError> {
            let k = self.next;
            if k as f64 >= self.info.duration * self.info.fps {
                return Ok(None);
            }
            self.next += 1;
            Ok(Some(SourceFrame::new(
                k as u64,
                k as f64 / self.info.fps,
                self.picture(k),
            )))
        }
        fn frame_at(&mut self, t: f64) -> Result<Option<SourceFrame>, SourceError> {
            self.next = (t * self.info.fps).floor().max(0.0) as usize;
            self.next_frame()
        }
    }

    fn scene(pan: usize) -> Scene {
        Scene {
            info: SourceInfo::new("scene", 96, 48, 10.0, 1.1),
            pan,
            next: 0,
        }
    }

    #[test]
    fn the_median_takes_the_players_out_and_keeps_the_lines() {
        let b = background(&mut scene(0), 9).unwrap();
        assert_eq!(b.times.len(), 9);
        assert!(!b.camera_moves(), "{:?}", b.changed);
        let (h, w, _) = b.image.dim();
        for v in 0..h {
            for u in 0..w {
                let want = if v == 20 { 230 } else { 90 };
                assert_eq!(b.image[[v, u, 1]], want, "at {u},{v}");
            }
        }
        // Each frame differs from it where its player stands only.
        assert!(b.changed.iter().all(|&c| c > 0.0 && c < 0.1), "{:?}", b.changed);
    }

    #[test]
    fn a_panning_camera_is_said() {
        let b = background(&mut scene(5), 9).unwrap();
        assert!(b.camera_moves(), "{:?}", b.changed);
    }

    /// A pan over a uniform floor with a few lines: few pixels change
    /// colour, every line moves.
    #[test]
    fn a_pan_over_a_plain_floor_is_said() {
        let frames: Vec<RgbImage> = (0..9)
            .map(|k| {
                RgbImage::from_shape_fn(
                    (48, 96, 3),
                    |(_, u, _)| {
                        if (u + 7 * k) % 32 < 2 { 230 } else { 90 }
                    },
                )
            })
            .collect();
        let image = median(&frames);
        let changed: Vec<f64> = frames.iter().map(|f| changed_share(f, &image)).collect();
        assert!(changed.iter().all(|&c| c < FRAME_CHANGED), "{changed:?}");
        let edges_kept: Vec<Option<f64>> = frames.iter().map(|f| edges_kept(f, &image)).collect();
        let b = Background {
            image,
            times: (0..9).map(f64::from).collect(),
            changed,
            edges_kept,
        };
        assert!(b.camera_moves(), "{:?}", b.edges_kept);
    }

    #[test]
    fn medians_of_few_values_and_spread_times() {
        let f = |v: u8| RgbImage::from_elem((1, 2, 3), v);
        assert_eq!(median(&[f(5), f(1), f(9)])[[0, 1, 2]], 5);
        assert_eq!(median(&[f(5), f(1)])[[0, 0, 0]], 1);
        assert_eq!(median(&[]).dim(), (0, 0, 3));
        assert_eq!(spread(0.0, 10.0, 4), vec![1.25, 3.75, 6.25, 8.75]);
        assert_eq!(spread(2.0, 2.0, 0), vec![2.0]);
    }
}
