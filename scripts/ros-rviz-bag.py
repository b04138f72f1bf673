#!/usr/bin/env python3
"""Writes a ROS 2 recording of what RViz's default displays draw, with the
true picture of everything in it: the test material of the displays of
issue 47 (tests/it/ros_displays.rs).

    ros-rviz-bag.py OUT TRUTH.json [--format mcap|db3] [--frames N]

A fixed camera (640 × 360, plumb_bob lens, on /tf_static: map →
camera_link → camera_optical) films a green floor on which a robot (a dark
box 0.5 × 0.4 × 0.35 m) drives; /camera/image_raw/compressed holds its
pictures (PNG), rendered here. Every frame (10 a second, from t0 =
1 700 000 000 s) the recording has, in metres:

- /tf: odom → base_link (the robot; map → odom is static, turned 0.1 rad),
  base_link → laser (25 cm up) and → sonar (15 cm up) static on /tf_static;
- /scan (sensor_msgs/LaserScan, frame laser): 201 rays from -2 to 2 rad
  cast against the walls of a 7 × 5 m room around the map's origin, some
  rays no return (range 0, +inf, beyond range_max), intensities varying;
- /points (sensor_msgs/PointCloud2, frame base_link): an organised 16 × 8
  cloud on a vertical patch 1.5 m ahead of the robot, x/y/z float32 and
  rgb packed in a float32, rows padded;
- /points_be (PointCloud2, frame map, every 5th frame): 100 points on a
  ring on the floor, big-endian, x and y float64, z float32, intensity
  uint16, padded to 24 bytes a point;
- /range (sensor_msgs/Range, frame sonar): a 0.4 rad cone 1 to 1.5 m long;
- /map (nav_msgs/OccupancyGrid, first frame only): 200 × 140 cells of
  5 cm from (-5, -3.5): the room's walls occupied, inside free, outside
  unknown, an obstacle, a patch of 50s (unknown by map_server's rule);
- /map_updates (map_msgs/OccupancyGridUpdate, at 1.0 s): a 12 × 12
  occupied block;
- /obstacles (nav_msgs/GridCells, frame map): six cells of 10 cm on one
  lattice and one off it;
- /odom (nav_msgs/Odometry, frame odom): the robot's pose with an x/y
  covariance; the robot moves 4.5 cm a frame, so RViz keeps every 3rd;
- /amcl_pose (geometry_msgs/PoseWithCovarianceStamped, frame map, every
  5th frame): the robot's pose in the map, another covariance;
- /goal (geometry_msgs/PointStamped, frame map): a point 10 cm up, just
  behind the robot of frame 19 as the camera sees it (hidden by it then);
- /footprint (geometry_msgs/PolygonStamped, frame base_link): the
  robot's outline on the floor;
- /pose2d (geometry_msgs/Pose2D): a pose in the world frame.

TRUTH.json holds the camera and, for frames 0, 9 and 15, what each display
shows then, as world points projected by OpenCV (cv2.projectPoints) with
the camera's K and distortion (pixels counted from the centre of the
top-left pixel), each with the entity it is drawn as: `points` (each
point's pixel), `area` (a filled shape's outline sampled every 4 cm, or a
cone's and a ball's silhouette, and the width of the outline drawn on it),
`lines` (polylines sampled every 2 cm and their widths in pixels: a
frame's axes, an outline) or `absent` (an outline inside which the entity
draws nothing: where the map's update will be, before it). Messages are serialised by rosbags (ROS 2 Humble's type
store; map_msgs/OccupancyGridUpdate registered from its .msg) and the
definitions written are that store's; the recording is read back and every
message decoded by mcap_ros2 (MCAP) from the definitions in the file.
Output is written under a temporary name and renamed; the same options
write the same bytes.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import shutil
import sys
from pathlib import Path

import cv2
import numpy as np
from rosbags.typesys import get_types_from_msg

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("ros_demo_bag", HERE / "ros-demo-bag.py")
demo = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(demo)
TS, make, header, transform, quat = demo.TS, demo.make, demo.header, demo.transform, demo.quat

T0_NS = demo.T0_NS
LATENCY_NS = demo.LOG_LATENCY_NS
FPS = 10
W, H = 640, 360
K = np.array([[420.0, 0.0, 319.5], [0.0, 420.0, 179.5], [0.0, 0.0, 1.0]])
D = np.array([-0.05, 0.01, 0.0, 0.0, 0.0])
EYE = np.array([-3.9, -4.4, 2.6])
LOOK_AT = np.array([-0.7, 0.1, 0.1])
FLOOR_BGR = (40, 140, 30)
ROBOT_BGR = (55, 55, 60)
ROBOT_SIZE = (0.5, 0.4, 0.35)
MAP_TO_ODOM = ((0.3, -0.2, 0.0), 0.1)  # translation, yaw
LASER = (0.1, 0.0, 0.25)
SONAR = (0.25, 0.0, 0.15)
ROOM = (3.5, 2.5)  # half sizes of the room's inside (map frame)
TRUTH_FRAMES = (0, 9, 15)

UPDATE = "map_msgs/msg/OccupancyGridUpdate"
UPDATE_MSG = """std_msgs/Header header
int32 x
int32 y
uint32 width
uint32 height
int8[] data
"""
if UPDATE not in TS.fielddefs:
    TS.register(get_types_from_msg(UPDATE_MSG, UPDATE))

# ---------------------------------------------------------------- geometry


def yaw_matrix(yaw):
    c, s = math.cos(yaw), math.sin(yaw)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


class Pose:
    """A rigid transform p ↦ R p + t."""

    def __init__(self, r, t):
        self.r = np.asarray(r, dtype=float)
        self.t = np.asarray(t, dtype=float)

    @staticmethod
    def planar(x, y, yaw, z=0.0):
        return Pose(yaw_matrix(yaw), (x, y, z))

    def __matmul__(self, other):
        return Pose(self.r @ other.r, self.r @ other.t + self.t)

    def apply(self, p):
        return self.r @ np.asarray(p, dtype=float) + self.t

    def quat(self):
        return demo.matrix_to_quat(self.r)


MAP_FROM_ODOM = Pose.planar(MAP_TO_ODOM[0][0], MAP_TO_ODOM[0][1], MAP_TO_ODOM[1])


def robot_in_odom(i):
    """The robot's pose in odom at frame i: 4.5 cm a frame along a gentle curve."""
    t = i / FPS
    return Pose.planar(-1.6 + 0.45 * t, -0.4 + 0.05 * t * t, 0.15 + 0.05 * t)


def robot_in_map(i):
    return MAP_FROM_ODOM @ robot_in_odom(i)


class Camera:
    def __init__(self):
        z = LOOK_AT - EYE
        z /= np.linalg.norm(z)
        x = np.cross(z, (0.0, 0.0, 1.0))
        x /= np.linalg.norm(x)
        y = np.cross(z, x)
        self.r = np.array([x, y, z])  # world → camera rows
        self.t = -self.r @ EYE
        self.rvec, _ = cv2.Rodrigues(self.r)

    def project(self, pts):
        pts = np.asarray(pts, dtype=float).reshape(-1, 3)
        uv, _ = cv2.projectPoints(pts, self.rvec, self.t, K, D)
        return uv.reshape(-1, 2)

    def in_front(self, pts):
        return (np.asarray(pts, dtype=float).reshape(-1, 3) @ self.r[2] + self.t[2]) > 0.05

    def static_transforms(self):
        """map → camera_link (REP 103 body axes) and camera_link → camera_optical."""
        map_from_optical = self.r.T
        link_from_optical = demo.quat_to_matrix(demo.LINK_TO_OPTICAL_Q)
        map_from_link = map_from_optical @ link_from_optical.T
        return ((EYE, demo.matrix_to_quat(map_from_link)), ((0.0, 0.0, 0.0), demo.LINK_TO_OPTICAL_Q))


def box_corners(pose):
    lx, ly, lz = ROBOT_SIZE
    out = []
    for z in (0.0, lz):
        for dx, dy in ((-1, -1), (1, -1), (1, 1), (-1, 1)):
            out.append(pose.apply((dx * lx / 2, dy * ly / 2, z)))
    return np.array(out)


def render(cam, i):
    """The camera's picture at frame i: the floor, the robot on it."""
    img = np.empty((H, W, 3), dtype=np.uint8)
    img[:] = FLOOR_BGR
    pts = cam.project(box_corners(robot_in_map(i)))
    hull = cv2.convexHull(np.round(pts * 16).astype(np.int32))
    cv2.fillConvexPoly(img, hull, ROBOT_BGR, lineType=cv2.LINE_AA, shift=4)
    return img


# ---------------------------------------------------------------- the scene


def scan_ranges(i):
    """Ranges of the laser at frame i against the room's walls, and the angles."""
    laser = robot_in_map(i) @ Pose(np.eye(3), LASER)
    angles = [-2.0 + 0.02 * k for k in range(201)]
    ranges = []
    for k, a in enumerate(angles):
        d = laser.r @ np.array([math.cos(a), math.sin(a), 0.0])
        o = laser.t
        hits = []
        for axis, half in ((0, ROOM[0]), (1, ROOM[1])):
            for wall in (-half, half):
                if abs(d[axis]) > 1e-9:
                    s = (wall - o[axis]) / d[axis]
                    if s > 0:
                        hits.append(s)
        r = min(hits)
        if k % 37 == 5:
            r = 0.0  # below range_min: no return
        elif k % 41 == 7:
            r = math.inf
        elif k % 43 == 11:
            r = 9.5  # beyond range_max
        ranges.append(r)
    return angles, ranges


CLOUD_ROWS, CLOUD_COLS = 8, 16


def cloud_points():
    """The organised cloud in base_link: a patch 1.5 m ahead, 0.75 × 0.35 m."""
    out = []
    for row in range(CLOUD_ROWS):
        for col in range(CLOUD_COLS):
            out.append((1.5, -0.375 + 0.05 * col, 0.05 + 0.05 * row))
    return out


def cloud_colour(row, col):
    return (int(255 * col / 15), int(255 * row / 7), 200)


def ring_points():
    return [(1.5 + 0.6 * math.cos(k * math.tau / 100), -1.2 + 0.6 * math.sin(k * math.tau / 100), 0.0) for k in range(100)]


MAP_W, MAP_H, RES = 200, 140, 0.05
MAP_ORIGIN = (-5.0, -3.5)
OBSTACLE = (130, 40, 10, 6)  # col, row, cols, rows
FIFTIES = (60, 90, 8, 8)
UPDATE_BLOCK = (40, 90, 12, 12)


def map_cells():
    data = np.full((MAP_H, MAP_W), -1, dtype=np.int8)
    for row in range(MAP_H):
        for col in range(MAP_W):
            x = MAP_ORIGIN[0] + (col + 0.5) * RES
            y = MAP_ORIGIN[1] + (row + 0.5) * RES
            ax, ay = abs(x), abs(y)
            if ax < ROOM[0] and ay < ROOM[1]:
                data[row, col] = 0
            elif ax < ROOM[0] + 0.1 and ay < ROOM[1] + 0.1:
                data[row, col] = 100
    c, r, w, h = OBSTACLE
    data[r : r + h, c : c + w] = 100
    c, r, w, h = FIFTIES
    data[r : r + h, c : c + w] = 50
    return data


def block_corners(c, r, w, h):
    x0, y0 = MAP_ORIGIN[0] + c * RES, MAP_ORIGIN[1] + r * RES
    return [(x0, y0, 0.0), (x0 + w * RES, y0, 0.0), (x0 + w * RES, y0 + h * RES, 0.0), (x0, y0 + h * RES, 0.0)]


GRID_CELLS = [(2.05, -1.95), (2.15, -1.95), (2.25, -1.95), (2.05, -1.85), (2.15, -1.85), (2.25, -1.85), (2.62, -1.7)]
def goal():
    """A point 10 cm up, 0.45 m behind the robot of frame 19 as the camera sees it: hidden by it then."""
    robot = robot_in_map(19).t
    d = robot[:2] - EYE[:2]
    d /= np.linalg.norm(d)
    return (float(robot[0] + 0.45 * d[0]), float(robot[1] + 0.45 * d[1]), 0.1)


GOAL = goal()
FOOTPRINT = [(-0.3, -0.25), (0.3, -0.25), (0.3, 0.25), (-0.3, 0.25)]
POSE2D = (-2.0, 1.0, 0.5)
ODOM_COV = (0.04, 0.01, 0.01, 0.02)  # xx, xy, yx, yy
AMCL_COV = (0.02, -0.005, -0.005, 0.01)
RANGE_FOV = 0.4


def sonar_range(i):
    return 1.0 + 0.5 * (i % 6) / 5


# ---------------------------------------------------------------- truth


def densify(pts, closed, step=0.04):
    """World points every `step` metres along a polyline."""
    pts = [np.asarray(p, dtype=float) for p in pts]
    segs = list(zip(pts, pts[1:] + pts[:1])) if closed else list(zip(pts, pts[1:]))
    out = []
    for a, b in segs:
        n = max(1, int(math.ceil(np.linalg.norm(b - a) / step)))
        out.extend(a + (b - a) * (k / n) for k in range(n))
    if not closed:
        out.append(pts[-1])
    return out


def arrow_outline(pose):
    """RViz's arrow (shaft 1 × 0.1 m, head 0.3 × 0.2 m) in the pose's x–y plane."""
    sr, shaft, head, hr = 0.05, 1.0, 0.3, 0.1
    local = [(0, -sr), (shaft, -sr), (shaft, -hr), (shaft + head, 0), (shaft, hr), (shaft, sr), (0, sr)]
    return [pose.apply((x, y, 0.0)) for x, y in local]


def ellipse(centre_frame, cov, world):
    """The 2σ ellipse of a 2 × 2 covariance around a point of a frame placed by `world`."""
    a, b, _, c = cov
    vals, vecs = np.linalg.eigh(np.array([[a, b], [b, c]]))
    out = []
    for k in range(96):
        th = math.tau * k / 96
        v = vecs @ (2 * np.sqrt(vals) * np.array([math.cos(th), math.sin(th)]))
        out.append(world.apply((centre_frame[0] + v[0], centre_frame[1] + v[1], centre_frame[2])))
    return out


class Truth:
    """What each display shows at the truth frames, in pixels."""

    def __init__(self, cam):
        self.cam = cam
        self.items = []

    def px(self, world_pts):
        pts = np.asarray(world_pts, dtype=float).reshape(-1, 3)
        if not np.all(self.cam.in_front(pts)):
            raise SystemExit("a truth point behind the camera")
        return [[round(float(u), 3), round(float(v), 3)] for u, v in self.cam.project(pts)]

    def points(self, frame, entity, world_pts):
        self.items.append({"frame": frame, "entity": entity, "kind": "points", "polylines": [self.px(world_pts)]})

    def area(self, frame, entity, world_outline, stroke_px):
        """A filled shape: its outline, and the width of its drawn outline (0: none)."""
        self.items.append({"frame": frame, "entity": entity, "kind": "area", "polylines": [self.px(world_outline)],
                           "stroke_px": stroke_px})

    def area_px(self, frame, entity, outline_px, stroke_px):
        self.items.append({"frame": frame, "entity": entity, "kind": "area", "polylines": [outline_px],
                           "stroke_px": stroke_px})

    def lines(self, frame, entity, polylines):
        """Lines: (world polyline, width in metres or None for the default 1.5 px)."""
        pls, widths = [], []
        for pl, width in polylines:
            pls.append(self.px(pl))
            if width is None:
                widths.append(1.5)
            else:
                mid = np.asarray(pl[len(pl) // 2], dtype=float)
                depth = float(self.cam.r[2] @ mid + self.cam.t[2])
                widths.append(round(width * K[0, 0] / depth, 3))
        self.items.append({"frame": frame, "entity": entity, "kind": "lines", "polylines": pls, "widths_px": widths})


def sphere_silhouette(centre, radius):
    """The circle on a ball where the camera's rays touch it."""
    c = np.asarray(centre, dtype=float)
    v = c - EYE
    d = np.linalg.norm(v)
    n = v / d
    q = c - (radius * radius / d) * n
    rho = radius * math.sqrt(1 - (radius / d) ** 2)
    u = np.cross(n, (0.0, 0.0, 1.0))
    u /= np.linalg.norm(u)
    w = np.cross(n, u)
    return [q + rho * (math.cos(t) * u + math.sin(t) * w) for t in np.linspace(0, math.tau, 48, endpoint=False)]


def frame_truth(truth, i, odom, amcl_frame):
    """What every display shows at frame i; `odom`: (id, frame) of the arrow kept last."""
    robot = robot_in_map(i)
    laser = robot @ Pose(np.eye(3), LASER)
    angles, ranges = scan_ranges(i)
    ends = [laser.apply((r * math.cos(a), r * math.sin(a), 0.0)) for a, r in zip(angles, ranges) if 0.05 <= r <= 8.0]
    truth.points(i, "scan/0", ends)
    truth.points(i, "points/0", [robot.apply(p) for p in cloud_points()])
    truth.points(i, "points_be/0", ring_points())
    sonar = robot @ Pose(np.eye(3), SONAR)
    rng = sonar_range(i)
    rad = rng * math.tan(RANGE_FOV / 2)
    cone = [sonar.apply((0, 0, 0))] + [
        sonar.apply((rng, rad * math.cos(t), rad * math.sin(t))) for t in np.linspace(0, math.tau, 256, endpoint=False)
    ]
    hull = cv2.convexHull(np.array(truth.px(cone), dtype=np.float64).astype(np.float32)).reshape(-1, 2)
    truth.area_px(i, "range/0", [[round(float(u), 3), round(float(v), 3)] for u, v in hull], 1.5)
    truth.area(i, "map/occupied/0", densify(block_corners(*OBSTACLE), True), 0)
    truth.area(i, "map/unknown/0", densify(block_corners(*FIFTIES), True), 0)
    if i >= 10:
        truth.area(i, "map/occupied/0", densify(block_corners(*UPDATE_BLOCK), True), 0)
    else:
        # Before the update: no occupied cell there.
        truth.items.append({"frame": i, "entity": "map/occupied/0", "kind": "absent",
                            "polylines": [truth.px(densify(block_corners(*UPDATE_BLOCK), True))]})
    x0, y0 = GRID_CELLS[0][0] - 0.05, GRID_CELLS[0][1] - 0.05
    truth.area(i, "obstacles/0", densify([(x0, y0, 0), (x0 + 0.3, y0, 0), (x0 + 0.3, y0 + 0.2, 0), (x0, y0 + 0.2, 0)], True), 0)
    kept_id, kept = odom
    truth.area(i, f"odom/{kept_id}", densify(arrow_outline(MAP_FROM_ODOM @ robot_in_odom(kept)), True), 1.5)
    truth.area(i, f"odom/covariance/{kept_id}", ellipse(robot_in_odom(kept).t, ODOM_COV, MAP_FROM_ODOM), 1.5)
    amcl = robot_in_map(amcl_frame)
    truth.area(i, "amcl_pose/0", densify(arrow_outline(amcl), True), 1.5)
    truth.area(i, "amcl_pose/covariance/0", ellipse(amcl.t, AMCL_COV, Pose(np.eye(3), (0, 0, 0))), 1.5)
    truth.area(i, "goal/0", sphere_silhouette(GOAL, 0.1), 1.5)
    truth.area(i, "pose2d/0", densify(arrow_outline(Pose.planar(*POSE2D)), True), 1.5)
    truth.lines(i, "footprint/0", [(densify([robot.apply((x, y, 0.0)) for x, y in FOOTPRINT], True) + [robot.apply((*FOOTPRINT[0], 0.0))], None)])
    for entity, pose, parent in (
        ("tf/base_link", robot, MAP_FROM_ODOM.t),
        ("tf/laser", laser, robot.t),
        ("tf/odom", MAP_FROM_ODOM, np.zeros(3)),
    ):
        o = pose.apply((0, 0, 0))
        lines = []
        for k in range(3):
            e = np.zeros(3)
            e[k] = 0.2
            lines.append((densify([o, pose.apply(e)], False, 0.02), 0.04))
        dist = np.linalg.norm(parent - o)
        head = 0.1 if dist >= 0.1 else 0.1 * dist
        joint = o + (parent - o) * (dist - head) / dist
        lines.append((densify([o, joint], False, 0.02), 0.02))
        lines.append((densify([joint, parent], False, 0.02), 0.08))
        truth.lines(i, entity, lines)


# ---------------------------------------------------------------- messages


def point_field(name, offset, datatype):
    return make("sensor_msgs/msg/PointField", name=name, offset=offset, datatype=datatype, count=1)


def cloud_message(ns):
    step, row_pad = 16, 8
    row_step = CLOUD_COLS * step + row_pad
    data = bytearray()
    for row in range(CLOUD_ROWS):
        for col in range(CLOUD_COLS):
            x, y, z = cloud_points()[row * CLOUD_COLS + col]
            r, g, b = cloud_colour(row, col)
            packed = np.array([(r << 16) | (g << 8) | b], dtype="<u4").view("<f4")[0]
            data += np.array([x, y, z, packed], dtype="<f4").tobytes()
        data += b"\xee" * row_pad
    return make(
        "sensor_msgs/msg/PointCloud2",
        header=header(ns, "base_link"),
        height=CLOUD_ROWS,
        width=CLOUD_COLS,
        fields=[point_field("x", 0, 7), point_field("y", 4, 7), point_field("z", 8, 7), point_field("rgb", 12, 7)],
        is_bigendian=False,
        point_step=step,
        row_step=row_step,
        data=np.frombuffer(bytes(data), dtype=np.uint8),
        is_dense=True,
    )


def cloud_be_message(ns):
    data = bytearray()
    for k, (x, y, z) in enumerate(ring_points()):
        data += np.array([x, y], dtype=">f8").tobytes()
        data += np.array([z], dtype=">f4").tobytes()
        data += np.array([k * 600], dtype=">u2").tobytes()
        data += b"\x00\x00"
    return make(
        "sensor_msgs/msg/PointCloud2",
        header=header(ns, "map"),
        height=1,
        width=100,
        fields=[point_field("x", 0, 8), point_field("y", 8, 8), point_field("z", 16, 7), point_field("intensity", 20, 4)],
        is_bigendian=True,
        point_step=24,
        row_step=2400,
        data=np.frombuffer(bytes(data), dtype=np.uint8),
        is_dense=True,
    )


def scan_message(i, ns):
    angles, ranges = scan_ranges(i)
    return make(
        "sensor_msgs/msg/LaserScan",
        header=header(ns, "laser"),
        angle_min=-2.0,
        angle_max=2.0,
        angle_increment=0.02,
        time_increment=0.0,
        scan_time=0.1,
        range_min=0.05,
        range_max=8.0,
        ranges=np.array(ranges, dtype=np.float32),
        intensities=np.array([100 + 50 * math.sin(k / 10) for k in range(len(ranges))], dtype=np.float32),
    )


def pose_msg(pose):
    return make(
        "geometry_msgs/msg/Pose",
        position=demo.vec3(*pose.t, typename="geometry_msgs/msg/Point"),
        orientation=quat(pose.quat()),
    )


def covariance(cov):
    c = np.zeros(36)
    c[0], c[1], c[6], c[7] = cov
    c[14] = c[21] = c[28] = c[35] = 0.01
    return c


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("truth", type=Path)
    ap.add_argument("--format", choices=["mcap", "db3"], default=None)
    ap.add_argument("--frames", type=int, default=20)
    ap.add_argument("--no-verify", action="store_true")
    args = ap.parse_args()
    fmt = args.format or ("db3" if args.out.suffix == ".db3" else "mcap")
    if not max(TRUTH_FRAMES) < args.frames <= 100:
        ap.error(f"--frames must be from {max(TRUTH_FRAMES) + 1} to 100")

    cam = Camera()
    out = args.out.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.parent / f".{out.name}.tmp-{os.getpid()}"
    tmpdir = None
    opts = argparse.Namespace(compression="zstd", no_chunks=False, no_summary=False, db3_without_definitions=False)
    if fmt == "mcap":
        writer = demo.McapOut(tmp, opts)
    else:
        tmpdir = out.parent / f".{out.name}.tmpdir-{os.getpid()}"
        tmpdir.mkdir()
        writer = demo.Db3Out(tmpdir, opts)
    counts = {}
    truth = Truth(cam)
    try:
        types = {
            "/tf_static": (demo.TF, True),
            "/tf": (demo.TF, False),
            "/camera/image_raw/compressed": (demo.COMPRESSED, False),
            "/camera/camera_info": (demo.CAMERA_INFO, False),
            "/scan": ("sensor_msgs/msg/LaserScan", False),
            "/points": ("sensor_msgs/msg/PointCloud2", False),
            "/points_be": ("sensor_msgs/msg/PointCloud2", False),
            "/range": ("sensor_msgs/msg/Range", False),
            "/map": ("nav_msgs/msg/OccupancyGrid", True),
            "/map_updates": (UPDATE, False),
            "/obstacles": ("nav_msgs/msg/GridCells", False),
            "/odom": ("nav_msgs/msg/Odometry", False),
            "/amcl_pose": ("geometry_msgs/msg/PoseWithCovarianceStamped", True),
            "/goal": ("geometry_msgs/msg/PointStamped", False),
            "/footprint": ("geometry_msgs/msg/PolygonStamped", False),
            "/pose2d": ("geometry_msgs/msg/Pose2D", False),
        }
        handles = {t: writer.add_topic(t, ty, transient_local=tl) for t, (ty, tl) in types.items()}

        def put(topic, msg, ns):
            data = TS.serialize_cdr(msg, types[topic][0])
            writer.write(handles[topic], ns + LATENCY_NS, data)
            counts[topic] = counts.get(topic, 0) + 1

        (link_t, link_q), (opt_t, opt_q) = cam.static_transforms()
        static = [
            transform(T0_NS, "map", "camera_link", link_t, link_q),
            transform(T0_NS, "camera_link", "camera_optical", opt_t, opt_q),
            transform(T0_NS, "map", "odom", MAP_FROM_ODOM.t, MAP_FROM_ODOM.quat()),
            transform(T0_NS, "base_link", "laser", LASER, (0, 0, 0, 1)),
            transform(T0_NS, "base_link", "sonar", SONAR, (0, 0, 0, 1)),
        ]
        put("/tf_static", make(demo.TF, transforms=static), T0_NS)
        odom_kept, last_kept_pose = [], None
        amcl_frame = 0
        for i in range(args.frames):
            ns = T0_NS + i * (1_000_000_000 // FPS)
            robot_o = robot_in_odom(i)
            robot_m = robot_in_map(i)
            ok, png = cv2.imencode(".png", render(cam, i))
            if not ok:
                raise SystemExit("cannot encode a picture as PNG")
            put("/camera/image_raw/compressed", make(demo.COMPRESSED, header=header(ns, "camera_optical"),
                format="bgr8; png compressed bgr8", data=np.asarray(png, dtype=np.uint8).reshape(-1)), ns)
            info_cam = argparse.Namespace(k=K, d=D, width=W, height=H)
            put("/camera/camera_info", demo.camera_info_message(info_cam, ns), ns)
            put("/tf", make(demo.TF, transforms=[transform(ns, "odom", "base_link", robot_o.t, robot_o.quat())]), ns)
            put("/scan", scan_message(i, ns), ns)
            put("/points", cloud_message(ns), ns)
            if i % 5 == 0:
                put("/points_be", cloud_be_message(ns), ns)
            put("/range", make("sensor_msgs/msg/Range", header=header(ns, "sonar"), radiation_type=0,
                field_of_view=RANGE_FOV, min_range=0.02, max_range=3.0, range=sonar_range(i)), ns)
            if i == 0:
                put("/map", make("nav_msgs/msg/OccupancyGrid", header=header(ns, "map"),
                    info=make("nav_msgs/msg/MapMetaData", resolution=RES, width=MAP_W, height=MAP_H,
                              origin=pose_msg(Pose.planar(MAP_ORIGIN[0], MAP_ORIGIN[1], 0.0))),
                    data=map_cells().reshape(-1)), ns)
            if i == 10:
                c, r, w, h = UPDATE_BLOCK
                put("/map_updates", make(UPDATE, header=header(ns, "map"), x=c, y=r, width=w, height=h,
                    data=np.full(w * h, 100, dtype=np.int8)), ns)
            put("/obstacles", make("nav_msgs/msg/GridCells", header=header(ns, "map"), cell_width=0.1, cell_height=0.1,
                cells=[demo.vec3(x, y, 0.0, typename="geometry_msgs/msg/Point") for x, y in GRID_CELLS]), ns)
            if last_kept_pose is None or np.linalg.norm(robot_o.t - last_kept_pose.t) >= 0.1:
                odom_kept.append(i)
                last_kept_pose = robot_o
            put("/odom", make("nav_msgs/msg/Odometry", header=header(ns, "odom"), child_frame_id="base_link",
                pose=make("geometry_msgs/msg/PoseWithCovariance", pose=pose_msg(robot_o),
                          covariance=covariance(ODOM_COV))), ns)
            if i % 5 == 0:
                amcl_frame = i
                put("/amcl_pose", make("geometry_msgs/msg/PoseWithCovarianceStamped", header=header(ns, "map"),
                    pose=make("geometry_msgs/msg/PoseWithCovariance", pose=pose_msg(robot_m),
                              covariance=covariance(AMCL_COV))), ns)
            put("/goal", make("geometry_msgs/msg/PointStamped", header=header(ns, "map"),
                point=demo.vec3(*GOAL, typename="geometry_msgs/msg/Point")), ns)
            put("/footprint", make("geometry_msgs/msg/PolygonStamped", header=header(ns, "base_link"),
                polygon=make("geometry_msgs/msg/Polygon", points=[
                    make("geometry_msgs/msg/Point32", x=x, y=y, z=0.0) for x, y in FOOTPRINT])), ns)
            put("/pose2d", make("geometry_msgs/msg/Pose2D", x=POSE2D[0], y=POSE2D[1], theta=POSE2D[2]), ns)
            if i in TRUTH_FRAMES:
                frame_truth(truth, i, ((len(odom_kept) - 1) % 100, odom_kept[-1]), amcl_frame)
        writer.close()
        written = tmp if fmt == "mcap" else writer.db
        if not args.no_verify and fmt == "mcap":
            from mcap.reader import make_reader
            from mcap_ros2._dynamic import generate_dynamic

            decoders, seen = {}, {}
            with written.open("rb") as f:
                for schema, channel, message in make_reader(f).iter_messages(log_time_order=True):
                    if schema.name not in decoders:
                        decoders[schema.name] = generate_dynamic(schema.name, schema.data.decode())[schema.name]
                    decoders[schema.name](bytes(message.data))
                    seen[channel.topic] = seen.get(channel.topic, 0) + 1
            if seen != counts:
                raise SystemExit(f"verify: read back {seen}, wrote {counts}")
            print(f"read back and decoded {sum(seen.values())} messages (mcap_ros2's decoder): as written")
        os.replace(written, out)
    finally:
        if tmp.exists():
            tmp.unlink()
        if tmpdir is not None:
            shutil.rmtree(tmpdir, ignore_errors=True)
    doc = {
        "camera": {"width": W, "height": H, "k": K.tolist(), "distortion": D.tolist(), "eye": EYE.tolist()},
        "t0": T0_NS / 1e9,
        "fps": FPS,
        "frames": list(TRUTH_FRAMES),
        "items": truth.items,
    }
    args.truth.write_text(json.dumps(doc, indent=0, separators=(",", ":")) + "\n")
    print(f"wrote {out} ({fmt}, {out.stat().st_size} bytes) and {args.truth} ({len(truth.items)} items)")
    for topic, n in counts.items():
        print(f"  {topic}: {n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
