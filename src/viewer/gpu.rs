//! The video shown from its decoded planes: Y, U and V uploaded as
//! one-channel textures and converted to RGB by a fragment shader, in an
//! egui paint callback on glow. Nothing is converted on the CPU on the way
//! to the screen; a 3072×1728 picture is 8 MB of planes to upload where
//! its RGBA texture would be 21 MB made on a worker first.
//!
//! The shader computes what the decoder's CPU conversion
//! ([`crate::video::yuv`]) computes, in the same integer arithmetic
//! (exact in 32-bit floats: every intermediate is an integer below 2²⁴):
//! the same colour matrix (BT.601, BT.709, BT.2020 as the stream says)
//! and range (limited or full), chroma taken from the pixel's 2×2 block.
//! Shown at reduction 1 (more than half size), a screen pixel between
//! picture pixels takes the bilinear blend of their Y and of their blocks'
//! chroma, converted once — where egui's linear filtering of the CPU's RGB
//! picture blends the four converted pixels: the same, as the conversion
//! is affine, but for rounding (a level) and colours that clip. Smaller,
//! the planes' mipmaps are sampled and converted (the CPU path averages
//! blocks of RGB instead). Three texture reads and one conversion a
//! screen pixel, so that a software renderer (Mesa's, in a window under
//! Xvfb) keeps up too.
//!
//! Needs OpenGL 3 (GLSL 1.40) or OpenGL ES 3; without it the first paint
//! fails, says why ([`PlaneView::failure`]), and the viewer shows RGB
//! pictures as before.

use std::sync::{Arc, Mutex, MutexGuard};

use eframe::egui;
use eframe::egui_glow;
use eframe::glow::{self, HasContext as _};

use crate::video::Picture420;
use crate::video::yuv::InvCoeffs;

/// How a video goes to the screen (`underlay view --display`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Display {
    /// Its planes through the shader, unless the OpenGL renderer is a
    /// software one (Mesa's llvmpipe, softpipe, swrast; SwiftShader):
    /// there the shader runs on the CPU too and costs more than the
    /// conversion, so RGB.
    #[default]
    Auto,
    /// Its decoded planes, converted by a shader.
    Planes,
    /// RGB pictures converted on the CPU.
    Rgb,
}

/// Whether an OpenGL renderer's name is a software renderer's.
pub fn is_software_renderer(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    [
        "llvmpipe",
        "softpipe",
        "swrast",
        "swiftshader",
        "software rasterizer",
    ]
    .iter()
    .any(|s| n.contains(s))
}

/// Whether a window painted by `gl` shows videos as their planes, for
/// `choice`; with the reason when `Auto` chose RGB.
pub fn shows_planes(gl: &glow::Context, choice: Display) -> (bool, Option<String>) {
    match choice {
        Display::Planes => (true, None),
        Display::Rgb => (false, None),
        Display::Auto => {
            // SAFETY: a current context (eframe's creation callback).
            let renderer = unsafe { gl.get_parameter_string(glow::RENDERER) };
            if is_software_renderer(&renderer) {
                let why = format!(
                    "the OpenGL renderer is a software one ({renderer}): videos are converted to RGB on the \
                     CPU, cheaper there than a shader (--display planes to use the shader anyway)"
                );
                (false, Some(why))
            } else {
                (true, None)
            }
        }
    }
}

/// The planes on screen: what the UI thread hands to the paint callback.
#[derive(Clone, Default)]
pub struct PlaneView {
    state: Arc<Mutex<State>>,
}

#[derive(Default)]
struct State {
    /// A new picture, uploaded at the next paint.
    pending: Option<Arc<Picture420>>,
    gl: Option<Resources>,
    /// Why the shader path cannot work here (set once, at the first paint).
    failed: Option<String>,
    /// Pictures uploaded so far (tests, statistics).
    uploads: u64,
    /// Measuring ([`PlaneView::measure`]): the times of uploads and of
    /// draws, each finished.
    timings: Option<PaintTimes>,
}

/// What painting the planes cost, measured with the GL finished around
/// each step (only while measuring: it stalls the pipeline).
#[derive(Clone, Debug, Default)]
pub struct PaintTimes {
    /// Uploading a new picture's planes.
    pub upload: Vec<std::time::Duration>,
    /// Drawing the picture (the shader over the screen pixels).
    pub draw: Vec<std::time::Duration>,
}

/// The program, the three plane textures and what is on them.
struct Resources {
    program: glow::Program,
    vao: glow::VertexArray,
    textures: [glow::Texture; 3],
    /// The textures' sizes (luma, chroma), `[w, h]`.
    allocated: [[i32; 2]; 2],
    /// The picture's YUV → RGB integers: y_off, y, rv, gu, gv, bu.
    coeffs: [f32; 6],
    /// The mipmaps match the textures' level 0.
    mips: bool,
    u_uv: Option<glow::UniformLocation>,
    u_size: Option<glow::UniformLocation>,
    u_k: Option<glow::UniformLocation>,
    u_k2: Option<glow::UniformLocation>,
    u_exact: Option<glow::UniformLocation>,
    u_planes: [Option<glow::UniformLocation>; 3],
}

impl PlaneView {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Shows `picture` from the next paint on.
    pub fn set(&self, picture: Arc<Picture420>) {
        self.lock().pending = Some(picture);
    }

    /// Why the planes cannot be shown here, once a paint found out.
    pub fn failure(&self) -> Option<String> {
        self.lock().failed.clone()
    }

    /// Makes the planes unusable, as a paint that found this GL wanting
    /// does (tests of what follows).
    #[cfg(test)]
    pub(crate) fn fail(&self, why: &str) {
        self.lock().failed = Some(why.to_owned());
    }

    /// Pictures uploaded so far.
    pub fn uploads(&self) -> u64 {
        self.lock().uploads
    }

    /// Starts measuring each upload and draw, the GL finished around each
    /// (for `--bench-play`; it stalls the GL pipeline).
    pub fn measure(&self) {
        self.lock().timings = Some(PaintTimes::default());
    }

    /// The times measured since the last call.
    pub fn take_times(&self) -> PaintTimes {
        self.lock()
            .timings
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Paints the current picture into `image` (screen points, the whole
    /// picture's place, which may reach beyond the window when zoomed),
    /// as far as it lies within `clip`: adds the paint callback to
    /// `painter`. `reduction` is the whole factor the picture is reduced by
    /// on screen (1: shown at more than half size), as the player computes
    /// it for RGB pictures.
    pub fn paint(&self, painter: &egui::Painter, image: egui::Rect, clip: egui::Rect, reduction: usize) {
        let visible = image.intersect(clip);
        if !(visible.is_positive() && image.is_positive()) {
            return;
        }
        let view = self.clone();
        let callback = egui_glow::CallbackFn::new(move |info, p| {
            // The part of the picture in the viewport's whole pixels, so
            // that each pixel samples where egui's mesh of the picture
            // would.
            let vp = info.viewport_in_pixels();
            let ppp = info.pixels_per_point;
            let top = info.screen_size_px[1] as i32 - vp.from_bottom_px - vp.height_px;
            let x0 = vp.left_px as f32 / ppp;
            let x1 = (vp.left_px + vp.width_px) as f32 / ppp;
            let y0 = top as f32 / ppp;
            let y1 = (top + vp.height_px) as f32 / ppp;
            let uv = [
                (x0 - image.min.x) / image.width(),
                (y0 - image.min.y) / image.height(),
                (x1 - image.min.x) / image.width(),
                (y1 - image.min.y) / image.height(),
            ];
            let mut s = view.lock();
            if let Err(e) = s.paint(p.gl(), uv, reduction) {
                s.failed.get_or_insert(e);
            }
        });
        painter.add(egui::PaintCallback {
            rect: visible,
            callback: Arc::new(callback),
        });
    }
}

/// Texture units the planes are bound to.
const UNITS: [u32; 3] = [glow::TEXTURE0, glow::TEXTURE1, glow::TEXTURE2];

const VERTEX: &str = r#"
uniform vec4 u_uv;
out vec2 v_uv;
void main() {
    // A strip of two triangles over the viewport: (0,0) (1,0) (0,1) (1,1),
    // y downwards like the picture.
    vec2 p = vec2(float(gl_VertexID & 1), float(gl_VertexID >> 1));
    gl_Position = vec4(2.0 * p.x - 1.0, 1.0 - 2.0 * p.y, 0.0, 1.0);
    v_uv = mix(u_uv.xy, u_uv.zw, p);
}
"#;

const FRAGMENT: &str = r#"
uniform sampler2D u_y;
uniform sampler2D u_u;
uniform sampler2D u_v;
// The picture's size in pixels.
uniform vec2 u_size;
// The integer conversion (× 2^13) of crate::video::yuv: y_off, y, rv, gu;
// then gv, bu.
uniform vec4 u_k;
uniform vec2 u_k2;
// 1: the picture's own pixels blended bilinearly (level 0); 0: its
// planes' mipmaps (shown reduced).
uniform int u_exact;
in vec2 v_uv;
out vec4 f_color;

// The CPU's conversion of Y, U, V (bytes, or blends of them): for bytes
// exactly its integers, as (x + 2^12) >> 13 is floor((x + 4096) / 8192)
// and every value is an integer a float holds exactly.
vec3 convert(float y, float u, float v) {
    u -= 128.0;
    v -= 128.0;
    float l = (y - u_k.x) * u_k.y;
    vec3 x = vec3(l + u_k.z * v, l - u_k.w * u - u_k2.x * v, l + u_k2.y * u);
    return clamp(floor((x + 4096.0) / 8192.0), 0.0, 255.0) / 255.0;
}

// Where to sample a chroma plane along one axis so that its bilinear
// filter gives the blend of the chroma of the two picture pixels around
// luma position t (in texels): each pixel takes its 2×2 block's chroma.
float chroma_at(float t, float n) {
    float i = floor(t);
    float a = clamp(floor(i / 2.0), 0.0, n - 1.0);
    float b = clamp(floor((i + 1.0) / 2.0), 0.0, n - 1.0);
    float c = a == b ? a + 0.5 : a + 0.5 + (t - i);
    return c / n;
}

void main() {
    vec3 rgb;
    if (u_exact == 1) {
        // egui's linear filtering of the RGB picture: the four pixels
        // around, each with its block's chroma, edges clamped. Y blends in
        // the filter, U and V where `chroma_at` puts them.
        vec2 t = v_uv * u_size - 0.5;
        vec2 n = floor(u_size / 2.0);
        vec2 c = vec2(chroma_at(t.x, n.x), chroma_at(t.y, n.y));
        float y = textureLod(u_y, v_uv, 0.0).r * 255.0;
        float u = textureLod(u_u, c, 0.0).r * 255.0;
        float v = textureLod(u_v, c, 0.0).r * 255.0;
        rgb = convert(y, u, v);
    } else {
        float y = texture(u_y, v_uv).r * 255.0;
        float u = texture(u_u, v_uv).r * 255.0;
        float v = texture(u_v, v_uv).r * 255.0;
        rgb = convert(y, u, v);
    }
    f_color = vec4(rgb, 1.0);
}
"#;

impl State {
    /// Uploads a pending picture and draws; an error says why this GL
    /// cannot (then nothing is drawn, now or later).
    fn paint(&mut self, gl: &glow::Context, uv: [f32; 4], reduction: usize) -> Result<(), String> {
        if self.failed.is_some() {
            return Ok(());
        }
        if self.gl.is_none() {
            self.gl = Some(Resources::new(gl)?);
        }
        let Some(res) = self.gl.as_mut() else {
            return Ok(());
        };
        let finished = |on: bool| {
            if on {
                // SAFETY: a plain GL call on the painting thread.
                unsafe { gl.finish() };
            }
            std::time::Instant::now()
        };
        let measure = self.timings.is_some();
        if let Some(p) = self.pending.take() {
            let t0 = finished(measure);
            res.upload(gl, &p)?;
            let took = finished(measure) - t0;
            self.uploads += 1;
            if let Some(t) = &mut self.timings {
                t.upload.push(took);
            }
        }
        if res.allocated[0][0] == 0 {
            return Ok(());
        }
        let t0 = finished(measure);
        res.draw(gl, uv, reduction);
        let took = finished(measure) - t0;
        if let Some(t) = &mut self.timings {
            t.draw.push(took);
        }
        Ok(())
    }
}

impl Resources {
    fn new(gl: &glow::Context) -> Result<Resources, String> {
        let version = egui_glow::ShaderVersion::get(gl);
        if !matches!(
            version,
            egui_glow::ShaderVersion::Gl140 | egui_glow::ShaderVersion::Es300
        ) {
            return Err(format!(
                "the video's planes need OpenGL 3 or OpenGL ES 3 shaders (this one has {version:?})"
            ));
        }
        let header = if version == egui_glow::ShaderVersion::Es300 {
            "#version 300 es\nprecision highp float;\nprecision highp int;\nprecision highp sampler2D;\n"
        } else {
            "#version 140\n"
        };
        // SAFETY: plain GL calls on the context egui paints with, made on
        // its thread inside a paint callback.
        unsafe {
            let program = gl.create_program()?;
            let mut shaders = Vec::new();
            for (kind, body) in [(glow::VERTEX_SHADER, VERTEX), (glow::FRAGMENT_SHADER, FRAGMENT)] {
                let shader = gl.create_shader(kind)?;
                gl.shader_source(shader, &format!("{header}{body}"));
                gl.compile_shader(shader);
                if !gl.get_shader_compile_status(shader) {
                    let log = gl.get_shader_info_log(shader);
                    gl.delete_shader(shader);
                    gl.delete_program(program);
                    return Err(format!("the video's shader does not compile: {log}"));
                }
                gl.attach_shader(program, shader);
                shaders.push(shader);
            }
            gl.link_program(program);
            for s in shaders {
                gl.detach_shader(program, s);
                gl.delete_shader(s);
            }
            if !gl.get_program_link_status(program) {
                let log = gl.get_program_info_log(program);
                gl.delete_program(program);
                return Err(format!("the video's shader does not link: {log}"));
            }
            let vao = gl.create_vertex_array()?;
            let mut textures = Vec::new();
            for _ in 0..3 {
                let t = gl.create_texture()?;
                gl.bind_texture(glow::TEXTURE_2D, Some(t));
                gl.tex_parameter_i32(glow::TEXTURE_2D, glow::TEXTURE_WRAP_S, glow::CLAMP_TO_EDGE as i32);
                gl.tex_parameter_i32(glow::TEXTURE_2D, glow::TEXTURE_WRAP_T, glow::CLAMP_TO_EDGE as i32);
                gl.tex_parameter_i32(glow::TEXTURE_2D, glow::TEXTURE_MAG_FILTER, glow::LINEAR as i32);
                gl.tex_parameter_i32(glow::TEXTURE_2D, glow::TEXTURE_MIN_FILTER, glow::LINEAR as i32);
                textures.push(t);
            }
            gl.bind_texture(glow::TEXTURE_2D, None);
            let at = |name: &str| gl.get_uniform_location(program, name);
            Ok(Resources {
                u_uv: at("u_uv"),
                u_size: at("u_size"),
                u_k: at("u_k"),
                u_k2: at("u_k2"),
                u_exact: at("u_exact"),
                u_planes: [at("u_y"), at("u_u"), at("u_v")],
                program,
                vao,
                textures: [textures[0], textures[1], textures[2]],
                allocated: [[0, 0]; 2],
                coeffs: [0.0; 6],
                mips: false,
            })
        }
    }

    /// Puts the picture's planes on the textures (their storage made anew
    /// only when the size changes).
    fn upload(&mut self, gl: &glow::Context, p: &Picture420) -> Result<(), String> {
        let p = p
            .planes()
            .ok_or("a plane of the picture is smaller than the picture")?;
        let (w, h) = (p.width, p.height);
        let sizes = [[w as i32, h as i32], [(w / 2) as i32, (h / 2) as i32]];
        if w < 2 || h < 2 {
            return Err(format!("a {w}×{h} picture has no chroma planes"));
        }
        let c = InvCoeffs::for_space(p.space, p.full_range).integers();
        self.coeffs = c.map(|v| v as f32);
        // SAFETY: GL calls on the painting thread; each plane's slice
        // holds `stride × (rows − 1) + width` bytes ([`Picture420::planes`]
        // checks), which is what GL reads with that row length.
        unsafe {
            gl.pixel_store_i32(glow::UNPACK_ALIGNMENT, 1);
            for (i, (&t, plane)) in self.textures.iter().zip([p.y, p.u, p.v]).enumerate() {
                let (data, stride) = (plane.data, plane.stride);
                let [pw, ph] = sizes[i.min(1)];
                gl.bind_texture(glow::TEXTURE_2D, Some(t));
                if self.allocated[i.min(1)] != [pw, ph] {
                    gl.tex_image_2d(
                        glow::TEXTURE_2D,
                        0,
                        glow::R8 as i32,
                        pw,
                        ph,
                        0,
                        glow::RED,
                        glow::UNSIGNED_BYTE,
                        glow::PixelUnpackData::Slice(None),
                    );
                }
                gl.pixel_store_i32(glow::UNPACK_ROW_LENGTH, stride as i32);
                gl.tex_sub_image_2d(
                    glow::TEXTURE_2D,
                    0,
                    0,
                    0,
                    pw,
                    ph,
                    glow::RED,
                    glow::UNSIGNED_BYTE,
                    glow::PixelUnpackData::Slice(Some(data)),
                );
                // Level 0 only until mipmaps are made for a reduced view.
                gl.tex_parameter_i32(glow::TEXTURE_2D, glow::TEXTURE_MIN_FILTER, glow::LINEAR as i32);
            }
            gl.pixel_store_i32(glow::UNPACK_ROW_LENGTH, 0);
            gl.bind_texture(glow::TEXTURE_2D, None);
        }
        self.allocated = sizes;
        self.mips = false;
        Ok(())
    }

    fn draw(&mut self, gl: &glow::Context, uv: [f32; 4], reduction: usize) {
        let exact = reduction <= 1;
        // SAFETY: GL calls on the painting thread with objects made on
        // this context; egui restores its own state after the callback.
        unsafe {
            if !exact && !self.mips {
                for &t in &self.textures {
                    gl.bind_texture(glow::TEXTURE_2D, Some(t));
                    gl.generate_mipmap(glow::TEXTURE_2D);
                    gl.tex_parameter_i32(
                        glow::TEXTURE_2D,
                        glow::TEXTURE_MIN_FILTER,
                        glow::LINEAR_MIPMAP_LINEAR as i32,
                    );
                }
                self.mips = true;
            }
            gl.disable(glow::BLEND);
            gl.use_program(Some(self.program));
            gl.bind_vertex_array(Some(self.vao));
            for (i, &t) in self.textures.iter().enumerate() {
                gl.active_texture(UNITS[i]);
                gl.bind_texture(glow::TEXTURE_2D, Some(t));
                gl.uniform_1_i32(self.u_planes[i].as_ref(), i as i32);
            }
            let [w, h] = self.allocated[0];
            let k = self.coeffs;
            gl.uniform_4_f32(self.u_uv.as_ref(), uv[0], uv[1], uv[2], uv[3]);
            gl.uniform_2_f32(self.u_size.as_ref(), w as f32, h as f32);
            gl.uniform_4_f32(self.u_k.as_ref(), k[0], k[1], k[2], k[3]);
            gl.uniform_2_f32(self.u_k2.as_ref(), k[4], k[5]);
            gl.uniform_1_i32(self.u_exact.as_ref(), i32::from(exact));
            gl.draw_arrays(glow::TRIANGLE_STRIP, 0, 4);
            for &unit in UNITS.iter().rev() {
                gl.active_texture(unit);
                gl.bind_texture(glow::TEXTURE_2D, None);
            }
            gl.bind_vertex_array(None);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn software_renderers_are_told_by_name() {
        assert!(is_software_renderer("llvmpipe (LLVM 15.0.6, 256 bits)"));
        assert!(is_software_renderer("Google SwiftShader"));
        assert!(is_software_renderer("Software Rasterizer"));
        assert!(!is_software_renderer("Mesa Intel(R) UHD Graphics 620 (KBL GT2)"));
        assert!(!is_software_renderer("NVIDIA GeForce RTX 3060/PCIe/SSE2"));
    }
    use crate::video::yuv::{Plane, yuv420_to_rgb};

    /// The fragment shader's `convert` in 32-bit floats, as a GPU runs it
    /// on a pixel (not between pixels): each byte read as `byte / 255` (an
    /// 8-bit texel) and scaled back by 255, then the integer arithmetic
    /// done in floats.
    fn shader(y: u8, u: u8, v: u8, k: [f32; 6]) -> [u8; 3] {
        let byte = |b: u8| f32::from(b) / 255.0 * 255.0;
        let (y, u, v) = (byte(y), byte(u) - 128.0, byte(v) - 128.0);
        let l = (y - k[0]) * k[1];
        let r = ((l + k[2] * v + 4096.0) / 8192.0).floor();
        let g = ((l - k[3] * u - k[4] * v + 4096.0) / 8192.0).floor();
        let b = ((l + k[5] * u + 4096.0) / 8192.0).floor();
        [r, g, b].map(|c| c.clamp(0.0, 255.0) as u8)
    }

    /// The CPU conversion of every Y with chroma (`u`, `v`): a 512×2
    /// picture whose 2×2 blocks hold Y = 0, 1, …, 255.
    fn cpu(u: u8, v: u8, c: &InvCoeffs) -> Vec<[u8; 3]> {
        let row: Vec<u8> = (0..512).map(|x| (x / 2) as u8).collect();
        let ys = [row.clone(), row].concat();
        let (us, vs) = ([u; 256], [v; 256]);
        let mut out = vec![0u8; 512 * 2 * 3];
        yuv420_to_rgb(
            Plane {
                data: &ys,
                stride: 512,
            },
            Plane {
                data: &us,
                stride: 256,
            },
            Plane {
                data: &vs,
                stride: 256,
            },
            512,
            2,
            &mut out,
            c,
        );
        (0..256)
            .map(|y| [out[6 * y], out[6 * y + 1], out[6 * y + 2]])
            .collect()
    }

    #[test]
    fn the_shaders_arithmetic_is_the_cpu_conversion() {
        // BT.709, BT.601 (as 5 and 6), BT.2020; limited and full range.
        for (space, full) in [
            (1, false),
            (5, false),
            (6, false),
            (9, false),
            (1, true),
            (5, true),
        ] {
            let c = InvCoeffs::for_space(space, full);
            let k = c.integers().map(|v| v as f32);
            for u in (0..=255u8).step_by(3) {
                for v in (0..=255u8).step_by(3) {
                    for (y, want) in cpu(u, v, &c).into_iter().enumerate() {
                        assert_eq!(
                            shader(y as u8, u, v, k),
                            want,
                            "space {space} full {full}: ({y}, {u}, {v})"
                        );
                    }
                }
            }
        }
    }
}
