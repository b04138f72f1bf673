//! The RoboCup 3D league live: RoboViz's drawing datagrams
//! (`roboviz://[HOST:]PORT`) and the simulator's monitor stream
//! (`sim3d://[HOST:]PORT`) drawn as one match, as RoboViz shows them.
//!
//! **The monitor stream.** A `sim3d://` source is a TCP *client*: it
//! connects to the simulator's monitor port (SimSpark's 3200 by default,
//! on 127.0.0.1; rcssservermj listens on 60001) as RoboViz does, and reads
//! its messages — each a 4-byte big-endian length and an S-expression
//! ([`crate::sim3d::framing`]), the content a monitor log holds one per
//! line — with the monitor log's own reader
//! ([`crate::sim3d::monitor::MonitorStream`]). Each message becomes a
//! frame of a live monitor log stamped with its arrival on this machine's
//! clock ([`super::now`]), the clock RoboViz datagrams are stamped with;
//! the log keeps the store's window ([`super::StoreOptions::keep`]). What
//! a monitor log draws as a log is drawn from it as each message comes:
//! the ball's trail over the last second
//! ([`crate::sim3d::render::ball_trail_now`], entity `ball/trail`). The
//! robots themselves are not drawn (a monitor log's robots are its
//! rendered picture's, and the camera is the picture here).
//!
//! The simulator need not be there first: the source tries again with a
//! growing pause (0.1 s doubling to 2 s, never a busy loop), and again
//! when it closes the connection or it breaks, each time from a full
//! scene graph (a diff before one is counted as bad). A message that
//! does not parse is counted as bad and ignored; a length over
//! [`MAX_MESSAGE`] (64 MB) is garbage that puts the stream out of step:
//! counted, and the connection dropped and made again — never an
//! allocation of that size. A message cut off by the connection's end is
//! counted as bad too.
//!
//! **Agent annotations.** RoboViz's agent annotations (text above an
//! agent's robot) are placed at the robot by the same replay and
//! placement a recording read beside its monitor log uses
//! ([`crate::sim3d::replay`]): with a `sim3d://` source the run's RoboViz
//! replay holds the live monitor log, and each message moves the
//! annotations showing to the robot's new place
//! ([`Replay::robots_moved`]: what they showed before ends, handed to the
//! store as frames). Without one they are left out, and the source's
//! status says which option to add.
//!
//! **One scene.** The run's RoboViz and sim3d sources share one
//! [`Scene`]: one replay of every RoboViz source's datagrams (as RoboViz
//! draws whatever comes to its port), its drawings in the store under the
//! first RoboViz source, each source counting its own packets.

use std::io::Read;
use std::net::{SocketAddr, TcpStream};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::store::{LiveLogs, SourceId};
use crate::sim3d::framing::{Deframer, FramingError, MAX_MESSAGE};
use crate::sim3d::monitor::{MonitorFormat, MonitorLog, MonitorStream};
use crate::sim3d::render::ball_trail_now;
use crate::sim3d::replay::{Clock, Limits, Replay};

/// SimSpark's monitor port: where a `sim3d://` source connects by default.
pub const MONITOR_PORT: u16 = 3200;

/// The first pause before connecting again, and the longest.
const MIN_BACKOFF: Duration = Duration::from_millis(100);
const MAX_BACKOFF: Duration = Duration::from_secs(2);

/// How long connecting may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(1);

/// The 3D match a run's RoboViz and sim3d sources draw (see [the
/// module](self)).
pub struct Scene {
    replay: Replay<'static>,
    monitor: MonitorStream,
    /// The store's source holding the RoboViz drawings: the first RoboViz
    /// source's.
    drawings: Option<SourceId>,
    /// The replay's generation the store's current frames show.
    shown: u64,
    /// Shapes dropped and annotations left out, as last said.
    said: (usize, usize),
}

impl Scene {
    /// A scene within `store`'s bounds; `monitor`: whether a `sim3d://`
    /// source feeds it the robots.
    pub fn new(store: &LiveLogs, monitor: bool) -> Self {
        let opts = store.options();
        let mut replay = Replay::new(Clock::Received, None).with_limits(Limits {
            max_entities: opts.max_entities,
            max_primitives: opts.max_primitives,
        });
        if monitor {
            replay = replay.with_monitor(MonitorLog::new(MonitorFormat::Rsmp));
        }
        Scene {
            replay,
            monitor: MonitorStream::new(),
            drawings: None,
            shown: 0,
            said: (0, 0),
        }
    }

    /// A RoboViz datagram received by source `from` at `now` (Unix
    /// seconds): replayed, what it ended handed to the store, what is
    /// showing set as the drawings' current frames; or counted as bad.
    pub fn datagram(&mut self, store: &LiveLogs, from: SourceId, now: f64, datagram: &[u8]) {
        let id = *self.drawings.get_or_insert(from);
        let n = datagram.len() as u64;
        let error = self.replay.feed_datagram(now, datagram);
        // What it drew first, then the count: whoever sees the count sees
        // what it drew.
        self.publish(store);
        match error {
            None => store.taken(from, n),
            Some(e) => store.bad(
                from,
                n,
                format!("a datagram of {n} bytes that is not RoboViz's: {e}"),
            ),
        }
        self.say(store, id);
    }

    /// A monitor message received by source `from` at `now`: the robots
    /// and ball of a new frame, the annotations showing moved to their
    /// robots, the ball's trail drawn; or counted as bad.
    pub fn monitor_message(&mut self, store: &LiveLogs, from: SourceId, now: f64, message: &[u8]) {
        let n = message.len() as u64;
        let Some(log) = self.replay.monitor_mut() else {
            return;
        };
        let frames = log.frames.len();
        // The machine's clock may step back; the log's times do not.
        let at = log.frames.last().map_or(now, |f| now.max(f.time));
        let result = self.monitor.message(log, message, Some(at));
        let added = log.frames.len() > frames;
        let trail = added.then(|| ball_trail_now(log));
        log.forget_before(at - store.options().keep);
        if added {
            self.replay.robots_moved();
            self.publish(store);
        }
        for note in self.monitor.take_notes() {
            store.note(from, note);
        }
        match (result, trail) {
            (Ok(()), Some(trail)) if !trail.frames.is_empty() => store.push(from, trail, n),
            (Ok(()), _) => store.taken(from, n),
            (Err(e), trail) => {
                if let Some(trail) = trail {
                    store.extend(from, trail);
                }
                store.bad(from, n, format!("a monitor message of {n} bytes: {}", short(&e)));
            }
        }
    }

    /// A new connection to the simulator: its scene starts afresh.
    pub fn reconnected(&mut self) {
        self.monitor.restart();
    }

    /// Hands the RoboViz drawings that changed to the store.
    fn publish(&mut self, store: &LiveLogs) {
        let Some(id) = self.drawings else {
            return;
        };
        store.extend(id, self.replay.take_closed());
        if self.replay.generation() != self.shown {
            self.shown = self.replay.generation();
            store.set_current(id, self.replay.showing(f64::INFINITY));
        }
    }

    /// Says what the replay dropped or left out since it last said.
    fn say(&mut self, store: &LiveLogs, id: SourceId) {
        let now = (self.replay.dropped(), self.replay.annotations_left_out());
        if now.0 > self.said.0 {
            let opts = store.options();
            store.note(
                id,
                format!(
                    "{} shapes dropped: more than {} entities or {} shapes held",
                    now.0, opts.max_entities, opts.max_primitives
                ),
            );
        } else if now.1 > self.said.1 {
            store.note(
                id,
                if self.replay.has_monitor() {
                    format!(
                        "{} agent annotations left out: the monitor stream has shown no team on their side yet",
                        now.1
                    )
                } else {
                    "agent annotations are not drawn: they are placed at their robot, which needs the \
                     simulator's monitor stream (add --log sim3d://[HOST:]PORT)"
                        .to_owned()
                },
            );
        }
        self.said = now;
    }
}

/// An error message cut to a line's length (a parser's message may quote
/// the input).
fn short(e: &str) -> String {
    match e.char_indices().nth(200) {
        Some((i, _)) => format!("{}…", &e[..i]),
        None => e.to_owned(),
    }
}

/// Why a connection ended.
enum Ended {
    /// The run is stopping.
    Stopped,
    /// The simulator closed it, or it broke.
    Closed(String),
    /// The stream cannot be read on.
    Framing(FramingError),
}

/// Connects to the simulator's monitor port at `addr` and reads its
/// messages into `scene` until `stop`, connecting again with back-off
/// whenever there is no connection; looks whether to stop every `poll`.
pub fn receive(
    addr: SocketAddr,
    store: &LiveLogs,
    id: SourceId,
    (stop, poll): (&AtomicBool, Duration),
    scene: &Mutex<Scene>,
) {
    let mut backoff = MIN_BACKOFF;
    let mut messages = Deframer::new(MAX_MESSAGE);
    let mut buf = vec![0u8; 65_536];
    while !stop.load(Ordering::Relaxed) {
        let stream = match TcpStream::connect_timeout(&addr, CONNECT_TIMEOUT) {
            Ok(s) => s,
            Err(e) => {
                store.note(
                    id,
                    format!(
                        "cannot connect to the simulator's monitor port ({e}); trying again in {:.1} s",
                        backoff.as_secs_f64()
                    ),
                );
                pause(backoff, stop, poll);
                backoff = (backoff * 2).min(MAX_BACKOFF);
                continue;
            }
        };
        if let Err(e) = stream.set_read_timeout(Some(poll)) {
            store.note(id, format!("the monitor connection: {e}"));
            pause(backoff, stop, poll);
            continue;
        }
        lock(scene).reconnected();
        messages.reset();
        let (ended, took) = read_connection(stream, &mut messages, &mut buf, store, id, stop, scene);
        let cut = messages.pending();
        match ended {
            Ended::Stopped => return,
            Ended::Framing(e) => store.bad(id, 0, format!("{e}; the connection was dropped")),
            Ended::Closed(why) => {
                if cut > 0 {
                    let of = messages
                        .announced()
                        .map_or_else(String::new, |n| format!(" of {}", n as usize + 4));
                    store.bad(
                        id,
                        cut as u64,
                        format!("a monitor message cut off after {cut}{of} bytes: {why}"),
                    );
                } else {
                    store.note(id, format!("{why}; connecting again"));
                }
            }
        }
        // A connection that brought something is tried again soon; one
        // that closes at once, later and later.
        backoff = if took {
            MIN_BACKOFF
        } else {
            (backoff * 2).min(MAX_BACKOFF)
        };
        pause(backoff, stop, poll);
    }
}

/// Reads one connection until it ends; whether it brought a message.
fn read_connection(
    mut stream: TcpStream,
    messages: &mut Deframer,
    buf: &mut [u8],
    store: &LiveLogs,
    id: SourceId,
    stop: &AtomicBool,
    scene: &Mutex<Scene>,
) -> (Ended, bool) {
    let mut took = false;
    loop {
        if stop.load(Ordering::Relaxed) {
            return (Ended::Stopped, took);
        }
        let n = match stream.read(buf) {
            Ok(0) => return (Ended::Closed("the simulator closed the connection".into()), took),
            Ok(n) => n,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock
                        | std::io::ErrorKind::TimedOut
                        | std::io::ErrorKind::Interrupted
                ) =>
            {
                continue;
            }
            Err(e) => return (Ended::Closed(format!("the monitor connection broke ({e})")), took),
        };
        let now = super::now();
        messages.push(&buf[..n]);
        while let Some(m) = messages.next_message() {
            match m {
                Ok(m) => {
                    took = true;
                    lock(scene).monitor_message(store, id, now, m);
                }
                Err(e) => return (Ended::Framing(e), took),
            }
        }
    }
}

/// Waits `d`, or less when the run stops (looked at every `poll`).
fn pause(d: Duration, stop: &AtomicBool, poll: Duration) {
    let until = Instant::now() + d;
    while !stop.load(Ordering::Relaxed) {
        let Some(left) = until.checked_duration_since(Instant::now()) else {
            return;
        };
        std::thread::sleep(left.min(poll));
    }
}

/// The scene, whatever a panicking thread left (counts, not broken
/// invariants: each message is applied whole).
pub fn lock(scene: &Mutex<Scene>) -> std::sync::MutexGuard<'_, Scene> {
    scene.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests;
