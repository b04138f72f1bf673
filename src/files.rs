//! Writing output files so that a failure never leaves a half-written or
//! overwritten file: everything is written to a hidden temporary file in
//! the output's folder and renamed over the output only when complete.
//! An output goes where the user pointed ([`Sink`]): through a symbolic
//! link to the file it names (the link stays), into a pipe, a device or
//! standard output (`-`) as it is made, since those cannot be renamed over.

use std::fs::File;
use std::io::{self, BufWriter, Read as _, Write};
use std::path::{Path, PathBuf};

/// Where an output named on the command line goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// A file (the one a symbolic link names, when the name is a link):
    /// written beside it and renamed over it when complete.
    File(PathBuf),
    /// A pipe, a device or a socket: written in place, as it is made.
    Stream(PathBuf),
    /// Standard output (`-`).
    Stdout,
}

/// Where `output` goes (see [`Target`]).
pub fn target(output: &Path) -> io::Result<Target> {
    if output.as_os_str() == "-" {
        return Ok(Target::Stdout);
    }
    let resolved = follow_links(output)?;
    match std::fs::metadata(&resolved) {
        Ok(m) if !m.is_file() && !m.is_dir() => Ok(Target::Stream(resolved)),
        _ => Ok(Target::File(resolved)),
    }
}

/// `path` with every symbolic link along its last component followed (a
/// link to a file not yet made names where it will be).
fn follow_links(path: &Path) -> io::Result<PathBuf> {
    let mut p = path.to_owned();
    for _ in 0..40 {
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = std::fs::read_link(&p)?;
                p = if to.is_absolute() {
                    to
                } else {
                    parent_dir(&p).join(to)
                };
            }
            _ => return Ok(p),
        }
    }
    Err(io::Error::other(format!(
        "{}: too many symbolic links in a row",
        path.display()
    )))
}

/// An output being written: a temporary file renamed over the target when
/// finished, or the stream itself (see [`target`]).
#[derive(Debug)]
pub enum Sink {
    /// Written to a temporary file beside `target`.
    Temp { temp: TempFile, target: PathBuf },
    /// Written straight to a pipe or a device.
    Stream(PathBuf),
    /// Written to standard output.
    Stdout,
}

impl Sink {
    /// The sink for `output`; `ext` is the temporary file's extension when
    /// not the output's own.
    pub fn open(output: &Path, ext: Option<&str>) -> io::Result<Sink> {
        Ok(match target(output)? {
            Target::File(t) => Sink::Temp {
                temp: TempFile::beside(&t, ext.or_else(|| output.extension().and_then(|e| e.to_str()))),
                target: t,
            },
            Target::Stream(p) => Sink::Stream(p),
            Target::Stdout => Sink::Stdout,
        })
    }

    /// Where to write: a path, or FFmpeg's `pipe:1` for standard output.
    pub fn path(&self) -> &Path {
        match self {
            Sink::Temp { temp, .. } => temp.path(),
            Sink::Stream(p) => p,
            Sink::Stdout => Path::new("pipe:1"),
        }
    }

    /// Opens the sink for writing (a file, the pipe or device, or
    /// standard output).
    pub fn writer(&self) -> io::Result<Box<dyn Write + Send>> {
        Ok(match self {
            Sink::Temp { temp, .. } => Box::new(File::create(temp.path())?),
            Sink::Stream(p) => {
                let _note = FifoWait::start(p);
                Box::new(std::fs::OpenOptions::new().write(true).open(p)?)
            }
            Sink::Stdout => Box::new(io::stdout()),
        })
    }

    /// Whether the output cannot be sought back into (a container must be
    /// written as a stream: fragmented MP4, Matroska without cues).
    pub fn is_stream(&self) -> bool {
        !matches!(self, Sink::Temp { .. })
    }

    /// Finishes the output: the temporary file, synced, renamed over its
    /// target.
    pub fn finish(self) -> io::Result<()> {
        match self {
            Sink::Temp { temp, target } => {
                File::open(temp.path())?.sync_all()?;
                temp.commit(&target)
            }
            Sink::Stream(_) | Sink::Stdout => Ok(()),
        }
    }
}

/// A temporary file beside an output: removed when dropped unless
/// [`TempFile::commit`]ted, and by [`remove_temporaries`] when a signal
/// ends the process.
#[derive(Debug)]
pub struct TempFile {
    path: PathBuf,
    _live: Temporary,
}

/// The temporary files and folders that exist now, for
/// [`remove_temporaries`].
static LIVE: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

/// A temporary file or folder registered for [`remove_temporaries`] while
/// this guard lives (dropping it unregisters the path; removing the path
/// itself stays its owner's job).
#[derive(Debug)]
pub struct Temporary {
    path: PathBuf,
}

impl Temporary {
    /// Registers `path`, before it is created, so that no moment exists in
    /// which it is on disk but unknown to [`remove_temporaries`].
    pub fn register(path: &Path) -> Temporary {
        if let Ok(mut live) = LIVE.lock() {
            live.push(path.to_owned());
        }
        Temporary {
            path: path.to_owned(),
        }
    }
}

impl Drop for Temporary {
    fn drop(&mut self) {
        if let Ok(mut live) = LIVE.lock()
            && let Some(i) = live.iter().rposition(|p| *p == self.path)
        {
            live.swap_remove(i);
        }
    }
}

/// Removes every registered temporary file and folder: what a signal that
/// ends the process (SIGINT, SIGTERM, SIGHUP) runs before exiting, since
/// no destructor runs then. The outputs themselves are untouched (they are
/// only ever replaced by a finished temporary file).
pub fn remove_temporaries() {
    remove_registered(|_| true);
}

/// Removes the registered temporaries for which `which` holds.
fn remove_registered(which: impl Fn(&Path) -> bool) {
    let Ok(live) = LIVE.lock() else {
        return;
    };
    for p in live.iter().filter(|p| which(p)) {
        if p.is_dir() {
            let _ = std::fs::remove_dir_all(p);
        } else {
            let _ = std::fs::remove_file(p);
        }
    }
}

impl TempFile {
    /// A hidden name in `output`'s folder (`.NAME.partial-PID.EXT`). The
    /// extension is `ext` when given, else the output's own (it may pick a
    /// container or format).
    pub fn beside(output: &Path, ext: Option<&str>) -> TempFile {
        let stem = output
            .file_stem()
            .map_or_else(|| "output".into(), |s| s.to_string_lossy());
        let ext = ext
            .map(str::to_owned)
            .or_else(|| output.extension().map(|e| e.to_string_lossy().into_owned()))
            .map_or(String::new(), |e| format!(".{e}"));
        let path = parent_dir(output).join(format!(".{stem}.partial-{}{ext}", std::process::id()));
        TempFile {
            _live: Temporary::register(&path),
            path,
        }
    }

    /// Where to write.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Renames the finished temporary file over `output`.
    pub fn commit(self, output: &Path) -> io::Result<()> {
        std::fs::rename(&self.path, output)
        // `self` drops here: removing the (now renamed) temporary is a no-op.
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Opens an input file for reading. A FIFO blocks in `open` until some
/// program opens it for writing; so that a command never hangs without a
/// word, when that takes longer than a moment it says on standard error
/// what it waits for (a pipe that already has its writer, such as
/// `/dev/stdin` after `cat x |`, opens at once and says nothing).
pub fn open_input(path: &Path) -> io::Result<File> {
    let _note = FifoWait::start(path);
    File::open(path)
}

/// While it lives, and when `path` is a FIFO, says after a moment on
/// standard error that underlay waits for a program to open the FIFO for
/// writing: for whatever opens a FIFO (FFmpeg too), so that a command
/// never waits without a word.
pub struct FifoWait {
    opened: Option<std::sync::mpsc::Sender<()>>,
}

impl FifoWait {
    /// Starts the note's clock when `path` is a FIFO.
    pub fn start(path: &Path) -> FifoWait {
        if !is_fifo(path) {
            return FifoWait { opened: None };
        }
        let (opened, wait) = std::sync::mpsc::channel::<()>();
        let shown = path.display().to_string();
        std::thread::spawn(move || {
            if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                wait.recv_timeout(std::time::Duration::from_millis(300))
            {
                eprintln!("underlay: waiting for a program to open the FIFO {shown} for writing");
            }
        });
        FifoWait { opened: Some(opened) }
    }
}

impl Drop for FifoWait {
    fn drop(&mut self) {
        if let Some(o) = self.opened.take() {
            let _ = o.send(());
        }
    }
}

/// The most a command reads of a small text input (a session, a
/// calibration, a points CSV): 16 MiB, far above any real one.
pub const MAX_SMALL_TEXT: u64 = 16 << 20;

/// Reads the file at `path` whole, refusing more than `limit` bytes
/// whatever its metadata says (`/dev/zero`, a FIFO or a file still
/// growing would otherwise be read until memory runs out). The refusal is
/// an `io::Error` of kind `FileTooLarge` saying the limit.
pub fn read_limited(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    let file = open_input(path)?;
    let mut bytes = Vec::with_capacity(known_len(&file).unwrap_or(0).min(limit) as usize);
    io::Read::take(file, limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(io::Error::new(
            io::ErrorKind::FileTooLarge,
            format!("more than {limit} bytes; no input of this kind is that large"),
        ));
    }
    Ok(bytes)
}

/// [`read_limited`] as UTF-8 text (`InvalidData` naming the byte offset
/// of the first invalid byte otherwise).
pub fn read_text_limited(path: &Path, limit: u64) -> io::Result<String> {
    String::from_utf8(read_limited(path, limit)?).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "not UTF-8 text (invalid byte at offset {})",
                e.utf8_error().valid_up_to()
            ),
        )
    })
}

/// Whether `path` names a FIFO (a named pipe).
pub fn is_fifo(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        std::fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo())
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        false
    }
}

/// The length of an open file when it is a regular file, whose length the
/// file system knows; `None` for pipes, FIFOs, terminals and devices,
/// whose metadata says 0 (or anything) whatever they will deliver: a reader
/// must stream those to their end.
pub fn known_len(file: &File) -> Option<u64> {
    file.metadata().ok().filter(|m| m.is_file()).map(|m| m.len())
}

/// An output that names one of the command's own inputs: writing it would
/// replace what it is made from.
#[derive(Debug, thiserror::Error)]
#[error(
    "{output}: refusing to overwrite the input {input} (the same file): the output would replace \
     what it is made from; choose another output"
)]
pub struct OutputIsInput {
    pub output: PathBuf,
    pub input: PathBuf,
}

/// The one check every command that writes makes before writing: refuses
/// an `output` that is the same file as any of `inputs`, however it is
/// named (symbolic and hard links, `..`, `/dev/stdin` of a redirected
/// file: see [`same_file`]). An output that does not exist yet is no input.
pub fn refuse_overwriting_inputs<'a>(
    output: &Path,
    inputs: impl IntoIterator<Item = &'a Path>,
) -> Result<(), OutputIsInput> {
    match inputs.into_iter().find(|input| same_file(output, input)) {
        Some(input) => Err(OutputIsInput {
            output: output.to_owned(),
            input: input.to_owned(),
        }),
        None => Ok(()),
    }
}

/// Whether `a` and `b` name the same existing file (same device and inode,
/// so symbolic and hard links and any spelling of the path count).
pub fn same_file(a: &Path, b: &Path) -> bool {
    let (Ok(ma), Ok(mb)) = (std::fs::metadata(a), std::fs::metadata(b)) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        ma.dev() == mb.dev() && ma.ino() == mb.ino()
    }
    #[cfg(not(unix))]
    {
        let _ = (ma, mb);
        matches!((std::fs::canonicalize(a), std::fs::canonicalize(b)), (Ok(x), Ok(y)) if x == y)
    }
}

/// The folder of `p` (`.` for a bare file name).
pub fn parent_dir(p: &Path) -> &Path {
    p.parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// Streams `body` into a temporary file beside `path`, syncs it and renames
/// it over `path`; on any failure the temporary file is removed and `path`
/// is untouched.
pub fn write_atomic_with(path: &Path, body: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
    match target(path)? {
        Target::File(t) => {
            let temp = TempFile::beside(&t, None);
            let file = File::create(temp.path())?;
            let mut w = BufWriter::with_capacity(1 << 18, file);
            body(&mut w)?;
            let file = w.into_inner().map_err(io::IntoInnerError::into_error)?;
            file.sync_all()?;
            temp.commit(&t)
        }
        // A pipe or a device is written as it is: it cannot be renamed over.
        Target::Stream(p) => {
            let _note = FifoWait::start(&p);
            let file = std::fs::OpenOptions::new().write(true).open(&p)?;
            let mut w = BufWriter::with_capacity(1 << 18, file);
            body(&mut w)?;
            w.flush()
        }
        Target::Stdout => {
            let mut w = BufWriter::with_capacity(1 << 18, io::stdout().lock());
            body(&mut w)?;
            w.flush()
        }
    }
}

/// Writes `bytes` to `path` atomically (see [`write_atomic_with`]).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_atomic_with(path, |w| w.write_all(bytes))
}

/// The names of the entries of `dir`, sorted (for tests that check what
/// a command left behind).
#[cfg(test)]
pub(crate) fn sorted_names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failure_leaves_the_old_file_and_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("a.txt");
        write_atomic(&out, b"old").unwrap();
        let e = write_atomic_with(&out, |w| {
            w.write_all(b"half")?;
            Err(io::Error::other("disk on fire"))
        });
        assert!(e.is_err());
        assert_eq!(std::fs::read(&out).unwrap(), b"old");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    /// Issue 15, finding 10: what a terminating signal removes is exactly
    /// the temporary files and folders alive at that moment.
    #[test]
    fn signals_remove_the_live_temporaries_only() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.mp4");
        std::fs::write(&out, b"previous output").unwrap();
        let temp = TempFile::beside(&out, None);
        std::fs::write(temp.path(), b"half").unwrap();
        let folder = dir.path().join(".generating-1");
        let live_folder = Temporary::register(&folder);
        std::fs::create_dir_all(folder.join("truth")).unwrap();
        std::fs::write(folder.join("truth/a"), b"x").unwrap();
        let committed = dir.path().join("done.txt");
        let t = TempFile::beside(&committed, None);
        std::fs::write(t.path(), b"whole").unwrap();
        t.commit(&committed).unwrap();
        // (Only this test's folder: other tests of this process write too.)
        remove_registered(|p| p.starts_with(dir.path()));
        assert_eq!(sorted_names(dir.path()), ["done.txt", "out.mp4"]);
        assert_eq!(std::fs::read(&out).unwrap(), b"previous output");
        drop((temp, live_folder));
        let live = LIVE.lock().unwrap();
        assert!(!live.iter().any(|p| p.starts_with(dir.path())), "{live:?}");
    }

    /// Issue 15, finding 7: endless special files are read up to the limit
    /// only, whatever their metadata says.
    #[cfg(unix)]
    #[test]
    fn text_inputs_are_read_up_to_a_limit() {
        let e = read_limited(Path::new("/dev/zero"), 1000).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::FileTooLarge);
        assert!(e.to_string().contains("more than 1000 bytes"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.csv");
        std::fs::write(&p, b"u,v\n").unwrap();
        assert_eq!(read_text_limited(&p, 4).unwrap(), "u,v\n");
        assert_eq!(
            read_limited(&p, 3).unwrap_err().kind(),
            io::ErrorKind::FileTooLarge
        );
        std::fs::write(&p, b"u,\xffv").unwrap();
        assert!(
            read_text_limited(&p, 100)
                .unwrap_err()
                .to_string()
                .contains("offset 2")
        );
    }

    #[test]
    fn temp_names_keep_or_replace_the_extension() {
        let t = TempFile::beside(Path::new("out/x.mp4"), None);
        assert!(t.path().starts_with("out") && t.path().extension().unwrap() == "mp4");
        let t = TempFile::beside(Path::new("m.png"), Some("mkv"));
        assert_eq!(t.path().parent().unwrap(), Path::new("."));
        assert_eq!(t.path().extension().unwrap(), "mkv");
    }
}
