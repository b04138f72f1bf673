//! Image ↔ world correspondences as CSV files (`POINTS.csv`): a header
//! naming the columns `u,v,x,y` (image pixels, world units; other columns
//! such as a point's `name` kept or ignored) and optionally `z` (height
//! above the floor, world units, z up; a missing column or an empty field
//! is 0), blank lines and lines starting with `#` skipped. `calib solve`,
//! `calib check`, `calib refine --points` and the viewer's point table all
//! read them here.

use std::path::{Path, PathBuf};

use super::fit::MAX_FIT_POINTS;
use super::{Correspondence, Correspondence3};
use crate::geom::Vec2;

/// A points file that could not be read.
#[derive(Debug, thiserror::Error)]
pub enum PointsError {
    /// The file could not be read.
    #[error("{path}: cannot read the points file: {error}", path = path.display())]
    Io { path: PathBuf, error: std::io::Error },
    /// Its content is not a points file.
    #[error("in points file {path}", path = path.display())]
    InFile {
        path: PathBuf,
        #[source]
        source: SyntaxError,
    },
}

/// What is wrong with a points file's text, with its line.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct SyntaxError(String);

macro_rules! syntax {
    ($($t:tt)*) => { SyntaxError(format!($($t)*)) };
}

/// Points files larger than this are refused.
pub const MAX_CSV_BYTES: u64 = 64 << 20;

/// Correspondences read from a CSV file, with the line of each.
#[derive(Debug)]
pub struct PointsFile {
    pub points: Vec<Correspondence>,
    /// 1-based line number of each point.
    pub lines: Vec<usize>,
    /// Each point's `name` column, when the file has one and it is not
    /// empty (a field preset's point name, as the viewer writes it).
    pub names: Vec<Option<String>>,
    /// Each point's height above the floor (the `z` column; 0 without it).
    pub heights: Vec<f64>,
}

impl PointsFile {
    /// The points in space: `(x, y, z)` with each point's height.
    pub fn points3(&self) -> Vec<Correspondence3> {
        self.points
            .iter()
            .zip(&self.heights)
            .map(|(c, &z)| Correspondence3 {
                image: c.image,
                world: [c.world.x, c.world.y, z],
            })
            .collect()
    }

    /// The indices of the points above (or below) the floor.
    pub fn raised(&self) -> Vec<usize> {
        (0..self.heights.len())
            .filter(|&i| self.heights[i] != 0.0)
            .collect()
    }

    /// The refusal of points with heights by something that maps only the
    /// floor (`what`, e.g. "the homography model"): which lines, and what
    /// to do instead. `None` when every point is on the floor.
    pub fn heights_refused(&self, what: &str, instead: &str) -> Option<String> {
        let raised = self.raised();
        let first = *raised.first()?;
        let mut lines: Vec<String> = raised
            .iter()
            .take(8)
            .map(|&i| self.lines[i].to_string())
            .collect();
        if raised.len() > 8 {
            lines.push(format!("and {} more", raised.len() - 8));
        }
        Some(format!(
            "{} point(s) are above the floor (z ≠ 0 on line {}; the first at z = {}), and {what} maps only \
             the floor: {instead}",
            raised.len(),
            lines.join(", "),
            self.heights[first]
        ))
    }
}

/// Reads a `u,v,x,y` CSV file; errors name the file and line.
pub fn read_points(path: &Path) -> Result<PointsFile, PointsError> {
    // Bounded whatever the file claims: `/dev/zero` has no end.
    let text = crate::files::read_text_limited(path, MAX_CSV_BYTES).map_err(|error| PointsError::Io {
        path: path.to_owned(),
        error,
    })?;
    parse_points(&text).map_err(|source| PointsError::InFile {
        path: path.to_owned(),
        source,
    })
}

/// A field or line as quoted in an error: whole when short, else its start
/// and end (a 10 MB field is not echoed).
fn shown(s: &str) -> String {
    crate::log::summary::shorten(s, 80)
}

/// Parses the CSV text (see [`read_points`]).
pub fn parse_points(text: &str) -> Result<PointsFile, SyntaxError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'));
    let Some((header_line, header)) = lines.next() else {
        return Err(syntax!("empty: expected a header line `u,v,x,y`"));
    };
    let cols: Vec<String> = header.split(',').map(|c| c.trim().to_ascii_lowercase()).collect();
    let find = |want: &str| cols.iter().position(|c| c == want);
    let (Some(iu), Some(iv), Some(ix), Some(iy)) = (find("u"), find("v"), find("x"), find("y")) else {
        return Err(syntax!(
            "line {header_line}: the header must name the columns u,v,x,y, not `{}`",
            shown(header)
        ));
    };
    let iname = find("name");
    let iz = find("z");
    let mut out = PointsFile {
        points: Vec::new(),
        lines: Vec::new(),
        names: Vec::new(),
        heights: Vec::new(),
    };
    for (line, l) in lines {
        let fields: Vec<&str> = l.split(',').map(str::trim).collect();
        if fields.len() != cols.len() {
            return Err(syntax!(
                "line {line}: expected {} comma-separated fields like the header, found {}: `{}`",
                cols.len(),
                fields.len(),
                shown(l)
            ));
        }
        let num = |i: usize| -> Result<f64, SyntaxError> {
            let f = fields[i];
            match f.parse::<f64>() {
                Ok(v) if v.is_finite() => Ok(v),
                Ok(_) => Err(syntax!(
                    "line {line}, column {}: `{}` is not a finite number",
                    cols[i],
                    shown(f)
                )),
                Err(_) => Err(syntax!(
                    "line {line}, column {}: `{}` is not a number",
                    cols[i],
                    shown(f)
                )),
            }
        };
        if out.points.len() >= MAX_FIT_POINTS {
            return Err(syntax!("line {line}: more than {MAX_FIT_POINTS} points"));
        }
        out.points.push(Correspondence {
            image: Vec2::new(num(iu)?, num(iv)?),
            world: Vec2::new(num(ix)?, num(iy)?),
        });
        out.heights.push(match iz {
            Some(i) if !fields[i].is_empty() => num(i)?,
            _ => 0.0,
        });
        out.lines.push(line);
        out.names.push(
            iname
                .map(|i| fields[i])
                .filter(|n| !n.is_empty())
                .map(str::to_owned),
        );
    }
    Ok(out)
}

/// The one-line note on a left-handed world frame (a fit that is
/// mirrored), printed by `calib solve` and the viewer.
pub const LEFT_HANDED: &str = "the world frame is left-handed (seen from above, y is clockwise from x, as when y \
                               points down the picture): accepted; draw logs in the same frame";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calib::FitOptions;

    /// Issue 15, finding 6: a 10 MB field or a 300-digit number is quoted
    /// by its ends, not echoed whole.
    #[test]
    fn long_fields_are_not_echoed_whole() {
        let field = "9".repeat(10 << 20);
        let e = format!(
            "{:#}",
            parse_points(&format!("u,v,x,y\n1,2,3,x{field}\n")).unwrap_err()
        );
        assert!(
            e.len() < 300 && e.contains("line 2, column y") && e.contains("bytes)"),
            "{}",
            &e[..300.min(e.len())]
        );
        let big = "1".repeat(300);
        let e = format!(
            "{:#}",
            parse_points(&format!("u,v,x,y\n1,2,{big}\n")).unwrap_err()
        );
        assert!(e.len() < 300, "{e}");
        let e = format!(
            "{:#}",
            crate::calib::fit(
                &parse_points(&format!(
                    "u,v,x,y\n0,0,{big},0\n1,0,1,0\n1,1,1,1\n0,1,0,1\n5,5,{big},0\n"
                ))
                .unwrap()
                .points,
                &FitOptions::default()
            )
            .unwrap_err()
        );
        assert!(e.len() < 200, "{e}");
    }

    #[test]
    fn csv_with_names_comments_and_crlf() {
        let p = parse_points(
            "\u{feff}# clicked\r\nname, u, v, x, y\r\n\r\ncorner, 1, 2, 3, 4\r\ncentre,5,6,7,8\r\n",
        )
        .unwrap();
        assert_eq!(p.points.len(), 2);
        assert_eq!(p.lines, vec![4, 5]);
        assert_eq!(p.points[1].image, Vec2::new(5.0, 6.0));
        assert_eq!(p.points[0].world, Vec2::new(3.0, 4.0));
    }

    /// Issue 33: an optional `z` column gives heights; empty is the floor.
    #[test]
    fn a_z_column_gives_heights() {
        let p =
            parse_points("name,u,v,x,y,z\npost,1,2,3,4,800\nspot,5,6,7,8,\nbar,9,10,11,12,2440.5\n").unwrap();
        assert_eq!(p.heights, vec![800.0, 0.0, 2440.5]);
        assert_eq!(p.raised(), vec![0, 2]);
        assert_eq!(p.points3()[2].world, [11.0, 12.0, 2440.5]);
        let e = p
            .heights_refused("the homography model", "use --model pinhole")
            .unwrap();
        assert!(
            e.contains("2 point(s)") && e.contains("line 2, 4") && e.contains("--model pinhole"),
            "{e}"
        );
        let e = parse_points("u,v,x,y,z\n1,2,3,4,high\n").unwrap_err().to_string();
        assert!(e.contains("line 2, column z"), "{e}");
        // Without the column every point is on the floor.
        let p = parse_points("u,v,x,y\n1,2,3,4\n").unwrap();
        assert_eq!(p.heights, vec![0.0]);
        assert!(p.heights_refused("x", "y").is_none());
    }

    #[test]
    fn csv_errors_name_the_line() {
        let e = parse_points("u,v,x,y\n1,2,3,4\n1,2,3\n").unwrap_err().to_string();
        assert!(e.contains("line 3"), "{e}");
        let e = parse_points("u,v,x,y\n1,2,abc,4\n").unwrap_err().to_string();
        assert!(e.contains("line 2, column x") && e.contains("abc"), "{e}");
        let e = parse_points("u,v,x,y\n1,2,nan,4\n").unwrap_err().to_string();
        assert!(e.contains("finite"), "{e}");
        let e = parse_points("a,b,c\n1,2,3\n").unwrap_err().to_string();
        assert!(e.contains("line 1") && e.contains("u,v,x,y"), "{e}");
        assert!(parse_points("").is_err());
        assert!(parse_points("# only a comment\n").is_err());
    }

    proptest::proptest! {
        #[test]
        fn csv_parser_never_panics(text in "\\PC{0,300}", lines in proptest::collection::vec("[-0-9.,eEnaifu vxy#\\t]{0,40}", 0..12)) {
            let _ = parse_points(&text);
            let _ = parse_points(&format!("u,v,x,y\n{}", lines.join("\n")));
        }
    }
}
