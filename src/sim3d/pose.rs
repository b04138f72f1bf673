//! Where an agent's camera was: its pose in the field frame, found the way
//! an agent localises itself.
//!
//! **From markers.** Each seen marker gives a point in the camera frame
//! (distance and two angles) and, from the field's geometry, the same
//! point in the world; with three or more that are not on one line the
//! rigid transform between the two point sets is found in closed form
//! (Horn's quaternion method: the eigenvector of a 4 × 4 symmetric matrix
//! built from the weighted cross-covariance), weighted by the expected
//! measurement error (growing with distance). The fit is made robust by
//! dropping the marker with the largest residual while it is beyond
//! 0.1 m + 1 % of its distance (about four of SimSpark's σ), and refitting;
//! the residual reported is the RMS distance, in the world, between the
//! markers kept and where the pose puts them.
//!
//! **From the body.** When fewer than three usable markers are seen, the
//! pose comes from the torso's reported pose (`pos`/`quat`) through the
//! head: `camera = torso ∘ T(a) ∘ Rz(yaw) ∘ T(b) ∘ Ry(pitch) ∘ T(c)` with
//! the head joints' yaw and pitch. The offsets `a`, `b`, `c` start at the
//! T1 robot's and are fitted (least squares, held near that start) to the
//! log's own frames where markers gave a good pose, so other robots work
//! too. SimSpark's `mypos`/`myorien` give the camera's position and
//! heading directly; its tilt is then the head pitch alone.

use crate::calib::linalg::{cholesky_solve, symmetric_eigen};
use crate::geom::mat3::{Mat3, mul as mat_mul, mul_vec as mat_vec};
use crate::geom::vec3::{Vec3, add, norm, sub};

/// Rotation about z by `a` radians.
pub fn rot_z(a: f64) -> Mat3 {
    let (s, c) = a.sin_cos();
    [[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]
}

/// Rotation about y by `a` radians (positive tips x down).
pub fn rot_y(a: f64) -> Mat3 {
    let (s, c) = a.sin_cos();
    [[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]]
}

/// The rotation of a unit quaternion (w, x, y, z); normalised first.
pub fn quat_to_mat(q: [f64; 4]) -> Option<Mat3> {
    let n = q.iter().map(|v| v * v).sum::<f64>().sqrt();
    if n.is_nan() || n <= 1e-6 || !n.is_finite() {
        return None;
    }
    crate::geom::mat3::from_quaternion([q[1], q[2], q[3], q[0]])
}

/// The angle in radians between two rotations.
pub fn rotation_angle(a: &Mat3, b: &Mat3) -> f64 {
    // trace(aᵀ b) = 1 + 2 cos θ
    let tr: f64 = (0..3)
        .map(|i| (0..3).map(|k| a[k][i] * b[k][i]).sum::<f64>())
        .sum();
    ((tr - 1.0) / 2.0).clamp(-1.0, 1.0).acos()
}

/// The camera's pose: world point = `rotation` · camera point + `position`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pose {
    pub rotation: Mat3,
    pub position: Vec3,
}

impl Pose {
    pub fn to_world(&self, p: Vec3) -> Vec3 {
        add(mat_vec(&self.rotation, p), self.position)
    }

    /// Direction of the camera frame's vector `d` in the world.
    pub fn direction(&self, d: Vec3) -> Vec3 {
        mat_vec(&self.rotation, d)
    }

    /// The view direction's heading on the floor, radians.
    pub fn heading(&self) -> f64 {
        self.rotation[1][0].atan2(self.rotation[0][0])
    }
}

/// How a pose was found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PoseSource {
    /// Fitted to seen markers: how many were used and left out, and the
    /// RMS residual in metres.
    Markers {
        used: usize,
        rejected: usize,
        residual: f64,
    },
    /// From the torso's reported pose and the head joints.
    Body,
    /// From SimSpark's `mypos`/`myorien` and the head pitch.
    Reported,
}

/// A marker correspondence: where the camera saw it, where it is, and its
/// distance (for its weight and outlier bound).
#[derive(Clone, Copy, Debug)]
pub struct Correspondence {
    pub camera: Vec3,
    pub world: Vec3,
    pub distance: f64,
}

/// The outlier bound of a marker at distance `d`: 0.1 m + 1 % of `d`.
fn bound(d: f64) -> f64 {
    0.1 + 0.01 * d
}

/// The weight of a marker at distance `d`: 1 / σ² with σ growing with `d`.
fn weight(d: f64) -> f64 {
    let s = 0.01 + 0.003 * d;
    1.0 / (s * s)
}

/// The least-squares rigid transform taking the camera points of `pairs`
/// (those with `keep`) to their world points; `None` when they are fewer
/// than three or (nearly) on one line.
fn fit(pairs: &[Correspondence], keep: &[bool]) -> Option<Pose> {
    let mut wsum = 0.0;
    let mut pc = [0.0; 3];
    let mut wc = [0.0; 3];
    let mut n = 0;
    for (c, _) in pairs.iter().zip(keep).filter(|(_, k)| **k) {
        let w = weight(c.distance);
        wsum += w;
        for k in 0..3 {
            pc[k] += w * c.camera[k];
            wc[k] += w * c.world[k];
        }
        n += 1;
    }
    if n < 3 || wsum.is_nan() || wsum <= 0.0 {
        return None;
    }
    pc = pc.map(|v| v / wsum);
    wc = wc.map(|v| v / wsum);
    let mut s = [[0.0; 3]; 3];
    let mut spread = [0.0; 9];
    for (c, _) in pairs.iter().zip(keep).filter(|(_, k)| **k) {
        let w = weight(c.distance);
        let p = sub(c.camera, pc);
        let q = sub(c.world, wc);
        for a in 0..3 {
            for b in 0..3 {
                s[a][b] += w * p[a] * q[b];
                spread[a * 3 + b] += q[a] * q[b];
            }
        }
    }
    // Not on one line: the world points spread in two directions.
    let (ev, _) = symmetric_eigen(&spread, 3);
    if ev[1].is_nan() || ev[1] <= 0.01 * n as f64 {
        return None;
    }
    let [[sxx, sxy, sxz], [syx, syy, syz], [szx, szy, szz]] = s;
    let nm = [
        sxx + syy + szz,
        syz - szy,
        szx - sxz,
        sxy - syx,
        syz - szy,
        sxx - syy - szz,
        sxy + syx,
        szx + sxz,
        szx - sxz,
        sxy + syx,
        -sxx + syy - szz,
        syz + szy,
        sxy - syx,
        szx + sxz,
        syz + szy,
        -sxx - syy + szz,
    ];
    if nm.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let (_, vecs) = symmetric_eigen(&nm, 4);
    // Eigenvalues ascend: the last column belongs to the largest.
    let q = [vecs[3], vecs[7], vecs[11], vecs[15]];
    let rotation = quat_to_mat(q)?;
    let position = sub(wc, mat_vec(&rotation, pc));
    Some(Pose { rotation, position })
}

/// The largest residual of the markers kept, each relative to its bound.
fn worst(pairs: &[Correspondence], keep: &[bool], pose: &Pose) -> (usize, f64) {
    pairs
        .iter()
        .enumerate()
        .filter(|(i, _)| keep[*i])
        .map(|(i, c)| (i, norm(sub(pose.to_world(c.camera), c.world)) / bound(c.distance)))
        .fold((0, 0.0), |a, b| if b.1 > a.1 { b } else { a })
}

/// The robust marker pose of [the module](self), with its source; `None`
/// when fewer than three markers fit together. While some marker is
/// beyond its bound, the one whose removal lets the rest fit best is left
/// out (one refit per candidate: a marker far off drags the first fit, so
/// the largest residual need not be the bad marker's).
pub fn from_markers(pairs: &[Correspondence]) -> Option<(Pose, PoseSource)> {
    let mut keep = vec![true; pairs.len()];
    let mut pose = fit(pairs, &keep)?;
    while worst(pairs, &keep, &pose).1 > 1.0 {
        let mut best: Option<(usize, f64, Pose)> = None;
        for i in 0..pairs.len() {
            if !keep[i] {
                continue;
            }
            keep[i] = false;
            if let Some(p) = fit(pairs, &keep) {
                let w = worst(pairs, &keep, &p).1;
                if best.as_ref().is_none_or(|b| w < b.1) {
                    best = Some((i, w, p));
                }
            }
            keep[i] = true;
        }
        let (i, _, p) = best?;
        keep[i] = false;
        pose = p;
    }
    let used: Vec<&Correspondence> = pairs
        .iter()
        .zip(&keep)
        .filter(|(_, k)| **k)
        .map(|(c, _)| c)
        .collect();
    let ss: f64 = used
        .iter()
        .map(|c| {
            let r = norm(sub(pose.to_world(c.camera), c.world));
            r * r
        })
        .sum();
    let residual = (ss / used.len() as f64).sqrt();
    Some((
        pose,
        PoseSource::Markers {
            used: used.len(),
            rejected: pairs.len() - used.len(),
            residual,
        },
    ))
}

/// The head between the torso and the camera:
/// `torso ∘ T(a) ∘ Rz(yaw) ∘ T(b) ∘ Ry(pitch) ∘ T(c)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Head {
    pub a: Vec3,
    pub b: Vec3,
    pub c: Vec3,
}

impl Default for Head {
    /// rcssservermj's T1: neck 0.0625 m forward and 0.243 m up from the
    /// torso, pitch joint 0.06185 m above the yaw joint, camera 0.05 m
    /// forward and 0.12 m up from the pitch joint.
    fn default() -> Self {
        Head {
            a: [0.0625, 0.0, 0.243],
            b: [0.0, 0.0, 0.06185],
            c: [0.05, 0.0, 0.12],
        }
    }
}

impl Head {
    /// The camera's pose from the torso's and the head joints (degrees).
    pub fn camera(&self, torso: &Pose, yaw: f64, pitch: f64) -> Pose {
        let rz = rot_z(yaw.to_radians());
        let ry = rot_y(pitch.to_radians());
        let r1 = mat_mul(&torso.rotation, &rz);
        let r2 = mat_mul(&r1, &ry);
        let p = add(
            add(torso.position, mat_vec(&torso.rotation, self.a)),
            add(mat_vec(&r1, self.b), mat_vec(&r2, self.c)),
        );
        Pose {
            rotation: r2,
            position: p,
        }
    }

    /// Fits the offsets to `samples` of (torso pose, yaw°, pitch°, camera
    /// pose from markers), by least squares held weakly near `self` (so
    /// poses that do not vary the joints leave the split between `a`, `b`
    /// and `c` as it was). Returns the
    /// fitted head and the RMS position error over the samples.
    pub fn fit(&self, samples: &[(Pose, f64, f64, Pose)]) -> Option<(Head, f64)> {
        if samples.is_empty() {
            return None;
        }
        let mut ata = [0.0; 81];
        let mut atb = [0.0; 9];
        let prior = 1e-3;
        let x0: Vec<f64> = self.a.iter().chain(&self.b).chain(&self.c).copied().collect();
        for i in 0..9 {
            ata[i * 9 + i] += prior;
            atb[i] += prior * x0[i];
        }
        for (torso, yaw, pitch, cam) in samples {
            let r0 = torso.rotation;
            let r1 = mat_mul(&r0, &rot_z(yaw.to_radians()));
            let r2 = mat_mul(&r1, &rot_y(pitch.to_radians()));
            let y = sub(cam.position, torso.position);
            for row in 0..3 {
                let mut a = [0.0; 9];
                a[..3].copy_from_slice(&r0[row]);
                a[3..6].copy_from_slice(&r1[row]);
                a[6..].copy_from_slice(&r2[row]);
                for i in 0..9 {
                    atb[i] += a[i] * y[row];
                    for j in 0..9 {
                        ata[i * 9 + j] += a[i] * a[j];
                    }
                }
            }
        }
        let x = cholesky_solve(&ata, &atb, 9)?;
        if x.iter().any(|v| !v.is_finite()) {
            return None;
        }
        let head = Head {
            a: [x[0], x[1], x[2]],
            b: [x[3], x[4], x[5]],
            c: [x[6], x[7], x[8]],
        };
        let ss: f64 = samples
            .iter()
            .map(|(t, yaw, pitch, cam)| {
                let e = norm(sub(head.camera(t, *yaw, *pitch).position, cam.position));
                e * e
            })
            .sum();
        Some((head, (ss / samples.len() as f64).sqrt()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: Vec3, b: Vec3, tol: f64) -> bool {
        norm(sub(a, b)) < tol
    }

    fn markers_seen_from(pose: &Pose, world: &[Vec3]) -> Vec<Correspondence> {
        // camera point = Rᵀ (world − position)
        world
            .iter()
            .map(|&w| {
                let d = sub(w, pose.position);
                let r = &pose.rotation;
                let camera = [
                    r[0][0] * d[0] + r[1][0] * d[1] + r[2][0] * d[2],
                    r[0][1] * d[0] + r[1][1] * d[1] + r[2][1] * d[2],
                    r[0][2] * d[0] + r[1][2] * d[1] + r[2][2] * d[2],
                ];
                Correspondence {
                    camera,
                    world: w,
                    distance: norm(camera),
                }
            })
            .collect()
    }

    const FIELD: [Vec3; 6] = [
        [-27.5, 18.0, 0.0],
        [0.0, 18.0, 0.0],
        [0.0, 5.5, 0.0],
        [20.18, 0.0, 0.0],
        [27.5, 1.83, 1.83],
        [23.5, -7.3, 0.0],
    ];

    #[test]
    fn markers_give_back_the_camera_pose() {
        let truth = Pose {
            rotation: mat_mul(&rot_z(0.7), &rot_y(0.3)),
            position: [-3.0, 2.0, 1.1],
        };
        let mut pairs = markers_seen_from(&truth, &FIELD);
        let (pose, src) = from_markers(&pairs).unwrap();
        assert!(close(pose.position, truth.position, 1e-9));
        assert!(rotation_angle(&pose.rotation, &truth.rotation) < 1e-9);
        assert!(matches!(src, PoseSource::Markers { used: 6, rejected: 0, residual } if residual < 1e-9));
        // One marker reported 3 m off is left out.
        pairs[2].world[0] += 3.0;
        let (pose, src) = from_markers(&pairs).unwrap();
        assert!(close(pose.position, truth.position, 1e-9));
        assert!(
            matches!(
                src,
                PoseSource::Markers {
                    used: 5,
                    rejected: 1,
                    ..
                }
            ),
            "{src:?}"
        );
        // Two, or three on one line, are not enough.
        assert!(from_markers(&pairs[..2]).is_none());
        let line = markers_seen_from(&truth, &[[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [2.0, 0.0, 0.0]]);
        assert!(from_markers(&line).is_none());
    }

    #[test]
    fn head_chain_and_its_fit() {
        let torso = Pose {
            rotation: rot_z(1.0),
            position: [1.0, 2.0, 0.65],
        };
        let head = Head::default();
        let cam = head.camera(&torso, 0.0, 0.0);
        assert!(close(
            cam.position,
            add(torso.position, mat_vec(&torso.rotation, [0.1125, 0.0, 0.42485])),
            1e-12
        ));
        // Yaw turns the view, pitch tips it down.
        let c = head.camera(&torso, 90.0, 30.0);
        assert!((c.heading() - (1.0 + std::f64::consts::FRAC_PI_2)).abs() < 1e-9);
        assert!(c.direction([1.0, 0.0, 0.0])[2] < -0.49);
        // Fitting recovers another robot's head from poses that vary the joints.
        let other = Head {
            a: [0.0056, 0.0, 0.2149],
            b: [0.0, 0.0, 0.033],
            c: [0.06, 0.0, 0.08],
        };
        let samples: Vec<_> = (0..40)
            .map(|i| {
                let t = Pose {
                    rotation: mat_mul(&rot_z(0.3 * i as f64), &rot_y(0.01 * (i % 5) as f64)),
                    position: [i as f64, 0.0, 0.6],
                };
                let (yaw, pitch) = (((i * 37) % 120) as f64 - 60.0, ((i * 13) % 70) as f64 - 20.0);
                (t, yaw, pitch, other.camera(&t, yaw, pitch))
            })
            .collect();
        let (fitted, rms) = head.fit(&samples).unwrap();
        assert!(rms < 1e-3, "{rms}");
        let t = samples[3].0;
        assert!(close(
            fitted.camera(&t, 10.0, 5.0).position,
            other.camera(&t, 10.0, 5.0).position,
            2e-3
        ));
    }

    #[test]
    fn quaternions_turn_the_right_way() {
        let half = std::f64::consts::FRAC_1_SQRT_2;
        let m = quat_to_mat([half, 0.0, 0.0, half]).unwrap();
        assert!(close(mat_vec(&m, [1.0, 0.0, 0.0]), [0.0, 1.0, 0.0], 1e-12));
        assert!(quat_to_mat([0.0; 4]).is_none());
        assert!(quat_to_mat([f64::NAN, 0.0, 0.0, 1.0]).is_none());
    }
}
