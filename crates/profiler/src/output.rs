//! Where this process's trace goes, and opening it safely. Every .NET process started under
//! one `eltrace record` (children and grandchildren inherit its environment) writes a trace of
//! its own; no two processes ever write one file.
//!
//! ```text
//! eltrace record -o app.eltrace -- dotnet build      (session s, eltrace's pid 100)
//!   pid 101 dotnet build    parent 100  →  app.eltrace       (reserved by eltrace, empty)
//!   pid 130 csc             parent 101  →  app.130.eltrace   (created O_EXCL)
//! ```
//!
//! With `ELTRACE_SESSION` set (by `eltrace record`), the process whose parent is
//! `ELTRACE_PARENT_PID` (the one `record` started) writes `ELTRACE_OUTPUT`, a file `record`
//! created empty for it; it opens it without following a symlink and only if it still is an
//! empty regular file. Every other process creates `<stem>.<pid>.eltrace` beside it
//! (`O_CREAT | O_EXCL | O_NOFOLLOW`, mode 0600), where `<stem>` is the output's name without
//! its `.eltrace` extension. Without a session (the variables set by hand), the first process
//! to create `ELTRACE_OUTPUT` exclusively writes it and the others write pid-named files.
//! An `ELTRACE_OUTPUT` that names a directory is an error, as `record -o DIR` is.
//! Traces are created 0600: they hold the command line and, with `--values`, argument values.
//!
//! Every open is `O_NONBLOCK` and checked with `fstat`: anything but a regular file swapped
//! in at the path (a FIFO, whose open would wait for a reader for ever, a device, a socket)
//! is refused, and the program runs on unprofiled.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use eltrace_trace::protocol::env;

use crate::config::Config;

/// The trace file of process `pid` (whose parent is `ppid`), created or claimed.
pub fn open(config: &Config, pid: u32, ppid: u32) -> io::Result<(PathBuf, File)> {
    let main = config.output_path(pid);
    // A directory is not a stem: `<dir>.<pid>.eltrace` beside it is not what was asked for.
    if std::fs::metadata(&main).is_ok_and(|m| m.is_dir()) {
        return Err(io::Error::other(format!(
            "{} is a directory; {} names the trace file, such as {}",
            main.display(),
            env::OUTPUT,
            main.join("app.eltrace").display()
        )));
    }
    let root = match (&config.session, config.parent_pid) {
        (Some(_), Some(parent)) => Some(parent == ppid),
        _ => None,
    };
    match root {
        Some(true) => match claim_reserved(&main) {
            Ok(f) => return Ok((main, f)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {} // claimed before (exec)
            Err(e) => return Err(e),
        },
        Some(false) => {}
        None => match create_new(&main) {
            Ok(f) => return Ok((main, f)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        },
    }
    let sibling = sibling_path(&main, pid);
    create_new(&sibling).map(|f| (sibling, f))
}

/// `<dir>/<stem>.<pid>.eltrace` for the output `<dir>/<stem>.eltrace` (or `<dir>/<name>`).
pub fn sibling_path(main: &Path, pid: u32) -> PathBuf {
    let name = main
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name.strip_suffix(".eltrace").unwrap_or(&name);
    main.with_file_name(format!("{stem}.{pid}.eltrace"))
}

/// Creates `path` exclusively, mode 0600, not following a symlink.
fn create_new(path: &Path) -> io::Result<File> {
    let f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)?;
    regular_file(path, f)
}

/// Opens the file `eltrace record` reserved: it must be a regular, empty file of ours (not a
/// symlink). A non-empty one was claimed already (the process exec'd a new image):
/// `AlreadyExists`.
fn claim_reserved(path: &Path) -> io::Result<File> {
    // Not even opened when it is plainly something else (a device's open can act); the
    // `fstat` of the opened file below is what decides.
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        let t = meta.file_type();
        if !t.is_file() && !t.is_symlink() {
            return Err(not_regular(path, t));
        }
    }
    let f = OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => {
                io::Error::other(format!("{} is a symlink; not following it", path.display()))
            }
            // A FIFO (or socket) swapped in after the check above, with no reader.
            Some(libc::ENXIO) => match std::fs::symlink_metadata(path) {
                Ok(m) if !m.file_type().is_file() => not_regular(path, m.file_type()),
                _ => e,
            },
            _ => e,
        })?;
    let f = regular_file(path, f)?;
    let meta = f.metadata()?;
    if meta.len() != 0 {
        return Err(io::ErrorKind::AlreadyExists.into());
    }
    // SAFETY: geteuid has no preconditions.
    if meta.uid() != unsafe { libc::geteuid() } {
        return Err(io::Error::other(format!(
            "{} belongs to another user",
            path.display()
        )));
    }
    Ok(f)
}

/// `f`, opened `O_NONBLOCK` at `path`, if `fstat` says it is a regular file (then in
/// blocking mode again); otherwise an error that says what it is.
fn regular_file(path: &Path, f: File) -> io::Result<File> {
    let t = f.metadata()?.file_type();
    if !t.is_file() {
        return Err(not_regular(path, t));
    }
    let fd = f.as_raw_fd();
    // SAFETY: fcntl F_GETFL/F_SETFL on a descriptor `f` owns for the calls; only the file
    // status flags change (O_NONBLOCK means nothing for a regular file, cleared for clarity).
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags >= 0 {
            libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK);
        }
    }
    Ok(f)
}

/// The error for a non-regular file of type `t` at `path`.
fn not_regular(path: &Path, t: std::fs::FileType) -> io::Error {
    let what = if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() || t.is_block_device() {
        "a device"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_symlink() {
        "a symlink"
    } else {
        "not a regular file"
    };
    io::Error::other(format!("{} is {what}, not a regular file", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn dir(label: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("eltrace-out-{label}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn config(out: &Path, session: Option<(&str, u32)>) -> Config {
        let mut c = Config::from_env(|_| None);
        c.output = Some(out.to_owned());
        c.session = session.map(|(s, _)| s.to_owned());
        c.parent_pid = session.map(|(_, p)| p);
        c
    }

    #[test]
    fn siblings_are_named_by_pid() {
        let p = Path::new("/t/app.eltrace");
        assert_eq!(sibling_path(p, 42), Path::new("/t/app.42.eltrace"));
        assert_eq!(
            sibling_path(Path::new("/t/x.bin"), 7),
            Path::new("/t/x.bin.7.eltrace")
        );
    }

    #[test]
    fn the_root_claims_the_reserved_file_and_others_write_beside_it() {
        let d = dir("session");
        let main = d.join("app.eltrace");
        std::fs::File::create(&main).unwrap();
        let c = config(&main, Some(("s1", 100)));
        let (p, _f) = open(&c, 101, 100).unwrap();
        assert_eq!(p, main);
        let (p, _f) = open(&c, 130, 101).unwrap();
        assert_eq!(p, d.join("app.130.eltrace"));
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        // The same pid again (a second runtime in one process) cannot reuse its file.
        assert!(open(&c, 130, 101).is_err());
        // The root after an exec: the main file is no longer empty.
        std::fs::write(&main, b"x").unwrap();
        let (p, _f) = open(&c, 101, 100).unwrap();
        assert_eq!(p, d.join("app.101.eltrace"));
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn symlinks_are_not_followed() {
        let d = dir("symlink");
        let target = d.join("elsewhere");
        std::fs::write(&target, b"").unwrap();
        let main = d.join("app.eltrace");
        std::os::unix::fs::symlink(&target, &main).unwrap();
        let e = open(&config(&main, Some(("s", 1))), 2, 1).unwrap_err();
        assert!(e.to_string().contains("symlink"), "{e}");
        // Without a session the main path exists (as a link): a pid file is written instead.
        let (p, _f) = open(&config(&main, None), 9, 1).unwrap();
        assert_eq!(p, d.join("app.9.eltrace"));
        std::os::unix::fs::symlink(&target, d.join("app.10.eltrace")).unwrap();
        assert!(open(&config(&main, None), 10, 1).is_err());
        assert_eq!(std::fs::read(&target).unwrap(), b"");
        let _ = std::fs::remove_dir_all(&d);
    }

    /// A FIFO swapped in for the reserved file: refused at once (a blocking open would wait
    /// for a reader for ever), with or without a reader; the pid-named files are never one.
    #[test]
    fn a_fifo_is_refused_without_waiting_for_a_reader() {
        let d = dir("fifo");
        let main = d.join("app.eltrace");
        let made = std::process::Command::new("mkfifo").arg(&main).status();
        assert!(made.unwrap().success());
        let (tx, rx) = std::sync::mpsc::channel();
        let (c, m) = (config(&main, Some(("s", 1))), main.clone());
        std::thread::spawn(move || {
            let alone = open(&c, 2, 1).map(|(p, _)| p);
            // With a reader waiting on the FIFO, the open itself would succeed: fstat says no.
            let reader = OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(&m)
                .unwrap();
            let read = open(&c, 2, 1).map(|(p, _)| p);
            drop(reader);
            tx.send((alone, read)).unwrap();
        });
        let (alone, read) = rx
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("the open of the FIFO hung");
        for e in [alone.unwrap_err(), read.unwrap_err()] {
            assert!(
                e.to_string().contains("is a FIFO, not a regular file"),
                "{e}"
            );
        }
        let _ = std::fs::remove_dir_all(&d);
    }

    /// `ELTRACE_OUTPUT` set by hand to a directory: an error, not `<dir>.<pid>.eltrace`.
    #[test]
    fn a_directory_is_not_a_stem() {
        let d = dir("directory");
        let out = d.join("traces");
        std::fs::create_dir(&out).unwrap();
        for session in [None, Some(("s", 1))] {
            for (pid, ppid) in [(2, 1), (3, 2)] {
                let e = open(&config(&out, session), pid, ppid).unwrap_err();
                assert!(e.to_string().contains("is a directory"), "{e}");
                assert!(e.to_string().contains("ELTRACE_OUTPUT"), "{e}");
            }
        }
        let left: Vec<_> = std::fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(left, vec![out.clone()]);
        assert_eq!(std::fs::read_dir(&out).unwrap().count(), 0);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn without_a_session_the_first_process_takes_the_output() {
        let d = dir("nosession");
        let main = d.join("t.eltrace");
        let c = config(&main, None);
        assert_eq!(open(&c, 5, 1).unwrap().0, main);
        assert_eq!(open(&c, 6, 5).unwrap().0, d.join("t.6.eltrace"));
        let _ = std::fs::remove_dir_all(&d);
    }
}
