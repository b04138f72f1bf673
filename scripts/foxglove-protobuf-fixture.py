#!/usr/bin/env python3
"""Writes a small MCAP as Foxglove's SDK records one: protobuf messages of
Foxglove's own schemas (`foxglove.FrameTransform`, `foxglove.SceneUpdate`),
with the packages `foxglove-schemas-protobuf` and `mcap-protobuf-support`
(the writer stores each schema's FileDescriptorSet). The test material of
`src/ros/protobuf.rs`: a robot frame 1 m further along x each 0.1 s, and a
scene entity in it (a red sphere 1 m to the robot's left, 0.5 m up, 0.2 m
across) from 0.1 s on, deleted at 0.25 s; a 160×90 camera 5 m above the
origin looking straight down (`foxglove.CompressedImage` JPEG pictures,
`foxglove.CameraCalibration` with f = 100 px, its frame placed by a
`FrameTransform`).

    foxglove-protobuf-fixture.py OUT.mcap
"""

import sys

import cv2
import numpy as np

from foxglove_schemas_protobuf.CameraCalibration_pb2 import CameraCalibration
from foxglove_schemas_protobuf.CompressedImage_pb2 import CompressedImage
from foxglove_schemas_protobuf.FrameTransform_pb2 import FrameTransform
from foxglove_schemas_protobuf.SceneEntityDeletion_pb2 import SceneEntityDeletion
from foxglove_schemas_protobuf.SceneUpdate_pb2 import SceneUpdate
from mcap_protobuf.writer import Writer

T0 = 1_700_000_000_000_000_000


def stamp(msg_time, ns):
    msg_time.seconds = ns // 1_000_000_000
    msg_time.nanos = ns % 1_000_000_000


def main(out):
    with open(out, "wb") as f, Writer(f) as w:
        # The camera: optical z down, x along the world's x, y along −y.
        cam = FrameTransform(parent_frame_id="map", child_frame_id="camera")
        stamp(cam.timestamp, T0)
        cam.translation.z = 5.0
        cam.rotation.x = 1.0
        w.write_message(topic="/tf", message=cam, log_time=T0, publish_time=T0)
        for k in range(3):
            ns = T0 + k * 100_000_000
            calib = CameraCalibration(frame_id="camera", width=160, height=90, distortion_model="plumb_bob")
            stamp(calib.timestamp, ns)
            calib.D.extend([0.0] * 5)
            calib.K.extend([100.0, 0.0, 79.5, 0.0, 100.0, 44.5, 0.0, 0.0, 1.0])
            calib.R.extend([1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0])
            calib.P.extend([100.0, 0.0, 79.5, 0.0, 0.0, 100.0, 44.5, 0.0, 0.0, 0.0, 1.0, 0.0])
            w.write_message(topic="/camera/calibration", message=calib, log_time=ns, publish_time=ns)
            y, x = np.mgrid[0:90, 0:160]
            picture = np.dstack([(x * 1.5 + k * 40) % 256, y * 2.5, np.full_like(x, 90)]).astype(np.uint8)
            ok, jpeg = cv2.imencode(".jpg", picture)
            img = CompressedImage(frame_id="camera", format="jpeg", data=jpeg.tobytes())
            stamp(img.timestamp, ns)
            w.write_message(topic="/camera/image", message=img, log_time=ns, publish_time=ns)
        for k in range(3):
            ns = T0 + k * 100_000_000
            tf = FrameTransform(parent_frame_id="map", child_frame_id="robot")
            stamp(tf.timestamp, ns)
            tf.translation.x = float(k)
            tf.rotation.w = 1.0
            w.write_message(topic="/tf", message=tf, log_time=ns, publish_time=ns)
        ns = T0 + 100_000_000
        up = SceneUpdate()
        e = up.entities.add(frame_id="robot", id="bot")
        stamp(e.timestamp, ns)
        s = e.spheres.add()
        s.pose.position.y = 1.0
        s.pose.position.z = 0.5
        s.pose.orientation.w = 1.0
        s.size.x = s.size.y = s.size.z = 0.2
        s.color.r = 1.0
        s.color.a = 1.0
        w.write_message(topic="/scene", message=up, log_time=ns, publish_time=ns)
        ns = T0 + 250_000_000
        gone = SceneUpdate()
        d = gone.deletions.add(type=SceneEntityDeletion.MATCHING_ID, id="bot")
        stamp(d.timestamp, ns)
        w.write_message(topic="/scene", message=gone, log_time=ns, publish_time=ns)


if __name__ == "__main__":
    main(sys.argv[1])
