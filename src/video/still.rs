//! Still images (PNG, JPEG, BMP, TIFF, WebP, … whatever FFmpeg reads) read
//! into and written from packed RGB or gray buffers, with FFmpeg's image
//! decoders and encoders: the project needs no second image library, and
//! the program starts faster without OpenCV's image codecs and all the
//! libraries they pull in. Pictures are read upright: an EXIF orientation
//! (phones and cameras store many photos sideways) is applied.

use crate::video::StepError;
use std::path::Path;

use ffmpeg_next as ffmpeg;
use ffmpeg_next::ffi::{self, AVPixelFormat};
use ffmpeg_next::{codec, frame, media};

use super::convert::{Colorimetry, Planes, Scaler};
use super::init;

/// Pixel layout of a packed still.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StillFormat {
    /// 3 bytes per pixel, R G B.
    Rgb,
    /// 1 byte per pixel.
    Gray,
}

impl StillFormat {
    fn av(self) -> AVPixelFormat {
        match self {
            StillFormat::Rgb => AVPixelFormat::AV_PIX_FMT_RGB24,
            StillFormat::Gray => AVPixelFormat::AV_PIX_FMT_GRAY8,
        }
    }

    fn bytes(self) -> usize {
        match self {
            StillFormat::Rgb => 3,
            StillFormat::Gray => 1,
        }
    }
}

/// Reads the first picture of `path` as `(width, height, packed pixels)`.
/// Errors carry FFmpeg's own explanation ("Invalid PNG signature …").
pub fn read_still(path: &Path, format: StillFormat) -> Result<(usize, usize, Vec<u8>), StepError> {
    init();
    let (read, messages) = super::messages::capture(|| decode_still(path, format));
    read.map_err(|e| StepError {
        what: super::messages::explained(e.what, &messages),
        source: e.source,
    })
}

fn decode_still(path: &Path, format: StillFormat) -> Result<(usize, usize, Vec<u8>), StepError> {
    let mut input = ffmpeg::format::input(path).map_err(|e| StepError::with("cannot open", e))?;
    let stream = input
        .streams()
        .best(media::Type::Video)
        .ok_or_else(|| "no picture in this file".to_string())?;
    let index = stream.index();
    let ctx = codec::context::Context::from_parameters(stream.parameters()).map_err(|e| e.to_string())?;
    let mut dec = ctx
        .decoder()
        .video()
        .map_err(|e| StepError::with("cannot decode", e))?;
    let mut raw = frame::Video::empty();
    let mut got = false;
    for (s, packet) in input.packets() {
        if s.index() != index {
            continue;
        }
        if dec.send_packet(&packet).is_ok() && dec.receive_frame(&mut raw).is_ok() {
            got = true;
            break;
        }
    }
    if !got {
        let _ = dec.send_eof();
        got = dec.receive_frame(&mut raw).is_ok();
    }
    if !got {
        return Err("no picture could be decoded".into());
    }
    let (w, h) = (raw.width(), raw.height());
    // The one limit of every picture (export and the viewer decode with it).
    crate::image::check_picture_size(w, h)?;
    let (wu, hu) = (w as usize, h as usize);
    let row = wu * format.bytes();
    let mut out = vec![0u8; row * hu];
    let src_fmt: AVPixelFormat = raw.format().into();
    let mut color = Colorimetry::of_frame(&raw);
    // RGB, gray and palette pictures use every level.
    color.full_range |= !is_yuv(src_fmt);
    let mut cache = None;
    let scaler = Scaler::cached(&mut cache, src_fmt, w, h, format.av(), w, h, color)?;
    // SAFETY: the source planes belong to a decoded frame of the size and
    // format the scaler was made for; `out` holds h rows of `row` bytes.
    unsafe {
        scaler.run(
            &Planes::of_frame(raw.as_ptr()),
            &Planes::packed(out.as_mut_ptr(), row),
        );
    }
    // Phone and camera JPEGs are often stored sideways with an EXIF
    // orientation saying how to show them; FFmpeg passes the tag on.
    let orientation = raw
        .metadata()
        .get("Orientation")
        .and_then(|v| v.trim().parse::<u8>().ok())
        .unwrap_or(1);
    Ok(orient(wu, hu, format.bytes(), out, orientation))
}

/// Turns a packed picture upright as EXIF orientation `o` (1–8) says;
/// other values leave it as stored.
fn orient(w: usize, h: usize, bpp: usize, data: Vec<u8>, o: u8) -> (usize, usize, Vec<u8>) {
    if !(2..=8).contains(&o) {
        return (w, h, data);
    }
    // Orientations 5–8 swap width and height.
    let (ow, oh) = if o >= 5 { (h, w) } else { (w, h) };
    let mut out = vec![0u8; data.len()];
    for y in 0..oh {
        for x in 0..ow {
            // The stored pixel shown at (x, y).
            let (sx, sy) = match o {
                2 => (w - 1 - x, y),
                3 => (w - 1 - x, h - 1 - y),
                4 => (x, h - 1 - y),
                5 => (y, x),
                6 => (y, h - 1 - x),
                7 => (w - 1 - y, h - 1 - x),
                _ => (w - 1 - y, x),
            };
            let (d, s) = ((y * ow + x) * bpp, (sy * w + sx) * bpp);
            out[d..d + bpp].copy_from_slice(&data[s..s + bpp]);
        }
    }
    (ow, oh, out)
}

/// Whether pictures in `fmt` are YUV (so may be limited range).
fn is_yuv(fmt: AVPixelFormat) -> bool {
    // SAFETY: FFmpeg's static descriptor table; null for unknown formats.
    let desc = unsafe { ffi::av_pix_fmt_desc_get(fmt) };
    if desc.is_null() {
        return false;
    }
    // SAFETY: non-null pointer into the static table.
    let (flags, components) = unsafe { ((*desc).flags, (*desc).nb_components) };
    flags & ffi::AV_PIX_FMT_FLAG_RGB as u64 == 0 && components >= 3
}

/// Writes packed pixels as a still whose kind the extension of `path`
/// picks: `.png` (lossless; the default use), `.jpg`/`.jpeg`, `.bmp`,
/// `.tif`/`.tiff`.
pub fn write_still(
    path: &Path,
    width: usize,
    height: usize,
    format: StillFormat,
    data: &[u8],
) -> Result<(), StepError> {
    init();
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let (id, pix) = match (ext.as_str(), format) {
        ("png", _) => (codec::Id::PNG, format.av()),
        ("tif" | "tiff", _) => (codec::Id::TIFF, format.av()),
        ("bmp", StillFormat::Rgb) => (codec::Id::BMP, AVPixelFormat::AV_PIX_FMT_BGR24),
        ("bmp", StillFormat::Gray) => (codec::Id::BMP, AVPixelFormat::AV_PIX_FMT_GRAY8),
        ("jpg" | "jpeg", _) => (codec::Id::MJPEG, AVPixelFormat::AV_PIX_FMT_YUVJ444P),
        _ => {
            return Err(StepError::new(format!(
                "cannot write a .{ext} picture (use .png, .jpg, .bmp or .tiff)"
            )));
        }
    };
    if width == 0 || height == 0 || data.len() < width * height * format.bytes() {
        return Err(StepError::new(format!(
            "a {width}×{height} picture has no pixels to write"
        )));
    }
    let codec = ffmpeg::encoder::find(id).ok_or_else(|| format!("this FFmpeg cannot write {}", id.name()))?;
    let mut enc = codec::context::Context::new_with_codec(codec)
        .encoder()
        .video()
        .map_err(|e| e.to_string())?;
    enc.set_width(width as u32);
    enc.set_height(height as u32);
    enc.set_format(pix.into());
    enc.set_time_base((1, 25));
    if id == codec::Id::MJPEG {
        enc.set_color_range(ffmpeg::color::Range::JPEG);
        // Quality about 95 %: qscale 2.
        enc.set_flags(codec::Flags::QSCALE);
        enc.set_global_quality(2 * ffi::FF_QP2LAMBDA);
    }
    let mut enc = enc
        .open_as(codec)
        .map_err(|e| StepError::with(format!("cannot set up the {} encoder", id.name()), e))?;
    let mut picture = frame::Video::new(pix.into(), width as u32, height as u32);
    if id == codec::Id::MJPEG {
        picture.set_color_range(ffmpeg::color::Range::JPEG);
        // SAFETY: a plain field of a valid frame.
        unsafe { (*picture.as_mut_ptr()).quality = 2 * ffi::FF_QP2LAMBDA };
    }
    let src_row = width * format.bytes();
    let mut cache = None;
    let color = Colorimetry {
        space: 5,
        full_range: true,
    };
    let scaler = Scaler::cached(
        &mut cache,
        format.av(),
        width as u32,
        height as u32,
        pix,
        width as u32,
        height as u32,
        color,
    )?;
    // SAFETY: `data` holds `height` rows of `src_row` bytes (checked above);
    // the frame was allocated for width×height in `pix`.
    unsafe {
        scaler.run(
            &Planes::packed(data.as_ptr() as *mut u8, src_row),
            &Planes::of_frame(picture.as_ptr()),
        );
    }
    enc.send_frame(&picture).map_err(|e| e.to_string())?;
    enc.send_eof().map_err(|e| e.to_string())?;
    let mut bytes = Vec::new();
    let mut packet = ffmpeg::Packet::empty();
    while enc.receive_packet(&mut packet).is_ok() {
        bytes.extend_from_slice(packet.data().unwrap_or_default());
    }
    if bytes.is_empty() {
        return Err(StepError::new(format!("the {} encoder wrote nothing", id.name())));
    }
    crate::files::write_atomic(path, &bytes).map_err(|e| StepError::new(e.to_string()))
}
