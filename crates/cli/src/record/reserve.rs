//! Reserving the output of `eltrace record`: the `-o` path is created empty (mode 0600, never
//! through a symlink) and locked for the whole run, for the profiler of the process `record`
//! starts to fill. Only a regular file is ever replaced, and only when no other `record` holds
//! it; the process traces of the session it held (`<stem>.<pid>.eltrace`) go with it.
//!
//! ```text
//! app.eltrace          regular, unlocked   → replaced (its session's app.<pid>.eltrace too)
//! app.eltrace          locked              → refused: another eltrace record writes it
//! /dev/null, a FIFO    not a regular file  → refused
//! ```
//!
//! After the run, [`Reservation::replaced_by`] tells whether the path still is the file
//! reserved: one replaced meanwhile (a symlink or FIFO raced in) means the trace is lost.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::session;
use crate::util::{Fail, io_msg};

/// Takes an exclusive lock on `f` without waiting; false if another process holds one.
fn try_lock(f: &File) -> bool {
    // SAFETY: flock only takes a valid descriptor, which `f` owns for the call.
    unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) == 0 }
}

/// What a non-regular file of type `t` is, for a message.
fn what(t: std::fs::FileType) -> &'static str {
    if t.is_symlink() {
        "a symlink"
    } else if t.is_dir() {
        "a directory"
    } else if t.is_char_device() || t.is_block_device() {
        "a device"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

/// The reserved output, locked while this value lives.
pub struct Reservation {
    file: File,
    /// Files of an earlier recording that were removed to make room.
    pub replaced: Vec<PathBuf>,
}

/// Reserves `output` (an absolute path whose directory exists).
pub fn reserve(output: &Path) -> Result<Reservation, Fail> {
    let shown = output.display();
    let mut replaced = Vec::new();
    match std::fs::symlink_metadata(output) {
        Ok(meta) => {
            let t = meta.file_type();
            if !t.is_file() {
                let what = what(t);
                return Err(Fail::new(format!(
                    "refusing to write the trace to {shown}: it is {what}; give -o a new or regular file"
                )));
            }
            let old =
                File::open(output).map_err(|e| Fail::new(format!("{shown}: {}", io_msg(&e))))?;
            if !try_lock(&old) {
                return Err(Fail::new(format!(
                    "{shown} is being written by another eltrace record; choose another -o"
                )));
            }
            // Its session's process traces go with it (only those naming its session).
            if let Ok(info) = session::read_info(output) {
                if let Some(id) = info.session() {
                    for t in session::orphans(output, id) {
                        if std::fs::remove_file(&t.path).is_ok() {
                            replaced.push(t.path);
                        }
                    }
                }
            }
            remove(output)?;
            replaced.insert(0, output.to_owned());
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(Fail::new(format!("{shown}: {}", io_msg(&e)))),
    }
    let file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(output)
        .map_err(|e| {
            if e.kind() == io::ErrorKind::AlreadyExists {
                Fail::new(format!(
                    "{shown} appeared while eltrace was preparing it (another eltrace record?); choose another -o"
                ))
            } else {
                Fail::new(format!("cannot create {shown}: {}", io_msg(&e)))
            }
        })?;
    if !try_lock(&file) {
        return Err(Fail::new(format!(
            "{shown} is being written by another eltrace record; choose another -o"
        )));
    }
    Ok(Reservation { file, replaced })
}

impl Reservation {
    /// What is at `output` now when it no longer is the file reserved (someone replaced it
    /// while the program ran: the profiler refuses what was swapped in, or a trace written
    /// there is not the one this run reserved): "a symlink", "a FIFO", "another file",
    /// "removed". `None` while it is.
    pub fn replaced_by(&self, output: &Path) -> Option<&'static str> {
        let mine = self.file.metadata().ok()?;
        match std::fs::symlink_metadata(output) {
            Err(_) => Some("removed"),
            Ok(m) if !m.file_type().is_file() => Some(what(m.file_type())),
            Ok(m) if (m.dev(), m.ino()) != (mine.dev(), mine.ino()) => Some("another file"),
            Ok(_) => None,
        }
    }
}

fn remove(path: &Path) -> Result<(), Fail> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Fail::new(format!(
            "cannot remove the old {}: {}",
            path.display(),
            io_msg(&e)
        ))),
    }
}
