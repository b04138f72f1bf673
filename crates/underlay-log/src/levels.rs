//! A level mapping file: which level each entity's primitives are drawn
//! at, for logs whose writer did not choose (a ROS recording's markers,
//! RoboViz's sets) or chose otherwise than the person looking wants.
//!
//! ```toml
//! # entity (a name, or the start of names at a '/') = level
//! "markers/planner" = 0      # the plan: always shown
//! "markers/debug" = 3        # the debugging shapes: only at level 3 and up
//! "path" = 1
//! ```
//!
//! A rule names an entity or a branch of names: `markers/debug` covers
//! `markers/debug` and `markers/debug/7`, not `markers/debugging`. The
//! longest rule that covers a primitive's entity sets its level; entities
//! no rule covers keep the levels their reader gave them.

use std::path::Path;

use super::{Log, LogError};

/// The most rules a mapping file may hold.
const MAX_RULES: usize = 10_000;

/// The largest mapping file read, in bytes.
const MAX_BYTES: u64 = 1 << 20;

/// Entity names (or branches of them) and their levels (module docs).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LevelMap {
    /// Longest name first, so the first rule that covers an entity is
    /// the most specific.
    rules: Vec<(String, i32)>,
}

impl LevelMap {
    /// Reads a mapping file.
    pub fn load(path: &Path) -> Result<LevelMap, LogError> {
        let bad = |message: String| LogError::Levels {
            path: path.to_owned(),
            message,
        };
        let len = std::fs::metadata(path).map_err(|e| LogError::io(path, e))?.len();
        if len > MAX_BYTES {
            return Err(bad(format!(
                "{len} bytes: a level mapping file holds at most {MAX_BYTES} bytes"
            )));
        }
        let text = std::fs::read_to_string(path).map_err(|e| LogError::io(path, e))?;
        LevelMap::parse(&text).map_err(bad)
    }

    /// The mapping of a file's text; why not, when it is none.
    pub fn parse(text: &str) -> Result<LevelMap, String> {
        let table: toml::Table = text
            .parse()
            .map_err(|e: toml::de::Error| e.message().to_owned())?;
        if table.len() > MAX_RULES {
            return Err(format!("{} rules: at most {MAX_RULES}", table.len()));
        }
        let mut rules = Vec::with_capacity(table.len());
        for (name, value) in table {
            let level = value
                .as_integer()
                .and_then(|v| i32::try_from(v).ok())
                .ok_or_else(|| format!("\"{name}\" = {value}: a level is a whole number"))?;
            let name = name.trim_matches('/').to_owned();
            if name.is_empty() {
                return Err("a rule names no entity (\"\")".to_owned());
            }
            rules.push((name, level));
        }
        rules.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.0.cmp(&b.0)));
        Ok(LevelMap { rules })
    }

    /// The level the most specific rule covering `entity` gives.
    pub fn level_of(&self, entity: &str) -> Option<i32> {
        let entity = entity.trim_matches('/');
        self.rules
            .iter()
            .find(|(name, _)| {
                entity
                    .strip_prefix(name.as_str())
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
            })
            .map(|&(_, level)| level)
    }

    /// Sets the levels of `log`'s primitives; returns how many changed.
    pub fn apply(&self, log: &mut Log) -> usize {
        if self.rules.is_empty() {
            return 0;
        }
        let levels: Vec<Option<i32>> = log
            .entities
            .ids()
            .map(|e| self.level_of(log.entities.name(e)))
            .collect();
        let mut changed = 0;
        for p in &mut log.primitives {
            if let Some(&Some(level)) = levels.get(p.entity.index())
                && p.level != level
            {
                p.level = level;
                changed += 1;
            }
        }
        changed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Frame, FrameTime, Primitive, Shape, Style, Vec2};

    #[test]
    fn the_longest_rule_covering_a_branch_wins() {
        let m = LevelMap::parse("\"markers\" = 2\n\"markers/debug\" = 5\n\"/path/\" = 0\n").unwrap();
        assert_eq!(m.level_of("markers/debug/7"), Some(5));
        assert_eq!(m.level_of("markers/debug"), Some(5));
        assert_eq!(m.level_of("markers/debugging/1"), Some(2));
        assert_eq!(m.level_of("markers"), Some(2));
        assert_eq!(m.level_of("path"), Some(0));
        assert_eq!(m.level_of("paths"), None);
        assert_eq!(m.level_of("robot"), None);
    }

    #[test]
    fn primitives_take_their_entitys_level() {
        let mut log = Log::new();
        let debug = log.entities.intern("markers/debug/1");
        let plan = log.entities.intern("plan");
        for (e, level) in [(debug, 1), (plan, 1), (debug, 4)] {
            log.primitives.push(Primitive {
                shape: Shape::Circle {
                    center: Vec2::new(0.0, 0.0),
                    radius: 1.0,
                },
                style: Style::default(),
                entity: e,
                level,
            });
        }
        log.frames.push(Frame {
            time: FrameTime::Instant(0.0),
            primitives: 0..3,
        });
        let m = LevelMap::parse("\"markers/debug\" = 4").unwrap();
        assert_eq!(m.apply(&mut log), 1);
        let levels: Vec<i32> = log.primitives.iter().map(|p| p.level).collect();
        assert_eq!(levels, [4, 1, 4]);
    }

    #[test]
    fn bad_files_say_what_is_wrong() {
        for (text, says) in [
            ("\"a\" = 1.5", "whole number"),
            ("\"a\" = \"high\"", "whole number"),
            ("\"a\" = 99999999999", "whole number"),
            ("\"/\" = 1", "names no entity"),
            ("a = [", ""),
        ] {
            let e = LevelMap::parse(text).unwrap_err();
            assert!(e.contains(says), "{text}: {e}");
        }
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("levels.toml");
        std::fs::write(&p, "\"a\" = 1.5").unwrap();
        let e = LevelMap::load(&p).unwrap_err().to_string();
        assert!(e.contains("levels.toml") && e.contains("whole number"), "{e}");
        let e = LevelMap::load(&dir.path().join("none.toml"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("none.toml"), "{e}");
    }
}
