//! The robots the 3D league's servers ship and have shipped, and how a
//! monitor's scene graph says which one a robot is.
//!
//! A monitor log carries no robot names, only what a monitor needs to
//! draw: meshes, their materials, transforms, and (rcssservermj) the
//! agent each subtree belongs to. Each model is known by what its server
//! writes there:
//!
//! | model | server | known by | forward | radius |
//! |---|---|---|---|---|
//! | NAO | SimSpark 0.6 – 0.6.4, and SimSpark-SPL | torso mesh `naobody.obj` | torso +y | 0.143 m |
//! | NAO type 0 … 4 | SimSpark 0.6.5 and later (heterogeneous robots, 2013 on) | torso mesh `naobody<k>.obj`, or `naobody.obj` with material `matType<k>` | torso +y | 0.143 m |
//! | Soccerbot | SimSpark 0.5 – 0.6 | torso mesh `soccerbottorso.obj` | torso +y | 0.16 m |
//! | T1 | rcssservermj | meshes under `models/T1/` in the agent's subtree | torso +x | 0.20 m |
//! | K1 | rcssservermj | meshes under `models/K1/` | torso +x | 0.19 m |
//! | ant | rcssservermj | no mesh; a sphere for a torso | torso +x | 0.94 m |
//!
//! A SimSpark robot's team and number are materials its server gives its
//! parts: `matLeft`/`matRight` and `matNum<n>` (the NAOs'
//! `StaticMeshInitEffector`), or one `matLeft<n>`/`matRight<n>` (the
//! Soccerbot's `SingleMatInitEffector`). rcssservermj labels each agent's
//! subtree `(nd DSC (agent <team> <n>) …)`.
//!
//! The torso mesh hangs from a transform of its own (the mesh turned into
//! the body's axes, and on SimSpark-SPL raised 5.5 cm); the robot's pose is
//! the body's transform above it, turned so that its x axis is the
//! robot's forward direction. A robot whose parts carry a team and a
//! number but no torso of a model above is drawn at its first such part,
//! at [`UNKNOWN`]'s size, and said once per robot.
//!
//! The radius is half the robot's width across the shoulders, arms down,
//! measured on each model's own description: SimSpark's NAO shoulder
//! joints 0.098 m from the torso's axis, the upper arm 0.01 m further out
//! and 0.07 m thick (`naoarm.rsg`; the five types differ in leg and arm
//! length and hip width, all inside the shoulders seen from above); the
//! Soccerbot's upper torso 0.137 m across, shoulder and upper arm
//! 0.0445 m each (`soccerbot058/soccerbot.rsg`); T1's and K1's shoulder
//! links 0.153 m and 0.145 m out, their upper arms about 0.045 m thick;
//! the ant's legs reach 0.94 m (each model's `robot.xml` in rcssservermj
//! 0.2, measured with MuJoCo at their zero pose). HOAP-2, which SimSpark
//! ships for its sample agent, has no team materials and is not told
//! apart from scenery.

/// One robot model.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RobotModel {
    /// Short name: `nao`, `nao3`, `soccerbot`, `T1`, …
    pub id: &'static str,
    /// What it is, for messages.
    pub name: &'static str,
    /// Half its width across the shoulders, arms down (m): the disc a
    /// top-down picture draws it as.
    pub radius: f64,
    /// Its torso's forward direction is the torso's y axis (SimSpark's
    /// robots), not its x axis.
    forward_y: bool,
}

/// A model by its index in [`MODELS`].
pub type ModelId = u8;

const fn model(id: &'static str, name: &'static str, radius: f64, forward_y: bool) -> RobotModel {
    RobotModel {
        id,
        name,
        radius,
        forward_y,
    }
}

/// Every model known, [`UNKNOWN`] first.
pub const MODELS: [RobotModel; 11] = [
    model("unknown", "a robot of no known model", 0.2, false),
    model("nao", "NAO", NAO_RADIUS, true),
    model("nao0", "NAO type 0 (standard)", NAO_RADIUS, true),
    model("nao1", "NAO type 1 (longer legs and arms)", NAO_RADIUS, true),
    model(
        "nao2",
        "NAO type 2 (faster ankle pitch, slower ankle roll)",
        NAO_RADIUS,
        true,
    ),
    model(
        "nao3",
        "NAO type 3 (longer legs and arms, wider hips)",
        NAO_RADIUS,
        true,
    ),
    model("nao4", "NAO type 4 (toes)", NAO_RADIUS, true),
    model("soccerbot", "Soccerbot", 0.16, true),
    model("T1", "Booster T1", 0.20, false),
    model("K1", "Booster K1", 0.19, false),
    model("ant", "ant (four legs)", 0.94, false),
];

/// SimSpark's NAO: shoulder joint 0.098 m out, upper arm 0.01 m further
/// and 0.07 m thick.
const NAO_RADIUS: f64 = 0.143;

/// The model of a robot nothing says the model of.
pub const UNKNOWN: ModelId = 0;
const NAO: ModelId = 1;
const NAO_TYPE_0: ModelId = 2;
const SOCCERBOT: ModelId = 7;
const T1: ModelId = 8;
const K1: ModelId = 9;
/// rcssservermj's ant.
pub const ANT: ModelId = 10;

/// The model with id `id` ([`UNKNOWN`]'s for one out of range).
pub fn get(id: ModelId) -> &'static RobotModel {
    MODELS.get(usize::from(id)).unwrap_or(&MODELS[0])
}

impl RobotModel {
    /// Whether the model's forward direction is its torso's y axis.
    pub fn forward_is_y(&self) -> bool {
        self.forward_y
    }
}

/// The model a SimSpark torso mesh names (`naobody3.obj`, …), by its
/// file stem; `None` for any other mesh.
pub fn simspark_torso(stem: &[u8]) -> Option<ModelId> {
    match stem {
        b"naobody" => Some(NAO),
        b"soccerbottorso" => Some(SOCCERBOT),
        _ => {
            let k = stem.strip_prefix(b"naobody")?;
            match k {
                [d @ b'0'..=b'4'] => Some(NAO_TYPE_0 + (d - b'0')),
                _ => None,
            }
        }
    }
}

/// The NAO type a `matType<k>` material names.
pub fn nao_type_material(material: &[u8]) -> Option<ModelId> {
    match material.strip_prefix(b"matType")? {
        [d @ b'0'..=b'4'] => Some(NAO_TYPE_0 + (d - b'0')),
        _ => None,
    }
}

/// The model an rcssservermj mesh path names (`models/T1/meshes/Trunk.STL`).
pub fn rcssservermj_mesh(path: &[u8]) -> Option<ModelId> {
    let rest = path.strip_prefix(b"models/")?;
    let dir = &rest[..rest.iter().position(|&b| b == b'/')?];
    match dir {
        b"T1" => Some(T1),
        b"K1" => Some(K1),
        _ => None,
    }
}

/// The side and number a SimSpark part's materials give: `matLeft`/
/// `matRight` with `matNum<n>`, or `matLeft<n>`/`matRight<n>`; and the
/// NAO type a `matType<k>` gives.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Jersey {
    /// `Some(false)` left, `Some(true)` right.
    pub right: Option<bool>,
    pub number: Option<u32>,
    pub nao_type: Option<ModelId>,
}

impl Jersey {
    /// Takes in one material name.
    pub fn add(&mut self, m: &[u8]) {
        let number = |n: &[u8]| std::str::from_utf8(n).ok().and_then(|n| n.parse::<u32>().ok());
        if let Some(t) = nao_type_material(m) {
            self.nao_type = Some(t);
        } else if let Some(n) = m.strip_prefix(b"matNum") {
            if let Some(n) = number(n) {
                self.number = Some(n);
            }
        } else if let Some(rest) = m.strip_prefix(b"matLeft") {
            self.side(false, rest, number);
        } else if let Some(rest) = m.strip_prefix(b"matRight") {
            self.side(true, rest, number);
        }
    }

    fn side(&mut self, right: bool, rest: &[u8], number: impl Fn(&[u8]) -> Option<u32>) {
        if rest.is_empty() {
            self.right = Some(right);
        } else if let Some(n) = number(rest) {
            // The Soccerbot's single material: side and number at once.
            self.right = Some(right);
            self.number = Some(n);
        }
    }

    /// Side and number, when both are known.
    pub fn identity(&self) -> Option<(bool, u32)> {
        Some((self.right?, self.number?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn torso_meshes_materials_and_paths_name_their_models() {
        assert_eq!(simspark_torso(b"naobody").map(|m| get(m).id), Some("nao"));
        for k in 0..5u8 {
            let stem = format!("naobody{k}");
            let m = simspark_torso(stem.as_bytes()).unwrap();
            assert_eq!(get(m).id, format!("nao{k}"));
            assert_eq!(nao_type_material(format!("matType{k}").as_bytes()), Some(m));
        }
        assert_eq!(simspark_torso(b"naobody5"), None);
        assert_eq!(simspark_torso(b"naobody10"), None);
        assert_eq!(simspark_torso(b"rthigh"), None);
        assert_eq!(simspark_torso(b"naohead"), None);
        assert_eq!(
            simspark_torso(b"soccerbottorso").map(|m| get(m).id),
            Some("soccerbot")
        );
        assert_eq!(
            rcssservermj_mesh(b"models/T1/meshes/Trunk.STL").map(|m| get(m).id),
            Some("T1")
        );
        assert_eq!(
            rcssservermj_mesh(b"models/K1/Head_2.STL").map(|m| get(m).id),
            Some("K1")
        );
        assert_eq!(rcssservermj_mesh(b"models/X9/a.stl"), None);
        assert_eq!(rcssservermj_mesh(b"models/T1"), None);
        assert_eq!(get(ANT).id, "ant");
        assert_eq!(get(200).id, "unknown");
        // Every id names itself once.
        let mut ids: Vec<&str> = MODELS.iter().map(|m| m.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), MODELS.len());
    }

    #[test]
    fn jerseys_read_both_material_schemes() {
        let read = |mats: &[&str]| {
            let mut j = Jersey::default();
            for m in mats {
                j.add(m.as_bytes());
            }
            j
        };
        let nao = read(&["matNum9", "matLeft", "matType2", "naowhite"]);
        assert_eq!(nao.identity(), Some((false, 9)));
        assert_eq!(nao.nao_type.map(|m| get(m).id), Some("nao2"));
        assert_eq!(read(&["matRight3"]).identity(), Some((true, 3)));
        assert_eq!(read(&["matLeft", "naowhite"]).identity(), None);
        assert_eq!(read(&["matNum", "matTeam"]).identity(), None);
        assert_eq!(read(&["matLeftGoalie", "matNum1"]).identity(), None);
        assert_eq!(read(&["matNumx", "matRight"]).identity(), None);
    }
}
