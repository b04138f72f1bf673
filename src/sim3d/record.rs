//! Recording RoboViz drawings as they are sent: a UDP socket where RoboViz
//! would listen, every datagram written to an `.rvd` file with its receive
//! time, and, when a simulator's monitor port is given, the simulation time
//! of each monitor message, so the drawings can be put on the simulation's
//! clock ([`rvd`]).
//!
//! The monitor connection speaks the servers' framing ([`super::framing`]:
//! a 4-byte big-endian length, then the message); the time is RSMP's `(gt 1 0)` or SimSpark's
//! game-state `(time …)`. The file is written beside the output under a
//! temporary name and renamed when the recording stops.

use std::io::{self, BufWriter, Read, Write};
use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::framing::{Deframer, MAX_MESSAGE};
use super::rvd::{self, Record};
use crate::sexp::Parser;

/// What went wrong recording.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("cannot listen on UDP {addr}: {error}")]
    Bind { addr: SocketAddr, error: io::Error },
    #[error("cannot connect to the monitor port {addr}: {error}")]
    Monitor { addr: String, error: io::Error },
    #[error("{path}: {error}")]
    Write {
        path: std::path::PathBuf,
        error: io::Error,
    },
    #[error("receiving on UDP {addr}: {error}")]
    Receive { addr: SocketAddr, error: io::Error },
}

/// What a recording got.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecordStats {
    pub datagrams: u64,
    pub bytes: u64,
    pub sim_times: u64,
    /// Why the monitor connection ended early, if it did.
    pub monitor_ended: Option<String>,
}

/// A socket ready to record.
pub struct Recorder {
    socket: UdpSocket,
    addr: SocketAddr,
    monitor: Option<(String, TcpStream)>,
}

impl Recorder {
    /// Binds the UDP socket (port 0 picks a free one) and connects to the
    /// monitor port when given.
    pub fn bind(addr: SocketAddr, monitor: Option<&str>) -> Result<Recorder, RecordError> {
        let socket = UdpSocket::bind(addr).map_err(|error| RecordError::Bind { addr, error })?;
        let addr = socket
            .local_addr()
            .map_err(|error| RecordError::Bind { addr, error })?;
        socket
            .set_read_timeout(Some(Duration::from_millis(50)))
            .map_err(|error| RecordError::Bind { addr, error })?;
        let monitor = match monitor {
            Some(m) => {
                let stream = TcpStream::connect(m).map_err(|error| RecordError::Monitor {
                    addr: m.to_owned(),
                    error,
                })?;
                Some((m.to_owned(), stream))
            }
            None => None,
        };
        Ok(Recorder {
            socket,
            addr,
            monitor,
        })
    }

    /// The address datagrams are received on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Records into `output` until `stop` is set or `duration` has passed;
    /// `progress` is called with the running counts now and then.
    pub fn run(
        self,
        output: &Path,
        stop: &AtomicBool,
        duration: Option<Duration>,
        mut progress: impl FnMut(&RecordStats),
    ) -> Result<RecordStats, RecordError> {
        let werr = |error| RecordError::Write {
            path: output.to_owned(),
            error,
        };
        let tmp = crate::files::Sink::open(output, None).map_err(werr)?;
        let file = tmp.writer().map_err(werr)?;
        let mut w = BufWriter::new(file);
        w.write_all(&rvd::header()).map_err(werr)?;
        let (tx, rx) = crossbeam_channel::unbounded::<Result<Record, String>>();
        let monitor_thread = self.monitor.map(|(addr, stream)| {
            std::thread::spawn(move || {
                let end = read_monitor(stream, &tx);
                let _ = tx.send(Err(format!("{addr}: {end}")));
            })
        });
        let started = Instant::now();
        let mut stats = RecordStats::default();
        let mut buf = vec![0u8; 65536];
        let mut last_progress = Instant::now();
        while !stop.load(Ordering::SeqCst) && duration.is_none_or(|d| started.elapsed() < d) {
            let got = self.socket.recv_from(&mut buf).map(|(n, _)| (n, now()));
            // Monitor times received before the datagram go before it.
            let mut later = Vec::new();
            for r in rx.try_iter() {
                match r {
                    Ok(Record::SimTime { received, time }) => {
                        if got.as_ref().is_ok_and(|(_, at)| received > *at) {
                            later.push(Record::SimTime { received, time });
                        } else {
                            rvd::write_record(&mut w, &Record::SimTime { received, time }).map_err(werr)?;
                            stats.sim_times += 1;
                        }
                    }
                    Ok(other) => rvd::write_record(&mut w, &other).map_err(werr)?,
                    Err(why) => stats.monitor_ended = Some(why),
                }
            }
            match got {
                Ok((n, received)) => {
                    let rec = Record::Datagram {
                        received,
                        bytes: buf[..n].to_vec(),
                    };
                    rvd::write_record(&mut w, &rec).map_err(werr)?;
                    stats.datagrams += 1;
                    stats.bytes += n as u64;
                }
                Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => {
                    return Err(RecordError::Receive {
                        addr: self.addr,
                        error,
                    });
                }
            }
            for rec in later {
                rvd::write_record(&mut w, &rec).map_err(werr)?;
                stats.sim_times += 1;
            }
            if last_progress.elapsed() > Duration::from_millis(200) {
                progress(&stats);
                last_progress = Instant::now();
            }
        }
        // The monitor thread blocks on its socket; it ends with the process.
        drop(monitor_thread);
        w.flush().map_err(werr)?;
        let mut file = w.into_inner().map_err(|e| werr(e.into_error()))?;
        file.flush().map_err(werr)?;
        drop(file);
        tmp.finish().map_err(werr)?;
        Ok(stats)
    }
}

/// Seconds since the Unix epoch.
fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// Reads monitor messages and sends their simulation times until the
/// connection ends; returns why it ended.
fn read_monitor(mut s: TcpStream, tx: &crossbeam_channel::Sender<Result<Record, String>>) -> String {
    let mut parser = Parser::new();
    let mut messages = Deframer::new(MAX_MESSAGE);
    let mut buf = vec![0u8; 65_536];
    loop {
        let n = match s.read(&mut buf) {
            Ok(0) => return "monitor connection ended".to_owned(),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return format!("monitor connection ended ({e})"),
        };
        let received = now();
        messages.push(&buf[..n]);
        while let Some(msg) = messages.next_message() {
            let msg = match msg {
                Ok(m) => m,
                Err(e) => return format!("monitor connection dropped: {e}"),
            };
            if let Some(time) = sim_time(&mut parser, msg)
                && tx.send(Ok(Record::SimTime { received, time })).is_err()
            {
                return "recording stopped".to_owned();
            }
        }
    }
}

/// The simulation time of a monitor message: RSMP's `(gt 1 0)`, or a
/// SimSpark game state's `time`.
pub fn sim_time(parser: &mut Parser, msg: &[u8]) -> Option<f64> {
    let doc = parser.parse(msg).ok()?;
    for top in doc.items() {
        if top.get(0).and_then(|h| h.head()) == Some(b"RSMP") {
            let gt = top
                .items()
                .find(|p| p.get(0).and_then(|t| t.head()) == Some(b"gt"))?;
            return gt.get(1)?.f64().filter(|t| t.is_finite());
        }
        if top.is_list()
            && let Some(t) = top.find(b"time").and_then(|t| t.get(1)).and_then(|t| t.f64())
            && t.is_finite()
        {
            return Some(t);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monitor_times_from_either_grammar() {
        let mut p = Parser::new();
        assert_eq!(
            sim_time(&mut p, b"((RSMP 1 0)((gt 1 0)12.34)((sg 1 0)diff(nd)))"),
            Some(12.34)
        );
        assert_eq!(
            sim_time(&mut p, b"((time 5.5)(play_mode 2))(RDS 0 1)((nd))"),
            Some(5.5)
        );
        assert_eq!(sim_time(&mut p, b"((RSMP 1 0)((gt 1 0)nan))"), None);
        assert_eq!(sim_time(&mut p, b"(("), None);
    }
}
