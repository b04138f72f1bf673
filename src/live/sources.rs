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
//! - `roboviz://[HOST:]PORT`: RoboViz's drawing datagrams, as 3D-league
//!   agents send them to RoboViz (its port is 32769, the default here),
//!   replayed as a recording of them is ([`crate::sim3d::replay`]): each
//!   set's shapes shown from a swap until that set's next swap, stamped
//!   with their arrival on this machine's clock ([`super::now`]). What a
//!   swap ended goes into the store as frames; what the sets show now
//!   replaces the source's open-ended frames
//!   ([`LiveLogs::set_current`]). A datagram that does not parse is
//!   counted as bad (the commands before the bad one are drawn, as a
//!   recording's are); sets, names and shapes held stay within the
//!   store's bounds. Agent annotations are placed at their robot when a
//!   `sim3d://` source gives the robots, else left out (and said).
//! - `sim3d://[HOST:]PORT`: the 3D simulator's monitor stream, connected
//!   to (127.0.0.1 and SimSpark's port 3200 when left out) and read as a
//!   monitor log is: the robots that RoboViz's agent annotations are
//!   placed at, and the ball's trail (`super::sim3d`, which the RoboViz
//!   sources share).
//!
//! - `ssl-vision://[GROUP:]PORT`, `ssl-referee://[GROUP:]PORT`,
//!   `ssl-tracker://[GROUP:]PORT`: the SSL league's multicast streams,
//!   drawn together as one match's game log is (`super::ssl`).
//!
//! A host left out (`udp://:9870`) listens on every interface (but
//! `sim3d://`, which connects: to this machine).

use std::io::Read;
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use super::error::LiveError;
use super::sim3d::{self, MONITOR_PORT, Scene};
use super::ssl::{self, SslStream};
use super::store::{LiveLogs, SourceId};
use crate::log::native::{self, StreamReader};

/// Senders connected at once to one TCP source.
pub const MAX_CONNECTIONS: usize = 64;

/// RoboViz's port: where agents send their drawings by default.
pub const ROBOVIZ_PORT: u16 = 32769;

/// How often a waiting receiver looks whether it should stop.
const POLL: Duration = Duration::from_millis(100);

/// A live log source as given on the command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LogSource {
    /// Native log datagrams received on this address.
    Udp(SocketAddr),
    /// Native log streams from senders connecting to this address.
    Tcp(SocketAddr),
    /// RoboViz drawing datagrams received on this address.
    RoboViz(SocketAddr),
    /// A 3D simulator's monitor stream, from its monitor port at this
    /// address (connected to).
    Sim3d(SocketAddr),
    /// One of the SSL league's streams, received on this address (a
    /// multicast group is joined).
    Ssl(SslStream, SocketAddr),
}

impl LogSource {
    /// Parses `udp://HOST:PORT`, `tcp://HOST:PORT`,
    /// `roboviz://[HOST:]PORT` (`HOST` may be left out: every interface;
    /// RoboViz's `PORT` too: [`ROBOVIZ_PORT`]), `sim3d://[HOST:]PORT`
    /// (127.0.0.1 and [`MONITOR_PORT`] when left out), or
    /// `ssl-vision|ssl-referee|ssl-tracker://[GROUP:]PORT` (the league's
    /// group and port when left out: [`SslStream::parse_addr`]). `None` when `s` names no
    /// network source (a file, then); an error for a network source that
    /// cannot be used.
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
            "roboviz" => {
                let rest = rest.trim_end_matches('/');
                let rest = if rest.is_empty() {
                    format!(":{ROBOVIZ_PORT}")
                } else if rest.parse::<u16>().is_ok() {
                    format!(":{rest}")
                } else {
                    rest.to_owned()
                };
                Ok(Some(LogSource::RoboViz(addr(&rest)?)))
            }
            "sim3d" => {
                // A client: a host left out is this machine.
                let rest = rest.trim_end_matches('/');
                let rest = if rest.is_empty() {
                    format!("127.0.0.1:{MONITOR_PORT}")
                } else if let Some(port) = rest.strip_prefix(':') {
                    format!("127.0.0.1:{port}")
                } else if rest.bytes().all(|b| b.is_ascii_digit()) {
                    format!("127.0.0.1:{rest}")
                } else {
                    rest.to_owned()
                };
                Ok(Some(LogSource::Sim3d(addr(&rest)?)))
            }
            other => match SslStream::of_scheme(other) {
                Some(stream) => Ok(Some(LogSource::Ssl(
                    stream,
                    stream.parse_addr(rest).map_err(bad)?,
                ))),
                None => Err(bad(format!(
                    "unknown scheme {other}:// (live logs come over udp://HOST:PORT, tcp://HOST:PORT, \
                     roboviz://[HOST:]PORT, sim3d://[HOST:]PORT, ssl-vision://, ssl-referee:// or \
                     ssl-tracker://[GROUP:]PORT)"
                ))),
            },
        }
    }
}

impl std::fmt::Display for LogSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LogSource::Udp(a) => write!(f, "udp://{a}"),
            LogSource::Tcp(a) => write!(f, "tcp://{a}"),
            LogSource::RoboViz(a) => write!(f, "roboviz://{a}"),
            LogSource::Sim3d(a) => write!(f, "sim3d://{a}"),
            LogSource::Ssl(s, a) => write!(f, "{}://{a}", s.scheme()),
        }
    }
}

/// The receiving threads; stopped and joined when dropped.
pub struct Receivers {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
    /// The addresses bound, in the order of the sources (port 0 resolved;
    /// for `sim3d://`, the address it connects to).
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
    // The SSL streams of the run draw one scene; the 3D league's another.
    let mut scene: Option<Arc<Mutex<ssl::Scene>>> = None;
    let with_monitor = sources.iter().any(|s| matches!(s, LogSource::Sim3d(_)));
    let mut scene3d: Option<Arc<Mutex<Scene>>> = None;
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
                    receive_udp(&socket, &store, id, &stop, |datagram| {
                        native_datagram(&store, id, datagram)
                    })
                }));
            }
            LogSource::RoboViz(addr) => {
                let socket = UdpSocket::bind(addr).map_err(bind_error)?;
                socket.set_read_timeout(Some(POLL)).map_err(bind_error)?;
                let bound = socket.local_addr().map_err(bind_error)?;
                let id = store.add_source(&LogSource::RoboViz(bound).to_string());
                let scene = Arc::clone(
                    scene3d.get_or_insert_with(|| Arc::new(Mutex::new(Scene::new(store, with_monitor)))),
                );
                let (store, stop) = (Arc::clone(store), Arc::clone(&stop));
                r.bound.push(bound);
                r.threads.push(std::thread::spawn(move || {
                    receive_udp(&socket, &store, id, &stop, |datagram| {
                        sim3d::lock(&scene).datagram(&store, id, super::now(), datagram);
                    })
                }));
            }
            LogSource::Sim3d(addr) => {
                let id = store.add_source(&s.to_string());
                let scene = Arc::clone(
                    scene3d.get_or_insert_with(|| Arc::new(Mutex::new(Scene::new(store, with_monitor)))),
                );
                let (store, stop) = (Arc::clone(store), Arc::clone(&stop));
                r.bound.push(addr);
                r.threads.push(std::thread::spawn(move || {
                    sim3d::receive(addr, &store, id, (&stop, POLL), &scene);
                }));
            }
            LogSource::Ssl(stream, addr) => {
                let socket = ssl::bind(addr, POLL).map_err(bind_error)?;
                let port = socket.local_addr().map_err(bind_error)?.port();
                let bound = SocketAddr::new(addr.ip(), port);
                let id = store.add_source(&LogSource::Ssl(stream, bound).to_string());
                let scene =
                    Arc::clone(scene.get_or_insert_with(|| Arc::new(Mutex::new(ssl::Scene::new(id)))));
                let (store, stop) = (Arc::clone(store), Arc::clone(&stop));
                r.bound.push(bound);
                r.threads.push(std::thread::spawn(move || {
                    receive_udp(&socket, &store, id, &stop, |datagram| {
                        let now = super::now();
                        scene
                            .lock()
                            .unwrap_or_else(std::sync::PoisonError::into_inner)
                            .datagram(&store, id, stream, now, datagram);
                    })
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

/// Receives datagrams on `socket` until `stop`, each handed to `take`.
fn receive_udp(
    socket: &UdpSocket,
    store: &LiveLogs,
    id: SourceId,
    stop: &AtomicBool,
    mut take: impl FnMut(&[u8]),
) {
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
        take(&buf[..n]);
    }
}

/// A datagram of a native source: a whole log.
fn native_datagram(store: &LiveLogs, id: SourceId, datagram: &[u8]) {
    let n = datagram.len();
    if !datagram.starts_with(native::MAGIC) {
        store.bad(
            id,
            n as u64,
            format!("a datagram of {n} bytes that is not a native log"),
        );
        return;
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
pub(super) mod tests {
    use super::*;
    use crate::live::store::StoreOptions;
    use crate::log::{Header, Writer, WriterOptions};
    use crate::sim3d::roboviz::tests::datagram;
    use crate::sim3d::roboviz::{self, Command};

    /// Waits (10 s at most) until `store`'s counts say `what`.
    pub(crate) fn wait_for(store: &LiveLogs, what: impl Fn(&[super::super::store::SourceCounts]) -> bool) {
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
        let roboviz = |a: &str| Some(LogSource::RoboViz(a.parse().unwrap()));
        assert_eq!(LogSource::parse("roboviz://").unwrap(), roboviz("0.0.0.0:32769"));
        assert_eq!(
            LogSource::parse("roboviz://32770").unwrap(),
            roboviz("0.0.0.0:32770")
        );
        assert_eq!(
            LogSource::parse("roboviz://:32770/").unwrap(),
            roboviz("0.0.0.0:32770")
        );
        assert_eq!(
            LogSource::parse("roboviz://127.0.0.1:5000").unwrap(),
            roboviz("127.0.0.1:5000")
        );
        assert_eq!(
            LogSource::RoboViz("127.0.0.1:5000".parse().unwrap()).to_string(),
            "roboviz://127.0.0.1:5000"
        );
        assert!(LogSource::parse("roboviz://99999").is_err());
        let sim3d = |a: &str| Some(LogSource::Sim3d(a.parse().unwrap()));
        assert_eq!(LogSource::parse("sim3d://").unwrap(), sim3d("127.0.0.1:3200"));
        assert_eq!(
            LogSource::parse("sim3d://60001").unwrap(),
            sim3d("127.0.0.1:60001")
        );
        assert_eq!(
            LogSource::parse("sim3d://:3201/").unwrap(),
            sim3d("127.0.0.1:3201")
        );
        assert_eq!(
            LogSource::parse("sim3d://10.0.0.7:3200").unwrap(),
            sim3d("10.0.0.7:3200")
        );
        assert_eq!(
            LogSource::parse("sim3d://localhost").unwrap_err().to_string(),
            LogSource::parse("udp://localhost")
                .unwrap_err()
                .to_string()
                .replace("udp", "sim3d"),
            "a host needs its port"
        );
        assert_eq!(
            LogSource::Sim3d("127.0.0.1:3200".parse().unwrap()).to_string(),
            "sim3d://127.0.0.1:3200"
        );
        for bad in ["sim3d://99999", "sim3d://:x", "sim3d://no such host:1"] {
            let e = LogSource::parse(bad).unwrap_err().to_string();
            assert!(e.contains(bad), "{e}");
        }
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

    fn circle(set: &str, x: f64) -> Command {
        Command::Circle {
            center: [x, 0.0],
            radius: 0.5,
            thickness: 1.0,
            color: [255, 0, 0, 255],
            set: set.into(),
        }
    }

    fn swap(prefix: &str) -> Command {
        Command::Swap {
            prefix: prefix.into(),
        }
    }

    /// The centres of the circles a snapshot shows at `t`, with their sets.
    fn circles_at(store: &LiveLogs, t: f64) -> Vec<(String, f64)> {
        let (_, log, index) = store.snapshot(0).unwrap();
        let filter = crate::select::FilterSpec::default().compile(&log).unwrap();
        let mut out: Vec<(String, f64)> = index
            .select(&log, crate::time::LogTime(t), 0.0, &filter)
            .into_iter()
            .filter_map(|p| match p.shape {
                crate::log::Shape::Circle { center, .. } => {
                    Some((log.entities.name(p.entity).to_owned(), center.x))
                }
                _ => None,
            })
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }

    #[test]
    fn roboviz_datagrams_are_drawn_until_their_sets_next_swap() {
        let store = Arc::new(LiveLogs::new(StoreOptions::default()));
        let r = start(&[LogSource::RoboViz("127.0.0.1:0".parse().unwrap())], &store).unwrap();
        let addr = r.bound[0];
        assert_eq!(store.counts()[0].name, format!("roboviz://{addr}"));
        let agent = UdpSocket::bind("127.0.0.1:0").unwrap();
        agent
            .send_to(&datagram(&[circle("team.a", 1.0), circle("team.b", 2.0)]), addr)
            .unwrap();
        agent.send_to(&datagram(&[swap("team.")]), addr).unwrap();
        agent.send_to(b"\x07\x07 not a drawing", addr).unwrap();
        wait_for(&store, |c| c[0].packets == 2 && c[0].bad == 1);
        let sent = super::super::now();
        assert_eq!(
            circles_at(&store, sent + 1000.0),
            [("team.a".to_owned(), 1.0), ("team.b".to_owned(), 2.0)],
            "shown until the next swap, however long"
        );
        // A swap of one set replaces its drawing; the other set's stays.
        agent
            .send_to(&datagram(&[circle("team.a", 3.0), swap("team.a")]), addr)
            .unwrap();
        wait_for(&store, |c| c[0].packets == 3);
        let swapped = super::super::now();
        assert_eq!(
            circles_at(&store, swapped + 1.0),
            [("team.a".to_owned(), 3.0), ("team.b".to_owned(), 2.0)]
        );
        assert_eq!(
            circles_at(&store, sent),
            [("team.a".to_owned(), 1.0), ("team.b".to_owned(), 2.0)],
            "the first drawing, ended by the swap, is kept for its time"
        );
        let (_, log, _) = store.snapshot(0).unwrap();
        let team = log.entities.get("team").unwrap();
        assert!(log.entities.has_parent(log.entities.get("team.a").unwrap(), team));
        assert_eq!(log.header.world_unit, "m");
        drop(r);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: crate::testing::fuzz_cases(),
            ..proptest::prelude::ProptestConfig::default()
        })]

        /// Garbage, damaged datagrams and floods of new sets and swaps
        /// reaching a RoboViz source: counted, never a panic, the store
        /// within its bounds.
        #[test]
        fn roboviz_garbage_is_counted_and_the_store_stays_bounded(
            junk in proptest::collection::vec(proptest::collection::vec(proptest::prelude::any::<u8>(), 0..48), 0..6),
            edits in proptest::collection::vec((proptest::prelude::any::<proptest::sample::Index>(),
                                               proptest::prelude::any::<u8>()), 0..6),
            names in 1usize..40,
        ) {
            let opts = StoreOptions { keep: 1.0, max_primitives: 30, max_entities: 12 };
            let store = LiveLogs::new(opts);
            let id = store.add_source("roboviz://:0");
            let mut source = Scene::new(&store, false);
            let mut t = 1.0e9;
            let mut bad = 0;
            for d in &junk {
                t += 0.02;
                source.datagram(&store, id, t, d);
                bad += u64::from(!d.is_empty() && roboviz::parse_datagram(d).1.is_some());
            }
            let mut cmds: Vec<Command> = (0..names).map(|i| circle(&format!("s{i}.x"), i as f64)).collect();
            cmds.extend(roboviz::tests::every_command());
            cmds.push(swap(""));
            let mut good = datagram(&cmds);
            for (i, v) in edits {
                let i = i.index(good.len());
                good[i] = v;
            }
            for _ in 0..3 {
                t += 0.5;
                source.datagram(&store, id, t, &good);
                bad += u64::from(roboviz::parse_datagram(&good).1.is_some());
            }
            let c = &store.counts()[0];
            proptest::prop_assert_eq!(c.bad, bad);
            let Some((_, log, _)) = store.snapshot(0) else {
                return Ok(());
            };
            proptest::prop_assert!(log.primitives.len() <= opts.max_primitives, "{}", log.primitives.len());
            proptest::prop_assert!(log.entities.len() <= opts.max_entities, "{}", log.entities.len());
            for p in &log.primitives {
                proptest::prop_assert!(crate::log::validate::drawable(p));
            }
        }
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
