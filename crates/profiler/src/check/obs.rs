//! The observation file of check mode: one `key value` line per observation, each written
//! with a single `write` call as it happens (no buffering), so a crash loses nothing seen.

use std::fs::File;
use std::io::Write as _;
use std::sync::{Mutex, OnceLock};

use crate::sys::lock;

static OUT: OnceLock<Mutex<File>> = OnceLock::new();

/// Creates (truncates) the observation file. False if the path is empty or unwritable.
pub fn open(path: &str) -> bool {
    if path.is_empty() {
        return false;
    }
    match File::create(path) {
        Ok(f) => OUT.set(Mutex::new(f)).is_ok(),
        Err(_) => false,
    }
}

/// Writes `key value\n` (nothing if the file is not open; write errors are ignored).
pub fn line(key: &str, value: &str) {
    let Some(out) = OUT.get() else { return };
    let text = format!("{key} {value}\n");
    let _ = lock(out).write_all(text.as_bytes());
}

/// One `eltrace:` line on stderr.
pub fn say(message: &str) {
    let _ = writeln!(std::io::stderr(), "eltrace: {message}");
}
