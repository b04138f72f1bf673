//! A [`Match`] as a [`FrameSource`]: pictures rendered on demand, each
//! with its game clock and exact floor mask, and the view's calibration
//! in [`SourceInfo::calibration`] so the match's logs draw in place.
//!
//! Snapshots are laid out in video time by the match's [`Pace`]: one
//! picture per snapshot (a simulator's records, stoppage steps included),
//! or the clock itself (recorded timestamps). Pictures are taken at
//! `fps`. A simulator's record is shown until the next one: a picture
//! between two records is the earlier record, and its clock that record's
//! — the record a log's drawings show at that clock too
//! ([`crate::log::DisplayHints::cycle`]), so the picture and the drawings
//! never disagree or blink between records. Between two snapshots of
//! [`Pace::Clock`] bodies and ball are interpolated, and the clock is the
//! clock at that time.
//!
//! A match may also be seen through a moving camera (a 3D-league agent's
//! head camera, [`RenderOptions::camera`]): each picture is the top-down
//! one warped into that camera at the frame's clock ([`super::tilt::FloorWarp`]),
//! and the camera is the frame's calibration. A frame whose camera is not
//! known (before the agent's first vision message, or too long after its
//! last) is the surround colour with a caption saying so, nothing floor,
//! and drawn through a camera that sees nothing.

use std::sync::Arc;

use crate::calib::Calibration;
use crate::calib::track::CameraTrack;
use crate::image::{MaskImage, RgbImage};
use crate::video::ClockTable;
use crate::video::source::{FrameSource, SourceError, SourceFrame, SourceInfo};

use super::model::{Body, Match, Pace, Snapshot};
use super::render::Renderer;

/// The most pictures one rendered match may have (a day at 60 fps).
pub const MAX_FRAMES: u64 = 24 * 3600 * 60;

/// What the camera of a rendered match looks at.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Follow {
    /// The whole pitch (or its middle, zoomed in).
    #[default]
    Pitch,
    /// The ball.
    Ball,
    /// One body: team index (0 the left or yellow team, 1 the other) and number.
    Body { team: u8, number: u32 },
}

impl std::str::FromStr for Follow {
    type Err = String;

    /// `pitch`, `ball`, or a body as `l10`, `r3`, `y2`, `b5` (left, right,
    /// yellow, blue; the first team is the left or yellow one).
    fn from_str(s: &str) -> Result<Follow, String> {
        let t = s.trim().to_ascii_lowercase();
        match t.as_str() {
            "pitch" | "field" | "" => return Ok(Follow::Pitch),
            "ball" => return Ok(Follow::Ball),
            _ => {}
        }
        let bad = || {
            format!("'{s}' is not something to follow: give ball, pitch, or a player as l10, r3, y2 or b5")
        };
        let (team, rest) = match t.chars().next() {
            Some('l' | 'y') => (0, &t[1..]),
            Some('r' | 'b') => (1, &t[1..]),
            _ => return Err(bad()),
        };
        let number = rest
            .trim_start_matches(['/', ' ', '_', '-'])
            .parse()
            .map_err(|_| bad())?;
        Ok(Follow::Body { team, number })
    }
}

/// Size and rate of the pictures, and what they show.
#[derive(Clone, Debug, PartialEq)]
pub struct RenderOptions {
    pub width: usize,
    pub height: usize,
    /// Pictures per second of video; `None`: one per snapshot for
    /// [`Pace::PerSnapshot`], 30 for [`Pace::Clock`].
    pub fps: Option<f64>,
    /// What the camera follows.
    pub follow: Follow,
    /// Magnification of the pitch (1: all of it in view).
    pub zoom: f64,
    /// Seen at this slant (degrees from straight down) from beyond the
    /// side line, so drawings above the floor show their heights
    /// ([`super::tilt`]); `None`: from straight above.
    pub tilt: Option<f64>,
    /// Seen through this moving camera (an agent's head camera) at each
    /// frame's clock; `None`: the view the other options make.
    pub camera: Option<Arc<CameraTrack>>,
}

impl Default for RenderOptions {
    fn default() -> Self {
        RenderOptions {
            width: 1280,
            height: 720,
            fps: None,
            follow: Follow::Pitch,
            zoom: 1.0,
            tilt: None,
            camera: None,
        }
    }
}

impl RenderOptions {
    /// The options a frame source was opened with, over the defaults;
    /// a `follow` that does not read is an error.
    pub fn from_open(o: &crate::video::source::OpenOptions) -> Result<RenderOptions, String> {
        let mut r = RenderOptions {
            fps: o.fps,
            zoom: o.zoom.unwrap_or(1.0),
            tilt: o.tilt,
            camera: o.camera.clone(),
            ..RenderOptions::default()
        };
        if let Some((w, h)) = o.size {
            (r.width, r.height) = (w, h);
        }
        if let Some(t) = o.tilt
            && !(0.0..=super::tilt::MAX_TILT_DEG).contains(&t)
        {
            return Err(format!(
                "a slant of {t}° is not possible (0 to {}° from straight down)",
                super::tilt::MAX_TILT_DEG
            ));
        }
        if o.tilt.is_some() && (o.follow.is_some() || o.zoom.is_some_and(|z| z != 1.0)) {
            return Err("--tilt shows the whole pitch: it does not go with --follow or --zoom".into());
        }
        if o.camera.is_some() && (o.tilt.is_some() || o.follow.is_some() || o.zoom.is_some_and(|z| z != 1.0))
        {
            return Err(
                "an agent's view is its own camera: it does not go with --tilt, --follow or --zoom".into(),
            );
        }
        if o.agent_view.is_some() && o.camera.is_none() {
            return Err("an agent's view needs the agent's perception log among the logs".into());
        }
        if let Some(f) = &o.follow {
            r.follow = f.parse()?;
            if r.follow != Follow::Pitch && o.zoom.is_none() {
                // Following something shows part of the pitch.
                r.zoom = 3.0;
            }
        }
        Ok(r)
    }
}

/// Why a match cannot be played.
#[derive(Debug, thiserror::Error)]
pub enum MatchError {
    #[error(
        "the match has no snapshot to show: the file holds no moment of it (no show record in a game log, \
         no frame in a monitor log or game log)"
    )]
    Empty,
    #[error("snapshot {index}: clock {clock} s goes back from {previous} s or is not a number")]
    Clock { index: usize, clock: f64, previous: f64 },
    #[error("{fps} pictures per second is not possible (0.1 to 240)")]
    BadRate { fps: f64 },
    #[error("the match would need {frames} pictures (at most {MAX_FRAMES})")]
    TooLong { frames: f64 },
    #[error(transparent)]
    Render(#[from] super::render::RenderError),
    #[error("the pitch cannot be seen at a slant of {deg}°")]
    Tilt { deg: f64 },
    #[error("{name}'s camera cannot be made")]
    Camera {
        name: String,
        #[source]
        source: crate::calib::CalibError,
    },
    #[error(transparent)]
    Clocks(#[from] crate::video::ClockError),
}

/// A rendered match as frames.
pub struct MatchSource {
    m: Arc<Match>,
    renderer: Renderer,
    /// A slanted view, and the top-down picture and mask it warps.
    tilt: Option<super::tilt::Tilt>,
    /// A moving camera, and the one that sees nothing for frames where it
    /// is not known.
    camera: Option<(Arc<CameraTrack>, Arc<Calibration>)>,
    top: (RgbImage, MaskImage),
    info: SourceInfo,
    /// Video time of each snapshot.
    times: Vec<f64>,
    fps: f64,
    frames: u64,
    next: u64,
    follow: Follow,
}

impl std::fmt::Debug for MatchSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MatchSource")
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

impl MatchSource {
    /// The pictures of `m` at `options`' size and rate.
    pub fn new(m: Arc<Match>, options: &RenderOptions) -> Result<MatchSource, MatchError> {
        let first = m.snapshots.first().ok_or(MatchError::Empty)?;
        let mut previous = first.clock;
        for (index, s) in m.snapshots.iter().enumerate() {
            if !(s.clock.is_finite() && s.clock >= previous) {
                return Err(MatchError::Clock {
                    index,
                    clock: s.clock,
                    previous,
                });
            }
            previous = s.clock;
        }
        let times: Vec<f64> = match m.pace {
            Pace::PerSnapshot { interval } => {
                let interval = if interval.is_finite() && interval > 0.0 {
                    interval
                } else {
                    0.1
                };
                (0..m.snapshots.len()).map(|i| i as f64 * interval).collect()
            }
            Pace::Clock => m.snapshots.iter().map(|s| s.clock - first.clock).collect(),
        };
        let fps = match (options.fps, m.pace) {
            (Some(f), _) => f,
            (None, Pace::PerSnapshot { .. }) if times.len() > 1 => 1.0 / (times[1] - times[0]),
            (None, Pace::PerSnapshot { .. }) => 10.0,
            (None, Pace::Clock) => clock_rate(&times),
        };
        if !(0.1..=240.0).contains(&fps) {
            return Err(MatchError::BadRate { fps });
        }
        let last = times.last().copied().unwrap_or(0.0);
        // Slack so a time computed as i × interval lands on picture i.
        let n = (last * fps + 1e-6).floor() + 1.0;
        if n > MAX_FRAMES as f64 {
            return Err(MatchError::TooLong { frames: n });
        }
        let frames = n as u64;
        // A slanted view warps a top-down picture twice its size.
        let renderer = if options.tilt.is_some() || options.camera.is_some() {
            Renderer::without_caption(&m, 2 * options.width, 2 * options.height)?
        } else {
            Renderer::with_zoom(&m, options.width, options.height, options.zoom)?
        };
        let camera = match &options.camera {
            Some(track) => {
                let blind = crate::calib::track::blind(options.width, options.height).map_err(|source| {
                    MatchError::Camera {
                        name: track.name.clone(),
                        source,
                    }
                })?;
                Some((track.clone(), Arc::new(blind)))
            }
            None => None,
        };
        let tilt = match options.tilt {
            Some(deg) => Some(
                super::tilt::Tilt::new(
                    m.field.bounds(),
                    renderer.view(),
                    options.width,
                    options.height,
                    deg,
                )
                .ok_or(MatchError::Tilt { deg })?,
            ),
            None => None,
        };
        let mut src = MatchSource {
            renderer,
            tilt,
            camera,
            top: (RgbImage::zeros((0, 0, 3)), MaskImage::zeros((0, 0))),
            info: SourceInfo::new(
                m.name.clone(),
                options.width,
                options.height,
                fps,
                frames as f64 / fps,
            ),
            times,
            fps,
            frames,
            next: 0,
            follow: options.follow,
            m,
        };
        let clocks = ClockTable::new((0..frames).map(|k| {
            let t = k as f64 / fps;
            (t, src.clock_at(t))
        }))?;
        src.info.frame_count = Some(frames);
        src.info.has_masks = true;
        src.info.clocks = Some(Arc::new(clocks));
        src.info.calibration = Some(match (&src.tilt, &src.camera) {
            (Some(t), _) => t.calibration().clone(),
            // The camera at its first pose (each frame has its own).
            (None, Some((track, blind))) => track
                .poses()
                .first()
                .and_then(|p| track.camera(p, options.width, options.height).ok())
                .unwrap_or_else(|| (**blind).clone()),
            (None, None) => src.renderer.calibration().clone(),
        });
        if let Pace::PerSnapshot { interval } = src.m.pace {
            // A simulator's records are its cycles: times can be given in them.
            src.info.clock_step = Some(interval);
        }
        if (fps - fps.round()).abs() < 1e-9 {
            src.info.time_base = Some((1, fps.round() as i32));
        }
        Ok(src)
    }

    /// The match shown.
    pub fn the_match(&self) -> &Arc<Match> {
        &self.m
    }

    /// The renderer (its view maps world ↔ pixels).
    pub fn renderer(&self) -> &Renderer {
        &self.renderer
    }

    /// The snapshot index shown at video time `t` and how far (0…1) it is
    /// towards the next.
    fn place(&self, t: f64) -> (usize, f64) {
        let i = self.times.partition_point(|&x| x <= t + 1e-9).saturating_sub(1);
        match (self.times.get(i), self.times.get(i + 1)) {
            (Some(&a), Some(&b)) if b > a => (i, ((t - a) / (b - a)).clamp(0.0, 1.0)),
            _ => (i, 0.0),
        }
    }

    /// The game clock of the picture at video time `t`: a record's until
    /// the next record's.
    fn clock_at(&self, t: f64) -> f64 {
        let (i, _) = self.place(t);
        let s = &self.m.snapshots;
        match self.m.pace {
            Pace::Clock => s[0].clock + t.max(0.0),
            Pace::PerSnapshot { .. } => s[i].clock,
        }
    }

    /// Renders picture `k`.
    fn render(&mut self, k: u64) -> SourceFrame {
        let mut out = SourceFrame::new(k, k as f64 / self.fps, RgbImage::zeros((0, 0, 3)));
        self.render_into(k, &mut out);
        out
    }

    fn render_into(&mut self, k: u64, out: &mut SourceFrame) {
        let t = k as f64 / self.fps;
        let (i, f) = self.place(t);
        let s = &self.m.snapshots;
        let tween = f > 0.0 && i + 1 < s.len() && self.m.pace == Pace::Clock;
        let snap = if tween {
            std::borrow::Cow::Owned(interpolate(&s[i], &s[i + 1], f))
        } else {
            std::borrow::Cow::Borrowed(&s[i])
        };
        let mut mask = out.mask.take().unwrap_or_else(|| MaskImage::zeros((0, 0)));
        let center = match self.follow {
            Follow::Pitch => None,
            Follow::Ball => snap.ball.map(|b| b.0),
            Follow::Body { team, number } => snap
                .bodies
                .iter()
                .find(|b| b.team == team && b.number == number)
                .map(|b| b.position),
        };
        if let Some((track, blind)) = &self.camera {
            let clock = self.clock_at(t);
            let (w, h) = (self.info.width, self.info.height);
            let seen = track.pose_at(clock).and_then(|pose| {
                let calibration = track.camera(&pose, w, h).ok()?;
                let warp = super::tilt::FloorWarp::new(
                    &track.floor_homography(&pose, w, h),
                    self.renderer.view(),
                    w,
                    h,
                )?;
                Some((calibration, warp))
            });
            match seen {
                Some((calibration, warp)) => {
                    let (image, top_mask) = &mut self.top;
                    self.renderer.render(&snap, image, top_mask);
                    warp.warp(
                        image,
                        top_mask,
                        self.renderer.surround(),
                        &mut out.image,
                        &mut mask,
                    );
                    self.renderer.caption_on(&mut out.image, &snap.caption);
                    out.calibration = Some(Arc::new(calibration));
                }
                None => {
                    blank(&mut out.image, &mut mask, w, h, self.renderer.surround());
                    let why = match track.start() {
                        Some(start) if clock < start => "before its first vision message",
                        Some(_) => "no vision message just before",
                        None => "no vision message placed",
                    };
                    let text = format!("{}: camera not known at {clock:.2} s ({why})", track.name);
                    self.renderer.caption_on(&mut out.image, &text);
                    out.calibration = Some(blind.clone());
                }
            }
        } else if let Some(tilt) = &self.tilt {
            let (image, top_mask) = &mut self.top;
            self.renderer.render(&snap, image, top_mask);
            tilt.warp(
                image,
                top_mask,
                self.renderer.surround(),
                &mut out.image,
                &mut mask,
            );
            self.renderer.caption_on(&mut out.image, &snap.caption);
            out.calibration = None;
        } else {
            let view = self.renderer.render_at(&snap, center, &mut out.image, &mut mask);
            // A picture showing part of the pitch has a view of its own.
            out.calibration = (view != *self.renderer.view())
                .then(|| view.calibration().map(Arc::new))
                .flatten();
        }
        out.index = k;
        out.time = t;
        out.yuv = None;
        out.clock = Some(self.clock_at(t));
        out.mask = Some(mask);
    }
}

/// A `w`×`h` picture of `surround` with no floor.
fn blank(image: &mut RgbImage, mask: &mut MaskImage, w: usize, h: usize, surround: [u8; 3]) {
    if image.dim() != (h, w, 3) {
        *image = RgbImage::zeros((h, w, 3));
    }
    for mut px in image.rows_mut() {
        px.assign(&ndarray::ArrayView1::from(&surround));
    }
    *mask = MaskImage::zeros((h, w));
}

/// Pictures per second for snapshots at `times` (seconds): their own
/// rate (the inverse of the median gap), between 10 and 30.
fn clock_rate(times: &[f64]) -> f64 {
    let mut gaps: Vec<f64> = times
        .windows(2)
        .map(|w| w[1] - w[0])
        .filter(|g| *g > 1e-6)
        .collect();
    if gaps.is_empty() {
        return 30.0;
    }
    gaps.sort_by(f64::total_cmp);
    let rate = 1.0 / gaps[gaps.len() / 2];
    // 25 Hz stays 25: round near-integers.
    let rate = if (rate - rate.round()).abs() < 1e-3 {
        rate.round()
    } else {
        rate
    };
    rate.clamp(10.0, 30.0)
}

/// Opens the match `read` makes of `path` as a frame source with
/// `options`: the shared body of the league openers. Errors are of `kind`
/// ("2D-league game log", …) and name the file.
pub fn open_with<E: std::error::Error + Send + Sync + 'static>(
    path: &std::path::Path,
    options: &crate::video::source::OpenOptions,
    kind: &'static str,
    read: impl FnOnce(&std::path::Path, String) -> Result<Match, E>,
) -> Result<Box<dyn FrameSource>, SourceError> {
    let other = |source: crate::video::source::BoxError| SourceError::Other {
        path: path.to_owned(),
        kind,
        source,
    };
    let name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let m = read(path, name).map_err(|e| other(Box::new(e)))?;
    let ro = RenderOptions::from_open(options).map_err(|e| other(e.into()))?;
    let src = MatchSource::new(Arc::new(m), &ro).map_err(|e| other(Box::new(e)))?;
    Ok(Box::new(src))
}

/// The snapshot a fraction `f` of the way from `a` to `b`: bodies (by
/// team and number) and the ball moved in a straight line, headings
/// turned the short way; the rest is `a`'s.
fn interpolate(a: &Snapshot, b: &Snapshot, f: f64) -> Snapshot {
    let lerp_angle = |x: f64, y: f64| {
        let d = (y - x + std::f64::consts::PI).rem_euclid(std::f64::consts::TAU) - std::f64::consts::PI;
        x + d * f
    };
    let bodies = a
        .bodies
        .iter()
        .map(
            |p| match b.bodies.iter().find(|q| q.team == p.team && q.number == p.number) {
                Some(q) => Body {
                    position: p.position.lerp(q.position, f),
                    heading: p
                        .heading
                        .zip(q.heading)
                        .map(|(x, y)| lerp_angle(x, y))
                        .or(p.heading),
                    gaze: p.gaze.zip(q.gaze).map(|(x, y)| lerp_angle(x, y)).or(p.gaze),
                    ..p.clone()
                },
                None => p.clone(),
            },
        )
        .collect();
    let ball = match (a.ball, b.ball) {
        (Some((p, r)), Some((q, _))) => Some((p.lerp(q, f), r)),
        (x, _) => x,
    };
    Snapshot {
        clock: a.clock,
        bodies,
        ball,
        caption: a.caption.clone(),
    }
}

impl FrameSource for MatchSource {
    fn info(&self) -> &SourceInfo {
        &self.info
    }

    fn next_frame(&mut self) -> Result<Option<SourceFrame>, SourceError> {
        if self.next >= self.frames {
            return Ok(None);
        }
        let f = self.render(self.next);
        self.next += 1;
        Ok(Some(f))
    }

    fn frame_at(&mut self, t: f64) -> Result<Option<SourceFrame>, SourceError> {
        if self.frames == 0 {
            return Ok(None);
        }
        let k = if t.is_nan() {
            0
        } else {
            ((t * self.fps + 1e-6).floor().max(0.0) as u64).min(self.frames - 1)
        };
        self.next = k;
        self.next_frame()
    }

    fn read_into(&mut self, out: &mut SourceFrame) -> Result<bool, SourceError> {
        if self.next >= self.frames {
            return Ok(false);
        }
        self.render_into(self.next, out);
        self.next += 1;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geom::Vec2;
    use crate::log::Rgba;
    use crate::pitch::model::{Card, Field, Team};

    fn game(clocks: &[f64], pace: Pace) -> Match {
        let snapshots = clocks
            .iter()
            .enumerate()
            .map(|(i, &c)| Snapshot {
                clock: c,
                bodies: vec![Body {
                    team: 0,
                    number: 7,
                    position: Vec2::new(i as f64, 0.0),
                    radius: 0.3,
                    heading: Some(0.0),
                    gaze: None,
                    goalie: false,
                    card: Card::None,
                    faded: false,
                }],
                ball: Some((Vec2::new(0.0, i as f64), 0.1)),
                caption: String::new(),
            })
            .collect();
        Match {
            name: "g".into(),
            field: Field::football("m", 40.0, 30.0, 7.0, None, None, 1.0),
            teams: [
                Team {
                    name: "a".into(),
                    color: Rgba::from_rgb(0xff0000),
                },
                Team {
                    name: "b".into(),
                    color: Rgba::from_rgb(0x0000ff),
                },
            ],
            snapshots,
            pace,
        }
    }

    fn opts(fps: Option<f64>) -> RenderOptions {
        RenderOptions {
            width: 640,
            height: 480,
            fps,
            ..RenderOptions::default()
        }
    }

    #[test]
    fn a_camera_following_the_ball_keeps_it_in_the_middle() {
        let m = game(&[0.0, 0.1, 0.2, 0.3], Pace::PerSnapshot { interval: 0.1 });
        let o = RenderOptions {
            follow: Follow::Ball,
            zoom: 3.0,
            ..opts(None)
        };
        let mut s = MatchSource::new(Arc::new(m), &o).unwrap();
        let whole = s.info().calibration.clone().unwrap();
        for k in 0..4 {
            let f = s.next_frame().unwrap().unwrap();
            // The ball of snapshot k is at (0, k): in the picture's middle,
            // through the frame's own view.
            let c = f.calibration.as_ref().expect("a view of its own");
            let p = c.project(Vec2::new(0.0, k as f64)).unwrap();
            // The middle of the rows below the caption's band.
            let middle = (s.renderer().band() as f64 + 479.0) / 2.0;
            assert!((p.x - 319.5).abs() <= 0.5 && (p.y - middle).abs() <= 0.5, "{p:?}");
            // Zoomed in three times against the whole pitch.
            let a = c.project(Vec2::new(1.0, 0.0)).unwrap() - c.project(Vec2::ZERO).unwrap();
            let b = whole.project(Vec2::new(1.0, 0.0)).unwrap() - whole.project(Vec2::ZERO).unwrap();
            assert!((a.x / b.x - 3.0).abs() < 0.01, "{} vs {}", a.x, b.x);
            // The ball is drawn there, and is not floor.
            let (y, x) = (p.y.round() as usize, p.x.round() as usize);
            assert_eq!(f.mask.as_ref().unwrap()[[y, x]], 0);
        }
        assert_eq!("l10".parse::<Follow>(), Ok(Follow::Body { team: 0, number: 10 }));
        assert_eq!("B5".parse::<Follow>(), Ok(Follow::Body { team: 1, number: 5 }));
        assert_eq!("ball".parse::<Follow>(), Ok(Follow::Ball));
        assert!("x9".parse::<Follow>().is_err());
        // Without zoom or follow, frames have no view of their own.
        let mut plain = MatchSource::new(Arc::new(game(&[0.0], Pace::Clock)), &opts(None)).unwrap();
        assert!(plain.next_frame().unwrap().unwrap().calibration.is_none());
    }

    #[test]
    fn one_picture_per_record_with_standing_clocks() {
        // A stoppage: clocks 0.1, 0.1 + 1e-5, 0.1 + 2e-5, then 0.2.
        let m = game(
            &[0.0, 0.1, 0.10001, 0.10002, 0.2],
            Pace::PerSnapshot { interval: 0.1 },
        );
        let mut s = MatchSource::new(Arc::new(m), &opts(None)).unwrap();
        let info = s.info().clone();
        assert_eq!(
            (info.frame_count, info.fps, info.time_base),
            (Some(5), 10.0, Some((1, 10)))
        );
        assert!(info.has_masks && info.calibration.is_some());
        let mut clocks = vec![];
        while let Some(f) = s.next_frame().unwrap() {
            assert!(f.mask.is_some());
            clocks.push(f.clock.unwrap());
        }
        assert_eq!(clocks, [0.0, 0.1, 0.10001, 0.10002, 0.2]);
        // The clock table finds the first picture of a standing clock.
        let table = info.clocks.unwrap();
        assert!((table.time_of(0.1).unwrap() - 0.1).abs() < 1e-9);
        assert!((table.time_of(0.2).unwrap() - 0.4).abs() < 1e-9);
        let f = s.frame_at(0.35).unwrap().unwrap();
        assert_eq!(f.index, 3);
        assert_eq!(s.next_frame().unwrap().unwrap().index, 4);
        assert!(s.next_frame().unwrap().is_none());
    }

    #[test]
    fn more_pictures_hold_each_record_until_the_next() {
        let m = game(&[0.0, 0.1, 0.2], Pace::PerSnapshot { interval: 0.1 });
        let mut s = MatchSource::new(Arc::new(m), &opts(Some(40.0))).unwrap();
        assert_eq!(s.info().frame_count, Some(9));
        // Pictures 1 to 3 lie between records 0 and 1: record 0's body
        // (at x = 0) and clock; picture 4 is record 1's.
        let v = *s.renderer().view();
        let body_at = |f: &SourceFrame, x: f64| {
            let p = v.to_pixel(Vec2::new(x, 0.0));
            let (y, x) = (p.y.round() as usize, p.x.round() as usize);
            // Behind the centre (the heading points to +x): team red.
            [f.image[[y, x - 4, 0]], f.image[[y, x - 4, 2]]] == [255, 0]
        };
        for k in 1..4 {
            let f = s.frame_at(k as f64 / 40.0).unwrap().unwrap();
            assert_eq!(f.clock, Some(0.0), "picture {k}");
            assert!(body_at(&f, 0.0) && !body_at(&f, 0.5), "picture {k}");
        }
        let f = s.frame_at(0.1).unwrap().unwrap();
        assert_eq!(f.clock, Some(0.1));
        assert!(body_at(&f, 1.0));
    }

    #[test]
    fn clock_paced_matches_follow_their_timestamps() {
        let m = game(&[100.0, 100.5, 102.0], Pace::Clock);
        let mut s = MatchSource::new(Arc::new(m), &opts(Some(10.0))).unwrap();
        assert_eq!(s.info().frame_count, Some(21));
        let f = s.frame_at(1.0).unwrap().unwrap();
        assert!((f.clock.unwrap() - 101.0).abs() < 1e-9);
    }

    /// Through a moving camera: no picture before its first pose (the
    /// surround, nothing floor, a camera that sees nothing), then the
    /// pitch warped into it with the camera as the frame's calibration.
    #[test]
    fn a_moving_camera_shows_the_pitch_from_its_first_pose_on() {
        use crate::calib::track::TrackPose;
        let m = game(&[0.0, 0.1, 0.2, 0.3], Pace::PerSnapshot { interval: 0.1 });
        let (rotation, _) = crate::calib::camera::look_at([0.0, -20.0, 3.0], [0.0, 0.0, 0.0]).unwrap();
        let pose = TrackPose {
            time: 0.1,
            rotation,
            centre: [0.0, -20.0, 3.0],
        };
        let track = CameraTrack::new("cam", vec![pose], 120.0, 0.5);
        let o = RenderOptions {
            camera: Some(Arc::new(track)),
            ..opts(None)
        };
        let mut s = MatchSource::new(Arc::new(m), &o).unwrap();
        let first = s.info().calibration.clone().unwrap();
        assert!(first.is_full_camera());
        let f = s.next_frame().unwrap().unwrap();
        let mask = f.mask.as_ref().unwrap();
        assert!(
            mask.iter().all(|&v| v == 0),
            "nothing is floor before the first pose"
        );
        let c = f.calibration.as_ref().unwrap();
        assert!(c.project(Vec2::ZERO).is_none(), "and nothing is drawn");
        let f = s.next_frame().unwrap().unwrap();
        let c = f.calibration.as_ref().unwrap();
        assert_eq!(**c, first);
        // The centre of the pitch is in the middle of the picture, and floor;
        // above the horizon is not.
        let p = c.project(Vec2::ZERO).unwrap();
        assert!((p.x - 319.5).abs() < 1e-6 && (p.y - 239.5).abs() < 1e-6, "{p:?}");
        let mask = f.mask.as_ref().unwrap();
        assert_eq!(mask[[240, 320]], 255);
        assert_eq!(mask[[5, 320]], 0);
        assert_eq!(f.image[[5, 320, 1]], s.renderer().surround()[1]);
        let e = RenderOptions::from_open(&crate::video::source::OpenOptions {
            agent_view: Some("l1".into()),
            ..Default::default()
        })
        .unwrap_err();
        assert!(e.contains("perception log"), "{e}");
    }

    #[test]
    fn bad_matches_are_refused() {
        let e = MatchSource::new(Arc::new(game(&[], Pace::Clock)), &opts(None)).unwrap_err();
        assert!(matches!(e, MatchError::Empty), "{e}");
        let e = MatchSource::new(Arc::new(game(&[1.0, 0.5], Pace::Clock)), &opts(None)).unwrap_err();
        assert!(e.to_string().contains("goes back"), "{e}");
        let e = MatchSource::new(Arc::new(game(&[0.0, f64::NAN], Pace::Clock)), &opts(None)).unwrap_err();
        assert!(e.to_string().contains("snapshot 1"), "{e}");
        let e = MatchSource::new(Arc::new(game(&[0.0], Pace::Clock)), &opts(Some(0.0))).unwrap_err();
        assert!(matches!(e, MatchError::BadRate { .. }), "{e}");
        let e = MatchSource::new(Arc::new(game(&[0.0, 1e9], Pace::Clock)), &opts(None)).unwrap_err();
        assert!(matches!(e, MatchError::TooLong { .. }), "{e}");
        let mut o = opts(None);
        o.width = 3;
        assert!(MatchSource::new(Arc::new(game(&[0.0], Pace::Clock)), &o).is_err());
    }
}
