//! Joins the parts of one export (`underlay export --segment K/N`) into one
//! file without re-encoding: the packets of every stream copied part after
//! part. Each part starts with a keyframe and carries the whole export's
//! timestamps and its share of the audio (packets starting in its span),
//! so the joined file holds the frames and the audio of the whole export.
//!
//! Written on libavformat's demuxers and muxers (already linked for
//! export) rather than by running ffmpeg's concat demuxer, so that the
//! parts are checked first — all of them, once each, from the same kind of
//! export — and a mistake is named by file, and nothing is written unless
//! the whole join succeeds.

use std::path::{Path, PathBuf};

use ffmpeg_next as ffmpeg;
use ffmpeg_next::{Dictionary, Packet, Rational, codec, ffi, media};

use super::{VideoError, init, open_input};

/// Part `index` of `count` (from 1) of an export: the frames between two
/// times every part computes the same way — the export's span cut into
/// `count` equal lengths — encoded on their own (each part starts with a
/// keyframe, its audio is the packets starting in its span), with the
/// whole export's timestamps, so that `underlay concat` joins the parts
/// without re-encoding into the frames of the whole export.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// Which part, from 1.
    pub index: u32,
    /// How many parts.
    pub count: u32,
}

impl Segment {
    /// The metadata comment a part is written with, read back by `concat`.
    pub fn comment(&self) -> String {
        format!("underlay segment {}/{}", self.index, self.count)
    }

    /// The part a file's metadata comment names, if it names one.
    pub fn from_comment(comment: &str) -> Option<Segment> {
        comment.strip_prefix("underlay segment ")?.parse().ok()
    }
}

impl std::str::FromStr for Segment {
    type Err = String;

    /// `K/N` with 1 ≤ K ≤ N ≤ 100000.
    fn from_str(s: &str) -> Result<Segment, String> {
        let bad = || format!("{s:?} is not a part: give K/N, part K (from 1) of N, e.g. 2/4");
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let (index, count): (u32, u32) = (
            k.trim().parse().map_err(|_| bad())?,
            n.trim().parse().map_err(|_| bad())?,
        );
        if index == 0 || index > count || count > 100_000 {
            return Err(bad());
        }
        Ok(Segment { index, count })
    }
}

impl std::fmt::Display for Segment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// Errors joining parts.
#[derive(Debug, thiserror::Error)]
pub enum ConcatError {
    #[error("give the parts to join (the files `underlay export --segment K/N` wrote)")]
    NoParts,
    #[error(transparent)]
    Video(#[from] VideoError),
    #[error("{path}: not a part written by `underlay export --segment K/N` (its metadata names no part)")]
    NotAPart { path: PathBuf },
    #[error("{path}: part {index} of {count}, but {first} is a part of {first_count}")]
    OtherCount {
        path: PathBuf,
        index: u32,
        count: u32,
        first: PathBuf,
        first_count: u32,
    },
    #[error("{path} and {other} are both part {index} of {count}")]
    Twice {
        path: PathBuf,
        other: PathBuf,
        index: u32,
        count: u32,
    },
    #[error("part {index} of {count} is missing (given: {given})")]
    Missing { index: u32, count: u32, given: String },
    #[error("{path}: {what} differs from {first}'s: the parts come from different exports")]
    Mismatch {
        path: PathBuf,
        first: PathBuf,
        what: String,
    },
    #[error(
        "{path}: stream {stream} starts at {start:.3} s, not after the previous part's last packet at {previous:.3} s"
    )]
    Overlap {
        path: PathBuf,
        stream: usize,
        start: f64,
        previous: f64,
    },
    #[error("{path}: reading packets")]
    Read {
        path: PathBuf,
        #[source]
        source: ffmpeg::Error,
    },
    #[error("{path}: cannot write the joined file: {message}")]
    Write { path: PathBuf, message: String },
    #[error("{path}: cannot write the output")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// What a join did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct JoinReport {
    /// Parts joined.
    pub parts: usize,
    /// Video packets (frames) written.
    pub frames: u64,
    /// Packets of other streams (audio) written.
    pub other_packets: u64,
}

/// One part opened, with its place.
struct Part {
    path: PathBuf,
    segment: Segment,
    input: ffmpeg::format::context::Input,
}

/// Joins `parts` (in any order: their metadata says which is which) into
/// `output`, written to a temporary file renamed over it when complete.
pub fn join(parts: &[PathBuf], output: &Path) -> Result<JoinReport, ConcatError> {
    init();
    if parts.is_empty() {
        return Err(ConcatError::NoParts);
    }
    crate::files::refuse_overwriting_inputs(output, parts.iter().map(PathBuf::as_path)).map_err(|e| {
        ConcatError::Write {
            path: e.output,
            message: format!("refusing to overwrite the part {}", e.input.display()),
        }
    })?;
    let mut opened = Vec::with_capacity(parts.len());
    for path in parts {
        let input = open_input(path)?;
        let segment = input
            .metadata()
            .get("comment")
            .and_then(Segment::from_comment)
            .ok_or_else(|| ConcatError::NotAPart { path: path.clone() })?;
        opened.push(Part {
            path: path.clone(),
            segment,
            input,
        });
    }
    let mut ordered = in_order(opened)?;
    let first = &ordered[0];
    for p in &ordered[1..] {
        same_streams(first, p)?;
    }
    let sink = crate::files::Sink::open(output, None).map_err(|source| ConcatError::Io {
        path: output.to_owned(),
        source,
    })?;
    let report = write_joined(&mut ordered, sink.path(), output)?;
    sink.finish().map_err(|source| ConcatError::Io {
        path: output.to_owned(),
        source,
    })?;
    Ok(report)
}

/// The parts sorted by their number, every one of 1..=N there once.
fn in_order(mut parts: Vec<Part>) -> Result<Vec<Part>, ConcatError> {
    let count = parts[0].segment.count;
    for p in &parts[1..] {
        if p.segment.count != count {
            return Err(ConcatError::OtherCount {
                path: p.path.clone(),
                index: p.segment.index,
                count: p.segment.count,
                first: parts[0].path.clone(),
                first_count: count,
            });
        }
    }
    parts.sort_by_key(|p| p.segment.index);
    for w in parts.windows(2) {
        if w[0].segment.index == w[1].segment.index {
            return Err(ConcatError::Twice {
                path: w[1].path.clone(),
                other: w[0].path.clone(),
                index: w[0].segment.index,
                count,
            });
        }
    }
    let given = || {
        parts
            .iter()
            .map(|p| p.segment.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    for (want, p) in (1..=count).zip(parts.iter().map(|p| p.segment.index).chain(std::iter::repeat(0))) {
        if p != want {
            return Err(ConcatError::Missing {
                index: want,
                count,
                given: given(),
            });
        }
    }
    Ok(parts)
}

/// Refuses a part whose streams cannot continue the first part's.
fn same_streams(first: &Part, p: &Part) -> Result<(), ConcatError> {
    let mismatch = |what: String| ConcatError::Mismatch {
        path: p.path.clone(),
        first: first.path.clone(),
        what,
    };
    let (a, b): (Vec<_>, Vec<_>) = (first.input.streams().collect(), p.input.streams().collect());
    if a.len() != b.len() {
        return Err(mismatch(format!(
            "the number of streams ({} against {})",
            b.len(),
            a.len()
        )));
    }
    for (i, (sa, sb)) in a.iter().zip(&b).enumerate() {
        let (pa, pb) = (sa.parameters(), sb.parameters());
        // SAFETY: valid codec parameters of open streams.
        let (ra, rb) = unsafe { (&*pa.as_ptr(), &*pb.as_ptr()) };
        if pa.id() != pb.id() {
            return Err(mismatch(format!("stream {i}'s codec")));
        }
        if (ra.width, ra.height, ra.format, ra.sample_rate)
            != (rb.width, rb.height, rb.format, rb.sample_rate)
        {
            return Err(mismatch(format!("stream {i}'s picture size or sample format")));
        }
        // SAFETY: extradata holds extradata_size bytes when not null.
        let extra = |r: &ffi::AVCodecParameters| unsafe {
            if r.extradata.is_null() || r.extradata_size <= 0 {
                &[][..]
            } else {
                std::slice::from_raw_parts(r.extradata, r.extradata_size as usize)
            }
        };
        if extra(ra) != extra(rb) {
            return Err(mismatch(format!(
                "stream {i}'s codec setup (the encoder's settings)"
            )));
        }
    }
    Ok(())
}

fn seconds(ts: i64, tb: Rational) -> f64 {
    ts as f64 * f64::from(tb.numerator()) / f64::from(tb.denominator()).max(1.0)
}

/// Copies every part's packets into `path` (the temporary file of
/// `output`, whose name the errors use).
fn write_joined(parts: &mut [Part], path: &Path, output: &Path) -> Result<JoinReport, ConcatError> {
    let write_err = |message: String| ConcatError::Write {
        path: output.to_owned(),
        message,
    };
    let mut octx = ffmpeg::format::output(path).map_err(|e| write_err(e.to_string()))?;
    let first = &parts[0];
    let mut video = Vec::new();
    for s in first.input.streams() {
        let mut ost = octx
            .add_stream(ffmpeg::encoder::find(codec::Id::None))
            .map_err(|e| write_err(format!("cannot add a stream: {e}")))?;
        ost.set_parameters(s.parameters());
        ost.set_time_base(s.time_base());
        ost.set_avg_frame_rate(s.avg_frame_rate());
        // SAFETY: the new stream's parameters; a zero tag lets the muxer
        // pick the one its container uses.
        unsafe { (*ost.parameters().as_mut_ptr()).codec_tag = 0 };
        video.push(s.parameters().medium() == media::Type::Video);
    }
    let mut opts = Dictionary::new();
    if crate::video::is_known_container(output)
        && output
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| matches!(e.to_ascii_lowercase().as_str(), "mp4" | "mov" | "m4v"))
    {
        opts.set("movflags", "+faststart");
    }
    octx.write_header_with(opts)
        .map_err(|e| write_err(format!("cannot write the header: {e}")))?;
    let out_tb: Vec<Rational> = (0..video.len())
        .map(|i| octx.stream(i).map_or(Rational::new(1, 90_000), |s| s.time_base()))
        .collect();
    let mut report = JoinReport {
        parts: parts.len(),
        ..JoinReport::default()
    };
    // The last decoding time written per stream, in seconds.
    let mut last = vec![f64::NEG_INFINITY; video.len()];
    for part in parts.iter_mut() {
        let in_tb: Vec<Rational> = part.input.streams().map(|s| s.time_base()).collect();
        let mut started = vec![false; video.len()];
        let mut pkt = Packet::empty();
        loop {
            // av_read_frame does not free what the packet held.
            // SAFETY: a valid packet, left blank for the read.
            unsafe { ffi::av_packet_unref(ffmpeg::packet::Mut::as_mut_ptr(&mut pkt)) };
            match pkt.read(&mut part.input) {
                Ok(()) => {}
                Err(ffmpeg::Error::Eof) => break,
                Err(source) => {
                    return Err(ConcatError::Read {
                        path: part.path.clone(),
                        source,
                    });
                }
            }
            let i = pkt.stream();
            let (Some(&tb), Some(&otb)) = (in_tb.get(i), out_tb.get(i)) else {
                continue;
            };
            let at = pkt.dts().or(pkt.pts()).map(|t| seconds(t, tb));
            if let Some(at) = at {
                if !started[i] && at <= last[i] {
                    return Err(ConcatError::Overlap {
                        path: part.path.clone(),
                        stream: i,
                        start: at,
                        previous: last[i],
                    });
                }
                last[i] = at;
            }
            started[i] = true;
            pkt.set_position(-1);
            pkt.rescale_ts(tb, otb);
            pkt.write_interleaved(&mut octx)
                .map_err(|e| write_err(format!("{}: {e}", part.path.display())))?;
            if video[i] {
                report.frames += 1;
            } else {
                report.other_packets += 1;
            }
        }
    }
    octx.write_trailer()
        .map_err(|e| write_err(format!("cannot finish the file: {e}")))?;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_are_named_k_of_n_and_garbage_is_refused() {
        let s: Segment = "2/4".parse().unwrap();
        assert_eq!((s.index, s.count), (2, 4));
        assert_eq!(Segment::from_comment(&s.comment()), Some(s));
        assert_eq!(s.to_string(), "2/4");
        for bad in [
            "",
            "/",
            "0/4",
            "5/4",
            "1/0",
            "a/b",
            "1/2/3",
            "-1/4",
            "1/100001",
            "4294967296/1",
        ] {
            assert!(bad.parse::<Segment>().is_err(), "{bad}");
        }
        assert_eq!(Segment::from_comment("made by underlay"), None);
        // Random bytes never panic and rarely parse.
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let len = (x % 12) as usize;
            let text: String = (0..len)
                .map(|i| b"0123456789/ x-+"[((x >> (4 * i)) % 15) as usize] as char)
                .collect();
            if let Ok(s) = text.parse::<Segment>() {
                assert!(1 <= s.index && s.index <= s.count, "{text:?}");
            }
            let _ = Segment::from_comment(&format!("underlay segment {text}"));
        }
    }

    #[test]
    fn nothing_to_join_and_missing_files_are_clear_errors() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("j.mp4");
        assert!(matches!(join(&[], &out), Err(ConcatError::NoParts)));
        let e = join(&[dir.path().join("nope.mp4")], &out)
            .unwrap_err()
            .to_string();
        assert!(e.contains("nope.mp4"), "{e}");
        let junk = dir.path().join("junk.mp4");
        std::fs::write(&junk, b"\x00\x00\x00\x18ftypmp42 garbage garbage").unwrap();
        let e = join(std::slice::from_ref(&junk), &out).unwrap_err().to_string();
        assert!(e.contains("junk.mp4"), "{e}");
        assert!(!out.exists());
    }
}
