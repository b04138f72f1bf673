//! Pictures coded in memory (a recording's JPEG and PNG images, its H.264
//! and H.265 video packets) decoded with FFmpeg into RGB pictures, one
//! packet at a time: no file, no container, the decoder kept between
//! packets so a video's frames refer to the ones before. And the other
//! way, RGB pictures coded as JPEG in memory ([`JpegEncoder`]): each
//! picture stands alone, so any one of them decodes without the others
//! (the live viewer's replay buffer).

use ffmpeg_next as ffmpeg;
use ffmpeg_next::ffi::AVPixelFormat;
use ffmpeg_next::{codec, frame};

use super::StepError;
use super::convert::{Colorimetry, Planes, Scaler};
use super::init;
use crate::image::RgbImage;

/// How a packet's picture is coded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Coding {
    Jpeg,
    Png,
    H264,
    H265,
}

impl Coding {
    /// From a `CompressedImage.format` or `CompressedVideo.format` (`jpeg`,
    /// `png`, `rgb8; jpeg compressed bgr8`, `h264`, `h265`).
    pub fn from_format(format: &str) -> Option<Coding> {
        let f = format.to_ascii_lowercase();
        if f.contains("jpeg") || f.contains("jpg") {
            Some(Coding::Jpeg)
        } else if f.contains("png") {
            Some(Coding::Png)
        } else if f.contains("h264") || f.contains("avc") {
            Some(Coding::H264)
        } else if f.contains("h265") || f.contains("hevc") {
            Some(Coding::H265)
        } else {
            None
        }
    }

    /// Guessed from a picture's first bytes (its magic), when the format
    /// field says nothing useful.
    pub fn sniff(bytes: &[u8]) -> Option<Coding> {
        if bytes.starts_with(&[0xff, 0xd8, 0xff]) {
            Some(Coding::Jpeg)
        } else if bytes.starts_with(b"\x89PNG") {
            Some(Coding::Png)
        } else {
            None
        }
    }

    fn id(self) -> codec::Id {
        match self {
            Coding::Jpeg => codec::Id::MJPEG,
            Coding::Png => codec::Id::PNG,
            Coding::H264 => codec::Id::H264,
            Coding::H265 => codec::Id::HEVC,
        }
    }
}

/// A decoder of one coding's packets.
pub struct PacketDecoder {
    coding: Coding,
    decoder: ffmpeg::decoder::Video,
    raw: frame::Video,
    scaler: Option<Scaler>,
}

impl std::fmt::Debug for PacketDecoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PacketDecoder")
            .field("coding", &self.coding)
            .finish_non_exhaustive()
    }
}

impl PacketDecoder {
    /// A decoder for `coding`.
    pub fn new(coding: Coding) -> Result<PacketDecoder, StepError> {
        init();
        let found =
            ffmpeg::decoder::find(coding.id()).ok_or_else(|| format!("FFmpeg has no {coding:?} decoder"))?;
        let decoder = codec::Context::new_with_codec(found)
            .decoder()
            .video()
            .map_err(|e| StepError::with("cannot start the decoder", e))?;
        Ok(PacketDecoder {
            coding,
            decoder,
            raw: frame::Video::empty(),
            scaler: None,
        })
    }

    /// The coding it decodes.
    pub fn coding(&self) -> Coding {
        self.coding
    }

    /// Decodes one packet: its picture, or `None` when the decoder needs
    /// more packets first (a video's start before its first keyframe).
    pub fn decode(&mut self, bytes: &[u8]) -> Result<Option<RgbImage>, StepError> {
        if bytes.is_empty() {
            return Err("an empty picture".into());
        }
        let mut packet = ffmpeg::Packet::copy(bytes);
        if matches!(self.coding, Coding::Jpeg | Coding::Png) {
            // Each picture stands alone: FFmpeg's PNG decoder takes a packet
            // not marked as a keyframe as a difference to the one before.
            packet.set_flags(ffmpeg::packet::Flags::KEY);
        }
        let (sent, messages) = super::messages::capture(|| self.decoder.send_packet(&packet));
        sent.map_err(|e| {
            StepError::with(
                super::messages::explained("cannot decode the picture", &messages),
                e,
            )
        })?;
        if self.decoder.receive_frame(&mut self.raw).is_err() {
            return Ok(None);
        }
        let (w, h) = (self.raw.width(), self.raw.height());
        crate::image::check_picture_size(w, h)?;
        let (wu, hu) = (w as usize, h as usize);
        let mut out = RgbImage::zeros((hu, wu, 3));
        let src_fmt: AVPixelFormat = self.raw.format().into();
        let mut color = Colorimetry::of_frame(&self.raw);
        color.full_range |= matches!(self.coding, Coding::Png | Coding::Jpeg) && !is_limited(src_fmt);
        let scaler = Scaler::cached(
            &mut self.scaler,
            src_fmt,
            w,
            h,
            AVPixelFormat::AV_PIX_FMT_RGB24,
            w,
            h,
            color,
        )?;
        let Some(dst) = out.as_slice_mut() else {
            return Err("a picture buffer that is not contiguous".into());
        };
        // SAFETY: the source planes belong to the decoded frame of the size
        // and format the scaler was made for; `dst` holds h rows of 3·w bytes.
        unsafe {
            scaler.run(
                &Planes::of_frame(self.raw.as_ptr()),
                &Planes::packed(dst.as_mut_ptr(), wu * 3),
            );
        }
        Ok(Some(out))
    }
}

/// RGB pictures coded as baseline JPEG (4:2:0, full range) in memory,
/// the encoder kept from picture to picture.
pub struct JpegEncoder {
    encoder: ffmpeg::encoder::Video,
    picture: frame::Video,
    scaler: Option<Scaler>,
    size: (usize, usize),
    quality: u8,
}

impl std::fmt::Debug for JpegEncoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JpegEncoder")
            .field("size", &self.size)
            .field("quality", &self.quality)
            .finish_non_exhaustive()
    }
}

impl JpegEncoder {
    /// An encoder of `width`×`height` pictures at FFmpeg's quantiser scale
    /// `quality` (2 = best … 31 = smallest; 5 keeps a camera's picture
    /// without visible loss at about a tenth of a byte per pixel).
    pub fn new(width: usize, height: usize, quality: u8) -> Result<JpegEncoder, StepError> {
        init();
        crate::image::check_picture_size(width as u32, height as u32)?;
        let quality = quality.clamp(2, 31);
        let codec = ffmpeg::encoder::find(codec::Id::MJPEG).ok_or("this FFmpeg has no JPEG encoder")?;
        let mut enc = codec::context::Context::new_with_codec(codec)
            .encoder()
            .video()
            .map_err(|e| StepError::with("cannot start the JPEG encoder", e))?;
        let pix = AVPixelFormat::AV_PIX_FMT_YUVJ420P;
        enc.set_width(width as u32);
        enc.set_height(height as u32);
        enc.set_format(pix.into());
        enc.set_time_base((1, 25));
        enc.set_color_range(ffmpeg::color::Range::JPEG);
        enc.set_flags(codec::Flags::QSCALE);
        enc.set_global_quality(i32::from(quality) * ffmpeg::ffi::FF_QP2LAMBDA);
        let encoder = enc
            .open_as(codec)
            .map_err(|e| StepError::with("cannot set up the JPEG encoder", e))?;
        let mut picture = frame::Video::new(pix.into(), width as u32, height as u32);
        picture.set_color_range(ffmpeg::color::Range::JPEG);
        Ok(JpegEncoder {
            encoder,
            picture,
            scaler: None,
            size: (width, height),
            quality,
        })
    }

    /// The JPEG of `image` (of the encoder's size), appended to `out`
    /// (cleared first).
    pub fn encode(&mut self, image: &RgbImage, out: &mut Vec<u8>) -> Result<(), StepError> {
        let (h, w, _) = image.dim();
        if (w, h) != self.size {
            return Err(StepError::new(format!(
                "a {w}×{h} picture given to a JPEG encoder of {}×{}",
                self.size.0, self.size.1
            )));
        }
        let Some(src) = image.as_slice() else {
            return Err("a picture buffer that is not contiguous".into());
        };
        let color = Colorimetry {
            space: 5,
            full_range: true,
        };
        let scaler = Scaler::cached(
            &mut self.scaler,
            AVPixelFormat::AV_PIX_FMT_RGB24,
            w as u32,
            h as u32,
            AVPixelFormat::AV_PIX_FMT_YUVJ420P,
            w as u32,
            h as u32,
            color,
        )?;
        // SAFETY: `src` holds h rows of 3·w bytes (an RGB picture of the
        // encoder's size, checked above); the frame was allocated for w×h
        // in the scaler's destination format and is not shared.
        unsafe {
            scaler.run(
                &Planes::packed(src.as_ptr() as *mut u8, w * 3),
                &Planes::of_frame(self.picture.as_ptr()),
            );
            (*self.picture.as_mut_ptr()).quality = i32::from(self.quality) * ffmpeg::ffi::FF_QP2LAMBDA;
        }
        self.encoder
            .send_frame(&self.picture)
            .map_err(|e| StepError::with("cannot code the picture as JPEG", e))?;
        out.clear();
        let mut packet = ffmpeg::Packet::empty();
        while self.encoder.receive_packet(&mut packet).is_ok() {
            out.extend_from_slice(packet.data().unwrap_or_default());
        }
        if out.is_empty() {
            return Err("the JPEG encoder wrote nothing".into());
        }
        Ok(())
    }
}

/// Pixel formats FFmpeg's JPEG decoder gives for limited-range pictures
/// (the `yuvj*` formats are full range).
fn is_limited(fmt: AVPixelFormat) -> bool {
    matches!(
        fmt,
        AVPixelFormat::AV_PIX_FMT_YUV420P
            | AVPixelFormat::AV_PIX_FMT_YUV422P
            | AVPixelFormat::AV_PIX_FMT_YUV444P
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// OpenCV's PNGs (as a ROS camera driver writes them) in a row: the
    /// second is not taken as a difference to the first.
    #[test]
    fn pngs_written_by_opencv_decode_one_after_another() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/pictures");
        let mut d = PacketDecoder::new(Coding::Png).unwrap();
        for k in 0..2 {
            let p = dir.join(format!("opencv-{k}.png"));
            let got = d.decode(&std::fs::read(&p).unwrap()).unwrap().unwrap();
            let want = crate::video::still::load_rgb(&p).unwrap();
            assert_eq!(got, want, "{}", p.display());
        }
    }

    /// A picture coded by the encoder decodes to itself within JPEG's
    /// loss, each alone; a picture of another size is refused.
    #[test]
    fn jpegs_coded_in_memory_decode_to_their_pictures() {
        let img = RgbImage::from_shape_fn((48, 64, 3), |(y, x, c)| [(x * 4) as u8, (y * 5) as u8, 90][c]);
        let mut e = JpegEncoder::new(64, 48, 3).unwrap();
        let mut bytes = Vec::new();
        for _ in 0..2 {
            e.encode(&img, &mut bytes).unwrap();
            assert_eq!(Coding::sniff(&bytes), Some(Coding::Jpeg));
            let got = PacketDecoder::new(Coding::Jpeg)
                .unwrap()
                .decode(&bytes)
                .unwrap()
                .unwrap();
            let worst = got
                .iter()
                .zip(img.iter())
                .map(|(a, b)| a.abs_diff(*b))
                .max()
                .unwrap();
            assert!(worst <= 12, "{worst}");
        }
        let err = e.encode(&RgbImage::zeros((10, 10, 3)), &mut bytes).unwrap_err();
        assert!(err.to_string().contains("10×10"), "{err}");
    }

    #[test]
    fn a_png_and_a_jpeg_in_memory_decode_to_their_pictures() {
        let dir = tempfile::tempdir().unwrap();
        let img = RgbImage::from_shape_fn((24, 32, 3), |(y, x, c)| [(x * 8) as u8, (y * 10) as u8, 128][c]);
        for (name, coding, tolerance) in [("p.png", Coding::Png, 0), ("p.jpg", Coding::Jpeg, 12)] {
            let p = dir.path().join(name);
            super::super::still::save_rgb(&p, &img).unwrap();
            let bytes = std::fs::read(&p).unwrap();
            assert_eq!(Coding::sniff(&bytes), Some(coding));
            let mut d = PacketDecoder::new(coding).unwrap();
            let got = d.decode(&bytes).unwrap().unwrap();
            assert_eq!(got.dim(), img.dim());
            let worst = got
                .iter()
                .zip(img.iter())
                .map(|(a, b)| a.abs_diff(*b))
                .max()
                .unwrap();
            assert!(worst <= tolerance, "{name}: {worst}");
            // Garbage is an error, not a panic.
            assert!(d.decode(&bytes[..bytes.len() / 3]).is_err() || d.decode(b"junk").is_err());
        }
        assert_eq!(
            Coding::from_format("rgb8; jpeg compressed bgr8"),
            Some(Coding::Jpeg)
        );
        assert_eq!(Coding::from_format("h264"), Some(Coding::H264));
        assert_eq!(Coding::from_format("raw"), None);
    }
}
