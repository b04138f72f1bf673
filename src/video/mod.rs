//! Video in and out: decoding any file FFmpeg reads into RGB frames with
//! their presentation times, and encoding RGB frames (H.264 in MP4) or
//! floor masks (lossless FFV1 in Matroska) with exact timestamps. Frame
//! sources of every kind ([`source`]), the background picture of a fixed
//! camera ([`background`]), the mapping of frame times to
//! log times ([`TimeMap`]) and the joining of an export's parts
//! ([`mod@concat`]) live here too.
//!
//! Times are seconds from the start of the video stream, taken from the
//! presentation timestamps (variable frame rate is respected, never
//! frame index ÷ rate). The decoder honours the rotation a phone stores
//! in the stream's display matrix, so frames come out upright.

mod audio;
pub mod background;
mod clock;
pub mod coded;
pub mod concat;
mod convert;
mod decode;
mod encode;
mod ffmpeg;
pub mod index;
pub(crate) mod messages;
mod planes;
pub mod source;
pub mod still;
mod time_map;
pub mod yuv;

pub use clock::{ClockError, ClockTable};
pub use concat::Segment;
pub use decode::{Backlog, Decoder, Stop};
pub use encode::{AudioWindow, Encoder, EncoderSettings};
pub use ffmpeg::{StepError, VideoError, VideoInfo, is_known_container, set_ffmpeg_quiet};
pub(crate) use ffmpeg::{init, open_input, open_live_input, ratio};
pub use index::SeekIndex;
pub use planes::{Picture, Picture420, Planes, PlanesMut, Yuv420};
pub use source::SourceFrame;
pub use time_map::{TimeArg, TimeArgError, TimeMap};

// Export decodes and encodes on threads of their own.
const _: () = {
    const fn send<T: Send>() {}
    send::<Decoder>();
    send::<Encoder>();
};

#[cfg(test)]
mod tests;
