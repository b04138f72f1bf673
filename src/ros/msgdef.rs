//! Message definitions: what fields a ROS 2 message type has, in what
//! order, of what types — all a CDR message's bytes can be read with
//! ([`crate::ros::cdr`]).
//!
//! A [`Registry`] holds them by full type name (`pkg/msg/Type`). It starts
//! with the standard types built in ([`Registry::builtin`]: every message
//! of `common_interfaces`, `tf2_msgs`, `builtin_interfaces` and
//! `foxglove_msgs`, ROS 2 Humble's `.msg` texts generated from `rosbags`'
//! type store by `scripts/ros-cdr-fixtures.py`), and takes the
//! definitions a file carries: an MCAP schema or a rosbag2
//! `message_definitions` row, as `.msg` text ([`Registry::add_ros2msg`]) or
//! as OMG IDL ([`Registry::add_ros2idl`]). A file's definitions replace the
//! built-in ones of the same name, so a recording from another ROS
//! distribution decodes by its own definitions.
//!
//! `.msg` text: a line per field, `type name` (a default value may follow),
//! or per constant, `type NAME=value` (parsed and dropped); `#` starts a
//! comment. Types are the primitives, `string`/`wstring` with an optional
//! `<=N` bound, or another message (`pkg/Type`, `pkg/msg/Type`, or a bare
//! `Type` of the same package; `Header` is `std_msgs`'), each with an
//! optional array suffix `[]`, `[N]` or `[<=N]`. ROS 1's `time` and
//! `duration` (which some tools still write) are `builtin_interfaces`'.
//! A file's text concatenates the top type's definition and then each type
//! it uses, after a line of `=` and a line `MSG: pkg/Type`.
//!
//! Definitions are untrusted: a fixed array must have at least one element
//! (so every field takes at least one byte in CDR, which bounds what a
//! message of n bytes can make the decoder allocate), names must be
//! identifiers, and cycles between types are left for the decoder's depth
//! limit; [`Registry::missing`] walks the graph without recursing.

mod builtin;
mod idl;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// Message definitions by full type name (`pkg/msg/Type`).
#[derive(Clone, Debug, Default)]
pub struct Registry {
    defs: HashMap<String, Arc<MsgDef>>,
}

// Readers on several threads share one registry.
const _: fn() = || {
    fn shared<T: Send + Sync>() {}
    shared::<Registry>();
};

/// One message type: its full name and its fields in declaration order
/// (constants are parsed and dropped).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MsgDef {
    /// `geometry_msgs/msg/Point`.
    pub name: Arc<str>,
    /// The fields, in order.
    pub fields: Vec<FieldDef>,
}

/// One field of a message type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldDef {
    /// The field's name.
    pub name: Arc<str>,
    /// Its element type.
    pub ty: FieldType,
    /// Whether it is one value or an array of them.
    pub array: ArrayKind,
}

/// Whether a field holds one value or several.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArrayKind {
    /// One value.
    Single,
    /// `T[N]`: exactly N, no length in the bytes.
    Fixed(usize),
    /// `T[]`: a sequence, its length first.
    Unbounded,
    /// `T[<=N]`: a sequence of at most N (the bound is not enforced when
    /// decoding).
    Bounded(usize),
}

/// A field's element type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FieldType {
    /// `bool`.
    Bool,
    /// `int8`.
    Int8,
    /// `uint8`.
    UInt8,
    /// `byte` (IDL `octet`).
    Byte,
    /// `char` (one byte).
    Char,
    /// `int16`.
    Int16,
    /// `uint16`.
    UInt16,
    /// `int32`.
    Int32,
    /// `uint32`.
    UInt32,
    /// `int64`.
    Int64,
    /// `uint64`.
    UInt64,
    /// `float32`.
    Float32,
    /// `float64`.
    Float64,
    /// `string` (a bound, `string<=N`, is dropped).
    String,
    /// `wstring`.
    WString,
    /// Another message, by full normalised name (`std_msgs/msg/Header`).
    Message(Arc<str>),
}

impl FieldType {
    /// The primitive called `name` in a `.msg` file.
    fn primitive(name: &str) -> Option<FieldType> {
        Some(match name {
            "bool" => FieldType::Bool,
            "int8" => FieldType::Int8,
            "uint8" => FieldType::UInt8,
            "byte" => FieldType::Byte,
            "char" => FieldType::Char,
            "int16" => FieldType::Int16,
            "uint16" => FieldType::UInt16,
            "int32" => FieldType::Int32,
            "uint32" => FieldType::UInt32,
            "int64" => FieldType::Int64,
            "uint64" => FieldType::UInt64,
            "float32" => FieldType::Float32,
            "float64" => FieldType::Float64,
            "string" => FieldType::String,
            "wstring" => FieldType::WString,
            _ => return None,
        })
    }
}

/// Why a definition cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum DefError {
    /// A line of a `.msg` definition (or a place in an IDL one) is not
    /// understood.
    #[error("definition of {type_name}, line {line}: {message}")]
    Syntax {
        /// The type being defined.
        type_name: String,
        /// 1-based, in the whole text given.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// A type name is not `pkg/Type`, `pkg/msg/Type` or `pkg::msg::Type`.
    #[error("`{0}` is not a message type name (pkg/msg/Type)")]
    BadTypeName(String),
    /// An encoding or a construct this reader does not handle.
    #[error("{0} is not supported")]
    Unsupported(String),
}

/// The common full spelling of a type name: `pkg/msg/Type` from
/// `pkg/Type`, `pkg::msg::Type` or `pkg/msg/Type` (surrounding space
/// trimmed). A name of another shape is returned as it is.
pub fn normalise(type_name: &str) -> String {
    let t = type_name.trim();
    let t = t.replace("::", "/");
    let parts: Vec<&str> = t.split('/').collect();
    match parts.as_slice() {
        [pkg, ty] if !pkg.is_empty() && !ty.is_empty() => format!("{pkg}/msg/{ty}"),
        _ => t,
    }
}

/// Whether `s` is a name: a letter or `_`, then letters, digits, `_`.
fn is_ident(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(f) if f.is_ascii_alphabetic() || f == '_')
        && c.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Whether `name` (normalised) is `pkg/msg/Type` with identifier parts.
fn is_full_name(name: &str) -> bool {
    let parts: Vec<&str> = name.split('/').collect();
    parts.len() == 3 && parts.iter().all(|p| is_ident(p))
}

/// The longest array a definition may declare; more cannot be in a
/// message anyway (every element takes a byte at least), and the bound
/// keeps size arithmetic far from overflowing.
const MAX_FIXED: usize = 1 << 32;

impl Registry {
    /// An empty registry.
    pub fn new() -> Registry {
        Registry::default()
    }

    /// The standard definitions built in: every message of ROS 2's
    /// `common_interfaces` (`std_msgs`, `geometry_msgs`, `sensor_msgs`,
    /// `nav_msgs`, `visualization_msgs`, `shape_msgs`, `trajectory_msgs`,
    /// `diagnostic_msgs`, `stereo_msgs`, `actionlib_msgs`), `tf2_msgs`,
    /// `builtin_interfaces` and `rosgraph_msgs` (Humble's), and of
    /// `foxglove_msgs`, so a recording that carries no definitions (rosbag2
    /// before Iron wrote none) still decodes.
    ///
    /// Parsed once per process; each call clones the table (the
    /// definitions themselves are shared).
    pub fn builtin() -> Registry {
        static PARSED: std::sync::OnceLock<Registry> = std::sync::OnceLock::new();
        PARSED
            .get_or_init(|| {
                let mut r = Registry::new();
                for (name, text) in builtin::BUILTIN {
                    // The texts are generated, and tested (`builtin_parses`).
                    if let Ok(def) = parse_msg(name, text, 0) {
                        r.defs.insert((*name).to_owned(), Arc::new(def));
                    }
                }
                r
            })
            .clone()
    }

    /// Adds the definitions an MCAP schema (encoding `ros2msg`) or a
    /// rosbag2 `message_definitions` row carries: the top type's `.msg`
    /// text, then for each dependency a line of `=` (80 of them; 3 or more
    /// are accepted), a line `MSG: pkg/Type`, its text. Definitions from a
    /// file replace built-in ones of the same name. Nothing is added when
    /// any part is wrong. A blank text does not replace a definition the
    /// registry has (rosbag2 writes an empty one when it had none to
    /// write); a blank text for a new type defines it with no fields.
    pub fn add_ros2msg(&mut self, type_name: &str, text: &str) -> Result<(), DefError> {
        let top = normalise(type_name);
        if !is_full_name(&top) {
            return Err(DefError::BadTypeName(type_name.to_owned()));
        }
        if text.trim().is_empty() && self.defs.contains_key(&top) {
            return Ok(());
        }
        let mut defs = Vec::new();
        let mut name = top;
        let mut start = 0; // line index of the section's first line
        let mut body = String::new();
        let mut lines = text.lines().enumerate();
        while let Some((i, line)) = lines.next() {
            let t = line.trim();
            if t.len() >= 3 && t.bytes().all(|b| b == b'=') {
                defs.push(parse_msg(&name, &body, start)?);
                body.clear();
                // The section's `MSG: pkg/Type` line (blank lines before it
                // are skipped).
                let mut header = None;
                for (j, l) in lines.by_ref() {
                    let l = l.trim();
                    if !l.is_empty() {
                        header = Some((j, l));
                        break;
                    }
                }
                let Some((j, h)) = header else {
                    return Err(syntax(&name, i + 1, "a `=` line with no `MSG:` line after it"));
                };
                let Some(dep) = h.strip_prefix("MSG:") else {
                    return Err(syntax(
                        &name,
                        j + 1,
                        format!("expected `MSG: pkg/Type`, found `{h}`"),
                    ));
                };
                name = normalise(dep);
                if !is_full_name(&name) {
                    return Err(syntax(
                        &name,
                        j + 1,
                        format!("`{}` is not a type name", dep.trim()),
                    ));
                }
                start = j + 1;
            } else {
                // Sections are contiguous: line `start` is the body's first.
                body.push_str(line);
                body.push('\n');
            }
        }
        defs.push(parse_msg(&name, &body, start)?);
        for d in defs {
            self.defs.insert(d.name.to_string(), Arc::new(d));
        }
        Ok(())
    }

    /// Adds the definitions of a `ros2idl` schema: OMG IDL as rosidl
    /// writes it (modules, structs, typedefs, constant modules,
    /// `sequence<T>`, `sequence<T, N>`, `string<N>`, arrays `T name[N]`;
    /// annotations ignored), in sections separated by a line of `=` and a
    /// line `IDL: pkg/msg/Type`. Every struct found is added, by its module
    /// path. Nothing is added when any part is wrong.
    pub fn add_ros2idl(&mut self, type_name: &str, text: &str) -> Result<(), DefError> {
        let top = normalise(type_name);
        if !is_full_name(&top) {
            return Err(DefError::BadTypeName(type_name.to_owned()));
        }
        let defs = idl::parse(&top, text)?;
        for d in defs {
            self.defs.insert(d.name.to_string(), Arc::new(d));
        }
        Ok(())
    }

    /// Adds a schema by its encoding's name, as MCAP and rosbag2 give it:
    /// `ros2msg` ([`Registry::add_ros2msg`]) or `ros2idl`
    /// ([`Registry::add_ros2idl`]); any other is
    /// [`DefError::Unsupported`].
    pub fn add_schema(&mut self, type_name: &str, encoding: &str, text: &str) -> Result<(), DefError> {
        match encoding {
            "ros2msg" => self.add_ros2msg(type_name, text),
            "ros2idl" => self.add_ros2idl(type_name, text),
            other => Err(DefError::Unsupported(format!(
                "schema encoding `{other}` (definition of {type_name})"
            ))),
        }
    }

    /// The definition of a type, by any common spelling: `pkg/msg/Type`,
    /// `pkg/Type`, `pkg::msg::Type`.
    pub fn get(&self, type_name: &str) -> Option<&Arc<MsgDef>> {
        match self.defs.get(type_name) {
            Some(d) => Some(d),
            None => self.defs.get(&normalise(type_name)),
        }
    }

    /// Types that `type_name` uses (transitively, itself included) that are
    /// not defined, in the order first met; empty when it can be decoded.
    pub fn missing(&self, type_name: &str) -> Vec<String> {
        let mut seen = HashSet::new();
        let mut missing = Vec::new();
        let mut todo = vec![normalise(type_name)];
        while let Some(name) = todo.pop() {
            if !seen.insert(name.clone()) {
                continue;
            }
            match self.defs.get(&name) {
                None => missing.push(name),
                Some(def) => {
                    for f in def.fields.iter().rev() {
                        if let FieldType::Message(m) = &f.ty
                            && !seen.contains(&**m)
                        {
                            todo.push(m.to_string());
                        }
                    }
                }
            }
        }
        missing
    }

    /// The names of all the types defined, sorted.
    pub fn names(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self.defs.keys().map(String::as_str).collect();
        v.sort_unstable();
        v
    }
}

fn syntax(type_name: &str, line: usize, message: impl Into<String>) -> DefError {
    DefError::Syntax {
        type_name: type_name.to_owned(),
        line,
        message: message.into(),
    }
}

/// Parses one type's `.msg` text; `first_line` is the 0-based index of its
/// first line in the whole text (for messages).
fn parse_msg(name: &str, text: &str, first_line: usize) -> Result<MsgDef, DefError> {
    let pkg = name.split('/').next().unwrap_or_default();
    let mut fields: Vec<FieldDef> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line_no = first_line + i + 1;
        let err = |m: String| syntax(name, line_no, m);
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (ty_text, rest) = line
            .split_once(|c: char| c.is_whitespace())
            .ok_or_else(|| err(format!("`{line}` has a type but no name")))?;
        let rest = rest.trim_start();
        let name_end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let (field, after) = rest.split_at(name_end);
        if !is_ident(field) {
            return Err(err(format!("`{rest}` is not a field name")));
        }
        let (ty, array) = parse_type(ty_text, pkg).map_err(err)?;
        if after.trim_start().starts_with('=') {
            // A constant: only primitives may be.
            if matches!(ty, FieldType::Message(_)) || array != ArrayKind::Single {
                return Err(err(format!("constant `{field}` of type `{ty_text}`")));
            }
            continue;
        }
        if fields.iter().any(|f| &*f.name == field) {
            return Err(err(format!("field `{field}` twice")));
        }
        fields.push(FieldDef {
            name: field.into(),
            ty,
            array,
        });
    }
    drop_placeholder(&mut fields);
    Ok(MsgDef {
        name: name.into(),
        fields,
    })
}

/// Drops the one-byte field rosidl (and `rosbags`) give a type with no
/// fields: the type is empty, and CDR writes the byte for any empty type.
fn drop_placeholder(fields: &mut Vec<FieldDef>) {
    if let [f] = fields.as_slice()
        && &*f.name == "structure_needs_at_least_one_member"
        && f.ty == FieldType::UInt8
        && f.array == ArrayKind::Single
    {
        fields.clear();
    }
}

/// A `.msg` field type (`float64[3]`, `string<=8[<=4]`, `Point[]`) as its
/// element type and array kind, with bare message names taken from `pkg`.
fn parse_type(text: &str, pkg: &str) -> Result<(FieldType, ArrayKind), String> {
    let (base, array) = match text.find('[') {
        None => (text, ArrayKind::Single),
        Some(open) => {
            let inner = text[open + 1..]
                .strip_suffix(']')
                .ok_or_else(|| format!("`{text}`: an array type ends with `]`"))?;
            let array = if inner.is_empty() {
                ArrayKind::Unbounded
            } else if let Some(b) = inner.strip_prefix("<=") {
                ArrayKind::Bounded(array_len(b, text)?)
            } else {
                let n = array_len(inner, text)?;
                if n == 0 {
                    return Err(format!("`{text}`: a fixed array of no elements"));
                }
                ArrayKind::Fixed(n)
            };
            (&text[..open], array)
        }
    };
    // A string's bound.
    let base = match base.split_once("<=") {
        Some((s @ ("string" | "wstring"), b)) => {
            array_len(b, text)?;
            s
        }
        _ => base,
    };
    if let Some(p) = FieldType::primitive(base) {
        return Ok((p, array));
    }
    let full = match base {
        "time" => "builtin_interfaces/msg/Time".to_owned(),
        "duration" => "builtin_interfaces/msg/Duration".to_owned(),
        "Header" => "std_msgs/msg/Header".to_owned(),
        b if is_ident(b) => format!("{pkg}/msg/{b}"),
        b => normalise(b),
    };
    if !is_full_name(&full) {
        return Err(format!("`{base}` is not a type"));
    }
    Ok((FieldType::Message(full.into()), array))
}

fn array_len(s: &str, ty: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(n) if n <= MAX_FIXED => Ok(n),
        _ => Err(format!("`{ty}`: `{s}` is not an array length")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_parses() {
        for (name, text) in builtin::BUILTIN {
            parse_msg(name, text, 0).unwrap();
        }
        let r = Registry::builtin();
        assert_eq!(r.names().len(), builtin::BUILTIN.len());
        for name in r.names() {
            assert!(r.missing(name).is_empty(), "{name}: {:?}", r.missing(name));
        }
    }

    /// Every message of the packages built in is there, in both spellings,
    /// with everything it uses.
    #[test]
    fn builtin_covers_the_standard_packages() {
        let r = Registry::builtin();
        let count = |pkg: &str| {
            r.names()
                .iter()
                .filter(|n| n.starts_with(&format!("{pkg}/msg/")))
                .count()
        };
        // Humble's common_interfaces, tf2_msgs, builtin_interfaces, and
        // foxglove/schemas' ros2 messages (with the older ImageMarkerArray).
        for (pkg, n) in [
            ("std_msgs", 30),
            ("geometry_msgs", 29),
            ("sensor_msgs", 27),
            ("nav_msgs", 5),
            ("visualization_msgs", 12),
            ("shape_msgs", 4),
            ("trajectory_msgs", 4),
            ("diagnostic_msgs", 3),
            ("stereo_msgs", 1),
            ("actionlib_msgs", 3),
            ("tf2_msgs", 2),
            ("builtin_interfaces", 2),
            ("rosgraph_msgs", 1),
            ("foxglove_msgs", 35),
        ] {
            assert_eq!(count(pkg), n, "{pkg}");
        }
        for short in [
            "sensor_msgs/NavSatFix",
            "sensor_msgs/Imu",
            "sensor_msgs/LaserScan",
            "sensor_msgs/PointCloud2",
            "sensor_msgs/Range",
            "sensor_msgs/JointState",
            "nav_msgs/Odometry",
            "nav_msgs/OccupancyGrid",
            "nav_msgs/GridCells",
            "map_msgs/OccupancyGridUpdate",
            "geometry_msgs/PoseWithCovarianceStamped",
            "geometry_msgs/PointStamped",
            "geometry_msgs/PolygonStamped",
            "geometry_msgs/Pose2D",
            "diagnostic_msgs/DiagnosticArray",
            "trajectory_msgs/JointTrajectory",
            "stereo_msgs/DisparityImage",
            "actionlib_msgs/GoalStatusArray",
            "shape_msgs/SolidPrimitive",
            "foxglove_msgs/SceneUpdate",
            "foxglove_msgs/LocationFix",
            "foxglove_msgs/Grid",
        ] {
            let long = normalise(short);
            if short.starts_with("map_msgs/") {
                // Not a common_interfaces package: not built in.
                assert!(r.get(short).is_none(), "{short}");
                continue;
            }
            assert!(r.get(short).is_some(), "{short}");
            assert!(r.get(&long).is_some(), "{long}");
            assert!(r.missing(short).is_empty(), "{short}: {:?}", r.missing(short));
        }
        let nav = r.get("sensor_msgs/NavSatFix").unwrap();
        let names: Vec<&str> = nav.fields.iter().map(|f| &*f.name).collect();
        assert_eq!(
            names,
            [
                "header",
                "status",
                "latitude",
                "longitude",
                "altitude",
                "position_covariance",
                "position_covariance_type"
            ]
        );
    }

    #[test]
    fn names_normalise() {
        assert_eq!(normalise("geometry_msgs/Point"), "geometry_msgs/msg/Point");
        assert_eq!(normalise("geometry_msgs::msg::Point"), "geometry_msgs/msg/Point");
        assert_eq!(normalise(" geometry_msgs/msg/Point "), "geometry_msgs/msg/Point");
        let r = Registry::builtin();
        for n in [
            "geometry_msgs/Point",
            "geometry_msgs::msg::Point",
            "geometry_msgs/msg/Point",
        ] {
            assert_eq!(&*r.get(n).unwrap().name, "geometry_msgs/msg/Point");
        }
        assert!(r.get("geometry_msgs/Nope").is_none());
    }

    #[test]
    fn marker_is_humbles() {
        let r = Registry::builtin();
        let m = r.get("visualization_msgs/msg/Marker").unwrap();
        let names: Vec<&str> = m.fields.iter().map(|f| &*f.name).collect();
        assert_eq!(
            names,
            [
                "header",
                "ns",
                "id",
                "type",
                "action",
                "pose",
                "scale",
                "color",
                "lifetime",
                "frame_locked",
                "points",
                "colors",
                "texture_resource",
                "texture",
                "uv_coordinates",
                "text",
                "mesh_resource",
                "mesh_file",
                "mesh_use_embedded_materials"
            ]
        );
        assert_eq!(m.fields[10].array, ArrayKind::Unbounded);
        assert_eq!(
            m.fields[10].ty,
            FieldType::Message("geometry_msgs/msg/Point".into())
        );
        let info = r.get("sensor_msgs/CameraInfo").unwrap();
        let d = info.fields.iter().find(|f| &*f.name == "k").unwrap();
        assert_eq!((d.ty.clone(), d.array), (FieldType::Float64, ArrayKind::Fixed(9)));
    }

    #[test]
    fn msg_syntax() {
        let text = "# a comment\n\
                    int32 A=1   # constant\n\
                    string S = \"x # not a comment\"\n\
                    Header header\n\
                    time t\n\
                    Other o  # same package\n\
                    string<=5 bounded\n\
                    float32[<=3] few\n\
                    uint8[4] four\n\
                    int8 with_default 7\n\
                    geometry_msgs/msg/Point[] pts\n";
        let d = parse_msg("p/msg/T", text, 0).unwrap();
        let f: Vec<(&str, FieldType, ArrayKind)> = d
            .fields
            .iter()
            .map(|f| (&*f.name, f.ty.clone(), f.array))
            .collect();
        let m = |s: &str| FieldType::Message(s.into());
        assert_eq!(
            f,
            vec![
                ("header", m("std_msgs/msg/Header"), ArrayKind::Single),
                ("t", m("builtin_interfaces/msg/Time"), ArrayKind::Single),
                ("o", m("p/msg/Other"), ArrayKind::Single),
                ("bounded", FieldType::String, ArrayKind::Single),
                ("few", FieldType::Float32, ArrayKind::Bounded(3)),
                ("four", FieldType::UInt8, ArrayKind::Fixed(4)),
                ("with_default", FieldType::Int8, ArrayKind::Single),
                ("pts", m("geometry_msgs/msg/Point"), ArrayKind::Unbounded),
            ]
        );
        for bad in [
            "int32",
            "int32 3x",
            "uint8[0] z",
            "a/b/c/d x",
            "float64[ x",
            "int32 a\nint32 a",
        ] {
            let e = parse_msg("p/msg/T", bad, 0).unwrap_err();
            assert!(e.to_string().contains("p/msg/T"), "{e}");
        }
    }

    #[test]
    fn concatenated_text_replaces_builtins() {
        let mut r = Registry::builtin();
        let text = "Part[] parts\nstd_msgs/Header header\n\
                    ================================================================================\n\
                    MSG: my_pkg/Part\n\
                    float64 x\n\
                    ===\n\
                    MSG: std_msgs/Header\n\
                    string frame_id\n";
        r.add_ros2msg("my_pkg/msg/Whole", text).unwrap();
        assert!(r.missing("my_pkg/Whole").is_empty());
        assert_eq!(r.get("my_pkg/msg/Part").unwrap().fields.len(), 1);
        assert_eq!(r.get("std_msgs/msg/Header").unwrap().fields.len(), 1);
        // The line number of an error counts from the whole text's start.
        let e = r
            .add_ros2msg("a/B", "int32 x\n===\nMSG: a/C\nint32 ok\nbad[ y\n")
            .unwrap_err();
        assert!(e.to_string().contains("line 5"), "{e}");
        assert!(e.to_string().contains("a/msg/C"), "{e}");
        assert!(r.get("a/B").is_none());
        assert!(r.add_ros2msg("x", "int32 a").is_err());
        // A blank text keeps what is known, or defines an empty type.
        r.add_schema("std_msgs/msg/Header", "ros2msg", " \n").unwrap();
        assert_eq!(r.get("std_msgs/msg/Header").unwrap().fields.len(), 1);
        r.add_schema("new_pkg/msg/Nothing", "ros2msg", "").unwrap();
        assert!(r.get("new_pkg/Nothing").unwrap().fields.is_empty());
        assert!(matches!(
            r.add_schema("a/B", "jsonschema", "{}"),
            Err(DefError::Unsupported(_))
        ));
        assert!(r.add_ros2msg("a/B", "int32 a\n=====\n").is_err());
        assert!(r.add_ros2msg("a/B", "int32 a\n=====\nNOT: x/Y\n").is_err());
    }

    #[test]
    fn missing_follows_cycles() {
        let mut r = Registry::new();
        r.add_ros2msg("a/A", "a/B b\nc/C c\n===\nMSG: a/B\na/A back\n")
            .unwrap();
        assert_eq!(r.missing("a/A"), vec!["c/msg/C".to_owned()]);
        assert_eq!(r.missing("z/Z"), vec!["z/msg/Z".to_owned()]);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: crate::testing::fuzz_cases(),
            ..proptest::prelude::ProptestConfig::default()
        })]

        /// Random `.msg`-like texts never panic.
        #[test]
        fn random_msg_text_never_panics(
            lines in proptest::collection::vec(
                "(#.*|[a-z/]{0,12}(\\[(<=)?[0-9]{0,3}\\])? [A-Za-z_0-9]{0,6}( ?= ?[0-9a-z\"#]{0,4})?|={3,5}|MSG: [a-z]{1,3}/[A-Z][a-z]{0,3}|.{0,10})",
                0..12,
            ),
        ) {
            let mut r = Registry::builtin();
            let text = lines.join("\n");
            if r.add_ros2msg("p/msg/T", &text).is_ok() {
                let _ = r.missing("p/msg/T");
            }
            let _ = r.add_ros2idl("p/msg/T", &text);
        }
    }
}
