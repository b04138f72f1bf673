//! A 2D-league game log as a video of its own: every show record's players
//! (team colour, body direction, face direction, number, goalie and card
//! marks) and ball on the pitch of the log's server parameters, rendered
//! top-down by [`crate::pitch`], one picture per record at the server's
//! pace (stoppage steps included), with the teams, score, play mode and
//! cycle as caption. A frame's clock is its record's
//! [`clock`](super::clock), the time the game log's sensor models and the
//! agents' debug logs are drawn at.

use std::path::Path;

use super::game::{Game, Player, state};
use super::{Side, world, world_angle};
use crate::log::Rgba;
use crate::pitch::{Body, Card, Field, Match, Pace, Snapshot, Team};
use crate::video::source::{FrameSource, OpenOptions, SourceError};

/// The kind of source, for messages.
const KIND: &str = "2D-league game log";

/// The left and right teams' colours (soccerwindow2's yellow and blue).
pub const LEFT: Rgba = Rgba::from_rgb(0xffd700);
pub const RIGHT: Rgba = Rgba::from_rgb(0x1e90ff);

/// Opens a 2D game log as a rendered match.
pub fn open(path: &Path, options: &OpenOptions) -> Result<Box<dyn FrameSource>, SourceError> {
    crate::pitch::source::open_with(path, options, KIND, |path, name| {
        super::game::load_game_shared(path).map(|g| to_match(&g, name))
    })
}

/// The match a game log shows.
pub fn to_match(game: &Game, name: String) -> Match {
    let s = &game.server;
    let step = s.simulator_step;
    let team = |side: Side, color| Team {
        name: game.teams[side.index()].clone(),
        color,
    };
    let snapshots = game
        .records
        .iter()
        .map(|r| {
            let bodies = r.players.iter().map(|p| body(game, p)).collect();
            let names = |i: usize| {
                let n = game.teams[i].as_str();
                if n.is_empty() { ["left", "right"][i] } else { n }
            };
            let stopped = if r.stopped > 0 {
                format!(",{}", r.stopped)
            } else {
                String::new()
            };
            Snapshot {
                clock: r.clock(step),
                bodies,
                ball: Some((world(r.ball.pos), s.ball_size)),
                caption: format!(
                    "{} {}:{} {} · {} · cycle {}{}",
                    names(0),
                    r.score[0],
                    r.score[1],
                    names(1),
                    r.play_mode.name(),
                    r.cycle,
                    stopped
                ),
            }
        })
        .collect();
    Match {
        name,
        field: Field::football(
            "m",
            s.pitch_length,
            s.pitch_width,
            s.goal_width,
            Some((s.penalty_area_length, s.penalty_area_width)),
            Some((s.goal_area_length, s.goal_area_width)),
            1.0,
        ),
        teams: [team(Side::Left, LEFT), team(Side::Right, RIGHT)],
        snapshots,
        pace: Pace::PerSnapshot { interval: step },
    }
}

fn body(game: &Game, p: &Player) -> Body {
    let size = game
        .player_types
        .get(usize::from(p.player_type))
        .map_or(game.server.player_size, |t| t.player_size);
    let card = if p.state & state::RED_CARD != 0 {
        Card::Red
    } else if p.state & state::YELLOW_CARD != 0 {
        Card::Yellow
    } else {
        Card::None
    };
    Body {
        team: p.side.index() as u8,
        number: u32::from(p.unum),
        position: world(p.pos),
        radius: size,
        heading: Some(world_angle(p.body)),
        gaze: Some(world_angle(p.face())),
        goalie: p.is_goalie(),
        card,
        // A player sent off (or not on the field) is drawn faded.
        faded: p.state == 0 || p.state & state::DISCARD != 0,
    }
}
