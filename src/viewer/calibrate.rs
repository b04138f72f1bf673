//! Calibration mode: the image ↔ world point pairs the user clicks and
//! types, editing them (add, drag, delete, name from a field preset), and
//! reading and writing them as `POINTS.csv` (`u,v,x,y`, the format of
//! `underlay calib solve`).

use std::path::Path;

use anyhow::Context as _;

use crate::log::Vec2;

/// One correspondence being edited.
#[derive(Clone, Debug, PartialEq)]
pub struct CalibPoint {
    /// Image pixel (u, v).
    pub image: Vec2,
    /// World point (x, y) on the floor; `None` until typed or picked.
    pub world: Option<Vec2>,
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

    /// Writes the complete pairs as `u,v,x,y` CSV.
    pub fn to_csv(&self) -> String {
        let mut s = String::from("u,v,x,y\n");
        for (_, img, w) in self.pairs() {
            s.push_str(&format!("{},{},{},{}\n", img.x, img.y, w.x, w.y));
        }
        s
    }

    /// Reads `u,v,x,y` CSV (header line required); errors name the line.
    pub fn from_csv(text: &str, path: &Path) -> anyhow::Result<Self> {
        let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty());
        let (_, header) = lines
            .next()
            .with_context(|| format!("{}: empty file", path.display()))?;
        let cols: Vec<String> = header.split(',').map(|c| c.trim().to_lowercase()).collect();
        anyhow::ensure!(
            cols == ["u", "v", "x", "y"],
            "{}:1: expected the header u,v,x,y, found {header:?}",
            path.display()
        );
        let mut out = CalibPoints::default();
        for (i, line) in lines {
            let vals: Vec<f64> = line
                .split(',')
                .map(|v| v.trim().parse::<f64>())
                .collect::<Result<_, _>>()
                .with_context(|| format!("{}:{}: not four numbers: {line:?}", path.display(), i + 1))?;
            anyhow::ensure!(
                vals.len() == 4 && vals.iter().all(|v| v.is_finite()),
                "{}:{}: expected four finite numbers u,v,x,y, found {line:?}",
                path.display(),
                i + 1
            );
            anyhow::ensure!(out.points.len() < 100_000, "{}: too many points", path.display());
            out.points.push(CalibPoint {
                image: Vec2::new(vals[0], vals[1]),
                world: Some(Vec2::new(vals[2], vals[3])),
                name: None,
            });
        }
        out.revision = 1;
        Ok(out)
    }
}

/// The state of calibration mode.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CalibMode {
    /// Clicks on the video add and move points.
    pub active: bool,
    pub points: CalibPoints,
    /// The point being dragged.
    pub dragging: Option<usize>,
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let p = Path::new("pts.csv");
        let back = CalibPoints::from_csv(&c.to_csv(), p).unwrap();
        assert_eq!(back.pairs(), c.pairs()[..3].to_vec());
        let e = CalibPoints::from_csv("u,v,x,y\n1,2,3,4\n1,2,x,4\n", p).unwrap_err();
        assert!(format!("{e:#}").contains("pts.csv:3"), "{e:#}");
        let e = CalibPoints::from_csv("a,b\n", p).unwrap_err();
        assert!(format!("{e:#}").contains("pts.csv:1"), "{e:#}");
        let e = CalibPoints::from_csv("u,v,x,y\n1,2,3,inf\n", p).unwrap_err();
        assert!(format!("{e:#}").contains("finite"), "{e:#}");
        assert!(CalibPoints::from_csv("", p).is_err());
    }
}
