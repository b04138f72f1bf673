//! Decoding ahead: a source wrapped so that its frames are read on their
//! own thread, a few frames ahead of the reader. While a player draws one
//! frame the next is being decoded, which uses a second core during
//! playback. Seeking discards what was read ahead. Frames the reader is
//! done with ([`FrameSource::recycle`]) go back to the thread, which
//! decodes into their buffers rather than new ones.

use super::{FrameSource, SourceError, SourceFrame, SourceInfo};

/// Decoded frames read ahead of time.
const READ_AHEAD: usize = 3;

/// Frames handed back for reuse that the thread keeps at most (more are
/// dropped).
const SPARE: usize = 2;

enum AheadCmd {
    Seek(u64, f64),
    /// The keyframe for a far seek: read nothing after it until told (the
    /// reader usually seeks to the frame itself next).
    Keyframe(u64, f64),
    /// Read on after a keyframe.
    Resume,
}

type AheadMsg = (u64, Result<Option<SourceFrame>, SourceError>);

/// A source whose frames are read on their own thread.
pub struct ReadAhead {
    info: SourceInfo,
    cmd: Option<crossbeam_channel::Sender<AheadCmd>>,
    frames: crossbeam_channel::Receiver<AheadMsg>,
    spare: crossbeam_channel::Sender<SourceFrame>,
    epoch: u64,
    /// The thread holds after a keyframe until the next read asks for more.
    held: bool,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl ReadAhead {
    /// Starts reading `source` on a new thread.
    pub fn new(mut source: Box<dyn FrameSource>) -> std::io::Result<Self> {
        let info = source.info().clone();
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
                // Reading ahead (not held after a keyframe).
                let mut reading = true;
                loop {
                    if pending.is_none() && reading {
                        // After the end, keep saying so (like the source would).
                        let r = if more {
                            let mut f = spare_rx.try_recv().unwrap_or_else(|_| SourceFrame::empty());
                            source.read_into(&mut f).map(|got| got.then_some(f))
                        } else {
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
                            reading = true;
                            source.frame_at(t)
                        }
                        Ok(AheadCmd::Keyframe(e, t)) => {
                            epoch = e;
                            reading = false;
                            source.keyframe_at(t)
                        }
                        Ok(AheadCmd::Resume) => {
                            reading = true;
                            continue;
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
            held: false,
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
}

impl FrameSource for ReadAhead {
    fn info(&self) -> &SourceInfo {
        &self.info
    }

    fn next_frame(&mut self) -> Result<Option<SourceFrame>, SourceError> {
        if std::mem::take(&mut self.held)
            && let Some(c) = &self.cmd
        {
            let _ = c.send(AheadCmd::Resume);
        }
        self.receive()
    }

    fn frame_at(&mut self, t: f64) -> Result<Option<SourceFrame>, SourceError> {
        self.held = false;
        self.epoch += 1;
        if let Some(c) = &self.cmd {
            let _ = c.send(AheadCmd::Seek(self.epoch, t));
        }
        self.receive()
    }

    fn keyframe_at(&mut self, t: f64) -> Result<Option<SourceFrame>, SourceError> {
        self.held = true;
        self.epoch += 1;
        if let Some(c) = &self.cmd {
            let _ = c.send(AheadCmd::Keyframe(self.epoch, t));
        }
        self.receive()
    }

    fn recycle(&mut self, frame: SourceFrame) {
        // Never waits: with enough spares kept, this one is dropped.
        let _ = self.spare.try_send(frame);
    }
}

impl Drop for ReadAhead {
    fn drop(&mut self) {
        // Closing both channels wakes the thread wherever it waits.
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
}
