//! `underlay formats`: what the format table knows, one line per format.

use std::fmt::Write as _;

use crate::formats::FORMATS;
use crate::input::Format;

/// Arguments of `underlay formats` (none).
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Prints the format table.
pub fn run(_args: Args) -> anyhow::Result<()> {
    super::common::emit(&table())
}

/// What a format opens as, in words.
fn opens_as(f: &Format) -> String {
    let mut what = Vec::new();
    if f.log.is_some() {
        what.push("log");
    }
    if f.source.is_some() {
        what.push("picture");
    }
    if f.cameras.is_some() {
        what.push("cameras");
    }
    what.join(" + ")
}

/// The text `underlay formats` prints.
pub fn table() -> String {
    let mut out = String::from(
        "Every input is recognised from its content (gzip'ed or not; a folder from what it holds), \
         by the first format below that claims it.\n\n",
    );
    let rows: Vec<[String; 5]> = FORMATS
        .iter()
        .map(|f| {
            [
                f.id.to_owned(),
                f.name.to_owned(),
                opens_as(f),
                f.beside.map_or_else(String::new, |b| format!("beside {b}")),
                f.names.to_owned(),
            ]
        })
        .collect();
    let header = ["FORMAT", "WHAT", "OPENS AS", "READ", "USUAL NAMES"].map(str::to_owned);
    let mut widths = [0usize; 5];
    for row in std::iter::once(&header).chain(&rows) {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    for row in std::iter::once(&header).chain(&rows) {
        let mut line = String::new();
        for (i, (cell, w)) in row.iter().zip(widths).enumerate() {
            if i + 1 == row.len() {
                line.push_str(cell);
            } else {
                let _ = write!(line, "{cell}{}  ", " ".repeat(w - cell.chars().count()));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out.push_str("\nRecognised by:\n");
    for f in FORMATS {
        let _ = writeln!(out, "  {:<12}  {}", f.id, f.signature);
    }
    out.push_str(
        "\nA file read beside another (`--log` over a match, a session's logs) takes what it needs \
         from it: an agent's debug log its side and step from the game log, a perception log its \
         errors from the monitor log. A log that carries cameras gives `--camera N` a \
         calibration. Anything no format opens as a picture is decoded by FFmpeg (a video); a \
         session is a `.toml` file naming a video, its logs and the rest.\n",
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_format_is_listed_with_what_it_opens_as() {
        let t = table();
        for f in FORMATS {
            assert!(t.contains(f.id) && t.contains(f.name), "{t}");
        }
        assert!(t.contains("log + picture + cameras"), "{t}");
        assert!(t.contains("beside rcg") && t.contains("beside rsmp"), "{t}");
    }
}
