//! The SSL league's live streams in `underlay live`, end to end on
//! loopback: a replayer sends a real match's vision and referee packets
//! (the committed fixture) at their recorded pace, with garbage between
//! them, to `ssl-vision://` and `ssl-referee://` sources; the camera is a
//! file played at its own pace with log times on the arrival clock; the
//! drawings go through SSL camera 0's calibration taken from the live
//! geometry (`--camera 0`). The live overlay is compared with
//! `underlay export` of the same game log through the same calibration:
//! the ball and a robot are drawn where the export draws them at the same
//! log time, within one frame ([`crate::ssl_replay`] says how).
//!
//! The fixture comes from grSim, whose camera models are placeholders (a
//! camera in the floor plane); the replayer puts a real one in their
//! place: camera 0 looking straight down from 2.5 m ([`overhead`]).

use underlay::ssl::file::MessageType;
use underlay::ssl::packets::{Dropped, Vision};

use crate::live::free_udp_port;
use crate::ssl_replay::{
    Replayer, black_camera, compare_overlays, export, fixture, fixture_path, live_command, overhead,
    overhead_calibration, spawn, wait_end, wait_listened,
};
use crate::util::{have_tool, tmp};

/// The fixture's vision and referee packets: (type, recorded time,
/// payload), the geometry's camera models replaced by [`overhead`].
fn packets() -> Vec<(MessageType, f64, Vec<u8>)> {
    fixture()
        .into_iter()
        .map(|(kind, time, payload)| {
            if kind != MessageType::Vision {
                return (kind, time, payload);
            }
            let mut v = Vision::decode(&payload, &mut Dropped::default()).unwrap();
            match &mut v.geometry {
                Some(g) => {
                    g.cameras = vec![overhead()];
                    (kind, time, v.encode())
                }
                None => (kind, time, payload),
            }
        })
        .collect()
}

#[test]
fn ssl_vision_and_referee_live_draw_the_ball_where_the_export_does() {
    if !have_tool("ffmpeg") || !have_tool("ffprobe") {
        return;
    }
    let dir = tmp();
    let packets = packets();
    let r0 = packets[0].1;
    let black = black_camera(dir.path());

    let (vision, referee) = (free_udp_port(), free_udp_port());
    let overlay = dir.path().join("overlay.mkv");
    let mut cmd = live_command(&black, &overlay);
    cmd.args(["--camera", "0"])
        .args(["--log", &format!("ssl-vision://127.0.0.1:{vision}")])
        .args(["--log", &format!("ssl-referee://127.0.0.1:{referee}")]);
    let live = spawn(cmd);
    // The replayer starts once both ports are listened on.
    wait_listened(&[vision, referee]);
    let replayer = Replayer::start(
        packets
            .into_iter()
            .map(|(kind, time, payload)| {
                let port = if kind == MessageType::Vision {
                    vision
                } else {
                    referee
                };
                (port, time, payload)
            })
            .collect(),
    );
    let err = wait_end(live);
    let (w0, _) = replayer.stop();
    for port in [vision, referee] {
        assert!(err.contains(&format!("127.0.0.1:{port}: ")), "{err}");
    }
    assert!(err.contains("packets were not logs and were ignored"), "{err}");

    // The export of the same log through the same calibration.
    let calib = overhead_calibration(dir.path());
    let exported = export(dir.path(), &black, &fixture_path(), &calib, r0);
    compare_overlays(&exported, &overlay, w0, &err);
}
