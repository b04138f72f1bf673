//! `underlay log`: inspect, print, query and convert logs.

use std::fmt::Write as _;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::input::Format;
use crate::log::summary::{Summary, entity_tree};
use crate::log::{self, Log, TimeUnit, text};
use crate::select::{Filter, FilterSpec, Index};

/// What every `log` subcommand reads: the inputs `view` and `export`
/// take, read as logs.
#[derive(Debug, clap::Args)]
pub struct Inputs {
    /// A log (any format underlay reads, gzip'ed or not; `underlay formats`
    /// lists them), a match (a 2D or 3D game log, an SSL game log: its own
    /// drawings), or a session (its logs).
    #[arg(value_name = "LOG|MATCH|SESSION.toml")]
    pub input: PathBuf,
    /// More logs read with it and merged into one, as `view` and `export`
    /// read them (a match's agents' logs take their side and step from its
    /// game log); with a session, its logs instead (repeatable).
    #[arg(long = "log", value_name = "LOG")]
    pub logs: Vec<PathBuf>,
    /// Over a 2D match: the player whose sensing is drawn in detail
    /// (`l10`, `r3`).
    #[arg(long, value_name = "PLAYER")]
    pub player: Option<String>,
    /// Of a ROS 2 recording: the world frame its drawings are placed in
    /// (`map`, `odom`); the root of its transform tree by default.
    #[arg(long, value_name = "FRAME")]
    pub world: Option<String>,
    /// A level mapping file (`"entity" = level` lines, TOML): the level of
    /// each entity's primitives, whatever their log said.
    #[arg(long, value_name = "LEVELS.toml")]
    pub levels: Option<PathBuf>,
}

/// The `log` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Counts, time range, entity tree and warnings of a log (of several,
    /// merged).
    Info {
        #[command(flatten)]
        inputs: Inputs,
    },
    /// Print a log in the thesis's text notation.
    Dump {
        #[command(flatten)]
        inputs: Inputs,
        /// Only frames that apply at or after this time (log seconds).
        #[arg(long, value_name = "S", allow_negative_numbers = true)]
        from: Option<f64>,
        /// Only frames that apply at or before this time (log seconds).
        #[arg(long, value_name = "S", allow_negative_numbers = true)]
        to: Option<f64>,
    },
    /// Print the primitives selected at a time, one per line.
    Select {
        #[command(flatten)]
        inputs: Inputs,
        /// Log time to select at: seconds on the log's clock (for most logs
        /// seconds since the epoch), or `+S` for S seconds after the log's
        /// first frame.
        #[arg(long, value_name = "T", allow_negative_numbers = true, value_parser = parse_at)]
        at: At,
        /// Only primitives with level ≤ N.
        #[arg(long, value_name = "N", allow_negative_numbers = true)]
        max_level: Option<i32>,
        /// Only this entity and its descendants (repeatable).
        #[arg(long = "entity", value_name = "E")]
        entities: Vec<String>,
        /// Show the nearest instantaneous frame only when it is closer than
        /// S seconds [default: the log's hint, else 1.5 × the median
        /// spacing of instantaneous frames].
        #[arg(long, value_name = "S")]
        threshold: Option<f64>,
    },
    /// Convert between formats, chosen by extension and content.
    Convert {
        #[command(flatten)]
        inputs: Inputs,
        /// Output log: `.txt` text notation, `.zst` compressed native
        /// binary, anything else native binary.
        output: PathBuf,
    },
}

/// A time given to `log select --at`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum At {
    /// On the log's own clock.
    Absolute(f64),
    /// Seconds after the log's first finite frame time.
    FromStart(f64),
}

fn parse_at(s: &str) -> Result<At, String> {
    let (rel, num) = match s.strip_prefix('+') {
        Some(rest) => (true, rest),
        None => (false, s),
    };
    match num.trim().parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(if rel { At::FromStart(v) } else { At::Absolute(v) }),
        _ => Err(format!(
            "`{s}` is not a finite number of seconds (or +S from the start)"
        )),
    }
}

impl At {
    /// The time on the log's clock; `None` for `+S` on a log with no
    /// finite frame time.
    pub fn resolve(self, log: &Log) -> Option<f64> {
        match self {
            At::Absolute(t) => Some(t),
            At::FromStart(s) => log.time_range().map(|(lo, _)| lo + s),
        }
    }
}

/// Runs a `log` subcommand.
pub fn run(cmd: Command) -> anyhow::Result<()> {
    match cmd {
        Command::Info { inputs } => info(&inputs),
        Command::Dump { inputs, from, to } => dump(&inputs, from, to),
        Command::Select {
            inputs,
            at,
            max_level,
            entities,
            threshold,
        } => select_at(&inputs, at, max_level, &entities, threshold),
        Command::Convert { inputs, output } => convert(&inputs, &output),
    }
}

/// The logs read, each with its file and format, and merged into one.
struct Loaded {
    files: Vec<(PathBuf, &'static Format)>,
    log: Log,
}

impl Loaded {
    /// What the messages name: the file, or the first and how many more.
    fn name(&self) -> String {
        match self.files.as_slice() {
            [(one, _)] => one.display().to_string(),
            [(first, _), rest @ ..] => format!("{} (and {} more)", first.display(), rest.len()),
            [] => String::new(),
        }
    }
}

/// Reads the inputs through the format table: each file with its format
/// and log.
fn read(inputs: &Inputs) -> anyhow::Result<Vec<(PathBuf, &'static Format, Log)>> {
    let (paths, observer) = crate::session::logs_of_input(&inputs.input, &inputs.logs)?;
    let options = crate::input::ReadOptions {
        observer: inputs.player.clone().or(observer),
        world: inputs.world.clone(),
        topic: None,
        levels: match &inputs.levels {
            Some(p) => Some(crate::log::levels::LevelMap::load(p)?),
            None => None,
        },
    };
    let logs = crate::formats::load_logs(&paths, &options).context("cannot load the log")?;
    Ok(paths
        .into_iter()
        .zip(logs)
        .map(|(path, (log, format))| (path, format, log))
        .collect())
}

/// Reads the inputs, says each file's warnings with its name, and merges
/// them.
fn load(inputs: &Inputs) -> anyhow::Result<Loaded> {
    let mut files = Vec::new();
    let mut logs = Vec::new();
    for (path, format, log) in read(inputs)? {
        print_warnings(&path, &log);
        files.push((path, format));
        logs.push(log);
    }
    Ok(Loaded {
        files,
        log: log::merge(logs),
    })
}

fn print_warnings(path: &Path, log: &Log) {
    for w in &log.warnings {
        eprintln!("warning: {}: {w}", path.display());
    }
}

/// Writes to stdout; a closed pipe (e.g. `| head`) ends quietly.
fn emit(f: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> anyhow::Result<()> {
    let stdout = io::stdout();
    let mut out = io::BufWriter::with_capacity(1 << 16, stdout.lock());
    match f(&mut out).and_then(|()| out.flush()) {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        r => r.context("cannot write to standard output"),
    }
}

fn info(inputs: &Inputs) -> anyhow::Result<()> {
    let mut files = Vec::new();
    let mut logs = Vec::new();
    for (path, format, log) in read(inputs)? {
        // A pipe or device has no size to tell.
        let size = std::fs::metadata(&path)
            .ok()
            .filter(|m| m.is_file())
            .map(|m| m.len());
        files.push((path, format, size));
        logs.push(log);
    }
    let files: Vec<(&Path, &Format, Option<u64>)> =
        files.iter().map(|(p, f, s)| (p.as_path(), *f, *s)).collect();
    let report = info_report(&files, &log::merge(logs));
    emit(|w| w.write_all(report.as_bytes()))
}

/// The text `log info` prints.
///
/// `files` are the files read, each with its format and its size when it
/// is a regular file; `log` is what they hold, merged.
pub fn info_report(files: &[(&Path, &Format, Option<u64>)], log: &Log) -> String {
    let s = Summary::of(log);
    let h = &log.header;
    let mut r = String::new();
    // Notes a file's contents list are not said again among its warnings.
    let mut noted: Vec<String> = Vec::new();
    for (path, format, size) in files {
        let _ = writeln!(r, "file:        {}", path.display());
        match size {
            Some(size) => writeln!(r, "format:      {}, {} bytes", format.name, group(*size)),
            None if path.is_dir() => writeln!(r, "format:      {}", format.name),
            None => writeln!(r, "format:      {}, read as a stream", format.name),
        }
        .ok();
        match format.contents.map(|c| c(path)) {
            Some(Ok(lines)) => lines.iter().for_each(|l| {
                let _ = writeln!(r, "{l}");
                if let Some(note) = l.strip_prefix("note:") {
                    noted.push(note.trim().to_owned());
                }
            }),
            Some(Err(e)) => {
                let _ = writeln!(r, "contents:    cannot be listed: {e}");
            }
            None => {}
        }
    }
    if !h.name.is_empty() {
        let _ = writeln!(r, "name:        {}", h.name);
    }
    let clock = match h.time_unit {
        TimeUnit::EpochSeconds => "seconds since the Unix epoch",
        TimeUnit::RelativeSeconds => "seconds since the start of the run",
    };
    let _ = writeln!(r, "times:       {clock}; world unit {}", h.world_unit);
    let _ = writeln!(
        r,
        "frames:      {} ({} instantaneous, {} persistent)",
        s.frames(),
        s.instant_frames,
        s.persistent_frames
    );
    let kinds: Vec<String> = s.by_kind.iter().map(|(k, n)| format!("{k} {n}")).collect();
    let _ = writeln!(
        r,
        "primitives:  {}{}",
        s.primitives,
        if kinds.is_empty() {
            String::new()
        } else {
            format!(" ({})", kinds.join(", "))
        }
    );
    match s.time_range {
        Some((lo, hi)) => {
            let _ = writeln!(
                r,
                "time range:  {} … {} (duration {})",
                fmt_time(lo, h.time_unit),
                fmt_time(hi, h.time_unit),
                fmt_duration(hi - lo)
            );
        }
        None => {
            let _ = writeln!(r, "time range:  none (no finite frame time)");
        }
    }
    if s.unbounded {
        let _ = writeln!(r, "             some persistent frames extend to -inf or inf");
    }
    let threshold = log.default_instant_threshold();
    if s.instant_frames > 0 {
        let how = if log.header.hints.instant_threshold.is_some() {
            "from the header"
        } else {
            "1.5 × median spacing"
        };
        let value = if threshold.is_finite() {
            format!("{} s", round_sig(threshold, 4))
        } else {
            "unlimited (fewer than two instantaneous times)".to_owned()
        };
        let _ = writeln!(r, "threshold:   {value} for instantaneous frames ({how})");
    }
    let levels: Vec<String> = s.by_level.iter().map(|(l, n)| format!("{l}: {n}")).collect();
    let _ = writeln!(
        r,
        "levels:      {}",
        if levels.is_empty() {
            "none".to_owned()
        } else {
            levels.join(", ")
        }
    );
    let source = if log.entities.has_edges() {
        "declared parents"
    } else {
        "implied by '/' in names"
    };
    let _ = writeln!(
        r,
        "entities:    {} (tree {source}; primitives own / with descendants)",
        log.entities.len()
    );
    let (lines, left_out) = entity_tree(log, 500);
    for l in &lines {
        // Deep trees (a name of thousands of parts) keep to one screen width.
        const MAX_INDENT: usize = 30;
        let indent = if l.depth <= MAX_INDENT {
            "  ".repeat(l.depth + 1)
        } else {
            format!("{}[depth {}] ", "  ".repeat(MAX_INDENT + 1), l.depth)
        };
        let counts = if l.repeated {
            "(shown above)".to_owned()
        } else if l.has_children {
            format!("{} / {}", l.own, l.total)
        } else {
            l.own.to_string()
        };
        let name = if l.entity.is_none() {
            format!("{}/", l.name)
        } else {
            l.name.clone()
        };
        let pad = 40usize.saturating_sub(indent.len() + name.chars().count()).max(1);
        let _ = writeln!(r, "{indent}{name}{}{counts}", " ".repeat(pad));
    }
    if left_out > 0 {
        let _ = writeln!(r, "  … {left_out} more");
    }
    let warnings: Vec<String> = log
        .warnings
        .iter()
        .map(|w| w.to_string())
        .filter(|w| !noted.iter().any(|n| n == w))
        .collect();
    if warnings.is_empty() {
        let _ = writeln!(r, "warnings:    none");
    } else {
        let _ = writeln!(r, "warnings:    {}", warnings.len());
        for w in &warnings {
            let _ = writeln!(r, "  {w}");
        }
    }
    r
}

/// `x` rounded to `digits` significant digits, for display.
fn round_sig(x: f64, digits: i32) -> String {
    if x == 0.0 || !x.is_finite() {
        return text::fmt_f64(x);
    }
    let scale = 10f64.powi(digits - 1 - x.abs().log10().floor() as i32);
    text::fmt_f64((x * scale).round() / scale)
}

/// `1234567` → `1,234,567`.
fn group(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn fmt_duration(d: f64) -> String {
    if d >= 3600.0 {
        format!(
            "{:.0} h {:.0} min {:.3} s",
            (d / 3600.0).floor(),
            ((d % 3600.0) / 60.0).floor(),
            d % 60.0
        )
    } else if d >= 60.0 {
        format!("{:.0} min {:.3} s", (d / 60.0).floor(), d % 60.0)
    } else {
        format!("{} s", text::fmt_f64((d * 1e6).round() / 1e6))
    }
}

/// A time on the log's clock; epoch times also as a UTC date.
fn fmt_time(t: f64, unit: TimeUnit) -> String {
    let plain = text::fmt_f64(t);
    // Small "epoch" times are really relative ones (a log without a header).
    if unit != TimeUnit::EpochSeconds || !(1e8..1e11).contains(&t) {
        return format!("{plain} s");
    }
    let secs = t.floor();
    let micros = ((t - secs) * 1e6).round().min(999_999.0) as u64;
    let secs = secs as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    format!(
        "{plain} s ({y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}.{micros:06} UTC)",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Year, month, day of a count of days since 1970-01-01 (proleptic Gregorian).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

fn dump(inputs: &Inputs, from: Option<f64>, to: Option<f64>) -> anyhow::Result<()> {
    for (name, v) in [("--from", from), ("--to", to)] {
        if v.is_some_and(f64::is_nan) {
            anyhow::bail!("{name} must be a number of seconds");
        }
    }
    let log = load(inputs)?.log;
    let lo = from.unwrap_or(f64::NEG_INFINITY);
    let hi = to.unwrap_or(f64::INFINITY);
    emit(|w| {
        let mut w = w;
        text::write_filtered(&log, &mut w, |f| f.time.end() >= lo && f.time.start() <= hi)
    })
}

/// The filter of `--max-level` and `--entity`: an entity passes when it or
/// an ancestor is one of `only` (see `FilterSpec::compile` for the DAG rules).
pub fn filter_for(log: &Log, max_level: Option<i32>, only: &[String]) -> anyhow::Result<Filter> {
    let spec = FilterSpec {
        max_level,
        only: only.to_vec(),
        ..FilterSpec::default()
    };
    Ok(spec.compile(log)?)
}

fn select_at(
    inputs: &Inputs,
    at: At,
    max_level: Option<i32>,
    entities: &[String],
    threshold: Option<f64>,
) -> anyhow::Result<()> {
    if let Some(t) = threshold
        && (t.is_nan() || t < 0.0)
    {
        anyhow::bail!("--threshold must be a non-negative number of seconds, not {t}");
    }
    let loaded = load(inputs)?;
    let log = &loaded.log;
    let Some(at) = at.resolve(log) else {
        anyhow::bail!(
            "{}: the log has no frame with a finite time to count --at from",
            loaded.name()
        );
    };
    let filter = filter_for(log, max_level, entities).with_context(|| loaded.name())?;
    let threshold = threshold.unwrap_or_else(|| log.default_instant_threshold());
    let index = Index::new(log);
    let selected = index.select(log, crate::time::LogTime(at), threshold, &filter);
    emit(|w| {
        for p in selected {
            writeln!(w, "{}", text::primitive_to_string(log, p))?;
        }
        Ok(())
    })
}

fn convert(inputs: &Inputs, output: &Path) -> anyhow::Result<()> {
    let (paths, _) = crate::session::logs_of_input(&inputs.input, &inputs.logs)?;
    crate::files::refuse_overwriting_inputs(
        output,
        paths.iter().map(PathBuf::as_path).chain([inputs.input.as_path()]),
    )?;
    let loaded = load(inputs)?;
    let log = loaded.log;
    let formats: Vec<&str> = loaded.files.iter().map(|(_, f)| f.name).collect();
    let out_format = log::SaveFormat::for_path(output);
    log::save(&log, output).context("cannot write the converted log")?;
    let out_name = match out_format {
        log::SaveFormat::Text => "text notation",
        log::SaveFormat::Native { zstd_level: None } => "native binary",
        log::SaveFormat::Native { zstd_level: Some(_) } => "native binary (zstd)",
    };
    let said = format!(
        "{} ({}) → {} ({out_name}): {} frames, {} primitives, {} entities",
        match loaded.files.as_slice() {
            [(one, _)] => one.display().to_string(),
            files => files
                .iter()
                .map(|(p, _)| p.display().to_string())
                .collect::<Vec<_>>()
                .join(" + "),
        },
        formats.join(" + "),
        output.display(),
        log.frames.len(),
        log.primitives.len(),
        log.entities.len()
    );
    // Written to standard output, the log is alone there.
    if output.as_os_str() == "-" {
        eprintln!("{said}");
    } else {
        println!("{said}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_numbers_format() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(19_675), (2023, 11, 14));
        assert_eq!(
            fmt_time(1_700_000_000.25, TimeUnit::EpochSeconds),
            "1700000000.25 s (2023-11-14 22:13:20.250000 UTC)"
        );
        assert_eq!(fmt_time(27.56, TimeUnit::RelativeSeconds), "27.56 s");
        assert_eq!(fmt_time(27.56, TimeUnit::EpochSeconds), "27.56 s");
        assert_eq!(group(1_234_567), "1,234,567");
        assert_eq!(group(12), "12");
        assert_eq!(fmt_duration(20.36), "20.36 s");
        assert_eq!(round_sig(0.07499992847442627, 4), "0.075");
        assert_eq!(round_sig(1234.5678, 4), "1235");
    }

    #[test]
    fn entity_filter_uses_names_or_edges() {
        let mut log = Log::new();
        for n in ["robots/blue/3", "robots/yellow", "ball"] {
            log.entities.intern(n);
        }
        let f = filter_for(&log, Some(2), &["robots".into()]).unwrap();
        assert_eq!(f.levels(), &[2, 2, Filter::HIDDEN]);
        assert!(filter_for(&log, None, &["nope".into()]).is_err());
        let team = log.entities.intern("team");
        let ball = log.entities.get("ball").unwrap();
        log.entities.add_parent(ball, team);
        let f = filter_for(&log, None, &["team".into()]).unwrap();
        assert_eq!(f.levels(), &[Filter::HIDDEN, Filter::HIDDEN, i32::MAX, i32::MAX]);
    }
}
