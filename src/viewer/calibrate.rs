//! Calibration mode: the image ↔ world point pairs the user clicks and
//! types, editing them (add, drag, delete, name from a field preset), and
//! reading and writing them as `POINTS.csv` (`u,v,x,y`, the format of
//! `underlay calib solve`).

use std::path::Path;

use anyhow::Context as _;

use crate::calib::presets::{self, FieldPreset};
use crate::calib::refine::{RefineOptions, RefineReport, refine};
use crate::calib::{Calibration, Correspondence, FitOptions, Method, Model, fit};
use crate::geom::Vec2;
use crate::image::RgbImage;

/// One correspondence being edited.
#[derive(Clone, Debug, PartialEq)]
pub struct CalibPoint {
    /// Image pixel (u, v).
    pub image: Vec2,
    /// World point (x, y) on the floor; `None` until typed or picked.
    pub world: Option<Vec2>,
    /// Its height above the floor (world units; 0 on the floor): a goal
    /// post's or a pole's top. Points at heights are fitted with the
    /// pinhole model (a full camera).
    pub height: f64,
    /// The field preset point it was picked from, if any.
    pub name: Option<String>,
}

/// The points of calibration mode and which one is selected.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CalibPoints {
    pub points: Vec<CalibPoint>,
    pub selected: Option<usize>,
    /// Bumped on every edit, so fits are redone only when needed.
    pub revision: u64,
}

impl CalibPoints {
    /// Adds a point at image position `image` and selects it.
    pub fn add(&mut self, image: Vec2) -> usize {
        self.points.push(CalibPoint {
            image,
            world: None,
            height: 0.0,
            name: None,
        });
        self.selected = Some(self.points.len() - 1);
        self.revision += 1;
        self.points.len() - 1
    }

    /// Moves point `i` to `image`.
    pub fn move_to(&mut self, i: usize, image: Vec2) {
        if let Some(p) = self.points.get_mut(i)
            && image.is_finite()
            && p.image != image
        {
            p.image = image;
            self.revision += 1;
        }
    }

    /// Sets the world coordinates of point `i` (clearing a preset name
    /// when they no longer match it).
    pub fn set_world(&mut self, i: usize, world: Option<Vec2>, name: Option<String>) {
        if let Some(p) = self.points.get_mut(i) {
            p.world = world.filter(|w| w.is_finite());
            p.name = name;
            self.revision += 1;
        }
    }

    /// Sets the height above the floor of point `i` (a finite number).
    pub fn set_height(&mut self, i: usize, height: f64) {
        if let Some(p) = self.points.get_mut(i)
            && height.is_finite()
            && p.height != height
        {
            p.height = height;
            self.revision += 1;
        }
    }

    /// Whether some complete point is above the floor.
    pub fn has_heights(&self) -> bool {
        self.points.iter().any(|p| p.world.is_some() && p.height != 0.0)
    }

    pub fn remove(&mut self, i: usize) {
        if i < self.points.len() {
            self.points.remove(i);
            self.selected = match self.selected {
                Some(s) if s == i => None,
                Some(s) if s > i => Some(s - 1),
                s => s,
            };
            self.revision += 1;
        }
    }

    pub fn clear(&mut self) {
        self.points.clear();
        self.selected = None;
        self.revision += 1;
    }

    /// The point whose image position is nearest to `image` within
    /// `radius` pixels.
    pub fn hit(&self, image: Vec2, radius: f64) -> Option<usize> {
        self.points
            .iter()
            .enumerate()
            .map(|(i, p)| (i, (p.image - image).length()))
            .filter(|&(_, d)| d <= radius)
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(i, _)| i)
    }

    /// The complete pairs (with world coordinates) and their indices.
    pub fn pairs(&self) -> Vec<(usize, Vec2, Vec2)> {
        self.points
            .iter()
            .enumerate()
            .filter_map(|(i, p)| p.world.map(|w| (i, p.image, w)))
            .collect()
    }

    /// Writes the complete pairs as `u,v,x,y,name` CSV (the format of
    /// `underlay calib solve`, which ignores the name), with a `z` column
    /// when some point is above the floor.
    pub fn to_csv(&self) -> String {
        let heights = self.has_heights();
        let mut s = String::from(if heights {
            "u,v,x,y,z,name\n"
        } else {
            "u,v,x,y,name\n"
        });
        for (i, img, w) in self.pairs() {
            // A name with a comma would shift the columns: it is left out.
            let name = self.points[i]
                .name
                .as_deref()
                .filter(|n| !n.contains(','))
                .unwrap_or("");
            if heights {
                let z = self.points[i].height;
                s.push_str(&format!("{},{},{},{},{z},{name}\n", img.x, img.y, w.x, w.y));
            } else {
                s.push_str(&format!("{},{},{},{},{name}\n", img.x, img.y, w.x, w.y));
            }
        }
        s
    }

    /// Reads `u,v,x,y` CSV (the format of `underlay calib solve`: other
    /// columns ignored but `name`, comments and blank lines skipped);
    /// errors name the file and line.
    pub fn from_csv(text: &str, path: &Path) -> anyhow::Result<Self> {
        let file = crate::calib::points::parse_points(text)
            .with_context(|| format!("in points file {}", path.display()))?;
        let mut out = CalibPoints::default();
        for (k, (c, name)) in file.points.iter().zip(file.names).enumerate() {
            out.points.push(CalibPoint {
                image: c.image,
                world: Some(c.world),
                height: file.heights.get(k).copied().unwrap_or(0.0),
                name,
            });
        }
        out.revision = 1;
        Ok(out)
    }
}

/// Why calibration mode has no fit to show.
#[derive(Clone, Debug, thiserror::Error)]
pub enum FitError {
    #[error("the {model} model needs {need} points with world coordinates; {have} so far")]
    TooFew {
        model: crate::calib::Model,
        need: usize,
        have: usize,
    },
    #[error("the fit failed")]
    Fit(#[source] std::sync::Arc<crate::calib::CalibError>),
    #[error("points above the floor need the pinhole model (a full camera), not {model}")]
    Heights { model: crate::calib::Model },
}

impl PartialEq for FitError {
    /// The same when they say the same.
    fn eq(&self, other: &Self) -> bool {
        crate::error::chain(self) == crate::error::chain(other)
    }
}

/// A fit of the current points, as calibration mode shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct FitView {
    pub calibration: Calibration,
    /// Residual in pixels of every point (by index in [`CalibPoints`];
    /// `None` for points without world coordinates or that do not map).
    pub residuals: Vec<Option<f64>>,
    /// Points flagged as far out of line with the rest (indices in
    /// [`CalibPoints`]).
    pub outliers: Vec<usize>,
    pub rms_px: f64,
    pub loo_rms_px: Option<f64>,
    pub warnings: Vec<String>,
}

/// A snap to the lines, ready to run on a picture.
#[derive(Clone, Debug)]
pub struct SnapPlan {
    /// The calibration to start from, in the preset's unit.
    start: Calibration,
    preset: FieldPreset,
    opts: RefineOptions,
    /// The log's world unit, the result's.
    unit: String,
}

impl SnapPlan {
    /// Refines on `image`: the calibration in the log's unit, and how it
    /// went.
    pub fn run(&self, image: &RgbImage) -> Result<(Calibration, RefineReport), String> {
        if image.is_empty() {
            return Err("the frame is no longer in memory; try again".into());
        }
        let r = refine(image, &self.start, &self.preset, &self.opts).map_err(|e| crate::error::chain(&e))?;
        let (back, _) = r
            .calibration
            .with_world_unit(self.preset.unit)
            .with_field(presets::FieldSpec::Preset(self.preset.spec()))
            .for_unit(&self.unit);
        Ok((back.with_world_unit(&self.unit), r.report))
    }
}

/// The state of calibration mode.
#[derive(Clone, Debug, PartialEq)]
pub struct CalibMode {
    /// Clicks on the video add and move points.
    pub active: bool,
    pub points: CalibPoints,
    /// The point being dragged.
    pub dragging: Option<usize>,
    pub model: Model,
    /// Leave flagged points out of the fit (RANSAC) instead of least
    /// squares over all of them.
    pub robust: bool,
    /// The field preset whose points can be picked and whose lines are drawn.
    pub preset: Option<&'static str>,
    /// Draw the preset's field lines through the calibration.
    pub show_lines: bool,
    /// The fit of the points at `fitted` (an error says what is missing).
    pub fit: Option<Result<FitView, FitError>>,
    /// (points revision, model, robust) the fit was made for.
    fitted: Option<(u64, Model, bool)>,
    /// The last "snap to lines": its report, or why it failed.
    pub snap: Option<Result<RefineReport, String>>,
    /// Time of the frame a snap waits for.
    pub snap_waiting: Option<f64>,
    /// A snapped calibration not trusted (its lines not found where it
    /// puts them): kept out of the session until the user takes it.
    pub snap_pending: Option<Calibration>,
    /// Open the panel's calibration section at the next frame (points
    /// were just loaded).
    pub open_section: bool,
}

impl Default for CalibMode {
    fn default() -> Self {
        CalibMode {
            active: false,
            points: CalibPoints::default(),
            dragging: None,
            model: Model::Homography,
            robust: false,
            preset: None,
            show_lines: true,
            fit: None,
            fitted: None,
            snap: None,
            snap_waiting: None,
            snap_pending: None,
            open_section: false,
        }
    }
}

impl CalibMode {
    /// The points, as a session's `[viewer]` table keeps them.
    pub fn saved_points(&self) -> Vec<super::state::SavedCalibPoint> {
        self.points
            .points
            .iter()
            .map(|p| super::state::SavedCalibPoint {
                image: [p.image.x, p.image.y],
                world: p.world.map(|w| [w.x, w.y]),
                height: p.height,
                name: p.name.clone(),
            })
            .collect()
    }

    /// Puts back points, model and preset saved in a session (calibration
    /// mode stays off; points with non-finite coordinates are dropped).
    pub fn restore(
        &mut self,
        saved: &[super::state::SavedCalibPoint],
        model: Option<Model>,
        preset: Option<&str>,
    ) {
        let finite = |v: [f64; 2]| v.iter().all(|c| c.is_finite());
        self.points = CalibPoints {
            points: saved
                .iter()
                .filter(|p| finite(p.image) && p.world.is_none_or(finite) && p.height.is_finite())
                .map(|p| CalibPoint {
                    image: Vec2::new(p.image[0], p.image[1]),
                    world: p.world.map(|w| Vec2::new(w[0], w[1])),
                    height: p.height,
                    name: p.name.clone(),
                })
                .collect(),
            selected: None,
            revision: self.points.revision + 1,
        };
        if let Some(m) = model {
            self.model = m;
        }
        self.preset = preset.and_then(|id| presets::all().into_iter().find(|f| f.id == id).map(|f| f.id));
        self.dragging = None;
    }

    /// Fits the points again when they or the model changed; returns the
    /// new calibration when a fit succeeded just now. `image_size` is the
    /// video's `[width, height]` (centre of distortion).
    pub fn refit(&mut self, image_size: Option<[u32; 2]>) -> Option<Calibration> {
        let key = (self.points.revision, self.model, self.robust);
        if self.fitted == Some(key) {
            return None;
        }
        self.fitted = Some(key);
        let pairs = self.points.pairs();
        if pairs.is_empty() && self.points.points.is_empty() {
            self.fit = None;
            return None;
        }
        let need = self.model.min_points();
        if pairs.len() < need {
            self.fit = Some(Err(FitError::TooFew {
                model: self.model,
                need,
                have: pairs.len(),
            }));
            return None;
        }
        let heights = self.points.has_heights();
        if heights && self.model != Model::Pinhole {
            self.fit = Some(Err(FitError::Heights { model: self.model }));
            return None;
        }
        let corr: Vec<Correspondence> = pairs
            .iter()
            .map(|&(_, image, world)| Correspondence { image, world })
            .collect();
        let height = |i: usize| self.points.points.get(i).map_or(0.0, |p| p.height);
        let opts = FitOptions {
            model: self.model,
            method: if self.robust {
                Method::Ransac
            } else {
                Method::LeastSquares
            },
            image_size,
            ..FitOptions::default()
        };
        let fitted = if heights {
            let corr3: Vec<crate::calib::Correspondence3> = pairs
                .iter()
                .map(|&(i, image, world)| crate::calib::Correspondence3 {
                    image,
                    world: [world.x, world.y, height(i)],
                })
                .collect();
            crate::calib::fit_camera(&corr3, &opts)
        } else {
            fit(&corr, &opts)
        };
        match fitted {
            Ok(f) => {
                let n = self.points.points.len();
                let mut residuals = vec![None; n];
                for (k, &(i, _, _)) in pairs.iter().enumerate() {
                    residuals[i] = f.report.residuals_px.get(k).copied().flatten();
                }
                let outliers = f
                    .report
                    .outliers
                    .iter()
                    .filter_map(|&k| pairs.get(k).map(|p| p.0))
                    .collect();
                let fitted = pairs
                    .iter()
                    .map(|&(i, image, world)| crate::calib::unit::FittedPoint {
                        u: image.x,
                        v: image.y,
                        x: world.x,
                        y: world.y,
                        z: height(i),
                        name: self.points.points.get(i).and_then(|p| p.name.clone()),
                    })
                    .collect();
                let view = FitView {
                    calibration: f.calibration.clone().with_fitted_points(fitted),
                    residuals,
                    outliers,
                    rms_px: f.report.rms_px,
                    loo_rms_px: f.report.loo_rms_px,
                    warnings: f
                        .report
                        .left_handed
                        .then(|| format!("note: {}", crate::calib::points::LEFT_HANDED))
                        .into_iter()
                        .chain(f.report.warnings.iter().cloned())
                        .collect(),
                };
                self.fit = Some(Ok(view));
                Some(f.calibration)
            }
            Err(e) => {
                self.fit = Some(Err(FitError::Fit(std::sync::Arc::new(e))));
                None
            }
        }
    }

    /// The fit, when the last one succeeded.
    pub fn fit_view(&self) -> Option<&FitView> {
        self.fit.as_ref().and_then(|f| f.as_ref().ok())
    }

    /// Snaps `calib` (in the log's `unit`) to the lines of the chosen
    /// preset in `image` (a frame as decoded), fitting the chosen model:
    /// the refined calibration, in the log's unit, and how it went.
    pub fn snap_to_lines(
        &self,
        image: &RgbImage,
        calib: &Calibration,
        unit: &str,
    ) -> Result<(Calibration, RefineReport), String> {
        self.snap_plan(calib, unit)?.run(image)
    }

    /// What a snap of `calib` (in the log's `unit`) needs, to run away from
    /// the UI ([`SnapPlan::run`]); an error says what is missing.
    pub fn snap_plan(&self, calib: &Calibration, unit: &str) -> Result<SnapPlan, String> {
        let preset = self
            .field()
            .ok_or_else(|| "choose the field whose lines are painted in the picture".to_string())?;
        let (start, check) = calib.clone().with_world_unit(unit).for_unit(preset.unit);
        if let crate::calib::unit::UnitCheck::Unknown { .. } = check {
            return Err(format!(
                "the log's world unit `{unit}` cannot be converted to the field's {}",
                preset.unit
            ));
        }
        Ok(SnapPlan {
            start,
            preset,
            opts: RefineOptions {
                model: self.model,
                ..RefineOptions::default()
            },
            unit: unit.to_owned(),
        })
    }

    /// The field preset all the named points belong to (name and place),
    /// if any does; `None` without named points.
    pub fn preset_of_names(&self) -> Option<&'static str> {
        let named: Vec<(&str, Vec2)> = self
            .points
            .points
            .iter()
            .filter_map(|p| Some((p.name.as_deref()?, p.world?)))
            .collect();
        if named.is_empty() {
            return None;
        }
        presets::all().into_iter().map(|f| (f.id, f)).find_map(|(id, f)| {
            named
                .iter()
                .all(|(n, w)| {
                    f.point(n)
                        .is_some_and(|p| (p - *w).length() <= 1e-6 * (1.0 + p.length()))
                })
                .then_some(id)
        })
    }

    /// The chosen field preset.
    pub fn field(&self) -> Option<FieldPreset> {
        self.preset.and_then(presets::preset)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_preset_is_recognised_from_named_points() {
        let mut m = CalibMode::default();
        assert_eq!(m.preset_of_names(), None);
        let i = m.points.add(Vec2::new(1.0, 2.0));
        m.points
            .set_world(i, Some(Vec2::new(4500.0, 3000.0)), Some("corner +x+y".into()));
        assert_eq!(m.preset_of_names(), Some("ssl-b"), "ssl-a's corner is elsewhere");
        let j = m.points.add(Vec2::new(3.0, 4.0));
        m.points
            .set_world(j, Some(Vec2::new(1.0, 1.0)), Some("centre".into()));
        assert_eq!(m.preset_of_names(), None, "the centre is not at (1, 1)");
    }

    /// Snapping on a demo frame from four clicks 10 px off, with the log in
    /// metres: the result is in metres and matches the true camera.
    #[test]
    fn snap_to_lines_refines_in_the_logs_unit() {
        use crate::demo::render::{Camera, Renderer};
        let cam = Camera::demo(960, 540).unwrap();
        let truth = cam.calibration().unwrap();
        let run = crate::demo::sim::simulate(1, 2.1);
        let (mut img, mut mask) = (RgbImage::zeros((0, 0, 3)), crate::image::MaskImage::zeros((0, 0)));
        Renderer::new(cam, 1).render(&run.at(2.0), 0, &mut img, &mut mask);
        let preset = presets::ssl_division_b();
        let clicks: Vec<Correspondence> = ["corner +x+y", "corner -x+y", "corner -x-y", "corner +x-y"]
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let w = preset.point(n).unwrap();
                let a = i as f64 * 1.7;
                Correspondence {
                    image: truth.project(w).unwrap() + Vec2::new(a.cos(), a.sin()) * 10.0,
                    world: w * 0.001,
                }
            })
            .collect();
        let rough = fit(&clicks, &FitOptions::default()).unwrap().calibration;
        let mut m = CalibMode {
            model: Model::Radial,
            ..CalibMode::default()
        };
        assert!(
            m.snap_to_lines(&img, &rough, "m")
                .unwrap_err()
                .contains("choose the field")
        );
        m.preset = Some("ssl-b");
        assert!(m.snap_to_lines(&RgbImage::zeros((0, 0, 3)), &rough, "m").is_err());
        let (c, report) = m.snap_to_lines(&img, &rough, "m").unwrap();
        assert_eq!(c.world_unit(), Some("m"));
        assert!(report.rms_px < 1.0, "{report:?}");
        for p in &preset.points {
            let d = (c.project(p.pos * 0.001).unwrap() - truth.project(p.pos).unwrap()).length();
            assert!(d < 0.5, "{}: {d} px", p.name);
        }
        assert!(
            m.snap_to_lines(&img, &rough, "furlong")
                .unwrap_err()
                .contains("cannot be converted")
        );
    }

    #[test]
    fn edit_points_and_keep_selection_right() {
        let mut c = CalibPoints::default();
        let a = c.add(Vec2::new(10.0, 10.0));
        let b = c.add(Vec2::new(100.0, 50.0));
        assert_eq!(c.selected, Some(b));
        c.move_to(a, Vec2::new(12.0, 11.0));
        c.move_to(a, Vec2::new(f64::NAN, 1.0));
        assert_eq!(c.points[a].image, Vec2::new(12.0, 11.0));
        assert_eq!(c.hit(Vec2::new(98.0, 52.0), 5.0), Some(b));
        assert_eq!(c.hit(Vec2::new(50.0, 50.0), 5.0), None);
        c.set_world(b, Some(Vec2::new(0.0, 0.0)), Some("centre".into()));
        assert_eq!(c.pairs().len(), 1);
        c.remove(a);
        assert_eq!(c.selected, Some(0));
        assert_eq!(c.points[0].name.as_deref(), Some("centre"));
        let rev = c.revision;
        c.remove(7);
        assert_eq!(c.revision, rev);
    }

    /// Points of a tilted view of a 9 × 6 m field, one of them mislabelled.
    fn view_points(mode: &mut CalibMode, bad: Option<usize>) {
        let h =
            Calibration::from_homography([[0.09, -0.01, 640.0], [0.005, -0.06, 360.0], [0.0, 0.00002, 1.0]])
                .unwrap();
        let field = presets::ssl_division_b();
        for (k, np) in field.points.iter().take(12).enumerate() {
            let img = h.project(np.pos).unwrap();
            let i = mode.points.add(img);
            let world = if bad == Some(k) {
                np.pos + Vec2::new(900.0, 700.0)
            } else {
                np.pos
            };
            mode.points.set_world(i, Some(world), Some(np.name.clone()));
        }
    }

    #[test]
    fn fit_reports_residuals_and_flags_the_bad_point() {
        let mut m = CalibMode::default();
        m.points.add(Vec2::new(1.0, 2.0));
        assert!(m.refit(None).is_none());
        assert!(
            m.fit
                .as_ref()
                .unwrap()
                .as_ref()
                .unwrap_err()
                .to_string()
                .contains("needs 4 points")
        );
        m.points.clear();
        view_points(&mut m, Some(5));
        assert!(m.refit(Some([1280, 720])).is_some());
        let v = m.fit_view().unwrap();
        assert_eq!(v.outliers, vec![5], "{v:?}");
        assert!(v.residuals[5].unwrap() > 5.0);
        // Unchanged points: no new fit.
        assert!(m.refit(Some([1280, 720])).is_none());
        // Fixing the point makes the residuals vanish.
        let good = presets::ssl_division_b().points[5].pos;
        m.points.set_world(5, Some(good), None);
        assert!(m.refit(Some([1280, 720])).is_some());
        let v = m.fit_view().unwrap();
        assert!(v.outliers.is_empty());
        assert!(v.rms_px < 1e-6, "{}", v.rms_px);
    }

    #[test]
    fn degenerate_points_are_an_error_not_a_panic() {
        let mut m = CalibMode::default();
        for i in 0..5 {
            let k = m.points.add(Vec2::new(i as f64 * 10.0, i as f64 * 10.0));
            m.points
                .set_world(k, Some(Vec2::new(i as f64 * 100.0, i as f64 * 100.0)), None);
        }
        assert!(m.refit(None).is_none());
        assert!(m.fit.as_ref().unwrap().is_err());
    }

    #[test]
    fn csv_round_trip_and_errors_name_the_line() {
        let mut c = CalibPoints::default();
        for (i, w) in [(0.0, 0.0), (1000.0, 0.0), (1000.0, 500.0)]
            .into_iter()
            .enumerate()
        {
            let k = c.add(Vec2::new(i as f64 * 10.0 + 0.5, 3.0));
            c.set_world(k, Some(Vec2::new(w.0, w.1)), None);
        }
        c.add(Vec2::new(1.0, 1.0)); // incomplete: not written
        c.points[1].name = Some("corner +x+y".into());
        let p = Path::new("pts.csv");
        let back = CalibPoints::from_csv(&c.to_csv(), p).unwrap();
        assert_eq!(back.pairs(), c.pairs()[..3].to_vec());
        assert_eq!(back.points[1].name.as_deref(), Some("corner +x+y"));
        assert_eq!(back.points[0].name, None);
        // What `calib solve` reads, the viewer reads: comments, other
        // columns, a name column anywhere.
        let solve = "# clicked\nname,u,v,x,y,note\ncentre,1,2,3,4,ok\n,5,6,7,8,\n";
        let pts = CalibPoints::from_csv(solve, p).unwrap();
        assert_eq!(pts.points.len(), 2);
        assert_eq!(pts.points[0].name.as_deref(), Some("centre"));
        assert_eq!(pts.points[1].world, Some(Vec2::new(7.0, 8.0)));
        let e = CalibPoints::from_csv("u,v,x,y\n1,2,3,4\n1,2,x,4\n", p).unwrap_err();
        assert!(
            format!("{e:#}").contains("pts.csv") && format!("{e:#}").contains("line 3"),
            "{e:#}"
        );
        let e = CalibPoints::from_csv("a,b\n", p).unwrap_err();
        assert!(
            format!("{e:#}").contains("pts.csv") && format!("{e:#}").contains("line 1"),
            "{e:#}"
        );
        let e = CalibPoints::from_csv("u,v,x,y\n1,2,3,inf\n", p).unwrap_err();
        assert!(format!("{e:#}").contains("finite"), "{e:#}");
        assert!(CalibPoints::from_csv("", p).is_err());
        // Issue 33: points at heights come and go with a z column.
        let pts = CalibPoints::from_csv("u,v,x,y,z\n1,2,3,4,0\n5,6,7,8,2440\n", p).unwrap();
        assert_eq!(
            pts.points.iter().map(|q| q.height).collect::<Vec<_>>(),
            [0.0, 2440.0]
        );
        assert!(pts.has_heights());
        let csv = pts.to_csv();
        assert!(csv.starts_with("u,v,x,y,z,name\n"), "{csv}");
        assert_eq!(CalibPoints::from_csv(&csv, p).unwrap().points, pts.points);
        let flat = CalibPoints::from_csv("u,v,x,y,z\n1,2,3,4,0\n", p).unwrap();
        assert!(!flat.has_heights() && flat.to_csv().starts_with("u,v,x,y,name\n"));
    }

    #[test]
    fn points_model_and_preset_survive_saving() {
        let mut c = CalibMode::default();
        let i = c.points.add(Vec2::new(10.0, 20.0));
        c.points
            .set_world(i, Some(Vec2::new(-4500.0, 3000.0)), Some("corner -x+y".into()));
        c.points.add(Vec2::new(300.0, 40.0));
        c.model = Model::Radial;
        c.preset = Some("ssl-b");
        let saved = c.saved_points();
        let mut back = CalibMode::default();
        back.restore(&saved, Some(c.model), c.preset);
        assert_eq!(back.points.points, c.points.points);
        assert_eq!(
            (back.model, back.preset, back.active),
            (Model::Radial, Some("ssl-b"), false)
        );
        // Damaged entries are dropped, an unknown preset forgotten.
        let mut bad = saved.clone();
        bad[1].image = [f64::NAN, 1.0];
        back.restore(&bad, None, Some("no-such-field"));
        assert_eq!(back.points.points.len(), 1);
        assert_eq!(back.preset, None);
        // Restoring nothing clears.
        back.restore(&[], None, None);
        assert!(back.points.points.is_empty());
    }

    /// Points clicked at heights on a known camera: the radial model
    /// refuses them and says which model takes them; the pinhole model fits
    /// the full camera, and a height typed into the table is kept.
    #[test]
    fn points_at_heights_fit_a_full_camera() {
        let k = [[900.0, 0.0, 639.5], [0.0, 900.0, 359.5], [0.0, 0.0, 1.0]];
        let (r, t) = crate::calib::camera::look_at([-500.0, -6000.0, 4000.0], [0.0, 0.0, 0.0]).unwrap();
        let truth = Calibration::from_camera(&k, &[-0.05, 0.0], &r, t).unwrap();
        let mut mode = CalibMode::default();
        let world: Vec<[f64; 3]> = vec![
            [-4500.0, -3000.0, 0.0],
            [4500.0, -3000.0, 0.0],
            [4500.0, 3000.0, 0.0],
            [-4500.0, 3000.0, 0.0],
            [0.0, 0.0, 0.0],
            [0.0, 3000.0, 0.0],
            [0.0, -3000.0, 0.0],
            [-4500.0, 0.0, 0.0],
            [4500.0, -500.0, 160.0],
            [4500.0, 500.0, 160.0],
            [-4500.0, -500.0, 160.0],
            [-4500.0, 500.0, 160.0],
            [2000.0, 1000.0, 1500.0],
        ];
        for w in &world {
            let i = mode.points.add(truth.project3(*w).unwrap());
            mode.points.set_world(i, Some(Vec2::new(w[0], w[1])), None);
            mode.points.set_height(i, w[2]);
        }
        mode.model = Model::Radial;
        assert!(mode.refit(Some([1280, 720])).is_none());
        let e = mode.fit.as_ref().unwrap().as_ref().unwrap_err().to_string();
        assert!(e.contains("pinhole"), "{e}");
        mode.model = Model::Pinhole;
        let c = mode.refit(Some([1280, 720])).expect("a full camera");
        assert!(c.is_full_camera());
        for w in &world {
            let d = (c.project3(*w).unwrap() - truth.project3(*w).unwrap()).length();
            assert!(d < 0.05, "{w:?}: {d} px");
        }
        let view = mode.fit_view().unwrap();
        assert_eq!(view.calibration.fitted_points()[12].z, 1500.0);
        // Saved with the session and back.
        let saved = mode.saved_points();
        assert_eq!(saved[12].height, 1500.0);
        let mut back = CalibMode::default();
        back.restore(&saved, Some(Model::Pinhole), None);
        assert_eq!(back.points.points, mode.points.points);
    }
}
