#!/usr/bin/env python3
"""The built-in ROS 2 message definitions and the CDR fixtures of
`src/ros/msgdef.rs` and `src/ros/cdr.rs`, both taken from `rosbags`' own
ROS 2 Humble type store, so the Rust decoder is checked against another
implementation rather than against itself.

    ~/.cache/underlay/pyenv/bin/python scripts/ros-cdr-fixtures.py

writes
- `src/ros/msgdef/builtin.rs`: each built-in type's `.msg` text (its fields
  and constants in Humble's order, generated from the type store's field
  definitions; the Foxglove types, which rosbags does not know, from
  foxglove/schemas' `ros2` definitions, registered in the store first);
- `tests/data/ros/cdr/messages.json`: for every built-in type one or more
  messages with varied values (negative numbers, NaN and infinities, unicode
  text, empty and non-empty sequences, a few big-endian), each as its CDR
  bytes (rosbags' `serialize_cdr`) and its expected value (rosbags'
  `deserialize_cdr` of those bytes, as JSON; floats as text, `repr`'s
  or "NaN", "inf", "-inf"; byte arrays as hex);
- `tests/data/ros/cdr/mcap-schemas.json`: for a few types the concatenated
  `.msg` text an MCAP schema carries (rosbags' `generate_msgdef`).
"""

from __future__ import annotations

import json
import math
import random
import subprocess
from pathlib import Path

import numpy as np
from rosbags.typesys import Stores, get_typestore, get_types_from_msg
from rosbags.typesys.base import Nodetype

ROOT = Path(__file__).resolve().parent.parent

TYPES = [
    "builtin_interfaces/msg/Time",
    "builtin_interfaces/msg/Duration",
    "std_msgs/msg/Header",
    "std_msgs/msg/ColorRGBA",
    "std_msgs/msg/String",
    "std_msgs/msg/Empty",
    "geometry_msgs/msg/Point",
    "geometry_msgs/msg/Point32",
    "geometry_msgs/msg/Vector3",
    "geometry_msgs/msg/Quaternion",
    "geometry_msgs/msg/Pose",
    "geometry_msgs/msg/Pose2D",
    "geometry_msgs/msg/PoseStamped",
    "geometry_msgs/msg/PoseArray",
    "geometry_msgs/msg/Transform",
    "geometry_msgs/msg/TransformStamped",
    "geometry_msgs/msg/Polygon",
    "geometry_msgs/msg/PolygonStamped",
    "geometry_msgs/msg/Twist",
    "tf2_msgs/msg/TFMessage",
    "sensor_msgs/msg/Image",
    "sensor_msgs/msg/CompressedImage",
    "sensor_msgs/msg/CameraInfo",
    "sensor_msgs/msg/RegionOfInterest",
    "visualization_msgs/msg/Marker",
    "visualization_msgs/msg/MarkerArray",
    "visualization_msgs/msg/ImageMarker",
    "visualization_msgs/msg/UVCoordinate",
    "visualization_msgs/msg/MeshFile",
    "nav_msgs/msg/Path",
    "nav_msgs/msg/Odometry",
    "foxglove_msgs/msg/CompressedVideo",
    "foxglove_msgs/msg/ImageAnnotations",
    "foxglove_msgs/msg/ImageMarkerArray",
    "foxglove_msgs/msg/CircleAnnotation",
    "foxglove_msgs/msg/PointsAnnotation",
    "foxglove_msgs/msg/TextAnnotation",
    "foxglove_msgs/msg/Point2",
    "foxglove_msgs/msg/Color",
]

# foxglove/schemas, schemas/ros2/*.msg at dd8b4f3 (MIT): every type, fields and
# constants only (comments dropped).
FOXGLOVE = {
    "foxglove_msgs/msg/ArrowPrimitive": (
        "geometry_msgs/Pose pose\nfloat64 shaft_length\nfloat64 shaft_diameter\n"
        "float64 head_length\nfloat64 head_diameter\nfoxglove_msgs/Color color\n"
    ),
    "foxglove_msgs/msg/CameraCalibration": (
        "builtin_interfaces/Time timestamp\nstring frame_id\nuint32 width\nuint32 height\n"
        "string distortion_model\nfloat64[] d\nfloat64[9] k\nfloat64[9] r\nfloat64[12] p\n"
    ),
    "foxglove_msgs/msg/CircleAnnotation": (
        "builtin_interfaces/Time timestamp\nfoxglove_msgs/Point2 position\nfloat64 diameter\n"
        "float64 thickness\nfoxglove_msgs/Color fill_color\n"
        "foxglove_msgs/Color outline_color\n"
    ),
    "foxglove_msgs/msg/Color": "float64 r\nfloat64 g\nfloat64 b\nfloat64 a\n",
    "foxglove_msgs/msg/CompressedImage": "builtin_interfaces/Time timestamp\nstring frame_id\nuint8[] data\nstring format\n",
    "foxglove_msgs/msg/CompressedVideo": "builtin_interfaces/Time timestamp\nstring frame_id\nuint8[] data\nstring format\n",
    "foxglove_msgs/msg/CubePrimitive": "geometry_msgs/Pose pose\ngeometry_msgs/Vector3 size\nfoxglove_msgs/Color color\n",
    "foxglove_msgs/msg/CylinderPrimitive": (
        "geometry_msgs/Pose pose\ngeometry_msgs/Vector3 size\nfloat64 bottom_scale\n"
        "float64 top_scale\nfoxglove_msgs/Color color\n"
    ),
    "foxglove_msgs/msg/FrameTransform": (
        "builtin_interfaces/Time timestamp\nstring parent_frame_id\nstring child_frame_id\n"
        "geometry_msgs/Vector3 translation\ngeometry_msgs/Quaternion rotation\n"
    ),
    "foxglove_msgs/msg/FrameTransforms": "foxglove_msgs/FrameTransform[] transforms\n",
    "foxglove_msgs/msg/GeoJSON": "string geojson\n",
    "foxglove_msgs/msg/Grid": (
        "builtin_interfaces/Time timestamp\nstring frame_id\ngeometry_msgs/Pose pose\n"
        "uint32 column_count\nfoxglove_msgs/Vector2 cell_size\nuint32 row_stride\n"
        "uint32 cell_stride\nfoxglove_msgs/PackedElementField[] fields\nuint8[] data\n"
    ),
    "foxglove_msgs/msg/ImageAnnotations": (
        "foxglove_msgs/CircleAnnotation[] circles\nfoxglove_msgs/PointsAnnotation[] points\n"
        "foxglove_msgs/TextAnnotation[] texts\n"
    ),
    "foxglove_msgs/msg/KeyValuePair": "string key\nstring value\n",
    "foxglove_msgs/msg/LaserScan": (
        "builtin_interfaces/Time timestamp\nstring frame_id\ngeometry_msgs/Pose pose\n"
        "float64 start_angle\nfloat64 end_angle\nfloat64[] ranges\nfloat64[] intensities\n"
    ),
    "foxglove_msgs/msg/LinePrimitive": (
        "uint8 LINE_STRIP=0\nuint8 LINE_LOOP=1\nuint8 LINE_LIST=2\nuint8 type\n"
        "geometry_msgs/Pose pose\nfloat64 thickness\nbool scale_invariant\n"
        "geometry_msgs/Point[] points\nfoxglove_msgs/Color color\n"
        "foxglove_msgs/Color[] colors\nuint32[] indices\n"
    ),
    "foxglove_msgs/msg/LocationFix": (
        "builtin_interfaces/Time timestamp\nstring frame_id\nfloat64 latitude\n"
        "float64 longitude\nfloat64 altitude\nfloat64[9] position_covariance\n"
        "uint8 UNKNOWN=0\nuint8 APPROXIMATED=1\nuint8 DIAGONAL_KNOWN=2\nuint8 KNOWN=3\n"
        "uint8 position_covariance_type\n"
    ),
    "foxglove_msgs/msg/Log": (
        "builtin_interfaces/Time timestamp\nuint8 UNKNOWN=0\nuint8 DEBUG=1\nuint8 INFO=2\n"
        "uint8 WARNING=3\nuint8 ERROR=4\nuint8 FATAL=5\nuint8 level\nstring message\n"
        "string name\nstring file\nuint32 line\n"
    ),
    "foxglove_msgs/msg/ModelPrimitive": (
        "geometry_msgs/Pose pose\ngeometry_msgs/Vector3 scale\nfoxglove_msgs/Color color\n"
        "bool override_color\nstring url\nstring media_type\nuint8[] data\n"
    ),
    "foxglove_msgs/msg/PackedElementField": (
        "string name\nuint32 offset\nuint8 UNKNOWN=0\nuint8 UINT8=1\nuint8 INT8=2\n"
        "uint8 UINT16=3\nuint8 INT16=4\nuint8 UINT32=5\nuint8 INT32=6\nuint8 FLOAT32=7\n"
        "uint8 FLOAT64=8\nuint8 type\n"
    ),
    "foxglove_msgs/msg/Point2": "float64 x\nfloat64 y\n",
    "foxglove_msgs/msg/PointCloud": (
        "builtin_interfaces/Time timestamp\nstring frame_id\ngeometry_msgs/Pose pose\n"
        "uint32 point_stride\nfoxglove_msgs/PackedElementField[] fields\nuint8[] data\n"
    ),
    "foxglove_msgs/msg/PointsAnnotation": (
        "builtin_interfaces/Time timestamp\nuint8 UNKNOWN=0\nuint8 POINTS=1\n"
        "uint8 LINE_LOOP=2\nuint8 LINE_STRIP=3\nuint8 LINE_LIST=4\nuint8 type\n"
        "foxglove_msgs/Point2[] points\nfoxglove_msgs/Color outline_color\n"
        "foxglove_msgs/Color[] outline_colors\nfoxglove_msgs/Color fill_color\n"
        "float64 thickness\n"
    ),
    "foxglove_msgs/msg/PoseInFrame": "builtin_interfaces/Time timestamp\nstring frame_id\ngeometry_msgs/Pose pose\n",
    "foxglove_msgs/msg/PosesInFrame": "builtin_interfaces/Time timestamp\nstring frame_id\ngeometry_msgs/Pose[] poses\n",
    "foxglove_msgs/msg/RawImage": (
        "builtin_interfaces/Time timestamp\nstring frame_id\nuint32 width\nuint32 height\n"
        "string encoding\nuint32 step\nuint8[] data\n"
    ),
    "foxglove_msgs/msg/SceneEntity": (
        "builtin_interfaces/Time timestamp\nstring frame_id\nstring id\n"
        "builtin_interfaces/Duration lifetime\nbool frame_locked\n"
        "foxglove_msgs/KeyValuePair[] metadata\nfoxglove_msgs/ArrowPrimitive[] arrows\n"
        "foxglove_msgs/CubePrimitive[] cubes\nfoxglove_msgs/SpherePrimitive[] spheres\n"
        "foxglove_msgs/CylinderPrimitive[] cylinders\nfoxglove_msgs/LinePrimitive[] lines\n"
        "foxglove_msgs/TriangleListPrimitive[] triangles\n"
        "foxglove_msgs/TextPrimitive[] texts\nfoxglove_msgs/ModelPrimitive[] models\n"
    ),
    "foxglove_msgs/msg/SceneEntityDeletion": (
        "builtin_interfaces/Time timestamp\nuint8 MATCHING_ID=0\nuint8 ALL=1\nuint8 type\n"
        "string id\n"
    ),
    "foxglove_msgs/msg/SceneUpdate": (
        "foxglove_msgs/SceneEntityDeletion[] deletions\n"
        "foxglove_msgs/SceneEntity[] entities\n"
    ),
    "foxglove_msgs/msg/SpherePrimitive": "geometry_msgs/Pose pose\ngeometry_msgs/Vector3 size\nfoxglove_msgs/Color color\n",
    "foxglove_msgs/msg/TextAnnotation": (
        "builtin_interfaces/Time timestamp\nfoxglove_msgs/Point2 position\nstring text\n"
        "float64 font_size\nfoxglove_msgs/Color text_color\n"
        "foxglove_msgs/Color background_color\n"
    ),
    "foxglove_msgs/msg/TextPrimitive": (
        "geometry_msgs/Pose pose\nbool billboard\nfloat64 font_size\nbool scale_invariant\n"
        "foxglove_msgs/Color color\nstring text\n"
    ),
    "foxglove_msgs/msg/TriangleListPrimitive": (
        "geometry_msgs/Pose pose\ngeometry_msgs/Point[] points\nfoxglove_msgs/Color color\n"
        "foxglove_msgs/Color[] colors\nuint32[] indices\n"
    ),
    "foxglove_msgs/msg/Vector2": "float64 x\nfloat64 y\n",
    # An older foxglove_msgs type, no longer in foxglove/schemas.
    "foxglove_msgs/msg/ImageMarkerArray": "visualization_msgs/ImageMarker[] markers\n",
}


def store():
    ts = get_typestore(Stores.ROS2_HUMBLE)
    types = {}
    for name, text in FOXGLOVE.items():
        types.update(get_types_from_msg(text, name))
    ts.register(types)
    return ts


# Every message of these packages is built in (with what it uses): ROS 2's
# common_interfaces (std_srvs has only services), tf2_msgs,
# builtin_interfaces, rosgraph_msgs (a simulation's /clock) and
# foxglove_msgs.
PACKAGES = [
    "actionlib_msgs",
    "builtin_interfaces",
    "diagnostic_msgs",
    "foxglove_msgs",
    "geometry_msgs",
    "nav_msgs",
    "rosgraph_msgs",
    "sensor_msgs",
    "shape_msgs",
    "std_msgs",
    "stereo_msgs",
    "tf2_msgs",
    "trajectory_msgs",
    "visualization_msgs",
]


def builtin_types(ts) -> list[str]:
    """Every message type of PACKAGES, sorted."""
    return sorted(n for n in ts.fielddefs if n.split("/")[0] in PACKAGES and n.split("/")[1] == "msg")


def short(name: str) -> str:
    pkg, _, typ = name.split("/")
    return f"{pkg}/{typ}"


def type_text(desc) -> str:
    kind, rest = desc
    if kind == Nodetype.BASE:
        base, bound = rest
        return f"{base}<={bound}" if bound else base
    if kind == Nodetype.NAME:
        return short(rest)
    if kind == Nodetype.ARRAY:
        sub, n = rest
        return f"{type_text(sub)}[{n}]"
    if kind == Nodetype.SEQUENCE:
        sub, bound = rest
        return f"{type_text(sub)}[<={bound}]" if bound else f"{type_text(sub)}[]"
    raise ValueError(desc)


def msg_text(ts, name: str) -> str:
    consts, fields = ts.fielddefs[name]
    lines = []
    for cname, ctype, value in consts:
        if ctype == "string":
            lines.append(f"string {cname}={value}")
        else:
            lines.append(f"{ctype} {cname}={value!r}")
    if [f for f, _ in fields] == ["structure_needs_at_least_one_member"]:
        # rosbags spells out the byte CDR writes for a type with no fields;
        # the .msg file has none.
        fields = []
    for fname, desc in fields:
        lines.append(f"{type_text(desc)} {fname}")
    return "\n".join(lines) + "\n"


def deps(ts, name: str, out: list[str]) -> None:
    if name in out:
        return
    out.append(name)
    _, fields = ts.fielddefs[name]

    def walk(desc):
        kind, rest = desc
        if kind == Nodetype.NAME:
            deps(ts, rest, out)
        elif kind in (Nodetype.ARRAY, Nodetype.SEQUENCE):
            walk(rest[0])

    for _, desc in fields:
        walk(desc)


def write_builtin(ts) -> None:
    names: list[str] = []
    for t in builtin_types(ts):
        deps(ts, t, names)
    names.sort()
    out = [
        "//! The built-in message definitions: ROS 2 Humble's `.msg` texts of every",
        "//! message of common_interfaces, tf2_msgs, builtin_interfaces and",
        "//! rosgraph_msgs (and Foxglove's `foxglove_msgs`), generated by",
        "//! `scripts/ros-cdr-fixtures.py` from `rosbags`' Humble type store. Do not",
        "//! edit by hand.",
        "",
        "/// `(full type name, .msg text)`.",
        "pub(super) const BUILTIN: &[(&str, &str)] = &[",
    ]
    for n in names:
        out.append(f"    ({json.dumps(n)}, {json.dumps(msg_text(ts, n))}),")
    out.append("];")
    path = ROOT / "src/ros/msgdef/builtin.rs"
    path.write_text("\n".join(out) + "\n")
    subprocess.run(["rustfmt", "--edition", "2024", str(path)], check=True)


# ---------------------------------------------------------------- messages


def make_value(ts, desc, rng: random.Random, depth: int, big: bool):
    kind, rest = desc
    if kind == Nodetype.BASE:
        return prim(rest[0], rng)
    if kind == Nodetype.NAME:
        return make_msg(ts, rest, rng, depth + 1, big)
    sub, n = rest
    if kind == Nodetype.SEQUENCE:
        n = rng.choice([0, 1, 3]) if not big else rng.choice([0, 2, 5])
        if depth > 3:
            n = min(n, 1)
    if sub[0] == Nodetype.BASE and sub[1][0] != "string":
        base = sub[1][0]
        dt = {
            "bool": np.bool_, "byte": np.uint8, "char": np.uint8, "uint8": np.uint8,
            "int8": np.int8, "int16": np.int16, "uint16": np.uint16, "int32": np.int32,
            "uint32": np.uint32, "int64": np.int64, "uint64": np.uint64,
            "float32": np.float32, "float64": np.float64,
        }[base]
        return np.array([prim(base, rng) for _ in range(n)], dtype=dt)
    return [make_value(ts, sub, rng, depth + 1, big) for _ in range(n)]


FLOATS = [0.0, -0.0, 1.5, -2.25, 1e300, -1e-300, math.nan, math.inf, -math.inf, 3.141592653589793]
STRINGS = ["", "map", "base_link", "héllo wörld ✓ 日本", "a\tb", "x" * 17]


def prim(base: str, rng: random.Random):
    if base == "bool":
        return rng.choice([True, False])
    if base == "byte":
        # rosbags writes a byte as a signed one.
        return rng.choice([0, 1, 100, 127])
    if base in ("char", "uint8"):
        return rng.choice([0, 1, 200, 255])
    if base == "int8":
        return rng.choice([-128, -1, 0, 127])
    if base == "int16":
        return rng.choice([-32768, -7, 300, 32767])
    if base == "uint16":
        return rng.choice([0, 65535, 258])
    if base == "int32":
        return rng.choice([-(2**31), -5, 0, 2**31 - 1, 123456])
    if base == "uint32":
        return rng.choice([0, 2**32 - 1, 1000])
    if base == "int64":
        return rng.choice([-(2**63), -3, 2**63 - 1, 10**12])
    if base == "uint64":
        return rng.choice([0, 2**64 - 1, 2**40 + 3])
    if base == "float32":
        return float(np.float32(rng.choice(FLOATS[:4] + FLOATS[6:])))
    if base == "float64":
        return rng.choice(FLOATS)
    if base == "string":
        return rng.choice(STRINGS)
    raise ValueError(base)


def make_msg(ts, name: str, rng: random.Random, depth: int = 0, big: bool = False):
    cls = ts.types[name]
    _, fields = ts.fielddefs[name]
    args = {f: make_value(ts, d, rng, depth, big) for f, d in fields}
    return cls(**args)


def to_json(v):
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        f = float(v)
        if math.isnan(f):
            return "NaN"
        if math.isinf(f):
            return "inf" if f > 0 else "-inf"
        # As text, so the Rust side parses it exactly (serde_json's own
        # float parsing may be a bit off).
        return repr(f)
    if isinstance(v, str):
        return v
    if isinstance(v, np.ndarray):
        if v.dtype == np.uint8:
            return {"bytes": v.tobytes().hex()}
        return [to_json(x) for x in v]
    if isinstance(v, list):
        return [to_json(x) for x in v]
    if hasattr(v, "__msgtype__"):
        return {
            "type": v.__msgtype__,
            "fields": [[f, field_json(getattr(v, f), d)] for f, d in STORE.fielddefs[v.__msgtype__][1]],
        }
    raise TypeError(type(v))


def field_json(v, desc):
    """A field's value as JSON: a `byte` array (which rosbags gives as
    signed numbers) as bytes, as underlay decodes it."""
    kind, rest = desc
    if kind in (Nodetype.ARRAY, Nodetype.SEQUENCE) and rest[0] == (Nodetype.BASE, ("byte", 0)):
        return {"bytes": np.asarray(v).astype(np.uint8).tobytes().hex()}
    return to_json(v)


def write_messages(ts) -> None:
    rng = random.Random(20261128)
    out = []
    for name in TYPES:
        for i in range(3):
            big = i == 2
            little = not (big and name in BIG_ENDIAN)
            msg = make_msg(ts, name, rng, big=big)
            raw = bytes(ts.serialize_cdr(msg, name, little_endian=little))
            back = ts.deserialize_cdr(raw, name)
            out.append({"type": name, "cdr": raw.hex(), "value": to_json(back)})
    # One message of every other built-in type (after the others, so theirs
    # stay as they were).
    rng = random.Random(20270114)
    for name in builtin_types(ts):
        if name in TYPES:
            continue
        msg = make_msg(ts, name, rng)
        raw = bytes(ts.serialize_cdr(msg, name))
        back = ts.deserialize_cdr(raw, name)
        out.append({"type": name, "cdr": raw.hex(), "value": to_json(back)})
    path = ROOT / "tests/data/ros/cdr/messages.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, separators=(",", ":"), ensure_ascii=False).replace("},{", "},\n{") + "\n")


BIG_ENDIAN = {
    "std_msgs/msg/Header",
    "visualization_msgs/msg/Marker",
    "sensor_msgs/msg/CameraInfo",
    "geometry_msgs/msg/Pose2D",
    "foxglove_msgs/msg/ImageAnnotations",
}


def write_schemas(ts) -> None:
    out = []
    for name in [
        "visualization_msgs/msg/MarkerArray",
        "sensor_msgs/msg/CameraInfo",
        "tf2_msgs/msg/TFMessage",
        "nav_msgs/msg/Odometry",
    ]:
        text, _ = ts.generate_msgdef(name, ros_version=2)
        out.append({"type": name, "encoding": "ros2msg", "text": text})
    (ROOT / "tests/data/ros/cdr/mcap-schemas.json").write_text(json.dumps(out, indent=1) + "\n")


STORE = store()


def main() -> None:
    ts = STORE
    write_builtin(ts)
    write_messages(ts)
    write_schemas(ts)


if __name__ == "__main__":
    main()
