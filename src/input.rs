//! What an input format is: the one description every reader gives of the
//! files it reads, and that the format table ([`crate::formats`]) lists.
//!
//! A [`Format`] says how its files are recognised (from their first bytes,
//! decompressed: a [`Head`]), whether they open as a visualization log
//! ([`LogReader`]), as a frame source (a rendered match), or both, what
//! they are read beside ([`Format::beside`]: a 2D agent's debug log beside
//! its match's game log) and what they give the files read beside them
//! ([`Provides`]), and whether they carry camera calibrations
//! ([`Format::cameras`]) or a moving camera of their own
//! ([`Format::track`]: an agent's head camera). The readers (`thesis`, `ssl`, `sim2d`, `sim3d`)
//! each declare theirs next to their code; only the table names them all.
//!
//! This module sits between the model and the readers: it names the
//! model's types ([`Log`], [`ReadError`]) and the frame source's
//! ([`OpenFn`]), and no reader.

use std::any::Any;
use std::io::BufRead;
use std::path::Path;
use std::sync::Arc;

use crate::calib::Calibration;
use crate::calib::track::CameraTrack;
use crate::log::{Log, LogError, ReadError};
use crate::video::source::OpenFn;

/// An error of a reader's own kind.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Bytes of a file's start that recognisers see (decompressed when the
/// file is gzip'ed): a 3D-league perception log needs its first line.
pub const HEAD_BYTES: usize = 4096;

/// How many bytes [`Head::start`] holds: enough for every magic number.
pub const START_BYTES: usize = 16;

/// What a recogniser sees of a file (or of a folder: [`Head::dir`]).
#[derive(Clone, Copy, Debug)]
pub struct Head<'a> {
    /// The file, when the bytes come from one (a name can tell what the
    /// content cannot).
    pub path: Option<&'a Path>,
    /// Its first bytes, at most [`HEAD_BYTES`], decompressed when `gzip`.
    pub bytes: &'a [u8],
    /// The file is gzip-compressed.
    pub gzip: bool,
    /// The path is a folder (and `bytes` empty): a recording that is a
    /// folder of files (rosbag2's).
    pub dir: bool,
}

impl<'a> Head<'a> {
    /// The first [`START_BYTES`] bytes: where magic numbers are.
    pub fn start(&self) -> &'a [u8] {
        &self.bytes[..self.bytes.len().min(START_BYTES)]
    }
}

/// Options that change what a log is read as (a session's settings).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReadOptions {
    /// The player whose sensing is drawn in detail (`l10`, `r3`): a 2D
    /// game log's observer.
    pub observer: Option<String>,
    /// A recording's world frame (`map`, `odom`): where its drawings are
    /// placed; the root of its transform tree when `None`.
    pub world: Option<String>,
    /// A recording's picture topic (`/left/image_raw`; its first picture
    /// topic when `None`): drawings in another camera's pixels are left out.
    pub topic: Option<String>,
    /// The levels of entities' primitives, set after reading (a level
    /// mapping file).
    pub levels: Option<crate::log::levels::LevelMap>,
}

/// What a file read beside others gives them (a game log's parsed match),
/// for the reader that declared it [`Format::beside`] to downcast.
pub type Companion = dyn Any + Send + Sync;

/// What a log reader is told besides the bytes.
#[derive(Clone, Copy)]
pub struct ReadContext<'a> {
    /// The file, when there is one (an agent's log names its agent).
    pub path: Option<&'a Path>,
    /// The file's length, when it is a regular file read as it is.
    pub len: Option<u64>,
    /// The bytes come out of gzip (offsets in messages are decompressed).
    pub decompressed: bool,
    /// What the file this format is read beside gave, when one was read.
    pub beside: Option<&'a Companion>,
    /// The session's options.
    pub options: &'a ReadOptions,
}

impl std::fmt::Debug for ReadContext<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadContext")
            .field("path", &self.path)
            .field("len", &self.len)
            .field("decompressed", &self.decompressed)
            .field("beside", &self.beside.is_some())
            .field("options", &self.options)
            .finish()
    }
}

/// How a format reads a log.
#[derive(Clone, Copy, Debug)]
pub enum LogReader {
    /// From a stream positioned at the file's first byte (gzip undone),
    /// record by record, in bounded memory.
    Stream(fn(&mut dyn BufRead, &ReadContext<'_>) -> Result<Log, ReadError>),
    /// From the whole file, read first (gzip undone) within the input
    /// budget ([`crate::bounded`]).
    Whole(fn(&[u8], &ReadContext<'_>) -> Result<Log, ReadError>),
    /// From the file itself, by seeking (a container with an index: a ROS 2
    /// recording); never from a pipe or out of gzip.
    File(fn(&Path, &ReadContext<'_>) -> Result<Log, ReadError>),
}

/// What a format gives the files read beside it: parsed once, shared.
#[derive(Clone, Copy, Debug)]
pub struct Provides {
    /// Reads the file at a path into what the others are given (errors
    /// name the file).
    pub parse: fn(&Path, &ReadOptions) -> Result<Arc<Companion>, LogError>,
    /// The file's own log, drawn from what `parse` made.
    pub log: fn(&Companion, &ReadOptions) -> Log,
}

/// A camera calibration a log carries, by the camera's number.
#[derive(Clone, Debug)]
pub struct Camera {
    /// The camera's number in the log.
    pub id: u32,
    /// Its calibration, or why it cannot be one.
    pub calibration: Result<Calibration, String>,
}

/// Reads the camera calibrations a file carries.
pub type CameraReader = fn(&Path) -> Result<Vec<Camera>, LogError>;

/// The camera an agent's file gives: who the agent is and where its
/// camera was over time.
#[derive(Clone, Debug)]
pub struct AgentCamera {
    /// The agent's team name ("" when not known).
    pub team: String,
    /// Its side, 0 left and 1 right, when known.
    pub side: Option<u8>,
    /// Its number, when known.
    pub unum: Option<u32>,
    /// Its camera.
    pub track: CameraTrack,
}

/// Reads the camera an agent's file gives, beside what the file it is
/// read beside gave (its match's monitor log), when there is one. Errors
/// name the file.
pub type TrackReader = fn(&Path, Option<&Companion>) -> Result<AgentCamera, LogError>;

/// Lists what a file holds besides its log, one line each.
pub type ContentsReader = fn(&Path) -> Result<Vec<String>, String>;

/// One kind of input file.
#[derive(Clone, Copy, Debug)]
pub struct Format {
    /// A short name, for `underlay formats` and [`Format::beside`].
    pub id: &'static str,
    /// What the format is, as `log info` prints it.
    pub name: &'static str,
    /// How its files are recognised, for `underlay formats` and for the
    /// message about a file nothing recognises.
    pub signature: &'static str,
    /// The usual file names (`*.rcg`, `*.log.gz`), for `underlay formats`.
    pub names: &'static str,
    /// Whether a file is of this kind (cheap and certain: a magic number,
    /// a header line). Formats are asked in the table's order.
    pub recognise: fn(&Head<'_>) -> bool,
    /// Reads the file as a visualization log.
    pub log: Option<LogReader>,
    /// Opens the file as a frame source (a match rendered from its record).
    pub source: Option<OpenFn>,
    /// The [`Format::id`] of a file this one is read beside when it is
    /// among the same inputs (an agent's log beside its match's game log).
    pub beside: Option<&'static str>,
    /// What it gives the files read beside it.
    pub provides: Option<Provides>,
    /// The camera calibrations its files carry.
    pub cameras: Option<CameraReader>,
    /// The moving camera its files give (an agent's head camera), which a
    /// rendered match can be seen through.
    pub track: Option<TrackReader>,
    /// What a file holds besides its log, as `log info` lists it (a
    /// recording's topics), one line each; or why it cannot say.
    pub contents: Option<ContentsReader>,
    /// The most (decompressed) bytes one of its files may deliver unless
    /// `--max-input` says otherwise: its model's memory is a multiple of
    /// its input (`docs/PERFORMANCE.md`), so formats that cost many times
    /// their input allow less.
    pub max_input: u64,
}

impl Format {
    /// A format with nothing but a name and a recogniser; the rest is
    /// filled in with struct update syntax.
    pub const fn new(
        id: &'static str,
        name: &'static str,
        signature: &'static str,
        names: &'static str,
        recognise: fn(&Head<'_>) -> bool,
    ) -> Format {
        Format {
            id,
            name,
            signature,
            names,
            recognise,
            log: None,
            source: None,
            beside: None,
            provides: None,
            cameras: None,
            track: None,
            contents: None,
            max_input: crate::bounded::DEFAULT_MAX_INPUT,
        }
    }

    /// Opens as a log and as a frame source.
    pub fn is_both(&self) -> bool {
        self.log.is_some() && self.source.is_some()
    }
}
