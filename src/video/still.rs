//! Still images (PNG, JPEG, BMP, TIFF, WebP, … whatever FFmpeg reads) read
//! into and written from packed RGB or gray buffers, with FFmpeg's image
//! decoders and encoders: the project needs no second image library, and
//! the program starts faster without OpenCV's image codecs and all the
//! libraries they pull in. Pictures are read upright: an EXIF orientation
//! (phones and cameras store many photos sideways) is applied.

use std::path::Path;

use crate::image::{FLOOR, ImageError, MaskImage, RgbImage};
use crate::video::StepError;

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

/// Reads any picture FFmpeg can decode (PNG, JPEG, BMP, TIFF, WebP, …) as
/// RGB.
pub fn load_rgb(path: &Path) -> Result<RgbImage, ImageError> {
    let (w, h, data) = read(path, StillFormat::Rgb)?;
    RgbImage::from_shape_vec((h, w, 3), data).map_err(|e| unreadable(path, e.to_string().into()))
}

/// Writes an RGB frame as PNG (or JPEG, BMP, TIFF, picked by the extension).
pub fn save_rgb(path: &Path, img: &RgbImage) -> Result<(), ImageError> {
    let (h, w, _) = img.dim();
    let std = img.as_standard_layout();
    let data = std
        .as_slice()
        .ok_or_else(|| write_error(path, "non-contiguous image".into()))?;
    write_still(path, w, h, StillFormat::Rgb, data).map_err(|m| write_error(path, m))
}

/// Reads a mask picture (any pixel lighter than mid-grey = floor).
pub fn load_mask(path: &Path) -> Result<MaskImage, ImageError> {
    let (w, h, data) = read(path, StillFormat::Gray)?;
    let data = data
        .into_iter()
        .map(|v| if v > 127 { FLOOR } else { 0 })
        .collect();
    MaskImage::from_shape_vec((h, w), data).map_err(|e| unreadable(path, e.to_string().into()))
}

/// Writes a mask as an 8-bit grey PNG (white = floor).
pub fn save_mask(path: &Path, mask: &MaskImage) -> Result<(), ImageError> {
    let (h, w) = mask.dim();
    let std = mask.as_standard_layout();
    let data = std
        .as_slice()
        .ok_or_else(|| write_error(path, "non-contiguous mask".into()))?;
    write_still(path, w, h, StillFormat::Gray, data).map_err(|m| write_error(path, m))
}

fn read(path: &Path, format: StillFormat) -> Result<(usize, usize, Vec<u8>), ImageError> {
    if !path.is_file() {
        let why = if path.exists() {
            "not a file"
        } else {
            "no such file"
        };
        return Err(unreadable(path, why.into()));
    }
    read_still(path, format).map_err(|m| unreadable(path, m))
}

fn unreadable(path: &Path, e: crate::video::StepError) -> ImageError {
    ImageError::Unreadable {
        path: path.display().to_string(),
        message: crate::error::chain(&e),
    }
}

fn write_error(path: &Path, e: crate::video::StepError) -> ImageError {
    ImageError::Write {
        path: path.display().to_string(),
        message: crate::error::chain(&e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn png_round_trip_keeps_rgb_order() {
        let dir = tempfile::tempdir().unwrap();
        let mut img = RgbImage::zeros((4, 5, 3));
        img[[1, 2, 0]] = 200; // red channel
        img[[3, 4, 2]] = 90; // blue channel
        let p = dir.path().join("x.png");
        save_rgb(&p, &img).unwrap();
        assert_eq!(load_rgb(&p).unwrap(), img);
    }

    #[test]
    fn mask_round_trip_and_missing_file() {
        let dir = tempfile::tempdir().unwrap();
        let mut m = MaskImage::zeros((3, 7));
        m[[2, 6]] = FLOOR;
        let p = dir.path().join("m.png");
        save_mask(&p, &m).unwrap();
        assert_eq!(load_mask(&p).unwrap(), m);
        let err = load_rgb(&dir.path().join("nope.png")).unwrap_err().to_string();
        assert!(err.contains("nope.png") && err.contains("no such file"), "{err}");
    }

    /// A picture with smooth colour ramps (JPEG keeps those close).
    fn ramps(w: usize, h: usize) -> RgbImage {
        RgbImage::from_shape_fn((h, w, 3), |(y, x, c)| match c {
            0 => (x * 255 / w) as u8,
            1 => (y * 255 / h) as u8,
            _ => 128,
        })
    }

    #[test]
    fn other_formats_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let img = ramps(40, 30);
        for (ext, tolerance) in [("bmp", 0), ("tiff", 0), ("jpg", 6)] {
            let p = dir.path().join(format!("x.{ext}"));
            save_rgb(&p, &img).unwrap();
            let back = load_rgb(&p).unwrap();
            assert_eq!(back.dim(), img.dim(), "{ext}");
            let worst = back.iter().zip(&img).map(|(a, b)| a.abs_diff(*b)).max().unwrap();
            assert!(worst <= tolerance, "{ext}: off by {worst}");
        }
    }

    #[test]
    fn colour_pictures_read_as_masks_and_masks_as_colour() {
        let dir = tempfile::tempdir().unwrap();
        // Light left half, dark right half.
        let img = RgbImage::from_shape_fn((6, 8, 3), |(_, x, _)| if x < 4 { 230 } else { 20 });
        let p = dir.path().join("c.png");
        save_rgb(&p, &img).unwrap();
        let m = load_mask(&p).unwrap();
        assert!(
            m.indexed_iter()
                .all(|((_, x), &v)| v == if x < 4 { FLOOR } else { 0 })
        );
        // A grey mask reads as full-range grey RGB (no level squeezing).
        let q = dir.path().join("m.png");
        save_mask(&q, &m).unwrap();
        let rgb = load_rgb(&q).unwrap();
        assert_eq!(rgb[[0, 0, 0]], 255);
        assert_eq!(rgb[[0, 7, 1]], 0);
    }

    /// A JPEG's bytes with an EXIF segment (APP1) holding only an
    /// orientation tag, as phones write them.
    fn with_exif_orientation(jpeg: &[u8], orientation: u16) -> Vec<u8> {
        let mut tiff = b"MM\0\x2a\0\0\0\x08\0\x01".to_vec();
        // Tag 0x0112 (orientation), type SHORT, count 1, value; no next IFD.
        tiff.extend_from_slice(&[0x01, 0x12, 0, 3, 0, 0, 0, 1]);
        tiff.extend_from_slice(&orientation.to_be_bytes());
        tiff.extend_from_slice(&[0, 0, 0, 0, 0, 0]);
        let mut app1 = b"Exif\0\0".to_vec();
        app1.extend_from_slice(&tiff);
        let mut out = jpeg[..2].to_vec();
        out.extend_from_slice(&[0xff, 0xe1]);
        out.extend_from_slice(&((app1.len() + 2) as u16).to_be_bytes());
        out.extend_from_slice(&app1);
        out.extend_from_slice(&jpeg[2..]);
        out
    }

    #[test]
    fn exif_orientation_is_applied() {
        // A 48×32 picture with a red top-left quadrant, green top-right,
        // blue bottom-left and white bottom-right.
        let (w, h) = (48, 32);
        let img = RgbImage::from_shape_fn((h, w, 3), |(y, x, c)| {
            let colour: [u8; 3] = match (x < w / 2, y < h / 2) {
                (true, true) => [255, 0, 0],
                (false, true) => [0, 255, 0],
                (true, false) => [0, 0, 255],
                (false, false) => [255, 255, 255],
            };
            colour[c]
        });
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("plain.jpg");
        save_rgb(&plain, &img).unwrap();
        let jpeg = std::fs::read(&plain).unwrap();
        let (r, g, b, white) = ([255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 255, 255]);
        // Quadrants (top-left, top-right, bottom-left, bottom-right) shown
        // for each orientation.
        let cases = [
            (1, [r, g, b, white]),
            (2, [g, r, white, b]),
            (3, [white, b, g, r]),
            (4, [b, white, r, g]),
            (5, [r, b, g, white]),
            (6, [b, r, white, g]),
            (7, [white, g, b, r]),
            (8, [g, white, r, b]),
        ];
        for (o, want) in cases {
            let p = dir.path().join(format!("o{o}.jpg"));
            std::fs::write(&p, with_exif_orientation(&jpeg, o)).unwrap();
            let got = load_rgb(&p).unwrap();
            let (gh, gw, _) = got.dim();
            assert_eq!((gw, gh), if o >= 5 { (h, w) } else { (w, h) }, "orientation {o}");
            let centres = [
                (gw / 4, gh / 4),
                (3 * gw / 4, gh / 4),
                (gw / 4, 3 * gh / 4),
                (3 * gw / 4, 3 * gh / 4),
            ];
            for ((x, y), want) in centres.into_iter().zip(want) {
                let px = [got[[y, x, 0]], got[[y, x, 1]], got[[y, x, 2]]];
                let near = px.iter().zip(want).all(|(&a, b)| a.abs_diff(b) < 40);
                assert!(near, "orientation {o}: pixel ({x}, {y}) is {px:?}, want {want:?}");
            }
        }
    }

    #[test]
    fn bad_files_and_names_are_clear_errors() {
        let dir = tempfile::tempdir().unwrap();
        let junk = dir.path().join("junk.png");
        std::fs::write(&junk, b"this is not a picture").unwrap();
        let err = load_rgb(&junk).unwrap_err().to_string();
        assert!(err.contains("junk.png") && err.contains("cannot read"), "{err}");
        // With FFmpeg's explanation, instead of FFmpeg printing it apart.
        assert!(err.contains("PNG signature"), "{err}");
        let truncated = dir.path().join("cut.png");
        save_rgb(&truncated, &ramps(64, 64)).unwrap();
        let bytes = std::fs::read(&truncated).unwrap();
        std::fs::write(&truncated, &bytes[..bytes.len() / 3]).unwrap();
        // A cut PNG is refused or decodes to a picture of its size: never a panic.
        if let Ok(img) = load_rgb(&truncated) {
            assert_eq!(img.dim(), (64, 64, 3));
        }
        let err = load_rgb(dir.path()).unwrap_err().to_string();
        assert!(err.contains("not a file"), "{err}");
        let err = save_rgb(&dir.path().join("x.xyz"), &ramps(4, 4))
            .unwrap_err()
            .to_string();
        assert!(err.contains("x.xyz") && err.contains(".png"), "{err}");
        let err = save_rgb(&dir.path().join("missing/x.png"), &ramps(4, 4))
            .unwrap_err()
            .to_string();
        assert!(err.contains("missing"), "{err}");
        assert!(save_rgb(&dir.path().join("e.png"), &RgbImage::zeros((0, 0, 3))).is_err());
    }
}
