//! FFmpeg's own messages. FFmpeg prints its complaints ("Invalid PNG
//! signature", "chunk too big") straight to the terminal, apart from the
//! error underlay reports for the same file. Here they go through one
//! callback instead: work that wants them ([`capture`]) gets the messages
//! its thread caused, to fold into its own error; everything else is
//! printed as FFmpeg would, at the level set by [`super::set_ffmpeg_quiet`].
//!
//! The callback needs the platform's `va_list` ABI; it is installed on
//! x86-64, and elsewhere FFmpeg keeps its default printing.

use std::cell::RefCell;

thread_local! {
    /// Messages of this thread while [`capture`] runs.
    static CAPTURED: RefCell<Option<Vec<String>>> = const { RefCell::new(None) };
}

/// Most messages kept per capture (a damaged file can repeat one forever).
const MAX_CAPTURED: usize = 20;

/// Runs `f`, returning what it returned and the FFmpeg messages (at error
/// level or worse) that FFmpeg reported on this thread meanwhile, in
/// order and without repeats, instead of printing them. Messages from
/// FFmpeg's own worker threads are printed as usual.
pub(crate) fn capture<T>(f: impl FnOnce() -> T) -> (T, Vec<String>) {
    let outer = CAPTURED.with(|c| c.replace(Some(Vec::new())));
    let out = f();
    let messages = CAPTURED.with(|c| c.replace(outer)).unwrap_or_default();
    (out, messages)
}

/// `text`, followed by FFmpeg's explanation when there is one.
pub(crate) fn explained(text: impl Into<String>, messages: &[String]) -> String {
    let text = text.into();
    if messages.is_empty() {
        text
    } else {
        format!("{text}: {}", messages.join("; "))
    }
}

/// Routes FFmpeg's messages through [`callback`].
pub(super) fn install() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the callback is a valid function for the process's lifetime.
    unsafe {
        ffmpeg_next::ffi::av_log_set_callback(Some(callback));
    }
}

/// A message from FFmpeg: dropped below the log level, kept when this
/// thread captures, else printed on standard error.
#[cfg(target_arch = "x86_64")]
unsafe extern "C" fn callback(
    avcl: *mut libc::c_void,
    level: libc::c_int,
    fmt: *const libc::c_char,
    args: *mut ffmpeg_next::ffi::__va_list_tag,
) {
    use ffmpeg_next::ffi;
    let capturing = CAPTURED
        .try_with(|c| c.try_borrow().is_ok_and(|c| c.is_some()))
        .unwrap_or(false);
    // A capturing thread wants every error to explain its own; otherwise
    // the level set for printing applies.
    // SAFETY: reads the global log level.
    let limit = if capturing {
        ffi::AV_LOG_ERROR
    } else {
        unsafe { ffi::av_log_get_level() }
    };
    if level > limit || fmt.is_null() {
        return;
    }
    let mut line = [0 as libc::c_char; 1024];
    let mut prefix: libc::c_int = 1;
    // SAFETY: FFmpeg's arguments passed on unchanged; the line buffer is
    // as long as said, and FFmpeg ends it with a NUL.
    let text = unsafe {
        ffi::av_log_format_line2(
            avcl,
            level,
            fmt,
            args,
            line.as_mut_ptr(),
            line.len() as libc::c_int,
            &mut prefix,
        );
        std::ffi::CStr::from_ptr(line.as_ptr())
    };
    let text = text.to_string_lossy();
    let text = text.trim_end();
    if text.is_empty() {
        return;
    }
    let kept = CAPTURED
        .try_with(|c| match c.try_borrow_mut() {
            Ok(mut c) => match c.as_mut() {
                Some(list) => {
                    // Without the "[png @ 0x…] " prefix: the caller names the file.
                    let bare = text.split_once("] ").map_or(text, |(_, rest)| rest).to_owned();
                    if list.len() < MAX_CAPTURED && !list.contains(&bare) {
                        list.push(bare);
                    }
                    true
                }
                None => false,
            },
            Err(_) => false,
        })
        .unwrap_or(false);
    if !kept {
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), "{text}");
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;

    fn log(level: libc::c_int, message: &str) {
        let text = std::ffi::CString::new(message).unwrap();
        // SAFETY: "%s" with one C string argument.
        unsafe { ffmpeg_next::ffi::av_log(std::ptr::null_mut(), level, c"%s".as_ptr(), text.as_ptr()) };
    }

    #[test]
    fn messages_are_captured_once_per_thread_and_by_level() {
        super::super::init();
        let ((), got) = capture(|| {
            log(ffmpeg_next::ffi::AV_LOG_ERROR, "bad chunk\n");
            log(ffmpeg_next::ffi::AV_LOG_FATAL, "bad chunk\n");
            log(ffmpeg_next::ffi::AV_LOG_INFO, "chatter\n");
            let ((), inner) = capture(|| log(ffmpeg_next::ffi::AV_LOG_FATAL, "inner\n"));
            assert_eq!(inner, ["inner"]);
            log(ffmpeg_next::ffi::AV_LOG_WARNING, "a warning\n");
            log(ffmpeg_next::ffi::AV_LOG_ERROR, "second\n");
        });
        assert_eq!(got, ["bad chunk", "second"]);
        assert_eq!(explained("cannot read", &got), "cannot read: bad chunk; second");
        assert_eq!(explained("cannot read", &[]), "cannot read");
        // Nothing is captured outside.
        assert!(CAPTURED.with(|c| c.borrow().is_none()));
    }
}
