//! `sensor_msgs/LaserScan` as points and `sensor_msgs/Range` as its cone,
//! in the sensor's frame, as RViz's LaserScan and Range displays draw
//! them.
//!
//! A scan's ray `i` points at `angle_min + i · angle_increment` in the
//! frame's x–y plane; a range outside `[range_min, range_max]` (or not a
//! number) is no return and is dropped. The whole scan is placed at its
//! header stamp (RViz's high-fidelity projection, which moves each ray by
//! `time_increment`, is not done: a scan sweeps in a tenth of a second).
//! Intensities colour the points through RViz's rainbow over the scan's
//! own range when asked for. A range sensor's cone has its tip at the
//! frame's origin and its axis along x: `range` long, its base
//! `range · tan(field_of_view / 2)` across; a reading outside
//! `[min_range, max_range]` (REP 117's ±∞ included) is no cone.

use super::value::{Struct, Value};
use crate::log::Rgba;

/// A scan's points in its frame, a colour each when intensities were
/// asked for (and there are as many as ranges), and how many ranges were
/// out of bounds.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Scan {
    pub points: Vec<[f32; 3]>,
    pub colors: Vec<Rgba>,
    pub dropped: usize,
    pub notes: Vec<String>,
}

/// The numbers of a `float32[]` field (as a decoder gives them: numbers,
/// or a JSON message's), empty when absent.
fn numbers<'a>(msg: &'a Struct<'_>, name: &str) -> impl Iterator<Item = f64> + 'a {
    msg.array(name)
        .unwrap_or(&[])
        .iter()
        .map(|v| v.as_f64().unwrap_or(f64::NAN))
}

/// A number of the message, which must be finite.
fn finite(msg: &Struct<'_>, name: &str) -> Result<f64, String> {
    match msg.f64(name) {
        Some(v) if v.is_finite() => Ok(v),
        Some(v) => Err(format!("a {name} of {v}")),
        None => Err(format!("no {name}")),
    }
}

/// The points of a `sensor_msgs/LaserScan`, at most `bound` (thinned
/// evenly), coloured by intensity when `intensity`.
pub fn laser_scan(msg: &Struct<'_>, bound: usize, intensity: bool) -> Result<Scan, String> {
    let angle_min = finite(msg, "angle_min").map_err(|e| format!("a laser scan with {e}"))?;
    let step = finite(msg, "angle_increment").map_err(|e| format!("a laser scan with {e}"))?;
    let lo = msg.f64("range_min").filter(|v| !v.is_nan()).unwrap_or(0.0);
    let hi = msg
        .f64("range_max")
        .filter(|v| !v.is_nan())
        .unwrap_or(f64::INFINITY);
    let n = msg.array("ranges").map_or(0, <[Value<'_>]>::len);
    let every = n.div_ceil(bound.max(1)).max(1);
    let mut out = Scan::default();
    if every > 1 {
        out.notes.push(format!(
            "a laser scan of {n} ranges thinned to every {every}th ({} at most)",
            n.div_ceil(every)
        ));
    }
    let intensities: Vec<f64> = if intensity {
        numbers(msg, "intensities").collect()
    } else {
        Vec::new()
    };
    let coloured = intensity && intensities.len() == n && n > 0;
    if intensity && !coloured && n > 0 {
        out.notes.push(format!(
            "a laser scan of {n} ranges and {} intensities: drawn in one colour",
            intensities.len()
        ));
    }
    let mut values = Vec::new();
    for (i, r) in numbers(msg, "ranges").enumerate().step_by(every) {
        if !(r.is_finite() && r >= lo && r <= hi) {
            out.dropped += 1;
            continue;
        }
        let a = angle_min + i as f64 * step;
        let p = [(r * a.cos()) as f32, (r * a.sin()) as f32, 0.0];
        if !p.iter().all(|v| v.is_finite()) {
            out.dropped += 1;
            continue;
        }
        out.points.push(p);
        if coloured {
            values.push(intensities[i]);
        }
    }
    if coloured {
        out.colors = super::cloud2::intensity_colours(&values);
    }
    Ok(out)
}

/// A cone in a frame: its tip, its base's centre and its base's radius.
pub type Cone = ([f64; 3], [f64; 3], f64);

/// The cone of a `sensor_msgs/Range` in its frame; `None` when the
/// reading is no detection.
pub fn range_cone(msg: &Struct<'_>) -> Result<Option<Cone>, String> {
    let fov = finite(msg, "field_of_view").map_err(|e| format!("a range reading with {e}"))?;
    if !(0.0..std::f64::consts::PI).contains(&fov) {
        return Err(format!("a range reading whose field of view is {fov} rad"));
    }
    let range = msg.f64("range").ok_or("a range reading without a range")?;
    let lo = msg.f64("min_range").filter(|v| !v.is_nan()).unwrap_or(0.0);
    let hi = msg
        .f64("max_range")
        .filter(|v| !v.is_nan())
        .unwrap_or(f64::INFINITY);
    if !(range.is_finite() && range >= lo && range <= hi && range > 0.0) {
        return Ok(None);
    }
    Ok(Some(([0.0; 3], [range, 0.0, 0.0], range * (fov / 2.0).tan())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ros::value::build::{f, top};

    fn scan(ranges: &[f64], intensities: &[f64]) -> Struct<'static> {
        top(vec![
            ("angle_min", f(-std::f64::consts::FRAC_PI_2)),
            ("angle_max", f(std::f64::consts::FRAC_PI_2)),
            ("angle_increment", f(std::f64::consts::FRAC_PI_2)),
            ("range_min", f(0.1)),
            ("range_max", f(10.0)),
            ("ranges", Value::Array(ranges.iter().map(|&r| f(r)).collect())),
            (
                "intensities",
                Value::Array(intensities.iter().map(|&r| f(r)).collect()),
            ),
        ])
    }

    #[test]
    fn rays_outside_the_range_bounds_are_dropped() {
        let s = laser_scan(&scan(&[1.0, 0.05, 2.0, 11.0], &[]), 100, false).unwrap();
        // -90°: (0, -1); 0° is too near; 90°: (0, 2); 180° too far.
        assert_eq!(s.dropped, 2);
        assert_eq!(s.points.len(), 2);
        assert!((s.points[0][0]).abs() < 1e-6 && (s.points[0][1] + 1.0).abs() < 1e-6);
        assert!((s.points[1][1] - 2.0).abs() < 1e-6);
        let nan = laser_scan(&scan(&[f64::NAN, f64::INFINITY, 3.0], &[]), 100, false).unwrap();
        assert_eq!((nan.points.len(), nan.dropped), (1, 2));
    }

    #[test]
    fn intensities_colour_when_asked_and_thinning_is_said() {
        let s = laser_scan(&scan(&[1.0, 1.0, 1.0], &[5.0, 10.0, 15.0]), 100, true).unwrap();
        assert_eq!(
            s.colors,
            [
                super::super::cloud2::rainbow(0.0),
                super::super::cloud2::rainbow(0.5),
                super::super::cloud2::rainbow(1.0)
            ]
        );
        assert!(
            laser_scan(&scan(&[1.0; 3], &[5.0]), 100, true)
                .unwrap()
                .colors
                .is_empty()
        );
        let s = laser_scan(&scan(&[1.0; 9], &[]), 3, false).unwrap();
        assert_eq!(s.points.len(), 3);
        assert!(s.notes[0].contains("thinned"), "{:?}", s.notes);
        let mut bad = scan(&[1.0], &[]);
        bad.fields.retain(|(n, _)| &**n != "angle_increment");
        assert!(
            laser_scan(&bad, 10, false)
                .unwrap_err()
                .contains("angle_increment")
        );
    }

    #[test]
    fn a_range_is_a_cone_along_x() {
        let r = |range: f64| {
            top(vec![
                ("radiation_type", Value::UInt(0)),
                ("field_of_view", f(0.5)),
                ("min_range", f(0.02)),
                ("max_range", f(4.0)),
                ("range", f(range)),
            ])
        };
        let (apex, base, radius) = range_cone(&r(2.0)).unwrap().unwrap();
        assert_eq!((apex, base), ([0.0; 3], [2.0, 0.0, 0.0]));
        assert!((radius - 2.0 * 0.25f64.tan()).abs() < 1e-12);
        for none in [f64::INFINITY, f64::NEG_INFINITY, 5.0, 0.01, f64::NAN] {
            assert_eq!(range_cone(&r(none)).unwrap(), None, "{none}");
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: crate::testing::fuzz_cases(),
            ..proptest::prelude::ProptestConfig::default()
        })]

        /// Any angles, bounds, ranges and intensities (NaN, infinities,
        /// huge): finite points, no more than the bound, a colour each or
        /// none; any range reading a cone with finite parts or none.
        #[test]
        fn any_scan_and_range_gives_points_or_a_reason(
            numbers in proptest::collection::vec(proptest::prop_oneof![
                -1e3f64..1e3, proptest::strategy::Just(f64::NAN), proptest::strategy::Just(f64::INFINITY),
                proptest::strategy::Just(-f64::INFINITY), proptest::strategy::Just(1e300)], 6..400),
            bound in 1usize..100,
            split in 0usize..200,
            intensity in proptest::prelude::any::<bool>(),
        ) {
            let (head, rest) = numbers.split_at(6);
            let at = split.min(rest.len());
            let (ranges, intensities) = rest.split_at(at);
            let msg = top(vec![
                ("angle_min", f(head[0])),
                ("angle_increment", f(head[1])),
                ("range_min", f(head[2])),
                ("range_max", f(head[3])),
                ("ranges", Value::Array(ranges.iter().map(|&r| f(r)).collect())),
                ("intensities", Value::Array(intensities.iter().map(|&r| f(r)).collect())),
            ]);
            if let Ok(s) = laser_scan(&msg, bound, intensity) {
                proptest::prop_assert!(s.points.len() <= bound);
                proptest::prop_assert!(s.points.iter().flatten().all(|v| v.is_finite()));
                proptest::prop_assert!(s.colors.is_empty() || s.colors.len() == s.points.len());
            }
            let range = top(vec![
                ("field_of_view", f(head[4])),
                ("min_range", f(head[2])),
                ("max_range", f(head[3])),
                ("range", f(head[5])),
            ]);
            if let Ok(Some((_, base, radius))) = range_cone(&range) {
                proptest::prop_assert!(base.iter().all(|v| v.is_finite()) && radius.is_finite() && radius >= 0.0);
            }
        }
    }
}
