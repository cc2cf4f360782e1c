//! The trace file and its I/O thread: the trace writer encodes into a [`PipeWriter`], which
//! hands full blocks to a thread of its own that writes them, so a slow `write(2)` never
//! stalls the draining of the rings.

use std::fs::File;
use std::io::{self, Write};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::time::Duration;

use eltrace_trace::{TraceInfo, TraceWriter};

use crate::recorder::Recorder;

/// Encoded bytes are handed to the I/O thread in blocks of this size.
const IO_BLOCK: usize = 256 * 1024;
/// Blocks that may wait for the I/O thread (bounds memory if the disk is slow).
const IO_QUEUE: usize = 64;
/// Written blocks kept for reuse.
const FREE_BLOCKS: usize = 8;
/// Test only (`ELTRACE_TEST_IO_DELAY_MS`): the block before which the I/O thread stops, 5 MiB
/// into the trace, where a busy test program is past its start-up.
const TEST_DELAY_BLOCK: u64 = 20;
/// How long the final drain waits for the I/O thread to write everything.
const IO_SYNC_TIMEOUT: Duration = Duration::from_secs(2);

enum IoMsg {
    Data(Vec<u8>),
    /// Reply once everything before this message is written.
    Sync(mpsc::Sender<()>),
}

/// The `Write` the trace writer encodes into: it collects bytes and passes full blocks to the
/// I/O thread, so that a slow `write(2)` (a 1 MB write can take ~4 ms here) never stalls the
/// draining of the rings. The I/O thread hands written blocks back for reuse: a fresh
/// 256 KiB block is a fresh mapping, and faulting its pages in cost the writer thread more
/// than a tenth of its time.
pub struct PipeWriter {
    buf: Vec<u8>,
    tx: SyncSender<IoMsg>,
    free: Receiver<Vec<u8>>,
}

impl PipeWriter {
    fn send(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let next = self
            .free
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(IO_BLOCK + 4096));
        let block = std::mem::replace(&mut self.buf, next);
        self.tx
            .send(IoMsg::Data(block))
            .map_err(|_| io::Error::other("the I/O thread is gone"))
    }
}

impl Write for PipeWriter {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(data);
        if self.buf.len() >= IO_BLOCK {
            self.send()?;
        }
        Ok(data.len())
    }

    /// Hands the partial block to the I/O thread (which writes it promptly).
    fn flush(&mut self) -> io::Result<()> {
        self.send()
    }
}

fn io_thread(mut file: File, rx: Receiver<IoMsg>, free: SyncSender<Vec<u8>>) {
    let mut failed = false;
    // Bytes in the file so far: a write past the file-size limit (RLIMIT_FSIZE) would raise
    // SIGXFSZ and kill the program, so the trace stops at the limit instead.
    let mut size = 0u64;
    let mut blocks = 0u64;
    for msg in rx {
        match msg {
            IoMsg::Data(mut block) => {
                blocks += 1;
                if blocks == TEST_DELAY_BLOCK {
                    // Test only (ELTRACE_TEST_IO_DELAY_MS): a file system frozen that long.
                    // Read here, not when the thread starts: the recorder may not be
                    // installed yet then.
                    let delay_ms = Recorder::global().map_or(0, |r| r.config.test_io_delay_ms);
                    if delay_ms > 0 {
                        std::thread::sleep(Duration::from_millis(delay_ms));
                    }
                }
                let limit = crate::sys::file_size_limit();
                let room = limit.map_or(u64::MAX, |l| l.saturating_sub(size));
                if failed {
                    // The trace already ended at an error or the limit.
                } else if (block.len() as u64) > room {
                    // Up to the limit (a chunk cut there reads as the trace's end), not past.
                    let _ = file.write_all(&block[..room as usize]);
                    size += room;
                    failed = true;
                    if let Some(rec) = Recorder::global() {
                        rec.internal_error(
                            "io",
                            &format!(
                                "the file size limit (RLIMIT_FSIZE, {} bytes) is reached: the \
                                 trace ends here, later events are lost",
                                limit.unwrap_or(0)
                            ),
                        );
                    }
                } else if let Err(e) = file.write_all(&block) {
                    // Nothing more is written after a failed write (a later block that
                    // succeeded would leave a gap): the trace ends at its last whole chunk on
                    // disk (readers see it truncated), counted as an internal error.
                    failed = true;
                    if let Some(rec) = Recorder::global() {
                        let msg = if e.raw_os_error() == Some(libc::ENOSPC) {
                            "the disk is full (ENOSPC): the trace ends here, later events are \
                             lost"
                                .to_owned()
                        } else {
                            format!("writing the trace file failed: {e}")
                        };
                        rec.internal_error("io", &msg);
                    }
                } else {
                    size += block.len() as u64;
                }
                block.clear();
                let _ = free.try_send(block); // full: the writer has enough; drop it
            }
            IoMsg::Sync(reply) => {
                let _ = reply.send(());
            }
        }
    }
}

/// The open trace: the encoder and a second handle on the I/O thread's queue.
pub struct TraceFile {
    pub out: TraceWriter<PipeWriter>,
    /// For [`TraceFile::sync_io`].
    io: SyncSender<IoMsg>,
    /// The End record is written.
    pub ended: bool,
}

impl TraceFile {
    /// Starts the I/O thread of `file` (new and empty) and writes the header and info chunk.
    pub fn create(file: File, info: &TraceInfo) -> io::Result<TraceFile> {
        let (tx, rx) = mpsc::sync_channel(IO_QUEUE);
        let (free_tx, free_rx) = mpsc::sync_channel(FREE_BLOCKS);
        std::thread::Builder::new()
            .name("eltrace-io".into())
            .spawn(move || io_thread(file, rx, free_tx))?;
        let pipe = PipeWriter {
            buf: Vec::with_capacity(IO_BLOCK + 4096),
            tx: tx.clone(),
            free: free_rx,
        };
        let mut out = TraceWriter::new(pipe, info)?;
        out.flush()?;
        Ok(TraceFile {
            out,
            io: tx,
            ended: false,
        })
    }

    /// Waits (bounded) until the I/O thread has written everything flushed so far.
    pub fn sync_io(&self) -> io::Result<()> {
        let (tx, rx) = mpsc::channel();
        self.io
            .send(IoMsg::Sync(tx))
            .map_err(|_| io::Error::other("the I/O thread is gone"))?;
        rx.recv_timeout(IO_SYNC_TIMEOUT)
            .map_err(|_| io::Error::other("the I/O thread did not finish writing in time"))
    }
}
