use super::*;
use crate::video::source::SyntheticSource;
use eframe::egui::Color32;

/// The RGB picture of a frame handed over (never planes: tests do not
/// ask for them unless they say so).
fn rgb(s: &Shown) -> &eframe::egui::ColorImage {
    s.picture.rgb().expect("an RGB picture")
}

fn wait_for(p: &Player, what: impl Fn(&Shown) -> bool) -> Shown {
    let until = Instant::now() + Duration::from_secs(20);
    while Instant::now() < until {
        if let Some(s) = p.take_frame()
            && what(&s)
        {
            return s;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    panic!("no matching frame arrived");
}

/// Paints frame pixels red where the offset says so, to see settings.
struct Marker {
    red: bool,
}

impl FrameProcessor for Marker {
    fn configure(&mut self, s: &DrawSettings) -> Result<(), PipelineError> {
        self.red = s.time.offset > 0.0;
        Ok(())
    }
    fn process(&mut self, f: &mut SourceFrame) -> Result<ProcessStats, PipelineError> {
        let f = &mut f.image;
        if self.red {
            f[[0, 0, 0]] = 255;
            f[[0, 0, 1]] = 0;
            f[[0, 0, 2]] = 0;
        }
        Ok(ProcessStats {
            primitives: 1,
            ..Default::default()
        })
    }
}

fn player() -> Player {
    let src = SyntheticSource::new(32, 18, 10.0, 100).unwrap();
    Player::spawn(
        Box::new(src),
        Box::new(Marker { red: false }),
        DrawSettings::default(),
        || {},
    )
    .unwrap()
}

/// Frames with a keyframe every `gop`; a seek to the frame itself
/// waits until the test lets it go.
struct Keyframed {
    inner: SyntheticSource,
    gop: u64,
    gate: crossbeam_channel::Receiver<()>,
}

impl FrameSource for Keyframed {
    fn info(&self) -> &crate::video::source::SourceInfo {
        self.inner.info()
    }
    fn next_frame(&mut self) -> Result<Option<SourceFrame>, crate::video::source::SourceError> {
        self.inner.next_frame()
    }
    fn frame_at(&mut self, t: f64) -> Result<Option<SourceFrame>, crate::video::source::SourceError> {
        let _ = self.gate.recv_timeout(Duration::from_secs(10));
        self.inner.frame_at(t)
    }
    fn keyframe_at(&mut self, t: f64) -> Result<Option<SourceFrame>, crate::video::source::SourceError> {
        let fps = self.inner.info().fps;
        let k = ((t * fps + 1e-9).floor() as u64) / self.gop * self.gop;
        self.inner.frame_at(k as f64 / fps)
    }
}

#[test]
fn a_far_seek_shows_the_keyframe_first_then_the_frame() {
    let (open, gate) = crossbeam_channel::unbounded();
    let src = Keyframed {
        inner: SyntheticSource::new(32, 18, 10.0, 100).unwrap(),
        gop: 30,
        gate,
    };
    let p = Player::spawn(
        Box::new(src),
        Box::new(Marker { red: false }),
        DrawSettings::default(),
        || {},
    )
    .unwrap();
    p.show(0.0, false);
    let first = wait_for(&p, |s| s.requested == Some(0.0));
    assert!(!first.preview && first.index == 0);
    // Far: the keyframe at 6 s first, marked, for the time asked.
    p.show(8.55, false);
    let key = wait_for(&p, |s| s.requested == Some(8.55));
    assert!(key.preview && key.time == 6.0, "{} {}", key.preview, key.time);
    // Then the frame itself, once its seek goes through.
    open.send(()).unwrap();
    let exact = wait_for(&p, |s| s.requested == Some(8.55) && !s.preview);
    assert_eq!(exact.index, 85);
    // Near (read on from what is there): no stand-in.
    p.show(9.0, false);
    let near = wait_for(&p, |s| s.requested == Some(9.0));
    assert!(!near.preview && near.index == 90);
}

/// Keyframes every 30 frames at 10 fps, known to the ring as a video's
/// index makes them known.
struct Indexed(Keyframed);

impl FrameSource for Indexed {
    fn info(&self) -> &crate::video::source::SourceInfo {
        self.0.info()
    }
    fn next_frame(&mut self) -> Result<Option<SourceFrame>, crate::video::source::SourceError> {
        self.0.next_frame()
    }
    fn frame_at(&mut self, t: f64) -> Result<Option<SourceFrame>, crate::video::source::SourceError> {
        self.0.frame_at(t)
    }
    fn keyframe_at(&mut self, t: f64) -> Result<Option<SourceFrame>, crate::video::source::SourceError> {
        self.0.keyframe_at(t)
    }
    fn seek_index(&self) -> Option<crate::video::SeekIndex> {
        Some(crate::video::SeekIndex::from_keys(&[0, 30, 60, 90], 0.1, 0))
    }
}

/// A seek reached by reading on within its group of pictures, far: the
/// next frame decoded is shown at once, then the frame itself — no seek.
#[test]
fn a_far_read_on_shows_a_frame_on_the_way_first() {
    let (open, gate) = crossbeam_channel::unbounded();
    let src = Indexed(Keyframed {
        inner: SyntheticSource::new(32, 18, 10.0, 100).unwrap(),
        gop: 30,
        gate,
    });
    let p = Player::spawn(
        Box::new(src),
        Box::new(Marker { red: false }),
        DrawSettings::default(),
        || {},
    )
    .unwrap();
    // The first frame, through a seek the gate lets go.
    open.send(()).unwrap();
    p.show(0.0, false);
    let first = wait_for(&p, |s| s.requested == Some(0.0));
    assert!(!first.preview && first.index == 0);
    // 2.5 s on, the same group of pictures: the frame after 0 first.
    p.show(2.5, false);
    let on_the_way = wait_for(&p, |s| s.requested == Some(2.5));
    assert!(on_the_way.preview, "a frame on the way, marked");
    assert!(
        on_the_way.index > 0 && on_the_way.index < 25,
        "{}",
        on_the_way.index
    );
    let exact = wait_for(&p, |s| s.requested == Some(2.5) && !s.preview);
    assert_eq!(exact.index, 25);
    // Near: no stand-in.
    p.show(2.8, false);
    let near = wait_for(&p, |s| s.requested == Some(2.8));
    assert!(!near.preview && near.index == 28);
}

#[test]
fn shows_the_frame_at_a_time_and_steps() {
    let p = player();
    p.show(2.05, false);
    let s = wait_for(&p, |s| s.requested == Some(2.05));
    assert_eq!((s.index, s.time), (20, 2.0));
    p.step(1);
    assert_eq!(wait_for(&p, |_| true).index, 21);
    p.step(-3);
    assert_eq!(wait_for(&p, |_| true).index, 18);
    // Far seeks, both ways, and the ends.
    p.show(9.0, false);
    assert_eq!(wait_for(&p, |s| s.requested == Some(9.0)).index, 90);
    p.show(0.0, false);
    assert_eq!(wait_for(&p, |s| s.requested == Some(0.0)).index, 0);
    p.show(50.0, false);
    let last = wait_for(&p, |s| s.requested == Some(50.0));
    assert_eq!(last.index, 99);
    assert!(last.is_last);
    p.step(5);
    assert_eq!(wait_for(&p, |_| true).index, 99);
    p.step(-1000);
    assert_eq!(wait_for(&p, |_| true).index, 0);
}

/// A source whose indices are wrong after a seek (as estimated indices
/// can be): frames must be told apart by time.
struct Relabel {
    inner: SyntheticSource,
    next_label: u64,
}

impl crate::video::source::FrameSource for Relabel {
    fn info(&self) -> &crate::video::source::SourceInfo {
        self.inner.info()
    }
    fn next_frame(&mut self) -> Result<Option<SourceFrame>, crate::video::source::SourceError> {
        let f = self.inner.next_frame()?;
        self.next_label += 1;
        Ok(f.map(|mut f| {
            f.index = self.next_label;
            f
        }))
    }
    fn frame_at(&mut self, t: f64) -> Result<Option<SourceFrame>, crate::video::source::SourceError> {
        let f = self.inner.frame_at(t)?;
        self.next_label = 1;
        Ok(f.map(|mut f| {
            f.index = 1;
            f
        }))
    }
}

#[test]
fn steps_follow_times_not_indices() {
    let src = Relabel {
        inner: SyntheticSource::new(32, 18, 10.0, 100).unwrap(),
        next_label: 0,
    };
    let p = Player::spawn(
        Box::new(src),
        Box::new(Marker { red: false }),
        DrawSettings::default(),
        || {},
    )
    .unwrap();
    p.show(0.0, false);
    wait_for(&p, |s| s.requested == Some(0.0));
    p.show(5.0, false);
    assert_eq!(wait_for(&p, |s| s.requested == Some(5.0)).time, 5.0);
    p.step(-1);
    assert!((wait_for(&p, |_| true).time - 4.9).abs() < 1e-9);
    p.step(-5);
    assert!((wait_for(&p, |_| true).time - 4.4).abs() < 1e-9);
    p.step(2);
    assert!((wait_for(&p, |_| true).time - 4.6).abs() < 1e-9);
    p.step(-100);
    assert_eq!(wait_for(&p, |_| true).time, 0.0);
    p.step(-1);
    assert_eq!(wait_for(&p, |_| true).time, 0.0);
}

#[test]
fn every_request_is_answered_even_for_the_same_frame() {
    let p = player();
    for t in [1.0, 1.01, 1.0, 1.0] {
        p.show(t, false);
        assert_eq!(wait_for(&p, |s| s.requested == Some(t)).index, 10);
    }
}

#[test]
fn new_settings_redraw_the_current_frame() {
    let mut p = player();
    p.show(1.0, false);
    let s = wait_for(&p, |s| s.requested == Some(1.0));
    assert_ne!(rgb(&s).pixels[0], Color32::from_rgb(255, 0, 0));
    p.configure(DrawSettings {
        time: crate::video::TimeMap::new(1.0),
        ..DrawSettings::default()
    });
    let g = p.generation();
    let s = wait_for(&p, |s| s.generation == g);
    assert_eq!(s.index, 10);
    assert_eq!(rgb(&s).pixels[0], Color32::from_rgb(255, 0, 0));
}

/// What `take` hands out first, waiting up to 20 s.
fn wait_for_answer(p: &Player, take: impl Fn(&Player) -> Option<Patch>) -> Patch {
    let until = Instant::now() + Duration::from_secs(20);
    while Instant::now() < until {
        if let Some(patch) = take(p) {
            return patch;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    panic!("no answer arrived");
}

fn wait_for_patch(p: &Player) -> Patch {
    wait_for_answer(p, Player::take_patch)
}

/// A player whose drawing marks pixel (0, 0) red, showing the frame at
/// 1 s (frame 10 of the synthetic source).
fn marked_frame_shown() -> (Player, Shown) {
    let mut p = player();
    p.configure(DrawSettings {
        time: crate::video::TimeMap::new(1.0),
        ..DrawSettings::default()
    });
    p.show(1.0, false);
    let shown = wait_for(&p, |s| s.requested == Some(1.0) && s.generation == 1);
    (p, shown)
}

/// A patch comes from the frame as decoded, not as drawn: the marker
/// painted on pixel (0, 0) is not in it.
#[test]
fn patches_are_cut_from_the_decoded_frame() {
    let (p, shown) = marked_frame_shown();
    assert_eq!(rgb(&shown).pixels[0], Color32::from_rgb(255, 0, 0));
    let want = SyntheticSource::new(32, 18, 10.0, 100).unwrap().render(10).image;
    p.request_patch(shown.time, 0, 0, 2);
    let patch = wait_for_patch(&p);
    assert_eq!(patch.time, shown.time);
    assert_eq!(patch.pixels, want.slice(ndarray::s![0..3, 0..3, ..]).to_owned());
    assert_ne!(patch.pixels[[0, 0, 1]], 0, "not the marker");
    // Clipped at the far corner; nothing outside the frame or for a
    // frame not in memory.
    p.request_patch(shown.time, 31, 17, 4);
    let corner = wait_for_patch(&p);
    assert_eq!(corner.pixels.dim(), (5, 5, 3));
    assert_eq!(crop(&want, 32, 0, 4).dim(), (0, 0, 3));
    p.request_patch(77.7, 5, 5, 4);
    let gone = wait_for_patch(&p);
    assert!(gone.pixels.is_empty());
}

/// A whole frame as decoded, apart from patches; nothing for a frame
/// not in memory.
#[test]
fn whole_frames_come_as_decoded() {
    let (p, shown) = marked_frame_shown();
    p.request_frame(shown.time);
    let frame = wait_for_answer(&p, Player::take_decoded);
    assert_eq!(
        frame.pixels,
        SyntheticSource::new(32, 18, 10.0, 100).unwrap().render(10).image
    );
    assert!(p.take_patch().is_none(), "a frame is not a patch");
    p.request_frame(77.7);
    assert!(wait_for_answer(&p, Player::take_decoded).pixels.is_empty());
}

#[test]
fn playing_forward_visits_each_frame() {
    let p = player();
    let mut seen = Vec::new();
    for i in 0..30 {
        let t = i as f64 / 10.0;
        p.show(t, true);
        seen.push(wait_for(&p, |s| s.requested == Some(t)).index);
    }
    assert_eq!(seen, (0..30).collect::<Vec<_>>());
}

/// Paints a 4×4 block red at (2, 2) and marks it on the planes.
struct Block;

impl FrameProcessor for Block {
    fn configure(&mut self, _: &DrawSettings) -> Result<(), PipelineError> {
        Ok(())
    }
    fn process(&mut self, f: &mut SourceFrame) -> Result<ProcessStats, PipelineError> {
        f.finish_rgb();
        for y in 2..6 {
            for x in 2..6 {
                f.image[[y, x, 0]] = 255;
                f.image[[y, x, 1]] = 0;
                f.image[[y, x, 2]] = 0;
            }
        }
        if let Some(yuv) = &mut f.yuv {
            yuv.mark_changed([2, 2, 6, 6]);
        }
        Ok(ProcessStats::default())
    }
}

/// Writes a 10-frame, 10 fps H.264 video of `w`×`h` whose frame `i` has
/// `pixel(i, y, x, channel)`.
fn write_video(p: &std::path::Path, w: usize, h: usize, pixel: impl Fn(usize, usize, usize, usize) -> u8) {
    let settings = crate::video::EncoderSettings {
        crf: 18,
        preset: "ultrafast".into(),
        ..Default::default()
    };
    let mut e = crate::video::Encoder::create(p, w as u32, h as u32, &settings).unwrap();
    for i in 0..10 {
        let img = RgbImage::from_shape_fn((h, w, 3), |(y, x, c)| pixel(i, y, x, c));
        e.push(&img, i as f64 / 10.0).unwrap();
    }
    e.finish().unwrap();
}

#[test]
fn planes_are_handed_over_with_the_drawing_in_them() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("v.mp4");
    write_video(&p, 32, 32, |i, y, x, c| {
        ((x * 5 + y * 3 + c * 60 + i * 9) % 200 + 20) as u8
    });
    let open = crate::video::source::OpenOptions {
        keep_yuv: true,
        ..Default::default()
    };
    let src = crate::video::source::DecoderSource::open(&p, &open).unwrap();
    let p2 = Player::spawn(Box::new(src), Box::new(Block), DrawSettings::default(), || {}).unwrap();
    p2.set_planes(true);
    p2.set_display_size([16, 16]);
    p2.show(0.3, false);
    // Not the keyframe shown first while the frame is decoded.
    let s = wait_for(&p2, |s| s.requested == Some(0.3) && !s.preview);
    let Picture::Planes(planes) = &s.picture else {
        panic!("an RGB picture");
    };
    // Full size whatever the display; the block in, the rest as decoded.
    let size = planes.planes().map(|p| (p.width, p.height));
    assert_eq!((size, s.reduction), (Some((32, 32)), 1));
    let shown = planes.to_rgb().unwrap();
    let mut d = crate::video::Decoder::open(&p).unwrap();
    let decoded = d.frame_at(0.3).unwrap().unwrap().image;
    assert!(
        shown[[3, 3, 0]] > 200 && shown[[3, 3, 1]] < 60,
        "{:?}",
        shown.slice(ndarray::s![3, 3, ..])
    );
    for y in 0..32 {
        for x in 0..32 {
            if !(2..6).contains(&y) || !(2..6).contains(&x) {
                let (a, b) = (
                    shown.slice(ndarray::s![y, x, ..]),
                    decoded.slice(ndarray::s![y, x, ..]),
                );
                assert_eq!(a, b, "({x}, {y})");
            }
        }
    }
    // Not asked for: RGB, reduced for the display.
    p2.set_planes(false);
    p2.show(0.3, false);
    let s = wait_for(&p2, |s| {
        s.requested == Some(0.3) && !s.preview && !s.picture.is_planes()
    });
    assert_eq!((rgb(&s).size, s.reduction), ([16, 16], 2));
}

#[test]
fn display_size_reduces_the_picture() {
    let p = player(); // 32×18 frames
    p.set_display_size([16, 9]);
    p.show(1.0, false);
    let s = wait_for(&p, |s| s.requested == Some(1.0) && s.reduction == 2);
    assert_eq!(rgb(&s).size, [16, 9]);
    assert_eq!(s.size, [32, 18]);
    p.set_display_size([100, 100]);
    let s = wait_for(&p, |s| s.reduction == 1);
    assert_eq!(rgb(&s).size, [32, 18]);
}

/// A picture shown reduced 2× or 4× is made from the planes' blocks: within
/// a few levels of the decoded RGB picture reduced (the conversion is
/// linear but for rounding and clipping).
#[test]
fn a_reduced_picture_is_made_from_the_planes_as_drawn() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("v.mp4");
    write_video(&p, 64, 48, |i, y, x, c| {
        ((x * 3 + y * 2 + c * 50 + i * 9) % 180 + 40) as u8
    });
    let open = crate::video::source::OpenOptions {
        keep_yuv: true,
        ..Default::default()
    };
    let mut d = crate::video::Decoder::open(&p).unwrap();
    let decoded = d.frame_at(0.3).unwrap().unwrap().image;
    for (display, k) in [([32, 24], 2usize), ([16, 12], 4)] {
        let src = crate::video::source::DecoderSource::open(&p, &open).unwrap();
        let pl = Player::spawn(
            Box::new(src),
            Box::new(Marker { red: false }),
            DrawSettings::default(),
            || {},
        )
        .unwrap();
        pl.set_display_size(display);
        pl.show(0.3, false);
        let s = wait_for(&pl, |s| s.requested == Some(0.3) && !s.preview);
        assert_eq!(s.reduction, k);
        let want = crate::viewer::screen::to_color_image_reduced(&decoded, k);
        let got = rgb(&s);
        assert_eq!(got.size, want.size, "reduced {k}×");
        let worst = got
            .pixels
            .iter()
            .zip(&want.pixels)
            .flat_map(|(a, b)| (0..3).map(move |c| a[c].abs_diff(b[c])))
            .max()
            .unwrap();
        assert!(worst <= 3, "reduced {k}×: {worst} levels apart");
    }
    // From a frame's planes: even reductions only.
    let mut src = crate::video::source::DecoderSource::open(&p, &open).unwrap();
    let frame = crate::video::source::FrameSource::frame_at(&mut src, 0.3)
        .unwrap()
        .unwrap();
    let img = reduced_from_planes(&frame, 2).expect("planes");
    assert_eq!(img.size, [32, 24]);
    assert!(reduced_from_planes(&frame, 3).is_none() && reduced_from_planes(&frame, 1).is_none());
}
