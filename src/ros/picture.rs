//! A recording's pictures as RGB: `sensor_msgs/Image` in its encodings
//! (`rgb8`, `bgr8`, `rgba8`, `bgra8`, `mono8`, `mono16`, `yuv422`/`uyvy`,
//! `yuv422_yuy2`/`yuyv`, the 8-bit Bayer patterns), and
//! `sensor_msgs/CompressedImage` and `foxglove_msgs/CompressedVideo`
//! decoded by FFmpeg ([`crate::video::coded`]).

use super::value::Struct;
use crate::image::RgbImage;
use crate::video::coded::{Coding, PacketDecoder};

/// The size of the largest picture accepted, in pixels (as the video
/// decoder's limit).
fn check_size(width: usize, height: usize) -> Result<(), String> {
    let (Ok(w), Ok(h)) = (u32::try_from(width), u32::try_from(height)) else {
        return Err(format!("a {width}×{height} picture is too large"));
    };
    crate::image::check_picture_size(w, h).map_err(|e| e.to_string())
}

/// The picture of a `sensor_msgs/Image`.
pub fn raw_image(msg: &Struct<'_>) -> Result<RgbImage, String> {
    let dim = |f: &str| {
        msg.path(f)
            .and_then(|v| v.as_i64())
            .and_then(|v| usize::try_from(v).ok())
    };
    let (w, h, step) = match (dim("width"), dim("height"), dim("step")) {
        (Some(w), Some(h), Some(s)) if w > 0 && h > 0 => (w, h, s),
        _ => return Err("an image without a width, height and step".into()),
    };
    check_size(w, h)?;
    let encoding = msg.str("encoding").unwrap_or("").to_ascii_lowercase();
    let big_endian = msg.path("is_bigendian").and_then(|v| v.as_i64()).unwrap_or(0) != 0;
    let data = msg
        .path("data")
        .and_then(|v| v.as_bytes())
        .ok_or("an image without data")?;
    let bytes_per_pixel = match encoding.as_str() {
        "rgb8" | "bgr8" | "8uc3" => 3,
        "rgba8" | "bgra8" | "8uc4" => 4,
        "mono8" | "8uc1" | "bayer_rggb8" | "bayer_bggr8" | "bayer_gbrg8" | "bayer_grbg8" => 1,
        "mono16" | "16uc1" => 2,
        "yuv422" | "uyvy" | "yuv422_yuy2" | "yuyv" => 2,
        other => return Err(format!("image encoding `{other}` is not one underlay reads")),
    };
    let row = w.checked_mul(bytes_per_pixel).ok_or("an image too wide")?;
    if step < row {
        return Err(format!(
            "its rows ({step} bytes) are shorter than {w} pixels of {encoding}"
        ));
    }
    let need = step
        .checked_mul(h - 1)
        .and_then(|v| v.checked_add(row))
        .ok_or("an image too large")?;
    if data.len() < need {
        return Err(format!(
            "{w}×{h} {encoding} needs {need} bytes; the message has {}",
            data.len()
        ));
    }
    let px = |y: usize| &data[y * step..y * step + row];
    let mut out = RgbImage::zeros((h, w, 3));
    match encoding.as_str() {
        "rgb8" | "bgr8" | "8uc3" | "rgba8" | "bgra8" | "8uc4" => {
            let bgr = encoding.starts_with('b') || encoding.starts_with('8');
            for y in 0..h {
                for (x, p) in px(y).chunks_exact(bytes_per_pixel).enumerate() {
                    let (r, b) = if bgr { (p[2], p[0]) } else { (p[0], p[2]) };
                    out[[y, x, 0]] = r;
                    out[[y, x, 1]] = p[1];
                    out[[y, x, 2]] = b;
                }
            }
        }
        "mono8" | "8uc1" => {
            for y in 0..h {
                for (x, &v) in px(y).iter().enumerate() {
                    for c in 0..3 {
                        out[[y, x, c]] = v;
                    }
                }
            }
        }
        "mono16" | "16uc1" => {
            for y in 0..h {
                for (x, p) in px(y).chunks_exact(2).enumerate() {
                    let v = if big_endian { p[0] } else { p[1] };
                    for c in 0..3 {
                        out[[y, x, c]] = v;
                    }
                }
            }
        }
        "yuv422" | "uyvy" | "yuv422_yuy2" | "yuyv" => {
            let uyvy = matches!(encoding.as_str(), "yuv422" | "uyvy");
            for y in 0..h {
                for (pair, q) in px(y).chunks_exact(4).enumerate() {
                    let (y0, u, y1, v) = if uyvy {
                        (q[1], q[0], q[3], q[2])
                    } else {
                        (q[0], q[1], q[2], q[3])
                    };
                    for (dx, luma) in [(0, y0), (1, y1)] {
                        let x = pair * 2 + dx;
                        if x < w {
                            let rgb = yuv_to_rgb(luma, u, v);
                            for c in 0..3 {
                                out[[y, x, c]] = rgb[c];
                            }
                        }
                    }
                }
            }
        }
        bayer => demosaic(&mut out, &px, bayer),
    }
    Ok(out)
}

/// BT.601 limited range, as cameras send YUV 4:2:2.
fn yuv_to_rgb(y: u8, u: u8, v: u8) -> [u8; 3] {
    let (c, d, e) = (f32::from(y) - 16.0, f32::from(u) - 128.0, f32::from(v) - 128.0);
    let k = 1.164 * c;
    [k + 1.596 * e, k - 0.392 * d - 0.813 * e, k + 2.017 * d].map(|v| v.round().clamp(0.0, 255.0) as u8)
}

/// Bilinear demosaicing of an 8-bit Bayer picture: each pixel takes its
/// own colour and the mean of its neighbours of the other two.
fn demosaic<'a>(out: &mut RgbImage, row: &dyn Fn(usize) -> &'a [u8], pattern: &str) {
    let (h, w) = (out.dim().0, out.dim().1);
    // The colour (0 R, 1 G, 2 B) at even row, even column, and so on.
    let tile: [usize; 4] = match pattern {
        "bayer_rggb8" => [0, 1, 1, 2],
        "bayer_bggr8" => [2, 1, 1, 0],
        "bayer_gbrg8" => [1, 2, 0, 1],
        _ => [1, 0, 2, 1],
    };
    let colour = |y: usize, x: usize| tile[(y % 2) * 2 + x % 2];
    for y in 0..h {
        for x in 0..w {
            let mut sum = [0u32; 3];
            let mut n = [0u32; 3];
            for dy in -1i64..=1 {
                for dx in -1i64..=1 {
                    let (yy, xx) = (y as i64 + dy, x as i64 + dx);
                    if yy < 0 || xx < 0 || yy >= h as i64 || xx >= w as i64 {
                        continue;
                    }
                    let (yy, xx) = (yy as usize, xx as usize);
                    let c = colour(yy, xx);
                    // Its own colour only from itself.
                    if c == colour(y, x) && (dy, dx) != (0, 0) {
                        continue;
                    }
                    sum[c] += u32::from(row(yy)[xx]);
                    n[c] += 1;
                }
            }
            for c in 0..3 {
                out[[y, x, c]] = (sum[c] / n[c].max(1)) as u8;
            }
        }
    }
}

/// Decodes the compressed pictures of one topic, keeping the decoder of
/// their coding.
#[derive(Debug, Default)]
pub struct Compressed {
    decoder: Option<PacketDecoder>,
}

impl Compressed {
    /// The picture of a `CompressedImage` or `CompressedVideo` message
    /// (`None`: a video packet that shows nothing yet).
    pub fn decode(&mut self, msg: &Struct<'_>) -> Result<Option<RgbImage>, String> {
        let data = msg
            .path("data")
            .and_then(|v| v.as_bytes())
            .ok_or("a compressed picture without data")?;
        let format = msg.str("format").unwrap_or("");
        let coding = Coding::from_format(format)
            .or_else(|| Coding::sniff(data))
            .ok_or_else(|| format!("pictures in format `{format}` are not ones underlay decodes"))?;
        if self.decoder.as_ref().is_none_or(|d| d.coding() != coding) {
            self.decoder = Some(PacketDecoder::new(coding).map_err(|e| crate::error::chain(&e))?);
        }
        let Some(d) = self.decoder.as_mut() else {
            return Err("no decoder".into());
        };
        d.decode(data).map_err(|e| crate::error::chain(&e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ros::value::Value;
    use std::sync::Arc;

    fn image<'a>(w: i64, h: i64, step: i64, encoding: &str, data: &'a [u8]) -> Struct<'a> {
        let f = |n: &str, v: Value<'static>| (Arc::from(n), v);
        Struct {
            type_name: Arc::from("sensor_msgs/msg/Image"),
            fields: vec![
                f("height", Value::Int(h)),
                f("width", Value::Int(w)),
                f("encoding", Value::Str(encoding.to_owned().into())),
                f("is_bigendian", Value::UInt(0)),
                f("step", Value::Int(step)),
                (Arc::from("data"), Value::Bytes(data.into())),
            ],
        }
    }

    #[test]
    fn encodings_read_as_rgb() {
        let rgb = [10u8, 20, 30, 40, 50, 60];
        let bgr = [30u8, 20, 10, 60, 50, 40];
        let want = RgbImage::from_shape_vec((1, 2, 3), rgb.to_vec()).unwrap();
        assert_eq!(raw_image(&image(2, 1, 6, "rgb8", &rgb)).unwrap(), want);
        assert_eq!(raw_image(&image(2, 1, 6, "bgr8", &bgr)).unwrap(), want);
        let bgra = [30u8, 20, 10, 255, 60, 50, 40, 255];
        assert_eq!(raw_image(&image(2, 1, 8, "bgra8", &bgra)).unwrap(), want);
        // Rows padded past their pixels.
        let padded = [10u8, 20, 30, 40, 50, 60, 0, 0, 10, 20, 30, 40, 50, 60];
        assert_eq!(
            raw_image(&image(2, 2, 8, "rgb8", &padded)).unwrap().dim(),
            (2, 2, 3)
        );
        let mono16 = [0u8, 200, 0, 100];
        let m = raw_image(&image(2, 1, 4, "mono16", &mono16)).unwrap();
        assert_eq!((m[[0, 0, 0]], m[[0, 1, 2]]), (200, 100));
        // Grey UYVY is grey.
        let uyvy = [128u8, 128, 128, 128];
        let g = raw_image(&image(2, 1, 4, "yuv422", &uyvy)).unwrap();
        assert!(g.iter().all(|v| v.abs_diff(130) <= 2), "{g:?}");
        // A flat Bayer picture stays flat.
        let bayer = [90u8; 16];
        assert!(
            raw_image(&image(4, 4, 4, "bayer_rggb8", &bayer))
                .unwrap()
                .iter()
                .all(|v| *v == 90)
        );
        // Too little data, rows too short, unknown encodings: said.
        assert!(
            raw_image(&image(2, 2, 6, "rgb8", &rgb))
                .unwrap_err()
                .contains("needs 12 bytes")
        );
        assert!(raw_image(&image(2, 1, 5, "rgb8", &rgb)).is_err());
        assert!(
            raw_image(&image(2, 1, 6, "32FC1", &rgb))
                .unwrap_err()
                .contains("32fc1")
        );
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: crate::testing::fuzz_cases(),
            ..proptest::prelude::ProptestConfig::default()
        })]

        /// Any sizes, steps and data never panic, and never allocate for a
        /// picture the data cannot fill.
        #[test]
        fn any_image_fields_never_panic(
            w in -3i64..40, h in -3i64..40, step in -3i64..200,
            enc in 0usize..12,
            data in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..400),
        ) {
            let encodings = ["rgb8", "bgr8", "rgba8", "bgra8", "mono8", "mono16", "yuv422", "yuv422_yuy2", "bayer_rggb8", "bayer_grbg8", "16UC1", "x"];
            let _ = raw_image(&image(w, h, step, encodings[enc], &data));
        }
    }
}
