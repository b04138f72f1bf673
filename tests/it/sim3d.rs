//! The 3D league's readers and placement on real material: fixtures cut
//! from an rcssservermj run (`tests/data/sim3d/`, 25–28 s of the match)
//! and, when present, the whole run in `../shared/testdata/sim3d/`.

use std::path::{Path, PathBuf};

use underlay::geom::vec3::{norm, sub};
use underlay::sim3d::monitor::{self, MonitorLog};
use underlay::sim3d::perception::{self, PerceptionLog};
use underlay::sim3d::place::{self, PlaceOptions, Placed};
use underlay::sim3d::pose::PoseSource;
use underlay::sim3d::roboviz::{self, Command};
use underlay::sim3d::rvd::{self, Record};

use crate::util::{assert_ok, run, run_in, shared_media, stdout, tmp};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/sim3d")
        .join(name)
}

/// The distance, on each vision message, between the ball the agent saw
/// (placed through its camera pose) and the monitor's ball at that time
/// (see `place::truth_time`).
fn ball_errors(placed: &Placed, m: &MonitorLog) -> Vec<f64> {
    placed
        .views
        .iter()
        .filter_map(|v| {
            let (seen, _) = v.ball?;
            Some(norm(sub(seen, m.ball_at(place::truth_time(m, v.time), 0.05)?)))
        })
        .collect()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[test]
fn fixture_monitor_log_has_the_match_state() {
    let m = monitor::load(&fixture("monitor.rsmp.log.gz")).unwrap();
    assert_eq!(m.frames.len(), 76);
    assert!(m.warnings.is_empty(), "{:?}", m.warnings);
    let (first, last) = (&m.frames[0], &m.frames[75]);
    assert!(first.full && !last.full);
    assert_eq!((first.time, last.time), (25.0, 28.0));
    let names: Vec<&str> = m.teams.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["Alpha", "Bravo"]);
    assert_eq!(m.frame_robots(last).len(), 6);
    assert!(m.frames.iter().all(|f| f.ball.is_some()));
    assert_eq!(
        (m.geometry.length, m.geometry.width, m.geometry.goal_width),
        (55.0, 36.0, 3.66)
    );
}

#[test]
fn seen_ball_lands_where_the_monitor_has_it() {
    let m = monitor::load(&fixture("monitor.rsmp.log.gz")).unwrap();
    for agent in ["agent_Alpha_1.log.gz", "agent_Bravo_2.log.gz"] {
        let p = perception::load(&fixture(agent)).unwrap();
        assert_eq!(p.messages.len(), 150, "{agent}");
        let placed = place::place(&p, Some(&m), &PlaceOptions::default());
        let want = agent.trim_end_matches(".log.gz").trim_start_matches("agent_");
        assert_eq!(format!("{}_{}", placed.team, placed.unum.unwrap()), want);
        assert_eq!(placed.stats.by_markers, placed.stats.views, "{:?}", placed.stats);
        let errors = ball_errors(&placed, &m);
        assert!(errors.len() > 30, "{agent}: {} matched", errors.len());
        let worst = errors.iter().copied().fold(0.0, f64::max);
        assert!(worst < 0.03, "{agent}: worst ball error {worst} m");
        let med = median(errors);
        assert!(med < 0.02, "{agent}: median ball error {med} m");
        assert!(placed.stats.median_residual.unwrap() < 0.02, "{:?}", placed.stats);
    }
}

#[test]
fn without_markers_the_body_and_head_place_the_ball() {
    let m = monitor::load(&fixture("monitor.rsmp.log.gz")).unwrap();
    let mut p = perception::load(&fixture("agent_Alpha_1.log.gz")).unwrap();
    blind_every_other(&mut p);
    let placed = place::place(&p, Some(&m), &PlaceOptions::default());
    assert_eq!(placed.stats.by_body, placed.stats.views / 2, "{:?}", placed.stats);
    let (head, rms) = placed.stats.head.unwrap();
    assert!(rms < 0.01, "head fitted to {rms} m");
    // The camera sits about 0.42 m above the torso, as on the T1.
    let up = head.a[2] + head.b[2] + head.c[2];
    assert!((up - 0.42485).abs() < 0.03, "{head:?}");
    let body: Vec<f64> = placed
        .views
        .iter()
        .filter(|v| v.source == PoseSource::Body)
        .filter_map(|v| {
            Some(norm(sub(
                v.ball?.0,
                m.ball_at(place::truth_time(&m, v.time), 0.05)?,
            )))
        })
        .collect();
    assert!(body.len() > 10);
    let worst = body.iter().copied().fold(0.0, f64::max);
    assert!(worst < 0.1, "worst ball error through the body {worst} m");
}

/// Takes the markers out of every other vision message.
fn blind_every_other(p: &mut PerceptionLog) {
    for (i, msg) in p.messages.iter_mut().filter(|m| m.see.is_some()).enumerate() {
        if i % 2 == 1
            && let Some(s) = msg.see.as_mut()
        {
            s.markers = s.markers.start..s.markers.start;
        }
    }
}

#[test]
fn whole_run_places_every_agent() {
    let Some(dir) = shared_media("sim3d") else {
        return;
    };
    let m = monitor::load(&dir.join("monitor.rsmp.log.gz")).unwrap();
    assert_eq!(m.frames.len(), 1581);
    assert!(m.warnings.is_empty(), "{:?}", m.warnings);
    let last = m.frames.last().unwrap();
    assert_eq!(last.score, [0, 1], "the ball went into the left goal");
    for agent in ["Alpha_1", "Alpha_2", "Bravo_1", "Bravo_2"] {
        let p = perception::load(&dir.join(format!("perceptions/agent_{agent}.log.gz"))).unwrap();
        assert_eq!(p.messages.len(), 3000);
        let placed = place::place(&p, Some(&m), &PlaceOptions::default());
        assert_eq!(format!("{}_{}", placed.team, placed.unum.unwrap()), agent);
        let errors = ball_errors(&placed, &m);
        let worst = errors.iter().copied().fold(0.0, f64::max);
        assert!(errors.len() > 300, "{agent}");
        assert!(worst < 0.03, "{agent}: worst {worst} m of {}", errors.len());
    }
}

#[test]
fn log_select_prints_what_an_agent_saw() {
    let o = run([
        "log".as_ref(),
        "select".as_ref(),
        fixture("agent_Alpha_1.log.gz").as_os_str(),
        "--at".as_ref(),
        "26.03".as_ref(),
        "--max-level".as_ref(),
        "1".as_ref(),
    ]);
    assert_ok(&o);
    let out = stdout(&o);
    assert!(out.contains("{agents/Alpha/1/pose; 0}"), "{out}");
    assert!(out.contains("{agents/Alpha/1/view; 1}"), "{out}");
    assert!(out.contains("\"Bravo 3\""), "{out}");
    assert!(!out.contains("/markers;"), "level 2 left out: {out}");
    let info = run([
        "log".as_ref(),
        "info".as_ref(),
        fixture("agent_Alpha_1.log.gz").as_os_str(),
    ]);
    assert_ok(&info);
    let info = stdout(&info);
    assert!(
        info.contains("3D agent perception log") && info.contains("frames:      75"),
        "{info}"
    );
    let m = run([
        "log".as_ref(),
        "info".as_ref(),
        fixture("monitor.rsmp.log.gz").as_os_str(),
    ]);
    // A monitor log is the match; read as a log it is the ball's trail.
    assert_ok(&m);
    let out = stdout(&m);
    assert!(
        out.contains("3D monitor log") && out.contains("ball/trail"),
        "{out}"
    );
}

/// A recording of two agents' drawings: a set per agent, swapped on
/// every monitor time, plus one static set.
fn recording() -> Vec<u8> {
    let mut b = rvd::header().to_vec();
    for (k, t) in [10.0, 10.04, 10.08].into_iter().enumerate() {
        rvd::write_record(
            &mut b,
            &Record::SimTime {
                received: 1e9,
                time: t,
            },
        )
        .unwrap();
        let mut d = Vec::new();
        for (team, x) in [("Alpha", 1.0), ("Bravo", -1.0)] {
            roboviz::encode(
                &Command::Circle {
                    center: [x * (k + 1) as f64, 2.0],
                    radius: 0.5,
                    thickness: 2.0,
                    color: [255, 255, 0, 255],
                    set: format!("animated.{team}.target"),
                },
                &mut d,
            );
        }
        if k == 0 {
            roboviz::encode(
                &Command::Line {
                    start: [0.0, -18.0, 0.0],
                    end: [0.0, 18.0, 0.0],
                    thickness: 1.0,
                    color: [255, 255, 255, 255],
                    set: "static.lines".into(),
                },
                &mut d,
            );
        }
        roboviz::encode(
            &Command::Swap {
                prefix: String::new(),
            },
            &mut d,
        );
        rvd::write_record(
            &mut b,
            &Record::Datagram {
                received: 1e9,
                bytes: d,
            },
        )
        .unwrap();
    }
    b
}

#[test]
fn log_convert_reads_roboviz_recordings() {
    let dir = tmp();
    std::fs::write(dir.path().join("drawings.rvd"), recording()).unwrap();
    let o = run_in(dir.path(), ["log", "convert", "drawings.rvd", "out.ulog"]);
    assert_ok(&o);
    assert!(stdout(&o).contains("RoboViz drawing recording"), "{}", stdout(&o));
    let sel = run_in(
        dir.path(),
        [
            "log", "select", "out.ulog", "--at", "10.05", "--entity", "animated",
        ],
    );
    assert_ok(&sel);
    let out = stdout(&sel);
    assert!(
        out.contains("(2, 2)") && out.contains("(-2, 2)"),
        "the 10.04 swap shows: {out}"
    );
    assert!(!out.contains("static.lines"), "{out}");
    let info = stdout(&run_in(dir.path(), ["log", "info", "out.ulog"]));
    for e in ["animated.Alpha.target", "animated.Alpha", "static.lines"] {
        assert!(info.contains(e), "{e}: {info}");
    }
}

#[test]
fn record_roboviz_writes_what_it_received() {
    use std::io::{BufRead, BufReader, Write};
    use std::net::{TcpListener, UdpSocket};
    use std::process::Stdio;

    let dir = tmp();
    let out = dir.path().join("live.rvd");
    // A stand-in simulator monitor port sending two RSMP messages.
    let monitor = TcpListener::bind("127.0.0.1:0").unwrap();
    let mon_addr = monitor.local_addr().unwrap().to_string();
    let mut child = crate::util::underlay_cmd()
        .args(["record-roboviz", "--port", "0", "--monitor", &mon_addr, "-o"])
        .arg(&out)
        .stderr(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let (mut conn, _) = monitor.accept().unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut first = String::new();
    err.read_line(&mut first).unwrap();
    let addr = first
        .split("sent to ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .unwrap_or_else(|| panic!("no address in {first:?}"))
        .to_owned();
    let send_monitor = |conn: &mut std::net::TcpStream, t: f64| {
        let msg = format!("((RSMP 1 0)((gt 1 0){t:.2})((sg 1 0)diff(nd)))");
        conn.write_all(&(msg.len() as u32).to_be_bytes()).unwrap();
        conn.write_all(msg.as_bytes()).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    for (t, x) in [(3.0, 1.0), (3.04, 2.0)] {
        send_monitor(&mut conn, t);
        let mut d = Vec::new();
        roboviz::encode(
            &Command::Sphere {
                center: [x, 0.0, 0.1],
                radius: 0.2,
                color: [0, 0, 255, 255],
                set: "ball".into(),
            },
            &mut d,
        );
        roboviz::encode(
            &Command::Swap {
                prefix: "ball".into(),
            },
            &mut d,
        );
        sock.send_to(&d, &addr).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    // Ctrl-C, as a user stops it.
    // SAFETY: kill(2) on our own child's pid has no memory effects.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    let mut summary = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut summary).unwrap();
    assert!(summary.starts_with("2 datagrams"), "{summary}");
    assert!(summary.contains("2 simulation times"), "{summary}");
    let bytes = std::fs::read(&out).unwrap();
    let (records, warnings) = rvd::read_records(&bytes).unwrap();
    assert!(warnings.is_empty());
    assert_eq!(records.len(), 4);
    let (log, stats, _) = rvd::to_log(&records, None);
    assert!(stats.sim_clock);
    let starts: Vec<f64> = log.frames.iter().map(|f| f.time.start()).collect();
    assert_eq!(starts, [3.0, 3.04], "swaps on the simulation clock");
    let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(leftovers.len(), 1, "no temporary file left");
}

/// A child process killed (after a Ctrl-C and a grace period) when dropped.
struct KillOnDrop(std::process::Child);

impl KillOnDrop {
    /// Sends Ctrl-C and waits up to `grace` for the process to end, then kills it.
    fn interrupt(&mut self, grace: std::time::Duration) -> Option<std::process::ExitStatus> {
        // SAFETY: kill(2) on our own child's pid has no memory effects.
        unsafe { libc::kill(self.0.id() as i32, libc::SIGINT) };
        let start = std::time::Instant::now();
        while start.elapsed() < grace {
            if let Ok(Some(s)) = self.0.try_wait() {
                return Some(s);
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let _ = self.0.kill();
        self.0.wait().ok()
    }
}

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A free loopback TCP port (free when asked; good enough for a test).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap()
}

/// Runs rcssservermj and the two agents in `dir` until the agents are
/// done, then stops the server with Ctrl-C; `Err` with the agents' and the
/// server's last words when the agents failed.
fn run_server_and_agents(python: &Path, dir: &Path) -> Result<(), String> {
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    let (aport, mport) = (free_port(), free_port());
    let server_log = std::fs::File::create(dir.join("server.out")).map_err(|e| e.to_string())?;
    let server = Command::new(python)
        .args([
            "-m",
            "rcsssmj",
            "--no-render",
            "--no-realtime",
            "--sync",
            "--host",
            "127.0.0.1",
        ])
        .args(["--aport", &aport.to_string(), "--mport", &mport.to_string()])
        .args(["--logfile", "monitor.rsmp.log"])
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(server_log)
        .spawn()
        .expect("start rcssservermj");
    let mut server = KillOnDrop(server);
    // Agents that connect the moment the port opens crash the server more
    // often: wait until it says it is up, and a second more.
    let start = Instant::now();
    while !std::fs::read_to_string(dir.join("server.out"))
        .is_ok_and(|s| s.contains("Starting server... DONE!"))
    {
        if start.elapsed() > Duration::from_secs(60) {
            return Err("the server did not start in a minute".to_owned());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_secs(1));
    let agents = Command::new(python)
        .arg(fixture("two_agents.py"))
        .args(["127.0.0.1", &aport.to_string()])
        .arg(dir)
        .arg("150")
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the agents");
    let mut agents = KillOnDrop(agents);
    let start = Instant::now();
    let status = loop {
        if let Some(s) = agents.0.try_wait().map_err(|e| e.to_string())? {
            break s;
        }
        if start.elapsed() > Duration::from_secs(180) {
            return Err("the agents did not finish in 3 minutes".to_owned());
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let mut err = String::new();
    if let Some(mut e) = agents.0.stderr.take() {
        let _ = std::io::Read::read_to_string(&mut e, &mut err);
    }
    server.interrupt(Duration::from_secs(20));
    if status.success() {
        return Ok(());
    }
    let said = std::fs::read_to_string(dir.join("server.out")).unwrap_or_default();
    let last = |t: &str| t.lines().rev().take(3).collect::<Vec<_>>().join(" | ");
    Err(format!("agents: {} / server: {}", last(&err), last(&said)))
}

/// Runs the real rcssservermj (`pip install rcsssmj`, into the cached venv
/// by `scripts/python-venv.sh`) headless and synchronous on loopback ports
/// with two minimal agents of this test's (`tests/data/sim3d/two_agents.py`)
/// for 3 simulated seconds, then reads what was recorded: the server's
/// monitor log and the perception logs the agents wrote.
#[test]
fn real_server_run_is_read_and_placed() {
    let Some(python) = crate::util::python_with(
        "rcsssmj, mujoco",
        "a Python with rcsssmj (the 3D league's server)",
    ) else {
        return;
    };
    // rcsssmj 0.2.1 sometimes crashes as an agent joins (in its audio
    // engine, whatever the agents do): a run whose server died is tried
    // again, five times at most.
    let mut failures = Vec::new();
    let dir = loop {
        let dir = tmp();
        match run_server_and_agents(&python, dir.path()) {
            Ok(()) => break dir,
            Err(e) if failures.len() < 4 => failures.push(e),
            Err(e) => panic!("five runs failed: {failures:?} then {e}"),
        }
    };
    let m = monitor::load(&dir.path().join("monitor.rsmp.log")).unwrap();
    assert!(m.frames.len() > 50, "{} monitor frames", m.frames.len());
    // The agents are on the pitch while they run (the server goes on
    // after they leave, until it is stopped).
    let mut robots: Vec<(String, u32)> = m
        .frames
        .iter()
        .flat_map(|f| m.frame_robots(f))
        .map(|r| (m.teams[r.team as usize].name.clone(), r.unum))
        .collect();
    robots.sort();
    robots.dedup();
    assert_eq!(robots, [("Alpha".to_owned(), 1), ("Bravo".to_owned(), 1)]);
    let last = m.frames.last().unwrap();
    assert!(last.ball.is_some());
    for agent in ["Alpha_1", "Bravo_1"] {
        let p = perception::load(&dir.path().join(format!("agent_{agent}.log"))).unwrap();
        assert_eq!(p.messages.len(), 150, "{agent}");
        let placed = place::place(&p, Some(&m), &PlaceOptions::default());
        assert_eq!(format!("{}_{}", placed.team, placed.unum.unwrap_or(0)), agent);
        assert!(placed.stats.by_markers > 10, "{agent}: {:?}", placed.stats);
        assert_eq!(placed.stats.unplaced, 0, "{agent}: {:?}", placed.stats);
        let errors = ball_errors(&placed, &m);
        let worst = errors.iter().copied().fold(0.0, f64::max);
        assert!(
            worst < 0.05,
            "{agent}: worst ball error {worst} m over {}",
            errors.len()
        );
        eprintln!(
            "{agent}: {} views, {} placed by markers (median residual {:?} m), ball seen {} times, worst error {worst:.4} m",
            placed.stats.views,
            placed.stats.by_markers,
            placed.stats.median_residual,
            errors.len()
        );
    }
}
