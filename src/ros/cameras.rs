//! A recording's cameras: which picture topic is shown, and, when the
//! recording holds several cameras (a stereo pair, a front and a back
//! camera), which of them a drawing in the picture's pixels belongs to.
//!
//! A drawing in pixels drawn on another camera's picture lands in the
//! wrong place, so such drawings are left out (and said). What tells the
//! camera: an image marker's `header.frame_id`, the optical frame of the
//! camera it was made for (a picture's own `header.frame_id`); Foxglove's
//! `ImageAnnotations` name no frame, so their topic's namespace
//! (`/left/detections` beside `/left/image_raw`). Pictures of one camera
//! under several topics (`image_raw` and `image_rect`) share their frame
//! and namespace, and count as one. A drawing that names nothing known is
//! drawn on the picture shown.

use std::ops::ControlFlow;

use super::recording::{Recording, Role, RosError};
use super::tf::frame_name;

/// The picture topic to show: the one `asked` for, else the first. The
/// topic's id, name and role, or why there is none.
pub(super) fn picture_topic(rec: &Recording, asked: Option<&str>) -> Result<(u32, String, Role), String> {
    let pictures: Vec<_> = rec
        .info()
        .topics
        .iter()
        .filter(|t| Role::of(&t.type_name).is_picture())
        .collect();
    let chosen = match asked {
        Some(name) => pictures.iter().find(|t| t.name == name).ok_or_else(|| {
            let names: Vec<&str> = pictures.iter().map(|t| t.name.as_str()).collect();
            if names.is_empty() {
                format!("has no topic `{name}`, and no picture topic at all")
            } else {
                format!(
                    "has no picture topic `{name}`; its picture topics: {}",
                    names.join(", ")
                )
            }
        })?,
        None => pictures
            .first()
            .ok_or("has no picture topic (sensor_msgs/Image, CompressedImage or foxglove CompressedVideo)")?,
    };
    if let Some(why) = rec.undecodable(chosen) {
        return Err(format!("{}: its pictures cannot be read: {why}", chosen.name));
    }
    Ok((chosen.id, chosen.name.clone(), Role::of(&chosen.type_name)))
}

/// A picture topic: its name and its camera's optical frame (empty when
/// its first picture names none).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Camera {
    pub topic: String,
    pub frame: String,
}

/// Which camera a drawing belongs to ([`Cameras::of_drawing`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Belongs<'a> {
    /// The camera shown, or nothing tells.
    Shown,
    /// Another camera of the recording.
    Other(&'a Camera),
}

/// The picture topic shown and the recording's other cameras.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cameras {
    pub shown: Camera,
    /// Picture topics of other cameras (another frame, or another
    /// namespace when a frame is missing).
    pub others: Vec<Camera>,
}

/// The namespace of a topic (`/left` of `/left/image_raw`); `None` at the
/// root, which tells nothing.
fn namespace(topic: &str) -> Option<&str> {
    let topic = topic.trim_end_matches('/');
    let ns = &topic[..topic.rfind('/')?];
    (!ns.is_empty()).then_some(ns)
}

impl Cameras {
    /// The cameras of `rec` when the picture shown is `asked` (else the
    /// first picture topic): `None` when the recording has one picture
    /// topic or none (every drawing is then the shown camera's), or when
    /// `asked` is not among them (opening the picture says so). Reads the
    /// first message of each picture topic for its frame.
    pub fn of(rec: &mut Recording, asked: Option<&str>) -> Result<Option<Cameras>, RosError> {
        let pictures: Vec<(u32, String)> = rec
            .info()
            .topics
            .iter()
            .filter(|t| Role::of(&t.type_name).is_picture())
            .map(|t| (t.id, t.name.clone()))
            .collect();
        if pictures.len() < 2 {
            return Ok(None);
        }
        let Ok((shown_id, _, _)) = picture_topic(rec, asked) else {
            return Ok(None);
        };
        let ids: Vec<u32> = pictures.iter().map(|p| p.0).collect();
        let mut frames: Vec<Option<String>> = vec![None; pictures.len()];
        let mut left = pictures.len();
        rec.read(&ids, None, &mut |topic, _, msg| {
            if let (Some(k), Ok(msg)) = (ids.iter().position(|&i| i == topic.id), msg)
                && frames[k].is_none()
            {
                let frame = msg.str("header.frame_id").or(msg.str("frame_id")).unwrap_or("");
                frames[k] = Some(frame_name(frame).to_owned());
                left -= 1;
            }
            if left == 0 {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        })?;
        let all: Vec<(u32, Camera)> = pictures
            .into_iter()
            .zip(frames)
            .map(|((id, topic), frame)| {
                (
                    id,
                    Camera {
                        topic,
                        frame: frame.unwrap_or_default(),
                    },
                )
            })
            .collect();
        let Some(shown) = all.iter().find(|c| c.0 == shown_id).map(|c| c.1.clone()) else {
            return Ok(None);
        };
        let same_camera = |c: &Camera| {
            if !c.frame.is_empty() && !shown.frame.is_empty() {
                c.frame == shown.frame
            } else {
                namespace(&c.topic) == namespace(&shown.topic)
            }
        };
        let others: Vec<Camera> = all
            .into_iter()
            .filter(|(id, c)| *id != shown_id && !same_camera(c))
            .map(|(_, c)| c)
            .collect();
        Ok((!others.is_empty()).then_some(Cameras { shown, others }))
    }

    /// The camera a drawing on `topic` belongs to, by the optical `frame`
    /// it names (an image marker's `header.frame_id`; `None` or empty when
    /// it names none), else by its topic's namespace.
    pub fn of_drawing(&self, topic: &str, frame: Option<&str>) -> Belongs<'_> {
        let frame = frame.map(frame_name).filter(|f| !f.is_empty());
        if let Some(f) = frame {
            if f == self.shown.frame {
                return Belongs::Shown;
            }
            if let Some(c) = self.others.iter().find(|c| c.frame == f) {
                return Belongs::Other(c);
            }
            return Belongs::Shown;
        }
        let Some(ns) = namespace(topic) else {
            return Belongs::Shown;
        };
        if namespace(&self.shown.topic) == Some(ns) {
            return Belongs::Shown;
        }
        match self.others.iter().find(|c| namespace(&c.topic) == Some(ns)) {
            Some(c) => Belongs::Other(c),
            None => Belongs::Shown,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cam(topic: &str, frame: &str) -> Camera {
        Camera {
            topic: topic.to_owned(),
            frame: frame.to_owned(),
        }
    }

    #[test]
    fn namespaces() {
        assert_eq!(namespace("/left/image_raw"), Some("/left"));
        assert_eq!(namespace("/robot/left/image_raw/"), Some("/robot/left"));
        assert_eq!(namespace("/image_raw"), None);
        assert_eq!(namespace("image_raw"), None);
        assert_eq!(namespace(""), None);
    }

    #[test]
    fn drawings_belong_by_frame_then_by_namespace() {
        let cams = Cameras {
            shown: cam("/left/image_raw", "left_optical"),
            others: vec![cam("/right/image_raw", "right_optical")],
        };
        let of = |topic: &str, frame: Option<&str>| cams.of_drawing(topic, frame);
        assert_eq!(of("/detections", Some("left_optical")), Belongs::Shown);
        assert_eq!(of("/detections", Some("/left_optical")), Belongs::Shown);
        assert_eq!(
            of("/detections", Some("right_optical")),
            Belongs::Other(&cams.others[0])
        );
        // A frame naming neither camera, and no frame at the root: drawn.
        assert_eq!(of("/detections", Some("base_link")), Belongs::Shown);
        assert_eq!(of("/detections", None), Belongs::Shown);
        assert_eq!(of("/detections", Some("")), Belongs::Shown);
        // No frame: the namespace tells.
        assert_eq!(of("/left/annotations", None), Belongs::Shown);
        assert_eq!(of("/right/annotations", None), Belongs::Other(&cams.others[0]));
        assert_eq!(of("/front/annotations", None), Belongs::Shown);
        // A frame outweighs the namespace.
        assert_eq!(of("/right/detections", Some("left_optical")), Belongs::Shown);
    }
}
