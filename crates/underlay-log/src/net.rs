//! The native format over the network, for a live view (`underlay live
//! --log udp://…` or `tcp://…`): a [`Writer`] whose frames go to a
//! socket instead of a file.
//!
//! - **TCP** carries the file format as a stream: the prefix, the header,
//!   then one record per frame, each handed to the socket as the frame
//!   ends. Nothing is lost; a slow receiver slows the sender.
//! - **UDP** carries one frame per datagram, and each datagram is a whole
//!   native log: prefix, header, the entity records the frame's
//!   primitives name (with their ancestors, parents first) and the frame
//!   record. A lost, late or reordered datagram costs only its own frame,
//!   and a receiver started late draws the next frame whole. A frame must
//!   fit one datagram ([`MAX_DATAGRAM`] bytes, about 1,500 simple shapes);
//!   a larger one is not sent and [`Writer::flush`] says so.
//!
//! `underlay live`'s receivers read these back (the application's `live::sources`).

use std::io::{self, Write};
use std::net::{TcpStream, ToSocketAddrs, UdpSocket};
use std::path::PathBuf;

pub use super::writer::MAX_DATAGRAM;
use super::{Header, LogError, Writer, WriterOptions};

/// Sends what is written between two flushes as one UDP datagram.
#[derive(Debug)]
pub struct UdpSink {
    socket: UdpSocket,
    buf: Vec<u8>,
}

impl Write for UdpSink {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(b);
        Ok(b.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let r = self.socket.send(&self.buf);
        self.buf.clear();
        r.map(|_| ())
    }
}

impl Writer<UdpSink> {
    /// A writer sending each frame as one datagram to `addr`
    /// (`"127.0.0.1:9870"`); see the [module docs](self).
    pub fn udp(addr: impl ToSocketAddrs, header: Header, opts: WriterOptions) -> Result<Self, LogError> {
        let name = PathBuf::from("<udp>");
        let socket = UdpSocket::bind(("0.0.0.0", 0))
            .and_then(|s| s.connect(addr).map(|()| s))
            .map_err(|e| LogError::io(&name, e))?;
        Writer::datagrams(
            UdpSink {
                socket,
                buf: Vec::with_capacity(MAX_DATAGRAM),
            },
            header,
            opts,
        )
    }
}

impl Writer<TcpStream> {
    /// A writer streaming the native format to `addr` over TCP, each frame
    /// handed to the socket as it ends; see the [module docs](self).
    pub fn tcp(addr: impl ToSocketAddrs, header: Header, opts: WriterOptions) -> Result<Self, LogError> {
        let name = PathBuf::from("<tcp>");
        let stream = TcpStream::connect(addr).map_err(|e| LogError::io(&name, e))?;
        // Frames are small and wanted at once.
        stream.set_nodelay(true).map_err(|e| LogError::io(&name, e))?;
        Writer::with_options(
            stream,
            header,
            WriterOptions {
                flush_each_frame: true,
                ..opts
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::native;

    #[test]
    fn every_datagram_is_a_whole_log_with_the_entities_it_names() {
        let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
        rx.set_read_timeout(Some(std::time::Duration::from_secs(5)))
            .unwrap();
        let mut w = Writer::udp(
            rx.local_addr().unwrap(),
            Header::default(),
            WriterOptions::default(),
        )
        .unwrap();
        w.declare_entity("robots/blue/3", &["robots/blue", "attack"]);
        w.declare_entity("unused", &[]);
        w.instant(1.0).circle((0.0, 0.0), 90.0).entity("robots/blue/3");
        w.instant(2.0).line((0.0, 0.0), (1.0, 1.0)).entity("plan");
        w.instant(2.0).circle((5.0, 0.0), 90.0).entity("robots/blue/3");
        w.finish().unwrap();
        let mut buf = vec![0u8; MAX_DATAGRAM];
        let mut logs = Vec::new();
        for _ in 0..2 {
            let n = rx.recv(&mut buf).unwrap();
            logs.push(native::read(&buf[..n]).unwrap());
        }
        let names = |l: &crate::Log| -> Vec<String> {
            l.entities.ids().map(|e| l.entities.name(e).to_string()).collect()
        };
        assert_eq!(logs[0].frames.len(), 1);
        assert_eq!(names(&logs[0]), ["robots/blue", "attack", "robots/blue/3"]);
        let child = logs[0].entities.get("robots/blue/3").unwrap();
        assert_eq!(logs[0].entities.parents(child).len(), 2);
        assert_eq!(logs[1].frames.len(), 1);
        assert_eq!(logs[1].primitives.len(), 2);
        assert_eq!(
            names(&logs[1]),
            ["plan", "robots/blue", "attack", "robots/blue/3"]
        );
        assert!(
            logs.iter().all(|l| l.warnings.is_empty()),
            "{:?}",
            logs[1].warnings
        );
    }

    #[test]
    fn a_frame_too_large_for_a_datagram_is_refused_and_said() {
        let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
        let mut w = Writer::udp(
            rx.local_addr().unwrap(),
            Header::default(),
            WriterOptions::default(),
        )
        .unwrap();
        let points: Vec<(f64, f64)> = (0..20_000).map(|i| (i as f64, 0.5 * i as f64)).collect();
        w.instant(1.0).polyline(points).entity("big");
        w.end_frame();
        let e = w.flush().unwrap_err().to_string();
        assert!(
            e.contains("does not fit one UDP datagram") && e.contains("tcp://"),
            "{e}"
        );
    }

    #[test]
    fn tcp_carries_the_file_format() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let reader = std::thread::spawn(move || {
            let (s, _) = listener.accept().unwrap();
            native::read(s).unwrap()
        });
        let mut w = Writer::tcp(addr, Header::default(), WriterOptions::default()).unwrap();
        w.instant(1.0).circle((0.0, 0.0), 1.0).entity("a");
        w.instant(2.0).circle((0.0, 0.0), 1.0).entity("b");
        drop(w.finish().unwrap());
        let log = reader.join().unwrap();
        assert_eq!(log.frames.len(), 2);
        assert_eq!(log.entities.len(), 2);
    }
}
