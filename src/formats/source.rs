//! Opening a file as a frame source through the format table: the first
//! format that opens the file's content as a source (a still picture, a
//! match rendered from its record) opens it; anything else is given to
//! FFmpeg (a video). A match seen through an agent's camera finds that
//! camera among the files beside it here (`super::view`).

use std::path::Path;

use super::head::HeadBuf;
use super::table::source_format;
use crate::input::Format;
use crate::video::source::{FrameSource, OpenOptions, SourceError, open_video};

/// Opens `path` as a frame source; with [`OpenOptions::agent_view`], seen
/// through that agent's camera, found among [`OpenOptions::beside`]
/// (`super::view`).
pub fn open_source(path: &Path, options: &OpenOptions) -> Result<Box<dyn FrameSource>, SourceError> {
    let format = source_format_of(path)?;
    if let (Some(spec), None) = (&options.agent_view, &options.camera) {
        let not_a_match = || -> crate::video::source::BoxError {
            "only a match whose agents' logs give their cameras (a 3D monitor log) can be seen through an agent's \
             camera"
                .into()
        };
        // A match whose agents' files give cameras (read beside it).
        let seen_by_agents = |f: &&Format| {
            f.source.is_some()
                && super::FORMATS
                    .iter()
                    .any(|a| a.track.is_some() && a.beside == Some(f.id))
        };
        let camera = match format.filter(seen_by_agents) {
            Some(f) => super::view::agent_camera(path, f, spec, &options.beside).map_err(|e| e.into()),
            None => Err(not_a_match()),
        }
        .map_err(|source| SourceError::Other {
            path: path.to_owned(),
            kind: "a match seen through an agent's camera",
            source,
        })?;
        let with_camera = OpenOptions {
            camera: Some(camera),
            ..options.clone()
        };
        return open_source(path, &with_camera);
    }
    match format.and_then(|f| f.source) {
        Some(open) => open(path, options),
        None => {
            // FFmpeg waits in silence for a FIFO's writer: say what for.
            let _note = crate::files::FifoWait::start(path);
            open_video(path, options)
        }
    }
}

/// The format that opens `path` as a frame source (`None`: FFmpeg's, a
/// video or picture it decodes, and whatever is not a regular file: a
/// pipe's bytes can be read only once, by the one who decodes them).
pub fn source_format_of(path: &Path) -> Result<Option<&'static Format>, SourceError> {
    if let Some(f) = super::table::seekable_by_name(path) {
        return Err(SourceError::Other {
            path: path.to_owned(),
            kind: f.name,
            source: super::table::seekable_pipe_message(f).into(),
        });
    }
    let dir = std::fs::metadata(path).is_ok_and(|m| m.is_dir());
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        return Ok(None);
    }
    let head = HeadBuf::of_file(path).map_err(|source| SourceError::Io {
        path: path.to_owned(),
        source,
    })?;
    let head = head.head(Some(path));
    if let Some(f) = super::table::gzipped_seekable(&head) {
        return Err(SourceError::Other {
            path: path.to_owned(),
            kind: f.name,
            source: super::table::gzipped_seekable_message(f).into(),
        });
    }
    match source_format(&head) {
        // A folder no format opens: say what is inside it, not FFmpeg's
        // "Is a directory".
        None if dir => Err(SourceError::Other {
            path: path.to_owned(),
            kind: "a folder",
            source: super::table::folder_problem(path).into(),
        }),
        f => Ok(f),
    }
}

/// Whether `path` is its own log too (a match's record: the picture and
/// the drawings over it), so that opening it alone shows both.
pub fn is_own_log(path: &Path) -> bool {
    source_format_of(path).ok().flatten().is_some_and(Format::is_both)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::image::RgbImage;

    #[test]
    fn open_picks_the_still_format_and_falls_back_to_ffmpeg() {
        let dir = tempfile::tempdir().unwrap();
        let png = dir.path().join("p.png");
        crate::video::still::save_rgb(&png, &RgbImage::from_elem((6, 8, 3), 50)).unwrap();
        let mut s = open_source(&png, &OpenOptions::default()).unwrap();
        assert_eq!(
            (s.info().width, s.info().height, s.info().frame_count),
            (8, 6, Some(1))
        );
        assert!(s.next_frame().unwrap().is_some());
        let junk = dir.path().join("junk.mp4");
        std::fs::write(&junk, b"not a video at all").unwrap();
        let e = open_source(&junk, &OpenOptions::default()).err().unwrap();
        assert!(matches!(e, SourceError::Video(_)), "{e}");
        assert!(e.to_string().contains("junk.mp4"), "{e}");
    }

    /// Opens `bytes` as a file and reads a few frames: an error or frames,
    /// never a panic.
    fn open_bytes(dir: &Path, bytes: &[u8]) {
        let p = dir.join("fuzz.bin");
        std::fs::write(&p, bytes).unwrap();
        if let Ok(mut s) = open_source(&p, &OpenOptions::default()) {
            for _ in 0..3 {
                if !matches!(s.next_frame(), Ok(Some(_))) {
                    break;
                }
            }
            let _ = s.frame_at(0.5);
        }
    }

    fn small_png() -> Vec<u8> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.png");
        let img = RgbImage::from_shape_fn((5, 7, 3), |(y, x, c)| (y * 40 + x * 9 + c) as u8);
        crate::video::still::save_rgb(&p, &img).unwrap();
        std::fs::read(p).unwrap()
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: crate::testing::fuzz_cases(),
            ..proptest::prelude::ProptestConfig::default()
        })]

        /// Random bytes, gzip-looking or not, never panic.
        #[test]
        fn random_bytes_never_panic(
            bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..600),
            gzip_magic in proptest::prelude::any::<bool>(),
        ) {
            let dir = tempfile::tempdir().unwrap();
            let mut bytes = bytes;
            if gzip_magic {
                bytes.splice(0..0, [0x1f, 0x8b, 8, 0]);
            }
            open_bytes(dir.path(), &bytes);
        }

        /// A valid picture with bytes changed, cut or its magic kept never panics.
        #[test]
        fn mutated_pictures_never_panic(
            edits in proptest::collection::vec((proptest::prelude::any::<usize>(), proptest::prelude::any::<u8>()), 0..8),
            cut in proptest::prelude::any::<usize>(),
        ) {
            let dir = tempfile::tempdir().unwrap();
            let mut bytes = small_png();
            for (at, v) in edits {
                let n = bytes.len();
                bytes[at % n] = v;
            }
            let keep = 8 + cut % (bytes.len() - 7);
            bytes.truncate(keep);
            open_bytes(dir.path(), &bytes);
        }
    }
}
