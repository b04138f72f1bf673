#!/usr/bin/env python3
"""Writes an underlay demo folder as a ROS 2 recording (MCAP or rosbag2's
SQLite .db3): the test material of the ROS readers.

    ros-demo-bag.py DEMO_DIR OUT [--format mcap|db3] [--frames N]
        [--start-frame K] [--image raw|jpeg|png] [--scale S]
        [--compression zstd|lz4|none] [--no-chunks] [--no-summary]
        [--db3-without-definitions] [--delete-all-at SECONDS] [--moving-camera]
        [--picture-markers] [--no-verify]

DEMO_DIR holds `video.mp4`, `truth/camera.toml` (K, distortion [k1, k2],
R and t of OpenCV's convention with the world in mm, the floor z = 0, the
camera centre `eye`) and `truth/trajectory.csv` (per video frame: the ball and
the twelve robots in mm, headings in rad). The recording has, in the world
frame `map` and in metres:

- `/camera/image_raw` (`sensor_msgs/msg/Image`, bgr8; `--image raw`) or
  `/camera/image_raw/compressed` (`sensor_msgs/msg/CompressedImage`, jpeg
  quality 95 or png), frame `camera_optical`;
- `/camera/camera_info` (`sensor_msgs/msg/CameraInfo`, plumb_bob);
- `/tf_static` (one message at t0, transient local): `map → camera_link`
  (REP-103 body axes) and `camera_link → camera_optical` (the optical
  rotation), so that `map → camera_optical` is the true camera;
- `/tf`: `map → blue_0` every frame;
- `/markers` (`visualization_msgs/msg/MarkerArray`) every frame: the ball,
  the robots, a plan line, the ball's trail, a label, a frame-locked heading
  arrow; the frame at `--delete-all-at` seconds (5.0) starts with DELETEALL;
- with `--picture-markers`, drawings in the picture's pixels every frame:
  `/detections` (`visualization_msgs/msg/ImageMarker`), a red circle of
  radius 10 px around the ball's true projection, and `/annotations`
  (`foxglove_msgs/msg/ImageAnnotations`), a yellow square of ±12 px around
  robot blue 0's true projection and its name, at the top-left of the
  square. Pixel coordinates there put the origin at the top-left corner of
  the top-left pixel, as Foxglove's schemas say.

Header stamps are t0 = 1 700 000 000 s plus the video time; each message is
logged 20 ms after its stamp. Messages are serialised once (CDR, by rosbags'
typestore of ROS 2 Humble) and the definitions written are that typestore's,
so an MCAP and a db3 made with the same options hold the same bytes. The
camera model carried by TF + CameraInfo is checked against the truth by
projecting truth points both ways (the maximum difference is printed); the
recording is read back and every message decoded by mcap_ros2 (another CDR
implementation) from the definitions in the file. The output is written
under a temporary name and renamed.
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import shutil
import sqlite3
import sys
import tomllib
from pathlib import Path

import cv2
import numpy as np
from rosbags.interfaces import Nodetype
from rosbags.typesys import Stores, get_typestore

T0_NS = 1_700_000_000 * 1_000_000_000
LOG_LATENCY_NS = 20_000_000
TRAIL = 30
BALL_RADIUS = 0.0215
TS = get_typestore(Stores.ROS2_HUMBLE)

IMAGE = "sensor_msgs/msg/Image"
COMPRESSED = "sensor_msgs/msg/CompressedImage"
CAMERA_INFO = "sensor_msgs/msg/CameraInfo"
TF = "tf2_msgs/msg/TFMessage"
MARKERS = "visualization_msgs/msg/MarkerArray"
IMAGE_MARKER = "visualization_msgs/msg/ImageMarker"
ANNOTATIONS = "foxglove_msgs/msg/ImageAnnotations"


def register_foxglove_types():
    """Foxglove's message types, which rosbags does not know, from the
    definitions scripts/ros-cdr-fixtures.py keeps."""
    import importlib.util

    from rosbags.typesys import get_types_from_msg

    spec = importlib.util.spec_from_file_location(
        "ros_cdr_fixtures", Path(__file__).with_name("ros-cdr-fixtures.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for name, text in mod.FOXGLOVE.items():
        if name not in TS.fielddefs:
            TS.register(get_types_from_msg(text, name))

# Marker types and actions (visualization_msgs/msg/Marker).
ARROW, SPHERE, CYLINDER, LINE_STRIP, POINTS, TEXT = 0, 2, 3, 4, 8, 9
ADD, DELETEALL = 0, 3

BASE_DEFAULTS = {"string": "", "bool": False, "float32": 0.0, "float64": 0.0}


# ---------------------------------------------------------------- messages


def default(node):
    """The zero value of a typestore field type."""
    kind, detail = node
    if kind == Nodetype.BASE:
        return BASE_DEFAULTS.get(detail[0], 0)
    if kind == Nodetype.NAME:
        return make(detail)
    inner, size = detail
    if kind == Nodetype.ARRAY:
        if inner[0] == Nodetype.BASE and inner[1][0] != "string":
            dtype = np.float64 if inner[1][0].startswith("float") else np.uint8
            return np.zeros(size, dtype=dtype)
        return [default(inner) for _ in range(size)]
    # a sequence
    if inner[0] == Nodetype.BASE and inner[1][0] == "uint8":
        return np.zeros(0, dtype=np.uint8)
    if inner[0] == Nodetype.BASE and inner[1][0] == "float64":
        return np.zeros(0, dtype=np.float64)
    return []


def make(typename, **fields):
    """A message of `typename`, its fields zero unless given."""
    values = {}
    for name, node in TS.fielddefs[typename][1]:
        values[name] = fields.pop(name) if name in fields else default(node)
    if fields:
        raise ValueError(f"{typename} has no field(s) {sorted(fields)}")
    return TS.types[typename](**values)


def stamp(ns):
    return make("builtin_interfaces/msg/Time", sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)


def header(ns, frame_id):
    return make("std_msgs/msg/Header", stamp=stamp(ns), frame_id=frame_id)


def vec3(x, y, z, typename="geometry_msgs/msg/Vector3"):
    return make(typename, x=float(x), y=float(y), z=float(z))


def quat(q):
    x, y, z, w = (float(v) for v in q)
    return make("geometry_msgs/msg/Quaternion", x=x, y=y, z=z, w=w)


def transform(ns, parent, child, translation, q):
    return make(
        "geometry_msgs/msg/TransformStamped",
        header=header(ns, parent),
        child_frame_id=child,
        transform=make(
            "geometry_msgs/msg/Transform", translation=vec3(*translation), rotation=quat(q)
        ),
    )


def color(r, g, b):
    return make("std_msgs/msg/ColorRGBA", r=float(r), g=float(g), b=float(b), a=1.0)


def duration(ns):
    return make("builtin_interfaces/msg/Duration", sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)


# ---------------------------------------------------------------- rotations


def quat_to_matrix(q):
    x, y, z, w = q
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def matrix_to_quat(m):
    """(x, y, z, w) of a rotation matrix, w ≥ 0."""
    tr = np.trace(m)
    if tr > 0:
        s = math.sqrt(tr + 1.0) * 2
        w, x, y, z = 0.25 * s, (m[2, 1] - m[1, 2]) / s, (m[0, 2] - m[2, 0]) / s, (m[1, 0] - m[0, 1]) / s
    elif m[0, 0] > m[1, 1] and m[0, 0] > m[2, 2]:
        s = math.sqrt(1.0 + m[0, 0] - m[1, 1] - m[2, 2]) * 2
        w, x, y, z = (m[2, 1] - m[1, 2]) / s, 0.25 * s, (m[0, 1] + m[1, 0]) / s, (m[0, 2] + m[2, 0]) / s
    elif m[1, 1] > m[2, 2]:
        s = math.sqrt(1.0 + m[1, 1] - m[0, 0] - m[2, 2]) * 2
        w, x, y, z = (m[0, 2] - m[2, 0]) / s, (m[0, 1] + m[1, 0]) / s, 0.25 * s, (m[1, 2] + m[2, 1]) / s
    else:
        s = math.sqrt(1.0 + m[2, 2] - m[0, 0] - m[1, 1]) * 2
        w, x, y, z = (m[1, 0] - m[0, 1]) / s, (m[0, 2] + m[2, 0]) / s, (m[1, 2] + m[2, 1]) / s, 0.25 * s
    q = np.array([x, y, z, w])
    q /= np.linalg.norm(q)
    return q if q[3] >= 0 else -q


def yaw_quat(yaw):
    return (0.0, 0.0, math.sin(yaw / 2), math.cos(yaw / 2))


# The standard rotation from a camera's body frame (x forward, y left, z up)
# to its optical frame (x right, y down, z forward).
LINK_TO_OPTICAL_Q = (-0.5, 0.5, -0.5, 0.5)


# ---------------------------------------------------------------- the demo


class Camera:
    """The true camera, possibly scaled to a smaller picture."""

    def __init__(self, path: Path, scale: float):
        with path.open("rb") as f:
            t = tomllib.load(f)
        self.width0, self.height0 = int(t["width"]), int(t["height"])
        self.width = max(1, round(self.width0 * scale))
        self.height = max(1, round(self.height0 * scale))
        sx, sy = self.width / self.width0, self.height / self.height0
        k = np.array(t["k"], dtype=float)
        # Pixel centres at integers: a pixel's centre u maps to (u + 0.5)·s − 0.5.
        k[0, 0] *= sx
        k[0, 1] *= sx
        k[0, 2] = (k[0, 2] + 0.5) * sx - 0.5
        k[1, 1] *= sy
        k[1, 2] = (k[1, 2] + 0.5) * sy - 0.5
        self.k = k
        k1, k2 = t["distortion"][:2]
        self.d = np.array([k1, k2, 0.0, 0.0, 0.0])
        self.r = np.array(t["r"], dtype=float)  # world (mm) → camera
        self.t_mm = np.array(t["t"], dtype=float)
        self.eye_mm = np.array(t["eye"], dtype=float)
        self.centre_mm = -self.r.T @ self.t_mm

    def static_transforms(self):
        """(translation m, quaternion) of map → camera_link and camera_link → camera_optical."""
        map_from_optical = self.r.T  # columns: the optical axes in map
        link_from_optical = quat_to_matrix(LINK_TO_OPTICAL_Q)
        map_from_link = map_from_optical @ link_from_optical.T
        return (
            (self.centre_mm / 1000.0, matrix_to_quat(map_from_link)),
            ((0.0, 0.0, 0.0), LINK_TO_OPTICAL_Q),
        )


def read_trajectory(path: Path):
    rows = []
    with path.open(newline="") as f:
        for row in csv.DictReader(f):
            rows.append({k: float(v) for k, v in row.items()})
    if not rows:
        raise SystemExit(f"{path}: no rows")
    return rows


def check_tf_chain(cam: Camera, rows) -> float:
    """Projects truth points through TF + K/D and through the true R, t: the
    maximum difference in pixels."""
    (p_link, q_link), (p_opt, q_opt) = cam.static_transforms()
    r_map_link = quat_to_matrix(q_link)
    r_link_opt = quat_to_matrix(q_opt)
    r_map_opt = r_map_link @ r_link_opt
    p_map_opt = np.asarray(p_link) + r_map_link @ np.asarray(p_opt)
    # camera coordinates of a map point: R_map_opt^T (X − p)
    r_cam = r_map_opt.T
    t_cam = -r_cam @ p_map_opt
    pts_mm = []
    for row in rows[:: max(1, len(rows) // 20)]:
        pts_mm.append((row["ball_x"], row["ball_y"], row["ball_height"]))
        for team in ("blue", "yellow"):
            for i in range(6):
                pts_mm.append((row[f"{team}_{i}_x"], row[f"{team}_{i}_y"], 0.0))
                pts_mm.append((row[f"{team}_{i}_x"], row[f"{team}_{i}_y"], 150.0))
    pts_mm = np.array(pts_mm, dtype=float)
    rvec_tf, _ = cv2.Rodrigues(r_cam)
    via_tf, _ = cv2.projectPoints(pts_mm / 1000.0, rvec_tf, t_cam, cam.k, cam.d)
    rvec_true, _ = cv2.Rodrigues(cam.r)
    truth, _ = cv2.projectPoints(pts_mm, rvec_true, cam.t_mm, cam.k, cam.d)
    return float(np.max(np.abs(via_tf - truth)))


def frames(video: Path, start: int, count: int, cam: Camera):
    cap = cv2.VideoCapture(str(video))
    if not cap.isOpened():
        raise SystemExit(f"{video}: cannot open")
    try:
        for _ in range(start):
            if not cap.grab():
                raise SystemExit(f"{video}: fewer than {start} frames")
        for i in range(count):
            ok, img = cap.read()
            if not ok:
                raise SystemExit(f"{video}: ends at frame {start + i}")
            if img.shape[1] != cam.width0 or img.shape[0] != cam.height0:
                raise SystemExit(
                    f"{video}: frames are {img.shape[1]}×{img.shape[0]}, camera.toml says "
                    f"{cam.width0}×{cam.height0}"
                )
            if (cam.width, cam.height) != (cam.width0, cam.height0):
                img = cv2.resize(img, (cam.width, cam.height), interpolation=cv2.INTER_AREA)
            yield img
    finally:
        cap.release()


def image_message(img, ns, kind):
    h = header(ns, "camera_optical")
    if kind == "raw":
        data = np.ascontiguousarray(img, dtype=np.uint8).reshape(-1)
        return make(
            IMAGE,
            header=h,
            height=img.shape[0],
            width=img.shape[1],
            encoding="bgr8",
            is_bigendian=0,
            step=img.shape[1] * 3,
            data=data,
        )
    if kind == "jpeg":
        ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, 95])
        fmt = "bgr8; jpeg compressed bgr8"
    else:
        ok, buf = cv2.imencode(".png", img)
        fmt = "bgr8; png compressed bgr8"
    if not ok:
        raise SystemExit(f"cannot encode a frame as {kind}")
    return make(COMPRESSED, header=h, format=fmt, data=np.asarray(buf, dtype=np.uint8).reshape(-1))


def camera_info_message(cam: Camera, ns):
    k = cam.k
    p = np.zeros(12)
    p[0:3], p[4:7], p[8:11] = k[0], k[1], k[2]
    return make(
        CAMERA_INFO,
        header=header(ns, "camera_optical"),
        height=cam.height,
        width=cam.width,
        distortion_model="plumb_bob",
        d=np.array(cam.d, dtype=np.float64),
        k=k.reshape(-1).astype(np.float64),
        r=np.eye(3).reshape(-1),
        p=p,
    )


def marker(ns_time, frame_id, ns, mid, kind, *, pos=(0, 0, 0), scale=(1, 1, 1), rgb=(1, 1, 1), **extra):
    lifetime = extra.pop("lifetime_ns", 0)
    return make(
        "visualization_msgs/msg/Marker",
        header=header(ns_time, frame_id),
        ns=ns,
        id=mid,
        type=kind,
        action=ADD,
        pose=make(
            "geometry_msgs/msg/Pose",
            position=vec3(*pos, typename="geometry_msgs/msg/Point"),
            orientation=quat((0, 0, 0, 1)),
        ),
        scale=vec3(*scale),
        color=color(*rgb),
        lifetime=duration(lifetime),
        **extra,
    )


def markers_message(rows, i, ns_time, delete_all):
    row = rows[i]
    m = lambda v: v / 1000.0  # noqa: E731  mm → m
    bx, by, bh = m(row["ball_x"]), m(row["ball_y"]), m(row["ball_height"])
    rx, ry = m(row["blue_0_x"]), m(row["blue_0_y"])
    out = []
    if delete_all:
        out.append(
            make(
                "visualization_msgs/msg/Marker",
                header=header(ns_time, "map"),
                action=DELETEALL,
                pose=make("geometry_msgs/msg/Pose", orientation=quat((0, 0, 0, 1))),
                color=color(1, 1, 1),
            )
        )
    out.append(
        marker(ns_time, "map", "ball", 0, SPHERE, pos=(bx, by, bh + BALL_RADIUS),
               scale=(2 * BALL_RADIUS,) * 3, rgb=(1.0, 0.5, 0.0))
    )
    for team, rgb in (("blue", (0.1, 0.3, 1.0)), ("yellow", (1.0, 0.9, 0.1))):
        for j in range(6):
            out.append(
                marker(ns_time, "map", f"robots/{team}", j, CYLINDER,
                       pos=(m(row[f"{team}_{j}_x"]), m(row[f"{team}_{j}_y"]), 0.075),
                       scale=(0.18, 0.18, 0.15), rgb=rgb, lifetime_ns=200_000_000)
            )
    point = lambda x, y, z: vec3(x, y, z, typename="geometry_msgs/msg/Point")  # noqa: E731
    out.append(
        marker(ns_time, "map", "plan", 0, LINE_STRIP, scale=(0.02, 0, 0), rgb=(0.2, 1.0, 0.2),
               points=[point(rx, ry, 0.0), point(bx, by, 0.0)])
    )
    first = max(0, i - TRAIL + 1)
    trail = rows[first : i + 1]
    pts, cols = [], []
    for n, r in enumerate(trail):
        fade = (n + 1) / len(trail)  # oldest dark, newest bright
        pts.append(point(m(r["ball_x"]), m(r["ball_y"]), 0.0))
        cols.append(color(1.0 * fade, 0.5 * fade, 0.0))
    out.append(
        marker(ns_time, "map", "trail", 0, POINTS, scale=(0.03, 0.03, 0), rgb=(1.0, 0.5, 0.0),
               points=pts, colors=cols)
    )
    out.append(
        marker(ns_time, "map", "label", 0, TEXT, pos=(rx, ry, 0.3), scale=(0, 0, 0.15),
               rgb=(1, 1, 1), text="blue 0")
    )
    out.append(
        marker(ns_time, "blue_0", "heading", 0, ARROW, scale=(0.3, 0.03, 0.03),
               rgb=(1.0, 0.2, 0.2), frame_locked=True)
    )
    return make(MARKERS, markers=out)


def project(cam: Camera, p_mm):
    """The pixel (centre origin) of a world point in mm through the true camera."""
    rvec, _ = cv2.Rodrigues(cam.r)
    uv, _ = cv2.projectPoints(np.array([p_mm], dtype=float), rvec, cam.t_mm, cam.k, cam.d)
    return float(uv[0, 0, 0]), float(uv[0, 0, 1])


def corner(u, v):
    """A pixel centre as Foxglove's schemas count: from the top-left corner."""
    return u + 0.5, v + 0.5


def point2(u, v):
    return make("foxglove_msgs/msg/Point2", x=u, y=v)


def fox_color(r, g, b, a=1.0):
    return make("foxglove_msgs/msg/Color", r=r, g=g, b=b, a=a)


def image_marker_message(cam: Camera, row, ns_time):
    u, v = corner(*project(cam, (row["ball_x"], row["ball_y"], row["ball_height"] + BALL_RADIUS * 1000)))
    return make(
        IMAGE_MARKER,
        header=header(ns_time, "camera_optical"),
        ns="ball",
        id=0,
        type=0,  # CIRCLE
        action=0,  # ADD
        position=vec3(u, v, 0.0, typename="geometry_msgs/msg/Point"),
        scale=10.0,
        outline_color=color(1.0, 0.0, 0.0),
        filled=0,
        fill_color=color(0.0, 0.0, 0.0),
        lifetime=duration(0),
    )


def annotations_message(cam: Camera, row, ns_time):
    u, v = corner(*project(cam, (row["blue_0_x"], row["blue_0_y"], 0.0)))
    stamp_msg = stamp(ns_time)
    square = [point2(u + dx, v + dy) for dx, dy in ((-12, -12), (12, -12), (12, 12), (-12, 12))]
    return make(
        ANNOTATIONS,
        circles=[],
        points=[make("foxglove_msgs/msg/PointsAnnotation", timestamp=stamp_msg, type=2,  # LINE_LOOP
                     points=square, outline_color=fox_color(1.0, 1.0, 0.0), outline_colors=[],
                     fill_color=fox_color(0.0, 0.0, 0.0, 0.0), thickness=2.0)],
        texts=[make("foxglove_msgs/msg/TextAnnotation", timestamp=stamp_msg,
                    position=point2(u - 12, v - 30), text="blue 0", font_size=14.0,
                    text_color=fox_color(1.0, 1.0, 0.0), background_color=fox_color(0.0, 0.0, 0.0))],
    )


# ---------------------------------------------------------------- writers


def qos_yaml(transient_local: bool) -> str:
    """rosbag2's `offered_qos_profiles` text for one publisher."""
    durability = "transient_local" if transient_local else "volatile"
    return (
        "- history: keep_last\n"
        "  depth: 1\n"
        "  reliability: reliable\n"
        f"  durability: {durability}\n"
        "  deadline:\n    sec: 2147483647\n    nsec: 4294967295\n"
        "  lifespan:\n    sec: 2147483647\n    nsec: 4294967295\n"
        "  liveliness: automatic\n"
        "  liveliness_lease_duration:\n    sec: 2147483647\n    nsec: 4294967295\n"
        "  avoid_ros_namespace_conventions: false"
    )


def qos_objects(transient_local: bool):
    from rosbags.interfaces import (
        Qos, QosDurability, QosHistory, QosLiveliness, QosReliability, QosTime,
    )

    inf = QosTime(2147483647, 4294967295)
    return [
        Qos(
            QosHistory.KEEP_LAST, 1, QosReliability.RELIABLE,
            QosDurability.TRANSIENT_LOCAL if transient_local else QosDurability.VOLATILE,
            inf, inf, QosLiveliness.AUTOMATIC, inf, False,
        )
    ]


class McapOut:
    def __init__(self, path: Path, args):
        from mcap.writer import CompressionType, IndexType, Writer

        self.f = path.open("wb")
        compression = {"zstd": CompressionType.ZSTD, "lz4": CompressionType.LZ4,
                       "none": CompressionType.NONE}[args.compression]
        summary = not args.no_summary
        self.w = Writer(
            self.f,
            compression=compression,
            use_chunking=not args.no_chunks,
            index_types=IndexType.ALL if summary else IndexType.NONE,
            repeat_channels=summary,
            repeat_schemas=summary,
            use_statistics=summary,
            use_summary_offsets=summary,
        )
        self.w.start(profile="ros2", library="underlay scripts/ros-demo-bag.py")
        self.schemas = {}
        self.channels = {}

    def add_topic(self, topic, typename, transient_local=False):
        if typename not in self.schemas:
            text, _ = TS.generate_msgdef(typename, ros_version=2)
            self.schemas[typename] = self.w.register_schema(typename, "ros2msg", text.encode())
        self.channels[topic] = self.w.register_channel(
            topic, "cdr", self.schemas[typename],
            metadata={"offered_qos_profiles": qos_yaml(transient_local)},
        )
        return topic

    def write(self, handle, log_time, data):
        self.w.add_message(self.channels[handle], log_time=log_time, data=bytes(data),
                           publish_time=log_time)

    def close(self):
        self.w.finish()
        self.f.close()


class Db3Out:
    def __init__(self, tmpdir: Path, args):
        from rosbags.rosbag2 import Writer

        self.w = Writer(tmpdir / "bag", version=9)
        self.w.open()
        self.db = tmpdir / "bag" / "bag.db3"
        self.without_definitions = args.db3_without_definitions

    def add_topic(self, topic, typename, transient_local=False):
        return self.w.add_connection(topic, typename, typestore=TS,
                                     offered_qos_profiles=qos_objects(transient_local))

    def write(self, handle, log_time, data):
        self.w.write(handle, log_time, data)

    def close(self):
        self.w.close()
        if self.without_definitions:
            # As rosbag2 before Iron wrote it: no definitions, schema version 3.
            con = sqlite3.connect(self.db)
            con.execute("DROP TABLE message_definitions")
            con.execute("UPDATE schema SET schema_version = 3")
            con.commit()
            con.execute("VACUUM")
            con.close()


def stamp_ns(msg):
    """The header stamp (ns) of a decoded message (the first transform's or
    marker's when it has no header)."""
    if hasattr(msg, "header"):
        h = msg.header
    elif getattr(msg, "points", None):
        s = msg.points[0].timestamp
        return s.sec * 1_000_000_000 + s.nanosec
    elif getattr(msg, "transforms", None):
        h = msg.transforms[0].header
    else:
        h = msg.markers[0].header
    return h.stamp.sec * 1_000_000_000 + h.stamp.nanosec


def verify(path: Path, fmt: str, counts):
    """Reads the recording back with other code than wrote it (mcap's
    reader, SQLite) and decodes every message with mcap_ros2's CDR decoder
    from the definitions the file carries: the counts per topic, log time =
    stamp + 20 ms, time order. Returns the number of messages checked."""
    from mcap_ros2._dynamic import generate_dynamic

    seen, last = {}, 0
    decoders = {}

    def check(topic, typename, deftext, log_time, data):
        nonlocal last
        if typename not in decoders:
            decoders[typename] = generate_dynamic(typename, deftext)[typename]
        msg = decoders[typename](bytes(data))
        if log_time != stamp_ns(msg) + LOG_LATENCY_NS:
            raise SystemExit(f"verify: {topic} at {log_time}: stamp {stamp_ns(msg)}")
        if log_time < last:
            raise SystemExit(f"verify: {topic} at {log_time} before {last}")
        last = log_time
        seen[topic] = seen.get(topic, 0) + 1

    if fmt == "mcap":
        from mcap.reader import make_reader

        with path.open("rb") as f:
            for schema, channel, message in make_reader(f).iter_messages(log_time_order=True):
                check(channel.topic, schema.name, schema.data.decode(), message.log_time, message.data)
    else:
        con = sqlite3.connect(f"file:{path}?immutable=1", uri=True)
        try:
            defs = {}
            if con.execute("SELECT 1 FROM sqlite_master WHERE name = 'message_definitions'").fetchone():
                defs = dict(con.execute(
                    "SELECT topic_type, encoded_message_definition FROM message_definitions"))
            topics = {i: (n, t) for i, n, t in con.execute("SELECT id, name, type FROM topics")}
            rows = con.execute("SELECT topic_id, timestamp, data FROM messages ORDER BY timestamp, id")
            for topic_id, log_time, data in rows:
                name, typename = topics[topic_id]
                deftext = defs.get(typename) or TS.generate_msgdef(typename, ros_version=2)[0]
                check(name, typename, deftext, log_time, data)
        finally:
            con.close()
    if seen != counts:
        raise SystemExit(f"verify: read back {seen}, wrote {counts}")
    return sum(seen.values())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("demo_dir", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--format", choices=["mcap", "db3"], default=None,
                    help="default: from OUT's extension, else mcap")
    ap.add_argument("--frames", type=int, default=None, help="how many video frames (default all)")
    ap.add_argument("--start-frame", type=int, default=0)
    ap.add_argument("--image", choices=["raw", "jpeg", "png"], default="raw")
    ap.add_argument("--scale", type=float, default=1.0,
                    help="scale the pictures and K by this factor (0 < S ≤ 1)")
    ap.add_argument("--compression", choices=["zstd", "lz4", "none"], default="zstd",
                    help="MCAP chunk compression (db3: ignored)")
    ap.add_argument("--no-chunks", action="store_true", help="MCAP: messages outside chunks")
    ap.add_argument("--no-summary", action="store_true", help="MCAP: no summary section or indexes")
    ap.add_argument("--db3-without-definitions", action="store_true",
                    help="db3: no message_definitions table (as before rosbag2 Iron)")
    ap.add_argument("--no-verify", action="store_true",
                    help="do not read the recording back and decode every message")
    ap.add_argument("--moving-camera", action="store_true",
                    help="map → camera_link on /tf every frame, the camera 5 cm further along x "
                         "each frame (the pictures stay the demo's: for testing the per-frame camera)")
    ap.add_argument("--picture-markers", action="store_true",
                    help="also /detections (ImageMarker) and /annotations (ImageAnnotations) in pixels")
    ap.add_argument("--delete-all-at", type=float, default=5.0,
                    help="video time (s) of the MarkerArray that starts with DELETEALL")
    args = ap.parse_args()
    fmt = args.format or ("db3" if args.out.suffix == ".db3" else "mcap")
    if not 0 < args.scale <= 1:
        ap.error("--scale must be in (0, 1]")

    cam = Camera(args.demo_dir / "truth" / "camera.toml", args.scale)
    rows = read_trajectory(args.demo_dir / "truth" / "trajectory.csv")
    start = args.start_frame
    if not 0 <= start < len(rows):
        ap.error(f"--start-frame {start}: the trajectory has {len(rows)} frames")
    count = len(rows) - start if args.frames is None else min(args.frames, len(rows) - start)

    err = check_tf_chain(cam, rows)
    eye_err = float(np.max(np.abs(cam.centre_mm - cam.eye_mm)))
    print(f"TF chain + K/D vs the true R, t: max difference {err:.2e} px "
          f"(camera centre −Rᵀt vs eye: {eye_err:.3f} mm)")
    if err > 1e-6:
        raise SystemExit("the TF chain does not reproduce the true camera")

    # The frame that starts with DELETEALL: the first at or after --delete-all-at.
    delete_all_frame = next(
        (i for i, r in enumerate(rows) if r["video_time_s"] >= args.delete_all_at - 1e-6), None
    )

    out = args.out.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.parent / f".{out.name}.tmp-{os.getpid()}"
    tmpdir = None
    if fmt == "mcap":
        writer = McapOut(tmp, args)
    else:
        tmpdir = out.parent / f".{out.name}.tmpdir-{os.getpid()}"
        tmpdir.mkdir()
        writer = Db3Out(tmpdir, args)

    counts = {}
    try:
        image_topic = "/camera/image_raw" if args.image == "raw" else "/camera/image_raw/compressed"
        topics = {
            "tf_static": writer.add_topic("/tf_static", TF, transient_local=True),
            "image": writer.add_topic(image_topic, IMAGE if args.image == "raw" else COMPRESSED),
            "info": writer.add_topic("/camera/camera_info", CAMERA_INFO),
            "tf": writer.add_topic("/tf", TF),
            "markers": writer.add_topic("/markers", MARKERS),
        }
        names = {"tf_static": "/tf_static", "image": image_topic, "info": "/camera/camera_info",
                 "tf": "/tf", "markers": "/markers"}
        if args.picture_markers:
            register_foxglove_types()
            topics["detections"] = writer.add_topic("/detections", IMAGE_MARKER)
            topics["annotations"] = writer.add_topic("/annotations", ANNOTATIONS)
            names.update(detections="/detections", annotations="/annotations")

        def put(key, typename, msg, ns):
            data = TS.serialize_cdr(msg, typename)
            writer.write(topics[key], ns + LOG_LATENCY_NS, data)
            counts[names[key]] = counts.get(names[key], 0) + 1

        (p_link, q_link), (p_opt, q_opt) = cam.static_transforms()
        fixed = [transform(T0_NS, "camera_link", "camera_optical", p_opt, q_opt)]
        if not args.moving_camera:
            fixed.insert(0, transform(T0_NS, "map", "camera_link", p_link, q_link))
        put("tf_static", TF, make(TF, transforms=fixed), T0_NS)

        video = args.demo_dir / "video.mp4"
        for n, img in enumerate(frames(video, start, count, cam)):
            i = start + n
            row = rows[i]
            ns = T0_NS + round(row["video_time_s"] * 1e9)
            put("info", CAMERA_INFO, camera_info_message(cam, ns), ns)
            typename = IMAGE if args.image == "raw" else COMPRESSED
            put("image", typename, image_message(img, ns, args.image), ns)
            moving = [transform(ns, "map", "blue_0",
                                (row["blue_0_x"] / 1000.0, row["blue_0_y"] / 1000.0, 0.0),
                                yaw_quat(row["blue_0_heading"]))]
            if args.moving_camera:
                mast = (p_link[0] + 0.05 * n, p_link[1], p_link[2])
                moving.append(transform(ns, "map", "camera_link", mast, q_link))
            put("tf", TF, make(TF, transforms=moving), ns)
            put("markers", MARKERS, markers_message(rows, i, ns, i == delete_all_frame), ns)
            if args.picture_markers:
                put("detections", IMAGE_MARKER, image_marker_message(cam, row, ns), ns)
                put("annotations", ANNOTATIONS, annotations_message(cam, row, ns), ns)
        writer.close()
        written = tmp if fmt == "mcap" else writer.db
        if not args.no_verify:
            n = verify(written, fmt, counts)
            print(f"read back and decoded {n} messages (mcap_ros2's decoder): as written")
        if fmt == "mcap":
            os.replace(tmp, out)
        else:
            os.replace(writer.db, out)
    finally:
        if tmp.exists():
            tmp.unlink()
        if tmpdir is not None:
            shutil.rmtree(tmpdir, ignore_errors=True)

    size = out.stat().st_size
    print(f"wrote {out} ({fmt}, {size} bytes = {size / 1e6:.2f} MB), frames {start}..{start + count - 1}"
          f", {cam.width}×{cam.height}, images {args.image}")
    for topic, n in counts.items():
        print(f"  {topic}: {n}")
    if delete_all_frame is not None and start <= delete_all_frame < start + count:
        print(f"  DELETEALL in the markers of frame {delete_all_frame}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
