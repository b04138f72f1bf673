//! The transform tree of a recording (`/tf`, `/tf_static`): rigid
//! transforms between named frames over time, looked up between any two
//! frames at any time as tf2 does — interpolated between the stamps around
//! it (translation linearly, rotation by slerp), static transforms at every
//! time, the nearest stamp held outside a frame's recorded span.

use std::collections::HashMap;

/// A rigid transform: `p ↦ R·p + t`, the rotation a unit quaternion.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Transform {
    /// `(x, y, z, w)`, unit length.
    pub rotation: [f64; 4],
    /// `(x, y, z)`.
    pub translation: [f64; 3],
}

impl Transform {
    /// The transform that changes nothing.
    pub const IDENTITY: Transform = Transform {
        rotation: [0.0, 0.0, 0.0, 1.0],
        translation: [0.0; 3],
    };

    /// A transform from a quaternion (normalised here; `None` when it has
    /// no length or anything is not finite) and a translation.
    pub fn new(rotation: [f64; 4], translation: [f64; 3]) -> Option<Transform> {
        let n = rotation.iter().map(|v| v * v).sum::<f64>().sqrt();
        if !(n.is_finite() && n > 1e-9 && translation.iter().all(|v| v.is_finite())) {
            return None;
        }
        Some(Transform {
            rotation: rotation.map(|v| v / n),
            translation,
        })
    }

    /// The rotation as a matrix (rows).
    pub fn matrix(&self) -> [[f64; 3]; 3] {
        // A transform's rotation is a unit quaternion (`Transform::new`).
        crate::geom::mat3::from_quaternion(self.rotation).unwrap_or([
            [1.0, 0.0, 0.0],
            [0.0, 1.0, 0.0],
            [0.0, 0.0, 1.0],
        ])
    }

    /// `R·p`.
    pub fn rotate(&self, p: [f64; 3]) -> [f64; 3] {
        let m = self.matrix();
        [0, 1, 2].map(|i| m[i][0] * p[0] + m[i][1] * p[1] + m[i][2] * p[2])
    }

    /// `R·p + t`.
    pub fn apply(&self, p: [f64; 3]) -> [f64; 3] {
        let r = self.rotate(p);
        [0, 1, 2].map(|i| r[i] + self.translation[i])
    }

    /// `self ∘ other`: `other` first.
    pub fn then_after(&self, other: &Transform) -> Transform {
        let [ax, ay, az, aw] = self.rotation;
        let [bx, by, bz, bw] = other.rotation;
        let q = [
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
            aw * bw - ax * bx - ay * by - az * bz,
        ];
        let n = q.iter().map(|v| v * v).sum::<f64>().sqrt();
        Transform {
            rotation: q.map(|v| v / n),
            translation: self.apply(other.translation),
        }
    }

    /// The transform that undoes this one.
    pub fn inverse(&self) -> Transform {
        let [x, y, z, w] = self.rotation;
        let inv = Transform {
            rotation: [-x, -y, -z, w],
            translation: [0.0; 3],
        };
        let t = inv.rotate(self.translation);
        Transform {
            rotation: inv.rotation,
            translation: t.map(|v| -v),
        }
    }

    /// The transform a fraction `s` of the way from `self` to `to`.
    pub fn lerp(&self, to: &Transform, s: f64) -> Transform {
        let translation =
            [0, 1, 2].map(|i| self.translation[i] + (to.translation[i] - self.translation[i]) * s);
        let a = self.rotation;
        let mut b = to.rotation;
        let mut d: f64 = (0..4).map(|i| a[i] * b[i]).sum();
        if d < 0.0 {
            b = b.map(|v| -v);
            d = -d;
        }
        let rotation = if d > 0.9995 {
            let q: [f64; 4] = [0, 1, 2, 3].map(|i| a[i] + (b[i] - a[i]) * s);
            let n = q.iter().map(|v| v * v).sum::<f64>().sqrt();
            q.map(|v| v / n)
        } else {
            let theta = d.clamp(-1.0, 1.0).acos();
            let (wa, wb) = (((1.0 - s) * theta).sin(), (s * theta).sin());
            let sin = theta.sin();
            [0, 1, 2, 3].map(|i| (a[i] * wa + b[i] * wb) / sin)
        };
        Transform {
            rotation,
            translation,
        }
    }

    /// The heading (rotation about z) of the transform's x axis.
    pub fn yaw(&self) -> f64 {
        let m = self.matrix();
        m[1][0].atan2(m[0][0])
    }
}

/// Why a transform cannot be looked up.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TfError {
    /// No transform names the frame.
    #[error("no transform names the frame `{0}`")]
    UnknownFrame(String),
    /// The two frames are in trees that do not meet.
    #[error("the frames `{0}` and `{1}` are not connected by transforms")]
    NotConnected(String, String),
}

/// One frame's link to its parent.
#[derive(Clone, Debug, Default)]
struct Link {
    parent: String,
    /// A static transform (`/tf_static`), which holds at every time.
    fixed: Option<Transform>,
    /// Stamped transforms (seconds), sorted once [`TfTree::finish`] ran.
    stamped: Vec<(f64, Transform)>,
}

/// The deepest chain followed (a loop in the recorded parents stops here).
const MAX_DEPTH: usize = 256;

/// Every frame's parent and the transforms from it over time.
#[derive(Clone, Debug, Default)]
pub struct TfTree {
    links: HashMap<String, Link>,
    /// How many transforms were replaced by a different parent.
    pub reparented: usize,
}

/// A frame name as tf2 compares them (no leading `/`).
pub fn frame_name(name: &str) -> &str {
    name.trim_start_matches('/')
}

impl TfTree {
    /// Records that `child` is at `transform` in `parent` at `stamp`
    /// (seconds), or at every time when `fixed`. A frame has one parent:
    /// the latest one named wins.
    pub fn add(&mut self, parent: &str, child: &str, stamp: f64, transform: Transform, fixed: bool) {
        let (parent, child) = (frame_name(parent), frame_name(child));
        if parent == child || parent.is_empty() || child.is_empty() || !stamp.is_finite() {
            return;
        }
        let link = self.links.entry(child.to_owned()).or_default();
        if link.parent != parent {
            if !link.parent.is_empty() {
                self.reparented += 1;
                *link = Link::default();
            }
            link.parent = parent.to_owned();
        }
        if fixed {
            link.fixed = Some(transform);
        } else {
            link.stamped.push((stamp, transform));
        }
    }

    /// Sorts the stamped transforms by time; call once every one is added.
    pub fn finish(&mut self) {
        for link in self.links.values_mut() {
            link.stamped.sort_by(|a, b| a.0.total_cmp(&b.0));
        }
    }

    /// Whether `frame` is named by any transform.
    pub fn knows(&self, frame: &str) -> bool {
        let frame = frame_name(frame);
        self.links.contains_key(frame) || self.links.values().any(|l| l.parent == frame)
    }

    /// Every frame named by a transform, sorted.
    pub fn frames(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .links
            .iter()
            .flat_map(|(child, l)| [child.clone(), l.parent.clone()])
            .collect();
        v.sort();
        v.dedup();
        v
    }

    /// The parent of `frame`, when a transform gives it one.
    pub fn parent(&self, frame: &str) -> Option<&str> {
        self.links.get(frame_name(frame)).map(|l| l.parent.as_str())
    }

    /// The first and last stamp of any moving transform (`None` when
    /// every transform is static).
    pub fn span(&self) -> Option<(f64, f64)> {
        let stamps = self
            .links
            .values()
            .flat_map(|l| l.stamped.iter().map(|(t, _)| *t));
        stamps.fold(None, |acc, t| match acc {
            None => Some((t, t)),
            Some((a, b)) => Some((a.min(t), b.max(t))),
        })
    }

    /// The frames with no parent, the one with the most frames below it first.
    pub fn roots(&self) -> Vec<String> {
        let mut count: HashMap<&str, usize> = HashMap::new();
        for child in self.links.keys() {
            if let Some(root) = self.root_of(child) {
                *count.entry(root).or_default() += 1;
            }
        }
        let mut roots: Vec<(&str, usize)> = count.into_iter().collect();
        roots.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        roots.into_iter().map(|(r, _)| r.to_owned()).collect()
    }

    /// The root of the tree `frame` is in.
    pub fn root_of<'a>(&'a self, frame: &'a str) -> Option<&'a str> {
        let mut at = frame_name(frame);
        for _ in 0..MAX_DEPTH {
            match self.links.get(at) {
                Some(l) => at = &l.parent,
                None => return Some(at),
            }
        }
        None
    }

    /// The chain from `frame` up to its root: each frame and its link.
    fn chain<'a>(&'a self, frame: &'a str) -> Vec<(&'a str, &'a Link)> {
        let mut out = Vec::new();
        let mut at = frame_name(frame);
        while let Some(l) = self.links.get(at) {
            if out.len() >= MAX_DEPTH {
                break;
            }
            out.push((at, l));
            at = &l.parent;
        }
        out
    }

    /// The transform of one link at `t`.
    fn link_at(link: &Link, t: f64) -> Transform {
        if let Some(f) = link.fixed {
            return f;
        }
        let s = &link.stamped;
        let i = s.partition_point(|(st, _)| *st <= t);
        match (i.checked_sub(1).and_then(|j| s.get(j)), s.get(i)) {
            (Some(a), Some(b)) if b.0 > a.0 => a.1.lerp(&b.1, (t - a.0) / (b.0 - a.0)),
            (Some(a), _) => a.1,
            (None, Some(b)) => b.1,
            (None, None) => Transform::IDENTITY,
        }
    }

    /// `frame`'s pose in its root at `t`, and the root's name.
    fn to_root<'a>(&'a self, frame: &'a str, t: f64) -> (Transform, &'a str) {
        let chain = self.chain(frame);
        let root = chain.last().map_or(frame_name(frame), |(_, l)| l.parent.as_str());
        let mut pose = Transform::IDENTITY;
        for (_, link) in &chain {
            pose = Self::link_at(link, t).then_after(&pose);
        }
        (pose, root)
    }

    /// The transform taking points in `source` to points in `target` at
    /// time `t` (seconds).
    pub fn lookup(&self, target: &str, source: &str, t: f64) -> Result<Transform, TfError> {
        for f in [target, source] {
            if !self.knows(f) {
                return Err(TfError::UnknownFrame(frame_name(f).to_owned()));
            }
        }
        let (s, sroot) = self.to_root(source, t);
        let (g, groot) = self.to_root(target, t);
        if sroot != groot {
            return Err(TfError::NotConnected(
                frame_name(target).to_owned(),
                frame_name(source).to_owned(),
            ));
        }
        Ok(g.inverse().then_after(&s))
    }

    /// The links between `target` and `source`: from each up to (not
    /// through) the first frame they share.
    fn links_between<'a>(&'a self, target: &'a str, source: &'a str) -> Vec<&'a Link> {
        let up = self.chain(target);
        let down = self.chain(source);
        // The frames of each chain, its root (the last parent) included.
        let frames = |chain: &[(&'a str, &'a Link)], start: &'a str| -> Vec<&'a str> {
            let mut v: Vec<&str> = chain.iter().map(|(f, _)| *f).collect();
            v.push(chain.last().map_or(frame_name(start), |(_, l)| l.parent.as_str()));
            v
        };
        let (fu, fd) = (frames(&up, target), frames(&down, source));
        let meet = fd.iter().find(|f| fu.contains(f)).copied();
        let cut = |chain: &[(&'a str, &'a Link)], frames: &[&str]| -> Vec<&'a Link> {
            let n = meet
                .and_then(|m| frames.iter().position(|f| *f == m))
                .unwrap_or(chain.len());
            chain[..n.min(chain.len())].iter().map(|(_, l)| *l).collect()
        };
        let mut out = cut(&up, &fu);
        out.extend(cut(&down, &fd));
        out
    }

    /// Whether the transform between `target` and `source` is the same at
    /// every time (every link between them static or recorded once).
    pub fn is_fixed(&self, target: &str, source: &str) -> bool {
        self.links_between(target, source)
            .into_iter()
            .all(|l| l.fixed.is_some() || l.stamped.len() <= 1)
    }

    /// The stamps within `[from, to)` at which the transform between
    /// `target` and `source` changes (a stamp of any moving link between
    /// them), sorted, without repeats.
    pub fn changes(&self, target: &str, source: &str, from: f64, to: f64) -> Vec<f64> {
        let mut out: Vec<f64> = self
            .links_between(target, source)
            .into_iter()
            .filter(|l| l.fixed.is_none())
            .flat_map(|l| {
                let s = &l.stamped;
                let a = s.partition_point(|(t, _)| *t < from);
                let b = s.partition_point(|(t, _)| *t < to);
                s[a..b].iter().map(|(t, _)| *t)
            })
            .collect();
        out.sort_by(f64::total_cmp);
        out.dedup();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: [f64; 3], b: [f64; 3]) -> bool {
        (0..3).all(|i| (a[i] - b[i]).abs() < 1e-9)
    }

    fn yaw(theta: f64) -> [f64; 4] {
        [0.0, 0.0, (theta / 2.0).sin(), (theta / 2.0).cos()]
    }

    #[test]
    fn compose_and_invert() {
        let a = Transform::new(yaw(0.7), [1.0, 2.0, 3.0]).unwrap();
        let b = Transform::new([0.3, -0.2, 0.1, 0.9], [-0.5, 0.25, 2.0]).unwrap();
        let p = [0.3, -1.1, 2.2];
        assert!(close(a.then_after(&b).apply(p), a.apply(b.apply(p))));
        assert!(close(a.inverse().apply(a.apply(p)), p));
        assert!((a.yaw() - 0.7).abs() < 1e-12);
        assert!(Transform::new([0.0; 4], [0.0; 3]).is_none());
        assert!(Transform::new(yaw(0.1), [f64::NAN, 0.0, 0.0]).is_none());
    }

    #[test]
    fn lookups_go_up_and_down_the_tree_and_interpolate() {
        let mut tf = TfTree::default();
        let cam = Transform::new([-0.5, 0.5, -0.5, 0.5], [0.1, 0.0, 0.5]).unwrap();
        tf.add("map", "odom", 0.0, Transform::IDENTITY, true);
        tf.add(
            "odom",
            "base",
            1.0,
            Transform::new(yaw(0.0), [0.0, 0.0, 0.0]).unwrap(),
            false,
        );
        tf.add(
            "odom",
            "base",
            3.0,
            Transform::new(yaw(1.0), [2.0, 0.0, 0.0]).unwrap(),
            false,
        );
        tf.add("/base", "/camera_optical", 0.0, cam, true);
        tf.finish();
        assert_eq!(tf.roots(), ["map"]);
        // Halfway: 1 m along x, turned 0.5 rad.
        let at2 = tf.lookup("map", "base", 2.0).unwrap();
        assert!(close(at2.translation, [1.0, 0.0, 0.0]));
        assert!((at2.yaw() - 0.5).abs() < 1e-12);
        // Held outside the recorded span.
        assert!(close(
            tf.lookup("map", "base", 9.0).unwrap().translation,
            [2.0, 0.0, 0.0]
        ));
        // The optical frame's z axis looks along the base's x.
        let c = tf.lookup("map", "camera_optical", 1.0).unwrap();
        assert!(close(c.apply([0.0, 0.0, 1.0]), [1.1, 0.0, 0.5]));
        // And back down.
        let back = tf.lookup("camera_optical", "map", 1.0).unwrap();
        assert!(close(back.apply([1.1, 0.0, 0.5]), [0.0, 0.0, 1.0]));
        assert!(!tf.is_fixed("map", "camera_optical"));
        assert!(tf.is_fixed("base", "camera_optical"));
        assert_eq!(tf.changes("map", "camera_optical", 0.0, 10.0), [1.0, 3.0]);
        assert_eq!(
            tf.lookup("map", "nowhere", 0.0),
            Err(TfError::UnknownFrame("nowhere".into()))
        );
        tf.add("world", "other", 0.0, Transform::IDENTITY, true);
        assert!(matches!(
            tf.lookup("map", "other", 0.0),
            Err(TfError::NotConnected(..))
        ));
    }

    #[test]
    fn a_loop_of_parents_does_not_hang() {
        let mut tf = TfTree::default();
        tf.add("a", "b", 0.0, Transform::IDENTITY, true);
        tf.add("b", "a", 0.0, Transform::IDENTITY, true);
        tf.finish();
        let _ = tf.lookup("a", "b", 0.0);
        let _ = tf.roots();
    }
}
