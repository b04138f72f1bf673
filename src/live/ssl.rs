//! The RoboCup SSL league's live streams as log sources: ssl-vision's
//! detections and geometry, the game controller's referee packets and an
//! autoref's tracker, as the league multicasts them on the field's
//! network, drawn exactly as an SSL game log of the same packets is
//! ([`crate::ssl::vislog`]).
//!
//! - `ssl-vision://[GROUP:]PORT`: `SSL_WrapperPacket`s, 224.5.23.2:10006
//!   by default.
//! - `ssl-referee://[GROUP:]PORT`: `Referee` packets, 224.5.23.1:10003.
//! - `ssl-tracker://[GROUP:]PORT`: `TrackerWrapperPacket`s, 224.5.23.2:10010.
//!
//! The scheme alone takes the league's address, a port alone
//! (`ssl-vision://10020`, or `:10020`) the league's group with that port;
//! a multicast address joins that group, any other address (`127.0.0.1:PORT`,
//! `0.0.0.0:PORT`) is listened on as it is (unicast: a simulator or a
//! replayer sending to this machine). A group is joined on every
//! interface (the system's choice for `INADDR_ANY`) with the port shared
//! (`SO_REUSEADDR`), so that other programs on this machine — an autoref,
//! the league's own visualisation — listen to the same stream beside
//! this one.
//!
//! **One scene.** The SSL sources of a run feed one
//! [`Converter`] (the one a game log is read with, made for received
//! packets): vision, referee and tracker of one match are drawn as one
//! log is, the tracker's robots and ball replacing the cameras' while it
//! sends, the referee's timers in the ticks. Each packet is stamped with
//! its arrival on this machine's clock ([`super::now`]), the clock a game
//! log's recorder stamps it with. What the converter has ended (ticks,
//! referee states and game events that closed) goes into the store as
//! frames of the first SSL source; what it shows until further notice
//! (the field, beneath; the referee's state and the game events still
//! listed, above) replaces that source's open-ended frames
//! ([`LiveLogs::set_current_layered`]). Each source counts its own
//! packets. The ticks follow the cameras as in a file: one is drawn when a
//! camera sends again, a camera cycle (about 16 ms) after its detections
//! came, so a run with no `--delay` draws the robots that much late.
//!
//! **Cameras.** The geometry packets' camera models are handed to the
//! store as calibrations ([`LiveLogs::set_camera`], through
//! [`crate::ssl::camera::calibration`]) for a run drawing through one of
//! them (`--camera N`).
//!
//! **Garbage.** A datagram that does not decode as its stream's packet,
//! or decodes but lacks what the league's schema requires of it (random
//! bytes often decode as an empty message), is counted as bad and
//! ignored. Memory stays bounded: the converter keeps at most a camera
//! cycle, the ball's trail and the referee's last state; a stream that
//! names more robots, cameras or event types than [`MAX_SCENE_NAMES`]
//! (a flood of made-up ids) starts the scene afresh, and the store keeps
//! its window and budget as for every source.

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs, UdpSocket};

use socket2::{Domain, Protocol, Socket, Type};

use super::store::{LiveLogs, SourceId};
use crate::ssl::file::MessageType;
use crate::ssl::vislog::Converter;

/// Entity names one SSL scene may hold before it is started afresh (a
/// match has about a hundred: robots, cameras, event types).
pub const MAX_SCENE_NAMES: usize = 1024;

/// One of the league's streams.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SslStream {
    /// ssl-vision's detections and geometry (`SSL_WrapperPacket`).
    Vision,
    /// The game controller's `Referee` packets.
    Referee,
    /// A tracker's filtered world (`TrackerWrapperPacket`).
    Tracker,
}

impl SslStream {
    /// Every stream, in the order of their schemes.
    pub const ALL: [SslStream; 3] = [SslStream::Vision, SslStream::Referee, SslStream::Tracker];

    /// The URL scheme naming it.
    pub fn scheme(self) -> &'static str {
        match self {
            SslStream::Vision => "ssl-vision",
            SslStream::Referee => "ssl-referee",
            SslStream::Tracker => "ssl-tracker",
        }
    }

    /// The league's multicast group and port for it.
    pub fn default_addr(self) -> SocketAddr {
        let (group, port) = match self {
            SslStream::Vision => ([224, 5, 23, 2], 10006),
            SslStream::Referee => ([224, 5, 23, 1], 10003),
            SslStream::Tracker => ([224, 5, 23, 2], 10010),
        };
        SocketAddr::from((Ipv4Addr::from(group), port))
    }

    /// The game log's record type of its packets.
    fn kind(self) -> MessageType {
        match self {
            SslStream::Vision => MessageType::Vision,
            SslStream::Referee => MessageType::Referee,
            SslStream::Tracker => MessageType::Tracker,
        }
    }

    /// The stream a scheme names.
    pub fn of_scheme(scheme: &str) -> Option<SslStream> {
        Self::ALL.into_iter().find(|s| s.scheme() == scheme)
    }

    /// The address in what follows the scheme: nothing (the league's),
    /// `PORT` or `:PORT` (the league's group), or `ADDRESS:PORT`.
    pub fn parse_addr(self, rest: &str) -> Result<SocketAddr, String> {
        let rest = rest.trim_end_matches('/');
        let league = self.default_addr();
        let port = |p: &str| {
            p.parse::<u16>()
                .map_err(|_| format!("`{p}` is not a port (0 to 65535)"))
        };
        if rest.is_empty() {
            return Ok(league);
        }
        if let Some(p) = rest.strip_prefix(':') {
            return Ok(SocketAddr::new(league.ip(), port(p)?));
        }
        if rest.bytes().all(|b| b.is_ascii_digit()) {
            return Ok(SocketAddr::new(league.ip(), port(rest)?));
        }
        rest.to_socket_addrs()
            .map_err(|e| format!("not a [GROUP:]PORT address ({e})"))?
            .next()
            .ok_or_else(|| "the host has no address".to_owned())
    }
}

/// A socket receiving `addr`: a multicast group joined on every interface
/// with the port shared, any other address bound as it is (a port in use
/// is an error then). Reads time out after `poll`, for the receiver to
/// look whether it should stop.
pub fn bind(addr: SocketAddr, poll: std::time::Duration) -> std::io::Result<UdpSocket> {
    let socket = Socket::new(Domain::for_address(addr), Type::DGRAM, Some(Protocol::UDP))?;
    if addr.ip().is_multicast() {
        socket.set_reuse_address(true)?;
        // The port on every address: a group's datagrams carry the group
        // as their destination, which only some systems let one bind to.
        let any: SocketAddr = match addr {
            SocketAddr::V4(_) => (Ipv4Addr::UNSPECIFIED, addr.port()).into(),
            SocketAddr::V6(_) => (Ipv6Addr::UNSPECIFIED, addr.port()).into(),
        };
        socket.bind(&any.into())?;
        match addr {
            SocketAddr::V4(a) => socket.join_multicast_v4(a.ip(), &Ipv4Addr::UNSPECIFIED)?,
            SocketAddr::V6(a) => socket.join_multicast_v6(a.ip(), 0)?,
        }
    } else {
        socket.bind(&addr.into())?;
    }
    socket.set_read_timeout(Some(poll))?;
    Ok(socket.into())
}

/// The scene the SSL sources of a run draw together.
pub struct Scene {
    converter: Converter,
    /// The store's source holding the scene's frames.
    id: SourceId,
    /// Times the scene was started afresh for naming too much.
    restarts: u64,
}

impl Scene {
    /// A scene whose frames go to source `id` of the store.
    pub fn new(id: SourceId) -> Self {
        Scene {
            converter: Converter::received(),
            id,
            restarts: 0,
        }
    }

    /// A datagram of `stream` received by source `from` at `now` (Unix
    /// seconds): drawn, or counted as bad.
    pub fn datagram(
        &mut self,
        store: &LiveLogs,
        from: SourceId,
        stream: SslStream,
        now: f64,
        datagram: &[u8],
    ) {
        let n = datagram.len() as u64;
        match self.converter.packet(stream.kind(), now, datagram) {
            Ok(()) => {
                // What it drew first, then the count: whoever sees the
                // count sees what it drew.
                self.publish(store);
                store.taken(from, n);
            }
            Err(e) => store.bad(
                from,
                n,
                format!("a datagram of {n} bytes: {}", crate::error::chain(&e)),
            ),
        }
        if self.converter.entity_count() > MAX_SCENE_NAMES.min(store.options().max_entities) {
            self.converter = Converter::received();
            self.restarts += 1;
            store.note(
                from,
                format!(
                    "more than {MAX_SCENE_NAMES} robots, cameras and event types named: the scene was \
                     started afresh ({} times)",
                    self.restarts
                ),
            );
        }
    }

    /// Hands what changed to the store: ended frames, what shows now,
    /// cameras' calibrations.
    fn publish(&mut self, store: &LiveLogs) {
        store.extend(self.id, self.converter.take_ended());
        if let Some((showing, under)) = self.converter.take_showing() {
            store.set_current_layered(self.id, showing, under);
        }
        for model in self.converter.take_camera_models() {
            let calibration = crate::ssl::camera::calibration(&model).map_err(|e| crate::error::chain(&e));
            store.set_camera(model.camera_id, calibration);
        }
    }
}

#[cfg(test)]
mod tests;
