//! Decoding ahead: a source wrapped so that its frames are read on their
//! own thread, a few frames ahead of the reader. While a player draws one
//! frame the next is being decoded, which uses a second core during
//! playback. Seeking discards what was read ahead. Frames the reader is
//! done with ([`FrameSource::recycle`]) go back to the thread, which
//! decodes into their buffers rather than new ones.
//!
//! A far seek's keyframe ([`FrameSource::keyframe_at`]) is handed over as
//! soon as it is decoded, and the thread goes straight on decoding
//! towards the frame asked for while the reader shows the keyframe: the
//! [`FrameSource::frame_at`] for that time that follows finds its answer
//! decoded ahead. Any other request stops that work
//! ([`FrameSource::set_stop`]), so scrubbing through keyframes stays
//! quick.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use super::{FrameSource, SourceError, SourceFrame, SourceInfo};

/// Decoded frames read ahead of time.
const READ_AHEAD: usize = 3;

/// Frames handed back for reuse that the thread keeps at most (more are
/// dropped).
const SPARE: usize = 2;

enum AheadCmd {
    Seek(u64, f64),
    /// The keyframe for a far seek, then the frame at the time itself.
    Keyframe(u64, f64),
}

type AheadMsg = (u64, Result<Option<SourceFrame>, SourceError>);

/// A source whose frames are read on their own thread.
pub struct ReadAhead {
    info: SourceInfo,
    cmd: Option<crossbeam_channel::Sender<AheadCmd>>,
    frames: crossbeam_channel::Receiver<AheadMsg>,
    spare: crossbeam_channel::Sender<SourceFrame>,
    epoch: u64,
    /// The epoch of the newest request, which the thread's long work
    /// compares with its own to know when to give up.
    latest: Arc<AtomicU64>,
    /// After [`FrameSource::keyframe_at`]: the time asked for, whose frame
    /// the thread decodes next, and the keyframe's time.
    after_key: Option<(f64, f64)>,
    index: Option<crate::video::SeekIndex>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl ReadAhead {
    /// Starts reading `source` on a new thread.
    pub fn new(mut source: Box<dyn FrameSource>) -> std::io::Result<Self> {
        let info = source.info().clone();
        let index = source.seek_index();
        let latest = Arc::new(AtomicU64::new(0));
        // The epoch the thread works for: its long decodes give up once a
        // newer request is made.
        let working = Arc::new(AtomicU64::new(0));
        {
            let (latest, working) = (Arc::clone(&latest), Arc::clone(&working));
            source.set_stop(Arc::new(move || {
                latest.load(Ordering::Acquire) != working.load(Ordering::Acquire)
            }));
        }
        let (cmd_tx, cmd_rx) = crossbeam_channel::unbounded::<AheadCmd>();
        let (tx, rx) = crossbeam_channel::bounded::<AheadMsg>(READ_AHEAD);
        let (spare_tx, spare_rx) = crossbeam_channel::bounded::<SourceFrame>(SPARE);
        let handle = std::thread::Builder::new()
            .name("underlay-decode".into())
            .spawn(move || {
                let mut epoch = 0;
                // The next message to hand over, and whether decoding goes on.
                let mut pending: Option<AheadMsg> = None;
                let mut more = true;
                // After a keyframe: the time whose frame comes next.
                let mut then: Option<f64> = None;
                loop {
                    if pending.is_none() {
                        let r = if let Some(t) = then.take() {
                            source.frame_at(t)
                        } else if more {
                            let mut f = spare_rx.try_recv().unwrap_or_else(|_| SourceFrame::empty());
                            source.read_into(&mut f).map(|got| got.then_some(f))
                        } else {
                            // After the end, keep saying so (like the source would).
                            Ok(None)
                        };
                        more = matches!(r, Ok(Some(_)));
                        pending = Some((epoch, r));
                    }
                    let cmd = match pending.take() {
                        Some(msg) => {
                            crossbeam_channel::select! {
                                send(tx, msg) -> res => {
                                    if res.is_err() {
                                        return;
                                    }
                                    continue;
                                }
                                recv(cmd_rx) -> cmd => cmd,
                            }
                        }
                        None => cmd_rx.recv(),
                    };
                    let r = match cmd {
                        Ok(AheadCmd::Seek(e, t)) => {
                            epoch = e;
                            working.store(e, Ordering::Release);
                            then = None;
                            source.frame_at(t)
                        }
                        Ok(AheadCmd::Keyframe(e, t)) => {
                            epoch = e;
                            working.store(e, Ordering::Release);
                            then = Some(t);
                            source.keyframe_at(t)
                        }
                        Err(_) => return,
                    };
                    more = matches!(r, Ok(Some(_)));
                    pending = Some((epoch, r));
                }
            })?;
        Ok(ReadAhead {
            info,
            cmd: Some(cmd_tx),
            frames: rx,
            spare: spare_tx,
            epoch: 0,
            latest,
            after_key: None,
            index,
            handle: Some(handle),
        })
    }

    fn receive(&mut self) -> Result<Option<SourceFrame>, SourceError> {
        loop {
            match self.frames.recv() {
                Ok((e, r)) if e == self.epoch => return r,
                Ok(_) => continue,
                Err(_) => {
                    return Err(SourceError::Stopped {
                        name: self.info.name.clone(),
                    });
                }
            }
        }
    }

    /// Sends a new request: whatever the thread does for an older one
    /// stops.
    fn request(&mut self, make: impl FnOnce(u64) -> AheadCmd) {
        self.epoch += 1;
        self.after_key = None;
        self.latest.store(self.epoch, Ordering::Release);
        if let Some(c) = &self.cmd {
            let _ = c.send(make(self.epoch));
        }
    }
}

impl FrameSource for ReadAhead {
    fn info(&self) -> &SourceInfo {
        &self.info
    }

    fn next_frame(&mut self) -> Result<Option<SourceFrame>, SourceError> {
        if let Some((_, key)) = self.after_key {
            // The thread went on towards the time asked for, not to the
            // frame after the keyframe: back to the keyframe, then on.
            self.frame_at(key)?;
        }
        self.receive()
    }

    fn frame_at(&mut self, t: f64) -> Result<Option<SourceFrame>, SourceError> {
        if self.after_key.take().is_some_and(|(asked, _)| asked == t) {
            // Decoded ahead, while the keyframe was shown.
            return self.receive();
        }
        self.request(|e| AheadCmd::Seek(e, t));
        self.receive()
    }

    fn keyframe_at(&mut self, t: f64) -> Result<Option<SourceFrame>, SourceError> {
        self.request(|e| AheadCmd::Keyframe(e, t));
        let r = self.receive();
        if let Ok(Some(f)) = &r {
            self.after_key = Some((t, f.time));
        }
        r
    }

    fn seek_index(&self) -> Option<crate::video::SeekIndex> {
        self.index.clone()
    }

    fn recycle(&mut self, frame: SourceFrame) {
        // Never waits: with enough spares kept, this one is dropped.
        let _ = self.spare.try_send(frame);
    }
}

impl Drop for ReadAhead {
    fn drop(&mut self) {
        // Long work gives up; closing both channels wakes the thread
        // wherever it waits.
        self.latest.store(u64::MAX, Ordering::Release);
        self.cmd = None;
        let (_, dead) = crossbeam_channel::bounded(0);
        self.frames = dead;
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::video::source::SyntheticSource;

    #[test]
    fn read_ahead_gives_the_same_frames_as_the_source() {
        let src = SyntheticSource::new(32, 18, 10.0, 30).unwrap();
        let mut plain = src.clone();
        let mut ahead = ReadAhead::new(Box::new(src)).unwrap();
        assert_eq!(ahead.next_frame().unwrap().unwrap().index, 0);
        for t in [1.55, 0.0, 2.9, 99.0, 1.0] {
            assert_eq!(ahead.frame_at(t).unwrap(), plain.frame_at(t).unwrap(), "at {t}");
            for _ in 0..5 {
                assert_eq!(ahead.next_frame().unwrap(), plain.next_frame().unwrap());
            }
        }
        drop(ahead); // joins the thread, even with frames queued
    }

    #[test]
    fn after_a_keyframe_reading_goes_on_from_it_or_seeks() {
        let src = SyntheticSource::new(32, 18, 10.0, 30).unwrap();
        let mut plain = src.clone();
        let mut ahead = ReadAhead::new(Box::new(src)).unwrap();
        for t in [1.55, 0.0, 2.9] {
            assert_eq!(
                ahead.keyframe_at(t).unwrap(),
                plain.keyframe_at(t).unwrap(),
                "at {t}"
            );
            // Held until asked: then the frames after it.
            for _ in 0..4 {
                assert_eq!(ahead.next_frame().unwrap(), plain.next_frame().unwrap());
            }
            assert_eq!(ahead.keyframe_at(t).unwrap(), plain.keyframe_at(t).unwrap());
            // Or a seek to the frame itself.
            assert_eq!(ahead.frame_at(t - 0.3).unwrap(), plain.frame_at(t - 0.3).unwrap());
            assert_eq!(ahead.next_frame().unwrap(), plain.next_frame().unwrap());
        }
    }

    use std::sync::atomic::{AtomicBool, AtomicUsize};
    use std::time::{Duration, Instant};

    /// Frames whose keyframe is the whole second before; counts seeks to
    /// a frame, each taking `slow` unless stopped.
    struct Keyed {
        inner: SyntheticSource,
        seeks: Arc<AtomicUsize>,
        slow: Duration,
        stop: Option<crate::video::Stop>,
        stopped: Arc<AtomicBool>,
    }

    impl Keyed {
        fn new(slow: Duration) -> Self {
            Keyed {
                inner: SyntheticSource::new(32, 18, 10.0, 100).unwrap(),
                seeks: Arc::default(),
                slow,
                stop: None,
                stopped: Arc::default(),
            }
        }
    }

    impl FrameSource for Keyed {
        fn info(&self) -> &SourceInfo {
            self.inner.info()
        }
        fn next_frame(&mut self) -> Result<Option<SourceFrame>, SourceError> {
            self.inner.next_frame()
        }
        fn frame_at(&mut self, t: f64) -> Result<Option<SourceFrame>, SourceError> {
            self.seeks.fetch_add(1, Ordering::SeqCst);
            let until = Instant::now() + self.slow;
            while Instant::now() < until {
                if self.stop.as_ref().is_some_and(|s| s()) {
                    self.stopped.store(true, Ordering::SeqCst);
                    break;
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            self.inner.frame_at(t)
        }
        fn keyframe_at(&mut self, t: f64) -> Result<Option<SourceFrame>, SourceError> {
            self.inner.frame_at(t.floor())
        }
        fn set_stop(&mut self, stop: crate::video::Stop) {
            self.stop = Some(stop);
        }
    }

    #[test]
    fn the_frame_after_a_keyframe_is_decoded_while_the_keyframe_is_shown() {
        let src = Keyed::new(Duration::from_millis(50));
        let seeks = Arc::clone(&src.seeks);
        let mut ahead = ReadAhead::new(Box::new(src)).unwrap();
        let key = ahead.keyframe_at(2.55).unwrap().unwrap();
        assert_eq!(key.time, 2.0);
        // The thread went on to the frame itself by itself: asking for it
        // makes no second seek.
        let f = ahead.frame_at(2.55).unwrap().unwrap();
        assert!((f.time - 2.5).abs() < 1e-9, "{}", f.time);
        assert_eq!(seeks.load(Ordering::SeqCst), 1);
        assert!((ahead.next_frame().unwrap().unwrap().time - 2.6).abs() < 1e-9);
        // Reading on from the keyframe instead gives the frames after it.
        ahead.keyframe_at(7.3).unwrap();
        let next = ahead.next_frame().unwrap().unwrap();
        assert!((next.time - 7.1).abs() < 1e-9, "{}", next.time);
    }

    #[test]
    fn a_new_request_stops_the_decoding_ahead() {
        let src = Keyed::new(Duration::from_secs(30));
        let stopped = Arc::clone(&src.stopped);
        let mut ahead = ReadAhead::new(Box::new(src)).unwrap();
        let t0 = Instant::now();
        assert_eq!(ahead.keyframe_at(5.5).unwrap().unwrap().time, 5.0);
        // The thread now decodes towards 5.5 s (30 s of work); the next
        // keyframe must not wait for it.
        assert_eq!(ahead.keyframe_at(1.5).unwrap().unwrap().time, 1.0);
        assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());
        assert!(stopped.load(Ordering::SeqCst));
        drop(ahead); // stops the work for 1.5 s too
        assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());
    }
}
