//! Where a command's output file goes, safely (issue 16): only a regular file, or nothing,
//! at the output path is ever replaced, and atomically (a temporary file beside it, renamed
//! over it when complete); `-`, `/dev/stdout` and `/dev/null` are written through; any other
//! special file (a device, a FIFO, a socket, a directory, a symlink) is refused with a message.
//!
//! ```text
//! out.json          absent or regular  → out.json.<pid>.partial (O_CREAT|O_EXCL|O_NOFOLLOW)
//!                                         renamed over out.json when written
//! -, /dev/stdout    stdout             → written through (also /dev/fd/1, /proc/self/fd/1)
//! /dev/null         the null device    → written through, never replaced
//! /dev/sda, a FIFO, a symlink, a dir   → refused
//! ```
//!
//! The temporary file is never opened through a symlink and never an existing file: a
//! symlink planted at `out.json.partial` (or at the temporary's own name) is left alone.
//! It is created mode 0600 whatever the umask (an export shows what its trace holds, argument
//! values included), or with the mode of the regular file it replaces.

use std::fs::{File, OpenOptions};
use std::io::{self, Stdout, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::util::{Fail, io_msg};

/// An output being written.
pub enum OutFile {
    /// Standard output (`-`, `/dev/stdout`).
    Stdout(Stdout),
    /// `/dev/null`, written through.
    Null(File),
    /// A temporary file to be renamed over `target` by [`OutFile::commit`].
    Temp {
        file: File,
        temp: PathBuf,
        target: PathBuf,
    },
}

/// Paths that name this process's standard output.
const STDOUT_NAMES: [&str; 3] = ["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"];

/// What is at a path, for a message: "a symlink", "a device", ….
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

/// Whether `path` is the null device (a character device with the null device's number).
fn is_dev_null(path: &Path) -> bool {
    match (std::fs::metadata(path), std::fs::metadata("/dev/null")) {
        (Ok(m), Ok(null)) => m.file_type().is_char_device() && m.rdev() == null.rdev(),
        _ => false,
    }
}

impl OutFile {
    /// Standard output.
    pub fn stdout() -> OutFile {
        OutFile::Stdout(io::stdout())
    }

    /// Prepares writing `target` (see the module doc); refuses special files.
    pub fn create(target: &Path) -> Result<OutFile, Fail> {
        let shown = target.display();
        if target.as_os_str() == "-" || STDOUT_NAMES.iter().any(|n| target == Path::new(n)) {
            return Ok(OutFile::stdout());
        }
        let mut mode = None;
        match std::fs::symlink_metadata(target) {
            Ok(m) if m.file_type().is_file() => mode = Some(m.permissions().mode()),
            Ok(_) if is_dev_null(target) => {
                let f = OpenOptions::new()
                    .write(true)
                    .open(target)
                    .map_err(|e| Fail::new(format!("cannot write {shown}: {}", io_msg(&e))))?;
                return Ok(OutFile::Null(f));
            }
            Ok(m) => {
                return Err(Fail::new(format!(
                    "refusing to write to {shown}: it is {}; give -o a new or regular file \
                     ('-' for stdout)",
                    what(m.file_type())
                )));
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(Fail::new(format!("{shown}: {}", io_msg(&e)))),
        }
        let (file, temp) = create_temp(target)?;
        // A new export is the owner's alone, like the trace it shows (which may hold
        // argument values), whatever the umask; a replacement keeps the permissions of the
        // file it replaces.
        let mode = mode.map_or(0o600, |m| m & 0o7777);
        // Best effort: created 0600 already; a file system without modes keeps its own.
        let _ = file.set_permissions(std::fs::Permissions::from_mode(mode));
        Ok(OutFile::Temp {
            file,
            temp,
            target: target.to_owned(),
        })
    }

    /// The output as the messages name it.
    pub fn is_stdout(&self) -> bool {
        matches!(self, OutFile::Stdout(_))
    }

    /// Puts the written output in place: renames the temporary file over the target, if
    /// what is there now is still a regular file or nothing. Returns the bytes written to a
    /// file (`None` for stdout and /dev/null).
    pub fn commit(self) -> Result<Option<u64>, Fail> {
        let OutFile::Temp { file, temp, target } = self else {
            return Ok(None);
        };
        let shown = target.display();
        let size = file.metadata().map_or(0, |m| m.len());
        drop(file);
        match std::fs::symlink_metadata(&target) {
            Ok(m) if !m.file_type().is_file() => {
                let _ = std::fs::remove_file(&temp);
                return Err(Fail::new(format!(
                    "refusing to replace {shown}: it became {} while eltrace wrote it",
                    what(m.file_type())
                )));
            }
            _ => {}
        }
        std::fs::rename(&temp, &target).map_err(|e| {
            let _ = std::fs::remove_file(&temp);
            Fail::new(format!("cannot write {shown}: {}", io_msg(&e)))
        })?;
        Ok(Some(size))
    }

    /// Gives up: removes the temporary file.
    pub fn abandon(self) {
        if let OutFile::Temp { file, temp, .. } = self {
            drop(file);
            let _ = std::fs::remove_file(&temp);
        }
    }
}

/// Creates `<target>.<pid>.partial` (or, if that name is taken, with a counter), new,
/// never through a symlink, in the target's directory.
fn create_temp(target: &Path) -> Result<(File, PathBuf), Fail> {
    let pid = std::process::id();
    let mut last = None;
    for n in 0..100u32 {
        let mut name = target.as_os_str().to_owned();
        if n == 0 {
            name.push(format!(".{pid}.partial"));
        } else {
            name.push(format!(".{pid}-{n}.partial"));
        }
        let temp = PathBuf::from(name);
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&temp)
        {
            Ok(f) => return Ok((f, temp)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => {
                return Err(Fail::new(format!(
                    "cannot create {}: {}",
                    temp.display(),
                    io_msg(&e)
                )));
            }
        }
    }
    let e = last.unwrap_or_else(|| io::Error::other("no free name"));
    Err(Fail::new(format!(
        "cannot create a temporary file beside {}: {}",
        target.display(),
        io_msg(&e)
    )))
}

impl Write for OutFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            OutFile::Stdout(s) => s.write(buf),
            OutFile::Null(f) | OutFile::Temp { file: f, .. } => f.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            OutFile::Stdout(s) => s.flush(),
            OutFile::Null(f) | OutFile::Temp { file: f, .. } => f.flush(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("eltrace-outfile-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn replaces_a_regular_file_atomically_and_keeps_its_mode() {
        let d = dir("regular");
        let target = d.join("out.txt");
        std::fs::write(&target, b"old").unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o640)).unwrap();
        let mut o = OutFile::create(&target).unwrap();
        o.write_all(b"new text").unwrap();
        assert_eq!(
            std::fs::read(&target).unwrap(),
            b"old",
            "not replaced before commit"
        );
        assert_eq!(o.commit().unwrap(), Some(8));
        assert_eq!(std::fs::read(&target).unwrap(), b"new text");
        let mode = std::fs::metadata(&target).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
        assert_eq!(
            std::fs::read_dir(&d).unwrap().count(),
            1,
            "no temporary left"
        );
    }

    #[test]
    fn a_symlink_at_the_partial_name_is_not_followed() {
        let d = dir("partial");
        let target = d.join("out.txt");
        let victim = d.join("victim");
        std::fs::write(&victim, b"keep").unwrap();
        let pid = std::process::id();
        for name in [format!("out.txt.{pid}.partial"), "out.txt.partial".into()] {
            std::os::unix::fs::symlink(&victim, d.join(name)).unwrap();
        }
        let mut o = OutFile::create(&target).unwrap();
        o.write_all(b"data").unwrap();
        o.commit().unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
        assert_eq!(std::fs::read(&target).unwrap(), b"data");
    }

    #[test]
    fn special_files() {
        let d = dir("special");
        let link = d.join("link");
        std::os::unix::fs::symlink(d.join("elsewhere"), &link).unwrap();
        let e = OutFile::create(&link).err().unwrap();
        assert!(e.msg.contains("it is a symlink"), "{}", e.msg);
        let e = OutFile::create(&d).err().unwrap();
        assert!(e.msg.contains("it is a directory"), "{}", e.msg);
        assert!(OutFile::create(Path::new("-")).unwrap().is_stdout());
        assert!(
            OutFile::create(Path::new("/dev/stdout"))
                .unwrap()
                .is_stdout()
        );
        let mut null = OutFile::create(Path::new("/dev/null")).unwrap();
        assert!(matches!(null, OutFile::Null(_)));
        null.write_all(b"gone").unwrap();
        assert_eq!(null.commit().unwrap(), None);
        assert!(
            std::fs::symlink_metadata("/dev/null")
                .unwrap()
                .file_type()
                .is_char_device()
        );
        if Path::new("/dev/zero").exists() {
            let e = OutFile::create(Path::new("/dev/zero")).err().unwrap();
            assert!(e.msg.contains("it is a device"), "{}", e.msg);
        }
    }
}
