//! A recording's camera topic as a frame source: each picture at its
//! header stamp (frames at the recording's own irregular times), the
//! stamp as the frame's log clock, and the camera's calibration from its
//! `CameraInfo` and the transform tree — one for the whole recording when
//! the camera is fixed in the world, else one per frame.
//!
//! Opening reads the camera topic once for its stamps (the pictures'
//! bytes are not decoded). Pictures are then read and decoded on a thread
//! of their own, a couple ahead; a seek starts a new read at the frame's
//! place in the recording (for a video topic, at the keyframe before it).

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crossbeam_channel::{Receiver, bounded};

use super::camera::{self, Intrinsics};
use super::cameras::picture_topic;
use super::picture::{self, Compressed};
use super::recording::{self, Recording, Role, RosError};
use super::tf::{TfTree, frame_name};
use super::value::Struct;
use crate::calib::Calibration;
use crate::image::RgbImage;
use crate::video::ClockTable;
use crate::video::coded::Coding;
use crate::video::source::{FrameSource, OpenOptions, SourceError, SourceFrame, SourceInfo};

/// Pictures in a row that cannot be decoded before a recording is given
/// up on (fewer are passed over, as a video's damaged packets are).
const MAX_BAD_PICTURES: usize = 30;

/// Times closer than this are the same (s): a stamp since the epoch in
/// seconds holds about a tenth of a microsecond.
const STAMP_EPS: f64 = 1e-6;

/// One picture message: where it is and when it was taken.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Entry {
    /// Its log time (ns), where a read starts.
    log_time: u64,
    /// Its header stamp (s).
    stamp: f64,
    /// A video packet that starts a picture on its own (always, for images).
    key: bool,
}

/// How the camera is placed: its lens, and the world it looks at.
#[derive(Clone, Debug)]
pub(crate) struct Placement {
    pub(crate) intrinsics: Intrinsics,
    pub(crate) world: String,
    pub(crate) tf: Arc<TfTree>,
}

impl Placement {
    /// The camera at `stamp`, or why no picture can be drawn through it.
    pub(crate) fn at(&self, stamp: f64) -> Result<Calibration, String> {
        let w = self
            .tf
            .lookup(&self.world, &self.intrinsics.frame, stamp)
            .map_err(|e| e.to_string())?;
        camera::calibration(&self.intrinsics, &w).map_err(|e| crate::error::chain(&e))
    }
}

/// A picture read ahead: its entry's index and the picture or why not.
type Read = (usize, Result<Option<RgbImage>, String>);

/// A recording's camera topic as frames.
pub struct RecordingSource {
    path: PathBuf,
    rec: Arc<Mutex<Recording>>,
    info: SourceInfo,
    topic: u32,
    role: Role,
    entries: Arc<Vec<Entry>>,
    /// The camera, when it moves (a calibration per frame).
    moving: Option<Placement>,
    /// Pictures passed over in a row because they do not decode.
    bad_in_a_row: usize,
    reading: Option<Receiver<Read>>,
    /// The index of the frame `next_frame` gives next.
    next: usize,
    /// Frames at a steady rate (`OpenOptions::fps`) instead of the
    /// pictures' own times.
    steady: Option<Steady>,
}

/// Frames resampled to a steady rate: each shows the latest picture taken
/// at or before its time.
#[derive(Debug)]
struct Steady {
    fps: f64,
    /// The entry each frame shows.
    shown: Vec<usize>,
    /// The frame `next_frame` gives next.
    next: usize,
    /// The last picture given, for frames that show it again.
    last: Option<SourceFrame>,
}

impl std::fmt::Debug for RecordingSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordingSource")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

fn other(path: &Path, e: impl Into<crate::input::BoxError>) -> SourceError {
    SourceError::Other {
        path: path.to_owned(),
        kind: "ROS 2 recording",
        source: e.into(),
    }
}

fn ros(e: RosError) -> crate::input::BoxError {
    Box::new(e)
}

/// Whether an H.264 or H.265 packet (Annex B) holds a picture that starts
/// a run on its own (an IDR/IRAP unit), or carries its parameter sets.
fn is_keyframe(data: &[u8], hevc: bool) -> bool {
    let mut i = 0;
    while i + 3 < data.len() {
        if data[i] == 0 && data[i + 1] == 0 && data[i + 2] == 1 {
            let h = data[i + 3];
            let key = if hevc {
                let t = (h >> 1) & 0x3f;
                (16..=21).contains(&t) || t == 32 || t == 33
            } else {
                let t = h & 0x1f;
                t == 5 || t == 7
            };
            if key {
                return true;
            }
            i += 3;
        } else {
            i += 1;
        }
    }
    false
}

/// A message's header stamp, else its log time.
fn stamp_of(msg: &Struct<'_>, log_time: u64) -> f64 {
    super::markers::stamp(msg.sub("header"))
        .or_else(|| {
            // foxglove's CompressedVideo has a `timestamp`, not a header.
            let s = msg.seconds("timestamp")?;
            (s > 0.0).then_some(s)
        })
        .unwrap_or(log_time as f64 * 1e-9)
}

/// The camera's placement: its `CameraInfo` (the one beside the picture
/// topic) and where the transform tree puts its optical frame.
pub(crate) fn placement(
    rec: &mut Recording,
    topic: &str,
    world: Option<&str>,
    optical: &str,
) -> Result<Placement, String> {
    let infos: Vec<(u32, String)> = rec
        .topics_of(Role::CameraInfo)
        .iter()
        .map(|t| (t.id, t.name.clone()))
        .collect();
    let beside = |info: &str| {
        let ns = info.rsplit_once('/').map_or("", |(ns, _)| ns);
        topic.starts_with(&format!("{ns}/"))
    };
    let chosen = infos
        .iter()
        .filter(|(_, n)| beside(n))
        .max_by_key(|(_, n)| n.len())
        .or(if infos.len() == 1 { infos.first() } else { None })
        .ok_or_else(|| {
            if infos.is_empty() {
                "it has no CameraInfo topic".to_owned()
            } else {
                format!("none of its CameraInfo topics sits beside {topic}")
            }
        })?;
    let mut first: Option<Result<Intrinsics, String>> = None;
    rec.read(&[chosen.0], None, &mut |_, _, msg| {
        first = Some(msg.and_then(|m| camera::intrinsics(&m, camera::is_rectified(topic))));
        ControlFlow::Break(())
    })
    .map_err(|e| crate::error::chain(&e))?;
    let mut intrinsics = first
        .ok_or_else(|| format!("{} has no message", chosen.1))?
        .map_err(|e| format!("{}: {e}", chosen.1))?;
    if intrinsics.frame.is_empty() {
        intrinsics.frame = frame_name(optical).to_owned();
    }
    let (tf, _) = rec.transforms().map_err(|e| crate::error::chain(&e))?;
    if !tf.knows(&intrinsics.frame) {
        return Err(format!(
            "no transform places the camera's frame `{}` in a world",
            intrinsics.frame
        ));
    }
    let world = match world {
        Some(w) => frame_name(w).to_owned(),
        None => super::drawings::world_frame(&tf, None)
            .filter(|w| tf.lookup(w, &intrinsics.frame, 0.0).is_ok())
            .or_else(|| tf.root_of(&intrinsics.frame).map(str::to_owned))
            .unwrap_or_default(),
    };
    Ok(Placement {
        intrinsics,
        world,
        tf: Arc::new(tf),
    })
}

/// Decodes one picture message.
fn decode(role: Role, msg: &Struct<'_>, compressed: &mut Compressed) -> Result<Option<RgbImage>, String> {
    match role {
        Role::Image => picture::raw_image(msg).map(Some),
        _ => compressed.decode(msg),
    }
}

impl RecordingSource {
    /// Opens the picture topic of the recording at `path`
    /// ([`OpenOptions::topic`], else the first) with its camera placed in
    /// [`OpenOptions::world`] (else the transform tree's root).
    pub fn open(path: &Path, options: &OpenOptions) -> Result<RecordingSource, SourceError> {
        let mut rec = recording::open(path).map_err(|e| other(path, ros(e)))?;
        let (topic, name, role) =
            picture_topic(&rec, options.topic.as_deref()).map_err(|e| other(path, e))?;
        let mut entries: Vec<Entry> = Vec::new();
        let mut optical = String::new();
        let mut first_picture: Option<Result<Option<RgbImage>, String>> = None;
        let mut compressed = Compressed::default();
        rec.read(&[topic], None, &mut |_, log_time, msg| {
            // Undecodable messages and stamps going back are not frames.
            let Ok(msg) = msg else {
                return ControlFlow::Continue(());
            };
            let stamp = stamp_of(&msg, log_time);
            if entries.last().is_some_and(|e| stamp <= e.stamp) {
                return ControlFlow::Continue(());
            }
            let key = role != Role::CompressedVideo
                || msg.path("data").and_then(|v| v.as_bytes()).is_some_and(|d| {
                    let hevc = msg.str("format").and_then(Coding::from_format) == Some(Coding::H265);
                    is_keyframe(d, hevc)
                });
            if entries.is_empty() {
                optical = msg
                    .str("header.frame_id")
                    .or(msg.str("frame_id"))
                    .unwrap_or("")
                    .to_owned();
            }
            // The first picture that decodes gives the size; a damaged one
            // before it costs only itself (its error kept, in case none does).
            if !matches!(first_picture, Some(Ok(Some(_)))) {
                match decode(role, &msg, &mut compressed) {
                    Err(e) if first_picture.is_none() => first_picture = Some(Err(e)),
                    Err(_) => {}
                    Ok(None) if first_picture.is_some() => {}
                    other => first_picture = Some(other),
                }
            }
            entries.push(Entry { log_time, stamp, key });
            ControlFlow::Continue(())
        })
        .map_err(|e| other(path, ros(e)))?;
        let image = match first_picture {
            Some(Ok(Some(image))) => image,
            Some(Err(e)) => {
                return Err(other(
                    path,
                    format!("{name}: none of its pictures can be read: {e}"),
                ));
            }
            _ => return Err(other(path, format!("{name} has no picture"))),
        };
        let (h, w, _) = image.dim();
        let t0 = entries.first().map_or(0.0, |e| e.stamp);
        let n = entries.len();
        let span = entries.last().map_or(0.0, |e| e.stamp - t0);
        let fps = if n > 1 && span > 0.0 {
            (n - 1) as f64 / span
        } else {
            30.0
        };
        let clocks =
            ClockTable::new(entries.iter().map(|e| (e.stamp - t0, e.stamp))).map_err(|e| other(path, e))?;
        let mut info = SourceInfo {
            frame_count: Some(n as u64),
            clocks: Some(Arc::new(clocks)),
            ..SourceInfo::new(format!("{} {name}", path.display()), w, h, fps, span + 1.0 / fps)
        };
        let steady = match options.fps {
            Some(f) if f.is_finite() && f > 0.0 => {
                // At most a frame per 100 µs of the recording: a bound on memory.
                let count = ((span * f).floor() as usize + 1).min(n.saturating_mul(100).max(1));
                let shown: Vec<usize> = (0..count)
                    .map(|j| {
                        let t = j as f64 / f;
                        entries
                            .partition_point(|e| e.stamp - t0 <= t + STAMP_EPS)
                            .saturating_sub(1)
                    })
                    .collect();
                let clocks = ClockTable::new(
                    shown
                        .iter()
                        .enumerate()
                        .map(|(j, &e)| (j as f64 / f, entries[e].stamp)),
                )
                .map_err(|e| other(path, e))?;
                info.fps = f;
                info.frame_count = Some(count as u64);
                info.duration = count as f64 / f;
                info.clocks = Some(Arc::new(clocks));
                Some(Steady {
                    fps: f,
                    shown,
                    next: 0,
                    last: None,
                })
            }
            _ => None,
        };
        let mut moving = None;
        match placement(&mut rec, &name, options.world.as_deref(), &optical) {
            Ok(p) => match p.at(t0) {
                Ok(calibration) => {
                    info.calibration = Some(calibration);
                    if !p.tf.is_fixed(&p.world, &p.intrinsics.frame) {
                        moving = Some(p);
                    }
                }
                // A camera no picture can be drawn through (a damaged
                // transform): as none, so that what needs no camera
                // (`--no-calibration`, `--calib`) still plays.
                Err(_) => info.calibration = None,
            },
            // Drawn through a calibration given otherwise (`--calib`);
            // `log info` says why there is none.
            Err(_) => info.calibration = None,
        }
        Ok(RecordingSource {
            path: path.to_owned(),
            rec: Arc::new(Mutex::new(rec)),
            info,
            topic,
            role,
            entries: Arc::new(entries),
            moving,
            bad_in_a_row: 0,
            reading: None,
            next: 0,
            steady,
        })
    }

    /// The next frame at the steady rate.
    fn steady_frame(&mut self) -> Result<Option<SourceFrame>, SourceError> {
        let Some(s) = &self.steady else {
            return self.read_frame();
        };
        let (j, fps) = (s.next, s.fps);
        let Some(&e) = s.shown.get(j) else {
            return Ok(None);
        };
        let reuse = s.last.as_ref().filter(|f| f.index as usize == e).cloned();
        let mut frame = match reuse {
            Some(f) => f,
            None => loop {
                match self.read_frame()? {
                    Some(f) if (f.index as usize) < e => continue,
                    Some(f) => break f,
                    None => return Ok(None),
                }
            },
        };
        if let Some(s) = &mut self.steady {
            s.last = Some(frame.clone());
            s.next = j + 1;
        }
        frame.time = j as f64 / fps;
        frame.index = j as u64;
        Ok(Some(frame))
    }

    /// Starts reading pictures from entry `k` on (a video: from the
    /// keyframe before it).
    fn start(&mut self, k: usize) {
        let from = if self.role == Role::CompressedVideo {
            (0..=k.min(self.entries.len().saturating_sub(1)))
                .rev()
                .find(|&i| self.entries[i].key)
                .unwrap_or(0)
        } else {
            k
        };
        let (tx, rx) = bounded::<Read>(2);
        let rec = Arc::clone(&self.rec);
        let entries = Arc::clone(&self.entries);
        let (topic, role) = (self.topic, self.role);
        std::thread::spawn(move || {
            let Ok(mut rec) = rec.lock() else { return };
            let Some(first) = entries.get(from) else { return };
            let mut at = from;
            let mut compressed = Compressed::default();
            let result = rec.read(&[topic], Some(first.log_time), &mut |_, log_time, msg| {
                let Ok(msg) = msg else {
                    return ControlFlow::Continue(());
                };
                let stamp = stamp_of(&msg, log_time);
                // Messages dropped when indexing (out of order) are passed over.
                while entries.get(at).is_some_and(|e| e.stamp < stamp) {
                    at += 1;
                }
                if entries.get(at).is_none_or(|e| e.stamp != stamp) {
                    return ControlFlow::Continue(());
                }
                let picture = decode(role, &msg, &mut compressed);
                let sent = tx.send((at, picture));
                at += 1;
                if sent.is_err() || at >= entries.len() {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            });
            if let Err(e) = result {
                let _ = tx.send((at, Err(crate::error::chain(&e))));
            }
        });
        self.reading = Some(rx);
        self.next = k;
    }

    /// The frame at entry `k` (reading on from where the reader is).
    fn read_frame(&mut self) -> Result<Option<SourceFrame>, SourceError> {
        let k = self.next;
        if k >= self.entries.len() {
            return Ok(None);
        }
        if self.reading.is_none() {
            self.start(k);
        }
        loop {
            let Some(rx) = &self.reading else { return Ok(None) };
            let Ok((at, picture)) = rx.recv() else {
                self.reading = None;
                return Ok(None);
            };
            if at < k {
                continue;
            }
            // A damaged picture costs only itself, as a damaged packet of a
            // video does; many in a row are a recording that cannot be read.
            let picture = match picture {
                Ok(p) => {
                    self.bad_in_a_row = 0;
                    p
                }
                Err(e) if self.bad_in_a_row + 1 >= MAX_BAD_PICTURES => {
                    return Err(other(
                        &self.path,
                        format!("frame {at}: {MAX_BAD_PICTURES} pictures in a row cannot be read ({e})"),
                    ));
                }
                Err(_) => {
                    self.bad_in_a_row += 1;
                    None
                }
            };
            let Some(image) = picture else { continue };
            if at > k {
                // A picture that could not be shown (a video packet before
                // its keyframe) was passed over.
                self.next = at;
            }
            let e = self.entries[at];
            let t0 = self.entries[0].stamp;
            let mut frame = SourceFrame::new(at as u64, e.stamp - t0, image);
            frame.clock = Some(e.stamp);
            if let Some(p) = &self.moving {
                frame.calibration = p.at(e.stamp).ok().map(Arc::new);
            }
            self.next = at + 1;
            return Ok(Some(frame));
        }
    }
}

impl FrameSource for RecordingSource {
    fn info(&self) -> &SourceInfo {
        &self.info
    }

    fn next_frame(&mut self) -> Result<Option<SourceFrame>, SourceError> {
        self.steady_frame()
    }

    fn frame_at(&mut self, t: f64) -> Result<Option<SourceFrame>, SourceError> {
        if let Some(s) = &mut self.steady {
            let j = ((t.max(0.0) * s.fps + STAMP_EPS).floor() as usize).min(s.shown.len().saturating_sub(1));
            let e = s.shown.get(j).copied().unwrap_or(0);
            s.next = j;
            if s.last.as_ref().is_none_or(|f| f.index as usize != e) {
                s.last = None;
                self.reading = None;
                self.start(e);
            }
            return self.steady_frame();
        }
        let t0 = self.entries.first().map_or(0.0, |e| e.stamp);
        let k = self
            .entries
            .partition_point(|e| e.stamp - t0 <= t + STAMP_EPS)
            .saturating_sub(1);
        if k != self.next || self.reading.is_none() {
            self.reading = None;
            self.start(k);
        }
        self.read_frame()
    }
}

/// Opens a recording as a frame source (its format-table line's opener).
pub fn open(path: &Path, options: &OpenOptions) -> Result<Box<dyn FrameSource>, SourceError> {
    Ok(Box::new(RecordingSource::open(path, options)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyframes_are_found_in_annex_b_packets() {
        assert!(is_keyframe(&[0, 0, 0, 1, 0x67, 1, 2, 0, 0, 1, 0x65, 9], false));
        assert!(is_keyframe(&[0, 0, 1, 0x65, 0x88], false));
        assert!(!is_keyframe(&[0, 0, 0, 1, 0x41, 0x9a], false));
        assert!(!is_keyframe(&[], false));
        // H.265: an IDR_W_RADL unit (type 19), not a trailing picture (1).
        assert!(is_keyframe(&[0, 0, 1, 19 << 1, 1], true));
        assert!(!is_keyframe(&[0, 0, 1, 1 << 1, 1], true));
    }
}
