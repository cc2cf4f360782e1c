//! Where `export` writes (issue 16): only a regular file, or nothing, at `-o` is replaced,
//! and atomically; `-`, `/dev/stdout` and `/dev/null` are written through; other special
//! files are refused with one error line, and left as they were.

use std::os::unix::fs::FileTypeExt;

use crate::support::*;

fn is_char_device(p: &str) -> bool {
    std::fs::symlink_metadata(p)
        .unwrap()
        .file_type()
        .is_char_device()
}

#[test]
fn dev_null_stays_a_device() {
    let dir = temp_dir("out-null");
    let t = save(&dir, "t.eltrace", &sample_trace(true));
    for format in ["folded", "chrome", "perfetto", "html", "pprof"] {
        let o = run(&[
            "export",
            "-f",
            format,
            "-o",
            "/dev/null",
            t.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{format}: {}", stderr(&o));
        assert!(is_char_device("/dev/null"), "{format}");
    }
    // No temporary file was made beside it (or anywhere in the trace's directory).
    let names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
}

#[test]
fn stdout_names_write_through() {
    let dir = temp_dir("out-stdout");
    let t = save(&dir, "t.eltrace", &sample_trace(true));
    let t = t.to_str().unwrap();
    let want = stdout(&run(&["export", "-f", "folded", "-o", "-", t]));
    assert!(want.contains("App.Program.Main"), "{want}");
    let o = run(&["export", "-f", "folded", "-o", "/dev/stdout", t]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), want);
}

#[test]
fn special_files_are_refused_and_left_alone() {
    let dir = temp_dir("out-special");
    let t = save(&dir, "t.eltrace", &sample_trace(true));
    let t = t.to_str().unwrap();
    // A symlink to a file elsewhere: neither the link nor its target changes.
    let victim = save(&dir, "victim.txt", b"keep me");
    let link = dir.join("link.folded");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    let o = run(&["export", "-f", "folded", "-o", link.to_str().unwrap(), t]);
    assert_error(&o, 1, "it is a symlink");
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(std::fs::read(&victim).unwrap(), b"keep me");
    // A FIFO (nobody reads it: writing would block).
    let fifo = dir.join("pipe");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let o = run(&["export", "-f", "folded", "-o", fifo.to_str().unwrap(), t]);
    assert_error(&o, 1, "it is a FIFO");
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo()
    );
    // A directory; another device.
    let o = run(&["export", "-f", "folded", "-o", dir.to_str().unwrap(), t]);
    assert_error(&o, 1, "it is a directory");
    let o = run(&["export", "-f", "folded", "-o", "/dev/zero", t]);
    assert_error(&o, 1, "it is a device");
    assert!(is_char_device("/dev/zero"));
}

#[test]
fn a_symlink_at_the_partial_name_is_not_followed() {
    let dir = temp_dir("out-partial");
    let t = save(&dir, "t.eltrace", &sample_trace(true));
    let victim = save(&dir, "victim.txt", b"keep me");
    let out = dir.join("out.folded");
    std::os::unix::fs::symlink(&victim, dir.join("out.folded.partial")).unwrap();
    std::fs::write(&out, b"old").unwrap();
    let o = run(&[
        "export",
        "-f",
        "folded",
        "-o",
        out.to_str().unwrap(),
        t.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read(&victim).unwrap(), b"keep me");
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.contains("App.Program.Main"), "{text}");
    // Only the trace, the victim, the planted link and the output.
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "out.folded",
            "out.folded.partial",
            "t.eltrace",
            "victim.txt"
        ]
    );
}
