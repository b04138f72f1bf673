//! The 3D league's pitch: its geometry (from a monitor log's `ge` record,
//! or the servers' defaults) and the world positions of the field markers
//! an agent sees.
//!
//! Coordinates are the servers' field frame: metres, origin at the centre
//! spot, x towards the right goal, y to the left of it, z up.
//!
//! Two naming schemes exist. rcssservermj names line junctions and posts
//! (`l_luf` a corner, `t_cuf` a T-junction, `x_cuc` the centre circle,
//! `p_lpm` a penalty mark, `g_lup` a goal post's top, `l_luga`/`t_luga`
//! the goalie area, `l_lupa`/`t_lupa` the penalty area) and places them
//! from its field description; the area markers sit at y = ± the area's
//! *width* as `ge` reports it, which is how the server places them.
//! SimSpark names four corner flags (`F1L`, `F2L`, `F1R`, `F2R`, `1` the
//! upper side, y > 0) and four goal post tops (`G1L` …).

use crate::sexp::Sexp;

/// The pitch's measures, in metres.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FieldGeometry {
    /// Goal line to goal line (along x).
    pub length: f64,
    /// Touch line to touch line (along y).
    pub width: f64,
    /// The goal's mouth, post to post.
    pub goal_width: f64,
    /// How far the goal reaches behind the goal line.
    pub goal_depth: f64,
    pub goal_height: f64,
    pub center_circle_radius: f64,
    /// From the goal line to the penalty mark.
    pub penalty_spot_distance: f64,
    /// Goalie area's extent from the goal line.
    pub goalie_area_length: f64,
    /// Goalie area's `width` as the server reports it (its markers' |y|).
    pub goalie_area_width: f64,
    /// Penalty area's extent from the goal line (0: no penalty area).
    pub penalty_area_length: f64,
    /// Penalty area's `width` as the server reports it (its markers' |y|).
    pub penalty_area_width: f64,
    pub ball_radius: f64,
    /// Width of the field lines.
    pub line_width: f64,
}

impl Default for FieldGeometry {
    /// rcssservermj's default pitch (7 vs 7, 55 × 36 m).
    fn default() -> Self {
        FieldGeometry {
            length: 55.0,
            width: 36.0,
            goal_width: 3.66,
            goal_depth: 1.0,
            goal_height: 1.83,
            center_circle_radius: 5.5,
            penalty_spot_distance: 7.32,
            goalie_area_length: 4.0,
            goalie_area_width: 7.3,
            penalty_area_length: 9.0,
            penalty_area_width: 16.5,
            ball_radius: 0.11,
            line_width: 0.1,
        }
    }
}

impl FieldGeometry {
    /// SimSpark's default pitch (30 × 20 m, goals 2.1 m wide, 0.8 m high).
    pub fn simspark() -> Self {
        FieldGeometry {
            length: 30.0,
            width: 20.0,
            goal_width: 2.1,
            goal_depth: 0.6,
            goal_height: 0.8,
            center_circle_radius: 2.0,
            penalty_spot_distance: 0.0,
            goalie_area_length: 1.8,
            goalie_area_width: 3.9,
            penalty_area_length: 0.0,
            penalty_area_width: 0.0,
            ball_radius: 0.042,
            line_width: 0.05,
        }
    }

    /// Updates the measures a `ge` (or SimSpark environment) list names:
    /// `(FieldLength 55)(FieldWidth 36)…`. Values that are not finite
    /// positive numbers are ignored. The goal's two horizontal measures
    /// are told apart by size (the mouth is the larger), because
    /// rcssservermj reports them under each other's name. Returns whether
    /// anything was set.
    pub fn update_from(&mut self, list: Sexp<'_>) -> bool {
        let mut any = false;
        let mut goal = [None, None];
        for item in list.items() {
            let Some(name) = item.head() else { continue };
            let Some(v) = item.get(1).and_then(|v| v.f64()) else {
                continue;
            };
            if !(0.0..1e6).contains(&v) {
                continue;
            }
            let slot = match name {
                b"FieldLength" => &mut self.length,
                b"FieldWidth" => &mut self.width,
                b"GoalWidth" => {
                    goal[0] = Some(v);
                    continue;
                }
                b"GoalDepth" => {
                    goal[1] = Some(v);
                    continue;
                }
                b"GoalHeight" => &mut self.goal_height,
                b"CenterCircleRadius" => &mut self.center_circle_radius,
                b"PenaltySpotDistance" => &mut self.penalty_spot_distance,
                b"GoalieAreaLength" => &mut self.goalie_area_length,
                b"GoalieAreaWidth" => &mut self.goalie_area_width,
                b"PenaltyAreaLength" => &mut self.penalty_area_length,
                b"PenaltyAreaWidth" => &mut self.penalty_area_width,
                b"BallRadius" => &mut self.ball_radius,
                _ => continue,
            };
            *slot = v;
            any = true;
        }
        match goal {
            [Some(a), Some(b)] => {
                self.goal_width = a.max(b);
                self.goal_depth = a.min(b);
                any = true;
            }
            [Some(w), None] => {
                self.goal_width = w;
                any = true;
            }
            [None, Some(d)] => {
                self.goal_depth = d;
                any = true;
            }
            [None, None] => {}
        }
        any
    }

    /// The world position of the marker `name` on this pitch, in either
    /// naming scheme; `None` for a name that is not a marker.
    pub fn marker(&self, name: &str) -> Option<[f64; 3]> {
        let hx = self.length / 2.0;
        let hy = self.width / 2.0;
        let gy = self.goal_width / 2.0;
        let gz = self.goal_height;
        let p = match name {
            "l_luf" | "F1L" => [-hx, hy, 0.0],
            "l_llf" | "F2L" => [-hx, -hy, 0.0],
            "l_ruf" | "F1R" => [hx, hy, 0.0],
            "l_rlf" | "F2R" => [hx, -hy, 0.0],
            "t_cuf" => [0.0, hy, 0.0],
            "t_clf" => [0.0, -hy, 0.0],
            "x_cuc" => [0.0, self.center_circle_radius, 0.0],
            "x_clc" => [0.0, -self.center_circle_radius, 0.0],
            "p_lpm" => [-(hx - self.penalty_spot_distance), 0.0, 0.0],
            "p_rpm" => [hx - self.penalty_spot_distance, 0.0, 0.0],
            "g_lup" | "G1L" => [-hx, gy, gz],
            "g_llp" | "G2L" => [-hx, -gy, gz],
            "g_rup" | "G1R" => [hx, gy, gz],
            "g_rlp" | "G2R" => [hx, -gy, gz],
            _ => return self.area_marker(name),
        };
        Some(p)
    }

    /// `l_luga`, `t_rlpa` and the like: corners of the goalie and penalty
    /// areas (`l_`) and where their sides meet the goal line (`t_`).
    fn area_marker(&self, name: &str) -> Option<[f64; 3]> {
        let b = name.as_bytes();
        if b.len() != 6 || b[1] != b'_' {
            return None;
        }
        let (length, y) = match &b[4..] {
            b"ga" => (self.goalie_area_length, self.goalie_area_width),
            b"pa" if self.penalty_area_length > 0.0 => (self.penalty_area_length, self.penalty_area_width),
            _ => return None,
        };
        let hx = self.length / 2.0;
        let x = match b[0] {
            b'l' => hx - length,
            b't' => hx,
            _ => return None,
        };
        let x = match b[2] {
            b'l' => -x,
            b'r' => x,
            _ => return None,
        };
        let y = match b[3] {
            b'u' => y,
            b'l' => -y,
            _ => return None,
        };
        Some([x, y, 0.0])
    }

    /// Whether `name` is a marker of SimSpark's naming (flags and goal
    /// posts), whose pitch defaults to [`FieldGeometry::simspark`].
    pub fn is_simspark_marker(name: &str) -> bool {
        matches!(
            name,
            "F1L" | "F2L" | "F1R" | "F2R" | "G1L" | "G2L" | "G1R" | "G2R"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sexp::Parser;

    /// The marker table of the test data's README (rcssservermj's default pitch).
    const README: &[(&str, [f64; 3])] = &[
        ("l_luf", [-27.5, 18.0, 0.0]),
        ("l_llf", [-27.5, -18.0, 0.0]),
        ("l_ruf", [27.5, 18.0, 0.0]),
        ("l_rlf", [27.5, -18.0, 0.0]),
        ("t_cuf", [0.0, 18.0, 0.0]),
        ("t_clf", [0.0, -18.0, 0.0]),
        ("x_cuc", [0.0, 5.5, 0.0]),
        ("x_clc", [0.0, -5.5, 0.0]),
        ("p_lpm", [-20.18, 0.0, 0.0]),
        ("p_rpm", [20.18, 0.0, 0.0]),
        ("g_lup", [-27.5, 1.83, 1.83]),
        ("g_llp", [-27.5, -1.83, 1.83]),
        ("g_rup", [27.5, 1.83, 1.83]),
        ("g_rlp", [27.5, -1.83, 1.83]),
        ("l_luga", [-23.5, 7.3, 0.0]),
        ("l_llga", [-23.5, -7.3, 0.0]),
        ("l_ruga", [23.5, 7.3, 0.0]),
        ("l_rlga", [23.5, -7.3, 0.0]),
        ("t_luga", [-27.5, 7.3, 0.0]),
        ("t_llga", [-27.5, -7.3, 0.0]),
        ("t_ruga", [27.5, 7.3, 0.0]),
        ("t_rlga", [27.5, -7.3, 0.0]),
        ("l_lupa", [-18.5, 16.5, 0.0]),
        ("l_llpa", [-18.5, -16.5, 0.0]),
        ("l_rupa", [18.5, 16.5, 0.0]),
        ("l_rlpa", [18.5, -16.5, 0.0]),
        ("t_lupa", [-27.5, 16.5, 0.0]),
        ("t_llpa", [-27.5, -16.5, 0.0]),
        ("t_rupa", [27.5, 16.5, 0.0]),
        ("t_rlpa", [27.5, -16.5, 0.0]),
    ];

    #[test]
    fn default_markers_match_the_readme() {
        let g = FieldGeometry::default();
        for (name, want) in README {
            let got = g.marker(name).unwrap_or_else(|| panic!("{name} unknown"));
            for k in 0..3 {
                assert!((got[k] - want[k]).abs() < 1e-9, "{name}: {got:?} vs {want:?}");
            }
        }
        for bad in ["B", "l_xuga", "l_lugx", "x_cux", "", "l_luga_", "q_luga"] {
            assert_eq!(g.marker(bad), None, "{bad}");
        }
        assert_eq!(FieldGeometry::simspark().marker("G2R"), Some([15.0, -1.05, 0.8]));
    }

    #[test]
    fn ge_record_sets_the_measures_and_unswaps_the_goal() {
        let ge = b"((ge 1 0)(FieldLength 105)(FieldWidth 68)(FieldHeight 40)(GoalWidth 1.6)(GoalDepth 7.32)\
                   (GoalHeight 2.44)(BallRadius nan)(play_modes A B)(PenaltyAreaWidth 40.32))";
        let mut p = Parser::new();
        let doc = p.parse(ge).unwrap();
        let mut g = FieldGeometry::default();
        assert!(g.update_from(doc.items().next().unwrap()));
        assert_eq!((g.length, g.width), (105.0, 68.0));
        assert_eq!((g.goal_width, g.goal_depth, g.goal_height), (7.32, 1.6, 2.44));
        assert_eq!(g.ball_radius, 0.11, "nan is ignored");
        assert_eq!(g.marker("t_rupa"), Some([52.5, 40.32, 0.0]));
    }
}
