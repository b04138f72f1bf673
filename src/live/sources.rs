//! Logs arriving over the network during a live run, each on a thread of
//! its own, into the [`LiveLogs`] store:
//!
//! - `udp://HOST:PORT`: one native log per datagram (what
//!   [`Writer::udp`](crate::log::Writer::udp) sends: a frame with the
//!   entities it names). Anything else arriving there — garbage, a
//!   damaged or truncated datagram — is counted and ignored.
//! - `tcp://HOST:PORT`: listens there; each connection carries the native
//!   file format as a stream ([`Writer::tcp`](crate::log::Writer::tcp), or
//!   `cat run.ulog | nc`), read frame by frame. Several senders may be
//!   connected at once (at most [`MAX_CONNECTIONS`]); one that sends
//!   something else is cut off, and the others go on.
//!
//! A host left out (`udp://:9870`) listens on every interface.

use std::io::Read;
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use super::error::LiveError;
use super::store::{LiveLogs, SourceId};
use crate::log::native::{self, StreamReader};

/// Senders connected at once to one TCP source.
pub const MAX_CONNECTIONS: usize = 64;

/// How often a waiting receiver looks whether it should stop.
const POLL: Duration = Duration::from_millis(100);

/// A live log source as given on the command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LogSource {
    /// Native log datagrams received on this address.
    Udp(SocketAddr),
    /// Native log streams from senders connecting to this address.
    Tcp(SocketAddr),
}

impl LogSource {
    /// Parses `udp://HOST:PORT` or `tcp://HOST:PORT` (`HOST` may be left
    /// out: every interface). `None` when `s` names no network source (a
    /// file, then); an error for a network source that cannot be used.
    pub fn parse(s: &str) -> Result<Option<LogSource>, LiveError> {
        let Some((scheme, rest)) = s.split_once("://") else {
            return Ok(None);
        };
        let bad = |why: String| LiveError::BadSource {
            source_name: s.to_owned(),
            why,
        };
        let addr = |rest: &str| -> Result<SocketAddr, LiveError> {
            let rest = rest.trim_end_matches('/');
            let with_host = if rest.starts_with(':') {
                format!("0.0.0.0{rest}")
            } else {
                rest.to_owned()
            };
            with_host
                .to_socket_addrs()
                .map_err(|e| bad(format!("not a HOST:PORT address ({e})")))?
                .next()
                .ok_or_else(|| bad("the host has no address".into()))
        };
        match scheme {
            "udp" => Ok(Some(LogSource::Udp(addr(rest)?))),
            "tcp" => Ok(Some(LogSource::Tcp(addr(rest)?))),
            "ssl-vision" | "ssl-referee" | "ssl-tracker" | "roboviz" => Err(bad(
                "the SSL league's and RoboViz's live streams are not read yet: record them and give the file, \
                 or send native logs over udp:// or tcp://"
                    .into(),
            )),
            other => Err(bad(format!(
                "unknown scheme {other}:// (live logs come over udp://HOST:PORT or tcp://HOST:PORT)"
            ))),
        }
    }
}

impl std::fmt::Display for LogSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LogSource::Udp(a) => write!(f, "udp://{a}"),
            LogSource::Tcp(a) => write!(f, "tcp://{a}"),
        }
    }
}

/// The receiving threads; stopped and joined when dropped.
pub struct Receivers {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
    /// The addresses bound, in the order of the sources (port 0 resolved).
    pub bound: Vec<SocketAddr>,
}

impl Drop for Receivers {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// Binds every source (so that a port in use is an error now, naming it)
/// and starts receiving into `store`.
pub fn start(sources: &[LogSource], store: &Arc<LiveLogs>) -> Result<Receivers, LiveError> {
    let stop = Arc::new(AtomicBool::new(false));
    let mut r = Receivers {
        stop: Arc::clone(&stop),
        threads: Vec::new(),
        bound: Vec::new(),
    };
    for s in sources {
        let bind_error = |error: std::io::Error| LiveError::Bind {
            source_name: s.to_string(),
            error,
        };
        match *s {
            LogSource::Udp(addr) => {
                let socket = UdpSocket::bind(addr).map_err(bind_error)?;
                socket.set_read_timeout(Some(POLL)).map_err(bind_error)?;
                let bound = socket.local_addr().map_err(bind_error)?;
                let id = store.add_source(&LogSource::Udp(bound).to_string());
                let (store, stop) = (Arc::clone(store), Arc::clone(&stop));
                r.bound.push(bound);
                r.threads.push(std::thread::spawn(move || {
                    receive_udp(&socket, &store, id, &stop)
                }));
            }
            LogSource::Tcp(addr) => {
                let listener = TcpListener::bind(addr).map_err(bind_error)?;
                listener.set_nonblocking(true).map_err(bind_error)?;
                let bound = listener.local_addr().map_err(bind_error)?;
                let id = store.add_source(&LogSource::Tcp(bound).to_string());
                let (store, stop) = (Arc::clone(store), Arc::clone(&stop));
                r.bound.push(bound);
                r.threads.push(std::thread::spawn(move || {
                    accept_tcp(&listener, &store, id, &stop)
                }));
            }
        }
    }
    Ok(r)
}

fn receive_udp(socket: &UdpSocket, store: &LiveLogs, id: SourceId, stop: &AtomicBool) {
    let mut buf = vec![0u8; 65_536];
    while !stop.load(Ordering::Relaxed) {
        let n = match socket.recv(&mut buf) {
            Ok(n) => n,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                continue;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                store.note(id, format!("receiving: {e}"));
                std::thread::sleep(POLL);
                continue;
            }
        };
        let datagram = &buf[..n];
        if !datagram.starts_with(native::MAGIC) {
            store.bad(
                id,
                n as u64,
                format!("a datagram of {n} bytes that is not a native log"),
            );
            continue;
        }
        match native::read(datagram) {
            Ok(log) if !log.frames.is_empty() => store.push(id, log, n as u64),
            Ok(_) => store.bad(
                id,
                n as u64,
                format!("a datagram of {n} bytes without a whole frame"),
            ),
            Err(e) => store.bad(id, n as u64, format!("a datagram of {n} bytes: {e}")),
        }
    }
}

fn accept_tcp(listener: &TcpListener, store: &Arc<LiveLogs>, id: SourceId, stop: &Arc<AtomicBool>) {
    let open = Arc::new(AtomicUsize::new(0));
    let connections: Arc<Mutex<Vec<TcpStream>>> = Arc::default();
    let mut threads = Vec::new();
    while !stop.load(Ordering::Relaxed) {
        match listener.accept() {
            Ok((stream, peer)) => {
                if open.load(Ordering::Relaxed) >= MAX_CONNECTIONS {
                    store.note(
                        id,
                        format!("{peer}: refused, {MAX_CONNECTIONS} senders are connected already"),
                    );
                    continue;
                }
                if stream.set_nonblocking(false).is_err() {
                    continue;
                }
                if let Ok(clone) = stream.try_clone() {
                    connections
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .push(clone);
                }
                open.fetch_add(1, Ordering::Relaxed);
                let (store, open) = (Arc::clone(store), Arc::clone(&open));
                threads.push(std::thread::spawn(move || {
                    read_stream(stream, peer, &store, id);
                    open.fetch_sub(1, Ordering::Relaxed);
                }));
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => std::thread::sleep(POLL / 2),
            Err(e) => {
                store.note(id, format!("accepting: {e}"));
                std::thread::sleep(POLL);
            }
        }
        threads.retain(|t: &JoinHandle<()>| !t.is_finished());
    }
    // Unblock the readers, then wait for them.
    for c in connections
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .iter()
    {
        let _ = c.shutdown(std::net::Shutdown::Both);
    }
    for t in threads {
        let _ = t.join();
    }
}

/// Counts the bytes a stream reader takes in.
struct Counted<R> {
    inner: R,
    bytes: Arc<std::sync::atomic::AtomicU64>,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.bytes.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

fn read_stream(stream: TcpStream, peer: SocketAddr, store: &LiveLogs, id: SourceId) {
    let bytes = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let counted = Counted {
        inner: stream,
        bytes: Arc::clone(&bytes),
    };
    let mut reader = match StreamReader::new(counted) {
        Ok(r) => r,
        Err(e) => {
            store.bad(
                id,
                bytes.load(Ordering::Relaxed),
                format!("{peer}: not a native log stream: {e}"),
            );
            return;
        }
    };
    let mut last = 0;
    loop {
        match reader.next_frames() {
            Ok(Some(log)) => {
                let now = bytes.load(Ordering::Relaxed);
                store.push(id, log, now - last);
                last = now;
            }
            Ok(None) => return,
            Err(e) => {
                store.bad(id, 0, format!("{peer}: {e}; the connection was closed"));
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::live::store::StoreOptions;
    use crate::log::{Header, Writer, WriterOptions};

    fn wait_for(store: &LiveLogs, what: impl Fn(&[super::super::store::SourceCounts]) -> bool) {
        let t = std::time::Instant::now();
        while !what(&store.counts()) {
            assert!(t.elapsed() < Duration::from_secs(10), "{:?}", store.counts());
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    #[test]
    fn sources_parse() {
        assert_eq!(LogSource::parse("run.ulog").unwrap(), None);
        assert_eq!(
            LogSource::parse("udp://:9870").unwrap(),
            Some(LogSource::Udp("0.0.0.0:9870".parse().unwrap()))
        );
        assert_eq!(
            LogSource::parse("tcp://127.0.0.1:5000/").unwrap(),
            Some(LogSource::Tcp("127.0.0.1:5000".parse().unwrap()))
        );
        for bad in ["udp://nowhere", "udp://:99999", "gopher://x:1"] {
            let e = LogSource::parse(bad).unwrap_err().to_string();
            assert!(e.contains(bad), "{e}");
        }
        assert!(
            LogSource::parse("ssl-vision://10006")
                .unwrap_err()
                .to_string()
                .contains("not read yet")
        );
    }

    #[test]
    fn udp_frames_arrive_and_garbage_is_counted() {
        let store = Arc::new(LiveLogs::new(StoreOptions::default()));
        let r = start(&[LogSource::Udp("127.0.0.1:0".parse().unwrap())], &store).unwrap();
        let addr = r.bound[0];
        let junk = UdpSocket::bind("127.0.0.1:0").unwrap();
        junk.send_to(b"hello", addr).unwrap();
        let mut torn = native::prefix(false).to_vec();
        torn.extend([0x1a, 0x01]);
        junk.send_to(&torn, addr).unwrap();
        let mut w = Writer::udp(addr, Header::default(), WriterOptions::default()).unwrap();
        w.instant(1.0).circle((0.0, 0.0), 1.0).entity("a");
        w.instant(2.0).circle((0.0, 0.0), 1.0).entity("b");
        w.finish().unwrap();
        wait_for(&store, |c| c[0].packets == 2 && c[0].bad == 2);
        let (_, log, _) = store.snapshot(0).unwrap();
        assert_eq!(log.frames.len(), 2);
        drop(r);
    }

    #[test]
    fn tcp_senders_stream_frames_and_a_bad_one_is_cut_off() {
        let store = Arc::new(LiveLogs::new(StoreOptions::default()));
        let r = start(&[LogSource::Tcp("127.0.0.1:0".parse().unwrap())], &store).unwrap();
        let addr = r.bound[0];
        let mut bad = TcpStream::connect(addr).unwrap();
        std::io::Write::write_all(&mut bad, b"GET / HTTP/1.0\r\n\r\n").unwrap();
        let mut w = Writer::tcp(addr, Header::default(), WriterOptions::default()).unwrap();
        w.instant(1.0).circle((0.0, 0.0), 1.0).entity("a");
        w.instant(2.0).circle((0.0, 0.0), 1.0).entity("a");
        w.end_frame();
        w.flush().unwrap();
        // Frames arrive while the sender is still connected.
        wait_for(&store, |c| c[0].packets >= 2 && c[0].bad == 1);
        drop(w);
        let (_, log, _) = store.snapshot(0).unwrap();
        assert_eq!(log.frames.len(), 2);
        drop(r);
    }
}
