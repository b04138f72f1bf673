#!/usr/bin/env python3
"""Rewrites a one-file ROS 2 recording (an MCAP, such as the committed
`tests/data/ros/demo-3.mcap`) as a folder the way `ros2 bag record` leaves
one: split in parts, each written by rosbags' rosbag2 writer (MCAP or
SQLite storage, compression FILE or MESSAGE with zstd), with a
`metadata.yaml` of the version asked for. The test material of underlay's
bag folders (`tests/it/ros_folders.rs`).

    ros-bag-folder.py SRC.mcap OUT_DIR [--storage mcap|sqlite3] [--split N]
        [--compression none|file|message] [--metadata-version 1..9]
        [--drop-part K] [--no-metadata] [--pre-foxy]

The messages, in log-time order, are cut into N parts of (nearly) equal
counts, each part holding the topics it has messages of; every message's
bytes are the source's. `metadata.yaml` has the keys of its version:
`relative_file_paths`, `duration`, `starting_time`, `message_count` and
`topics_with_message_count` always (before version 4 the paths begin with
the folder's name, as Foxy's did), `offered_qos_profiles` as a YAML text
from 4 and as a list from 9, `compression_format`/`compression_mode` from
3, `files` (each part's span and count) from 5, `custom_data` from 6,
`type_description_hash` from 7, `ros_distro` from 8. `--drop-part K`
removes part K (0-based) after writing, as a recording with a lost file.
`--pre-foxy` (SQLite, not compressed whole) makes each `.db3` as ROS 2
before Foxy wrote it: no `message_definitions` or `schema` table, and the
types spelled `sensor_msgs/CompressedImage` (in `metadata.yaml` too).
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import tempfile
from pathlib import Path

from mcap.reader import make_reader
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.rosbag2.writer import CompressionFormat, CompressionMode
from rosbags.typesys import Stores, get_typestore

QOS_TEXT = (
    "- history: 3\n  depth: 0\n  reliability: 1\n  durability: 2\n  deadline:\n    sec: 0\n"
    "    nsec: 0\n  lifespan:\n    sec: 0\n    nsec: 0\n  liveliness: 1\n"
    "  liveliness_lease_duration:\n    sec: 0\n    nsec: 0\n  avoid_ros_namespace_conventions: false"
)


def read_source(path: Path):
    topics = {}
    messages = []
    with path.open("rb") as f:
        r = make_reader(f)
        for schema, channel, message in r.iter_messages(log_time_order=True):
            topics[channel.topic] = schema.name
            messages.append((message.log_time, channel.topic, bytes(message.data)))
    messages.sort(key=lambda m: m[0])
    return topics, messages


def quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def metadata_yaml(version, storage, folder_name, parts, topics, compression):
    """`parts`: (name, start, end, count, per-topic counts)."""
    start = min(p[1] for p in parts)
    end = max(p[2] for p in parts)
    total = sum(p[3] for p in parts)
    counts = {}
    for p in parts:
        for t, c in p[4].items():
            counts[t] = counts.get(t, 0) + c
    lines = ["rosbag2_bagfile_information:", f"  version: {version}", f"  storage_identifier: {storage}"]
    lines += ["  duration:", f"    nanoseconds: {end - start}"]
    lines += ["  starting_time:", f"    nanoseconds_since_epoch: {start}"]
    lines.append(f"  message_count: {total}")
    lines.append("  topics_with_message_count:")
    for name, typename in topics.items():
        lines.append("    - topic_metadata:")
        lines.append(f"        name: {name}")
        lines.append(f"        type: {typename}")
        lines.append("        serialization_format: cdr")
        if version >= 9:
            lines += [
                "        offered_qos_profiles:",
                "          - history: keep_last",
                "            depth: 0",
                "            reliability: reliable",
                "            durability: volatile",
            ]
        elif version >= 4:
            lines.append(f"        offered_qos_profiles: {quote(QOS_TEXT)}")
        if version >= 7:
            lines.append('        type_description_hash: ""')
        lines.append(f"      message_count: {counts.get(name, 0)}")
    if version >= 3:
        fmt = "zstd" if compression != "none" else ""
        mode = compression.upper() if compression != "none" else ""
        lines.append(f"  compression_format: {quote(fmt)}")
        lines.append(f"  compression_mode: {quote(mode)}")
    prefix = f"{folder_name}/" if version < 4 else ""
    lines.append("  relative_file_paths:")
    lines += [f"    - {prefix}{p[0]}" for p in parts]
    if version >= 5:
        lines.append("  files:")
        for name, s, e, c, _ in parts:
            lines += [
                f"    - path: {name}",
                "      starting_time:",
                f"        nanoseconds_since_epoch: {s}",
                "      duration:",
                f"        nanoseconds: {e - s}",
                f"      message_count: {c}",
            ]
    if version >= 6:
        lines += ["  custom_data:", "    robot: demo", '    run: "3"']
    if version >= 8:
        lines.append("  ros_distro: humble")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("src", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--storage", choices=["mcap", "sqlite3"], default="mcap")
    ap.add_argument("--split", type=int, default=1)
    ap.add_argument("--compression", choices=["none", "file", "message"], default="none")
    ap.add_argument("--metadata-version", type=int, default=9, choices=range(1, 10))
    ap.add_argument("--drop-part", type=int, default=None)
    ap.add_argument("--no-metadata", action="store_true")
    ap.add_argument("--pre-foxy", action="store_true")
    args = ap.parse_args()
    if args.pre_foxy and (args.storage != "sqlite3" or args.compression == "file"):
        ap.error("--pre-foxy is for sqlite3 files not compressed whole")

    ts = get_typestore(Stores.ROS2_HUMBLE)
    topics, messages = read_source(args.src)
    n = max(1, min(args.split, len(messages)))
    cuts = [round(i * len(messages) / n) for i in range(n + 1)]
    if args.out.exists():
        shutil.rmtree(args.out)
    args.out.mkdir(parents=True)
    plugin = StoragePlugin.MCAP if args.storage == "mcap" else StoragePlugin.SQLITE3
    ext = ".mcap" if args.storage == "mcap" else ".db3"
    parts = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(n):
            chunk = messages[cuts[i] : cuts[i + 1]]
            w = Writer(Path(tmp) / f"part{i}", version=9, storage_plugin=plugin)
            if args.compression != "none":
                mode = CompressionMode.FILE if args.compression == "file" else CompressionMode.MESSAGE
                w.set_compression(mode, CompressionFormat.ZSTD)
            w.open()
            conns = {}
            for name in dict.fromkeys(t for _, t, _ in chunk):
                conns[name] = w.add_connection(name, topics[name], typestore=ts)
            per_topic = {}
            for t, name, data in chunk:
                w.write(conns[name], t, data)
                per_topic[name] = per_topic.get(name, 0) + 1
            w.close()
            written = [p for p in (Path(tmp) / f"part{i}").iterdir() if p.name != "metadata.yaml"]
            assert len(written) == 1, written
            name = f"{args.out.name}_{i}{ext}" + (".zstd" if args.compression == "file" else "")
            shutil.move(written[0], args.out / name)
            parts.append((name, chunk[0][0], chunk[-1][0], len(chunk), per_topic))
            if args.pre_foxy:
                db = sqlite3.connect(args.out / name)
                db.execute("DROP TABLE message_definitions")
                db.execute("DROP TABLE schema")
                db.execute("UPDATE topics SET type = replace(type, '/msg/', '/')")
                db.commit()
                db.close()
    if args.pre_foxy:
        topics = {k: v.replace("/msg/", "/") for k, v in topics.items()}
    if not args.no_metadata:
        text = metadata_yaml(
            args.metadata_version, args.storage, args.out.name, parts, topics, args.compression
        )
        (args.out / "metadata.yaml").write_text(text)
    if args.drop_part is not None:
        (args.out / parts[args.drop_part][0]).unlink()


if __name__ == "__main__":
    main()
